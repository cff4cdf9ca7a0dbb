"""``torch.fx.proxy``: Proxy stands for a value while tracing and records what is done to it."""

from __future__ import annotations

import copy
import dis
import enum
import inspect
import operator
import sys
from collections.abc import Callable, Iterator
from typing import Any

from .graph import _MAGIC, _REFLECTABLE, Graph
from .node import Node, map_aggregate

__all__ = ["TracerBase", "GraphAppendingTracer", "TraceError", "Proxy", "Attribute",
           "ParameterProxy", "Scope", "ScopeContextManager"]


class Scope:
    """The module path and module type of the module a Node was traced in."""

    def __init__(self, module_path: str, module_type: Any) -> None:
        self.module_path = module_path
        self.module_type = module_type


class ScopeContextManager:
    """Sets a Scope to a module's while its forward is traced, and restores it after."""

    def __init__(self, scope: Scope, current_scope: Scope) -> None:
        self._prev_scope = copy.copy(scope)
        scope.module_path = current_scope.module_path
        scope.module_type = current_scope.module_type
        self._scope = scope

    def __enter__(self) -> Scope:
        return self._scope

    def __exit__(self, *args: object) -> None:
        self._scope.module_path = self._prev_scope.module_path
        self._scope.module_type = self._prev_scope.module_type


class TraceError(ValueError):
    """A traced program did something a symbolic trace cannot record (control flow on a
    traced value, iterating a traced value)."""


def _base_types() -> tuple[type, ...]:
    root = sys.modules[__name__.partition(".")[0]]
    return (str, int, float, bool, complex, type(root.float32), root.Tensor, root.device,
            type(root.contiguous_format), type(root.strided))


class TracerBase:
    """What turns operations on Proxies into Nodes of ``self.graph``."""

    graph: Graph
    record_stack_traces: bool = False
    check_mutable_operations: bool = False
    trace_asserts: bool = False
    proxy_buffer_attributes: bool = False
    traced_func_name: str = "forward"
    scope: Scope
    module_stack: dict[str, tuple[str, Any]]
    node_name_to_scope: dict[str, tuple[str, type]]

    def create_node(self, kind: str, target: Any, args: tuple, kwargs: dict,
                    name: str | None = None, type_expr: Any = None) -> Node:
        """Inserts a graph node given target, args, kwargs, and name."""
        node = self.graph.create_node(kind, target, args, kwargs, name, type_expr)
        module_stack = getattr(self, "module_stack", None)
        if module_stack:
            node.meta["nn_module_stack"] = copy.copy(module_stack)
        scope = getattr(self, "scope", None)
        if scope is not None:
            self.node_name_to_scope[node.name] = (scope.module_path, scope.module_type)
        return node

    def proxy(self, node: Node) -> Proxy:
        """The Proxy standing for ``node``."""
        return Proxy(node, self)

    def create_proxy(self, kind: str, target: Any, args: tuple, kwargs: dict,
                     name: str | None = None, type_expr: Any = None,
                     proxy_factory_fn: Callable[[Node], Proxy] | None = None) -> Proxy:
        """Create a Node from the given arguments, then return the Node wrapped in a Proxy
        object."""
        args_ = self.create_arg(args)
        kwargs_ = self.create_arg(kwargs)
        if not isinstance(args_, tuple):
            raise AssertionError("args must be a tuple")
        if not isinstance(kwargs_, dict):
            raise AssertionError("kwargs must be a dict")
        node = self.create_node(kind, target, args_, kwargs_, name, type_expr)
        return self.proxy(node) if proxy_factory_fn is None else proxy_factory_fn(node)

    def create_arg(self, a: Any) -> Any:
        """Lowers a value used as an argument into a value a Node can hold (Proxies become
        their Nodes, containers element by element)."""
        if isinstance(a, Proxy):
            return a.node
        if hasattr(a, "__fx_create_arg__"):
            return a.__fx_create_arg__(self)
        if isinstance(a, tuple):
            items = [self.create_arg(elem) for elem in a]
            return type(a)(*items) if hasattr(a, "_fields") else tuple(items)
        if isinstance(a, list):
            return [self.create_arg(elem) for elem in a]
        if isinstance(a, dict):
            result = {}
            for k, v in a.items():
                k = self.create_arg(k)

                def no_node(arg: Any, key: Any = k) -> None:
                    if isinstance(arg, Node):
                        raise RuntimeError("Keys for dictionaries used as an argument cannot "
                                           f"contain a Node. Got key: {key}")

                map_aggregate(k, no_node)
                result[k] = self.create_arg(v)
            return result
        if isinstance(a, slice):
            return slice(self.create_arg(a.start), self.create_arg(a.stop),
                         self.create_arg(a.step))
        if isinstance(a, range):
            return range(self.create_arg(a.start), self.create_arg(a.stop),
                         self.create_arg(a.step))
        if isinstance(a, (*_base_types(), enum.Enum)) or a is None or a is ...:
            return a
        raise NotImplementedError(f"argument of type: {type(a)}")

    def to_bool(self, obj: Proxy) -> bool:
        """Called when a proxy object is being converted to a boolean, such as when used in
        control flow."""
        raise TraceError("symbolically traced variables cannot be used as inputs to control "
                         "flow")

    def iter(self, obj: Proxy) -> Iterator:
        """Called when a proxy object is being iterated over, such as when used in control
        flow."""
        raise TraceError("Proxy object cannot be iterated. This can be attempted when the Proxy "
                         "is used in a loop or as a *args or **kwargs function argument. See the "
                         "torch.fx docs on pytorch.org for a more detailed explanation of what "
                         "types of control flow can be traced, and check out the Proxy docstring "
                         "for help troubleshooting Proxy iteration errors")

    def keys(self, obj: Proxy) -> Any:
        """Called when a proxy object is has the keys() method called (``**proxy``)."""
        return Attribute(obj, "keys")()


class GraphAppendingTracer(TracerBase):
    """A tracer that only appends nodes to an existing graph."""

    def __init__(self, graph: Graph) -> None:
        super().__init__()
        self.graph = graph
        self.scope = Scope("", None)
        self.module_stack = {}
        self.node_name_to_scope = {}


class Proxy:
    """Stands for a value while tracing: operations on it are recorded as Nodes."""

    def __init__(self, node: Node, tracer: TracerBase | None = None) -> None:
        if tracer is None:
            tracer = GraphAppendingTracer(node.graph)
        self.tracer = tracer
        self.node = node

    def __repr__(self) -> str:
        return f"Proxy({self.node.name})"

    def __getattr__(self, k: str) -> Attribute:
        return Attribute(self, k)

    def __getstate__(self) -> dict:
        return self.__dict__

    def __setstate__(self, d: dict) -> None:
        self.__dict__ = d

    def __deepcopy__(self, memo: dict) -> Proxy:
        new = type(self).__new__(type(self))
        for k, v in self.__dict__.items():
            new.__dict__[k] = v if k in ("node", "tracer") else copy.deepcopy(v, memo)
        return new

    def __call__(self, *args: Any, **kwargs: Any) -> Proxy:
        return self.tracer.create_proxy("call_method", "__call__", (self,) + args, kwargs)

    def __iter__(self) -> Iterator:
        # `a, b = proxy` unpacks a known number of values: one getitem each
        frame = inspect.currentframe()
        caller = frame.f_back if frame is not None else None
        if caller is not None:
            for inst in dis.get_instructions(caller.f_code):
                if inst.offset >= caller.f_lasti:
                    if inst.opname == "UNPACK_SEQUENCE":
                        return (self[i] for i in range(inst.argval))
                    break
        return self.tracer.iter(self)

    def __abs__(self) -> Proxy:
        return self.tracer.create_proxy("call_function", operator.abs, (self,), {})

    def __bool__(self) -> bool:
        return self.tracer.to_bool(self)

    def keys(self) -> Any:
        """``proxy.keys()``, as ``**proxy`` calls it."""
        return self.tracer.keys(self)

    def __len__(self) -> int:
        raise RuntimeError("'len' is not supported in symbolic tracing by default. If you want "
                           "this call to be recorded, please call torch.fx.wrap('len') at "
                           "module scope")

    @classmethod
    def __torch_function__(cls, orig_method: Callable, types: tuple, args: tuple | None = None,
                           kwargs: dict | None = None) -> Proxy:
        args = args if args else ()
        kwargs = kwargs if kwargs else {}
        tracers: dict[TracerBase, None] = {}

        def find_tracer(a: Any) -> Any:
            if isinstance(a, cls):
                tracers[a.tracer] = None
            return a

        map_aggregate(args, find_tracer)
        map_aggregate(kwargs, find_tracer)
        if len(tracers) > 1:
            raise RuntimeError(f"Found multiple different tracers {list(tracers.keys())} while "
                               f"trying to trace operations {orig_method}")
        tracer = next(iter(tracers))
        if _is_tensor_method(orig_method):
            return tracer.create_proxy("call_method", orig_method.__name__, args, kwargs)
        return tracer.create_proxy("call_function", orig_method, args, kwargs,
                                   name=tracer.graph._target_to_str(orig_method))


def _is_tensor_method(fn: Callable) -> bool:
    """A method of Tensor (a call_method node) and not a function of the torch namespace that
    is also bound as a method (a call_function node)."""
    root = sys.modules[__name__.partition(".")[0]]
    name = getattr(fn, "__name__", "")
    if name == "__get__":
        return True
    return getattr(root.Tensor, name, None) is fn and getattr(root, name, None) is not fn


class Attribute(Proxy):
    """``proxy.name``: a method call when called, else a ``getattr`` node made on first use."""

    def __init__(self, root: Proxy, attr: str) -> None:
        self.root = root
        self.attr = attr
        self.tracer = root.tracer
        self._node: Node | None = None

    @property
    def node(self) -> Node:  # type: ignore[override]
        """The ``getattr`` node, made on first use."""
        if self._node is None:
            self._node = self.tracer.create_proxy("call_function", getattr,
                                                  (self.root, self.attr), {}).node
        return self._node

    def __call__(self, *args: Any, **kwargs: Any) -> Proxy:
        return self.tracer.create_proxy("call_method", self.attr, (self.root,) + args, kwargs)


class ParameterProxy(Proxy):
    """A Proxy for a parameter whose shape is known while tracing (``param_shapes_constant``):
    shape, size, dim and ndim answer with the parameter's values."""

    def __init__(self, tracer: TracerBase, node: Node, name: str, param: Any) -> None:
        super().__init__(node, tracer)
        self.param = param
        self.name = name

    def __repr__(self) -> str:
        return f"ParameterProxy({self.name})"

    @property
    def shape(self) -> Any:
        return self.param.shape

    def size(self) -> Any:
        return self.param.size()

    def dim(self) -> int:
        return self.param.dim()

    @property
    def ndim(self) -> int:
        return self.param.ndim

    def numel(self) -> int:
        return self.param.numel()

    def nelement(self) -> int:
        return self.param.nelement()


def _define_magic(name: str, template: str) -> None:
    target = getattr(operator, name, None) or getattr(operator, name.rstrip("_"))

    def impl(*args: Any, **kwargs: Any) -> Proxy:
        tracer = args[0].tracer
        return tracer.create_proxy("call_function", target, args, kwargs)

    impl.__name__ = f"__{name.strip('_')}__"
    setattr(Proxy, impl.__name__, impl)


def _define_reflected(name: str) -> None:
    target = getattr(operator, name)
    dunder = f"__r{name.strip('_')}__"

    def impl(self: Proxy, rhs: Any) -> Proxy:
        return self.tracer.create_proxy("call_function", target, (rhs, self), {})

    impl.__name__ = dunder
    setattr(Proxy, dunder, impl)


for _name, _template in _MAGIC.items():
    if _name != "div":  # Python 3 has no operator.div: truediv is the division
        _define_magic(_name, _template)
for _name in _REFLECTABLE:
    if _name != "div":
        _define_reflected(_name)
