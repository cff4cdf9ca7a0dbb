"""ASGD: SGD with a decaying step size and a running (Polyak) average of the iterates."""

from __future__ import annotations

from collections.abc import Iterable

from .. import tensor
from .optimizer import _check_flags, _check_nonnegative, _GroupwiseOptimizer, _with_grads

__all__ = ["ASGD"]


class ASGD(_GroupwiseOptimizer):
    """Averaged SGD (Polyak & Juditsky, 1992); the average is ``state['ax']``."""

    def __init__(self, params: Iterable, lr: float = 1e-2, lambd: float = 1e-4,
                 alpha: float = 0.75, t0: float = 1e6, weight_decay: float = 0,
                 foreach: bool | None = None, maximize: bool = False,
                 differentiable: bool = False, capturable: bool = False) -> None:
        _check_nonnegative(("Invalid learning rate", lr),
                           ("Invalid weight_decay value", weight_decay))
        _check_flags(differentiable, foreach)
        defaults = dict(lr=lr, lambd=lambd, alpha=alpha, t0=t0, weight_decay=weight_decay,
                        foreach=foreach, maximize=maximize, differentiable=differentiable,
                        capturable=capturable)
        super().__init__(params, defaults)

    def _update(self, group: dict) -> None:
        lr, lambd, alpha, t0 = group["lr"], group["lambd"], group["alpha"], group["t0"]
        weight_decay = group["weight_decay"]
        scalars = {"eta": float(lr), "mu": 1.0}
        for p, grad, state, step in _with_grads(self, group, "ax", scalars=scalars):
            eta, mu, ax = state["eta"], state["mu"], state["ax"]
            if weight_decay != 0:
                grad = grad + p * weight_decay
            eta_value = eta.item()
            p.mul_(1 - lambd * eta_value)
            p.add_(grad, alpha=-eta_value)
            if mu.item() != 1:
                ax.add_((p - ax) * mu.item())
            else:
                ax.copy_(p)
            # Through tensors of the default dtype, as PyTorch: its rounding shows once
            # a loaded state_dict has made eta and mu float64.
            eta.copy_(tensor(lr / ((1 + lambd * lr * step) ** alpha)))
            mu.copy_(tensor(1 / max(1, step - t0)))
