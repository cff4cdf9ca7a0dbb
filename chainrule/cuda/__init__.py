"""``torch.cuda`` as PyTorch's CPU build answers it: no device (``is_available()`` is False,
``device_count()`` 0), memory statistics of nothing, seeding that does nothing, and where the
CUDA runtime is needed the CPU build's own errors (mostly AssertionError "Torch not compiled with
CUDA enabled")."""

from __future__ import annotations

from .._legacy import CUDA_TYPES
from ..storage import CUDA_STORAGES
from . import (
    amp,
    gds,
    graphs,
    green_contexts,
    jiterator,
    memory,
    nccl,
    nvtx,
    profiler,
    random,
    sparse,
    streams,
    tunable,
)
from ._utils import exchange_device, get_device_index, no_binding, not_compiled
from .graphs import (
    CUDAGraph,
    graph,
    graph_pool_handle,
    is_current_stream_capturing,
    make_graphed_callables,
)
from .green_contexts import GreenContext
from .memory import *  # noqa: F403  (memory_allocated, empty_cache, MemPool, ...)
from .random import *  # noqa: F403  (manual_seed, get_rng_state, ...)
from .streams import Event, ExternalStream, Stream

__all__ = ["CUDAGraph", "CudaError", "DeferredCudaCallError", "Event", "ExternalStream", "Stream",
           "StreamContext", "GreenContext", "amp", "can_device_access_peer", "check_error",
           "cudaStatus", "cudart", "current_blas_handle", "current_solver_handle",
           "current_device", "current_stream", "default_generators", "default_stream", "device",
           "device_count", "device_memory_used", "device_of", "get_arch_list",
           "get_device_capability", "get_device_name", "get_device_properties",
           "get_gencode_flags", "get_stream_from_external", "get_sync_debug_mode", "graph",
           "graph_pool_handle", "graphs", "has_half", "has_magma", "init", "ipc_collect",
           "is_available", "is_bf16_supported", "is_current_stream_capturing", "is_initialized",
           "is_tf32_supported", "jiterator", "make_graphed_callables", "memory", "memory_usage",
           "temperature", "power_draw", "clock_rate", "nccl", "nvtx", "profiler", "random",
           "set_device", "set_stream", "set_sync_debug_mode", "sparse", "stream", "streams",
           "synchronize", "tunable", "utilization"]
# and the names of memory and random, and the typed tensor and storage classes
__all__ += memory.__all__ + random.__all__ + list(CUDA_TYPES) + list(CUDA_STORAGES)

globals().update(CUDA_TYPES)  # torch.cuda.FloatTensor, ...: named, never made
globals().update(CUDA_STORAGES)  # torch.cuda.FloatStorage, ...

has_half: bool = True
has_magma: bool = False
default_generators: tuple = ()


class OutOfMemoryError(RuntimeError):
    """An allocation that the device's memory cannot hold."""


class AcceleratorError(RuntimeError):
    """An error the accelerator's runtime reported."""


OutOfMemoryError.__module__ = AcceleratorError.__module__ = "torch"


class DeferredCudaCallError(Exception):
    """A call queued for CUDA's initialization that failed when it ran."""


class CudaError(RuntimeError):
    """An error the CUDA runtime reported, with its code."""

    def __init__(self, code: int) -> None:
        raise AttributeError("'NoneType' object has no attribute 'cudaGetErrorString'")


class cudaStatus:
    """CUDA runtime status codes."""

    SUCCESS: int = 0
    ERROR_NOT_READY: int = 34


def check_error(res: int) -> None:
    """Raise CudaError for a failed CUDA runtime call's status (there is no runtime here)."""
    raise AttributeError("'NoneType' object has no attribute 'cudaError'")


# ---- devices ------------------------------------------------------------------------------------

def is_available() -> bool:
    """False: there is no CUDA device."""
    return False


def device_count() -> int:
    """0: there is no CUDA device."""
    return 0


def is_initialized() -> bool:
    """False: CUDA is never initialized."""
    return False


def init() -> None:
    """Initialize CUDA: a CPU build has none."""
    raise not_compiled()


def is_bf16_supported(including_emulation: bool = True) -> bool:
    """False: there is no CUDA device."""
    return False


def is_tf32_supported() -> bool:
    """False: there is no CUDA device."""
    return False


def get_arch_list() -> list[str]:
    """The CUDA architectures this build was compiled for: none."""
    return []


def get_gencode_flags() -> str:
    """The NVCC gencode flags this build was compiled with: none."""
    return ""


def cudart():
    """The CUDA runtime library: a CPU build has none."""
    raise not_compiled()


def current_device() -> int:
    """The index of the current CUDA device: there is none."""
    raise not_compiled()


def set_device(device) -> None:
    """Make ``device`` the current CUDA device (a negative index does nothing)."""
    index = get_device_index(device)
    if index >= 0:
        raise no_binding("_cuda_setDevice")


def synchronize(device=None) -> None:
    """Wait for a CUDA device's kernels: there is no device."""
    raise not_compiled()


def ipc_collect() -> None:
    """Free CUDA memory shared between processes: a CPU build has none."""
    raise not_compiled()


def get_device_name(device=None) -> str:
    """A CUDA device's name: there is no device."""
    raise not_compiled()


def get_device_capability(device=None) -> tuple[int, int]:
    """A CUDA device's compute capability: there is no device."""
    raise not_compiled()


def get_device_properties(device=None):
    """A CUDA device's properties: there is no device."""
    raise not_compiled()


def can_device_access_peer(device, peer_device) -> bool:
    """Whether one CUDA device can read another's memory: there are none."""
    raise not_compiled()


def current_blas_handle():
    """The cuBLAS handle of the current stream: a CPU build has none."""
    raise not_compiled()


def current_solver_handle():
    """The cuSOLVER handle of the current stream: a CPU build has none."""
    raise not_compiled()


def get_sync_debug_mode() -> int:
    """The CUDA synchronization debug mode: a CPU build has none."""
    raise not_compiled()


def set_sync_debug_mode(debug_mode) -> None:
    """Warn or raise on synchronizing CUDA calls: a CPU build has none."""
    raise not_compiled()


def _no_nvml(device=None) -> int:
    raise ModuleNotFoundError("nvidia-ml-py does not seem to be installed or it can't be "
                              "imported.")


def device_memory_used(device=None) -> int:
    """A CUDA device's used memory, as NVML reports it."""
    return _no_nvml(device)


def memory_usage(device=None) -> int:
    """A CUDA device's memory activity (percent), as NVML reports it."""
    return _no_nvml(device)


def utilization(device=None) -> int:
    """A CUDA device's busy time (percent), as NVML reports it."""
    return _no_nvml(device)


def temperature(device=None) -> int:
    """A CUDA device's temperature, as NVML reports it."""
    return _no_nvml(device)


def power_draw(device=None) -> int:
    """A CUDA device's power draw, as NVML reports it."""
    return _no_nvml(device)


def clock_rate(device=None) -> int:
    """A CUDA device's clock, as NVML reports it."""
    return _no_nvml(device)


class device:
    """A region with ``device`` the current CUDA device (a negative index or None: no
    change)."""

    def __init__(self, device) -> None:
        self.idx = get_device_index(device, optional=True)
        self.prev_idx = -1

    def __enter__(self) -> None:
        self.prev_idx = exchange_device(self.idx)

    def __exit__(self, *exc) -> bool:
        self.idx = exchange_device(self.prev_idx)
        return False


class device_of(device):
    """A region with the CUDA device of a tensor or storage current (no change on the CPU)."""

    def __init__(self, obj) -> None:
        super().__init__(obj.get_device() if obj.is_cuda else -1)


# ---- streams ------------------------------------------------------------------------------------

def current_stream(device=None) -> Stream:
    """The current CUDA stream: there is none."""
    raise not_compiled()


def default_stream(device=None) -> Stream:
    """A CUDA device's default stream: there is none."""
    raise not_compiled()


def get_stream_from_external(data_ptr: int, device=None) -> Stream:
    """A stream for a CUDA stream made elsewhere: a CPU build has none."""
    raise not_compiled()


def set_stream(stream) -> None:
    """Make ``stream`` the current CUDA stream (None: no change)."""
    if stream is not None:
        stream.stream_id  # noqa: B018  (a stream is never made here; anything else fails)
        raise not_compiled()


class StreamContext:
    """A region with ``stream`` current: with no CUDA device (or no stream) it changes
    nothing."""

    def __init__(self, stream) -> None:
        self.stream = stream
        self.idx = -1  # no current CUDA device
        self.src_prev_stream = self.dst_prev_stream = None

    def __enter__(self) -> None:
        return None

    def __exit__(self, *exc) -> None:
        return None


def stream(stream) -> StreamContext:
    """A region with ``stream`` current (a StreamContext)."""
    return StreamContext(stream)
