"""SGD with optional momentum (heavy-ball or Nesterov), dampening and weight decay."""

from __future__ import annotations

from ..tensor import Tensor
from .optimizer import ParamsT, _check_flags, _check_functional, _GroupwiseOptimizer

__all__ = ["SGD", "sgd"]


class SGD(_GroupwiseOptimizer):
    """Stochastic gradient descent, PyTorch's update rule and defaults."""

    def __init__(self, params: ParamsT, lr: float = 1e-3, momentum: float = 0,
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
        params = [p for p in group["params"] if p.grad is not None]
        buffers = [self.state[p].get("momentum_buffer") for p in params] \
            if group["momentum"] != 0 else []
        sgd(params, [p.grad for p in params], buffers, foreach=group["foreach"],
            fused=group["fused"], weight_decay=group["weight_decay"],
            momentum=group["momentum"], lr=group["lr"], dampening=group["dampening"],
            nesterov=group["nesterov"], maximize=group["maximize"])
        if group["momentum"] != 0:
            for p, buffer in zip(params, buffers):
                self.state[p]["momentum_buffer"] = buffer


def sgd(params: list[Tensor], d_p_list: list[Tensor], momentum_buffer_list: list[Tensor | None],
        has_sparse_grad: bool = False, foreach: bool | None = None, fused: bool | None = None,
        grad_scale: Tensor | None = None, found_inf: Tensor | None = None, *,
        weight_decay: float, momentum: float, lr: float, dampening: float, nesterov: bool,
        maximize: bool) -> None:
    """SGD's update of ``params`` in place; a momentum buffer that is None is created (in the
    list) on first use."""
    _check_functional(None, grad_scale, found_inf, foreach, fused)
    # PyTorch's single-tensor update, op for op (dispatch modes see its calls: add_ with alpha)
    for i, p in enumerate(params):
        grad = -d_p_list[i] if maximize else d_p_list[i]
        if weight_decay != 0:
            grad = grad.add(p, alpha=weight_decay)
        if momentum != 0:
            buf = momentum_buffer_list[i]
            if buf is None:
                buf = momentum_buffer_list[i] = grad.detach().clone()
            else:
                buf.mul_(momentum).add_(grad, alpha=1 - dampening)
            grad = grad.add(buf, alpha=momentum) if nesterov else buf
        p.add_(grad, alpha=-lr)
