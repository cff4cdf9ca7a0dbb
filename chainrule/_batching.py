"""How an op runs on BatchedTensors: the innermost vmap level unwraps, batches, wraps.

``apply`` sends an op here when an input is a BatchedTensor. The inputs of the innermost level
are unwrapped to their values (batch in dim 0), the op record's batching rule runs the op on
those values (calling ``apply`` again, which handles the outer levels), and the results are
wrapped back. The wrapper outputs are then recorded for autograd and forward mode like any
others, so transforms inside the vmap see ordinary tensors.

A batching rule is ``rule(op, args, batched, size, params) -> outputs`` with ``batched[i]``
telling whether ``args[i]`` carries the batch in dim 0; it returns batch-first outputs. The
shortcuts are ``"elementwise"`` (line the batch up in front and broadcast), ``batch_dims(...)``
(shift the named dim parameters past the batch), ``leading_dims(...)`` (ops that loop over
leading dims, as NumPy's linalg: line those up) and ``fallback`` (run each example, stack).
The rule of a view record also has ``steps(op, params, shape, size)``: the views, as (record,
params) pairs, that make it on the batched value of examples of ``shape``; a write through a
view of a batched tensor replays them (``view_scatter``). ``batch_dims`` rules have them, and
``ops.shape.view_rule(steps)`` makes a rule from them.
"""

from __future__ import annotations

import warnings
import weakref

from ._backend import xp
from ._batched import BatchedTensor, batched, state
from ._meta import MetaArray, standin
from ._modes import RUN, Mode
from ._tooling import kernel
from .autograd.forward_ad import copy_tangents
from .autograd.forward_ad import state as forward_state
from .autograd.grad_mode import state as grad_state
from .tensor import Tensor

__all__ = ["batched_apply", "batched_inplace", "elementwise", "batch_dims", "fallback",
           "materialize", "logical_ndim", "find_level", "rule_kind", "leading_dims",
           "pad_leading", "physical", "on_values"]

apply = None  # set by _dispatch (it calls into this module, and this module calls it back)
apply_inplace = commit = None  # _dispatch's in-place path, which batched_inplace uses
record = tangents = None  # _dispatch's recording and forward mode, which run on the wrappers
ops: dict = {}  # ops the generic rules need (stack), registered by the op layer


def vmap_call(op, inputs: tuple, params: dict):
    """The vmap levels' part of an op call: with a batched input, batch at the innermost level,
    then record on the wrappers (``RUN`` otherwise).

    Dual levels opened outside this vmap level live on the batched values (the inner call sees
    them); those opened inside live on the wrappers (the forward pass after it).
    """
    if not state.level:
        return RUN  # vmap is running in another thread
    level = 0
    for x in inputs:  # find_level, inlined: every op call inside vmap passes here
        if type(x) is BatchedTensor and x._level > level:
            level = x._level
    in_params = 0  # the innermost level among the parameters' tensors
    if params:
        for v in params.values():
            kind = type(v)
            if kind is BatchedTensor:
                if v._level > in_params:
                    in_params = v._level
            elif kind is tuple or kind is list:
                for x in v:
                    if type(x) is BatchedTensor and x._level > in_params:
                        in_params = x._level
        if in_params > level:
            level = in_params
    if not level:
        return RUN
    base = state.fw_base[level - 1]
    top = forward_state.level
    if top > base:
        forward_state.level = base
        try:
            results = batched_apply(op, inputs, params, level, in_params == level)
        finally:
            forward_state.level = top
    else:
        results = batched_apply(op, inputs, params, level, in_params == level)
    if op.view and type(inputs[0]) is BatchedTensor:
        source = inputs[0]
        result = results[0]  # (a new wrapper: no _extra yet)
        if source._vc is None:
            source._vc = [0]
        result._vc = source._vc
        result._requires_grad = source._requires_grad
        # A view whatever the rule made of the values: writes into it go to the base.
        root_view = source._extra.get("view") if source._extra else None
        root, steps = root_view if root_view else (source, ())
        result._extra = {"view": (root, steps + ((op, params),))}
        # The root knows its live views, to give them its new history after an in-place change.
        extra = root._extra
        if extra is None:
            extra = root._extra = {}
        views = extra.get("views")
        if views is None:
            views = extra["views"] = {}
        views[id(result)] = weakref.ref(result)
    if grad_state.enabled and op.differentiable:
        for x in inputs:
            if isinstance(x, Tensor) and x._requires_grad:
                record(op, inputs, params, results)
                break
    if top > base:
        tangents(op, inputs, params, results, base + 1)
    return results[0] if op.n_outputs == 1 else results


def vmap_call_inplace(op, target, args: tuple, params: dict):
    """The vmap levels' part of an in-place call (``RUN`` when nothing is batched)."""
    if not state.level:
        return RUN
    level = find_level((target,) + args, params)
    if not level:
        return RUN
    return batched_inplace(op, target, args, params, level, apply_inplace, commit)


def _same_storage(view: BatchedTensor, root: BatchedTensor) -> bool:
    """Whether the values of a batched view live in its base's values (not a per-example copy)."""
    while type(view) is BatchedTensor:
        view, root = view._value, root._value
    return xp.may_share_memory(view._data, root._data)


def _take_values(self: BatchedTensor, new, op, capture) -> None:
    """The values go into the batched storage; the history moves to the wrapper."""
    apply_inplace(ops["copy"], self._value, new._value)


def _write_through(self: BatchedTensor, view: tuple, new):
    """A rule that made a real view wrote the values into the base: no history to replay."""
    tangents = new._extra.get("tangent") if new._extra else None
    if not new._requires_grad and not tangents and _same_storage(self, view[0]):
        return None  # (a tangent must still reach the base: it replays)
    return view


def _took_replay(self: BatchedTensor, replay) -> None:
    self._value = replay._value  # a rule may have copied rather than viewed the base


BatchedTensor._take_values = _take_values
BatchedTensor._write_through = _write_through
BatchedTensor._took_replay = _took_replay


# ---- what the op files ask of a tensor outside apply, answered per kind of tensor --------------
# A wrapper that reads values or links storage past apply asks the tensor; a plain tensor's
# answer is here (or the op's own code, bound on Tensor by its op file), vmap's is
# BatchedTensor's, so op bodies do not test for the mode.


def _needs_values(self: Tensor, error: type, message: str) -> None:
    """The op reads this tensor's values on the host (a count, a class weight, q's positions):
    nothing to do for a tensor that holds them."""


def _batched_needs_values(self: BatchedTensor, error: type, message: str) -> None:
    """vmap's answer: the values are every example's, which such an op cannot take: ``error``."""
    raise error(message)


def _check_write(self: Tensor, target: Tensor, error: type, message: str) -> None:
    """The op writes values computed from this tensor into ``target`` in place (batch norm's
    running statistics): any target takes one example's values."""


def _batched_check_write(self: BatchedTensor, target: Tensor, error: type,
                         message: str) -> None:
    """vmap's answer: the target must hold a value per example of this level, else ``error``."""
    if not (type(target) is BatchedTensor and target._level == self._level):
        raise error(message)


def _holds_values(self: Tensor) -> bool:
    """Whether ``_data`` holds this tensor's values (not on the meta device)."""
    return type(self._data) is not MetaArray


def _batched_holds_values(self: BatchedTensor) -> bool:
    """vmap's answer: ``_data`` is one example's placeholder, the values are the batch's."""
    return False


def _batched_view_dtype(self: BatchedTensor, to) -> BatchedTensor:
    """``view(dtype)``: the values' bytes read as ``to`` (the batch in front), one version
    counter with this tensor."""
    out = batched(self._value._view_dtype(to), self._level)
    if self._vc is None:
        self._vc = [0]
    out._vc = self._vc
    return out


BATCHED_MASK = (
    "vmap: We do not support batching operators that can support dynamic shape. Attempting to "
    "batch over indexing with a boolean mask."
)


def _batched_as_index(self: BatchedTensor) -> BatchedTensor:
    """An index tensor batched by vmap stays a tensor in the key (the indexing then runs one
    example at a time, as a parameter); a batched mask would give a shape per example."""
    kind = self._data.dtype.kind
    if kind == "b" or (kind == "u" and self._data.dtype.itemsize == 1):
        raise RuntimeError(BATCHED_MASK)
    if kind not in "iu":
        raise IndexError("tensors used as indices must be long, int, byte or bool tensors")
    return self


Tensor._needs_values = _needs_values
Tensor._holds_values = _holds_values
Tensor._check_write = _check_write
Tensor._shares_views = False  # whether a view op's result is known to share storage with it
BatchedTensor._needs_values = _batched_needs_values
BatchedTensor._holds_values = _batched_holds_values
BatchedTensor._check_write = _batched_check_write
BatchedTensor._view_dtype = _batched_view_dtype  # Tensor's: ops.shape
BatchedTensor._as_index = _batched_as_index  # Tensor's: ops.indexing
BatchedTensor._shares_views = True  # its storage is its value's, whatever NumPy says of _data


class _Vmap(Mode):
    """The vmap levels: on the stack while some thread runs a vmapped function."""

    order = 80
    name = "vmap"
    call = staticmethod(vmap_call)
    call_inplace = staticmethod(vmap_call_inplace)


VMAP = _Vmap()
VMAP.seams["batched"] = VMAP


def find_level(inputs, params) -> int:
    """The innermost vmap level among inputs and params (0 when nothing is batched)."""
    level = 0
    for x in inputs:
        if type(x) is BatchedTensor and x._level > level:
            level = x._level
    if params:
        for v in params.values():
            for x in v if type(v) in (tuple, list) else (v,):
                if type(x) is BatchedTensor and x._level > level:
                    level = x._level
    return level


def _unwrap(x, level: int):
    if type(x) is BatchedTensor and x._level == level:
        return x._value, True
    return x, False


def batched_apply(op, inputs: tuple, params: dict, level: int,
                  in_params: bool | None = None) -> tuple:
    """Run ``op`` at vmap ``level``: the wrapped results, each batched at that level.
    ``in_params``: whether a parameter holds a tensor batched at that level (None: look)."""
    args = []
    flags = []
    size = state.sizes[level - 1]
    for x in inputs:
        if type(x) is BatchedTensor and x._level == level:
            args.append(x._value)
            flags.append(True)
        else:
            args.append(x)
            flags.append(False)
    rule = op.batch
    if in_params is None:
        in_params = bool(params) and _in_params(params, level)
    if in_params:
        # A batched tensor among the parameters (an index): only the loop sees it.
        out = fallback(op, args, flags, size, params, level)
    else:
        if rule is None:
            rule = fallback
        elif type(rule) is str:  # "elementwise"
            rule = elementwise
        out = rule(op, args, flags, size, params)
    if op.n_outputs == 1 and type(out) is not tuple and type(out) is not list:
        return (batched(out, level),)
    return tuple(batched(o, level) for o in out)


def _in_params(params: dict, level: int) -> bool:
    for v in params.values():
        for x in v if type(v) in (tuple, list) else (v,):
            if type(x) is BatchedTensor and x._level == level:
                return True
    return False


def logical_ndim(x, is_batched: bool) -> int:
    if not isinstance(x, Tensor):
        return 0
    return x._data.ndim - 1 if is_batched else x._data.ndim


def _pad(x, ndim: int):
    """A batch-first value with unit dims after the batch so it has ``ndim`` logical dims."""
    have = x._data.ndim - 1
    if have >= ndim:
        return x
    shape = x._data.shape
    return x.reshape((shape[0],) + (1,) * (ndim - have) + shape[1:])


def materialize(x, size: int):
    """An unbatched tensor as a batch-first one (a broadcast view, no copy)."""
    return x.unsqueeze(0).expand((size,) + tuple(x._data.shape))


def elementwise(op, args: list, flags: list, size: int, params: dict):
    """Broadcasting ops: batched inputs get unit dims after the batch up to the widest input."""
    if len(args) > 1:
        ndim = 0
        for a, f in zip(args, flags):
            if isinstance(a, Tensor) and a._data.ndim - f > ndim:
                ndim = a._data.ndim - f
        args = [_pad(a, ndim) if f and a._data.ndim <= ndim else a for a, f in zip(args, flags)]
    return apply(op, *args, **params) if params else apply(op, *args)


def _shift(d, ndim: int):
    if d is None:
        return None
    if type(d) in (tuple, list):
        return type(d)(_shift(x, ndim) for x in d)
    return (d + ndim if d < 0 else d) + 1


def batch_dims(*names: str):
    """A rule for ops whose parameters ``names`` are dims of the first input: every tensor input
    gets the batch in front and the dims move one to the right."""

    def shifted(params: dict, ndim: int) -> dict:
        params = dict(params)
        for name in names:
            if name in params:
                params[name] = _shift(params[name], ndim)
        return params

    def rule(op, args, flags, size, params):
        ndim = logical_ndim(args[0], flags[0])
        if len(args) > 1 or not flags[0]:
            args = [materialize(a, size) if isinstance(a, Tensor) and not f else a
                    for a, f in zip(args, flags)]
        return apply(op, *args, **shifted(params, ndim))

    def steps(op, params, shape, size):
        """For a view: the view on the batched value, which a write through it replays."""
        return ((op, shifted(params, len(shape))),)

    rule.kind = "dims"
    rule.steps = steps
    return rule


def leading_dims(*core: int):
    """A rule for ops that loop over leading dims and broadcast them (NumPy's linalg, matmul):
    input ``i`` has ``core[i]`` trailing dims of its own. Batched inputs get unit dims after the
    batch so that the leading dims line up; unbatched ones broadcast as they are."""

    def rule(op, args, flags, size, params):
        return apply(op, *pad_leading(args, flags, core), **params)

    rule.kind = "leading dims"
    return rule


def pad_leading(args, flags, core) -> list:
    """``args`` with unit dims after the batch of the batched ones, so that every tensor has as
    many leading dims (those before its ``core`` trailing dims) as the one with the most."""
    lead = max(logical_ndim(a, f) - c for a, f, c in zip(args, flags, core)
               if isinstance(a, Tensor))
    return [_pad(a, lead + c) if f else a for a, f, c in zip(args, flags, core)]


def physical(x):
    """The array behind ``x`` with the batch of every vmap level in front (``_data`` itself for
    an ordinary tensor). Only for checks that must hold for every example at once, such as a
    fast path taken when no element is zero; never for values. On the meta device, checks see a
    stand-in (ones for floats, zeros for integers: see _meta.standin): PyTorch's meta kernels
    check no values either."""
    while type(x) is BatchedTensor:
        x = x._value
    x = x._data
    return standin(x) if type(x) is MetaArray else x


def on_values(fn, x: Tensor):
    """``fn(array, lead)`` on ``physical(x)`` (its ``lead`` leading dims are the vmap batches),
    as constants batched like ``x``: raw-array work that treats the leading dims alike (indices
    of window maxima, class weights of targets). ``fn`` may return a tuple."""
    levels = []
    while type(x) is BatchedTensor:
        levels.append(x._level)
        x = x._value
    out = kernel(fn, x._data, len(levels))  # chainrule.compile replays it on new values

    def wrap(array):
        t = Tensor._wrap(array, None, 0)
        for level in reversed(levels):
            t = batched(t, level)
        return t

    return tuple(wrap(a) for a in out) if type(out) is tuple else wrap(out)


_warned: set = set()


def fallback(op, args: list, flags: list, size: int, params: dict, level: int = 0):
    """No batching rule: run the op on each example and stack (slow; warns once per op)."""
    if op.name not in _warned:
        _warned.add(op.name)
        warnings.warn(
            f"There is a performance drop because we have not yet implemented the batching rule "
            f"for {op.name}. Please file us an issue on GitHub so that we can prioritize its "
            f"implementation.", UserWarning, stacklevel=4)
    stack = ops["stack_fn"]  # the n-ary stack: every example gets its gradient
    results = []
    for b in range(size):
        args_b = [a[b] if f else a for a, f in zip(args, flags)]
        params_b = {k: _select_param(v, b, level) for k, v in params.items()}
        out = apply(op, *args_b, **params_b)
        results.append(out if type(out) is tuple else (out,))
    outs = tuple(stack(list(column), dim=0) for column in zip(*results))
    return outs if op.n_outputs > 1 else outs[0]


def _select_param(v, b: int, level: int):
    if type(v) in (tuple, list):
        return type(v)(_select_param(x, b, level) for x in v)
    if type(v) is BatchedTensor and v._level == level:
        return v._value[b]
    return v


fallback.kind = "fallback"
elementwise.kind = "elementwise"


def rule_kind(op) -> str:
    """The coverage table's name for an op's batching rule."""
    rule = op.batch
    if rule is None:
        return "fallback"
    if isinstance(rule, str):
        return rule
    return getattr(rule, "kind", "rule")


INPLACE_ERROR = (
    "vmap: {name}(self, *extra_args) is not possible because there exists a Tensor `other` in "
    "extra_args that has more elements than `self`. This happened due to `other` being vmapped "
    "over but `self` not being vmapped over {where}. Please try to use out-of-place operators "
    "instead of {name}. If said operator is being called inside the PyTorch framework, please "
    "file a bug report instead.")


def batched_inplace(op, target, args: tuple, params: dict, level: int, inplace, commit):
    """``target.op_(*args)`` under vmap: the write goes into the batched value."""
    if not (type(target) is BatchedTensor and target._level == level):
        raise _inplace_error(op, target, args, level)
    view = target._extra.get("view") if target._extra else None
    recording = grad_state.enabled and (target._requires_grad or any(
        isinstance(a, Tensor) and a._requires_grad for a in args))
    # Tangents of dual levels opened inside this vmap level live on the wrappers: the batched
    # rule's path computes them, a write straight into the batch would keep the old one.
    base = state.fw_base[level - 1]
    dual = forward_state.level > base and any(
        isinstance(x, Tensor) and x._extra and any(
            k > base for k in (x._extra.get("tangent") or ()))
        for x in (target,) + args)
    if view is not None or rule_kind(op) != "elementwise" or recording or dual:
        # Through the op's batching rule (and recorded at this level, written through to a
        # view's base), then written back; only elementwise ops write straight into the batch.
        source = target
        leaf = target.grad_fn is None and target._requires_grad  # refused when it is recorded
        if recording and not leaf and any(0 in reads for reads in op.reads):
            # The rule reads the old value, which the write overwrites: it keeps a copy.
            source = batched(target._value.clone(), level)
            source.grad_fn, source._output_nr = target.grad_fn, target._output_nr
            source._requires_grad = target._requires_grad
            if forward_state.level:
                copy_tangents(target, source)
        new = apply(op, source, *args, **params)
        commit(target, new, op)
        return target
    value = target._value
    values, flags = zip(*(_unwrap(a, level) for a in args)) if args else ((), ())
    ndim = max([logical_ndim(value, True)] + [logical_ndim(a, f) for a, f in zip(values, flags)])
    if ndim > logical_ndim(value, True):
        raise RuntimeError(f"{op.name}_: output with shape {list(target.shape)} doesn't match "
                           f"the broadcast shape of the inputs")
    values = [_pad(a, ndim) if f else a for a, f in zip(values, flags)]
    inplace(op, value, *values, **params)
    if target._vc is None:
        target._vc = [0]
    target._vc[0] += 1
    return target



# PyTorch words the error by how it batches the op: a broadcast check, its pointwise rule, or
# the generic fallback naming the aten op.
_BROADCAST_CHECKED = ("add", "atan2")
_ARITHMETIC = ("sub", "mul", "div", "copy", "masked_fill")


def _inplace_error(op, target, args: tuple, level: int) -> RuntimeError:
    name = op.name
    for overload in ("_tensor", "_scalar_self", "_scalar"):  # one aten name for the overloads
        name = name.removesuffix(overload)
    if name in _BROADCAST_CHECKED:
        size = state.sizes[level - 1]
        shape = xp.broadcast_shapes(*[tuple(a.shape) for a in (target,) + args
                                      if isinstance(a, Tensor)])
        return RuntimeError(f"output with shape {list(target.shape)} doesn't match the broadcast "
                            f"shape {[size, *shape]}")
    if name in _ARITHMETIC:
        return RuntimeError(INPLACE_ERROR.format(name="inplace arithmetic", where="in a vmap"))
    return RuntimeError(INPLACE_ERROR.format(name=f"aten::{name}_", where=f"at level {level}"))
