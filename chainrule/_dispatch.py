"""apply(op, *inputs, **params): the hot path from a call to a NumPy kernel and, if needed, a Node.

Grad off, or no input requiring grad: run the forward and wrap the array, nothing else.
Otherwise record a Node that holds the op's rules, exactly the values they read and the edges to
the inputs' nodes.
"""

from __future__ import annotations

import weakref

from . import _batching
from ._backend import (
    USER_DTYPE_NUM,
    _category,
    _scalar_category,
    get_default_dtype,
    result_type,
    xp,
)
from ._batched import BatchedTensor
from ._low_precision import forward_for
from ._meta import MetaArray, NeedsValues, on_standins
from ._modes import RUN, stack
from ._quiet import quiet_run, run_busy, run_quiet
from ._threads import GRAIN, kernel_for
from ._tooling import note_inplace
from .autograd import grad_mode
from .autograd.forward_ad import DUAL, copy_tangents, get_tangent, set_tangent
from .autograd.forward_ad import state as forward_state
from .autograd.grad_mode import state
from .autograd.graph import SavedOutput, save_output
from .tensor import INFERENCE, INFERENCE_INPLACE, Tensor

__all__ = ["apply", "apply_inplace"]

_ndarray = xp.ndarray
_ufunc = xp.ufunc
_wrap = _plain_wrap = Tensor._wrap
_plain_init_leaf = Tensor._init_leaf


def _wrap_in_mode(array, grad_fn, output_nr: int) -> Tensor:
    """``Tensor._wrap`` while a thread is in inference mode: the tensors made there are
    inference tensors (a view or detach() then takes its base's counter instead)."""
    t = _plain_wrap(array, grad_fn, output_nr)
    if state.inference:
        t._vc = INFERENCE
    return t


def _init_leaf_in_mode(self: Tensor, array, vc: list | None = None) -> None:
    """``Tensor._init_leaf`` while a thread is in inference mode (the legacy constructor,
    Parameter and copies make their tensors with it)."""
    _plain_init_leaf(self, array, INFERENCE if vc is None and state.inference else vc)


def _mark_inference(on: bool) -> None:
    """Swap in the marking constructors (``_wrap`` for apply and every caller of
    ``Tensor._wrap``, and ``Tensor._init_leaf``) while some thread is in inference mode, and
    back: nothing is paid when none is."""
    global _wrap
    _wrap = _wrap_in_mode if on else _plain_wrap
    Tensor._wrap = staticmethod(_wrap)
    Tensor._init_leaf = _init_leaf_in_mode if on else _plain_init_leaf


grad_mode._inference_marking = _mark_inference


def _promote(op, arrays: list) -> list:
    """Cast array inputs to PyTorch's result dtype (Python scalars stay weak, as in NumPy 2)."""
    dtype = None
    scalar = 0
    for a in arrays:
        if type(a) is _ndarray or type(a) is MetaArray:
            if dtype is None:
                dtype = a.dtype
            elif a.dtype != dtype:
                return _promote_mixed(op, arrays)
        elif type(a) is float:
            scalar = 2
        elif a is not None:
            scalar = max(scalar, _scalar_category(a))
    # The common case: one array dtype, and scalars of no higher category keep it.
    if dtype is not None and scalar <= _category(dtype) and (
            not op.float_out or dtype.kind in "fcV"):
        return _wrap_ints(arrays, dtype) if scalar == 1 and dtype.kind in "iu" else arrays
    return _promote_mixed(op, arrays)


def _first_dtype(arrays: list):
    for a in arrays:
        if type(a) is _ndarray or type(a) is MetaArray:
            return a.dtype
    return None


class _Kernel:
    """What chainrule.compile records of an op run through another forward (bfloat16's)."""

    __slots__ = ("name", "forward")

    def __init__(self, name: str, forward) -> None:
        self.name, self.forward = name, forward


def _wrap_ints(arrays: list, dtype) -> list:
    """Python ints outside an integer dtype's range wrap around, as in PyTorch."""
    info = xp.iinfo(dtype)
    return [xp.array(a).astype(dtype) if type(a) is int and not info.min <= a <= info.max else a
            for a in arrays]


def _promote_mixed(op, arrays: list) -> list:
    tensors = [a for a in arrays if type(a) is _ndarray or type(a) is MetaArray]
    scalars = [a for a in arrays if a is not None and type(a) is not _ndarray
               and type(a) is not MetaArray]
    target = result_type(tensors, scalars)
    if op.float_out and target.kind not in "fcV":
        target = get_default_dtype().np
    out = [a.astype(target) if (type(a) is _ndarray or type(a) is MetaArray) and a.dtype != target
           else a for a in arrays]
    return _wrap_ints(out, target) if target.kind in "iu" else out


def _shape_error(op, arrays: list, err: Exception) -> Exception:
    shapes = [a.shape for a in arrays if type(a) is _ndarray or type(a) is MetaArray]
    if "broadcast" in str(err):
        # Report the first pair of sizes that cannot broadcast, as PyTorch does.
        ndim = max(len(s) for s in shapes)
        for dim in range(1, ndim + 1):
            sizes = [s[-dim] for s in shapes if dim <= len(s) and s[-dim] != 1]
            if len(set(sizes)) > 1:
                return RuntimeError(
                    f"{op.name}: The size of tensor a ({sizes[0]}) must match the size of tensor "
                    f"b ({[x for x in sizes if x != sizes[0]][0]}) at non-singleton dimension "
                    f"{ndim - dim}; input shapes {[list(s) for s in shapes]} do not broadcast")
    return RuntimeError(f"{op.name}: {err} (input shapes {[list(s) for s in shapes]})")


def _arrays(inputs: tuple) -> tuple[list, bool]:
    arrays = [x._data if isinstance(x, Tensor) else x for x in inputs]
    return arrays, any(isinstance(x, Tensor) and x._requires_grad for x in inputs)


def apply(op, *inputs, **params):
    """Run ``op`` on tensors (and Python scalars); record a Node when gradients are needed."""
    if stack.modes is not None:  # a mode is active: the levels of the stack see the call
        return _apply_in_modes(op, inputs, params)
    arrays = []
    needs_grad = False
    dtype = first = None  # first: the first tensor's array
    same = True  # every array has one dtype
    scalar = 0  # the highest category of the Python scalars (bool 0, int 1, float 2, complex 3)
    for x in inputs:
        if isinstance(x, Tensor):
            a = x._data
            arrays.append(a)
            if x._requires_grad:
                needs_grad = True
            if dtype is None:
                dtype = a.dtype
                first = a
            elif a.dtype != dtype:
                same = False
        else:
            arrays.append(x)
            if type(x) is float:
                scalar = 2
            elif x is not None and type(x) is not bool:
                scalar = max(scalar, _scalar_category(x))
    # PyTorch's promotion: only when dtypes differ, a scalar could change the dtype, an int
    # scalar could be out of range, or the op needs a float result from integers.
    if op.casts and (not same or dtype is None or (
            scalar and (scalar > _category(dtype) or dtype.kind in "iu"))
            or (op.float_out and dtype.kind not in "fcV")):
        arrays = _promote(op, arrays)
        dtype = _first_dtype(arrays)
    # bfloat16 and float8 (ml_dtypes' dtypes, numbered from 256): computed in float32
    forward = op.forward if dtype is None or dtype.num < USER_DTYPE_NUM else \
        forward_for(op, arrays, params, dtype)
    split = op.split  # set for elementwise ufunc ops: large calls split or use the buffer cache
    if split is not None and forward is op.forward and first is not None and (
            a.size > GRAIN or first.size > GRAIN):
        forward = split  # large: across the intra-op threads, or into a cached buffer (_threads)
    try:
        try:  # in NumPy's error state "ignore": PyTorch's silent log(0) == -inf
            out = (quiet_run(forward, *arrays, **params) if params  # ** costs when empty
                   else quiet_run(forward, *arrays))
        except RuntimeError as err:
            out = run_busy(err, forward, *arrays, **params)
    except ValueError as err:
        raise _shape_error(op, arrays, err) from None
    except NeedsValues:  # meta inputs, and a kernel that reads values
        out = on_standins(op, arrays, params)
    if op.n_outputs == 1:
        if type(out) is not _ndarray and type(out) is not MetaArray:
            out = xp.asarray(out)
        result = _wrap(out, None, 0)
        if op.view:
            _link_view(result, inputs[0], op, params)
        if needs_grad and state.enabled and op.differentiable:  # the base level: recording
            op.node_class.record(inputs, params, (result,))
        return result
    results = tuple(_wrap(a if type(a) is _ndarray or type(a) is MetaArray else xp.asarray(a),
                          None, 0) for a in out)
    if needs_grad and state.enabled and op.differentiable:
        op.node_class.record(inputs, params, results)
    return results


def _apply_in_modes(op, inputs: tuple, params: dict):
    """``apply`` with modes on the stack: each level, outermost first, sees the call."""
    run_op = stack.op
    if run_op is not None:  # op wrappers (the profiler): they wrap this call, which comes back
        result = run_op(apply, op, inputs, params, "")
        if result is not RUN:
            return result
    vmap = stack.batched
    if vmap is not None:  # vmap levels: a batched input hands the op to the innermost level
        result = vmap.call(op, inputs, params)
        if result is not RUN:
            return result
    dispatch = stack.dispatch
    results = (_kernel(op, inputs, params) if dispatch is None
               else dispatch(op, inputs, params, _kernel))
    if op.differentiable and state.enabled:
        for x in inputs:
            if isinstance(x, Tensor) and x._requires_grad:
                _record(op, inputs, params, results)
                break
    dual = stack.dual
    if dual is not None:  # forward mode: the outputs' tangents, after recording (see apply)
        dual(op, inputs, params, results)
    return results[0] if op.n_outputs == 1 else results


def _kernel(op, inputs: tuple, params: dict) -> tuple:
    """The kernel level of an op call: promotion, the forward on arrays, the wrapped results
    (views linked), reported to chainrule.compile's capture when one records."""
    arrays = []
    dtype = None
    same = True
    scalar = 0
    for x in inputs:  # as in apply
        if isinstance(x, Tensor):
            a = x._data
            arrays.append(a)
            if dtype is None:
                dtype = a.dtype
            elif a.dtype != dtype:
                same = False
        else:
            arrays.append(x)
            if type(x) is float:
                scalar = 2
            elif x is not None and type(x) is not bool:
                scalar = max(scalar, _scalar_category(x))
    capture = stack.capture
    if op.casts and (not same or dtype is None or (
            scalar and (scalar > _category(dtype) or dtype.kind in "iu"))
            or (op.float_out and dtype.kind not in "fcV")):
        before = arrays
        arrays = _promote(op, arrays)
        if capture is not None:
            capture.promoted(before, arrays)
        dtype = _first_dtype(arrays)
    forward = op.forward if dtype is None or dtype.num < USER_DTYPE_NUM else \
        forward_for(op, arrays, params, dtype)
    run = forward
    if op.split is not None and forward is op.forward:
        forward = run = kernel_for(op, arrays)
        if capture is not None:  # a large one runs, and replays, with results from the buffer
            for a in arrays:  # cache as eager's (the same bits, no fresh pages to fault in)
                if type(a) is _ndarray and a.size > GRAIN:
                    forward = run = op.split
                    break
    if capture is not None and capture.generators:  # draws from a stream may be stray
        capture.before_op()
    try:
        try:
            out = (quiet_run(run, *arrays, **params) if params else quiet_run(run, *arrays))
        except RuntimeError as err:
            out = run_busy(err, run, *arrays, **params)
    except ValueError as err:
        raise _shape_error(op, arrays, err) from None
    except NeedsValues:
        out = on_standins(op, arrays, params)
    if capture is not None:  # chainrule.compile records the kernel
        out = capture.op(op if forward is op.forward else _Kernel(op.name, forward), arrays,
                         params, out, inputs)
    if op.n_outputs == 1:
        if type(out) is not _ndarray and type(out) is not MetaArray:
            out = xp.asarray(out)
        result = _wrap(out, None, 0)
        if op.view:
            _link_view(result, inputs[0], op, params)
        return (result,)
    return tuple(_wrap(a if type(a) is _ndarray or type(a) is MetaArray else xp.asarray(a),
                       None, 0) for a in out)


def _forward(op, inputs: tuple, params: dict, results: tuple, first: int = 1) -> None:
    """Set the outputs' tangents from the op's JVP rule (forward-mode AD), level by level.

    The rule for dual level L runs with the levels from L on hidden, so the tangents it
    computes carry their own tangents of the outer levels (nested jvp without confusion).
    """
    top = forward_state.level
    for level in range(first, top + 1):
        tangents = [get_tangent(x, level) if isinstance(x, Tensor) else None for x in inputs]
        if all(t is None for t in tangents) or not op.differentiable:
            continue
        if op.jvp is None:
            raise RuntimeError(f"Trying to use forward AD with {op.name} that does not support "
                               "it (no JVP rule is registered for it)")
        forward_state.level = level - 1  # the rule itself runs on this level's primals
        try:
            out = _jvp(op, inputs, tangents, params, results)
        finally:
            forward_state.level = top
        for result, tangent in zip(results, out if len(results) > 1 else (out,)):
            if tangent is not None and result._data.dtype.kind in "fcV":
                if tangent._data.shape != result._data.shape:
                    tangent = tangent.expand(result._data.shape)
                if tangent._data.dtype != result._data.dtype:
                    tangent = tangent.to(result._data.dtype)
                set_tangent(result, tangent, level)
    # Outputs saved for backward before they had tangents take them now (forward over reverse).
    node = results[0].grad_fn
    saved = node.saved.get("out") if node is not None and node.saved else None
    if saved is not None:
        for s, result in zip(saved if type(saved) is tuple else (saved,), results):
            tangents = result._extra.get("tangent") if result._extra else None
            s.tangent = tangents or None  # shared: see SavedOutput


def _jvp(op, inputs: tuple, tangents: list, params: dict, results: tuple):
    from ._creation import zeros_like

    kind = op.jvp
    differentiable = [isinstance(x, Tensor) and rule is not None
                      for x, rule in zip(inputs, op.vjp)]
    if kind == "linear":
        args = [(t if t is not None else zeros_like(x)) if d else x
                for x, t, d in zip(inputs, tangents, differentiable)]
        return apply(op, *args, **params)
    if kind == "multilinear":
        total = None
        for i, t in enumerate(tangents):
            if t is not None and differentiable[i]:
                args = list(inputs)
                args[i] = t
                term = apply(op, *args, **params)
                total = term if total is None else total + term
        return total
    env = dict(params)
    env.update(zip(op.inputs, inputs))
    env["out"] = results[0] if len(results) == 1 else results
    if kind == "elementwise":
        total = None
        for i, t in enumerate(tangents):
            if t is not None and differentiable[i]:
                env["g"] = t
                term = op.vjp[i](*[env[a] for a in op.rule_args[i]])
                total = term if total is None else total + term
        return total
    env.update(("t_" + name, t) for name, t in zip(op.inputs, tangents))
    return kind(**{a: env.get(a) for a in op.jvp_args})


def _record(op, inputs: tuple, params: dict, results: tuple) -> None:
    """Record a node of ``op`` (some input requires grad): its node class's recorder."""
    op.node_class.record(inputs, params, results)


def _link_view(result: Tensor, base: Tensor, op, params: dict, *, shared: bool = False) -> None:
    """Make ``result`` a view of ``base``: one version counter, and the steps to replay it.
    ``shared``: link without asking NumPy whether the two share storage."""
    if not shared:
        owner = base._data.base if base._data.base is not None else base._data
        if result._data.base is not owner and result._data is not owner:
            return  # NumPy had to copy: not a view
    if base._vc is None:
        base._vc = [0]
    result._vc = base._vc
    # A view of a tensor that requires grad does too, even when made under no_grad (a leaf then).
    result._requires_grad = base._requires_grad
    root_view = base._extra.get("view") if base._extra else None
    root, steps = root_view if root_view else (base, ())
    result._extra_dict()["view"] = (root, steps + ((op, params),))
    # The root knows its live views, to give them its new history after an in-place change.
    views = root._extra_dict().get("views")
    if views is None:
        views = root._extra["views"] = {}
    views[id(result)] = weakref.ref(result)  # a dead view's id may be reused: it is replaced
    if len(views) >= 16 and not len(views) & (len(views) - 1):  # at powers of two: prune
        for key in [k for k, ref in views.items() if ref() is None]:
            del views[key]


def _refresh_views(root: Tensor, target: Tensor) -> None:
    """Views of ``root`` (other than ``target``) replay their steps on its new history, as
    PyTorch regenerates a view's grad_fn once its base changed in place."""
    views = root._extra.get("views") if root._extra else None
    if not views:
        return
    for ref in tuple(views.values()):
        view = ref()
        if view is None or view is target:
            continue
        if view.grad_fn is None and view._requires_grad:
            # Made under no_grad of a base that requires grad: using it now raises, as PyTorch's.
            view._extra["acc"] = _modified_no_grad_view
            continue
        replay = root
        for step_op, step_params in view._extra["view"][1]:
            replay = apply(step_op, replay, **step_params)
        view.grad_fn, view._output_nr = replay.grad_fn, replay._output_nr
        view._requires_grad = replay._requires_grad
        view._took_replay(replay)
        if stack.modes is not None and stack.dual is not None and forward_state.level:
            copy_tangents(replay, view)


_NO_GRAD_VIEW = (
    "A view was created in no_grad mode and {} with grad mode enabled. Given that this use case "
    "is ambiguous and error-prone, it is forbidden. You can clarify your code by moving both the "
    "view and the inplace either both inside the no_grad block (if you don't want the inplace to "
    "be tracked) or both outside (if you want the inplace to be tracked).")
_VIEW_OF_LEAF = ("a view of a leaf Variable that requires grad is being used in an in-place "
                 "operation.")


def _modified_no_grad_view():
    """What a view made under no_grad gives as its AccumulateGrad once its base changed."""
    raise RuntimeError(_NO_GRAD_VIEW.format(
        "its base or another view of its base has been modified inplace"))


def _check_inplace(target: Tensor, recording: bool) -> None:
    if not recording:
        return
    if target._vc is INFERENCE and not INFERENCE.inference_mode():
        raise RuntimeError(INFERENCE_INPLACE)  # before autograd's own checks, as PyTorch's
    view = target._extra.get("view") if target._extra else None
    if target.requires_grad and target.grad_fn is None:
        if view is None:
            raise RuntimeError("a leaf Variable that requires grad is being used in an in-place "
                               "operation.")
        if view[0].requires_grad:  # no history although its base has one: made under no_grad
            raise RuntimeError(_NO_GRAD_VIEW.format("is being modified inplace"))
        raise RuntimeError(_VIEW_OF_LEAF)  # a view given requires_grad itself
    if view is not None and view[0].requires_grad and view[0].grad_fn is None:
        raise RuntimeError(_VIEW_OF_LEAF)


def _write(target: Tensor, array, op, capture=None) -> None:
    """Write ``array`` into ``target``'s storage (``capture``: the stack's, when it records)."""
    if type(target) is BatchedTensor:
        raise RuntimeError(f"{op.name}_: writing into a batched tensor outside its vmap level")
    if _category(array.dtype) > _category(target._data.dtype):
        raise RuntimeError(
            f"{op.name}_: result type {array.dtype} can't be cast to the desired output type "
            f"{target._data.dtype}; use the out-of-place {op.name} or convert the tensor first")
    if capture is not None:
        capture.before_write(target._data, array)
    target._data[...] = array
    if capture is not None:
        capture.write(target._data, array)


def bump_version(target: Tensor, name: str | None = None) -> None:
    """Count an in-place change of ``target`` (by the op ``name``) in its version counter."""
    counter = target._vc
    if counter is None:
        target._vc = [1]
    else:
        counter[0] += 1
        if len(counter) > 1:  # a node saved it: note where (autograd's in-place error says)
            note_inplace(counter, name)


def apply_inplace(op, target: Tensor, *args, **params) -> Tensor:
    """``target.op_(*args)``: write the result into target's storage and rebase its history."""
    if stack.modes is not None:  # a mode is active: the levels of the stack see the call
        return _apply_inplace_in_modes(op, target, args, params)
    arrays, needs_grad = _arrays((target,) + args)
    recording = state.enabled and needs_grad
    _check_inplace(target, recording)
    if not recording:
        return _write_inplace(op, target, args, arrays, params, None)
    return _inplace_recorded(op, target, args, params, False)


def _apply_inplace_in_modes(op, target: Tensor, args: tuple, params: dict) -> Tensor:
    run_op = stack.op
    if run_op is not None:
        result = run_op(apply_inplace, op, (target,) + args, params, "_")
        if result is not RUN:
            return result
    vmap = stack.batched
    if vmap is not None:
        result = vmap.call_inplace(op, target, args, params)
        if result is not RUN:
            return result
    arrays, needs_grad = _arrays((target,) + args)
    recording = state.enabled and needs_grad
    _check_inplace(target, recording)
    dual = stack.dual is not None and forward_state.level and any(
        isinstance(x, Tensor) and get_tangent(x) is not None for x in (target,) + args)
    if not recording and not dual:
        dispatch = stack.dispatch
        if dispatch is not None:  # dispatch modes see the write as aten's in-place op
            return dispatch(op, (target,) + args, params, _write_kernel, True)[0]
        return _write_inplace(op, target, args, arrays, params, stack.capture)
    if not recording and not (target._extra and (
            target._extra.get("view") or target._extra.get("views"))):
        # Only the values and the tangent change: the history stays, as PyTorch's. (A view or
        # a base with views still takes the write's empty history: a known bug.)
        kept = target.grad_fn, target._output_nr, target._requires_grad
        _inplace_recorded(op, target, args, params, dual)
        target.grad_fn, target._output_nr, target._requires_grad = kept
        return target
    return _inplace_recorded(op, target, args, params, dual)


def _write_kernel(op, inputs: tuple, params: dict) -> tuple:
    """The kernel level of an in-place op nothing records (below the dispatch seam)."""
    return (_write_inplace(op, inputs[0], inputs[1:], _arrays(inputs)[0], params,
                           stack.capture),)


def _write_inplace(op, target: Tensor, args: tuple, arrays: list, params: dict,
                   capture) -> Tensor:
    """An in-place op nothing records: the kernel writes into the target's storage."""
    if op.casts:
        before = arrays
        arrays = [arrays[0]] + _promote(op, arrays)[1:]
        if capture is not None:
            capture.promoted(before, arrays)
    if type(op.forward) is _ufunc and not params and target._data.flags.writeable:
        try:  # straight into the target's storage: no temporary, no copy
            if capture is not None:
                capture.before_write(target._data, *arrays)
            kernel = op.forward if op.split is None else kernel_for(op, arrays)
            run_quiet(kernel, *arrays, out=target._data)
            if capture is not None:
                capture.inplace(kernel, arrays, target._data)
        except TypeError:  # NumPy refuses to cast the result to the target's dtype
            out = run_quiet(op.forward, *arrays)
            _write(target, out, op, capture)  # raises PyTorch's error
        except ValueError as err:
            if "non-broadcastable output" not in str(err):
                raise _shape_error(op, arrays, err) from None
            shape = xp.broadcast_shapes(*[a.shape for a in arrays if type(a) is _ndarray])
            raise RuntimeError(
                f"{op.name}_: output with shape {list(target._data.shape)} doesn't match the "
                f"broadcast shape {list(shape)}") from None
        bump_version(target, op.name + "_")
        return target
    try:
        out = run_quiet(op.forward, *arrays, **params)
    except ValueError as err:
        raise _shape_error(op, arrays, err) from None
    except NeedsValues:
        out = on_standins(op, arrays, params)
    if capture is not None:
        out = capture.op(op, arrays, params, out, (target,) + args)
    if out.shape != target._data.shape:
        raise RuntimeError(
            f"{op.name}_: output with shape {list(target._data.shape)} doesn't match the "
            f"broadcast shape {list(out.shape)}")
    _write(target, out if type(out) is MetaArray else xp.asarray(out), op, capture)
    bump_version(target, op.name + "_")
    return target


def _inplace_recorded(op, target: Tensor, args: tuple, params: dict, dual) -> Tensor:
    """An in-place op that is recorded (or has tangents): the out-of-place op, then ``commit``."""
    source = target
    if any(0 in reads for reads in op.reads):
        # The rule reads the old value, which the write below overwrites: save a copy.
        source = Tensor._wrap(target._data.copy(), target.grad_fn, target._output_nr)
        source._requires_grad = target._requires_grad
        if dual:
            copy_tangents(target, source)
        if target.grad_fn is None and target.requires_grad:
            source = target
    new = apply(op, source, *args, **params)
    if new._data.shape != target._data.shape:
        raise RuntimeError(
            f"{op.name}_: output with shape {list(target._data.shape)} doesn't match the "
            f"broadcast shape {list(new._data.shape)}")
    commit(target, new, op)
    return target


def commit(target: Tensor, new: Tensor, op) -> None:
    """Make ``target`` hold ``new``'s values and history, through its base if it is a view."""
    modes = stack.modes
    capture = stack.capture if modes is not None else None
    dual = modes is not None and stack.dual is not None and forward_state.level
    view = target._extra.get("view") if target._extra else None
    if view is not None:
        view = target._write_through(view, new)  # a batched tensor's rule may have written it
    if view is None:
        target._take_values(new, op, capture)
        bump_version(target, op.name + "_")
        target.grad_fn, target._output_nr = new.grad_fn, new._output_nr
        target._requires_grad = new._requires_grad
        if dual:
            copy_tangents(new, target)
        _save_target(new, target)
        _refresh_views(target, target)
        return
    root, steps = view
    new_root = apply(_batching.ops["view_scatter"], root, new, steps=steps)
    root._take_values(new_root, op, capture)
    bump_version(root, op.name + "_")
    root.grad_fn, root._output_nr = new_root.grad_fn, new_root._output_nr
    root._requires_grad = new_root._requires_grad
    if dual:  # before the replay, which takes the root's tangent
        copy_tangents(new_root, root)
    replay = root
    for step_op, step_params in steps:
        replay = apply(step_op, replay, **step_params)
    target.grad_fn, target._output_nr = replay.grad_fn, replay._output_nr
    target._requires_grad = replay._requires_grad
    target._took_replay(replay)
    if dual:
        copy_tangents(replay, target)
    _save_target(new, target)
    _refresh_views(root, target)


def _save_target(new: Tensor, target: Tensor) -> None:
    """An in-place op that saved its output saves the target instead, as PyTorch's: a later
    in-place change of the target then raises the 'modified by an inplace operation' error."""
    node = new.grad_fn
    if node is not None and node.saved and type(node.saved.get("out")) is SavedOutput:
        node.saved["out"] = save_output(target)


def _tangents(op, inputs: tuple, params: dict, results: tuple) -> None:
    """Forward mode's seam: the outputs' tangents, when this thread has a dual level open."""
    if forward_state.level:
        _forward(op, inputs, params, results)


DUAL.seams["dual"] = _tangents
def _take_values(self: Tensor, new: Tensor, op, capture) -> None:
    """``self`` takes ``new``'s values (in place, in its storage)."""
    _write(self, new._data, op, capture)


def _write_through(self: Tensor, view: tuple, new: Tensor) -> tuple:
    """How an in-place result reaches a view's base: through its view steps."""
    return view


def _took_replay(self: Tensor, replay: Tensor) -> None:
    """After a view's base changed, the view replayed on it is ``replay``."""


# What commit does per kind of tensor: BatchedTensor has its own (vmap's part, in _batching).
Tensor._take_values = _take_values
Tensor._write_through = _write_through
Tensor._took_replay = _took_replay
_batching.apply = apply
_batching.apply_inplace = apply_inplace
_batching.commit = commit
_batching.record = _record
_batching.tangents = _forward
