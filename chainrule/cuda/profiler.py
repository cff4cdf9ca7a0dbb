"""``torch.cuda.profiler``: the CUDA profiler's start and stop, which need the CUDA runtime."""

from __future__ import annotations

import contextlib

from ._utils import not_compiled

__all__ = ["start", "stop", "profile"]


def start() -> None:
    """Start the CUDA profiler's data collection."""
    raise not_compiled()


def stop() -> None:
    """Stop the CUDA profiler's data collection."""
    raise not_compiled()


@contextlib.contextmanager
def profile():
    """The CUDA profiler on around a ``with`` block."""
    start()
    try:
        yield
    finally:
        stop()
