"""Reductions: sum and mean (whole tensor or over dims, keepdim)."""

from __future__ import annotations

import math

from .._backend import as_dtype, xp
from .._dispatch import apply
from ..tensor import Tensor
from ._registry import defop
from ._shapes import normalize_dims


def _unreduce(g, input_shape, dim, keepdim):
    """Broadcast a reduced gradient back over the reduced dims."""
    if not keepdim:
        g = g.reshape(tuple(1 if i in dim else s for i, s in enumerate(input_shape)))
    return g.expand(input_shape)


def _sum_dim(input, dim, keepdim):
    return xp.sum(input, axis=dim, keepdims=keepdim)


def _mean_dim(input, dim, keepdim):
    return xp.mean(input, axis=dim, keepdims=keepdim)


SUM = defop(
    "sum", xp.sum, ("input",), (lambda g, input_shape: g.expand(input_shape),), jvp="linear"
)
SUM_DIM = defop(
    "sum_dim", _sum_dim, ("input",), (_unreduce,), backward_name="SumBackward1", jvp="linear"
)
MEAN = defop(
    "mean",
    xp.mean,
    ("input",),
    (lambda g, input_shape: g.expand(input_shape) / math.prod(input_shape),),
    jvp="linear",
)
MEAN_DIM = defop(
    "mean_dim",
    _mean_dim,
    ("input",),
    (
        lambda g, input_shape, dim, keepdim: (
            _unreduce(g, input_shape, dim, keepdim) / math.prod(input_shape[d] for d in dim)
        ),
    ),
    backward_name="MeanBackward1",
    jvp="linear",
)


def sum(input, dim=None, keepdim: bool = False, *, dtype=None) -> Tensor:
    """Sum of all elements, or over ``dim`` (an int or a tuple)."""
    if dtype is not None:
        input = input.to(dtype)
    elif input.data.dtype.kind in "biu" and input.data.dtype != xp.int64:
        input = input.to(xp.int64)
    if dim is None:
        return apply(SUM, input)
    return apply(SUM_DIM, input, dim=normalize_dims(dim, input.data.ndim, "sum"), keepdim=keepdim)


def mean(input, dim=None, keepdim: bool = False, *, dtype=None) -> Tensor:
    """Mean of all elements, or over ``dim`` (an int or a tuple)."""
    if dtype is not None:
        input = input.to(dtype)
    if input.data.dtype.kind not in "fc":
        raise RuntimeError(
            "mean(): could not infer output dtype. Input dtype must be either a floating point "
            f"or complex dtype. Got: {as_dtype(input.data.dtype).name}; convert with .float()"
        )
    if dim is None:
        return apply(MEAN, input)
    return apply(MEAN_DIM, input, dim=normalize_dims(dim, input.data.ndim, "mean"), keepdim=keepdim)


FUNCTIONS = {"sum": sum, "mean": mean}
METHODS = dict(FUNCTIONS)
