"""torch.utils.benchmark.examples against torch's: what the scripts print (timings masked),
FauxTorch's slowed-down library, and the fuzzer examples failing where PyTorch 2.13's fail (its
FuzzedParameter refuses their custom distributions)."""

import io
import re

import numpy as np
import pytest
import torch
import torch.utils.benchmark as torch_benchmark
import torch.utils.benchmark.examples.compare as torch_compare
import torch.utils.benchmark.examples.fuzzer as torch_fuzzer
import torch.utils.benchmark.examples.op_benchmark as torch_op_benchmark
import torch.utils.benchmark.examples.simple_timeit as torch_simple
import torch.utils.benchmark.examples.spectral_ops_fuzz_test as torch_spectral

import chainrule
import chainrule.utils.benchmark.examples.compare as compare
import chainrule.utils.benchmark.examples.fuzzer as fuzzer
import chainrule.utils.benchmark.examples.op_benchmark as op_benchmark
import chainrule.utils.benchmark.examples.simple_timeit as simple
import chainrule.utils.benchmark.examples.spectral_ops_fuzz_test as spectral


def masked(text: str) -> list[str]:
    """The printed lines with numbers, units, addresses and module paths masked."""
    text = re.sub(r"<[\w.]+\.Measurement object at 0x[0-9a-f]+>", "<Measurement>", text)
    text = re.sub(r"\x1b\[[0-9;]*m", "", text)  # colours depend on the timings
    text = re.sub(r"\d+(\.\d+)?", "N", text)
    text = re.sub(r"\b(ns|us|ms|s)\b", "U", text)
    text = re.sub(r"\b(nano|micro|milli)?seconds\b", "U", text)
    return [re.sub(r"\s+", " ", line).strip() for line in text.splitlines()]


def test_simple_timeit(capsys):
    def steady(text):  # the spread of the times, and the warning about it, vary by run
        kept, warning = [], False
        for line in masked(text):
            warning = line.startswith("WARNING") or (warning and line != "")
            if line and not warning and not line.startswith("IQR"):
                kept.append(line)
        return kept
    torch_simple.main()
    theirs = capsys.readouterr().out
    simple.main()
    ours = capsys.readouterr().out
    assert steady(ours) == steady(theirs)
    assert ours.count("Broadcasting add (4x8)") == 6 and "Run: 2" in ours


class QuickTimer:
    """Timer with blocked_autorange's minimum run time cut to a millisecond."""

    def __init__(self, timer_cls):
        self.timer_cls = timer_cls

    def __call__(self, *args, **kwargs):
        timer = self.timer_cls(*args, **kwargs)
        run = timer.blocked_autorange
        timer.blocked_autorange = lambda min_run_time=0.2, **kw: run(min_run_time=1e-3, **kw)
        return timer


def test_compare(capsys, monkeypatch):
    monkeypatch.setattr(torch_benchmark, "Timer", QuickTimer(torch_benchmark.Timer))
    monkeypatch.setattr(compare, "Timer", QuickTimer(compare.Timer))
    torch_compare.main()
    theirs = capsys.readouterr().out
    compare.main()
    ours = capsys.readouterr().out
    # the table cells' widths follow the timings: compare the words in each line
    assert [line.split() for line in masked(ours)] == [line.split() for line in masked(theirs)]
    assert "severe_regression" in ours and "== Formatted" in ours


def test_faux_torch():
    for lib, module in ((torch, torch_compare), (chainrule, compare)):
        faux = module.FauxTorch(lib, 1)
        x, y = lib.ones(3, 2), lib.full((1, 2), 2.0)
        assert faux.add(x, y).tolist() == [[3.0, 3.0]] * 3
        assert faux.mul(x, y).tolist() == [[2.0, 2.0]] * 3
        assert faux.cat([x, x]).shape == (6, 2)
        assert faux.matmul(x, y.t()).tolist() == [[4.0]] * 3
        assert faux.extra_overhead(lib.zeros(6000)).numel() == 6000


def test_the_fuzzer_examples_fail_as_pytorchs():
    def failure(fn):
        with pytest.raises(AssertionError) as error:
            fn()
        return str(error.value)
    for ours, theirs in [
            (fuzzer.main, torch_fuzzer.main),
            (lambda: op_benchmark.run(2, "x + 1", op_benchmark.UnaryOpFuzzer),
             lambda: torch_op_benchmark.run(2, "x + 1", torch_op_benchmark.UnaryOpFuzzer)),
            (lambda: spectral.run_benchmark("fft_real", chainrule.fft.fftn, chainrule.float32,
                                            0, "cpu", 1, 1.0),
             lambda: torch_spectral.run_benchmark("fft_real", torch.fft.fftn, torch.float32, 0,
                                                  "cpu", 1, 1.0))]:
        assert failure(ours) == failure(theirs) == "Distribution is not normalized"


def test_assert_dicts_equal():
    cases = [({"a": np.arange(3), "dtype": 1}, {"a": np.arange(3), "dtype": 2}),
             ({"a": np.arange(3)}, {"a": np.arange(3) + 1}),
             ({"a": np.arange(3)}, {"a": np.array([0, 5, 6])}),
             ({"a": 1, "b": 2}, {"a": 3, "b": 2})]
    for first, second in cases:
        results = []
        for module in (op_benchmark, torch_op_benchmark):
            try:
                module.assert_dicts_equal(first, second)
                results.append(None)
            except AssertionError as e:
                results.append(str(e))
        assert results[0] == results[1]
    with pytest.raises(AssertionError, match="dict values differ"):
        op_benchmark.assert_dicts_equal({"a": np.arange(3)}, {"a": np.arange(3) + 1})


def test_spectral_pieces():
    assert [spectral._dim_options(n) for n in (1, 2, 3)] == \
        [torch_spectral._dim_options(n) for n in (1, 2, 3)]
    with pytest.raises(ValueError, match="Expected ndim in range 1-3, got 4"):
        spectral._dim_options(4)
    assert spectral.BENCHMARK_NAMES == torch_spectral.BENCHMARK_NAMES
    assert spectral.DEVICE_NAMES == torch_spectral.DEVICE_NAMES
    assert [str(b.dtype) for b in spectral.BENCHMARKS] == \
        [str(b.dtype) for b in torch_spectral.BENCHMARKS]
    assert spectral.Benchmark._fields == torch_spectral.Benchmark._fields

    def csv(lib, module, benchmark):
        m = benchmark.Timer("x + 1", globals={"x": lib.ones(4)}).blocked_autorange(
            min_run_time=1e-3)
        m.metadata = {"name": "fft_real", "device": "cpu", "dim": 0, "shape": [4, 2],
                      "numel": 8, "is_contiguous": True}
        out = io.StringIO()
        module._output_csv(out, [m])
        return masked(out.getvalue())
    assert csv(chainrule, spectral, chainrule.utils.benchmark) == \
        csv(torch, torch_spectral, torch_benchmark)
