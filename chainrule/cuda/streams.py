"""``torch.cuda.streams``: CUDA streams and events, which a CPU build cannot create."""

from __future__ import annotations

__all__ = ["Stream", "ExternalStream", "Event"]


class Stream:
    """A CUDA stream (a queue of kernels on one device)."""

    def __new__(cls, device=None, priority: int = 0, **kwargs):
        raise RuntimeError("torch.cuda.Stream requires CUDA support")


class ExternalStream(Stream):
    """A CUDA stream allocated outside PyTorch, given by its pointer."""

    def __new__(cls, stream_ptr: int, device=None, **kwargs):
        from . import device as _cuda_device

        with _cuda_device(device):
            raise RuntimeError("PyTorch was compiled without CUDA support")


class Event:
    """A CUDA event (a marker in a stream, for synchronization and timing)."""

    def __new__(cls, enable_timing: bool = False, blocking: bool = False,
                interprocess: bool = False, external: bool = False):
        raise RuntimeError("Tried to instantiate dummy base class Event")
