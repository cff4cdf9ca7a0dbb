"""scatter and gather: splitting a call's arguments across devices and joining the outputs.
Nested containers are walked as PyTorch walks them; tensors would be copied to accelerators,
which a CPU build does not have, so a tensor raises as PyTorch's CPU build does."""

from __future__ import annotations

import warnings
from collections.abc import Sequence
from typing import Any

from ...tensor import Tensor
from .comm import _no_kernel

__all__ = ["scatter", "scatter_kwargs", "gather"]


def _is_namedtuple(obj: Any) -> bool:
    return isinstance(obj, tuple) and hasattr(obj, "_asdict") and hasattr(obj, "_fields")


def scatter(inputs, target_gpus, dim: int = 0):
    """``inputs`` split along ``dim`` for each target device (other values repeated)."""

    def scatter_map(obj):
        if isinstance(obj, Tensor):
            raise _no_kernel("_scatter")
        if _is_namedtuple(obj):
            return [type(obj)(*args) for args in zip(*map(scatter_map, obj))]
        if isinstance(obj, tuple) and obj:
            return list(zip(*map(scatter_map, obj)))
        if isinstance(obj, list) and obj:
            return [list(i) for i in zip(*map(scatter_map, obj))]
        if isinstance(obj, dict) and obj:
            return [type(obj)(i) for i in zip(*map(scatter_map, obj.items()))]
        return [obj for _ in target_gpus]

    return scatter_map(inputs)


def scatter_kwargs(inputs: tuple[Any, ...], kwargs: dict[str, Any] | None,
                   target_gpus: Sequence, dim: int = 0) -> tuple[tuple, tuple]:
    """``scatter`` of the positional and keyword arguments, padded to the same length."""
    scattered_inputs = scatter(inputs, target_gpus, dim) if inputs else []
    scattered_kwargs = scatter(kwargs, target_gpus, dim) if kwargs else []
    if len(scattered_inputs) < len(scattered_kwargs):
        scattered_inputs.extend(() for _ in range(len(scattered_kwargs) - len(scattered_inputs)))
    elif len(scattered_kwargs) < len(scattered_inputs):
        scattered_kwargs.extend({} for _ in range(len(scattered_inputs) - len(scattered_kwargs)))
    return tuple(scattered_inputs), tuple(scattered_kwargs)


def gather(outputs: Any, target_device, dim: int = 0) -> Any:
    """The outputs of several devices joined along ``dim`` on ``target_device``."""

    def gather_map(outputs):
        out = outputs[0]
        if isinstance(out, Tensor):
            if target_device == -1:
                warnings.warn("Using -1 to represent CPU tensor is deprecated. Please use a "
                              'device object or string instead, e.g., "cpu".', FutureWarning,
                              stacklevel=3)
            raise AssertionError("Gather function not implemented for CPU tensors")
        if out is None:
            return None
        if isinstance(out, dict):
            if not all(len(out) == len(d) for d in outputs):
                raise ValueError("All dicts must have the same number of keys")
            return type(out)((k, gather_map([d[k] for d in outputs])) for k in out)
        if _is_namedtuple(out):
            return type(out)._make(map(gather_map, zip(*outputs)))
        return type(out)(map(gather_map, zip(*outputs)))

    return gather_map(outputs)
