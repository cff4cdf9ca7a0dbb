"""The safetensors format of ``save`` and ``load``: tensors and plain data, never pickle.

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

import io
import json
import math
import os
import stat
from collections import OrderedDict

from ._backend import as_dtype, dtype, xp
from ._creation import from_numpy
from .tensor import Tensor

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


def _read(file, name: str, head: bytes | None = None) -> tuple[bytes, dict]:
    """The file's bytes and its checked header; what the header claims is checked against the
    file's size before it is read, and nothing is read past what the header describes."""
    if head is None:
        head = _read_at_most(file, 8)
    position = _position(file)
    if position is not None:  # from the file's start, before its first bytes were read
        position = (position[0] - len(head), position[1] + len(head))
    total = position[1] if position else None
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


def encode(obj) -> bytes:
    """The safetensors bytes of ``obj`` (a tensor or nested containers of tensors and values)."""
    st = _safetensors_numpy()
    arrays: dict = {}
    tree = _encode(obj, (), arrays)
    meta = json.dumps({"version": _FORMAT_VERSION, "tree": tree}, allow_nan=False)
    return st.save(arrays, metadata={_META_KEY: meta})


def decode(f, name: str, head: bytes | None = None):
    """The object in the safetensors file ``f`` (a binary file object named ``name``), whose
    first bytes ``head`` may have been read already."""
    st = _safetensors_numpy()
    data, header = _read(f, name, head)
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
