"""RAdam (Liu et al., 2020): Adam whose adaptive step waits until its variance is tractable."""

from __future__ import annotations

import math
from collections.abc import Iterable

from .optimizer import (
    _check_adam_family,
    _check_flags,
    _decay,
    _GroupwiseOptimizer,
    _update_moments,
    _with_grads,
)

__all__ = ["RAdam"]


class RAdam(_GroupwiseOptimizer):
    """Rectified Adam; ``decoupled_weight_decay=True`` gives RAdamW."""

    def __init__(self, params: Iterable, lr: float = 1e-3,
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
        lr, (beta1, beta2), eps = group["lr"], group["betas"], group["eps"]
        for p, grad, state, step in _with_grads(self, group, "exp_avg", "exp_avg_sq"):
            exp_avg, exp_avg_sq = state["exp_avg"], state["exp_avg_sq"]
            grad = _decay(p, grad, group)
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
