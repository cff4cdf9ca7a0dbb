"""Adamax (Kingma & Ba, 2015, section 7): Adam with an infinity-norm second moment."""

from __future__ import annotations

from collections.abc import Iterable

from .optimizer import (
    _addcdiv_,
    _check_adam_family,
    _check_flags,
    _decay,
    _GroupwiseOptimizer,
    _lerp_,
    _maximum_,
    _with_grads,
)

__all__ = ["Adamax"]


class Adamax(_GroupwiseOptimizer):
    """Adamax: the step divides by a decaying running maximum of |grad|."""

    def __init__(self, params: Iterable, lr: float = 2e-3,
                 betas: tuple[float, float] = (0.9, 0.999), eps: float = 1e-8,
                 weight_decay: float = 0, foreach: bool | None = None, *,
                 maximize: bool = False, differentiable: bool = False,
                 capturable: bool = False) -> None:
        _check_adam_family(lr, betas, eps, weight_decay)
        _check_flags(differentiable, foreach)
        defaults = dict(lr=lr, betas=betas, eps=eps, weight_decay=weight_decay, foreach=foreach,
                        maximize=maximize, differentiable=differentiable, capturable=capturable)
        super().__init__(params, defaults)

    def _update(self, group: dict) -> None:
        lr, (beta1, beta2), eps = group["lr"], group["betas"], group["eps"]
        for p, grad, state, step in _with_grads(self, group, "exp_avg", "exp_inf"):
            exp_avg, exp_inf = state["exp_avg"], state["exp_inf"]
            grad = _decay(p, grad, group)
            _lerp_(exp_avg, grad, 1 - beta1)
            exp_inf.mul_(beta2)
            _maximum_(exp_inf, grad.abs() + eps)
            clr = lr / (1 - beta1**step)
            _addcdiv_(p, exp_avg, exp_inf, -clr)
