"""Shape ops: views, broadcasting, copies and dtype conversions, rearranging copies, joins and
splits, and in-place writes (fill_, copy_, writes through views).

A view record (``view=True``) shares its input's storage and version counter and remembers the
step that made it, so an in-place op on a view rebases the base's history (VIEW_SCATTER).
Indexing (select, slice, gather, scatter, ...) is its own family, ``indexing``, built on this one.
"""

from __future__ import annotations

import functools
import math
import warnings

from .._backend import as_dtype, astype, dtype, xp
from .._batching import _pad, batch_dims, elementwise, fallback, materialize
from .._device import as_device, memory_of
from .._dispatch import _check_inplace, _link_view, apply, apply_inplace, bump_version
from .._meta import MetaArray
from .._validation import dtype_name, int_sizes, tensor_sequence
from ..autograd.forward_ad import get_tangent, set_tangent
from ..autograd.forward_ad import state as forward_state
from ..autograd.grad_mode import state
from ..tensor import Tensor
from ._registry import REGISTRY, Op, defop
from ._shapes import format_strides, normalize_dim, size_tuple, sum_to

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
    batch=None,
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
        batch=batch or op.batch,
        sized_by_values=op.sized_by_values,
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


# ---- batching rules (vmap: the values have the batch in dim 0, see chainrule._batching) --------


def _front(args, flags, size: int) -> list:
    """The tensor arguments with the batch in front (the unbatched ones as broadcast views)."""
    return [
        materialize(a, size) if isinstance(a, Tensor) and not f else a for a, f in zip(args, flags)
    ]


def view_rule(steps):
    """The batching rule of a view record. ``steps(op, params, shape, size)`` gives the views, as
    (record, params) pairs, that make the view of an example of ``shape`` on a batch-first value
    of ``size`` examples: a view of the value too. VIEW_SCATTER replays them to write through
    views of batched tensors."""

    def rule(op, args, flags, size, params):
        x = args[0]
        for step, step_params in steps(op, params, x._data.shape[1:], size):
            x = apply(step, x, **step_params)
        return x

    rule.steps = steps
    return rule


def _after_batch(dims):
    return tuple(d + 1 for d in dims) if isinstance(dims, tuple) else dims + 1


def _same(op, params, shape, size):
    return ((op, params),)


def _indexed(op, params, shape, size):
    return ((op, {**params, "index": (_FULL,) + params["index"]}),)


def _view_steps(op, params, shape, size):
    return ((op, {"shape": (size,) + params["shape"]}),)


def _transpose_steps(op, params, shape, size):
    if not shape:  # nothing to swap in a 0-d example
        return ((ALIAS, {}),)
    return ((op, {"dim0": params["dim0"] + 1, "dim1": params["dim1"] + 1}),)


def _permute_steps(op, params, shape, size):
    return ((op, {"dims": (0,) + _after_batch(params["dims"])}),)


def _t_steps(op, params, shape, size):
    return ((TRANSPOSE, {"dim0": 1, "dim1": 2}) if len(shape) == 2 else (ALIAS, {}),)


def _expand_steps(op, params, shape, size):
    target = params["shape"]
    steps = ((op, {"shape": (size,) + target}),)
    if len(target) > len(shape):  # the new leading dims of an example go after the batch
        lead = (1,) * (len(target) - len(shape))
        steps = ((VIEW, {"shape": (size,) + lead + tuple(shape)}),) + steps
    return steps


# ---- views and broadcasting --------------------------------------------------------------------

VIEW = defop(
    "view",
    lambda input, shape: input.reshape(shape),
    ("input",),
    (lambda g, input_shape: g.reshape(input_shape),),
    view=True,
    jvp="linear",
    batch=view_rule(_view_steps),
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
    batch=view_rule(_transpose_steps),
)
T = defop(
    "t",
    lambda input: input.T,
    ("input",),
    (lambda g: apply(T, g),),
    view=True,
    jvp="linear",
    batch=view_rule(_t_steps),
)
PERMUTE = defop(
    "permute",
    lambda input, dims: xp.transpose(input, dims),
    ("input",),
    (lambda g, dims: g.permute(tuple(xp.argsort(dims).tolist())),),
    view=True,
    jvp="linear",
    batch=view_rule(_permute_steps),
)
EXPAND = defop(
    "expand",
    lambda input, shape: xp.broadcast_to(input, shape),
    ("input",),
    (lambda g, input_shape: g.sum_to_size(input_shape),),
    view=True,
    jvp="linear",
    batch=view_rule(_expand_steps),
)


def _sum_to_size_batch(op, args, flags, size, params):
    x, shape = args[0], params["shape"]
    lead = x._data.ndim - 1 - len(shape)  # leading dims of an example, summed away
    if not lead:
        return apply(op, x, shape=(size,) + shape)
    have = x._data.shape
    if have[1 + lead:] == tuple(shape) and all(n == 1 for n in have[1:1 + lead]):
        return apply(VIEW, x, shape=(size,) + tuple(shape))  # nothing to sum: drop unit dims
    out = apply(op, x, shape=(size,) + (1,) * lead + shape)
    return apply(VIEW, out, shape=(size,) + shape)


SUM_TO_SIZE = defop(
    "sum_to_size",
    lambda input, shape: sum_to(input, shape),
    ("input",),
    (lambda g, input_shape: g.expand(input_shape),),
    jvp="linear",
    batch=_sum_to_size_batch,
)
UNSQUEEZE = defop(
    "unsqueeze",
    # (expand_dims' reshape without its argument handling, for the normalized dims callers pass)
    lambda input, dim: (input.reshape(input.shape[:dim] + (1,) + input.shape[dim:]) if dim >= 0
                        else xp.expand_dims(input, dim)),
    ("input",),
    (lambda g, dim: g.squeeze(dim),),
    view=True,
    jvp="linear",
    batch=batch_dims("dim"),
)
SQUEEZE = defop(
    "squeeze",
    lambda input, dim: xp.squeeze(input, dim),
    ("input",),
    (lambda g, input_shape: g.reshape(input_shape),),
    view=True,
    jvp="linear",
    batch=batch_dims("dim"),
)
SQUEEZE_DIM = _variant(SQUEEZE, "SqueezeBackward1")
SQUEEZE_DIMS = _variant(SQUEEZE, "SqueezeBackward2")
ALIAS = defop(
    "alias",
    lambda input: input[...],
    ("input",),
    (lambda g: g,),
    view=True,
    jvp="linear",
    batch=view_rule(_same),
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

def _strides(array) -> tuple:
    itemsize = array.itemsize
    return tuple([s // itemsize for s in array.strides])


def _laid_out(array, strides: tuple, fresh: bool):
    """``array``'s values with ``strides`` (in elements): itself when it has them and is
    ``fresh`` (a copy made for the caller), else a copy."""
    shape = array.shape
    if fresh and _strides(array) == strides:
        return array
    if 0 not in shape and strides == format_strides(shape, strides, "contiguous"):
        return array.copy(order="C")
    nbytes = tuple(s * array.itemsize for s in strides)
    if type(array) is MetaArray:
        return MetaArray(shape, array.dtype, nbytes)
    extent = 0 if 0 in shape else 1 + sum((n - 1) * s for n, s in zip(shape, strides))
    out = xp.ndarray(shape, array.dtype, buffer=xp.empty(extent, array.dtype), strides=nbytes)
    out[...] = array
    return out


def _copy_as(input, memory_format="preserve"):
    """A copy of ``input`` laid out in ``memory_format`` (see ``_shapes.format_strides``)."""
    if memory_format == "preserve" or memory_format == "contiguous":
        out = input.copy(order="K" if memory_format == "preserve" else "C")
        # The common cases, without working out strides: NumPy kept them, or made them
        # row-major for a tensor with elements.
        if input.size if memory_format == "contiguous" else out.strides == input.strides:
            return out
    return _laid_out(input, format_strides(input.shape, _strides(input), memory_format), False)


def _convert_as(input, dtype, memory_format="preserve"):
    """``input`` converted to ``dtype`` (``_backend.astype``) and laid out in
    ``memory_format``."""
    out = astype(input, dtype)
    # A row-major input without size-1 dims (whose strides may be anything) or empty ones is
    # converted to the same layout: no strides to work out.
    if memory_format == "preserve" and input.flags.c_contiguous and 1 not in input.shape \
            and input.size:
        return out
    strides = format_strides(input.shape, _strides(input), memory_format)
    return _laid_out(out, strides, True)


CLONE = defop(
    "clone",
    _copy_as,
    ("input",),
    (lambda g: g,),
    jvp="linear",
    batch="elementwise",
)
TO_COPY = defop(
    "to_copy",
    _convert_as,  # PyTorch's conversions to bfloat16 and float8 (see _backend.astype)
    ("input",),
    (lambda g: g,),
    jvp="linear",
    batch="elementwise",
)



def _move(input, device, source):
    if type(input) is MetaArray:
        raise NotImplementedError("Cannot copy out of meta tensor; no data!")
    return memory_of(device).asarray(input)


TO_DEVICE = defop(
    "to_device",
    _move,
    ("input",),
    (lambda g, source: apply(TO_DEVICE, g, device=source, source=None),),
    jvp="linear",
    batch="elementwise",
    backward_name="ToCopyBackward0",
)

# ---- rearranging copies ------------------------------------------------------------------------

FLIP = defop(
    "flip",
    lambda input, dims: xp.flip(input, dims).copy() if dims else input.copy(),
    ("input",),
    (lambda g, dims: apply(FLIP, g, dims=dims),),
    jvp="linear",
    batch=batch_dims("dims"),
)


def _roll_batch(op, args, flags, size, params):
    x, dims = args[0], params["dims"]
    if dims is not None:
        return apply(op, x, shifts=params["shifts"], dims=_after_batch(dims))
    # a roll of each flattened example
    out = apply(op, apply(VIEW, x, shape=(size, -1)), shifts=params["shifts"], dims=(1,))
    return apply(VIEW, out, shape=x._data.shape)


ROLL = defop(
    "roll",
    lambda input, shifts, dims: xp.roll(input, shifts, dims),
    ("input",),
    (lambda g, shifts, dims: apply(ROLL, g, shifts=tuple(-s for s in shifts), dims=dims),),
    jvp="linear",
    batch=_roll_batch,
)
ROT90 = defop(
    "rot90",
    lambda input, k, dims: xp.rot90(input, k, dims).copy(),
    ("input",),
    (lambda g, k, dims: apply(ROT90, g, k=-k % 4, dims=dims),),
    jvp="linear",
    batch=batch_dims("dims"),
)


def _repeat_grad(g, input_shape, repeats):
    # out viewed as (r0, s0, r1, s1, ...) holds the copies; sum them over the r axes.
    padded = (1,) * (len(repeats) - len(input_shape)) + tuple(input_shape)
    split = tuple(n for pair in zip(repeats, padded) for n in pair)
    copies = tuple(range(0, 2 * len(repeats), 2))
    return g.reshape(split).sum(dim=copies).reshape(input_shape)


def _repeat_batch(op, args, flags, size, params):
    x, repeats = args[0], params["repeats"]
    shape = x._data.shape[1:]
    if len(repeats) > len(shape):  # the new leading dims of an example go after the batch
        x = apply(VIEW, x, shape=(size,) + (1,) * (len(repeats) - len(shape)) + shape)
    return apply(op, x, repeats=(1,) + repeats)


REPEAT = defop(
    "repeat",
    lambda input, repeats: xp.tile(input, repeats),
    ("input",),
    (_repeat_grad,),
    jvp="linear",
    batch=_repeat_batch,
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
        return apply(REGISTRY["slice"], g, index=_along(dim, slice(*bounds[i])))

    return rule


def _stack_rule(i: int):
    def rule(g, dim):
        return apply(REGISTRY["select"], g, index=_along(dim, i) + (Ellipsis,))

    return rule


def _cat_batch(op, args, flags, size, params):
    args = _front(args, flags, size)
    if all(b is None for b in params["bounds"]):  # only legacy empty tensors: (0,) per example
        return materialize(apply(op, *args, **params), size)
    return apply(op, *args, dim=params["dim"] + 1, bounds=params["bounds"])


CAT = defop(
    "cat", _cat, ("tensors0",), (_cat_rule(0),), promote=True, jvp="linear", batch=_cat_batch
)
STACK = defop(
    "stack",
    lambda *tensors, dim: xp.stack(tensors, axis=dim),
    ("tensors0",),
    (_stack_rule(0),),
    promote=True,
    jvp="linear",
    batch=batch_dims("dim"),
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
SPLIT = defop(
    "split",
    _split,
    ("input",),
    (_split_grad,),
    n_outputs=2,
    jvp="linear",
    batch=batch_dims("dim"),
)
SPLIT_WITH_SIZES = _variant(SPLIT, "SplitWithSizesBackward0")
UNBIND = defop(
    "unbind",
    _unbind,
    ("input",),
    (_unbind_grad,),
    n_outputs=2,
    jvp="linear",
    batch=batch_dims("dim"),
)


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
    (
        lambda g, input_shape, index: apply(
            REGISTRY["index_backward"], g, index=index, shape=input_shape
        ),
    ),
    view=True,
    jvp="linear",
    backward_name="SliceBackward0",
    batch=view_rule(_indexed),
)


def _link_pieces(outputs, input: Tensor, indices, function: str) -> None:
    for nr, (out, index) in enumerate(zip(outputs, indices)):
        params = {"index": index, "output_nr": nr, "function": function}
        extra = out._extra  # _link_view replaces it: keep the tangent
        _link_view(out, input, _MULTI_VIEW, params, shared=input._shares_views)
        if extra:
            out._extra = {**extra, **out._extra}


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
    # Keep the layout, so the steps are views of the copy too; a gradient or tangent may have
    # another than the base the steps were made on (a broadcast one): then C's or Fortran's.
    for order in ("K", "C", "F"):
        out = input.copy(order=order)
        view = _replay_arrays(out, steps)
        if view.base is out or view is out:
            view[...] = src
            return out
    raise RuntimeError("view_scatter: a view step did not give a view of the base's copy")


def _replay(g, steps):
    for op, params in steps:
        g = apply(op, g, **params)
    return g


def _view_scatter_batch(op, args, flags, size, params):
    """A write through a view of a batched tensor: the view's steps replayed on the values."""
    [input], src = _front(args[:1], flags[:1], size), args[1]
    view = xp.broadcast_to(xp.zeros((), dtype=bool), input._data.shape)  # its shape, no memory
    steps = []
    for step, step_params in params["steps"]:
        batched_steps = getattr(step.batch, "steps", None)
        if batched_steps is None:  # a view record without a view rule: one example at a time
            return fallback(op, args, flags, size, params)
        for batched_step in batched_steps(step, step_params, view.shape[1:], size):
            view = _replay_arrays(view, (batched_step,))
            steps.append(batched_step)
    if flags[1]:
        src = _pad(src, view.ndim - 1)
    return apply(op, input, src, steps=tuple(steps))


VIEW_SCATTER = defop(
    "view_scatter",
    _view_scatter,
    ("input", "src"),
    (lambda g, steps: apply(VIEW_SCATTER, g, 0.0, steps=steps), lambda g, steps: _replay(g, steps)),
    backward_name="torch::autograd::CopySlices",  # PyTorch's name() of the node
    jvp="linear",
    batch=_view_scatter_batch,
)


def _into(op, args, flags, size, params):
    """fill and copy: the result has the first input's shape, the others broadcast into it."""
    if not flags[0]:
        args, flags = _front(args[:1], flags[:1], size) + list(args[1:]), [True] + list(flags[1:])
    return elementwise(op, args, flags, size, params)


_into.kind = "elementwise"  # in place under vmap, it writes straight into the batched value


def _fill_(self, value) -> Tensor:
    return apply_inplace(FILL_TENSOR if isinstance(value, Tensor) else FILL, self, value)


FILL = defop(
    "fill",
    lambda input, value: xp.full_like(input, value if input.dtype.num < 256  # bfloat16, float8:
                                      else astype(xp.asarray(value), input.dtype)),  # converted
    ("input", "value"),
    (lambda g: g.new_zeros(g.shape), lambda g: g.sum()),
    backward_name="FillBackward2",
    jvp=lambda t_value, out: (
        out.new_zeros(out.shape) if t_value is None else t_value.expand(out.shape)
    ),
    batch=_into,
)
FILL_TENSOR = _variant(FILL, "FillBackward3")
ZERO_ = _variant(FILL, "ZeroBackward0")


def _zero_(self) -> Tensor:
    return apply_inplace(ZERO_, self, 0)


def _copy_(self, other, non_blocking: bool = False) -> Tensor:
    return apply_inplace(COPY, self, other)


COPY = defop(
    "copy",
    lambda input, src: astype(xp.broadcast_to(src, input.shape), input.dtype),
    ("input", "src"),
    (lambda g: g.new_zeros(g.shape), lambda g: g),
    backward_name="torch::autograd::CopyBackwards",
    # not "linear": a number as src (x[0] = 2.5) is a constant, its tangent zero
    jvp=lambda t_src, out: out.new_zeros(out.shape) if t_src is None else t_src,
    batch=_into,
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


_DTYPE_LIKE = (dtype, type)  # a dtype name ("float32") is refused, as in PyTorch
_VIEW = ("(torch.dtype dtype)", "(tuple of ints size)")  # the overloads PyTorch's errors list


def view(input, *shape, size=None, dtype=None) -> Tensor:
    """The same data with a new shape (one dim may be -1), or its bytes read as another dtype."""
    if size is not None or dtype is not None:
        shape = (size if dtype is None else dtype,)
    if len(shape) == 1 and isinstance(shape[0], _DTYPE_LIKE):
        return input._view_dtype(as_dtype(shape[0]))
    shape = _infer_shape(int_sizes("view", shape, overloads=_VIEW), input._data.size)
    if not _viewable(input._data, shape):
        raise RuntimeError(
            "view size is not compatible with input tensor's size and stride (at least one "
            "dimension spans across two contiguous subspaces). Use .reshape(...) instead."
        )
    return apply(VIEW, input, shape=shape)


def _view_dtype(input, to) -> Tensor:
    """input's bytes read as dtype ``to`` (the last dim rescaled): shared storage, outside the
    graph (as in PyTorch, also for input's own dtype). A method: vmap's is in _batching."""
    data = input._data
    if to.itemsize != data.itemsize and not (data.ndim and data.strides[-1] == data.itemsize):
        raise RuntimeError(
            f"self.stride(-1) must be 1 to view {input.dtype} as {to} (different element sizes), "
            "or self.dim() must be 0 for the same size"
        )
    if to.itemsize > data.itemsize and data.ndim and data.shape[-1] % (to.itemsize
                                                                       // data.itemsize):
        raise RuntimeError(
            f"self.size(-1) must be divisible by {to.itemsize // data.itemsize} to view "
            f"{dtype_name(data.dtype)} as {dtype_name(to.np)} (different element sizes), but got "
            f"{data.shape[-1]}")
    out = Tensor._wrap(data.view(to.np), None, 0)
    if input._vc is None:
        input._vc = [0]
    out._vc = input._vc
    return out


Tensor._view_dtype = _view_dtype  # vmap's own: in _batching


def _size_keyword(op: str, name: str, value, given: tuple) -> tuple:
    """The keyword form of a size argument (``x.reshape(shape=(2, 3))``), as ``*args`` would be."""
    if given:
        raise TypeError(f"{op}() got multiple values for argument '{name}'")
    if not isinstance(value, (tuple, list)):
        raise TypeError(
            f"{op}(): argument '{name}' must be tuple of ints, not {type(value).__name__}")
    return (value,)


def reshape(input, *sizes, shape=None) -> Tensor:
    """The data with a new shape: a view when possible, else a copy."""
    if shape is not None:
        sizes = _size_keyword("reshape", "shape", shape, sizes)
    shape = _infer_shape(int_sizes("reshape", sizes, "shape"), input._data.size)
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


def permute(input, *order, dims=None) -> Tensor:
    """Reorder the dims."""
    if dims is not None:
        order = _size_keyword("permute", "dims", dims, order)
    dims = int_sizes("permute", order, "dims")
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
    sizes = int_sizes("expand", sizes)
    shape = input._data.shape
    lead = len(sizes) - len(shape)
    if lead < 0:
        raise RuntimeError(
            f"expand({input._type_desc().split()[0]}{{{list(shape)}}}, size={list(sizes)}): the "
            f"number of sizes provided ({len(sizes)}) must be greater or equal to the number of "
            f"dimensions in the tensor ({len(shape)})"
        )
    if -1 in sizes[:lead]:
        raise RuntimeError("The expanded size of the tensor (-1) isn't allowed in a leading, "
                           f"non-existing dimension {sizes.index(-1)}")
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


def meshgrid(*tensors, indexing: str | None = None) -> tuple:
    """Coordinate grids from 0-d or 1-d tensors: output i varies along dim i ('ij') or, with
    'xy', the first two swapped (views)."""
    if len(tensors) == 1 and isinstance(tensors[0], (list, tuple)):
        tensors = tuple(tensors[0])
    if indexing is None:
        warnings.warn("torch.meshgrid: in an upcoming release, it will be required to pass the "
                      "indexing argument.", UserWarning, stacklevel=2)
        indexing = "ij"
    if indexing not in ("ij", "xy"):
        raise RuntimeError(f"torch.meshgrid: indexing must be one of \"xy\" or \"ij\", but "
                           f"received: {indexing}")
    if not tensors:
        raise RuntimeError("torch.meshgrid: Expected at least one tensor")
    for t in tensors:
        if t._data.ndim > 1:
            raise RuntimeError("torch.meshgrid: Expected 0D or 1D tensor in the tensor list but "
                               f"got: {t}")
        if t._data.dtype != tensors[0]._data.dtype:
            raise RuntimeError("torch.meshgrid: expects all tensors to have the same dtype")
    swap = indexing == "xy" and len(tensors) >= 2
    order = (1, 0, *range(2, len(tensors))) if swap else range(len(tensors))
    shape = tuple(tensors[i]._data.size for i in order)
    out = []
    for i, t in enumerate(tensors):
        axis = order.index(i)
        column = reshape(t, tuple(-1 if d == axis else 1 for d in range(len(shape))))
        out.append(expand(column, shape))
    return tuple(out)


def type_as(input, other) -> Tensor:
    """input converted to other's dtype (input itself if it has it)."""
    return to_dtype(input, other._data.dtype)


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
        d for d in (normalize_dim(d, ndim, "squeeze") for d in dims)
        if ndim and input._data.shape[d] == 1
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
    self._took_replay(new)  # (a batched tensor takes the new values)
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


def memory_format_name(input, memory_format, default: str = "preserve") -> str:
    """A ``torch.memory_format`` as the name ``_shapes.format_strides`` takes ("preserve",
    "contiguous", "channels_last", "channels_last_3d"), checked against input's rank."""
    if memory_format is None:
        return default
    if type(memory_format).__name__ != "memory_format":
        raise TypeError(f"memory_format must be a torch.memory_format, not "
                        f"{type(memory_format).__name__}")
    name = str(memory_format).rpartition(".")[2].removesuffix("_format")
    rank = {"channels_last": 4, "channels_last_3d": 5}.get(name)
    if rank is not None and input.dim() != rank:
        raise RuntimeError(f"required rank {rank} tensor to use {name} format")
    return name


def clone(input, *, memory_format=None) -> Tensor:
    """A copy that is still part of the graph, in input's memory layout (preserve_format) or
    the one given."""
    if memory_format is None:
        return apply(CLONE, input)
    return apply(CLONE, input, memory_format=memory_format_name(input, memory_format))


def contiguous(input, memory_format=None) -> Tensor:
    """input itself if its memory is contiguous (in ``memory_format``), else such a copy."""
    name = memory_format_name(input, memory_format, "contiguous")
    if input.is_contiguous(memory_format=memory_format):
        return input
    if name == "preserve":
        raise RuntimeError("preserve memory format is unsupported by the contiguous operator")
    return apply(CLONE, input, memory_format=name)


def to_dtype(input, dtype, memory_format=None) -> Tensor:
    """A copy converted to dtype, in input's layout or ``memory_format`` (the tensor itself if
    it already has the dtype)."""
    dtype = as_dtype(dtype)
    if input._data.dtype == dtype.np:
        return input
    if memory_format is None:
        return apply(TO_COPY, input, dtype=dtype.np)
    return apply(TO_COPY, input, dtype=dtype.np,
                 memory_format=memory_format_name(input, memory_format))


def to_device(input, device) -> Tensor:
    """A copy on ``device`` (the tensor itself if it is there already)."""
    device = as_device(device)
    source = input.device
    if device.type == source.type:
        return input
    memory_of(device, "_to_copy")  # a device without memory here raises as PyTorch's CPU build
    return apply(TO_DEVICE, input, device=device, source=source)


def _dims_arg(dims) -> tuple:
    if len(dims) == 1 and not isinstance(dims[0], int):
        return tuple(dims[0])
    return tuple(dims)


def flip(input, *args, dims=None) -> Tensor:
    """Reverse the order of the elements along ``dims`` (a copy)."""
    if dims is not None:
        if args:
            raise TypeError("flip() got multiple values for argument 'dims'")
        args = (dims,)
    dims = args
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
    repeats = int_sizes("repeat", sizes, "repeats")
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


def tile(input, *reps, dims=None) -> Tensor:
    """``repeat`` with ``dims`` padded with leading ones to the tensor's number of dims."""
    if dims is not None:
        reps = _size_keyword("tile", "dims", dims, reps)
    reps = int_sizes("tile", reps, "dims")
    return repeat(input, (1,) * (input._data.ndim - len(reps)) + reps)


def _tensor_list(tensors, op: str) -> list:
    return tensor_sequence(op, tensors, Tensor)


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
        meshgrid,
        clone,
        flip,
        fliplr,
        flipud,
        roll,
        rot90,
        tile,
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
        unbind,
    )
}


def swapaxes(input, axis0: int, axis1: int) -> Tensor:
    """Swap two dims (transpose under NumPy's name)."""
    return transpose(input, axis0, axis1)


def _swapaxes_(self, axis0: int, axis1: int) -> Tensor:
    return _transpose_(self, axis0, axis1)


def _split_method(self, split_size, dim: int = 0) -> tuple:
    """Split into parts of ``split_size`` (an int, or the list of part sizes) along ``dim``."""
    return split(self, split_size, dim)


FUNCTIONS.update(
    swapaxes=swapaxes,
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
    type_as=type_as,
    repeat=repeat,
    sum_to_size=sum_to_size,
    contiguous=contiguous,
    fill_=_fill_,
    zero_=_zero_,
    copy_=_copy_,
    unsqueeze_=_unsqueeze_,
    squeeze_=_squeeze_,
    t_=_t_,
    transpose_=_transpose_,
    swapaxes_=_swapaxes_,
    swapdims_=_transpose_,
    split=_split_method,
)
for _name in (
    "broadcast_tensors",
    "meshgrid",
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
