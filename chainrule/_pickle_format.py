"""PyTorch's checkpoint format: the zip archive ``torch.save`` writes, and reading its pre-1.6
("legacy") format, through a restricted unpickler that never runs code from the file.

An archive ``<name>/`` holds ``data.pkl`` (the object, pickled at protocol 2, each storage a
persistent id ``("storage", <storage class>, key, location, numel)``), ``data/<key>`` (each
storage's bytes, uncompressed, 64-byte aligned), ``byteorder``, ``version``, ``.format_version``,
``.storage_alignment`` and ``.data/serialization_id``. Tensors are rebuilt by PyTorch's functions
(``torch._utils._rebuild_tensor_v2``...), which name a storage, an offset, sizes and strides, so
views of one storage still share it after loading.

Reading runs no pickle machinery: ``_Unpickler`` interprets the opcodes itself and builds only
what PyTorch's weights-only loader allows (tensors, storages, dtypes, containers of plain values;
the user's classes once passed to ``add_safe_globals``); everything a file claims (sizes, offsets,
strides, record lengths) is checked against what the file holds before memory is taken.
Writing emits the opcodes for tensors, storages and plain values only.
"""

from __future__ import annotations

import io
import math
import os
import pickle
import secrets
import struct
import sys
import threading
import zipfile
from collections import Counter, OrderedDict

from . import _backend
from ._backend import as_dtype, dtype, xp
from ._device import device
from ._dtypes import layout
from ._meta import MetaArray
from .nn.modules.module import Module
from .nn.parameter import Parameter
from .storage import TypedStorage, UntypedStorage
from .tensor import Size, Tensor

UnpicklingError = pickle.UnpicklingError
MAGIC_NUMBER = 0x1950A86A20F9469CFC6C  # the first pickle of a legacy file
LEGACY_PROTOCOL_VERSION = 1001
ALIGNMENT = 64  # of each record's data in the archive, as torch.save writes it
_ZIP_MAGIC = b"PK\x03\x04"
_INT64_MAX = 2**63 - 1

# torch's storage classes and the dtype each holds (UntypedStorage: bytes)
_STORAGE_DTYPES = {"DoubleStorage": "float64", "FloatStorage": "float32",
                   "HalfStorage": "float16", "LongStorage": "int64", "IntStorage": "int32",
                   "ShortStorage": "int16", "CharStorage": "int8", "ByteStorage": "uint8",
                   "BoolStorage": "bool", "BFloat16Storage": "bfloat16",
                   "ComplexDoubleStorage": "complex128", "ComplexFloatStorage": "complex64",
                   "UntypedStorage": "uint8"}
_STORAGE_OF = {v: k for k, v in _STORAGE_DTYPES.items() if k != "UntypedStorage"}
# torch's dtypes and storage classes that chainrule has no counterpart for
_FOREIGN_DTYPES = {"uint16", "uint32", "uint64", "complex32", "chalf", "float4_e2m1fn_x2",
                   "bits8", "bits16", "bits1x8", "bits2x4", "bits4x2", "qint8", "quint8",
                   "qint32", "quint4x2", "quint2x4", *(f"int{i}" for i in range(1, 8)),
                   *(f"uint{i}" for i in range(1, 8))}
_FOREIGN_STORAGES = {"QInt8Storage", "QUInt8Storage", "QInt32Storage", "QUInt4x2Storage",
                     "QUInt2x4Storage", "ComplexHalfStorage"}
# never callable, even when a user marks them safe (PyTorch blocks the first four modules)
_BLOCKED_MODULES = {"sys", "os", "posix", "nt", "subprocess", "shutil", "importlib", "runpy"}
_BLOCKED_BUILTINS = {"eval", "exec", "compile", "__import__", "open", "getattr", "setattr",
                     "delattr", "breakpoint", "input", "globals", "locals", "vars"}
_OLD_MODULES = {"__builtin__": "builtins", "copy_reg": "copyreg"}  # protocol 2 from Python 2


# ---- writing ------------------------------------------------------------------------------------


class _StorageRecord:
    """A storage to write: its key, bytes (a 1-D uint8 array) and the dtype it is read as."""

    __slots__ = ("key", "data", "dtype")

    def __init__(self, key: str, data, dtype_: dtype) -> None:
        self.key, self.data, self.dtype = key, data, dtype_


def _pack_int(n: int) -> bytes:
    if 0 <= n < 256:
        return b"K" + bytes((n,))
    if 0 <= n < 65536:
        return b"M" + struct.pack("<H", n)
    if -(2**31) <= n < 2**31:
        return b"J" + struct.pack("<i", n)
    raw = pickle.encode_long(n)
    if len(raw) < 256:
        return b"\x8a" + bytes((len(raw),)) + raw
    return b"\x8b" + struct.pack("<i", len(raw)) + raw


def _pack_str(s: str) -> bytes:
    raw = s.encode("utf-8", "surrogatepass")
    return b"X" + struct.pack("<I", len(raw)) + raw


def _global(module: str, name: str) -> bytes:
    return b"c" + module.encode() + b"\n" + name.encode() + b"\n"


class _Pickler:
    """Writes ``data.pkl``: protocol 2 opcodes for tensors, storages and plain values."""

    def __init__(self) -> None:
        self.out = io.BytesIO()
        self.memo: dict[int, int] = {}
        self.alive: list = []  # keeps memoized objects alive, so their ids stay theirs
        self.storages: dict[int, _StorageRecord] = {}

    def dump(self, obj) -> bytes:
        self.out.write(b"\x80\x02")
        self.save(obj, ())
        self.out.write(b".")
        return self.out.getvalue()

    def memoize(self, obj) -> None:
        index = self.memo[id(obj)] = len(self.memo)
        self.alive.append(obj)
        self.out.write(b"q" + bytes((index,)) if index < 256 else
                       b"r" + struct.pack("<I", index))

    def recall(self, obj) -> bool:
        index = self.memo.get(id(obj))
        if index is None:
            return False
        self.out.write(b"h" + bytes((index,)) if index < 256 else b"j" + struct.pack("<I", index))
        return True

    def call(self, module: str, name: str, args: tuple, path: tuple) -> None:
        """``module.name(*args)``: GLOBAL, the arguments' tuple, REDUCE."""
        self.out.write(_global(module, name))
        self.save(args, path)
        self.out.write(b"R")

    def save(self, obj, path: tuple) -> None:
        w = self.out.write
        if obj is None:
            w(b"N")
        elif obj is True or obj is False:
            w(b"\x88" if obj else b"\x89")
        elif type(obj) is int:
            w(_pack_int(obj))
        elif type(obj) is float:
            w(b"G" + struct.pack(">d", obj))
        elif type(obj) is str:
            w(_pack_str(obj))
        elif isinstance(obj, xp.generic) and obj.dtype.kind in "biuf":
            self.save(obj.item(), path)  # a NumPy scalar, as the Python number it holds
        elif self.recall(obj):
            pass
        elif isinstance(obj, Tensor):
            self.save_tensor(obj, path)
        elif isinstance(obj, (UntypedStorage, TypedStorage)):
            self.save_storage(obj)
        elif isinstance(obj, dtype):
            w(_global("torch", obj.name))
        elif isinstance(obj, Size):
            self.call("torch", "Size", (tuple(obj),), path)
        elif isinstance(obj, device):
            self.call("torch", "device", (str(obj),), path)
        elif isinstance(obj, layout):
            self.call("torch.serialization", "_get_layout", (repr(obj),), path)
        elif type(obj) is tuple:
            self.save_tuple(obj, path)
        elif type(obj) is list:
            w(b"]")
            self.memoize(obj)
            self.save_items(obj, path, b"e")
        elif type(obj) in (dict, OrderedDict, Counter):
            self.save_dict(obj, path)
        elif type(obj) is bytes:  # protocol 2's way: _codecs.encode(latin-1 text, "latin1")
            self.call("_codecs", "encode", (obj.decode("latin1"), "latin1"), path)
        elif type(obj) is bytearray:
            self.call("builtins", "bytearray", (bytes(obj),), path)
        elif type(obj) is set:
            self.call("builtins", "set", (list(obj),), path)
        elif type(obj) is complex:
            self.call("builtins", "complex", (obj.real, obj.imag), path)
        else:
            where = f" at '{'.'.join(map(str, path))}'" if path else ""
            if isinstance(obj, Module):
                raise TypeError(
                    f"chainrule.save: cannot save a whole module ({type(obj).__name__}{where}): "
                    "torch.save pickles its class and code, and chainrule never pickles code. "
                    "Save its state dict instead, chainrule.save(model.state_dict(), f), and "
                    "load it with model.load_state_dict(chainrule.load(f))")
            raise TypeError(f"chainrule.save: cannot save a {type(obj).__name__}{where}: "
                            "only tensors, storages, dicts, lists, tuples, sets, None, bool, int, "
                            "float, complex, str, bytes, dtypes, devices and sizes can be stored "
                            "(chainrule never pickles code or classes)")

    def save_tuple(self, obj: tuple, path: tuple) -> None:
        if not obj:
            self.out.write(b")")
            return
        if len(obj) > 3:
            self.out.write(b"(")
        for i, item in enumerate(obj):
            self.save(item, path + (i,))
        self.out.write({1: b"\x85", 2: b"\x86", 3: b"\x87"}.get(len(obj), b"t"))

    def save_items(self, items, path: tuple, opcode: bytes) -> None:
        """MARK, the items, ``opcode`` (APPENDS or SETITEMS), in batches of 1000."""
        items = list(items)
        for start in range(0, len(items), 1000):
            self.out.write(b"(")
            for item in items[start:start + 1000]:
                if opcode == b"u":
                    key, value = item
                    self.save(key, path)
                    self.save(value, path + (key,))
                else:
                    self.save(item, path)
            self.out.write(opcode)

    def save_dict(self, obj: dict, path: tuple) -> None:
        if type(obj) is dict:
            self.out.write(b"}")
        else:
            self.out.write(_global("collections", type(obj).__name__) + b")R")
        self.memoize(obj)
        self.save_items(obj.items(), path, b"u")
        state = getattr(obj, "__dict__", None)
        if state:  # a state dict's _metadata
            self.save(dict(state), path)
            self.out.write(b"b")

    def save_storage(self, storage) -> None:
        untyped = storage if isinstance(storage, UntypedStorage) else storage._untyped_storage
        kind = as_dtype("uint8") if isinstance(storage, UntypedStorage) else storage.dtype
        record = self.record(untyped._bytes, kind)
        self.persistent_id(record, "UntypedStorage" if isinstance(storage, UntypedStorage)
                           else _STORAGE_OF[kind.name])
        self.memoize(storage)

    def record(self, data, kind: dtype, owner=None) -> _StorageRecord:
        key = id(owner if owner is not None else data)
        record = self.storages.get(key)
        if record is None:
            record = self.storages[key] = _StorageRecord(str(len(self.storages)), data, kind)
            self.alive.append(owner if owner is not None else data)
        return record

    def persistent_id(self, record: _StorageRecord, storage_class: str) -> None:
        itemsize = 1 if storage_class == "UntypedStorage" else record.dtype.itemsize
        module = "torch.storage" if storage_class == "UntypedStorage" else "torch"
        self.out.write(b"(" + _pack_str("storage") + _global(module, storage_class)
                       + _pack_str(record.key) + _pack_str("cpu")
                       + _pack_int(record.data.size // itemsize) + b"tQ")

    def save_tensor(self, t: Tensor, path: tuple) -> None:
        state = dict(t.__dict__)
        if isinstance(t, Parameter):  # PyTorch's way: by value, as a Parameter
            args = (Tensor._wrap(t._data, None, 0), t.requires_grad, OrderedDict())
            if state:
                self.call("torch._utils", "_rebuild_parameter_with_state", args + (state,), path)
            else:
                self.call("torch._utils", "_rebuild_parameter", args, path)
        elif type(t) is not Tensor:
            raise TypeError(f"chainrule.save: cannot save a tensor of the subclass "
                            f"{type(t).__name__} at '{'.'.join(map(str, path))}': only tensors "
                            "and parameters are stored")
        elif state:  # the tensor's Python attributes, which torch.save keeps as its own do
            self.out.write(_global("torch._tensor", "_rebuild_from_type_v2") + b"(")
            name = self.rebuild_function(t)
            self.out.write(_global("torch._utils", name) + _global("torch", "Tensor"))
            self.save_rebuild_args(t, path)
            self.save(state, path)
            self.out.write(b"tR")
        else:
            self.out.write(_global("torch._utils", self.rebuild_function(t)))
            self.save_rebuild_args(t, path)
            self.out.write(b"R")
        self.memoize(t)

    @staticmethod
    def rebuild_function(t: Tensor) -> str:
        if isinstance(t._data, MetaArray):
            return "_rebuild_meta_tensor_no_storage"
        return "_rebuild_tensor_v3" if t.dtype.name.startswith("float8") else "_rebuild_tensor_v2"

    def save_rebuild_args(self, t: Tensor, path: tuple) -> None:
        """The arguments' tuple of the tensor's rebuild function."""
        if isinstance(t._data, MetaArray):
            self.save((t.dtype, tuple(t.shape), tuple(t.stride()), t.requires_grad), path)
            return
        v3, record, storage_class, offset, stride = self.tensor_args(t)
        self.out.write(b"(")
        self.persistent_id(record, storage_class)
        self.save(offset, path)
        self.save(tuple(t.shape), path)
        self.save(stride, path)
        self.save(t.requires_grad, path)
        self.out.write(_global("collections", "OrderedDict") + b")R")
        if v3:
            self.save(t.dtype, path)
        self.out.write(b"t")

    def tensor_args(self, t: Tensor):
        """(rebuild function, whether it takes the dtype, record, storage class, offset,
        sizes, strides) of a tensor with data."""
        array = t._data
        kind = t.dtype
        itemsize = kind.itemsize
        v3 = kind.name.startswith("float8")
        storage = t.untyped_storage()
        memory = storage._bytes
        shared = array.size > 0 and memory.size % itemsize == 0
        if shared:
            offset_bytes = (array.__array_interface__["data"][0]
                            - memory.__array_interface__["data"][0])
            strides = [s for n, s in zip(array.shape, array.strides) if n > 1]
            extent = itemsize + sum((n - 1) * s for n, s in zip(array.shape, array.strides))
            shared = (offset_bytes % itemsize == 0 and all(s >= 0 and s % itemsize == 0
                                                            for s in strides)
                      and 0 <= offset_bytes and offset_bytes + extent <= memory.size)
            known = self.storages.get(id(storage))
            shared = shared and (known is None or known.dtype is kind)
        if shared:
            record = self.record(memory, kind, owner=storage)
            offset = offset_bytes // itemsize
            stride = tuple(s // itemsize if n > 1 else _contiguous_stride(array.shape, i)
                           for i, (n, s) in enumerate(zip(array.shape, array.strides)))
        else:  # its own copy: an empty tensor, or a view numbers of elements cannot describe
            copy = xp.ascontiguousarray(array)
            record = self.record(copy.reshape(-1).view(xp.uint8), kind)
            offset = 0
            stride = tuple(_contiguous_stride(array.shape, i) for i in range(array.ndim))
        return v3, record, "UntypedStorage" if v3 else _STORAGE_OF[kind.name], offset, stride


def _contiguous_stride(shape, i: int) -> int:
    return math.prod(max(n, 1) for n in shape[i + 1:])


def _padding(position: int, name: bytes, zip64: bool) -> bytes:
    """The local header's extra field that puts a record's data at a multiple of ALIGNMENT
    (PyTorch's "FB" field of "Z"s)."""
    start = position + 30 + len(name) + (20 if zip64 else 0)
    pad = -start % ALIGNMENT
    if pad == 0:
        return b""
    if pad < 4:  # the field's own header takes 4 bytes
        pad += ALIGNMENT
    return b"FB" + struct.pack("<H", pad - 4) + b"Z" * (pad - 4)


def write_archive(obj, archive_name: str) -> memoryview:
    """The bytes of a zip checkpoint of ``obj``, as ``torch.save`` writes it."""
    pickler = _Pickler()
    pickled = pickler.dump(obj)
    records = [("data.pkl", pickled), (".format_version", b"1"),
               (".storage_alignment", str(ALIGNMENT).encode()),
               ("byteorder", sys.byteorder.encode())]
    for record in pickler.storages.values():
        records.append((f"data/{record.key}", record.data))
    records += [("version", b"3\n"),
                (".data/serialization_id", f"{secrets.randbits(128):040d}".encode())]
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_STORED) as archive:
        for name, data in records:
            info = zipfile.ZipInfo(f"{archive_name}/{name}", date_time=(1980, 1, 1, 0, 0, 0))
            info.compress_type = zipfile.ZIP_STORED
            size = len(memoryview(data).cast("B")) if not isinstance(data, bytes) else len(data)
            zip64 = size * 1.05 > zipfile.ZIP64_LIMIT  # zipfile's own test for a zip64 header
            info.extra = _padding(out.tell(), info.filename.encode(), zip64)
            info.file_size = size
            with archive.open(info, "w", force_zip64=zip64) as record:
                view = memoryview(data).cast("B") if not isinstance(data, bytes) else data
                for start in range(0, size, 1 << 24):
                    record.write(view[start:start + (1 << 24)])
    return out.getbuffer()  # the bytes, not a copy of them


# ---- reading: what a file may build -------------------------------------------------------------


class _Budget:
    """How many bytes the constructors a pickle calls may build: a multiple of the pickle's
    size, so that calling them on one value many times cannot take unbounded memory."""

    def __init__(self, limit: int) -> None:
        self.left = limit

    def charge(self, n: int, what: str) -> None:
        self.left -= n
        if self.left < 0:
            raise UnpicklingError(f"the pickle builds more than its own size allows ({what}); "
                                  "the file is corrupt or hostile")


_loading = threading.local()  # the load running in this thread: its budgets and safe globals


def _charge(n: int, what: str) -> None:
    _loading.budget.charge(n, what)


_KEY_TYPES = (str, int, bool, float, bytes, complex, type(None), dtype, device)


def _check_key(key) -> None:
    """Dict keys and set elements are hashed: only flat values (and short tuples of them), so
    that hashing a file's value cannot take exponential time."""
    if isinstance(key, tuple) and len(key) <= 64 and all(type(k) in _KEY_TYPES for k in key):
        return
    if type(key) not in _KEY_TYPES:
        raise UnpicklingError(f"a dict key or set element of type {type(key).__name__}: only "
                              "str, int, bool, float, bytes, complex, None, dtypes, devices and "
                              "short tuples of them are accepted")


def _codecs_encode(text, encoding="utf-8"):
    if type(text) is not str or encoding not in ("latin1", "latin-1"):
        raise UnpicklingError("_codecs.encode is accepted for protocol 2's bytes only "
                              "(a str and 'latin1')")
    _charge(len(text), "bytes")
    return text.encode("latin1")


def _bytearray(data=b""):
    if type(data) is not bytes:
        raise UnpicklingError(f"bytearray() of a {type(data).__name__}: only of bytes")
    _charge(len(data), "bytearray")
    return bytearray(data)


def _set(items=()):
    if type(items) not in (list, tuple, set):
        raise UnpicklingError(f"set() of a {type(items).__name__}: only of a list")
    _charge(8 * len(items), "set")
    for item in items:
        _check_key(item)
    return set(items)


def _complex(real=0.0, imag=0.0):
    if not all(type(v) in (int, float) for v in (real, imag)):
        raise UnpicklingError("complex() of other than two numbers")
    return complex(real, imag)


def _mapping(cls):
    def build(items=()):
        pairs = list(items.items()) if isinstance(items, dict) else items
        if type(pairs) not in (list, tuple):
            raise UnpicklingError(f"{cls.__name__}() of a {type(items).__name__}")
        _charge(16 * len(pairs), cls.__name__)
        for pair in pairs:
            if type(pair) not in (list, tuple) or len(pair) != 2:
                raise UnpicklingError(f"{cls.__name__}() of other than (key, value) pairs")
            _check_key(pair[0])
        return cls(pairs)

    build.__name__ = build.__qualname__ = cls.__name__
    return build


def _size(sizes=()):
    if type(sizes) not in (tuple, list) or not all(type(n) is int for n in sizes):
        raise UnpicklingError("torch.Size() of other than a tuple of ints")
    _charge(8 * len(sizes), "torch.Size")
    return Size(sizes)


def _device(kind, index=None):
    if type(kind) is not str or not (index is None or type(index) is int):
        raise UnpicklingError("torch.device() of other than a str and an index")
    return device(kind) if index is None else device(kind, index)


def _get_layout(name):
    if name != "torch.strided":
        raise RuntimeError(f"chainrule has only the torch.strided layout, not {name!r}")
    from ._dtypes import strided

    return strided


def _int(value, what: str) -> int:
    if type(value) is not int or not 0 <= value <= _INT64_MAX:
        raise RuntimeError(f"a tensor's {what} is {value!r}, not an int from 0 to 2**63 - 1")
    return value


def _ints(values, what: str) -> tuple:
    if type(values) not in (tuple, list, Size) or len(values) > 64:
        raise RuntimeError(f"a tensor's {what} is {type(values).__name__} {values!r:.80}, not a "
                           "tuple of at most 64 ints")
    return tuple(_int(v, what) for v in values)


def _untyped(storage) -> UntypedStorage:
    if isinstance(storage, UntypedStorage):
        return storage
    if isinstance(storage, TypedStorage):
        return storage._untyped_storage
    raise RuntimeError(f"a tensor rebuilt from a {type(storage).__name__}, not a storage")


def _view(storage, storage_offset, size, stride, kind: dtype) -> Tensor:
    """A tensor viewing ``storage`` (not a copy), once its claims are checked to fit it."""
    untyped = _untyped(storage)
    if not isinstance(kind, dtype):
        raise RuntimeError(f"a tensor's dtype is {kind!r}")
    offset = _int(storage_offset, "storage offset")
    size, stride = _ints(size, "size"), _ints(stride, "stride")
    if len(size) != len(stride):
        raise RuntimeError(f"a tensor's size {list(size)} and stride {list(stride)} differ in "
                           "length")
    itemsize = kind.itemsize
    if math.prod(max(n, 1) for n in size) * itemsize > _INT64_MAX:
        raise RuntimeError(f"a tensor's size {list(size)} overflows: its number of bytes is "
                           "more than 2**63 - 1")
    numel = math.prod(size)
    need = 0 if numel == 0 else (offset + 1 + sum((n - 1) * s for n, s in zip(size, stride)))
    if need * itemsize > untyped.nbytes():  # PyTorch's words for a set_ out of bounds
        raise RuntimeError(f"setStorage: sizes {list(size)}, strides {list(stride)}, storage "
                           f"offset {offset}, and itemsize {itemsize} requiring a storage size "
                           f"of {need * itemsize} are out of bounds for storage of size "
                           f"{untyped.nbytes()}")
    memory = untyped._bytes
    if isinstance(memory, MetaArray):
        array = MetaArray(size, kind.np, tuple(s * itemsize for s in stride), offset)
    elif numel == 0:  # its own (empty) memory, with the strides the file gives
        array = xp.ndarray(size, kind.np, buffer=xp.empty(0, xp.uint8),
                           strides=tuple(s * itemsize for s in stride))
    else:
        array = xp.ndarray(size, kind.np, buffer=memory, offset=offset * itemsize,
                           strides=tuple(s * itemsize for s in stride))
    return Tensor._wrap(array, None, 0)


def _finish(t: Tensor, requires_grad, metadata) -> Tensor:
    if type(requires_grad) is not bool:
        raise RuntimeError(f"a tensor's requires_grad is {requires_grad!r}, not a bool")
    if metadata:
        if not isinstance(metadata, dict) or not set(metadata) <= {"conj", "neg"}:
            raise RuntimeError(f"a tensor's metadata is {metadata!r:.80}")
        if metadata.get("conj") or metadata.get("neg"):
            _charge_data(t)
        if metadata.get("conj"):  # the stored values are the unconjugated ones
            t = Tensor._wrap(xp.conj(t._data), None, 0)
        if metadata.get("neg"):
            t = Tensor._wrap(xp.negative(t._data), None, 0)
    if requires_grad:
        t.requires_grad_(True)
    return t


def _charge_data(t: Tensor) -> None:
    _loading.data_budget.charge(t._data.nbytes, "tensor copies")


def _rebuild_tensor(storage, storage_offset, size, stride):
    if not isinstance(storage, TypedStorage):
        raise RuntimeError("_rebuild_tensor needs a typed storage")
    return _view(storage, storage_offset, size, stride, storage.dtype)


def _rebuild_tensor_v2(storage, storage_offset, size, stride, requires_grad, backward_hooks,
                       metadata=None):
    kind = storage.dtype if isinstance(storage, TypedStorage) else None
    if kind is None:
        raise RuntimeError("_rebuild_tensor_v2 needs a typed storage")
    return _finish(_view(storage, storage_offset, size, stride, kind), requires_grad, metadata)


def _rebuild_tensor_v3(storage, storage_offset, size, stride, requires_grad, backward_hooks,
                       dtype, metadata=None):
    return _finish(_view(storage, storage_offset, size, stride, dtype), requires_grad, metadata)


def _rebuild_meta_tensor_no_storage(dtype_, size, stride, requires_grad):
    if not isinstance(dtype_, dtype):
        raise RuntimeError(f"a meta tensor's dtype is {dtype_!r}")
    size, stride = _ints(size, "size"), _ints(stride, "stride")
    if len(size) != len(stride):
        raise RuntimeError("a meta tensor's size and stride differ in length")
    array = MetaArray(size, dtype_.np, tuple(s * dtype_.itemsize for s in stride))
    return _finish(Tensor._wrap(array, None, 0), requires_grad, None)


def _rebuild_device_tensor_from_cpu_tensor(data, dtype_, device_, requires_grad):
    if not isinstance(data, Tensor) or data.dtype is not dtype_:
        raise RuntimeError("_rebuild_device_tensor_from_cpu_tensor of other than a tensor of "
                           "its dtype")
    data = data.to(device_)
    return _finish(data.detach(), requires_grad, None)


def _parameter(data, requires_grad: bool = True) -> Parameter:
    if not isinstance(data, Tensor) or type(requires_grad) is not bool:
        raise RuntimeError("a Parameter rebuilt from other than a tensor and a bool")
    return Parameter(data, requires_grad)


def _rebuild_parameter(data, requires_grad, backward_hooks) -> Parameter:
    return _parameter(data, requires_grad)


def _set_state(obj, state):
    if isinstance(state, tuple) and len(state) == 2:
        state, slots = state
        if slots:
            raise RuntimeError("a tensor's state with slots is not rebuilt")
    if state is None:
        return obj
    if not isinstance(state, dict) or not all(type(k) is str for k in state):
        raise RuntimeError(f"a tensor's state is {type(state).__name__}, not a dict of names")
    obj.__dict__.update(state)
    return obj


def _rebuild_parameter_with_state(data, requires_grad, backward_hooks, state) -> Parameter:
    return _set_state(_parameter(data, requires_grad), state)


_TENSOR_REBUILDS = (_rebuild_tensor, _rebuild_tensor_v2, _rebuild_tensor_v3,
                    _rebuild_meta_tensor_no_storage, _rebuild_parameter,
                    _rebuild_parameter_with_state, _rebuild_device_tensor_from_cpu_tensor)


def _rebuild_from_type_v2(func, new_type, args, state):
    if func not in _TENSOR_REBUILDS or type(args) is not tuple:
        raise UnpicklingError(f"_rebuild_from_type_v2 of {func!r:.80}: only of PyTorch's "
                              "tensor rebuild functions")
    result = func(*args)
    if new_type is Parameter and type(result) is not Parameter:
        result = Parameter(result, result.requires_grad)
    elif new_type not in (Tensor, Parameter):
        if not (isinstance(new_type, type) and issubclass(new_type, Tensor)
                and new_type in _user_allowed_values()):
            raise UnpicklingError(f"_rebuild_from_type_v2 to {new_type!r:.80}: a tensor "
                                  "subclass must be allowlisted with add_safe_globals")
        result = result.as_subclass(new_type)
    if state:
        custom = getattr(new_type, "__setstate__", None)
        if new_type in (Tensor, Parameter) or custom is getattr(Tensor, "__setstate__", None):
            _set_state(result, state)
        else:
            result.__setstate__(state)
    return result


class _StorageClass:
    """A storage class a pickle names: what its persistent ids' storages hold."""

    def __init__(self, name: str) -> None:
        self.name = name
        self.untyped = name == "UntypedStorage"
        self.dtype_name = _STORAGE_DTYPES[name]

    def __repr__(self) -> str:
        return f"torch.{self.name}"


def _user_globals() -> dict:
    """The user's safe globals of the load running: full name -> object."""
    return getattr(_loading, "user_globals", {})


def _user_allowed_values() -> list:
    return list(_user_globals().values())


def _allowed_globals() -> dict:
    """PyTorch's weights-only allowlist, each name mapped to what chainrule builds for it."""
    allowed = {"collections.OrderedDict": OrderedDict, "collections.Counter": Counter,
               "torch.nn.parameter.Parameter": Parameter, "torch.Size": _size,
               "torch.Tensor": Tensor, "torch.device": _device,
               "torch.serialization._get_layout": _get_layout, "_codecs.encode": _codecs_encode,
               "builtins.bytearray": _bytearray, "builtins.set": _set,
               "builtins.complex": _complex,
               "torch._tensor._rebuild_from_type_v2": _rebuild_from_type_v2}
    for rebuild in _TENSOR_REBUILDS:
        allowed[f"torch._utils.{rebuild.__name__}"] = rebuild
    for name in _STORAGE_DTYPES:
        allowed[f"torch.{name}"] = _StorageClass(name)
    allowed["torch.storage.UntypedStorage"] = allowed["torch.UntypedStorage"]
    names = {d.name for d in _backend.ALL_DTYPES + _backend.LOW_PRECISION_DTYPES}
    for name in (*names, *_backend._ALIASES):
        allowed[f"torch.{name}"] = as_dtype(name)
    return allowed


_ALLOWED: dict = {}
# what GLOBAL may push, REDUCE may call (with the arguments checked by each)
_CALLABLE = {OrderedDict: _mapping(OrderedDict), Counter: _mapping(Counter)}
_NOT_PROVIDED = {"_rebuild_qtensor": "quantized tensors", "_rebuild_sparse_tensor":
                 "sparse tensors", "_rebuild_nested_tensor": "nested tensors",
                 "_rebuild_wrapper_subclass": "wrapper tensor subclasses",
                 "_rebuild_device_tensor_from_numpy": "NumPy arrays in checkpoints"}


def _resolve(module: str, name: str):
    """What GLOBAL ``module.name`` stands for, or UnpicklingError as PyTorch's loader."""
    module = _OLD_MODULES.get(module, module)
    full = f"{module}.{name}"
    if module.split(".")[0] in _BLOCKED_MODULES or (module == "builtins"
                                                   and name in _BLOCKED_BUILTINS):
        raise UnpicklingError(f"Trying to load unsupported GLOBAL {full} whose module {module} "
                              "is blocked.")
    if not _ALLOWED:
        _ALLOWED.update(_allowed_globals())
    if full in _ALLOWED:
        return _ALLOWED[full]
    if full in _user_globals():
        return _user_globals()[full]
    if module == "torch" and (name in _FOREIGN_DTYPES or name in _FOREIGN_STORAGES):
        raise TypeError(f"chainrule.load: the file holds a tensor of {full}, which chainrule "
                        "does not support")
    if module == "torch._utils" and name in _NOT_PROVIDED:
        raise UnpicklingError(f"GLOBAL {full}: chainrule has no {_NOT_PROVIDED[name]}")
    shown = name if module == "builtins" else full
    hint = ""
    if module.startswith("torch.nn.modules") or module == "__main__":
        hint = (" (a whole model saved with torch.save(model) pickles its class and code: save "
                "model.state_dict() instead and load it with model.load_state_dict)")
    raise UnpicklingError(
        f"Unsupported global: GLOBAL {shown} was not an allowed global by default. Please use "
        f"`torch.serialization.add_safe_globals([{name}])` or the "
        f"`torch.serialization.safe_globals([{name}])` context manager to allowlist this global "
        f"if you trust this class/function.{hint}")


# ---- reading: the unpickler ---------------------------------------------------------------------


class _Unpickler:
    """Interprets a pickle's opcodes (those PyTorch's weights-only loader reads, and protocol
    4's framing and short forms), building only what ``_resolve`` allows."""

    def __init__(self, data: bytes, persistent_load) -> None:
        self.data = data
        self.pos = 0
        self.persistent_load = persistent_load
        self.memo: dict = {}

    def read(self, n: int) -> bytes:
        end = self.pos + n
        if n < 0 or end > len(self.data):
            raise UnpicklingError("pickle data was truncated")
        chunk = self.data[self.pos:end]
        self.pos = end
        return chunk

    def readline(self) -> bytes:
        end = self.data.find(b"\n", self.pos)
        if end < 0:
            raise UnpicklingError("pickle data was truncated")
        line = self.data[self.pos:end]
        self.pos = end + 1
        return line

    def pop_mark(self) -> list:
        if not self.metastack:
            raise UnpicklingError("could not find MARK")
        items = self.stack
        self.stack = self.metastack.pop()
        return items

    def top(self, n: int = 1):
        if len(self.stack) < n:
            raise UnpicklingError("unpickling stack underflow")
        return self.stack[-1]

    def pop(self):
        self.top()
        return self.stack.pop()

    def load(self):
        self.stack: list = []
        self.metastack: list = []
        handlers = _HANDLERS
        while True:
            key = self.read(1)[0]
            handler = handlers.get(key)
            if handler is None:
                raise UnpicklingError(f"Unsupported operand {key}")
            if handler is _stop:
                if self.metastack or len(self.stack) != 1:
                    raise UnpicklingError("the pickle ends with other than one value")
                return self.stack.pop()
            handler(self)


def _stop(u: _Unpickler) -> None:
    pass


def _push(value):
    return lambda u: u.stack.append(value)


def _global_op(u: _Unpickler) -> None:
    module = u.readline().decode("utf-8")
    name = u.readline().decode("utf-8")
    u.stack.append(_resolve(module, name))


def _stack_global(u: _Unpickler) -> None:
    name, module = u.pop(), u.pop()
    if type(name) is not str or type(module) is not str:
        raise UnpicklingError("STACK_GLOBAL requires str")
    u.stack.append(_resolve(module, name))


def _reduce(u: _Unpickler) -> None:
    args = u.pop()
    func = u.top()
    if type(args) is not tuple:
        raise UnpicklingError("REDUCE of other than an arguments' tuple")
    if func is OrderedDict or func is Counter:
        func = _CALLABLE[func]
    elif func is Parameter:
        func = _parameter
    elif not _is_user_allowed(func) and (
            isinstance(func, (type, _StorageClass, dtype))
            or not any(func is v for v in _ALLOWED.values())):
        message = f"Trying to call reduce for unrecognized function {func!r:.80}"
        if hasattr(func, "__self__"):
            message += f" which belongs to {func.__self__!r:.80}"
        raise UnpicklingError(message)
    u.stack[-1] = func(*args)


def _is_user_allowed(obj) -> bool:
    return any(obj is v for v in _user_globals().values())


def _newobj(u: _Unpickler) -> None:
    args = u.pop()
    cls = u.pop()
    if type(args) is not tuple:
        raise UnpicklingError("NEWOBJ of other than an arguments' tuple")
    if cls is Parameter:
        u.stack.append(_parameter(*args))
    elif cls in (OrderedDict, Counter) and not args:
        u.stack.append(cls())
    elif isinstance(cls, type) and _is_user_allowed(cls):
        u.stack.append(cls.__new__(cls, *args))
    else:
        raise UnpicklingError("Can only create new object for nn.Parameter or classes "
                              f"allowlisted via `add_safe_globals` but got {cls!r:.80}")


def _build(u: _Unpickler) -> None:
    state = u.pop()
    inst = u.top()
    if type(inst) is OrderedDict:
        if not isinstance(state, dict) or not all(type(k) is str for k in state):
            raise UnpicklingError("BUILD of an OrderedDict with other than a dict of names")
        inst.__dict__.update(state)
    elif _is_user_allowed(type(inst)):
        if hasattr(type(inst), "__setstate__") and type(inst).__setstate__ is not \
                object.__setstate__:
            inst.__setstate__(state)
        else:
            slots = None
            if isinstance(state, tuple) and len(state) == 2:
                state, slots = state
            if state:
                inst.__dict__.update(state)
            for k, v in (slots or {}).items():
                setattr(inst, k, v)
    else:
        raise UnpicklingError("Can only build Tensor, Parameter, OrderedDict or types "
                              f"allowlisted via `add_safe_globals`, but got {type(inst)}")


def _dict_target(u: _Unpickler, opcode: str):
    target = u.top()
    if type(target) not in (dict, OrderedDict, Counter):
        raise UnpicklingError(f"Can only {opcode} for dict, collections.OrderedDict, "
                              f"collections.Counter, but got {type(target)}")
    return target


def _setitem(u: _Unpickler) -> None:
    value, key = u.pop(), u.pop()
    _check_key(key)
    _dict_target(u, "SETITEM")[key] = value


def _setitems(u: _Unpickler) -> None:
    items = u.pop_mark()
    target = _dict_target(u, "SETITEMS")
    if len(items) % 2:
        raise UnpicklingError("SETITEMS of an odd number of items")
    for i in range(0, len(items), 2):
        _check_key(items[i])
        target[items[i]] = items[i + 1]


def _list_target(u: _Unpickler):
    target = u.top()
    if type(target) is not list:
        raise UnpicklingError(f"Can only append to lists, but got {type(target)}")
    return target


def _append(u: _Unpickler) -> None:
    item = u.pop()
    _list_target(u).append(item)


def _appends(u: _Unpickler) -> None:
    items = u.pop_mark()
    _list_target(u).extend(items)


def _additems(u: _Unpickler) -> None:
    items = u.pop_mark()
    target = u.top()
    if type(target) is not set:
        raise UnpicklingError(f"Can only add items to sets, but got {type(target)}")
    for item in items:
        _check_key(item)
    target.update(items)


def _mark(u: _Unpickler) -> None:
    u.metastack.append(u.stack)
    u.stack = []


def _tuple(u: _Unpickler) -> None:
    items = tuple(u.pop_mark())  # before u.stack is read: popping the mark replaces it
    u.stack.append(items)


def _tuple_n(n: int):
    def op(u: _Unpickler) -> None:
        if len(u.stack) < n:
            raise UnpicklingError("unpickling stack underflow")
        items = tuple(u.stack[-n:])
        del u.stack[-n:]
        u.stack.append(items)

    return op


def _unpack(fmt: str, size: int):
    return lambda u: u.stack.append(struct.unpack(fmt, u.read(size))[0])


def _text(size_fmt: str, size: int):
    def op(u: _Unpickler) -> None:
        n = struct.unpack(size_fmt, u.read(size))[0]
        u.stack.append(str(u.read(n), "utf-8", "surrogatepass"))

    return op


def _raw(size_fmt: str, size: int):
    def op(u: _Unpickler) -> None:
        n = struct.unpack(size_fmt, u.read(size))[0]
        u.stack.append(u.read(n))

    return op


def _long(size_fmt: str, size: int):
    def op(u: _Unpickler) -> None:
        n = struct.unpack(size_fmt, u.read(size))[0]
        if n > 1024:  # an int of more than 8192 bits is no checkpoint's
            raise UnpicklingError(f"an int of {n} bytes")
        u.stack.append(pickle.decode_long(u.read(n)))

    return op


def _binpersid(u: _Unpickler) -> None:
    pid = u.pop()
    if type(pid) is not tuple or not pid or pid[0] not in ("storage", b"storage"):
        raise UnpicklingError(f"Only persistent_load of storage is allowed, but got "
                              f"{pid!r:.80}")
    u.stack.append(u.persistent_load(pid))


def _get(fmt: str, size: int):
    def op(u: _Unpickler) -> None:
        index = struct.unpack(fmt, u.read(size))[0]
        if index not in u.memo:
            raise UnpicklingError(f"Memo value not found at index {index}")
        u.stack.append(u.memo[index])

    return op


def _put(fmt: str, size: int):
    def op(u: _Unpickler) -> None:
        u.memo[struct.unpack(fmt, u.read(size))[0]] = u.top()

    return op


def _pop(u: _Unpickler) -> None:
    if u.stack:
        u.stack.pop()
    else:
        u.pop_mark()


def _dup(u: _Unpickler) -> None:
    u.stack.append(u.top())


def _memoize(u: _Unpickler) -> None:
    u.memo[len(u.memo)] = u.top()


def _proto(u: _Unpickler) -> None:
    if u.read(1)[0] > pickle.HIGHEST_PROTOCOL:
        raise UnpicklingError("unsupported pickle protocol")


def _frame(u: _Unpickler) -> None:
    u.read(8)  # the frame's length: the data is all in memory already


def _short_binstring(u: _Unpickler) -> None:  # protocol 2's str of Python 2: bytes here
    u.stack.append(u.read(u.read(1)[0]))


def _frozenset(u: _Unpickler) -> None:
    items = u.pop_mark()
    for item in items:
        _check_key(item)
    u.stack.append(frozenset(items))


_HANDLERS = {
    pickle.PROTO[0]: _proto, pickle.FRAME[0]: _frame, pickle.STOP[0]: _stop,
    pickle.GLOBAL[0]: _global_op, pickle.STACK_GLOBAL[0]: _stack_global,
    pickle.REDUCE[0]: _reduce, pickle.NEWOBJ[0]: _newobj, pickle.BUILD[0]: _build,
    pickle.SETITEM[0]: _setitem, pickle.SETITEMS[0]: _setitems, pickle.APPEND[0]: _append,
    pickle.APPENDS[0]: _appends, pickle.ADDITEMS[0]: _additems, pickle.MARK[0]: _mark,
    pickle.TUPLE[0]: _tuple, pickle.TUPLE1[0]: _tuple_n(1), pickle.TUPLE2[0]: _tuple_n(2),
    pickle.TUPLE3[0]: _tuple_n(3), pickle.NONE[0]: _push(None),
    pickle.NEWTRUE[0]: _push(True), pickle.NEWFALSE[0]: _push(False),
    pickle.EMPTY_TUPLE[0]: lambda u: u.stack.append(()),
    pickle.EMPTY_LIST[0]: lambda u: u.stack.append([]),
    pickle.EMPTY_DICT[0]: lambda u: u.stack.append({}),
    pickle.EMPTY_SET[0]: lambda u: u.stack.append(set()),
    pickle.FROZENSET[0]: _frozenset,
    pickle.BININT[0]: _unpack("<i", 4), pickle.BININT1[0]: _unpack("<B", 1),
    pickle.BININT2[0]: _unpack("<H", 2), pickle.BINFLOAT[0]: _unpack(">d", 8),
    pickle.LONG1[0]: _long("<B", 1), pickle.LONG4[0]: _long("<i", 4),
    pickle.BINUNICODE[0]: _text("<I", 4), pickle.SHORT_BINUNICODE[0]: _text("<B", 1),
    pickle.BINUNICODE8[0]: _text("<Q", 8), pickle.SHORT_BINBYTES[0]: _raw("<B", 1),
    pickle.BINBYTES[0]: _raw("<I", 4), pickle.BINBYTES8[0]: _raw("<Q", 8),
    pickle.SHORT_BINSTRING[0]: _short_binstring,
    pickle.BINPERSID[0]: _binpersid, pickle.BINGET[0]: _get("<B", 1),
    pickle.LONG_BINGET[0]: _get("<I", 4), pickle.BINPUT[0]: _put("<B", 1),
    pickle.LONG_BINPUT[0]: _put("<I", 4), pickle.MEMOIZE[0]: _memoize,
    pickle.POP[0]: _pop, pickle.POP_MARK[0]: lambda u: u.pop_mark(), pickle.DUP[0]: _dup,
}


def unpickle(data: bytes, persistent_load, start: int = 0) -> tuple:
    """The object the pickle at ``data[start:]`` holds, built by ``_Unpickler``, and the
    position after it."""
    unpickler = _Unpickler(data, persistent_load)
    unpickler.pos = start
    return unpickler.load(), unpickler.pos


# ---- reading: the archive and the legacy format -------------------------------------------------


def is_zip(head: bytes) -> bool:
    return head[:4] == _ZIP_MAGIC


def is_legacy(head: bytes) -> bool:
    """Whether ``head`` starts PyTorch's pre-1.6 format (a pickled magic number)."""
    return head[:1] == b"\x80" and head[2:4] == b"\x8a\x0a"


class _Loading:
    """One load's settings: the budgets and safe globals the unpickler reads (per thread)."""

    def __init__(self, pickle_size: int, data_size: int, user_globals: dict) -> None:
        self.values = (_Budget(16 * pickle_size + (1 << 20)),
                       _Budget(4 * data_size + (1 << 20)), user_globals)

    def __enter__(self) -> None:
        self.previous = tuple(getattr(_loading, k, None)
                              for k in ("budget", "data_budget", "user_globals"))
        _loading.budget, _loading.data_budget, _loading.user_globals = self.values

    def __exit__(self, *exc) -> None:
        _loading.budget, _loading.data_budget, _loading.user_globals = self.previous


def _storage_pid(pid: tuple, length: int):
    """(storage class, dtype, key, location, numel) of a persistent id, checked."""
    if len(pid) != length:
        raise UnpicklingError(f"a storage's persistent id has {len(pid)} fields, not {length}")
    kind, key, location, numel = pid[1:5]
    if not isinstance(kind, _StorageClass):
        raise UnpicklingError(f"a storage of class {kind!r:.80}")
    if type(key) is not str or type(location) is not str:
        raise UnpicklingError("a storage's key and location must be str")
    if type(numel) is not int or not 0 <= numel <= _INT64_MAX:
        raise RuntimeError(f"storage '{key}' declares {numel!r:.80} elements")
    return kind, as_dtype(kind.dtype_name), key, location, numel


def _typed(kind: _StorageClass, dtype_: dtype, untyped: UntypedStorage) -> TypedStorage:
    """What a persistent id loads as: a typed storage (of bytes for an UntypedStorage), as
    PyTorch's loader gives."""
    return TypedStorage(wrap_storage=untyped, dtype=dtype_, _internal=True)


def _swap(memory, dtype_: dtype) -> None:
    """Reverse the byte order of each element of ``memory`` (a uint8 array) read as dtype_."""
    if dtype_.itemsize > 1 and memory.size:
        memory.view(dtype_.np).byteswap(inplace=True)


class ZipCheckpoint:
    """A zip checkpoint in a seekable binary file, its records checked against the file."""

    def __init__(self, file, name: str) -> None:
        self.file, self.name = file, name
        try:
            self.total = file.seek(0, os.SEEK_END)
            self.archive = zipfile.ZipFile(file)
            infos = self.archive.infolist()
        except (zipfile.BadZipFile, zipfile.LargeZipFile, EOFError, OSError, ValueError,
                struct.error, UnicodeDecodeError) as e:
            raise RuntimeError(f"PytorchStreamReader failed reading zip archive: '{name}' is "
                               f"truncated or not a zip archive ({e})") from None
        if not infos or "/" not in infos[0].filename:
            raise RuntimeError(f"PytorchStreamReader failed reading zip archive: '{name}' has "
                               "no records in an archive folder")
        self.prefix = infos[0].filename.split("/")[0]
        self.records = {info.filename: info for info in infos}

    def locate(self, record: str) -> tuple[int, int]:
        """(offset in the file, size) of a record's data, checked to lie within the file."""
        info = self.records.get(f"{self.prefix}/{record}")
        if info is None:
            raise RuntimeError(f"PytorchStreamReader failed locating file {record}: file not "
                               f"found in '{self.name}'")
        if info.compress_type != zipfile.ZIP_STORED or info.file_size != info.compress_size:
            raise RuntimeError(f"record {record} of '{self.name}' is compressed; PyTorch's "
                               "checkpoints store records uncompressed")
        self.file.seek(info.header_offset)
        header = self.file.read(30)
        if len(header) < 30 or header[:4] != _ZIP_MAGIC:
            raise RuntimeError(f"PytorchStreamReader failed reading record {record} of "
                               f"'{self.name}': no local header where the archive says")
        name_length, extra_length = struct.unpack("<HH", header[26:30])
        if self.file.read(name_length) != info.orig_filename.encode("utf-8"):
            raise RuntimeError(f"record {record} of '{self.name}': the local header names "
                               "another record")
        start = info.header_offset + 30 + name_length + extra_length
        if start + info.file_size > self.total:
            raise RuntimeError(f"record {record} of '{self.name}' claims {info.file_size} "
                               f"bytes at offset {start}, past the end of the file "
                               f"({self.total} bytes)")
        return start, info.file_size

    def read(self, record: str, limit: int | None = None) -> bytes:
        start, size = self.locate(record)
        if limit is not None and size > limit:
            raise RuntimeError(f"record {record} of '{self.name}' has {size} bytes, more than "
                               f"{limit}")
        self.file.seek(start)
        data = self.file.read(size)
        if len(data) != size:
            raise RuntimeError(f"record {record} of '{self.name}' is truncated")
        return data

    def storage_bytes(self, key: str, nbytes: int, mmap_path: str | None, mmap_flags):
        """A storage's bytes as a new uint8 array (or a memory map of the file)."""
        start, size = self.locate(f"data/{key}")
        if size != nbytes:
            raise RuntimeError(f"storage data/{key} of '{self.name}' holds {size} bytes, but "
                               f"the pickle declares {nbytes}")
        if nbytes == 0:
            return xp.zeros(0, xp.uint8)
        if mmap_path is not None:
            import mmap as mmap_module

            mode = "r+" if mmap_flags == mmap_module.MAP_SHARED else "c"
            return xp.memmap(mmap_path, dtype=xp.uint8, mode=mode, offset=start, shape=(size,))
        memory = xp.empty(size, xp.uint8)
        self.file.seek(start)
        if self.file.readinto(memoryview(memory)) != size:
            raise RuntimeError(f"storage data/{key} of '{self.name}' is truncated")
        return memory


def load_zip(file, name: str, restore, user_globals: dict, mmap_path: str | None = None,
             mmap_flags=None, default_byteorder: str | None = None):
    """The object of the zip checkpoint in ``file`` (seekable)."""
    archive = ZipCheckpoint(file, name)
    pickled = archive.read("data.pkl", archive.total)
    byteorder = default_byteorder or sys.byteorder
    if f"{archive.prefix}/byteorder" in archive.records:
        byteorder = archive.read("byteorder", 16).decode("ascii", "replace")
        if byteorder not in ("little", "big"):
            raise RuntimeError(f"'{name}' records the byte order {byteorder!r}")
    storages: dict = {}

    def persistent_load(pid):
        kind, dtype_, key, location, numel = _storage_pid(pid, 5)
        if key not in storages:
            nbytes = numel * (1 if kind.untyped else dtype_.itemsize)
            memory = archive.storage_bytes(key, nbytes, mmap_path, mmap_flags)
            if byteorder != sys.byteorder and not kind.untyped:
                _swap(memory, dtype_)
            storages[key] = restore(UntypedStorage._wrap(memory), location)
        return _typed(kind, dtype_, storages[key])

    with _Loading(len(pickled), archive.total, user_globals):
        return unpickle(pickled, persistent_load)[0]


def load_legacy(data: bytes, name: str, restore, user_globals: dict):
    """The object of a checkpoint in PyTorch's pre-1.6 format (pickles, then the storages)."""
    storages: dict = {}  # key -> (memory, dtype, restored storage, element size)
    claimed = [0]

    def persistent_load(pid):
        kind, dtype_, key, location, numel = _storage_pid(pid, 6)
        if pid[5] is not None:
            raise RuntimeError(f"'{name}' holds a storage view of PyTorch 0.3 or before, which "
                               "chainrule does not read; load and save it again with PyTorch")
        if key not in storages:
            nbytes = numel * (1 if kind.untyped else dtype_.itemsize)
            claimed[0] += nbytes
            if claimed[0] > len(data):  # checked before any memory is taken
                raise RuntimeError(f"'{name}' declares storages of {claimed[0]} bytes, more "
                                   f"than the file's {len(data)}")
            memory = xp.zeros(nbytes, xp.uint8)
            storages[key] = (memory, dtype_, restore(UntypedStorage._wrap(memory), location),
                             1 if kind.untyped else dtype_.itemsize)
        return _typed(kind, dtype_, storages[key][2])

    with _Loading(len(data), len(data), user_globals):
        magic, pos = unpickle(data, persistent_load)
        if magic != MAGIC_NUMBER:
            raise RuntimeError("Invalid magic number; corrupt file?")
        protocol, pos = unpickle(data, persistent_load, pos)
        if protocol != LEGACY_PROTOCOL_VERSION:
            raise RuntimeError(f"Invalid protocol version: {protocol!r:.80}")
        sys_info, pos = unpickle(data, persistent_load, pos)
        if not isinstance(sys_info, dict):
            raise RuntimeError(f"'{name}': the legacy format's system information is not a dict")
        result, pos = unpickle(data, persistent_load, pos)
        keys, pos = unpickle(data, persistent_load, pos)
    if type(keys) is not list or not all(type(k) is str for k in keys):
        raise RuntimeError(f"'{name}': the legacy format's storage keys are not a list of str")
    little = sys_info.get("little_endian", True)
    for key in keys:
        if key not in storages:
            raise RuntimeError(f"'{name}' has data for a storage '{key}' it does not use")
        memory, dtype_, restored, element_size = storages[key]
        if pos + 8 > len(data):
            raise RuntimeError(f"'{name}' is truncated: storage '{key}' has no data")
        count = int.from_bytes(data[pos:pos + 8], "little" if little else "big")
        pos += 8
        if count * element_size != memory.size or pos + memory.size > len(data):
            raise RuntimeError(f"'{name}': storage '{key}' has {count} elements in the file, "
                               f"not the {memory.size} bytes its pickle declares, or is "
                               "truncated")
        memory[...] = xp.frombuffer(data, xp.uint8, memory.size, pos)
        pos += memory.size
        if little != (sys.byteorder == "little"):
            _swap(memory, dtype_)
        if restored._bytes is not memory and not isinstance(restored._bytes, MetaArray):
            restored._bytes[...] = memory
    return result


def globals_in(pickled: bytes) -> set:
    """The names the GLOBAL opcodes of ``pickled`` give, read without building anything."""
    import pickletools

    found = set()
    try:
        for opcode, arg, _ in pickletools.genops(pickled):
            if opcode.name == "GLOBAL":
                module, name = arg.split(" ", 1)
                found.add(f"{_OLD_MODULES.get(module, module)}.{name}")
            if opcode.name == "STOP":
                break
    except ValueError as e:
        raise UnpicklingError(f"the pickle is damaged: {e}") from None
    return found


def allowed_names() -> set:
    """The full names PyTorch's weights-only allowlist gives (those chainrule builds)."""
    if not _ALLOWED:
        _ALLOWED.update(_allowed_globals())
    return set(_ALLOWED)
