"""NAdam (Dozat, 2016): Adam with Nesterov momentum and a momentum-decay schedule."""

from __future__ import annotations

from ..tensor import Tensor
from .optimizer import (
    ParamsT,
    _addcdiv_,
    _check_adam_family,
    _check_flags,
    _check_functional,
    _count,
    _decay,
    _GroupwiseOptimizer,
    _init_group,
    _update_moments,
)

__all__ = ["NAdam", "nadam"]


class NAdam(_GroupwiseOptimizer):
    """NAdam; ``decoupled_weight_decay=True`` gives NAdamW."""

    def __init__(self, params: ParamsT, lr: float = 2e-3,
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
        params, grads, states = _init_group(self, group, "exp_avg", "exp_avg_sq",
                                            scalars={"mu_product": 1.0})
        beta1, beta2 = group["betas"]
        nadam(params, grads, [s["exp_avg"] for s in states], [s["exp_avg_sq"] for s in states],
              [s["mu_product"] for s in states], [s["step"] for s in states],
              decoupled_weight_decay=group["decoupled_weight_decay"], foreach=group["foreach"],
              capturable=group["capturable"], differentiable=group["differentiable"],
              maximize=group["maximize"], beta1=beta1, beta2=beta2, lr=group["lr"],
              weight_decay=group["weight_decay"], momentum_decay=group["momentum_decay"],
              eps=group["eps"])


def nadam(params: list[Tensor], grads: list[Tensor], exp_avgs: list[Tensor],
          exp_avg_sqs: list[Tensor], mu_products: list[Tensor], state_steps: list[Tensor],
          decoupled_weight_decay: bool = False, foreach: bool | None = None,
          capturable: bool = False, differentiable: bool = False, has_complex: bool = False,
          maximize: bool = False, *, beta1: float, beta2: float, lr: float,
          weight_decay: float, momentum_decay: float, eps: float) -> None:
    """NAdam's update of ``params`` and of its state lists in place."""
    _check_functional(state_steps, foreach=foreach, differentiable=differentiable)
    for i, p in enumerate(params):
        grad = -grads[i] if maximize else grads[i]
        exp_avg, exp_avg_sq = exp_avgs[i], exp_avg_sqs[i]
        step = _count(state_steps[i])
        grad = _decay(p, grad, lr, weight_decay, decoupled_weight_decay)
        # The momentum schedule of Dozat's paper: mu_t = beta1 (1 - 0.96^(t psi) / 2).
        mu = beta1 * (1.0 - 0.5 * 0.96 ** (step * momentum_decay))
        mu_next = beta1 * (1.0 - 0.5 * 0.96 ** ((step + 1) * momentum_decay))
        # The product is kept as a float32 tensor, as PyTorch does (same rounding).
        mu_product = mu_products[i].mul_(mu).item()
        mu_product_next = mu_product * mu_next
        _update_moments(exp_avg, exp_avg_sq, grad, beta1, beta2)
        denom = (exp_avg_sq / (1 - beta2**step)).sqrt() + eps
        _addcdiv_(p, grad, denom, -lr * (1 - mu) / (1 - mu_product))
        _addcdiv_(p, exp_avg, denom, -lr * mu_next / (1 - mu_product_next))
