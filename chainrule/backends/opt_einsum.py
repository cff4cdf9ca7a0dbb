"""``torch.backends.opt_einsum``: whether the opt_einsum package plans the order of ``einsum``'s
contractions. The flags are recorded: chainrule's einsum contracts a pair at a time with NumPy's
own path optimizer either way. Without the package ``set_flags``/``flags`` refuse to enable it
(assigning ``enabled`` directly is not checked, as in PyTorch)."""

from __future__ import annotations

import functools
from contextlib import contextmanager
from typing import Any

try:
    import opt_einsum as _opt_einsum
except ImportError:
    _opt_einsum = None

_STRATEGIES = ("auto", "greedy", "optimal")


@functools.lru_cache
def is_available() -> bool:
    """Whether the opt_einsum package is installed."""
    return _opt_einsum is not None


def get_opt_einsum() -> Any:
    """The opt_einsum package, or None."""
    return _opt_einsum


enabled = _opt_einsum is not None
strategy = "auto" if _opt_einsum is not None else None


def _set_enabled(_enabled: bool) -> None:
    if not is_available() and _enabled:
        raise ValueError(f"opt_einsum is not available, so setting `enabled` to {_enabled} will "
                         "not reap the benefits of calculating an optimal path for einsum. "
                         "torch.einsum will fall back to contracting from left to right. To "
                         "enable this optimal path calculation, please install opt-einsum.")
    global enabled
    enabled = _enabled


def _get_enabled() -> bool:
    return enabled


def _get_strategy() -> str | None:
    return strategy


def _set_strategy(_strategy: str) -> None:
    if not is_available():
        raise ValueError(f"opt_einsum is not available, so setting `strategy` to {_strategy} "
                         "will not be meaningful. torch.einsum will bypass path calculation and "
                         "simply contract from left to right. Please install opt_einsum or unset "
                         "`strategy`.")
    if not enabled:
        raise ValueError(f"opt_einsum is not enabled, so setting a `strategy` to {_strategy} "
                         "will not be meaningful. torch.einsum will bypass path calculation and "
                         "simply contract from left to right. Please set `enabled` to `True` as "
                         "well or unset `strategy`.")
    if _strategy not in _STRATEGIES:
        raise ValueError(f"`strategy` must be one of the following: [auto, greedy, optimal] but "
                         f"is {_strategy}")
    global strategy
    strategy = _strategy


def set_flags(_enabled=None, _strategy=None) -> tuple:
    """Set ``enabled`` and ``strategy`` (None leaves one); the previous values."""
    previous = (enabled, strategy)
    if _enabled is not None:
        _set_enabled(_enabled)
    if _strategy is not None:
        _set_strategy(_strategy)
    return previous


@contextmanager
def flags(enabled=None, strategy=None):
    """Set the flags inside the block and restore them after it."""
    previous = set_flags(enabled, strategy)
    try:
        yield
    finally:
        set_flags(*previous)
