"""NumPy's protocols on tensors: ``__array_ufunc__``, ``__array_function__`` and DLPack.

``np.sin(t)``, ``np.sum(t, axis=0)`` and ``np.matmul(a, b)`` run chainrule's own ops, so they
return tensors and are differentiable. A NumPy function chainrule has no op for runs on the arrays
(NumPy's result, as PyTorch's tensors give) unless a tensor requires grad, when it raises.
"""

from __future__ import annotations

import numpy as np

from . import linalg as _la
from ._creation import as_tensor, from_numpy
from .ops import FUNCTIONS
from .tensor import Tensor, _graph_break

# ufunc name -> chainrule function name, where they differ (the rest share NumPy's name).
_UFUNC_NAMES = {
    "subtract": "sub", "multiply": "mul", "divide": "div", "true_divide": "div",
    "power": "pow", "negative": "neg", "absolute": "abs", "arcsin": "asin", "arccos": "acos",
    "arctan": "atan", "arctan2": "atan2", "arcsinh": "asinh", "arccosh": "acosh",
    "arctanh": "atanh", "greater": "gt", "greater_equal": "ge", "less": "lt",
    "less_equal": "le", "equal": "eq", "not_equal": "ne", "invert": "bitwise_not",
    "rint": "round", "mod": "remainder", "fabs": "abs", "conjugate": "conj",
}
# ufunc.reduce / ufunc.accumulate -> the chainrule reduction taking (input, dim, keepdim).
_REDUCE = {"add": "sum", "multiply": "prod", "maximum": "amax", "minimum": "amin",
           "logical_and": "all", "logical_or": "any"}
_ACCUMULATE = {"add": "cumsum", "multiply": "cumprod", "maximum": "cummax",
               "minimum": "cummin"}


def _function(name: str):
    return FUNCTIONS.get(name)


def _tensors_in(value, found: list) -> list:
    if isinstance(value, Tensor):
        found.append(value)
    elif isinstance(value, (list, tuple)):
        for v in value:
            _tensors_in(v, found)
    elif isinstance(value, dict):
        for v in value.values():
            _tensors_in(v, found)
    return found


def _to_arrays(value):
    if isinstance(value, Tensor):
        return value._data
    if isinstance(value, (list, tuple)):
        return type(value)(_to_arrays(v) for v in value)
    if isinstance(value, dict):
        return {k: _to_arrays(v) for k, v in value.items()}
    return value


def _as_operand(value):
    return as_tensor(value) if isinstance(value, np.ndarray) else value


def _write_out(out, result):
    """NumPy's ``out=``: copy ``result`` into the given tensor (or array) and return it."""
    target = out[0] if isinstance(out, tuple) else out
    if isinstance(target, Tensor):
        return target.copy_(result)
    np.copyto(target, result._data if isinstance(result, Tensor) else result)
    return target


def _without_grad(name: str, args, kwargs):
    """Run NumPy's own ``name`` on the arrays behind the tensors, or refuse if one needs grad."""
    if any(t.requires_grad for t in _tensors_in([args, kwargs], [])):
        raise RuntimeError(
            f"numpy.{name} has no chainrule op, so it cannot be differentiated: call it on "
            f"tensor.detach() (or use chainrule's own function)")
    return None


def array_ufunc(self, ufunc, method: str, *inputs, **kwargs):
    """``np.<ufunc>(tensor, ...)``: the chainrule op of the same name, differentiable."""
    out = kwargs.pop("out", None)
    dtype = kwargs.pop("dtype", None)
    if kwargs.pop("where", True) is not True or kwargs.pop("casting", "same_kind") != "same_kind":
        return NotImplemented
    kwargs.pop("order", None), kwargs.pop("subok", None), kwargs.pop("signature", None)
    name = ufunc.__name__
    if method == "__call__" and not kwargs:
        fn = _function(_UFUNC_NAMES.get(name, name))
        args = [_as_operand(x) for x in inputs]
    elif method in ("reduce", "accumulate"):
        fn = _function((_REDUCE if method == "reduce" else _ACCUMULATE).get(name, ""))
        axis = kwargs.pop("axis", 0)
        keepdims = kwargs.pop("keepdims", False)
        if fn is None or kwargs or len(inputs) != 1:  # initial=, several operands
            fn = None
        else:
            x = _as_operand(inputs[0])
            if method == "accumulate":
                result = fn(x, 0 if axis is None else axis)
                result = result[0] if isinstance(result, tuple) else result
            elif axis is None:
                result = fn(x)
            else:
                result = fn(x, axis, keepdims)
            return _finish(result, dtype, out)
    else:
        fn = None
    if fn is None:
        _without_grad(f"{name}.{method}" if method != "__call__" else name, inputs, kwargs)
        arrays = _to_arrays(inputs)
        if out is not None:
            kwargs["out"] = _to_arrays(out)
        if dtype is not None:
            kwargs["dtype"] = dtype
        return getattr(ufunc, method)(*arrays, **kwargs)
    return _finish(fn(*args), dtype, out)


def _finish(result, dtype, out):
    if dtype is not None:
        from ._backend import as_dtype
        result = result.to(as_dtype(np.dtype(dtype).name))
    return result if out is None else _write_out(out, result)


# ---- __array_function__ ---------------------------------------------------------------------


def _reduction(name: str, with_keepdim: bool = True):
    def handler(a, axis=None, dtype=None, out=None, keepdims=False, **rest):
        if rest.get("initial") is not None or rest.get("where", True) is not True:
            return NotImplemented
        fn = FUNCTIONS[name]
        a = _as_operand(a)
        if axis is None:
            result = fn(a)
            if keepdims:
                result = result.reshape((1,) * a.dim())
        else:
            result = fn(a, axis, keepdims) if with_keepdim else fn(a, axis)
        return _finish(result, dtype, out)
    return handler


def _spread(name: str):
    def handler(a, axis=None, dtype=None, out=None, ddof=0, keepdims=False, **rest):
        if rest.get("where", True) is not True or rest.get("mean") is not None:
            return NotImplemented
        a = _as_operand(a)
        result = FUNCTIONS[name](a, axis, keepdim=keepdims, correction=ddof)
        return _finish(result, dtype, out)
    return handler


def _arg_reduction(name: str):
    def handler(a, axis=None, out=None, *, keepdims=False):
        result = FUNCTIONS[name](_as_operand(a), axis, keepdims)
        return _finish(result, None, out)
    return handler


def _joined(name: str):
    def handler(arrays, axis=0, out=None, **rest):
        if rest.get("dtype") is not None or axis is None:
            return NotImplemented
        return _finish(FUNCTIONS[name]([as_tensor(a) for a in arrays], axis), None, out)
    return handler


def _transpose(a, axes=None):
    a = _as_operand(a)
    return a.permute(*(axes if axes is not None else range(a.dim() - 1, -1, -1)))


def _clip(a, a_min=None, a_max=None, out=None, **rest):
    a_min = rest.pop("min", a_min)
    a_max = rest.pop("max", a_max)
    return _finish(FUNCTIONS["clamp"](_as_operand(a), a_min, a_max), None, out)


def _sort(a, axis=-1, kind=None, order=None, **rest):
    a = _as_operand(a)
    if axis is None:
        a, axis = a.reshape(-1), 0
    return FUNCTIONS["sort"](a, axis, stable=kind == "stable")[0]


def _argsort(a, axis=-1, kind=None, order=None, **rest):
    a = _as_operand(a)
    if axis is None:
        a, axis = a.reshape(-1), 0
    return FUNCTIONS["argsort"](a, axis, stable=kind == "stable")


def _reshape(a, *args, **kwargs):
    shape = kwargs.pop("shape", kwargs.pop("newshape", args[0] if args else None))
    if kwargs.pop("order", "C") != "C":
        return NotImplemented
    return _as_operand(a).reshape(shape)


def _squeeze(a, axis=None):
    a = _as_operand(a)
    return a.squeeze() if axis is None else a.squeeze(axis)


def _where(condition, *xy):
    if not xy:
        return NotImplemented
    return FUNCTIONS["where"](*(as_tensor(v) if isinstance(v, np.ndarray) else v
                                for v in (condition, *xy)))


def _dot(a, b, out=None):
    a, b = _as_operand(a), _as_operand(b)
    if not isinstance(a, Tensor) or not isinstance(b, Tensor) or a.dim() == 0 or b.dim() == 0:
        return _finish(FUNCTIONS["mul"](a, b), None, out)
    if a.dim() <= 2 and b.dim() <= 2:
        return _finish(FUNCTIONS["matmul"](a, b), None, out)
    return NotImplemented


def _einsum(subscripts, *operands, out=None, **rest):
    if rest.get("dtype") is not None or not isinstance(subscripts, str):
        return NotImplemented
    return _finish(FUNCTIONS["einsum"](subscripts, *(as_tensor(o) for o in operands)), None, out)


def _tensordot(a, b, axes=2):
    return FUNCTIONS["tensordot"](as_tensor(a), as_tensor(b), axes)


def _linalg(name: str):
    def handler(*args, **kwargs):
        return getattr(_la, name)(*(_as_operand(a) for a in args), **kwargs)
    return handler


def _norm(x, ord=None, axis=None, keepdims=False):
    return _la.norm(_as_operand(x), ord, axis, keepdims)


_FUNCTIONS = {
    np.sum: _reduction("sum"), np.mean: _reduction("mean"), np.prod: _reduction("prod"),
    np.max: _reduction("amax"), np.min: _reduction("amin"), np.amax: _reduction("amax"),
    np.amin: _reduction("amin"), np.all: _reduction("all"), np.any: _reduction("any"),
    np.std: _spread("std"), np.var: _spread("var"),
    np.argmax: _arg_reduction("argmax"), np.argmin: _arg_reduction("argmin"),
    np.concatenate: _joined("cat"), np.stack: _joined("stack"),
    np.transpose: _transpose, np.reshape: _reshape, np.squeeze: _squeeze,
    np.expand_dims: lambda a, axis: _as_operand(a).unsqueeze(axis),
    np.swapaxes: lambda a, axis1, axis2: _as_operand(a).transpose(axis1, axis2),
    np.moveaxis: lambda a, source, destination: FUNCTIONS["movedim"](
        _as_operand(a), source, destination),
    np.clip: _clip, np.where: _where, np.sort: _sort, np.argsort: _argsort,
    np.dot: _dot, np.einsum: _einsum, np.tensordot: _tensordot,
    np.outer: lambda a, b, out=None: _finish(
        FUNCTIONS["outer"](as_tensor(a).reshape(-1), as_tensor(b).reshape(-1)), None, out),
    np.trace: lambda a, offset=0, axis1=0, axis2=1, dtype=None, out=None: _finish(
        FUNCTIONS["diagonal"](_as_operand(a), offset, axis1, axis2).sum(-1), dtype, out),
    np.diagonal: lambda a, offset=0, axis1=0, axis2=1: FUNCTIONS["diagonal"](
        _as_operand(a), offset, axis1, axis2),
    np.cumsum: lambda a, axis=None, dtype=None, out=None: _finish(
        FUNCTIONS["cumsum"](*((_as_operand(a).reshape(-1), 0) if axis is None
                              else (_as_operand(a), axis))), dtype, out),
    np.cumprod: lambda a, axis=None, dtype=None, out=None: _finish(
        FUNCTIONS["cumprod"](*((_as_operand(a).reshape(-1), 0) if axis is None
                               else (_as_operand(a), axis))), dtype, out),
    np.flip: lambda m, axis=None: _as_operand(m).flip(
        tuple(range(m.ndim)) if axis is None else axis),
    np.roll: lambda a, shift, axis=None: FUNCTIONS["roll"](_as_operand(a), shift, axis),
    np.tile: lambda A, reps: FUNCTIONS["tile"](_as_operand(A), reps),
    np.broadcast_to: lambda array, shape, subok=False: FUNCTIONS["broadcast_to"](
        _as_operand(array), shape),
    np.ravel: lambda a, order="C": _as_operand(a).reshape(-1),
    np.tril: lambda m, k=0: FUNCTIONS["tril"](_as_operand(m), k),
    np.triu: lambda m, k=0: FUNCTIONS["triu"](_as_operand(m), k),
    np.kron: lambda a, b: FUNCTIONS["kron"](as_tensor(a), as_tensor(b)),
    np.round: lambda a, decimals=0, out=None: _finish(
        FUNCTIONS["round"](_as_operand(a), decimals=decimals), None, out),
    np.copy: lambda a, order="K", subok=False: _as_operand(a).clone(),
    np.linalg.norm: _norm, np.linalg.inv: _linalg("inv"), np.linalg.det: _linalg("det"),
    np.linalg.solve: _linalg("solve"), np.linalg.slogdet: _linalg("slogdet"),
    np.linalg.cholesky: _linalg("cholesky"), np.linalg.eigh: _linalg("eigh"),
    np.linalg.qr: _linalg("qr"), np.linalg.pinv: _linalg("pinv"),
    np.linalg.matrix_power: _linalg("matrix_power"),
}


def array_function(self, func, types, args, kwargs):
    """``np.<function>(tensor, ...)``: chainrule's op where there is one, else NumPy's result."""
    handler = _FUNCTIONS.get(func)
    if handler is not None:
        result = handler(*args, **kwargs)
        if result is not NotImplemented:
            return result
    _without_grad(func.__name__ + "()", args, kwargs)
    _graph_break(f"np.{func.__name__} on a tensor's values")
    return func._implementation(*_to_arrays(args), **_to_arrays(kwargs))


# ---- DLPack -----------------------------------------------------------------------------------


def dlpack(self, *, stream=None, max_version=None, dl_device=None, copy=None):
    """The tensor as a DLPack capsule, sharing memory (``Tensor.__dlpack__``)."""
    if self.requires_grad:
        raise BufferError("Can't export tensors that require gradient, use tensor.detach()")
    _graph_break("a tensor exported through DLPack")
    kwargs = {} if max_version is None else {"max_version": max_version}
    if copy is not None:
        kwargs["copy"] = copy
    if dl_device is not None:
        kwargs["dl_device"] = dl_device
    return self._data.__dlpack__(stream=stream, **kwargs)


def dlpack_device(self) -> tuple:
    """(device type, device id) as DLPack sees it: the CPU."""
    return self._data.__dlpack_device__()


def from_dlpack(ext_tensor) -> Tensor:
    """A tensor sharing memory with an object exporting DLPack (NumPy, PyTorch, JAX, ...)."""
    if isinstance(ext_tensor, Tensor):
        return ext_tensor
    if type(ext_tensor).__name__ == "PyCapsule":
        raise TypeError("from_dlpack() takes an object with __dlpack__, not a bare capsule "
                        "(NumPy cannot import legacy capsules); pass the tensor itself")
    return from_numpy(np.from_dlpack(ext_tensor))


def to_dlpack(tensor: Tensor):
    """A DLPack capsule of ``tensor`` (``torch.utils.dlpack.to_dlpack``; no requires-grad check)."""
    return tensor._data.__dlpack__()


Tensor.__array_ufunc__ = array_ufunc
Tensor.__array_function__ = array_function
Tensor.__dlpack__ = dlpack
Tensor.__dlpack_device__ = dlpack_device
