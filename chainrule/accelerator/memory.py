"""``torch.accelerator.memory``: an accelerator's memory statistics; there is no accelerator,
so each raises PyTorch's RuntimeError."""

from __future__ import annotations

from collections import OrderedDict
from typing import NoReturn

__all__ = ["empty_cache", "empty_host_cache", "get_memory_info", "max_memory_allocated",
           "max_memory_reserved", "memory_allocated", "memory_reserved", "memory_stats",
           "reset_accumulated_memory_stats", "reset_peak_memory_stats"]


def _unavailable() -> NoReturn:
    raise RuntimeError("Cannot access accelerator device when none is available.")


def empty_cache() -> None:
    """Release the accelerator's cached memory: raises, there is no accelerator."""
    _unavailable()


def empty_host_cache() -> None:
    """Release the pinned host memory cache: raises, there is no accelerator."""
    _unavailable()


def get_memory_info(device_index=None, /) -> tuple[int, int]:
    """Free and total accelerator memory: raises, there is no accelerator."""
    _unavailable()


def memory_allocated(device_index=None, /) -> int:
    """Bytes allocated on the accelerator: raises, there is no accelerator."""
    _unavailable()


def max_memory_allocated(device_index=None, /) -> int:
    """Peak bytes allocated on the accelerator: raises, there is no accelerator."""
    _unavailable()


def memory_reserved(device_index=None, /) -> int:
    """Bytes reserved on the accelerator: raises, there is no accelerator."""
    _unavailable()


def max_memory_reserved(device_index=None, /) -> int:
    """Peak bytes reserved on the accelerator: raises, there is no accelerator."""
    _unavailable()


def memory_stats(device_index=None, /) -> OrderedDict:
    """The accelerator's allocator statistics: raises, there is no accelerator."""
    _unavailable()


def reset_accumulated_memory_stats(device_index=None, /) -> None:
    """Reset the accumulated statistics: raises, there is no accelerator."""
    _unavailable()


def reset_peak_memory_stats(device_index=None, /) -> None:
    """Reset the peak statistics: raises, there is no accelerator."""
    _unavailable()
