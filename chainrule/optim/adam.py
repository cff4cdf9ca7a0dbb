"""Adam and AdamW (Kingma & Ba, 2015; Loshchilov & Hutter, 2019), with optional AMSGrad."""

from __future__ import annotations

from collections.abc import Callable, Iterable

from .. import tensor, zeros_like
from .optimizer import (
    Optimizer,
    _addcdiv_,
    _addcmul_,
    _check_adam_family,
    _check_flags,
    _evaluate,
    _lerp_,
    _maximum_,
    _step,
)

__all__ = ["Adam", "AdamW"]


class Adam(Optimizer):
    """Adam: bias-corrected moving averages of the gradient and its square."""

    def __init__(self, params: Iterable, lr: float = 1e-3,
                 betas: tuple[float, float] = (0.9, 0.999), eps: float = 1e-8,
                 weight_decay: float = 0, amsgrad: bool = False, *,
                 foreach: bool | None = None, maximize: bool = False, capturable: bool = False,
                 differentiable: bool = False, fused: bool | None = None,
                 decoupled_weight_decay: bool = False) -> None:
        _check_adam_family(lr, betas, eps, weight_decay)
        _check_flags(differentiable, foreach, fused)
        defaults = dict(lr=lr, betas=betas, eps=eps, weight_decay=weight_decay, amsgrad=amsgrad,
                        maximize=maximize, foreach=foreach, capturable=capturable,
                        differentiable=differentiable, fused=fused,
                        decoupled_weight_decay=decoupled_weight_decay)
        super().__init__(params, defaults)

    @_step
    def step(self, closure: Callable | None = None):
        """One update of every parameter that has a gradient; returns the closure's loss."""
        loss = _evaluate(closure)
        for group in self.param_groups:
            lr, (beta1, beta2), eps = group["lr"], group["betas"], group["eps"]
            weight_decay, amsgrad = group["weight_decay"], group["amsgrad"]
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
                    if amsgrad:
                        state["max_exp_avg_sq"] = zeros_like(p)
                exp_avg, exp_avg_sq = state["exp_avg"], state["exp_avg_sq"]
                step = state["step"].add_(1).item()

                if weight_decay != 0:
                    if group["decoupled_weight_decay"]:
                        p.mul_(1 - lr * weight_decay)
                    else:
                        grad = grad + p * weight_decay
                _lerp_(exp_avg, grad, 1 - beta1)
                exp_avg_sq.mul_(beta2)
                _addcmul_(exp_avg_sq, grad, grad, 1 - beta2)

                step_size = lr / (1 - beta1**step)
                bias_correction2_sqrt = (1 - beta2**step) ** 0.5
                if amsgrad:
                    _maximum_(state["max_exp_avg_sq"], exp_avg_sq)
                    exp_avg_sq = state["max_exp_avg_sq"]
                denom = exp_avg_sq.sqrt() / bias_correction2_sqrt + eps
                _addcdiv_(p, exp_avg, denom, -step_size)
        return loss


class AdamW(Adam):
    """Adam with decoupled weight decay: parameters shrink by lr * weight_decay each step."""

    def __init__(self, params: Iterable, lr: float = 1e-3,
                 betas: tuple[float, float] = (0.9, 0.999), eps: float = 1e-8,
                 weight_decay: float = 1e-2, amsgrad: bool = False, *, maximize: bool = False,
                 foreach: bool | None = None, capturable: bool = False,
                 differentiable: bool = False, fused: bool | None = None) -> None:
        super().__init__(params, lr, betas, eps, weight_decay, amsgrad, foreach=foreach,
                         maximize=maximize, capturable=capturable,
                         differentiable=differentiable, fused=fused, decoupled_weight_decay=True)
