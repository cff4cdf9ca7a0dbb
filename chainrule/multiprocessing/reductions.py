"""Tensors between processes.

``share_memory_()`` moves a tensor's values into a block of shared memory: a memory file mapped
into this process, which a child made by fork inherits and any other process can map. A tensor
whose values are in such a block goes through multiprocessing (queues, pipes, the arguments of
a spawned process) as a handle to the block, by the sharing strategy it was made under: the
file's descriptor (``file_descriptor``, passed as multiprocessing passes descriptors) or its
name (``file_system``). Writes on either side are then seen on the other. Every other tensor
goes by value, as ``pickle`` sends it.

The move gives the tensor a new NumPy array: tensors viewing its old memory (views made before
the call) keep the old memory. PyTorch moves the storage itself, so its views follow.
"""

from __future__ import annotations

import mmap
import os
import pickle
import threading
import uuid
import weakref

from .._backend import xp
from ..tensor import Tensor

__all__ = ["init_reductions", "reduce_tensor", "rebuild_tensor", "share_memory_", "is_shared"]

_ndarray = xp.ndarray
# The strategy new blocks are made under (torch.multiprocessing.set_sharing_strategy).
strategy = ["file_descriptor" if hasattr(os, "memfd_create") else "file_system"]


class _Block(mmap.mmap):
    """A block of shared memory: a memory file mapped here, with what another process needs to
    map it (``fd``, kept open to pass on; ``name`` under the file_system strategy)."""

    fd: int
    name: str | None


def _shm_dir() -> str:
    if os.path.isdir("/dev/shm"):
        return "/dev/shm"
    import tempfile

    return tempfile.gettempdir()


def _map(fd: int, size: int, name: str | None, owner: bool) -> _Block:
    block = _Block(fd, size)
    block.fd, block.name = fd, name
    # The creator removes a named file when its block dies; processes that mapped it keep it.
    weakref.finalize(block, _release, fd, name if owner else None)
    return block


def _release(fd: int, name: str | None) -> None:
    os.close(fd)
    if name is not None:
        try:
            os.unlink(name)
        except FileNotFoundError:
            pass


def _new_block(nbytes: int) -> _Block:
    size = max(nbytes, 1)  # a memory map is never empty
    name = None
    if strategy[0] == "file_system":
        name = os.path.join(_shm_dir(), f"chainrule_{os.getpid()}_{uuid.uuid4().hex}")
        fd = os.open(name, os.O_RDWR | os.O_CREAT | os.O_EXCL, 0o600)
    elif hasattr(os, "memfd_create"):
        fd = os.memfd_create("chainrule", os.MFD_CLOEXEC)
    else:  # a file with no name, as memfd_create makes
        import tempfile

        fd, path = tempfile.mkstemp(dir=_shm_dir())
        os.unlink(path)
    os.ftruncate(fd, size)
    return _map(fd, size, name, owner=True)


def _block_of(array) -> _Block | None:
    """The shared block holding ``array``'s values, if any."""
    base = array
    while type(base) is _ndarray:
        base = base.base
    return base if isinstance(base, _Block) else None


def is_shared(self: Tensor) -> bool:
    """True if the tensor's values are in shared memory (``share_memory_()``)."""
    return type(self._data) is _ndarray and _block_of(self._data) is not None


def share_memory_(self: Tensor) -> Tensor:
    """Move the tensor's values into shared memory (once); returns self."""
    data = self._data
    if type(data) is not _ndarray or _block_of(data) is not None:
        return self
    block = _new_block(data.nbytes)
    order = "F" if data.flags.f_contiguous and not data.flags.c_contiguous else "C"
    shared = _ndarray(data.shape, data.dtype, buffer=block, order=order)
    shared[...] = data
    self._data = shared
    _register(type(self))
    return self


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
