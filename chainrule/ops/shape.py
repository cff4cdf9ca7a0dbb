"""Shape and indexing ops: views, joins and splits, rearranging copies, indexing, gather/scatter.

A view record (``view=True``) shares its input's storage and version counter and remembers the
step that made it, so an in-place op on a view rebases the base's history (VIEW_SCATTER).
Indexing reads keys the way PyTorch does, not NumPy: integers, slices and None are applied first
as a view, then the tensor indices index that view (``x[0, :, [1, 2]]`` has shape
``(x.shape[1], 2)``).
"""

from __future__ import annotations

import functools
import math

from .._backend import as_dtype, dtype, xp
from .._dispatch import _check_inplace, _link_view, apply, apply_inplace, bump_version
from ..autograd.forward_ad import get_tangent, set_tangent
from ..autograd.forward_ad import state as forward_state
from ..autograd.grad_mode import state
from ..tensor import Tensor
from ._registry import Op, defop
from ._shapes import normalize_dim, size_tuple, sum_to
from .elementwise import where

_ndarray = xp.ndarray
_FULL = slice(None)


def _variant(
    op: Op,
    backward_name: str | None = None,
    *,
    forward=None,
    inputs=None,
    vjp=None,
    n_outputs: int | None = None,
    jvp=None,
) -> Op:
    """``op`` under another of PyTorch's node names, or with another arity or other rules. Not
    registered: it calls ``op``'s forward and rules (as they are at call time), so it is the same
    record, listed and instrumented once."""
    if vjp is None:
        vjp = tuple(None if rule is None else _delegate(op, i) for i, rule in enumerate(op.vjp))
    return Op(
        op.name,
        forward or _delegate(op),
        inputs or op.inputs,
        vjp,
        jvp=jvp or op.jvp,
        backward_name=backward_name or op.backward_name,
        promote=op.promote,
        float_out=op.float_out,
        differentiable=op.differentiable,
        view=op.view,
        n_outputs=n_outputs or op.n_outputs,
    )


def _delegate(op: Op, rule: int | None = None):
    """A function calling ``op``'s forward (or VJP rule number ``rule``), with its signature."""
    target = op.forward if rule is None else op.vjp[rule]

    @functools.wraps(target)
    def call(*args, **params):
        return (op.forward if rule is None else op.vjp[rule])(*args, **params)

    return call


def _along(dim: int, index) -> tuple:
    """The NumPy index of ``index`` along ``dim``."""
    return (_FULL,) * dim + (index,)


def _prefix(shape: tuple) -> tuple:
    """The NumPy index of the leading block of ``shape``."""
    return tuple(slice(0, n) for n in shape)


# ---- views and broadcasting --------------------------------------------------------------------

VIEW = defop(
    "view",
    lambda input, shape: input.reshape(shape),
    ("input",),
    (lambda g, input_shape: g.reshape(input_shape),),
    view=True,
    jvp="linear",
)
# reshape when no view can express it: a copy (PyTorch's clone + _unsafe_view).
UNSAFE_VIEW = _variant(VIEW, "UnsafeViewBackward0")
TRANSPOSE = defop(
    "transpose",
    lambda input, dim0, dim1: xp.swapaxes(input, dim0, dim1) if input.ndim else input[...],
    ("input",),
    (lambda g, dim0, dim1: g.transpose(dim0, dim1),),
    view=True,
    jvp="linear",
)
T = defop("t", lambda input: input.T, ("input",), (lambda g: apply(T, g),), view=True, jvp="linear")
PERMUTE = defop(
    "permute",
    lambda input, dims: xp.transpose(input, dims),
    ("input",),
    (lambda g, dims: g.permute(tuple(xp.argsort(dims).tolist())),),
    view=True,
    jvp="linear",
)
EXPAND = defop(
    "expand",
    lambda input, shape: xp.broadcast_to(input, shape),
    ("input",),
    (lambda g, input_shape: g.sum_to_size(input_shape),),
    view=True,
    jvp="linear",
)
SUM_TO_SIZE = defop(
    "sum_to_size",
    lambda input, shape: sum_to(input, shape),
    ("input",),
    (lambda g, input_shape: g.expand(input_shape),),
    jvp="linear",
)
UNSQUEEZE = defop(
    "unsqueeze",
    lambda input, dim: xp.expand_dims(input, dim),
    ("input",),
    (lambda g, dim: g.squeeze(dim),),
    view=True,
    jvp="linear",
)
SQUEEZE = defop(
    "squeeze",
    lambda input, dim: xp.squeeze(input, dim),
    ("input",),
    (lambda g, input_shape: g.reshape(input_shape),),
    view=True,
    jvp="linear",
)
SQUEEZE_DIM = _variant(SQUEEZE, "SqueezeBackward1")
SQUEEZE_DIMS = _variant(SQUEEZE, "SqueezeBackward2")
ALIAS = defop(
    "alias", lambda input: input[...], ("input",), (lambda g: g,), view=True, jvp="linear"
)
# The in-place metadata ops (x.t_(), x.unsqueeze_(0), ...) are recorded under their own names.
INPLACE_VIEWS = {
    "unsqueeze_": _variant(UNSQUEEZE, "UnsqueezeBackward1"),
    "squeeze_": _variant(SQUEEZE, "SqueezeBackward3"),
    "squeeze_dim_": _variant(SQUEEZE, "SqueezeBackward4"),
    "squeeze_dims_": _variant(SQUEEZE, "SqueezeBackward5"),
    "t_": _variant(T, "TBackward1"),
    "transpose_": _variant(TRANSPOSE, "TransposeBackward1"),
}

# ---- copies ------------------------------------------------------------------------------------

CLONE = defop(
    "clone",
    lambda input, order="K": input.copy(order=order),
    ("input",),
    (lambda g: g,),
    jvp="linear",
)
TO_COPY = defop(
    "to_copy", lambda input, dtype: input.astype(dtype), ("input",), (lambda g: g,), jvp="linear"
)

# ---- rearranging copies ------------------------------------------------------------------------

FLIP = defop(
    "flip",
    lambda input, dims: xp.flip(input, dims).copy() if dims else input.copy(),
    ("input",),
    (lambda g, dims: apply(FLIP, g, dims=dims),),
    jvp="linear",
)
ROLL = defop(
    "roll",
    lambda input, shifts, dims: xp.roll(input, shifts, dims),
    ("input",),
    (lambda g, shifts, dims: apply(ROLL, g, shifts=tuple(-s for s in shifts), dims=dims),),
    jvp="linear",
)
ROT90 = defop(
    "rot90",
    lambda input, k, dims: xp.rot90(input, k, dims).copy(),
    ("input",),
    (lambda g, k, dims: apply(ROT90, g, k=-k % 4, dims=dims),),
    jvp="linear",
)


def _repeat_grad(g, input_shape, repeats):
    # out viewed as (r0, s0, r1, s1, ...) holds the copies; sum them over the r axes.
    padded = (1,) * (len(repeats) - len(input_shape)) + tuple(input_shape)
    split = tuple(n for pair in zip(repeats, padded) for n in pair)
    copies = tuple(range(0, 2 * len(repeats), 2))
    return g.reshape(split).sum(dim=copies).reshape(input_shape)


REPEAT = defop(
    "repeat",
    lambda input, repeats: xp.tile(input, repeats),
    ("input",),
    (_repeat_grad,),
    jvp="linear",
)

# ---- joining and splitting ---------------------------------------------------------------------


def _cat(*tensors, dim, bounds):
    kept = [t for t, b in zip(tensors, bounds) if b is not None]
    if not kept:  # only legacy empty tensors: an empty result of the promoted dtype
        return xp.empty((0,), dtype=tensors[0].dtype)
    return xp.concatenate(kept, axis=dim)


def _cat_rule(i: int):
    def rule(g, dim, bounds):
        if bounds[i] is None:  # a skipped legacy empty tensor of shape (0,)
            return g.new_zeros((0,))
        return apply(SLICE, g, index=_along(dim, slice(*bounds[i])))

    return rule


def _stack_rule(i: int):
    def rule(g, dim):
        return apply(SELECT, g, index=_along(dim, i) + (Ellipsis,))

    return rule


CAT = defop("cat", _cat, ("tensors0",), (_cat_rule(0),), promote=True, jvp="linear")
STACK = defop(
    "stack",
    lambda *tensors, dim: xp.stack(tensors, axis=dim),
    ("tensors0",),
    (_stack_rule(0),),
    promote=True,
    jvp="linear",
)
_ARITY: dict = {}


def _n_ary(op: Op, rule, n: int) -> Op:
    """``op`` taking ``n`` tensors (the registry holds its one-tensor form)."""
    if n == 1:
        return op
    key = (op.name, n)
    if key not in _ARITY:
        _ARITY[key] = _variant(
            op,
            inputs=tuple(f"tensors{i}" for i in range(n)),
            vjp=(_delegate(op, 0),) + tuple(rule(i) for i in range(1, n)),
        )
    return _ARITY[key]


def _split(input, dim, bounds):
    return tuple(input[_along(dim, slice(a, b))] for a, b in bounds)


def _zero_pieces(grads: tuple, shapes) -> list:
    """The outputs' gradients, with zeros for those that got none."""
    like = next(g for g in grads if g is not None)
    return [g if g is not None else like.new_zeros(s) for g, s in zip(grads, shapes)]


def _split_grad(grads, dim, bounds):
    like = next(g for g in grads if g is not None).shape
    shapes = [like[:dim] + (b - a,) + like[dim + 1 :] for a, b in bounds]
    return _cat_tensors(_zero_pieces(grads, shapes), dim)


def _unbind(input, dim):
    return tuple(input[_along(dim, i) + (Ellipsis,)] for i in range(input.shape[dim]))


def _unbind_grad(grads, dim):
    like = next(g for g in grads if g is not None).shape
    pieces = _zero_pieces(grads, [like] * len(grads))
    return apply(_n_ary(STACK, _stack_rule, len(pieces)), *pieces, dim=dim)


# Multi-output views: linked to their input by hand (see _link_pieces), so view=False here.
SPLIT = defop("split", _split, ("input",), (_split_grad,), n_outputs=2, jvp="linear")
SPLIT_WITH_SIZES = _variant(SPLIT, "SplitWithSizesBackward0")
UNBIND = defop("unbind", _unbind, ("input",), (_unbind_grad,), n_outputs=2, jvp="linear")


def _pieces_op(op: Op, n: int) -> Op:
    """``op`` with ``n`` outputs (one output: a single array, whose rule reads ``g``)."""
    if n == op.n_outputs:
        return op
    key = (op.backward_name, n)
    if key not in _ARITY:
        if n == 1:
            forward = _delegate(op)
            single = (lambda g: g) if op.name == "split" else (lambda g, dim: g.unsqueeze(dim))
            _ARITY[key] = _variant(
                op,
                n_outputs=1,
                vjp=(single,),
                forward=lambda input, **params: forward(input, **params)[0],
            )
        else:
            _ARITY[key] = _variant(op, n_outputs=n)
    return _ARITY[key]


def _multi_view(input, index, output_nr, function):
    return input[index]


# The view step of an output of split, chunk or unbind: PyTorch refuses in-place writes to those
# outputs when they are recorded (VIEW_SCATTER raises on seeing it).
_MULTI_VIEW = Op(
    "slice",
    _multi_view,
    ("input",),
    (lambda g, input_shape, index: apply(INDEX_BACKWARD, g, index=index, shape=input_shape),),
    view=True,
    jvp="linear",
    backward_name="SliceBackward0",
)


def _link_pieces(outputs, input: Tensor, indices, function: str) -> None:
    for nr, (out, index) in enumerate(zip(outputs, indices)):
        extra = out._extra  # _link_view replaces it: keep the tangent
        _link_view(out, input, _MULTI_VIEW, {"index": index, "output_nr": nr, "function": function})
        if extra:
            out._extra = {**extra, **out._extra}


# ---- indexing ----------------------------------------------------------------------------------


def _getitem(input, index):
    return input[index]


def _index_backward(grad, index, shape):
    out = xp.zeros(shape, dtype=grad.dtype)
    if _is_basic(index) or not any(
        type(k) is _ndarray and k.dtype.kind != "b" for k in index
    ):  # no integer array: no position is hit twice, a plain write suffices
        out[index] = grad
    else:
        xp.add.at(out, index, grad)
    return out


def _is_basic(index) -> bool:
    return all(k is None or k is Ellipsis or type(k) is slice or type(k) is int for k in index)


def _take_index(g, index):
    return apply(SLICE if _is_basic(index) else INDEX, g, index=index)


INDEX_BACKWARD = defop("index_backward", _index_backward, ("grad",), (_take_index,), jvp="linear")


def _getitem_grad(g, input_shape, index):
    return apply(INDEX_BACKWARD, g, index=index, shape=input_shape)


SELECT = defop("select", _getitem, ("input",), (_getitem_grad,), view=True, jvp="linear")
SLICE = defop("slice", _getitem, ("input",), (_getitem_grad,), view=True, jvp="linear")
# x[None], x[0, None]: a basic index whose last step is an unsqueeze.
SLICE_UNSQUEEZE = _variant(SLICE, "UnsqueezeBackward0")
INDEX = defop("index", _getitem, ("input",), (_getitem_grad,), jvp="linear")


def _index_put(input, values, index, accumulate):
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


def _index_put_input_grad(g, index, accumulate):
    return g if accumulate else apply(INDEX_PUT, g, 0.0, index=index, accumulate=False)


INDEX_PUT = defop(
    "index_put",
    _index_put,
    ("input", "values"),
    (_index_put_input_grad, lambda g, index: apply(INDEX, g, index=index)),
    jvp=lambda t_input, t_values, input, index, accumulate: apply(
        INDEX_PUT,
        t_input if t_input is not None else input.new_zeros(input.shape),
        t_values if t_values is not None else 0.0,
        index=index,
        accumulate=accumulate,
    ),
)


def _sequence_as_tuple(key: list) -> bool:
    # PyTorch (like old NumPy) reads a short list holding slices, None, Ellipsis, tensors or
    # sequences as a tuple of indices.
    return len(key) < 32 and any(
        k is None or k is Ellipsis or isinstance(k, (slice, list, tuple, Tensor, _ndarray))
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
        if isinstance(k, (Tensor, _ndarray, list)):
            k = _index_array(k)
        elif isinstance(k, (bool, xp.bool_)):
            k = xp.asarray(k)
        elif not (k is None or k is Ellipsis or type(k) is slice or isinstance(k, int)):
            if hasattr(k, "__index__") and not isinstance(k, float):
                k = k.__index__()
            else:
                raise IndexError(_BAD_INDEX.format(type(k).__name__))
        if k is None or k is Ellipsis:
            pass
        elif type(k) is _ndarray and k.dtype.kind == "b":
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
    if not recording:
        target = input._data if basic is None else input._data[basic]
        v = value._data if isinstance(value, Tensor) else value
        if advanced is None:
            v = _value_for(value, target.ndim)
            target[...] = v._data if isinstance(v, Tensor) else v
        else:
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
        _copy_(target, _value_for(value, target._data.ndim))
    else:
        apply_inplace(INDEX_PUT, target, value, index=advanced, accumulate=False)


# ---- gather and scatter ------------------------------------------------------------------------


def _on_vectors(forward):
    """Run an index forward on a 0-d input as on a one-element vector (PyTorch's convention)."""

    def run(input, *args, **params):
        if input.ndim:
            return forward(input, *args, **params)
        args = [a.reshape(-1) if type(a) is _ndarray else a for a in args]
        return forward(input.reshape(1), *args, **params).reshape(())

    return run


def _mesh(index, dim: int) -> tuple:
    """The NumPy index of ``input[i0, .., index[i0, .., ik], .., ik]`` for every position."""
    mesh = list(xp.indices(index.shape, sparse=True))
    mesh[dim] = index
    return tuple(mesh)


def _gather(input, index, dim):
    if not input.ndim:  # every index is 0 (checked): copies of the one element
        return xp.full(index.shape, input, dtype=input.dtype)
    return xp.take_along_axis(
        input[_prefix(index.shape[:dim]) + (_FULL,) + _prefix(index.shape[dim + 1 :])],
        index,
        axis=dim,
    )


@_on_vectors
def _scatter(input, index, src, dim):
    out = input.copy()
    out[_mesh(index, dim)] = src[_prefix(index.shape)] if type(src) is _ndarray else src
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
)
SCATTER_ADD = defop(
    "scatter_add",
    _scatter_add,
    ("input", "index", "src"),
    (lambda g: g, None, _src_grad),
    jvp="linear",
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
    picked = apply(MASKED_SELECT, g, mask)
    missing = math.prod(source_shape) - picked._data.size
    if missing:
        picked = _cat_tensors([picked, picked.new_zeros((missing,))], 0)
    return picked.reshape(source_shape)


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
)
MASKED_SCATTER = defop(
    "masked_scatter",
    _masked_scatter,
    ("input", "mask", "source"),
    (lambda g, mask: where(mask, 0.0, g), None, _masked_scatter_source_grad),
    jvp="linear",
)

# ---- not differentiable ------------------------------------------------------------------------

NONZERO = defop(
    "nonzero", lambda input: xp.argwhere(input), ("input",), (None,), differentiable=False
)


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
)
UNIQUE_DIM = _variant(UNIQUE, "UniqueDimBackward0")

# ---- in-place through views --------------------------------------------------------------------

_MULTI_VIEW_MESSAGE = (
    "Output {} of {} is a view and is being modified inplace. This view is the output of a "
    "function that returns multiple views. Such functions do not allow the output views to be "
    "modified inplace. You should replace the inplace operation by an out-of-place one."
)


def _replay_arrays(array, steps):
    for op, params in steps:
        array = op.forward(array, **params)
    return array


def _view_scatter(input, src, steps):
    for op, params in steps:
        if op is _MULTI_VIEW:
            raise RuntimeError(_MULTI_VIEW_MESSAGE.format(params["output_nr"], params["function"]))
    out = input.copy(order="K")  # keep the layout, so the steps are views of the copy too
    view = _replay_arrays(out, steps)
    if view.base is not out and view is not out:
        raise RuntimeError("view_scatter: a view step did not give a view of the base's copy")
    view[...] = src
    return out


def _replay(g, steps):
    for op, params in steps:
        g = apply(op, g, **params)
    return g


VIEW_SCATTER = defop(
    "view_scatter",
    _view_scatter,
    ("input", "src"),
    (lambda g, steps: apply(VIEW_SCATTER, g, 0.0, steps=steps), lambda g, steps: _replay(g, steps)),
    backward_name="torch::autograd::CopySlices",  # PyTorch's name() of the node
    jvp="linear",
)


def _fill_(self, value) -> Tensor:
    return apply_inplace(FILL_TENSOR if isinstance(value, Tensor) else FILL, self, value)


FILL = defop(
    "fill",
    lambda input, value: xp.full_like(input, value),
    ("input", "value"),
    (lambda g: g.new_zeros(g.shape), lambda g: g.sum()),
    backward_name="FillBackward2",
    jvp=lambda t_value, out: (
        out.new_zeros(out.shape) if t_value is None else t_value.expand(out.shape)
    ),
)
FILL_TENSOR = _variant(FILL, "FillBackward3")
ZERO_ = _variant(FILL, "ZeroBackward0")


def _zero_(self) -> Tensor:
    return apply_inplace(ZERO_, self, 0)


def _copy_(self, src, non_blocking: bool = False) -> Tensor:
    return apply_inplace(COPY, self, src)


COPY = defop(
    "copy",
    lambda input, src: xp.broadcast_to(src, input.shape).astype(input.dtype),
    ("input", "src"),
    (lambda g: g.new_zeros(g.shape), lambda g: g),
    backward_name="torch::autograd::CopyBackwards",
    jvp="linear",
)


# ---- public functions: views -------------------------------------------------------------------


def _infer_shape(shape: tuple, numel: int) -> tuple:
    """``shape`` with its -1 resolved; RuntimeError in PyTorch's words if it cannot hold numel."""
    if shape.count(-1) > 1:
        raise RuntimeError("only one dimension can be inferred")
    for s in shape:
        if s < -1:
            raise RuntimeError(f"invalid shape dimension {s}")
    known = math.prod(s for s in shape if s != -1)
    if -1 in shape:
        if known == 0 or numel % known:
            raise RuntimeError(f"shape '{list(shape)}' is invalid for input of size {numel}")
        return tuple(numel // known if s == -1 else s for s in shape)
    if known != numel:
        raise RuntimeError(f"shape '{list(shape)}' is invalid for input of size {numel}")
    return shape


def _viewable(array, shape: tuple) -> bool:
    if array.flags.c_contiguous:
        return True
    try:
        xp.reshape(array, shape, copy=False)
    except ValueError:
        return False
    return True


def view(input, *shape) -> Tensor:
    """The same data with a new shape (one dim may be -1), or its bytes read as another dtype."""
    if len(shape) == 1 and isinstance(shape[0], (dtype, str, type)):
        return _view_dtype(input, as_dtype(shape[0]))
    shape = _infer_shape(size_tuple(shape), input._data.size)
    if not _viewable(input._data, shape):
        raise RuntimeError(
            "view size is not compatible with input tensor's size and stride (at least one "
            "dimension spans across two contiguous subspaces). Use .reshape(...) instead."
        )
    return apply(VIEW, input, shape=shape)


def _view_dtype(input, to) -> Tensor:
    """input's bytes read as dtype ``to`` (the last dim rescaled): shared storage, outside the
    graph (as in PyTorch, also for input's own dtype)."""
    data = input._data
    if to.itemsize != data.itemsize and not (data.ndim and data.strides[-1] == data.itemsize):
        raise RuntimeError(
            f"self.stride(-1) must be 1 to view {input.dtype} as {to} (different element sizes), "
            "or self.dim() must be 0 for the same size"
        )
    out = Tensor._wrap(data.view(to.np), None, 0)
    if input._version is None:
        input._version = [0]
    out._version = input._version
    return out


def reshape(input, *shape) -> Tensor:
    """The data with a new shape: a view when possible, else a copy."""
    shape = _infer_shape(size_tuple(shape), input._data.size)
    return apply(VIEW if _viewable(input._data, shape) else UNSAFE_VIEW, input, shape=shape)


def ravel(input) -> Tensor:
    """The elements as a 1-d tensor (a view of input, or of a contiguous copy)."""
    return view(contiguous(input), -1)


def view_as(input, other) -> Tensor:
    """``input.view(other.shape)``."""
    return view(input, other._data.shape)


def reshape_as(input, other) -> Tensor:
    """``input.reshape(other.shape)``."""
    return reshape(input, other._data.shape)


def flatten(input, start_dim: int = 0, end_dim: int = -1) -> Tensor:
    """Merge dims start_dim..end_dim into one."""
    shape = input._data.shape
    if not shape:
        return reshape(input, 1)
    start = normalize_dim(start_dim, len(shape), "flatten")
    end = normalize_dim(end_dim, len(shape), "flatten")
    if start > end:
        raise RuntimeError("flatten() has invalid args: start_dim cannot come after end_dim")
    if start == end:
        return input
    return reshape(input, shape[:start] + (math.prod(shape[start : end + 1]),) + shape[end + 1 :])


def unflatten(input, dim: int, sizes) -> Tensor:
    """Split dim ``dim`` into the dims ``sizes`` (one may be -1)."""
    shape = input._data.shape
    dim = normalize_dim(dim, len(shape), "unflatten")
    sizes = tuple(int(s) for s in sizes)
    if not sizes:
        raise RuntimeError("unflatten: sizes must be non-empty")
    try:
        sizes = _infer_shape(sizes, shape[dim])
    except RuntimeError:
        if sizes.count(-1) > 1:
            raise RuntimeError("unflatten: only one dimension can be inferred") from None
        raise RuntimeError(
            f"unflatten: Provided sizes {list(sizes)} don't multiply up to the size of dim "
            f"{dim} ({shape[dim]}) in the input tensor"
        ) from None
    return reshape(input, shape[:dim] + sizes + shape[dim + 1 :])


def transpose(input, dim0: int, dim1: int) -> Tensor:
    """Swap two dims."""
    ndim = input._data.ndim
    return apply(
        TRANSPOSE,
        input,
        dim0=normalize_dim(dim0, ndim, "transpose"),
        dim1=normalize_dim(dim1, ndim, "transpose"),
    )


def t(input) -> Tensor:
    """Transpose a tensor of at most 2 dims (0-d and 1-d tensors are returned as views)."""
    if input._data.ndim > 2:
        raise RuntimeError(
            f"t() expects a tensor with <= 2 dimensions, but self is {input._data.ndim}D"
        )
    return apply(T, input)


def permute(input, *dims) -> Tensor:
    """Reorder the dims."""
    dims = size_tuple(dims)
    ndim = input._data.ndim
    if len(dims) != ndim:
        raise RuntimeError(
            f"permute(sparse_coo): number of dimensions in the tensor input does "
            f"not match the length of the desired ordering of dimensions i.e. "
            f"input.dim() = {ndim} is not equal to len(dims) = {len(dims)}"
        )
    dims = tuple(normalize_dim(d, ndim, "permute") for d in dims)
    if len(set(dims)) != ndim:
        raise RuntimeError("permute(): duplicate dims are not allowed.")
    return apply(PERMUTE, input, dims=dims)


def movedim(input, source, destination) -> Tensor:
    """Move the dims ``source`` to the positions ``destination``; the others keep their order."""
    src = (source,) if isinstance(source, int) else tuple(source)
    dst = (destination,) if isinstance(destination, int) else tuple(destination)
    if len(src) != len(dst):
        raise RuntimeError(
            f"movedim: Invalid source or destination dims: source ({list(src)} dims) should "
            f"contain the same number of dims as destination ({list(dst)} dims)"
        )
    ndim = input._data.ndim
    src = tuple(normalize_dim(d, ndim, "movedim") for d in src)
    dst = tuple(normalize_dim(d, ndim, "movedim") for d in dst)
    for name, dims in (("source", src), ("destination", dst)):
        if len(set(dims)) != len(dims):
            raise RuntimeError(f"movedim: repeated dim in `{name}` ({list(dims)})")
    order = [-1] * ndim
    for s, d in zip(src, dst):
        order[d] = s
    rest = iter(d for d in range(ndim) if d not in src)
    return apply(PERMUTE, input, dims=tuple(o if o >= 0 else next(rest) for o in order))


def expand(input, *sizes) -> Tensor:
    """Broadcast to a larger shape without copying (-1 keeps a dim)."""
    sizes = size_tuple(sizes)
    shape = input._data.shape
    lead = len(sizes) - len(shape)
    if lead < 0:
        raise RuntimeError(
            f"expand({input._type_desc().split()[0]}{{{list(shape)}}}, size={list(sizes)}): the "
            f"number of sizes provided ({len(sizes)}) must be greater or equal to the number of "
            f"dimensions in the tensor ({len(shape)})"
        )
    sizes = tuple(shape[i - lead] if s == -1 and i >= lead else s for i, s in enumerate(sizes))
    for i, s in enumerate(shape):
        if s != 1 and s != sizes[i + lead]:
            raise RuntimeError(
                f"The expanded size of the tensor ({sizes[i + lead]}) must match the existing "
                f"size ({s}) at non-singleton dimension {i + lead}.  Target sizes: "
                f"{list(sizes)}.  Tensor sizes: {list(shape)}"
            )
    return apply(EXPAND, input, shape=sizes)


def expand_as(input, other) -> Tensor:
    """``input.expand(other.shape)``."""
    return expand(input, other._data.shape)


def broadcast_to(input, size) -> Tensor:
    """Broadcast to ``size`` without copying."""
    return expand(input, size_tuple((size,)))


def _broadcast_shape(shapes) -> tuple:
    out: list = []
    for shape in shapes:
        shape = tuple(shape)
        if len(shape) > len(out):
            out = [1] * (len(shape) - len(out)) + out
        for i in range(1, len(shape) + 1):
            a, b = out[-i], shape[-i]
            if a != b and a != 1 and b != 1:
                raise RuntimeError(
                    f"The size of tensor a ({a}) must match the size of tensor b ({b}) at "
                    f"non-singleton dimension {len(out) - i}"
                )
            if a == 1:
                out[-i] = b
    return tuple(out)


def broadcast_tensors(*tensors) -> tuple:
    """The tensors broadcast to their common shape (views; the ones that have it, as they are)."""
    if len(tensors) == 1 and isinstance(tensors[0], (list, tuple)):
        tensors = tuple(tensors[0])
    shape = _broadcast_shape(t._data.shape for t in tensors)
    return tuple(t if t._data.shape == shape else apply(EXPAND, t, shape=shape) for t in tensors)


def sum_to_size(input, *size) -> Tensor:
    """Sum broadcast dims away so the result has ``size``."""
    return apply(SUM_TO_SIZE, input, shape=size_tuple(size))


def unsqueeze(input, dim: int) -> Tensor:
    """Insert a dim of size one."""
    return apply(UNSQUEEZE, input, dim=normalize_dim(dim, input._data.ndim + 1, "unsqueeze"))


def _squeeze_args(input, dim) -> tuple:
    ndim = input._data.ndim
    if dim is None:
        op, dims = 0, range(ndim)
    elif isinstance(dim, int):
        op, dims = 1, (dim,)
    else:
        op, dims = 2, dim
    dims = tuple(
        d for d in (normalize_dim(d, ndim, "squeeze") for d in dims) if input._data.shape[d] == 1
    )
    return op, dims


def squeeze(input, dim=None) -> Tensor:
    """Remove dims of size one (only ``dim``, an int or a tuple, if given)."""
    kind, dims = _squeeze_args(input, dim)
    return apply((SQUEEZE, SQUEEZE_DIM, SQUEEZE_DIMS)[kind], input, dim=dims)


def _inplace_view(self, op: Op, **params) -> Tensor:
    """Change ``self``'s shape in place (the same storage); record it like PyTorch does."""
    _check_inplace(self, state.enabled and self._requires_grad)
    new = apply(op, self, **params)
    self._data = new._data
    if new.grad_fn is not None:
        self.grad_fn, self._output_nr = new.grad_fn, new._output_nr
    view = new._extra.get("view") if new._extra else None
    if view is not None and view[0] is not self:
        self._extra_dict()["view"] = view
    if forward_state.level and get_tangent(new) is not None:
        set_tangent(self, get_tangent(new))
    bump_version(self)
    return self


def _unsqueeze_(self, dim: int) -> Tensor:
    dim = normalize_dim(dim, self._data.ndim + 1, "unsqueeze_")
    return _inplace_view(self, INPLACE_VIEWS["unsqueeze_"], dim=dim)


def _squeeze_(self, dim=None) -> Tensor:
    kind, dims = _squeeze_args(self, dim)
    name = ("squeeze_", "squeeze_dim_", "squeeze_dims_")[kind]
    return _inplace_view(self, INPLACE_VIEWS[name], dim=dims)


def _t_(self) -> Tensor:
    t(self)  # the checks
    return _inplace_view(self, INPLACE_VIEWS["t_"])


def _transpose_(self, dim0: int, dim1: int) -> Tensor:
    ndim = self._data.ndim
    return _inplace_view(
        self,
        INPLACE_VIEWS["transpose_"],
        dim0=normalize_dim(dim0, ndim, "transpose_"),
        dim1=normalize_dim(dim1, ndim, "transpose_"),
    )


def alias(input) -> Tensor:
    """A view of all of input."""
    return apply(ALIAS, input)


# ---- public functions: copies and rearranging --------------------------------------------------


def clone(input, *, memory_format=None) -> Tensor:
    """A copy that is still part of the graph (same memory layout unless contiguous_format)."""
    contiguous_fmt = memory_format is not None and "contiguous" in str(memory_format)
    return apply(CLONE, input, order="C" if contiguous_fmt else "K")


def contiguous(input, memory_format=None) -> Tensor:
    """input itself if its memory is contiguous, else a contiguous copy."""
    if input._data.flags.c_contiguous:
        return input
    return apply(CLONE, input, order="C")


def to_dtype(input, dtype) -> Tensor:
    """A copy converted to dtype (the tensor itself if it already has it)."""
    dtype = as_dtype(dtype)
    if input._data.dtype == dtype.np:
        return input
    return apply(TO_COPY, input, dtype=dtype.np)


def _dims_arg(dims) -> tuple:
    if len(dims) == 1 and not isinstance(dims[0], int):
        return tuple(dims[0])
    return tuple(dims)


def flip(input, *dims) -> Tensor:
    """Reverse the order of the elements along ``dims`` (a copy)."""
    ndim = input._data.ndim
    dims = tuple(normalize_dim(d, ndim, "flip") for d in _dims_arg(dims))
    for d in dims:
        if dims.count(d) > 1:
            raise RuntimeError(f"dim {d} appears multiple times in the list of dims")
    if ndim == 0:
        dims = ()
    return apply(FLIP, input, dims=dims)


def fliplr(input) -> Tensor:
    """Flip left-right (dim 1)."""
    if input._data.ndim < 2:
        raise RuntimeError("Input must be >= 2-d.")
    return apply(FLIP, input, dims=(1,))


def flipud(input) -> Tensor:
    """Flip up-down (dim 0)."""
    if input._data.ndim < 1:
        raise RuntimeError("Input must be >= 1-d.")
    return apply(FLIP, input, dims=(0,))


def roll(input, shifts, dims=None) -> Tensor:
    """Shift the elements circularly along ``dims`` (of the flattened tensor if None)."""
    shifts = (shifts,) if isinstance(shifts, int) else tuple(int(s) for s in shifts)
    ndim = input._data.ndim
    if dims is None:
        if len(shifts) != 1:
            raise RuntimeError(f"shifts and dimensions must align. shifts: {len(shifts)}, dims:0")
        return apply(ROLL, input, shifts=shifts, dims=None)
    dims = (dims,) if isinstance(dims, int) else tuple(dims)
    if len(shifts) != len(dims):
        raise RuntimeError(
            f"shifts and dimensions must align. shifts: {len(shifts)}, dims:{len(dims)}"
        )
    dims = tuple(normalize_dim(d, ndim, "roll") for d in dims)
    if ndim == 0:
        return apply(ROLL, input, shifts=shifts[:1], dims=None)
    return apply(ROLL, input, shifts=shifts, dims=dims)


def rot90(input, k: int = 1, dims=(0, 1)) -> Tensor:
    """Rotate by 90 degrees k times, from the first towards the second of ``dims``."""
    dims = tuple(dims)
    ndim = input._data.ndim
    if len(dims) != 2:
        raise RuntimeError(f"expected total rotation dims == 2, but got dims = {len(dims)}")
    if ndim < 2:
        raise RuntimeError(f"expected total dims >= 2, but got total dims = {ndim}")
    d0, d1 = (normalize_dim(d, ndim, "rot90") for d in dims)
    if d0 == d1:
        raise RuntimeError(
            f"expected rotation dims to be different, but got dim0 = {d0} and dim1 = {d1}"
        )
    return apply(ROT90, input, k=k % 4, dims=(d0, d1))


def repeat(input, *sizes) -> Tensor:
    """Tile the tensor: ``sizes`` copies along each dim (leading new dims allowed)."""
    repeats = size_tuple(sizes)
    if len(repeats) < input._data.ndim:
        raise RuntimeError(
            "Number of dimensions of repeat dims can not be smaller than number "
            "of dimensions of tensor"
        )
    if any(r < 0 for r in repeats):
        raise RuntimeError(
            f"Trying to create tensor with negative dimension {min(repeats)}: {list(repeats)}"
        )
    return apply(REPEAT, input, repeats=repeats)


def tile(input, *dims) -> Tensor:
    """``repeat`` with ``dims`` padded with leading ones to the tensor's number of dims."""
    reps = size_tuple(dims)
    return repeat(input, (1,) * (input._data.ndim - len(reps)) + reps)


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


def _tensor_list(tensors, op: str) -> list:
    if isinstance(tensors, Tensor):
        return list(tensors.unbind(0))
    tensors = list(tensors)
    for i, t in enumerate(tensors):
        if not isinstance(t, Tensor):
            raise TypeError(
                f"{op}(): argument 'tensors' (position 1) must be tuple of Tensors, "
                f"not {type(t).__name__} (element {i})"
            )
    return tensors


def _cat_tensors(tensors: list, dim: int) -> Tensor:
    """cat of tensors already checked (the rules use it)."""
    bounds = []
    start = 0
    for t in tensors:
        stop = start + t._data.shape[dim]
        bounds.append((start, stop))
        start = stop
    return apply(_n_ary(CAT, _cat_rule, len(tensors)), *tensors, dim=dim, bounds=tuple(bounds))


def cat(tensors, dim: int = 0, *, axis: int | None = None) -> Tensor:
    """Concatenate along an existing dim (dtypes promoted; legacy empty (0,) tensors skipped)."""
    tensors = _tensor_list(tensors, "cat")
    dim = axis if axis is not None else dim
    if not tensors:
        raise ValueError("torch.cat(): expected a non-empty list of Tensors")
    for i, t in enumerate(tensors):
        if t._data.ndim == 0:
            raise RuntimeError(f"zero-dimensional tensor (at position {i}) cannot be concatenated")
    kept = [(i, t._data.shape) for i, t in enumerate(tensors) if t._data.shape != (0,)]
    if not kept:
        return apply(
            _n_ary(CAT, _cat_rule, len(tensors)), *tensors, dim=0, bounds=(None,) * len(tensors)
        )
    first = kept[0][1]
    dim = normalize_dim(dim, len(first), "cat")
    bounds = [None] * len(tensors)
    start = 0
    for i, shape in kept:
        if len(shape) != len(first):
            raise RuntimeError(
                f"Tensors must have same number of dimensions: got {len(first)} and {len(shape)}"
            )
        for d, (a, b) in enumerate(zip(first, shape)):
            if d != dim and a != b:
                raise RuntimeError(
                    f"Sizes of tensors must match except in dimension {dim}. Expected size {a} "
                    f"but got size {b} for tensor number {i} in the list."
                )
        bounds[i] = (start, start + shape[dim])
        start += shape[dim]
    return apply(_n_ary(CAT, _cat_rule, len(tensors)), *tensors, dim=dim, bounds=tuple(bounds))


def stack(tensors, dim: int = 0) -> Tensor:
    """Join tensors of one shape along a new dim."""
    tensors = _tensor_list(tensors, "stack")
    if not tensors:
        raise RuntimeError("stack expects a non-empty TensorList")
    first = tensors[0]._data.shape
    for i, t in enumerate(tensors):
        if t._data.shape != first:
            raise RuntimeError(
                f"stack expects each tensor to be equal size, but got "
                f"{list(first)} at entry 0 and {list(t._data.shape)} at entry {i}"
            )
    dim = normalize_dim(dim, len(first) + 1, "stack")
    return apply(_n_ary(STACK, _stack_rule, len(tensors)), *tensors, dim=dim)


def _atleast(input: Tensor, n: int) -> Tensor:
    shape = input._data.shape
    if len(shape) >= n:
        return input
    if n == 3 and len(shape) == 1:
        return reshape(input, (1, shape[0], 1))
    if n == 3 and len(shape) == 2:
        return unsqueeze(input, 2)
    return reshape(input, (1,) * (n - len(shape)) + shape)


def _atleast_fn(n: int):
    def atleast(*tensors):
        if len(tensors) == 1 and isinstance(tensors[0], (list, tuple)):
            return tuple(_atleast(t, n) for t in tensors[0])
        if len(tensors) == 1:
            return _atleast(tensors[0], n)
        return tuple(_atleast(t, n) for t in tensors)

    atleast.__name__ = f"atleast_{n}d"
    atleast.__doc__ = f"The tensors viewed with at least {n} dims."
    return atleast


atleast_1d, atleast_2d, atleast_3d = (_atleast_fn(n) for n in (1, 2, 3))


def hstack(tensors) -> Tensor:
    """Concatenate column-wise (along dim 0 for 1-d tensors)."""
    tensors = [_atleast(t, 1) for t in _tensor_list(tensors, "hstack")]
    return cat(tensors, 0 if tensors and tensors[0]._data.ndim == 1 else 1)


def vstack(tensors) -> Tensor:
    """Concatenate row-wise (1-d tensors as rows)."""
    return cat([_atleast(t, 2) for t in _tensor_list(tensors, "vstack")], 0)


def column_stack(tensors) -> Tensor:
    """Concatenate along dim 1, 0-d and 1-d tensors taken as columns."""
    tensors = _tensor_list(tensors, "column_stack")
    return cat([reshape(t, t._data.size, 1) if t._data.ndim <= 1 else t for t in tensors], 1)


def dstack(tensors) -> Tensor:
    """Concatenate depth-wise (along dim 2, after making the tensors 3-d)."""
    return cat([_atleast(t, 3) for t in _tensor_list(tensors, "dstack")], 2)


def _split_pieces(input, op: Op, dim: int, bounds: tuple, function: str) -> tuple:
    pieces = apply(_pieces_op(op, len(bounds)), input, dim=dim, bounds=bounds)
    pieces = pieces if isinstance(pieces, tuple) else (pieces,)
    _link_pieces(pieces, input, [_along(dim, slice(a, b)) for a, b in bounds], function)
    return pieces


def split(tensor, split_size_or_sections, dim: int = 0) -> tuple:
    """Split into pieces of ``split_size`` along dim (the last may be smaller), or of the given
    sizes."""
    shape = tensor._data.shape
    dim = normalize_dim(dim, len(shape), "split")
    n = shape[dim] if shape else 0
    if isinstance(split_size_or_sections, (list, tuple)):
        sizes = [int(s) for s in split_size_or_sections]
        if sum(sizes) != n or any(s < 0 for s in sizes):
            raise RuntimeError(
                f"split_with_sizes expects split_sizes to sum exactly to {n} "
                f"(input tensor's size at dimension {dim}), but got "
                f"split_sizes={sizes}"
            )
        starts = [sum(sizes[:i]) for i in range(len(sizes))]
        bounds = tuple((a, a + s) for a, s in zip(starts, sizes))
        return _split_pieces(tensor, SPLIT_WITH_SIZES, dim, bounds, "SplitWithSizes")
    size = int(split_size_or_sections)
    if size < 0:
        raise RuntimeError(f"split expects split_size be non-negative, but got split_size={size}")
    if size == 0 and n:
        raise RuntimeError(
            f"split_size can only be 0 if dimension size is 0, but got dimension size of {n}"
        )
    bounds = tuple((a, min(a + size, n)) for a in range(0, n, size)) if n else ((0, 0),)
    return _split_pieces(tensor, SPLIT, dim, bounds, "Split")


def chunk(input, chunks: int, dim: int = 0) -> tuple:
    """Split into ``chunks`` pieces of equal size (the last may be smaller; fewer if needed)."""
    if chunks <= 0:
        raise RuntimeError(f"chunk expects `chunks` to be greater than 0, got: {chunks}")
    shape = input._data.shape
    dim = normalize_dim(dim, len(shape), "chunk")
    n = shape[dim]
    if n == 0:
        return _split_pieces(input, SPLIT_WITH_SIZES, dim, ((0, 0),) * chunks, "SplitWithSizes")
    return split(input, -(-n // chunks), dim)


def tensor_split(input, indices_or_sections, dim: int = 0) -> tuple:
    """Split into views at the given indices, or into ``sections`` nearly equal parts."""
    shape = input._data.shape
    dim = normalize_dim(dim, len(shape), "tensor_split")
    n = shape[dim]
    arg = indices_or_sections
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


def unbind(input, dim: int = 0) -> tuple:
    """The slices along ``dim``, as views without that dim."""
    shape = input._data.shape
    if not shape:
        raise IndexError("Dimension specified as 0 but tensor has no dimensions")
    dim = normalize_dim(dim, len(shape), "unbind")
    n = shape[dim]
    if n == 0:
        return ()
    pieces = apply(_pieces_op(UNBIND, n), input, dim=dim)
    pieces = pieces if isinstance(pieces, tuple) else (pieces,)
    _link_pieces(pieces, input, [_along(dim, i) + (Ellipsis,) for i in range(n)], "Unbind")
    return pieces


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
    _check_bounds(index._data, shape[dim] if shape else 1, dim, negative=False)
    return dim


def _check_same_dtype(op: str, input, other, what: str = "src") -> None:
    if isinstance(other, Tensor) and other._data.dtype != input._data.dtype:
        raise RuntimeError(f"{op}(): Expected self.dtype to be equal to {what}.dtype")


def gather(input, dim: int, index, *, sparse_grad: bool = False) -> Tensor:
    """``out[i][j] = input[index[i][j]][j]`` along ``dim`` (index has input's number of dims)."""
    dim = _check_scatter("gather", input, dim, index)
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


def index_select(input, dim: int, index) -> Tensor:
    """The slices of input at the positions ``index`` (a vector) along ``dim``."""
    dim = _check_index_vector("index_select", input, dim, index)
    shape = input._data.shape
    _check_bounds(
        index._data,
        shape[dim] if shape else 1,
        dim,
        negative=False,
        error=IndexError,
        message="index out of range in self",
    )
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
    shape = input._data.shape
    _check_bounds(
        index._data,
        shape[dim] if shape else 1,
        dim,
        negative=False,
        error=IndexError,
        message="index out of range in self",
    )
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
        index._data,
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
    _check_bounds(index._data, shape[dim] if shape else 1, dim, negative=True, error=IndexError)
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
        index._data,
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
        indices = Tensor._wrap(xp.broadcast_to(indices._data, iwant), None, 0)
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


def nonzero(input, *, as_tuple: bool = False):
    """The indices of the non-zero elements: an (n, ndim) tensor, or one tensor per dim."""
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
    return apply(NONZERO, input)


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


FUNCTIONS = {
    f.__name__: f
    for f in (
        reshape,
        ravel,
        flatten,
        unflatten,
        transpose,
        t,
        permute,
        movedim,
        squeeze,
        unsqueeze,
        broadcast_to,
        broadcast_tensors,
        clone,
        flip,
        fliplr,
        flipud,
        roll,
        rot90,
        tile,
        repeat_interleave,
        cat,
        stack,
        hstack,
        vstack,
        column_stack,
        dstack,
        atleast_1d,
        atleast_2d,
        atleast_3d,
        split,
        chunk,
        tensor_split,
        unbind,
        narrow,
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
FUNCTIONS.update(
    swapaxes=transpose,
    swapdims=transpose,
    moveaxis=movedim,
    concat=cat,
    concatenate=cat,
    row_stack=vstack,
)

METHODS = dict(
    FUNCTIONS,
    view=view,
    view_as=view_as,
    reshape_as=reshape_as,
    expand=expand,
    expand_as=expand_as,
    repeat=repeat,
    sum_to_size=sum_to_size,
    contiguous=contiguous,
    __getitem__=getitem,
    __setitem__=setitem,
    fill_=_fill_,
    zero_=_zero_,
    copy_=_copy_,
    unsqueeze_=_unsqueeze_,
    squeeze_=_squeeze_,
    t_=_t_,
    transpose_=_transpose_,
    swapaxes_=_transpose_,
    swapdims_=_transpose_,
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
for _name in (
    "broadcast_tensors",
    "hstack",
    "vstack",
    "dstack",
    "row_stack",
    "column_stack",
    "concat",
    "concatenate",
    "cat",
    "stack",
    "atleast_1d",
    "atleast_2d",
    "atleast_3d",
):
    del METHODS[_name]
