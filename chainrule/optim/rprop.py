"""Rprop: per-element step sizes grown or shrunk by the sign agreement of successive gradients."""

from __future__ import annotations

from collections.abc import Callable, Iterable

from .. import full_like, tensor, zeros_like
from .optimizer import Optimizer, _check_flags, _evaluate, _step

__all__ = ["Rprop"]


class Rprop(Optimizer):
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

    @_step
    def step(self, closure: Callable | None = None):
        """One update of every parameter that has a gradient; returns the closure's loss."""
        loss = _evaluate(closure)
        for group in self.param_groups:
            etaminus, etaplus = group["etas"]
            step_size_min, step_size_max = group["step_sizes"]
            for p in group["params"]:
                grad = p.grad
                if grad is None:
                    continue
                if group["maximize"]:
                    grad = -grad
                state = self.state[p]
                if not state:
                    state["step"] = tensor(0.0)
                    state["prev"] = zeros_like(p)
                    state["step_size"] = full_like(grad, float(group["lr"]))
                state["step"].add_(1)
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
        return loss
