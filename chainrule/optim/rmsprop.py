"""RMSprop (Hinton's lecture 6e), with optional momentum and the centered variant (Graves, 2013)."""

from __future__ import annotations

from collections.abc import Iterable

from .optimizer import (
    _addcdiv_,
    _addcmul_,
    _check_flags,
    _check_nonnegative,
    _decay,
    _GroupwiseOptimizer,
    _lerp_,
    _with_grads,
)

__all__ = ["RMSprop"]


class RMSprop(_GroupwiseOptimizer):
    """Divide the gradient by a running root mean square of recent gradients."""

    def __init__(self, params: Iterable, lr: float = 1e-2, alpha: float = 0.99,
                 eps: float = 1e-8, weight_decay: float = 0, momentum: float = 0,
                 centered: bool = False, capturable: bool = False, foreach: bool | None = None,
                 maximize: bool = False, differentiable: bool = False) -> None:
        _check_nonnegative(("Invalid learning rate", lr),
                           ("Invalid epsilon value", eps),
                           ("Invalid momentum value", momentum),
                           ("Invalid weight_decay value", weight_decay),
                           ("Invalid alpha value", alpha))
        _check_flags(differentiable, foreach)
        defaults = dict(lr=lr, momentum=momentum, alpha=alpha, eps=eps, centered=centered,
                        weight_decay=weight_decay, capturable=capturable, foreach=foreach,
                        maximize=maximize, differentiable=differentiable)
        super().__init__(params, defaults)

    def _update(self, group: dict) -> None:
        lr, alpha, eps = group["lr"], group["alpha"], group["eps"]
        momentum, centered = group["momentum"], group["centered"]
        buffers = (("square_avg",) + (("momentum_buffer",) if momentum > 0 else ())
                   + (("grad_avg",) if centered else ()))
        for p, grad, state, _ in _with_grads(self, group, *buffers):
            square_avg = state["square_avg"]
            grad = _decay(p, grad, group)
            square_avg.mul_(alpha)
            _addcmul_(square_avg, grad, grad, 1 - alpha)
            if centered:
                grad_avg = state["grad_avg"]
                _lerp_(grad_avg, grad, 1 - alpha)
                avg = (square_avg - grad_avg * grad_avg).sqrt() + eps
            else:
                avg = square_avg.sqrt() + eps
            if momentum > 0:
                buf = state["momentum_buffer"]
                buf.mul_(momentum)
                _addcdiv_(buf, grad, avg)
                p.sub_(buf * lr)
            else:
                _addcdiv_(p, grad, avg, -lr)
