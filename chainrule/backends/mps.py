"""``torch.backends.mps``: Apple's Metal backend is neither built nor available."""

from __future__ import annotations


def is_available() -> bool:
    """False: chainrule runs on the CPU only."""
    return False


def is_built() -> bool:
    """False: chainrule runs on the CPU only."""
    return False
