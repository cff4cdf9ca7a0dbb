"""torch.nn.parallel.comm: copying tensors between accelerators. A CPU build has no device to
copy to, so each function raises as PyTorch's CPU build does."""

from __future__ import annotations

from ...tensor import Tensor

__all__ = ["broadcast", "broadcast_coalesced", "reduce_add", "reduce_add_coalesced", "scatter",
           "gather"]


def _no_kernel(name: str) -> AttributeError:
    # PyTorch's CPU build reaches for a CUDA binding it was built without
    return AttributeError(f"module 'torch._C' has no attribute '{name}'")


def broadcast(tensor: Tensor, devices=None, *, out=None):
    """Copy ``tensor`` to each of ``devices`` (not available without accelerators)."""
    if (devices is None) == (out is None):
        raise RuntimeError("Exactly one of 'devices' and 'out' must be specified, but got "
                           f"devices={devices} and out={out}")
    raise _no_kernel("_broadcast")


def broadcast_coalesced(tensors, devices, buffer_size: int = 10485760):
    """Copy ``tensors`` to each of ``devices`` in buffers (not available without
    accelerators)."""
    raise _no_kernel("_broadcast_coalesced")


def reduce_add(inputs, destination=None):
    """Sum tensors from several accelerators onto one (not available without them)."""
    for i, t in enumerate(inputs):
        raise AssertionError(f"reduce_add expects all inputs to be on GPUs, but input {i} is on "
                             f"{str(t.device.type).upper()}")
    raise IndexError("list index out of range")


def reduce_add_coalesced(inputs, destination=None, buffer_size: int = 10485760):
    """``reduce_add`` of lists of tensors in buffers (not available without accelerators)."""
    return [reduce_add(tensors, destination) for tensors in zip(*inputs)]


def scatter(tensor: Tensor, devices=None, chunk_sizes=None, dim: int = 0, streams=None, *,
            out=None):
    """Split ``tensor`` across ``devices`` (not available without accelerators)."""
    raise _no_kernel("_scatter")


def gather(tensors, dim: int = 0, destination=None, *, out=None):
    """Concatenate tensors from several accelerators (not available without them)."""
    raise _no_kernel("_gather")
