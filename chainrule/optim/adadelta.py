"""Adadelta (Zeiler, 2012): steps scaled by the ratio of running RMS of updates and gradients."""

from __future__ import annotations

from ..tensor import Tensor
from .optimizer import (
    ParamsT,
    _addcmul_,
    _check_flags,
    _check_functional,
    _check_nonnegative,
    _count,
    _GroupwiseOptimizer,
    _init_group,
)

__all__ = ["Adadelta", "adadelta"]


class Adadelta(_GroupwiseOptimizer):
    """Adadelta; ``lr`` scales the update (1.0 is the paper's rule)."""

    def __init__(self, params: ParamsT, lr: float = 1.0, rho: float = 0.9, eps: float = 1e-6,
                 weight_decay: float = 0, foreach: bool | None = None, *,
                 capturable: bool = False, maximize: bool = False,
                 differentiable: bool = False) -> None:
        _check_nonnegative(("Invalid learning rate", lr))
        if not 0.0 <= rho <= 1.0:
            raise ValueError(f"Invalid rho value: {rho}")
        _check_nonnegative(("Invalid epsilon value", eps),
                           ("Invalid weight_decay value", weight_decay))
        _check_flags(differentiable, foreach)
        defaults = dict(lr=lr, rho=rho, eps=eps, weight_decay=weight_decay, maximize=maximize,
                        capturable=capturable, foreach=foreach, differentiable=differentiable)
        super().__init__(params, defaults)

    def _update(self, group: dict) -> None:
        params, grads, states = _init_group(self, group, "square_avg", "acc_delta")
        adadelta(params, grads, [s["square_avg"] for s in states],
                 [s["acc_delta"] for s in states], [s["step"] for s in states],
                 capturable=group["capturable"], foreach=group["foreach"],
                 differentiable=group["differentiable"], lr=group["lr"], rho=group["rho"],
                 eps=group["eps"], weight_decay=group["weight_decay"],
                 maximize=group["maximize"])


def adadelta(params: list[Tensor], grads: list[Tensor], square_avgs: list[Tensor],
             acc_deltas: list[Tensor], state_steps: list[Tensor], capturable: bool = False,
             foreach: bool | None = None, differentiable: bool = False,
             has_complex: bool = False, *, lr: float, rho: float, eps: float,
             weight_decay: float, maximize: bool) -> None:
    """Adadelta's update of ``params`` and of its state lists in place."""
    _check_functional(state_steps, foreach=foreach, differentiable=differentiable)
    for i, p in enumerate(params):
        grad = -grads[i] if maximize else grads[i]
        square_avg, acc_delta = square_avgs[i], acc_deltas[i]
        _count(state_steps[i])
        if weight_decay != 0:
            grad = grad + p * weight_decay
        square_avg.mul_(rho)
        _addcmul_(square_avg, grad, grad, 1 - rho)
        std = (square_avg + eps).sqrt()
        delta = (acc_delta + eps).sqrt() / std * grad
        acc_delta.mul_(rho)
        _addcmul_(acc_delta, delta, delta, 1 - rho)
        p.sub_(delta * lr)
