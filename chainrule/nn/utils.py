"""nn.utils: gradient clipping and flattening parameters to a vector."""

from __future__ import annotations

import math
from collections.abc import Iterable

from .._backend import xp
from ..autograd.grad_mode import no_grad
from ..tensor import Tensor

__all__ = ["clip_grad_norm_", "clip_grad_value_", "parameters_to_vector", "vector_to_parameters"]


def _params(parameters) -> list[Tensor]:
    return [parameters] if isinstance(parameters, Tensor) else list(parameters)


def clip_grad_norm_(parameters: Iterable[Tensor] | Tensor, max_norm: float,
                    norm_type: float = 2.0, error_if_nonfinite: bool = False,
                    foreach=None) -> Tensor:
    """Scale gradients in place so their joint norm is at most max_norm; returns the norm."""
    grads = [p.grad for p in _params(parameters) if p.grad is not None]
    if not grads:
        return Tensor._wrap(xp.asarray(0.0, dtype=xp.float32), None, 0)
    norm_type = float(norm_type)
    # As PyTorch: the norm of the per-gradient norms, in the gradients' dtype.
    norms = xp.array([xp.linalg.norm(g._data.ravel(), ord=norm_type) for g in grads],
                     dtype=grads[0]._data.dtype)
    total = xp.linalg.norm(norms, ord=norm_type)
    total_t = Tensor._wrap(xp.asarray(total, dtype=grads[0]._data.dtype), None, 0)
    if error_if_nonfinite and not math.isfinite(float(total)):
        raise RuntimeError(f"The total norm of order {norm_type} for gradients from `parameters` "
                           "is non-finite, so it cannot be clipped. To disable this error and "
                           "scale the gradients by the non-finite norm anyway, set "
                           "`error_if_nonfinite=False`")
    coef = max_norm / (float(total) + 1e-6)
    if coef < 1:
        with no_grad():
            for g in grads:
                g.mul_(coef)
    return total_t


def clip_grad_value_(parameters: Iterable[Tensor] | Tensor, clip_value: float,
                     foreach=None) -> None:
    """Clamp gradients in place to [-clip_value, clip_value]."""
    with no_grad():
        for p in _params(parameters):
            if p.grad is not None:
                p.grad.clamp_(-clip_value, clip_value)


def parameters_to_vector(parameters: Iterable[Tensor]) -> Tensor:
    """All parameters flattened into one vector (differentiable)."""
    from .. import cat

    return cat([p.reshape(-1) for p in parameters])


def vector_to_parameters(vec: Tensor, parameters: Iterable[Tensor]) -> None:
    """Copy slices of ``vec`` into the parameters, in order."""
    if not isinstance(vec, Tensor):
        raise TypeError(f"expected torch.Tensor, but got: {type(vec).__name__}")
    offset = 0
    with no_grad():
        for p in parameters:
            n = p.numel()
            p._data[...] = vec._data[offset:offset + n].reshape(p._data.shape)
            offset += n
