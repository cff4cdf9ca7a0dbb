"""dtype utilities: finfo, iinfo, promote_types, can_cast, result_type, the layout and memory
format types. Promotion is _backend's (the rule every op uses)."""

from __future__ import annotations

import math

from ._backend import SCALAR_NAMES, dtype, from_np, get_default_dtype, np_finfo, xp
from ._backend import _category as _np_category
from ._backend import result_type as _promote
from .storage import TypedStorage, UntypedStorage
from .tensor import Tensor

__all__ = ["finfo", "iinfo", "promote_types", "can_cast", "result_type", "layout",
           "memory_format", "strided", "contiguous_format", "channels_last",
           "channels_last_3d", "preserve_format", "typename", "is_storage"]

# PyTorch's float8_e5m2fnuz epsilon is the value of its bits 0x34, half NumPy's 2**-nmant.
_EPS = {"float8_e5m2fnuz": 0.125}


def _check_dtype(fn: str, name: str, value, position: int) -> None:
    if not isinstance(value, dtype):
        raise TypeError(f"{fn}(): argument '{name}' (position {position}) must be torch.dtype, "
                        f"not {type(value).__name__}")


class finfo:
    """Machine limits of a floating point dtype (a complex dtype: of its real part)."""

    def __init__(self, type: dtype | None = None) -> None:  # noqa: A002  (PyTorch's name)
        type = get_default_dtype() if type is None else type  # noqa: A001
        _check_dtype("finfo", "type", type, 1)
        if not (type.is_floating_point or type.is_complex):
            raise TypeError("torch.finfo() requires a floating point input type. Use torch.iinfo "
                            "to handle 'torch.finfo'")
        info = np_finfo(type.np)
        self.bits = info.bits
        self.eps = _EPS.get(type.name, float(info.eps))
        self.max = float(info.max)
        self.min = float(info.min)
        self.tiny = self.smallest_normal = float(info.smallest_normal)
        # 10 ** -digits10, the decimal digits the significand always holds
        self.resolution = 10.0 ** -math.floor(info.nmant * math.log10(2))
        self.dtype = info.dtype.name

    def __eq__(self, other) -> bool:
        return isinstance(other, finfo) and self.dtype == other.dtype

    def __hash__(self) -> int:
        return hash(("finfo", self.dtype))

    def __repr__(self) -> str:
        return (f"finfo(resolution={self.resolution:g}, min={self.min:g}, max={self.max:g}, "
                f"eps={self.eps:g}, smallest_normal={self.smallest_normal:g}, "
                f"tiny={self.tiny:g}, dtype={self.dtype})")

    def __reduce_ex__(self, protocol):
        raise TypeError("cannot pickle 'torch.finfo' object")


class iinfo:
    """Machine limits of an integer dtype."""

    def __init__(self, type: dtype) -> None:  # noqa: A002  (PyTorch's name)
        _check_dtype("iinfo", "type", type, 1)
        if type.np.kind == "b":
            raise TypeError("torch.bool is not supported by torch.iinfo")
        if type.np.kind not in "iu":
            raise TypeError("torch.iinfo() requires an integer input type. Use torch.finfo to "
                            "handle 'torch.iinfo'")
        info = xp.iinfo(type.np)
        self.bits, self.max, self.min, self.dtype = info.bits, int(info.max), int(info.min), \
            type.name

    def __eq__(self, other) -> bool:
        return isinstance(other, iinfo) and self.dtype == other.dtype

    def __hash__(self) -> int:
        return hash(("iinfo", self.dtype))

    def __repr__(self) -> str:
        return f"iinfo(min={self.min:g}, max={self.max:g}, dtype={self.dtype})"

    def __reduce_ex__(self, protocol):
        raise TypeError("cannot pickle 'torch.iinfo' object")


def promote_types(type1: dtype, type2: dtype) -> dtype:
    """The smallest dtype both type1 and type2 convert to without losing their category."""
    _check_dtype("promote_types", "type1", type1, 1)
    _check_dtype("promote_types", "type2", type2, 2)
    return from_np(_promote([xp.empty(0, type1.np), xp.empty(0, type2.np)]))


def can_cast(from_: dtype, to: dtype) -> bool:
    """True if casting from_ to to keeps the category (bool < integer < floating < complex)."""
    _check_dtype("can_cast", "from_", from_, 1)
    _check_dtype("can_cast", "to", to, 2)
    return _np_category(from_.np) <= _np_category(to.np)


def result_type(tensor, other) -> dtype:
    """The dtype an arithmetic op on tensor and other gives (tensors or Python numbers)."""
    arrays, scalars = [], []
    for x in (tensor, other):
        if hasattr(x, "_data"):
            arrays.append(x._data)
        elif isinstance(x, (bool, int, float, complex)):
            scalars.append(x)
        else:
            got = ", ".join(type(v).__name__ for v in (tensor, other))
            raise TypeError(f"result_type() received an invalid combination of arguments - got "
                            f"({got}), but expected one of:\n * (Tensor tensor, Tensor other)\n"
                            " * (Number scalar, Tensor tensor)\n * (Tensor tensor, Number other)\n"
                            " * (Number scalar1, Number scalar2)\n")
    return from_np(_promote(arrays, scalars))


class layout:
    """How a tensor's elements are laid out: only torch.strided (dense) exists here."""

    def __init__(self, name: str) -> None:
        self.name = name

    def __repr__(self) -> str:
        return f"torch.{self.name}"

    def __reduce__(self):
        return _named, (self.name,)  # the same object, as PyTorch's


class memory_format:
    """The order a factory or .contiguous() lays elements out in memory."""

    def __init__(self, name: str) -> None:
        self.name = name

    def __repr__(self) -> str:
        return f"torch.{self.name}"

    def __reduce__(self):
        return _named, (self.name,)  # the same object, as PyTorch's


def _named(name: str) -> layout | memory_format:
    """A pickled layout or memory format."""
    return globals()[name]


# What torch.X.__module__ says (pickling reads none of them).
finfo.__module__ = iinfo.__module__ = layout.__module__ = memory_format.__module__ = "torch"

strided = layout("strided")
contiguous_format = memory_format("contiguous_format")
channels_last = memory_format("channels_last")
channels_last_3d = memory_format("channels_last_3d")
preserve_format = memory_format("preserve_format")


def typename(obj, /) -> str:
    """A string naming obj's type: 'torch.FloatTensor' for a float32 tensor."""
    if isinstance(obj, Tensor):
        return f"torch.{SCALAR_NAMES[obj.dtype.name]}Tensor"
    module = getattr(obj, "__module__", "") or ""
    qualname = getattr(obj, "__qualname__", None) or getattr(obj, "__name__", None)
    if qualname is None:
        qualname = type(obj).__qualname__
        module = type(obj).__module__
    return qualname if module in ("", "builtins") else f"{module}.{qualname}"


def is_storage(obj, /) -> bool:
    """True if obj is a storage (``torch.TypedStorage`` or ``torch.UntypedStorage``)."""
    return isinstance(obj, (TypedStorage, UntypedStorage))
