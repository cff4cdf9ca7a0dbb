"""Rprop: per-element step sizes grown or shrunk by the sign agreement of successive gradients."""

from __future__ import annotations

from .._creation import full_like
from ..tensor import Tensor
from .optimizer import (
    ParamsT,
    _check_flags,
    _check_functional,
    _count,
    _GroupwiseOptimizer,
    _init_group,
)

__all__ = ["Rprop", "rprop"]


class Rprop(_GroupwiseOptimizer):
    """Resilient backpropagation (Riedmiller & Braun, 1993), the variant without backtracking."""

    def __init__(self, params: ParamsT, lr: float = 1e-2,
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
        def init(p, grad, state):
            state["step_size"] = full_like(grad, float(group["lr"]))

        params, grads, states = _init_group(self, group, "prev", init=init)
        step_size_min, step_size_max = group["step_sizes"]
        etaminus, etaplus = group["etas"]
        rprop(params, grads, [s["prev"] for s in states], [s["step_size"] for s in states],
              [s["step"] for s in states], foreach=group["foreach"],
              capturable=group["capturable"], maximize=group["maximize"],
              differentiable=group["differentiable"], step_size_min=step_size_min,
              step_size_max=step_size_max, etaminus=etaminus, etaplus=etaplus)


def rprop(params: list[Tensor], grads: list[Tensor], prevs: list[Tensor],
          step_sizes: list[Tensor], state_steps: list[Tensor], foreach: bool | None = None,
          capturable: bool = False, maximize: bool = False, differentiable: bool = False,
          has_complex: bool = False, *, step_size_min: float, step_size_max: float,
          etaminus: float, etaplus: float) -> None:
    """Rprop's update of ``params`` and of its state lists in place."""
    _check_functional(state_steps, foreach=foreach, differentiable=differentiable)
    for i, p in enumerate(params):
        grad = -grads[i] if maximize else grads[i]
        prev, step_size = prevs[i], step_sizes[i]
        _count(state_steps[i])
        agreement = (grad * prev).sign()
        factor = (agreement.masked_fill(agreement > 0, etaplus)
                  .masked_fill(agreement < 0, etaminus).masked_fill(agreement == 0, 1))
        step_size.mul_(factor).clamp_(step_size_min, step_size_max)
        # After a sign change the gradient is taken as zero: no move, and no
        # sign comparison at the next step.
        grad = grad.masked_fill(agreement < 0, 0)
        p.addcmul_(grad.sign(), step_size, value=-1)
        prev.copy_(grad)
