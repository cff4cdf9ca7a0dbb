"""RMSprop (Hinton's lecture 6e), with optional momentum and the centered variant (Graves, 2013)."""

from __future__ import annotations

from ..tensor import Tensor
from .optimizer import (
    ParamsT,
    _addcdiv_,
    _addcmul_,
    _check_flags,
    _check_functional,
    _check_nonnegative,
    _count,
    _decay,
    _GroupwiseOptimizer,
    _init_group,
    _lerp_,
)

__all__ = ["RMSprop", "rmsprop"]


class RMSprop(_GroupwiseOptimizer):
    """Divide the gradient by a running root mean square of recent gradients."""

    def __init__(self, params: ParamsT, lr: float = 1e-2, alpha: float = 0.99,
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
        momentum, centered = group["momentum"], group["centered"]
        buffers = (("square_avg",) + (("momentum_buffer",) if momentum > 0 else ())
                   + (("grad_avg",) if centered else ()))
        params, grads, states = _init_group(self, group, *buffers)
        rmsprop(params, grads, [s["square_avg"] for s in states],
                [s.get("grad_avg") for s in states], [s.get("momentum_buffer") for s in states],
                [s["step"] for s in states], foreach=group["foreach"],
                maximize=group["maximize"], differentiable=group["differentiable"],
                capturable=group["capturable"], lr=group["lr"], alpha=group["alpha"],
                eps=group["eps"], weight_decay=group["weight_decay"], momentum=momentum,
                centered=centered)


def rmsprop(params: list[Tensor], grads: list[Tensor], square_avgs: list[Tensor],
            grad_avgs: list[Tensor], momentum_buffer_list: list[Tensor],
            state_steps: list[Tensor], foreach: bool | None = None, maximize: bool = False,
            differentiable: bool = False, capturable: bool = False, has_complex: bool = False,
            *, lr: float, alpha: float, eps: float, weight_decay: float, momentum: float,
            centered: bool) -> None:
    """RMSprop's update of ``params`` and of its state lists in place."""
    _check_functional(state_steps, foreach=foreach, differentiable=differentiable)
    for i, p in enumerate(params):
        grad = -grads[i] if maximize else grads[i]
        square_avg = square_avgs[i]
        _count(state_steps[i])
        grad = _decay(p, grad, lr, weight_decay)
        square_avg.mul_(alpha)
        _addcmul_(square_avg, grad, grad, 1 - alpha)
        if centered:
            grad_avg = grad_avgs[i]
            _lerp_(grad_avg, grad, 1 - alpha)
            avg = (square_avg - grad_avg * grad_avg).sqrt() + eps
        else:
            avg = square_avg.sqrt() + eps
        if momentum > 0:
            buf = momentum_buffer_list[i]
            buf.mul_(momentum)
            _addcdiv_(buf, grad, avg)
            p.sub_(buf * lr)
        else:
            _addcdiv_(p, grad, avg, -lr)
