"""replicate: copies of a module for each device, sharing its parameters through broadcasts.
Without accelerators there is nothing to broadcast to, as in PyTorch's CPU build."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TypeVar

from ..modules.module import Module

__all__ = ["replicate"]

T = TypeVar("T", bound=Module)


def replicate(network: T, devices: Sequence, detach: bool = False) -> list[T]:
    """A copy of ``network`` on each of ``devices`` (its parameters broadcast to them)."""
    if not devices:
        return []
    for device in devices:
        if not isinstance(device, int) or isinstance(device, bool):
            raise ValueError(f"Expected a non cpu device, but got: {device}")
    if next(network.parameters(), None) is not None or next(network.buffers(), None) is not None:
        raise AssertionError("Broadcast function not implemented for CPU tensors")
    return [_replica(network) for _ in devices]


def _replica(module: Module) -> Module:
    """A replica of a module without tensors: its submodules replicated too."""
    replica = module._replicate_for_data_parallel()
    for name, child in module._modules.items():
        replica._modules[name] = None if child is None else _replica(child)
    return replica
