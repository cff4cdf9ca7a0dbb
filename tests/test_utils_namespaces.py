"""The smaller torch modules code imports: torch.types, utils.hooks, utils.weak, futures,
torch.cpu, torch.accelerator, utils.model_zoo/deterministic/backcompat/collect_env/file_baton,
each against torch's names and behaviour."""

from __future__ import annotations

import contextlib
import gc
import importlib
import inspect
import os
import pickle
import threading
import time
import warnings

import numpy as np
import pytest
import torch

import chainrule as cr

MODULES = ["types", "utils.hooks", "utils.weak", "futures", "cpu", "accelerator",
           "accelerator.memory", "utils.model_zoo", "utils.file_baton", "utils.backcompat",
           "utils.module_tracker"]


def _plain(signature: inspect.Signature) -> str:
    """The parameter list without annotations (chainrule's use its own types)."""
    params = [p.replace(annotation=inspect.Parameter.empty) for p in signature.parameters.values()]
    plain = signature.replace(parameters=params, return_annotation=inspect.Signature.empty)
    return str(plain).replace("chainrule.", "torch.")


@pytest.mark.parametrize("name", MODULES)
def test_public_names_and_signatures(name):
    theirs = importlib.import_module("torch." + name)
    ours = importlib.import_module("chainrule." + name)
    names = getattr(theirs, "__all__", None)
    if names is None:  # modules without __all__: their public functions and classes
        names = [n for n, v in vars(theirs).items() if not n.startswith("_")
                 and getattr(v, "__module__", None) == theirs.__name__]
    else:
        assert sorted(ours.__all__) == sorted(names)
    for n in names:
        ref, mine = getattr(theirs, n), getattr(ours, n)
        if isinstance(ref, type) and "__init__" in vars(ref):
            assert _plain(inspect.signature(mine.__init__)) == \
                _plain(inspect.signature(ref.__init__)), n
        elif callable(ref) and not isinstance(ref, type):
            assert _plain(inspect.signature(mine)) == _plain(inspect.signature(ref)), n


# ---- torch.types -------------------------------------------------------------------------------


def test_types_aliases():
    import torch.types as theirs

    import chainrule.types as ours

    assert ours.__all__ == theirs.__all__
    for name in ("Number", "Device", "FileLike", "_size", "_TensorOrTensors", "IntLikeType",
                 "FloatLikeType", "BoolLikeType", "_Number", "_bool", "_int", "_float",
                 "_complex", "_dtype", "_device", "py_sym_types", "Storage"):
        assert hasattr(ours, name), name
    assert ours._Number == theirs._Number
    assert not isinstance(3, ours.py_sym_types) and not isinstance(3, theirs.py_sym_types)
    assert ours._device is cr.device and ours._dtype is cr.dtype


# ---- torch.utils.hooks -------------------------------------------------------------------------


def test_removable_handle_is_the_one_class():
    from chainrule.utils.hooks import RemovableHandle

    t = cr.ones(2, requires_grad=True)
    handles = [t.register_hook(lambda g: g), cr.nn.Linear(2, 2).register_forward_hook(print),
               (t * 2).grad_fn.register_hook(lambda *a: None)]
    assert all(isinstance(h, RemovableHandle) for h in handles)


def _handle_semantics(hooks_mod):
    from collections import OrderedDict

    hooks, extra, extras = OrderedDict(), OrderedDict(), [OrderedDict(), OrderedDict()]
    a = hooks_mod.RemovableHandle(hooks, extra_dict=extra)
    b = hooks_mod.RemovableHandle(hooks, extra_dict=extras)
    hooks[a.id], extra[a.id] = "a", "extra"
    hooks[b.id] = "b"
    for d in extras:
        d[b.id] = "x"
    ids_increase = b.id == a.id + 1
    a.remove()
    a.remove()  # removing twice is fine
    after_a = (list(hooks.values()), len(extra))
    with b:
        pass
    after_b = (len(hooks), [len(d) for d in extras])
    c = pickle.loads(pickle.dumps(hooks_mod.RemovableHandle(OrderedDict())))
    next_is_fresh = hooks_mod.RemovableHandle(OrderedDict()).id > c.id
    return ids_increase, after_a, after_b, next_is_fresh


def test_removable_handle_like_torch():
    import torch.utils.hooks as theirs

    import chainrule.utils.hooks as ours

    assert _handle_semantics(ours) == _handle_semantics(theirs)


def test_warn_if_has_hooks_and_unserializable_hook():
    import torch.utils.hooks as theirs

    import chainrule.utils.hooks as ours

    def run(m, hooks_mod):
        t = m.ones(2, requires_grad=True)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            hooks_mod.warn_if_has_hooks(t)
            t.register_hook(hooks_mod.unserializable_hook(lambda g: g))
            hooks_mod.warn_if_has_hooks(t)

            def named(g):
                return g

            t.register_hook(named)
            hooks_mod.warn_if_has_hooks(t)
        return [str(w.message).split(" on tensor")[1] for w in caught]

    assert run(cr, ours) == run(torch, theirs)


def _full_backward_hook_run(m, hooks_mod):
    m.manual_seed(0)
    lin = m.nn.Linear(3, 2)
    with m.no_grad():
        lin.weight.copy_(m.tensor([[0.5, -1.0, 2.0], [1.0, 0.0, -0.5]]))
        lin.bias.fill_(0.1)
    seen = []

    def hook(mod, grad_input, grad_output):
        seen.append(("hook", [None if g is None else g.tolist() for g in grad_input],
                     [g.tolist() for g in grad_output]))
        return (grad_input[0] * 2, None)

    def pre_hook(mod, grad_output):
        seen.append(("pre", [g.tolist() for g in grad_output]))
        return (grad_output[0] * 3,)

    bh = hooks_mod.BackwardHook(lin, [hook], [pre_hook])
    x = m.tensor([[1.0, 2.0, 3.0], [0.5, 0.0, -1.0]], requires_grad=True)
    args = bh.setup_input_hook((x, "not a tensor"))
    out = bh.setup_output_hook(lin(args[0]))
    (out * m.tensor([1.0, -1.0])).sum().backward()
    return seen, x.grad.tolist(), lin.weight.grad.tolist(), out.grad_fn.name()


def test_backward_hook_like_torch():
    import torch.utils.hooks as theirs

    import chainrule.utils.hooks as ours

    assert _full_backward_hook_run(cr, ours) == _full_backward_hook_run(torch, theirs)


# ---- torch.utils.weak --------------------------------------------------------------------------


def test_weak_id_key_dictionary():
    from chainrule.utils.weak import TensorWeakRef, WeakIdKeyDictionary, WeakIdRef

    a, b = cr.ones(2), cr.ones(2)  # equal values, different tensors
    d = WeakIdKeyDictionary({a: 1})
    d[b] = 2
    assert d[a] == 1 and d[b] == 2 and len(d) == 2 and a in d and 3 not in d
    assert WeakIdRef(a) == WeakIdRef(a) and not WeakIdRef(a) == WeakIdRef(b)
    assert hash(WeakIdRef(a)) == id(a)
    ref = TensorWeakRef(b)
    assert ref() is b
    copy = d.copy()
    del b
    gc.collect()
    assert len(d) == 1 and [id(k) for k in d.keys()] == [id(a)] and ref() is None
    assert len(copy) == 1
    assert d.get(cr.ones(1), "absent") == "absent"
    assert d.pop(a) == 1 and len(d) == 0
    with pytest.raises(AssertionError, match="expected torch.Tensor, got <class 'int'>."):
        TensorWeakRef(1)


def test_weak_dictionary_like_torch():
    from torch.utils.weak import WeakIdKeyDictionary as Theirs

    from chainrule.utils.weak import WeakIdKeyDictionary

    def run(m, cls):
        keys = [m.ones(1) for _ in range(3)]
        d = cls()
        for i, k in enumerate(keys):
            d.setdefault(k, i)
        merged = d | {keys[0]: 10}
        d |= {keys[1]: 20}
        return (sorted(d.values()), sorted(merged.values()), d == cls(dict(zip(keys, [0, 20, 2]))),
                repr(d).startswith(f"<{cls.__name__} at 0x"))

    assert run(cr, WeakIdKeyDictionary) == run(torch, Theirs)


# ---- torch.futures -----------------------------------------------------------------------------


def _future_story(futures):
    out = []
    f = futures.Future()
    out.append(f.done())
    chained = f.then(lambda fut: fut.value() + 1)
    seen = []
    f.add_done_callback(lambda fut: seen.append(fut.wait()))
    f.set_result(41)
    out += [f.done(), f.value(), f.wait(), chained.wait(), seen]
    with pytest.raises(RuntimeError) as e:
        f.set_result(0)
    out.append(str(e.value))
    g = futures.Future()
    g.set_exception(ValueError("boom"))
    for call in (g.wait, g.value):
        with pytest.raises(ValueError) as e:
            call()
        out.append(str(e.value))
    with pytest.raises(AssertionError) as e:
        futures.Future().set_exception(3)
    out.append(str(e.value))
    failing = f.then(lambda fut: 1 / 0)
    with pytest.raises(RuntimeError) as e:
        failing.wait()
    out.append(str(e.value).split("\n")[0])
    a, b = futures.Future(), futures.Future()
    combined = futures.collect_all([a, b])
    out.append(combined.done())
    a.set_result(1)
    b.set_result(2)
    out += [combined.done(), [x.value() for x in combined.wait()], futures.wait_all([a, b])]
    bad = futures.Future()
    bad.set_exception(KeyError("k"))
    with pytest.raises(KeyError):
        futures.wait_all([a, bad])
    out.append(futures.collect_all([]).wait())
    for devices in (["cpu"], ["cuda:0"]):
        with pytest.raises((ValueError, RuntimeError)) as e:
            futures.Future(devices=devices)
        out.append((type(e.value), str(e.value)))
    return out


def test_futures_like_torch():
    import torch.futures as theirs

    import chainrule.futures as ours

    assert _future_story(ours) == _future_story(theirs)


def test_future_wait_blocks_until_another_thread_sets_it():
    from chainrule.futures import Future

    f = Future()
    threading.Timer(0.05, f.set_result, args=("done",)).start()
    assert f.wait() == "done"


# ---- torch.cpu and torch.accelerator -----------------------------------------------------------


def test_cpu_module_like_torch():
    import chainrule.cpu as ours

    for name in ("is_available", "is_initialized", "device_count", "current_device"):
        assert getattr(ours, name)() == getattr(torch.cpu, name)(), name
    assert ours.synchronize() is None and ours.set_device("cpu") is None
    s = ours.Stream()
    assert ours.current_stream() is not s
    with ours.stream(s):
        assert ours.current_stream() is s
    with ours.StreamContext(None):
        assert ours.current_stream() is not s
    e = ours.Event()
    assert e.query() is True and e.record() is None and e.wait() is None
    caps = ours.get_capabilities()
    theirs = torch.cpu.get_capabilities()
    for key in ("avx", "avx2", "avx512_f", "fma3", "sse4_2", "architecture"):
        if key in caps:
            assert caps[key] == theirs[key], key
    assert caps["num_logical_cores"] == os.cpu_count()
    with pytest.raises(TypeError):
        caps["avx"] = False


def _accelerator_answers(acc):
    answers = {}
    for name, args in [("device_count", ()), ("is_available", ()), ("current_accelerator", ()),
                       ("current_device_index", ()), ("set_device_index", (0,)),
                       ("get_device_capability", ()), ("current_stream", ()),
                       ("synchronize", ()), ("empty_cache", ()), ("empty_host_cache", ()),
                       ("get_memory_info", ()), ("memory_allocated", ()),
                       ("max_memory_allocated", ()), ("memory_reserved", ()),
                       ("max_memory_reserved", ()), ("memory_stats", ()),
                       ("reset_accumulated_memory_stats", ()), ("reset_peak_memory_stats", ()),
                       ("Graph", ())]:
        try:
            answers[name] = repr(getattr(acc, name)(*args))
        except RuntimeError as e:
            answers[name] = ("RuntimeError", str(e))
    for name in ("current_device_idx", "set_device_idx"):
        with pytest.warns(FutureWarning) as caught, pytest.raises(RuntimeError):
            getattr(acc, name)(*(() if name == "current_device_idx" else (0,)))
        answers[name] = str(caught[0].message)
    with acc.device_index(None):
        answers["device_index(None)"] = "entered"
    with pytest.raises(RuntimeError) as e, acc.device_index(0):
        pass
    answers["device_index(0)"] = str(e.value)
    return answers


def test_accelerator_like_torch_cpu_build():
    import chainrule.accelerator as ours

    assert _accelerator_answers(ours) == _accelerator_answers(torch.accelerator)


# ---- utils: model_zoo, deterministic, backcompat, file_baton, collect_env ---------------------


def test_model_zoo_is_the_hub_loader():
    import chainrule.hub
    import chainrule.utils.model_zoo as zoo

    assert zoo.load_url is chainrule.hub.load_state_dict_from_url
    assert zoo.tqdm is chainrule.hub.tqdm


def test_deterministic_flag_like_torch():
    import torch.utils.deterministic as theirs

    import chainrule.utils.deterministic as ours

    assert ours.fill_uninitialized_memory == theirs.fill_uninitialized_memory
    for lib in (ours, theirs):
        lib.fill_uninitialized_memory = False
    try:
        assert ours.fill_uninitialized_memory == theirs.fill_uninitialized_memory is False
        with pytest.raises(RuntimeError) as t_err:
            theirs.fill_uninitialized_memory = 1
        with pytest.raises(RuntimeError) as o_err:
            ours.fill_uninitialized_memory = 1
        assert str(o_err.value) == str(t_err.value)
    finally:
        for lib in (ours, theirs):
            lib.fill_uninitialized_memory = True


def test_backcompat_warnings_like_torch():
    import torch.utils.backcompat as theirs

    import chainrule.utils.backcompat as ours

    for name in ("broadcast_warning", "keepdim_warning"):
        mine, ref = getattr(ours, name), getattr(theirs, name)
        assert mine.enabled == ref.enabled
        mine.enabled = True
        assert mine.get_enabled() is True
        mine.set_enabled(False)
        assert mine.enabled is False


def test_file_baton(tmp_path):
    from chainrule.utils.file_baton import FileBaton

    path = str(tmp_path / "lock")
    first, second = FileBaton(path), FileBaton(path, wait_seconds=0.01, warn_after_seconds=0.02)
    assert first.try_acquire() is True and second.try_acquire() is False
    threading.Timer(0.1, first.release).start()
    start = time.time()
    with pytest.warns(UserWarning, match="Waited on lock file"):
        second.wait()
    assert time.time() - start >= 0.05 and not os.path.exists(path)


def test_collect_env_layout_like_torch(monkeypatch):
    import torch.utils.collect_env as theirs

    import chainrule.utils.collect_env as ours

    assert ours.SystemEnv._fields == theirs.SystemEnv._fields
    for lib in (ours, theirs):  # no subprocesses: the layout is what is compared
        monkeypatch.setattr(lib, "run", lambda command: (1, "", "not run"))
    mine = ours.get_pretty_env_info()
    ref = theirs.get_pretty_env_info()

    def labels(text: str) -> list[str]:
        return [line.split(":")[0] for line in text.splitlines()
                if ":" in line and not line.startswith("[")]

    assert labels(mine) == labels(ref)
    assert f"PyTorch version: chainrule {cr.__version__}" in mine
    assert "Is CUDA available: False" in mine


# ---- torch.utils.module_tracker ----------------------------------------------------------------


def _tracked(m, tracker_cls):
    log = []

    class Probe(m.nn.Module):
        def forward(self, x):
            log.append(("forward", sorted(tracker.parents), tracker.is_bw))
            x.register_hook(lambda g: log.append(("backward", sorted(tracker.parents),
                                                  tracker.is_bw)))
            return x * 2

    class Top(m.nn.Module):
        def __init__(self):
            super().__init__()
            self.block = m.nn.Sequential(m.nn.Linear(3, 3), Probe())
            self.head = m.nn.Linear(3, 1)

        def forward(self, x):
            return self.head(self.block(x))

    model = Top()
    with tracker_cls() as tracker:
        out = model(m.ones(2, 3))
        log.append(("between", sorted(tracker.parents), tracker.is_bw))
        out.sum().backward()
        log.append(("after", sorted(tracker.parents), tracker.is_bw))
    return log


def test_module_tracker_like_torch():
    from torch.utils.module_tracker import ModuleTracker as Theirs

    from chainrule.utils.module_tracker import ModuleTracker

    assert _tracked(cr, ModuleTracker) == _tracked(torch, Theirs)


# ---- torch.profiler's module layout ------------------------------------------------------------


def test_profiler_submodules_and_names():
    import torch.profiler as theirs

    import chainrule.profiler as ours

    assert set(theirs.__all__) - set(ours.__all__) == set()
    assert set(theirs.profiler.__all__) - set(ours.profiler.__all__) == set()
    assert ours.profiler.profile is ours.profile
    assert ours.profiler.PROFILER_STEP_NAME == theirs.profiler.PROFILER_STEP_NAME
    assert [(m.name, m.value) for m in ours.RecordScope] == \
        [(n, int(v)) for n, v in theirs.RecordScope.__members__.items()]
    assert ours.DeviceType is cr.autograd.profiler.DeviceType
    assert ours.KinetoStepTracker is cr.autograd.profiler.KinetoStepTracker
    assert ours.itt.__all__ == theirs.itt.__all__ and ours.itt.is_available() is False
    for call in (lambda: ours.itt.range_push("a"), ours.itt.range_pop,
                 lambda: ours.itt.mark("a")):
        with pytest.raises(RuntimeError, match="ITT functions not installed"):
            call()
    with pytest.raises(RuntimeError, match="ITT functions not installed"), \
            ours.itt.range("step {}", 1):
        pass
    assert all(p.endswith(os.sep) for p in ours.python_tracer._prefix_regex())


# ---- torch.utils.checkpoint's remaining names --------------------------------------------------


def test_checkpoint_names():
    import torch.utils.checkpoint as theirs

    import chainrule.utils.checkpoint as ours

    assert set(theirs.__all__) - set(ours.__all__) == {"create_selective_checkpoint_contexts",
                                                       "SAC_IGNORED_OPS"}
    assert [(p.name, p.value) for p in ours.CheckpointPolicy] == \
        [(p.name, p.value) for p in theirs.CheckpointPolicy]
    ctx = ours.SelectiveCheckpointContext(is_recompute=True)
    assert (ctx.is_recompute, ctx.op_output) == (True, None)
    assert ours.DefaultDeviceType.get_device_type() == theirs.DefaultDeviceType.get_device_type()
    assert ours.get_device_states(cr.ones(2), [cr.ones(1)]) == \
        theirs.get_device_states(torch.ones(2), [torch.ones(1)])
    ours.set_device_states([], [])
    ours.set_device_states([], [], device_type="meta")
    try:
        ours.DefaultDeviceType.set_device_type("meta")
        assert ours.DefaultDeviceType.get_device_type() == "meta"
    finally:
        ours.DefaultDeviceType._default_device_type = None


def _recomputations(m, grouped: bool) -> int:
    calls = []

    def region(x):
        calls.append(1)
        return x.sin(), x.cos()

    x = m.ones(3, requires_grad=True)
    y1, y2 = m.utils.checkpoint.checkpoint(region, x, use_reentrant=False)
    group = m.utils.checkpoint.GraphExecGroup() if grouped else contextlib.nullcontext()
    with group:
        y1.sum().backward()
        y2.sum().backward()
    return len(calls) - 1, x.grad.tolist()


def test_graph_exec_group_recomputes_once():
    import torch.utils.checkpoint  # noqa: F401

    for grouped in (False, True):
        ours, theirs = _recomputations(cr, grouped), _recomputations(torch, grouped)
        assert ours[0] == theirs[0]
        np.testing.assert_allclose(ours[1], theirs[1], rtol=1e-6)
    with cr.utils.checkpoint.GraphExecGroup():
        with pytest.raises(RuntimeError, match="GraphExecGroup contexts cannot be nested"):
            with cr.utils.checkpoint.GraphExecGroup():
                pass
