"""Adafactor (Shazeer & Stern, 2018): second moments kept as row and column factors."""

from __future__ import annotations

import math

from .._backend import xp
from .._creation import tensor, zeros_like
from ..tensor import Tensor
from .optimizer import ParamsT, _check_functional, _GroupwiseOptimizer

__all__ = ["Adafactor", "adafactor"]


class Adafactor(_GroupwiseOptimizer):
    """Adafactor as PyTorch has it: relative step size, factored variance, update clipping."""

    def __init__(self, params: ParamsT, lr: float = 1e-2, beta2_decay: float = -0.8,
                 eps: tuple[float | None, float] = (None, 1e-3), d: float = 1.0,
                 weight_decay: float = 0.0, *, foreach: bool | None = None,
                 maximize: bool = False) -> None:
        if not 0.0 <= lr:
            raise ValueError(f"Learning rate should be >= 0 but is: {lr}")
        if not 0.0 >= beta2_decay:
            raise ValueError(f"beta2_decay should be <= 0 but is: {beta2_decay}")
        if eps[0] is not None and not 0.0 <= eps[0]:
            raise ValueError(f"epsilon1 should be >= 0 but is: {eps[0]}")
        if not 0.0 <= eps[1]:
            raise ValueError(f"epsilon2 should be >= 0 but is: {eps[1]}")
        if not 1.0 <= d:
            raise ValueError(f"Clipping threshold d should be >= 1 but is: {d}")
        if not 0.0 <= weight_decay:
            raise ValueError(f"weight_decay should be >= 0 but is: {weight_decay}")
        defaults = dict(lr=lr, beta2_decay=beta2_decay, eps=eps, d=d, weight_decay=weight_decay,
                        foreach=foreach, maximize=maximize)
        super().__init__(params, defaults)

    def _update(self, group: dict) -> None:
        params, grads, states = [], [], []
        for p in group["params"]:
            grad = p.grad
            if grad is None:
                continue
            if p.dtype.is_complex:
                raise RuntimeError("Adafactor does not support complex parameters")
            state = self.state[p]
            if not state:
                state["step"] = tensor(0.0)
                if grad.ndim > 1:
                    state["row_var"] = grad.new_zeros((*grad.shape[:-1], 1))
                    state["col_var"] = grad.new_zeros((*grad.shape[:-2], 1, grad.shape[-1]))
                else:
                    state["variance"] = zeros_like(grad)
            params.append(p)
            grads.append(grad)
            states.append(state)
        eps1, eps2 = group["eps"]
        adafactor(params, grads, [s.get("row_var") for s in states],
                  [s.get("col_var") for s in states], [s.get("variance") for s in states],
                  [s["step"] for s in states], foreach=group["foreach"], d=group["d"],
                  lr=group["lr"], beta2_decay=group["beta2_decay"],
                  weight_decay=group["weight_decay"], eps1=eps1, eps2=eps2,
                  maximize=group["maximize"])


Adafactor.__module__ = "chainrule.optim"


def adafactor(params: list[Tensor], grads: list[Tensor], row_vars: list[Tensor | None],
              col_vars: list[Tensor | None], variances: list[Tensor | None],
              state_steps: list[Tensor], foreach: bool | None = None,
              grad_scale: Tensor | None = None, found_inf: Tensor | None = None,
              has_complex: bool = False, *, d: float, lr: float, beta2_decay: float,
              weight_decay: float, eps1: float | None, eps2: float, maximize: bool) -> None:
    """Adafactor's update of ``params`` and of its state lists in place."""
    _check_functional(state_steps, foreach=foreach)
    if grad_scale is not None or found_inf is not None:
        raise AssertionError("Grad scaling should occur outside of optimizer.step()")
    lr = float(lr)
    for i, p in enumerate(params):
        grad = -grads[i] if maximize else grads[i]
        if eps1 is None:  # fixed by the first parameter, as PyTorch
            eps1 = float(xp.finfo(p._data.dtype).eps)
        step = state_steps[i].add_(1).item()
        beta2_complement = step**beta2_decay
        rho = min(lr, 1 / step**0.5)
        alpha = max(eps2, p.norm(2).item() / math.sqrt(p.numel())) * rho
        if weight_decay != 0:
            p.mul_(1 - lr * weight_decay)
        if grad.ndim > 1:
            row_var, col_var = row_vars[i], col_vars[i]
            row_var.lerp_((grad * grad).mean(dim=-1, keepdim=True), beta2_complement)
            col_var.lerp_((grad * grad).mean(dim=-2, keepdim=True), beta2_complement)
            var_estimate = row_var @ col_var
            var_estimate = var_estimate / row_var.mean(dim=-2, keepdim=True).clamp(min=eps1)
        else:
            variances[i].lerp_(grad * grad, beta2_complement)
            var_estimate = variances[i]
        update = var_estimate.clamp(min=eps1 * eps1).rsqrt() * grad
        denom = max(1.0, update.norm(2).item() / (math.sqrt(update.numel()) * d))
        p.add_(update, alpha=-alpha / denom)
