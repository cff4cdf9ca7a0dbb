"""``torch.backends.openmp``: chainrule runs ops one after another, without OpenMP."""

from __future__ import annotations


def is_available() -> bool:
    """False: chainrule is not built with OpenMP (as ``torch.has_openmp`` says)."""
    return False
