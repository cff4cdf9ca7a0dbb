"""``torch.amp.autocast_mode``: ``autocast`` (chainrule's own, from its settings) and the
decorators that carry an autocast state into custom autograd Functions."""

from __future__ import annotations

import collections.abc
import functools
from collections.abc import Callable

from .._backend import float64, xp
from .._device import device as _device
from .._settings import autocast, get_autocast_dtype, is_autocast_enabled
from ..tensor import Tensor

__all__ = ["autocast_decorator", "autocast", "is_autocast_available", "custom_fwd", "custom_bwd"]

# The device types PyTorch has an autocast dispatch key for.
_AUTOCAST_DEVICES = frozenset({"cpu", "cuda", "ipu", "xpu", "maia", "xla", "mps", "hpu", "mtia",
                               "privateuseone"})


def is_autocast_available(device_type: str) -> bool:
    """Whether autocast has a mode for ``device_type`` ('cpu', 'cuda', ...)."""
    return _device(device_type).type in _AUTOCAST_DEVICES


def autocast_decorator(autocast_instance, func: Callable) -> Callable:
    """``func`` run inside ``autocast_instance``."""
    @functools.wraps(func)
    def decorate_autocast(*args, **kwargs):
        with autocast_instance:
            return func(*args, **kwargs)

    return decorate_autocast


def _cast(value, device_type: str, dtype):
    """Floating tensors of ``device_type`` (not float64) in ``value``, nested in lists, tuples
    and mappings, cast to ``dtype``; strings and arrays pass through."""
    if isinstance(value, Tensor):
        eligible = (value.is_floating_point() and value.device.type == device_type
                    and value.dtype is not float64)
        return value.to(dtype) if eligible else value
    if isinstance(value, (str, bytes, xp.ndarray)):
        return value
    if isinstance(value, collections.abc.Mapping):
        return {_cast(k, device_type, dtype): _cast(v, device_type, dtype)
                for k, v in value.items()}
    if isinstance(value, collections.abc.Iterable):
        cast = (_cast(v, device_type, dtype) for v in value)
        return type(value)(cast) if isinstance(value, (list, tuple)) else cast
    return value


def _check_device_type(device_type) -> None:
    if not isinstance(device_type, str):
        raise ValueError(f"Expected `device_type` of type `str`, got: `{type(device_type)}`")


def custom_fwd(fwd=None, *, device_type: str, cast_inputs=None):
    """Decorate a custom Function's ``forward``: inside an autocast region of ``device_type``
    it runs with autocast off on inputs cast to ``cast_inputs`` (when given), and ``backward``
    (under ``custom_bwd``) gets the same autocast state."""
    _check_device_type(device_type)
    if fwd is None:
        return functools.partial(custom_fwd, device_type=device_type, cast_inputs=cast_inputs)

    @functools.wraps(fwd)
    def decorate_fwd(*args, **kwargs):
        ctx = args[0]
        ctx._dtype = get_autocast_dtype(device_type)
        if cast_inputs is None:
            ctx._fwd_used_autocast = is_autocast_enabled(device_type)
            return fwd(*args, **kwargs)
        ctx._fwd_used_autocast = False
        if not is_autocast_enabled(device_type):
            return fwd(*args, **kwargs)
        with autocast(device_type=device_type, enabled=False):
            return fwd(*_cast(args, device_type, cast_inputs),
                       **_cast(kwargs, device_type, cast_inputs))

    return decorate_fwd


def custom_bwd(bwd=None, *, device_type: str):
    """Decorate a custom Function's ``backward`` to run in the autocast state its
    ``custom_fwd`` forward ran in."""
    _check_device_type(device_type)
    if bwd is None:
        return functools.partial(custom_bwd, device_type=device_type)

    @functools.wraps(bwd)
    def decorate_bwd(*args, **kwargs):
        ctx = args[0]
        with autocast(device_type=device_type, enabled=ctx._fwd_used_autocast, dtype=ctx._dtype):
            return bwd(*args, **kwargs)

    return decorate_bwd
