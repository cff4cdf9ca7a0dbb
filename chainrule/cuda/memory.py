"""``torch.cuda.memory``: CUDA memory statistics and allocator control, as a CPU build answers:
no CUDA memory (zeros and empty statistics), and what needs the CUDA runtime raises."""

from __future__ import annotations

import contextlib
import ctypes
import warnings
from collections import OrderedDict

from ._utils import get_device_index, no_binding, not_compiled

__all__ = ["caching_allocator_alloc", "caching_allocator_delete", "caching_allocator_disabled",
           "caching_allocator_enable", "get_per_process_memory_fraction",
           "set_per_process_memory_fraction", "empty_cache", "memory_stats",
           "memory_stats_as_nested_dict", "reset_accumulated_memory_stats",
           "reset_peak_memory_stats", "reset_max_memory_allocated", "reset_max_memory_cached",
           "host_memory_stats", "host_memory_stats_as_nested_dict",
           "reset_accumulated_host_memory_stats", "reset_peak_host_memory_stats",
           "memory_allocated", "max_memory_allocated", "memory_reserved", "max_memory_reserved",
           "memory_cached", "max_memory_cached", "memory_snapshot", "memory_summary",
           "list_gpu_processes", "mem_get_info", "get_allocator_backend",
           "CUDAPluggableAllocator", "change_current_allocator", "MemPool", "use_mem_pool"]


def caching_allocator_alloc(size, device=None, stream=None):
    """Allocate CUDA memory: a CPU build has none."""
    raise not_compiled()


def caching_allocator_delete(mem_ptr) -> None:
    """Free CUDA memory from caching_allocator_alloc: a CPU build has none."""
    raise no_binding("_cuda_cudaCachingAllocator_raw_delete")


def caching_allocator_enable(value: bool = True) -> None:
    """Turn the CUDA caching allocator on or off: it is never initialized here."""


@contextlib.contextmanager
def caching_allocator_disabled():
    """A region with the CUDA caching allocator off: a CPU build has none."""
    raise no_binding("_cuda_cudaCachingAllocator_is_enabled")
    yield  # unreachable: makes this a generator, as PyTorch's


def get_per_process_memory_fraction(device=None) -> float:
    """This process's share of a CUDA device's memory: there is no device."""
    raise not_compiled()


def set_per_process_memory_fraction(fraction, device=None) -> None:
    """Limit this process's share of a CUDA device's memory: there is no device."""
    raise not_compiled()


def empty_cache() -> None:
    """Release the CUDA memory cache: there is none."""


def memory_stats(device=None) -> dict:
    """The CUDA allocator's statistics: none, CUDA is never initialized."""
    return OrderedDict()


def memory_stats_as_nested_dict(device=None) -> dict:
    """The CUDA allocator's statistics as a nested dict: none."""
    return {}


def reset_accumulated_memory_stats(device=None) -> None:
    """Reset the CUDA allocator's accumulated statistics: a CPU build has no allocator."""
    raise no_binding("_cuda_resetAccumulatedMemoryStats")


def reset_peak_memory_stats(device=None) -> None:
    """Reset the CUDA allocator's peak statistics: a CPU build has no allocator."""
    raise no_binding("_cuda_resetPeakMemoryStats")


def reset_max_memory_allocated(device=None) -> None:
    """Deprecated for reset_peak_memory_stats, which it calls."""
    warnings.warn("torch.cuda.reset_max_memory_allocated now calls "
                  "torch.cuda.reset_peak_memory_stats, which resets /all/ peak memory stats.",
                  FutureWarning, stacklevel=2)
    return reset_peak_memory_stats(device=device)


def reset_max_memory_cached(device=None) -> None:
    """Deprecated for reset_peak_memory_stats, which it calls."""
    warnings.warn("torch.cuda.reset_max_memory_cached now calls "
                  "torch.cuda.reset_peak_memory_stats, which resets /all/ peak memory stats.",
                  FutureWarning, stacklevel=2)
    return reset_peak_memory_stats(device=device)


def host_memory_stats() -> dict:
    """The pinned host memory allocator's statistics: none."""
    return OrderedDict()


def host_memory_stats_as_nested_dict() -> dict:
    """The pinned host memory allocator's statistics as a nested dict: none."""
    return {}


def reset_accumulated_host_memory_stats() -> None:
    """Reset the pinned host allocator's accumulated statistics: a CPU build has none."""
    raise no_binding("_cuda_resetAccumulatedHostMemoryStats")


def reset_peak_host_memory_stats() -> None:
    """Reset the pinned host allocator's peak statistics: a CPU build has none."""
    raise no_binding("_cuda_resetPeakHostMemoryStats")


def memory_allocated(device=None) -> int:
    """Bytes of CUDA memory held by tensors: 0."""
    return 0


def max_memory_allocated(device=None) -> int:
    """Peak bytes of CUDA memory held by tensors: 0."""
    return 0


def memory_reserved(device=None) -> int:
    """Bytes of CUDA memory the caching allocator holds: 0."""
    return 0


def max_memory_reserved(device=None) -> int:
    """Peak bytes of CUDA memory the caching allocator held: 0."""
    return 0


def memory_cached(device=None) -> int:
    """Deprecated name of memory_reserved."""
    warnings.warn("`torch.cuda.memory_cached` has been renamed to `torch.cuda.memory_reserved`",
                  FutureWarning, stacklevel=2)
    return memory_reserved(device=device)


def max_memory_cached(device=None) -> int:
    """Deprecated name of max_memory_reserved."""
    warnings.warn("`torch.cuda.max_memory_cached` has been renamed to "
                  "`torch.cuda.max_memory_reserved`", FutureWarning, stacklevel=2)
    return max_memory_reserved(device=device)


def memory_snapshot(mempool_id=None, include_traces: bool = True):
    """The CUDA allocator's state: a CPU build has no allocator."""
    raise no_binding("_cuda_memorySnapshot")


def memory_summary(device=None, abbreviated: bool = False) -> str:
    """A table of the CUDA allocator's statistics: there are none to read."""
    raise KeyError("allocated_bytes.all.current")


def list_gpu_processes(device=None) -> str:
    """The processes using a GPU, as NVML reports them (PyTorch reads them with pynvml)."""
    return "pynvml module not found, please install nvidia-ml-py"


def mem_get_info(device=None) -> tuple[int, int]:
    """Free and total memory of a CUDA device: there is no device."""
    raise not_compiled()


def get_allocator_backend() -> str:
    """The CUDA allocator's backend: a CPU build has no allocator."""
    raise no_binding("_cuda_getAllocatorBackend")


class CUDAPluggableAllocator:
    """A CUDA allocator from a shared library's allocation and free functions."""

    def __init__(self, path_to_so_file: str, alloc_fn_name: str, free_fn_name: str) -> None:
        allocator = ctypes.CDLL(path_to_so_file)
        for name in (alloc_fn_name, free_fn_name):
            getattr(allocator, name)
        raise no_binding("_cuda_customAllocator")


def change_current_allocator(allocator) -> None:
    """Make ``allocator`` the CUDA allocator: a CPU build has none to change."""
    raise no_binding("_cuda_changeCurrentAllocator")


class MemPool:
    """A pool of CUDA memory that allocations can be routed to."""

    def __new__(cls, *args, **kwargs):
        raise RuntimeError("Tried to instantiate dummy base class MemPool")


@contextlib.contextmanager
def use_mem_pool(pool, device=None):
    """Route this thread's CUDA allocations to ``pool``: a CPU build has no CUDA memory."""
    if device is None:
        raise not_compiled()
    get_device_index(device)
    raise RuntimeError("Tried to instantiate dummy base class "
                       "_cuda_beginAllocateCurrentThreadToPool")
    yield  # unreachable: makes this a generator, as PyTorch's
