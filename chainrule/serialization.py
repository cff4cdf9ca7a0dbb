"""``save`` and ``load`` in the safetensors format: tensors and plain data, never pickle.

A file holds one object: a tensor, or dicts, lists and tuples nesting tensors and plain Python
values (None, bool, int, float, str, chainrule dtypes), such as a model's or an optimizer's state
dict. Each tensor is stored under its path of keys joined by ``SEP`` (``"."``), so a flat state
dict keeps its own keys (``"fc.weight"``) and an optimizer's ``state[0]["exp_avg"]`` is stored as
``"state.0.exp_avg"``; a lone tensor is stored as ``"tensor"``. The structure itself, with every
non-tensor value and the exact key types, is JSON in the file's metadata under ``"chainrule"``, so
``load`` rebuilds the same object. Any safetensors reader (``safetensors.torch.load_file``) reads
the tensors of such a file; ``load`` reads any safetensors file as a flat dict of tensors.

Differences from ``torch.save``/``torch.load``: tensors that share memory are stored (and
loaded) as separate copies; tuple subclasses come back as tuples; complex128 tensors, which
safetensors cannot hold, are stored as float64 with a last dim of 2 (real, imaginary).
"""

from __future__ import annotations

import contextlib
import enum
import io
import json
import math
import mmap as _mmap
import os
import secrets
import shutil
import stat
import sys
import tempfile
import warnings
from collections import OrderedDict

from ._backend import as_dtype, dtype, xp
from ._creation import from_numpy
from ._legacy import CPU_TYPES
from .storage import LEGACY_STORAGES, TypedStorage, UntypedStorage
from .tensor import Tensor

__all__ = ["save", "load", "SEP", "LoadEndianness", "SourceChangeWarning", "StorageType",
           "add_safe_globals", "check_module_version_greater_or_equal", "clear_safe_globals",
           "default_restore_location", "get_crc32_options", "get_default_load_endianness",
           "get_default_mmap_options", "get_safe_globals", "location_tag", "mkdtemp",
           "normalize_storage_type", "register_package", "safe_globals",
           "set_crc32_options", "set_default_load_endianness", "set_default_mmap_options",
           "storage_to_tensor_type", "validate_cuda_device", "validate_hpu_device"]

SEP = "."
_META_KEY = "chainrule"
_FORMAT_VERSION = 1
_SINGLE_TENSOR_KEY = "tensor"
# safetensors dtype codes that chainrule has a dtype for
_READABLE = {"BOOL", "U8", "I8", "I16", "I32", "I64", "F16", "F32", "F64", "C64"}
# ... and those of bfloat16 and float8, which safetensors' NumPy reader does not know
_LOW_PRECISION = {"BF16": "bfloat16", "F8_E4M3": "float8_e4m3fn", "F8_E5M2": "float8_e5m2",
                  "F8_E4M3FNUZ": "float8_e4m3fnuz", "F8_E5M2FNUZ": "float8_e5m2fnuz",
                  "F8_E8M0": "float8_e8m0fnu"}
_READABLE |= set(_LOW_PRECISION)


def _safetensors_numpy():
    try:
        import safetensors.numpy
    except ImportError:
        raise ImportError('chainrule.save and chainrule.load need the safetensors package: '
                          'pip install "chainrule[safetensors]"') from None
    return safetensors.numpy


# ---- the structure as JSON ------------------------------------------------------------------


def _encode(obj, path: tuple, arrays: dict):
    """JSON for ``obj``; its tensors go into ``arrays`` under their joined key path.

    Plain JSON values stand for themselves; everything else is a one-key object naming its kind
    ("tensor", "float" for nan/inf, "tuple", "dict", "odict", "dtype").
    """
    if isinstance(obj, Tensor):
        return _encode_tensor(obj, path, arrays)
    if obj is None or isinstance(obj, (bool, int, str)):
        return obj
    if isinstance(obj, float):
        return float(obj) if math.isfinite(obj) else {"float": repr(float(obj))}
    if isinstance(obj, dtype):
        return {"dtype": obj.name}
    if isinstance(obj, list):
        return [_encode(v, path + (str(i),), arrays) for i, v in enumerate(obj)]
    if isinstance(obj, tuple):
        return {"tuple": [_encode(v, path + (str(i),), arrays) for i, v in enumerate(obj)]}
    if isinstance(obj, dict):
        items = []
        for k, v in obj.items():
            if not (k is None or isinstance(k, (bool, int, float, str))):
                raise TypeError(f"chainrule.save: dict key {k!r} at '{SEP.join(path)}' is a "
                                f"{type(k).__name__}; keys must be str, int, float, bool or None")
            items.append([_encode(k, (), arrays), _encode(v, path + (str(k),), arrays)])
        return {"odict" if isinstance(obj, OrderedDict) else "dict": items}
    where = f" at '{SEP.join(path)}'" if path else ""
    raise TypeError(f"chainrule.save: cannot save a {type(obj).__name__}{where}: only tensors, "
                    "dicts, lists, tuples, None, bool, int, float, str and dtypes can be stored "
                    "(chainrule never pickles)")


def _encode_tensor(t: Tensor, path: tuple, arrays: dict) -> dict:
    key = SEP.join(path) if path else _SINGLE_TENSOR_KEY
    if key in arrays or key == "__metadata__":
        raise ValueError(f"chainrule.save: two tensors would be stored under the key '{key}' "
                         f"('{SEP}' joins nested keys); rename one of them")
    data = t.detach()
    # bfloat16 and float8 arrays (which numpy() refuses, as PyTorch) are written as they are
    array = xp.asarray(data._data if data._data.dtype.num >= 256 else data.numpy())
    if not array.flags.c_contiguous:
        array = array.copy(order="C")
    leaf = {"tensor": key}
    if array.dtype == xp.complex128:
        array = xp.stack([array.real, array.imag], axis=-1)
        leaf["complex"] = True
    if t.requires_grad:
        leaf["requires_grad"] = True
    arrays[key] = array
    if t.__dict__:  # the tensor's Python attributes, which torch.save keeps too
        leaf["attributes"] = _encode(t.__dict__, path + ("__dict__",), arrays)
    return leaf


def _decode(node, arrays: dict, name: str):
    if isinstance(node, list):
        return [_decode(v, arrays, name) for v in node]
    if not isinstance(node, dict):
        return node
    ((kind, value),) = ((k, v) for k, v in node.items() if k in _KINDS)
    if kind == "tensor":
        if value not in arrays:
            raise RuntimeError(f"chainrule.load: '{name}' names a tensor '{value}' that it does "
                               "not hold (the file is corrupt)")
        array = arrays[value]
        if node.get("complex"):
            array = xp.ascontiguousarray(array).view(xp.complex128)[..., 0]
        t = from_numpy(array)
        if "attributes" in node:
            t.__dict__.update(_decode(node["attributes"], arrays, name))
        return t.requires_grad_(True) if node.get("requires_grad") else t
    if kind == "float":
        return float(value)
    if kind == "dtype":
        return as_dtype(value)
    if kind == "tuple":
        return tuple(_decode(v, arrays, name) for v in value)
    pairs = [(_decode(k, arrays, name), _decode(v, arrays, name)) for k, v in value]
    result = OrderedDict(pairs) if kind == "odict" else dict(pairs)
    if len(result) != len(pairs) or not all(_is_key(k) for k in result):
        raise ValueError("a dict with repeated keys or keys save does not write")
    return result


def _is_key(key) -> bool:
    return key is None or isinstance(key, (bool, int, float, str))


_KINDS = ("tensor", "float", "dtype", "tuple", "dict", "odict")


# ---- files ----------------------------------------------------------------------------------


def _write(file, data: bytes) -> None:
    file.write(data)


def _atomic_write(given: str, data: bytes) -> None:
    """Write ``data`` to a temporary file beside the file ``given`` names, fsync it and rename it
    over the file: a crash leaves either the old file or the new one, never half of one. As
    opening the file for writing would, it writes through a symlink and keeps the permissions."""
    path = os.path.realpath(given)
    directory = os.path.dirname(path)
    if not os.path.isdir(directory):  # PyTorch's check and words
        raise RuntimeError(f"Parent directory {os.path.dirname(os.path.abspath(given))} does "
                           "not exist.")
    if os.path.isdir(path):
        raise RuntimeError(f"chainrule.save: cannot write to '{given}': it is a directory")
    tmp = os.path.join(directory, f".{os.path.basename(path)}.{secrets.token_hex(6)}.tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_BINARY", 0), 0o666)
    try:
        with os.fdopen(fd, "wb") as f:
            with contextlib.suppress(FileNotFoundError):
                os.chmod(tmp, stat.S_IMODE(os.stat(path).st_mode))
            _write(f, data)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
    if os.name == "posix":  # make the rename itself durable
        dir_fd = os.open(directory, os.O_RDONLY)
        try:
            os.fsync(dir_fd)
        finally:
            os.close(dir_fd)


def save(obj, f, pickle_module=None, pickle_protocol=None,
         _use_new_zipfile_serialization: bool = True,
         _disable_byteorder_record: bool = False) -> None:
    """Save a tensor or a (nested) state dict to ``f`` (a path or a binary file object).

    Writing to a path is atomic. ``pickle_module`` and ``pickle_protocol`` are accepted for
    PyTorch compatibility and ignored: nothing is pickled.
    """
    st = _safetensors_numpy()
    arrays: dict = {}
    tree = _encode(obj, (), arrays)
    meta = json.dumps({"version": _FORMAT_VERSION, "tree": tree}, allow_nan=False)
    data = st.save(arrays, metadata={_META_KEY: meta})
    if hasattr(f, "write"):
        _write(f, data)
    else:
        _atomic_write(os.fspath(f), data)


def _check_map_location(map_location) -> None:
    if map_location is None or callable(map_location) or isinstance(map_location, dict):
        return
    device = str(getattr(map_location, "type", map_location)).split(":")[0]
    if device != "cpu":
        raise RuntimeError(f"chainrule.load: map_location '{map_location}' is not available: "
                           "chainrule runs on the CPU only")


def _corrupt(name: str, why: str) -> RuntimeError:
    return RuntimeError(f"chainrule.load: '{name}' is not a valid safetensors file (it may be "
                        f"truncated or corrupt): {why}")


class _RepeatedKey(ValueError):
    pass


def _unique_keys(pairs: list) -> dict:
    """A JSON object as a dict, refusing repeated keys (json.loads would keep the last)."""
    obj = dict(pairs)
    if len(obj) != len(pairs):
        seen: set = set()
        key = next(k for k, _ in pairs if k in seen or seen.add(k))
        raise _RepeatedKey(f"the key '{key}' appears more than once")
    return obj


_MAX_HEADER = 100_000_000  # safetensors' own limit on the header's size
_CHUNK = 1 << 20


def _position(file) -> tuple[int, int] | None:
    """(position, bytes from it to the end) of a regular file or a buffer; None for a stream."""
    try:
        if hasattr(file, "fileno") and not stat.S_ISREG(os.fstat(file.fileno()).st_mode):
            return None  # a pipe or a device: no size to trust (/dev/zero never ends)
    except (OSError, ValueError, io.UnsupportedOperation):
        pass
    try:
        here = file.tell()
        end = file.seek(0, os.SEEK_END)
        file.seek(here)
        return here, end - here
    except (AttributeError, OSError, ValueError):
        return None


def _read_at_most(file, n: int) -> bytes:
    """Up to ``n`` bytes, read in chunks: never a buffer of ``n`` bytes before they exist."""
    chunks = []
    while n > 0:
        chunk = file.read(min(n, _CHUNK))
        if not chunk:
            break
        chunks.append(chunk)
        n -= len(chunk)
    return b"".join(chunks)


def _read(file, name: str) -> tuple[bytes, dict]:
    """The file's bytes and its checked header; what the header claims is checked against the
    file's size before it is read, and nothing is read past what the header describes."""
    position = _position(file)
    total = position[1] if position else None
    head = _read_at_most(file, 8)
    if len(head) < 8:
        raise _corrupt(name, f"it has {len(head)} bytes, fewer than the 8-byte header size")
    size = int.from_bytes(head, "little")
    have = total if total is not None else 8 + _MAX_HEADER
    if 8 + size > have:
        raise _corrupt(name, f"the header claims {size} bytes but the file has {total}"
                       if total is not None else
                       f"the header claims {size} bytes, more than safetensors' limit")
    text = _read_at_most(file, size)
    if len(text) < size:
        raise _corrupt(name, f"the header claims {size} bytes but the file has {8 + len(text)}")
    header = _header(text, name)
    need = max((info["data_offsets"][1] for key, info in header.items()
                if key != "__metadata__"), default=0)
    if total is None:  # a stream: one byte more than described, for safetensors to judge
        return head + text + _read_at_most(file, need + 1), header
    if total - 8 - size != need:
        raise _corrupt(name, f"its tensors take {need} bytes after the header, but the file has "
                             f"{total - 8 - size}")
    file.seek(position[0])  # the whole file in one read of the size it was checked to have
    data = file.read(total)
    if len(data) != total:
        raise _corrupt(name, f"it changed while being read ({len(data)} bytes, not {total})")
    return data, header


def _header(text: bytes, name: str) -> dict:
    """The JSON header, checked to describe tensors (their sizes, offsets and shapes are then
    checked by the safetensors reader)."""
    try:
        header = json.loads(text, object_pairs_hook=_unique_keys)
    except _RepeatedKey as e:
        raise _corrupt(name, f"in the header, {e}") from None
    except (ValueError, RecursionError) as e:
        raise _corrupt(name, f"the header is not JSON ({e})") from None
    if not isinstance(header, dict):
        raise _corrupt(name, f"the header is a JSON {type(header).__name__}, not an object")
    for key, info in header.items():
        if key == "__metadata__":
            continue
        if not isinstance(info, dict) or not {"dtype", "shape", "data_offsets"} <= set(info):
            raise _corrupt(name, f"tensor '{key}' is described by {json.dumps(info)[:80]}, not "
                                 "an object of dtype, shape and data_offsets")
        code, offsets = info["dtype"], info["data_offsets"]
        if not isinstance(code, str):
            raise _corrupt(name, f"tensor '{key}' has dtype {json.dumps(code)[:80]}")
        if not (isinstance(offsets, list) and len(offsets) == 2
                and all(type(o) is int and 0 <= o for o in offsets) and offsets[0] <= offsets[1]):
            raise _corrupt(name, f"tensor '{key}' has data_offsets {json.dumps(offsets)[:80]}, "
                                 "not [begin, end] byte positions")
        if code not in _READABLE:
            raise TypeError(f"chainrule.load: tensor '{key}' in '{name}' has dtype {code}, "
                            "which chainrule does not support")
    return header


def _arrays(st, data: bytes, header: dict) -> dict:
    """The file's arrays by key; with bfloat16 or float8 tensors, read from their bytes (their
    NumPy dtypes are ml_dtypes')."""
    if not any(isinstance(info, dict) and info.get("dtype") in _LOW_PRECISION
               for info in header.values()):
        return st.load(data)
    import safetensors

    arrays = {}
    for key, info in safetensors.deserialize(data):
        code = info["dtype"]
        np_dtype = as_dtype(_LOW_PRECISION.get(code) or _NUMPY_CODES[code]).np
        arrays[key] = xp.frombuffer(info["data"], dtype=np_dtype).reshape(info["shape"])
    return arrays


_NUMPY_CODES = {"BOOL": "bool", "U8": "uint8", "I8": "int8", "I16": "int16", "I32": "int32",
                "I64": "int64", "F16": "float16", "F32": "float32", "F64": "float64",
                "C64": "complex64"}


def load(f, map_location=None, pickle_module=None, *, weights_only=None, mmap=None):
    """Load an object saved by ``save`` (or any safetensors file, as a dict of tensors).

    ``f`` is a path or a binary file object. Tensors are loaded to the CPU: ``map_location`` may
    be None, "cpu", a device, a dict or a callable, and is otherwise ignored. ``weights_only``,
    ``mmap`` and ``pickle_module`` are accepted for PyTorch compatibility and ignored: the format
    holds only tensors and JSON, so loading never runs code.
    """
    _check_map_location(map_location)
    st = _safetensors_numpy()
    if hasattr(f, "read"):
        name = str(getattr(f, "name", "<file object>"))
        data, header = _read(f, name)
    else:
        name = os.fspath(f)
        with open(name, "rb") as file:
            data, header = _read(file, name)
    try:
        arrays = _arrays(st, data, header)
    except Exception as e:  # safetensors raises its own error type for bad offsets and sizes
        raise _corrupt(name, str(e)) from e
    arrays = {k: a if a.flags.writeable else a.copy() for k, a in arrays.items()}
    meta = (header.get("__metadata__") or {}).get(_META_KEY)
    if meta is None:
        return {key: from_numpy(array) for key, array in arrays.items()}
    try:
        meta = json.loads(meta, object_pairs_hook=_unique_keys)
        version = meta["version"]
        if version != _FORMAT_VERSION:
            raise ValueError(f"format version {version!r}; this chainrule reads version "
                             f"{_FORMAT_VERSION}")
        return _decode(meta["tree"], arrays, name)
    except (ValueError, KeyError, TypeError, IndexError, RecursionError) as e:
        raise RuntimeError(f"chainrule.load: '{name}' has unreadable chainrule metadata "
                           f"({e!r}); the file is corrupt or from a newer chainrule") from None


# ---- PyTorch's registries and settings of torch.serialization -------------------------------
# chainrule's files are safetensors, never pickle: the settings below are kept and read back as
# PyTorch's are (torch.utils.serialization.config), and change nothing in what save/load do.


class SourceChangeWarning(Warning):
    """The source of a class saved in a file changed since it was saved."""


@contextlib.contextmanager
def mkdtemp():
    """A temporary directory for the block, removed after it."""
    path = tempfile.mkdtemp()
    try:
        yield path
    finally:
        shutil.rmtree(path)


def check_module_version_greater_or_equal(module, req_version_tuple: tuple,
                                          error_if_malformed: bool = True) -> bool:
    """Whether ``module.__version__`` is at least ``req_version_tuple`` (a malformed version
    raises RuntimeError, or warns and counts as met)."""
    try:
        fields = module.__version__.split(".")
        version = tuple(type(want)(fields[i]) for i, want in enumerate(req_version_tuple))
        return version >= req_version_tuple
    except Exception as e:
        message = (f"'{module.__name__}' module version string is malformed "
                   f"'{module.__version__}' and cannot be compared with tuple "
                   f"{req_version_tuple}")
        if error_if_malformed:
            raise RuntimeError(message) from e
        warnings.warn(message + ", but continuing assuming that requirement is met",
                      stacklevel=2)
        return True


def validate_cuda_device(location):
    """The CUDA device index of ``location`` (a CPU build has none: RuntimeError)."""
    raise RuntimeError("Attempting to deserialize object on a CUDA device but "
                       "torch.cuda.is_available() is False. If you are running on a CPU-only "
                       "machine, please use torch.load with map_location=torch.device('cpu') "
                       "to map your storages to the CPU.")


def validate_hpu_device(location):
    """The HPU device index of ``location`` (no HPU module here: RuntimeError)."""
    raise RuntimeError("The HPU device module is not registered. If you are running on a "
                       "CPU-only machine, please use torch.load with "
                       "map_location=torch.device('cpu') to map your storages to the CPU.")


def _typename(obj) -> str:
    kind = type(obj)
    return kind.__qualname__ if kind.__module__ == "builtins" else \
        f"{kind.__module__}.{kind.__qualname__}"


def _cpu_tag(storage):
    return "cpu" if storage.device.type == "cpu" else None


def _meta_tag(storage):
    return "meta" if storage.device.type == "meta" else None


def _cpu_restore(storage, location):
    return storage if location == "cpu" else None


def _cuda_restore(storage, location):
    return validate_cuda_device(location) if location.startswith("cuda") else None


def _meta_restore(storage, location):
    if location != "meta":
        return None
    from .storage import UntypedStorage

    return UntypedStorage(storage.nbytes(), device="meta")


def _hpu_restore(storage, location):
    return validate_hpu_device(location) if location.startswith("hpu") else None


# (priority, tagger, deserializer), in priority order: PyTorch's devices that a CPU build knows
_packages: list = [(10, _cpu_tag, _cpu_restore), (20, lambda s: None, _cuda_restore),
                   (22, _meta_tag, _meta_restore), (23, lambda s: None, _hpu_restore)]


def register_package(priority: int, tagger, deserializer) -> None:
    """Register functions that tag a storage with its location and restore a storage to a
    location (lower ``priority`` is asked first)."""
    _packages.append((priority, tagger, deserializer))
    _packages.sort(key=lambda entry: entry[0])


def location_tag(storage) -> str:
    """The location tag of ``storage`` (``"cpu"``), from the first tagger that knows it."""
    for _, tagger, _ in _packages:
        tag = tagger(storage)
        if tag:
            return tag
    raise RuntimeError(f"don't know how to determine data location of {_typename(storage)}")


def default_restore_location(storage, location: str):
    """``storage`` restored to ``location`` by the first deserializer that knows it."""
    for _, _, deserializer in _packages:
        result = deserializer(storage, location)
        if result is not None:
            return result
    raise RuntimeError(f"don't know how to restore data location of {_typename(storage)} "
                       f"(tagged with {location})")


def _torch_classes() -> dict:
    """The storage and legacy tensor classes of the torch namespace, by name."""
    return {**LEGACY_STORAGES, **CPU_TYPES, "Storage": LEGACY_STORAGES["FloatStorage"],
            "TypedStorage": TypedStorage, "UntypedStorage": UntypedStorage, "Tensor": Tensor}


def normalize_storage_type(storage_type):
    """torch's storage class of that name."""
    found = _torch_classes().get(storage_type.__name__)
    if found is None:
        raise AttributeError(f"module 'chainrule' has no attribute '{storage_type.__name__}'")
    return found


def storage_to_tensor_type(storage):
    """The legacy tensor class of a legacy storage (``FloatStorage`` -> ``FloatTensor``)."""
    kind = type(storage)
    name = kind.__name__.replace("Storage", "Tensor")
    if kind.__module__ == "torch":
        found = _torch_classes().get(name)
    else:
        module = sys.modules.get("chainrule" + kind.__module__[len("torch"):], None)
        found = getattr(module, name, None)
    if found is None:
        raise AttributeError(f"module '{kind.__module__}' has no attribute '{name}'")
    return found


class StorageType:
    """The storage type a pickle names (``StorageType("FloatStorage").dtype``)."""

    def __init__(self, name: str) -> None:
        kind = _torch_classes().get(name) if name.endswith("Storage") else None
        if kind is None or not hasattr(kind, "dtype"):
            raise KeyError(f'pickle storage type "{name}" is not recognized')
        self._dtype = kind.dtype

    @property
    def dtype(self):
        return self._dtype

    def __str__(self) -> str:
        return f"StorageType(dtype={self.dtype})"


class LoadEndianness(enum.Enum):
    """The byte order ``load`` assumes for files that do not record one."""

    NATIVE = 1
    LITTLE = 2
    BIG = 3


def _config():
    from .utils.serialization import config

    return config


def get_default_load_endianness() -> LoadEndianness | None:
    """The byte order assumed for files that do not record one (None: the machine's)."""
    return _config().load.endianness


def set_default_load_endianness(endianness) -> None:
    """Set the byte order assumed for files that do not record one."""
    if not isinstance(endianness, LoadEndianness) and endianness is not None:
        raise TypeError("Invalid argument type in function set_default_load_endianness")
    _config().load.endianness = endianness


def get_crc32_options() -> bool:
    """Whether save computes a crc32 of each record."""
    return _config().save.compute_crc32


def set_crc32_options(compute_crc32: bool) -> None:
    """Set whether save computes a crc32 of each record."""
    _config().save.compute_crc32 = compute_crc32


def get_default_mmap_options() -> int | None:
    """The mmap flags of ``load(mmap=True)`` (``mmap.MAP_PRIVATE`` unless changed)."""
    return _config().load.mmap_flags


class set_default_mmap_options:  # noqa: N801  (PyTorch's name: a function and a block)
    """Set the mmap flags of ``load(mmap=True)`` (``mmap.MAP_PRIVATE`` or ``mmap.MAP_SHARED``);
    as a context manager, for the block."""

    def __init__(self, flags: int) -> None:
        if sys.platform == "win32":
            raise RuntimeError("Changing the default mmap options is currently not supported "
                               "for Windows")
        if flags not in (_mmap.MAP_PRIVATE, _mmap.MAP_SHARED):
            raise ValueError("Invalid argument in function set_default_mmap_options, expected "
                             f"mmap.MAP_PRIVATE or mmap.MAP_SHARED, but got {flags}")
        self.prev = _config().load.mmap_flags
        _config().load.mmap_flags = flags

    def __enter__(self) -> None:
        pass

    def __exit__(self, *exc) -> None:
        _config().load.mmap_flags = self.prev


_safe_globals: set = set()


def get_safe_globals() -> list:
    """The globals marked safe for ``weights_only`` loading."""
    return list(_safe_globals)


def add_safe_globals(safe_globals: list) -> None:
    """Mark ``safe_globals`` (callables, or (callable, name) pairs) safe for ``weights_only``
    loading (chainrule's load runs no code whatever the set holds)."""
    global _safe_globals
    _safe_globals = _safe_globals.union(set(safe_globals))


def clear_safe_globals() -> None:
    """Forget the globals marked safe for ``weights_only`` loading."""
    global _safe_globals
    _safe_globals = set()


class safe_globals:  # noqa: N801  (PyTorch's name)
    """Within the block, ``safe_globals`` are marked safe for ``weights_only`` loading (they
    are unmarked after it)."""

    def __init__(self, safe_globals: list) -> None:
        self.safe_globals = safe_globals

    def __enter__(self) -> None:
        add_safe_globals(self.safe_globals)

    def __exit__(self, *exc) -> None:
        global _safe_globals
        _safe_globals = _safe_globals - set(self.safe_globals)
