"""``torch.storage``: a tensor's memory as a storage object.

A tensor's memory is its NumPy array; its storage is a view, as bytes, of the whole buffer that
array lives in (the array that owns the memory, found through ``.base``). So two views of one
tensor have storages with one ``data_ptr``, and writing through a storage writes the tensor.
Asked twice for the storage of one buffer, ``untyped_storage()`` gives the same object, as in
PyTorch. ``TypedStorage`` (deprecated in PyTorch) reads the bytes as one dtype.
"""

from __future__ import annotations

import copy as _copy
import mmap
import os
import threading
import uuid
import warnings
import weakref
from collections.abc import Sequence

from . import _backend
from ._arguments import invalid_combination
from ._backend import as_dtype, from_np, get_default_dtype, xp
from ._device import CPU, as_device, memory_of
from ._meta import MetaArray
from .tensor import _LEGACY_NAMES, Tensor, _legacy_values

__all__ = ["TypedStorage", "UntypedStorage"]

_byte_bounds = xp.lib.array_utils.byte_bounds


def _memory(array):
    """The array owning ``array``'s memory, and that memory as a 1-D uint8 view."""
    owner = array
    while isinstance(owner.base, xp.ndarray):
        owner = owner.base
    if owner.size == 0:
        return owner, xp.zeros(0, xp.uint8)
    low, high = _byte_bounds(owner)
    # the element at the lowest address, as bytes, stretched over the whole buffer
    first = owner[tuple(slice(0, 1) if s >= 0 else slice(-1, None) for s in owner.strides)]
    return owner, xp.lib.stride_tricks.as_strided(first.reshape(-1).view(xp.uint8),
                                                  (high - low,), (1,))


_by_owner: weakref.WeakValueDictionary = weakref.WeakValueDictionary()
_by_owner_lock = threading.Lock()


def _untyped_of(tensor: Tensor) -> UntypedStorage:
    """The storage of ``tensor``'s memory (one object per buffer while it is alive)."""
    array = tensor._data
    if isinstance(array, MetaArray):
        return UntypedStorage._wrap(MetaArray((_meta_nbytes(array),), xp.uint8))
    owner, data = _memory(array)
    with _by_owner_lock:
        # the storage keeps the owner alive, so its id names it while the entry exists
        storage = _by_owner.get(id(owner))
        if storage is None:
            storage = _by_owner[id(owner)] = UntypedStorage._wrap(data)
    return storage


def _meta_nbytes(array: MetaArray) -> int:
    if 0 in array.shape:
        return 0
    return sum((n - 1) * s for n, s in zip(array.shape, array.strides)) + array.itemsize


def _bytes_of(data):
    """An UntypedStorage's initial bytes from a sequence of ints (taken modulo 256)."""
    if not isinstance(data, Sequence):
        raise RuntimeError(f"torch.UntypedStorage(): Expected a sequence type, but got "
                           f"{type(data).__name__}")
    for item in data:
        if not isinstance(item, (int, xp.integer)) or isinstance(item, bool):
            raise RuntimeError(f"torch.UntypedStorage(): tried to construct a storage from a "
                               f"sequence ({type(data).__name__}), but one of the items was of "
                               f"type {type(item).__name__} instead of int")
    return (xp.asarray(list(data), dtype=xp.int64) % 256).astype(xp.uint8)


_UNTYPED_SIGNATURES = ("*, int allocator = None, torch.device device = None",
                       "int size, *, int allocator = None, torch.device device = None",
                       "object sequence, *, int allocator = None, torch.device device = None")


def _has_data(data) -> bool:
    """Whether a storage's bytes are memory (a NumPy array, a memory map) and not meta."""
    return not isinstance(data, MetaArray)


def _allocate(device, nbytes: int):
    return memory_of(device, "empty").zeros((nbytes,), xp.uint8)


class UntypedStorage:
    """Bytes of memory on a device: a tensor's ``untyped_storage()``, or new memory."""

    __slots__ = ("_bytes", "__weakref__")
    is_sparse = False
    is_sparse_csr = False

    def __init__(self, *args, device=None) -> None:
        if len(args) > 1:
            raise TypeError(invalid_combination("torch.UntypedStorage", args, {},
                                                _UNTYPED_SIGNATURES))
        if not args:
            self._bytes = _allocate(device, 0)
        elif isinstance(args[0], (int, xp.integer)) and not isinstance(args[0], bool):
            self._bytes = _allocate(device, int(args[0]))
        else:
            values = _bytes_of(args[0])
            self._bytes = _allocate(device, values.size)
            if _has_data(self._bytes):
                self._bytes[...] = values

    @classmethod
    def _wrap(cls, data) -> UntypedStorage:
        storage = object.__new__(cls)
        storage._bytes = data
        return storage

    # ---- what it is ------------------------------------------------------------------------

    @property
    def device(self):
        return CPU if _has_data(self._bytes) else as_device("meta")

    @property
    def is_cuda(self) -> bool:
        return False

    @property
    def is_hpu(self) -> bool:
        return False

    @property
    def filename(self) -> str | None:
        """The file the memory maps (None: process memory)."""
        if not _has_data(self._bytes):
            return None
        filename = getattr(_memory(self._bytes)[0], "filename", None)
        return None if filename is None else str(filename)

    def get_device(self):
        return self.device.index

    def data_ptr(self) -> int:
        """The address of the first byte (0 on the meta device and when empty)."""
        if not _has_data(self._bytes) or not self._bytes.size:
            return 0
        return self._bytes.__array_interface__["data"][0]

    def nbytes(self) -> int:
        return self._bytes.size

    size = nbytes

    def __len__(self) -> int:
        return self._bytes.size

    def element_size(self) -> int:
        return 1

    def type(self, dtype=None, non_blocking: bool = False):
        """The storage's type name, or a typed copy for a legacy storage class."""
        if dtype is None:
            return "torch.storage.UntypedStorage"
        return _legacy_class(dtype)._copy_of(self)

    def is_shared(self) -> bool:
        """True if the storage is in shared memory."""
        return _block_of(self._bytes) is not None

    def share_memory_(self) -> UntypedStorage:
        """Self when in shared memory; a storage cannot be moved there, its tensor can."""
        if not self.is_shared() and _has_data(self._bytes):
            raise RuntimeError("chainrule moves a tensor's values into shared memory, not a "
                               "storage's (its tensors would keep the old memory): call "
                               "share_memory_() on the tensor")
        return self

    def is_pinned(self, device=None) -> bool:
        """False: there is no accelerator to pin memory for."""
        return False

    def pin_memory(self, device=None):
        """Page-locked memory needs an accelerator."""
        raise RuntimeError("Cannot access accelerator device when none is available.")

    def resizable(self) -> bool:
        """False: a NumPy buffer cannot grow where it is."""
        return False

    def resize_(self, size: int):
        raise RuntimeError("Trying to resize storage that is not resizable")

    # ---- values ----------------------------------------------------------------------------

    def __getitem__(self, index):
        data = self._bytes
        if isinstance(index, slice):
            return UntypedStorage._wrap(data[index])
        if not -data.size <= index < data.size:
            raise IndexError(f"index {index} out of range for storage of size {data.size}")
        return int(data[index])

    def __setitem__(self, index, value) -> None:
        if not isinstance(index, slice) and not -self._bytes.size <= index < self._bytes.size:
            raise IndexError(f"index {index} out of range for storage of size "
                             f"{self._bytes.size}")
        self._bytes[index] = value

    def __iter__(self):
        return iter(self.tolist())

    def tolist(self) -> list:
        return self._bytes.tolist()

    def copy_(self, source, non_blocking: bool | None = None) -> UntypedStorage:
        """Copy ``source``'s bytes (a storage of the same size) into this storage."""
        data = source._bytes if isinstance(source, UntypedStorage) else \
            source._untyped_storage._bytes
        if data.size != self._bytes.size:
            raise RuntimeError(f"size does not match, self was {self._bytes.size} bytes but src "
                               f"was {data.size} bytes")
        self._bytes[...] = data
        return self

    def fill_(self, value) -> UntypedStorage:
        self._bytes[...] = value
        return self

    def clone(self) -> UntypedStorage:
        return UntypedStorage._wrap(self._bytes.copy())

    def cpu(self) -> UntypedStorage:
        return self

    def cuda(self, device=None, non_blocking: bool = False):
        memory_of("cuda")  # raises as a CPU build of PyTorch

    def to(self, *, device, non_blocking: bool = False):
        return self if as_device(device).type == self.device.type else \
            UntypedStorage._wrap(memory_of(device).zeros(self._bytes.shape, xp.uint8))

    def untyped(self) -> UntypedStorage:
        return self

    def __copy__(self) -> UntypedStorage:
        return self.clone()

    def __reduce__(self):
        return _rebuild_untyped, (self._bytes.copy() if _has_data(self._bytes) else self._bytes,)

    def __deepcopy__(self, memo: dict) -> UntypedStorage:
        memo.setdefault(id(self), self.clone())
        return memo[id(self)]

    def __sizeof__(self) -> int:
        return super().__sizeof__() + self._bytes.size

    def __repr__(self) -> str:
        info = f"[torch.storage.UntypedStorage(device={self.device}) of size {len(self)}]"
        if self.device.type == "meta":
            return "...\n" + info
        return " " + "\n ".join(str(v) for v in self.tolist()) + "\n" + info

    __str__ = __repr__

    # ---- other views of these bytes --------------------------------------------------------

    def _as(self, np_dtype) -> TypedStorage:
        return TypedStorage(wrap_storage=self, dtype=from_np(xp.dtype(np_dtype)), _internal=True)

    def _legacy_array(self, dtype):
        """The legacy tensor constructor's view of these bytes: 1-D in ``dtype``."""
        np_dtype = (dtype or get_default_dtype()).np
        return self._bytes.view(np_dtype) if _has_data(self._bytes) else \
            MetaArray((self._bytes.size // np_dtype.itemsize,), np_dtype)

    @classmethod
    def from_buffer(cls, buffer, byte_order: str = "native", count: int = -1, offset: int = 0,
                    dtype=None) -> UntypedStorage:
        """A storage holding a copy of ``buffer``'s bytes, read as ``dtype``."""
        np_dtype = xp.dtype(as_dtype(dtype).np if dtype is not None else xp.uint8)
        if byte_order not in ("native", "little", "big"):
            raise ValueError(f"Invalid byte_order '{byte_order}' (expected 'big', 'little', "
                             "or 'native')")
        values = xp.frombuffer(buffer, dtype=np_dtype.newbyteorder(
            {"native": "=", "little": "<", "big": ">"}[byte_order]), count=count, offset=offset)
        return cls._wrap(values.astype(np_dtype).view(xp.uint8).copy())

    @classmethod
    def from_file(cls, filename: str, shared: bool = False, nbytes: int = 0) -> UntypedStorage:
        """``nbytes`` bytes of ``filename``, mapped into memory (changes reach the file with
        ``shared``)."""
        return cls._wrap(xp.memmap(filename, dtype=xp.uint8, mode="r+" if shared else "c",
                                   shape=(nbytes,)))


_warned = [False]


def _warn_typed_storage_removal(stacklevel: int = 2) -> None:
    """PyTorch's once-per-process deprecation warning for TypedStorage."""
    if _warned[0]:
        return
    _warned[0] = True
    warnings.warn("TypedStorage is deprecated. It will be removed in the future and "
                  "UntypedStorage will be the only storage class. This should only matter to you "
                  "if you are using storages directly.  To access UntypedStorage directly, use "
                  "tensor.untyped_storage() instead of tensor.storage()", UserWarning,
                  stacklevel=stacklevel + 1)


def _reset_warn_typed_storage_removal() -> None:
    _warned[0] = False


def _constructor_error(cls: type, args: tuple) -> Exception:
    """PyTorch's error for a TypedStorage constructor call it has no form for."""
    why = ("Too many positional arguments" if len(args) > 1 else
           f"Argument type not recognized: {type(args[0])}")
    if issubclass(cls, _LegacyStorage):
        message = (f"<class '{cls.__module__}.{cls.__qualname__}'>.__new__ received an invalid "
                   "combination of arguments. Expected one of:\n * no arguments\n"
                   " * (int size)\n * (Sequence data)\n * (*, UntypedStorage wrap_storage)\n")
    else:
        message = ("TypedStorage.__init__ received an invalid combination of arguments. Expected "
                   "one of:\n * (*, torch.device device, torch.dtype dtype)\n"
                   " * (int size, *, torch.device device, torch.dtype dtype)\n"
                   " * (Sequence data, *, torch.device device, torch.dtype dtype)\n"
                   " * (*, UntypedStorage wrap_storage, torch.dtype dtype)\n")
    return (RuntimeError if len(args) > 1 else TypeError)(message + why)


class TypedStorage:
    """A storage read as one dtype (deprecated in PyTorch for UntypedStorage)."""

    __slots__ = ("_untyped_storage", "_dtype")
    is_sparse = False

    def __init__(self, *args, device=None, dtype=None, wrap_storage=None,
                 _internal: bool = False) -> None:
        if not _internal:
            _warn_typed_storage_removal()
        dtype = get_default_dtype() if dtype is None else as_dtype(dtype)
        if wrap_storage is not None:
            if args or device is not None:
                raise RuntimeError("TypedStorage.__init__ received an invalid combination of "
                                   "arguments: wrap_storage takes no other arguments")
            self._untyped_storage, self._dtype = wrap_storage, dtype
            return
        if len(args) > 1 or (args and not isinstance(args[0], (int, xp.integer, Sequence))):
            raise _constructor_error(type(self), args)
        storage = UntypedStorage(device=device)
        if args and isinstance(args[0], (int, xp.integer)) and not isinstance(args[0], bool):
            storage = UntypedStorage(int(args[0]) * dtype.itemsize, device=device)
        elif args:
            values = _legacy_values(args[0], dtype.np)
            storage = UntypedStorage(values.nbytes, device=device)
            if _has_data(storage._bytes):
                storage._bytes.view(dtype.np)[...] = values
        self._untyped_storage, self._dtype = storage, dtype

    @property
    def dtype(self):
        return self._dtype

    def _array(self):
        return self._untyped_storage._bytes.view(self.dtype.np)

    @property
    def device(self):
        return self._untyped_storage.device

    @property
    def is_cuda(self) -> bool:
        return False

    @property
    def is_hpu(self) -> bool:
        return False

    @property
    def filename(self) -> str | None:
        return self._untyped_storage.filename

    def get_device(self):
        return self.device.index

    def data_ptr(self) -> int:
        return self._untyped_storage.data_ptr()

    def nbytes(self) -> int:
        return self._untyped_storage.nbytes()

    def size(self) -> int:
        return self._untyped_storage.nbytes() // self.dtype.itemsize

    __len__ = size

    def element_size(self) -> int:
        return self.dtype.itemsize

    def untyped(self) -> UntypedStorage:
        return self._untyped_storage

    def pickle_storage_type(self) -> str:
        return f"{_LEGACY_NAMES[self.dtype.name]}Storage"

    def type(self, dtype=None, non_blocking: bool = False):
        """The legacy storage type name, or a copy as another legacy storage class."""
        if dtype is None:
            return f"torch.{self.pickle_storage_type()}"
        return _legacy_class(dtype)._copy_of(self)

    def is_shared(self) -> bool:
        return self._untyped_storage.is_shared()

    def share_memory_(self) -> TypedStorage:
        self._untyped_storage.share_memory_()
        return self

    def is_pinned(self, device=None) -> bool:
        return False

    def pin_memory(self, device=None):
        raise RuntimeError("Cannot access accelerator device when none is available.")

    def resizable(self) -> bool:
        return False

    def resize_(self, size: int):
        raise RuntimeError("Trying to resize storage that is not resizable")

    def __getitem__(self, index):
        if isinstance(index, slice):
            raise RuntimeError("slices are only supported in UntypedStorage.__getitem__")
        n = self.size()
        if not -n <= index < n:
            raise IndexError(f"index {index} out of range for storage of size {n}")
        return self._array()[index].item()

    def __setitem__(self, index, value) -> None:
        if not isinstance(index, slice):
            n = self.size()
            if not -n <= index < n:
                raise IndexError(f"index {index} out of range for storage of size {n}")
        self._array()[index] = value._data if isinstance(value, Tensor) else value

    def __iter__(self):
        return iter(self.tolist())

    def tolist(self) -> list:
        return self._array().tolist()

    def copy_(self, source, non_blocking: bool | None = None) -> TypedStorage:
        if isinstance(source, TypedStorage) and source.dtype is not self.dtype:
            if source.size() != self.size():
                raise RuntimeError(f"size does not match, self was {self.nbytes()} bytes but "
                                   f"src was {source.nbytes()} bytes")
            self._array()[...] = source._array()
            return self
        self._untyped_storage.copy_(source, non_blocking)
        return self

    def fill_(self, value) -> TypedStorage:
        self._array()[...] = value
        return self

    def clone(self) -> TypedStorage:
        return TypedStorage(wrap_storage=self._untyped_storage.clone(), dtype=self.dtype,
                            _internal=True)

    def cpu(self) -> TypedStorage:
        return TypedStorage(wrap_storage=self._untyped_storage, dtype=self.dtype,
                            _internal=True)

    def cuda(self, device=None, non_blocking: bool = False):
        memory_of("cuda")

    def _to(self, dtype) -> TypedStorage:
        """These values in ``dtype``: a typed view of the same bytes when it is this dtype."""
        if dtype is self.dtype:
            return self.cpu()
        values = self._array().astype(dtype.np)
        return TypedStorage(wrap_storage=UntypedStorage._wrap(values.view(xp.uint8)),
                            dtype=dtype, _internal=True)

    def _legacy_array(self, dtype):
        expected = dtype or get_default_dtype()
        if expected is not self.dtype:
            raise RuntimeError(f"Expected a Storage of type {_LEGACY_NAMES[expected.name]} or an "
                               f"UntypedStorage, but got type {_LEGACY_NAMES[self.dtype.name]} "
                               "for argument 1 'storage'")
        return self._untyped_storage._legacy_array(expected)

    def __copy__(self) -> TypedStorage:
        return TypedStorage(wrap_storage=_copy.copy(self._untyped_storage), dtype=self.dtype,
                            _internal=True)

    def __reduce__(self):
        return _rebuild_typed, (self._untyped_storage, self.dtype.name)

    def __deepcopy__(self, memo: dict) -> TypedStorage:
        memo.setdefault(id(self), self.clone())
        return memo[id(self)]

    def __repr__(self) -> str:
        info = (f"[torch.storage.TypedStorage(dtype={self.dtype}, device={self.device}) of "
                f"size {len(self)}]")
        if self.device.type == "meta":
            return "...\n" + info
        return " " + "\n ".join(str(v) for v in self.tolist()) + "\n" + info

    __str__ = __repr__

    @classmethod
    def from_buffer(cls, buffer, byte_order: str = "native", count: int = -1, offset: int = 0,
                    dtype=None) -> TypedStorage:
        _warn_typed_storage_removal()
        dtype = getattr(cls, "_fixed_dtype", None) or dtype or get_default_dtype()
        untyped = UntypedStorage.from_buffer(buffer, byte_order, count * dtype.itemsize
                                             if count != -1 else -1, offset, dtype=dtype)
        return TypedStorage(wrap_storage=untyped, dtype=dtype, _internal=True)

    @classmethod
    def from_file(cls, filename: str, shared: bool = False, size: int = 0) -> TypedStorage:
        _warn_typed_storage_removal()
        dtype = getattr(cls, "_fixed_dtype", None) or get_default_dtype()
        untyped = UntypedStorage.from_file(filename, shared, size * dtype.itemsize)
        return TypedStorage(wrap_storage=untyped, dtype=dtype, _internal=True)


# storage.float(), .long(), ...: a copy in that dtype (an UntypedStorage's bytes as numbers)
_CONVERSIONS = {"bool": "bool_", "byte": "uint8", "char": "int8", "short": "int16", "int": "int32",
                "long": "int64", "half": "float16", "float": "float32", "double": "float64",
                "complex_float": "complex64", "complex_double": "complex128",
                "bfloat16": "bfloat16"}


def _converter(method: str, dtype_name: str):
    def convert(self) -> TypedStorage:
        _warn_typed_storage_removal()
        typed = self if isinstance(self, TypedStorage) else self._as(xp.uint8)
        return typed._to(getattr(_backend, dtype_name))

    convert.__name__ = convert.__qualname__ = method
    convert.__doc__ = f"These values as a storage of {dtype_name.rstrip('_')}."
    return convert


for _method, _dtype_name in _CONVERSIONS.items():
    if hasattr(_backend, _dtype_name):
        setattr(UntypedStorage, _method, _converter(_method, _dtype_name))
        setattr(TypedStorage, _method, _converter(_method, _dtype_name))


# ---- the legacy storage classes: torch.FloatStorage and kin --------------------------------

class _LegacyStorageMeta(type):
    """The class of the legacy storage classes: ``isinstance`` asks a storage's dtype."""

    def __instancecheck__(cls, obj) -> bool:
        if type(obj) is cls:
            return True
        return (isinstance(obj, TypedStorage) and obj.dtype is cls._fixed_dtype
                and obj.device.type == cls._legacy_device)


class _LegacyStorage(TypedStorage, metaclass=_LegacyStorageMeta):
    __slots__ = ()
    _fixed_dtype = None
    _legacy_device = "cpu"

    def __new__(cls, *args, device=None, wrap_storage=None,
                _internal: bool = False) -> TypedStorage:
        # As PyTorch's: the legacy classes make plain TypedStorages of their dtype.
        if not _internal:
            _warn_typed_storage_removal()
        if cls._legacy_device != "cpu":
            memory_of(cls._legacy_device)
        if len(args) > 1 or (args and not isinstance(args[0], (int, xp.integer, Sequence))):
            raise _constructor_error(cls, args)
        return TypedStorage(*args, device=device, dtype=cls._fixed_dtype,
                            wrap_storage=wrap_storage, _internal=True)

    @classmethod
    def _copy_of(cls, storage) -> TypedStorage:
        source = storage if isinstance(storage, TypedStorage) else storage._as(xp.uint8)
        return source._to(cls._fixed_dtype)


def _legacy_class(dtype) -> type:
    if isinstance(dtype, str):
        cls = LEGACY_STORAGES.get(dtype.rpartition(".")[2])
        if cls is None:
            raise ValueError(f"invalid type: '{dtype}'")
        return cls
    if isinstance(dtype, type) and issubclass(dtype, _LegacyStorage):
        return dtype
    raise ValueError(f"invalid type: '{dtype}'")


def _legacy_storages(module: str, device: str) -> dict[str, type]:
    classes = {}
    bfloat16 = getattr(_backend, "bfloat16", None)  # where chainrule has it
    extra = () if bfloat16 is None or bfloat16 in _backend.ALL_DTYPES else (bfloat16,)
    for dtype in _backend.ALL_DTYPES + extra:
        name = f"{_LEGACY_NAMES[dtype.name]}Storage"
        classes[name] = _LegacyStorageMeta(name, (_LegacyStorage,), {
            "__module__": module, "__qualname__": name, "__slots__": (), "dtype": dtype,
            "_fixed_dtype": dtype, "_legacy_device": device})
    return classes


LEGACY_STORAGES = _legacy_storages("torch", "cpu")
CUDA_STORAGES = _legacy_storages("torch.cuda", "cuda")


# The classes print as PyTorch's; pickles name the functions below instead of them.
TypedStorage.__module__ = UntypedStorage.__module__ = "torch.storage"
_LegacyStorageMeta.__module__ = _LegacyStorage.__module__ = "torch.storage"


def _rebuild_untyped(data) -> UntypedStorage:
    return UntypedStorage._wrap(data)


def _rebuild_typed(untyped: UntypedStorage, dtype_name: str) -> TypedStorage:
    dtype = {d.name: d for d in (*_backend.ALL_DTYPES, getattr(_backend, "bfloat16", None))
             if d is not None}[dtype_name]
    return TypedStorage(wrap_storage=untyped, dtype=dtype, _internal=True)


# ---- shared memory ---------------------------------------------------------------------------
# A tensor's values move into a block of shared memory, a memory file mapped into this process
# (chainrule.multiprocessing sends tensors there as handles to it). A tensor and the storages of
# its memory are shared when that memory lies in such a block.

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
    """The shared block holding ``array``'s values (or a storage's bytes), if any."""
    base = array
    while base is not None and not isinstance(base, _Block):
        base = getattr(base, "base", None)  # views, and as_strided's holder of its source
    return base


def is_shared(self: Tensor) -> bool:
    """True if the tensor's values are in shared memory (``share_memory_()``)."""
    return _block_of(self._data) is not None


def share_memory_(self: Tensor) -> Tensor:
    """Move the tensor's values into shared memory (once); returns self."""
    data = self._data
    if type(data) is not xp.ndarray or _block_of(data) is not None:
        return self
    block = _new_block(data.nbytes)
    order = "F" if data.flags.f_contiguous and not data.flags.c_contiguous else "C"
    shared = xp.ndarray(data.shape, data.dtype, buffer=block, order=order)
    shared[...] = data
    self._data = shared
    _on_share(type(self))
    return self


def _on_share(cls: type) -> None:
    """Called with the class of each tensor moved into shared memory (bound by
    chainrule.multiprocessing, which has multiprocessing send such tensors as handles)."""



# ---- Tensor's storage methods ----------------------------------------------------------------

def _storage(self) -> TypedStorage:
    """This tensor's storage as its dtype (deprecated in PyTorch: prefer untyped_storage())."""
    _warn_typed_storage_removal(stacklevel=2)
    return TypedStorage(wrap_storage=_untyped_of(self), dtype=self.dtype, _internal=True)


def _typed_storage(self) -> TypedStorage:
    return TypedStorage(wrap_storage=_untyped_of(self), dtype=self.dtype, _internal=True)


def _storage_type(self) -> type:
    """The legacy storage class of this tensor's dtype."""
    _warn_typed_storage_removal(stacklevel=2)
    return LEGACY_STORAGES[f"{_LEGACY_NAMES[self.dtype.name]}Storage"]


Tensor.storage = _storage
Tensor._typed_storage = _typed_storage
Tensor.untyped_storage = _untyped_of
Tensor.storage_type = _storage_type
Tensor.share_memory_ = share_memory_
Tensor.is_shared = is_shared
