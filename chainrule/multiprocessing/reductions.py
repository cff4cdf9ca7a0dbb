"""Tensors between processes.

``share_memory_()`` (chainrule.storage) moves a tensor's values into a block of shared memory: a
memory file mapped into this process, which a child made by fork inherits and any other process
can map. A tensor whose values are in such a block goes through multiprocessing (queues, pipes,
the arguments of a spawned process) as a handle to the block, by the sharing strategy it was
made under: the file's descriptor (``file_descriptor``, passed as multiprocessing passes
descriptors) or its name (``file_system``). Writes on either side are then seen on the other.
Every other tensor goes by value, as ``pickle`` sends it.

The move gives the tensor a new NumPy array: tensors viewing its old memory (views made before
the call) keep the old memory. PyTorch moves the storage itself, so its views follow.
"""

from __future__ import annotations

import os
import pickle
import threading

from .. import storage
from .._backend import xp
from ..storage import _block_of, _map
from ..tensor import Tensor

__all__ = ["init_reductions", "reduce_tensor", "rebuild_tensor"]

_ndarray = xp.ndarray


def reduce_tensor(tensor: Tensor):
    """How multiprocessing pickles a tensor: a shared one as a handle to its block, rebuilt by
    its class's own pickling function on the block's memory; any other by value."""
    by_value = tensor.__reduce_ex__(pickle.HIGHEST_PROTOCOL)
    array = tensor._data
    block = _block_of(array) if type(array) is _ndarray else None
    rebuild, args = by_value[:2]
    if block is None or not args or args[0] is not array:
        return by_value
    from multiprocessing.reduction import DupFd

    start = _ndarray((len(block),), xp.uint8, buffer=block).__array_interface__["data"][0]
    offset = array.__array_interface__["data"][0] - start
    handle = block.name if block.name is not None else DupFd(block.fd)
    return rebuild_tensor, (handle, len(block), array.dtype.str, array.shape, array.strides,
                            offset, rebuild, args[1:])


def rebuild_tensor(handle, size: int, dtype: str, shape: tuple, strides: tuple, offset: int,
                   rebuild, args: tuple):
    """A shared tensor received: its block mapped into this process, the tensor rebuilt on it."""
    if isinstance(handle, str):
        block = _map(os.open(handle, os.O_RDWR), size, handle, owner=False)
    else:
        block = _map(handle.detach(), size, None, owner=False)
    tensor = rebuild(_ndarray(shape, xp.dtype(dtype), buffer=block, offset=offset,
                              strides=strides), *args)
    _register(type(tensor))
    return tensor


_registered: set = set()
_lock = threading.Lock()


def _register(cls: type) -> None:
    """Have multiprocessing's pickler send tensors of ``cls`` through ``reduce_tensor``."""
    if cls in _registered:
        return
    from multiprocessing.reduction import ForkingPickler

    with _lock:
        ForkingPickler.register(cls, reduce_tensor)
        _registered.add(cls)


def init_reductions() -> None:
    """Register ``reduce_tensor`` for Tensor (a subclass registers when one is shared)."""
    _register(Tensor)
    storage._on_share = _register
