"""Process-wide switches that scripts set first (default device, determinism, threads, matmul
precision): accepted and recorded as PyTorch's CPU build answers them; none changes a result."""

from __future__ import annotations

import os
import warnings

from ._backend import device as _device

_state = {"deterministic": False, "warn_only": False, "threads": None, "precision": "highest"}


def set_default_device(device) -> None:
    """Set the device factories use: only 'cpu' (or None) exists here."""
    name = "cpu" if device is None else str(device)
    if name.split(":")[0] != "cpu":
        raise RuntimeError(f"set_default_device: device '{name}' is not available: chainrule runs "
                           "on the CPU only")


def get_default_device() -> _device:
    """The device factories use: always the CPU."""
    return _device("cpu")


def _check_bool(fn: str, name: str, value, position: str = "") -> None:
    if not isinstance(value, bool):
        raise TypeError(f"{fn}(): argument '{name}'{position} must be bool, not "
                        f"{type(value).__name__}")


def use_deterministic_algorithms(mode: bool, *, warn_only: bool = False) -> None:
    """Record the flag: every chainrule op is deterministic already."""
    _check_bool("use_deterministic_algorithms", "mode", mode, " (position 1)")
    _check_bool("use_deterministic_algorithms", "warn_only", warn_only)
    _state["deterministic"], _state["warn_only"] = mode, mode and warn_only


def are_deterministic_algorithms_enabled() -> bool:
    """The flag set by use_deterministic_algorithms."""
    return _state["deterministic"]


def is_deterministic_algorithms_warn_only_enabled() -> bool:
    """The warn_only flag set by use_deterministic_algorithms."""
    return _state["warn_only"]


def set_num_threads(num: int) -> None:
    """Record the number of threads (NumPy's BLAS keeps its own: set OMP_NUM_THREADS instead)."""
    if not isinstance(num, int) or isinstance(num, bool):
        raise RuntimeError(f"set_num_threads expects an int, but got {type(num).__name__}")
    if num <= 0:
        raise RuntimeError("set_num_threads expects a positive integer")
    _state["threads"] = num


def get_num_threads() -> int:
    """The number set by set_num_threads, else the CPUs the OS reports."""
    return _state["threads"] or os.cpu_count() or 1


def set_float32_matmul_precision(precision: str) -> None:
    """Record 'highest', 'high' or 'medium': float32 matmuls here are always full precision."""
    if precision not in ("highest", "high", "medium"):
        warnings.warn(f"{precision} is not one of 'highest', 'high', or 'medium'; the current "
                      "set_float32_matmul_precision call has no effect.", UserWarning,
                      stacklevel=2)
        return
    _state["precision"] = precision


def get_float32_matmul_precision() -> str:
    """The precision set by set_float32_matmul_precision ('highest' by default)."""
    return _state["precision"]
