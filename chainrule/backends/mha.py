"""``torch.backends.mha``: whether MultiheadAttention and the Transformer layers may take
PyTorch's fused inference fast path (recorded: chainrule computes the same result either way)."""

from __future__ import annotations

_is_fastpath_enabled: bool = True


def get_fastpath_enabled() -> bool:
    """Whether the fast path is enabled."""
    return _is_fastpath_enabled


def set_fastpath_enabled(value: bool) -> None:
    """Enable or disable the fast path."""
    global _is_fastpath_enabled
    _is_fastpath_enabled = value
