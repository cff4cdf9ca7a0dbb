"""dtypes, type promotion and the array namespace ``xp`` (NumPy today)."""

from __future__ import annotations

import numpy as xp

__all__ = ["xp", "dtype", "as_dtype", "result_type", "get_default_dtype", "set_default_dtype"]


class dtype:
    """A tensor element type, printed with PyTorch's name (``torch.float32``)."""

    __slots__ = ("name", "np", "is_floating_point", "is_complex", "is_signed", "itemsize")

    def __init__(self, name: str, np_dtype: type) -> None:
        self.name = name
        self.np = xp.dtype(np_dtype)
        self.is_floating_point = self.np.kind == "f"
        self.is_complex = self.np.kind == "c"
        self.is_signed = self.np.kind in "fic"
        self.itemsize = self.np.itemsize

    def __repr__(self) -> str:
        return f"torch.{self.name}"

    def __reduce__(self):
        return as_dtype, (self.name,)  # not by name: the class says module "torch"


dtype.__module__ = "torch"  # what torch.dtype.__module__ says


float16 = dtype("float16", xp.float16)
float32 = dtype("float32", xp.float32)
float64 = dtype("float64", xp.float64)
int8 = dtype("int8", xp.int8)
int16 = dtype("int16", xp.int16)
int32 = dtype("int32", xp.int32)
int64 = dtype("int64", xp.int64)
uint8 = dtype("uint8", xp.uint8)
bool_ = dtype("bool", xp.bool_)
complex64 = dtype("complex64", xp.complex64)
complex128 = dtype("complex128", xp.complex128)

ALL_DTYPES = (float16, float32, float64, int8, int16, int32, int64, uint8, bool_, complex64,
              complex128)
_BY_NP = {d.np: d for d in ALL_DTYPES}
_ALIASES = {"half": float16, "float": float32, "double": float64, "short": int16, "int": int32,
            "long": int64, "bool": bool_, "cfloat": complex64, "cdouble": complex128}


def as_dtype(d) -> dtype:
    """The chainrule dtype for a chainrule dtype, a NumPy dtype, a Python type or a name."""
    if isinstance(d, dtype):
        return d
    if d is float:
        return _default[0]
    if d is int:
        return int64
    if d is bool:
        return bool_
    if isinstance(d, str) and d in _ALIASES:
        return _ALIASES[d]
    try:
        return _BY_NP[xp.dtype(d)]
    except (TypeError, KeyError):
        raise TypeError(f"unsupported dtype {d!r}: use one of chainrule.float32, float64, "
                        "int64, ... (see chainrule.ALL_DTYPES)") from None


def from_np(np_dtype) -> dtype:
    """The chainrule dtype of a NumPy dtype."""
    try:
        return _BY_NP[np_dtype]
    except KeyError:
        raise TypeError(f"NumPy dtype {np_dtype} has no chainrule equivalent") from None


_default = [float32]


def get_default_dtype() -> dtype:
    """The default floating point dtype (float32 unless changed)."""
    return _default[0]


def set_default_dtype(d) -> None:
    """Set the default floating point dtype (float32 or float64, as in PyTorch)."""
    d = as_dtype(d)
    if not d.is_floating_point:
        raise TypeError(f"only floating-point types are supported as the default type, got {d}")
    _default[0] = d


def _category(np_dtype) -> int:
    kind = np_dtype.kind
    return 0 if kind == "b" else 3 if kind == "c" else 2 if kind == "f" else 1


def _scalar_category(x) -> int:
    if isinstance(x, bool):
        return 0
    return 1 if isinstance(x, int) else 3 if isinstance(x, complex) else 2


def result_type(arrays, scalars=()):
    """PyTorch's type promotion for NumPy arrays and Python scalars.

    Dimensioned arrays win over zero-dim arrays, which win over Python scalars, unless a lower
    tier has a higher category (bool < integer < floating < complex); a winning scalar category
    gives the default dtype.
    """
    cats = [_category(a.dtype) for a in arrays]
    top = max(cats + [_scalar_category(s) for s in scalars])
    result = None
    dimensioned = False
    for want_dim in (True, False):
        tier = [a.dtype for a, c in zip(arrays, cats) if c == top and (a.ndim > 0) == want_dim]
        if tier:
            result = xp.result_type(*tier)
            dimensioned = want_dim
            break
    if result is None:
        result = (xp.dtype(xp.bool_), xp.dtype(xp.int64), _default[0].np,
                  xp.dtype(xp.complex64 if _default[0] is float32 else xp.complex128))[top]
    if result == xp.complex64 and any(a.dtype == xp.float64 and (a.ndim > 0 or not dimensioned)
                                      for a in arrays):
        result = xp.dtype(xp.complex128)  # complex wide enough for the float64 operand
    return result


def _tune_allocator() -> None:
    """Keep freed gradient-sized buffers in the process: opt-in with CHAINRULE_MALLOC=tuned
    (glibc only). A library must not retune its host's allocator unasked, so the default is off.

    Training frees and reallocates the same megabyte-sized arrays every step. glibc returns them
    to the kernel (mmap or heap trimming) and the next step pays a page fault per 4 KiB page:
    measured here, a third of an MLP step at batch 16. A fixed mmap threshold of 64 MiB and a trim
    threshold of 256 MiB keep such buffers for reuse; larger arrays are still returned at once.
    """
    import ctypes
    import os
    import sys

    if os.environ.get("CHAINRULE_MALLOC") != "tuned" or not sys.platform.startswith("linux"):
        return
    try:
        libc = ctypes.CDLL("libc.so.6")
        m_trim_threshold, m_mmap_threshold = -1, -3
        libc.mallopt(m_mmap_threshold, 64 * 2**20)
        libc.mallopt(m_trim_threshold, 256 * 2**20)
    except (OSError, AttributeError):
        pass


_tune_allocator()

