"""``torch.utils.debug_log``: log the gradient norms of tensors during backward.

``debug_grad_log(x, y)`` hooks the tensors that require grad (once per call, for every later
backward that reaches them, as PyTorch's hook stays registered) and, when a backward has
computed all their gradients, logs ``[rank R][bwd] t0_grad_norm=... t1_grad_norm=...`` at INFO
level to this module's logger.
"""

from __future__ import annotations

import logging

from .. import distributed as dist
from ..autograd.graph import register_multi_grad_hook
from ..tensor import Tensor

__all__ = ["debug_grad_log"]

log = logging.getLogger(__name__)


def _get_rank() -> int:
    if not dist.is_available() or not dist.is_initialized():
        return 0
    return dist.get_rank()


def _log_norms(grads) -> None:
    norms = " ".join(f"t{i}_grad_norm={g.norm().item():.4f}" for i, g in enumerate(grads))
    log.info("[rank %d][bwd] %s", _get_rank(), norms)


def debug_grad_log(*tensors) -> None:
    """Log gradient norms of multiple tensors during backward (a no-op in the forward)."""
    watched = [t for t in tensors if isinstance(t, Tensor) and t.requires_grad]
    if watched:
        register_multi_grad_hook(watched, _log_norms, mode="all")
