"""``torch.accelerator``: the current accelerator, as PyTorch's CPU build answers: there is
none, so ``is_available()`` is False, ``device_count()`` 0, ``current_accelerator()`` None, and
everything that needs a device raises PyTorch's RuntimeError."""

from __future__ import annotations

import warnings

from .graphs import Graph
from .memory import (
    _unavailable,
    empty_cache,
    empty_host_cache,
    get_memory_info,
    max_memory_allocated,
    max_memory_reserved,
    memory_allocated,
    memory_reserved,
    memory_stats,
    reset_accumulated_memory_stats,
    reset_peak_memory_stats,
)

__all__ = ["Graph", "current_accelerator", "current_device_idx", "current_device_index",
           "get_device_capability", "current_stream", "device_count", "device_index",
           "empty_cache", "empty_host_cache", "get_memory_info", "is_available",
           "max_memory_allocated", "max_memory_reserved", "memory_allocated", "memory_reserved",
           "memory_stats", "reset_accumulated_memory_stats", "reset_peak_memory_stats",
           "set_device_idx", "set_device_index", "set_stream", "synchronize"]


def device_count() -> int:
    """0: no accelerator."""
    return 0


def is_available() -> bool:
    """False: no accelerator."""
    return False


def current_accelerator(check_available: bool = False):
    """None: no accelerator (the CPU is not one)."""
    return None


def current_device_index() -> int:
    """The current accelerator's index: raises, there is none."""
    _unavailable()


def current_device_idx() -> int:
    """Deprecated name of ``current_device_index``."""
    warnings.warn("Use `current_device_index` instead.", FutureWarning, stacklevel=2)
    return current_device_index()


def set_device_index(device, /) -> None:
    """Select an accelerator: raises, there is none."""
    _unavailable()


def set_device_idx(device, /) -> None:
    """Deprecated name of ``set_device_index``."""
    warnings.warn("Use `set_device_index` instead.", FutureWarning, stacklevel=2)
    set_device_index(device)


def get_device_capability(device=None, /) -> dict:
    """An accelerator's capabilities: raises, there is none."""
    _unavailable()


def current_stream(device=None, /):
    """An accelerator's current stream: raises, there is none."""
    _unavailable()


def set_stream(stream) -> None:
    """Select an accelerator stream: raises, there is none."""
    _unavailable()


def synchronize(device=None, /) -> None:
    """Wait for an accelerator: raises, there is none."""
    _unavailable()


class device_index:
    """Select accelerator ``device`` inside the block; None selects nothing (an index raises
    on entry: there is no accelerator)."""

    def __init__(self, device: int | None, /) -> None:
        self.idx = device
        self.prev_idx = -1

    def __enter__(self) -> None:
        if self.idx is not None:
            _unavailable()

    def __exit__(self, *exc) -> None:
        pass
