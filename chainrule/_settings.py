"""Process-wide switches that scripts set first (default device, determinism, threads, matmul
precision): accepted and recorded as PyTorch's CPU build answers them; none changes a result.
Autocast is the exception: on the CPU its regions run the ops it lists in lower precision or in
float32 (_autocast)."""

from __future__ import annotations

import os
import warnings

from . import _autocast, _threads

__all__ = ["set_num_interop_threads", "get_num_interop_threads", "init_num_threads",
           "set_warn_always", "is_warn_always_enabled", "set_deterministic_debug_mode",
           "get_deterministic_debug_mode", "set_flush_denormal", "set_default_tensor_type",
           "is_autocast_enabled", "set_autocast_enabled", "get_autocast_dtype",
           "set_autocast_dtype", "is_autocast_cpu_enabled", "set_autocast_cpu_enabled",
           "get_autocast_cpu_dtype", "set_autocast_cpu_dtype", "is_autocast_cache_enabled",
           "set_autocast_cache_enabled", "clear_autocast_cache", "autocast_increment_nesting",
           "autocast_decrement_nesting", "autocast", "has_lapack", "has_spectral", "has_mkl",
           "has_openmp"]

# What the build has: NumPy's LAPACK and FFT; no MKL or OpenMP of chainrule's own.
has_lapack, has_spectral, has_mkl, has_openmp = True, True, False, False

_state = {"deterministic": False, "warn_only": False, "precision": "highest"}


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
    """Set the number of threads large elementwise ops and reductions are split across (NumPy's
    BLAS keeps its own: set OMP_NUM_THREADS before starting)."""
    if not isinstance(num, int) or isinstance(num, bool):
        raise RuntimeError(f"set_num_threads expects an int, but got {type(num).__name__}")
    if num <= 0:
        raise RuntimeError("set_num_threads expects a positive integer")
    _threads.set_num_threads(num)


def get_num_threads() -> int:
    """The number of threads large ops are split across (by default OMP_NUM_THREADS, else the
    physical cores, as PyTorch's)."""
    return _threads.get_num_threads()


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


_state.update(interop_threads=None, warn_always=False)


def set_num_interop_threads(num: int) -> None:
    """Record the number of inter-op threads (chainrule runs ops one after another)."""
    if not isinstance(num, int) or isinstance(num, bool):
        raise RuntimeError(f"set_num_interop_threads expects an int, but got {type(num).__name__}")
    if num <= 0:
        raise RuntimeError("set_num_interop_threads expects a positive integer")
    _state["interop_threads"] = num


def get_num_interop_threads() -> int:
    """The number set by set_num_interop_threads, else the CPUs the OS reports."""
    return _state["interop_threads"] or os.cpu_count() or 1


def init_num_threads() -> None:
    """Initialise the thread pool: there is none to initialise here."""


def set_warn_always(b: bool, /) -> None:
    """Record whether warnings PyTorch gives once per process should be given every time."""
    if not isinstance(b, bool):
        raise RuntimeError(f"setWarnOnlyOnce expects a bool, but got {type(b).__name__}")
    _state["warn_always"] = b


def is_warn_always_enabled() -> bool:
    """The flag set by set_warn_always."""
    return _state["warn_always"]


_warned: set[str] = set()


def _warn_once(message: str, category: type[Warning]) -> None:
    """Warn the first time in the process, or every time after set_warn_always(True)."""
    if message not in _warned or _state["warn_always"]:
        _warned.add(message)
        warnings.warn(message, category, stacklevel=4)


_DEBUG_MODES = ("default", "warn", "error")


def set_deterministic_debug_mode(debug_mode: int | str) -> None:
    """use_deterministic_algorithms by level: 0/'default' off, 1/'warn' warn only, 2/'error'."""
    if isinstance(debug_mode, str):
        if debug_mode not in _DEBUG_MODES:
            raise RuntimeError("invalid value of debug_mode, expected one of `default`, `warn`, "
                               f"`error`, but got {debug_mode}")
        debug_mode = _DEBUG_MODES.index(debug_mode)
    elif not isinstance(debug_mode, int):
        raise TypeError(f"debug_mode must be str or int, but got {type(debug_mode)}")
    if debug_mode not in (0, 1, 2):
        raise RuntimeError(f"invalid value of debug_mode, expected 0, 1, or 2, but got "
                           f"{debug_mode}")
    use_deterministic_algorithms(debug_mode > 0, warn_only=debug_mode == 1)


def get_deterministic_debug_mode() -> int:
    """0 when deterministic algorithms are off, 1 when they only warn, 2 when they raise."""
    if not _state["deterministic"]:
        return 0
    return 1 if _state["warn_only"] else 2


def set_flush_denormal(mode: bool) -> bool:
    """Flushing denormals to zero is not supported here (NumPy keeps the CPU's float mode):
    False, as PyTorch answers on CPUs without the instructions."""
    if not isinstance(mode, bool):
        raise RuntimeError(f"flush_denormal expects a bool, but got {type(mode).__name__}")
    return False


def set_default_tensor_type(t, /) -> None:
    """Set the default dtype from a tensor type or its name (deprecated in PyTorch)."""
    from ._backend import float16, float32, float64, set_default_dtype

    _warn_once("torch.set_default_tensor_type() is deprecated as of PyTorch 2.1, please use "
               "torch.set_default_dtype() and torch.set_default_device() as alternatives.",
               UserWarning)
    name = t if isinstance(t, str) else getattr(t, "__name__", None)
    if name is None:
        raise TypeError("invalid type object: only floating-point types are supported as the "
                        "default type")
    if not isinstance(t, str):
        name = f"{t.__module__}.{name}"
    if name.startswith("torch.cuda."):  # torch.cuda.FloatTensor: named, never made here
        raise TypeError(f"type {name} not available. Torch not compiled with CUDA enabled.")
    floating = {"HalfTensor": float16, "FloatTensor": float32, "DoubleTensor": float64}
    short = name.rpartition(".")[2]
    if short not in floating:
        raise TypeError("only floating-point types are supported as the default type")
    set_default_dtype(floating[short])


# Autocast: the state is _autocast's; on the CPU the ops PyTorch lists run in its precisions.
# The default dtype of each device type PyTorch has an autocast mode for.
_AUTOCAST_DEFAULT = {"cpu": "bfloat16", "cuda": "float16", "xpu": "float16", "hpu": "bfloat16",
                     "mps": "float16", "mtia": "float16", "maia": "bfloat16", "ipu": "float16",
                     "xla": "bfloat16", "privateuseone": "float16"}


def _device_type(fn: str, device_type) -> str:
    if not isinstance(device_type, str):
        raise TypeError(f"{fn}(): argument 'device_type' (position 1) must be str, not "
                        f"{type(device_type).__name__}")
    return device_type


def _recorded(device_type: str) -> list:
    """[enabled, dtype] of a device type autocast only records here (not the CPU)."""
    from . import _backend

    entry = _autocast.state.other.get(device_type)
    if entry is None:
        kind = device_type.partition(":")[0]
        if kind not in _AUTOCAST_DEFAULT:
            raise RuntimeError("unsupported scalarType")
        entry = _autocast.state.other[device_type] = [
            False, getattr(_backend, _AUTOCAST_DEFAULT[kind])]
    return entry


def is_autocast_enabled(device_type: str = "cuda") -> bool:
    """Whether autocast is on for device_type (PyTorch's default device_type: 'cuda')."""
    if _device_type("is_autocast_enabled", device_type) == "cpu":
        return _autocast.state.cpu
    entry = _autocast.state.other.get(device_type)
    return bool(entry and entry[0])


def set_autocast_enabled(device_type: str = "cuda", enabled: bool | None = None) -> None:
    """Turn autocast on or off for device_type (one argument: 'cuda' and that flag)."""
    if enabled is None:
        device_type, enabled = "cuda", device_type
    _check_bool("set_autocast_enabled", "enabled", enabled, " (position 2)")
    if _device_type("set_autocast_enabled", device_type) == "cpu":
        _autocast.state.cpu = enabled
    else:
        _recorded(device_type)[0] = enabled


def get_autocast_dtype(device_type: str) -> object:
    """The dtype autocast computes the lower-precision ops in on device_type."""
    if _device_type("get_autocast_dtype", device_type) == "cpu":
        return _autocast.state.cpu_dtype
    return _recorded(device_type)[1]


def set_autocast_dtype(device_type: str, dtype) -> None:
    """Set the dtype autocast computes the lower-precision ops in on device_type."""
    from ._backend import dtype as _dtype

    _device_type("set_autocast_dtype", device_type)
    if not isinstance(dtype, _dtype):
        raise TypeError(f"set_autocast_dtype(): argument 'dtype' (position 2) must be "
                        f"torch.dtype, not {type(dtype).__name__}")
    if device_type == "cpu":
        _autocast.state.cpu_dtype = dtype
    else:
        _recorded(device_type)[1] = dtype


def _deprecated(old: str, new: str) -> None:
    _warn_once(f"torch.{old}() is deprecated. Please use torch.{new} instead.",
               DeprecationWarning)


def is_autocast_cpu_enabled() -> bool:
    """Whether autocast is on for the CPU (deprecated: is_autocast_enabled('cpu'))."""
    _deprecated("is_autocast_cpu_enabled", "is_autocast_enabled('cpu')")
    return is_autocast_enabled("cpu")


def set_autocast_cpu_enabled(enabled: bool) -> None:
    """Turn autocast on or off for the CPU (deprecated: set_autocast_enabled('cpu', ...))."""
    _deprecated("set_autocast_cpu_enabled", "set_autocast_enabled('cpu', enabled)")
    if not isinstance(enabled, bool):
        raise TypeError(f"enabled must be a bool (got {type(enabled).__name__})")
    set_autocast_enabled("cpu", enabled)


def get_autocast_cpu_dtype() -> object:
    """The CPU autocast dtype (deprecated: get_autocast_dtype('cpu'))."""
    _deprecated("get_autocast_cpu_dtype", "get_autocast_dtype('cpu')")
    return get_autocast_dtype("cpu")


def set_autocast_cpu_dtype(dtype) -> None:
    """Set the CPU autocast dtype (deprecated: set_autocast_dtype('cpu', ...))."""
    from ._backend import dtype as _dtype

    _deprecated("set_autocast_cpu_dtype", "set_autocast_dtype('cpu', dtype)")
    if not isinstance(dtype, _dtype):
        raise TypeError(f"dtype must be a torch.dtype (got {type(dtype).__name__})")
    set_autocast_dtype("cpu", dtype)


def is_autocast_cache_enabled() -> bool:
    """Whether autocast keeps the casts of weights for the rest of the outermost region."""
    return _autocast.state.cache_enabled


def set_autocast_cache_enabled(enabled: bool) -> None:
    """Set whether autocast keeps the casts of weights (leaves that require grad)."""
    if not isinstance(enabled, bool):
        raise TypeError(f"enabled must be a bool (got {type(enabled).__name__})")
    _autocast.state.cache_enabled = enabled


def clear_autocast_cache() -> None:
    """Drop autocast's kept casts of weights."""
    _autocast.state.cache.clear()


def autocast_increment_nesting() -> int:
    """Enter one more autocast region; the new depth."""
    _autocast.state.nesting += 1
    return _autocast.state.nesting


def autocast_decrement_nesting() -> int:
    """Leave an autocast region; the new depth."""
    _autocast.state.nesting -= 1
    return _autocast.state.nesting


class autocast:
    """Context manager and decorator for a region where the ops autocast lists run in
    lower precision (``dtype``, the device type's autocast dtype by default) or in float32.
    Only the CPU computes so here; the other device types are recorded."""

    def __init__(self, device_type: str, dtype=None, enabled: bool = True,
                 cache_enabled: bool | None = None) -> None:
        if not isinstance(device_type, str):
            raise ValueError(f"Expected `device_type` of type `str`, got: `{type(device_type)}`")
        self.fast_dtype = get_autocast_dtype(device_type) if dtype is None else dtype
        self.device = device_type
        self._cache_enabled = is_autocast_cache_enabled() if cache_enabled is None \
            else cache_enabled
        from ._backend import bfloat16, float16

        if enabled and device_type == "cuda":
            warnings.warn("CUDA is not available or torch_xla is imported. Disabling autocast.",
                          UserWarning, stacklevel=2)
            enabled = False
        elif enabled and self.fast_dtype not in (bfloat16, float16):
            name = device_type.upper()
            warnings.warn(f"In {name} autocast, but the target dtype is not supported. Disabling "
                          f"autocast.\n{name} Autocast only supports dtypes of torch.bfloat16, "
                          "torch.float16 currently.", UserWarning, stacklevel=2)
            enabled = False
        self._enabled = enabled

    def __enter__(self) -> autocast:
        self.prev_cache_enabled = is_autocast_cache_enabled()
        self.prev = is_autocast_enabled(self.device)
        self.prev_fastdtype = get_autocast_dtype(self.device)
        set_autocast_enabled(self.device, self._enabled)
        set_autocast_dtype(self.device, self.fast_dtype)
        autocast_increment_nesting()
        set_autocast_cache_enabled(self._cache_enabled)
        return self

    def __exit__(self, *exc) -> bool:
        if autocast_decrement_nesting() == 0:
            clear_autocast_cache()  # the kept casts last as long as the outermost region
        set_autocast_enabled(self.device, self.prev)
        set_autocast_dtype(self.device, self.prev_fastdtype)
        set_autocast_cache_enabled(self.prev_cache_enabled)
        return False

    def __call__(self, func):
        if not callable(func):
            raise TypeError(
                f"autocast()(func) requires a callable, but got {type(func).__name__}. Did you "
                "mean to use autocast as a context manager? For example:\n    with "
                "torch.autocast(device_type=...):\n        output = model(input)")
        import functools

        @functools.wraps(func)
        def decorate_autocast(*args, **kwargs):
            with self:
                return func(*args, **kwargs)
        return decorate_autocast


autocast.__module__ = "torch.amp.autocast_mode"  # where PyTorch defines it
