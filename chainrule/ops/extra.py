"""The rest of torch's math, statistics, shape and utility functions: compositions of the other
families where the result is the same, and a few records (copysign, gcd, lcm, heaviside,
nextafter, signbit, frexp's exponent) where none fits."""

from __future__ import annotations

import functools
import itertools
import math
import warnings

from .._backend import _category, as_dtype, get_default_dtype, np_finfo, result_type, xp
from .._batching import fallback, physical
from .._dispatch import apply, apply_inplace, bump_version
from .._meta import MetaArray, array_of
from .._shapes import normalize_dim
from ..tensor import Tensor, is_inference_counter
from . import complex as cx
from . import elementwise as ew
from . import fft as fftops
from . import indexing as ix
from . import linalg as la
from . import padding as pad_ops
from . import reduction as red
from . import shape as sh
from ._registry import ZERO, defop, not_implemented
from .elementwise import _KERNEL_NAMES, _NO_DERIVATIVE, _dtype, _require_tensor, _unsupported
from .reduction import _QUANTILE_POSITIONS, result

_DEG = math.pi / 180.0


def _kernel_name(dtype) -> str:
    name = dtype.name if hasattr(dtype, "np") else xp.dtype(dtype).name
    return _KERNEL_NAMES.get(name, name)


def _write_back(name: str, self: Tensor, fn, *args, **kwargs) -> Tensor:
    """``self.name_(...)``: the composite ``fn`` of a copy of self written into self (copy_
    records it; the copy keeps the values fn's derivatives read)."""
    value = fn(self.clone(), *args, **kwargs)
    if _category(value._data.dtype) > _category(self._data.dtype):
        raise RuntimeError(f"result type {_kernel_name(value._data.dtype)} can't be cast to the "
                           f"desired output type {_kernel_name(self._data.dtype)}")
    return self.copy_(value)


def _float_of(*values) -> xp.dtype:
    """The promoted dtype of ``values``, made floating (the default float for integers)."""
    arrays = [v._data for v in values if isinstance(v, Tensor)]
    scalars = [v for v in values if not isinstance(v, Tensor)]
    dtype = xp.dtype(result_type(arrays, scalars))
    return dtype if dtype.kind in "fcV" else get_default_dtype().np


# ---- elementwise math ------------------------------------------------------------------------


def _copysign_grad(g, input, out):
    # d|x|·s/dx = sign(x)·sign(out); 0 at x = 0, as PyTorch's.
    return g * (ew.sign(input) * ew.sign(out))


COPYSIGN = defop("copysign", xp.copysign, ("input", "other"), (_copysign_grad, ZERO),
                 promote=True, float_out=True, jvp="elementwise")


def _integers_only(name: str, ufunc):
    def forward(input, other):
        dtype = _dtype(input, other)
        if dtype.kind not in "iu":
            raise _unsupported(f"{name}_cpu", dtype)
        return ufunc(input, other)

    return defop(name, forward, ("input", "other"), (None, None), promote=True,
                 differentiable=False, batch="elementwise")


GCD = _integers_only("gcd", xp.gcd)
LCM = _integers_only("lcm", xp.lcm)


def _heaviside(input, values):
    if input.dtype != values.dtype:
        raise RuntimeError("heaviside is not yet implemented for tensors with different dtypes.")
    if input.dtype.kind == "c":
        raise RuntimeError("heaviside is not yet implemented for complex tensors.")
    return xp.where(input == 0, values, input > 0).astype(input.dtype)


# heaviside and nextafter have no derivative in PyTorch: backward raises.
HEAVISIDE = defop("heaviside", _heaviside, ("input", "values"),
                  (not_implemented("heaviside"), not_implemented("heaviside")),
                  backward_name=_NO_DERIVATIVE, batch="elementwise")


def _nextafter(input, other):
    if _dtype(input, other).kind != "f":
        raise _unsupported("nextafter_cpu", _dtype(input, other))
    return xp.nextafter(input, other)


NEXTAFTER = defop("nextafter", _nextafter, ("input", "other"),
                  # as PyTorch's: the step is treated as constant, other gets no gradient
                  (lambda g: g, lambda g: g.new_zeros(g.shape)), promote=True,
                  batch="elementwise", jvp="elementwise")


def _signbit(input):
    if input.dtype.kind == "c":
        raise RuntimeError("signbit is not implemented for complex tensors.")
    if input.dtype.kind in "bu":
        return xp.zeros(input.shape, dtype=bool)
    return xp.signbit(input)


SIGNBIT = defop("signbit", _signbit, ("input",), (None,), differentiable=False,
                batch="elementwise")
FREXP_EXPONENT = defop("frexp_exponent", lambda input: xp.frexp(input)[1].astype(xp.int32),
                       ("input",), (None,), differentiable=False, batch="elementwise")


def copysign(input, other) -> Tensor:
    """input's magnitudes with other's signs, elementwise."""
    return apply(COPYSIGN, input, other)


def gcd(input, other) -> Tensor:
    """The greatest common divisor of integers, elementwise."""
    _require_tensor("gcd", "other", 2, other)
    return apply(GCD, input, other)


def lcm(input, other) -> Tensor:
    """The least common multiple of integers, elementwise."""
    _require_tensor("lcm", "other", 2, other)
    return apply(LCM, input, other)


def heaviside(input, values) -> Tensor:
    """The Heaviside step: 0 below zero, 1 above, ``values`` at zero."""
    _require_tensor("heaviside", "values", 2, values)
    return apply(HEAVISIDE, input, values)


def nextafter(input, other) -> Tensor:
    """The next floating point value after input towards other, elementwise."""
    _require_tensor("nextafter", "other", 2, other)
    return apply(NEXTAFTER, input, other)


def signbit(input) -> Tensor:
    """True where the sign bit is set (negative values and -0.0)."""
    return apply(SIGNBIT, input)


def positive(input) -> Tensor:
    """input itself (unary plus)."""
    if input._data.dtype.kind == "b":
        raise RuntimeError("The `+` operator, on a bool tensor is not supported.")
    return input


def deg2rad(input) -> Tensor:
    """Angles in degrees converted to radians."""
    if input._data.dtype.kind == "c":
        raise RuntimeError("deg2rad is not supported for complex tensors.")
    return input * _DEG


def rad2deg(input) -> Tensor:
    """Angles in radians converted to degrees."""
    if input._data.dtype.kind == "c":
        raise RuntimeError("rad2deg is not supported for complex tensors.")
    return input * (1.0 / _DEG)


def ldexp(input, other) -> Tensor:
    """input * 2 ** other."""
    _require_tensor("ldexp", "other", 2, other)
    dtype = as_dtype(_float_of(input, other))
    return input * ew.exp2(other.to(dtype))


def frexp(input) -> tuple:
    """(mantissa, exponent) with input = mantissa * 2 ** exponent and 0.5 <= |mantissa| < 1."""
    if input._data.dtype.kind not in "fV":
        raise RuntimeError("torch.frexp() only supports floating-point dtypes")
    exponent = apply(FREXP_EXPONENT, input)
    mantissa = input * ew.exp2(-exponent.to(input.dtype))
    return result("frexp", "mantissa exponent", (mantissa, exponent))


def float_power(input, exponent) -> Tensor:
    """input ** exponent computed in double precision (complex double for complex operands)."""
    values = (input, exponent)
    if not any(isinstance(v, Tensor) for v in values):
        raise TypeError("float_power(): argument 'input' (position 1) must be Tensor, not "
                        f"{type(input).__name__}")
    complex_ = any((v._data.dtype.kind if isinstance(v, Tensor) else "c" * isinstance(v, complex))
                   == "c" for v in values)
    dtype = as_dtype("complex128" if complex_ else "float64")
    base, power = (v.to(dtype) if isinstance(v, Tensor) else v for v in values)
    return ew.pow(base, power)


def _float_power_(self, exponent) -> Tensor:
    out = float_power(self.clone(), exponent)
    if out.dtype != self.dtype:
        raise RuntimeError(f"the base given to float_power_ has dtype {_kernel_name(self.dtype)} "
                           "but the operation's result requires dtype "
                           f"{_kernel_name(out.dtype)}")
    return self.copy_(out)


def _composite_inplace(fn):
    def method(self, other):
        return _write_back(fn.__name__ + "_", self, fn, other)

    method.__name__ = fn.__name__ + "_"
    return method


def _record_inplace(op, check=None):
    def method(self, other):
        if check is not None:
            check(op.name, "other", 2, other)
        return apply_inplace(op, self, other)

    method.__name__ = op.name + "_"
    return method


def _deg2rad_(self) -> Tensor:
    return _write_back("deg2rad_", self, deg2rad)


def _rad2deg_(self) -> Tensor:
    return _write_back("rad2deg_", self, rad2deg)


def _heaviside_(self, values) -> Tensor:
    _require_tensor("heaviside_", "values", 2, values)
    return apply_inplace(HEAVISIDE, self, values)


ELEMENTWISE = (copysign, gcd, lcm, heaviside, nextafter, signbit, positive, deg2rad, rad2deg,
               ldexp, frexp, float_power)
ELEMENTWISE_INPLACE = {
    "copysign_": _record_inplace(COPYSIGN), "gcd_": _record_inplace(GCD, _require_tensor),
    "lcm_": _record_inplace(LCM, _require_tensor), "heaviside_": _heaviside_,
    "nextafter_": _record_inplace(NEXTAFTER, _require_tensor), "deg2rad_": _deg2rad_,
    "rad2deg_": _rad2deg_, "ldexp_": _composite_inplace(ldexp), "float_power_": _float_power_,
}


# ---- reductions and statistics ----------------------------------------------------------------


def _const(array) -> Tensor:
    return Tensor._wrap(array_of(array), None, 0)


def _dims(input: Tensor, dim) -> tuple[int, ...]:
    """``dim`` (None: all dims) as a tuple of non-negative dims of input."""
    n = input.dim()
    if dim is None:
        return tuple(range(n))
    dims = (dim,) if isinstance(dim, int) else tuple(dim)
    return tuple(normalize_dim(d, n) for d in dims)


def count_nonzero(input, dim=None) -> Tensor:
    """The number of non-zero elements (along ``dim``)."""
    nonzero = input != 0
    return nonzero.sum() if dim is None else nonzero.sum(dim)


def nansum(input, dim=None, keepdim: bool = False, *, dtype=None) -> Tensor:
    """The sum treating NaN as zero."""
    if input._data.dtype.kind == "c":
        raise RuntimeError("nansum on CPU does not support complex inputs")
    if dtype is not None and as_dtype(dtype).np.kind == "c" and input._data.dtype.kind in "fV":
        raise _unsupported("nansum_cpu", as_dtype(dtype))  # PyTorch's kernel
    clean = ew.where(ew.isnan(input), 0, input) if input._data.dtype.kind in "fV" else input
    if dim is None and not keepdim:
        return red.sum(clean, dtype=dtype)
    return red.sum(clean, () if dim is None else dim, keepdim, dtype=dtype)


def nanmean(input, dim=None, keepdim: bool = False, *, dtype=None) -> Tensor:
    """The mean of the elements that are not NaN."""
    if input._data.dtype.kind not in "fcV":
        raise RuntimeError("nanmean(): expected input to have floating point or complex dtype "
                           f"but got {_kernel_name(input._data.dtype)}")
    if dtype is not None and as_dtype(dtype).np.kind not in "fcV":
        raise RuntimeError("nanmean(): could not infer output dtype. Optional dtype must be "
                           f"either a floating point or complex dtype. Got: "
                           f"{_kernel_name(as_dtype(dtype).np)}")
    count = nansum(~ew.isnan(input), dim, keepdim)
    return nansum(input, dim, keepdim, dtype=dtype) / count


def _ordered(input: Tensor, dim):
    """input sorted along ``dim`` (all elements flattened when None) with NaN last, moved to the
    last dim: (values, indices, the number of non-NaN elements per slice, keepdim)."""
    x = input.reshape(-1) if dim is None or input.dim() == 0 else input.movedim(dim, -1)
    ordered = red.sort(x, -1)
    count = (~ew.isnan(x)).sum(-1, keepdim=True)
    return ordered.values, ordered.indices, count


def nanmedian(input, dim=None, keepdim: bool = False):
    """The lower median ignoring NaN; with ``dim``, (values, indices) along it."""
    if dim is None:
        if input._data.size == 0:
            return input.new_full((), float("nan"))
        values, _, count = _ordered(input, None)
        k = ew.clamp(ew.floor_divide(count - 1, 2), min=0)
        return values.gather(-1, k).reshape(())
    d = _dims(input, dim)[0]
    if input.dim() and input.shape[d] == 0:
        raise IndexError(f"median(): Expected reduction dim {d} to have non-zero size.")
    values, indices, count = _ordered(input, d)
    k = ew.clamp(ew.floor_divide(count - 1, 2), min=0)
    values, indices = values.gather(-1, k), indices.gather(-1, k)
    if input.dim():
        values, indices = values.movedim(-1, d), indices.movedim(-1, d)
        if not keepdim:
            values, indices = values.squeeze(d), indices.squeeze(d)
    else:
        values, indices = values.reshape(()), indices.reshape(())
    return result("nanmedian", "values indices", (values, indices))


def nanquantile(input, q, dim: int | None = None, keepdim: bool = False, *,
                interpolation: str = "linear") -> Tensor:
    """The ``q``-quantiles ignoring NaN along ``dim`` (of all elements when None)."""
    if input._data.dtype.kind != "f":
        raise RuntimeError("quantile() input tensor must be either float or double dtype")
    if interpolation not in _QUANTILE_POSITIONS:
        raise RuntimeError("quantile() interpolation must be one of linear, lower, higher, "
                           f"midpoint or nearest. Got {interpolation}")
    qs = xp.asarray(q._data if isinstance(q, Tensor) else q, dtype=xp.float64)
    if qs.ndim > 1:
        raise RuntimeError("quantile() q must be a scalar or 1D tensor")
    if qs.size and (qs.min() < 0 or qs.max() > 1):
        raise RuntimeError("quantile() q values must be in the range [0, 1]")
    if input._data.size == 0:
        raise RuntimeError("quantile() input tensor must be non-empty")
    d = None if dim is None else _dims(input, dim)[0]
    values, _, count = _ordered(input, d)
    pos = _const(qs.reshape((-1,) + (1,) * values.dim()).astype(input._data.dtype)) * (
        count - 1).to(input.dtype)  # (q, ..., 1)
    if interpolation == "lower":
        pos = ew.floor(pos)
    elif interpolation == "higher":
        pos = ew.ceil(pos)
    elif interpolation == "nearest":
        pos = ew.round(pos)
    elif interpolation == "midpoint":
        pos = (ew.floor(pos) + ew.ceil(pos)) / 2
    pos = ew.clamp(pos, min=0)  # an all-NaN slice takes its first (NaN) element
    low, high = ew.floor(pos), ew.ceil(pos)
    values = values.expand((qs.size,) + tuple(values.shape))
    below = values.gather(-1, low.long())
    above = values.gather(-1, high.long())
    out = below + (pos - low) * (above - below)  # (q, ..., 1)
    if d is None:
        out = out.reshape((qs.size,) + ((1,) * input.dim() if keepdim else ()))
    elif input.dim():
        out = out.movedim(-1, d + 1)
        if not keepdim:
            out = out.squeeze(d + 1)
    else:
        out = out.reshape((qs.size,))
    return out[0] if qs.ndim == 0 else out


def _log_add_exp_complex(x, y):
    """log(exp(x) + exp(y)) for complex arrays, x the new element and y the running value: the
    smaller real part shifted by the larger one, NaN and infinities as PyTorch's scan."""
    nan = xp.isnan(x) | xp.isnan(y)  # either part
    x_first = x.real < y.real
    low, high = xp.where(x_first, x, y), xp.where(x_first, y, x)
    with xp.errstate(all="ignore"):
        out = xp.log1p(xp.exp(low - high)) + high
        both_inf = ~xp.isfinite(low.real) & (low.real == high.real)
        out = xp.where(both_inf, xp.where(low.real < 0, low, xp.log(xp.exp(low) + xp.exp(high))),
                       out)
    return xp.where(nan, xp.asarray(complex(xp.nan, xp.nan), out.dtype), out)


def _logcumsumexp(input, dim):
    if input.ndim == 0:
        return input.copy()
    kind = input.dtype.kind
    # PyTorch's scan accumulates in double (float and half: in float), rounding once at the end
    wide = xp.complex128 if kind == "c" else xp.float64 if input.dtype.itemsize >= 4 \
        else xp.float32
    x = input.astype(wide)
    if kind != "c":
        with xp.errstate(invalid="ignore"):
            return xp.logaddexp.accumulate(x, axis=dim).astype(input.dtype)
    x = xp.moveaxis(x, dim, 0)
    out = xp.empty_like(x)
    running = xp.full(x.shape[1:], complex(-xp.inf, 0.0), wide)
    for i in range(x.shape[0]):
        running = out[i] = _log_add_exp_complex(x[i], running)
    return xp.moveaxis(out, 0, dim).astype(input.dtype)


def _reverse_logcumsumexp(x, dim):
    return sh.flip(apply(LOGCUMSUMEXP, sh.flip(x, (dim,)), dim=dim), (dim,))


def _logcumsumexp_vjp(g, input, out, dim):
    # PyTorch's rule: the positive and negative parts of the gradient each as a reversed
    # logcumsumexp of log|g| - out, brought back with exp (complex: one part, of log(g), g being
    # conj of the gradient here, see design.md's Complex numbers)
    if g.dim() == 0 or g.numel() == 0:
        return g
    if g.dtype.is_complex:
        return ew.exp(_reverse_logcumsumexp(ew.log(g) - out, dim) + input)
    lowest = float(np_finfo(g._data.dtype).min)
    log_abs = ew.log(ew.abs(g))
    parts = [ew.exp(_reverse_logcumsumexp(ew.where(side, log_abs, lowest) - out, dim) + input)
             for side in (g > 0, g < 0)]
    return parts[0] - parts[1]


def _logcumsumexp_jvp(t_input, input, dim):
    # PyTorch's rule, with its 1e-13 added to the denominator
    weight = ew.exp(input if input.dtype.is_complex
                    else input - red.amax(input, dim, keepdim=True))
    return red.cumsum(weight * t_input, dim) / (red.cumsum(weight, dim) + 1e-13)


LOGCUMSUMEXP = defop("logcumsumexp", _logcumsumexp, ("input",), (_logcumsumexp_vjp,),
                     jvp=_logcumsumexp_jvp, batch=red._along_dim)


def logcumsumexp(input, dim: int) -> Tensor:
    """log(cumsum(exp(input))) along ``dim``, computed stably."""
    if input._data.dtype.kind not in "fcV":
        raise _unsupported("logcumsumexp_out_cpu", input._data.dtype)
    return apply(LOGCUMSUMEXP, input, dim=_dims(input, dim)[0] if input.dim() else 0)


def aminmax(input, *, dim: int | None = None, keepdim: bool = False) -> tuple:
    """(min, max) of input (along ``dim``)."""
    dims = () if dim is None else dim
    return result("aminmax", "min max", (red.amin(input, dims, keepdim),
                                         red.amax(input, dims, keepdim)))


def msort(input) -> Tensor:
    """input sorted along its first dim."""
    return red.sort(input, 0).values


def cov(input, *, correction: int = 1, fweights=None, aweights=None) -> Tensor:
    """The covariance matrix of the variables in input's rows (observations in its columns)."""
    if input.dim() > 2:
        raise RuntimeError(
            "cov(): expected input to have two or fewer dimensions but got an input with "
            f"{input.dim()} dimensions")
    x = input if input.dim() == 2 else input.reshape(1, -1)
    if x._data.dtype.kind not in "fcV":
        x = x.to(get_default_dtype())
    n = x.shape[1]
    w = None
    if fweights is not None:
        if fweights._data.dtype.kind not in "iu":
            raise RuntimeError("cov(): expected fweights to have integral dtype but got fweights "
                               f"with {_kernel_name(fweights._data.dtype)} dtype")
        w = fweights
    if aweights is not None:
        if aweights._data.dtype.kind != "f":
            raise RuntimeError("cov(): expected aweights to have floating point dtype but got "
                               f"aweights with {_kernel_name(aweights._data.dtype)} dtype")
        w = aweights if w is None else w * aweights
    if w is None:
        mean = x.mean(1, keepdim=True)
        norm = n - correction
    else:
        w = w.to(x.dtype)
        w_sum = w.sum()
        mean = (x * w).sum(1, keepdim=True) / w_sum
        if aweights is None or correction == 0:
            norm = w_sum - correction
        else:
            norm = w_sum - correction * (w * aweights).sum() / w_sum
    norm = ew.clamp(norm if isinstance(norm, Tensor) else x.new_full((), float(norm)), min=0)
    centered = x - mean
    weighted = centered if w is None else centered * w
    c = weighted.matmul(centered.mT.conj()) / norm
    return c.squeeze()


def corrcoef(input) -> Tensor:
    """The Pearson correlation coefficients of the variables in input's rows."""
    c = cov(input)
    if c.dim() == 0:
        return c / c
    d = c.diagonal()
    std = ew.sqrt(d.real if d._data.dtype.kind == "c" else d)
    c = c / std.unsqueeze(1) / std.unsqueeze(0)
    return ew.clamp(c, -1, 1) if c._data.dtype.kind != "c" else c


def _range(data, range_, name: str, widen: float = 1.0) -> tuple[float, float]:
    if range_ is None:
        low, high = (float(data.min()), float(data.max())) if data.size else (0.0, 0.0)
    else:
        low, high = float(range_[0]), float(range_[1])
    if low > high:
        raise RuntimeError(f"torch.{name}(): min should not exceed max, but got min {low} max "
                           f"{high}")
    if low == high:  # as PyTorch: a degenerate range widens (histc by 1, histogram by 0.5)
        low, high = low - widen, high + widen
    return low, high


def _histc(input, bins, min, max):
    low, high = _range(input, None if min == max else (min, max), "histc")
    data = input.reshape(-1)
    counts, _ = xp.histogram(data[(data >= low) & (data <= high)], bins, (low, high))
    return counts.astype(input.dtype)


def _histogram(input, weight=None, *, bins, range, density):
    if type(bins) is int:
        low, high = _range(input, range, "histogram", 0.5)
        edges = xp.linspace(low, high, bins + 1).astype(input.dtype)
    else:
        edges = xp.asarray(bins, dtype=input.dtype)
    edges = xp.asarray(edges, like=input)  # on the input's device
    hist, _ = xp.histogram(input.reshape(-1), edges, density=density,
                           weights=None if weight is None else weight.reshape(-1))
    return hist.astype(input.dtype), edges


def _bincount(input, weights=None, *, minlength):
    if input.size and input.min() < 0:
        raise RuntimeError("bincount only supports 1-d non-negative integral inputs.")
    if weights is None:
        return xp.bincount(input, minlength=minlength).astype(xp.int64)
    if weights.shape != input.shape:
        raise RuntimeError("weights should be 1-d and have the same length as input")
    dtype = weights.dtype if weights.dtype.kind == "f" else xp.float64
    return xp.bincount(input, weights.astype(xp.float64), minlength=minlength).astype(dtype)


# Counting reads values: under vmap each example runs on its own (as PyTorch's fallback).
HISTC = defop("histc", _histc, ("input",), (None,), differentiable=False, batch=fallback)
HISTOGRAM = defop("histogram", _histogram, ("input",), (None,), differentiable=False,
                  n_outputs=2, batch=fallback)
HISTOGRAM_WEIGHTED = defop("histogram_weighted", _histogram, ("input", "weight"), (None, None),
                           differentiable=False, n_outputs=2, batch=fallback)
BINCOUNT = defop("bincount", _bincount, ("input",), (None,), differentiable=False,
                 batch=fallback, sized_by_values=True)
BINCOUNT_WEIGHTED = defop("bincount_weighted", _bincount, ("input", "weights"), (None, None),
                          differentiable=False, batch=fallback, sized_by_values=True)
ISIN = defop("isin", lambda elements, test_elements, invert: xp.isin(elements, test_elements,
                                                                      invert=invert),
             ("elements", "test_elements"), (None, None), differentiable=False, batch=fallback)


def _require_float_kernel(input, kernel: str) -> None:
    if input._data.dtype.kind != "f":
        raise _unsupported(kernel, input._data.dtype)


def histc(input, bins: int = 100, min: float = 0, max: float = 0) -> Tensor:
    """Counts of input's elements in ``bins`` equal bins over [min, max] (the data's range
    when both are 0)."""
    _require_float_kernel(input, "histogram_cpu")
    if bins <= 0:
        raise RuntimeError(f"torch.histc(): bins must be > 0, but got {bins} for dimension 0")
    return apply(HISTC, input, bins=int(bins), min=float(min), max=float(max))


def histogram(input, bins, *, range=None, weight=None, density: bool = False) -> tuple:
    """(hist, bin_edges): input's histogram over ``bins`` (a count or the edges)."""
    _require_float_kernel(input, "histogram_cpu")
    edges = tuple(bins._data.tolist()) if isinstance(bins, Tensor) else int(bins)
    params = dict(bins=edges, range=None if range is None else tuple(range), density=density)
    if weight is None:
        hist, bin_edges = apply(HISTOGRAM, input, **params)
    else:
        hist, bin_edges = apply(HISTOGRAM_WEIGHTED, input, weight, **params)
    return result("histogram", "hist bin_edges", (hist, bin_edges))


def histogramdd(input, bins, *, range=None, weight=None, density: bool = False) -> tuple:
    """(hist, bin_edges): the histogram of the points in input's rows (last dim: coordinates)."""
    input._needs_values(RuntimeError, "Batching rule not implemented for aten::histogramdd. "
                        "We could not generate a fallback.")
    _require_float_kernel(input, "histogramdd_cpu")
    points = physical(input).reshape(-1, input.shape[-1])  # (meta: a stand-in)
    if isinstance(bins, int):
        bins = [bins] * points.shape[1]
    edges = []
    for i, b in enumerate(bins):
        if isinstance(b, Tensor):
            if b.numel() < 2:
                raise RuntimeError(f"torch.histogram(): bins must be > 0, but got {b.numel() - 1} "
                                   f"for dimension {i}")
            edges.append(physical(b).astype(input._data.dtype))
            continue
        span = None if range is None else (range[2 * i], range[2 * i + 1])
        low, high = _range(points[:, i], span, "histogramdd", 0.5)
        edges.append(xp.linspace(low, high, int(b) + 1).astype(input._data.dtype))
    weights = None if weight is None else physical(weight).reshape(-1)
    hist = _count_dd(points, edges, weights, density)
    on_device = functools.partial(xp.asarray, like=input._data)
    return result("histogramdd", "hist bin_edges",
                  (_const(on_device(hist.astype(input._data.dtype))),
                   tuple(_const(on_device(e)) for e in edges)))


def _upper_bound(edges, values):
    """C++'s std::upper_bound of each value in ``edges`` minus one: the bin of a value, by the
    same binary search as PyTorch's (so edges that do not increase give PyTorch's bins too)."""
    first = xp.zeros(values.shape, dtype=xp.int64)
    count = xp.full(values.shape, len(edges), dtype=xp.int64)
    while count.any():
        step = count // 2
        middle = xp.minimum(first + step, len(edges) - 1)
        right = (count > 0) & ~(values < edges[middle])
        first = xp.where(right, middle + 1, first)
        count = xp.where(right, count - step - 1, xp.where(count > 0, step, 0))
    return first - 1


def _count_dd(points, edges, weights, density: bool):
    """histogramdd's counts as PyTorch's kernel takes them: a point lies in the histogram when
    each coordinate is within [first edge, last edge], and the last edge closes the last bin."""
    keep = xp.ones(points.shape[0], dtype=bool)
    bins = []
    for i, e in enumerate(edges):
        values = points[:, i]
        keep &= (values >= e[0]) & (values <= e[-1]) if len(e) else False
        bins.append(xp.clip(_upper_bound(e, values), 0, max(len(e) - 2, 0)))
    shape = tuple(max(len(e) - 1, 0) for e in edges)
    flat = xp.ravel_multi_index(tuple(b[keep] for b in bins), shape) if keep.any() else \
        xp.zeros(0, dtype=xp.int64)
    hist = xp.bincount(flat, None if weights is None else weights[keep].astype(xp.float64),
                       minlength=int(xp.prod(shape))).reshape(shape).astype(points.dtype)
    if density:
        volume = functools.reduce(xp.multiply.outer, [xp.diff(e) for e in edges])
        with xp.errstate(divide="ignore", invalid="ignore"):
            hist = hist / (hist.sum() * volume)
    return hist


def bincount(input, weights=None, minlength: int = 0) -> Tensor:
    """The number of occurrences of each value in a 1-D tensor of non-negative integers."""
    if input.dim() != 1 or input._data.dtype.kind not in "iub":
        raise RuntimeError("bincount only supports 1-d non-negative integral inputs.")
    if minlength < 0:
        raise RuntimeError("minlength should be >= 0")
    if weights is None:
        return apply(BINCOUNT, input, minlength=minlength)
    return apply(BINCOUNT_WEIGHTED, input, weights, minlength=minlength)


def bucketize(input, boundaries, *, out_int32: bool = False, right: bool = False) -> Tensor:
    """For each element, the index of the bucket of ``boundaries`` it falls in."""
    if boundaries.dim() != 1:
        raise RuntimeError("boundaries tensor must be 1 dimension, but got dim(" +
                           f"{boundaries.dim()})")
    if not isinstance(input, Tensor):
        input = boundaries.new_full((), input)
    return ix.searchsorted(boundaries, input, out_int32=out_int32, right=right)


def isin(elements=None, test_elements=None, *, element=None, test_element=None,
         assume_unique: bool = False, invert: bool = False) -> Tensor:
    """True where an element of ``elements`` is in ``test_elements`` (``element`` and
    ``test_element``: a number on that side)."""
    elements = element if elements is None else elements
    test_elements = test_element if test_elements is None else test_elements
    if not isinstance(elements, Tensor):
        elements = test_elements.new_full((), elements)
    if not isinstance(test_elements, Tensor):
        test_elements = elements.new_full((), test_elements)
    return apply(ISIN, elements, test_elements, invert=invert)


def _pieces(y, x, dx, dim):
    """The trapezoids' areas along ``dim`` (``dx`` a number or, from ``x``, the spacings)."""
    n = y.shape[dim] if y.dim() else 1
    if x is not None:
        spacing = ix.diff(x, dim=dim if x.dim() == y.dim() else -1)
        if x.dim() == 1 and y.dim() > 1:
            shape = [1] * y.dim()
            shape[dim] = -1
            spacing = spacing.reshape(shape)
    else:
        spacing = 1 if dx is None else dx
    if n < 2:
        return None, n
    ends = y.narrow(dim, 1, n - 1) + y.narrow(dim, 0, n - 1)
    return ends * spacing / 2, n


def trapezoid(y, x=None, *, dx=None, dim: int = -1) -> Tensor:
    """The integral of y along ``dim`` by the trapezoid rule (at x, or with spacing dx)."""
    if x is not None and not isinstance(x, Tensor):
        dx, x = x, None
    if y.dim() == 0:
        raise IndexError(f"Dimension out of range (expected to be in range of [-1, 0], but got "
                         f"{dim})")
    d = _dims(y, dim)[0]
    if x is not None and x.dim() != 1 and x.dim() != y.dim():
        raise RuntimeError("trapezoid: There must be one `x` value for each sample point")
    pieces, n = _pieces(y, x, dx, d)
    if pieces is None:
        return red.sum(y.narrow(d, 0, 0), d)
    return red.sum(pieces, d)


def trapz(y, x=None, *, dx=None, dim: int = -1) -> Tensor:
    """trapezoid under its older name."""
    return trapezoid(y, x, dx=dx, dim=dim)


def cumulative_trapezoid(y, x=None, *, dx=None, dim: int = -1) -> Tensor:
    """The running integral of y along ``dim`` by the trapezoid rule."""
    if x is not None and not isinstance(x, Tensor):
        dx, x = x, None
    d = _dims(y, dim)[0]
    pieces, n = _pieces(y, x, dx, d)
    if pieces is None:
        return y.narrow(d, 0, 0) * 1
    return red.cumsum(pieces, d)


def _along(t: Tensor, dim: int, ndim: int) -> Tensor:
    """A 1-D tensor shaped to broadcast along ``dim`` of an ``ndim``-dim tensor."""
    shape = [1] * ndim
    shape[dim] = -1
    return t.reshape(shape)


def _gradient_dim(f: Tensor, d: int, h, edge_order: int) -> Tensor:
    """The derivative of f along d by second-order central differences; h a number (uniform
    spacing) or the coordinates (a 1-D tensor)."""
    n = f.shape[d]

    def part(start: int, length: int) -> Tensor:
        return f.narrow(d, start, length)

    if isinstance(h, Tensor):
        x = h.to(f.dtype)
        dx = x[1:] - x[:-1]
        hl, hr = _along(dx[:-1], d, f.dim()), _along(dx[1:], d, f.dim())
        # Fornberg's weights for unequal steps (as numpy.gradient and PyTorch)
        interior = (hl * hl * part(2, n - 2) - hr * hr * part(0, n - 2)
                    + (hr * hr - hl * hl) * part(1, n - 2)) / (hl * hr * (hl + hr))
        h0, h1, hn, hm = dx[0], dx[1] if n > 2 else dx[0], dx[-1], dx[-2] if n > 2 else dx[-1]
    else:
        interior = (part(2, n - 2) - part(0, n - 2)) / (2 * h)
        h0 = h1 = hn = hm = h
    if edge_order == 1:
        first = (part(1, 1) - part(0, 1)) / h0
        last = (part(n - 1, 1) - part(n - 2, 1)) / hn
    else:
        a = -(2 * h0 + h1) / (h0 * (h0 + h1))
        b = (h0 + h1) / (h0 * h1)
        c = -h0 / (h1 * (h0 + h1))
        first = a * part(0, 1) + b * part(1, 1) + c * part(2, 1)
        a = hn / (hm * (hm + hn))
        b = -(hn + hm) / (hm * hn)
        c = (2 * hn + hm) / (hn * (hm + hn))
        last = a * part(n - 3, 1) + b * part(n - 2, 1) + c * part(n - 1, 1)
    return sh.cat([first, interior, last], d)


def gradient(input, *, spacing=1, dim=None, edge_order: int = 1) -> tuple:
    """The derivative of input along each of ``dim`` (every dim when None) by central
    differences, with ``spacing`` a number, one number per dim, or coordinates per dim."""
    if edge_order not in (1, 2):
        raise RuntimeError("torch.gradient only supports edge_order=1 and edge_order=2.")
    dims = tuple(range(input.dim())) if dim is None else _dims(input, dim)
    for d in dims:
        if input.shape[d] < edge_order + 1:
            raise RuntimeError("torch.gradient expected each dimension size to be at least "
                               "edge_order+1")
    f = input if input._data.dtype.kind in "fcV" else input.to(get_default_dtype())
    spacing = 1 if spacing is None else spacing
    spacings = list(spacing) if isinstance(spacing, (tuple, list)) else [spacing] * len(dims)
    if len(spacings) != len(dims):
        raise RuntimeError(f"torch.gradient expected spacing to be unspecified, a scalar or it's "
                           f"spacing and dim arguments to have the same length, but got a "
                           f"spacing argument of length {len(spacings)} and a dim argument of "
                           f"length {len(dims)}.")
    return tuple(_gradient_dim(f, d, h, edge_order) for d, h in zip(dims, spacings))


REDUCTIONS = (gradient, count_nonzero, nansum, nanmean, nanmedian, nanquantile, logcumsumexp,
              aminmax,
              msort, cov, corrcoef, histc, histogram, histogramdd, bincount, bucketize, isin,
              trapezoid, trapz, cumulative_trapezoid)


# ---- shapes, joins, splits and scatters --------------------------------------------------------


def diagflat(input, offset: int = 0) -> Tensor:
    """A matrix with input's elements (flattened) on its ``offset``-th diagonal."""
    return la.diag(input.reshape(-1), offset)


def block_diag(*tensors) -> Tensor:
    """The block diagonal matrix of ``tensors`` (0-d and 1-d ones as a row)."""
    for i, t in enumerate(tensors):
        if not isinstance(t, Tensor):
            raise TypeError(f"expected Tensor as element {i} in argument 0, but got "
                            f"{type(t).__name__}")
        if t.dim() > 2:
            raise RuntimeError(f"torch.block_diag: Input tensors must have 2 or fewer dimensions. "
                               f"Input {i} has {t.dim()} dimensions")
    blocks = [t.reshape(1, -1) if t.dim() < 2 else t for t in tensors]
    if not blocks:
        return Tensor._wrap(xp.zeros((1, 0), dtype=get_default_dtype().np), None, 0)
    dtype = as_dtype(result_type([b._data for b in blocks]))
    width = sum(b.shape[1] for b in blocks)
    rows, left = [], 0
    for b in blocks:
        r, c = b.shape
        rows.append(sh.cat([b.new_zeros((r, left), dtype=dtype), b.to(dtype),
                            b.new_zeros((r, width - left - c), dtype=dtype)], 1))
        left += c
    return sh.cat(rows, 0)


def cartesian_prod(*tensors) -> Tensor:
    """The Cartesian product of 1-D tensors, one combination per row."""
    for i, t in enumerate(tensors):
        if not isinstance(t, Tensor):
            raise TypeError(f"expected Tensor as element {i} in argument 0, but got "
                            f"{type(t).__name__}")
    if len(tensors) == 1:
        return tensors[0]
    grids = sh.meshgrid(*tensors, indexing="ij")
    return sh.stack([g.reshape(-1) for g in grids], 1)


def combinations(input, r: int = 2, with_replacement: bool = False) -> Tensor:
    """The length-``r`` combinations of a 1-D tensor's elements, one per row."""
    if input.dim() != 1:
        raise RuntimeError(f"Expect a 1D vector, but got shape {list(input.shape)}")
    if r < 0:
        raise RuntimeError(f"Expect a non-negative number, but got {r}")
    if r == 0:
        return input.new_zeros((0,))
    pick = itertools.combinations_with_replacement if with_replacement else itertools.combinations
    index = xp.array(list(pick(range(input.shape[0]), r)), dtype=xp.int64).reshape(-1, r)
    return input[_const(index)]


def _check_slice(src: Tensor, view: Tensor) -> None:
    if tuple(src.shape) != tuple(view.shape):
        raise RuntimeError("expected src to have a size equal to the slice of self. src size = "
                           f"{list(src.shape)}, slice size = {list(view.shape)}")


def _scatter_into(input: Tensor, src: Tensor, view) -> Tensor:
    """A copy of input with ``view(copy)`` replaced by src (the write is recorded, so both get
    gradients)."""
    out = input.clone()
    target = view(out)
    _check_slice(src, target)
    target.copy_(src)
    return out


def diagonal_scatter(input, src, offset: int = 0, dim1: int = 0, dim2: int = 1) -> Tensor:
    """input with its ``offset``-th diagonal (over dim1, dim2) replaced by src."""
    return _scatter_into(input, src, lambda t: t.diagonal(offset, dim1, dim2))


def select_scatter(input, src, dim: int, index: int) -> Tensor:
    """input with ``input.select(dim, index)`` replaced by src."""
    return _scatter_into(input, src, lambda t: t.select(dim, index))


def _slice(t: Tensor, dim: int, start, end, step: int) -> Tensor:
    d = normalize_dim(dim, t.dim())
    return t[(slice(None),) * d + (slice(start, end, step),)]


def slice_scatter(input, src, dim: int = 0, start=None, end=None, step: int = 1) -> Tensor:
    """input with the slice ``start:end:step`` along ``dim`` replaced by src."""
    return _scatter_into(input, src, lambda t: _slice(t, dim, start, end, step))


def _split_along(name: str, min_dims: int, dim: int):
    def split(input, indices_or_sections=None, *, indices=None, sections=None) -> tuple:
        indices_or_sections = next((a for a in (indices_or_sections, indices, sections)
                                    if a is not None), None)
        if indices_or_sections is None:
            raise TypeError(f"{name}() missing 1 required positional argument: "
                            "'indices_or_sections'")
        if input.dim() < min_dims:
            raise RuntimeError(f"torch.{name} requires a tensor with at least {min_dims} "
                               f"dimension, but got a tensor with {input.dim()} dimensions!")
        d = dim if input.dim() > 1 or name != "hsplit" else 0
        if isinstance(indices_or_sections, int):
            size = input.shape[d]
            if indices_or_sections == 0 or size % indices_or_sections:
                raise RuntimeError(
                    f"torch.{name} attempted to split along dimension {d}, but the size of the "
                    f"dimension {size} is not divisible by the split_size "
                    f"{indices_or_sections}!")
        return ix.tensor_split(input, indices_or_sections, d)

    split.__name__ = name
    split.__doc__ = f"input split along dim {dim} into equal parts or at the given indices."
    return split


dsplit = _split_along("dsplit", 3, 2)
hsplit = _split_along("hsplit", 1, 1)
vsplit = _split_along("vsplit", 2, 0)


def split_with_sizes(input, split_sizes, dim: int = 0) -> tuple:
    """input split along ``dim`` into parts of the given sizes."""
    d = normalize_dim(dim, input.dim())
    if sum(split_sizes) != input.shape[d]:
        raise RuntimeError(f"split_with_sizes expects split_sizes to sum exactly to "
                           f"{input.shape[d]} (input tensor's size at dimension {d}), but got "
                           f"split_sizes={list(split_sizes)}")
    return sh.split(input, list(split_sizes), dim)


def unsafe_chunk(input, chunks: int, dim: int = 0) -> tuple:
    """chunk (chainrule's parts are never unsafe to modify)."""
    return sh.chunk(input, chunks, dim)


def unsafe_split(input, split_size, dim: int = 0) -> tuple:
    """split (chainrule's parts are never unsafe to modify)."""
    return sh.split(input, split_size, dim)


def unsafe_split_with_sizes(input, split_sizes, dim: int = 0) -> tuple:
    """split_with_sizes (chainrule's parts are never unsafe to modify)."""
    return split_with_sizes(input, split_sizes, dim)


def unfold(input, dimension: int, size: int, step: int) -> Tensor:
    """All windows of length ``size`` every ``step`` along ``dimension``, in a new last dim."""
    d = normalize_dim(dimension, input.dim())
    length = input.shape[d] if input.dim() else 1
    if size > length:
        raise RuntimeError(f"maximum size for tensor at dimension {d} is {length} but size is "
                           f"{size}")
    if step <= 0:
        raise RuntimeError(f"step is {step} but must be > 0")
    if size < 0:
        raise RuntimeError(f"size is {size} but must be >= 0")
    x = input.reshape(1) if input.dim() == 0 else input
    n = (length - size) // step + 1
    index = (xp.arange(n)[:, None] * step + xp.arange(size)[None, :]).reshape(-1)
    picked = x.index_select(d, _const(index.astype(xp.int64)))
    shape = tuple(x.shape[:d]) + (n, size) + tuple(x.shape[d + 1:])
    out = picked.reshape(shape).movedim(d + 1, -1)
    return out.reshape(size) if input.dim() == 0 else out


_INDEX_REDUCTIONS = ("prod", "mean", "amax", "amin")


def index_reduce(input, dim: int, index, source, reduce: str, *,
                 include_self: bool = True) -> Tensor:
    """input with source's slices reduced (prod, mean, amax, amin) into the positions ``index``
    gives along ``dim``."""
    if reduce not in _INDEX_REDUCTIONS:
        raise RuntimeError("index_reduce(): Expected reduce to be one of prod, mean, amax or "
                           f"amin but got {reduce}.")
    d = normalize_dim(dim, input.dim())
    shape = [1] * max(source.dim(), 1)
    shape[d] = -1
    expanded = index.reshape(shape).expand(tuple(source.shape) or (1,))
    return ix.scatter_reduce(input, d, expanded, source.reshape(expanded.shape), reduce,
                             include_self=include_self)


def _index_reduce_(self, dim: int, index, source, reduce: str, *,
                   include_self: bool = True) -> Tensor:
    return _write_back("index_reduce_", self, index_reduce, dim, index, source, reduce,
                       include_self=include_self)


def renorm(input, p, dim: int, maxnorm) -> Tensor:
    """input with each slice along ``dim`` rescaled to p-norm at most maxnorm."""
    if p <= 0:
        raise RuntimeError("renorm: non-positive-norm not supported")
    if maxnorm < 0:
        raise RuntimeError(f"renorm: expected maxnorm to be >= 0 but got {maxnorm}")
    d = normalize_dim(dim, input.dim())
    others = tuple(i for i in range(input.dim()) if i != d)
    norm = red.vector_norm(input, p, others, True)
    # as PyTorch: slices above maxnorm scale by maxnorm / (norm + 1e-7)
    factor = ew.where(norm > maxnorm, maxnorm / (norm + 1e-7), 1.0)
    return input * factor


def _renorm_(self, p, dim: int, maxnorm) -> Tensor:
    return _write_back("renorm_", self, renorm, p, dim, maxnorm)


def _fill_diagonal_(self, fill_value, wrap: bool = False) -> Tensor:
    """Fill the main diagonal (of an at least 2-D tensor with equal sizes beyond 2-D)."""
    shape = tuple(self.shape)
    if len(shape) < 2:
        raise RuntimeError("dimensions must larger than 1")
    if len(shape) > 2 and len(set(shape)) != 1:
        raise RuntimeError("all dimensions of input must be of equal length")
    mask = xp.zeros(shape, dtype=bool)
    if len(shape) == 2:
        rows, cols = shape
        flat = mask.reshape(-1)
        stop = rows * cols if wrap else min(rows, cols) * cols
        flat[:stop:cols + 1] = True
    else:
        mask[(xp.arange(shape[0]),) * len(shape)] = True
    return self.masked_fill_(_const(mask), fill_value)



def _positions(size, stride, offset: int):
    """Storage positions ``offset + sum(i_k * stride_k)`` of a strided tensor of ``size``."""
    index = xp.full(tuple(size), offset, dtype=xp.int64)
    for d, (n, st) in enumerate(zip(size, stride)):
        shape = [1] * len(size)
        shape[d] = n
        index = index + (xp.arange(n) * st).reshape(shape)
    return index


def _view_storage(input: Tensor):
    """The flat storage input views, when it is a view into a larger contiguous array of its
    dtype (else None)."""
    data = input._data
    if type(data) is not xp.ndarray:
        return None
    root = data
    while isinstance(root.base, xp.ndarray):
        root = root.base
    if root is data or root.dtype != data.dtype or not root.flags.c_contiguous \
            or any(st <= 0 or st % data.itemsize for st in data.strides):
        return None  # not a view, another dtype's, or expanded or flipped
    last = _storage_offset(input) + sum((n - 1) * st // data.itemsize
                                        for n, st in zip(data.shape, data.strides))
    return root.reshape(-1) if data.size and last < root.size else None


def _strided_index(input: Tensor, size, stride, storage_offset, check: bool = True):
    """The positions in input's elements (in memory order) that as_strided reads (None, without
    ``check``, when they reach outside them)."""
    size, stride = tuple(size), tuple(stride)
    if len(size) != len(stride):
        raise RuntimeError("mismatch in length of strides and shape")
    offset = _storage_offset(input) if storage_offset is None else storage_offset
    base = _storage_offset(input)
    index = _positions(size, stride, offset - base)
    needed = offset + (int(index.max()) - (offset - base) + 1 if index.size else 0)
    available = base + input._data.size
    if not check and index.size and (int(index.min()) < 0 or needed > available):
        return None
    if index.size and int(index.min()) < 0:
        raise RuntimeError(f"as_strided: storage offset {offset} reaches before the first element "
                           f"of this view (offset {base}): chainrule reads a tensor's own elements")
    if index.size and needed > available:
        raise RuntimeError(
            f"setStorage: sizes {list(size)}, strides {list(stride)}, storage offset {offset}, "
            f"and itemsize {input._data.itemsize} requiring a storage size of "
            f"{needed * input._data.itemsize} are out of bounds for storage of size "
            f"{available * input._data.itemsize}")
    return _const(index)


def as_strided(input, size, stride, storage_offset=None) -> Tensor:
    """The elements at ``storage_offset + sum(i_k * stride_k)`` of input's (contiguous)
    memory, as a tensor of ``size``."""
    storage = _view_storage(input)
    if storage is not None and _strided_index(input, size, stride, storage_offset, False) is None:
        # a view read beyond its own elements reads its base's storage, as PyTorch's
        if len(size) != len(stride):
            raise RuntimeError("mismatch in length of strides and shape")
        offset = _storage_offset(input) if storage_offset is None else storage_offset
        index = _positions(size, stride, offset)
        if index.size and (int(index.min()) < 0 or int(index.max()) >= storage.size):
            raise RuntimeError(
                f"setStorage: sizes {list(size)}, strides {list(stride)}, storage offset "
                f"{offset}, and itemsize {storage.itemsize} requiring a storage size of "
                f"{(int(index.max()) + 1) * storage.itemsize} are out of bounds for storage of "
                f"size {storage.size * storage.itemsize}")
        own = _positions(input.shape, input.stride(), _storage_offset(input)).reshape(-1)
        whole = _const(storage.copy()).index_put((_const(own),), input.reshape(-1))
        return whole[_const(index)]
    if not input._data.flags.c_contiguous:
        input = input.contiguous()
    return input.reshape(-1)[_strided_index(input, size, stride, storage_offset)]


def as_strided_scatter(input, src, size, stride, storage_offset=None) -> Tensor:
    """A copy of input with the elements ``as_strided`` would read replaced by src."""
    out = input.clone().contiguous()
    index = _strided_index(out, size, stride, storage_offset)
    if tuple(src.shape) != tuple(index.shape):
        raise RuntimeError("expected src to have a size equal to the slice of self. src size = "
                           f"{list(src.shape)}, slice size = {list(index.shape)}")
    out.reshape(-1)[index] = src
    return out


def as_strided_copy(input, size, stride, storage_offset=None) -> Tensor:
    """as_strided, copied."""
    return as_strided(input, size, stride, storage_offset).clone()


def alias_copy(input) -> Tensor:
    """A copy of input."""
    return input.clone()


def detach_copy(input) -> Tensor:
    """A copy of input outside the graph."""
    return input.detach().clone()


def expand_copy(input, size, *, implicit: bool = False) -> Tensor:
    """input.expand(size), copied."""
    return input.expand(size).clone()


def narrow_copy(input, dim: int, start: int, length: int) -> Tensor:
    """input.narrow(dim, start, length), copied."""
    return input.narrow(dim, start, length).clone()


def permute_copy(input, dims) -> Tensor:
    """input.permute(dims), copied."""
    return input.permute(dims).clone()


def select_copy(input, dim: int, index: int) -> Tensor:
    """input.select(dim, index), copied."""
    return input.select(dim, index).clone()


def slice_copy(input, dim: int = 0, start=None, end=None, step: int = 1) -> Tensor:
    """The slice start:end:step along dim, copied."""
    return _slice(input, dim, start, end, step).clone()


def split_copy(input, split_size, dim: int = 0) -> tuple:
    """split, each part copied."""
    return tuple(t.clone() for t in sh.split(input, split_size, dim))


def split_with_sizes_copy(input, split_sizes, dim: int = 0) -> tuple:
    """split_with_sizes, each part copied."""
    return tuple(t.clone() for t in split_with_sizes(input, split_sizes, dim))


def squeeze_copy(input, dim=None) -> Tensor:
    """input.squeeze(dim), copied."""
    return sh.squeeze(input, dim).clone()


def t_copy(input) -> Tensor:
    """input.t(), copied."""
    return input.t().clone()


def transpose_copy(input, dim0: int, dim1: int) -> Tensor:
    """input.transpose(dim0, dim1), copied."""
    return input.transpose(dim0, dim1).clone()


def unbind_copy(input, dim: int = 0) -> tuple:
    """unbind, each slice copied."""
    return tuple(t.clone() for t in input.unbind(dim))


def unfold_copy(input, dimension: int, size: int, step: int) -> Tensor:
    """input.unfold(dimension, size, step), copied."""
    return unfold(input, dimension, size, step).clone()


def unsqueeze_copy(input, dim: int) -> Tensor:
    """input.unsqueeze(dim), copied."""
    return input.unsqueeze(dim).clone()


def view_copy(input, size=None, *, dtype=None) -> Tensor:
    """input.view(size) (or the bytes read as dtype), copied."""
    if dtype is None and size is not None and not isinstance(size, (tuple, list, int)):
        size, dtype = None, size
    return (input.view(dtype) if dtype is not None else input.view(size)).clone()


def view_as_real_copy(input) -> Tensor:
    """view_as_real, copied."""
    return cx.view_as_real(input).clone()


def view_as_complex_copy(input) -> Tensor:
    """view_as_complex, copied."""
    return cx.view_as_complex(input).clone()


def detach(input) -> Tensor:
    """input cut from the graph (sharing its values)."""
    return input.detach()


SHAPES = (as_strided, as_strided_scatter, as_strided_copy, diagflat, block_diag, cartesian_prod,
          combinations, diagonal_scatter, select_scatter, slice_scatter, dsplit, hsplit, vsplit,
          split_with_sizes, unsafe_chunk, unsafe_split, unsafe_split_with_sizes, index_reduce,
          renorm, alias_copy, detach_copy, expand_copy, narrow_copy, permute_copy, select_copy,
          slice_copy, split_copy, split_with_sizes_copy, squeeze_copy, t_copy, transpose_copy,
          unbind_copy, unfold_copy, unsqueeze_copy, view_copy, view_as_real_copy,
          view_as_complex_copy, detach)
SHAPE_METHODS = {"unfold": unfold, "index_reduce_": _index_reduce_, "renorm_": _renorm_,
                 "fill_diagonal_": _fill_diagonal_}


# ---- predicates, utilities and protocols --------------------------------------------------------


def equal(input, other) -> bool:
    """True if input and other have the same size and elements."""
    _require_tensor("equal", "other", 2, other)
    return (tuple(input.shape) == tuple(other.shape)
            and bool(xp.array_equal(input._data, other._data)))


def is_same_size(input, other) -> bool:
    """True if input and other have the same size."""
    return tuple(input.shape) == tuple(other.shape)


def is_nonzero(input) -> bool:
    """The truth of a one-element tensor."""
    if input._data.size == 0:
        raise RuntimeError("Boolean value of Tensor with no values is ambiguous")
    if input._data.size > 1:
        raise RuntimeError("Boolean value of Tensor with more than one value is ambiguous")
    return bool(input._data.reshape(()) != 0)


def is_signed(input) -> bool:
    """True for dtypes with a sign (floating, complex and signed integers)."""
    return input._data.dtype.kind in "fci"


def is_inference(input) -> bool:
    """True if input is an inference tensor (made in inference mode)."""
    return is_inference_counter(input._vc)


def get_device(input) -> int:
    """-1: the CPU."""
    return -1


def is_distributed(input) -> bool:
    """False: chainrule has no distributed tensors."""
    return False


def _storage_offset(self) -> int:
    """The offset of the first element in the storage, in elements."""
    if type(self._data) is MetaArray:
        return self._data.offset
    root = self._data
    while isinstance(root.base, xp.ndarray):
        root = root.base
    return (self._data.__array_interface__["data"][0]
            - root.__array_interface__["data"][0]) // max(self._data.itemsize, 1)


def _is_set_to(self, tensor) -> bool:
    """True if self and tensor view the same elements (storage, offset, size and strides)."""
    return (self._data.__array_interface__["data"][0] == tensor._data.__array_interface__["data"][0]
            and self._data.dtype == tensor._data.dtype and self.shape == tensor.shape
            and self.stride() == tensor.stride())


def _dim_order(self, *, ambiguity_check: bool = False) -> tuple:
    """The dims from outermost to innermost in memory."""
    strides = self.stride()
    return tuple(sorted(range(self.dim()), key=lambda d: -strides[d]))


def _module_load(self, other, assign: bool = False) -> Tensor:
    """How load_state_dict turns ``other`` into the value for self: other itself (detached
    when ``assign``)."""
    if not isinstance(other, Tensor):
        raise TypeError(f"Expected other to be a Tensor, but got {type(other).__name__}")
    return other.detach() if assign else other


def unique_consecutive(input, return_inverse: bool = False, return_counts: bool = False,
                       dim: int | None = None):
    """The elements (slices along ``dim``) with runs of equal neighbours collapsed to one."""
    data = input._data
    x = data.reshape(-1) if dim is None else xp.moveaxis(data, normalize_dim(dim, data.ndim), 0)
    n = x.shape[0]
    rows = x.reshape(n, -1)
    start = xp.ones(n, dtype=bool)
    if n:
        start[1:] = (rows[1:] != rows[:-1]).any(axis=1)
    inverse = xp.cumsum(start) - 1
    counts = xp.diff(xp.append(xp.flatnonzero(start), n))
    values = x[start]
    if dim is not None:
        values = xp.moveaxis(values, 0, normalize_dim(dim, data.ndim))
    out = [_const(values)]
    if return_inverse:
        out.append(_const(inverse.reshape(data.shape if dim is None else (n,)).astype(xp.int64)))
    if return_counts:
        out.append(_const(counts.astype(xp.int64)))
    return out[0] if len(out) == 1 else tuple(out)


def nonzero_static(input, *, size: int, fill_value: int = -1) -> Tensor:
    """The indices of the non-zero elements, one per row, cut or padded to ``size`` rows."""
    if size < 0:
        raise RuntimeError("nonzero_static: 'size' must be an non-negative integer")
    if input.device.type == "meta":  # the rows are values; their count is size
        return _const(xp.zeros((size, input.dim()), dtype=xp.int64, like=input._data))
    found = xp.argwhere(input._data).astype(xp.int64)[:size]
    pad = xp.full((size - len(found), input.dim()), fill_value, dtype=xp.int64)
    return _const(xp.concatenate([found, pad]))


def unravel_index(indices, shape) -> tuple:
    """The coordinates in a tensor of ``shape`` of flat ``indices``."""
    if not isinstance(indices, Tensor):
        raise TypeError(f"expected 'indices' to be a Tensor, but got {type(indices).__name__}")
    if indices._data.dtype.kind not in "iu":
        raise TypeError("expected 'indices' to be integer dtype, but got "
                        f"{as_dtype(indices._data.dtype)}")
    shape = (shape,) if isinstance(shape, int) else tuple(shape)
    if any(s < 0 for s in shape):
        raise ValueError(f"'shape' cannot have negative values, but got {shape}")
    rest, coords = indices._data.astype(xp.int64), []
    for size in reversed(shape):  # as PyTorch, indices out of range wrap around
        coords.append(rest % size if size else rest)
        rest = rest // size if size else rest
    return tuple(_const(c) for c in reversed(coords))


def _conversion(dtype_name: str):
    def convert(self, memory_format=None) -> Tensor:
        return self._converted(dtype_name, memory_format)

    convert.__doc__ = f"self as {dtype_name}."
    return convert


def _contains(self, element) -> bool:
    if not isinstance(element, (Tensor, int, float, complex, bool)):
        raise RuntimeError("Tensor.__contains__ only supports Tensor or scalar, but you passed in "
                           f"a {type(element)}.")
    return bool((self == element).any())


def _reversed(self) -> Tensor:
    return self if self.dim() == 0 else self.flip(0)


def _rdiv(self, other) -> Tensor:
    return self.reciprocal() * other


def _apply_(self, callable) -> Tensor:
    """Replace each element by ``callable(element)`` (a Python function: slow)."""
    if self.requires_grad:
        raise RuntimeError("Can't call apply_() on Variable that requires grad. Use "
                           "var.detach().apply_() instead.")
    if self.device.type == "meta":  # no elements to call it on
        return self
    values = [callable(v) for v in self._data.reshape(-1).tolist()]
    return self.copy_(_const(xp.asarray(values, dtype=self._data.dtype).reshape(self.shape)))


def _map_(self, tensor, callable) -> Tensor:
    """Replace each element by ``callable(element, tensor's element)`` (broadcasting tensor)."""
    if self.device.type == "meta":
        return self
    other = xp.broadcast_to(tensor._data, self._data.shape).reshape(-1).tolist()
    values = [callable(a, b) for a, b in zip(self._data.reshape(-1).tolist(), other)]
    return self.copy_(_const(xp.asarray(values, dtype=self._data.dtype).reshape(self.shape)))


def _map2_(self, x, y, callable) -> Tensor:
    """Replace each element by ``callable(element, x's, y's)`` (broadcasting x and y)."""
    if self.device.type == "meta":
        return self
    a = xp.broadcast_to(x._data, self._data.shape).reshape(-1).tolist()
    b = xp.broadcast_to(y._data, self._data.shape).reshape(-1).tolist()
    values = [callable(v, p, q) for v, p, q in zip(self._data.reshape(-1).tolist(), a, b)]
    return self.copy_(_const(xp.asarray(values, dtype=self._data.dtype).reshape(self.shape)))


def _resize_(self, *sizes, memory_format=None) -> Tensor:
    """Give self the size ``sizes``, keeping its first elements (new ones are zero)."""
    if len(sizes) == 1 and isinstance(sizes[0], (tuple, list)):
        sizes = tuple(sizes[0])
    if self.requires_grad:
        raise RuntimeError("cannot resize variables that require grad")
    if any(s < 0 for s in sizes):
        raise RuntimeError(f"Trying to create tensor with negative dimension {min(sizes)}: "
                           f"{list(sizes)}")
    if self.device.type == "meta":
        self._data = xp.zeros(sizes, dtype=self._data.dtype, like=self._data)
        return self
    flat = self._data.reshape(-1)
    n = math.prod(sizes)
    data = xp.zeros(n, dtype=self._data.dtype)
    data[:min(n, flat.size)] = flat[:n]
    resized = self._data.shape != tuple(sizes)
    self._data = data.reshape(sizes)
    if resized:  # as PyTorch, a new shape counts as a change (and then refuses an inference
        bump_version(self, "resize_")  # tensor outside inference mode)
    return self


def _resize_as_(self, the_template, memory_format=None) -> Tensor:
    return _resize_(self, tuple(the_template.shape))


def _resize(self, *sizes) -> Tensor:
    warnings.warn("non-inplace resize is deprecated", stacklevel=2)
    if len(sizes) == 1 and isinstance(sizes[0], (tuple, list)):
        sizes = tuple(sizes[0])
    return self.reshape(sizes)


def _resize_as(self, tensor) -> Tensor:
    warnings.warn("non-inplace resize_as is deprecated", stacklevel=2)
    return self.reshape(tuple(tensor.shape))


UTILITIES = (equal, is_same_size, is_nonzero, is_signed, is_inference, get_device,
             is_distributed, unique_consecutive, nonzero_static, unravel_index)
UTILITY_METHODS = {
    "storage_offset": _storage_offset, "is_set_to": _is_set_to, "dim_order": _dim_order,
    "module_load": _module_load,
    "const_data_ptr": Tensor.data_ptr, "byte": _conversion("uint8"), "char": _conversion("int8"),
    "short": _conversion("int16"), "cfloat": _conversion("complex64"),
    "cdouble": _conversion("complex128"), "__contains__": _contains, "__reversed__": _reversed,
    "__complex__": lambda self: complex(self.item()), "__long__": lambda self: int(self.item()),
    "__nonzero__": lambda self: is_nonzero(self), "__div__": lambda self, other: self / other,
    "__rdiv__": _rdiv, "__idiv__": lambda self, other: self.div_(other), "apply_": _apply_,
    "map_": _map_, "map2_": _map2_, "resize_": _resize_, "resize_as_": _resize_as_,
    "resize": _resize, "resize_as": _resize_as,
}



# ---- short-time Fourier transforms --------------------------------------------------------------


def _stft_window(window, n_fft: int, win_length: int, like: Tensor) -> Tensor:
    """The window (ones by default) centred in n_fft samples."""
    if window is None:
        window = like.new_ones((win_length,), dtype=as_dtype(like.real._data.dtype
                                                            if like.is_complex() else
                                                            like._data.dtype))
    if window.dim() != 1 or window.shape[0] != win_length:
        raise RuntimeError(f"stft: expected a 1D window tensor of size equal to win_length="
                           f"{win_length}, but got window with size {list(window.shape)}")
    left = (n_fft - win_length) // 2
    return pad_ops.pad(window, (left, n_fft - win_length - left))


def stft(input, n_fft: int, hop_length: int | None = None, win_length: int | None = None,
         window=None, center: bool = True, pad_mode: str = "reflect", normalized: bool = False,
         onesided: bool | None = None, return_complex: bool | None = None,
         align_to_window: bool | None = None) -> Tensor:
    """The short-time Fourier transform: the FFT of windowed frames, (freq, frame) per signal."""
    if return_complex is None and not input.is_complex() and (
            window is None or not window.is_complex()):
        raise RuntimeError("stft requires the return_complex parameter be given for real inputs, "
                           "and will further require that return_complex=True in a future "
                           "PyTorch release.")
    if input.dim() not in (1, 2):
        raise RuntimeError(f"stft: expected a 1D or 2D tensor, but got {input.dim()}D")
    hop = n_fft // 4 if hop_length is None else hop_length
    win_length = n_fft if win_length is None else win_length
    if hop <= 0:
        raise RuntimeError(f"stft: expected hop_length > 0, but got hop_length={hop}")
    if not 0 < win_length <= n_fft:
        raise RuntimeError(f"stft: expected 0 < win_length <= n_fft, but got win_length="
                           f"{win_length}")
    if window is None:
        warnings.warn("A window was not provided. A rectangular window will be applied,which is "
                      "known to cause spectral leakage. Other windows such as torch.hann_window "
                      "or torch.hamming_window are recommended to reduce spectral leakage.To "
                      "suppress this warning and use a rectangular window, explicitly set "
                      "`window=torch.ones(n_fft, device=<device>)`.", UserWarning, stacklevel=2)
    if return_complex is False:
        warnings.warn("stft with return_complex=False is deprecated. In a future pytorch release, "
                      "stft will return complex tensors for all inputs, and return_complex=False "
                      "will raise an error.\nNote: you can still call torch.view_as_real on the "
                      "complex output to recover the old return format.", UserWarning,
                      stacklevel=2)
    x = input if input.dim() == 2 else input.unsqueeze(0)
    if center:
        half = n_fft // 2
        x = pad_ops.pad(x.unsqueeze(1), (half, half), pad_mode).squeeze(1)
    if not 0 < n_fft <= x.shape[-1]:
        raise RuntimeError(f"stft: expected 0 < n_fft < {x.shape[-1]}, but got n_fft={n_fft}")
    frames = unfold(x, -1, n_fft, hop) * _stft_window(window, n_fft, win_length, x)
    norm = "ortho" if normalized else "backward"
    complex_ = input.is_complex() or (window is not None and window.is_complex())
    if onesided is None:
        onesided = not complex_
    if onesided and complex_:
        raise RuntimeError("Cannot have onesided output if window or input is complex")
    spectrum = (fftops.rfft if onesided else fftops.fft)(frames, dim=-1, norm=norm)
    out = spectrum.transpose(-1, -2)
    out = out if input.dim() == 2 else out.squeeze(0)
    return out if return_complex or return_complex is None else cx.view_as_real(out)


def istft(input, n_fft: int, hop_length: int | None = None, win_length: int | None = None,
          window=None, center: bool = True, normalized: bool = False,
          onesided: bool | None = None, length: int | None = None,
          return_complex: bool = False) -> Tensor:
    """The inverse of stft: inverse FFTs of the frames, windowed and overlap-added."""
    if not input.is_complex():
        raise RuntimeError("istft requires a complex-valued input tensor matching the output "
                           "from stft with return_complex=True.")
    hop = n_fft // 4 if hop_length is None else hop_length
    win_length = n_fft if win_length is None else win_length
    spec = input if input.dim() == 3 else input.unsqueeze(0)
    n_freq, n_frames = spec.shape[-2], spec.shape[-1]
    if onesided is None:
        onesided = n_freq != n_fft
    if onesided and n_freq != n_fft // 2 + 1:
        raise RuntimeError("istft expected the frequency dimension (3rd to the last) of the input "
                           "tensor to match n_fft / 2 + 1 when onesided=True, but got "
                           f"{n_freq}")
    if window is None:
        warnings.warn("A window was not provided. A rectangular window will be applied.Please "
                      "provide the same window used by stft to make the inversion lossless.To "
                      "suppress this warning and use a rectangular window, explicitly set "
                      "`window=torch.ones(n_fft, device=<device>)`.", UserWarning, stacklevel=2)
    norm = "ortho" if normalized else "backward"
    columns = spec.transpose(-1, -2)
    if onesided and return_complex:
        raise RuntimeError("cannot have onesided output if window or input is complex")
    if return_complex:
        frames = fftops.ifft(columns, n=n_fft, dim=-1, norm=norm)
    else:
        # a real result reads a two-sided spectrum's first n_fft // 2 + 1 bins (PyTorch's)
        frames = fftops.irfft(columns[..., :n_fft // 2 + 1], n=n_fft, dim=-1, norm=norm)
    real_dtype = frames.real if frames.is_complex() else frames
    w = _stft_window(window, n_fft, win_length, real_dtype)
    frames = frames * w
    total = n_fft + hop * (n_frames - 1)
    positions = (xp.arange(n_frames)[:, None] * hop + xp.arange(n_fft)[None, :]).reshape(-1)
    index = _const(positions.astype(xp.int64))
    batch = frames.shape[0]
    y = frames.new_zeros((batch, total)).index_add(1, index, frames.reshape(batch, -1))
    envelope = w.new_zeros((total,)).index_add(0, index, (w * w).expand(n_frames, n_fft)
                                                .reshape(-1))
    start = n_fft // 2 if center else 0
    end = total if length is None else start + length
    end = min(end, total - (n_fft // 2 if center and length is None else 0))
    y, envelope = y[:, start:end], envelope[start:end]
    if bool((envelope.abs() < 1e-11).any()):
        raise RuntimeError("istft: window overlap add min: " + f"{float(envelope.abs().min())}")
    y = y / envelope
    if length is not None and y.shape[-1] < length:
        y = pad_ops.pad(y, (0, length - y.shape[-1]))
    return y if input.dim() == 3 else y.squeeze(0)


FOURIER = (stft, istft)


# ---- tables ------------------------------------------------------------------------------------

FUNCTIONS = {f.__name__: f for f in ELEMENTWISE + REDUCTIONS + SHAPES + UTILITIES + FOURIER}
_NOT_METHODS = ("gradient", "histogramdd", "bucketize", "isin", "trapezoid", "trapz",
                "cumulative_trapezoid",
                "block_diag", "cartesian_prod", "combinations", "detach", "unravel_index") + tuple(
                    name for name in FUNCTIONS if name.endswith("_copy") and name != "narrow_copy")
METHODS = {name: f for name, f in FUNCTIONS.items() if name not in _NOT_METHODS}
METHODS.update(SHAPE_METHODS)
METHODS.update(UTILITY_METHODS)
METHODS.update(ELEMENTWISE_INPLACE)
