"""dtypes, type promotion and the array namespace ``xp`` (NumPy today).

bfloat16 and the float8 dtypes are NumPy dtypes from ml_dtypes (an optional extra), imported the
first time one is used: the names always exist, so code that only mentions them imports.
"""

from __future__ import annotations

import numpy as xp

from ._modes import ForeignArgument

__all__ = ["xp", "dtype", "as_dtype", "result_type", "get_default_dtype", "set_default_dtype",
           "astype"]


class dtype:
    """A tensor element type, printed with PyTorch's name (``torch.float32``)."""

    __slots__ = ("name", "np", "is_floating_point", "is_complex", "is_signed", "itemsize")

    def __init__(self, name: str, np_dtype: type | None, itemsize: int = 0,
                 is_signed: bool = True) -> None:
        self.name = name
        if np_dtype is None:  # from ml_dtypes: ``np`` is set when it is loaded (__getattr__)
            self.is_floating_point, self.is_complex = True, False
            self.is_signed, self.itemsize = is_signed, itemsize
            return
        self.np = xp.dtype(np_dtype)
        self.is_floating_point = self.np.kind == "f"
        self.is_complex = self.np.kind == "c"
        self.is_signed = self.np.kind in "fic"
        self.itemsize = self.np.itemsize

    def __getattr__(self, attr: str):
        # Only reached while a low-precision dtype's ``np`` slot is empty.
        if attr == "np" and self in LOW_PRECISION_DTYPES:
            _load_ml_dtypes(self)
            return self.np
        raise AttributeError(f"'torch.dtype' object has no attribute '{attr}'")

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
bfloat16 = dtype("bfloat16", None, 2)
float8_e4m3fn = dtype("float8_e4m3fn", None, 1)
float8_e5m2 = dtype("float8_e5m2", None, 1)
float8_e4m3fnuz = dtype("float8_e4m3fnuz", None, 1)
float8_e5m2fnuz = dtype("float8_e5m2fnuz", None, 1)
float8_e8m0fnu = dtype("float8_e8m0fnu", None, 1, is_signed=False)

ALL_DTYPES = (float16, float32, float64, int8, int16, int32, int64, uint8, bool_, complex64,
              complex128)
FLOAT8_DTYPES = (float8_e4m3fn, float8_e5m2, float8_e4m3fnuz, float8_e5m2fnuz, float8_e8m0fnu)
LOW_PRECISION_DTYPES = (bfloat16, *FLOAT8_DTYPES)
_BY_NP = {d.np: d for d in ALL_DTYPES}
_ALIASES = {"half": float16, "float": float32, "double": float64, "short": int16, "int": int32,
            "long": int64, "bool": bool_, "cfloat": complex64, "cdouble": complex128,
            **{d.name: d for d in LOW_PRECISION_DTYPES}}
# PyTorch's C++ scalar type names, as its messages print them ("Float", "BFloat16").
SCALAR_NAMES = {"float16": "Half", "float32": "Float", "float64": "Double", "int8": "Char",
                "int16": "Short", "int32": "Int", "int64": "Long", "uint8": "Byte",
                "bool": "Bool", "complex64": "ComplexFloat", "complex128": "ComplexDouble",
                "bfloat16": "BFloat16", **{d.name: d.name.capitalize() for d in FLOAT8_DTYPES}}
# The NumPy dtypes of ml_dtypes are user-defined: numbered from 256 (NPY_USERDEF) on.
USER_DTYPE_NUM = 256


def _load_ml_dtypes(wanted: dtype | None = None) -> bool:
    """Give the low-precision dtypes their NumPy types; False (or, for ``wanted``, an error
    naming the extra) when ml_dtypes is not installed."""
    try:
        import ml_dtypes
    except ImportError:
        if wanted is None:
            return False
        raise ModuleNotFoundError(
            f"torch.{wanted.name} needs the ml_dtypes package, which chainrule's "
            f"'low-precision' extra installs: pip install 'chainrule[low-precision]'",
            name="ml_dtypes") from None
    for d in LOW_PRECISION_DTYPES:
        d.np = xp.dtype(getattr(ml_dtypes, d.name))
        _BY_NP[d.np] = d
    return True


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
        return from_np(xp.dtype(d))
    except TypeError:
        raise TypeError(f"unsupported dtype {d!r}: use one of chainrule.float32, float64, "
                        "int64, ... (see chainrule.ALL_DTYPES)") from None


def from_np(np_dtype) -> dtype:
    """The chainrule dtype of a NumPy dtype."""
    try:
        return _BY_NP[np_dtype]
    except KeyError:
        # An ml_dtypes array made before chainrule needed ml_dtypes itself.
        if np_dtype.num >= USER_DTYPE_NUM and _ALIASES.get(np_dtype.name) in LOW_PRECISION_DTYPES \
                and _load_ml_dtypes() and np_dtype in _BY_NP:
            return _BY_NP[np_dtype]
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
    return 0 if kind == "b" else 3 if kind == "c" else 1 if kind in "iu" else 2  # "V": ml_dtypes


def _scalar_category(x) -> int:
    if isinstance(x, bool):
        return 0
    if isinstance(x, int):
        return 1
    if isinstance(x, complex):
        return 3
    if hasattr(type(x), "__torch_function__"):  # fx's Proxy, a tensor-like: not a number
        raise ForeignArgument(f"an op was given {type(x).__name__}, which implements "
                              "__torch_function__, where a number or a Tensor goes")
    return 2


def result_type(arrays, scalars=()):
    """PyTorch's type promotion for NumPy arrays and Python scalars.

    Dimensioned arrays win over zero-dim arrays, which win over Python scalars, unless a lower
    tier has a higher category (bool < integer < floating < complex); a winning scalar category
    gives the default dtype.
    """
    cats = [_category(a.dtype) for a in arrays]
    if any(a.dtype.num >= USER_DTYPE_NUM for a in arrays):
        _check_float8(arrays)
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


def np_finfo(np_dtype):
    """NumPy's finfo of a float dtype, ml_dtypes' for bfloat16 and float8."""
    if np_dtype.num >= USER_DTYPE_NUM:
        import ml_dtypes

        return ml_dtypes.finfo(np_dtype)
    return xp.finfo(np_dtype)


def _check_float8(arrays) -> None:
    """PyTorch promotes a float8 dtype with no other dtype (zero-dim and dimensioned tensors
    promote among themselves)."""
    for want_dim in (True, False):
        tier = [from_np(a.dtype) for a in arrays if (a.ndim > 0) == want_dim]
        for d in tier[1:]:
            if d is not tier[0] and (d in FLOAT8_DTYPES or tier[0] in FLOAT8_DTYPES):
                raise RuntimeError(f"Promotion for Float8 Types is not supported, attempted to "
                                   f"promote {SCALAR_NAMES[tier[0].name]} and "
                                   f"{SCALAR_NAMES[d.name]}")


def astype(array, dtype):
    """``array`` converted to the NumPy ``dtype`` as PyTorch converts: to bfloat16 and float8
    through float32 (a double is rounded twice, as c10's conversions take a float),
    float8_e4m3fn saturating at +-448 (infinities too), float8_e8m0fnu from the exponent alone."""
    if dtype.num < USER_DTYPE_NUM or array.dtype == dtype or type(array) is not xp.ndarray:
        return array.astype(dtype)
    if array.dtype != xp.float32 and array.dtype.kind not in "bV":
        with xp.errstate(over="ignore"):  # too large for float32: infinite, as in PyTorch
            array = array.astype(xp.float32)
    if dtype.name == "float8_e4m3fn":
        array = xp.clip(array, -448.0, 448.0)  # NaN stays NaN
    elif dtype.name == "float8_e8m0fnu":
        return _to_e8m0(array.astype(xp.float32)).view(dtype)
    return array.astype(dtype)


def _to_e8m0(array):
    """float32 to float8_e8m0fnu's bits: the exponent, rounded to nearest even on the mantissa
    (the implicit bit is the last kept one), sign ignored, NaN and infinities to NaN (255)."""
    bits = array.view(xp.uint32)
    exponent = ((bits >> 23) & 0xFF).astype(xp.uint8)
    half = (bits & 0x400000) != 0  # the first dropped bit
    rest = (bits & 0x3FFFFF) != 0
    up = half & (rest | (exponent > 0)) & (exponent < 255)
    return exponent + up.astype(xp.uint8)


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

