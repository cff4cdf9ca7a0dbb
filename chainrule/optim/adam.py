"""Adam and AdamW (Kingma & Ba, 2015; Loshchilov & Hutter, 2019), with optional AMSGrad."""

from __future__ import annotations

from collections.abc import Iterable

from .optimizer import (
    _addcdiv_,
    _check_adam_family,
    _check_flags,
    _decay,
    _GroupwiseOptimizer,
    _maximum_,
    _update_moments,
    _with_grads,
)

__all__ = ["Adam", "AdamW"]


class Adam(_GroupwiseOptimizer):
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

    def _update(self, group: dict) -> None:
        lr, (beta1, beta2), eps = group["lr"], group["betas"], group["eps"]
        amsgrad = group["amsgrad"]
        buffers = ("exp_avg", "exp_avg_sq") + (("max_exp_avg_sq",) if amsgrad else ())
        for p, grad, state, step in _with_grads(self, group, *buffers):
            exp_avg, exp_avg_sq = state["exp_avg"], state["exp_avg_sq"]
            grad = _decay(p, grad, group)
            _update_moments(exp_avg, exp_avg_sq, grad, beta1, beta2)

            step_size = lr / (1 - beta1**step)
            bias_correction2_sqrt = (1 - beta2**step) ** 0.5
            if amsgrad:
                _maximum_(state["max_exp_avg_sq"], exp_avg_sq)
                exp_avg_sq = state["max_exp_avg_sq"]
            denom = exp_avg_sq.sqrt() / bias_correction2_sqrt + eps
            _addcdiv_(p, exp_avg, denom, -step_size)


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
