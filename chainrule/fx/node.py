"""``torch.fx.node``: a Node is one operation of a Graph, in a doubly linked list of its graph."""

from __future__ import annotations

import builtins
import operator
import sys
import types
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from .immutable_collections import immutable_dict, immutable_list

if TYPE_CHECKING:
    from .graph import Graph

__all__ = ["Node", "map_arg", "map_aggregate", "has_side_effect"]

_OPS = ("placeholder", "call_method", "call_module", "call_function", "get_attr", "output",
        "root")

# Functions whose calls dead-code elimination keeps although nothing reads their result.
_side_effectful_functions: set[Callable[..., Any]] = {operator.setitem}

# Functions that draw random numbers: their calls are impure for eliminate_dead_code too.
_RANDOM = frozenset((
    "bernoulli", "dropout", "dropout1d", "dropout2d", "dropout3d", "alpha_dropout",
    "feature_alpha_dropout", "multinomial", "normal", "poisson", "rand", "rand_like", "randint",
    "randint_like", "randn", "randn_like", "randperm", "rrelu"))


def has_side_effect(fn: Callable) -> Callable:
    """Registers a function to not be dead code eliminated by fx.graph.eliminate_dead_code."""
    _side_effectful_functions.add(fn)
    return fn


def map_aggregate(a: Any, fn: Callable[[Any], Any]) -> Any:
    """Apply fn recursively to each object appearing in arg."""
    if isinstance(a, tuple):
        items = tuple(map_aggregate(elem, fn) for elem in a)
        return type(a)(*items) if hasattr(a, "_fields") else items
    if isinstance(a, list):
        return immutable_list(map_aggregate(elem, fn) for elem in a)
    if isinstance(a, dict):
        return immutable_dict((k, map_aggregate(v, fn)) for k, v in a.items())
    if isinstance(a, slice):
        return slice(map_aggregate(a.start, fn), map_aggregate(a.stop, fn),
                     map_aggregate(a.step, fn))
    return fn(a)


def map_arg(a: Any, fn: Callable[[Node], Any]) -> Any:
    """Apply fn recursively to each Node appearing in arg."""
    if not callable(fn):
        raise AssertionError("torch.fx.map_arg(a, fn): fn must be a callable")
    return map_aggregate(a, lambda x: fn(x) if isinstance(x, Node) else x)


# ---- names of callables, as code and as printed ---------------------------------------------

_public: dict[int, str] | None = None
_NAMESPACES = ("", "nn.functional", "linalg", "special", "fft", "fx._symbolic_trace", "fx")


def _public_paths() -> dict[int, str]:
    """id of each public callable of chainrule -> the path PyTorch spells it by (torch.relu)."""
    global _public
    if _public is None:
        root = sys.modules[__name__.partition(".")[0]]
        table: dict[int, str] = {}
        for namespace in _NAMESPACES:
            module = root
            for part in namespace.split(".") if namespace else ():
                module = getattr(module, part)
            prefix = f"torch.{namespace}." if namespace else "torch."
            for name, value in vars(module).items():
                if not name.startswith("_") and callable(value) \
                        and not isinstance(value, types.ModuleType):
                    table.setdefault(id(value), prefix + name)
        for name, value in vars(root.Tensor).items():
            if not name.startswith("__") and callable(value):
                table.setdefault(id(value), "torch.Tensor." + name)
        _public = table
    return _public


def _target_name(target: Any) -> str:
    """The name a callable's nodes are named after: its public name for chainrule's own
    (``torch.arctan`` is ``arctan`` though its function is atan's), else ``__name__``."""
    path = _public_paths().get(id(target))
    return path.rpartition(".")[2] if path is not None else target.__name__


def _is_from_torch(obj: Any) -> bool:
    """True for chainrule's own public callables (printed as torch.<path>)."""
    return id(obj) in _public_paths()


def _get_qualified_name(func: Callable) -> str:
    """The dotted name a callable is known by: ``torch.relu``, ``operator.add``, ``getattr``."""
    name = getattr(func, "__name__", None) or type(func).__name__
    if getattr(builtins, name, None) is func:
        return name
    path = _public_paths().get(id(func))
    if path is not None:
        return path
    module = getattr(func, "__module__", None) or type(func).__module__
    return f"{module}.{getattr(func, '__qualname__', name)}"


def _pretty_print_target(target: Any) -> str:
    """How a target prints in a node's line: operator.add, builtins.getattr, torch.relu."""
    if isinstance(target, str):
        return target
    name = getattr(target, "__name__", None)
    module = getattr(target, "__module__", None)
    if name is not None and module == "builtins":
        return f"builtins.{name}"
    if name is not None and module == "_operator":
        return f"operator.{name}"
    return _get_qualified_name(target)


def _type_repr(obj: Any) -> str:
    """A type as it reads in an annotation (``torch.Tensor``, ``int``)."""
    if isinstance(obj, type):
        if obj.__module__ == "builtins":
            return obj.__qualname__
        return f"{obj.__module__}.{obj.__qualname__}"
    if obj is ...:
        return "..."
    if isinstance(obj, types.FunctionType):
        return obj.__name__
    return repr(obj)


def _format_arg(arg: Any) -> str:
    """An argument as a node's line prints it: nodes as %name, containers element by element."""
    if isinstance(arg, list):
        return "[" + ", ".join(_format_arg(a) for a in arg) + "]"
    if isinstance(arg, tuple):
        return "(" + ", ".join(_format_arg(a) for a in arg) + ("," if len(arg) == 1 else "") + ")"
    if isinstance(arg, dict):
        return "{" + ", ".join(f"{k}: {_format_arg(v)}" for k, v in arg.items()) + "}"
    if isinstance(arg, Node):
        return "%" + str(arg)
    return str(arg)


class Node:
    """One operation in a Graph: its op kind, target, arguments and the nodes that use it."""

    def __init__(self, graph: Graph, name: str, op: str, target: Any, args: tuple,
                 kwargs: dict, return_type: Any = None) -> None:
        if op not in _OPS:
            raise AssertionError(f"Expected op to be one of {_OPS}, but got {op}")
        if op == "call_function" and not callable(target):
            raise ValueError(f"Node [graph = {graph}, name = '{name}'] target {target} has type "
                             f"{type(target)} but a Callable is expected")
        if op in ("placeholder", "call_method", "call_module", "get_attr", "output") \
                and not isinstance(target, str):
            raise ValueError(f"Node [graph = {graph}, name = '{name}'] target {target} has type "
                             f"{type(target)} but a str is expected")
        self.graph = graph
        self.name = name
        self.op = op
        self.target = target
        self._input_nodes: dict[Node, None] = {}
        self.users: dict[Node, None] = {}
        self.type = return_type
        self._prev = self
        self._next = self
        self._erased = False
        self._args: tuple = ()
        self._kwargs: dict = {}
        self.meta: dict[str, Any] = {}
        self._update_args_kwargs(args, kwargs)

    # ---- position in the graph ------------------------------------------------------------------

    @property
    def next(self) -> Node:
        """The next node in the linked list of nodes."""
        return self._next

    @property
    def prev(self) -> Node:
        """The previous node in the linked list of nodes."""
        return self._prev

    def _remove_from_list(self) -> None:
        p, n = self._prev, self._next
        p._next, n._prev = n, p

    def prepend(self, x: Node) -> None:
        """Insert x before this node in the list of nodes in the graph."""
        if self.graph is not x.graph:
            raise AssertionError("Attempting to move a Node into a different Graph")
        if self is x:
            return
        x._remove_from_list()
        p = self._prev
        p._next, x._prev = x, p
        x._next, self._prev = self, x

    def append(self, x: Node) -> None:
        """Insert ``x`` after this node in the list of nodes in the graph."""
        self._next.prepend(x)

    def __gt__(self, other: Node) -> bool:
        return self.graph._position(self) > self.graph._position(other)

    def __lt__(self, other: Node) -> bool:
        return self.graph._position(self) < self.graph._position(other)

    # ---- arguments --------------------------------------------------------------------------

    @property
    def args(self) -> tuple:
        """The tuple of arguments to this ``Node``."""
        return self._args

    @args.setter
    def args(self, a: tuple) -> None:
        self._update_args_kwargs(a, self._kwargs)

    @property
    def kwargs(self) -> dict:
        """The dict of keyword arguments to this ``Node``."""
        return self._kwargs

    @kwargs.setter
    def kwargs(self, k: dict) -> None:
        self._update_args_kwargs(self._args, k)

    @property
    def all_input_nodes(self) -> list[Node]:
        """All Nodes that are inputs to this Node, in the order they appear in args/kwargs."""
        return list(self._input_nodes)

    def update_arg(self, idx: int, arg: Any) -> None:
        """Update an existing positional argument to contain the new value ``arg``."""
        args = list(self.args)
        args[idx] = arg
        self.args = tuple(args)

    def insert_arg(self, idx: int, arg: Any) -> None:
        """Insert a positional argument to the argument list with given index."""
        if not 0 <= idx <= len(self.args):
            raise AssertionError("insert_args index must be between 0 and len(self.args)")
        self.args = self.args[:idx] + (arg,) + self.args[idx:]

    def update_kwarg(self, key: str, arg: Any) -> None:
        """Update an existing keyword argument to contain the new value ``arg``."""
        self.kwargs = {**self.kwargs, key: arg}

    def _update_args_kwargs(self, new_args: Any, new_kwargs: Any) -> None:
        for old in self._input_nodes:
            old.users.pop(self)
        self._input_nodes = {}

        def collect(n: Node) -> Node:
            self._input_nodes.setdefault(n)
            return n

        self._args = map_arg(new_args, collect)
        self._kwargs = map_arg(new_kwargs, collect)
        for new in self._input_nodes:
            new.users.setdefault(self)

    @property
    def stack_trace(self) -> str | None:
        """The Python stack trace recorded during tracing, if any."""
        return self.meta.get("stack_trace")

    @stack_trace.setter
    def stack_trace(self, trace: str | None) -> None:
        self.meta["stack_trace"] = trace

    # ---- rewriting uses ---------------------------------------------------------------------

    def replace_all_uses_with(self, replace_with: Node,
                              delete_user_cb: Callable[[Node], bool] = lambda user: True, *,
                              propagate_meta: bool = False) -> list[Node]:
        """Replace all uses of ``self`` in the Graph with the Node ``replace_with``."""
        if propagate_meta:
            if replace_with.meta:
                raise AssertionError("Called node.replace_all_uses_with(replace_with, "
                                     "propagate_meta=True), but replace_with already has "
                                     ".meta keys")
            replace_with.meta.update(self.meta)
        users = list(self.users)
        replaced = []
        for user in users:
            if not delete_user_cb(user):
                continue
            user._update_args_kwargs(
                map_arg(user.args, lambda n: replace_with if n is self else n),
                map_arg(user.kwargs, lambda n: replace_with if n is self else n))
            replaced.append(user)
        return replaced

    def replace_input_with(self, old_input: Node, new_input: Node) -> None:
        """Loop through input nodes of ``self``, and replace all instances of ``old_input``
        with ``new_input``."""
        def swap(n: Node) -> Node:
            return new_input if n is old_input else n

        self._update_args_kwargs(map_arg(self.args, swap), map_arg(self.kwargs, swap))

    def is_impure(self, impure_random: bool = True) -> bool:
        """Returns whether this op is impure, i.e. if its op is a placeholder or output, or if a
        call_function or call_module which is impure."""
        if self.op in ("placeholder", "output"):
            return True
        if self.op == "call_module":
            owner = self.graph.owning_module
            if owner is None:
                raise AssertionError("self.graph.owning_module not set for purity check")
            return getattr(owner.get_submodule(self.target), "_is_impure", False)
        if self.op == "call_function":
            if self.target in _side_effectful_functions:
                return True
            name = getattr(self.target, "__name__", "")
            if name.endswith("_") and not name.endswith("__") and _is_from_torch(self.target):
                return True  # an in-place function writes its input
            return impure_random and name in _RANDOM and _is_from_torch(self.target)
        return False

    # ---- printing ---------------------------------------------------------------------------

    def format_node(self, placeholder_names: list[str] | None = None,
                    maybe_return_typename: list[str] | None = None, **kwargs: Any) -> str | None:
        """Return a descriptive string representation of ``self``."""
        typename = f"{_type_repr(self.type)} " if self.type is not None else ""
        if self.op == "placeholder":
            if placeholder_names:
                arg = self.target + (f": {_type_repr(self.type)}" if self.type else "")
                placeholder_names.append(arg)
                return None
            default = f"(default={self.args[0]})" if self.args else ""
            return (f"%{self.name} : {typename}[num_users={len(self.users)}] = "
                    f"{self.op}[target={self.target}]{default}")
        if self.op == "get_attr":
            return (f"%{self.name} : {typename}[num_users={len(self.users)}] = "
                    f"{self.op}[target={_pretty_print_target(self.target)}]")
        if self.op == "output":
            if self.type is not None and maybe_return_typename:
                maybe_return_typename[0] = f" -> {_type_repr(self.type)}"
            return f"return {self.args[0]}"
        return (f"%{self.name} : {typename}[num_users={len(self.users)}] = "
                f"{self.op}[target={_pretty_print_target(self.target)}]"
                f"(args = {_format_arg(self.args)}, kwargs = {_format_arg(self.kwargs)})")

    def __repr__(self) -> str:
        return self.name
