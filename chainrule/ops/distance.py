"""Distances and similarities, composed from other ops: vector_norm, cosine_similarity,
pairwise_distance, cdist."""

from __future__ import annotations

from .._backend import xp
from ..tensor import Tensor
from .elementwise import _KERNEL_NAMES
from .reduction import vector_norm as _linalg_vector_norm


def vector_norm(t: Tensor, p: float, dim, keepdim: bool = False) -> Tensor:
    """The p-norm along dim (linalg.vector_norm's record: gradient 0 at a zero vector, where a
    composite such as sqrt(sum(t * t)) gives nan)."""
    return _linalg_vector_norm(t, p, dim, keepdim)


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


_CDIST_MODES = ("use_mm_for_euclid_dist_if_necessary", "use_mm_for_euclid_dist",
                "donot_use_mm_for_euclid_dist")


def cdist(x1, x2, p: float = 2.0,
          compute_mode: str = "use_mm_for_euclid_dist_if_necessary") -> Tensor:
    """The p-norm distances between the rows of x1 (..., P, M) and of x2 (..., R, M): (..., P, R),
    batch dims broadcast. Gradients at zero distance are 0, as PyTorch's."""
    if compute_mode not in _CDIST_MODES:
        raise ValueError(f"{compute_mode} is not a valid value for compute_mode")
    for name, x in (("X1", x1), ("X2", x2)):
        if x.ndim < 2:
            raise RuntimeError(f"cdist only supports at least 2D tensors, {name} got: {x.ndim}D")
        if x._data.dtype.kind not in "fV":
            raise RuntimeError(f"cdist only supports floating-point dtypes, {name} got: "
                               f"{_KERNEL_NAMES.get(x._data.dtype.name)}")
    if x1.shape[-1] != x2.shape[-1]:
        raise RuntimeError(f"X1 and X2 must have the same number of columns. X1: {x1.shape[-1]} "
                           f"X2: {x2.shape[-1]}")
    if p < 0:
        raise RuntimeError("cdist only supports non-negative p values")
    # All pairs at once, (..., P, R, M): PyTorch's direct kernel, not its matmul form for p = 2,
    # so distances between equal rows are exactly 0; the norm's rule gives 0 there.
    return _linalg_vector_norm(x1.unsqueeze(-2) - x2.unsqueeze(-3), p, -1)


FUNCTIONS = {"cosine_similarity": cosine_similarity, "pairwise_distance": pairwise_distance,
             "cdist": cdist}
METHODS: dict = {}
