"""Distances and similarities, composed from other ops: vector_norm, cosine_similarity,
pairwise_distance."""

from __future__ import annotations

import math

from .._backend import xp
from ..tensor import Tensor


def vector_norm(t: Tensor, p: float, dim, keepdim: bool = False) -> Tensor:
    """The p-norm along dim, in differentiable ops."""
    if p == 2:
        return (t * t).sum(dim, keepdim=keepdim).sqrt()
    if p == 1:
        return t.abs().sum(dim, keepdim=keepdim)
    if p == 0:
        return (t != 0).to(t.dtype).sum(dim, keepdim=keepdim)
    if math.isinf(p):
        reduce = getattr(t.abs(), "amax" if p > 0 else "amin", None)
        if reduce is None:
            raise NotImplementedError("the infinity norm needs amax/amin, which this build of "
                                      "chainrule lacks; use p=1 or p=2")
        return reduce(dim, keepdim=keepdim)
    return (t.abs() ** p).sum(dim, keepdim=keepdim) ** (1.0 / p)


def cosine_similarity(x1, x2, dim: int = 1, eps: float = 1e-8) -> Tensor:
    """x1 . x2 / (max(|x1|, eps) * max(|x2|, eps)) along dim (of the broadcast shape)."""
    shape = xp.broadcast_shapes(tuple(x1.shape), tuple(x2.shape))
    if tuple(x1.shape) != shape:
        x1 = x1.expand(shape)
    if tuple(x2.shape) != shape:
        x2 = x2.expand(shape)
    n1 = vector_norm(x1, 2, dim, keepdim=True).clamp(min=eps)
    n2 = vector_norm(x2, 2, dim, keepdim=True).clamp(min=eps)
    return ((x1 / n1) * (x2 / n2)).sum(dim)


def pairwise_distance(x1, x2, p: float = 2.0, eps: float = 1e-6, keepdim: bool = False) -> Tensor:
    """The p-norm of x1 - x2 + eps along the last dim."""
    dim = max(x1.ndim, x2.ndim) - 1
    return vector_norm(x1 - x2 + eps, p, max(dim, 0), keepdim=keepdim)


FUNCTIONS = {"cosine_similarity": cosine_similarity, "pairwise_distance": pairwise_distance}
METHODS: dict = {}
