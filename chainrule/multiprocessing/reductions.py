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

Storages in shared memory travel the same way (``reduce_storage``; a storage outside it is
refused, as ``storage.share_memory_()`` refuses: its tensor must be moved). A process maps each
block it receives once: ``shared_cache`` maps a block's handle to a ``StorageWeakRef``, so the
tensors and storages of one block received apart share one storage, as in PyTorch. Meta tensors
travel as their metadata; CUDA tensors and events cannot be rebuilt without CUDA.
"""

from __future__ import annotations

import itertools
import mmap
import os
import pickle
import threading
import weakref
from multiprocessing.util import register_after_fork

from .. import cuda, storage
from .._backend import as_dtype, get_default_dtype, xp
from .._meta import MetaArray
from ..storage import TypedStorage, UntypedStorage, _block_of, _map, _untyped_of
from ..tensor import Tensor
from ..utils.hooks import warn_if_has_hooks

__all__ = ["init_reductions", "reduce_tensor", "rebuild_tensor", "StorageWeakRef", "SharedCache",
           "shared_cache", "fd_id", "storage_from_cache", "reduce_storage", "rebuild_storage_fd",
           "rebuild_storage_filename", "rebuild_storage_empty", "reduce_typed_storage",
           "rebuild_typed_storage", "reduce_typed_storage_child", "rebuild_typed_storage_child",
           "reduce_event", "rebuild_event", "rebuild_meta_tensor", "rebuild_cuda_tensor"]

_ndarray = xp.ndarray


def reduce_tensor(tensor: Tensor):
    """How multiprocessing pickles a tensor: a shared one as a handle to its block, rebuilt by
    its class's own pickling function on the block's memory; a meta one by its metadata; any
    other by value."""
    if tensor.requires_grad and not tensor.is_leaf:
        raise RuntimeError(
            "Cowardly refusing to serialize non-leaf tensor which requires_grad, since autograd "
            "does not support crossing process boundaries.  If you just want to transfer the "
            "data, call detach() on the tensor before serializing (e.g., putting it on the "
            "queue).")
    warn_if_has_hooks(tensor)
    array = tensor._data
    if type(array) is MetaArray:
        return rebuild_meta_tensor, (_pickled(type(tensor)), tensor.size(), tensor.stride(),
                                     tensor.storage_offset(), tensor.dtype,
                                     tensor.untyped_storage().size(), tensor.requires_grad)
    by_value = tensor.__reduce_ex__(pickle.HIGHEST_PROTOCOL)
    block = _block_of(array) if type(array) is _ndarray else None
    rebuild, args = by_value[:2]
    if block is None or not args or args[0] is not array:
        return by_value
    from multiprocessing.reduction import DupFd

    start = _ndarray((len(block),), xp.uint8, buffer=block).__array_interface__["data"][0]
    offset = array.__array_interface__["data"][0] - start
    handle = block.name if block.name is not None else DupFd(block.fd)
    shared_cache[block.name if block.name is not None else fd_id(block.fd)] = \
        StorageWeakRef(_untyped_of(tensor))
    return rebuild_tensor, (handle, len(block), array.dtype.str, array.shape, array.strides,
                            offset, rebuild, args[1:])


def rebuild_tensor(handle, size: int, dtype: str, shape: tuple, strides: tuple, offset: int,
                   rebuild, args: tuple):
    """A shared tensor received: rebuilt on its block, mapped into this process once (tensors
    of one block received by one process view one storage, as in PyTorch)."""
    if isinstance(handle, str):
        memory = _shared_storage(handle, lambda: os.open(handle, os.O_RDWR), size, handle)
    else:
        fd = handle.detach()
        memory = _shared_storage(fd_id(fd), lambda: fd, size, None, close=fd)
    tensor = rebuild(_ndarray(shape, xp.dtype(dtype), buffer=memory._bytes, offset=offset,
                              strides=strides), *args)
    _register(type(tensor))
    return tensor


def _shared_storage(key, open_fd, size: int, name: str | None, close: int | None = None):
    """The storage of the shared block ``key`` names: the one this process has, or the block
    mapped (the descriptor ``open_fd()`` gives is kept by the mapping; ``close`` is a received
    descriptor that is closed if the block is mapped already)."""
    found = storage_from_cache(UntypedStorage, key)
    if found is not None and found.nbytes() >= size:
        if close is not None:
            os.close(close)
        return found
    block = _map(open_fd(), size, name, owner=False)
    found = UntypedStorage._wrap(_ndarray((size,), xp.uint8, buffer=block))
    shared_cache[key] = StorageWeakRef(found)
    return found


# ---- weak references to storages, and the cache of shared ones received --------------------
# A storage's memory is identified by the object that owns it, at the end of its bytes' base
# chain (an ndarray that owns its data, or a shared block's mapping): every storage and tensor of
# that memory reaches it, and it lives exactly as long as they do. A weak reference to it gets
# a number ("cdata", as PyTorch's weak storage pointer) that is never reused.

_weak_lock = threading.Lock()
_by_root: dict[int, tuple] = {}  # id(owner) -> (weakref to it, its cdata)
_weak: dict[int, list] = {}  # cdata -> [weakref to the owner, number of StorageWeakRefs]
_cdatas = itertools.count(1)


def _owner(memory):
    """The object owning a storage's memory (a storage or its typed wrapper)."""
    data = memory._bytes if isinstance(memory, UntypedStorage) else memory._untyped_storage._bytes
    while getattr(data, "base", None) is not None:
        data = data.base
    return data


def _weak_ref(memory) -> int:
    """A new weak reference to ``memory``'s owner: its cdata."""
    owner = _owner(memory)
    with _weak_lock:
        entry = _by_root.get(id(owner))
        if entry is not None and entry[0]() is owner:
            cdata = entry[1]
        else:
            cdata = next(_cdatas)
            key = id(owner)

            def forget(_ref, key=key, cdata=cdata) -> None:
                with _weak_lock:
                    if _by_root.get(key, (None, None))[1] == cdata:
                        del _by_root[key]
            try:
                ref = weakref.ref(owner, forget)
            except TypeError:  # memory that takes no weak reference is never freed before us
                ref = (lambda kept: lambda: kept)(owner)
            _by_root[key] = (ref, cdata)
            _weak[cdata] = [ref, 0]
        _weak[cdata][1] += 1
    return cdata


def _free_weak_ref(cdata: int, _weak_lock=_weak_lock, _weak=_weak) -> None:
    # the module's globals are bound here: StorageWeakRefs may die after them at shutdown
    with _weak_lock:
        entry = _weak.get(cdata)
        if entry is not None:
            entry[1] -= 1
            if entry[1] <= 0:
                del _weak[cdata]


def _expired(cdata: int) -> bool:
    entry = _weak.get(cdata)
    return entry is None or entry[0]() is None


def _storage_of(cdata: int) -> UntypedStorage | None:
    """A storage of the memory ``cdata`` refers to, if it is alive (and chainrule's)."""
    entry = _weak.get(cdata)
    owner = None if entry is None else entry[0]()
    if isinstance(owner, _ndarray):
        return _untyped_of(Tensor._wrap(owner, None, 0))
    if isinstance(owner, mmap.mmap):  # a shared block, or a file storage's mapping
        return UntypedStorage._wrap(_ndarray((len(owner),), xp.uint8, buffer=owner))
    return None


class StorageWeakRef:
    """A weak reference to a storage: equal for storages of the same memory, expired once that
    memory is freed. ``cdata`` is a number naming the memory."""

    __slots__ = ("cdata", "_free_weak_ref")

    def __init__(self, storage) -> None:
        self.cdata = _weak_ref(storage)
        self._free_weak_ref = _free_weak_ref  # kept: module globals go first at shutdown

    @classmethod
    def from_weakref(cls, cdata: int) -> StorageWeakRef:
        """A StorageWeakRef taking over the weak reference ``cdata``."""
        instance = cls.__new__(cls)
        instance.cdata = cdata
        instance._free_weak_ref = _free_weak_ref
        return instance

    def expired(self) -> bool:
        return _expired(self.cdata)

    def __del__(self) -> None:
        self._free_weak_ref(self.cdata)

    def __hash__(self) -> int:
        return self.cdata

    def __eq__(self, other) -> bool:
        return self is other or self.cdata == other.cdata


class SharedCache(dict):
    """Dictionary from multiprocessing handles to StorageWeakRef."""

    def __init__(self) -> None:
        # Past ``limit`` entries the dead ones are dropped; the limit follows the live ones.
        self.limit = 128
        self._after_fork()
        register_after_fork(self, SharedCache._after_fork)  # a fork may copy a held lock

    def _after_fork(self) -> None:
        self.lock = threading.Lock()

    def get(self, key):
        with self.lock:
            return dict.get(self, key)

    def __setitem__(self, key, storage_ref) -> None:
        with self.lock:
            dict.__setitem__(self, key, storage_ref)
            if len(self) > self.limit:
                self.free_dead_references()

    def free_dead_references(self) -> None:
        live = 0
        for key, storage_ref in list(self.items()):
            if storage_ref.expired():
                del self[key]
            else:
                live += 1
        self.limit = max(128, live * 2)


# mapping from handles to StorageWeakRef objects
shared_cache = SharedCache()


def fd_id(fd: int) -> tuple[int, int]:
    """What identifies the file behind a descriptor: (inode, device)."""
    stat = os.fstat(fd)
    return stat.st_ino, stat.st_dev


def storage_from_cache(cls, key) -> UntypedStorage | None:
    """The storage of the shared memory ``key`` names, if this process still has it."""
    storage_ref = shared_cache.get(key)
    if storage_ref is None:
        return None
    return _storage_of(storage_ref.cdata)


# ---- chainrule's classes in pickles ---------------------------------------------------------
# The storage and tensor classes say their module is torch's (as they print), so pickle would
# look them up in torch: the reducers name them through _ClassRef instead, which unpickles as
# the class itself.

def _class_named(name: str) -> type:
    from ..nn.parameter import Parameter

    return {"Tensor": Tensor, "Parameter": Parameter, "UntypedStorage": UntypedStorage,
            "TypedStorage": TypedStorage, **storage.LEGACY_STORAGES}[name]


class _ClassRef:
    __slots__ = ("name",)

    def __init__(self, name: str) -> None:
        self.name = name

    def __reduce__(self):
        return _class_named, (self.name,)


def _pickled(cls: type):
    """``cls``, or what stands for it in a pickle when it is one of chainrule's torch-named
    classes."""
    try:
        return _ClassRef(cls.__name__) if _class_named(cls.__name__) is cls else cls
    except KeyError:
        return cls


# ---- storages --------------------------------------------------------------------------------

def _shared_block(storage):
    """The shared block holding a storage's bytes, from its first byte: a storage outside
    shared memory refuses (its tensor must be moved there, ``Tensor.share_memory_()``)."""
    untyped = storage if isinstance(storage, UntypedStorage) else storage._untyped_storage
    untyped.share_memory_()
    block = _block_of(untyped._bytes)
    start = _ndarray((len(block),), xp.uint8, buffer=block).__array_interface__["data"][0]
    if untyped.data_ptr() != start:
        raise RuntimeError("chainrule sends a storage in shared memory whole: this one is a slice "
                           "of its block; send the tensor viewing it instead")
    return block


def _typed_dtype(cls):
    """The dtype of a typed storage class (TypedStorage itself: the default dtype)."""
    return getattr(cls, "_fixed_dtype", None) or get_default_dtype()


def _tensor_on(untyped: UntypedStorage, dtype, offset: int, size, stride) -> Tensor:
    """A tensor viewing ``untyped``'s bytes as ``dtype`` from element ``offset``."""
    itemsize = dtype.itemsize
    array = _ndarray(tuple(size), dtype.np, buffer=untyped._bytes, offset=offset * itemsize,
                     strides=tuple(s * itemsize for s in stride))
    return Tensor._wrap(array, None, 0)


def reduce_storage(storage):
    """How multiprocessing pickles a storage: a handle to its shared memory (by descriptor or
    by file name, as its block was made), or, for an empty one, an empty storage."""
    if storage.is_cuda:
        raise RuntimeError("Cannot pickle CUDA storage; try pickling a CUDA tensor instead")
    if storage.device.type == "meta":
        raise RuntimeError("Cannot pickle meta storage; try pickling a meta tensor instead")
    if storage.nbytes() == 0:  # nothing to share (under file_system PyTorch sends a name)
        return rebuild_storage_empty, (_pickled(type(storage)),)
    block = _shared_block(storage)
    if block.name is not None:
        cache_key = block.name
        metadata = (b"", block.name, storage.size())
        rebuild = rebuild_storage_filename
        if isinstance(storage, TypedStorage):
            metadata += (storage.dtype,)
    else:
        from multiprocessing.reduction import DupFd

        cache_key = fd_id(block.fd)
        metadata = (DupFd(block.fd), storage.size())
        rebuild = rebuild_storage_fd
    shared_cache[cache_key] = StorageWeakRef(storage)
    return rebuild, (_pickled(type(storage)),) + metadata


def _as_cls(cls, untyped: UntypedStorage, dtype=None):
    """``untyped`` as a storage of ``cls`` (a typed one as ``dtype``, else the class's)."""
    if issubclass(cls, UntypedStorage):
        return untyped
    return TypedStorage(wrap_storage=untyped, dtype=dtype or _typed_dtype(cls), _internal=True)


def rebuild_storage_fd(cls, df, size: int):
    """A storage received by descriptor: the memory this process has for it, or the block
    mapped."""
    fd = df.detach()
    try:
        found = storage_from_cache(cls, fd_id(fd))
        if found is not None:
            return found
        nbytes = size if issubclass(cls, UntypedStorage) else size * _typed_dtype(cls).itemsize
        block = _map(os.dup(fd), nbytes, None, owner=False)
        received = _as_cls(cls, UntypedStorage._wrap(_ndarray((nbytes,), xp.uint8, buffer=block)))
        shared_cache[fd_id(fd)] = StorageWeakRef(received)
        return received
    finally:
        os.close(fd)


def rebuild_storage_filename(cls, manager, handle, size: int, dtype=None):
    """A storage received by file name (``manager`` is PyTorch's shared memory manager's
    socket: chainrule has none and sends b"")."""
    found = storage_from_cache(cls, handle)
    if found is not None:
        return found
    nbytes = size * (dtype.itemsize if dtype is not None else 1)
    if nbytes == 0:
        return _as_cls(cls, UntypedStorage(0), dtype)
    block = _map(os.open(handle, os.O_RDWR), nbytes, handle, owner=False)
    received = _as_cls(cls, UntypedStorage._wrap(_ndarray((nbytes,), xp.uint8, buffer=block)),
                       dtype)
    shared_cache[handle] = StorageWeakRef(received)
    return received


def rebuild_storage_empty(cls):
    return cls()


def rebuild_typed_storage(storage: UntypedStorage, dtype) -> TypedStorage:
    return TypedStorage(wrap_storage=storage, dtype=dtype, _internal=True)


def reduce_typed_storage(storage: TypedStorage):
    """A typed storage travels as its untyped storage and its dtype."""
    return rebuild_typed_storage, (storage._untyped_storage, storage.dtype)


def rebuild_typed_storage_child(storage: UntypedStorage, storage_type):
    return storage_type(wrap_storage=storage, _internal=True)


def reduce_typed_storage_child(storage):
    """A storage of a legacy class (torch.FloatStorage, ...) travels as its untyped storage and
    its class."""
    return rebuild_typed_storage_child, (storage._untyped_storage, _pickled(type(storage)))


# ---- events, meta and CUDA tensors -----------------------------------------------------------

def rebuild_event(device, handle):
    return cuda.Event.from_ipc_handle(device, handle)


def reduce_event(event):
    """An event travels as its device and interprocess handle (chainrule's events have none:
    ``ipc_handle()`` raises, as on PyTorch's CPU build)."""
    handle = event.ipc_handle()
    return rebuild_event, (event.device, handle)


def _leaf_like(t: Tensor, tensor_cls, requires_grad: bool) -> Tensor:
    from ..nn.parameter import Parameter

    if tensor_cls is Parameter:  # an integer Parameter must be told requires_grad=False
        return Parameter(t, requires_grad=requires_grad)
    t.requires_grad = requires_grad
    return t


def rebuild_meta_tensor(tensor_cls, tensor_size, tensor_stride, tensor_offset, dtype,
                        storage_size_bytes, requires_grad):
    """A meta tensor received: its shape, strides and offset on a meta storage of that size."""
    dtype = as_dtype(dtype)
    itemsize = dtype.itemsize
    base = MetaArray((storage_size_bytes // itemsize,), dtype.np)
    array = MetaArray(tensor_size, dtype.np, tuple(s * itemsize for s in tensor_stride),
                      tensor_offset, base)
    return _leaf_like(Tensor._wrap(array, None, 0), tensor_cls, requires_grad)


def rebuild_cuda_tensor(tensor_cls, tensor_size, tensor_stride, tensor_offset, storage_cls,
                        dtype, storage_device, storage_handle, storage_size_bytes,
                        storage_offset_bytes, requires_grad, ref_counter_handle,
                        ref_counter_offset, event_handle, event_sync_required):
    """A CUDA tensor received: its storage opened from the CUDA IPC handle, which takes CUDA
    (without it this raises, as on PyTorch's CPU build)."""
    if storage_handle is None or storage_size_bytes == 0:
        received = storage_cls(0, dtype=dtype, device=storage_device, _internal=True)
    else:
        received = storage_from_cache(storage_cls, (storage_handle, storage_offset_bytes))
        if received is None:
            cuda.init()  # raises: there is no CUDA to open the handle with
    untyped = received if isinstance(received, UntypedStorage) else received._untyped_storage
    t = _tensor_on(untyped, as_dtype(dtype), tensor_offset, tensor_size, tensor_stride)
    return _leaf_like(t, tensor_cls, requires_grad)


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
    """Register ``reduce_tensor`` for Tensor (a subclass registers when one is shared), and the
    storages' and events' picklers."""
    from multiprocessing.reduction import ForkingPickler

    _register(Tensor)
    storage._on_share = _register
    ForkingPickler.register(cuda.Event, reduce_event)
    ForkingPickler.register(UntypedStorage, reduce_storage)
    ForkingPickler.register(TypedStorage, reduce_typed_storage)
    for cls in storage.LEGACY_STORAGES.values():
        ForkingPickler.register(cls, reduce_typed_storage_child)
