"""Adam (Kingma & Ba, 2015), with optional AMSGrad and decoupled weight decay."""

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
    _maximum_,
    _update_moments,
)

__all__ = ["Adam", "adam"]


class Adam(_GroupwiseOptimizer):
    """Adam: bias-corrected moving averages of the gradient and its square."""

    def __init__(self, params: ParamsT, lr: float = 1e-3,
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
        buffers = ("exp_avg", "exp_avg_sq") + (("max_exp_avg_sq",) if group["amsgrad"] else ())
        params, grads, states = _init_group(self, group, *buffers)
        beta1, beta2 = group["betas"]
        adam(params, grads, [s["exp_avg"] for s in states], [s["exp_avg_sq"] for s in states],
             [s.get("max_exp_avg_sq") for s in states], [s["step"] for s in states],
             foreach=group["foreach"], capturable=group["capturable"],
             differentiable=group["differentiable"], fused=group["fused"],
             decoupled_weight_decay=group["decoupled_weight_decay"], amsgrad=group["amsgrad"],
             beta1=beta1, beta2=beta2, lr=group["lr"], weight_decay=group["weight_decay"],
             eps=group["eps"], maximize=group["maximize"])


def adam(params: list[Tensor], grads: list[Tensor], exp_avgs: list[Tensor],
         exp_avg_sqs: list[Tensor], max_exp_avg_sqs: list[Tensor], state_steps: list[Tensor],
         foreach: bool | None = None, capturable: bool = False, differentiable: bool = False,
         fused: bool | None = None, grad_scale: Tensor | None = None,
         found_inf: Tensor | None = None, has_complex: bool = False,
         decoupled_weight_decay: bool = False, *, amsgrad: bool, beta1: float, beta2: float,
         lr: float, weight_decay: float, eps: float, maximize: bool) -> None:
    """Adam's update of ``params`` and of its state lists in place (each step counted)."""
    _check_functional(state_steps, grad_scale, found_inf, foreach, fused, differentiable)
    for i, p in enumerate(params):
        grad = -grads[i] if maximize else grads[i]
        exp_avg, exp_avg_sq = exp_avgs[i], exp_avg_sqs[i]
        step = _count(state_steps[i])
        grad = _decay(p, grad, lr, weight_decay, decoupled_weight_decay)
        _update_moments(exp_avg, exp_avg_sq, grad, beta1, beta2)
        step_size = lr / (1 - beta1**step)
        bias_correction2_sqrt = (1 - beta2**step) ** 0.5
        if amsgrad:
            _maximum_(max_exp_avg_sqs[i], exp_avg_sq)
            exp_avg_sq = max_exp_avg_sqs[i]
        denom = exp_avg_sq.sqrt() / bias_correction2_sqrt + eps
        _addcdiv_(p, exp_avg, denom, -step_size)
