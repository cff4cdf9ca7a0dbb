"""NAdam (Dozat, 2016): Adam with Nesterov momentum and a momentum-decay schedule."""

from __future__ import annotations

from collections.abc import Iterable

from .optimizer import (
    _addcdiv_,
    _check_adam_family,
    _check_flags,
    _decay,
    _GroupwiseOptimizer,
    _update_moments,
    _with_grads,
)

__all__ = ["NAdam"]


class NAdam(_GroupwiseOptimizer):
    """NAdam; ``decoupled_weight_decay=True`` gives NAdamW."""

    def __init__(self, params: Iterable, lr: float = 2e-3,
                 betas: tuple[float, float] = (0.9, 0.999), eps: float = 1e-8,
                 weight_decay: float = 0, momentum_decay: float = 4e-3,
                 decoupled_weight_decay: bool = False, *, foreach: bool | None = None,
                 maximize: bool = False, capturable: bool = False,
                 differentiable: bool = False) -> None:
        _check_adam_family(lr, betas, eps, weight_decay)
        if not 0.0 <= momentum_decay:
            raise ValueError(f"Invalid momentum_decay value: {momentum_decay}")
        _check_flags(differentiable, foreach)
        defaults = dict(lr=lr, betas=betas, eps=eps, weight_decay=weight_decay,
                        momentum_decay=momentum_decay,
                        decoupled_weight_decay=decoupled_weight_decay, maximize=maximize,
                        foreach=foreach, capturable=capturable, differentiable=differentiable)
        super().__init__(params, defaults)

    def _update(self, group: dict) -> None:
        lr, (beta1, beta2), eps = group["lr"], group["betas"], group["eps"]
        momentum_decay = group["momentum_decay"]
        updates = _with_grads(self, group, "exp_avg", "exp_avg_sq",
                              scalars={"mu_product": 1.0})
        for p, grad, state, step in updates:
            exp_avg, exp_avg_sq = state["exp_avg"], state["exp_avg_sq"]
            grad = _decay(p, grad, group)
            # The momentum schedule of Dozat's paper: mu_t = beta1 (1 - 0.96^(t psi) / 2).
            mu = beta1 * (1.0 - 0.5 * 0.96 ** (step * momentum_decay))
            mu_next = beta1 * (1.0 - 0.5 * 0.96 ** ((step + 1) * momentum_decay))
            # The product is kept as a float32 tensor, as PyTorch does (same rounding).
            mu_product = state["mu_product"].mul_(mu).item()
            mu_product_next = mu_product * mu_next

            _update_moments(exp_avg, exp_avg_sq, grad, beta1, beta2)
            denom = (exp_avg_sq / (1 - beta2**step)).sqrt() + eps
            _addcdiv_(p, grad, denom, -lr * (1 - mu) / (1 - mu_product))
            _addcdiv_(p, exp_avg, denom, -lr * mu_next / (1 - mu_product_next))
