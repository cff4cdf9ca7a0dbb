"""``torch.cuda.amp.common``."""

from __future__ import annotations

__all__ = ["amp_definitely_not_available"]


def amp_definitely_not_available() -> bool:
    """True: there is neither CUDA nor an XLA device for mixed precision to run on."""
    return True
