"""Indexing ops: select and slice views, advanced indexing and index assignment, gather/scatter,
the index_* ops, take/put, masked ops, nonzero and unique.

Indexing reads keys the way PyTorch does, not NumPy: integers, slices and None are applied first
as a view, then the tensor indices index that view (``x[0, :, [1, 2]]`` has shape
``(x.shape[1], 2)``).
"""

from __future__ import annotations

import math

from .. import _modes as modes
from .._backend import astype, xp
from .._batching import _pad, fallback, find_level, physical
from .._dispatch import apply, apply_inplace, bump_version
from .._meta import MetaArray
from .._validation import check_expand
from ..autograd.grad_mode import state
from ..tensor import Tensor
from ._registry import Op, defop
from ._shapes import normalize_dim
from .elementwise import MUL, where
from .shape import (
    _FULL,
    ALIAS,
    EXPAND,
    UNSQUEEZE,
    VIEW,
    _along,
    _broadcast_shape,
    _copy_,
    _front,
    _indexed,
    _prefix,
    _variant,
    cat,
    contiguous,
    expand,
    flatten,
    repeat,
    reshape,
    unsqueeze,
    view,
    view_rule,
)

_ndarray = xp.ndarray
_ARRAYS = (xp.ndarray, MetaArray)  # an index array of either device


# ---- batching rules (vmap: the values have the batch in dim 0, see chainrule._batching) --------


def _batch_index(index: tuple, size: int) -> tuple:
    """The NumPy index applying ``index`` to every example of a batch-first value, the batch in
    front of the result."""
    advanced = [i for i, k in enumerate(index) if _is_array(k)]
    if not advanced or advanced[-1] - advanced[0] == len(advanced) - 1:
        return (_FULL,) + index  # basic, or one block of index arrays: its dims stay in place
    # Index arrays apart: NumPy puts their dims first, so the batch is indexed too, ahead of them.
    ndim = max(_index_ndim(index[i]) for i in advanced)
    return (xp.arange(size).reshape((size,) + (1,) * ndim),) + index


def _is_array(k) -> bool:
    """Whether an index entry takes part in advanced indexing (an array, a tensor or an int)."""
    return not (k is None or k is Ellipsis or type(k) is slice)


def _index_ndim(k) -> int:
    """The dims an index entry contributes to the broadcast shape of the index arrays."""
    a = k._data if isinstance(k, Tensor) else k
    if not isinstance(a, _ARRAYS):
        return 0
    return 1 if a.dtype.kind == "b" else a.ndim


def _result_ndim(ndim: int, index: tuple) -> int:
    """The number of dims of ``input[index]`` for an ``ndim``-dim input and an advanced index:
    each index array takes the dims it indexes (a mask all of its own) and adds the broadcast
    dims once."""
    arrays = [k._data if isinstance(k, Tensor) else k for k in index if _is_array(k)]
    used = sum(a.ndim if isinstance(a, _ARRAYS) and a.dtype.kind == "b" else 1 for a in arrays)
    return ndim - used + max(_index_ndim(a) for a in arrays)


def _vector(x, size: int):
    """A batch of 0-d examples (or of one-element vectors) as one-element vectors."""
    return apply(VIEW, x, shape=(size, -1))


def _spread(index, dim: int, shape: tuple):
    """A batch of index vectors as an index of ``shape`` (batch-first) along ``dim`` + 1."""
    lined = shape[:1] + (1,) * dim + (shape[dim + 1],) + (1,) * (len(shape) - dim - 2)
    return apply(EXPAND, apply(VIEW, index, shape=lined), shape=shape)


def _dynamic(name: str):
    """The rule of an op whose output shape depends on the values: vmap refuses it, as PyTorch."""

    def rule(op, args, flags, size, params):
        raise RuntimeError(
            "vmap: We do not support batching operators that can output dynamic shape. Attempted "
            f"to vmap over {name}. Please file an issue at https://github.com/pytorch/pytorch/"
            "issues if you need this feature."
        )

    return rule


_BATCHED_SELECT_MASK = (
    "vmap: Attempted to vmap over `mask` in torch.masked_select(self, mask) We cannot support "
    "this because for each batch this would return a differently shaped Tensor. Please file an "
    "issue at https://github.com/pytorch/pytorch/issues if you need this feature."
)

# ---- basic and advanced indexing ---------------------------------------------------------------


def _getitem(input, index):
    return input[index]


def _plain(index: tuple) -> tuple:
    """The index with its tensors (vmap's loop over a batched index) as arrays."""
    return tuple(_index_array(k) if isinstance(k, Tensor) else k for k in index)


def _index_backward(grad, index, shape):
    index = _plain(index)
    out = xp.zeros(shape, dtype=grad.dtype, like=grad)
    if _is_basic(index) or not any(
        isinstance(k, _ARRAYS) and k.dtype.kind != "b" for k in index
    ):  # no integer array: no position is hit twice, a plain write suffices
        out[index] = grad
    else:
        xp.add.at(out, index, grad)
    return out


def _is_basic(index) -> bool:
    return all(k is None or k is Ellipsis or type(k) is slice or type(k) is int for k in index)


def _take_index(g, index):
    return apply(SLICE if _is_basic(index) else INDEX, g, index=index)


def _index_backward_batch(op, args, flags, size, params):
    index, shape = _batch_index(params["index"], size), (size,) + tuple(params["shape"])
    return apply(op, args[0], index=index, shape=shape)


INDEX_BACKWARD = defop(
    "index_backward",
    _index_backward,
    ("grad",),
    (_take_index,),
    jvp="linear",
    batch=_index_backward_batch,
)


def _getitem_grad(g, input_shape, index):
    return apply(INDEX_BACKWARD, g, index=index, shape=input_shape)


def _basic_index_record(name: str):
    # A basic index (integers, slices, None, ...) is a view; select and slice differ by name only.
    return defop(
        name,
        _getitem,
        ("input",),
        (_getitem_grad,),
        view=True,
        jvp="linear",
        batch=view_rule(_indexed),
    )


SELECT = _basic_index_record("select")
SLICE = _basic_index_record("slice")
# x[None], x[0, None]: a basic index whose last step is an unsqueeze.
SLICE_UNSQUEEZE = _variant(SLICE, "UnsqueezeBackward0")


def _index(input, index):
    out = input[_plain(index)]
    # NumPy lays x[:, idx] out with the indexed dim outermost; PyTorch's result is contiguous.
    return out if out.flags.c_contiguous else out.copy(order="C")


def _index_batch(op, args, flags, size, params):
    return apply(op, args[0], index=_batch_index(params["index"], size))


INDEX = defop("index", _index, ("input",), (_getitem_grad,), jvp="linear", batch=_index_batch)


def _index_put(input, values, index, accumulate):
    index = _plain(index)
    out = input.copy()
    if accumulate:
        xp.add.at(out, index, values)
        return out
    try:
        out[index] = values
    except ValueError:
        target = out[index].shape
        raise RuntimeError(
            f"shape mismatch: value tensor of shape {list(xp.shape(values))} cannot be broadcast "
            f"to indexing result of shape {list(target)}"
        ) from None
    return out


def _index_put_values_grad(g, index, values_shape):
    if g.device.type == "meta" and any(
            isinstance(k, _ARRAYS) and k.dtype.kind == "b" for k in _plain(index)):
        # how many elements a mask selects is a value: any gradient of the values' shape
        return g.sum().expand(values_shape)  # that depends on g
    return apply(INDEX, g, index=index)


def _index_put_input_grad(g, index, accumulate):
    return g if accumulate else apply(INDEX_PUT, g, 0.0, index=index, accumulate=False)


def _index_put_batch(op, args, flags, size, params):
    [input], values, index = _front(args[:1], flags[:1], size), args[1], params["index"]
    if flags[1]:  # the values of an example line up with the end of its indexed result
        ndim = _result_ndim(input._data.ndim - 1, index)
        shape = values._data.shape
        values = (
            _pad(values, ndim)
            if len(shape) - 1 <= ndim
            else apply(VIEW, values, shape=shape[:1] + shape[len(shape) - ndim :])
        )
    index = _batch_index(index, size)
    return apply(op, input, values, index=index, accumulate=params["accumulate"])


INDEX_PUT = defop(
    "index_put",
    _index_put,
    ("input", "values"),
    (_index_put_input_grad, lambda g, index, values_shape: _index_put_values_grad(
        g, index, values_shape)),
    jvp=lambda t_input, t_values, input, index, accumulate: apply(
        INDEX_PUT,
        t_input if t_input is not None else input.new_zeros(input.shape),
        t_values if t_values is not None else 0.0,
        index=index,
        accumulate=accumulate,
    ),
    batch=_index_put_batch,
)


def _sequence_as_tuple(key: list) -> bool:
    # PyTorch (like old NumPy) reads a short list holding slices, None, Ellipsis, tensors or
    # sequences as a tuple of indices.
    return len(key) < 32 and any(
        k is None or k is Ellipsis or isinstance(k, (slice, list, tuple, Tensor, *_ARRAYS))
        for k in key
    )


def _index_array(k):
    """An index tensor, list or array as a NumPy array of integers or bools (or an int)."""
    a = k._data if isinstance(k, Tensor) else xp.asarray(k) if isinstance(k, list) else k
    if isinstance(k, list) and not k:
        return xp.zeros(0, dtype=xp.int64)
    kind = a.dtype.kind
    if kind == "u" and a.dtype.itemsize == 1:  # uint8 tensors are (deprecated) masks in torch
        return a.astype(bool)
    if kind not in "biu":
        raise IndexError("tensors used as indices must be long, int, byte or bool tensors")
    if a.ndim == 0 and kind != "b":
        return int(a)
    return a


Tensor._as_index = _index_array  # an index tensor as an array; vmap's own: _batching


_BAD_INDEX = (
    "only integers, slices (`:`), ellipsis (`...`), None and long or byte Variables "
    "are valid indices (got {})"
)


def _parse_key(key, shape: tuple):
    """PyTorch's reading of ``tensor[key]``: (view op, basic index, advanced index).

    The basic index (ints, slices, None) is applied first, as a view, unless it keeps every dim
    (None); the advanced index (integer and bool arrays) then indexes that view (None: none).
    The view op is the record PyTorch names after the last step that changed something.
    """
    single_slice = type(key) is slice
    if type(key) is not tuple:
        key = tuple(key) if isinstance(key, list) and _sequence_as_tuple(key) else (key,)
    items = []
    consumed = 0
    for k in key:
        if isinstance(k, Tensor):  # (under vmap, an index per example stays a tensor)
            k = k._as_index()
        elif isinstance(k, (*_ARRAYS, list, range)):  # a range is a sequence, as a list
            k = _index_array(list(k) if type(k) is range else k)
        elif isinstance(k, (bool, xp.bool_)):
            k = xp.asarray(k)
        elif not (k is None or k is Ellipsis or type(k) is slice or isinstance(k, int)):
            if hasattr(k, "__index__") and not isinstance(k, float):
                k = k.__index__()
            else:
                raise IndexError(_BAD_INDEX.format(type(k).__name__))
        if k is None or k is Ellipsis:
            pass
        elif isinstance(k, _ARRAYS) and k.dtype.kind == "b":
            consumed += k.ndim
        else:
            consumed += 1
        items.append(k)
    ndim = len(shape)
    if consumed > ndim:
        if ndim == 0 and items and isinstance(items[0], int):
            raise IndexError(
                "invalid index of a 0-dim tensor. Use `tensor.item()` in Python or "
                "`tensor.item<T>()` in C++ to convert a 0-dim tensor to a number"
            )
        raise IndexError(f"too many indices for tensor of dimension {ndim}")
    basic, advanced = [], []
    view_op = None
    changes = False
    dim = 0
    for k in items:
        if k is None:
            basic.append(None)
            advanced.append(_FULL)
            view_op = SLICE_UNSQUEEZE
        elif k is Ellipsis:
            n = ndim - consumed
            basic.extend([_FULL] * n)
            advanced.extend([_FULL] * n)
            dim += n
            consumed = ndim
        elif type(k) is slice:
            if k.step is not None and k.step <= 0:
                raise ValueError("step must be greater than zero")
            basic.append(k)
            advanced.append(_FULL)
            if k.indices(shape[dim]) != (0, shape[dim], 1):
                view_op = SLICE
            dim += 1
        elif isinstance(k, int):
            size = shape[dim]
            if not -size <= k < size:
                raise IndexError(f"index {k} is out of bounds for dimension {dim} with size {size}")
            basic.append(k)
            view_op = SELECT
            dim += 1
        elif isinstance(k, Tensor):  # an index per example (vmap)
            basic.append(_FULL)
            advanced.append(k)
            dim += 1
            changes = True
        elif k.ndim == 0:  # a bool scalar: a new dim of size 1, kept or emptied
            basic.append(None)
            advanced.append(k.reshape(1))
            view_op = SLICE_UNSQUEEZE
            changes = True
        elif k.dtype.kind == "b":
            if k.shape != shape[dim : dim + k.ndim]:
                raise IndexError(
                    f"The shape of the mask {list(k.shape)} at index {dim} does not "
                    f"match the shape of the indexed tensor {list(shape)} at index "
                    f"{dim}"
                )
            basic.extend([_FULL] * k.ndim)
            advanced.append(k)
            dim += k.ndim
            changes = True
        else:
            basic.append(_FULL)
            advanced.append(k)
            dim += 1
            changes = True
    if single_slice:
        view_op = SLICE
    basic_index = tuple(basic) + (Ellipsis,) if view_op is not None else None
    if not changes:
        return view_op or ALIAS, basic_index, None
    while advanced and advanced[-1] is _FULL:
        advanced.pop()
    return view_op, basic_index, tuple(advanced)


def getitem(input, key) -> Tensor:
    """``input[key]``: ints, slices, None, Ellipsis, bool masks and integer index tensors."""
    kind = type(key)
    if kind is int:
        size = input._data.shape[0] if input._data.ndim else None
        if size is not None and -size <= key < size:
            return apply(SELECT, input, index=(key, Ellipsis))
    elif kind is slice and (key.step is None or key.step > 0) and input._data.ndim:
        return apply(SLICE, input, index=(key,))
    view_op, basic, advanced = _parse_key(key, input._data.shape)
    if advanced is None:
        return apply(view_op, input) if view_op is ALIAS else apply(view_op, input, index=basic)
    if basic is not None:
        input = apply(view_op, input, index=basic)
    if any(type(k) is MetaArray and k.dtype.kind == "b" and k.ndim for k in advanced):
        raise NotImplementedError(
            "indexing with a boolean mask on the meta device: the shape of the result depends "
            "on the data, which meta tensors do not have (PyTorch's meta device refuses it too)")
    try:
        return apply(INDEX, input, index=advanced)
    except IndexError as err:
        raise IndexError(str(err).replace(" axis ", " dimension ")) from None


def _value_for(value, ndim: int):
    """An assigned value without the leading size-one dims PyTorch ignores."""
    if isinstance(value, (list, tuple)):
        raise TypeError(
            f"can't assign a {type(value).__name__} to a torch tensor; convert it "
            "with torch.tensor(...) first"
        )
    shape = value._data.shape if isinstance(value, Tensor) else ()
    lead = 0
    while len(shape) - lead > ndim and shape[lead] == 1:
        lead += 1
    if not lead:
        return value
    return value.reshape(shape[lead:]) if isinstance(value, Tensor) else value


def setitem(input, key, value) -> None:
    """``input[key] = value``, in place; differentiable for non-leaf tensors."""
    view_op, basic, advanced = _parse_key(key, input._data.shape)
    if view_op is ALIAS and advanced is None:
        basic = None  # x[...] = v copies into x itself
    recording = state.enabled and (
        input.requires_grad or (isinstance(value, Tensor) and value.requires_grad)
    )
    # A write straight into the array when nothing records it and no mode is active (vmap
    # levels, dual levels, a capture, dispatch modes all take the op path, which they see).
    if not recording and modes.stack.modes is None:
        target = input._data if basic is None else input._data[basic]
        v = value._data if isinstance(value, Tensor) else value
        if advanced is None:
            v = _value_for(value, target.ndim)
            v = v._data if isinstance(v, Tensor) else v
            if target.dtype.num >= 256:  # bfloat16, float8: PyTorch's conversion
                v = astype(xp.asarray(v), target.dtype)
            try:
                target[...] = v
            except ValueError:
                check_expand(target.shape, xp.shape(v))  # PyTorch's words for NumPy's refusal
                raise
        else:
            if target.dtype.num >= 256:
                v = astype(xp.asarray(v), target.dtype)
            try:
                target[advanced] = v
            except IndexError as err:
                raise IndexError(str(err).replace(" axis ", " dimension ")) from None
            except ValueError:
                raise RuntimeError(
                    f"shape mismatch: value tensor of shape {list(xp.shape(v))} cannot be "
                    f"broadcast to indexing result of shape {list(target[advanced].shape)}"
                ) from None
        bump_version(input)
        return
    target = input if basic is None else apply(view_op, input, index=basic)
    if advanced is None:
        value = _value_for(value, target._data.ndim)
        check_expand(target._data.shape, xp.shape(value._data if isinstance(value, Tensor)
                                                  else value))
        _copy_(target, value)
    else:
        apply_inplace(INDEX_PUT, target, value, index=advanced, accumulate=False)


# ---- gather and scatter ------------------------------------------------------------------------


def _on_vectors(forward):
    """Run an index forward on a 0-d input as on a one-element vector (PyTorch's convention)."""

    def run(input, *args, **params):
        if input.ndim:
            return forward(input, *args, **params)
        args = [a.reshape(-1) if isinstance(a, _ARRAYS) else a for a in args]
        return forward(input.reshape(1), *args, **params).reshape(())

    return run


def _mesh(index, dim: int) -> tuple:
    """The NumPy index of ``input[i0, .., index[i0, .., ik], .., ik]`` for every position."""
    mesh = list(xp.indices(index.shape, sparse=True))
    mesh[dim] = index
    return tuple(mesh)


def _gather(input, index, dim):
    if not input.ndim:  # every index is 0 (checked): copies of the one element
        return xp.full_like(index, input, dtype=input.dtype, order="C")
    return xp.take_along_axis(
        input[_prefix(index.shape[:dim]) + (_FULL,) + _prefix(index.shape[dim + 1 :])],
        index,
        axis=dim,
    )


@_on_vectors
def _scatter(input, index, src, dim):
    out = input.copy()
    out[_mesh(index, dim)] = src[_prefix(index.shape)] if isinstance(src, _ARRAYS) else src
    return out


@_on_vectors
def _scatter_add(input, index, src, dim):
    out = input.copy()
    xp.add.at(out, _mesh(index, dim), src[_prefix(index.shape)])
    return out


def _src_grad(g, index, src_shape, dim):
    """The gradient of the src of a scatter: g gathered at the index, zero beyond its extent."""
    return _scaled_src_grad(g, index, src_shape, dim, None)


def _scaled_src_grad(g, index, src_shape, dim, factor):
    out = apply(GATHER, g, index, dim=dim)
    if factor is not None:
        out = out * factor
    if tuple(out._data.shape) == tuple(src_shape):
        return out
    return apply(INDEX_BACKWARD, out, index=_prefix(out._data.shape), shape=src_shape)


def _gather_batch(op, args, flags, size, params):
    input, index = _front(args, flags, size)
    if input._data.ndim == 1:  # 0-d examples: gather from one-element vectors
        out = apply(op, _vector(input, size), _vector(index, size), dim=1)
        return apply(VIEW, out, shape=index._data.shape)
    return apply(op, input, index, dim=params["dim"] + 1)


def _scatter_batch(op, args, flags, size, params):
    """scatter, scatter_add and scatter_reduce: every tensor batch-first, the dim after it."""
    args = _front(args, flags, size)
    if args[0]._data.ndim == 1:  # 0-d examples: scatter into one-element vectors
        vectors = [_vector(a, size) if isinstance(a, Tensor) else a for a in args]
        return apply(VIEW, apply(op, *vectors, **{**params, "dim": 1}), shape=(size,))
    return apply(op, *args, **{**params, "dim": params["dim"] + 1})


GATHER = defop(
    "gather",
    _gather,
    ("input", "index"),
    (
        lambda g, input_shape, index, dim: apply(
            SCATTER_ADD, g.new_zeros(input_shape), index, g, dim=dim
        ),
        None,
    ),
    jvp="linear",
    batch=_gather_batch,
)
SCATTER_ADD = defop(
    "scatter_add",
    _scatter_add,
    ("input", "index", "src"),
    (lambda g: g, None, _src_grad),
    jvp="linear",
    batch=_scatter_batch,
)


def _scatter_jvp(t_input, t_src, input, index, dim):
    base = t_input if t_input is not None else input.new_zeros(input.shape)
    return apply(SCATTER, base, index, t_src if t_src is not None else 0.0, dim=dim)


SCATTER = defop(
    "scatter",
    _scatter,
    ("input", "index", "src"),
    (lambda g, index, dim: apply(SCATTER, g, index, 0.0, dim=dim), None, _src_grad),
    jvp=_scatter_jvp,
    batch=_scatter_batch,
)
SCATTER_VALUE = _variant(SCATTER, "ScatterBackward1")

_REDUCE_UFUNC = {
    "sum": xp.add,
    "mean": xp.add,
    "prod": xp.multiply,
    "amax": xp.maximum,
    "amin": xp.minimum,
}


def _identity(reduce: str, dtype):
    if reduce in ("sum", "mean"):
        return 0
    if reduce == "prod":
        return 1
    if dtype.kind == "f":
        return -xp.inf if reduce == "amax" else xp.inf
    info = xp.iinfo(dtype) if dtype.kind in "iu" else None
    if info is None:
        return reduce == "amin"
    return info.min if reduce == "amax" else info.max


@_on_vectors
def _scatter_reduce(input, index, src, dim, reduce, include_self):
    mesh = _mesh(index, dim)
    src = src[_prefix(index.shape)]
    out = input.copy()
    if not include_self:
        out[mesh] = _identity(reduce, out.dtype)
    _REDUCE_UFUNC[reduce].at(out, mesh, src)
    if reduce == "mean":
        count = xp.full(out.shape, 1 if include_self else 0, dtype=out.dtype)
        xp.add.at(count, mesh, 1)
        count[count == 0] = 1
        out = out // count if out.dtype.kind in "iu" else out / count
    return out


def _touched(g, index, dim):
    """True where some index points (a bool tensor of g's shape)."""
    hits = apply(SCATTER_ADD, g.new_zeros(g.shape), index, g.new_ones(index.shape), dim=dim)
    return hits != 0


def _reduce_factors(g, input, index, src, out, dim, reduce, include_self):
    """d out / d input (input-shaped) and d out / d src (index-shaped) of scatter_reduce; None
    means one. Gradients of ties (amax, amin) are split evenly, as in PyTorch."""
    keep_self = None if include_self else where(_touched(g, index, dim), 0.0, 1.0).to(g.dtype)
    if reduce == "sum":
        return keep_self, None
    if reduce == "mean":
        base = g.new_full(g.shape, 1.0 if include_self else 0.0)
        count = apply(SCATTER_ADD, base, index, g.new_ones(index.shape), dim=dim)
        inv = 1.0 / count.clamp(min=1.0)
        return (inv if include_self else keep_self), apply(GATHER, inv, index, dim=dim)
    src = src[_prefix(index.shape)]
    out_at = apply(GATHER, out, index, dim=dim)
    if reduce == "prod":
        # The product of the other elements, also where the element itself is 0: out / x where
        # x != 0; where x is the only zero of its group, the product of the group's non-zeros.
        zero_self, zero_src = input == 0, src == 0
        masked_self = where(zero_self, 1.0, input)
        masked_src = where(zero_src, 1.0, src)
        nonzero_prod = apply(
            SCATTER_REDUCE_NONLINEAR,
            masked_self,
            index,
            masked_src,
            dim=dim,
            reduce="prod",
            include_self=include_self,
        )
        zeros = apply(
            SCATTER_ADD,
            zero_self.to(g.dtype) if include_self else g.new_zeros(g.shape),
            index,
            zero_src.to(g.dtype),
            dim=dim,
        )
        only_zero = zeros == 1
        self_factor = where(zero_self & only_zero, nonzero_prod, out / masked_self)
        src_factor = where(
            zero_src & apply(GATHER, only_zero, index, dim=dim),
            apply(GATHER, nonzero_prod, index, dim=dim),
            out_at / masked_src,
        )
        return (self_factor if include_self else keep_self), src_factor
    hit_self = input == out
    if not include_self:
        hit_self = hit_self & (keep_self != 0)
    hit_src = (src == out_at).to(g.dtype)
    ties = apply(SCATTER_ADD, hit_self.to(g.dtype), index, hit_src, dim=dim)
    share = 1.0 / ties.clamp(min=1.0)
    return hit_self.to(g.dtype) * share, hit_src * apply(GATHER, share, index, dim=dim)


def _reduce_input_grad(g, input, index, src, out, dim, reduce, include_self):
    factor = _reduce_factors(g, input, index, src, out, dim, reduce, include_self)[0]
    return g if factor is None else g * factor


def _reduce_src_grad(g, input, index, src, src_shape, out, dim, reduce, include_self):
    factor = _reduce_factors(g, input, index, src, out, dim, reduce, include_self)[1]
    return _scaled_src_grad(g, index, src_shape, dim, factor)


def _reduce_jvp(t_input, t_src, input, index, src, out, dim, reduce, include_self):
    self_factor, src_factor = _reduce_factors(
        out, input, index, src, out, dim, reduce, include_self
    )
    total = out.new_zeros(out.shape)
    if t_input is not None:
        total = t_input if self_factor is None else t_input * self_factor
    if t_src is not None:
        t = t_src[_prefix(index.shape)]
        total = apply(
            SCATTER_ADD, total, index, t if src_factor is None else t * src_factor, dim=dim
        )
    return total


def _linear_reduce_input_grad(g, index, dim, reduce, include_self):
    return _reduce_input_grad(g, None, index, None, None, dim, reduce, include_self)


def _linear_reduce_src_grad(g, index, src_shape, dim, reduce, include_self):
    return _reduce_src_grad(g, None, index, None, src_shape, None, dim, reduce, include_self)


# sum and mean read only the index; prod, amax and amin also the values and the result.
SCATTER_REDUCE = defop(
    "scatter_reduce",
    _scatter_reduce,
    ("input", "index", "src"),
    (_linear_reduce_input_grad, None, _linear_reduce_src_grad),
    jvp="linear",
    batch=_scatter_batch,
)
SCATTER_REDUCE_NONLINEAR = _variant(
    SCATTER_REDUCE, vjp=(_reduce_input_grad, None, _reduce_src_grad), jvp=_reduce_jvp
)


@_on_vectors
def _index_select(input, index, dim):
    return xp.take(input, index.reshape(-1), axis=dim)


@_on_vectors
def _index_add(input, index, source, dim, alpha):
    out = input.copy()
    if source.ndim < out.ndim:
        source = xp.expand_dims(source, dim)
    xp.add.at(out, _along(dim, index.reshape(-1)), source if alpha == 1 else source * alpha)
    return out


@_on_vectors
def _index_copy(input, index, source, dim):
    out = input.copy()
    if source.ndim < out.ndim:
        source = xp.expand_dims(source, dim)
    out[_along(dim, index.reshape(-1))] = source
    return out


@_on_vectors
def _index_fill(input, index, value, dim):
    out = input.copy()
    out[_along(dim, index.reshape(-1))] = value
    return out


def _index_select_batch(op, args, flags, size, params):
    [input], index, dim = _front(args[:1], flags[:1], size), args[1], params["dim"]
    vector = input._data.ndim == 1
    if vector:  # a 0-d example: select from a one-element vector
        input, dim = _vector(input, size), 0
    if flags[1]:  # an index per example: gather along the dim
        shape = input._data.shape
        shape = shape[: dim + 1] + (math.prod(index._data.shape[1:]),) + shape[dim + 2 :]
        out = apply(GATHER, input, _spread(index, dim, shape), dim=dim + 1)
    else:
        out = apply(op, input, index, dim=dim + 1)
    return apply(VIEW, out, shape=(size,)) if vector else out


def _index_source_batch(scatter: Op):
    """The rule of index_add and index_copy: an index per example writes by ``scatter``
    (scatter_add or scatter) along the dim."""

    def rule(op, args, flags, size, params):
        input, index, source = args
        input, source = _front((input, source), (flags[0], flags[2]), size)
        dim = params["dim"]
        vector = input._data.ndim == 1
        if vector:  # a 0-d example: write into a one-element vector
            input, source, dim = _vector(input, size), _vector(source, size), 0
        if not flags[1]:
            out = apply(op, input, index, source, **{**params, "dim": dim + 1})
        else:
            if source._data.ndim < input._data.ndim:  # a source without the indexed dim
                source = apply(UNSQUEEZE, source, dim=dim + 1)
            index = _spread(index, dim, source._data.shape)
            if params.get("alpha", 1) != 1:
                source = apply(MUL, source, params["alpha"])
            out = apply(scatter, input, index, source, dim=dim + 1)
        return apply(VIEW, out, shape=(size,)) if vector else out

    return rule


def _index_fill_batch(op, args, flags, size, params):
    [input], index, value, dim = _front(args[:1], flags[:1], size), args[1], args[2], params["dim"]
    vector = input._data.ndim == 1
    if vector:  # a 0-d example: fill a one-element vector
        input, dim = _vector(input, size), 0
    if not flags[1]:
        if flags[2]:  # a value per example
            value = _pad(value, input._data.ndim - 1)
        out = apply(op, input, index, value, dim=dim + 1)
    else:  # an index per example: scatter the value
        shape = input._data.shape
        shape = shape[: dim + 1] + (math.prod(index._data.shape[1:]),) + shape[dim + 2 :]
        if isinstance(value, Tensor):
            value = _pad(value, len(shape) - 1) if flags[2] else value
            value = apply(EXPAND, value, shape=shape)
        out = apply(SCATTER, input, _spread(index, dim, shape), value, dim=dim + 1)
    return apply(VIEW, out, shape=(size,)) if vector else out


INDEX_SELECT = defop(
    "index_select",
    _index_select,
    ("input", "index"),
    (
        lambda g, input_shape, index, dim: apply(
            INDEX_ADD, g.new_zeros(input_shape), index, g, dim=dim, alpha=1
        ),
        None,
    ),
    jvp="linear",
    batch=_index_select_batch,
)


def _index_add_source_grad(g, index, dim, alpha):
    picked = apply(INDEX_SELECT, g, index, dim=dim)
    return picked if alpha == 1 else picked * alpha


INDEX_ADD = defop(
    "index_add",
    _index_add,
    ("input", "index", "source"),
    (
        lambda g: g,
        None,
        _index_add_source_grad,
    ),
    jvp="linear",
    batch=_index_source_batch(SCATTER_ADD),
)
INDEX_COPY = defop(
    "index_copy",
    _index_copy,
    ("input", "index", "source"),
    (
        lambda g, index, dim: apply(INDEX_FILL, g, index, 0.0, dim=dim),
        None,
        lambda g, index, dim: apply(INDEX_SELECT, g, index, dim=dim),
    ),
    jvp="linear",
    batch=_index_source_batch(SCATTER),
)


def _index_fill_jvp(t_input, t_value, input, index, dim):
    base = t_input if t_input is not None else input.new_zeros(input.shape)
    return apply(INDEX_FILL, base, index, t_value if t_value is not None else 0.0, dim=dim)


INDEX_FILL = defop(
    "index_fill",
    _index_fill,
    ("input", "index", "value"),
    (
        lambda g, index, dim: apply(INDEX_FILL, g, index, 0.0, dim=dim),
        None,
        # the sum of g where the value was written
        lambda g, index, dim: (g - apply(INDEX_FILL, g, index, 0.0, dim=dim)).sum(),
    ),
    jvp=_index_fill_jvp,
    batch=_index_fill_batch,
)
INDEX_FILL_TENSOR = _variant(INDEX_FILL, "IndexFillBackward1")


def _put(input, index, source, accumulate):
    out = input.copy()
    flat = out.reshape(-1)
    if accumulate:
        xp.add.at(flat, index.reshape(-1), source.reshape(-1))
    else:
        flat[index.reshape(-1)] = source.reshape(-1)
    return out


def _take_batch(op, args, flags, size, params):
    """take: a gather from each flattened example."""
    input, index = _front(args, flags, size)
    out = apply(GATHER, _vector(input, size), _vector(index, size), dim=1)
    return apply(VIEW, out, shape=index._data.shape)


def _put_batch(op, args, flags, size, params):
    """put: a scatter (scatter_add to accumulate) into each flattened example."""
    input, index, source = _front(args, flags, size)
    record = SCATTER_ADD if params["accumulate"] else SCATTER
    flat = apply(record, _vector(input, size), _vector(index, size), _vector(source, size), dim=1)
    return apply(VIEW, flat, shape=input._data.shape)


TAKE = defop(
    "take",
    lambda input, index: xp.take(input, index),
    ("input", "index"),
    (
        lambda g, input_shape, index: apply(
            PUT, g.new_zeros(input_shape), index, g, accumulate=True
        ),
        None,
    ),
    jvp="linear",
    batch=_take_batch,
)
PUT = defop(
    "put",
    _put,
    ("input", "index", "source"),
    (
        lambda g, index, accumulate: (
            g if accumulate else apply(PUT, g, index, g.new_zeros(index.shape), accumulate=False)
        ),
        None,
        lambda g, index, source_shape: apply(TAKE, g, index).reshape(source_shape),
    ),
    jvp="linear",
    batch=_put_batch,
)


def _masked_select(input, mask):
    input, mask = xp.broadcast_arrays(input, mask)
    return input[mask]


def _masked_scatter(input, mask, source):
    shape = xp.broadcast_shapes(input.shape, mask.shape)
    out = xp.broadcast_to(input, shape).copy()
    mask = xp.broadcast_to(mask, shape)
    n = int(xp.count_nonzero(mask))
    if n > source.size:
        raise RuntimeError("masked_scatter: Number of elements of source < number of ones in mask")
    out[mask] = source.reshape(-1)[:n]
    return out


def _masked_scatter_source_grad(g, mask, source_shape):
    if g.device.type == "meta":  # how many elements the mask selects is a value: any gradient
        return g.sum().expand(source_shape)  # of the source's shape that depends on g
    picked = apply(MASKED_SELECT, g, mask)
    numel = math.prod(source_shape)
    if picked._data.size < numel:  # source elements past the mask's count get no gradient
        picked = apply(INDEX_BACKWARD, picked, index=_prefix(picked._data.shape), shape=(numel,))
    return picked.reshape(source_shape)


def _masked_select_batch(op, args, flags, size, params):
    input, mask = args
    if flags[1]:
        raise RuntimeError(_BATCHED_SELECT_MASK)
    shape = _broadcast_shape([input._data.shape[1:], mask._data.shape])
    out = apply(op, _pad(input, len(shape)), mask)  # each example's picks, one after the other
    return apply(VIEW, out, shape=(size, -1))


def _masked_scatter_batch(op, args, flags, size, params):
    input, mask, source = args
    if flags[1] or find_level((mask,), None):  # a mask per example (at any level): a count each
        return fallback(op, args, flags, size, params)
    input, source = _front((input, source), (flags[0], flags[2]), size)
    shape = _broadcast_shape([input._data.shape[1:], mask._data.shape])
    count = int(xp.count_nonzero(xp.broadcast_to(mask._data, shape)))
    source = _vector(source, size)
    if source._data.shape[1] > count:  # each example uses the first ``count`` of its source
        source = apply(SLICE, source, index=(_FULL, slice(0, count)))
    return apply(op, _pad(input, len(shape)), mask, source)


MASKED_SELECT = defop(
    "masked_select",
    _masked_select,
    ("input", "mask"),
    (
        lambda g, input_shape, mask: apply(
            MASKED_SCATTER, g.new_zeros(xp.broadcast_shapes(input_shape, mask._data.shape)), mask, g
        ),
        None,
    ),
    jvp="linear",
    batch=_masked_select_batch,
    sized_by_values=True,
)
MASKED_SCATTER = defop(
    "masked_scatter",
    _masked_scatter,
    ("input", "mask", "source"),
    (lambda g, mask: where(mask, 0.0, g), None, _masked_scatter_source_grad),
    jvp="linear",
    batch=_masked_scatter_batch,
)

# ---- not differentiable ------------------------------------------------------------------------

NONZERO = defop(
    "nonzero",
    lambda input: xp.argwhere(input),
    ("input",),
    (None,),
    differentiable=False,
    batch=_dynamic("aten::nonzero"),
    sized_by_values=True,
)
# PyTorch runs argwhere under vmap one example at a time (it works when the counts agree).
ARGWHERE = _variant(NONZERO, batch=fallback)


def _unique(input, sorted, return_inverse, return_counts, dim):
    empty = xp.zeros(0, dtype=xp.int64)
    if dim is None:
        res = xp.unique(
            input.reshape(-1), return_inverse=return_inverse, return_counts=return_counts
        )
    else:
        res = xp.unique(input, return_inverse=return_inverse, return_counts=return_counts, axis=dim)
    res = res if isinstance(res, tuple) else (res,)
    values = res[0]
    inverse = res[1].astype(xp.int64) if return_inverse else empty
    if return_inverse and dim is None:
        inverse = inverse.reshape(input.shape)
    counts = res[-1].astype(xp.int64) if return_counts else empty
    return values, inverse.reshape(-1) if dim is not None else inverse, counts


def not_implemented_unique2(grads):
    raise NotImplementedError("the derivative for '_unique2' is not implemented.")


UNIQUE = defop(
    "unique",
    _unique,
    ("input",),
    (not_implemented_unique2,),
    n_outputs=3,
    backward_name="Unique2Backward0",
    batch=_dynamic("aten::_unique2"),
    sized_by_values=True,
)
UNIQUE_DIM = _variant(UNIQUE, "UniqueDimBackward0", batch=_dynamic("aten::unique_dim"))


def narrow(input, dim: int, start, length: int) -> Tensor:
    """The view of ``length`` elements from ``start`` along ``dim``."""
    shape = input._data.shape
    if not shape:
        raise RuntimeError("narrow() cannot be applied to a 0-dim tensor.")
    dim = normalize_dim(dim, len(shape), "narrow")
    start = int(start._data) if isinstance(start, Tensor) else int(start)
    size = shape[dim]
    if not -size <= start <= size:
        raise IndexError(
            f"start out of range (expected to be in range of [{-size}, {size}], but got {start})"
        )
    start %= max(size, 1) if start < 0 else size + 1
    if length < 0:
        raise RuntimeError("narrow(): length must be non-negative.")
    if start + length > size:
        raise RuntimeError(f"start ({start}) + length ({length}) exceeds dimension size ({size}).")
    return apply(SLICE, input, index=_along(dim, slice(start, start + length)))


def diff(input, n: int = 1, dim: int = -1, prepend=None, append=None) -> Tensor:
    """The n-th forward difference along ``dim`` (after joining prepend and append there)."""
    if input._data.ndim == 0:
        raise RuntimeError("diff expects input to be at least one-dimensional")
    if n < 0:
        raise RuntimeError(f"order must be non-negative but got {n}")
    dim = normalize_dim(dim, input._data.ndim, "diff")
    parts = [t for t in (prepend, input, append) if t is not None]
    if any(t._data.ndim != input._data.ndim for t in parts):
        raise RuntimeError("diff expects prepend or append to be the same dimension as input")
    out = cat(parts, dim) if len(parts) > 1 else input.clone()  # a copy even when n = 0
    for _ in range(n):
        length = out._data.shape[dim]
        if length == 0:
            break
        after, before = narrow(out, dim, 1, length - 1), narrow(out, dim, 0, length - 1)
        out = after ^ before if out._data.dtype.kind == "b" else after - before
    return out


def searchsorted(sorted_sequence, input, *, out_int32: bool = False, right: bool = False,
                 side: str | None = None, sorter=None) -> Tensor:
    """Where each value of input would go in the last dim of sorted_sequence to keep it sorted:
    before equal elements, or after them with ``right`` (or side='right')."""
    if side not in (None, "left", "right"):
        raise RuntimeError(f"torch.searchsorted(): side can only be 'left' or 'right' but got "
                           f"{side}")
    if side == "left" and right:
        raise RuntimeError("torch.searchsorted(): side and right can't be set to opposites, got "
                           "side of left while right was True")
    right = right or side == "right"
    seq = sorted_sequence.detach()
    values = input.detach() if isinstance(input, Tensor) else Tensor._wrap(xp.asarray(input),
                                                                            None, 0)
    if sorter is not None:
        seq = gather(seq, -1, sorter)
    if seq._data.ndim > 1 and seq._data.shape[:-1] != values._data.shape[:-1]:
        raise RuntimeError(
            "torch.searchsorted(): boundaries tensor should be 1 dimension or the first N-1 "
            "dimensions of boundaries tensor and input value tensor must match, but we got "
            f"boundaries tensor {list(seq._data.shape)} and input value tensor "
            f"{list(values._data.shape)}")
    if seq._data.ndim > 1:
        seq = unsqueeze(seq, -2)
    # Not a binary search: the count of boundaries below each value (nan sorts last, as in
    # PyTorch), in batched comparisons that vmap batches like any other op.
    values = unsqueeze(values, -1)
    below = (seq <= values) if right else (seq < values)
    out = (below | values.isnan()).sum(-1)
    return out.to(xp.int32) if out_int32 else out


def select(input, dim: int, index: int) -> Tensor:
    """The view at ``index`` along ``dim``, without that dim."""
    shape = input._data.shape
    if not shape:
        raise IndexError("select() cannot be applied to a 0-dim tensor.")
    dim = normalize_dim(dim, len(shape), "select")
    index = int(index)
    if not -shape[dim] <= index < shape[dim]:
        raise IndexError(
            f"select(): index {index} out of range for tensor of size "
            f"{list(shape)} at dimension {dim}"
        )
    return apply(SELECT, input, index=_along(dim, index) + (Ellipsis,))


# ---- public functions: gather, scatter and friends ---------------------------------------------

_TYPE_NAMES = {
    "float32": "Float",
    "float64": "Double",
    "float16": "Half",
    "int64": "Long",
    "int32": "Int",
    "int16": "Short",
    "int8": "Char",
    "uint8": "Byte",
    "bool": "Bool",
    "complex64": "ComplexFloat",
    "complex128": "ComplexDouble",
}


def _check_index_tensor(index, op: str, expected: str = "int64") -> None:
    if not isinstance(index, Tensor):
        raise TypeError(f"{op}(): argument 'index' must be Tensor, not {type(index).__name__}")
    if index._data.dtype.kind not in "iu":
        raise RuntimeError(f"{op}(): Expected dtype {expected} for index")


def _check_bounds(
    index, size: int, dim: int, *, negative: bool, error=RuntimeError, message: str | None = None
) -> None:
    index = physical(index)  # under vmap: every example's
    if not index.size:
        return
    low, high = int(index.min()), int(index.max())
    bad = high if high >= size else low if low < (-size if negative else 0) else None
    if bad is not None:
        raise error(
            message.format(bad)
            if message
            else f"index {bad} is out of bounds for dimension {dim} with size {size}"
        )


def _check_scatter(op: str, input, dim: int, index, src=None) -> int:
    """Validate a gather/scatter call in PyTorch's words; return the normalised dim."""
    _check_index_tensor(index, op)
    shape = input._data.shape
    dim = normalize_dim(dim, len(shape), op)
    ishape = index._data.shape
    if index._data.size == 0:
        return dim
    if max(len(ishape), 1) != max(len(shape), 1):
        side = "input" if op == "gather" else "self"
        raise RuntimeError(f"Index tensor must have the same number of dimensions as {side} tensor")
    sshape = src._data.shape if isinstance(src, Tensor) else None
    for d, n in enumerate(ishape):
        too_big = d != dim and n > shape[d]
        if op == "gather" and too_big:
            raise RuntimeError(
                f"Size does not match at dimension {d} expected index "
                f"{list(ishape)} to be no larger than self {list(shape)} apart "
                f"from dimension {dim}"
            )
        if too_big or (sshape is not None and len(sshape) == len(ishape) and n > sshape[d]):
            raise RuntimeError(
                f"Expected index {list(ishape)} to be no larger than self "
                f"{list(shape)} apart from dimension {dim} and to be no larger "
                f"size than src {list(sshape or ())}"
            )
    _check_bounds(index, shape[dim] if shape else 1, dim, negative=False)
    return dim


def _check_same_dtype(op: str, input, other, what: str = "src") -> None:
    if isinstance(other, Tensor) and other._data.dtype != input._data.dtype:
        raise RuntimeError(f"{op}(): Expected self.dtype to be equal to {what}.dtype")


def gather(input, dim: int, index, *, sparse_grad: bool = False) -> Tensor:
    """``out[i][j] = input[index[i][j]][j]`` along ``dim`` (index has input's number of dims)."""
    dim = _check_scatter("gather", input, dim, index)
    if index._data.size == 0:
        # PyTorch's answer for an empty index whatever its number of dims: empty, on the graph
        return reshape(reshape(input, -1)[:0], index._data.shape)
    return apply(GATHER, input, index, dim=dim)


def _scatter_call(input, dim, index, src, value, reduce, op: str) -> tuple:
    """(record, inputs, params) of a scatter call, checked."""
    if src is None and value is None:
        raise TypeError(f"{op}() missing 1 required argument: 'src' or 'value'")
    src = value if src is None else src
    dim = _check_scatter(op, input, dim, index, src)
    if reduce is not None:
        modes = {"add": "sum", "multiply": "prod"}
        if reduce not in modes:
            raise RuntimeError(
                f"{op}(): reduce argument must be either add or multiply, got {reduce}"
            )
        if not isinstance(src, Tensor):
            src = Tensor._wrap(xp.full(index._data.shape, src, dtype=input._data.dtype), None, 0)
        record = SCATTER_REDUCE if modes[reduce] == "sum" else SCATTER_REDUCE_NONLINEAR
        return record, (index, src), {"dim": dim, "reduce": modes[reduce], "include_self": True}
    if isinstance(src, Tensor):
        _check_same_dtype(op, input, src)
        return SCATTER, (index, src), {"dim": dim}
    return SCATTER_VALUE, (index, src), {"dim": dim}


def scatter(input, dim: int, index, src=None, *, value=None, reduce=None) -> Tensor:
    """A copy of input with ``src`` (a tensor or a number) written at ``index`` along ``dim``."""
    record, args, params = _scatter_call(input, dim, index, src, value, reduce, "scatter")
    return apply(record, input, *args, **params)


def _scatter_(self, dim: int, index, src=None, *, value=None, reduce=None) -> Tensor:
    record, args, params = _scatter_call(self, dim, index, src, value, reduce, "scatter_")
    return apply_inplace(record, self, *args, **params)


def scatter_add(input, dim: int, index, src) -> Tensor:
    """A copy of input with ``src`` added at ``index`` along ``dim`` (repeats accumulate)."""
    dim = _check_scatter("scatter_add", input, dim, index, src)
    _check_same_dtype("scatter_add", input, src)
    return apply(SCATTER_ADD, input, index, src, dim=dim)


def _scatter_add_(self, dim: int, index, src) -> Tensor:
    dim = _check_scatter("scatter_add_", self, dim, index, src)
    _check_same_dtype("scatter_add_", self, src)
    return apply_inplace(SCATTER_ADD, self, index, src, dim=dim)


def _scatter_reduce_call(input, dim, index, src, reduce, op) -> tuple:
    if reduce not in _REDUCE_UFUNC:
        raise RuntimeError(
            f"reduce argument must be either sum, prod, mean, amax or amin, got {reduce}"
        )
    dim = _check_scatter(op, input, dim, index, src)
    _check_same_dtype(op, input, src)
    return SCATTER_REDUCE if reduce in ("sum", "mean") else SCATTER_REDUCE_NONLINEAR, dim


def scatter_reduce(
    input, dim: int, index, src, reduce: str, *, include_self: bool = True
) -> Tensor:
    """A copy of input with ``src`` reduced into it at ``index`` (sum, prod, mean, amax, amin)."""
    record, dim = _scatter_reduce_call(input, dim, index, src, reduce, "scatter_reduce")
    return apply(record, input, index, src, dim=dim, reduce=reduce, include_self=include_self)


def _scatter_reduce_(
    self, dim: int, index, src, reduce: str, *, include_self: bool = True
) -> Tensor:
    record, dim = _scatter_reduce_call(self, dim, index, src, reduce, "scatter_reduce_")
    return apply_inplace(
        record, self, index, src, dim=dim, reduce=reduce, include_self=include_self
    )


def _check_index_vector(op: str, input, dim: int, index) -> int:
    _check_index_tensor(index, op, "int32 or int64")
    if index._data.ndim > 1:
        raise IndexError(f"{op}(): Index is supposed to be a vector")
    shape = input._data.shape
    dim = normalize_dim(dim, len(shape), op)
    if not shape and index._data.size > 1:
        raise RuntimeError(
            f"{op}(): Index to scalar can have only 1 value, got {index._data.size} value(s)"
        )
    return dim


def _check_in_self(index, input, dim: int) -> None:
    """index_select's and index_add's IndexError for an index outside ``input``'s ``dim``."""
    shape = input._data.shape
    _check_bounds(
        index,
        shape[dim] if shape else 1,
        dim,
        negative=False,
        error=IndexError,
        message="index out of range in self",
    )


def index_select(input, dim: int, index) -> Tensor:
    """The slices of input at the positions ``index`` (a vector) along ``dim``."""
    dim = _check_index_vector("index_select", input, dim, index)
    _check_in_self(index, input, dim)
    return apply(INDEX_SELECT, input, index, dim=dim)


def _index_source_call(op: str, input, dim: int, index, source) -> int:
    dim = _check_index_vector(op, input, dim, index)
    shape = input._data.shape
    if source._data.dtype != input._data.dtype:
        raise RuntimeError(
            f"{op}(): self ({_TYPE_NAMES.get(input._data.dtype.name)}) and source "
            f"({_TYPE_NAMES.get(source._data.dtype.name)}) must have the same "
            "scalar type"
        )
    sshape = source._data.shape
    k = index._data.size
    if shape and len(sshape) == len(shape) and sshape[dim] != k:
        raise RuntimeError(
            f"{op}(): Number of indices ({k}) should be equal to "
            f"source.size(dim): ({sshape[dim]}), for dim: {dim}"
        )
    return dim


def _index_add_call(op, input, dim, index, source):
    dim = _index_source_call(op, input, dim, index, source)
    _check_in_self(index, input, dim)
    return dim


def index_add(input, dim: int, index, source, *, alpha=1) -> Tensor:
    """A copy of input with ``alpha * source`` added at ``index`` along ``dim``."""
    dim = _index_add_call("index_add", input, dim, index, source)
    return apply(INDEX_ADD, input, index, source, dim=dim, alpha=alpha)


def _index_add_(self, dim: int, index, source, *, alpha=1) -> Tensor:
    dim = _index_add_call("index_add_", self, dim, index, source)
    return apply_inplace(INDEX_ADD, self, index, source, dim=dim, alpha=alpha)


def _index_copy_call(op, input, dim, index, source):
    dim = _index_source_call(op, input, dim, index, source)
    shape = input._data.shape
    size = shape[dim] if shape else 1
    _check_bounds(
        index,
        size,
        dim,
        negative=False,
        error=IndexError,
        message=f"index_copy_(): index {{}} is out of bounds for dimension {dim} with size {size}",
    )
    return dim


def index_copy(input, dim: int, index, source) -> Tensor:
    """A copy of input with the slices of ``source`` written at ``index`` along ``dim``."""
    dim = _index_copy_call("index_copy", input, dim, index, source)
    return apply(INDEX_COPY, input, index, source, dim=dim)


def _index_copy_(self, dim: int, index, source) -> Tensor:
    dim = _index_copy_call("index_copy_", self, dim, index, source)
    return apply_inplace(INDEX_COPY, self, index, source, dim=dim)


def _index_fill_call(op, input, dim, index, value):
    dim = _check_index_vector(op, input, dim, index)
    shape = input._data.shape
    _check_bounds(index, shape[dim] if shape else 1, dim, negative=True, error=IndexError)
    if isinstance(value, Tensor):
        if value._data.ndim:
            raise RuntimeError(
                f"index_fill_ only supports a 0-dimensional value tensor, but got "
                f"tensor with {value._data.ndim} dimension(s)."
            )
        return INDEX_FILL_TENSOR, dim
    return INDEX_FILL, dim


def index_fill(input, dim: int, index, value) -> Tensor:
    """A copy of input with ``value`` written at ``index`` along ``dim``."""
    record, dim = _index_fill_call("index_fill", input, dim, index, value)
    return apply(record, input, index, value, dim=dim)


def _index_fill_(self, dim: int, index, value) -> Tensor:
    record, dim = _index_fill_call("index_fill_", self, dim, index, value)
    return apply_inplace(record, self, index, value, dim=dim)


def _check_flat(index, numel: int) -> None:
    _check_index_tensor(index, "take")
    _check_bounds(
        index,
        numel,
        0,
        negative=True,
        error=IndexError,
        message=f"out of range: tried to access index {{}} on a tensor of {numel} elements.",
    )


def take(input, index) -> Tensor:
    """The elements of the flattened input at ``index`` (shaped like index)."""
    _check_flat(index, input._data.size)
    return apply(TAKE, input, index)


def _put_call(input, index, source):
    _check_flat(index, input._data.size)
    if source._data.size != index._data.size:
        raise IndexError(
            f"put_(): Expected source and index to have the same number of "
            f"elements, but got source.numel() = {source._data.size}, "
            f"index.numel() = {index._data.size}"
        )
    _check_same_dtype("put_", input, source, "source")


def put(input, index, source, accumulate: bool = False) -> Tensor:
    """A copy of input with ``source`` written (or added) at ``index`` of the flattened input."""
    _put_call(input, index, source)
    return apply(PUT, input, index, source, accumulate=accumulate)


def _put_(self, index, source, accumulate: bool = False) -> Tensor:
    _put_call(self, index, source)
    return apply_inplace(PUT, self, index, source, accumulate=accumulate)


def take_along_dim(input, indices, dim: int | None = None) -> Tensor:
    """gather along ``dim`` after broadcasting input and indices in the other dims."""
    _check_index_tensor(indices, "take_along_dim")
    if dim is None:
        return gather(reshape(input, -1), 0, reshape(indices, -1))
    shape, ishape = input._data.shape, indices._data.shape
    dim = normalize_dim(dim, len(shape), "take_along_dim")
    # with a dim, unlike gather, take_along_dim counts negative indices from the end
    if not indices.is_meta:  # (a meta index has no values to wrap)
        indices = where(indices < 0, indices + (shape[dim] if shape else 1), indices)
    if len(ishape) != len(shape):
        raise RuntimeError(
            f"torch.take_along_dim(): input and indices should have the same "
            f"number of dimensions, but got {len(shape)} dimensions for input, "
            f"and {len(ishape)} dimensions for indices"
        )
    rest = _broadcast_shape(
        [shape[:dim] + (1,) + shape[dim + 1 :], ishape[:dim] + (1,) + ishape[dim + 1 :]]
    )
    want = rest[:dim] + (shape[dim],) + rest[dim + 1 :]
    iwant = rest[:dim] + (ishape[dim],) + rest[dim + 1 :]
    if want != shape:
        input = expand(input, want)
    if iwant != ishape:
        indices = expand(indices, iwant)
    return gather(input, dim, indices)


def _check_mask(op: str, mask) -> None:
    if not isinstance(mask, Tensor) or mask._data.dtype != xp.bool_:
        raise RuntimeError(f"{op}: expected BoolTensor for mask")


def masked_select(input, mask) -> Tensor:
    """The elements of input where the (broadcast) mask is True, as a 1-d tensor."""
    _check_mask("masked_select", mask)
    _broadcast_shape([input._data.shape, mask._data.shape])
    return apply(MASKED_SELECT, input, mask)


def masked_scatter(input, mask, source) -> Tensor:
    """A copy of input with the elements of ``source``, in order, where mask is True."""
    _check_mask("masked_scatter", mask)
    _check_same_dtype("masked_scatter", input, source, "source")
    return apply(MASKED_SCATTER, input, mask, source)


def _masked_scatter_(self, mask, source) -> Tensor:
    _check_mask("masked_scatter_", mask)
    _check_same_dtype("masked_scatter_", self, source, "source")
    return apply_inplace(MASKED_SCATTER, self, mask, source)


def _index_put_args(input, indices, values) -> tuple:
    view_op, basic, advanced = _parse_key(tuple(indices), input._data.shape)
    if basic is not None or advanced is None:
        raise IndexError("index_put_(): indices must be a tuple of index tensors")
    if not isinstance(values, Tensor):
        values = Tensor._wrap(xp.asarray(values, dtype=input._data.dtype), None, 0)
    return values, advanced


def index_put(input, indices, values, accumulate: bool = False) -> Tensor:
    """A copy of input with ``values`` put (or added) at the tensor indices ``indices``."""
    values, index = _index_put_args(input, indices, values)
    return apply(INDEX_PUT, input, values, index=index, accumulate=accumulate)


def _index_put_(self, indices, values, accumulate: bool = False) -> Tensor:
    values, index = _index_put_args(self, indices, values)
    return apply_inplace(INDEX_PUT, self, values, index=index, accumulate=accumulate)


_NONZERO_NUMPY = ("Batching rule not implemented for aten::nonzero_numpy. We could not generate "
                  "a fallback.")


def nonzero(input, *, as_tuple: bool = False):
    """The indices of the non-zero elements: an (n, ndim) tensor, or one tensor per dim."""
    if as_tuple:  # one tensor per dim, read from the values: vmap refuses
        input._needs_values(RuntimeError, _NONZERO_NUMPY)
    out = apply(NONZERO, input)
    if not as_tuple:
        return out
    if input._data.ndim == 0:
        return (Tensor._wrap(xp.zeros(out._data.shape[0], dtype=xp.int64), None, 0),)
    return tuple(
        Tensor._wrap(xp.ascontiguousarray(out._data[:, d]), None, 0)
        for d in range(input._data.ndim)
    )


def argwhere(input) -> Tensor:
    """The indices of the non-zero elements, as an (n, ndim) tensor."""
    return apply(ARGWHERE, input)


def unique(
    input,
    sorted: bool = True,
    return_inverse: bool = False,  # noqa: A002
    return_counts: bool = False,
    dim: int | None = None,
):
    """The sorted distinct elements (or slices along dim), optionally with the inverse indices
    and the counts."""
    if dim is not None:
        dim = normalize_dim(dim, input._data.ndim, "unique")
    values, inverse, counts = apply(
        UNIQUE if dim is None else UNIQUE_DIM,
        input,
        sorted=sorted,
        return_inverse=return_inverse,
        return_counts=return_counts,
        dim=dim,
    )
    out = (values,) + ((inverse,) if return_inverse else ()) + ((counts,) if return_counts else ())
    return out[0] if len(out) == 1 else out


def repeat_interleave(input, repeats=None, dim=None, *, output_size=None) -> Tensor:
    """Repeat each element (or slice along ``dim``) ``repeats`` times, in place order."""
    if repeats is None:  # repeat_interleave(counts): arange(len(counts)) repeated by counts
        counts = input._data
        if counts.ndim != 1 or counts.dtype.kind not in "iu":
            raise RuntimeError("repeat_interleave: repeats must be a 1-dim tensor of integers")
        return Tensor._wrap(xp.repeat(xp.arange(counts.shape[0]), counts), None, 0)
    if dim is None:
        input = flatten(input)
        dim = 0
    shape = input._data.shape
    dim = normalize_dim(dim, len(shape), "repeat_interleave")
    if isinstance(repeats, Tensor) and repeats._data.ndim == 0:
        repeats = int(repeats._data)
    if isinstance(repeats, int):
        if repeats < 0:
            raise RuntimeError("repeats can not be negative")
        if not shape:
            return repeat(input, repeats)
        wide = expand(unsqueeze(input, dim + 1), shape[: dim + 1] + (repeats,) + shape[dim + 1 :])
        return view(contiguous(wide), shape[:dim] + (shape[dim] * repeats,) + shape[dim + 1 :])
    counts = repeats._data
    if counts.ndim > 1:
        raise RuntimeError("repeats must be 0-dim or 1-dim tensor")
    n = shape[dim] if shape else 1
    if counts.shape[0] == 1:
        counts = xp.broadcast_to(counts, (n,))
    elif counts.shape[0] != n:
        raise RuntimeError(
            f"repeats must have the same size as input along dim, but got "
            f"repeats.size(0) = {counts.shape[0]} and input.size({dim}) = {n}"
        )
    if counts.size and counts.min() < 0:
        raise RuntimeError("repeats can not be negative")
    index = Tensor._wrap(xp.repeat(xp.arange(n), counts), None, 0)
    return index_select(input, dim, index)


# ---- public functions: joining and splitting ---------------------------------------------------


def tensor_split(input, indices_or_sections=None, dim: int = 0, *, indices=None, sections=None,
                 tensor_indices_or_sections=None) -> tuple:
    """Split into views at the given indices, or into ``sections`` nearly equal parts."""
    shape = input._data.shape
    dim = normalize_dim(dim, len(shape), "tensor_split")
    n = shape[dim]
    arg = next((a for a in (indices_or_sections, indices, sections, tensor_indices_or_sections)
                if a is not None), None)
    if arg is None:
        raise TypeError("tensor_split() missing 1 required positional argument: "
                        "'indices_or_sections'")
    if isinstance(arg, Tensor):
        arg = int(arg._data) if arg._data.ndim == 0 else arg._data.tolist()
    if isinstance(arg, int):
        if arg <= 0:
            raise RuntimeError(f"number of sections must be larger than 0, got {arg}")
        size, extra = divmod(n, arg)
        sizes = [size + 1] * extra + [size] * (arg - extra)
        cuts = [sum(sizes[:i]) for i in range(1, arg)]
    else:
        cuts = [int(c) for c in arg]
    edges = [0] + [min(max(c if c >= 0 else c + n, 0), n) for c in cuts] + [n]
    return tuple(narrow(input, dim, a, max(b - a, 0)) for a, b in zip(edges, edges[1:]))


FUNCTIONS = {
    f.__name__: f
    for f in (
        repeat_interleave,
        tensor_split,
        narrow,
        diff,
        searchsorted,
        select,
        gather,
        scatter,
        scatter_add,
        scatter_reduce,
        index_select,
        index_add,
        index_copy,
        index_fill,
        take,
        put,
        take_along_dim,
        masked_select,
        masked_scatter,
        index_put,
        nonzero,
        argwhere,
        unique,
    )
}

METHODS = dict(
    FUNCTIONS,
    __getitem__=getitem,
    __setitem__=setitem,
    scatter_=_scatter_,
    scatter_add_=_scatter_add_,
    scatter_reduce_=_scatter_reduce_,
    index_add_=_index_add_,
    index_copy_=_index_copy_,
    index_fill_=_index_fill_,
    index_put_=_index_put_,
    put_=_put_,
    masked_scatter_=_masked_scatter_,
)
del METHODS["searchsorted"]  # a function only, as in PyTorch
