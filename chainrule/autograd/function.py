"""Custom differentiable functions: ``Function`` with ``forward``/``backward`` and its ctx."""

from __future__ import annotations

import functools
import warnings
from typing import Any

from .._modes import stack
from .forward_ad import get_tangent, set_tangent
from .forward_ad import state as forward_state
from .grad_mode import no_grad, state
from .graph import (
    FREED_MESSAGE,
    Node,
    SavedTensor,
    _fit,
    next_seq,
    pack_tensor,
    save_input,
    save_output,
    saved_hooks,
)

__all__ = ["FunctionCtx", "BackwardCFunction", "FunctionMeta", "Function", "once_differentiable",
           "InplaceFunction", "NestedIOFunction"]


def _tensor_type():
    from ..tensor import Tensor

    return Tensor


class FunctionCtx:
    """The ``ctx`` of a custom Function: what forward leaves for backward."""

    def save_for_backward(self, *tensors) -> None:
        """Save tensors (or None) for backward; they come back as ``ctx.saved_tensors``."""
        self.to_save = tensors

    def save_for_forward(self, *tensors) -> None:
        """Save tensors for the jvp (forward mode)."""
        self.saved_for_forward = tensors

    def mark_dirty(self, *tensors) -> None:
        """Declare inputs that forward modified in place."""
        self.dirty_tensors = tensors

    def mark_non_differentiable(self, *tensors) -> None:
        """Declare outputs that have no gradient."""
        self.non_differentiable = tensors

    def set_materialize_grads(self, value: bool) -> None:
        """Whether backward gets zero tensors (True, the default) or None for unused outputs."""
        self.materialize_grads = value


class BackwardCFunction(FunctionCtx, Node):
    """The node a custom Function records; it is also the ctx its forward and backward see."""

    _fn_cls: Any = None
    materialize_grads = True
    to_save: tuple = ()
    dirty_tensors: tuple = ()
    non_differentiable: tuple = ()

    def __init__(self) -> None:
        self.seq = next_seq()
        self.next_edges: tuple = ()
        self.meta: tuple = ()
        self.needs_input_grad: tuple = ()
        self._saved: list | None = []
        self._out_meta: list = []
        self.n_outputs = 0
        self._pre_hooks = None
        self._retain = None
        self._hooks = None

    def name(self) -> str:
        return type(self).__name__

    @property
    def saved_tensors(self) -> tuple:
        if self._saved is None:
            raise RuntimeError(FREED_MESSAGE)
        return tuple(None if s is None else s.unpack(self) for s in self._saved)

    @property
    def _raw_saved_tensors(self) -> tuple:
        """The saved tensors as SavedTensor objects (``register_hooks``, ``unpack``)."""
        if self._saved is None:
            raise RuntimeError(FREED_MESSAGE)
        return tuple(SavedTensor(self, i) for i in range(len(self._saved)))

    def apply(self, grads: list) -> tuple:
        if self._saved is None:
            raise RuntimeError(FREED_MESSAGE)
        Tensor = _tensor_type()
        if self.materialize_grads:
            grads = [Tensor._wrap(_zeros(*meta), None, 0) if g is None and meta else g
                     for g, meta in zip(grads, self._out_meta)]
        result = self._fn_cls.backward(self, *grads)
        if not isinstance(result, tuple):
            result = (result,)
        if len(result) != len(self.next_edges):
            if len(result) > len(self.next_edges) and all(
                    r is None for r in result[len(self.next_edges):]):
                result = result[:len(self.next_edges)]
            else:
                raise RuntimeError(
                    f"function {self.name()} returned an incorrect number of gradients (expected "
                    f"{len(self.next_edges)}, got {len(result)})")
        out = []
        for i, (g, edge, meta) in enumerate(zip(result, self.next_edges, self.meta)):
            if g is not None and not isinstance(g, Tensor):
                raise TypeError(f"function {self.name()} returned a gradient of type "
                                f"{type(g).__name__} at index {i}; expected a Tensor or None")
            if edge is None or g is None:
                out.append(None)
                continue
            try:
                out.append(_fit(g, meta))
            except (ValueError, RuntimeError):
                raise RuntimeError(
                    f"Function {self.name()} returned an invalid gradient at index {i} - got "
                    f"{list(g._data.shape)} but expected shape compatible with {list(meta[0])}"
                ) from None
        return tuple(out)

    def release(self) -> None:
        if self._saved:
            self._saved = None


def _zeros(shape, dtype):
    import numpy

    return numpy.zeros(shape, dtype=dtype)


class FunctionMeta(type):
    """Gives each Function subclass its own node class, named ``<Name>Backward``."""

    def __init__(cls, name, bases, namespace) -> None:
        super().__init__(name, bases, namespace)
        # PyTorch makes the class in torch.autograd.function: tools print it under that name.
        cls._backward_cls = type(name + "Backward", (BackwardCFunction,), {
            "_fn_cls": cls, "__module__": "torch.autograd.function"})


class Function(metaclass=FunctionMeta):
    """Base class for custom differentiable operations (static forward and backward)."""

    @staticmethod
    def forward(ctx, *args, **kwargs):
        raise NotImplementedError("You must implement the forward function for custom "
                                  "autograd.Function.")

    @staticmethod
    def setup_context(ctx, inputs, output):
        raise NotImplementedError("setup_context is not implemented.")

    @staticmethod
    def backward(ctx, *grad_outputs):
        raise NotImplementedError("You must implement either the backward or vjp method for "
                                  "your custom autograd.Function to use it with backward mode AD.")

    vjp = backward

    @staticmethod
    def jvp(ctx, *grad_inputs):
        raise NotImplementedError("You must implement the jvp function for custom "
                                  "autograd.Function to use it with forward mode AD.")

    def __init__(self, *args, **kwargs) -> None:
        warnings.warn(f"{type(self)} should not be instantiated. Methods on autograd functions "
                      "are all static, so you should invoke them on the class itself. "
                      "Instantiating an autograd function will raise an error in a future "
                      "version of PyTorch.", DeprecationWarning, stacklevel=2)

    def __call__(self, *args, **kwargs):
        raise RuntimeError("Legacy autograd function with non-static forward method is "
                           "deprecated. Please use new-style autograd function with static "
                           "forward method. (Example: https://pytorch.org/docs/stable/"
                           "autograd.html#torch.autograd.Function)")

    @classmethod
    def apply(cls, *args, **kwargs):
        Tensor = _tensor_type()
        ctx = cls._backward_cls()
        needs = tuple(isinstance(a, Tensor) and a._requires_grad for a in args)
        ctx.needs_input_grad = needs
        record = state.enabled and any(needs)
        tangents = _input_tangents(args)
        if tangents is not None and cls.jvp is Function.jvp:
            raise RuntimeError(f"{cls.__name__}: You must implement the jvp function for custom "
                               "autograd.Function to use it with forward mode AD.")
        fw_level, forward_state.level = forward_state.level, 0
        try:
            with no_grad():
                if cls.setup_context is not Function.setup_context:
                    output = cls.forward(*args, **kwargs)
                    cls.setup_context(ctx, args, output)
                else:
                    output = cls.forward(ctx, *args, **kwargs)
        finally:
            forward_state.level = fw_level
        single = not isinstance(output, tuple)
        outputs = (output,) if single else output
        if record:  # before the outputs are wrapped: a dirty input's history changes there
            ctx.next_edges = tuple(a._edge() if n else None for a, n in zip(args, needs))
            ctx.seq = next_seq()  # newer than the leaves' AccumulateGrad nodes just made
            ctx.meta = tuple((a._data.shape, a._data.dtype) if n else None
                             for a, n in zip(args, needs))
            if stack.traced is not None:  # anomaly mode
                stack.traced(ctx)
        outputs = _wrap_outputs(ctx, args, outputs, record)
        _save(ctx, outputs)
        if tangents is not None:
            _set_output_tangents(cls, ctx, outputs, tangents)
        return outputs[0] if single else outputs


def _input_tangents(args) -> list | None:
    if stack.dual is None or not forward_state.level:  # forward mode: a dual level is open
        return None
    Tensor = _tensor_type()
    tangents = [get_tangent(a) if isinstance(a, Tensor) else None for a in args]
    if all(t is None for t in tangents):
        return None
    # Tensor inputs without a tangent get zeros; non-tensor inputs get None.
    return [t if t is not None or not isinstance(a, Tensor) else a.new_zeros(a.shape)
            for a, t in zip(args, tangents)]


def _set_output_tangents(cls, ctx, outputs: tuple, tangents: list) -> None:
    fw_level, forward_state.level = forward_state.level, 0
    try:
        result = cls.jvp(ctx, *tangents)
    finally:
        forward_state.level = fw_level
    result = result if isinstance(result, tuple) else (result,)
    for out, tangent in zip(outputs, result):
        if tangent is not None and hasattr(out, "_data"):
            set_tangent(out, tangent)


def _wrap_outputs(ctx, args, outputs, record: bool) -> tuple:
    from .._dispatch import bump_version

    Tensor = _tensor_type()
    dirty = {id(t) for t in ctx.dirty_tensors}
    non_diff = {id(t) for t in ctx.non_differentiable}
    input_ids = {id(a) for a in args if isinstance(a, Tensor)}
    wrapped = []
    for nr, out in enumerate(outputs):
        if not isinstance(out, Tensor):
            ctx._out_meta.append(None)
            wrapped.append(out)
            continue
        if id(out) in dirty:
            if record and out._requires_grad and out.grad_fn is None:
                raise RuntimeError("a leaf Variable that requires grad has been used in an "
                                   "in-place operation.")
            bump_version(out, ctx._fn_cls.__name__)
        elif id(out) in input_ids:
            out = out.detach()  # an input returned as is: a new tensor sharing its data
        ctx._out_meta.append((out._data.shape, out._data.dtype))
        if record and id(outputs[nr]) not in non_diff and out._data.dtype.kind in "fcV":
            out.grad_fn = ctx
            out._output_nr = nr
            out._requires_grad = True
        wrapped.append(out)
    ctx.n_outputs = len(outputs)
    return tuple(wrapped)


def _save(ctx, outputs: tuple) -> None:
    output_ids = {id(o): o for o in outputs}
    # pack hooks (the stack's saved seam) only when recording, as torch
    hooked = stack.saved is not None and saved_hooks.stack and ctx.next_edges
    saved = []
    for t in ctx.to_save:
        if t is None:
            saved.append(None)
        elif id(t) in output_ids and t.grad_fn is ctx:
            saved.append(pack_tensor(t, True) if hooked else save_output(t))
        else:
            saved.append(pack_tensor(t, False) if hooked else save_input(t))
    ctx._saved = saved
    ctx.to_save = ()


class _DelayedError(Function):
    """Passes values through; its backward raises (for once_differentiable under create_graph)."""

    @staticmethod
    def forward(ctx, message, n_outputs, *tensors):
        ctx.message = message
        return tuple(t.clone() for t in tensors[:n_outputs])

    @staticmethod
    def backward(ctx, *grads):
        raise RuntimeError(ctx.message)


def once_differentiable(fn):
    """Mark a backward as not differentiable itself: double backward through it raises."""

    @functools.wraps(fn)
    def wrapper(ctx, *args):
        with no_grad():
            outputs = fn(ctx, *args)
        Tensor = _tensor_type()
        if not state.enabled or not any(isinstance(a, Tensor) and a._requires_grad for a in args):
            return outputs
        single = not isinstance(outputs, tuple)
        outs = (outputs,) if single else outputs
        tensors = [o for o in outs if isinstance(o, Tensor)]
        sources = [a for a in args if isinstance(a, Tensor) and a._requires_grad]
        guarded = iter(_DelayedError.apply(
            "trying to differentiate twice a function that was marked with @once_differentiable",
            len(tensors), *tensors, *sources))
        result = tuple(next(guarded) if isinstance(o, Tensor) else o for o in outs)
        return result[0] if single else result

    return wrapper


class InplaceFunction(Function):
    """Kept for old code: a Function instance with an ``inplace`` flag."""

    def __init__(self, inplace: bool = False) -> None:
        super().__init__()
        self.inplace = inplace


def _flat_tensors(obj, out: list) -> list:
    """The tensors of nested lists, tuples and dicts (None skipped), in order."""
    if isinstance(obj, _tensor_type()):
        out.append(obj)
    elif isinstance(obj, list | tuple):
        for item in obj:
            _flat_tensors(item, out)
    elif isinstance(obj, dict):
        for item in obj.values():
            _flat_tensors(item, out)
    elif obj is not None:
        raise ValueError("Auto nesting doesn't know how to process an input object of type "
                         f"{type(obj).__name__}. Accepted types: Tensors, or lists/tuples of them")
    return out


class NestedIOFunction(Function):
    """Kept for old code: the legacy Function on nested inputs and outputs, whose instance
    methods ``forward_extended``/``backward_extended`` a subclass defines. PyTorch no longer
    runs it (calling an instance raises AttributeError there too); its helpers flatten."""

    def __call__(self, *args, **kwargs):
        raise AttributeError("'super' object has no attribute '_do_forward'")

    def save_for_backward(self, *args) -> None:
        """Save the tensors in ``args`` (nested) for backward."""
        self.to_save = tuple(_flat_tensors(args, []))
        self._to_save_nested = args

    def mark_dirty(self, *args, **kwargs) -> None:
        """Declare the tensors in ``args``/``kwargs`` (nested) modified in place."""
        self.dirty_tensors = tuple(_flat_tensors((args, kwargs), []))

    def mark_non_differentiable(self, *args, **kwargs) -> None:
        """Declare the tensors in ``args``/``kwargs`` (nested) as having no gradient."""
        self.non_differentiable = tuple(_flat_tensors((args, kwargs), []))

    def forward_extended(self, *input):
        """User defined forward."""
        raise NotImplementedError

    def backward_extended(self, *grad_output):
        """User defined backward."""
        raise NotImplementedError
