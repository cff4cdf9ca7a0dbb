"""torch.utils.benchmark: Measurement's statistics and printed form, Compare's tables, the
formatting helpers, Timer's behaviour and the Fuzzer's draws, against torch fed the same data
(never against timing values)."""

from __future__ import annotations

import re

import numpy as np
import pytest
import torch
import torch.utils.benchmark as tb

import chainrule
import chainrule.utils.benchmark as cb

LIBS = ((tb, "torch"), (cb, "chainrule"))


def _times(seed: int, n: int, center: float, spread: float) -> list[float]:
    rng = np.random.default_rng(seed)
    return [float(t) for t in center * (1 + spread * rng.standard_normal(n))]


def _measurement(b, *, seed=0, n=20, center=2e-5, spread=0.02, number=100, stmt="x + y",
                 setup="pass", label="add", sub_label=None, description=None, env=None,
                 num_threads=1):
    spec = b.TaskSpec(stmt=stmt, setup=setup, label=label, sub_label=sub_label,
                      description=description, env=env, num_threads=num_threads)
    raw = [t * number for t in _times(seed, n, center, spread)]
    return b.Measurement(number_per_run=number, raw_times=raw, task_spec=spec)


def _text(obj) -> str:
    """repr or str without the object's address line."""
    return re.sub(r"<[\w.]+\.Measurement object at 0x[0-9a-f]+>", "<Measurement>", str(obj))


MEASUREMENTS = [
    {}, {"n": 1}, {"n": 3}, {"n": 4}, {"spread": 0.15}, {"spread": 0.6},
    {"center": 3e-9}, {"center": 4e-4}, {"center": 0.5}, {"center": 7.0},
    {"sub_label": "float"}, {"label": None}, {"label": None, "stmt": "a = 1\nb = a + 1"},
    {"label": None, "stmt": "a = 1\nb = a + 1", "sub_label": "two lines"},
    {"description": "n=4"}, {"setup": "x = 1"}, {"setup": "x = 1\ny = 2"},
    {"num_threads": 4}, {"env": "A"}, {"number": 1},
]


@pytest.mark.parametrize("kwargs", MEASUREMENTS)
def test_measurement_like_torch(kwargs):
    theirs, ours = (_measurement(b, **kwargs) for b, _ in LIBS)
    assert _text(repr(ours)) == _text(repr(theirs))
    assert ours.times == theirs.times
    for name in ("median", "mean", "iqr"):
        assert getattr(ours, name) == pytest.approx(getattr(theirs, name), rel=1e-12)
    assert ours.significant_figures == theirs.significant_figures
    assert ours.has_warnings == theirs.has_warnings
    assert ours.meets_confidence(0.05) == theirs.meets_confidence(0.05)
    assert (ours.title, ours.env, ours.as_row_name, ours.stmt, ours.label) == \
        (theirs.title, theirs.env, theirs.as_row_name, theirs.stmt, theirs.label)


def test_merge_like_torch():
    def merged(b):
        parts = [_measurement(b, seed=s, number=nb) for s, nb in ((0, 10), (1, 100))]
        parts.append(_measurement(b, seed=2, sub_label="other"))
        return [(m.number_per_run, m.times, m.task_spec.sub_label, m.metadata)
                for m in b.Measurement.merge(parts)]

    assert merged(cb) == merged(tb)


def _table_inputs(b, case: str) -> list:
    ms = []
    for i, desc in enumerate(["n=1", "n=10", "n=100"]):
        for j, sub in enumerate(["float", "double", "int"]):
            if case == "missing" and (i, j) == (1, 2):
                continue
            spread = 0.3 if (i, j) == (2, 0) else 0.01
            ms.append(_measurement(b, seed=10 * i + j, center=1e-6 * (1 + i) * (1 + 3 * j),
                                   spread=spread, description=desc, sub_label=sub))
    if case == "threads":
        ms += [_measurement(b, seed=50 + k, center=2e-6 * k + 1e-6, description=d,
                            sub_label="float", num_threads=4)
               for k, d in enumerate(["n=1", "n=10", "n=100"])]
    if case == "envs":
        ms += [_measurement(b, seed=60 + k, center=3e-6, description=d, sub_label="float",
                            env=e)
               for k, (d, e) in enumerate([("n=1", "new"), ("n=10", "new"), ("n=1", "old")])]
        ms = [m for m in ms if m.env is not None]
    if case == "labels":
        ms += [_measurement(b, seed=70 + k, center=5e-3, label="mul", description=d)
               for k, d in enumerate(["n=1", "n=10"])]
    if case == "replicates":
        ms += [_measurement(b, seed=80 + k, center=1e-6, description="n=1", sub_label="float")
               for k in range(2)]
    if case == "wide":
        ms = [_measurement(b, seed=k, center=c, description="x", sub_label=f"row{k}")
              for k, c in enumerate([1e-7, 3e-4, 2.0])]
    return ms


CASES = ["plain", "missing", "threads", "envs", "labels", "replicates", "wide"]
OPTIONS = [(), ("trim_significant_figures",), ("colorize",), ("colorize_rowwise",),
           ("highlight_warnings",), ("trim_significant_figures", "colorize", "highlight_warnings")]


@pytest.mark.parametrize("case", CASES)
@pytest.mark.parametrize("options", OPTIONS)
def test_compare_prints_like_torch(case, options):
    def table(b):
        compare = b.Compare(_table_inputs(b, case))
        for option in options:
            if option == "colorize_rowwise":
                compare.colorize(rowwise=True)
            else:
                getattr(compare, option)()
        return str(compare)

    assert table(cb) == table(tb)


def test_compare_extend_results_and_errors_like_torch(capsys):
    for b, _ in LIBS:
        compare = b.Compare(_table_inputs(b, "plain")[:3])
        compare.extend_results(_table_inputs(b, "plain")[3:])
        compare.print()
    theirs_out, ours_out = capsys.readouterr().out.split("\n[", 1)
    assert "[" + ours_out == theirs_out + "\n"
    for make in (lambda b: b.Compare([1]), lambda b: b.Compare([]).extend_results(["x"]),
                 lambda b: str(b.Compare([_measurement(b)])),
                 lambda b: b.utils.compare.Table(
                     [_measurement(b), _measurement(b, label="other")],
                     b.Colorize.NONE, False, False)):
        errors = []
        for b, _ in LIBS:
            with pytest.raises(Exception) as info:
                make(b)
            errors.append((info.type, str(info.value)))
        assert errors[0] == errors[1]


@pytest.mark.parametrize("value", [1e-10, 3e-9, 9.99e-7, 1e-6, 2.5e-5, 1e-3, 0.1234, 1.0,
                                   42.0, 1234.5])
def test_helpers_like_torch(value):
    assert cb.select_unit(value) == tb.select_unit(value)
    for n in (1, 2, 3, 4):
        assert cb.trim_sigfig(value, n) == tb.trim_sigfig(value, n)
    unit = tb.select_unit(value)[0]
    assert cb.unit_to_english(unit) == tb.unit_to_english(unit)
    assert cb.ordered_unique([3, 1, 3, 2, 1]) == tb.ordered_unique([3, 1, 3, 2, 1])
    with pytest.raises(AssertionError, match="must be an integer"):
        cb.trim_sigfig(value, 1.5)


# ---- Timer ----------------------------------------------------------------------------------

@pytest.mark.parametrize("kwargs", [
    {"stmt": 3}, {"global_setup": "#include <x>"}, {"language": "fortran"},
])
def test_timer_refuses_like_torch(kwargs):
    errors = []
    for b, _ in LIBS:
        with pytest.raises(Exception) as info:
            b.Timer(**kwargs)
        errors.append((info.type, str(info.value)))
    assert errors[0] == errors[1]


def test_timer_cpp_is_not_provided():
    with pytest.raises(NotImplementedError, match="no C\\+\\+ API"):
        cb.Timer("x", language="c++")


def test_timer_task_spec_like_torch():
    stmt = """
        y = x * 2
        z = y + 1
    """
    kwargs = dict(stmt=stmt, setup="\n    x = 3\n", label="L", sub_label="s", description="d",
                  env="e", num_threads=2)
    specs = [b.Timer(**kwargs)._task_spec for b, _ in LIBS]
    assert [vars(specs[1])[k] for k in vars(specs[0])] == list(vars(specs[0]).values())
    assert specs[1].summarize() == specs[0].summarize()


def test_timer_measures_with_the_statement_and_globals():
    seen = []
    timer = cb.Timer("record(torch.ones(2).sum().item())", setup="n = 1",
                     globals={"record": seen.append}, num_threads=2)
    before = chainrule.get_num_threads()
    m = timer.timeit(number=7)
    assert isinstance(m, cb.Measurement) and m.number_per_run == 7 and len(m.raw_times) == 1
    assert seen == [2.0] * (2 + 7)  # the warm-up runs max(7 // 100, 2) times
    assert chainrule.get_num_threads() == before
    calls = []
    m = timer.blocked_autorange(callback=lambda number, t: calls.append(number),
                                min_run_time=0.01)
    assert m.number_per_run == calls[0] and len(calls) == len(m.raw_times)
    assert sum(m.raw_times) >= 0.01
    m = cb.Timer("pass").adaptive_autorange(max_run_time=0.05)
    assert len(m.raw_times) >= 1 and all(t > 0 for t in m.raw_times)
    for method in ("repeat", "autorange"):
        with pytest.raises(NotImplementedError, match="See `Timer.blocked_autorange.`"):
            getattr(cb.Timer(), method)()
    with pytest.raises(NotImplementedError, match="collect_callgrind"):
        cb.Timer().collect_callgrind()


def test_timer_with_a_counting_clock_like_torch():
    """With a clock that counts the statement's runs, block sizes and times are PyTorch's."""
    results = []
    for b, _ in LIBS:
        runs = [0]
        timer = b.Timer("runs[0] += 1", globals={"runs": runs}, timer=lambda r=runs: r[0] * 1e-6)
        m = timer.blocked_autorange(min_run_time=0.01)
        a = timer.adaptive_autorange(min_run_time=0.001, max_run_time=0.01)
        t = timer.timeit(50)
        results.append([(x.number_per_run, np.round(x.raw_times, 12).tolist())
                        for x in (m, a, t)])
    assert results[0] == results[1]


# ---- Fuzzer ---------------------------------------------------------------------------------

def _fuzzer(b, seed=7, constraints=None):
    return b.Fuzzer(
        parameters=[
            b.FuzzedParameter("k0", minval=1, maxval=64, distribution="loguniform"),
            b.FuzzedParameter("k1", minval=1, maxval=16, distribution="uniform"),
            b.FuzzedParameter("alpha", minval=0.0, maxval=1.0, distribution="uniform"),
            [b.FuzzedParameter("s0", minval=1, maxval=3, distribution="uniform"),
             b.FuzzedParameter("d", minval=2, maxval=3, distribution="uniform", strict=True)],
            b.FuzzedParameter("k2", minval=1, maxval=8, distribution="loguniform"),
        ],
        tensors=[b.FuzzedTensor("x", size=("k0", "k1", "k2"), steps=("s0", 1, 1),
                                probability_contiguous=0.4, max_elements=4096,
                                dim_parameter="d"),
                 b.FuzzedTensor("i", size=("k1",),
                                dtype=torch.int32 if b is tb else chainrule.int32)],
        constraints=constraints, seed=seed)


@pytest.mark.parametrize("seed", [0, 7, 123])
def test_fuzzer_draws_like_torch(seed):
    draws = []
    for b, _ in LIBS:
        fuzzer = _fuzzer(b, seed, constraints=[lambda p: p["k0"] * p["k1"] > 4])
        out = []
        for tensors, properties, params in fuzzer.take(12):
            shapes = {k: (tuple(t.shape), t.stride(), str(t.dtype)) for k, t in tensors.items()}
            props = {k: {kk: (vv.tolist() if isinstance(vv, np.ndarray) else vv)
                         for kk, vv in p.items()} for k, p in properties.items()}
            out.append((params, shapes, props))
        draws.append((out, fuzzer.rejection_rate))
    assert draws[0] == draws[1]


@pytest.mark.parametrize("make", [
    lambda b: b.FuzzedParameter("x", distribution="normal"),
    lambda b: b.FuzzedParameter("x", distribution={1: 0.5, 2: 0.5}),
    lambda b: b.FuzzedParameter("x", distribution={1: -0.5, 2: 1.5}),
    lambda b: b.FuzzedParameter("x", minval=1, distribution={1: 0.5, 2: 0.6}),
    lambda b: b.Fuzzer([b.FuzzedParameter("x", 1, 2, "uniform")], [b.FuzzedTensor("x", (1,))]),
    lambda b: next(b.Fuzzer([b.FuzzedParameter("x", 1, 2, "uniform")], [],
                            constraints=[lambda p: False], seed=0).take(1)),
    lambda b: b.Fuzzer._resolve_aliases({"a": b.ParameterAlias("b"), "b": b.ParameterAlias("a")}),
    lambda b: repr(b.ParameterAlias("k")),
    lambda b: b.Fuzzer._resolve_aliases({"a": b.ParameterAlias("b"), "b": 3}),
    lambda b: b.FuzzedParameter("x", distribution={1: 0.5, 2: 0.6}).sample(
        np.random.RandomState(0)),
])
def test_fuzzer_checks_like_torch(make):
    outcomes = []
    for b, _ in LIBS:
        try:
            outcomes.append(make(b))
        except Exception as e:  # noqa: BLE001 - the outcome is what is compared
            outcomes.append((type(e).__name__, str(e)))
    assert outcomes[0] == outcomes[1]


def test_fuzzed_tensor_default_values():
    fuzzer = _fuzzer(cb, 3)
    tensors, properties, params = next(fuzzer.take(1))
    x = tensors["x"]
    assert x.dtype == chainrule.float32 and 0 <= float(x.min()) and float(x.max()) < 1
    i = tensors["i"]
    assert 1 <= int(i.min()) and int(i.max()) < 127
