"""``torch.multiprocessing``: Python's multiprocessing, with tensors that can be shared between
processes, and ``spawn``/``start_processes``.

``Tensor.share_memory_()`` (chainrule.storage) moves a tensor's values into shared memory; such a
tensor reaches another process through a queue, a pipe or a spawned process's arguments as a
handle to the same memory, so writes on one side are seen on the other (Hogwild training). Other
tensors travel by value. See ``reductions``.
"""

from __future__ import annotations

import multiprocessing
import sys
from multiprocessing import *  # noqa: F403  (the API is Python's)

from .. import storage
from . import reductions
from .reductions import init_reductions
from .spawn import (
    ENV_VAR_PARALLEL_START,
    ProcessContext,
    ProcessExitedException,
    ProcessRaisedException,
    SpawnContext,
    spawn,
    start_processes,
)

__all__ = ["set_sharing_strategy", "get_sharing_strategy", "get_all_sharing_strategies",
           *multiprocessing.__all__]

# Descriptors are passed between processes on Linux; elsewhere blocks are shared by file name.
if sys.platform in ("darwin", "win32"):
    _all_sharing_strategies = {"file_system"}
else:
    _all_sharing_strategies = {"file_descriptor", "file_system"}
storage.strategy[0] = "file_system" if sys.platform in ("darwin", "win32") else \
    "file_descriptor"


def set_sharing_strategy(new_strategy: str) -> None:
    """Share the memory of tensors from now on by ``new_strategy`` (see
    ``get_all_sharing_strategies``)."""
    if new_strategy not in _all_sharing_strategies:
        raise AssertionError(f"invalid sharing strategy {new_strategy!r}, expected one of "
                             f"{_all_sharing_strategies}")
    storage.strategy[0] = new_strategy


def get_sharing_strategy() -> str:
    """The strategy new shared memory is made with."""
    return storage.strategy[0]


def get_all_sharing_strategies() -> set:
    """The sharing strategies this system supports."""
    return _all_sharing_strategies


init_reductions()
