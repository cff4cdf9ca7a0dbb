"""The rest of torch's math, statistics, shape and utility functions: compositions of the other
families where the result is the same, and a few records (copysign, gcd, lcm, heaviside,
nextafter, signbit, frexp's exponent) where none fits."""

from __future__ import annotations

import math

from .._backend import _category, as_dtype, get_default_dtype, result_type, xp
from .._dispatch import apply, apply_inplace
from ..tensor import Tensor
from . import elementwise as ew
from ._registry import ZERO, defop
from .elementwise import _KERNEL_NAMES, _dtype, _require_tensor, _unsupported
from .reduction import result

_DEG = math.pi / 180.0


def _kernel_name(dtype) -> str:
    name = dtype.name if hasattr(dtype, "np") else xp.dtype(dtype).name
    return _KERNEL_NAMES.get(name, name)


def _write_back(name: str, self: Tensor, fn, *args, **kwargs) -> Tensor:
    """``self.name_(...)``: the composite ``fn`` of a copy of self written into self (copy_
    records it; the copy keeps the values fn's derivatives read)."""
    value = fn(self.clone(), *args, **kwargs)
    if _category(value._data.dtype) > _category(self._data.dtype):
        raise RuntimeError(f"result type {_kernel_name(value._data.dtype)} can't be cast to the "
                           f"desired output type {_kernel_name(self._data.dtype)}")
    return self.copy_(value)


def _float_of(*values) -> xp.dtype:
    """The promoted dtype of ``values``, made floating (the default float for integers)."""
    arrays = [v._data for v in values if isinstance(v, Tensor)]
    scalars = [v for v in values if not isinstance(v, Tensor)]
    dtype = xp.dtype(result_type(arrays, scalars))
    return dtype if dtype.kind in "fc" else get_default_dtype().np


# ---- elementwise math ------------------------------------------------------------------------


def _copysign_grad(g, input, out):
    # d|x|·s/dx = sign(x)·sign(out); 0 at x = 0, as PyTorch's.
    return g * (ew.sign(input) * ew.sign(out))


COPYSIGN = defop("copysign", xp.copysign, ("input", "other"), (_copysign_grad, ZERO),
                 promote=True, float_out=True, jvp="elementwise")


def _integers_only(name: str, ufunc):
    def forward(input, other):
        dtype = _dtype(input, other)
        if dtype.kind not in "iu":
            raise _unsupported(f"{name}_cpu", dtype)
        return ufunc(input, other)

    return defop(name, forward, ("input", "other"), (None, None), promote=True,
                 differentiable=False, batch="elementwise")


GCD = _integers_only("gcd", xp.gcd)
LCM = _integers_only("lcm", xp.lcm)


def _heaviside(input, values):
    if input.dtype != values.dtype:
        raise RuntimeError("heaviside is not yet implemented for tensors with different dtypes.")
    if input.dtype.kind == "c":
        raise RuntimeError("heaviside is not yet implemented for complex tensors.")
    return xp.where(input == 0, values, input > 0).astype(input.dtype)


HEAVISIDE = defop("heaviside", _heaviside, ("input", "values"), (None, None),
                  differentiable=False, batch="elementwise")


def _nextafter(input, other):
    if _dtype(input, other).kind != "f":
        raise _unsupported("nextafter_cpu", _dtype(input, other))
    return xp.nextafter(input, other)


NEXTAFTER = defop("nextafter", _nextafter, ("input", "other"), (None, None), promote=True,
                  differentiable=False, batch="elementwise")


def _signbit(input):
    if input.dtype.kind == "c":
        raise RuntimeError("signbit is not implemented for complex tensors.")
    if input.dtype.kind in "bu":
        return xp.zeros(input.shape, dtype=bool)
    return xp.signbit(input)


SIGNBIT = defop("signbit", _signbit, ("input",), (None,), differentiable=False,
                batch="elementwise")
FREXP_EXPONENT = defop("frexp_exponent", lambda input: xp.frexp(input)[1].astype(xp.int32),
                       ("input",), (None,), differentiable=False, batch="elementwise")


def copysign(input, other) -> Tensor:
    """input's magnitudes with other's signs, elementwise."""
    return apply(COPYSIGN, input, other)


def gcd(input, other) -> Tensor:
    """The greatest common divisor of integers, elementwise."""
    _require_tensor("gcd", "other", 2, other)
    return apply(GCD, input, other)


def lcm(input, other) -> Tensor:
    """The least common multiple of integers, elementwise."""
    _require_tensor("lcm", "other", 2, other)
    return apply(LCM, input, other)


def heaviside(input, values) -> Tensor:
    """The Heaviside step: 0 below zero, 1 above, ``values`` at zero."""
    _require_tensor("heaviside", "values", 2, values)
    return apply(HEAVISIDE, input, values)


def nextafter(input, other) -> Tensor:
    """The next floating point value after input towards other, elementwise."""
    _require_tensor("nextafter", "other", 2, other)
    return apply(NEXTAFTER, input, other)


def signbit(input) -> Tensor:
    """True where the sign bit is set (negative values and -0.0)."""
    return apply(SIGNBIT, input)


def positive(input) -> Tensor:
    """input itself (unary plus)."""
    if input._data.dtype.kind == "b":
        raise RuntimeError("The `+` operator, on a bool tensor is not supported.")
    return input


def deg2rad(input) -> Tensor:
    """Angles in degrees converted to radians."""
    if input._data.dtype.kind == "c":
        raise RuntimeError("deg2rad is not supported for complex tensors.")
    return input * _DEG


def rad2deg(input) -> Tensor:
    """Angles in radians converted to degrees."""
    if input._data.dtype.kind == "c":
        raise RuntimeError("rad2deg is not supported for complex tensors.")
    return input * (1.0 / _DEG)


def ldexp(input, other) -> Tensor:
    """input * 2 ** other."""
    _require_tensor("ldexp", "other", 2, other)
    dtype = as_dtype(_float_of(input, other))
    return input * ew.exp2(other.to(dtype))


def frexp(input) -> tuple:
    """(mantissa, exponent) with input = mantissa * 2 ** exponent and 0.5 <= |mantissa| < 1."""
    if input._data.dtype.kind != "f":
        raise RuntimeError("torch.frexp() only supports floating-point dtypes")
    exponent = apply(FREXP_EXPONENT, input)
    mantissa = input * ew.exp2(-exponent.to(input.dtype))
    return result("frexp", "mantissa exponent", (mantissa, exponent))


def float_power(input, exponent) -> Tensor:
    """input ** exponent computed in double precision (complex double for complex operands)."""
    values = (input, exponent)
    if not any(isinstance(v, Tensor) for v in values):
        raise TypeError("float_power(): argument 'input' (position 1) must be Tensor, not "
                        f"{type(input).__name__}")
    complex_ = any((v._data.dtype.kind if isinstance(v, Tensor) else "c" * isinstance(v, complex))
                   == "c" for v in values)
    dtype = as_dtype("complex128" if complex_ else "float64")
    base, power = (v.to(dtype) if isinstance(v, Tensor) else v for v in values)
    return ew.pow(base, power)


def _float_power_(self, exponent) -> Tensor:
    out = float_power(self.clone(), exponent)
    if out.dtype != self.dtype:
        raise RuntimeError(f"the base given to float_power_ has dtype {_kernel_name(self.dtype)} "
                           "but the operation's result requires dtype "
                           f"{_kernel_name(out.dtype)}")
    return self.copy_(out)


def _composite_inplace(fn):
    def method(self, other):
        return _write_back(fn.__name__ + "_", self, fn, other)

    method.__name__ = fn.__name__ + "_"
    return method


def _record_inplace(op, check=None):
    def method(self, other):
        if check is not None:
            check(op.name, "other", 2, other)
        return apply_inplace(op, self, other)

    method.__name__ = op.name + "_"
    return method


def _deg2rad_(self) -> Tensor:
    return _write_back("deg2rad_", self, deg2rad)


def _rad2deg_(self) -> Tensor:
    return _write_back("rad2deg_", self, rad2deg)


def _heaviside_(self, values) -> Tensor:
    _require_tensor("heaviside_", "values", 2, values)
    return apply_inplace(HEAVISIDE, self, values)


ELEMENTWISE = (copysign, gcd, lcm, heaviside, nextafter, signbit, positive, deg2rad, rad2deg,
               ldexp, frexp, float_power)
ELEMENTWISE_INPLACE = {
    "copysign_": _record_inplace(COPYSIGN), "gcd_": _record_inplace(GCD, _require_tensor),
    "lcm_": _record_inplace(LCM, _require_tensor), "heaviside_": _heaviside_,
    "nextafter_": _record_inplace(NEXTAFTER, _require_tensor), "deg2rad_": _deg2rad_,
    "rad2deg_": _rad2deg_, "ldexp_": _composite_inplace(ldexp), "float_power_": _float_power_,
}


# ---- tables ------------------------------------------------------------------------------------

FUNCTIONS = {f.__name__: f for f in ELEMENTWISE}
METHODS = dict(FUNCTIONS)
METHODS.update(ELEMENTWISE_INPLACE)
