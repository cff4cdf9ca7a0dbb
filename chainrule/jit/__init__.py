"""torch.jit without TorchScript: PyTorch's behaviour with the JIT disabled (``PYTORCH_JIT=0``).

``script`` and ``trace`` give back the function or module they were handed, which runs exactly
as before (``chainrule.compile`` is the compiler); the decorators mark functions and return
them; ``is_scripting()`` and ``is_tracing()`` are False. Nothing is ever a ``ScriptModule`` or a
``ScriptFunction``, so ``.code``/``.graph`` do not exist, and ``save``/``load``, which read and
write TorchScript archives, raise naming the alternative (a state dict). PyTorch 2.13's
deprecation warnings are given as it gives them.
"""

from __future__ import annotations

import ast
import collections.abc
import contextlib
import inspect
import os
import textwrap
import types
import typing
import warnings
from collections.abc import Callable, Iterator
from typing import Any, Final

from ..futures import Future
from ..nn import Module

__all__ = [
    "Attribute", "Error", "Final", "Future", "Iterator", "RecursiveScriptClass",
    "RecursiveScriptModule", "ScriptFunction", "ScriptModule", "ScriptWarning",
    "TopLevelTracedModule", "TracedModule", "TracerWarning", "TracingCheckError", "annotate",
    "enable_onednn_fusion", "export", "fork", "freeze", "fuser", "ignore", "interface",
    "is_scripting", "is_tracing", "isinstance", "load", "onednn_fusion_enabled",
    "optimize_for_inference", "optimized_execution", "run_frozen_optimizations", "save",
    "script", "script_if_tracing", "script_method", "set_fusion_strategy", "set_module",
    "strict_fusion", "trace", "trace_module", "unused", "wait",
]

_builtin_isinstance = isinstance


def _deprecated(name: str, instead: str = "switch to `torch.compile` or `torch.export`") -> None:
    warnings.warn(f"`torch.jit.{name}` is deprecated. Please {instead}.", DeprecationWarning,
                  stacklevel=3)


def _optimize_deprecated(optimize) -> None:
    if optimize is not None:
        warnings.warn("`optimize` is deprecated and has no effect. Use `with "
                      "torch.jit.optimized_execution()` instead", FutureWarning, stacklevel=3)


class Error(Exception):
    """An exception raised by a TorchScript program."""


class ScriptWarning(Warning):
    """A warning about scripting."""


class TracerWarning(Warning):
    """A warning about tracing."""


class TracingCheckError(Exception):
    """A traced function that does not reproduce its eager results."""


class ScriptModule(Module):
    """Base class of TorchScript modules (without TorchScript: an ``nn.Module``)."""

    def __init__(self, arg=None) -> None:
        super().__init__()


class RecursiveScriptModule(ScriptModule):
    """A scripted module (``script`` gives back the module itself: none is ever made)."""


class TracedModule(ScriptModule):
    """A traced module (``trace`` gives back the module itself: none is ever made)."""


class TopLevelTracedModule(TracedModule):
    """The top of a traced module (``trace`` gives back the module itself: none is made)."""


class RecursiveScriptClass:
    """A scripted class (``script`` gives back the class itself: none is ever made)."""


class ScriptFunction:
    """A compiled TorchScript function (``script`` gives back the function itself)."""

    def __init__(self, *args, **kwargs) -> None:
        raise TypeError("ScriptFunction: No constructor defined!")


class CompilationUnit:
    """A set of TorchScript functions: chainrule compiles no TorchScript source."""

    def __init__(self, lang: str | None = None, _frames_up: int = 0) -> None:
        if lang is not None:
            raise RuntimeError("torch.jit.CompilationUnit: chainrule has no TorchScript "
                               "compiler; define the functions in Python")


def Attribute(value, type):  # noqa: N802 - PyTorch's name
    """Marks ``value`` as an attribute of type ``type``; returns ``value``."""
    return value


# ---- script and trace ---------------------------------------------------------------------

def script(obj: Any, optimize: None = None, _frames_up: int = 0,
           _rcb: Callable[[str], Any] | None = None,
           example_inputs: list[tuple] | dict[Callable, list[tuple]] | None = None) -> Any:
    """Script a function, module or class: here, ``obj`` itself, which runs as before."""
    _deprecated("script")
    _optimize_deprecated(optimize)
    return obj


def script_method(fn):
    """Marks a method of a ``ScriptModule`` subclass to compile: here, ``fn`` itself."""
    _deprecated("script_method")
    return fn


def _check_traceable(func, example_inputs, example_kwarg_inputs) -> None:
    if not callable(func):
        raise RuntimeError("Could not get name of python class object")
    if example_kwarg_inputs is None and not _builtin_isinstance(example_inputs, Module):
        if example_inputs is None:
            raise TypeError("'NoneType' object is not iterable")


def trace(func, example_inputs=None, optimize=None, check_trace=True, check_inputs=None,
          check_tolerance=1e-05, strict=True, _force_outplace=False, _module_class=None,
          _compilation_unit=None, example_kwarg_inputs=None, _store_inputs=True):
    """Trace a function or module: here, ``func`` itself, which runs as before."""
    _deprecated("trace")
    _optimize_deprecated(optimize)
    _check_traceable(func, example_inputs, example_kwarg_inputs)
    # PyTorch traces again to check the trace, and a module's forward as a method
    if _builtin_isinstance(func, Module):
        for _ in range(1 + bool(check_trace)):
            _deprecated("trace_method")
    elif check_trace:
        _deprecated("trace")
    return func


def trace_module(mod, inputs, optimize=None, check_trace=True, check_inputs=None,
                 check_tolerance=1e-05, strict=True, _force_outplace=False, _module_class=None,
                 _compilation_unit=None, example_inputs_is_kwarg=False, _store_inputs=True):
    """Trace methods of a module (``inputs`` maps their names to example inputs): here, ``mod``
    itself."""
    _deprecated("trace_method")
    _optimize_deprecated(optimize)
    if not _builtin_isinstance(mod, Module):
        raise AttributeError("expected torch.nn.Module as the first argument")
    if not _builtin_isinstance(inputs, dict):
        raise AttributeError("expected a dictionary of (method_name, input) pairs")
    if check_trace:
        _deprecated("trace_method")
    return mod


def script_if_tracing(fn):
    """Compile ``fn`` when first called during tracing: here, ``fn`` itself."""
    return fn


_script_if_tracing = script_if_tracing


def is_scripting() -> bool:
    """True while TorchScript compiles the code (never, here)."""
    return False


def is_tracing() -> bool:
    """True while ``trace`` records the code (never, here)."""
    return False


def annotate(the_type, the_value):
    """Gives ``the_value`` the type ``the_type`` for TorchScript; returns ``the_value``."""
    return the_value


def interface(obj):
    """Marks a class as a TorchScript interface; returns the class."""
    _deprecated("interface", "use `torch.compile` instead")
    if not inspect.isclass(obj):
        raise RuntimeError("interface must be applied to a class")
    return obj


# ---- decorators that mark functions -------------------------------------------------------

class FunctionModifiers:
    """What the marking decorators record on a function, in PyTorch's words."""

    UNUSED = "unused (ignored and replaced with raising of an exception)"
    IGNORE = "ignore (leave as a call to Python, cannot be torch.jit.save'd)"
    EXPORT = "export (compile this function even if nothing calls it)"
    DEFAULT = "default (compile if called from an exported function / forward)"
    COPY_TO_SCRIPT_WRAPPER = ("if this method is not scripted, copy the python method onto the "
                              "scripted model")
    _DROP = "_drop (function is fully ignored, declaration can be unscriptable)"


def _mark(fn, modifier: str):
    target = fn.fget if _builtin_isinstance(fn, property) else fn
    with contextlib.suppress(AttributeError, TypeError):  # builtins take no attributes
        target._torchscript_modifier = modifier
    return fn


def export(fn):
    """Marks a module's method as an entry point of its TorchScript module."""
    return _mark(fn, FunctionModifiers.EXPORT)


def unused(fn):
    """Marks a function or method for TorchScript to replace with raising an exception."""
    return _mark(fn, FunctionModifiers.UNUSED)


def _drop(fn):
    return _mark(fn, FunctionModifiers._DROP)


def ignore(drop=False, **kwargs):
    """Marks a function or method for TorchScript to leave as a Python call
    (``@ignore`` or ``@ignore(drop=...)``)."""
    if callable(drop):
        return _mark(drop, FunctionModifiers.IGNORE)
    if not _builtin_isinstance(drop, bool):
        raise RuntimeError("Argument to @torch.jit.ignore must be a bool or a function but got "
                           f"{drop}")
    drop_on_export = kwargs.pop("drop_on_export", None)
    if drop_on_export or drop:
        what = "ignore(drop_on_export=True)" if drop_on_export else "ignore(True)"
        warnings.warn(f"{what} has been deprecated. TorchScript will now drop the function call "
                      "on compilation. Use torch.jit.unused now. {}", FutureWarning,
                      stacklevel=2)
        drop = True
    modifier = FunctionModifiers.UNUSED if drop else FunctionModifiers.IGNORE
    return lambda fn: _mark(fn, modifier)


_overloaded_fns: dict[str, list[Callable]] = {}
_overloaded_methods: dict[str, dict[str, list[Callable]]] = {}


def _check_overload_body(func) -> None:
    """An overload declaration's body must be ``pass`` or ``...``."""
    try:
        source = textwrap.dedent(inspect.getsource(func))
    except (OSError, TypeError):
        warnings.warn(f"Unable to retrieve source for @torch.jit._overload function: {func}.",
                      stacklevel=3)
        return
    body = next(n for n in ast.walk(ast.parse(source))
                if _builtin_isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))).body
    stmt = body[0]
    if len(body) != 1 or not (_builtin_isinstance(stmt, ast.Pass) or (
            _builtin_isinstance(stmt, ast.Expr) and _builtin_isinstance(stmt.value, ast.Constant)
            and stmt.value.value is Ellipsis)):
        head = "\n".join(source.split("\n")[:3])
        raise RuntimeError("Only `pass` statement or `...` can be the body of overload "
                           f"declaration:\n{head} <- Expecting `pass` or `...` here!\n")


def _overload(func):
    """Declares one signature of an overloaded function (the last definition implements it)."""
    _check_overload_body(func)
    _overloaded_fns.setdefault(f"{func.__module__}.{func.__qualname__}", []).append(func)
    return func


def _overload_method(func):
    """Declares one signature of an overloaded method."""
    _check_overload_body(func)
    owner, _, name = func.__qualname__.rpartition(".")
    _overloaded_methods.setdefault(f"{func.__module__}.{owner}", {}).setdefault(
        name, []).append(func)
    return func


# ---- freezing, fusion and execution switches ------------------------------------------------

def _scripted(mod, what: str) -> None:
    if not _builtin_isinstance(mod, Module):  # what script() gives back for a module
        raise RuntimeError(f"{what} expects a ScriptModule as input. Please use torch.jit.script "
                           "or torch.jit.trace to script your 'nn.Module'.")


def freeze(mod, preserved_attrs: list[str] | None = None, optimize_numerics: bool = True):
    """Freeze a scripted module in eval mode (inline its parameters): here, the module itself."""
    _deprecated("freeze", "use `torch.compile` instead")
    _scripted(mod, "Freezing")
    if mod.training:
        raise RuntimeError("Freezing is currently only implemented for modules in eval mode. "
                           "Please call .eval() on your module before freezing.")
    return mod


def run_frozen_optimizations(mod, optimize_numerics: bool = True,
                             preserved_methods: list[str] | None = None) -> None:
    """Optimizations on a frozen module's graph (there is none here: nothing to do)."""


def optimize_for_inference(mod, other_methods: list[str] | None = None):
    """Freeze a scripted module and optimize it for inference: here, the module in eval
    mode."""
    _deprecated("optimize_for_inference", "use `torch.compile` instead")
    _scripted(mod, "optimize_for_inference")
    if mod.training:
        mod = freeze(mod.eval(), preserved_attrs=other_methods)
    return mod


_fusion = {"onednn": False, "strategy": [("STATIC", 2), ("DYNAMIC", 10)]}


def enable_onednn_fusion(enabled: bool) -> None:
    """Enable or disable oneDNN JIT fusion (recorded: there is no JIT to fuse)."""
    _fusion["onednn"] = bool(enabled)


def onednn_fusion_enabled() -> bool:
    """Whether oneDNN JIT fusion is enabled."""
    return _fusion["onednn"]


def set_fusion_strategy(strategy: list[tuple[str, int]]):
    """Set the fusion strategy (recorded); returns the previous one."""
    _deprecated("set_fusion_strategy", "use `torch.compile` instead")
    for kind, _depth in strategy:
        if kind not in ("STATIC", "DYNAMIC"):
            raise ValueError(f"FusionBehavior only supported 'STATIC' or 'DYNAMIC', got: {kind}")
    previous, _fusion["strategy"] = _fusion["strategy"], [tuple(s) for s in strategy]
    return previous


class strict_fusion:  # noqa: N801 - PyTorch's name
    """Inside TorchScript, fail unless the block fuses; outside it, warn and do nothing."""

    def __init__(self) -> None:
        warnings.warn("Only works in script mode", stacklevel=2)

    def __enter__(self) -> None:
        pass

    def __exit__(self, *exc) -> None:
        pass


@contextlib.contextmanager
def optimized_execution(should_optimize: bool) -> Iterator[None]:
    """Turn TorchScript's graph optimizations on or off inside the block (none here)."""
    yield


@contextlib.contextmanager
def fuser(name: str) -> Iterator[None]:
    """Pick TorchScript's fuser inside the block: 'fuser0'..'fuser3' or 'none' (none here)."""
    if name not in ("fuser0", "fuser1", "fuser2", "fuser3", "none"):
        raise Exception(f"unrecognized fuser option (name: {name})")  # noqa: TRY002
    yield


def set_module(obj, mod: str):
    """Set ``obj.__module__`` to ``mod``."""
    if not _builtin_isinstance(mod, str):
        raise TypeError("The mod argument should be a string")
    obj.__module__ = mod


# ---- asynchronous calls ---------------------------------------------------------------------

def fork(func, *args, **kwargs) -> Future:
    """Run ``func(*args, **kwargs)``; a Future of its result (eager code runs it at once)."""
    warnings.warn("`torch.jit.fork` is deprecated. Please use `torch.compile` instead.",
                  DeprecationWarning, stacklevel=2)
    future = Future()
    future.set_result(func(*args, **kwargs))
    return future


def wait(future: Future):
    """The result of a Future from ``fork``."""
    warnings.warn("`torch.jit.wait` is deprecated. Please use `torch.compile` instead.",
                  DeprecationWarning, stacklevel=2)
    return future.wait()


_fork, _wait = fork, wait


# ---- isinstance with typing's container types ---------------------------------------------

_RAW = {dict: "dict", list: "list", tuple: "tuple", typing.Dict: "Dict",  # noqa: UP006
        typing.List: "List", typing.Optional: "Optional", typing.Tuple: "Tuple"}  # noqa: UP006


def _raw_check(target) -> None:
    try:
        name = _RAW.get(target)
    except TypeError:  # unhashable
        return
    if name is None:
        return
    if name.endswith("ict"):
        raise RuntimeError(f"Attempted to use {name} without contained types. Please add "
                           f"contained type, e.g. {name}[int, int]")
    raise RuntimeError(f"Attempted to use {name} without a contained type. Please add a "
                       f"contained type, e.g. {name}[int]")


def _empty_warning(obj) -> None:
    if obj == [] or obj == {} or obj == ():
        warnings.warn("The inner type of a container is lost when calling torch.jit.isinstance "
                      "in eager mode. For example, List[int] would become list and therefore "
                      "falsely return True for List[float] or List[str].", stacklevel=3)


def _matches(obj, target) -> bool:
    origin = typing.get_origin(target)
    _raw_check(target)
    if origin is None:
        return _builtin_isinstance(obj, target)
    args = typing.get_args(target)
    if origin is list:
        _empty_warning(obj)
        return _builtin_isinstance(obj, list) and all(_matches(v, args[0]) for v in obj)
    if origin is dict:
        _empty_warning(obj)
        return _builtin_isinstance(obj, dict) and all(
            _builtin_isinstance(k, args[0]) and _matches(v, args[1]) for k, v in obj.items())
    if origin is tuple:
        _empty_warning(obj)
        return (_builtin_isinstance(obj, tuple) and len(obj) == len(args)
                and all(_matches(v, t) for v, t in zip(obj, args)))
    if origin is typing.Union or origin is types.UnionType:
        if obj is None:
            return True
        for t in args:
            if typing.get_origin(t) is not None:
                return _matches(obj, t)  # PyTorch lets the first container type decide
            if _builtin_isinstance(obj, t):
                return True
        return False
    return False


def isinstance(obj, target_type) -> bool:  # noqa: A001 - PyTorch's name
    """``isinstance`` that also checks the contents of typing's ``List[int]``,
    ``Dict[str, Tensor]``, ``Tuple[...]`` and ``Optional[...]`` (nested)."""
    if _builtin_isinstance(target_type, tuple):
        return any(isinstance(obj, t) for t in target_type)
    if _builtin_isinstance(target_type, collections.abc.Container):
        raise RuntimeError("The second argument to `torch.jit.isinstance` must be a type or a "
                           "tuple of types")
    return _matches(obj, target_type)


_isinstance = isinstance


def _unwrap_optional(x):
    """``x``, which must not be None."""
    if x is None:
        raise AssertionError("Unwrapping null optional")
    return x


# ---- TorchScript archives -------------------------------------------------------------------

_NO_ARCHIVES = ("chainrule has no TorchScript, so it cannot {what} a TorchScript archive. Save the "
                "model's weights with torch.save(model.state_dict(), f) and load them into the "
                "Python module with model.load_state_dict(torch.load(f)).")


def save(m, f, _extra_files=None) -> None:
    """Save a scripted module as a TorchScript archive: not available (no TorchScript)."""
    _deprecated("save", "switch to `torch.export`")
    raise RuntimeError(_NO_ARCHIVES.format(what="write"))


def load(f, map_location=None, _extra_files=None, _restore_shapes=False):
    """Load a TorchScript archive: not available (no TorchScript)."""
    _deprecated("load", "switch to `torch.export`")
    if _builtin_isinstance(f, (str, os.PathLike)) and not os.path.exists(f):
        raise ValueError(f"The provided filename {f} does not exist")
    if _builtin_isinstance(f, (str, os.PathLike)) and os.path.isdir(f):
        raise ValueError(f"The provided filename {f} is a directory")
    raise RuntimeError(_NO_ARCHIVES.format(what="read"))
