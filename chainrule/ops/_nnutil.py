"""Helpers the nn op files share: constants, argument parsing and checks, PyTorch's type
names."""

from __future__ import annotations

from ..tensor import Tensor


def const(array) -> Tensor:
    """A raw array as a tensor that needs no gradient (masks, one-hot weights)."""
    return Tensor._wrap(array, None, 0)


def sum_terms(*terms):
    """The sum of the terms that are not None (None if all are)."""
    total = None
    for t in terms:
        if t is not None:
            total = t if total is None else total + t
    return total


_TYPE_NAMES = {"float32": "Float", "float64": "Double", "float16": "Half", "int64": "Long",
               "int32": "Int", "int16": "Short", "int8": "Char", "uint8": "Byte", "bool": "Bool"}


def type_name(t: Tensor) -> str:
    return _TYPE_NAMES.get(t._data.dtype.name, t._data.dtype.name)


def c_type(t: Tensor) -> str:
    return _TYPE_NAMES.get(t._data.dtype.name, t._data.dtype.name).lower()


def ntuple(value, n: int, name: str) -> tuple[int, ...]:
    if isinstance(value, Tensor):
        value = value.tolist()
    if isinstance(value, (tuple, list)):
        if len(value) == 1:
            return (int(value[0]),) * n
        if len(value) != n:
            raise RuntimeError(f"{name}: expected {n} values (one per spatial dim) or one, got "
                               f"{list(value)}")
        return tuple(int(v) for v in value)
    return (int(value),) * n


def check_float(input: Tensor, name: str) -> None:
    if input._data.dtype.kind not in "fc":
        raise NotImplementedError(f'"{name}" not implemented for \'{type_name(input)}\'; '
                                  "convert the input with .float()")
