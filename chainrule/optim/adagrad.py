"""Adagrad (Duchi et al., 2011): per-coordinate steps scaled by the root of summed squares."""

from __future__ import annotations

from collections.abc import Iterable

from .. import full_like, tensor
from .optimizer import _addcdiv_, _check_flags, _check_nonnegative, _GroupwiseOptimizer

__all__ = ["Adagrad"]


class Adagrad(_GroupwiseOptimizer):
    """Adagrad with optional learning-rate decay; its state exists from construction on."""

    def __init__(self, params: Iterable, lr: float = 1e-2, lr_decay: float = 0,
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

    def _update(self, group: dict) -> None:
        lr, lr_decay, eps = group["lr"], group["lr_decay"], group["eps"]
        weight_decay = group["weight_decay"]
        for p, grad in self._grads(group):
            state = self.state[p] or self._init_state(p, group)
            step = state["step"].add_(1).item()
            state_sum = state["sum"]

            if weight_decay != 0:
                grad = grad + p * weight_decay
            clr = lr / (1 + (step - 1) * lr_decay)
            state_sum.add_(grad * grad)
            _addcdiv_(p, grad, state_sum.sqrt() + eps, -clr)
