"""torch.masked's reductions and normalizations: each takes ``mask=``, a boolean tensor that
broadcasts to the input and says which elements take part.

Masked-out elements are replaced by the operation's identity (0 for sum, 1 for prod, -inf for
amax and softmax, ...) and the ordinary operation runs on the result, so every function is a
composition of differentiable ops: the gradient of a masked-out element is 0. Slices with no
element left get the identity (sum, prod, amax, ...) or nan (mean, var, median, softmax), as in
PyTorch. A MaskedTensor input brings its own mask.
"""

from __future__ import annotations

import math

from .._backend import bool_, float32, int64, uint8
from .._creation import ones, tensor
from .._dtypes import iinfo
from ..ops.activation import log_softmax as _log_softmax
from ..ops.activation import softmax as _softmax
from ..ops.elementwise import logaddexp as _logaddexp
from ..ops.elementwise import maximum, where
from ..ops.reduction import vector_norm
from ..tensor import Tensor
from .maskedtensor.core import is_masked_tensor

__all__ = ["sum", "prod", "cumsum", "cumprod", "amax", "amin", "argmax", "argmin", "mean",
           "median", "logsumexp", "norm", "var", "std", "softmax", "log_softmax", "softmin",
           "normalize"]

_SMALL_INTEGERS = ("uint8", "bool", "int8", "int16", "int32")  # sum and prod give int64


def _reduction_identity(op_name: str, input: Tensor, *args):
    """The value that leaves op_name's result unchanged when added to its operands (a 0-d
    tensor in input's dtype), or None where there is none (mean, var, std)."""
    dtype = input.dtype
    op_name = op_name.rsplit(".", 1)[-1]
    floating = input.is_floating_point()
    integral = dtype.is_signed or dtype == uint8  # bool has no identity for extrema
    if op_name in ("sum", "cumsum"):
        return tensor(0, dtype=dtype)
    if op_name in ("prod", "cumprod"):
        return tensor(1, dtype=dtype)
    if op_name in ("amax", "argmax", "logaddexp", "logsumexp"):
        if floating:
            return tensor(-math.inf, dtype=dtype)
        if op_name == "logsumexp" and dtype.is_complex:
            return tensor(complex(-math.inf, 0), dtype=dtype)
        if integral and not dtype.is_complex:
            return tensor(iinfo(dtype).min, dtype=dtype)
    elif op_name in ("amin", "argmin"):
        if floating:
            return tensor(math.inf, dtype=dtype)
        if integral and not dtype.is_complex:
            return tensor(iinfo(dtype).max, dtype=dtype)
    elif op_name in ("mean", "var", "std"):
        return None  # the mean of what is left depends on dim; nothing is neutral for it
    elif op_name == "norm":
        ord = args[0] if args else 2
        if ord == -math.inf:
            if not floating:
                raise AssertionError(f"input must be floating point, got {dtype}")
            return tensor(math.inf, dtype=dtype)
        return tensor(0, dtype=dtype)
    elif op_name == "median":
        # nan, which nanmedian (the kernel under masked median) skips
        return tensor(math.nan, dtype=dtype if floating else float32)
    raise NotImplementedError(f"identity of {op_name} on {dtype} input")


def _canonical_dim(dim, ndim: int) -> tuple[int, ...]:
    """dim (None, an int or a sequence; () means all dims) as a sorted tuple of dims."""
    if dim is None or dim == ():
        return tuple(range(ndim))
    ndim = max(ndim, 1)
    dims: list[int] = []
    for d in (dim,) if isinstance(dim, int) else dim:
        if d in dims:
            raise RuntimeError(f"dim={d} appears multiple times in the list of dims")
        if d >= ndim or d < -ndim:
            raise IndexError(f"Dimension out of range (expected to be in range of [{-ndim}, "
                             f"{ndim - 1}], but got {d})")
        dims.append(d % ndim)
    return tuple(sorted(dims))


def _where(mask: Tensor, input: Tensor, fill_value: Tensor) -> Tensor:
    """input where mask holds, else fill_value (dense tensors: torch.where)."""
    return where(mask, input, fill_value)


def _input_mask(input, *args, **kwargs) -> Tensor:
    """The mask keyword broadcast to input's shape, as a bool tensor."""
    mask = kwargs.get("mask")
    if mask is None:
        raise ValueError("_input_mask requires explicit mask")
    if mask.shape != input.shape:
        if mask.ndim > input.ndim:
            raise IndexError("_input_mask expected broadcastable mask (got mask dimensionality "
                             "higher than of the input)")
        mask = mask.clone().broadcast_to(input.shape)
    return mask.to(dtype=bool_)


def _any(mask: Tensor, dims: tuple, keepdim: bool) -> Tensor:
    for d in reversed(dims):
        mask = mask.any(dim=d, keepdim=keepdim)
    return mask


_REDUCTIONS = ("sum", "prod", "amax", "amin", "argmax", "argmin", "mean", "median", "norm",
               "var", "std", "logsumexp")
_NORMALIZATIONS = ("softmax", "log_softmax", "softmin", "normalize", "cumsum", "cumprod")


def _output_mask(op, input: Tensor, *args, **kwargs) -> Tensor:
    """Which elements of op(input, *args, mask=...)'s result are defined: for a reduction,
    those whose slice has an element left; for a normalization, the input mask."""
    if not callable(op):
        raise ValueError(f"_output_mask expected masked operation (got {type(op).__name__} "
                         f"object)")
    if op.__name__ in _REDUCTIONS:
        if op.__name__ == "norm" and args:
            args = args[1:]  # after ord
        dim = args[0] if args else kwargs.get("dim")
        dims = _canonical_dim(dim, input.ndim)
        return _any(_input_mask(input, *args, **kwargs), dims, bool(kwargs.get("keepdim", False)))
    if op.__name__ in _NORMALIZATIONS:
        return _input_mask(input, *args, **kwargs)
    raise ValueError(f"_output_mask expected masked operation (got callable "
                     f"{op.__module__}.{op.__name__})")


def _combine_input_and_mask(op, input, mask, *args) -> Tensor:
    """input with its masked-out elements replaced by op's identity (a MaskedTensor brings its
    own mask; its data stays differentiable)."""
    if is_masked_tensor(input):
        input, mask = input.get_data(), input.get_mask()
    if mask is None:
        return input
    if not callable(op):
        raise ValueError(f"_combine_input_and_mask expected masked operation (got "
                         f"{type(op).__name__} object)")
    fill_value = _reduction_identity(op.__name__, input, *args)
    return _where(_input_mask(input, mask=mask), input, fill_value)


def _accumulating_dtype(input, dtype):
    if dtype is not None:
        return dtype
    return int64 if input.dtype.name in _SMALL_INTEGERS else input.dtype


def sum(input, dim=None, *, keepdim: bool | None = False, dtype=None,
        mask: Tensor | None = None) -> Tensor:
    """The sum of the elements mask selects, over dim."""
    dtype = _accumulating_dtype(input, dtype)
    dims = _canonical_dim(dim, input.ndim)
    return _combine_input_and_mask(sum, input, mask).sum(dims, bool(keepdim), dtype=dtype)


def prod(input, dim=None, *, keepdim: bool | None = False, dtype=None,
         mask: Tensor | None = None) -> Tensor:
    """The product of the elements mask selects, over dim."""
    dtype = _accumulating_dtype(input, dtype)
    dims = _canonical_dim(dim, input.ndim)
    result = _combine_input_and_mask(prod, input, mask).to(dtype=dtype)
    for d in reversed(dims):  # one dim at a time (prod takes a single dim)
        result = result.prod(dim=d, keepdim=bool(keepdim))
    return result


def cumsum(input, dim: int, *, dtype=None, mask: Tensor | None = None) -> Tensor:
    """Cumulative sums along dim, masked-out elements counting as 0."""
    dtype = input.dtype if dtype is None else dtype
    d = _canonical_dim(dim, input.ndim)[0]
    return _combine_input_and_mask(sum, input, mask).cumsum(d, dtype=dtype).to(dtype=dtype)


def cumprod(input, dim: int, *, dtype=None, mask: Tensor | None = None) -> Tensor:
    """Cumulative products along dim, masked-out elements counting as 1."""
    dtype = input.dtype if dtype is None else dtype
    d = _canonical_dim(dim, input.ndim)[0]
    return _combine_input_and_mask(prod, input, mask).cumprod(d, dtype=dtype).to(dtype=dtype)


def amax(input, dim=None, *, keepdim: bool | None = False, dtype=None,
         mask: Tensor | None = None) -> Tensor:
    """The largest element mask selects, over dim (-inf, or the dtype's minimum, if none)."""
    dtype = input.dtype if dtype is None else dtype
    combined = _combine_input_and_mask(amax, input, mask)
    dims = _canonical_dim(dim, combined.ndim)
    return combined.amax(dims, bool(keepdim)).to(dtype=dtype)


def amin(input, dim=None, *, keepdim: bool | None = False, dtype=None,
         mask: Tensor | None = None) -> Tensor:
    """The smallest element mask selects, over dim (inf, or the dtype's maximum, if none)."""
    dtype = input.dtype if dtype is None else dtype
    combined = _combine_input_and_mask(amin, input, mask)
    dims = _canonical_dim(dim, combined.ndim)
    return combined.amin(dims, bool(keepdim)).to(dtype=dtype)


def argmax(input, dim: int | None = None, *, keepdim: bool | None = False, dtype=None,
           mask: Tensor | None = None) -> Tensor:
    """The index of the largest element mask selects (in input's dtype, as PyTorch gives it)."""
    dtype = input.dtype if dtype is None else dtype
    return _combine_input_and_mask(argmax, input, mask).argmax(dim, bool(keepdim)).to(dtype=dtype)


def argmin(input, dim: int | None = None, *, keepdim: bool | None = False, dtype=None,
           mask: Tensor | None = None) -> Tensor:
    """The index of the smallest element mask selects (in input's dtype, as PyTorch gives it)."""
    dtype = input.dtype if dtype is None else dtype
    return _combine_input_and_mask(argmin, input, mask).argmin(dim, bool(keepdim)).to(dtype=dtype)


def _count(input, dim, keepdim, mask):
    """How many elements take part in each slice (the selected ones, or all without a mask),
    and the mask broadcast to input."""
    if mask is None:
        return sum(ones(input.shape, dtype=int64), dim, keepdim=keepdim), None
    inmask = _input_mask(input, mask=mask)
    return inmask.sum(dim=dim, keepdim=bool(keepdim)), inmask


def mean(input, dim=None, *, keepdim: bool | None = False, dtype=None,
         mask: Tensor | None = None) -> Tensor:
    """The mean of the elements mask selects, over dim (nan where none is selected)."""
    source = "Optional"
    if dtype is None:
        dtype, source = input.dtype, "Input"
    if not (dtype.is_floating_point or dtype.is_complex):
        raise ValueError(f"mean(): Could not infer output dtype. {source} dtype must be either "
                         f"a floating point or complex dtype. Got: {dtype}")
    count, inmask = _count(input, dim, keepdim, mask)
    return sum(input, dim, keepdim=keepdim, dtype=dtype, mask=inmask) / count


def median(input, dim: int = -1, *, keepdim: bool = False, dtype=None,
           mask: Tensor | None = None) -> Tensor:
    """The (lower) median of the elements mask selects along dim (nan where none is)."""
    dtype = input.dtype if dtype is None else dtype
    d = _canonical_dim(dim, input.ndim)[0]
    floating = input.is_floating_point()
    if not floating:
        input = input.to(dtype=float32)
    output = _combine_input_and_mask(median, input, mask).nanmedian(d, keepdim).values
    if floating:
        return output
    if output.isnan().any():
        raise ValueError("masked median expects no fully masked out rows if dtype is not "
                         "floating point")
    return output.to(dtype=dtype)


def logsumexp(input, dim=None, *, keepdim: bool = False, dtype=None,
              mask: Tensor | None = None) -> Tensor:
    """log(sum(exp(x))) of the elements mask selects, over dim (-inf where none is)."""
    dtype = input.dtype if dtype is None else dtype
    dims = _canonical_dim(dim, input.ndim)
    combined = _combine_input_and_mask(logsumexp, input, mask)
    return combined.logsumexp(dims, keepdim=keepdim).to(dtype=dtype)


def logaddexp(input, other, *, dtype=None, input_mask: Tensor | None = None,
              other_mask: Tensor | None = None) -> Tensor:
    """log(exp(input) + exp(other)), masked-out elements of either counting as -inf."""
    dtype = input.dtype if dtype is None else dtype
    left = _combine_input_and_mask(logaddexp, input, input_mask)
    right = _combine_input_and_mask(logaddexp, other, other_mask)
    return _logaddexp(left, right).to(dtype=dtype)


def norm(input, ord: float | None = 2.0, dim=None, *, keepdim: bool | None = False, dtype=None,
         mask: Tensor | None = None) -> Tensor:
    """The ord-norm of the elements mask selects, as a vector over dim."""
    dtype = input.dtype if dtype is None else dtype
    combined = _combine_input_and_mask(norm, input, mask, ord)
    return vector_norm(combined, ord, _canonical_dim(dim, input.ndim), bool(keepdim),
                       dtype=dtype)


def _std_var(input, dim, unbiased, *, correction_opt, keepdim, dtype, mask, take_sqrt):
    if unbiased is not None and correction_opt is not None:
        raise AssertionError("Only one of unbiased and correction may be given")
    correction = 1.0
    if unbiased is not None:
        correction = 1.0 if unbiased else 0.0
    if correction_opt is not None:
        correction = float(correction_opt)
    if dtype is None:
        dtype = input.dtype
        if not (dtype.is_floating_point or dtype.is_complex):
            dtype = float32
    compute_dtype = dtype if dtype.is_floating_point or dtype.is_complex else float32
    count, inmask = _count(input, dim, True, mask)
    sample_mean = sum(input, dim, keepdim=True, dtype=dtype, mask=inmask) / count
    x = input - sample_mean
    total = sum(x * x.conj(), dim, keepdim=keepdim, dtype=compute_dtype, mask=inmask)
    if not keepdim:
        count = count.reshape(total.shape)
    if correction != 0:
        count = count.to(total.real.dtype if compute_dtype.is_complex else compute_dtype)
        count = maximum(count - correction, count.new_zeros([]))
    output = (total / count).to(dtype=dtype)
    return output.sqrt() if take_sqrt else output


def var(input, dim=None, unbiased: bool | None = None, *, correction=None,
        keepdim: bool | None = False, dtype=None, mask: Tensor | None = None) -> Tensor:
    """The variance of the elements mask selects, over dim (nan where none is)."""
    return _std_var(input, dim, unbiased, correction_opt=correction, keepdim=keepdim,
                    dtype=dtype, mask=mask, take_sqrt=False)


def std(input, dim=None, unbiased: bool | None = None, *, correction: int | None = None,
        keepdim: bool | None = False, dtype=None, mask: Tensor | None = None) -> Tensor:
    """The standard deviation of the elements mask selects, over dim (nan where none is)."""
    return _std_var(input, dim, unbiased, correction_opt=correction, keepdim=keepdim,
                    dtype=dtype, mask=mask, take_sqrt=True)


def softmax(input, dim: int, *, dtype=None, mask: Tensor | None = None) -> Tensor:
    """Softmax along dim over the elements mask selects (masked-out ones get 0)."""
    dtype = input.dtype if dtype is None else dtype
    d = _canonical_dim(dim, input.ndim)[0]
    return _softmax(_combine_input_and_mask(amax, input, mask), d, dtype)


def log_softmax(input, dim: int, *, dtype=None, mask: Tensor | None = None) -> Tensor:
    """Log-softmax along dim over the elements mask selects (masked-out ones get -inf)."""
    dtype = input.dtype if dtype is None else dtype
    d = _canonical_dim(dim, input.ndim)[0]
    return _log_softmax(_combine_input_and_mask(amax, input, mask), d, dtype)


def softmin(input, dim: int, *, dtype=None, mask: Tensor | None = None) -> Tensor:
    """Softmin along dim over the elements mask selects (masked-out ones get 0)."""
    dtype = input.dtype if dtype is None else dtype
    d = _canonical_dim(dim, input.ndim)[0]
    return _softmax(-_combine_input_and_mask(amin, input, mask), d, dtype)


def normalize(input, ord: float, dim: int, *, eps: float = 1e-12, dtype=None,
              mask: Tensor | None = None) -> Tensor:
    """input divided by its masked ord-norm along dim (at least eps); masked-out elements
    become 0."""
    dtype = input.dtype if dtype is None else dtype
    combined = _combine_input_and_mask(sum, input, mask)
    norms = norm(input, ord, dim, keepdim=True, dtype=dtype, mask=mask)
    return combined / maximum(norms, norms.new_full([], eps))

