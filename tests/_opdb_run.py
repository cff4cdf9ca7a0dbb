"""PyTorch's operator database (``op_db``) run on chainrule: loading it, finding chainrule's
counterpart of an OpInfo, converting its samples, and comparing values and derivatives."""

from __future__ import annotations

import functools
import importlib
import inspect
import re
import sys
import types
import unittest
import warnings
import zlib
from pathlib import Path

import numpy as np
import torch

import chainrule

DIFFERENCES = Path(__file__).resolve().parent.parent / "docs" / "differences.md"
HEADING = "PyTorch's operator database"

INTEGER = (torch.int64, torch.int32, torch.int16, torch.int8, torch.uint8)


def load_op_db() -> list:
    """``op_db``; PyTorch's test utilities import expecttest, which only its own test cases use."""
    try:
        import expecttest  # noqa: F401
    except ImportError:
        stub = types.ModuleType("expecttest")
        stub.TestCase = unittest.TestCase
        sys.modules["expecttest"] = stub
    frozen = torch.backends.flags_frozen()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        from torch.testing._internal.common_methods_invocations import op_db
    # importing them freezes torch.backends' flags for the whole process, where the rest of the
    # suite sets them; the flag lives in the globals of torch.backends' functions
    torch.backends.flags_frozen.__globals__["__allow_nonbracketed_mutation_flag"] = not frozen
    return list(op_db)


def key(op) -> str:
    """The name the lists write: ``nn.functional.pad[circular]`` for a variant."""
    return f"{op.name}[{op.variant_test_name}]" if op.variant_test_name else op.name


def listed() -> dict[str, str]:
    """OpInfos listed under the op_db heading of docs/differences.md -> the line's group
    (the text before the first colon of its bullet)."""
    found: dict[str, str] = {}
    for section in re.split(r"\n## ", DIFFERENCES.read_text()):
        title, _, body = section.partition("\n")
        if not title.startswith(HEADING):
            continue
        for bullet in re.split(r"\n- ", "\n" + body)[1:]:  # the bullets, not the intro
            group = bullet.split(":", 1)[0].strip()
            for name in re.findall(r"`([\w.]+(?:\[\w+\])?)`", bullet):
                found[name] = group
    return found


# ---------------------------------------------------------------- finding the counterpart

def _module_for(module: types.ModuleType) -> types.ModuleType | None:
    name = module.__name__
    if name == "torch" or not name.startswith("torch."):
        return chainrule if name == "torch" else None
    try:
        return importlib.import_module("chainrule" + name[len("torch"):])
    except ImportError:
        return None


_REBINDING: set = set()


def _ours(value):
    # PyTorch's test helpers by where their code is (a contextmanager's wrapper is contextlib's)
    if isinstance(value, types.FunctionType) and value not in _REBINDING \
            and "/torch/testing/" in value.__code__.co_filename.replace("\\", "/"):
        return _rebound(value)
    return value


@functools.cache
def _rebound(fn: types.FunctionType) -> types.FunctionType:
    """PyTorch's lambda with the torch modules it reads (itself or through the helpers of
    PyTorch's test suite it calls) replaced by chainrule's."""
    _REBINDING.add(fn)
    scope = dict(fn.__globals__)
    for name, value in fn.__globals__.items():
        if isinstance(value, types.ModuleType) and value.__name__.split(".")[0] == "torch":
            ours = _module_for(value)
            if ours is not None:
                scope[name] = ours
    for name in fn.__code__.co_names:
        if name in scope:
            scope[name] = _ours(scope[name])
    closure = fn.__closure__
    if closure:
        cells = []
        for cell in closure:
            cells.append(types.CellType(_ours(cell.cell_contents)))
        closure = tuple(cells)
    _REBINDING.discard(fn)
    new = types.FunctionType(fn.__code__, scope, fn.__name__, fn.__defaults__, closure)
    new.__kwdefaults__ = fn.__kwdefaults__
    return new


def _lookup(path: str):
    target = chainrule
    for part in path.split("."):
        target = getattr(target, part, None)
        if target is None:
            return None
    return target


def _method(name: str):
    if not hasattr(chainrule.Tensor, name):
        return None
    return lambda self, *args, **kwargs: getattr(self, name)(*args, **kwargs)


def counterpart(op):
    """chainrule's callable for the OpInfo, or None."""
    fn = op.op
    module = getattr(fn, "__module__", None) or ""
    name = op.name
    if module.startswith("torch.testing"):
        # a lambda around torch (x.to(...), torch.normal(...)): the name says what it uses
        base = name.split(".")[-1] if name.startswith("nn.functional") else name
        if _lookup(name) is None and not hasattr(chainrule.Tensor, base) \
                and not hasattr(chainrule.Tensor, base + "_"):
            return None
        return _rebound(fn)
    if module.startswith(("torch._ops", "torch.cuda", "torch._C._sparse")) \
            or name.startswith("torch."):
        return None  # aten overloads, jiterator kernels, sparse kernels
    if name.startswith("_") and not name.startswith("__"):
        return None
    if name.startswith("__") or module in ("torch._tensor", "") \
            or inspect.ismethoddescriptor(fn):
        return _method(name)
    found = _lookup(name)
    if found is None and "." not in name:
        return _method(name)
    return found


# ---------------------------------------------------------------- converting samples

def _dtype(dtype: torch.dtype):
    return getattr(chainrule, str(dtype).split(".")[1])


def to_ours(value, leaves: list):
    """A sample's value with torch's tensors (a view into a larger storage as such a view),
    dtypes, devices, sizes and modules without parameters as chainrule's; tensors that require
    grad are appended to ``leaves``."""
    if isinstance(value, torch.Tensor):
        view = _storage_view(value.detach())
        if view is not None:
            out = chainrule.from_numpy(view)
        else:
            array = value.detach().resolve_conj().resolve_neg().numpy().copy()
            out = chainrule.tensor(array, dtype=_dtype(value.dtype))
        if value.requires_grad:
            out.requires_grad_()
            leaves.append(out)
        return out
    if isinstance(value, torch.dtype):
        return _dtype(value)
    if isinstance(value, torch.device):
        return chainrule.device(str(value))
    if isinstance(value, torch.Size):
        return chainrule.Size(value)
    if isinstance(value, torch.nn.Module):
        return _module(value)
    if isinstance(value, torch.memory_format):
        return getattr(chainrule, str(value).split(".")[1])
    if isinstance(value, list):
        return [to_ours(v, leaves) for v in value]
    if isinstance(value, tuple) and not hasattr(value, "_fields"):
        return tuple(to_ours(v, leaves) for v in value)
    if isinstance(value, dict):
        return {k: to_ours(v, leaves) for k, v in value.items()}
    return value


def _storage_view(tensor: torch.Tensor) -> np.ndarray | None:
    """A view into a larger storage (as_strided's partial views) as the same view of a copy of
    that storage; None for any other tensor."""
    if tensor.is_conj() or tensor.is_neg() or tensor.dtype == torch.bfloat16:
        return None
    size = tensor.element_size()
    n = tensor.untyped_storage().nbytes() // size
    if n <= tensor.numel():
        return None
    storage = torch.as_strided(tensor, (n,), (1,), 0).numpy().copy()
    return np.ndarray(tuple(tensor.shape), storage.dtype, buffer=storage,
                      offset=tensor.storage_offset() * size,
                      strides=tuple(s * size for s in tensor.stride()))


def _module(module: torch.nn.Module):
    """chainrule's module of the class with the settings of a module without parameters or
    buffers (a loss's distance function); any other module as it is."""
    ours = getattr(chainrule.nn, type(module).__name__, None)
    if ours is None or next(module.parameters(), None) is not None \
            or next(module.buffers(), None) is not None:
        return module
    ours = ours()
    for name, setting in vars(module).items():
        if not name.startswith("_"):
            setattr(ours, name, setting)
    return ours


def torch_leaves(value, leaves: list) -> None:
    if isinstance(value, torch.Tensor):
        if value.requires_grad:
            leaves.append(value)
    elif isinstance(value, (list, tuple)):
        for v in value:
            torch_leaves(v, leaves)
    elif isinstance(value, dict):
        for v in value.values():
            torch_leaves(v, leaves)


# ---------------------------------------------------------------- comparing

def flat(result) -> list:
    if isinstance(result, (tuple, list)):
        return [x for r in result for x in flat(r)]
    return [result]


def tolerance(dtype, scale: float, loose: bool) -> tuple[float, float]:
    """(rtol, atol) for values of the given numpy dtype; float32 allows for other kernels."""
    single = dtype in (np.float32, np.complex64)
    rtol = (2e-3 if loose else 1e-4) if single else (1e-6 if loose else 1e-7)
    return rtol, rtol * max(1.0, scale)


def _numpy(tensor) -> np.ndarray:
    """The values; bfloat16 as float32 (NumPy has no bfloat16), PyTorch's ZeroTensor as zeros."""
    if isinstance(tensor, torch.Tensor):
        tensor = tensor.detach()
        if tensor._is_zerotensor():
            tensor = torch.zeros(tensor.shape, dtype=tensor.dtype)
        if tensor.dtype == torch.bfloat16:
            tensor = tensor.float()
        return tensor.resolve_conj().resolve_neg().numpy()
    tensor = tensor.detach()
    if tensor.dtype == chainrule.bfloat16:
        tensor = tensor.float()
    return np.asarray(tensor.numpy())


def compare(ours, theirs, what: str, loose: bool = False) -> None:
    """Tensors (in sequences) equal to torch's: dtype, shape, values; others with ==."""
    if isinstance(theirs, torch.Tensor):
        assert isinstance(ours, chainrule.Tensor), f"{what}: expected a tensor, got {ours!r}"
        assert str(ours.dtype) == str(theirs.dtype), f"{what}: {ours.dtype} != {theirs.dtype}"
        assert tuple(ours.shape) == tuple(theirs.shape), \
            f"{what}: shape {tuple(ours.shape)} != {tuple(theirs.shape)}"
        want, got = _numpy(theirs), _numpy(ours)
        if want.dtype.kind in "fc":
            finite = np.abs(want[np.isfinite(want)])
            scale = float(finite.max()) if finite.size else 1.0
            rtol, atol = tolerance(want.dtype, scale, loose)
            np.testing.assert_allclose(got, want, rtol=rtol, atol=atol, err_msg=what)
        else:
            np.testing.assert_array_equal(got, want, err_msg=what)
    elif isinstance(theirs, (tuple, list)):
        assert isinstance(ours, (tuple, list)), f"{what}: expected a sequence, got {ours!r}"
        assert len(ours) == len(theirs), f"{what}: length {len(ours)} != {len(theirs)}"
        for i, (o, t) in enumerate(zip(ours, theirs)):
            compare(o, t, f"{what}[{i}]", loose)
    elif isinstance(theirs, torch.dtype):
        assert str(ours) == str(theirs), f"{what}: {ours!r} != {theirs!r}"
    elif isinstance(theirs, float) and isinstance(ours, float):
        np.testing.assert_allclose(ours, theirs, rtol=1e-5, err_msg=what)
    else:
        assert ours == theirs, f"{what}: {ours!r} != {theirs!r}"


def _same(a, b) -> bool:
    """Two of torch's results equal (NaN equal to NaN): not a random op's."""
    a, b = flat(a), flat(b)
    if len(a) != len(b):
        return False
    for x, y in zip(a, b):
        if isinstance(x, torch.Tensor):
            if not isinstance(y, torch.Tensor) or x.shape != y.shape or x.dtype != y.dtype \
                    or not torch.equal(torch.nan_to_num(x.detach()), torch.nan_to_num(y.detach())):
                return False
    return True


def compare_meta(ours, theirs, what: str) -> None:
    """Only dtypes and shapes (random results)."""
    for i, (o, t) in enumerate(zip(flat(ours), flat(theirs), strict=True)):
        if isinstance(t, torch.Tensor):
            assert isinstance(o, chainrule.Tensor), f"{what}[{i}]: expected a tensor"
            assert str(o.dtype) == str(t.dtype), f"{what}[{i}]: {o.dtype} != {t.dtype}"
            assert tuple(o.shape) == tuple(t.shape), f"{what}[{i}]: {o.shape} != {t.shape}"


def cotangents(outs: list, seed: str) -> list[np.ndarray]:
    rng = np.random.default_rng(zlib.crc32(seed.encode()))
    result = []
    for o in outs:
        shape = tuple(o.shape)
        array = rng.standard_normal(shape)
        if o.dtype.is_complex:
            array = array + 1j * rng.standard_normal(shape)
        name = str(o.dtype).split(".")[1]
        result.append(np.asarray(array).astype("float32" if name == "bfloat16" else name))
    return result


# ---------------------------------------------------------------- running

def _replace(value, swap: dict):
    if id(value) in swap:
        return swap[id(value)]
    if isinstance(value, list):
        return [_replace(v, swap) for v in value]
    if isinstance(value, tuple) and not hasattr(value, "_fields"):
        return tuple(_replace(v, swap) for v in value)
    if isinstance(value, dict):
        return {k: _replace(v, swap) for k, v in value.items()}
    return value


def _call(fn, sample):
    return fn(sample[0], *sample[1], **sample[2])


def _process(sample, lib_is_torch: bool):
    fn = sample.output_process_fn_grad
    if lib_is_torch or not isinstance(fn, types.FunctionType) \
            or not fn.__module__.startswith("torch"):
        return fn
    return _rebound(fn)


def _differentiable(outs: list, lib) -> list[int]:
    return [i for i, o in enumerate(outs) if isinstance(o, lib.Tensor) and o.requires_grad
            and (o.dtype.is_floating_point or o.dtype.is_complex)]


def _zeros_for_none(grads, leaves):
    return [g if g is not None else leaf.detach() * 0 for g, leaf in zip(grads, leaves)]


def run_sample(op, fn, sample, label: str, derivatives: bool) -> None:
    """Compare one sample: values, the VJP and (where PyTorch has forward mode) the JVP."""
    ours_leaves: list = []
    ours_sample = to_ours((sample.input, sample.args, sample.kwargs), ours_leaves)
    theirs_sample = (sample.input, sample.args, sample.kwargs)
    torch.default_generator.manual_seed(0)
    theirs = _call(op.op, theirs_sample)
    with torch.no_grad():
        torch.default_generator.manual_seed(1)
        again = _call(op.op, theirs_sample)
    random = op.has_nondeterministic_output or not _same(again, theirs)
    chainrule.manual_seed(0)
    ours = _call(fn, ours_sample)
    if random:
        compare_meta(ours, theirs, f"{label}: output")
        return
    loose = op.name.split(".")[0] in ("linalg", "fft") or op.name in LOOSE
    try:
        compare(ours, theirs, f"{label}: output", loose)
    except AssertionError:
        if sample.output_process_fn_grad is None:
            raise
        compare(_process(sample, False)(ours), sample.output_process_fn_grad(theirs),
                f"{label}: output (as the OpInfo's output_process_fn_grad sees it)", loose)
    if not derivatives:
        return
    theirs_leaves: list = []
    torch_leaves(theirs_sample, theirs_leaves)
    if not theirs_leaves:
        return
    wrapped = _wrapped(op)
    if wrapped:  # derivatives through the OpInfo's gradcheck wrapper (e.g. A + A^H for cholesky)
        theirs = _call(functools.partial(wrapped[0], op.op), theirs_sample)
        ours = _call(functools.partial(wrapped[1], fn), ours_sample)
    t_outs = flat(sample.output_process_fn_grad(theirs))
    o_outs = flat(_process(sample, False)(ours))
    picked = _differentiable(t_outs, torch)
    if picked and op.supports_autograd:
        cot = cotangents([t_outs[i] for i in picked], label)
        try:
            t_grads = torch.autograd.grad([t_outs[i] for i in picked], theirs_leaves,
                                          [torch.from_numpy(c).to(t_outs[i].dtype)
                                           for c, i in zip(cot, picked)], allow_unused=True)
        except RuntimeError:
            t_grads = None  # PyTorch has no backward here
        if t_grads is not None:
            for i in picked:
                assert isinstance(o_outs[i], chainrule.Tensor) and o_outs[i].requires_grad, \
                    f"{label}: output {i} does not require grad (PyTorch's does)"
            o_grads = chainrule.autograd.grad([o_outs[i] for i in picked], ours_leaves,
                                              [chainrule.from_numpy(c).to(o_outs[i].dtype)
                                               for c, i in zip(cot, picked)],
                                              allow_unused=True)
            compare(_zeros_for_none(o_grads, ours_leaves),
                    _zeros_for_none(t_grads, theirs_leaves), f"{label}: vjp", loose)
    if op.supports_forward_ad and picked:
        _jvp(op, fn, sample, ours_sample, ours_leaves, theirs_leaves, picked, label, loose)


def _wrapped(op):
    """(torch's, chainrule's) gradcheck wrapper of the OpInfo, or None for the default."""
    wrapper = op.gradcheck_wrapper
    if getattr(wrapper, "__name__", "<lambda>") == "<lambda>":
        return None
    return wrapper, _rebound(wrapper)


def _jvp(op, fn, sample, ours_sample, ours_leaves, theirs_leaves, picked, label, loose):
    import torch.autograd.forward_ad as tfw

    import chainrule.autograd.forward_ad as cfw

    t_fn = op.op
    wrapped = _wrapped(op)
    if wrapped:
        t_wrap, o_wrap = wrapped
        t_fn = functools.partial(t_wrap, op.op)
        fn = functools.partial(o_wrap, fn)
    tangents = cotangents(theirs_leaves, label + " tangent")
    theirs_sample = (sample.input, sample.args, sample.kwargs)
    try:
        with tfw.dual_level():
            swap = {id(leaf): tfw.make_dual(leaf.detach(), torch.from_numpy(t).to(leaf.dtype))
                    for leaf, t in zip(theirs_leaves, tangents)}
            outs = flat(sample.output_process_fn_grad(_call(t_fn, _replace(theirs_sample, swap))))
            want = [tfw.unpack_dual(outs[i]).tangent for i in picked]
            want = [t if t is not None else outs[i].detach() * 0 for t, i in zip(want, picked)]
    except (RuntimeError, NotImplementedError):
        return  # PyTorch's forward mode has no formula for this sample
    with cfw.dual_level():
        swap = {id(leaf): cfw.make_dual(leaf.detach(), chainrule.from_numpy(t).to(leaf.dtype))
                for leaf, t in zip(ours_leaves, tangents)}
        outs = flat(_process(sample, False)(_call(fn, _replace(ours_sample, swap))))
        got = [cfw.unpack_dual(outs[i]).tangent for i in picked]
        got = [t if t is not None else outs[i].detach() * 0 for t, i in zip(got, picked)]
    compare(got, want, f"{label}: jvp", loose)


# compared loosely (see tolerance): cov's float64 samples pass float32 aweights
LOOSE: set[str] = {"cov"}


def plan(op) -> list[tuple[torch.dtype, int, bool]]:
    """(dtype, samples, derivatives) to run: float64 and complex128 with their derivatives on the
    first 4 samples; float32 likewise on 2; the first integer dtype listed (int64 first) and
    complex64 by value on 2 and 1 (the cap keeps the file's runtime bounded)."""
    supported = op.supported_dtypes("cpu")
    backward = op.supported_backward_dtypes("cpu") if op.supports_autograd else set()
    found = []
    for dtype, count in ((torch.float32, 2), (torch.float64, 4), (torch.complex64, 1),
                         (torch.complex128, 4)):
        if dtype in supported:
            derivatives = dtype in backward and dtype != torch.complex64
            found.append((dtype, count, derivatives))
    integer = [d for d in INTEGER if d in supported]
    if integer:
        found.append((integer[0], 2, False))
    return found


def run_op(op, fn) -> list[str]:
    """Failures of the OpInfo's first samples (see plan), the first failing one per dtype."""
    failures = []
    for dtype, count, grad in plan(op):
        try:
            samples = list(zip(range(count), op.sample_inputs("cpu", dtype, requires_grad=grad)))
        except Exception as error:  # noqa: BLE001  (PyTorch's sample generator)
            failures.append(f"{dtype}: sample generation failed: {error!r}")
            continue
        for i, sample in samples:
            label = f"{dtype} sample {i}"
            try:
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    run_sample(op, fn, sample, label, grad)
            except Exception as error:  # noqa: BLE001  (reported as the failure)
                text = " ".join(str(error).strip().splitlines()[:6])[:600]
                failures.append(f"{label} {sample.summary()[:300]}: "
                                f"{type(error).__name__}: {text}")
                break
    return failures
