"""``torch.utils.data._utils.collate``: ``collate``, which turns a list of samples into a batch
by the type of the first sample, through a map of per-type functions, and the map behind
``default_collate``."""

from __future__ import annotations

import collections.abc
import copy
import re
from collections.abc import Callable

from ...._backend import float64, xp
from ...._creation import as_tensor, tensor
from ....ops.shape import stack
from ....tensor import Tensor
from .._collate import default_collate, default_convert

__all__ = ["collate", "collate_tensor_fn", "collate_numpy_array_fn", "collate_numpy_scalar_fn",
           "collate_float_fn", "collate_int_fn", "collate_str_fn", "default_collate_fn_map",
           "default_collate", "default_convert", "default_collate_err_msg_format"]

np_str_obj_array_pattern = re.compile(r"[SaUO]")
default_collate_err_msg_format = ("default_collate: batch must contain tensors, numpy arrays, "
                                  "numbers, dicts or lists; found {}")


def collate(batch, *, collate_fn_map: dict | None = None):
    """The batch of ``batch``'s samples: ``collate_fn_map[type]`` of the first sample's type
    (or a type it is an instance of), else mappings, namedtuples and sequences collated field
    by field."""
    elem = batch[0]
    elem_type = type(elem)
    if collate_fn_map is not None:
        if elem_type in collate_fn_map:
            return collate_fn_map[elem_type](batch, collate_fn_map=collate_fn_map)
        for collate_type in collate_fn_map:
            if isinstance(elem, collate_type):
                return collate_fn_map[collate_type](batch, collate_fn_map=collate_fn_map)
    if isinstance(elem, collections.abc.Mapping):
        fields = {key: collate([d[key] for d in batch], collate_fn_map=collate_fn_map)
                  for key in elem}
        try:
            if isinstance(elem, collections.abc.MutableMapping):
                clone = copy.copy(elem)
                clone.update(fields)
                return clone
            return elem_type(fields)
        except TypeError:  # a mapping type that cannot be built from a dict
            return fields
    if isinstance(elem, tuple) and hasattr(elem, "_fields"):  # a namedtuple
        return elem_type(*(collate(samples, collate_fn_map=collate_fn_map)
                           for samples in zip(*batch)))
    if isinstance(elem, collections.abc.Sequence):
        size = len(elem)
        if not all(len(e) == size for e in batch):
            raise RuntimeError("each element in list of batch should be of equal size")
        columns = [collate(samples, collate_fn_map=collate_fn_map) for samples in zip(*batch)]
        if isinstance(elem, tuple):
            return columns  # a list, as PyTorch has always returned
        try:
            if isinstance(elem, collections.abc.MutableSequence):
                clone = copy.copy(elem)
                for i, column in enumerate(columns):
                    clone[i] = column
                return clone
            return elem_type(columns)
        except TypeError:
            return columns
    raise TypeError(default_collate_err_msg_format.format(elem_type))


def collate_tensor_fn(batch, *, collate_fn_map: dict | None = None) -> Tensor:
    """Tensors stacked along a new first dim."""
    return stack(batch, 0)


def collate_numpy_array_fn(batch, *, collate_fn_map: dict | None = None):
    """Arrays (not of strings or objects) as tensors, then collated."""
    elem = batch[0]
    if np_str_obj_array_pattern.search(elem.dtype.str) is not None:
        raise TypeError(default_collate_err_msg_format.format(elem.dtype))
    return collate([as_tensor(b) for b in batch], collate_fn_map=collate_fn_map)


def collate_numpy_scalar_fn(batch, *, collate_fn_map: dict | None = None) -> Tensor:
    """NumPy scalars as one tensor."""
    return as_tensor(batch)


def collate_float_fn(batch, *, collate_fn_map: dict | None = None) -> Tensor:
    """Python floats as a float64 tensor."""
    return tensor(batch, dtype=float64)


def collate_int_fn(batch, *, collate_fn_map: dict | None = None) -> Tensor:
    """Python ints as an int64 tensor."""
    return tensor(batch)


def collate_str_fn(batch, *, collate_fn_map: dict | None = None):
    """Strings and bytes stay a list."""
    return batch


default_collate_fn_map: dict[type | tuple[type, ...], Callable] = {
    Tensor: collate_tensor_fn,
    xp.ndarray: collate_numpy_array_fn,
    (xp.bool_, xp.number, xp.object_): collate_numpy_scalar_fn,
    float: collate_float_fn,
    int: collate_int_fn,
    str: collate_str_fn,
    bytes: collate_str_fn,
}
