"""torch._dynamo: the compiler frontend's controls, over ``chainrule.compile``.

chainrule has one compiler, capture and replay (``chainrule._compile``): it records the NumPy
kernels a call runs, so Python code between them needs no tracing rules. The decorators that
steer Dynamo's tracer (``allow_in_graph``, ``disallow_in_graph``, ``substitute_in_graph``,
``assume_constant_result``, ``nonstrict_trace``) mark and return functions; ``graph_break`` does
nothing, as in eager code; ``mark_dynamic`` and kin record their marks on the tensor (chainrule
guards exact shapes and captures again for a new one). Backends are names chainrule accepts:
every one runs the same capture, and a backend callable is never handed an FX graph.
"""

from __future__ import annotations

import contextlib
import functools
import inspect
import sys
from collections.abc import Callable, Sequence
from typing import Any

from .. import _compile
from ..nn import Module
from ..tensor import Tensor
from . import config, exc
from .eval_frame import OptimizedModule
from .exc import InvalidBackend

__all__ = [
    "allow_in_graph", "assume_constant_result", "config", "disable",
    "disable_nested_graph_breaks", "disallow_in_graph", "dont_skip_tracing",
    "error_on_graph_break", "forbid_in_graph", "graph_break", "is_compiling",
    "is_dynamo_disable_recursive", "list_backends", "lookup_backend", "mark_dynamic",
    "mark_static", "mark_static_address", "maybe_mark_dynamic", "nonstrict_trace", "optimize",
    "optimize_assert", "OptimizedModule", "patch_dynamo_config", "register_backend", "reset",
    "run", "set_recursion_limit", "set_stance", "skip_frame", "step_unsupported",
    "substitute_in_graph",
]


def is_compiling() -> bool:
    """True while chainrule.compile captures a call."""
    return _compile.is_compiling()


def reset() -> None:
    """Forget every compiled function's captured programs and the warnings given: the next
    calls capture again."""
    _compile.reset()


# ---- backends -----------------------------------------------------------------------------

def _graph_forward(gm, example_inputs, **kwargs):
    """A backend that runs the graph as it is (every chainrule backend computes as eager)."""
    return gm.forward


_BACKENDS: dict[str, tuple[Callable, tuple]] = {}  # name -> (compiler function, tags)


def register_backend(compiler_fn: Callable | None = None, name: str | None = None,
                     tags: Sequence[str] = ()) -> Callable:
    """Register a backend under ``name`` (default: the function's name), for
    ``compile(backend=name)``."""
    if compiler_fn is None:
        return functools.partial(register_backend, name=name, tags=tags)
    if not callable(compiler_fn):
        raise AssertionError(f"compiler_fn must be callable, got {type(compiler_fn)}")
    name = name or compiler_fn.__name__
    if name in _BACKENDS:
        raise AssertionError(f"duplicate name: {name}")
    _BACKENDS[name] = (compiler_fn, tuple(tags))
    with contextlib.suppress(AttributeError, TypeError):
        compiler_fn._tags = tuple(tags)
    return compiler_fn


# PyTorch's backends, less those that inject errors for its own tests: chainrule runs every one
# as the same capture and replay
for _name in ("inductor", "cudagraphs", "openxla", "tvm"):
    _BACKENDS[_name] = (_graph_forward, ())
_BACKENDS["openxla_eval"] = (_graph_forward, ("experimental",))
for _name in ("eager", "aot_eager", "aot_eager_decomp_partition",
              "aot_eager_decomp_partition_crossref", "aot_eager_decomp_partition_with_mode",
              "aot_eager_default_partitioner", "aot_ts", "ts", "eager_debug", "eager_noexcept",
              "pre_dispatch_eager", "invoke_subgraph", "dynamo_minifier_backend",
              "dynamo_accuracy_minifier_backend"):
    _BACKENDS[_name] = (_graph_forward, ("debug",))


def list_backends(exclude_tags=("debug", "experimental")) -> list[str]:
    """The registered backend names, without those tagged with any of ``exclude_tags``."""
    excluded = set(exclude_tags or ())
    return sorted(n for n, (_, tags) in _BACKENDS.items() if not excluded & set(tags))


def lookup_backend(compiler_fn: str | Callable) -> Callable:
    """The backend registered as ``compiler_fn`` (a callable is returned as it is)."""
    if isinstance(compiler_fn, str):
        if compiler_fn not in _BACKENDS:
            raise InvalidBackend(compiler_fn)
        return _BACKENDS[compiler_fn][0]
    return compiler_fn


_default_backend: list = ["inductor"]  # set_default_backend


def _set_default_backend(backend: str | Callable | None) -> None:
    if isinstance(backend, str):
        lookup_backend(backend)
    _default_backend[0] = "inductor" if backend is None else backend


# ---- compiling ------------------------------------------------------------------------------

def _compile_with(model, backend, nopython: bool, dynamic, disable: bool):
    from ..compiler import compile  # torch.compile's front door (modules, validation)

    return compile(model, backend=backend, fullgraph=nopython, dynamic=dynamic, disable=disable)


class _Optimize(contextlib.ContextDecorator):
    """What ``optimize`` returns: a decorator compiling functions and modules."""

    def __init__(self, backend, nopython: bool, dynamic, disable: bool) -> None:
        self.backend, self.nopython, self.dynamic, self.disable = (backend, nopython, dynamic,
                                                                   disable)

    def __call__(self, fn):
        return _compile_with(fn, self.backend, self.nopython, self.dynamic, self.disable)

    def __enter__(self):
        raise RuntimeError("torch._dynamo.optimize(...) is used with a context manager. Please "
                           "refer to https://pytorch.org/tutorials/intermediate/"
                           "torch_compile_tutorial.html to use torch._dynamo.optimize(...) as "
                           "an annotation/decorator. ")

    def __exit__(self, *exc_info) -> None:
        pass


def optimize(backend="inductor", *, nopython: bool = False, guard_export_fn=None,
             guard_fail_fn=None, guard_filter_fn=None, disable: bool = False, dynamic=None,
             rebuild_ctx=None, package=None) -> _Optimize:
    """A decorator that compiles functions and modules with ``backend`` (``nopython``: as
    ``fullgraph=True``)."""
    if isinstance(backend, str):
        lookup_backend(backend)
    return _Optimize(backend, nopython, dynamic, disable)


def optimize_assert(backend="inductor", *, dynamic=None, rebuild_ctx=None,
                    package=None) -> _Optimize:
    """``optimize(backend, nopython=True)``."""
    return optimize(backend, nopython=True, dynamic=dynamic, rebuild_ctx=rebuild_ctx,
                    package=package)


def run(fn: Callable | None = None):
    """Run ``fn`` with the programs already compiled, compiling nothing new: ``fn`` itself."""
    return fn if fn is not None else (lambda f: f)


def disable(fn=None, recursive: bool = True, *, reason: str | None = None,
            wrapping: bool = True):
    """Run ``fn`` (or a module's forward) without compiling it; as a decorator too."""
    if fn is None:
        return functools.partial(disable, recursive=recursive, reason=reason, wrapping=wrapping)
    if isinstance(fn, Module):
        return OptimizedModule(fn, fn)

    @functools.wraps(fn)
    def uncompiled(*args, **kwargs):
        return fn(*args, **kwargs)

    uncompiled._torchdynamo_disable = True
    uncompiled._torchdynamo_disable_recursive = recursive
    uncompiled._torchdynamo_disable_msg = reason
    uncompiled._torchdynamo_orig_callable = fn
    return uncompiled


def is_dynamo_disable_recursive(method: Callable) -> bool | None:
    """Whether ``method`` was disabled recursively (None if it was not disabled)."""
    return getattr(method, "_torchdynamo_disable_recursive", None)


class set_stance(contextlib.ContextDecorator):  # noqa: N801 - PyTorch's name
    """Set how compiled functions behave: 'default', 'force_eager' (run eagerly),
    'eager_on_recompile' (run eagerly instead of capturing again), 'fail_on_recompile' (raise
    instead); a function, a context manager and a decorator."""

    def __init__(self, stance: str = "default", *, skip_guard_eval_unsafe: bool = False,
                 force_backend: str | Callable | None = None) -> None:
        if force_backend is not None and stance != "default":
            raise RuntimeError("non-default stance cannot have force_backend set")
        if isinstance(force_backend, str):
            lookup_backend(force_backend)
        self.stance = stance
        self.prev = _compile.set_stance(stance)

    def __call__(self, fn):
        _compile.set_stance(self.prev)
        return super().__call__(fn)

    def __enter__(self) -> None:
        _compile.set_stance(self.stance)

    def __exit__(self, *exc_info) -> None:
        _compile.set_stance(self.prev)

    def clone(self) -> set_stance:
        return type(self)(self.stance)


# ---- marks that steer Dynamo's tracer ---------------------------------------------------------

def allow_in_graph(fn):
    """Put ``fn`` in the graph as it is instead of tracing into it; returns ``fn``."""
    if isinstance(fn, (list, tuple)):
        return [allow_in_graph(x) for x in fn]
    if not callable(fn):
        raise AssertionError("allow_in_graph expects a callable")
    return fn


def disallow_in_graph(fn):
    """Keep ``fn`` out of the graph (a graph break around its calls); returns ``fn``."""
    if isinstance(fn, (list, tuple)):
        return [disallow_in_graph(x) for x in fn]
    if not callable(fn):
        raise AssertionError("disallow_in_graph expects a callable")
    return fn


def forbid_in_graph(fn):
    """Make tracing into ``fn`` an error; returns ``fn``."""
    if isinstance(fn, (list, tuple)):
        return [forbid_in_graph(x) for x in fn]
    if not callable(fn):
        raise AssertionError("forbid_in_graph applies only to callables")
    fn._dynamo_forbidden = True
    return fn


def assume_constant_result(fn):
    """Treat ``fn``'s result as a constant when tracing; returns ``fn``."""
    fn._dynamo_marked_constant = True
    return fn


def nonstrict_trace(traceable_fn: Callable) -> Callable:
    """Put calls of ``traceable_fn`` in the graph without tracing its body."""
    @functools.wraps(traceable_fn)
    def wrapped(*args, **kwargs):
        return traceable_fn(*args, **kwargs)

    wrapped._torchdynamo_nonstrict_trace = True
    return wrapped


_substitutes: dict[int, Callable] = {}


def substitute_in_graph(original_fn: Callable, *, can_constant_fold_through: bool = False,
                        skip_signature_check: bool = False,
                        is_embedded_type: bool = False) -> Callable[[Callable], Callable]:
    """Register a traceable Python stand-in for ``original_fn`` (a C function, say); the
    decorator returns the stand-in."""
    if not callable(original_fn):
        raise TypeError(f"original_fn must be callable, got {original_fn!r}")

    def register(traceable_fn: Callable) -> Callable:
        if not skip_signature_check:
            try:
                expected = inspect.signature(original_fn)
            except ValueError:
                expected = None
            got = inspect.signature(traceable_fn)
            if expected is not None and expected != got:
                raise TypeError(f"Signature mismatch between {original_fn} and {traceable_fn}: "
                                f"{expected} != {got}")
        if id(original_fn) in _substitutes:
            raise ValueError(f"Duplicate dispatch rule for {original_fn}: already registered in "
                             "VariableBuilder's id dispatch map")
        _substitutes[id(original_fn)] = traceable_fn
        return traceable_fn

    return register


def graph_break(msg: str = "") -> None:
    """Split the graph here (eager code: nothing)."""


def skip_frame(msg: str = "") -> None:
    """Leave the current frame uncompiled (eager code: nothing)."""


def step_unsupported(msg: str = "") -> None:
    """Treat the current instruction as unsupported (eager code: nothing)."""


def _attributes(t) -> dict:
    """Where the marks go: PyTorch sets them as tensor attributes; a chainrule tensor keeps
    them with its other extras."""
    return t._extra_dict() if isinstance(t, Tensor) else t.__dict__


def _mark(t, index, attr: str) -> None:
    if isinstance(index, (list, tuple)):
        for i in index:
            _mark(t, i, attr)
        return
    marks = _attributes(t)
    marks.setdefault(attr, set()).add(index)
    marks["_has_dynamo_dim_marking"] = True


def mark_dynamic(t: Any, index, *, hint_override: int | None = None, min: int | None = None,
                 max: int | None = None, specialize_on: list | None = None) -> None:
    """Mark dimension(s) ``index`` of ``t`` as dynamic (recorded on the tensor as
    ``_dynamo_dynamic_indices``; chainrule guards exact shapes)."""
    _mark(t, index, "_dynamo_dynamic_indices")


def maybe_mark_dynamic(t: Any, index) -> None:
    """Mark dimension(s) ``index`` of ``t`` as possibly dynamic (recorded on the tensor)."""
    _mark(t, index, "_dynamo_weak_dynamic_indices")


def mark_static(t: Any, index=None) -> None:
    """Mark dimension(s) ``index`` of ``t`` as static (recorded on the tensor)."""
    if isinstance(t, Module):
        type(t)._dynamo_marked_static = True
        return
    if isinstance(t, type) and issubclass(t, Module):
        t._dynamo_marked_static = True
        return
    if index is None:
        index = list(range(t.dim()))
    _mark(t, index, "_dynamo_static_indices")


def mark_static_address(t: Any, guard: bool = False) -> None:
    """Mark ``t``'s memory as fixed across calls (recorded on the tensor)."""
    if not isinstance(t, Tensor):
        raise TypeError(f"mark_static_address expects a tensor but received {type(t)}")
    _attributes(t)["_dynamo_static_input_type"] = "guarded" if guard else "unguarded"


def set_recursion_limit(limit: int) -> None:
    """Set the interpreter's recursion limit (Dynamo's own is Python's)."""
    sys.setrecursionlimit(limit)


def patch_dynamo_config(arg1=None, arg2=None, **kwargs):
    """``torch._dynamo.config.patch``, usable inside compiled functions too."""
    return config.patch(arg1, arg2, **kwargs)


def dont_skip_tracing(fn: Any | None = None) -> Any:
    """Trace into functions Dynamo would skip (a config patch; a decorator with ``fn``)."""
    ctx = patch_dynamo_config(dont_skip_tracing=True)
    return ctx(fn) if fn is not None else ctx


def disable_nested_graph_breaks(fn: Any | None = None) -> Any:
    """Turn off nested graph breaks (a config patch; a decorator with ``fn``)."""
    ctx = patch_dynamo_config(nested_graph_breaks=False)
    return ctx(fn) if fn is not None else ctx


def error_on_graph_break(error_on_graph_break: bool):
    """Make graph breaks errors inside the block (``fullgraph``'s rule, per region)."""
    return patch_dynamo_config(error_on_graph_break=error_on_graph_break)
