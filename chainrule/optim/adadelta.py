"""Adadelta (Zeiler, 2012): steps scaled by the ratio of running RMS of updates and gradients."""

from __future__ import annotations

from collections.abc import Callable, Iterable

from .. import tensor, zeros_like
from .optimizer import Optimizer, _addcmul_, _check_flags, _evaluate, _step

__all__ = ["Adadelta"]


class Adadelta(Optimizer):
    """Adadelta; ``lr`` scales the update (1.0 is the paper's rule)."""

    def __init__(self, params: Iterable, lr: float = 1.0, rho: float = 0.9, eps: float = 1e-6,
                 weight_decay: float = 0, foreach: bool | None = None, *,
                 capturable: bool = False, maximize: bool = False,
                 differentiable: bool = False) -> None:
        if not 0.0 <= lr:
            raise ValueError(f"Invalid learning rate: {lr}")
        if not 0.0 <= rho <= 1.0:
            raise ValueError(f"Invalid rho value: {rho}")
        if not 0.0 <= eps:
            raise ValueError(f"Invalid epsilon value: {eps}")
        if not 0.0 <= weight_decay:
            raise ValueError(f"Invalid weight_decay value: {weight_decay}")
        _check_flags(differentiable, foreach)
        defaults = dict(lr=lr, rho=rho, eps=eps, weight_decay=weight_decay, maximize=maximize,
                        capturable=capturable, foreach=foreach, differentiable=differentiable)
        super().__init__(params, defaults)

    @_step
    def step(self, closure: Callable | None = None):
        """One update of every parameter that has a gradient; returns the closure's loss."""
        loss = _evaluate(closure)
        for group in self.param_groups:
            lr, rho, eps, weight_decay = (group["lr"], group["rho"], group["eps"],
                                          group["weight_decay"])
            for p in group["params"]:
                grad = p.grad
                if grad is None:
                    continue
                if group["maximize"]:
                    grad = -grad
                state = self.state[p]
                if not state:
                    state["step"] = tensor(0.0)
                    state["square_avg"] = zeros_like(p)
                    state["acc_delta"] = zeros_like(p)
                state["step"].add_(1)
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
        return loss
