"""torch.signal: signal processing (its windows)."""

from . import windows

__all__ = ["windows"]
