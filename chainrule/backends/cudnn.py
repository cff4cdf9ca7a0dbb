"""``torch.backends.cudnn``: not available; its flags are plain settable attributes."""

from __future__ import annotations

enabled = True
benchmark = False
deterministic = False
allow_tf32 = True
benchmark_limit = None


def is_available() -> bool:
    """False: chainrule runs on the CPU only."""
    return False


def version() -> None:
    """None: no cuDNN."""
    return None
