"""``torch.cuda.nvtx``: NVIDIA Tools Extension ranges and marks, which a CPU build lacks."""

from __future__ import annotations

import contextlib

__all__ = ["range_push", "range_pop", "range_start", "range_end", "mark", "range"]

_NOT_INSTALLED = "NVTX functions not installed. Are you sure you have a CUDA build?"


def range_push(msg: str) -> int:
    """Open a nested NVTX range named ``msg``."""
    raise RuntimeError(_NOT_INSTALLED)


def range_pop() -> int:
    """Close the innermost NVTX range."""
    raise RuntimeError(_NOT_INSTALLED)


def range_start(msg: str) -> int:
    """Start an NVTX range that may span threads."""
    raise AttributeError("'_NVTXStub' object has no attribute 'rangeStartA'")


def range_end(range_id: int) -> None:
    """End an NVTX range started with range_start."""
    raise AttributeError("'_NVTXStub' object has no attribute 'rangeEnd'")


def mark(msg: str) -> None:
    """An instantaneous NVTX event."""
    raise RuntimeError(_NOT_INSTALLED)


@contextlib.contextmanager
def range(msg: str, *args, **kwargs):  # noqa: A001  (PyTorch's name)
    """An NVTX range around a ``with`` block (``msg`` formatted with the arguments)."""
    range_push(msg.format(*args, **kwargs))
    try:
        yield
    finally:
        range_pop()
