"""Shape and indexing ops: views, broadcasting, indexing and index assignment, copies."""

from __future__ import annotations

import math

from .._backend import as_dtype, xp
from .._dispatch import apply, apply_inplace, bump_version
from ..autograd.grad_mode import state
from ..tensor import Tensor
from ._registry import defop
from ._shapes import normalize_dim, size_tuple, sum_to

# ---- views and broadcasting --------------------------------------------------------------------

VIEW = defop(
    "view",
    lambda input, shape: xp.reshape(input, shape),
    ("input",),
    (lambda g, input_shape: g.reshape(input_shape),),
    view=True,
    jvp="linear",
)
TRANSPOSE = defop(
    "transpose",
    lambda input, dim0, dim1: xp.swapaxes(input, dim0, dim1),
    ("input",),
    (lambda g, dim0, dim1: g.transpose(dim0, dim1),),
    view=True,
    jvp="linear",
)
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
CLONE = defop("clone", lambda input: input.copy(), ("input",), (lambda g: g,), jvp="linear")
TO_COPY = defop(
    "to_copy", lambda input, dtype: input.astype(dtype), ("input",), (lambda g: g,), jvp="linear"
)


def view(input, *shape) -> Tensor:
    """The same data with a new shape (one dim may be -1)."""
    shape = size_tuple(shape)
    known = math.prod(s for s in shape if s != -1)
    numel = input.data.size
    if (
        shape.count(-1) > 1
        or (-1 in shape and (known == 0 or numel % known))
        or (-1 not in shape and known != numel)
    ):
        raise RuntimeError(f"shape '{list(shape)}' is invalid for input of size {numel}")
    if shape == input.data.shape:
        return apply(VIEW, input, shape=shape) if input.requires_grad else input._alias()
    return apply(VIEW, input, shape=shape)


reshape = view


def view_as(input, other) -> Tensor:
    """``input.view(other.shape)``."""
    return view(input, other.data.shape)


def transpose(input, dim0: int, dim1: int) -> Tensor:
    """Swap two dims."""
    ndim = input.data.ndim
    return apply(
        TRANSPOSE,
        input,
        dim0=normalize_dim(dim0, ndim, "transpose"),
        dim1=normalize_dim(dim1, ndim, "transpose"),
    )


def permute(input, *dims) -> Tensor:
    """Reorder the dims."""
    dims = size_tuple(dims)
    ndim = input.data.ndim
    if len(dims) != ndim:
        raise RuntimeError(
            f"permute(sparse_coo): number of dimensions in the tensor input does "
            f"not match the length of the desired ordering of dimensions i.e. "
            f"input.dim() = {ndim} is not equal to len(dims) = {len(dims)}"
        )
    return apply(PERMUTE, input, dims=tuple(normalize_dim(d, ndim, "permute") for d in dims))


def expand(input, *sizes) -> Tensor:
    """Broadcast to a larger shape without copying (-1 keeps a dim)."""
    sizes = size_tuple(sizes)
    shape = input.data.shape
    lead = len(sizes) - len(shape)
    if lead < 0:
        raise RuntimeError(
            f"expand: the number of sizes provided ({len(sizes)}) must be greater "
            f"or equal to the number of dimensions in the tensor ({len(shape)})"
        )
    sizes = tuple(shape[i - lead] if s == -1 and i >= lead else s for i, s in enumerate(sizes))
    for i, s in enumerate(shape):
        if s != 1 and s != sizes[i + lead]:
            raise RuntimeError(
                f"expand: the expanded size of the tensor ({sizes[i + lead]}) must match the "
                f"existing size ({s}) at non-singleton dimension {i + lead}.  Target sizes: "
                f"{list(sizes)}.  Tensor sizes: {list(shape)}"
            )
    return apply(EXPAND, input, shape=sizes)


def sum_to_size(input, *size) -> Tensor:
    """Sum broadcast dims away so the result has ``size``."""
    return apply(SUM_TO_SIZE, input, shape=size_tuple(size))


def unsqueeze(input, dim: int) -> Tensor:
    """Insert a dim of size one."""
    return apply(UNSQUEEZE, input, dim=normalize_dim(dim, input.data.ndim + 1, "unsqueeze"))


def squeeze(input, dim=None) -> Tensor:
    """Remove dims of size one (only ``dim`` if given)."""
    ndim = input.data.ndim
    dims = range(ndim) if dim is None else (dim,) if isinstance(dim, int) else dim
    dims = tuple(
        d for d in (normalize_dim(d, ndim, "squeeze") for d in dims) if input.data.shape[d] == 1
    )
    return apply(SQUEEZE, input, dim=dims)


def flatten(input, start_dim: int = 0, end_dim: int = -1) -> Tensor:
    """Merge dims start_dim..end_dim into one."""
    shape = input.data.shape
    if not shape:
        return view(input, 1)
    start = normalize_dim(start_dim, len(shape), "flatten")
    end = normalize_dim(end_dim, len(shape), "flatten")
    return view(input, shape[:start] + (math.prod(shape[start : end + 1]),) + shape[end + 1 :])


def clone(input) -> Tensor:
    """A copy that is still part of the graph."""
    return apply(CLONE, input)


def to_dtype(input, dtype) -> Tensor:
    """A copy converted to dtype (the tensor itself if it already has it)."""
    dtype = as_dtype(dtype)
    if input.data.dtype == dtype.np:
        return input
    return apply(TO_COPY, input, dtype=dtype.np)


# ---- indexing ------------------------------------------------------------------------------------


def _index(key):
    """An index with tensors and lists converted to NumPy arrays."""
    if isinstance(key, tuple):
        return tuple(_index_item(k) for k in key)
    return _index_item(key)


def _index_item(k):
    if isinstance(k, Tensor):
        if k.data.dtype.kind not in "biu":
            raise IndexError("tensors used as indices must be long, int, byte or bool tensors")
        return k.data
    if isinstance(k, list):
        return xp.asarray(k)
    return k


def _is_basic(key) -> bool:
    items = key if isinstance(key, tuple) else (key,)
    return all(
        k is None
        or k is Ellipsis
        or isinstance(k, slice)
        or (isinstance(k, int) and not isinstance(k, bool))
        for k in items
    )


def _getitem(input, index):
    return input[index]


def _index_backward(grad, index, shape):
    out = xp.zeros(shape, dtype=grad.dtype)
    if _is_basic(index):
        out[index] = grad
    else:
        xp.add.at(out, index, grad)
    return out


INDEX_BACKWARD = defop(
    "index_backward", _index_backward, ("grad",), (lambda g, index: g[index],), jvp="linear"
)


def _getitem_grad(g, input_shape, index):
    return apply(INDEX_BACKWARD, g, index=index, shape=input_shape)


SELECT = defop("select", _getitem, ("input",), (_getitem_grad,), view=True, jvp="linear")
SLICE = defop("slice", _getitem, ("input",), (_getitem_grad,), view=True, jvp="linear")
INDEX = defop("index", _getitem, ("input",), (_getitem_grad,), jvp="linear")


def getitem(input, key) -> Tensor:
    """``input[key]``: ints, slices, None, Ellipsis, bool masks and integer index tensors."""
    index = _index(key)
    if _is_basic(index):
        items = index if isinstance(index, tuple) else (index,)
        op = SELECT if all(isinstance(k, int) for k in items) else SLICE
    else:
        op = INDEX
    return apply(op, input, index=index)


def _index_put(input, values, index):
    out = input.copy()
    out[index] = values
    return out


INDEX_PUT = defop(
    "index_put",
    _index_put,
    ("input", "values"),
    (lambda g, index: apply(INDEX_PUT, g, 0.0, index=index), lambda g, index: g[index]),
    jvp="linear",
)


def setitem(input, key, value) -> None:
    """``input[key] = value``, in place; differentiable for non-leaf tensors."""
    index = _index(key)
    recording = state.enabled and (
        input.requires_grad or (isinstance(value, Tensor) and value.requires_grad)
    )
    if recording:
        apply_inplace(INDEX_PUT, input, value, index=index)
        return
    input.data[index] = value.data if isinstance(value, Tensor) else value
    bump_version(input)


# ---- in-place through views ---------------------------------------------------------------------


def _replay_arrays(array, steps):
    for op, params in steps:
        array = op.forward(array, **params)
    return array


def _view_scatter(input, src, steps):
    out = input.copy()
    _replay_arrays(out, steps)[...] = src
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
    backward_name="CopySlices",
    jvp="linear",
)


def _fill_(self, value):
    return apply_inplace(FILL, self, value)


FILL = defop(
    "fill",
    lambda input, value: xp.full_like(input, value),
    ("input", "value"),
    (lambda g: g.new_zeros(g.shape), lambda g: g.sum()),
    jvp=lambda t_value, out: (
        out.new_zeros(out.shape) if t_value is None else t_value.expand(out.shape)
    ),
)


def _zero_(self):
    return _fill_(self, 0)


def _copy_(self, src):
    return apply_inplace(COPY, self, src)


COPY = defop(
    "copy",
    lambda input, src: xp.broadcast_to(src, input.shape).astype(input.dtype),
    ("input", "src"),
    (lambda g: g.new_zeros(g.shape), lambda g: g),
    jvp="linear",
)

FUNCTIONS = {
    "reshape": reshape,
    "transpose": transpose,
    "permute": permute,
    "squeeze": squeeze,
    "unsqueeze": unsqueeze,
    "flatten": flatten,
    "clone": clone,
    "swapaxes": transpose,
    "swapdims": transpose,
}

METHODS = dict(
    FUNCTIONS,
    view=view,
    view_as=view_as,
    reshape_as=view_as,
    expand=expand,
    sum_to_size=sum_to_size,
    __getitem__=getitem,
    __setitem__=setitem,
    fill_=_fill_,
    zero_=_zero_,
    copy_=_copy_,
)
