"""The elementwise functions of one tensor a MaskedTensor has as methods: applied to the data,
the mask kept."""

from __future__ import annotations

from ...tensor import Tensor
from .core import MaskedTensor

__all__: list[str] = []

UNARY_NAMES = [
    "abs", "absolute", "acos", "arccos", "acosh", "arccosh", "angle", "asin", "arcsin", "asinh",
    "arcsinh", "atan", "arctan", "atanh", "arctanh", "bitwise_not", "ceil", "clamp", "clip",
    "conj_physical", "cos", "cosh", "deg2rad", "digamma", "erf", "erfc", "erfinv", "exp", "exp2",
    "expm1", "fix", "floor", "frac", "lgamma", "log", "log10", "log1p", "log2", "logit", "i0",
    "isnan", "nan_to_num", "neg", "negative", "positive", "pow", "rad2deg", "reciprocal", "round",
    "rsqrt", "sigmoid", "sign", "sgn", "signbit", "sin", "sinc", "sinh", "sqrt", "square", "tan",
    "tanh", "trunc",
]
INPLACE_UNARY_NAMES = [n + "_" for n in UNARY_NAMES
                       if n not in ("angle", "positive", "signbit", "isnan")]


_KEYWORD_ONLY = ("decimals",)  # round's: PyTorch's MaskedTensor refuses keyword-only arguments


def _check(args: tuple, kwargs: dict) -> None:
    if any(k in _KEYWORD_ONLY for k in kwargs):
        raise ValueError("MaskedTensor unary ops require that len(kwargs) == 0. If you need "
                         "support for this, please open an issue on Github.")
    if any(isinstance(a, Tensor) for a in (*args, *kwargs.values())):
        raise TypeError("MaskedTensor unary ops do not support additional Tensor arguments")


def _unary(name: str):
    fn = getattr(Tensor, name)

    def method(self, *args, **kwargs):
        _check(args, kwargs)
        return MaskedTensor._wrap(fn(self.get_data(), *args, **kwargs), self.get_mask())

    method.__name__ = name
    method.__doc__ = f"Tensor.{name} of the data; the mask is kept."
    return method


def _inplace_unary(name: str):
    fn = getattr(Tensor, name)

    def method(self, *args, **kwargs):
        _check(args, kwargs)
        self._set_data_mask(fn(self._masked_data, *args, **kwargs), self.get_mask())
        return self

    method.__name__ = name
    method.__doc__ = f"Tensor.{name} of the data, in place; the mask is kept."
    return method


for _name in UNARY_NAMES:
    setattr(MaskedTensor, _name, _unary(_name))
for _name in INPLACE_UNARY_NAMES:
    setattr(MaskedTensor, _name, _inplace_unary(_name))
MaskedTensor.__neg__ = MaskedTensor.neg
MaskedTensor.__pos__ = MaskedTensor.positive
MaskedTensor.__abs__ = MaskedTensor.abs
MaskedTensor.__invert__ = MaskedTensor.bitwise_not
MaskedTensor.__pow__ = MaskedTensor.pow
MaskedTensor.__ipow__ = MaskedTensor.pow_


def _undefined(self, other):
    return NotImplemented  # a number ** MaskedTensor is not defined (as in PyTorch)


MaskedTensor.__rpow__ = _undefined


def conj(self) -> MaskedTensor:
    """self: a MaskedTensor's data is real, which conjugation leaves as it is."""
    return self


MaskedTensor.conj = conj
