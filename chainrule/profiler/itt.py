"""``torch.profiler.itt``: ranges and marks for Intel's ITT (VTune). chainrule is not built with
ITT, so it is not available and its functions raise, as in a PyTorch build without it."""

from __future__ import annotations

from contextlib import contextmanager
from typing import NoReturn

__all__ = ["is_available", "range_push", "range_pop", "mark", "range"]


def _fail() -> NoReturn:
    raise RuntimeError("ITT functions not installed. Are you sure you have a ITT build?")


def is_available() -> bool:
    """False: no ITT."""
    return False


def range_push(msg):
    """Open an ITT range named ``msg``: raises, no ITT."""
    _fail()


def range_pop():
    """Close the innermost ITT range: raises, no ITT."""
    _fail()


def mark(msg):
    """Mark an instant event ``msg``: raises, no ITT."""
    _fail()


@contextmanager
def range(msg, *args, **kwargs):  # noqa: A001  (PyTorch's name)
    """An ITT range around the block, named ``msg.format(*args, **kwargs)``."""
    range_push(msg.format(*args, **kwargs))
    try:
        yield
    finally:
        range_pop()
