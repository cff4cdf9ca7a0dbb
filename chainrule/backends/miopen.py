"""``torch.backends.miopen``: AMD's MIOpen, not available on the CPU; its flag is recorded."""

from __future__ import annotations

from contextlib import contextmanager

immediate = False


def set_flags(_immediate=None) -> tuple:
    """Record MIOpen's immediate mode (None leaves it); the previous setting."""
    global immediate
    previous = (immediate,)
    if _immediate is not None:
        immediate = _immediate
    return previous


@contextmanager
def flags(immediate=False):
    """Record ``immediate`` inside the block, and the previous setting after it."""
    previous = set_flags(immediate)
    try:
        yield
    finally:
        set_flags(*previous)
