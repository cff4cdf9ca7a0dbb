"""RAdam (Liu et al., 2020): Adam whose adaptive step waits until its variance is tractable."""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable

from .. import tensor, zeros_like
from .optimizer import (
    Optimizer,
    _addcmul_,
    _check_adam_family,
    _check_flags,
    _evaluate,
    _lerp_,
    _step,
)

__all__ = ["RAdam"]


class RAdam(Optimizer):
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

    @_step
    def step(self, closure: Callable | None = None):
        """One update of every parameter that has a gradient; returns the closure's loss."""
        loss = _evaluate(closure)
        for group in self.param_groups:
            lr, (beta1, beta2), eps = group["lr"], group["betas"], group["eps"]
            weight_decay = group["weight_decay"]
            for p in group["params"]:
                grad = p.grad
                if grad is None:
                    continue
                if group["maximize"]:
                    grad = -grad
                state = self.state[p]
                if not state:
                    state["step"] = tensor(0.0)
                    state["exp_avg"] = zeros_like(p)
                    state["exp_avg_sq"] = zeros_like(p)
                step = state["step"].add_(1).item()
                exp_avg, exp_avg_sq = state["exp_avg"], state["exp_avg_sq"]

                if weight_decay != 0:
                    if group["decoupled_weight_decay"]:
                        p.mul_(1 - lr * weight_decay)
                    else:
                        grad = grad + p * weight_decay
                _lerp_(exp_avg, grad, 1 - beta1)
                exp_avg_sq.mul_(beta2)
                _addcmul_(exp_avg_sq, grad, grad, 1 - beta2)

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
        return loss
