"""Muon: momentum SGD whose update is orthogonalised by a Newton–Schulz iteration (2-D params)."""

from __future__ import annotations

import math

from .._creation import zeros_like
from ..tensor import Tensor
from .optimizer import ParamsT, _check_functional, _check_nonnegative, _GroupwiseOptimizer

__all__ = ["Muon"]


def _orthogonalize(update: Tensor, ns_coefficients: tuple[float, float, float], ns_steps: int,
                   eps: float) -> Tensor:
    """Approximately the orthogonal factor of ``update``: ``ns_steps`` quintic Newton–Schulz
    iterations from the update scaled to unit norm (Jordan et al., 2024)."""
    if ns_steps >= 100:
        raise ValueError("Number of steps must be less than 100 for computational efficiency")
    if update.ndim != 2:
        raise ValueError("Input tensor gradient must be a 2D matrix")
    if len(ns_coefficients) != 3:
        raise ValueError("Coefficients must be a tuple of exactly 3 values")
    a, b, c = ns_coefficients
    tall = update.shape[0] > update.shape[1]
    x = update.T if tall else update
    x = x / x.norm().clamp(min=eps)
    for _ in range(ns_steps):
        gram = x @ x.T
        x = a * x + (b * gram + c * (gram @ gram)) @ x
    return x.T if tall else x


def _adjust_lr(lr: float, adjust_lr_fn: str | None, shape) -> float:
    rows, cols = shape[:2]
    if adjust_lr_fn is None or adjust_lr_fn == "original":
        return lr * math.sqrt(max(1, rows / cols))
    if adjust_lr_fn == "match_rms_adamw":
        return lr * 0.2 * math.sqrt(max(rows, cols))
    return lr


class Muon(_GroupwiseOptimizer):
    """MomentUm Orthogonalized by Newton–Schulz, for the 2-D weights of hidden layers."""

    def __init__(self, params: ParamsT, lr: float = 1e-3, weight_decay: float = 0.1,
                 momentum: float = 0.95, nesterov: bool = True,
                 ns_coefficients: tuple[float, float, float] = (3.4445, -4.775, 2.0315),
                 eps: float = 1e-07, ns_steps: int = 5,
                 adjust_lr_fn: str | None = None) -> None:
        _check_nonnegative(("Learning rate should be >= 0 but is", lr),
                           ("momentum should be >= 0 but is", momentum),
                           ("weight decay should be >= 0 but is", weight_decay))
        if adjust_lr_fn is not None and adjust_lr_fn not in ("original", "match_rms_adamw"):
            raise ValueError(f"Adjust learning rate function {adjust_lr_fn} is not supported")
        defaults = dict(lr=lr, weight_decay=weight_decay, momentum=momentum, nesterov=nesterov,
                        ns_coefficients=ns_coefficients, eps=eps, ns_steps=ns_steps,
                        adjust_lr_fn=adjust_lr_fn)
        super().__init__(params, defaults)
        for group in self.param_groups:
            for p in group["params"]:
                if p.ndim != 2:
                    raise ValueError("Muon only supports 2D parameters whereas we found a "
                                     f"parameter with size: {p.size()}")

    def _update(self, group: dict) -> None:
        params, grads, buffers = [], [], []
        for p in group["params"]:
            grad = p.grad
            if grad is None:
                continue
            if p.dtype.is_complex:
                raise RuntimeError("Muon does not support complex parameters")
            if grad.ndim != 2:
                raise ValueError("Param gradient must be a 2D matrix")
            state = self.state[p]
            if "momentum_buffer" not in state:
                state["momentum_buffer"] = zeros_like(grad)
            params.append(p)
            grads.append(grad)
            buffers.append(state["momentum_buffer"])
        muon(params, grads, buffers, lr=group["lr"], weight_decay=group["weight_decay"],
             momentum=group["momentum"], nesterov=group["nesterov"],
             ns_coefficients=group["ns_coefficients"], ns_steps=group["ns_steps"],
             eps=group["eps"], adjust_lr_fn=group["adjust_lr_fn"], has_complex=False)


Muon.__module__ = "chainrule.optim"


def muon(params: list[Tensor], grads: list[Tensor], muon_momentum_bufs: list[Tensor], *,
         foreach: bool | None = None, lr: float, weight_decay: float, momentum: float,
         nesterov: bool, ns_coefficients: tuple[float, float, float], ns_steps: int,
         eps: float, adjust_lr_fn: str | None, has_complex: bool) -> None:
    """Muon's update of ``params`` and of its momentum buffers in place."""
    _check_functional(foreach=foreach)
    lr = float(lr)
    for i, p in enumerate(params):
        grad, buf = grads[i], muon_momentum_bufs[i]
        buf.lerp_(grad, 1 - momentum)
        update = grad.lerp(buf, momentum) if nesterov else buf
        update = _orthogonalize(update, ns_coefficients, ns_steps, eps)
        p.mul_(1 - lr * weight_decay)
        p.add_(update, alpha=-_adjust_lr(lr, adjust_lr_fn, p.shape))
