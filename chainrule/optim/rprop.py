"""Rprop: per-element step sizes grown or shrunk by the sign agreement of successive gradients."""

from __future__ import annotations

from collections.abc import Iterable

from .. import full_like
from .optimizer import _check_flags, _GroupwiseOptimizer, _with_grads

__all__ = ["Rprop"]


class Rprop(_GroupwiseOptimizer):
    """Resilient backpropagation (Riedmiller & Braun, 1993), the variant without backtracking."""

    def __init__(self, params: Iterable, lr: float = 1e-2,
                 etas: tuple[float, float] = (0.5, 1.2),
                 step_sizes: tuple[float, float] = (1e-6, 50), *, capturable: bool = False,
                 foreach: bool | None = None, maximize: bool = False,
                 differentiable: bool = False) -> None:
        if not 0.0 <= lr:
            raise ValueError(f"Invalid learning rate: {lr}")
        if not 0.0 < etas[0] < 1.0 < etas[1]:
            raise ValueError(f"Invalid eta values: {etas[0]}, {etas[1]}")
        _check_flags(differentiable, foreach)
        defaults = dict(lr=lr, etas=etas, step_sizes=step_sizes, foreach=foreach,
                        maximize=maximize, differentiable=differentiable, capturable=capturable)
        super().__init__(params, defaults)

    def _update(self, group: dict) -> None:
        etaminus, etaplus = group["etas"]
        step_size_min, step_size_max = group["step_sizes"]

        def init(p, grad, state):
            state["step_size"] = full_like(grad, float(group["lr"]))

        for p, grad, state, _ in _with_grads(self, group, "prev", init=init):
            prev, step_size = state["prev"], state["step_size"]
            agreement = (grad * prev).sign()
            factor = (agreement.masked_fill(agreement > 0, etaplus)
                      .masked_fill(agreement < 0, etaminus).masked_fill(agreement == 0, 1))
            step_size.mul_(factor).clamp_(step_size_min, step_size_max)
            # After a sign change the gradient is taken as zero: no move, and no
            # sign comparison at the next step.
            grad = grad.masked_fill(agreement < 0, 0)
            p.addcmul_(grad.sign(), step_size, value=-1)
            prev.copy_(grad)
