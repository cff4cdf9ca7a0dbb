"""``torch.backends.cuda``: not built; ``matmul``'s flags are settable and change nothing, the
library preferences answer as PyTorch's CPU build, and the scaled-dot-product-attention switches
are nn.attention's (chainrule's one kernel runs while MATH or FLASH_ATTENTION is enabled)."""

from __future__ import annotations

import contextlib
import enum
import warnings
from collections.abc import Iterator

from .. import _settings


def is_built() -> bool:
    """False: chainrule runs on the CPU only."""
    return False


class cuBLASModule:
    """``backends.cuda.matmul``: PyTorch's flags, settable; unknown names raise as in PyTorch."""

    _flags = ("allow_fp16_reduced_precision_reduction", "allow_bf16_reduced_precision_reduction")

    def __init__(self) -> None:
        object.__setattr__(self, "_values", dict.fromkeys(self._flags, True))

    @property
    def allow_tf32(self) -> bool:
        return _settings.get_float32_matmul_precision() != "highest"

    def __getattr__(self, name: str):
        if name in self._flags:
            return self._values[name]
        raise AttributeError(f"Unknown attribute {name}")

    def __setattr__(self, name: str, value) -> None:
        if name == "allow_tf32":
            _settings.set_float32_matmul_precision("high" if value else "highest")
        elif name in self._flags:
            self._values[name] = value
        else:
            raise AttributeError(f"Unknown attribute {name}")


matmul = cuBLASModule()


def _not_compiled():
    return AssertionError("Torch not compiled with CUDA enabled")


class cuFFTPlanCacheAttrContextProp:
    """An attribute of a device's cuFFT plan cache (no CUDA device: reading it raises)."""

    def __init__(self, getter, setter) -> None:
        self.getter, self.setter = getter, setter

    def __get__(self, obj, objtype=None):
        if obj is None:
            return self
        raise _not_compiled()

    def __set__(self, obj, value) -> None:
        raise _not_compiled()


class cuFFTPlanCache:
    """The cuFFT plan cache of one CUDA device (``size``, ``max_size``, ``clear()``)."""

    def __init__(self, device_index: int) -> None:
        self.device_index = device_index

    size = cuFFTPlanCacheAttrContextProp(None, None)
    max_size = cuFFTPlanCacheAttrContextProp(None, None)

    def clear(self) -> None:
        raise _not_compiled()


class cuFFTPlanCacheManager:
    """The cuFFT plan caches of the CUDA devices (none here), indexed by device."""

    __initialized = False

    def __init__(self) -> None:
        self.caches: list = []
        self.__initialized = True

    def __getitem__(self, device):
        index = getattr(device, "index", device)
        raise RuntimeError(f"cufft_plan_cache: expected 0 <= device index < 0, but got device "
                           f"with index {index}")

    def __getattr__(self, name: str):
        raise _not_compiled()  # the current device's cache: there is no current CUDA device

    def __setattr__(self, name: str, value) -> None:
        if self.__initialized:
            raise _not_compiled()
        super().__setattr__(name, value)


cufft_plan_cache = cuFFTPlanCacheManager()


def _no_workspace(name: str):
    raise AttributeError(f"module 'torch._C' has no attribute '_cuda_get{name}WorkspaceSize'")


def cublas_workspace_size() -> int:
    """cuBLAS's workspace size in bytes (a CPU build has no cuBLAS: AttributeError)."""
    _no_workspace("Cublas")


def cublaslt_workspace_size() -> int:
    """cuBLASLt's workspace size in bytes (a CPU build has no cuBLASLt: AttributeError)."""
    _no_workspace("CublasLt")


def blas_workspace_size() -> int:
    """The BLAS library's workspace size in bytes (a CPU build has none: AttributeError)."""
    _no_workspace("Cublas")


class _LinalgBackend(enum.Enum):
    Default = 0
    Cusolver = 1
    Magma = 2


class _BlasBackend(enum.Enum):
    Default = 0
    Cublas = 1
    Cublaslt = 2
    Ck = 3


class _ROCmFABackend(enum.Enum):
    Default = 0
    AOTriton = 1
    Ck = 2


_preferred = {"linalg": _LinalgBackend.Default, "blas": _BlasBackend.Cublas,
              "rocm_fa": _ROCmFABackend.Default}


def preferred_linalg_library(backend: None | str | _LinalgBackend = None) -> _LinalgBackend:
    """The library CUDA linear algebra prefers (cuSOLVER or MAGMA); set it with ``backend``."""
    if backend is None:
        return _preferred["linalg"]
    if isinstance(backend, str):
        names = {"default": _LinalgBackend.Default, "cusolver": _LinalgBackend.Cusolver,
                 "magma": _LinalgBackend.Magma}
        if backend not in names:
            raise RuntimeError("Unknown input value. Choose from: default, cusolver, magma.")
        backend = names[backend]
    elif not isinstance(backend, _LinalgBackend):
        raise RuntimeError("Unknown input value type.")
    _preferred["linalg"] = backend  # PyTorch keeps the choice before refusing it
    if backend is not _LinalgBackend.Default:
        library = "cuSOLVER" if backend is _LinalgBackend.Cusolver else "MAGMA"
        raise RuntimeError(f"Cannot set preferred backend to {library} if PyTorch has not been "
                           f"compiled with {library}.")
    return backend


def preferred_blas_library(backend: None | str | _BlasBackend = None) -> _BlasBackend:
    """The BLAS library CUDA matrix products prefer (cuBLAS, cuBLASLt, CK); set it with
    ``backend``."""
    if backend is None:
        return _preferred["blas"]
    if isinstance(backend, str):
        names = {"default": _BlasBackend.Cublas, "cublas": _BlasBackend.Cublas,
                 "hipblas": _BlasBackend.Cublas, "cublaslt": _BlasBackend.Cublaslt,
                 "hipblaslt": _BlasBackend.Cublaslt, "ck": _BlasBackend.Ck}
        if backend not in names:
            raise RuntimeError("Unknown input value. Choose from: default, cublas, hipblas, "
                               "cublaslt, hipblaslt, ck.")
        backend = names[backend]
    elif not isinstance(backend, _BlasBackend):
        raise RuntimeError("Unknown input value type.")
    if backend is _BlasBackend.Cublaslt:
        raise RuntimeError("Cannot set preferred backend to cuBLASLt if PyTorch has not been "
                           "compiled with cuBLASLt.")
    _preferred["blas"] = _BlasBackend.Cublas if backend is _BlasBackend.Default else backend
    return _preferred["blas"]


def preferred_rocm_fa_library(backend: None | str | _ROCmFABackend = None) -> _ROCmFABackend:
    """The flash attention library ROCm prefers (AOTriton or CK); set it with ``backend``."""
    if backend is None:
        return _preferred["rocm_fa"]
    names = {"default": _ROCmFABackend.Default, "aotriton": _ROCmFABackend.AOTriton,
             "ck": _ROCmFABackend.Ck}
    if isinstance(backend, str) and backend not in names:
        raise RuntimeError("Unknown input value. Choose from: default, aotriton, ck.")
    if not isinstance(backend, (str, _ROCmFABackend)):
        raise ValueError("Unknown input value. Choose from: default, aotriton, ck.")
    _preferred["rocm_fa"] = names[backend] if isinstance(backend, str) else backend
    return _preferred["rocm_fa"]


def is_ck_sdpa_available() -> bool:
    """False: ROCm's composable-kernel attention is not built."""
    return False


# ---- scaled dot product attention: which backends may run ------------------------------------


class SDPAParams:
    """The arguments of a scaled_dot_product_attention call, for the ``can_use_*`` checks."""

    def __init__(self, query, key, value, attn_mask, dropout: float, is_causal: bool,
                 enable_gqa: bool) -> None:
        self.query, self.key, self.value, self.attn_mask = query, key, value, attn_mask
        self.dropout, self.is_causal, self.enable_gqa = dropout, is_causal, enable_gqa


def _backend(name: str):
    from ..nn.attention import SDPBackend

    return SDPBackend[name]


def _enabled(name: str) -> bool:
    from ..nn import attention

    return _backend(name) in attention._enabled


def _enable(name: str, enabled: bool, setter: str = "set_sdp_use_math") -> None:
    from ..nn import attention

    if not isinstance(enabled, bool):
        stray = "%s" if setter == "set_sdp_use_cudnn" else ""  # as PyTorch's message
        raise RuntimeError(f"{setter} expects a bool, but got {stray}{type(enabled).__name__}")
    (attention._enabled.add if enabled else attention._enabled.discard)(_backend(name))


def flash_sdp_enabled() -> bool:
    """Whether the flash scaled dot product attention backend is enabled."""
    return _enabled("FLASH_ATTENTION")


def enable_flash_sdp(enabled: bool) -> None:
    """Enable or disable the flash scaled dot product attention backend."""
    _enable("FLASH_ATTENTION", enabled)


def mem_efficient_sdp_enabled() -> bool:
    """Whether the memory-efficient scaled dot product attention backend is enabled."""
    return _enabled("EFFICIENT_ATTENTION")


def enable_mem_efficient_sdp(enabled: bool) -> None:
    """Enable or disable the memory-efficient scaled dot product attention backend."""
    _enable("EFFICIENT_ATTENTION", enabled)


def math_sdp_enabled() -> bool:
    """Whether the math scaled dot product attention backend is enabled."""
    return _enabled("MATH")


def enable_math_sdp(enabled: bool) -> None:
    """Enable or disable the math scaled dot product attention backend."""
    _enable("MATH", enabled)


def cudnn_sdp_enabled() -> bool:
    """Whether the cuDNN scaled dot product attention backend is enabled."""
    return _enabled("CUDNN_ATTENTION")


def enable_cudnn_sdp(enabled: bool) -> None:
    """Enable or disable the cuDNN scaled dot product attention backend."""
    _enable("CUDNN_ATTENTION", enabled, "set_sdp_use_cudnn")


_reduction = [False]


def fp16_bf16_reduction_math_sdp_allowed() -> bool:
    """Whether the math attention backend may reduce in float16/bfloat16 (a recorded switch)."""
    return _reduction[0]


def allow_fp16_bf16_reduction_math_sdp(enabled: bool) -> None:
    """Allow or forbid reductions in float16/bfloat16 in the math attention backend (recorded:
    chainrule's attention reduces as it always does)."""
    if not isinstance(enabled, bool):
        _enable("MATH", enabled)
    _reduction[0] = enabled


def is_flash_attention_available() -> bool:
    """False: PyTorch's flash attention CUDA kernels are not built."""
    return False


def _can_use(params: SDPAParams, debug: bool, name: str) -> bool:
    if not isinstance(params, SDPAParams) or not isinstance(debug, bool):
        raise TypeError(f"_can_use_{name}(): incompatible function arguments. The following "
                        f"argument types are supported:\n    1. (arg0: torch._C._SDPAParams, "
                        f"arg1: bool) -> bool\n\nInvoked with: {params!r}, {debug!r}")
    return False


def can_use_flash_attention(params: SDPAParams, debug: bool = False) -> bool:
    """Whether flash attention (CUDA) can run these arguments: never on a CPU build."""
    return _can_use(params, debug, "flash_attention")


def can_use_efficient_attention(params: SDPAParams, debug: bool = False) -> bool:
    """Whether memory-efficient attention (CUDA) can run these arguments: never on a CPU
    build."""
    return _can_use(params, debug, "mem_efficient_attention")


def can_use_cudnn_attention(params: SDPAParams, debug: bool = False) -> bool:
    """Whether cuDNN attention can run these arguments: never on a CPU build."""
    return _can_use(params, debug, "cudnn_attention")


def sdp_kernel(enable_flash: bool = True, enable_math: bool = True,
               enable_mem_efficient: bool = True, enable_cudnn: bool = True):
    """Within the block, only the enabled attention backends run (deprecated: use
    torch.nn.attention.sdpa_kernel)."""
    warnings.warn("`torch.backends.cuda.sdp_kernel()` is deprecated. In the future, this context "
                  "manager will be removed. Please see `torch.nn.attention.sdpa_kernel()` for the "
                  "new context manager, with updated signature.", FutureWarning, stacklevel=2)
    chosen = [name for name, on in (("FLASH_ATTENTION", enable_flash),
                                    ("EFFICIENT_ATTENTION", enable_mem_efficient),
                                    ("MATH", enable_math), ("CUDNN_ATTENTION", enable_cudnn)) if on]
    return _sdp_kernel([_backend(name) for name in chosen])


@contextlib.contextmanager
def _sdp_kernel(backends: list) -> Iterator[dict]:
    from ..nn.attention import sdpa_kernel

    with sdpa_kernel(backends) as context:
        yield context
