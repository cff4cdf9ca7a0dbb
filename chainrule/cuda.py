"""``torch.cuda`` as PyTorch's CPU build answers it: no device, seeding is a no-op, and what
needs a device raises AssertionError."""

from __future__ import annotations

__all__ = ["is_available", "device_count", "is_initialized", "init", "manual_seed",
           "manual_seed_all", "seed", "seed_all", "synchronize", "empty_cache", "current_device",
           "get_device_name", "get_device_capability", "get_device_properties",
           "memory_allocated", "max_memory_allocated", "memory_reserved", "max_memory_reserved",
           "is_bf16_supported"]


def _unavailable(fn: str):
    return AssertionError(f"cuda.{fn}: CUDA is not available: chainrule runs on the CPU only")


def is_available() -> bool:
    """False: chainrule runs on the CPU only."""
    return False


def device_count() -> int:
    """0: no CUDA device."""
    return 0


def is_initialized() -> bool:
    """False: CUDA is never initialized."""
    return False


def is_bf16_supported(including_emulation: bool = True) -> bool:
    """False: no CUDA device."""
    return False


def manual_seed(seed: int) -> None:
    """No-op (there is no CUDA generator); seed the CPU with chainrule.manual_seed."""
    int(seed)


def manual_seed_all(seed: int) -> None:
    """No-op (there is no CUDA generator); seed the CPU with chainrule.manual_seed."""
    int(seed)


def seed() -> None:
    """No-op: there is no CUDA generator."""


def seed_all() -> None:
    """No-op: there is no CUDA generator."""


def empty_cache() -> None:
    """No-op: there is no CUDA memory cache."""


def memory_allocated(device=None) -> int:
    """0: no CUDA memory."""
    return 0


def max_memory_allocated(device=None) -> int:
    """0: no CUDA memory."""
    return 0


def memory_reserved(device=None) -> int:
    """0: no CUDA memory."""
    return 0


def max_memory_reserved(device=None) -> int:
    """0: no CUDA memory."""
    return 0


def init() -> None:
    """Raises AssertionError: there is no CUDA to initialize."""
    raise _unavailable("init")


def synchronize(device=None) -> None:
    """Raises AssertionError: there is no CUDA device."""
    raise _unavailable("synchronize")


def current_device() -> int:
    """Raises AssertionError: there is no CUDA device."""
    raise _unavailable("current_device")


def get_device_name(device=None) -> str:
    """Raises AssertionError: there is no CUDA device."""
    raise _unavailable("get_device_name")


def get_device_capability(device=None) -> tuple[int, int]:
    """Raises AssertionError: there is no CUDA device."""
    raise _unavailable("get_device_capability")


def get_device_properties(device=None):
    """Raises AssertionError: there is no CUDA device."""
    raise _unavailable("get_device_properties")
