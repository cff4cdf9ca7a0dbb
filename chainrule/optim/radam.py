"""RAdam (Liu et al., 2020): Adam whose adaptive step waits until its variance is tractable."""

from __future__ import annotations

import math

from ..tensor import Tensor
from .optimizer import (
    ParamsT,
    _check_adam_family,
    _check_flags,
    _check_functional,
    _count,
    _decay,
    _GroupwiseOptimizer,
    _init_group,
    _update_moments,
)

__all__ = ["RAdam", "radam"]


class RAdam(_GroupwiseOptimizer):
    """Rectified Adam; ``decoupled_weight_decay=True`` gives RAdamW."""

    def __init__(self, params: ParamsT, lr: float = 1e-3,
                 betas: tuple[float, float] = (0.9, 0.999), eps: float = 1e-8,
                 weight_decay: float = 0, decoupled_weight_decay: bool = False, *,
                 foreach: bool | None = None, maximize: bool = False, capturable: bool = False,
                 differentiable: bool = False) -> None:
        _check_adam_family(lr, betas, eps, weight_decay)
        _check_flags(differentiable, foreach)
        defaults = dict(lr=lr, betas=betas, eps=eps, weight_decay=weight_decay,
                        maximize=maximize, foreach=foreach, capturable=capturable,
                        decoupled_weight_decay=decoupled_weight_decay,
                        differentiable=differentiable)
        super().__init__(params, defaults)

    def _update(self, group: dict) -> None:
        params, grads, states = _init_group(self, group, "exp_avg", "exp_avg_sq")
        beta1, beta2 = group["betas"]
        radam(params, grads, [s["exp_avg"] for s in states], [s["exp_avg_sq"] for s in states],
              [s["step"] for s in states], decoupled_weight_decay=group["decoupled_weight_decay"],
              foreach=group["foreach"], differentiable=group["differentiable"],
              capturable=group["capturable"], maximize=group["maximize"], beta1=beta1,
              beta2=beta2, lr=group["lr"], weight_decay=group["weight_decay"], eps=group["eps"])


def radam(params: list[Tensor], grads: list[Tensor], exp_avgs: list[Tensor],
          exp_avg_sqs: list[Tensor], state_steps: list[Tensor],
          decoupled_weight_decay: bool = False, foreach: bool | None = None,
          differentiable: bool = False, capturable: bool = False, has_complex: bool = False,
          maximize: bool = False, *, beta1: float, beta2: float, lr: float,
          weight_decay: float, eps: float) -> None:
    """RAdam's update of ``params`` and of its state lists in place."""
    _check_functional(state_steps, foreach=foreach, differentiable=differentiable)
    for i, p in enumerate(params):
        grad = -grads[i] if maximize else grads[i]
        exp_avg, exp_avg_sq = exp_avgs[i], exp_avg_sqs[i]
        step = _count(state_steps[i])
        grad = _decay(p, grad, lr, weight_decay, decoupled_weight_decay)
        _update_moments(exp_avg, exp_avg_sq, grad, beta1, beta2)
        bias_correction1 = 1 - beta1**step
        bias_correction2 = 1 - beta2**step
        # rho: length of the approximated simple moving average (the paper's eq. 4-5).
        rho_inf = 2 / (1 - beta2) - 1
        rho_t = rho_inf - 2 * step * beta2**step / bias_correction2
        update = exp_avg / bias_correction1 * lr
        if rho_t > 5.0:
            rect = math.sqrt((rho_t - 4) * (rho_t - 2) * rho_inf
                             / ((rho_inf - 4) * (rho_inf - 2) * rho_t))
            adaptive_lr = math.sqrt(bias_correction2) / (exp_avg_sq.sqrt() + eps)
            update = update * adaptive_lr * rect
        p.sub_(update)
