"""Dropout: the input times a random keep mask (no record of its own)."""

from __future__ import annotations

import warnings

from .._backend import from_np, xp
from .._tooling import kernel
from ..tensor import Tensor
from ._nnutil import check_float


def _keep_mask(input, shape, p: float, dtype):
    """A mask of 0 and 1/(1-p): PyTorch's noise, ``bernoulli_(1 - p)`` from the default
    generator (laid out as the input when it has the input's shape), divided by 1 - p."""
    from .._creation import _bernoulli_draws, _layout

    if p == 1 or input.device.type == "meta":  # the meta device draws nothing, as PyTorch's
        return xp.zeros(shape, dtype=dtype, like=input._data)
    order = _layout(input._data, dense_only=True)[0] if shape == input.shape else None
    noise = _bernoulli_draws(shape, 1.0 - p, dtype, order)
    if type(noise) is not Tensor:  # vmap(randomness="different"): a mask per example, batched
        opmath = from_np(xp.dtype(xp.float64 if dtype == xp.float64 else xp.float32))
        return (noise.to(opmath) / (1.0 - p)).to(from_np(dtype))
    return kernel(_scaled_keep, noise._data, p, dtype)


def _scaled_keep(noise, p: float, dtype):
    # PyTorch's div_(1 - p): in the dtype (in float for half), the divisor rounded to it first.
    opmath = xp.float64 if dtype == xp.float64 else xp.float32
    return (noise.astype(opmath) / opmath(1.0 - p)).astype(dtype, copy=False)


def _dropout(input, p, training, inplace, mask_shape) -> Tensor:
    if p < 0 or p > 1:
        raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")
    if not training or p == 0:
        return input
    check_float(input, "dropout")
    mask = _keep_mask(input, tuple(mask_shape), float(p), input._data.dtype)
    return input.mul_(mask) if inplace else input * mask


def dropout(input, p: float = 0.5, training: bool = True, inplace: bool = False) -> Tensor:
    """Zero each element with probability p and scale the rest by 1 / (1 - p) (training only)."""
    return _dropout(input, p, training, inplace, input.shape)


_NOTE = ("Note that {name} exists to provide channel-wise dropout on inputs with {nd} spatial "
         "dimension{s}, a channel dimension, and an optional batch dimension (i.e. {lo}D or {hi}D "
         "inputs).")


def feature_dropout(input, p: float, training: bool, inplace: bool, nd: int,
                    name: str) -> Tensor:
    """Zero whole channels with probability p, reading the dims as PyTorch's dropout{nd}d does:
    dropout1d and dropout3d take (N, C, *spatial) or (C, *spatial); dropout2d always reads dim 1
    as the channels (a 3-D input is (N, C, L)), and other ranks warn and proceed."""
    if p < 0 or p > 1:
        raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")
    n = input.ndim
    note = _NOTE.format(name=name, nd=nd, s="" if nd == 1 else "s", lo=nd + 1, hi=nd + 2)
    if n not in (nd + 1, nd + 2):
        if nd == 1:
            raise RuntimeError(f"{name}: Expected 2D or 3D input, but received a {n}D input. "
                               + note)
        warnings.warn(f"{name}: Received a {n}-D input to {name}, which is deprecated and will "
                      "result in an error in a future release. To retain the behavior and "
                      "silence this warning, please use dropout instead. " + note, stacklevel=3)
    if nd == 2 and n == 3:
        warnings.warn("dropout2d: Received a 3D input to dropout2d and assuming that channel-wise "
                      "1D dropout behavior is desired - input is interpreted as shape (N, C, L), "
                      "where C is the channel dim. This behavior will change in a future release "
                      "to interpret the input as one without a batch dimension, i.e. shape "
                      "(C, H, W). To maintain the 1D channel-wise dropout behavior, please switch "
                      "to using dropout1d instead.", stacklevel=3)
    shape = tuple(input.shape)
    if nd != 2 and n != nd + 2:  # no batch dim: the channels are dim 0
        shape = (1,) + shape
    if len(shape) < 2:
        raise RuntimeError("Feature dropout requires at least 2 dimensions in the input")
    mask = shape[:2] + (1,) * (len(shape) - 2)
    return _dropout(input, p, training, inplace, mask[len(shape) - n:])


def _torch_dropout(input, p: float, train: bool) -> Tensor:
    """torch.dropout(input, p, train)."""
    return dropout(input, p, train)


FUNCTIONS = {"dropout": _torch_dropout}
METHODS: dict = {}
