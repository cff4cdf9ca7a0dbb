"""Adamax (Kingma & Ba, 2015, section 7): Adam with an infinity-norm second moment."""

from __future__ import annotations

from ..tensor import Tensor
from .optimizer import (
    ParamsT,
    _addcdiv_,
    _check_adam_family,
    _check_flags,
    _check_functional,
    _count,
    _decay,
    _GroupwiseOptimizer,
    _init_group,
    _lerp_,
    _maximum_,
)

__all__ = ["Adamax", "adamax"]


class Adamax(_GroupwiseOptimizer):
    """Adamax: the step divides by a decaying running maximum of |grad|."""

    def __init__(self, params: ParamsT, lr: float = 2e-3,
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
        params, grads, states = _init_group(self, group, "exp_avg", "exp_inf")
        beta1, beta2 = group["betas"]
        adamax(params, grads, [s["exp_avg"] for s in states], [s["exp_inf"] for s in states],
               [s["step"] for s in states], foreach=group["foreach"],
               maximize=group["maximize"], differentiable=group["differentiable"],
               capturable=group["capturable"], eps=group["eps"], beta1=beta1, beta2=beta2,
               lr=group["lr"], weight_decay=group["weight_decay"])


def adamax(params: list[Tensor], grads: list[Tensor], exp_avgs: list[Tensor],
           exp_infs: list[Tensor], state_steps: list[Tensor], foreach: bool | None = None,
           maximize: bool = False, differentiable: bool = False, capturable: bool = False,
           has_complex: bool = False, *, eps: float, beta1: float, beta2: float, lr: float,
           weight_decay: float) -> None:
    """Adamax's update of ``params`` and of its state lists in place."""
    _check_functional(state_steps, foreach=foreach, differentiable=differentiable)
    for i, p in enumerate(params):
        grad = -grads[i] if maximize else grads[i]
        exp_avg, exp_inf = exp_avgs[i], exp_infs[i]
        step = _count(state_steps[i])
        grad = _decay(p, grad, lr, weight_decay)
        _lerp_(exp_avg, grad, 1 - beta1)
        exp_inf.mul_(beta2)
        _maximum_(exp_inf, grad.abs() + eps)
        clr = lr / (1 - beta1**step)
        _addcdiv_(p, exp_avg, exp_inf, -clr)
