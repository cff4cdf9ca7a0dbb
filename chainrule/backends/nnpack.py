"""``torch.backends.nnpack``: chainrule does not use NNPACK; its flag is recorded."""

from __future__ import annotations

from contextlib import contextmanager

__all__ = ["is_available", "flags", "set_flags"]

_state = {"enabled": True}


def is_available() -> bool:
    """False: chainrule is not built with NNPACK."""
    return False


def set_flags(_enabled):
    """Record whether NNPACK may be used; the previous setting."""
    previous = (_state["enabled"],)
    _state["enabled"] = _enabled
    return previous


@contextmanager
def flags(enabled=False):
    """Record ``enabled`` inside the block, and the previous setting after it."""
    previous = set_flags(enabled)
    try:
        yield
    finally:
        set_flags(*previous)
