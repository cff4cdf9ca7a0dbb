"""torch._dynamo, torch.compiler, torch._inductor.config and torch._logging over chainrule.compile:
flags, argument checks, backends, marks, stances and reset, against torch."""

from __future__ import annotations

import inspect
import logging
import unittest.mock
import warnings

import numpy as np
import pytest
import torch
import torch._dynamo
import torch._inductor
import torch._logging

import chainrule
import chainrule._dynamo
import chainrule._inductor
import chainrule._logging
import chainrule.compiler


def _outcome(fn):
    try:
        return fn()
    except Exception as e:  # noqa: BLE001 - the outcome is what is compared
        return type(e).__name__, str(e)


# ---- flags ----------------------------------------------------------------------------------

# defaults PyTorch computes from the machine or the install location
_MACHINE = {"base_dir", "debug_dir_root", "compile_threads", "cutlass.cutlass_dir",
            "cuda.cutlass_dir", "xpu.cutlass_dir"}


@pytest.mark.parametrize(("ours", "theirs"), [
    (chainrule._dynamo.config, torch._dynamo.config),
    (chainrule.compiler.config, torch.compiler.config),
    (chainrule._inductor.config, torch._inductor.config),
])
def test_every_flag_with_its_default(ours, theirs):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)
        names = [k for k, e in theirs._config.items() if k not in _MACHINE]
        for name in names:
            assert getattr(ours, name) == getattr(theirs, name), name
        assert set(ours.get_config_copy()) | _MACHINE >= set(theirs.get_config_copy())


def test_flags_read_set_patch_like_torch():
    for lib in (torch, chainrule):
        cfg = lib._dynamo.config
        before = cfg.recompile_limit
        cfg.cache_size_limit = 3  # an alias
        assert cfg.recompile_limit == 3 and lib.compiler.config.recompile_limit == 3
        cfg.recompile_limit = before
        with cfg.patch(verbose=True, suppress_errors=True):
            assert cfg.verbose and cfg.suppress_errors
        assert not cfg.verbose and not cfg.suppress_errors
        with cfg.patch("verbose", True):
            assert cfg.verbose
        with cfg.patch({"verbose": True}):
            assert cfg.verbose

        @cfg.patch(capture_scalar_outputs=True)
        def inside(cfg=cfg):
            return cfg.capture_scalar_outputs

        assert inside() and not cfg.capture_scalar_outputs
        with unittest.mock.patch.object(cfg, "verbose", True):
            assert cfg.verbose
        assert cfg.verbose is False
        assert lib._inductor.config.triton.cudagraphs is False
        with lib._inductor.config.patch({"triton.cudagraphs": True}):
            assert lib._inductor.config.triton.cudagraphs
        saved = cfg.save_config()
        cfg.verbose = True
        cfg.load_config(saved)
        assert cfg.verbose is False


@pytest.mark.parametrize("case", [
    lambda L: setattr(L._dynamo.config, "no_such_flag", 1),
    lambda L: L._dynamo.config.no_such_flag,
    lambda L: L._inductor.config.triton.no_such_flag,
    lambda L: L.compiler.config.no_such_flag,
    lambda L: L._dynamo.config.patch(no_such_flag=True).__enter__(),
    lambda L: L._dynamo.config.patch({"verbose": True}, x=1),
    lambda L: L._dynamo.config.patch(3),
    lambda L: L._dynamo.config.patch(3, 4),
    lambda L: L._dynamo.config.patch(None, 4),
])
def test_flag_errors_like_torch(case):
    assert _outcome(lambda: case(chainrule)) == _outcome(lambda: case(torch))


def test_deprecated_flag_warns_like_torch():
    def read(lib):
        module = lib._dynamo.config
        module._warned.discard("inline_inbuilt_nn_modules") if lib is chainrule else None
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            value = module.inline_inbuilt_nn_modules
        return value, [(x.category, str(x.message)) for x in w]

    theirs = read(torch)
    if not theirs[1]:  # PyTorch warns once per process
        torch._dynamo.config._config["inline_inbuilt_nn_modules"]._deprecation_warned = False
        theirs = read(torch)
    assert read(chainrule) == theirs


# ---- compile's arguments ------------------------------------------------------------------

def _f(x):
    return x + 1


def _two_args(y, z):
    return y


@pytest.mark.parametrize("kwargs", [
    {"mode": "bad"}, {"mode": "max-autotune"}, {"options": {"no_such_option": 1}},
    {"options": {"max_autotune": 1}}, {"options": {"max-autotune": True}},
    {"mode": "default", "options": {}}, {"backend": "no_such_backend"},
    {"backend": "eager", "options": {"whatever": 1}}, {"backend": "eager", "mode": "bad"},
    {"fullgraph": True, "dynamic": True},
])
def test_compile_checks_arguments_like_torch(kwargs):
    def run(lib):
        compiled = lib.compile(_f, **kwargs)
        return compiled(lib.ones(2)).tolist()

    assert _outcome(lambda: run(chainrule)) == _outcome(lambda: run(torch))


def test_compile_refuses_non_callables_like_torch():
    assert _outcome(lambda: chainrule.compile(3)) == _outcome(lambda: torch.compile(3))
    assert _outcome(lambda: chainrule.compile()(None)) == _outcome(lambda: torch.compile()(None))


def test_backends_like_torch():
    for exclude in (("debug", "experimental"), ("debug",), ()):
        assert chainrule._dynamo.list_backends(exclude) == \
            [b for b in torch._dynamo.list_backends(exclude) if "TESTING_ONLY" not in b]
    assert chainrule.compiler.list_backends() == torch.compiler.list_backends()
    for lib in (torch, chainrule):
        assert _outcome(lambda lib=lib: lib._dynamo.lookup_backend("nope")) == (
            "InvalidBackend", "Invalid backend: 'nope', see `torch._dynamo.list_backends()` "
            "for available backends.")
        assert lib._dynamo.lookup_backend(_f) is _f
        assert lib.compiler.get_default_backend() == "inductor"

    def mine(gm, example_inputs):
        return gm.forward

    chainrule._dynamo.register_backend(mine, name="h1_test_backend")
    assert "h1_test_backend" in chainrule._dynamo.list_backends()
    assert chainrule._dynamo.lookup_backend("h1_test_backend") is mine
    assert _outcome(lambda: chainrule._dynamo.register_backend(mine, name="h1_test_backend")) \
        == ("AssertionError", "duplicate name: h1_test_backend")
    assert chainrule.compile(_f, backend="h1_test_backend")(chainrule.ones(1)).tolist() == [2.0]


@pytest.mark.parametrize("case", [
    lambda L: L._dynamo.allow_in_graph(_f) is _f,
    lambda L: L._dynamo.allow_in_graph(3),
    lambda L: L._dynamo.allow_in_graph([_f, _f]) == [_f, _f],
    lambda L: L._dynamo.forbid_in_graph(3),
    lambda L: L._dynamo.assume_constant_result(lambda: 1)._dynamo_marked_constant,
    lambda L: L.compiler.assume_constant_result(lambda: 1)(),
    lambda L: L._dynamo.graph_break(),
    lambda L: L._dynamo.disable(_f)(1),
    lambda L: L._dynamo.disable()(_f)(2),
    lambda L: L._dynamo.disable(_f) is _f,
    lambda L: L._dynamo.disable(_f)._torchdynamo_disable,
    lambda L: type(L._dynamo.disable(L.nn.Identity())).__name__,
    lambda L: L.compiler.disable(_f, reason="why")(3),
    lambda L: L._dynamo.is_dynamo_disable_recursive(L._dynamo.disable(_f, recursive=False)),
    lambda L: L._dynamo.is_dynamo_disable_recursive(_f),
    lambda L: L._dynamo.optimize("eager")(_f)(L.ones(1)).tolist(),
    lambda L: L._dynamo.optimize("nope"),
    lambda L: L._dynamo.optimize("eager").__enter__(),
    lambda L: L._dynamo.optimize_assert("eager")(_f)(L.ones(1)).tolist(),
    lambda L: L._dynamo.substitute_in_graph(_f)(_two_args),
    lambda L: L._dynamo.mark_static_address(3),
    lambda L: L._dynamo.mark_dynamic(L.ones(2, 3), [0, 1]),
    lambda L: L._dynamo.maybe_mark_dynamic(L.ones(2, 3), 1),
    lambda L: L._dynamo.mark_static(L.ones(2, 3)),
    lambda L: L._dynamo.mark_static_address(L.ones(2)),
    lambda L: L._dynamo.is_compiling(),
    lambda L: (L.compiler.is_compiling(), L.compiler.is_dynamo_compiling(),
               L.compiler.is_exporting()),
    lambda L: L.compiler.set_enable_guard_collectives(False),
    lambda L: L.compiler.cudagraph_mark_step_begin(),
    lambda L: L.compiler.skip_all_guards_unsafe([1, 2]),
    lambda L: L.compiler.nested_compile_region(_f)(1),
    lambda L: L._dynamo.set_stance("default", force_backend="eager") and None,
    lambda L: L._dynamo.set_stance("force_eager", force_backend="eager"),
])
def test_controls_like_torch(case):
    try:
        assert _outcome(lambda: case(chainrule)) == _outcome(lambda: case(torch))
    finally:  # a stance set by a call holds for the whole process: later compiles must compile
        chainrule.compiler.set_stance("default")
        torch.compiler.set_stance("default")


def test_substitute_in_graph_returns_the_stand_in():
    def original(x):
        return x

    def stand_in(x):
        return x

    assert chainrule.compiler.substitute_in_graph(original)(stand_in) is stand_in
    with pytest.raises(ValueError, match="Duplicate dispatch rule"):
        chainrule.compiler.substitute_in_graph(original)(stand_in)


def test_marks_are_recorded():
    x = chainrule.ones(2, 3)
    chainrule._dynamo.mark_dynamic(x, 0)
    chainrule._dynamo.mark_static(x, 1)
    assert x._extra_dict()["_dynamo_dynamic_indices"] == {0}
    assert x._extra_dict()["_dynamo_static_indices"] == {1}


def test_wrap_numpy_like_torch():
    def fn(a, b):
        return np.sin(a) + b, [a * 2]

    for lib in (torch, chainrule):
        out, (twice,) = lib.compiler.wrap_numpy(fn)(lib.ones(2), lib.zeros(2))
        assert isinstance(out, lib.Tensor) and isinstance(twice, lib.Tensor)
        assert np.allclose(out.numpy(), np.sin(1.0)) and twice.tolist() == [2.0, 2.0]


def test_inductor_modes_like_torch():
    assert chainrule._inductor.list_mode_options() == torch._inductor.list_mode_options()
    assert _outcome(lambda: chainrule._inductor.list_mode_options("x")) == \
        _outcome(lambda: torch._inductor.list_mode_options("x"))


# ---- what the controls do to chainrule.compile --------------------------------------------

def _counted():
    calls = []

    def f(x):
        calls.append(1)
        return x * 2

    return f, calls


def test_reset_forgets_programs():
    f, calls = _counted()
    g = chainrule.compile(f)
    x = chainrule.ones(3)
    for _ in range(3):
        g(x)
    assert g.stats["programs"] == 1 and len(calls) == 2  # two captures, then a replay
    chainrule._dynamo.reset()
    assert g.stats == {"programs": 0, "replays": 0, "captures": 0}
    g(x)
    assert len(calls) == 3 and g.stats["captures"] == 1


def test_stances():
    f, calls = _counted()
    g = chainrule.compile(f)
    x = chainrule.ones(3)
    with chainrule.compiler.set_stance("force_eager"):
        g(x)
    assert g.stats["captures"] == 0 and len(calls) == 1
    g(x), g(x)
    assert g.stats["programs"] == 1
    with chainrule.compiler.set_stance("eager_on_recompile"):
        assert g(chainrule.ones(5)).tolist() == [2.0] * 5  # a new shape runs eagerly
    assert g.stats["captures"] == 2
    with chainrule.compiler.set_stance("fail_on_recompile"):
        g(x)  # an existing program is fine
        with pytest.raises(RuntimeError, match="Detected recompile when torch.compile stance "
                                               "is 'fail_on_recompile'. filename: '"):
            g(chainrule.ones(4))

    @chainrule.compiler.set_stance("force_eager")
    def run():
        return g(chainrule.ones(6))

    run()
    assert g.stats["captures"] == 2
    chainrule.compiler.set_stance("bogus")
    try:
        with pytest.raises(RuntimeError, match="invalid torch.compile stance"):
            g(x)
    finally:
        chainrule.compiler.set_stance("default")


def test_bogus_stance_fails_at_the_call_like_torch():
    for lib in (torch, chainrule):
        g = lib.compile(_f, backend="eager")
        with lib.compiler.set_stance("bogus"):
            with pytest.raises(RuntimeError, match="invalid torch.compile stance"):
                g(lib.ones(1))


def test_recompile_limit_and_disable_flags_are_read():
    f, calls = _counted()
    with chainrule._dynamo.config.patch(recompile_limit=1):
        g = chainrule.compile(f)
    g(chainrule.ones(1)), g(chainrule.ones(1))
    with pytest.warns(RuntimeWarning, match=r"recompile_limit \(1\) reached"):
        g(chainrule.ones(2))
    with chainrule._dynamo.config.patch(disable=True):
        assert chainrule.compile(f) is f
    disabled = chainrule._dynamo.disable(f)
    assert chainrule.compile(disabled) is disabled


def test_recompile_limit_counts_shapes_as_pytorch_does():
    """With dynamic shapes (the default) new sizes of the same rank cost one recompilation,
    as PyTorch's switch to a dynamic graph does; with dynamic=False each shape costs one."""
    for dynamic, limit, shapes, gives_up in [
            (None, 2, [(1,), (2,), (3,), (4,), (5,)], False),
            (None, 1, [(1,), (2,)], True),
            (None, 2, [(1,), (2,), (3,), (2, 2)], True),
            (None, 3, [(1,), (2,), (3,), (2, 2)], False),
            (False, 2, [(1,), (2,), (3,)], True)]:
        chainrule._dynamo.reset()  # warnings are given once
        f, calls = _counted()
        g = chainrule.compile(f, recompile_limit=limit, dynamic=dynamic)
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            for shape in shapes:
                for _ in range(3):
                    g(chainrule.ones(shape))
        assert any("recompile_limit" in str(x.message) for x in w) == gives_up
    chainrule._dynamo.reset()
    with chainrule._dynamo.config.patch(automatic_dynamic_shapes=False):
        g = chainrule.compile(_counted()[0], recompile_limit=1)
    with pytest.warns(RuntimeWarning, match="recompile_limit"):
        for shape in [(1,), (1,), (2,)]:
            g(chainrule.ones(shape))


def test_compiled_module_is_an_optimized_module():
    model = chainrule.nn.Linear(2, 2)
    compiled = chainrule.compile(model)
    assert isinstance(compiled, chainrule._dynamo.eval_frame.OptimizedModule)
    assert compiled._orig_mod is model
    assert list(compiled.state_dict()) == ["_orig_mod.weight", "_orig_mod.bias"]
    assert compiled._compiled_forward._torchdynamo_orig_callable is model


# ---- torch._logging -------------------------------------------------------------------------

def test_set_logs_signature_like_torch():
    ours = inspect.signature(chainrule._logging.set_logs).parameters
    theirs = inspect.signature(torch._logging.set_logs).parameters
    assert [(p.name, p.kind, p.default) for p in ours.values()] == \
        [(p.name, p.kind, p.default) for p in theirs.values()]


@pytest.mark.parametrize("case", [
    lambda L: L._logging.set_logs(nope=True),
    lambda L: L._logging.set_logs(dynamo="x"),
    lambda L: L._logging.set_logs(1),
    lambda L: L._logging.getArtifactLogger("x", "nope"),
    lambda L: L._logging.getArtifactLogger("mymod", "graph_breaks").name,
    lambda L: (L._logging.set_logs(dynamo=logging.DEBUG, inductor=logging.INFO),
               logging.getLogger("torch._dynamo").level,
               logging.getLogger("torch._inductor").level, L._logging.set_logs(),
               logging.getLogger("torch._dynamo").level),
])
def test_logging_like_torch(case):
    try:
        assert _outcome(lambda: case(chainrule)) == _outcome(lambda: case(torch))
    finally:
        chainrule._logging.set_logs()


def test_artifact_loggers_log_when_switched_on(caplog):
    logger = chainrule._logging.getArtifactLogger("h1.mod", "recompiles")
    with caplog.at_level(logging.DEBUG, logger="h1.mod.__recompiles"):
        logger.debug("off")
        chainrule._logging.set_logs(recompiles=True)
        logger.debug("on")
        chainrule._logging.set_logs()
        logger.debug("off again")
    assert [r.getMessage() for r in caplog.records] == ["on"]
