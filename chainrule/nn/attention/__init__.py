"""torch.nn.attention: which backends scaled_dot_product_attention may use (``sdpa_kernel``),
and the registry of flash attention implementations.

chainrule has one kernel, the math one; PyTorch's CPU build also runs FLASH_ATTENTION (a CPU
flash kernel with the same results). So attention runs while MATH or FLASH_ATTENTION is enabled
and raises PyTorch's "No viable backend" error otherwise.
"""

from __future__ import annotations

import contextlib
import enum
import logging
from collections.abc import Callable, Iterable, Iterator
from typing import Literal

from . import bias

__all__ = ["SDPBackend", "sdpa_kernel", "WARN_FOR_UNFUSED_KERNELS",
           "register_flash_attention_impl", "activate_flash_attention_impl",
           "list_flash_attention_impls", "current_flash_attention_impl",
           "restore_flash_attention_impl"]

WARN_FOR_UNFUSED_KERNELS = False


class SDPBackend(enum.Enum):
    """The scaled dot product attention backends."""

    ERROR = -1
    MATH = 0
    FLASH_ATTENTION = 1
    EFFICIENT_ATTENTION = 2
    CUDNN_ATTENTION = 3
    OVERRIDEABLE = 4

    def __int__(self) -> int:
        return self.value

    __index__ = __int__


# PyTorch's order of the backend flags, and their default priority.
_FLAGS = (SDPBackend.CUDNN_ATTENTION, SDPBackend.FLASH_ATTENTION,
          SDPBackend.EFFICIENT_ATTENTION, SDPBackend.MATH, SDPBackend.OVERRIDEABLE)
_enabled = {SDPBackend.CUDNN_ATTENTION, SDPBackend.FLASH_ATTENTION,
            SDPBackend.EFFICIENT_ATTENTION, SDPBackend.MATH}
_priority = [SDPBackend.FLASH_ATTENTION, SDPBackend.EFFICIENT_ATTENTION, SDPBackend.MATH,
             SDPBackend.CUDNN_ATTENTION, SDPBackend.OVERRIDEABLE]


def _cur_sdpa_kernel_backends(with_priority: bool = False) -> list[SDPBackend]:
    """The enabled backends (in priority order if ``with_priority``)."""
    backends = [b for b in _FLAGS if b in _enabled]
    return sorted(backends, key=_priority.index) if with_priority else backends


def _sdpa_kernel(backends: Iterable[SDPBackend], set_priority: bool = False) -> None:
    backends = list(backends)
    _enabled.clear()
    _enabled.update(b for b in backends if b in _FLAGS)
    if set_priority:
        _priority[:] = backends + [b for b in _priority if b not in backends]


def _math_available() -> bool:
    """Whether scaled_dot_product_attention may run (a CPU kernel is enabled)."""
    return SDPBackend.MATH in _enabled or SDPBackend.FLASH_ATTENTION in _enabled


@contextlib.contextmanager
def sdpa_kernel(backends: list[SDPBackend] | SDPBackend,
                set_priority: bool = False) -> Iterator[dict]:
    """Within the block, scaled_dot_product_attention uses only ``backends`` (in that order of
    priority if ``set_priority``)."""
    if not isinstance(backends, (list, SDPBackend)):
        raise AssertionError("Backend must be an instance of SDPBackend or a list of SDPBackend "
                             f"instances, got {type(backends).__name__}")
    backends = list(dict.fromkeys([backends] if isinstance(backends, SDPBackend) else backends))
    previous = _cur_sdpa_kernel_backends(with_priority=set_priority)
    try:
        _sdpa_kernel(backends, set_priority)
        yield {}
    finally:
        _sdpa_kernel(previous, set_priority)


# ---- flash attention implementations ------------------------------------------------------------
# PyTorch registers its CUDA kernels FA3 and FA4 here; chainrule has none, so the list starts empty.

_logger = logging.getLogger(__name__)
_FlashAttentionImpl = Literal["FA3", "FA4"]
_RegisterFn = Callable[..., object]
_impls: dict[str, _RegisterFn] = {}
_active: tuple[str, object] | None = None


def register_flash_attention_impl(impl: str, *, register_fn: _RegisterFn) -> None:
    """Register the callable that activates the flash attention implementation ``impl``."""
    _impls[impl] = register_fn


def activate_flash_attention_impl(impl: str) -> None:
    """Activate a registered flash attention implementation."""
    global _active
    restore_flash_attention_impl(_raise_warn=False)
    if impl not in _impls:
        raise ValueError(f"Unknown flash attention impl '{impl}'. Available implementations: "
                         f"{list_flash_attention_impls()}")
    handle = _impls[impl]()
    _active = (impl, handle) if handle is not None else None


def list_flash_attention_impls() -> list[str]:
    """The names of the registered flash attention implementations."""
    return list(_impls)


def current_flash_attention_impl() -> str | None:
    """The active flash attention implementation's name (None: the default)."""
    return None if _active is None else _active[0]


def restore_flash_attention_impl(_raise_warn: bool = True) -> None:
    """Deactivate the active flash attention implementation (back to the default)."""
    global _active
    if _active is not None:
        _active[1].remove()
    elif _raise_warn:
        _logger.warning("Trying to restore default FA2 impl when no custom impl was activated")
    _active = None
