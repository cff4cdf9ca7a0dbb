"""``torch.cpu``: the CPU as a device module, for device-agnostic code (one device, one stream,
nothing to synchronize), its capabilities as NumPy detects them, and the deprecated
``torch.cpu.amp``."""

from __future__ import annotations

import functools
import os
import platform
from collections.abc import Mapping
from contextlib import AbstractContextManager
from types import MappingProxyType
from typing import Any

from .._backend import xp
from . import amp

__all__ = ["is_available", "is_initialized", "synchronize", "current_device", "current_stream",
           "stream", "set_device", "device_count", "Stream", "StreamContext", "Event",
           "get_capabilities"]

# NumPy's names of the CPU features it detects -> PyTorch's (cpuinfo's) names.
_FEATURES = {
    "SSE": "sse", "SSE2": "sse2", "SSE3": "sse3", "SSSE3": "ssse3", "SSE41": "sse4_1",
    "SSE42": "sse4_2", "POPCNT": "popcnt", "AVX": "avx", "F16C": "f16c", "FMA3": "fma3",
    "FMA4": "fma4", "AVX2": "avx2", "BMI": "bmi", "BMI2": "bmi2", "LZCNT": "lzcnt",
    "AVX512F": "avx512_f", "AVX512CD": "avx512_cd", "AVX512VL": "avx512_vl",
    "AVX512BW": "avx512_bw", "AVX512DQ": "avx512_dq", "AVX512VNNI": "avx512_vnni",
    "AVX512IFMA": "avx512_ifma", "AVX512VBMI": "avx512_vbmi", "AVX512VBMI2": "avx512_vbmi2",
    "AVX512BITALG": "avx512_bitalg", "AVX512VPOPCNTDQ": "avx512_vpopcntdq",
    "AVX512FP16": "avx512_fp16", "AVX512BF16": "avx512_bf16", "AVX5124FMAPS": "avx512_4fmaps",
    "AVX5124VNNIW": "avx512_4vnniw", "SVE": "sve", "ASIMDFHM": "fhm",
}


def _numpy_features() -> dict:
    for core in ("_core", "core"):  # NumPy 2's name, then NumPy 1's
        umath = getattr(getattr(xp, core, None), "_multiarray_umath", None)
        features = getattr(umath, "__cpu_features__", None)
        if features:
            return features
    return {}


@functools.lru_cache(None)
def get_capabilities() -> Mapping[str, Any]:
    """The CPU's instruction-set features NumPy detects (by PyTorch's names), its architecture
    and its number of logical cores, as a read-only mapping."""
    features = _numpy_features()
    caps: dict[str, Any] = {name: bool(features[key]) for key, name in _FEATURES.items()
                            if key in features}
    caps["architecture"] = platform.machine()
    caps["num_logical_cores"] = os.cpu_count()
    return MappingProxyType(caps)


def is_available() -> bool:
    """True: the CPU is always available."""
    return True


def is_initialized() -> bool:
    """True: the CPU is always initialized."""
    return True


def synchronize(device=None) -> None:
    """Wait for all kernels on the CPU: chainrule's ops have finished when they return."""


def device_count() -> int:
    """1: the CPU is one device."""
    return 1


def set_device(device) -> None:
    """Select the current CPU device: there is only one."""


def current_device() -> str:
    """'cpu'."""
    return "cpu"


class Stream:
    """The CPU's stream: work runs in order, so waiting on streams and events is immediate."""

    def __init__(self, priority: int = -1) -> None:
        self.priority = priority

    def wait_stream(self, stream) -> None:
        """Make this stream wait for ``stream``: nothing to wait for."""

    def record_event(self) -> None:
        """Record an event: CPU work is already done."""

    def wait_event(self, event) -> None:
        """Wait for ``event``: it has happened."""


class Event:
    """An event on the CPU stream: always complete."""

    def query(self) -> bool:
        """True: the work before the event is done."""
        return True

    def record(self, stream=None) -> None:
        """Record the event on ``stream``."""

    def synchronize(self) -> None:
        """Wait for the event: it has happened."""

    def wait(self, stream=None) -> None:
        """Make ``stream`` wait for the event: it has happened."""


_default_stream = Stream()
_current = [_default_stream]


def current_stream(device=None) -> Stream:
    """The selected CPU stream."""
    return _current[0]


class StreamContext(AbstractContextManager):
    """Select ``stream`` as the current CPU stream inside the block (None: leave it)."""

    def __init__(self, stream: Stream | None) -> None:
        self.stream = stream
        self.prev_stream = _default_stream

    def __enter__(self) -> None:
        if self.stream is not None:
            self.prev_stream = _current[0]
            _current[0] = self.stream

    def __exit__(self, type, value, traceback) -> None:
        if self.stream is not None:
            _current[0] = self.prev_stream


def stream(stream: Stream) -> AbstractContextManager:
    """A context manager selecting ``stream``."""
    return StreamContext(stream)
