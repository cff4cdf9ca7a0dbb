"""SGD with optional momentum (heavy-ball or Nesterov), dampening and weight decay."""

from __future__ import annotations

from collections.abc import Iterable

from .optimizer import _check_flags, _GroupwiseOptimizer

__all__ = ["SGD"]


class SGD(_GroupwiseOptimizer):
    """Stochastic gradient descent, PyTorch's update rule and defaults."""

    def __init__(self, params: Iterable, lr: float = 1e-3, momentum: float = 0,
                 dampening: float = 0, weight_decay: float = 0, nesterov: bool = False, *,
                 maximize: bool = False, foreach: bool | None = None,
                 differentiable: bool = False, fused: bool | None = None) -> None:
        if lr < 0.0:
            raise ValueError(f"Invalid learning rate: {lr}")
        if momentum < 0.0:
            raise ValueError(f"Invalid momentum value: {momentum}")
        if weight_decay < 0.0:
            raise ValueError(f"Invalid weight_decay value: {weight_decay}")
        if nesterov and (momentum <= 0 or dampening != 0):
            raise ValueError("Nesterov momentum requires a momentum and zero dampening")
        _check_flags(differentiable, foreach, fused)
        defaults = dict(lr=lr, momentum=momentum, dampening=dampening,
                        weight_decay=weight_decay, nesterov=nesterov, maximize=maximize,
                        foreach=foreach, differentiable=differentiable, fused=fused)
        super().__init__(params, defaults)

    def _update(self, group: dict) -> None:
        lr, momentum = group["lr"], group["momentum"]
        dampening, weight_decay = group["dampening"], group["weight_decay"]
        for p, grad in self._grads(group):
            if weight_decay != 0:
                grad = grad + p * weight_decay
            if momentum != 0:
                state = self.state[p]
                buf = state.get("momentum_buffer")
                if buf is None:
                    buf = state["momentum_buffer"] = grad.detach().clone()
                else:
                    buf.mul_(momentum).add_(grad, alpha=1 - dampening)
                grad = grad + buf * momentum if group["nesterov"] else buf
            p.sub_(grad * lr)
