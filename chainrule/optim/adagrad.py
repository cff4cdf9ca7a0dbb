"""Adagrad (Duchi et al., 2011): per-coordinate steps scaled by the root of summed squares."""

from __future__ import annotations

from .._creation import full_like, tensor
from ..tensor import Tensor
from .optimizer import (
    ParamsT,
    _addcdiv_,
    _check_flags,
    _check_functional,
    _check_nonnegative,
    _GroupwiseOptimizer,
)

__all__ = ["Adagrad", "adagrad"]


class Adagrad(_GroupwiseOptimizer):
    """Adagrad with optional learning-rate decay; its state exists from construction on."""

    def __init__(self, params: ParamsT, lr: float = 1e-2, lr_decay: float = 0,
                 weight_decay: float = 0, initial_accumulator_value: float = 0,
                 eps: float = 1e-10, foreach: bool | None = None, *, maximize: bool = False,
                 differentiable: bool = False, fused: bool | None = None) -> None:
        _check_nonnegative(("Invalid learning rate", lr),
                           ("Invalid lr_decay value", lr_decay),
                           ("Invalid weight_decay value", weight_decay),
                           ("Invalid initial_accumulator_value value", initial_accumulator_value),
                           ("Invalid epsilon value", eps))
        _check_flags(differentiable, foreach, fused)
        defaults = dict(lr=lr, lr_decay=lr_decay, eps=eps, weight_decay=weight_decay,
                        initial_accumulator_value=initial_accumulator_value, foreach=foreach,
                        maximize=maximize, differentiable=differentiable, fused=fused)
        super().__init__(params, defaults)
        for group in self.param_groups:
            for p in group["params"]:
                self._init_state(p, group)

    def _init_state(self, p, group: dict) -> dict:
        state = self.state[p]
        state["step"] = tensor(0.0)
        state["sum"] = full_like(p, group["initial_accumulator_value"])
        return state

    def share_memory(self) -> None:
        """Move the accumulated sums to shared memory."""
        for group in self.param_groups:
            for p in group["params"]:
                self.state[p]["sum"].share_memory_()

    def _update(self, group: dict) -> None:
        params = [p for p in group["params"] if p.grad is not None]
        states = [self.state[p] or self._init_state(p, group) for p in params]
        adagrad(params, [p.grad for p in params], [s["sum"] for s in states],
                [s["step"] for s in states], fused=group["fused"], foreach=group["foreach"],
                differentiable=group["differentiable"], lr=group["lr"],
                weight_decay=group["weight_decay"], lr_decay=group["lr_decay"],
                eps=group["eps"], maximize=group["maximize"])


def adagrad(params: list[Tensor], grads: list[Tensor], state_sums: list[Tensor],
            state_steps: list[Tensor], fused: bool | None = None,
            grad_scale: Tensor | None = None, found_inf: Tensor | None = None,
            has_sparse_grad: bool = False, foreach: bool | None = None,
            differentiable: bool = False, has_complex: bool = False, *, lr: float,
            weight_decay: float, lr_decay: float, eps: float, maximize: bool) -> None:
    """Adagrad's update of ``params`` and of its state lists in place."""
    _check_functional(state_steps, grad_scale, found_inf, foreach, fused, differentiable)
    for i, p in enumerate(params):
        grad = -grads[i] if maximize else grads[i]
        step = state_steps[i].add_(1).item()
        if weight_decay != 0:
            grad = grad + p * weight_decay
        clr = lr / (1 + (step - 1) * lr_decay)
        state_sums[i].add_(grad * grad)
        _addcdiv_(p, grad, state_sums[i].sqrt() + eps, -clr)
