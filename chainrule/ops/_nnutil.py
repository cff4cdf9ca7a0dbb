"""Helpers the nn op files share: constants, argument parsing and checks, PyTorch's type
names, and the pieces of their batching rules (vmap)."""

from __future__ import annotations

from .._batching import materialize
from .._batching import on_values as on_values  # vmap's helper, for the nn op files
from .._dispatch import apply
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
    if input._data.dtype.kind not in "fcV":  # "V": bfloat16 and float8 (ml_dtypes)
        raise NotImplementedError(f'"{name}" not implemented for \'{type_name(input)}\'; '
                                  "convert the input with .float()")


# ---- vmap --------------------------------------------------------------------------------------


def with_batch(op, args, flags, size, params):
    """Batching rule of ops that act on their trailing dims whatever the leading ones (pooling,
    padding): unbatched inputs get the batch (a broadcast view) and the op runs once."""
    args = [materialize(a, size) if isinstance(a, Tensor) and not f else a
            for a, f in zip(args, flags)]
    return apply(op, *args, **params)


with_batch.kind = "leading dims"


def fold_batch(op, args, flags, size, params):
    """Batching rule of ops on a batch of samples (dim 0 of their first input, the only one
    batched): the examples' samples become one batch, (B, N, ...) -> (B * N, ...)."""
    x = args[0]
    shape = tuple(x.shape)
    out = apply(op, x.reshape((shape[0] * shape[1],) + shape[2:]), *args[1:], **params)
    return out.reshape(shape[:2] + tuple(out.shape[1:]))
