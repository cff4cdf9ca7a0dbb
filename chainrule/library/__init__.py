"""``torch.library``: custom operators. ``custom_op`` makes a user's function (NumPy inside, or
chainrule ops) an operator that autograd, forward mode, vmap, chainrule.compile, the meta device,
the profiler and dispatch modes see as one op.

The function's body is the kernel of an op record (``ops._registry.Op``): ``apply`` runs it on
the inputs' arrays, so compile captures it as one kernel and replays it, vmap runs it per example
(no batching rule, as PyTorch's fallback), and on the meta device the record's forward runs the
``register_fake`` implementation instead. Gradients come from a generated autograd Function
around that record, as PyTorch's ``GeneratedBackwardFor_<ns>_<name>_default``: its backward is
the user's ``register_autograd`` function, written in chainrule ops, so every order works. The
records live in ``CUSTOM_OPS``, beside the built-in ``REGISTRY`` (which is the table of
chainrule's own ops, docs/ops.md).
"""

from __future__ import annotations

import inspect
import threading
import types
import typing
from collections.abc import Callable, Iterable, Sequence
from typing import Any

from .._meta import MetaArray
from .._modes import stack as modes_stack
from ..autograd.forward_ad import get_tangent
from ..autograd.forward_ad import state as forward_state
from ..autograd.function import Function
from ..autograd.grad_mode import no_grad
from ..autograd.grad_mode import state as grad_state
from ..ops._registry import Op
from ..tensor import Tensor
from ._ops import OpOverload, OpOverloadPacket, namespace

__all__ = ["custom_op", "register_fake", "register_autograd", "register_kernel", "infer_schema",
           "opcheck", "CustomOpDef"]

CUSTOM_OPS: dict[str, Op] = {}

namespace("aten")  # torch.ops.aten exists from the start


# ---- schemas -----------------------------------------------------------------------------------

def _type_name(annotation, name: str, func, sig) -> str:
    """PyTorch's schema type for a parameter's annotation."""
    if isinstance(annotation, str):
        annotation = eval(annotation, getattr(func, "__globals__", {}))  # noqa: S307
    origin = typing.get_origin(annotation)
    args = typing.get_args(annotation)
    if annotation is Tensor:
        return "Tensor"
    if origin in (typing.Union, types.UnionType) and type(None) in args and len(args) == 2:
        inner = [a for a in args if a is not type(None)][0]
        return _type_name(inner, name, func, sig) + "?"
    if origin in (list, Sequence):
        return _type_name(args[0], name, func, sig) + "[]"
    simple = {float: "float", int: "SymInt", bool: "bool", str: "str"}
    if annotation in simple:
        return simple[annotation]
    raise ValueError(f"infer_schema(func): Parameter {name} has unsupported type {annotation}. "
                     f"Got func with signature {sig})")


def _return_schema(annotation, func, sig) -> tuple[str, int]:
    """The schema's returns and the number of outputs (0: None)."""
    if annotation is None or annotation is type(None) or annotation == "None":
        return "()", 0
    if isinstance(annotation, str):
        annotation = eval(annotation, getattr(func, "__globals__", {}))  # noqa: S307
    if typing.get_origin(annotation) is tuple:
        parts = [_type_name(a, "return", func, sig) for a in typing.get_args(annotation)]
        return "(" + ", ".join(parts) + ")", len(parts)
    return _type_name(annotation, "return", func, sig), 1


def _default_text(value) -> str:
    if isinstance(value, str):
        return f'"{value}"'
    return repr(value)


def infer_schema(prototype_function: Callable, /, *, mutates_args, op_name: str | None = None
                 ) -> str:
    """The schema of an operator from the type annotations of ``prototype_function``."""
    sig = inspect.signature(prototype_function)
    mutated = set(() if mutates_args == "unknown" else
                  ((mutates_args,) if isinstance(mutates_args, str) else mutates_args))
    parts, kw_only_seen, tensors = [], False, 0
    for name, param in sig.parameters.items():
        if param.annotation is inspect.Parameter.empty:
            raise ValueError(f"infer_schema(func): Parameter {name} must have a type annotation. "
                             f"Got func with signature {sig})")
        if param.kind is inspect.Parameter.KEYWORD_ONLY and not kw_only_seen:
            parts.append("*")
            kw_only_seen = True
        kind = _type_name(param.annotation, name, prototype_function, sig)
        if name in mutated and kind.startswith("Tensor"):
            kind = kind.replace("Tensor", f"Tensor(a{tensors}!)", 1)
        tensors += kind.startswith("Tensor")
        text = f"{kind} {name}"
        if param.default is not inspect.Parameter.empty:
            text += "=" + _default_text(param.default)
        parts.append(text)
    unknown = mutated - set(sig.parameters)
    if unknown:
        raise ValueError(f"infer_schema(func): {unknown} in mutates_args were not found in the "
                         "custom op's signature. mutates_args should contain the names of all "
                         "args that the custom op mutates, or just the string 'unknown' if you "
                         f"don't know. Got func with signature {sig})")
    returns, _ = _return_schema(sig.return_annotation, prototype_function, sig)
    schema = f"({', '.join(parts)}) -> {returns}"
    return schema if op_name is None else op_name + schema


# ---- the operator ------------------------------------------------------------------------------

def _no_fake(opdef: CustomOpDef):
    raise RuntimeError(f"There was no fake impl registered for {opdef}. This is necessary for "
                       "torch.compile/export/fx tracing to work. Please use "
                       f"`{opdef._name}.register_fake` to add an fake impl.")


def _unwrap(out, n_outputs: int):
    if n_outputs == 1:
        return out._data
    return tuple(o._data for o in out)


class CustomOpDef:
    """A custom operator made by ``custom_op``: call it as the function it wraps."""

    def __init__(self, namespace_name: str, name: str, schema: str, fn: Callable,
                 mutates_args, device_types) -> None:
        self._namespace = namespace_name
        self._name = name
        self._qualname = f"{namespace_name}::{name}"
        self._schema = schema
        self._init_fn = fn
        self._signature = inspect.signature(fn)
        self._mutates = () if mutates_args == "unknown" else tuple(
            (mutates_args,) if isinstance(mutates_args, str) else mutates_args)
        self._kernels: dict[str | None, Callable] = {None: fn}
        self._fake_fn: Callable | None = None
        self._backward_fn: Callable | None = None
        self._setup_context_fn: Callable | None = None
        self._vmap_fn: Callable | None = None
        params = self._signature.parameters.values()
        self._tensor_names = tuple(
            p.name for p in params
            if _type_name(p.annotation, p.name, fn, self._signature) in ("Tensor", "Tensor?")
            and p.name not in self._mutates)
        _, self._n_outputs = _return_schema(self._signature.return_annotation, fn,
                                            self._signature)
        self._record = Op(self._qualname, self._forward, self._tensor_names,
                          (None,) * len(self._tensor_names), differentiable=False,
                          n_outputs=max(self._n_outputs, 1))
        CUSTOM_OPS[self._qualname] = self._record
        self._autograd_fn = self._make_function()
        packet = namespace(namespace_name).packet(name, self._call)
        packet._opdef = self
        self._opoverload: OpOverload = packet.overload("default", f"{self._qualname}{schema}")
        self.__name__ = name
        self.__doc__ = fn.__doc__

    def __repr__(self) -> str:
        return f"<CustomOpDef({self._qualname})>"

    # -- registration --

    def register_kernel(self, device_types, fn: Callable | None = None):
        """Use ``fn`` as the kernel for ``device_types`` ("cpu")."""
        def register(fn: Callable) -> Callable:
            for device in (device_types,) if isinstance(device_types, str) or \
                    device_types is None else device_types:
                self._kernels[device] = fn
            return fn

        return register if fn is None else register(fn)

    def register_fake(self, fn: Callable, /) -> Callable:
        """Register the fake (meta) implementation: output shapes and dtypes from inputs'."""
        self._fake_fn = fn
        return fn

    def register_autograd(self, backward: Callable, /, *,
                          setup_context: Callable | None = None) -> None:
        """Register ``backward(ctx, *grads)`` (and ``setup_context(ctx, inputs, output)``)."""
        self._backward_fn = backward
        self._setup_context_fn = setup_context

    def register_vmap(self, func: Callable | None = None, /):
        """Register a batching rule ``func(info, in_dims, *args) -> (output, out_dims)``."""
        def register(func: Callable) -> Callable:
            self._vmap_fn = func
            return func

        return register if func is None else register(func)

    # -- calls --

    def __call__(self, *args, **kwargs):
        return self._opoverload(*args, **kwargs)

    def _bind(self, args: tuple, kwargs: dict) -> inspect.BoundArguments:
        try:
            bound = self._signature.bind(*args, **kwargs)
        except TypeError as err:
            raise RuntimeError(f"{self._qualname}() {err}. Declaration: "
                               f"{self._qualname}{self._schema}") from None
        bound.apply_defaults()
        return bound

    def _call(self, *args, **kwargs):
        bound = self._bind(args, kwargs)
        if self._n_outputs == 0 or self._mutates:
            return self._call_mutating(bound)
        values = list(bound.arguments.values())
        recording = grad_state.enabled and any(
            isinstance(v, Tensor) and v.requires_grad for v in values)
        if recording or forward_state.level and any(
                isinstance(v, Tensor) and get_tangent(v) is not None for v in values):
            return self._autograd_fn.apply(*values)
        return self._kernel_call(values)

    def _kernel_call(self, values: list):
        """Run the op record: the kernel on the inputs' arrays, wrapped."""
        from .._dispatch import apply

        names = list(self._signature.parameters)
        inputs = [values[names.index(n)] for n in self._tensor_names]
        params = {n: v for n, v in zip(names, values) if n not in self._tensor_names}
        return apply(self._record, *inputs, **params)

    def _forward(self, *arrays, **params):
        """The record's forward: the user's kernel (or fake implementation on meta arrays) on
        tensors around the arrays, without recording anything."""
        meta = any(type(a) is MetaArray for a in arrays)
        if meta and self._fake_fn is None:
            _no_fake(self)
        fn = self._fake_fn if meta else self._kernels.get("cpu", self._kernels[None])
        values = dict(zip(self._tensor_names,
                          (None if a is None else Tensor._wrap(a, None, 0) for a in arrays)))
        values.update(params)
        args, kwargs = [], {}
        for p in self._signature.parameters.values():
            if p.kind is inspect.Parameter.KEYWORD_ONLY:
                kwargs[p.name] = values[p.name]
            else:
                args.append(values[p.name])
        # compile records this one kernel: its ops are hidden from this thread's capture (the
        # slot is the process's; another thread's capture goes on recording its own ops)
        capture = modes_stack.capture
        hide = capture is not None and capture.thread == threading.get_ident()
        if hide:
            modes_stack.capture = None
        try:
            with no_grad():
                out = fn(*args, **kwargs)
        finally:
            if hide:
                modes_stack.capture = capture
        return _unwrap(out, self._n_outputs)

    def _call_mutating(self, bound: inspect.BoundArguments):
        from .._dispatch import bump_version

        with no_grad():
            out = self._kernels.get("cpu", self._kernels[None])(*bound.args, **bound.kwargs)
        for name in self._mutates:
            target = bound.arguments.get(name)
            if isinstance(target, Tensor):
                bump_version(target, str(self._opoverload))
        return out

    def _make_function(self) -> type:
        opdef = self

        def forward(*args):
            return opdef._kernel_call(list(args))

        def setup_context(ctx, inputs, output):
            if opdef._setup_context_fn is not None:
                opdef._setup_context_fn(ctx, inputs, output)

        def backward(ctx, *grads):
            if opdef._backward_fn is None:
                raise RuntimeError(f"Trying to backward through {opdef._opoverload} but no "
                                   "autograd formula was registered. Please use "
                                   "register_autograd to add one.")
            result = opdef._backward_fn(ctx, *grads)
            result = result if isinstance(result, tuple) else (result,)
            n = len(opdef._signature.parameters)
            if len(result) != n:
                raise RuntimeError(f"{opdef._qualname}: expected the backward function to "
                                   f"return {n} gradients (one per input), got {len(result)}")
            return result

        def jvp(ctx, *tangents):  # PyTorch's custom ops have no forward-mode formula
            return (None,) * max(opdef._n_outputs, 1)

        name = f"GeneratedBackwardFor_{self._namespace}_{self._name}_default"
        return type(name, (Function,), {
            "forward": staticmethod(forward), "setup_context": staticmethod(setup_context),
            "backward": staticmethod(backward), "jvp": staticmethod(jvp),
            "__module__": "torch.autograd.function"})


def custom_op(name: str, fn: Callable | None = None, /, *, mutates_args, device_types=None,
              schema: str | None = None, tags=None):
    """Wrap a function into a custom operator ``namespace::name`` (``torch.ops.namespace.name``)."""
    def inner(fn: Callable) -> CustomOpDef:
        namespace_name, sep, op_name = name.partition("::")
        if not sep or not namespace_name or not op_name:
            raise ValueError(f"Expected `name` to be of the form \"namespace::name\", got {name!r}")
        op_schema = infer_schema(fn, mutates_args=mutates_args) if schema is None else schema
        opdef = CustomOpDef(namespace_name, op_name, op_schema, fn, mutates_args, device_types)
        if device_types is not None:
            opdef.register_kernel(device_types, fn)
        return opdef

    return inner if fn is None else inner(fn)


def _opdef(op) -> CustomOpDef:
    if isinstance(op, CustomOpDef):
        return op
    if isinstance(op, OpOverload):
        op = op._overloadpacket
    if isinstance(op, OpOverloadPacket) and isinstance(op.__dict__.get("_opdef"), CustomOpDef):
        return op._opdef
    if isinstance(op, str):
        ns, _, name = op.partition("::")
        packet = namespace(ns)._packets.get(name)
        if packet is not None and isinstance(packet.__dict__.get("_opdef"), CustomOpDef):
            return packet._opdef
    raise ValueError(f"register: expected a custom op (made by torch.library.custom_op), "
                     f"got {op!r}")


def register_fake(op, func: Callable | None = None, /, *, lib=None, _stacklevel: int = 1,
                  allow_override: bool = False):
    """Register the fake (meta) implementation of ``op``."""
    def register(func: Callable) -> Callable:
        return _opdef(op).register_fake(func)

    return register if func is None else register(func)


def register_autograd(op, backward: Callable, /, *, setup_context: Callable | None = None,
                      lib=None) -> None:
    """Register ``backward`` (and ``setup_context``) as the gradient formula of ``op``."""
    _opdef(op).register_autograd(backward, setup_context=setup_context)


def register_kernel(op, device_types, func: Callable | None = None, /, *, lib=None):
    """Register ``func`` as ``op``'s kernel for ``device_types``."""
    return _opdef(op).register_kernel(device_types, func)


def register_vmap(op, func: Callable | None = None, /, *, lib=None):
    """Register a batching rule for ``op`` (kept; chainrule's vmap runs the op per example)."""
    return _opdef(op).register_vmap(func)


def opcheck(op, args: tuple, kwargs: dict | None = None, *, test_utils: str | Sequence[str] = (
        "test_schema", "test_autograd_registration", "test_faketensor",
        "test_aot_dispatch_dynamic"), raise_exception: bool = True, atol=None, rtol=None
            ) -> dict[str, str]:
    """Check a custom op: the fake implementation agrees with the kernel on shapes and dtypes,
    and an op taking tensors that require grad has a gradient formula."""
    from .. import _device

    opdef = _opdef(op)
    kwargs = kwargs or {}
    utils = (test_utils,) if isinstance(test_utils, str) else tuple(test_utils)
    result: dict[str, Any] = {}

    def check(name: str, test: Callable[[], None]) -> None:
        if name not in utils:
            return
        try:
            test()
            result[name] = "SUCCESS"
        except Exception as err:
            if raise_exception:
                raise
            result[name] = err

    def fake() -> None:
        out = opdef(*args, **kwargs)
        meta = [a.to(_device.device("meta")) if isinstance(a, Tensor) else a for a in args]
        fake_out = opdef(*meta, **kwargs)
        for real, f in zip(_flat(out), _flat(fake_out)):
            if tuple(real.shape) != tuple(f.shape) or real.dtype != f.dtype:
                raise RuntimeError(f"opcheck: {opdef}'s fake implementation gives "
                                   f"{tuple(f.shape)} {f.dtype}, its kernel {tuple(real.shape)} "
                                   f"{real.dtype}")

    def autograd_registration() -> None:
        if opdef._backward_fn is None and any(
                isinstance(a, Tensor) and a.requires_grad for a in args):
            raise AssertionError(f"{opdef._qualname}: inputs require grad but no autograd formula "
                                 "was registered (register_autograd)")

    check("test_schema", lambda: None)
    check("test_autograd_registration", autograd_registration)
    check("test_faketensor", fake)
    check("test_aot_dispatch_dynamic", lambda: None)
    return result


def _flat(out) -> Iterable[Tensor]:
    return [out] if isinstance(out, Tensor) else [o for o in out if isinstance(o, Tensor)]
