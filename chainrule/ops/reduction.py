"""Reductions: sums and means, products, extrema, statistics, norms, scans, sorting and selection.

Most rules have one shape: the gradient is the output's gradient, broadcast back over the reduced
dims, times a weight of the input (``_kept(g) * w``), and the tangent is ``(t * w).sum(dim)``.
Ops that select elements (max over a dim, sort, topk, median, ...) route the gradient to the
selected positions with ``select_along_dim_backward`` (a scatter along one dim).
"""

from __future__ import annotations

import math
import warnings

from .. import return_types
from .._backend import as_dtype, xp
from .._batching import batch_dims, materialize, physical
from .._dispatch import apply, apply_inplace
from .._meta import array_of
from .._threads import reduction
from ..autograd.grad_mode import is_grad_enabled
from ..tensor import Tensor
from . import _tie_order
from ._registry import defop
from ._shapes import normalize_dim, normalize_dims
from .elementwise import _C_NAMES, _KERNEL_NAMES, _unsupported, isnan, sign, where

_inf = math.inf

# ---- helpers -------------------------------------------------------------------------------------


def _dims(input, dim, name: str) -> tuple[int, ...]:
    """``dim`` (None, an int, a tuple or list; empty means all, as in PyTorch) as a tuple of
    dims; a 0-d tensor has none."""
    ndim = input._data.ndim
    if isinstance(dim, (list, tuple)):
        dim = tuple(dim) or None
    dims = normalize_dims(dim, ndim, name)
    return () if ndim == 0 else dims


def _dim(input, dim: int, name: str) -> int:
    return normalize_dim(dim, input._data.ndim, name)


def _kept_shape(shape: tuple, dim: tuple) -> tuple:
    return tuple(1 if i in dim else s for i, s in enumerate(shape))


def _sum_over(x, dim, keepdim: bool):
    """``x`` summed over the op's ``dim``: () reduces nothing here (a 0-d example under vmap),
    though it means all dims to sum()."""
    return x.sum(dim, keepdim=keepdim) if dim != () else x


def _kept(g, input_shape: tuple, dim, keepdim: bool):
    """A reduced tensor reshaped so it broadcasts against the input (the reduced dims as 1)."""
    if keepdim or g is None:
        return g
    dim = (dim,) if isinstance(dim, int) else dim
    return g.reshape(_kept_shape(input_shape, dim))


def _unreduce(g, input_shape, dim, keepdim):
    """Broadcast a reduced gradient back over the reduced dims."""
    return _kept(g, input_shape, dim, keepdim).expand(input_shape)


def _count(shape: tuple, dim) -> int:
    return math.prod(shape[d] for d in ((dim,) if isinstance(dim, int) else dim))


def _const(array) -> Tensor:
    return Tensor._wrap(array_of(array), None, 0)


def _positions(shape: tuple, dim: int):
    """0, 1, ... along ``dim``, shaped to broadcast against an array of ``shape``."""
    return xp.arange(shape[dim]).reshape((-1,) + (1,) * (len(shape) - dim - 1))


def _int_to_long(input, dtype):
    """PyTorch's sum/prod/cumsum result dtype: ``dtype`` if given, int64 for integers and bool."""
    if dtype is not None:
        target = as_dtype(dtype)
        if target.np.kind not in "fcV" and input._requires_grad and is_grad_enabled():
            raise RuntimeError(f"Autograd not support dtype: {_KERNEL_NAMES[target.name]}")
        return input.to(target)
    if input._data.dtype.kind in "biu" and input._data.dtype != xp.int64:
        return input.to(xp.int64)
    return input


def _require_float(input, name: str, what: str = "floating point") -> None:
    if input._data.dtype.kind not in "fcV":  # "V": bfloat16 and float8 (ml_dtypes)
        raise RuntimeError(f"{name}(): expected a {what} input, but got "
                           f"{as_dtype(input._data.dtype).name}; convert with .float()")


_RESULTS: dict = {}


def result(name: str, fields: str, values) -> tuple:
    """``values`` as ``torch.return_types.<name>``, whose fields are ``fields``."""
    cls = _RESULTS.get(name)
    if cls is None:
        cls = getattr(return_types, name)
        assert cls.__match_args__ == tuple(fields.split()), (name, fields)
        _RESULTS[name] = cls
    return cls(values)


# ---- gather / scatter along one dim (the gradient of selecting reductions) -----------------------


def _select_along(input, indices, dim):
    return xp.take_along_axis(input, indices, axis=dim)


def _select_along_backward(grad, indices, dim, shape, accumulate):
    out = xp.zeros(shape, dtype=grad.dtype)
    if not accumulate:
        xp.put_along_axis(out, indices, grad, axis=dim)
        return out
    index = list(xp.ogrid[tuple(slice(s) for s in grad.shape)])
    index[dim] = indices
    xp.add.at(out, tuple(index), grad)
    return out


def _select_batch(op, args, flags, size, params):
    # Both tensors get the batch (an unbatched one as a broadcast view: no copy), so that the
    # forward and the gradient at outer levels see matching shapes.
    args = [a if f else materialize(a, size) for a, f in zip(args, flags)]
    params = dict(params, dim=params["dim"] + 1)
    if "shape" in params:
        params["shape"] = (size,) + tuple(params["shape"])
    return apply(op, *args, **params)


# The indices are an input (without gradient) rather than a parameter, so that under vmap they
# can be batched like the values they index.
SELECT_ALONG_DIM = defop(
    "select_along_dim",
    _select_along,
    ("input", "indices"),
    (lambda g, input_shape, indices, dim: apply(
        SELECT_ALONG_DIM_BACKWARD, g, indices, dim=dim, shape=input_shape, accumulate=True),
     None),
    jvp="linear",
    batch=_select_batch,
)
SELECT_ALONG_DIM_BACKWARD = defop(
    "select_along_dim_backward",
    _select_along_backward,
    ("grad", "indices"),
    (lambda g, indices, dim: apply(SELECT_ALONG_DIM, g, indices, dim=dim), None),
    jvp="linear",
    batch=_select_batch,
)


def _scatter(g, indices, dim: int, shape: tuple, keepdim: bool = True, accumulate: bool = False):
    """``g`` placed at ``indices`` along ``dim`` of zeros of ``shape``."""
    if g is None:
        return None
    if not shape:
        return g.reshape(())
    if not keepdim:
        g, indices = g.unsqueeze(dim), indices.unsqueeze(dim)
    return apply(SELECT_ALONG_DIM_BACKWARD, g, indices, dim=dim, shape=shape,
                 accumulate=accumulate)


def _gather(t, indices, dim: int, keepdim: bool = True):
    """The elements of ``t`` at ``indices`` along ``dim`` (the tangent of a selection)."""
    if t is None:
        return None
    if not t._data.ndim:
        return t.reshape(indices.shape)
    if keepdim:
        return apply(SELECT_ALONG_DIM, t, indices, dim=dim)
    return apply(SELECT_ALONG_DIM, t, indices.unsqueeze(dim), dim=dim).squeeze(dim)


def _select_grad(grads, input_shape, out, dim, keepdim):
    return _scatter(grads[0], out[1], dim, input_shape, keepdim)


def _select_jvp(t_input, out, dim, keepdim):
    return _gather(t_input, out[1], dim, keepdim), None


def _on_vector(forward):
    """Run a forward over ``dim`` of a 0-d array as if it were a 1-element vector."""

    def run(input, dim, *args, **kwargs):
        if input.ndim:
            return forward(input, dim, *args, **kwargs)
        return tuple(a.reshape(()) for a in forward(input.reshape(1), 0, *args, **kwargs))

    return run


# ---- batching rules (vmap) ----------------------------------------------------------------------

_over_dims = batch_dims("dim")  # ops over a tuple of dims (0-d examples: the empty tuple)


def _along_dim(op, args, flags, size, params):
    """Ops along the one int ``dim`` of their one input: the dim moves past the batch, and 0-d
    examples (whose results are 0-d) run as vectors of one element."""
    x = args[0]
    ndim = x._data.ndim - 1
    if ndim:
        dim = params["dim"]
        return apply(op, x, **dict(params, dim=(dim + ndim if dim < 0 else dim) + 1))
    out = apply(op, x.reshape(size, 1), **dict(params, dim=1))
    return tuple(o.reshape(size) for o in out) if op.n_outputs > 1 else out.reshape(size)


_along_dim.kind = "dims"


def _whole(record, **fixed):
    """A reduction of all elements: ``record`` over every dim but the batch."""

    def rule(op, args, flags, size, params):
        x = args[0]
        return apply(record, x, dim=tuple(range(1, x._data.ndim)), **fixed)

    rule.kind = "dims"
    return rule


# ---- sum and mean -----------------------------------------------------------------------------


# The sum and product kernels accumulate in the input's dtype, as PyTorch's: NumPy's would widen
# small integers (and bool) to int64.
def _sum_dim(input, dim, keepdim):
    return xp.sum(input, axis=dim, keepdims=keepdim, dtype=input.dtype)


def _sum(input):
    return xp.sum(input, dtype=input.dtype)


def _mean_dim(input, dim, keepdim):
    if _count(input.shape, dim) == 0:  # nan, as PyTorch's, without NumPy's empty-slice warning
        return xp.sum(input, axis=dim, keepdims=keepdim) / 0
    return xp.mean(input, axis=dim, keepdims=keepdim)


def _mean(input):
    return _mean_dim(input, tuple(range(input.ndim)), False)


SUM_DIM = defop(
    "sum_dim", reduction(_sum_dim, "sum"), ("input",), (_unreduce,),
    backward_name="SumBackward1", jvp="linear", batch=_over_dims,
)
SUM = defop(
    "sum", reduction(_sum, "sum"), ("input",), (lambda g, input_shape: g.expand(input_shape),),
    jvp="linear", batch=_whole(SUM_DIM, keepdim=False),
)
MEAN_DIM = defop(
    "mean_dim",
    reduction(_mean_dim, "mean"),
    ("input",),
    (
        lambda g, input_shape, dim, keepdim: (
            _unreduce(g, input_shape, dim, keepdim) / math.prod(input_shape[d] for d in dim)
        ),
    ),
    backward_name="MeanBackward1",
    jvp="linear",
    batch=_over_dims,
)
MEAN = defop(
    "mean",
    reduction(_mean, "mean"),
    ("input",),
    (lambda g, input_shape: g.expand(input_shape) / math.prod(input_shape),),
    jvp="linear",
    batch=_whole(MEAN_DIM, keepdim=False),
)


def sum(input, dim=None, keepdim: bool = False, *, dtype=None) -> Tensor:
    """Sum of all elements, or over ``dim`` (an int or a tuple)."""
    input = _int_to_long(input, dtype)
    if dim is None:
        return apply(SUM, input)
    return apply(SUM_DIM, input, dim=_dims(input, dim, "sum"), keepdim=keepdim)


def mean(input, dim=None, keepdim: bool = False, *, dtype=None) -> Tensor:
    """Mean of all elements, or over ``dim`` (an int or a tuple)."""
    if dtype is not None:
        input = input.to(dtype)
    if input._data.dtype.kind not in "fcV":
        raise RuntimeError(
            f"mean(): could not infer output dtype. {'Input' if dtype is None else 'Optional'} "
            "dtype must be either a floating point or complex dtype. Got: "
            f"{_KERNEL_NAMES[input.dtype.name]}")
    if dim is None:
        return apply(MEAN, input)
    return apply(MEAN_DIM, input, dim=_dims(input, dim, "mean"), keepdim=keepdim)


# ---- product ------------------------------------------------------------------------------------


def _prod_others(input, out, dim: int):
    """d prod(x) / d x_i: the product of the other elements along ``dim``.

    Without zeros it is out / x. With zeros it is built from the product of the non-zero
    elements and the (zero) values of the zero ones, so that its own derivative is also right:
    with one zero at k, the others get prod(nonzeros) * x_k / x_i; with two zeros, each gets
    the product of the non-zeros times the other zero; with more, everything is zero.
    """
    zero = input == 0
    if not physical(zero).any():  # no zero in any example
        return out / input
    nonzero = where(zero, 1.0, input)
    count = zero.sum(dim, keepdim=True)
    p = prod(nonzero, dim, keepdim=True)
    z = where(zero, input, 0.0).sum(dim, keepdim=True)  # the zero if there is one (value 0)
    one = where(zero, p, p * z / nonzero)
    two = where(zero, p * (z - input), 0.0)
    return where(count == 0, p / nonzero, where(count == 1, one, where(count == 2, two, 0.0)))


def _prod_all_weight(input, out):
    return _prod_others(input.reshape(-1), out.reshape(1), 0).reshape(input.shape)




def _prod_dim_weight(input, out, dim, keepdim):
    if not input._data.ndim:
        return out.new_ones(())
    return _prod_others(input, _kept(out, input.shape, dim, keepdim), dim)


PROD_DIM = defop(
    "prod_dim",
    lambda input, dim, keepdim: xp.prod(input, axis=dim if input.ndim else None, keepdims=keepdim,
                                        dtype=input.dtype),
    ("input",),
    (lambda g, input, out, dim, keepdim: (
        _kept(g, input.shape, dim, keepdim) * _prod_dim_weight(input, out, dim, keepdim)),),
    backward_name="ProdBackward1",
    jvp=lambda t_input, input, out, dim, keepdim: (
        (t_input * _prod_dim_weight(input, out, dim, keepdim)).sum(dim, keepdim=keepdim)),
    batch=_along_dim,
)


def _prod_batch(op, args, flags, size, params):
    return apply(PROD_DIM, args[0].reshape(size, -1), dim=1, keepdim=False)


_prod_batch.kind = "dims"
PROD = defop(
    "prod",
    lambda input: xp.prod(input, dtype=input.dtype),
    ("input",),
    (lambda g, input, out: g * _prod_all_weight(input, out),),
    jvp=lambda t_input, input, out: (t_input * _prod_all_weight(input, out)).sum(),
    batch=_prod_batch,
)


def prod(input, dim=None, keepdim: bool = False, *, dtype=None) -> Tensor:
    """Product of all elements, or over the one dim ``dim``."""
    input = _int_to_long(input, dtype)
    if dim is None:
        return apply(PROD, input)
    if not isinstance(dim, int):
        raise TypeError(f"prod(): argument 'dim' must be an int, not {type(dim).__name__}")
    return apply(PROD_DIM, input, dim=_dim(input, dim, "prod"), keepdim=keepdim)


# ---- extrema ------------------------------------------------------------------------------------


def _ties(input, out, dim, keepdim):
    """Where the input equals the reduced extreme, divided by the number of ties: PyTorch splits
    the gradient of amax/amin/max()/min()/median() evenly among equal extremes."""
    mask = (input == _kept(out, input.shape, dim, keepdim)).to(input.dtype)
    return mask / _sum_over(mask, dim, True)


def _ties_rule(g, input, out, dim, keepdim):
    return _kept(g, input.shape, dim, keepdim) * _ties(input, out, dim, keepdim)


def _ties_jvp(t_input, input, out, dim, keepdim):
    return _sum_over(t_input * _ties(input, out, dim, keepdim), dim, keepdim)


def _whole_ties_rule(g, input, out):
    return _ties_rule(g, input, out, tuple(range(input.ndim)), False)


def _whole_ties_jvp(t_input, input, out):
    return _ties_jvp(t_input, input, out, tuple(range(input.ndim)), False)


def _check_nonempty(input, name: str, error=RuntimeError) -> None:
    if input._data.size == 0:
        raise error(f"{name}(): Expected reduction dim to be specified for input.numel() == 0."
                    + (" Specify the reduction dim with the 'dim' argument."
                       if error is RuntimeError else ""))


def _check_dims_nonempty(input, dims, name: str) -> None:
    """A maximum or minimum over an empty dim has no value (an IndexError, as PyTorch's)."""
    shape = input._data.shape
    if not shape:
        return
    dims = (dims,) if isinstance(dims, int) else dims
    if not dims and input._data.size == 0:
        _check_nonempty(input, name)
    for d in dims:
        if shape[d] == 0:
            raise IndexError(f"{name}(): Expected reduction dim {d} to have non-zero size.")


AMAX = defop(
    "amax",
    lambda input, dim, keepdim: xp.amax(input, axis=dim, keepdims=keepdim),
    ("input",),
    (_ties_rule,),
    jvp=_ties_jvp,
    batch=_over_dims,
)
AMIN = defop(
    "amin",
    lambda input, dim, keepdim: xp.amin(input, axis=dim, keepdims=keepdim),
    ("input",),
    (_ties_rule,),
    jvp=_ties_jvp,
    batch=_over_dims,
)
MAX = defop("max", xp.max, ("input",), (_whole_ties_rule,), backward_name="MaxBackward1",
            jvp=_whole_ties_jvp, batch=_whole(AMAX, keepdim=False))
MIN = defop("min", xp.min, ("input",), (_whole_ties_rule,), backward_name="MinBackward1",
            jvp=_whole_ties_jvp, batch=_whole(AMIN, keepdim=False))


@_on_vector
def _max_dim(input, dim, keepdim):
    indices = xp.argmax(input, axis=dim, keepdims=True)
    values = xp.take_along_axis(input, indices, axis=dim)
    if not keepdim:
        values, indices = values.squeeze(dim), indices.squeeze(dim)
    return values, indices


@_on_vector
def _min_dim(input, dim, keepdim):
    indices = xp.argmin(input, axis=dim, keepdims=True)
    values = xp.take_along_axis(input, indices, axis=dim)
    if not keepdim:
        values, indices = values.squeeze(dim), indices.squeeze(dim)
    return values, indices


MAX_DIM = defop("max_dim", _max_dim, ("input",), (_select_grad,), backward_name="MaxBackward0",
                n_outputs=2, jvp=_select_jvp, batch=_along_dim)
MIN_DIM = defop("min_dim", _min_dim, ("input",), (_select_grad,), backward_name="MinBackward0",
                n_outputs=2, jvp=_select_jvp, batch=_along_dim)


def amax(input, dim=(), keepdim: bool = False) -> Tensor:
    """Maximum over ``dim`` (all dims for ``()``); the gradient is split evenly among ties."""
    dims = _dims(input, dim, "amax")
    _check_dims_nonempty(input, dims if dim not in ((), None, []) else (), "amax")
    return apply(AMAX, input, dim=dims, keepdim=keepdim)


def amin(input, dim=(), keepdim: bool = False) -> Tensor:
    """Minimum over ``dim`` (all dims for ``()``); the gradient is split evenly among ties."""
    dims = _dims(input, dim, "amin")
    _check_dims_nonempty(input, dims if dim not in ((), None, []) else (), "amin")
    return apply(AMIN, input, dim=dims, keepdim=keepdim)


def _extreme(name: str, whole, over_dim, binary: str):
    def extreme(input, dim=None, keepdim: bool = False, *, other=None):
        if isinstance(dim, Tensor) or other is not None:
            from . import elementwise

            return getattr(elementwise, binary)(input, dim if other is None else other)
        if dim is None:
            _check_nonempty(input, name)
            return apply(whole, input)
        dim = _dim(input, dim, name)
        _check_dims_nonempty(input, dim, name)
        values, indices = apply(over_dim, input, dim=dim, keepdim=keepdim)
        return result(name, "values indices", (values, indices))

    extreme.__name__ = name
    return extreme


max = _extreme("max", MAX, MAX_DIM, "maximum")
max.__doc__ = "Largest element; with ``dim``, (values, indices) of the largest along it."
min = _extreme("min", MIN, MIN_DIM, "minimum")
min.__doc__ = "Smallest element; with ``dim``, (values, indices) of the smallest along it."


def _argext(fn):
    def forward(input, dim, keepdim):
        if dim is None:
            out = fn(input, keepdims=keepdim)
            return out.reshape((1,) * input.ndim) if keepdim else out
        return fn(input, axis=dim if input.ndim else None, keepdims=keepdim)

    return forward


def _argext_batch(op, args, flags, size, params):
    """With a dim, along it; without, over the flattened example."""
    if params["dim"] is not None:
        return _along_dim(op, args, flags, size, params)
    x = args[0]
    out = apply(op, x.reshape(size, -1), dim=1, keepdim=False)
    return out.reshape((size,) + (1,) * (x._data.ndim - 1)) if params["keepdim"] else out


_argext_batch.kind = "dims"
ARGMAX = defop("argmax", _argext(xp.argmax), ("input",), (None,), differentiable=False,
               batch=_argext_batch)
ARGMIN = defop("argmin", _argext(xp.argmin), ("input",), (None,), differentiable=False,
               batch=_argext_batch)


def argmax(input, dim: int | None = None, keepdim: bool = False) -> Tensor:
    """Index of the largest element (of the flattened tensor when ``dim`` is None)."""
    if dim is not None:
        dim = _dim(input, dim, "argmax")
        _check_dims_nonempty(input, dim, "argmax")
    else:
        _check_nonempty(input, "argmax", IndexError)
    return apply(ARGMAX, input, dim=dim, keepdim=keepdim)


def argmin(input, dim: int | None = None, keepdim: bool = False) -> Tensor:
    """Index of the smallest element (of the flattened tensor when ``dim`` is None)."""
    if dim is not None:
        dim = _dim(input, dim, "argmin")
        _check_dims_nonempty(input, dim, "argmin")
    else:
        _check_nonempty(input, "argmin", IndexError)
    return apply(ARGMIN, input, dim=dim, keepdim=keepdim)


def _logical(fn):
    def forward(input, dim, keepdim):
        out = fn(input, axis=dim, keepdims=keepdim)
        return out.astype(xp.uint8) if input.dtype == xp.uint8 else out

    return forward


ALL = defop("all", _logical(xp.all), ("input",), (None,), differentiable=False,
            batch=_over_dims)
ANY = defop("any", _logical(xp.any), ("input",), (None,), differentiable=False,
            batch=_over_dims)


def all(input, dim=None, keepdim: bool = False) -> Tensor:
    """True if every element (along ``dim``) is non-zero."""
    return apply(ALL, input, dim=_dims(input, dim, "all"), keepdim=keepdim)


def any(input, dim=None, keepdim: bool = False) -> Tensor:
    """True if any element (along ``dim``) is non-zero."""
    return apply(ANY, input, dim=_dims(input, dim, "any"), keepdim=keepdim)


# ---- variance and standard deviation -------------------------------------------------------------


def _var(input, dim, correction, keepdim):
    if _count(input.shape, dim) - correction > 0:
        return xp.var(input, axis=dim, ddof=correction, keepdims=keepdim)
    # No degrees of freedom: the squared deviations over 0 (inf, or nan), as PyTorch's; NumPy
    # would warn. Kernels run with NumPy's floating-point warnings off (chainrule._quiet).
    centered = input - _mean_dim(input, dim, True)
    return xp.sum((centered * centered.conj()).real, axis=dim, keepdims=keepdim) / 0


def _std(input, dim, correction, keepdim):
    return xp.sqrt(_var(input, dim, correction, keepdim))


def _scale(input, dim, correction) -> float:
    """1 / (N - correction), inf or nan where PyTorch's is."""
    with xp.errstate(divide="ignore", invalid="ignore"):
        return float(xp.float64(1.0) / (_count(input.shape, dim) - correction))


def _centered(input, dim):
    return input - input.mean(dim, keepdim=True)


def _var_weight(input, dim, correction):
    # d var / d x = 2 (x - mean) / (N - correction)
    return _centered(input, dim) * (2 * _scale(input, dim, correction))


def _std_weight(input, out, dim, correction, keepdim):
    # d std / d x = (x - mean) / ((N - correction) std), taken as 0 where std == 0 (as PyTorch)
    out = _kept(out, input.shape, dim, keepdim)
    zero = out == 0
    return where(zero, 0.0, _centered(input, dim) * _scale(input, dim, correction)
                  / where(zero, 1.0, out))


def _along(tangent, weight):
    """The tangent of a real function whose VJP is ``g * weight``: ``Re(conj(weight) tangent)``
    for a complex input."""
    return (tangent * weight.conj()).real if weight.is_complex() else tangent * weight


def _mean_part(g, input, dim, keepdim):
    return _unreduce(g, input.shape, dim, keepdim) / _count(input.shape, dim)


VAR = defop(
    "var",
    _var,
    ("input",),
    (lambda g, input, dim, correction, keepdim: (
        _kept(g, input.shape, dim, keepdim) * _var_weight(input, dim, correction)),),
    jvp=lambda t_input, input, dim, correction, keepdim: (
        _along(t_input, _var_weight(input, dim, correction)).sum(dim, keepdim=keepdim)),
    batch=_over_dims,
)
STD = defop(
    "std",
    _std,
    ("input",),
    (lambda g, input, out, dim, correction, keepdim: (
        _kept(g, input.shape, dim, keepdim) * _std_weight(input, out, dim, correction, keepdim)),),
    jvp=lambda t_input, input, out, dim, correction, keepdim: (
        _along(t_input, _std_weight(input, out, dim, correction, keepdim)).sum(
            dim, keepdim=keepdim)),
    batch=_over_dims,
)


def _var_mean_rule(grads, input, dim, correction, keepdim):
    gv, gm = grads
    total = None
    if gv is not None:
        total = _kept(gv, input.shape, dim, keepdim) * _var_weight(input, dim, correction)
    if gm is not None:
        term = _mean_part(gm, input, dim, keepdim)
        total = term if total is None else total + term
    return total


def _std_mean_rule(grads, input, out, dim, correction, keepdim):
    gs, gm = grads
    total = None
    if gs is not None:
        total = _kept(gs, input.shape, dim, keepdim) * _std_weight(
            input, out[0], dim, correction, keepdim)
    if gm is not None:
        term = _mean_part(gm, input, dim, keepdim)
        total = term if total is None else total + term
    return total


VAR_MEAN = defop(
    "var_mean",
    lambda input, dim, correction, keepdim: (_var(input, dim, correction, keepdim),
                                             _mean_dim(input, dim, keepdim)),
    ("input",),
    (_var_mean_rule,),
    n_outputs=2,
    holomorphic=False,  # the variance's part is written for complex inputs
    jvp=lambda t_input, input, dim, correction, keepdim: (
        _along(t_input, _var_weight(input, dim, correction)).sum(dim, keepdim=keepdim),
        t_input.mean(dim, keepdim=keepdim)),
    batch=_over_dims,
)
STD_MEAN = defop(
    "std_mean",
    lambda input, dim, correction, keepdim: (_std(input, dim, correction, keepdim),
                                             _mean_dim(input, dim, keepdim)),
    ("input",),
    (_std_mean_rule,),
    n_outputs=2,
    holomorphic=False,  # the variance's part is written for complex inputs
    jvp=lambda t_input, input, out, dim, correction, keepdim: (
        _along(t_input, _std_weight(input, out[0], dim, correction, keepdim)).sum(
            dim, keepdim=keepdim),
        t_input.mean(dim, keepdim=keepdim)),
    batch=_over_dims,
)


def _var_args(name, input, dim, unbiased, keepdim, correction):
    """PyTorch's var/std overloads: (dim, unbiased, keepdim), (unbiased) and correction=."""
    if isinstance(dim, bool):  # var(input, unbiased)
        dim, unbiased = None, dim
    if unbiased is not None and correction is not None:
        raise RuntimeError(f"{name}: cannot specify both 'unbiased' and 'correction'")
    if correction is None:
        correction = 1 if unbiased is None or unbiased else 0
    if input._data.dtype.kind not in "fcV":
        raise RuntimeError(f"{name}(): std and var only support floating point and complex "
                           f"dtypes, got {as_dtype(input._data.dtype).name}")
    dims = _dims(input, dim, name)
    if _count(input.shape, dims) - correction <= 0:
        warnings.warn(f"{name}(): degrees of freedom is <= 0. Correction should be strictly less "
                      "than the reduction factor (input numel divided by output numel).",
                      UserWarning, stacklevel=3)
    return dict(dim=dims, correction=correction, keepdim=keepdim)


def var(input, dim=None, unbiased=None, keepdim: bool = False, *, correction=None) -> Tensor:
    """Variance over ``dim`` with Bessel's ``correction`` (default 1)."""
    return apply(VAR, input, **_var_args("var", input, dim, unbiased, keepdim, correction))


def std(input, dim=None, unbiased=None, keepdim: bool = False, *, correction=None) -> Tensor:
    """Standard deviation over ``dim`` with Bessel's ``correction`` (default 1)."""
    return apply(STD, input, **_var_args("std", input, dim, unbiased, keepdim, correction))


def var_mean(input, dim=None, unbiased=None, keepdim: bool = False, *, correction=None) -> tuple:
    """(variance, mean) over ``dim``."""
    return apply(VAR_MEAN, input,
                 **_var_args("var_mean", input, dim, unbiased, keepdim, correction))


def std_mean(input, dim=None, unbiased=None, keepdim: bool = False, *, correction=None) -> tuple:
    """(standard deviation, mean) over ``dim``."""
    return apply(STD_MEAN, input,
                 **_var_args("std_mean", input, dim, unbiased, keepdim, correction))


# ---- norms and logsumexp ----------------------------------------------------------------------


def _vector_norm(input, ord, dim, keepdim):
    a = xp.abs(input)
    if ord == 2:
        return xp.sqrt(xp.sum(a * a, axis=dim, keepdims=keepdim))
    if ord == 1:
        return xp.sum(a, axis=dim, keepdims=keepdim)
    if ord == _inf:
        return xp.max(a, axis=dim, keepdims=keepdim)
    if ord == -_inf:
        return xp.min(a, axis=dim, keepdims=keepdim)
    if ord == 0:
        return xp.sum(a != 0, axis=dim, keepdims=keepdim).astype(a.dtype)
    with xp.errstate(divide="ignore"):
        return xp.sum(a**ord, axis=dim, keepdims=keepdim) ** (1.0 / ord)


def _unit(input):
    """sign(input); for complex input, input / |input| (0 at 0), as sgn."""
    if not input.is_complex():
        return sign(input)
    size = input.abs()
    zero = size == 0
    return where(zero, 0.0, input / where(zero, 1.0, size))


def _norm_weight(input, out, ord, dim, keepdim):
    """d ||x||_ord / d x (PyTorch's conventions: 0 where the norm is 0; ties of the inf-norms
    share the gradient evenly)."""
    if ord == 0:
        return input.new_zeros(input.shape)
    unit = _unit(input)
    if ord == 1:
        return unit
    out = _kept(out, input.shape, dim, keepdim)
    if ord in (_inf, -_inf):
        mask = input.abs() == out
        return unit * mask / _sum_over(mask, dim, True)
    zero = out == 0
    safe = where(zero, 1.0, out)
    if ord == 2:
        return where(zero, 0.0, input / safe)
    return where(zero, 0.0, input * input.abs() ** (ord - 2) / safe ** (ord - 1))


LINALG_VECTOR_NORM = defop(
    "linalg_vector_norm",
    _vector_norm,
    ("input",),
    (lambda g, input, out, ord, dim, keepdim: (
        _kept(g, input.shape, dim, keepdim) * _norm_weight(input, out, ord, dim, keepdim)),),
    float_out=True,
    jvp=lambda t_input, input, out, ord, dim, keepdim: _sum_over(
        _along(t_input, _norm_weight(input, out, ord, dim, keepdim)), dim, keepdim),
    batch=_over_dims,
)


def vector_norm(x, ord=2, dim=None, keepdim: bool = False, *, dtype=None) -> Tensor:
    """The ``ord``-norm of ``x`` as a vector (flattened, or over ``dim``)."""
    if dtype is not None:
        x = x.to(dtype)
    if x._data.dtype.kind not in "fcV":
        raise RuntimeError("linalg.vector_norm: Expected a floating point or complex tensor as "
                           f"input. Got {as_dtype(x._data.dtype).name}")
    if isinstance(ord, str) or isinstance(ord, complex):
        raise RuntimeError(f"linalg.vector_norm: ord must be a number, got {ord!r}")
    dims = _dims(x, dim, "linalg.vector_norm")
    if ord < 0 and x._data.size == 0:
        raise RuntimeError("linalg.vector_norm cannot compute the {ord} norm on an empty tensor "
                           "because the operation does not have an identity")
    return apply(LINALG_VECTOR_NORM, x, ord=float(ord), dim=dims, keepdim=keepdim)


def _logsumexp(input, dim, keepdim):
    # complex: shifted by the largest real part, so the result's imaginary part is log's
    # principal value (as PyTorch's)
    m = xp.max(input.real if input.dtype.kind == "c" else input, axis=dim, keepdims=True,
               initial=-_inf)
    m = xp.where(xp.isfinite(m), m, 0).astype(input.dtype, copy=False)  # all -inf, inf or nan
    with xp.errstate(divide="ignore"):
        out = xp.log(xp.sum(xp.exp(input - m), axis=dim, keepdims=True)) + m
    return out if keepdim else out.squeeze(dim)


def _softmax_weight(input, out, dim, keepdim):
    return (input - _kept(out, input.shape, dim, keepdim)).exp()


LOGSUMEXP = defop(
    "logsumexp",
    _logsumexp,
    ("input",),
    (lambda g, input, out, dim, keepdim: (
        _kept(g, input.shape, dim, keepdim) * _softmax_weight(input, out, dim, keepdim)),),
    float_out=True,
    jvp=lambda t_input, input, out, dim, keepdim: _sum_over(
        t_input * _softmax_weight(input, out, dim, keepdim), dim, keepdim),
    batch=_over_dims,
)


def logsumexp(input, dim, keepdim: bool = False) -> Tensor:
    """log(sum(exp(input))) over ``dim``, computed without overflow."""
    return apply(LOGSUMEXP, input, dim=_dims(input, dim, "logsumexp"), keepdim=keepdim)


# ---- scans --------------------------------------------------------------------------------------


def _scan_dim(input, dim):
    return _dim(input, dim, "cumsum") if input._data.ndim else 0


def _cumsum(input, dim):
    return xp.cumsum(input, axis=dim, dtype=input.dtype) if input.ndim else input.copy()


def _rcumsum(g, dim: int):
    """Sums from each position to the end along ``dim``."""
    return apply(CUMSUM_REVERSE, g, dim=dim)


# cumsum and its reverse are each other's transpose.
CUMSUM = defop("cumsum", _cumsum, ("input",), (_rcumsum,), jvp="linear", batch=_along_dim)
CUMSUM_REVERSE = defop(
    "cumsum_reverse",
    lambda input, dim: xp.flip(_cumsum(xp.flip(input, dim), dim), dim) if input.ndim
    else input.copy(),
    ("input",),
    (lambda g, dim: apply(CUMSUM, g, dim=dim),),
    jvp="linear",
    batch=_along_dim,
)


def _first_zero(input, dim):
    """Per slice: positions along ``dim``, and the position of the first zero (n if none)."""
    zero = input == 0
    first = where(zero.any(dim, keepdim=True), zero.argmax(dim, keepdim=True), input.shape[dim])
    return _const(_positions(input.shape, dim)), first


def _cumprod_grad(g, input, out, dim):
    # No zeros: d out_j / d x_i = out_j / x_i for i <= j, so grad = reverse_cumsum(g * out) / x.
    # With the first zero of a slice at k: that formula still holds before k (out_j = 0 from k
    # on). With y = x but y_k = 1: at k the gradient is sum_{j >= k} g_j cumprod(y)_j; after k it
    # is x_k times the gradient of cumprod(y) (every product there contains x_k): zero, but with
    # the right derivative, which is needed (and computed) only when building a graph.
    if not input._data.ndim:
        return g
    if not (physical(input) == 0).any():  # no zero in any example
        return _rcumsum(g * out, dim) / input
    pos, first = _first_zero(input, dim)
    before, at = pos < first, pos == first
    y = where(at, 1.0, input)
    y_out = y.cumprod(dim)
    g_before = _rcumsum(g * out, dim) / where(before, input, 1.0)
    g_at = (g * y_out * (pos >= first)).sum(dim, keepdim=True)
    g_after = 0.0
    if is_grad_enabled():
        x_k = where(at, input, 0.0).sum(dim, keepdim=True)
        g_after = x_k * _cumprod_grad(g, y, y_out, dim)
    return where(before, g_before, where(at, g_at, g_after))


def _cumprod_jvp(t_input, input, out, dim):
    if not input._data.ndim:
        return t_input
    if not (physical(input) == 0).any():
        return out * (t_input / input).cumsum(dim)
    pos, first = _first_zero(input, dim)
    before, at = pos < first, pos == first
    t_before = out * (t_input / where(before, input, 1.0)).cumsum(dim)
    t_at = (t_input * at).sum(dim, keepdim=True)
    return where(before, t_before, t_at * where(at, 1.0, input).cumprod(dim))


CUMPROD = defop(
    "cumprod",
    lambda input, dim: xp.cumprod(input, axis=dim, dtype=input.dtype) if input.ndim
    else input.copy(),
    ("input",),
    (_cumprod_grad,),
    jvp=_cumprod_jvp,
    batch=_along_dim,
)


def _scan_dtype(name: str, input, dtype) -> None:
    """PyTorch's scan kernels have no bool form (sums and products of bools are int64)."""
    if dtype is not None and as_dtype(dtype).name == "bool":
        raise _unsupported(f"{name}_out_cpu", as_dtype(dtype))


def cumsum(input, dim: int, *, dtype=None) -> Tensor:
    """Cumulative sums along ``dim``."""
    _scan_dtype("cumsum", input, dtype)
    input = _int_to_long(input, dtype)
    return apply(CUMSUM, input, dim=_scan_dim(input, dim))


def cumprod(input, dim: int, *, dtype=None) -> Tensor:
    """Cumulative products along ``dim``."""
    _scan_dtype("cumprod", input, dtype)
    input = _int_to_long(input, dtype)
    return apply(CUMPROD, input, dim=_scan_dim(input, dim))


def _cumext(accumulate, better):
    @_on_vector
    def forward(input, dim):
        values = accumulate(input, axis=dim)
        pos = xp.broadcast_to(_positions(input.shape, dim), input.shape)
        prev = xp.concatenate([xp.take(values, [0], axis=dim),
                               xp.take(values, range(input.shape[dim] - 1), axis=dim)], axis=dim)
        # a new extreme (ties included, and NaN, as PyTorch) moves the index forward
        moved = better(input, prev)
        if input.dtype.kind in "fc":
            moved |= xp.isnan(input)
        indices = xp.maximum.accumulate(xp.where(moved, pos, 0), axis=dim)
        return values, indices

    return forward


def _cumext_record(name: str, accumulate, compare):
    """cummax / cummin: the gradient goes to the position each running extreme came from."""
    return defop(
        name,
        _cumext(accumulate, compare),
        ("input",),
        (lambda grads, input_shape, out, dim: _scatter(grads[0], out[1], dim, input_shape,
                                                        accumulate=True),),
        n_outputs=2,
        jvp=lambda t_input, out, dim: (_gather(t_input, out[1], dim), None),
        batch=_along_dim,
    )


CUMMAX = _cumext_record("cummax", xp.maximum.accumulate, xp.greater_equal)
CUMMIN = _cumext_record("cummin", xp.minimum.accumulate, xp.less_equal)


def cummax(input, dim: int) -> tuple:
    """(values, indices) of the running maximum along ``dim``."""
    values, indices = apply(CUMMAX, input, dim=_scan_dim(input, dim))
    return result("cummax", "values indices", (values, indices))


def cummin(input, dim: int) -> tuple:
    """(values, indices) of the running minimum along ``dim``."""
    values, indices = apply(CUMMIN, input, dim=_scan_dim(input, dim))
    return result("cummin", "values indices", (values, indices))


# ---- sorting and order statistics ---------------------------------------------------------------


def _argsort(input, dim: int, descending: bool):
    """Stable ascending or descending order along ``dim`` (NaN counts as the largest)."""
    if not descending:
        return xp.argsort(input, axis=dim, kind="stable")
    # Ascending stable order of the reversed input, reversed back: equal elements keep their
    # original order, and NaNs come first, as in PyTorch.
    n = input.shape[dim]
    order = xp.argsort(xp.flip(input, dim), axis=dim, kind="stable")
    return (n - 1) - xp.flip(order, dim)


@_on_vector
def _sort(input, dim, descending):
    indices = _argsort(input, dim, descending)
    return xp.take_along_axis(input, indices, axis=dim), indices


def _sort_record(name: str, backward_name: str):
    return defop(name, _sort, ("input",), (lambda grads, input_shape, out, dim: _scatter(
        grads[0], out[1], dim, input_shape),), n_outputs=2, backward_name=backward_name,
        jvp=lambda t_input, out, dim: (_gather(t_input, out[1], dim), None), batch=_along_dim)


SORT = _sort_record("sort", "SortBackward0")
SORT_STABLE = _sort_record("sort_stable", "SortBackward1")  # PyTorch's sort(stable=...)


def _argsort_forward(input, dim, descending):
    return _argsort(input, dim, descending) if input.ndim else xp.zeros((), xp.int64)


ARGSORT = defop("argsort", _argsort_forward, ("input",), (None,), differentiable=False,
                batch=_along_dim)


def _sort_dim(input, dim) -> int:
    return _dim(input, dim, "sort") if input._data.ndim else 0


def sort(input, dim: int = -1, descending: bool = False, stable: bool | None = None) -> tuple:
    """(values, indices) sorted along ``dim``; always stable (equal elements keep their order)."""
    record = SORT if stable is None else SORT_STABLE
    values, indices = apply(record, input, dim=_sort_dim(input, dim), descending=descending)
    return result("sort", "values indices", (values, indices))


def argsort(input, dim: int = -1, descending: bool = False, stable: bool = False) -> Tensor:
    """The indices that sort ``input`` along ``dim``."""
    return apply(ARGSORT, input, dim=_sort_dim(input, dim), descending=descending)


def _rows(input, dim):
    """input's slices along ``dim`` as the rows of a 2-d array."""
    x = xp.moveaxis(input, dim, -1)
    return x.reshape(-1, x.shape[-1])


def _from_rows(rows, input, dim):
    shape = list(input.shape)
    del shape[dim]
    return xp.moveaxis(rows.reshape(tuple(shape) + rows.shape[1:]), -1, dim)


@_on_vector
def _topk(input, dim, k, largest, sorted=True):  # noqa: A002  (PyTorch's name)
    rows = _rows(input, dim)
    indices = xp.ascontiguousarray(_argsort(rows, 1, largest)[:, :k])
    # which of equal elements come out, and an unsorted result's order, are PyTorch's kernel's
    for r in xp.flatnonzero(_tie_order.needs_order(rows, k, sorted)) if k else ():
        indices[r] = _tie_order.topk_indices(rows[r].tolist(), k, largest, sorted)
    indices = _from_rows(indices, input, dim)
    return xp.take_along_axis(input, indices, axis=dim), indices


TOPK = defop("topk", _topk, ("input",), (lambda grads, input_shape, out, dim: _scatter(
    grads[0], out[1], dim, input_shape),), n_outputs=2,
    jvp=lambda t_input, out, dim: (_gather(t_input, out[1], dim), None), batch=_along_dim)


def topk(input, k: int, dim: int = -1, largest: bool = True, sorted: bool = True) -> tuple:
    """(values, indices) of the ``k`` largest (or smallest) elements along ``dim``."""
    dim = _sort_dim(input, dim)
    n = input._data.shape[dim] if input._data.ndim else 1
    if not 0 <= k <= n:
        raise RuntimeError(f"topk: selected index k out of range (k={k}, dimension {dim} has "
                           f"size {n})")
    values, indices = apply(TOPK, input, dim=dim, k=k, largest=largest, sorted=bool(sorted))
    return result("topk", "values indices", (values, indices))


def _pick(position, nan_wins: bool):
    """A forward taking, per slice, the element at sorted ``position(n)`` and its index (or, if
    ``nan_wins``, the first NaN of a slice that has one)."""

    @_on_vector
    def forward(input, dim, keepdim, **params):
        order = _argsort(input, dim, False)
        k = position(input.shape[dim], **params)
        indices = xp.take(order, [k], axis=dim)
        if nan_wins and input.dtype.kind in "fc":
            nan = xp.isnan(input)
            count = nan.sum(axis=dim, keepdims=True)
            first_nan = xp.take_along_axis(order, input.shape[dim] - xp.maximum(count, 1), dim)
            indices = xp.where(count > 0, first_nan, indices)
        values = xp.take_along_axis(input, indices, axis=dim)
        if not keepdim:
            values, indices = values.squeeze(dim), indices.squeeze(dim)
        return values, indices

    return forward


@_on_vector
def _kthvalue(input, dim, keepdim, k):
    values, indices = _pick(lambda n, k: k - 1, False)(input, dim, True, k=k)
    rows = _rows(input, dim)
    found = _rows(indices, dim)[:, 0].copy()
    # which of equal elements comes out is PyTorch's quickselect's
    for r in xp.flatnonzero(_tie_order.needs_order(rows, k, True)):
        found[r] = _tie_order.kthvalue_index(rows[r].tolist(), k - 1)
    indices = _from_rows(found[:, None], input, dim)
    values = xp.take_along_axis(input, indices, axis=dim)
    if not keepdim:
        values, indices = values.squeeze(dim), indices.squeeze(dim)
    return values, indices


KTHVALUE = defop("kthvalue", _kthvalue, ("input",), (_select_grad,), n_outputs=2,
                 jvp=_select_jvp, batch=_along_dim)
MEDIAN_DIM = defop("median_dim", _pick(lambda n: (n - 1) // 2, True), ("input",), (_select_grad,),
                   backward_name="MedianBackward1", n_outputs=2, jvp=_select_jvp,
                   batch=_along_dim)


def _median(input, dim):
    """The lower median of the elements in the dims ``dim`` (NaN where one of them is NaN)."""
    rest = tuple(d for d in range(input.ndim) if d not in dim)
    shape = tuple(input.shape[d] for d in rest)
    n = math.prod(input.shape[d] for d in dim)
    if n == 0:
        return xp.full(shape, xp.nan, dtype=input.dtype)
    x = xp.transpose(input, rest + tuple(dim)).reshape(shape + (n,))
    k = (n - 1) // 2
    out = xp.partition(x, k, axis=-1)[..., k]
    if input.dtype.kind in "fc":
        out = xp.where(xp.isnan(x).any(axis=-1), xp.nan, out)
    return out


# The median of all elements; ``dim`` (all dims) lets vmap run it over the dims of each example.
MEDIAN = defop(
    "median",
    _median,
    ("input",),
    (lambda g, input, out, dim: _ties_rule(g, input, out, dim, False),),
    jvp=lambda t_input, input, out, dim: _ties_jvp(t_input, input, out, dim, False),
    batch=_over_dims,
)


def kthvalue(input, k: int, dim: int = -1, keepdim: bool = False) -> tuple:
    """(values, indices) of the ``k``-th smallest element along ``dim``."""
    dim = _sort_dim(input, dim)
    n = input._data.shape[dim] if input._data.ndim else 1
    if not 1 <= k <= n:
        raise RuntimeError(f"kthvalue(): selected number k out of range for dimension {dim}")
    values, indices = apply(KTHVALUE, input, dim=dim, keepdim=keepdim, k=k)
    return result("kthvalue", "values indices", (values, indices))


def median(input, dim: int | None = None, keepdim: bool = False):
    """The lower median; with ``dim``, (values, indices) of the medians along it."""
    if dim is None:
        return apply(MEDIAN, input, dim=tuple(range(input._data.ndim)))
    dim = _sort_dim(input, dim)
    if input._data.ndim and input._data.shape[dim] == 0:
        raise IndexError(f"median(): Expected reduction dim {dim} to have non-zero size.")
    values, indices = apply(MEDIAN_DIM, input, dim=dim, keepdim=keepdim)
    return result("median", "values indices", (values, indices))


@_on_vector
def _mode(input, dim, keepdim):
    x = xp.moveaxis(input, dim, -1)
    n = x.shape[-1]
    rows = x.reshape(-1, n)
    s = xp.sort(rows, axis=1)
    start = xp.ones(s.shape, dtype=bool)
    start[:, 1:] = s[:, 1:] != s[:, :-1]
    run = xp.cumsum(start, axis=1) - 1  # which run of equal values each sorted element is in
    counts = xp.zeros(s.shape, dtype=xp.int64)
    xp.add.at(counts, (xp.arange(len(s))[:, None], run), 1)
    best = xp.argmax(counts, axis=1)  # the first of the most frequent: the smallest such value
    values = s[xp.arange(len(s)), xp.argmax(run == best[:, None], axis=1)]
    # PyTorch reports the last position of the mode
    indices = n - 1 - xp.argmax((rows == values[:, None])[:, ::-1], axis=1)
    shape = x.shape[:-1]
    values, indices = values.reshape(shape), indices.reshape(shape)
    if keepdim:
        values, indices = xp.expand_dims(values, dim), xp.expand_dims(indices, dim)
    return values, indices


MODE = defop("mode", _mode, ("input",), (_select_grad,), n_outputs=2, jvp=_select_jvp,
             batch=_along_dim)


def mode(input, dim: int = -1, keepdim: bool = False) -> tuple:
    """(values, indices) of the most frequent value along ``dim`` (the smallest if tied)."""
    values, indices = apply(MODE, input, dim=_sort_dim(input, dim), keepdim=keepdim)
    return result("mode", "values indices", (values, indices))


_QUANTILE_POSITIONS = ("linear", "lower", "higher", "midpoint", "nearest")


def quantile(input, q, dim: int | None = None, keepdim: bool = False, *,
             interpolation: str = "linear") -> Tensor:
    """The ``q``-quantiles along ``dim`` (of all elements when None), interpolating between the
    two nearest sorted elements."""
    _require_float(input, "quantile")
    if interpolation not in _QUANTILE_POSITIONS:
        raise RuntimeError("quantile() interpolation must be one of linear, lower, higher, "
                           f"midpoint or nearest. Got {interpolation}")
    scalar_q = not isinstance(q, Tensor)
    if not scalar_q:
        q._needs_values(RuntimeError, "quantile(): vmap over q is not supported (its values "
                        "choose the elements taken); batch the input instead")
    qs = xp.asarray(q._data if isinstance(q, Tensor) else q, dtype=xp.float64)
    if qs.ndim > 1:
        raise RuntimeError("quantile() q must be a scalar or 1D tensor")
    if qs.size and (qs.min() < 0 or qs.max() > 1):
        bad = qs[(qs < 0) | (qs > 1)][0]
        raise RuntimeError(f"quantile() q must be in the range [0, 1] but got {bad:g}")
    if input._data.size == 0:
        raise RuntimeError("quantile() input tensor must be non-empty")
    x = input.reshape(-1) if dim is None else input
    d = 0 if dim is None or not x._data.ndim else _dim(input, dim, "quantile")
    if not x._data.ndim:
        x = x.reshape(1)
    n = x._data.shape[d]
    ordered = sort(x, d).values
    pos = qs.reshape(-1) * (n - 1)
    if interpolation == "lower":
        pos = xp.floor(pos)
    elif interpolation == "higher":
        pos = xp.ceil(pos)
    elif interpolation == "nearest":
        pos = xp.round(pos)  # round half to even, as PyTorch
    elif interpolation == "midpoint":
        pos = (xp.floor(pos) + xp.ceil(pos)) / 2
    low, high = xp.floor(pos).astype(xp.int64), xp.ceil(pos).astype(xp.int64)
    along = (-1,) + (1,) * (x._data.ndim - d - 1)  # shaped to run along dim d
    shape = ordered._data.shape[:d] + (len(pos),) + ordered._data.shape[d + 1:]

    def take(indices):
        indices = xp.broadcast_to(indices.reshape(along), shape)
        return apply(SELECT_ALONG_DIM, ordered, _const(indices), dim=d)

    below, above = take(low), take(high)
    weight = _const((pos - low).astype(x._data.dtype).reshape(along))
    out = below + weight * (above - below)
    if x._data.dtype.kind == "f":  # NaN anywhere in a slice makes its quantiles NaN (sorted last)
        last = take(xp.full(len(pos), n - 1))
        out = where(isnan(last), last, out)
    out = out.permute((d,) + tuple(i for i in range(out._data.ndim) if i != d))
    if keepdim:
        shape = (1,) * input._data.ndim if dim is None else tuple(
            1 if i == d else s for i, s in enumerate(input._data.shape))
        out = out.reshape((len(pos),) + shape)
    else:
        shape = () if dim is None else tuple(
            s for i, s in enumerate(input._data.shape) if i != d)
        out = out.reshape((len(pos),) + shape)
    return out[0] if scalar_q or qs.ndim == 0 else out


# ---- public tables ------------------------------------------------------------------------------


def _inplace_scan(name: str, self, dtype) -> None:
    """An in-place scan computes in self's dtype: another ``dtype`` is refused, as is bool."""
    if dtype is not None and as_dtype(dtype).np != self._data.dtype:
        raise RuntimeError(f"Bad in-place call: input tensor dtype "
                           f"{_C_NAMES[self.dtype.name]} and output tensor dtype "
                           f"{_C_NAMES[as_dtype(dtype).name]} should match")
    _scan_dtype(name, self, self.dtype)


def _cumsum_(self, dim: int, *, dtype=None) -> Tensor:
    _inplace_scan("cumsum", self, dtype)
    return apply_inplace(CUMSUM, self, dim=_scan_dim(self, dim))


def _cumprod_(self, dim: int, *, dtype=None) -> Tensor:
    _inplace_scan("cumprod", self, dtype)
    return apply_inplace(CUMPROD, self, dim=_scan_dim(self, dim))


FUNCTIONS = {
    f.__name__: f
    for f in (
        sum, mean, prod, amax, amin, max, min, argmax, argmin, all, any, var, std, var_mean,
        std_mean, logsumexp, cumsum, cumprod, cummax, cummin, sort, argsort, topk,
        kthvalue, median, mode, quantile,
    )
}
METHODS = {name: f for name, f in FUNCTIONS.items() if name not in ("var_mean", "std_mean")}
METHODS.update(cumsum_=_cumsum_, cumprod_=_cumprod_)

