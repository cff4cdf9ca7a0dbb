"""What a CPU build of PyTorch says where CUDA is needed, and its device-index rules."""

from __future__ import annotations

from .._device import as_device
from .._device import device as _device

__all__ = ["not_compiled", "no_binding", "get_device_index", "exchange_device"]


def not_compiled() -> AssertionError:
    """The error of a call that needs the CUDA runtime (PyTorch's ``_lazy_init``)."""
    return AssertionError("Torch not compiled with CUDA enabled")


def no_binding(name: str) -> AttributeError:
    """The error of a call into a CUDA binding a CPU build of PyTorch does not have."""
    return AttributeError(f"module 'torch._C' has no attribute '{name}'")


def get_device_index(device, optional: bool = False) -> int | None:
    """A CUDA device's index: an int as it is, a ``'cuda:1'`` device's index; with
    ``optional``, None where PyTorch would ask the current device (there is none)."""
    if isinstance(device, int):
        return device
    if isinstance(device, str):
        device = as_device(device)
    if isinstance(device, _device):
        if device.type != "cuda":
            raise ValueError(f"Expected a cuda device, but got: {device}")
        index = device.index
    elif device is None or hasattr(device, "idx"):
        index = getattr(device, "idx", None)
    else:
        index = None
    if index is None and not optional:
        raise ValueError(f"Expected a torch.device with a specified index or an integer, but "
                         f"got:{device}")
    return index


def exchange_device(index: int) -> int:
    """Make device ``index`` current (a negative one: no device), returning the previous."""
    if index < 0:
        return -1
    raise RuntimeError("PyTorch was compiled without CUDA support")
