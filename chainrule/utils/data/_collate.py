"""default_collate and default_convert: samples into batches, arrays into tensors."""

from __future__ import annotations

import collections.abc
import copy
from collections.abc import Sequence

import numpy as np  # user samples arrive as NumPy arrays and scalars whatever chainrule's backend

from ..._backend import float64
from ..._creation import from_numpy, tensor
from ...tensor import Tensor

__all__ = ["default_collate", "default_convert"]

_COLLATE_ERROR = ("default_collate: batch must contain tensors, numpy arrays, numbers, dicts or "
                  "lists; found {}")


def _is_text_array(array) -> bool:
    return array.dtype.kind in "SaUO"


def _stack(tensors: list):
    # chainrule has no `stack` in its public API yet, so the batch is built from the samples'
    # arrays: it is a new tensor outside any autograd graph.
    shape = tensors[0].shape
    for i, t in enumerate(tensors):
        if t.shape != shape:
            raise RuntimeError("stack expects each tensor to be equal size, but got "
                               f"{list(shape)} at entry 0 and {list(t.shape)} at entry {i}")
    return from_numpy(np.stack([t.detach().numpy() for t in tensors]))


def _rebuild(template, values: list):
    """``values`` in a container of ``template``'s type when it can be built, else a list."""
    try:
        if isinstance(template, collections.abc.MutableSequence):
            clone = copy.copy(template)
            for i, v in enumerate(values):
                clone[i] = v
            return clone
        return type(template)(values)
    except TypeError:
        return values


def _rebuild_mapping(template, values: dict):
    try:
        if isinstance(template, collections.abc.MutableMapping):
            clone = copy.copy(template)
            clone.update(values)
            return clone
        return type(template)(values)
    except TypeError:
        return values


def default_collate(batch: Sequence):
    """Merge a list of samples into a batch: tensors, arrays and numbers are stacked along a
    new first dim; dicts, tuples and lists are collated field by field; strings stay a list."""
    elem = batch[0]
    if isinstance(elem, Tensor):
        return _stack(batch)
    if isinstance(elem, np.ndarray):
        if _is_text_array(elem):
            raise TypeError(_COLLATE_ERROR.format(elem.dtype))
        return _stack([from_numpy(b) for b in batch])
    if isinstance(elem, (np.bool_, np.number)):
        return from_numpy(np.array(batch))
    if isinstance(elem, float):
        return tensor(batch, dtype=float64)
    if isinstance(elem, int):  # bool included: a batch of bools is a bool tensor
        return tensor(batch)
    if isinstance(elem, (str, bytes)):
        return batch
    if isinstance(elem, collections.abc.Mapping):
        return _rebuild_mapping(elem, {k: default_collate([d[k] for d in batch]) for k in elem})
    if isinstance(elem, tuple) and hasattr(elem, "_fields"):  # namedtuple
        return type(elem)(*(default_collate(field) for field in zip(*batch)))
    if isinstance(elem, collections.abc.Sequence):
        if any(len(sample) != len(elem) for sample in batch):
            raise RuntimeError("each element in list of batch should be of equal size")
        fields = [default_collate(field) for field in zip(*batch)]
        return fields if isinstance(elem, tuple) else _rebuild(elem, fields)
    raise TypeError(_COLLATE_ERROR.format(type(elem)))


def default_convert(data):
    """NumPy arrays and scalars inside ``data`` become tensors; the rest is left as it is
    (the collate_fn when automatic batching is off, ``batch_size=None``)."""
    if isinstance(data, Tensor):
        return data
    if isinstance(data, np.ndarray):
        return data if _is_text_array(data) else from_numpy(data)
    if isinstance(data, (np.bool_, np.number)):
        return from_numpy(np.asarray(data))
    if isinstance(data, collections.abc.Mapping):
        return _rebuild_mapping(data, {k: default_convert(data[k]) for k in data})
    if isinstance(data, tuple) and hasattr(data, "_fields"):
        return type(data)(*(default_convert(d) for d in data))
    if isinstance(data, tuple):
        return [default_convert(d) for d in data]
    if isinstance(data, collections.abc.Sequence) and not isinstance(data, (str, bytes)):
        return _rebuild(data, [default_convert(d) for d in data])
    return data
