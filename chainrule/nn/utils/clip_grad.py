"""Gradient clipping: the total norm of gradients, scaling to a maximum norm, clamping values."""

from __future__ import annotations

import math
import warnings
from collections.abc import Iterable

from ..._backend import xp
from ...autograd.grad_mode import no_grad
from ...tensor import Tensor

__all__ = ["clip_grad_norm", "clip_grad_norm_", "clip_grad_value_"]


def _tensors(tensors) -> list[Tensor]:
    return [tensors] if isinstance(tensors, Tensor) else list(tensors)


def _grads(parameters) -> list[Tensor]:
    return [p.grad for p in _tensors(parameters) if p.grad is not None]


def get_total_norm(tensors: Iterable[Tensor] | Tensor, norm_type: float = 2.0,
                   error_if_nonfinite: bool = False, foreach: bool | None = None) -> Tensor:
    """The norm of the tensors' norms: the norm of all of them as one vector."""
    tensors = _tensors(tensors)
    norm_type = float(norm_type)
    if not tensors:
        return Tensor._wrap(xp.asarray(0.0, dtype=xp.float32), None, 0)
    norms = [xp.asarray(xp.linalg.norm(t._data.ravel(), ord=norm_type), dtype=t._data.dtype)
             for t in tensors]
    stacked = xp.stack(norms).astype(xp.result_type(*norms))
    total = xp.asarray(xp.linalg.norm(stacked, ord=norm_type), dtype=stacked.dtype)
    if error_if_nonfinite and not math.isfinite(float(total)):
        raise RuntimeError(f"The total norm of order {norm_type} for gradients from `parameters` "
                           "is non-finite, so it cannot be clipped. To disable this error and "
                           "scale the gradients by the non-finite norm anyway, set "
                           "`error_if_nonfinite=False`")
    return Tensor._wrap(total, None, 0)


def clip_grads_with_norm_(parameters: Iterable[Tensor] | Tensor, max_norm: float,
                          total_norm: Tensor, foreach: bool | None = None) -> None:
    """Scale the gradients by max_norm / (total_norm + 1e-6) where that is below 1."""
    grads = _grads(parameters)
    if not grads:
        return
    total = total_norm._data
    coef = xp.minimum(xp.asarray(max_norm, dtype=total.dtype) / (total + 1e-6), 1.0)
    with no_grad(), warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # inf * 0 is NaN, silently as PyTorch
        for g in grads:
            g.mul_(Tensor._wrap(coef.astype(g._data.dtype), None, 0))


def clip_grad_norm_(parameters: Iterable[Tensor] | Tensor, max_norm: float,
                    norm_type: float = 2.0, error_if_nonfinite: bool = False,
                    foreach: bool | None = None) -> Tensor:
    """Scale gradients in place so their joint norm is at most max_norm; returns the norm."""
    parameters = _tensors(parameters)
    total = get_total_norm(_grads(parameters), norm_type, error_if_nonfinite, foreach)
    clip_grads_with_norm_(parameters, max_norm, total, foreach)
    return total


def clip_grad_norm(parameters: Iterable[Tensor] | Tensor, max_norm: float,
                   norm_type: float = 2.0, error_if_nonfinite: bool = False,
                   foreach: bool | None = None) -> Tensor:
    """Deprecated alias of clip_grad_norm_."""
    warnings.warn("`torch.nn.utils.clip_grad_norm` is now deprecated in favor of "
                  "`torch.nn.utils.clip_grad_norm_`.", FutureWarning, stacklevel=2)
    return clip_grad_norm_(parameters, max_norm, norm_type, error_if_nonfinite, foreach)


def clip_grad_value_(parameters: Iterable[Tensor] | Tensor, clip_value: float,
                     foreach: bool | None = None) -> None:
    """Clamp gradients in place to [-clip_value, clip_value]."""
    clip_value = float(clip_value)
    with no_grad():
        for g in _grads(parameters):
            g.clamp_(-clip_value, clip_value)
