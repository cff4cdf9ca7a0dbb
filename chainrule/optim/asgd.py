"""ASGD: SGD with a decaying step size and a running (Polyak) average of the iterates."""

from __future__ import annotations

from .._creation import tensor
from ..tensor import Tensor
from .optimizer import (
    ParamsT,
    _check_flags,
    _check_functional,
    _check_nonnegative,
    _count,
    _GroupwiseOptimizer,
    _init_group,
)

__all__ = ["ASGD", "asgd"]


class ASGD(_GroupwiseOptimizer):
    """Averaged SGD (Polyak & Juditsky, 1992); the average is ``state['ax']``."""

    def __init__(self, params: ParamsT, lr: float = 1e-2, lambd: float = 1e-4,
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
        scalars = {"eta": float(group["lr"]), "mu": 1.0}
        params, grads, states = _init_group(self, group, "ax", scalars=scalars)
        asgd(params, grads, [s["ax"] for s in states], [s["mu"] for s in states],
             [s["eta"] for s in states], [s["step"] for s in states], foreach=group["foreach"],
             maximize=group["maximize"], differentiable=group["differentiable"],
             capturable=group["capturable"], lambd=group["lambd"], lr=group["lr"],
             t0=group["t0"], alpha=group["alpha"], weight_decay=group["weight_decay"])


def asgd(params: list[Tensor], grads: list[Tensor], axs: list[Tensor], mus: list[Tensor],
         etas: list[Tensor], state_steps: list[Tensor], foreach: bool | None = None,
         maximize: bool = False, differentiable: bool = False, capturable: bool = False,
         has_complex: bool = False, *, lambd: float, lr: float, t0: float, alpha: float,
         weight_decay: float) -> None:
    """ASGD's update of ``params`` and of its state lists in place."""
    _check_functional(state_steps, foreach=foreach, differentiable=differentiable)
    for i, p in enumerate(params):
        grad = -grads[i] if maximize else grads[i]
        eta, mu, ax = etas[i], mus[i], axs[i]
        step = _count(state_steps[i])
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
