"""Symbolic tracing: run a module's forward (or a function) on Proxies and record a Graph."""

from __future__ import annotations

import builtins
import copy
import functools
import inspect
import math
from collections.abc import Callable
from types import FunctionType, ModuleType
from typing import Any

from ..nn import Module, Parameter, Sequential
from ..tensor import Tensor
from .graph import Graph
from .graph_module import GraphModule
from .node import Node, _side_effectful_functions
from .proxy import ParameterProxy, Proxy, Scope, ScopeContextManager, TracerBase

__all__ = ["PH", "Tracer", "symbolic_trace", "wrap"]


class PHBase:
    """Object representing an input placeholder to ``concrete_args``."""

    def __repr__(self) -> str:
        return "PH"


PH = PHBase()


def _assert(condition: Any, message: str = "") -> None:
    """A traced ``assert``: raises AssertionError(message) when condition is false."""
    if not condition:
        raise AssertionError(message)


def _assert_is_none(value: Any, msg: str) -> None:
    """Raises AssertionError(msg) unless value is None (a concrete argument specialised to
    None)."""
    if value is not None:
        raise AssertionError(msg)


_side_effectful_functions.update((_assert, _assert_is_none))

_tracing = 0

# (id of a module's globals, name) of the functions fx.wrap registered, and those globals.
_wrapped_fns_to_patch: dict[tuple[int, str], dict[str, Any]] = {}


def wrap(fn_or_name: str | Callable) -> str | Callable:
    """Called at module scope: calls of this global function are recorded as one
    ``call_function`` node instead of being traced through."""
    if not callable(fn_or_name) and not isinstance(fn_or_name, str):
        raise RuntimeError("Unsupported type for global function! Must be either a callable or "
                           "string name")
    if callable(fn_or_name):
        if isinstance(fn_or_name, str):
            raise AssertionError("fn_or_name must be a global function or string name")
        fn_name = fn_or_name.__name__
    else:
        fn_name = fn_or_name
    frame = inspect.currentframe()
    caller = frame.f_back if frame is not None else None
    if caller is None or caller.f_code.co_name != "<module>":
        raise NotImplementedError("wrap must be called at the top level of a module")
    _wrapped_fns_to_patch[(id(caller.f_globals), fn_name)] = caller.f_globals
    return fn_or_name


def _find_proxy(*objects: Any) -> Proxy | None:
    found: list[Proxy] = []

    def visit(a: Any) -> None:
        if isinstance(a, Proxy):
            found.append(a)
        elif isinstance(a, (list, tuple)):
            for x in a:
                visit(x)
        elif isinstance(a, dict):
            for x in a.values():
                visit(x)

    for obj in objects:
        visit(obj)
    return found[0] if found else None


def _wrapped(orig_fn: Callable) -> Callable:
    """A stand-in for a wrapped function: records a node when a Proxy is among its
    arguments, else calls the function."""
    @functools.wraps(orig_fn)
    def wrapped(*args: Any, **kwargs: Any) -> Any:
        proxy = _find_proxy(args, kwargs)
        if proxy is not None:
            result = proxy.tracer.create_proxy("call_function", orig_fn, args, kwargs)
            result.node.meta["is_wrapped"] = True
            return result
        return orig_fn(*args, **kwargs)

    return wrapped


class _Patcher:
    """Sets attributes for the duration of a trace and restores them after."""

    def __init__(self) -> None:
        self._saved: list[tuple[Any, str, Any, bool]] = []

    def patch(self, owner: Any, name: str, value: Any) -> None:
        if isinstance(owner, dict):
            self._saved.append((owner, name, owner.get(name), name in owner))
            owner[name] = value
        else:
            self._saved.append((owner, name, owner.__dict__.get(name), name in owner.__dict__))
            setattr(owner, name, value)

    def __enter__(self) -> _Patcher:
        return self

    def __exit__(self, *exc: Any) -> None:
        while self._saved:
            owner, name, value, existed = self._saved.pop()
            if isinstance(owner, dict):
                if existed:
                    owner[name] = value
                else:
                    owner.pop(name, None)
            elif existed:
                setattr(owner, name, value)
            else:
                delattr(owner, name)


_HAS_VARSTUFF = inspect.CO_VARARGS | inspect.CO_VARKEYWORDS


def _patch_function(fn: Callable, nargs: int) -> Callable:
    """``fn`` with its keyword-only, ``*args`` and ``**kwargs`` parameters made positional, so
    the proxies standing for them are passed as they are."""
    code = fn.__code__
    code = code.replace(co_flags=code.co_flags & ~_HAS_VARSTUFF, co_argcount=nargs,
                        co_posonlyargcount=0, co_kwonlyargcount=0)
    return FunctionType(code, fn.__globals__, fn.__name__, fn.__defaults__, fn.__closure__)


class Tracer(TracerBase):
    """Records a Module's forward, or a function, as a Graph: what ``symbolic_trace`` uses.
    Override ``is_leaf_module`` to choose which submodules stay ``call_module`` nodes."""

    def __init__(self, autowrap_modules: tuple[ModuleType, ...] = (math,),
                 autowrap_functions: tuple[Callable, ...] = (),
                 param_shapes_constant: bool = False) -> None:
        super().__init__()
        self._autowrap_function_ids = {
            id(value) for module in autowrap_modules for name, value in vars(module).items()
            if not name.startswith("_") and callable(value)}
        self._autowrap_function_ids.update(id(f) for f in autowrap_functions)
        self._autowrap_search = list(autowrap_modules)
        self.param_shapes_constant = param_shapes_constant
        self.submodule_paths: dict[Module, str] | None = None
        self.root_module_name = ""
        self.scope = Scope("", None)
        self.module_stack: dict[str, tuple[str, Any]] = {}
        self.node_name_to_scope: dict[str, tuple[str, type]] = {}
        self.num_calls: dict[str, int] = {}

    # ---- what becomes a node ----------------------------------------------------------------

    def create_arg(self, a: Any) -> Any:
        """Parameters, buffers and other tensors become ``get_attr`` nodes; the rest as
        TracerBase lowers it."""
        if isinstance(a, Parameter):
            for name, p in self.root.named_parameters():
                if a is p:
                    return self.create_node("get_attr", name, (), {})
            raise NameError("parameter is not a member of this module")
        if isinstance(a, Tensor):
            for name, b in self.root.named_buffers():
                if a is b:
                    return self.create_node("get_attr", name, (), {})
        elif isinstance(a, Module):
            for name, m in self.root.named_modules():
                if a is m:
                    return self.create_node("get_attr", name, (), {})
        if isinstance(a, tuple) and hasattr(a, "_fields"):
            args = tuple(self.create_arg(elem) for elem in a)
            return self.create_node("call_function", a.__class__, args, {})
        if isinstance(a, Tensor):
            qualname = self.tensor_attrs.get(a)
            if not qualname:
                i = 0
                while hasattr(self.root, f"_tensor_constant{i}"):
                    i += 1
                qualname = f"_tensor_constant{i}"
                self.tensor_attrs[a] = qualname
                setattr(self.root, qualname, a)
            return self.create_node("get_attr", qualname, (), {})
        return super().create_arg(a)

    def is_leaf_module(self, m: Module, module_qualified_name: str) -> bool:
        """A module of torch.nn (other than Sequential) is a leaf: called, not traced
        through."""
        module = type(m).__module__
        return (module.startswith(("chainrule.nn", "torch.nn", "torch.ao.nn"))
                and not isinstance(m, Sequential))

    def path_of_module(self, mod: Module) -> str:
        """The qualified name of ``mod`` in the module hierarchy of ``root``."""
        if self.submodule_paths is not None:
            path = self.submodule_paths.get(mod)
            if path is None:
                raise NameError("module is not installed as a submodule")
            return path
        for name, m in self.root.named_modules():
            if m is mod:
                return name
        raise NameError("module is not installed as a submodule")

    def call_module(self, m: Module, forward: Callable, args: tuple, kwargs: dict) -> Any:
        """A leaf module becomes one ``call_module`` node; any other module's forward is
        traced through."""
        module_qualified_name = self.path_of_module(m)
        with ScopeContextManager(self.scope, Scope(module_qualified_name, type(m))) as scope:
            # a module called again gets its own key: path@<n>
            calls = self.num_calls.get(module_qualified_name, 0)
            key = f"{scope.module_path}@{calls}" if calls else scope.module_path
            self.module_stack[key] = (module_qualified_name, scope.module_type)
            self.num_calls[module_qualified_name] = calls + 1
            try:
                if not self.is_leaf_module(m, module_qualified_name):
                    return forward(*args, **kwargs)
                return self.create_proxy("call_module", module_qualified_name, args, kwargs)
            finally:
                self.module_stack.popitem()

    def getattr(self, attr: str, attr_val: Any, parameter_proxy_cache: dict[str, Any]) -> Any:
        """A parameter read off a module becomes a ``get_attr`` node (one per parameter)."""
        def proxy_for(value: Any, collection: Any) -> Proxy | None:
            for name, p in collection:
                if value is p:
                    if name not in parameter_proxy_cache:
                        factory = None
                        if self.param_shapes_constant:
                            def factory(node: Node, name: str = name) -> Proxy:
                                return ParameterProxy(self, node, name, value)
                        parameter_proxy_cache[name] = self.create_proxy(
                            "get_attr", name, (), {}, proxy_factory_fn=factory)
                    return parameter_proxy_cache[name]
            return None

        if isinstance(attr_val, Parameter):
            proxy = proxy_for(attr_val, self.root.named_parameters())
            if proxy is not None:
                return proxy
        if self.proxy_buffer_attributes and isinstance(attr_val, Tensor):
            proxy = proxy_for(attr_val, self.root.named_buffers())
            if proxy is not None:
                return proxy
        return attr_val

    # ---- the trace --------------------------------------------------------------------------

    def create_args_for_root(self, root_fn: Callable, is_module: bool,
                             concrete_args: dict[str, Any] | tuple | None = None
                             ) -> tuple[Callable, list[Any]]:
        """Create ``placeholder`` nodes for the signature of the root function."""
        fn = inspect.unwrap(root_fn)
        code = fn.__code__
        total_args = code.co_argcount + code.co_kwonlyargcount
        names = list(code.co_varnames)
        sig = inspect.signature(fn)
        args: list[Any] = []
        skip = 0
        if is_module:
            if total_args == 0:
                raise RuntimeError("``self`` argument cannot be part of *args expansion!")
            skip = 1
            args.append(self.root)
        arg_names = names[skip:total_args]
        if isinstance(concrete_args, tuple):
            if len(arg_names) != len(concrete_args):
                raise RuntimeError(f"Tracing expected {len(arg_names)} arguments but got "
                                   f"{len(concrete_args)} concrete arguments")
            concrete_args = dict(zip(arg_names, concrete_args))

        def placeholder(name: str) -> Any:
            if concrete_args is not None and name in concrete_args:
                return self._concrete_placeholder(name, concrete_args[name], sig)
            if name[0] == "*":
                default: tuple = ()
            else:
                param = sig.parameters[name]
                default = () if param.default is inspect.Parameter.empty else (param.default,)
            return self.create_proxy("placeholder", name, default, {},
                                     type_expr=fn.__annotations__.get(name))

        args.extend(placeholder(n) for n in arg_names)
        if not code.co_kwonlyargcount and not code.co_flags & _HAS_VARSTUFF:
            return root_fn, args
        at = total_args
        if code.co_flags & inspect.CO_VARARGS:
            args.append(placeholder("*" + names[at]))
            at += 1
        if code.co_flags & inspect.CO_VARKEYWORDS:
            args.append(placeholder("**" + names[at]))
        return _patch_function(root_fn, len(args)), args

    def _concrete_placeholder(self, name: str, value: Any, sig: inspect.Signature) -> Any:
        param = sig.parameters[name]
        default = () if param.default is inspect.Parameter.empty else (param.default,)
        out = self.create_proxy("placeholder", f"{name}_1", default, {})
        if isinstance(value, PHBase):
            return out
        if type(value) in (bool, int, float, complex, str):
            self.create_proxy("call_function", _assert,
                              (out == value, f"{name} has been specialized to have value "
                               f"{value} but got another value"), {})
        elif value is None:
            self.create_proxy("call_function", _assert_is_none,
                              (out, f"{name} has been specialized to have value None but got "
                               "another value"), {})
        return value

    def trace(self, root: Module | Callable, concrete_args: dict[str, Any] | None = None
              ) -> Graph:
        """Trace ``root`` and return the corresponding FX ``Graph`` representation."""
        if isinstance(root, Module):
            self.root = root
            fn = type(root).forward
            self.submodule_paths = {mod: name for name, mod in root.named_modules()}
        else:
            self.root = Module()
            fn = root
        tracer_cls = getattr(self, "__class__", None)
        self.graph = Graph(tracer_cls=tracer_cls)
        if hasattr(fn, "__code__"):
            self.graph._co_fields = {"co_name": fn.__code__.co_name,
                                     "co_filename": fn.__code__.co_filename,
                                     "co_firstlineno": fn.__code__.co_firstlineno}
        self.tensor_attrs: dict[Any, str] = {}

        def collect_tensor_attrs(m: Module, prefix: list[str]) -> None:
            for k, v in m.__dict__.items():
                if isinstance(v, Tensor):
                    self.tensor_attrs[v] = ".".join(prefix + [k])
            for k, child in m.named_children():
                collect_tensor_attrs(child, prefix + [k])

        collect_tensor_attrs(self.root, [])
        fn_globals = getattr(fn, "__globals__", {})
        fn, args = self.create_args_for_root(fn, isinstance(root, Module), concrete_args)
        parameter_proxy_cache: dict[str, Proxy] = {}
        orig_getattr = Module.__getattr__
        orig_call = Module.__call__
        tracer = self

        @functools.wraps(orig_getattr)
        def module_getattr_wrapper(mod: Module, attr: str) -> Any:
            value = orig_getattr(mod, attr)
            return tracer.getattr(attr, value, parameter_proxy_cache)

        @functools.wraps(orig_call)
        def module_call_wrapper(mod: Module, *args: Any, **kwargs: Any) -> Any:
            def forward(*args: Any, **kwargs: Any) -> Any:
                return orig_call(mod, *args, **kwargs)

            _autowrap_check(patcher, getattr(getattr(mod, "forward", mod), "__globals__", {}),
                            tracer._autowrap_function_ids)
            return tracer.call_module(mod, forward, args, kwargs)

        global _tracing
        _tracing += 1
        try:
            with _Patcher() as patcher:
                patcher.patch(Module, "__getattr__", module_getattr_wrapper)
                patcher.patch(Module, "__call__", module_call_wrapper)
                _patch_wrapped_functions(patcher)
                _autowrap_check(patcher, fn_globals, self._autowrap_function_ids)
                for module in self._autowrap_search:
                    _autowrap_check(patcher, module.__dict__, self._autowrap_function_ids)
                result = fn(*args)
                return_type = getattr(inspect.unwrap(fn), "__annotations__", {}).get("return")
                self.create_node("output", "output", (self.create_arg(result),), {},
                                 type_expr=return_type)
        finally:
            _tracing -= 1
        self.submodule_paths = None
        return self.graph

    def __deepcopy__(self, memo: dict) -> Tracer:
        # the autowrap modules (math) are shared, not copied
        new = Tracer.__new__(type(self))
        for k, v in self.__dict__.items():
            new.__dict__[k] = v if k == "_autowrap_search" else copy.deepcopy(v, memo)
        return new


def _patch_wrapped_functions(patcher: _Patcher) -> None:
    """Replace the functions fx.wrap registered by their recording stand-ins."""
    for (_, name), frame_globals in _wrapped_fns_to_patch.items():
        if name not in frame_globals and hasattr(builtins, name):
            orig = getattr(builtins, name)
        else:
            orig = frame_globals[name]
        patcher.patch(frame_globals, name, _wrapped(orig))


def _autowrap_check(patcher: _Patcher, frame_dict: dict[str, Any],
                    function_ids: set[int]) -> None:
    """Globals that are autowrapped functions (math's) record a node when given a Proxy."""
    for name, value in list(frame_dict.items()):
        if not name.startswith("_") and callable(value) and id(value) in function_ids:
            patcher.patch(frame_dict, name, _wrapped(value))


def symbolic_trace(root: Module | Callable, concrete_args: dict[str, Any] | None = None
                   ) -> GraphModule:
    """Symbolic tracing API: record the operations of a Module's forward (or a function) as
    a Graph and return the GraphModule built from it."""
    tracer = Tracer()
    graph = tracer.trace(root, concrete_args)
    name = type(root).__name__ if isinstance(root, Module) else root.__name__
    return GraphModule(tracer.root, graph, name)


def is_fx_tracing() -> bool:
    """True while symbolic_trace (or a Tracer) is tracing."""
    return _tracing > 0
