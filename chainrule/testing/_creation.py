"""torch.testing.make_tensor: random tensors for tests."""

from __future__ import annotations

import collections.abc
import math
import warnings

from .._backend import bool_ as _bool
from .._backend import dtype as _dtype
from .._backend import float32 as _float32
from .._backend import int64 as _int64
from .._creation import empty, randint
from .._dtypes import finfo, iinfo
from ..ops.complex import view_as_real
from ..tensor import Tensor

__all__ = ["make_tensor"]


def _kind(dtype: _dtype) -> str:
    if dtype == _bool:
        return "bool"
    if dtype.is_complex:
        return "complex"
    if dtype.is_floating_point:
        return "float8" if dtype.itemsize == 1 else "float"
    if str(dtype).startswith(("torch.int", "torch.uint")):
        return "int"
    raise TypeError(f"The requested dtype '{dtype}' is not supported by "
                    "torch.testing.make_tensor(). To request support, file an issue at: "
                    "https://github.com/pytorch/pytorch/issues")


def _bounds(dtype: _dtype, kind: str, low, high) -> tuple:
    """``low`` and ``high`` filled in with the dtype's defaults, checked and clamped to what the
    dtype holds (integer bounds rounded up: randint's high is exclusive)."""
    if kind == "bool":
        lowest, highest, low_default, high_default = 0, 2, 0, 2
    elif kind == "int":
        info = iinfo(dtype)
        # randint works in int64, so int64's maximum itself cannot be drawn
        lowest, highest = info.min, info.max + (dtype != _int64)
        low_default, high_default = -9, 10
    else:
        info = finfo(dtype)
        lowest, highest, low_default, high_default = info.min, info.max, -9, 9
    low = low_default if low is None else low
    high = high_default if high is None else high
    if any(isinstance(v, float) and math.isnan(v) for v in (low, high)):
        raise ValueError(f"`low` and `high` cannot be NaN, but got {low=} and {high=}")
    if low == high and kind in ("float", "complex"):
        warnings.warn("Passing `low==high` to `torch.testing.make_tensor` for floating or "
                      "complex types is deprecated since 2.1 and will be removed in 2.3. "
                      "Use `torch.full(...)` instead.", FutureWarning, stacklevel=3)
    elif low >= high:
        raise ValueError(f"`low` must be less than `high`, but got {low} >= {high}")
    elif high < lowest or low >= highest:
        raise ValueError(f"The value interval specified by `low` and `high` is [{low}, {high}), "
                         f"but {dtype} only supports [{lowest}, {highest})")
    low, high = min(max(low, lowest), highest), min(max(high, lowest), highest)
    if kind in ("bool", "int"):
        return math.ceil(low), math.ceil(high)
    return low, high


def _uniform_(t: Tensor, low: float, high: float) -> Tensor:
    # a range wider than the dtype's maximum is drawn at half scale, then doubled
    if high - low >= finfo(t.dtype).max:
        return t.uniform_(low / 2, high / 2).mul_(2)
    return t.uniform_(low, high)


def make_tensor(*shape, dtype: _dtype, device, low: float | None = None,
                high: float | None = None, requires_grad: bool = False,
                noncontiguous: bool = False, exclude_zero: bool = False,
                memory_format=None) -> Tensor:
    """Creates a tensor with the given shape, device and dtype, filled with values drawn
    uniformly from ``[low, high)``."""
    if len(shape) == 1 and isinstance(shape[0], collections.abc.Sequence):
        shape = shape[0]
    shape = tuple(shape)
    if noncontiguous and memory_format is not None:
        raise ValueError("The parameters `noncontiguous` and `memory_format` are mutually "
                         f"exclusive, but got {noncontiguous=} and {memory_format=}")
    kind = _kind(dtype)
    if requires_grad and kind in ("bool", "int"):
        raise ValueError("`requires_grad=True` is not supported for boolean and integral dtypes, "
                         f"but got {dtype=}")
    noncontiguous = noncontiguous and math.prod(shape) > 1
    if noncontiguous:  # twice as wide, so the strided view sees distinct values
        shape = (*shape[:-1], 2 * shape[-1])
    low, high = _bounds(dtype, kind, low, high)
    if kind in ("bool", "int"):
        result = randint(low, high, shape, device=device, dtype=dtype)
    elif kind == "float8":
        result = _uniform_(empty(shape, device=device, dtype=_float32), low, high).to(dtype)
    else:
        result = empty(shape, device=device, dtype=dtype)
        _uniform_(view_as_real(result) if kind == "complex" else result, low, high)
    if noncontiguous:
        result = result[..., 1::2]  # the offset of 1 also catches offset handling
    elif memory_format is not None:
        result = result.clone(memory_format=memory_format)
    if exclude_zero:
        result[result == 0] = 1 if kind in ("bool", "int") else finfo(dtype).tiny
    if kind in ("float", "complex"):
        result.requires_grad = requires_grad
    return result
