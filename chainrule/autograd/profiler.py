"""``autograd.profiler``: PyTorch's older profiler API over the same recording as
``chainrule.profiler`` (``profile(enabled=True, ...)``, ``record_function``)."""

from __future__ import annotations

import contextlib
import enum
import warnings

from ..profiler import (
    EventList,
    FunctionEvent,
    FunctionEventAvg,
    ProfilerActivity,
    _Profiler,
    kineto_available,
    record_function,
)
from .profiler_util import MemRecordsAcc

__all__ = ["profile", "record_function", "emit_itt", "emit_nvtx", "EnforceUnique",
           "KinetoStepTracker", "EventList", "FunctionEvent", "FunctionEventAvg", "MemRecordsAcc",
           "ProfilerActivity", "ProfilerState", "DeviceType", "kineto_available"]

MEMORY_EVENT_NAME = "[memory]"
OUT_OF_MEMORY_EVENT_NAME = "[OutOfMemory]"


class DeviceType(enum.Enum):
    """The device an event ran on (chainrule's run on the CPU)."""

    CPU = 0
    CUDA = 1
    MKLDNN = 2
    OPENGL = 3
    OPENCL = 4
    IDEEP = 5
    HIP = 6
    FPGA = 7
    MAIA = 8
    XLA = 9
    Vulkan = 10
    Metal = 11
    XPU = 12
    MPS = 13
    Meta = 14
    HPU = 15
    VE = 16
    Lazy = 17
    IPU = 18
    MTIA = 19
    PrivateUse1 = 20


class ProfilerState(enum.Enum):
    """What a profiler records with (chainrule's: the CPU)."""

    Disabled = 0
    CPU = 1
    CUDA = 2
    NVTX = 3
    ITT = 4
    PRIVATEUSE1 = 5
    KINETO = 6
    KINETO_GPU_FALLBACK = 7
    KINETO_PRIVATEUSE1_FALLBACK = 8
    KINETO_PRIVATEUSE1 = 9


class profile(_Profiler):
    """Profile the block's ops and backward nodes; ``prof.table()`` or
    ``prof.key_averages().table()`` prints the summary. CUDA and other device options are
    accepted and ignored."""

    def __init__(self, enabled: bool = True, *, use_cuda: bool = False, use_device=None,
                 record_shapes: bool = False, with_flops: bool = False,
                 profile_memory: bool = False, with_stack: bool = False,
                 with_modules: bool = False, use_kineto: bool = False, use_cpu: bool = True,
                 experimental_config=None, acc_events: bool = False,
                 custom_trace_id_callback=None, post_processing_timeout_s: float | None = None,
                 activity_filters: dict | None = None) -> None:
        super().__init__(record_shapes, profile_memory, with_stack)
        self.enabled = enabled

    def __enter__(self) -> profile:
        if self.enabled:
            self._start_recording()
        return self

    def __exit__(self, *exc) -> None:
        if self.enabled:
            self._stop_recording()

    @property
    def function_events(self) -> EventList:
        """Every recorded event."""
        return self._build()

    @property
    def self_cpu_time_total(self) -> float:
        """The summed self time of all events, in microseconds."""
        return self._build().self_cpu_time_total

    def total_average(self) -> FunctionEventAvg:
        return self._build().total_average()

    def table(self, sort_by: str | None = None, row_limit: int = 100, **kwargs) -> str:
        """The events as PyTorch's profiler table."""
        return self._build().table(sort_by=sort_by, row_limit=row_limit, **kwargs)

    def __str__(self) -> str:
        return self.table()


class emit_nvtx(contextlib.ContextDecorator):
    """Mark ops as NVTX ranges for NVIDIA's profilers: with ``enabled``, it raises as a CPU
    build of PyTorch does (chainrule has no CUDA)."""

    def __init__(self, enabled: bool = True, record_shapes: bool = False) -> None:
        self.enabled = enabled
        self.record_shapes = record_shapes

    def __enter__(self) -> emit_nvtx:
        if self.enabled:
            raise AssertionError("Torch not compiled with CUDA enabled")
        return self

    def __exit__(self, *exc) -> None:
        pass


class emit_itt(contextlib.ContextDecorator):
    """Mark ops as ranges for Intel VTune (ITT). chainrule does not call the ITT API: the block
    runs as it is and VTune sees no ranges."""

    def __init__(self, enabled: bool = True, record_shapes: bool = False) -> None:
        self.enabled = enabled
        self.record_shapes = record_shapes

    def __enter__(self) -> emit_itt:
        return self

    def __exit__(self, *exc) -> None:
        pass


class EnforceUnique:
    """Raises an error if a key is seen more than once."""

    def __init__(self) -> None:
        self.seen: set = set()

    def see(self, *key) -> None:
        """Observe a key; raise RuntimeError if it was seen before."""
        if key in self.seen:
            raise RuntimeError("duplicate key: " + str(key))
        self.seen.add(key)


class KinetoStepTracker:
    """The global step count, kept per requester (the profiler, each optimizer): the step is
    the largest of their counts, so two requesters counting the same step count it once."""

    _current_step = 0
    _step_dict: dict = {}

    @classmethod
    def init_step_count(cls, requester: str) -> None:
        """Start ``requester``'s count at the current step."""
        cls._step_dict[requester] = cls._current_step

    @classmethod
    def erase_step_count(cls, requester: str) -> bool:
        """Forget ``requester``; whether it was known."""
        return cls._step_dict.pop(requester, None) is not None

    @classmethod
    def increment_step(cls, requester: str) -> int:
        """Count a step of ``requester``; the global step."""
        if requester not in cls._step_dict:
            cls.init_step_count(requester)
        cls._step_dict[requester] += 1
        new_step = max(cls._step_dict.values())
        if new_step > cls._current_step:
            if new_step - cls._current_step > 1:
                warnings.warn("Profiler step count has increased more than 1 - current_step = "
                              f"{cls._current_step} step dict =  {cls._step_dict}", stacklevel=2)
            cls._current_step = new_step
        return cls._current_step

    @classmethod
    def current_step(cls) -> int:
        """The latest step of any requester."""
        return cls._current_step
