"""BatchedTensor: the value a vmap level sees — one example of a physical tensor batched in dim 0.

A BatchedTensor is a Tensor whose metadata (shape, dtype, ndim) is the logical, per-example one:
its ``_data`` is a zero-memory read-only placeholder of that shape, filled with NaN so that code
reading values past the dispatch path shows up in tests instead of passing quietly. The values
live in ``_value``, a tensor of one more dim (the batch, always in front), which may itself be
batched at an outer vmap level. Autograd and forward mode work on the wrapper as on any tensor
(what transforms inside the vmap record); the inner value keeps the history of the levels
outside it.
"""

from __future__ import annotations

import threading

from ._arguments import type_name
from ._backend import xp
from .tensor import Tensor, _sizes_argument

__all__ = ["BatchedTensor", "batched", "state"]


class _State(threading.local):  # per thread, as PyTorch's functorch levels
    level = 0  # number of active vmap levels; a wrapper made by the innermost has _level == level
    randomness: list = []  # per active level: 'error', 'same' or 'different'
    sizes: list = []  # per active level: the batch size
    fw_base: list = []  # per active level: the forward-mode dual levels opened before it


state = _State()

_placeholders: dict = {}


def _placeholder(dtype, shape: tuple):
    """A read-only zero-memory array of ``shape``; one per (dtype, shape), shared (building one
    is most of the cost of wrapping a batched value)."""
    key = (dtype, shape)
    array = _placeholders.get(key)
    if array is None:
        if len(_placeholders) > 4096:
            _placeholders.clear()
        kind = dtype.kind
        value = xp.nan if kind in "fcV" else True if kind == "b" else xp.iinfo(dtype).min
        array = _placeholders[key] = xp.broadcast_to(xp.full((), value, dtype=dtype), shape)
    return array


_ITEM = ("vmap: It looks like you're calling .item() on a Tensor. We don't support vmap over "
         "calling .item() on a Tensor, please try to rewrite what you're doing with other "
         "operations. If error is occurring somewhere inside PyTorch internals, please file a "
         "bug report.")
_NO_STORAGE = "Cannot access data pointer of Tensor that doesn't have storage"
_CONTROL_FLOW = ("vmap: It looks like you're attempting to use a Tensor in some data-dependent "
                 "control flow. We don't support that yet, please file an issue at "
                 "https://github.com/pytorch/pytorch/issues .")


class BatchedTensor(Tensor):
    """A tensor inside ``vmap``: logically one example, physically the whole batch."""

    __slots__ = ("_value", "_level")

    def detach(self) -> BatchedTensor:
        return batched(self._value.detach(), self._level)

    def detach_(self) -> BatchedTensor:
        Tensor.detach_(self)
        self._value = self._value.detach()
        return self

    @property
    def data(self) -> BatchedTensor:
        return batched(self._value.data, self._level)

    @data.setter
    def data(self, value) -> None:
        raise RuntimeError("vmap: setting .data of a batched tensor is not supported")

    def item(self):
        raise RuntimeError(_ITEM)

    def _scalar(self, *args):
        raise RuntimeError(_ITEM)

    # Made from a batched tensor, a new tensor is batched too (PyTorch's rule; not new_tensor):
    # Tensor's method makes the whole batch, so sizes are checked (and reported) with the batch.
    def new_empty(self, *sizes, size=None, dtype=None, device=None, requires_grad: bool = False,
                  layout=None, pin_memory: bool = False) -> BatchedTensor:
        return self._new_batch(self._value.new_empty, self._sizes(sizes, size), requires_grad,
                               dtype=dtype, device=device, layout=layout, pin_memory=pin_memory)

    def new_empty_strided(self, size, stride, *, dtype=None, device=None,
                          requires_grad: bool = False, layout=None,
                          pin_memory: bool = False) -> BatchedTensor:
        size, stride = tuple(size), tuple(stride)
        extent = 0 if 0 in size else 1 + sum((n - 1) * s for n, s in zip(size, stride))
        return self._new_batch(self._value.new_empty_strided, (len(self._value), *size),
                               requires_grad, (extent, *stride), dtype=dtype, device=device,
                               layout=layout, pin_memory=pin_memory)

    def new_zeros(self, *sizes, size=None, dtype=None, device=None, requires_grad: bool = False,
                  layout=None, pin_memory: bool = False) -> BatchedTensor:
        return self._new_batch(self._value.new_zeros, self._sizes(sizes, size), requires_grad,
                               dtype=dtype, device=device, layout=layout, pin_memory=pin_memory)

    def new_ones(self, *sizes, size=None, dtype=None, device=None, requires_grad: bool = False,
                 layout=None, pin_memory: bool = False) -> BatchedTensor:
        return self._new_batch(self._value.new_ones, self._sizes(sizes, size), requires_grad,
                               dtype=dtype, device=device, layout=layout, pin_memory=pin_memory)

    def new_full(self, size, fill_value, *, dtype=None, device=None, requires_grad: bool = False,
                 layout=None, pin_memory: bool = False) -> BatchedTensor:
        if not isinstance(size, (tuple, list)):
            raise TypeError(f"new_full(): argument 'size' (position 1) must be tuple of ints, not "
                            f"{type_name(size)}")
        return self._new_batch(self._value.new_full, (len(self._value), *size), requires_grad,
                               fill_value, dtype=dtype, device=device, layout=layout,
                               pin_memory=pin_memory)

    def _sizes(self, sizes: tuple, size) -> tuple:
        """A new_* method's sizes (``*sizes`` or ``size=``) with the batch size in front."""
        sizes = _sizes_argument(sizes, size)
        if len(sizes) == 1 and isinstance(sizes[0], (tuple, list)):
            sizes = tuple(sizes[0])
        return (len(self._value), *sizes)

    def _new_batch(self, make, sizes: tuple, requires_grad: bool, *args,
                   **options) -> BatchedTensor:
        value = make(sizes, *args, requires_grad=requires_grad, **options)
        value._requires_grad = False  # the wrapper requires grad, at this level (as PyTorch's)
        t = batched(value, self._level)
        t._requires_grad = requires_grad
        return t

    def tolist(self):
        raise RuntimeError(_NO_STORAGE)

    def __bool__(self) -> bool:
        raise RuntimeError(_CONTROL_FLOW)

    def __index__(self) -> int:
        raise RuntimeError(_CONTROL_FLOW)

    def numpy(self, *, force: bool = False):
        raise RuntimeError(_NO_STORAGE)

    def __array__(self, dtype=None, copy=None):
        return self.numpy()

    def __repr__(self) -> str:
        inner = "\n".join("    " + line for line in repr(self._value).splitlines())
        return f"BatchedTensor(lvl={self._level}, bdim=0, value=\n{inner}\n)"

    __str__ = __repr__

    def __deepcopy__(self, memo: dict):
        raise RuntimeError("vmap: deepcopy of a batched tensor is not supported")


_new = object.__new__


def batched(value: Tensor, level: int) -> BatchedTensor:
    """Wrap ``value`` (batch in dim 0) as a BatchedTensor of vmap level ``level``."""
    t = _new(BatchedTensor)
    data = value._data
    shape = data.shape[1:]
    placeholder = _placeholders.get((data.dtype, shape))
    t._data = _placeholder(data.dtype, shape) if placeholder is None else placeholder
    t._requires_grad = False
    t._grad = None
    t.grad_fn = None
    t._output_nr = 0
    t._vc = None
    t._extra = None
    t._value = value
    t._level = level
    return t
