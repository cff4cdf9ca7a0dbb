"""parallel_apply: each module on its input, one thread per device. Without accelerators there
is no device to run on, as in PyTorch's CPU build."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ...tensor import Tensor
from ..modules.module import Module

__all__ = ["get_a_var", "parallel_apply"]


def get_a_var(obj) -> Tensor | None:
    """The first tensor found in ``obj`` (a tensor or nested lists, tuples and dicts)."""
    if isinstance(obj, Tensor):
        return obj
    items = obj if isinstance(obj, (list, tuple)) else obj.items() if isinstance(obj, dict) \
        else ()
    for result in map(get_a_var, items):
        if isinstance(result, Tensor):
            return result
    return None


def parallel_apply(modules: Sequence[Module], inputs: Sequence[Any],
                   kwargs_tup: Sequence[dict[str, Any]] | None = None,
                   devices: Sequence | None = None) -> list[Any]:
    """``modules[i](*inputs[i], **kwargs_tup[i])`` on ``devices[i]``, in parallel threads."""
    if len(modules) != len(inputs):
        raise AssertionError(f"The number of modules {len(modules)} is not equal to the number "
                             f"of inputs {len(inputs)}")
    if kwargs_tup is not None and len(modules) != len(kwargs_tup):
        raise AssertionError(f"The number of modules {len(modules)} is not equal to the number "
                             f"of kwargs {len(kwargs_tup)}")
    if devices is None:
        devices = [None] * len(modules)
    elif len(modules) != len(devices):
        raise AssertionError(f"The number of modules {len(modules)} is not equal to the number "
                             f"of devices {len(devices)}")
    for device in devices:
        _accelerator_index(device)
    raise AssertionError("No available accelerator found.")


def _accelerator_index(device) -> None:
    """PyTorch's check that ``device`` names an accelerator; none exists here."""
    if device is None or isinstance(device, int) and not isinstance(device, bool):
        raise RuntimeError("Cannot access accelerator device when none is available.")
    raise ValueError(f"Expected a cuda device, but got: {device}")
