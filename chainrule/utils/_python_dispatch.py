"""``torch.utils._python_dispatch``: ``TorchDispatchMode``, a mode that sees every kernel call of
forward and backward, named as PyTorch's ``aten`` operators.

Dispatch modes are one level of the mode stack (``_modes``: the ``dispatch`` seam, below
autograd). A chainrule op record is one kernel: the level sees each record's kernel call, in the
forward and in the backward's rules, named by ``aten_call``: ``mm`` is ``aten.mm.default``,
``add`` ``aten.add.Tensor``; the records that stand for several of PyTorch's kernels are named as
PyTorch's decomposition of them (``linear`` is ``aten.addmm`` or ``aten.mm`` on the folded input,
``matmul`` ``aten.mm`` where PyTorch folds the batch into rows, else ``aten.bmm``), their
arguments in aten's layout (views of the same arrays). A convolution's backward node is one
``aten.convolution_backward.default`` call, as PyTorch's kernel (through the engine's ``node``
seam); the ops its rules run are part of it. A record with no aten counterpart is named
``chainrule.<record>.default``. docs/design.md has the table.

Inside ``__torch_dispatch__``, ``func(*args, **kwargs)`` runs the call through the modes below
(then the kernel); with other arguments it runs aten's operator of that name on them. Ops the
handler itself calls are seen by the modes below it only, as PyTorch's.
"""

from __future__ import annotations

import functools
import math
import threading

from .. import _modes, _tooling
from .._modes import Call
from ..library import _ops
from ..library._ops import ATEN_NAMES, OpOverload, namespace
from ..tensor import Tensor

__all__ = ["TorchDispatchMode", "BaseTorchDispatchMode", "aten_call",
           "any_torch_dispatch_mode_on_stack", "is_in_torch_dispatch_mode",
           "is_in_any_mode_without_ignore_compile_internals", "is_traceable_wrapper_subclass",
           "is_traceable_wrapper_subclass_type"]


class _State(threading.local):
    def __init__(self) -> None:
        self.stack: list = []  # the modes, innermost last
        self.limit: int | None = None  # inside a handler: the modes below it see calls
        self.pending: list = []  # (func, continuation) of the handlers running
        self.fused = 0  # inside a node shown as one call: its ops are part of it


class _DispatchModes(_modes.Mode):
    """The level of the mode stack below autograd where dispatch modes see kernel calls."""

    order = 70
    name = "dispatch modes"


_state = _State()
_lock = threading.Lock()
_users = 0  # threads' entered modes: the seams are installed while any is


class TorchDispatchMode:
    """A context manager whose ``__torch_dispatch__(func, types, args, kwargs)`` runs in place
    of every kernel call (forward and backward) inside it."""

    def __init__(self, _dispatch_key=None) -> None:
        self._dispatch_key = _dispatch_key

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        raise NotImplementedError

    def __enter__(self):
        _push_mode(self)
        return self

    def __exit__(self, exc_type, exc_val, exc_tb) -> None:
        _pop_mode()

    @classmethod
    def push(cls, *args, **kwargs):
        """A new mode, for ``with Mode.push(...)``."""
        return cls(*args, **kwargs)

    @classmethod
    def is_infra_mode(cls) -> bool:
        return False


class BaseTorchDispatchMode(TorchDispatchMode):
    """A dispatch mode that runs every call unchanged (a base to override selectively)."""

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        return func(*args, **(kwargs or {}))


def _push_mode(mode: TorchDispatchMode) -> None:
    global _users
    _state.stack.append(mode)
    with _lock:
        _users += 1
        if _users == 1:
            _modes.push(DISPATCH_MODES)
            _tooling.add_node_wrapper(_on_node)
            _ops.redispatch = _redispatch


def _pop_mode() -> TorchDispatchMode:
    global _users
    mode = _state.stack.pop()
    with _lock:
        _users -= 1
        if _users == 0:
            _modes.pop(DISPATCH_MODES)
            _tooling.remove_node_wrapper(_on_node)
            _ops.redispatch = None
    return mode


def _get_current_dispatch_mode() -> TorchDispatchMode | None:
    return _state.stack[-1] if _state.stack else None


def _get_current_dispatch_mode_stack() -> list:
    return list(_state.stack)


def is_in_torch_dispatch_mode(include_infra_modes: bool = True) -> bool:
    """Whether a dispatch mode is active in this thread."""
    return bool(_state.stack)


def any_torch_dispatch_mode_on_stack() -> bool:
    """Whether a dispatch mode is active in this thread."""
    return bool(_state.stack)


def is_in_any_mode_without_ignore_compile_internals() -> bool:
    """Whether a dispatch mode is active (none of chainrule's ignores compile's internals)."""
    return bool(_state.stack)


def is_traceable_wrapper_subclass(t: object) -> bool:
    """Whether ``t`` is a tensor subclass wrapping inner tensors (``__tensor_flatten__``):
    chainrule's tensors never are."""
    return False


def is_traceable_wrapper_subclass_type(t: type) -> bool:
    """Whether the class ``t`` is a wrapper tensor subclass: chainrule's never are."""
    return False


# ---- running a call through the modes ----------------------------------------------------------

def _visible() -> int:
    return len(_state.stack) if _state.limit is None else _state.limit


def _dispatch(index: int, func, args: tuple, kwargs: dict, run):
    if index < 0:
        limit, _state.limit = _state.limit, 0  # the kernel's own inner ops: no modes
        try:
            return run(args, kwargs)
        finally:
            _state.limit = limit
    mode = _state.stack[index]
    types = tuple(dict.fromkeys(type(a) for a in _flat(args) if isinstance(a, Tensor)))
    _state.pending.append((func, functools.partial(_dispatch, index - 1, func, run=run)))
    limit, _state.limit = _state.limit, index  # ops the handler calls: the modes below it
    try:
        return mode.__torch_dispatch__(func, types, args, kwargs)
    finally:
        _state.limit = limit
        _state.pending.pop()


def _redispatch(func: OpOverload, args: tuple, kwargs: dict):
    """``func(*args)`` called by a handler: on to the modes below it."""
    if _state.pending and _state.pending[-1][0] is func:
        return _state.pending[-1][1](args, kwargs)
    return NotImplemented


def _flat(args) -> list:
    out = []
    for a in args:
        if isinstance(a, (list, tuple)):
            out.extend(a)
        else:
            out.append(a)
    return out


def _on_kernel(op, inputs: tuple, params: dict, kernel, inplace: bool = False) -> tuple:
    """The ``dispatch`` seam: the kernel call of ``op`` (its in-place form, writing into the
    first input, with ``inplace``) through this thread's modes."""
    visible = _visible()
    if _state.fused or not visible:
        return kernel(op, inputs, params)
    func, args, kwargs = aten_call(op, inputs, params)
    if inplace:
        func = _inplace(func)
    single = op.n_outputs == 1

    def run(new_args, new_kwargs):
        if new_args is args or _same(new_args, args) and new_kwargs.keys() == kwargs.keys() \
                and _same(new_kwargs.values(), kwargs.values()):
            results = kernel(op, inputs, params)
            return results[0] if single else results
        if func._impl is None:
            raise NotImplementedError(f"{func} has no chainrule implementation")
        return func._impl(*new_args, **new_kwargs)

    out = _dispatch(visible - 1, func, args, kwargs, run)
    return (out,) if single else tuple(out)


def _same(new, old) -> bool:
    new, old = tuple(new), tuple(old)
    return len(new) == len(old) and all(a is b or type(a) is not Tensor and type(a) is type(b)
                                        and _equal(a, b) for a, b in zip(new, old))


def _equal(a, b) -> bool:
    try:
        return bool(a == b)
    except (TypeError, ValueError, RuntimeError):
        return False


def _inplace(func: OpOverload) -> OpOverload:
    """The in-place form of an aten overload: ``aten.add_.Tensor`` for ``aten.add.Tensor``;
    called with other arguments by a handler, it runs the Tensor method of that name."""
    packet = func.overloadpacket
    name = packet._name + "_"
    found = namespace(packet._ns)._packets.get(name)
    if found is None:
        found = namespace(packet._ns).packet(
            name, lambda self, *args, **kwargs: getattr(self, name)(*args, **kwargs))
    overload = func._overloadname
    return found.overload(_INPLACE_OVERLOAD.get(overload, overload) if name == "pow_" else
                          overload)


_INPLACE_OVERLOAD = {"Tensor_Scalar": "Scalar", "Tensor_Tensor": "Tensor"}  # pow_'s


DISPATCH_MODES = _DispatchModes()
DISPATCH_MODES.seams["dispatch"] = _on_kernel


def _on_node(node, call, *args):
    op = getattr(node, "op", None)
    if op is None or op.name != "convolution" or not _visible() or _state.fused:
        return call(*args)
    func, dargs = _convolution_backward(node, args[0][0])

    def run(new_args, new_kwargs):
        _state.fused += 1
        try:
            return call(*args)
        finally:
            _state.fused -= 1

    return _dispatch(_visible() - 1, func, dargs, {}, run)


# ---- aten names ----------------------------------------------------------------------------

_OVERLOAD = {  # record -> (aten name, overload) where the names differ or the overload is not
    "add": ("add", "Tensor"), "sub": ("sub", "Tensor"), "mul": ("mul", "Tensor"),
    "div": ("div", "Tensor"), "div_rounding": ("div", "Tensor_mode"),
    "pow": ("pow", "Tensor_Scalar"), "pow_tensor": ("pow", "Tensor_Tensor"),
    "rpow": ("pow", "Scalar"), "sum_dim": ("sum", "dim_IntList"), "mean_dim": ("mean", "dim"),
    "transpose": ("transpose", "int"), "select": ("select", "int"), "slice": ("slice", "Tensor"),
    "eq": ("eq", "Tensor"), "ne": ("ne", "Tensor"), "lt": ("lt", "Tensor"),
    "le": ("le", "Tensor"), "gt": ("gt", "Tensor"), "ge": ("ge", "Tensor"),
    "max_dim": ("max", "dim"), "min_dim": ("min", "dim"), "where": ("where", "self"),
    "softmax": ("_softmax", "default"), "log_softmax": ("_log_softmax", "default"),
    "to_copy": ("_to_copy", "default"), "to_device": ("_to_copy", "default"),
    "layer_norm": ("native_layer_norm", "default"),
    "batch_norm": ("native_batch_norm", "default"),
    "group_norm": ("native_group_norm", "default"), "masked_fill": ("masked_fill", "Scalar"),
    "masked_fill_tensor": ("masked_fill", "Tensor"), "std": ("std", "correction"),
    "var": ("var", "correction"), "var_mean": ("var_mean", "correction"),
    "std_mean": ("std_mean", "correction"), "split": ("split", "Tensor"),
    "unbind": ("unbind", "int"), "remainder": ("remainder", "Tensor"),
    "fmod": ("fmod", "Tensor"), "scatter": ("scatter", "src"), "index": ("index", "Tensor"),
    "sort": ("sort", "default"), "sort_stable": ("sort", "stable"),
    "prod_dim": ("prod", "dim_int"), "lerp": ("lerp", "Scalar"),
    "lerp_tensor": ("lerp", "Tensor"), "rsub": ("rsub", "Scalar"),
    "rsub_tensor": ("rsub", "Tensor"), "round_decimals": ("round", "decimals"),
    "clamp_tensor": ("clamp", "Tensor"), "bitwise_and": ("bitwise_and", "Tensor"),
    "bitwise_or": ("bitwise_or", "Tensor"), "bitwise_xor": ("bitwise_xor", "Tensor"),
    "fft_c2c": ("_fft_c2c", "default"), "fft_r2c": ("_fft_r2c", "default"),
    "fft_c2r": ("_fft_c2r", "default"), "unfold": ("im2col", "default"),
    "fold": ("col2im", "default"), "max_pool2d": ("max_pool2d_with_indices", "default"),
    "max_pool3d": ("max_pool3d_with_indices", "default"),
    "logsigmoid": ("log_sigmoid_forward", "default"), "nll_loss": ("nll_loss_forward", "default"),
    "squeeze": ("squeeze", "dims"), "gather": ("gather", "default"),
    "xlogy": ("xlogy", "Tensor"), "fill": ("fill", "Tensor"),
    "scatter_reduce": ("scatter_reduce", "two"), "index_fill": ("index_fill", "int_Tensor"),
    "remainder_scalar": ("remainder", "Scalar"), "fmod_scalar": ("fmod", "Scalar"),
    "remainder_scalar_self": ("remainder", "Scalar_Tensor"),
    "clamp_min_tensor": ("clamp_min", "Tensor"), "clamp_max_tensor": ("clamp_max", "Tensor"),
    "bitwise_left_shift": ("bitwise_left_shift", "Tensor"),
    "bitwise_right_shift": ("bitwise_right_shift", "Tensor"),
    "median_dim": ("median", "dim"), "isin": ("isin", "Tensor_Tensor"),
    "frexp_exponent": ("frexp", "Tensor"), "unique": ("_unique2", "default"),
    "embedding_backward": ("embedding_dense_backward", "default"),
    "max_pool_backward": ("max_pool2d_with_indices_backward", "default"),
    "avg_pool_backward": ("avg_pool2d_backward", "default"),
    "nll_loss2d": ("nll_loss2d_forward", "default"),
    "histogram": ("histogram", "bins_tensor"), "histogram_weighted": ("histogram", "bin_ct"),
    "polygamma_": ("polygamma", "default"), "mvlgamma_": ("mvlgamma", "default"),
    "leaky_relu_": ("leaky_relu", "default"), "elu_": ("elu", "default"),
    "celu_": ("celu", "default"),
}


def _overload(name: str, overload: str = "default") -> OpOverload:
    ns = "aten" if name in ATEN_NAMES else "chainrule"
    packet = getattr(namespace(ns), name) if ns == "aten" else namespace(ns).packet(name)
    return packet.overload(overload)


def _view(t: Tensor, shape: tuple) -> Tensor:
    """``t``'s array reshaped, as a tensor (no op: the mode's own bookkeeping)."""
    return Tensor._wrap(t._data.reshape(shape), None, 0)


def _mT(t: Tensor) -> Tensor:
    return Tensor._wrap(t._data.swapaxes(-1, -2), None, 0)


def _batched(a: Tensor, b: Tensor):
    """aten.bmm's arguments for matmul of batched ``a`` and ``b`` (batch dims broadcast)."""
    sa, sb = tuple(a.shape), tuple(b.shape)
    batch = _broadcast(sa[:-2], sb[:-2])
    n = math.prod(batch)
    return (_view_expanded(a, batch, sa[-2:], n), _view_expanded(b, batch, sb[-2:], n))


def _view_expanded(t: Tensor, batch: tuple, last: tuple, n: int) -> Tensor:
    import numpy

    data = numpy.broadcast_to(t._data, batch + last) if type(t._data) is numpy.ndarray else \
        t._data.reshape((1,) * (len(batch) + 2 - t._data.ndim) + tuple(t._data.shape))
    try:
        return Tensor._wrap(data.reshape((n,) + last), None, 0)
    except (ValueError, TypeError):
        return Tensor._wrap(numpy.empty((n,) + last, dtype=t._data.dtype), None, 0)


def _broadcast(a: tuple, b: tuple) -> tuple:
    n = max(len(a), len(b))
    a, b = (1,) * (n - len(a)) + a, (1,) * (n - len(b)) + b
    return tuple(max(x, y) if 1 in (x, y) else x for x, y in zip(a, b))


def _matmul_call(a: Tensor, b: Tensor):
    """PyTorch's matmul of ``a`` (>= 2-D) and ``b`` (>= 2-D, one of them >= 3-D): mm on the
    folded batch when PyTorch folds, else bmm."""
    grad = a.requires_grad or b.requires_grad
    if a.ndim >= 3 and b.ndim == 2:
        return _overload("mm"), (_view(a, (-1, a.shape[-1])), b)
    if a.ndim == 2 and b.ndim >= 3 and grad:  # folded as (b^T a^T)^T
        bt = _mT(b)
        return _overload("mm"), (_view(bt, (-1, bt.shape[-1])), _mT(a))
    return _overload("bmm"), _batched(a, b)


def aten_call(op, inputs: tuple, params: dict):
    """(func, args, kwargs): the aten operator a call of the record ``op`` is, and its
    arguments in aten's layout."""
    if type(op) is Call:  # a factory, a random fill, an out= form ...: named by its caller
        name = op.name
        ns = "aten" if name in ATEN_NAMES or name[-1] == "_" and name[:-1] in ATEN_NAMES else \
            "chainrule"
        packet = namespace(ns).packet(name)
        if packet._impl is None and op.impl is not None:
            namespace(ns).packet(name, op.impl)
        return packet.overload(op.overload), inputs, params
    name = op.name
    if name == "fill" and op.backward_name == "ZeroBackward0":  # zero_: fill_'s kernel
        return _overload("zero"), inputs[:1], {}
    if name == "linear":
        x, w, bias = inputs
        wt = _mT(w)
        if bias is not None and (x.ndim == 2 or x.ndim == 3 and x.is_contiguous()):
            return _overload("addmm"), (bias, _view(x, (-1, x.shape[-1])), wt), {}
        if x.ndim == 1:
            return _overload("mm"), (_view(x, (1, -1)), wt), {}
        return _overload("mm"), (_view(x, (-1, x.shape[-1])), wt), {}
    if name == "matmul":
        func, args = _matmul_call(*inputs)
        return func, args, {}
    if name == "vm":
        a, b = inputs
        if b.ndim == 2:
            return _overload("mm"), (_view(a, (1, -1)), b), {}
        return _overload("mv"), inputs, {}
    if name == "convolution":
        x, w, bias = inputs
        p = params
        return _overload("convolution"), (x, w, bias, p["stride"], p["padding"], p["dilation"],
                                          p["transposed"], p.get("output_size"), p["groups"]), {}
    if name == "einsum":  # aten.einsum(equation, tensors)
        return _overload("einsum"), (params["equation"], list(inputs)), {}
    if "::" in name:  # a custom op: its own operator (torch.ops.<namespace>.<name>.default)
        ns, _, short = name.partition("::")
        return namespace(ns).packet(short).overload("default"), inputs, dict(params)
    if name in _OVERLOAD:
        aten, overload = _OVERLOAD[name]
        if aten in _SCALAR_OVERLOAD and len(inputs) > 1 and not isinstance(inputs[1], Tensor):
            overload = "Scalar"  # gt(x, 1) is gt.Scalar (add(x, 1) stays add.Tensor)
    else:
        aten, overload = name, "default"
    return _overload(aten, overload), inputs, dict(params)


_SCALAR_OVERLOAD = frozenset(("eq", "ne", "lt", "le", "gt", "ge", "fill"))


def _convolution_backward(node, grad):
    """aten.convolution_backward's arguments for a convolution node's backward."""
    x_shape, w_shape = (m[0] if m is not None else None for m in node.meta[:2])
    if x_shape is None:
        x_shape = tuple(node._saved_input.shape)
    if w_shape is None:
        w_shape = tuple(node._saved_weight.shape)
    p = node.params
    mask = [m is not None for m in node.meta]
    args = (grad, _Shape(x_shape), _Shape(w_shape), None, p["stride"], p["padding"],
            p["dilation"], p["transposed"], p.get("output_size"), p["groups"], mask)
    return _overload("convolution_backward"), args


class _Shape:
    """A stand-in argument with only a shape (a saved value the node has not kept)."""

    def __init__(self, shape) -> None:
        self.shape = shape
