"""Dropout: the input times a random keep mask (no record of its own)."""

from __future__ import annotations

from .._backend import from_np, xp
from ..tensor import Tensor
from ._nnutil import check_float


def _keep_mask(shape, p: float, dtype):
    """A mask of 0 and 1/(1-p), drawn from the default generator (chainrule.manual_seed)."""
    from .._creation import rand

    if p == 1:
        return xp.zeros(shape, dtype=dtype)
    noise = rand(*shape, dtype=xp.float64 if dtype == xp.float16 else dtype)
    if type(noise) is not Tensor:  # vmap(randomness="different"): a mask per example, batched
        return (noise >= p).to(from_np(dtype)) * (1.0 / (1.0 - p))
    keep = noise._data >= p
    return xp.multiply(keep, 1.0 / (1.0 - p), dtype=dtype)


def _dropout(input, p, training, inplace, mask_shape) -> Tensor:
    if p < 0 or p > 1:
        raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")
    if not training or p == 0:
        return input
    check_float(input, "dropout")
    mask = _keep_mask(mask_shape, float(p), input._data.dtype)
    return input.mul_(mask) if inplace else input * mask


def dropout(input, p: float = 0.5, training: bool = True, inplace: bool = False) -> Tensor:
    """Zero each element with probability p and scale the rest by 1 / (1 - p) (training only)."""
    return _dropout(input, p, training, inplace, input.shape)


def feature_dropout(input, p: float, training: bool, inplace: bool, nd: int,
                    name: str) -> Tensor:
    """Zero whole channels (dim -nd-1) with probability p."""
    if input.ndim not in (nd + 1, nd + 2):
        raise RuntimeError(f"{name}: Expected {nd + 1}D or {nd + 2}D input, but received a "
                           f"{input.ndim}D input")
    shape = tuple(input.shape[: input.ndim - nd]) + (1,) * nd
    return _dropout(input, p, training, inplace, shape)


def _torch_dropout(input, p: float, train: bool) -> Tensor:
    """torch.dropout(input, p, train)."""
    return dropout(input, p, train)


FUNCTIONS = {"dropout": _torch_dropout}
METHODS: dict = {}
