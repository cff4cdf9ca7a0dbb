"""torch's remaining factories: asarray, logspace, range, scalar_tensor, frombuffer,
empty_strided, empty_permuted, tril_indices, triu_indices, vander, fill, broadcast_shapes."""

from __future__ import annotations

import builtins
import math
import warnings

from . import linalg
from ._backend import as_dtype, xp
from ._creation import _check_device, _dtype, _finish, _options, _seen, full, tensor
from ._dispatch import apply
from ._dtypes import SCALAR_NAMES
from ._validation import dtype_argument
from .tensor import Size, Tensor

__all__ = ["asarray", "logspace", "range", "scalar_tensor", "frombuffer", "empty_strided",
           "empty_permuted", "tril_indices", "triu_indices", "vander", "fill", "broadcast_shapes"]


def asarray(obj, *, dtype=None, device=None, copy: bool | None = None,
            requires_grad: bool = False) -> Tensor:
    """obj as a tensor, sharing memory with a tensor or NumPy array unless a copy is asked for
    or the dtype differs."""
    _check_device(device)
    if dtype is not None:
        dtype_argument("asarray", dtype)
    if isinstance(obj, Tensor):
        result = obj if dtype is None or as_dtype(dtype) == obj.dtype else obj.to(dtype)
        if result is not obj and copy is False:
            raise ValueError(f"can't alias tensor with dtype '{_type_name(obj.dtype)}' into dtype "
                             f"'{_type_name(as_dtype(dtype))}'.")
        result = result.clone() if copy and result is obj else result
    elif isinstance(obj, xp.ndarray):
        array = obj if dtype is None else obj.astype(as_dtype(dtype).np, copy=bool(copy))
        result = Tensor._wrap(array.copy() if copy and array is obj else array, None, 0)
    else:
        result = tensor(obj, dtype=dtype)
    if requires_grad:
        result.requires_grad_(True)
    return result


def _type_name(dt) -> str:
    """PyTorch's scalar type name (Float, Long, ...) of a dtype."""
    return SCALAR_NAMES[dt.name]


def _describe_logspace(start, end, steps, base=10.0, *, out=None, **options):
    args = (start, end, steps) if base == 10.0 else (start, end, steps, float(base))
    if out is not None:
        return "logspace", "out", args, {"out": out}
    return "logspace", "default", args, _options(**options)


def _describe_scalar_tensor(s, **options):
    return "scalar_tensor", "default", (s,), _options(**options)


@_seen(_describe_logspace)
def logspace(start, end, steps: int, base: float = 10.0, *, out=None, dtype=None, layout=None,
             device=None, requires_grad: bool = False) -> Tensor:
    """steps values from base**start to base**end, evenly spaced on a log scale."""
    _check_device(device)
    if steps < 0:
        raise RuntimeError("number of steps must be non-negative")
    dt = _dtype("logspace", dtype)
    values = xp.power(float(base), xp.linspace(float(start), float(end), steps))
    result = _finish(values.astype(dt), requires_grad)
    if out is not None:
        out.resize_(result.shape).copy_(result)
        return out
    return result


def range(start=0, end=None, step=1, *, out=None, dtype=None, layout=None,  # noqa: A001
          device=None, requires_grad: bool = False) -> Tensor:
    """Values from start to end inclusive in steps (deprecated in PyTorch: use arange)."""
    warnings.warn("torch.range is deprecated and will be removed in a future release because its "
                  "behavior is inconsistent with Python's range builtin. Instead, use "
                  "torch.arange, which produces values in [start, end).", UserWarning,
                  stacklevel=2)
    _check_device(device)
    if end is None:
        raise TypeError('range() missing 1 required positional arguments: "end"')
    start, end, step = (v.item() if isinstance(v, Tensor) else v for v in (start, end, step))
    if step == 0:
        raise RuntimeError("step must be nonzero")
    if (step > 0 and end < start) or (step < 0 and end > start):
        raise RuntimeError("upper bound and lower bound inconsistent with step sign")
    n = math.floor((end - start) / step) + 1
    dt = _dtype("range", dtype)
    result = _finish((start + xp.arange(n, dtype=xp.float64) * step).astype(dt), requires_grad)
    if out is not None:
        out.resize_(result.shape).copy_(result)
        return out
    return result


@_seen(_describe_scalar_tensor)
def scalar_tensor(s, *, dtype=None, layout=None, device=None, pin_memory: bool = False,
                  requires_grad: bool = False) -> Tensor:
    """A zero-dim tensor holding the number s (the default dtype unless dtype is given)."""
    _check_device(device)
    if isinstance(s, Tensor):
        s = s.item()
    if not isinstance(s, (bool, int, float, complex, xp.number, xp.bool_)):
        raise TypeError(f"scalar_tensor(): argument 's' (position 1) must be Number, not "
                        f"{type(s).__name__}")
    dt = _dtype("scalar_tensor", dtype)
    if isinstance(s, complex) and dt.kind != "c":
        raise RuntimeError(f"value cannot be converted to type {_c_name(dt)} without overflow")
    return _finish(xp.asarray(s, dtype=dt), requires_grad)


def _c_name(dt) -> str:
    return {"float32": "float", "float64": "double", "float16": "c10::Half"}.get(dt.name, dt.name)


def frombuffer(buffer, *, dtype, count: int = -1, offset: int = 0,
               requires_grad: bool = False) -> Tensor:
    """A 1-D tensor sharing memory with an object that exposes the buffer protocol."""
    dtype_argument("frombuffer", dtype)
    dt = as_dtype(dtype).np
    length = memoryview(buffer).nbytes
    if length <= 0 and count == -1:
        raise ValueError(f"both buffer length ({length}) and count ({count}) must not be 0")
    if offset < 0 or offset >= length:
        raise ValueError(f"offset ({offset} bytes) must be non-negative and no greater than "
                         f"buffer length ({length} bytes) minus 1")
    if count == -1 and (length - offset) % dt.itemsize:
        raise ValueError(f"buffer length ({length - offset} bytes) after offset ({offset} bytes) "
                         f"must be a multiple of element size ({dt.itemsize})")
    if count != -1 and count * dt.itemsize > length - offset:
        raise ValueError(f"requested buffer length ({count} * {dt.itemsize} bytes) after offset "
                         f"({offset} bytes) must not be greater than actual buffer length "
                         f"({length} bytes)")
    return _finish(xp.frombuffer(buffer, dtype=dt, count=count, offset=offset), requires_grad)


def _sizes(fn: str, name: str, value, position: int) -> tuple:
    if isinstance(value, Tensor) or not hasattr(value, "__iter__"):
        raise TypeError(f"{fn}(): argument '{name}' (position {position}) must be tuple of ints, "
                        f"not {type(value).__name__}")
    return tuple(int(v) for v in value)


def empty_strided(size, stride, *, dtype=None, layout=None, device=None,
                  requires_grad: bool = False, pin_memory: bool = False) -> Tensor:
    """An uninitialised tensor (zeros here) with the given strides."""
    _check_device(device)
    size = _sizes("empty_strided", "size", size, 1)
    stride = _sizes("empty_strided", "stride", stride, 2)
    if len(size) != len(stride):
        raise RuntimeError(f"dimensionality of sizes ({len(size)}) must match dimensionality of "
                           f"strides ({len(stride)})")
    dt = _dtype("empty_strided", dtype)
    storage = 0 if 0 in size else 1 + sum((n - 1) * s for n, s in zip(size, stride))
    array = xp.lib.stride_tricks.as_strided(xp.zeros(storage, dt), size,
                                            [s * dt.itemsize for s in stride])
    return _finish(array, requires_grad)


def empty_permuted(size, physical_layout, *, dtype=None, layout=None, device=None,
                   requires_grad: bool = False, pin_memory: bool = False) -> Tensor:
    """An uninitialised tensor (zeros here) whose dimensions lie in memory in the order
    physical_layout gives (outermost first)."""
    _check_device(device)
    size = _sizes("empty_permuted", "size", size, 1)
    order = _sizes("empty_permuted", "physical_layout", physical_layout, 2)
    if len(size) != len(order):
        raise RuntimeError("Number of dimensions in size does not match the length of the "
                           f"physical_layout; i.e. len(size) = {len(size)} is not equal to "
                           f"len(physical_layout) = {len(order)}")
    if sorted(order) != list(builtins.range(len(size))):
        raise RuntimeError("Duplicate dim not allowed")
    array = xp.zeros([size[d] for d in order], _dtype("empty_permuted", dtype))
    return _finish(array.transpose(xp.argsort(order)), requires_grad)


def _triangle(fn: str, row: int, col: int, offset: int, dtype, upper: bool) -> Tensor:
    for name, v, pos in (("row", row, 1), ("col", col, 2), ("offset", offset, 3)):
        if not isinstance(v, int) or isinstance(v, bool):
            raise TypeError(f"{fn}(): argument '{name}' (position {pos}) must be int, not "
                            f"{type(v).__name__}")
    for name, v in (("row", row), ("col", col)):
        if v < 0:
            raise RuntimeError(f"{name} must be non-negative, got{v}")
    if dtype is not None:
        dtype_argument(fn, dtype)
    dt = as_dtype("long" if dtype is None else dtype)
    if dt.np not in (xp.int32, xp.int64):
        raise NotImplementedError(f'"{fn}" not implemented for \'{_type_name(dt)}\'')
    rows, cols = (xp.triu_indices if upper else xp.tril_indices)(row, offset, col)
    return _finish(xp.stack([rows, cols]).astype(dt.np).reshape(2, -1), False)


def tril_indices(row: int, col: int, offset: int = 0, *, dtype=None, device=None,
                 layout=None) -> Tensor:
    """The coordinates (2 x N) of the lower triangle of a row x col matrix, row by row."""
    _check_device(device)
    return _triangle("tril_indices", row, col, offset, dtype, False)


def triu_indices(row: int, col: int, offset: int = 0, *, dtype=None, device=None,
                 layout=None) -> Tensor:
    """The coordinates (2 x N) of the upper triangle of a row x col matrix, row by row."""
    _check_device(device)
    return _triangle("triu_indices", row, col, offset, dtype, True)


def vander(x: Tensor, N: int | None = None, increasing: bool = False) -> Tensor:
    """The Vandermonde matrix of a 1-D tensor: columns x**(N-1) ... x**0 (reversed if
    increasing)."""
    if not isinstance(x, Tensor):
        raise TypeError(f"vander(): argument 'x' (position 1) must be Tensor, not "
                        f"{type(x).__name__}")
    if x.dim() != 1:
        raise RuntimeError("x must be a one-dimensional tensor.")
    if N is not None and N < 0:
        raise RuntimeError("N must be non-negative.")
    if not (x.is_floating_point() or x.is_complex()):
        x = x.to(as_dtype("long"))
    N = x.shape[0] if N is None else N
    if N <= 1:
        return full((x.shape[0], N), 1, dtype=x.dtype)
    result = linalg.vander(x, N=N)
    return result if increasing else result.flip(-1)


def fill(input: Tensor, value) -> Tensor:
    """A new tensor shaped and typed like input, every element value."""
    if isinstance(value, Tensor):
        if value.dim() != 0:
            raise RuntimeError("fill_ only supports 0-dimension value tensor but got tensor with "
                               f"{value.dim()} dimensions.")
        from .ops.shape import FILL_TENSOR

        return apply(FILL_TENSOR, input, value.to(input.dtype))
    if not isinstance(input, Tensor) or not isinstance(
            value, (bool, int, float, complex, xp.number, xp.bool_)):
        got = ", ".join(type(v).__name__ for v in (input, value))
        raise TypeError(f"fill() received an invalid combination of arguments - got ({got}), but "
                        "expected one of:\n * (Tensor input, Tensor value)\n"
                        " * (Tensor input, Number value)\n")
    from .ops.shape import FILL

    return apply(FILL, input, value)  # on the graph (a zero gradient), as PyTorch's


def broadcast_shapes(*shapes) -> Size:
    """The shape tensors of the given shapes broadcast to."""
    dims = [(s,) if isinstance(s, int) else tuple(s) for s in shapes]
    ndim = max((len(d) for d in dims), default=0)
    result = [1] * ndim
    for index, shape in enumerate(dims):
        for at in builtins.range(-1, -len(shape) - 1, -1):
            n = shape[at]
            if n < 0:
                raise ValueError("Attempting to broadcast a dimension with negative length!")
            if result[at] == 1:
                result[at] = n
            elif n not in (1, result[at]):
                expected = list(result)
                raise RuntimeError(f"Attempting to broadcast a dimension of length {n} at {at}! "
                                   f"Mismatching argument at index {index} had {shape}; but "
                                   f"expected shape should be broadcastable to {expected}")
    return Size(result)

