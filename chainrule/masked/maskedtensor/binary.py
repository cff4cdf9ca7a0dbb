"""The elementwise functions of two tensors a MaskedTensor has as methods and operators: both
operands' masks must be equal (a plain tensor or number takes the MaskedTensor's)."""

from __future__ import annotations

from ...tensor import Tensor
from .core import MaskedTensor, _get_data, _masks_match, is_masked_tensor

__all__: list[str] = []

BINARY_NAMES = [
    "add", "atan2", "arctan2", "bitwise_and", "bitwise_or", "bitwise_xor", "bitwise_left_shift",
    "bitwise_right_shift", "div", "divide", "floor_divide", "fmod", "logaddexp", "logaddexp2",
    "mul", "multiply", "nextafter", "remainder", "sub", "subtract", "true_divide", "eq", "ne",
    "le", "ge", "greater", "greater_equal", "gt", "less_equal", "lt", "less", "maximum",
    "minimum", "fmax", "fmin", "not_equal",
]
INPLACE_BINARY_NAMES = [n + "_" for n in BINARY_NAMES if n not in (
    "logaddexp", "logaddexp2", "equal", "fmin", "minimum", "maximum", "fmax")]


def _check(a, b, args: tuple, kwargs: dict) -> None:
    if kwargs:
        raise ValueError("len(kwargs) must equal 0")
    if any(isinstance(x, Tensor) for x in args):
        raise TypeError("MaskedTensor binary ops do not support Tensor arguments aside from the "
                        "lhs and rhs")
    if not _masks_match(a, b):
        raise ValueError("Input masks must match. If you need support for this, please open an "
                         "issue on Github.")


def _apply(fn, a, b, args: tuple = (), kwargs: dict | None = None) -> MaskedTensor:
    """fn(a, b, *args) on the data, with the mask of the MaskedTensor among a and b."""
    _check(a, b, args, kwargs or {})
    result = fn(_get_data(a), _get_data(b), *args)
    mask = (a if is_masked_tensor(a) else b).get_mask()
    if mask.shape != result.shape:
        mask = mask.expand_as(result)
    return MaskedTensor._wrap(result, mask)


def _binary(name: str):
    fn = getattr(Tensor, name)

    def method(self, other, *args, **kwargs):
        return _apply(fn, self, other, args, kwargs)

    method.__name__ = name
    method.__doc__ = f"Tensor.{name} of the data (the masks must match); the mask is kept."
    return method


def _inplace_binary(name: str):
    fn = getattr(Tensor, name)

    def method(self, other, *args, **kwargs):
        _check(self, other, args, kwargs)
        self._set_data_mask(fn(self._masked_data, _get_data(other), *args), self.get_mask())
        return self

    method.__name__ = name
    method.__doc__ = f"Tensor.{name} of the data in place (the masks must match)."
    return method


def _reflected(name: str, symbol: str):
    """other <op> self, for other a plain tensor (PyTorch has no reflected form for numbers)."""
    fn = getattr(Tensor, name)

    def method(self, other):
        if not isinstance(other, Tensor):
            raise TypeError(f"unsupported operand type(s) for {symbol}: "
                            f"'{type(other).__name__}' and 'MaskedTensor'")
        return _apply(fn, other, self)

    method.__name__ = f"__r{name}__"
    return method


def __lt__(self, other) -> MaskedTensor:
    """self < other elementwise, with self's mask (other's mask is not compared)."""
    return MaskedTensor._wrap(self.get_data() < _get_data(other), self.get_mask())


def __rtruediv__(self, other) -> MaskedTensor:
    """other / self, as other times the reciprocal of self."""
    return self.reciprocal() * other


for _name in BINARY_NAMES:
    setattr(MaskedTensor, _name, _binary(_name))
for _name in INPLACE_BINARY_NAMES:
    setattr(MaskedTensor, _name, _inplace_binary(_name))
for _dunder, _name in (("add", "add"), ("sub", "sub"), ("mul", "mul"), ("truediv", "div"),
                       ("floordiv", "floor_divide"), ("mod", "remainder"),
                       ("and", "bitwise_and"), ("or", "bitwise_or"), ("xor", "bitwise_xor"),
                       ("lshift", "bitwise_left_shift"), ("rshift", "bitwise_right_shift"),
                       ("eq", "eq"), ("ne", "ne"), ("le", "le"), ("gt", "gt"), ("ge", "ge")):
    setattr(MaskedTensor, f"__{_dunder}__", getattr(MaskedTensor, _name))
for _dunder, _name in (("add", "add_"), ("sub", "sub_"), ("mul", "mul_"), ("truediv", "div_"),
                       ("floordiv", "floor_divide_"), ("mod", "remainder_"),
                       ("and", "bitwise_and_"), ("or", "bitwise_or_"), ("xor", "bitwise_xor_")):
    setattr(MaskedTensor, f"__i{_dunder}__", getattr(MaskedTensor, _name))
# A number on the left of a commutative operator is the MaskedTensor's operand.
MaskedTensor.__radd__ = MaskedTensor.add
MaskedTensor.__rmul__ = MaskedTensor.mul
MaskedTensor.__rand__ = MaskedTensor.bitwise_and
MaskedTensor.__ror__ = MaskedTensor.bitwise_or
MaskedTensor.__rxor__ = MaskedTensor.bitwise_xor
MaskedTensor.__rsub__ = _reflected("sub", "-")
MaskedTensor.__rfloordiv__ = _reflected("floor_divide", "//")
MaskedTensor.__rmod__ = _reflected("remainder", "%")
MaskedTensor.__rtruediv__ = __rtruediv__
MaskedTensor.__lt__ = __lt__


def _undefined(self, other):
    return NotImplemented  # no matrix product of MaskedTensors (as in PyTorch)


MaskedTensor.__matmul__ = MaskedTensor.__rmatmul__ = _undefined
