"""SparseAdam: Adam for sparse-layout gradients (chainrule has only dense ones, so it refuses)."""

from __future__ import annotations

from collections.abc import Iterable

from .optimizer import _GroupwiseOptimizer

__all__ = ["SparseAdam"]


class SparseAdam(_GroupwiseOptimizer):
    """Adam for sparse gradients; a dense gradient raises PyTorch's error."""

    def __init__(self, params: Iterable, lr: float = 1e-3,
                 betas: tuple[float, float] = (0.9, 0.999), eps: float = 1e-08,
                 maximize: bool = False) -> None:
        if not 0.0 < lr:
            raise ValueError(f"Invalid learning rate: {lr}")
        if not 0.0 < eps:
            raise ValueError(f"Invalid epsilon value: {eps}")
        for i, beta in enumerate(betas[:2]):
            if not 0.0 <= beta < 1.0:
                raise ValueError(f"Invalid beta parameter at index {i}: {beta}")
        defaults = dict(lr=lr, betas=betas, eps=eps, maximize=maximize)
        super().__init__(params, defaults)
        complex_params = [[i, j] for i, group in enumerate(self.param_groups)
                          for j, p in enumerate(group["params"]) if p.dtype.is_complex]
        if complex_params:
            raise ValueError(f"Complex params at indices {complex_params}: SparseAdam does not "
                             "support complex parameters")

    def _update(self, group: dict) -> None:
        """Raises for the dense gradients chainrule produces, as PyTorch does."""
        for p in group["params"]:
            if p.grad is not None:
                raise RuntimeError("SparseAdam does not support dense gradients, please "
                                   "consider Adam instead")
