"""``torch.serialization``: ``save`` and ``load``, and PyTorch's registries and settings.

The file formats are in their own modules: ``_pickle_format`` (PyTorch's zip checkpoints, the
default, and reading its format of before 1.6, through an unpickler that runs no code) and
``_safetensors_format`` (tensors and plain data as safetensors, for ``.safetensors`` paths).
"""

from __future__ import annotations

import contextlib
import enum
import io
import mmap as _mmap
import os
import secrets
import shutil
import stat
import sys
import tempfile
import warnings

from . import _pickle_format, _safetensors_format
from ._legacy import CPU_TYPES
from ._safetensors_format import _CHUNK, SEP  # noqa: F401  (kept where tests and users read them)
from .storage import LEGACY_STORAGES, TypedStorage, UntypedStorage
from .tensor import Tensor

__all__ = ["save", "load", "SEP", "LoadEndianness", "SourceChangeWarning", "StorageType",
           "add_safe_globals", "check_module_version_greater_or_equal", "clear_safe_globals",
           "default_restore_location", "get_crc32_options", "get_default_load_endianness",
           "get_default_mmap_options", "get_safe_globals", "get_unsafe_globals_in_checkpoint",
           "location_tag", "mkdtemp",
           "normalize_storage_type", "register_package", "safe_globals",
           "set_crc32_options", "set_default_load_endianness", "set_default_mmap_options",
           "storage_to_tensor_type", "validate_cuda_device", "validate_hpu_device"]


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
         _disable_byteorder_record: bool = False, *, format: str | None = None) -> None:
    """Save an object to ``f`` (a path or a binary file object) in PyTorch's zip format.

    ``torch.load(f, weights_only=True)`` reads the file. Tensors, parameters, storages, dtypes,
    devices and containers of plain values are stored; a path ending in ``.safetensors`` or
    ``format="safetensors"`` writes safetensors instead. Writing to a path is atomic.
    ``pickle_module`` and ``pickle_protocol`` are accepted for PyTorch compatibility: the pickle
    is written by chainrule, at protocol 2, as ``torch.save`` writes it.
    """
    path = None if hasattr(f, "write") else os.fsdecode(os.fspath(f))
    if format is None:
        format = "safetensors" if path and path.endswith(".safetensors") else "pytorch"
    if format not in ("pytorch", "safetensors"):
        raise ValueError(f"chainrule.save: format must be 'pytorch' or 'safetensors', not "
                         f"{format!r}")
    if not _use_new_zipfile_serialization and format == "pytorch":
        raise RuntimeError("chainrule.save writes PyTorch's zip format only: "
                           "_use_new_zipfile_serialization=False (the format of PyTorch before "
                           "1.6) is not written")
    if format == "safetensors":
        data = _safetensors_format.encode(obj)
    else:  # PyTorch names the archive's folder after the file (its name without extension)
        name = "archive" if path is None else os.path.splitext(os.path.basename(path))[0]
        data = _pickle_format.write_archive(obj, name)
    if path is None:
        _write(f, data)
    else:
        _atomic_write(path, data)


def load(f, map_location=None, pickle_module=None, *, weights_only: bool | None = None,
         mmap: bool | None = None, **pickle_load_args):
    """Load an object saved with ``torch.save`` or ``chainrule.save`` from a file.

    ``f`` is a path or a binary file object holding PyTorch's zip format, its format of before
    1.6, or safetensors. Loading never runs code from the file: only tensors, storages, dtypes
    and plain containers are built, and the classes given to ``add_safe_globals``, whatever
    ``weights_only`` says. ``map_location`` (a device, a string, a dict or a callable) places
    the storages; ``mmap=True`` maps a zip checkpoint's storages from the file.
    """
    if weights_only and pickle_module is not None:  # PyTorch's words
        raise RuntimeError("Can not safely load weights when explicit pickle_module is "
                           "specified")
    if mmap and hasattr(f, "read"):
        raise ValueError("f must be a file path in order to use the mmap argument")
    if hasattr(f, "read"):
        return _load_file(f, str(getattr(f, "name", "<file object>")), map_location, None)
    name = os.fspath(f)
    if isinstance(name, bytes):
        name = os.fsdecode(name)
    with open(name, "rb") as file:
        return _load_file(file, name, map_location, name if mmap else None)


def _seekable(file) -> bool:
    """PyTorch's test: whether the file can seek to where it is."""
    try:
        file.seek(file.tell())
        return True
    except (io.UnsupportedOperation, AttributeError, OSError):
        return False


def _load_file(file, name: str, map_location, mmap_path: str | None):
    """The object in ``file`` in whichever format its first bytes say."""
    seekable = _seekable(file)
    start = file.tell() if seekable else 0
    head = _safetensors_format._read_at_most(file, 8)
    if not (_pickle_format.is_zip(head) or _pickle_format.is_legacy(head)):
        _check_map_location(map_location)
        _safetensors_format._safetensors_numpy()
        return _safetensors_format.decode(file, name, head)
    if not seekable:  # PyTorch's words
        raise io.UnsupportedOperation(
            f"'{name}' cannot seek. You can only torch.load from a file that is seekable. "
            "Please pre-load the data into a buffer like io.BytesIO and try to load from it "
            "instead.")
    restore = _restorer(map_location)
    file.seek(start)
    if _pickle_format.is_legacy(head):
        if mmap_path is not None:
            raise RuntimeError("mmap can only be used with files saved with "
                               "`torch.save(_use_new_zipfile_serialization=True), please "
                               "torch.save your checkpoint with this option in order to use "
                               "mmap.")
        return _pickle_format.load_legacy(file.read(), name, restore, _user_safe_globals())
    endianness = get_default_load_endianness()
    byteorder = {LoadEndianness.LITTLE: "little", LoadEndianness.BIG: "big"}.get(endianness)
    return _pickle_format.load_zip(file, name, restore, _user_safe_globals(), mmap_path,
                                   get_default_mmap_options(), byteorder)


def _restorer(map_location):
    """PyTorch's ``map_location`` as a function (storage, location) -> restored storage."""
    if map_location is None:
        return default_restore_location
    if isinstance(map_location, dict):
        return lambda storage, location: default_restore_location(
            storage, map_location.get(location, location))
    if isinstance(map_location, (str, bytes)) or type(map_location).__name__ == "device":
        target = map_location.decode() if isinstance(map_location, bytes) else str(map_location)
        return lambda storage, location: default_restore_location(storage, target)
    if not callable(map_location):
        raise TypeError(f"map_location must be a str, a device, a dict or a callable, not "
                        f"{type(map_location).__name__}")

    def restore(storage, location):
        result = map_location(storage, location)
        if result is None:
            return default_restore_location(storage, location)
        if isinstance(result, TypedStorage):
            return result._untyped_storage
        if not isinstance(result, UntypedStorage):
            raise RuntimeError(f"map_location returned a {type(result).__name__}, not a "
                               "storage")
        return result

    return restore


def _check_map_location(map_location) -> None:
    if map_location is None or callable(map_location) or isinstance(map_location, dict):
        return
    device = str(getattr(map_location, "type", map_location)).split(":")[0]
    if device != "cpu":
        raise RuntimeError(f"chainrule.load: map_location '{map_location}' is not available: "
                           "chainrule runs on the CPU only")


# ---- PyTorch's registries and settings of torch.serialization -------------------------------
# The settings are kept as PyTorch's are (torch.utils.serialization.config): load reads the
# endianness, the mmap flags and the safe globals; the crc32 option changes nothing (save always
# writes each record's crc32).


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
    """Mark ``safe_globals`` (classes and functions, or (object, full name) pairs) safe for
    ``load`` to build from a file."""
    global _safe_globals
    _safe_globals = _safe_globals.union(set(safe_globals))


def _user_safe_globals() -> dict:
    """The safe globals by the full name a pickle gives them."""
    named = {}
    for entry in _safe_globals:
        if isinstance(entry, tuple):
            if len(entry) != 2:
                raise ValueError("Expected tuple of length 2 (global, str of callable full "
                                 f"path), but got tuple of length: {len(entry)}")
            if type(entry[1]) is not str:
                raise TypeError("Expected second item in tuple to be str of callable full "
                                f"path, but got: {type(entry[1])}")
            named[entry[1]] = entry[0]
        else:
            named[f"{entry.__module__}.{entry.__qualname__}"] = entry
    return named


def get_unsafe_globals_in_checkpoint(f) -> list[str]:
    """The globals a ``torch.save`` checkpoint names that are neither allowed by default nor
    marked safe (read from its pickle without building anything)."""
    opened = f if hasattr(f, "read") else open(os.fspath(f), "rb")
    try:
        if not _pickle_format.is_zip(opened.read(4)):
            raise ValueError("Expected input to be a checkpoint returned by torch.save")
        opened.seek(-4, os.SEEK_CUR)
        archive = _pickle_format.ZipCheckpoint(opened, str(getattr(opened, "name", f)))
        found = _pickle_format.globals_in(archive.read("data.pkl", archive.total))
    finally:
        if opened is not f:
            opened.close()
    return list(found - _pickle_format.allowed_names() - set(_user_safe_globals()))


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
