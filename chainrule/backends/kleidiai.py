"""``torch.backends.kleidiai``: Arm's KleidiAI kernels, which chainrule does not use."""

from __future__ import annotations


def is_available() -> bool:
    """False: chainrule is not built with KleidiAI."""
    return False
