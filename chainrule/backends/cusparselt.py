"""``torch.backends.cusparselt``: NVIDIA's cuSPARSELt, not available on the CPU."""

from __future__ import annotations

__all__ = ["version", "is_available", "get_max_alg_id"]


def version() -> int | None:
    """None: no cuSPARSELt."""
    return None


def is_available() -> bool:
    """False: no cuSPARSELt."""
    return False


def get_max_alg_id() -> int | None:
    """None: no cuSPARSELt."""
    return None
