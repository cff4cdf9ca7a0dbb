"""Adadelta (Zeiler, 2012): steps scaled by the ratio of running RMS of updates and gradients."""

from __future__ import annotations

from collections.abc import Iterable

from .optimizer import _addcmul_, _check_flags, _check_nonnegative, _GroupwiseOptimizer, _with_grads

__all__ = ["Adadelta"]


class Adadelta(_GroupwiseOptimizer):
    """Adadelta; ``lr`` scales the update (1.0 is the paper's rule)."""

    def __init__(self, params: Iterable, lr: float = 1.0, rho: float = 0.9, eps: float = 1e-6,
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
        lr, rho, eps, weight_decay = (group["lr"], group["rho"], group["eps"],
                                      group["weight_decay"])
        for p, grad, state, _ in _with_grads(self, group, "square_avg", "acc_delta"):
            square_avg, acc_delta = state["square_avg"], state["acc_delta"]
            if weight_decay != 0:
                grad = grad + p * weight_decay
            square_avg.mul_(rho)
            _addcmul_(square_avg, grad, grad, 1 - rho)
            std = (square_avg + eps).sqrt()
            delta = (acc_delta + eps).sqrt() / std * grad
            acc_delta.mul_(rho)
            _addcmul_(acc_delta, delta, delta, 1 - rho)
            p.sub_(delta * lr)
