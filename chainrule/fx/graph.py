"""``torch.fx.graph``: the Graph (a list of Nodes) and the code generated from it."""

from __future__ import annotations

import builtins
import copy
import inspect
import keyword
import math
import re
import sys
import types
import typing
import warnings
from collections import defaultdict
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

from .node import (
    Node,
    _get_qualified_name,
    _is_from_torch,
    _target_name,
    _type_repr,
    map_aggregate,
    map_arg,
)

__all__ = ["PythonCode", "CodeGen", "Graph"]

_ILLEGAL_CHARS = re.compile("[^0-9a-zA-Z_]+")
_NAME_SUFFIX = re.compile(r"(.*)_(\d+)$")
_CAMEL = re.compile(r"(?<=[a-z])([A-Z])")

# Operators printed as Python syntax in generated code (target name -> format).
_REFLECTABLE = {
    "add": "{} + {}", "sub": "{} - {}", "mul": "{} * {}", "floordiv": "{} // {}",
    "truediv": "{} / {}", "div": "{} / {}", "mod": "{} % {}", "pow": "{} ** {}",
    "lshift": "{} << {}", "rshift": "{} >> {}", "and_": "{} & {}", "or_": "{} | {}",
    "xor": "{} ^ {}", "getitem": "{}[{}]", "matmul": "{} @ {}"}
_MAGIC = {"eq": "{} == {}", "ne": "{} != {}", "lt": "{} < {}", "gt": "{} > {}",
          "le": "{} <= {}", "ge": "{} >= {}", "pos": "+{}", "neg": "-{}", "invert": "~{}",
          **_REFLECTABLE}
_INPLACE = {"iadd": "{} += {}", "iand": "{} &= {}", "ifloordiv": "{} //= {}",
            "ilshift": "{} <<= {}", "imod": "{} %= {}", "imul": "{} *= {}",
            "imatmul": "{} @= {}", "ior": "{} |= {}", "ipow": "{} **= {}",
            "irshift": "{} >>= {}", "isub": "{} -= {}", "itruediv": "{} /= {}",
            "ixor": "{} ^= {}", "setitem": "{}[{}] = {}"}

# dtype -> its short name in readable code's shape annotations ("f32[2, 3]").
_DTYPE_ABBRS = {
    "bfloat16": "bf16", "float64": "f64", "float32": "f32", "float16": "f16",
    "float8_e4m3fn": "f8e4m3fn", "float8_e5m2": "f8e5m2", "float8_e4m3fnuz": "f8e4m3fnuz",
    "float8_e5m2fnuz": "f8e5m2fnuz", "complex32": "c32", "complex64": "c64",
    "complex128": "c128", "int8": "i8", "int16": "i16", "int32": "i32", "int64": "i64",
    "bool": "b8", "uint8": "u8", "uint16": "u16", "uint32": "u32", "uint64": "u64"}


# typing's aliases stand for the builtin origins of pre-PEP 585 generics (typing.List[int])
_TYPING_ORIGINS = {list: typing.List, dict: typing.Dict, set: typing.Set,  # noqa: UP006
                   frozenset: typing.FrozenSet, tuple: typing.Tuple}  # noqa: UP006


def _snake_case(s: str) -> str:
    return _CAMEL.sub(r"_\1", s).lower()


def _root_module():
    return sys.modules[__name__.partition(".")[0]]


def _custom_builtins() -> dict[str, Any]:
    """Names every generated function can use (PyTorch's: inf, nan, NoneType, torch, device)."""
    root = _root_module()
    return {"inf": math.inf, "nan": math.nan, "NoneType": type(None), "torch": root,
            "device": root.device}


class _Namespace:
    """Names unique in one scope: a candidate gets ``_1``, ``_2``... when taken or reserved."""

    def __init__(self) -> None:
        self._obj_to_name: dict[Any, str] = {}
        self._used_names: set[str] = set()
        self._base_count: dict[str, int] = defaultdict(int)

    def create_name(self, candidate: str, obj: Any | None) -> str:
        if obj is not None and obj in self._obj_to_name:
            return self._obj_to_name[obj]
        candidate = _ILLEGAL_CHARS.sub("_", candidate) or "_unnamed"
        if candidate[0].isdigit():
            candidate = f"_{candidate}"
        match = _NAME_SUFFIX.match(candidate)
        if match is None:
            base, num = candidate, None
        else:
            base, num = match.group(1), int(match.group(2))
        candidate = base if num is None else f"{base}_{num}"
        if not num:
            num = self._base_count[base]
        while candidate in self._used_names or self._is_illegal_name(candidate, obj):
            num += 1
            candidate = f"{base}_{num}"
        self._used_names.add(candidate)
        self._base_count[base] = num
        if obj is not None:
            self._obj_to_name[obj] = candidate
        return candidate

    def associate_name_with_obj(self, name: str, obj: Any) -> None:
        self._obj_to_name[obj] = name

    @staticmethod
    def _is_illegal_name(name: str, obj: Any) -> bool:
        if name in keyword.kwlist:
            return True
        if name in builtins.__dict__:
            return obj is not builtins.__dict__[name]
        if name in ("inf", "nan", "NoneType", "torch", "device"):
            return True
        return False


@dataclass
class PythonCode:
    """The Python source of a generated function, and the globals it runs with."""

    src: str
    globals: dict[str, Any]
    _lineno_map: dict[int, int | None] | None = field(default=None)


class _InsertPoint:
    def __init__(self, graph: Graph, new_insert: Callable[[Node], None]) -> None:
        self.graph = graph
        self.orig_insert, graph._insert = graph._insert, new_insert

    def __enter__(self) -> None:
        pass

    def __exit__(self, *exc: Any) -> None:
        self.graph._insert = self.orig_insert


class _node_list:  # noqa: N801  (PyTorch's name)
    """A live view of a graph's nodes in order (or reversed)."""

    def __init__(self, graph: Graph, direction: str = "_next") -> None:
        self.graph = graph
        self.direction = direction

    def __len__(self) -> int:
        return self.graph._len

    def __iter__(self) -> Iterator[Node]:
        root = self.graph._root
        cur = getattr(root, self.direction)
        while cur is not root:
            if not cur._erased:
                yield cur
            cur = getattr(cur, self.direction)

    def __reversed__(self) -> Iterator[Node]:
        return iter(_node_list(self.graph, "_prev" if self.direction == "_next" else "_next"))


def _format_target(base: str, target: str) -> str:
    """``self.seq`` + ``0`` -> ``getattr(self.seq, "0")``."""
    result = base
    for atom in target.split("."):
        result = f"{result}.{atom}" if atom.isidentifier() else f'getattr({result}, "{atom}")'
    return result


class CodeGen:
    """Turns a Graph into the Python source of a function (``forward``)."""

    def __init__(self) -> None:
        self._body_transformer = None
        self._func_name = "forward"

    def gen_fn_def(self, free_vars: list[str], maybe_return_annotation: str) -> str:
        """The ``def`` line of the generated function."""
        if not free_vars or free_vars[0] != "self":
            free_vars.insert(0, "self")
        return f"def {self._func_name}({', '.join(free_vars)}){maybe_return_annotation}:"

    def generate_output(self, output_args: Any) -> str:
        """The ``return`` statement of the generated function."""
        return f"return {_get_repr(output_args)}"

    def process_inputs(self, *args: Any) -> Any:
        """The inputs as the generated function takes them (unchanged here)."""
        return args

    def process_outputs(self, outputs: Any) -> Any:
        """The outputs as the generated function returns them (unchanged here)."""
        return outputs

    def additional_globals(self) -> list[tuple[str, Any]]:
        """Extra (name, value) globals of the generated code."""
        return []

    def _gen_python_code(self, nodes: Any, root_module: str, namespace: _Namespace, *,
                         verbose: bool = False, include_stride: bool = False,
                         include_device: bool = False) -> PythonCode:
        free_vars: list[str] = []
        body: list[str] = []
        globals_: dict[str, Any] = dict(_custom_builtins())
        wrapped_fns: dict[str, None] = {}
        return_annotation = [""]

        def add_global(name_hint: str, obj: Any) -> str:
            if _is_from_torch(obj):
                return _get_qualified_name(obj)
            for name, value in globals_.items():
                if value is obj:
                    return name
            name = namespace.create_name(name_hint, obj)
            globals_[name] = obj
            return name

        def type_repr(o: Any) -> str:
            if o == ():
                return "()"
            if isinstance(o, types.UnionType):  # X | None
                return "|".join(type_repr(a) for a in o.__args__)
            origin = getattr(o, "__origin__", None)
            if origin is not None:
                if isinstance(o, typing._GenericAlias):  # typing.List[int]: List, not list
                    origin = _TYPING_ORIGINS.get(origin, origin)
                name = add_global(_type_repr(origin), origin)
                args = getattr(o, "__args__", None)
                return f"{name}[{','.join(type_repr(a) for a in args)}]" if args else name
            return add_global(_type_repr(o), o)

        # the last node reading each value: that value is deleted after it (eager's memory)
        last_use: dict[Node, Node] = {}
        to_delete: dict[Node, list[Node]] = {}
        for node in reversed(nodes):
            for used in node._input_nodes:
                if used not in last_use:
                    last_use[used] = node
                    to_delete.setdefault(node, []).append(used)

        def annotation(node: Node) -> str:
            if verbose:
                meta = node.meta.get("val", node.meta.get("tensor_meta"))
                if meta is not None and hasattr(meta, "shape") and hasattr(meta, "dtype"):
                    shape = "[" + ", ".join(str(s) for s in meta.shape) + "]"
                    text = _DTYPE_ABBRS.get(str(meta.dtype).rpartition(".")[2], "") + shape
                    if include_stride and callable(getattr(meta, "stride", None)):
                        text += "[" + ", ".join(str(s) for s in meta.stride()) + "]"
                    elif include_stride and getattr(meta, "stride", None) is not None:
                        text += "[" + ", ".join(str(s) for s in meta.stride) + "]"
                    if include_device and getattr(meta, "device", None) is not None:
                        text += str(meta.device)
                    return f': "{text}"'
            return "" if node.type is None else f" : {type_repr(node.type)}"

        def emit(node: Node) -> None:
            ann = annotation(node)
            if node.op == "placeholder":
                default = f" = {_get_repr(node.args[0])}" if node.args else ""
                free_vars.append(f"{node.target}{ann}{default}")
                raw_name = node.target.replace("*", "")
                if raw_name != node.name:
                    body.append(f"{node.name} = {raw_name}\n")
                return
            if node.op == "call_method":
                method = _format_target(_get_repr(node.args[0]), node.target)
                body.append(f"{node.name}{ann} = {method}"
                            f"({_format_args(node.args[1:], node.kwargs)})")
                return
            if node.op == "call_function":
                name = getattr(node.target, "__name__", "")
                if getattr(node.target, "__module__", "") == "_operator" and name in _MAGIC:
                    body.append(f"{node.name}{ann} = "
                                + _MAGIC[name].format(*(_get_repr(a) for a in node.args)))
                    return
                if getattr(node.target, "__module__", "") == "_operator" and name in _INPLACE:
                    body.append(_INPLACE[name].format(*(_get_repr(a) for a in node.args))
                                + f";  {node.name}{ann} = {_get_repr(node.args[0])}")
                    return
                global_name = add_global(_get_qualified_name(node.target), node.target)
                if global_name == "getattr" and len(node.args) == 2 \
                        and isinstance(node.args[1], str) and node.args[1].isidentifier():
                    body.append(f"{node.name}{ann} = "
                                f"{_format_target(_get_repr(node.args[0]), node.args[1])}")
                    return
                body.append(f"{node.name}{ann} = "
                            f"{global_name}({_format_args(node.args, node.kwargs)})")
                if node.meta.get("is_wrapped", False):
                    wrapped_fns.setdefault(global_name)
                return
            if node.op == "call_module":
                body.append(f"{node.name}{ann} = {_format_target(root_module, node.target)}"
                            f"({_format_args(node.args, node.kwargs)})")
                return
            if node.op == "get_attr":
                body.append(f"{node.name}{ann} = {_format_target(root_module, node.target)}")
                return
            if node.op == "output":
                if node.type is not None:
                    return_annotation[0] = f" -> {type_repr(node.type)}"
                body.append(self.generate_output(node.args[0]))
                return
            raise NotImplementedError(f"node: {node.op} {node.target}")

        def delete_unused_values(node: Node) -> None:
            if node.op == "placeholder":
                return
            if node.op == "output":
                body.append("\n")
                return
            dead = list(to_delete.get(node, []))
            if not node.users:
                dead.append(node)
            if dead:
                body.append(";  " + " = ".join([n.name for n in dead] + ["None"]) + "\n")
            else:
                body.append("\n")

        summary = None
        for node in nodes:
            if verbose and node.op not in ("placeholder", "output"):
                text = "\n# No stacktrace found for following nodes\n"
                if node.stack_trace:
                    text = "\n# " + node.stack_trace.strip().splitlines()[-1].strip() + "\n"
                if text != summary:
                    summary = text
                    body.append(text)
            emit(node)
            delete_unused_values(node)
        if not body:
            body.append("pass\n")
        wrap_stmts = ""
        if wrapped_fns:
            wrap_name = add_global("wrap", _root_module().fx.wrap)
            wrap_stmts = "\n".join(f'{wrap_name}("{name}")' for name in wrapped_fns)
        if self._body_transformer is not None:
            body = self._body_transformer(body)
        for name, value in self.additional_globals():
            add_global(name, value)
        prologue = self.gen_fn_def(free_vars, return_annotation[0])
        code = "".join(body).lstrip("\n")
        code = "\n".join("    " + line for line in code.split("\n"))
        return PythonCode(f"\n{wrap_stmts}\n\n{prologue}\n{code}", globals_)


def _get_repr(arg: Any) -> str:
    """An argument as generated code spells it (nodes by name)."""
    if isinstance(arg, Node):
        return arg.name
    if isinstance(arg, tuple) and hasattr(arg, "_fields"):
        return f"{type(arg).__name__}{_get_repr(tuple(arg))}"
    if isinstance(arg, tuple):
        if len(arg) == 1:
            return f"({_get_repr(arg[0])},)"
        return "(" + ", ".join(_get_repr(a) for a in arg) + ")"
    if isinstance(arg, list):
        return "[" + ", ".join(_get_repr(a) for a in arg) + "]"
    if isinstance(arg, slice):
        return f"slice({_get_repr(arg.start)}, {_get_repr(arg.stop)}, {_get_repr(arg.step)})"
    if isinstance(arg, _root_module().Tensor):
        return f"torch.Tensor(size={list(arg.size())}, dtype={str(arg.dtype).split('.')[-1]})"
    return repr(arg)


def _format_args(args: tuple, kwargs: dict) -> str:
    parts = [_get_repr(a) for a in args] + [f"{k} = {_get_repr(v)}" for k, v in kwargs.items()]
    return ", ".join(parts)


class Graph:
    """The data structure of fx: a list of Nodes (placeholders, operations, one output)."""

    def __init__(self, owning_module: Any = None, tracer_cls: type | None = None,
                 tracer_extras: dict[str, Any] | None = None) -> None:
        self._root = Node(self, "", "root", "", (), {})
        self._used_names: dict[str, int] = {}
        self._insert = self._root.prepend
        self._len = 0
        self._graph_namespace = _Namespace()
        self._owning_module = owning_module
        self._tracer_cls = tracer_cls
        self._tracer_extras = tracer_extras
        self._codegen = CodeGen()

    @property
    def owning_module(self) -> Any:
        """The GraphModule this graph belongs to, if any."""
        return self._owning_module

    @owning_module.setter
    def owning_module(self, mod: Any) -> None:
        self._owning_module = mod

    @property
    def nodes(self) -> _node_list:
        """The nodes of this Graph, in order (a live view)."""
        return _node_list(self)

    def _position(self, node: Node) -> int:
        for i, n in enumerate(self.nodes):
            if n is node:
                return i
        raise RuntimeError(f"Node {node} is not in the graph")

    def find_nodes(self, *, op: str, target: Any = None, sort: bool = True) -> list[Node]:
        """The nodes with this op (and target, when given)."""
        return [n for n in self.nodes
                if n.op == op and (target is None or n.target == target)]

    # ---- making nodes ---------------------------------------------------------------------------

    def create_node(self, op: str, target: Any, args: tuple | None = None,
                    kwargs: dict | None = None, name: str | None = None,
                    type_expr: Any = None) -> Node:
        """Create a ``Node`` and add it to the ``Graph`` at the current insert-point."""
        args = () if args is None else args
        kwargs = {} if kwargs is None else kwargs
        if not isinstance(args, tuple):
            raise AssertionError("args must be a tuple")
        if not isinstance(kwargs, dict):
            raise AssertionError("kwargs must be a dict")
        candidate = name if name is not None else self._target_to_str(target)
        name = self._graph_namespace.create_name(candidate, None)
        node = Node(self, name, op, target, args, kwargs, type_expr)
        self._graph_namespace.associate_name_with_obj(name, node)
        self._insert(node)
        self._len += 1
        return node

    @staticmethod
    def _target_to_str(target: Any) -> str:
        op = _target_name(target) if callable(target) else target
        if op.startswith("__") and op.endswith("__"):
            op = op[2:-2]
        return _snake_case(op)

    def placeholder(self, name: str, type_expr: Any = None,
                    default_value: Any = inspect.Signature.empty) -> Node:
        """Insert a ``placeholder`` node into the Graph (an input of the function)."""
        args = () if default_value is inspect.Signature.empty else (default_value,)
        return self.create_node("placeholder", name, args=args, type_expr=type_expr)

    def get_attr(self, qualified_name: str, type_expr: Any = None) -> Node:
        """Insert a ``get_attr`` node into the Graph (a parameter, buffer or attribute)."""
        return self.create_node("get_attr", qualified_name, type_expr=type_expr)

    def call_module(self, module_name: str, args: tuple | None = None,
                    kwargs: dict | None = None, type_expr: Any = None) -> Node:
        """Insert a ``call_module`` node into the Graph."""
        return self.create_node("call_module", module_name, args, kwargs, type_expr=type_expr)

    def call_method(self, method_name: str, args: tuple | None = None,
                    kwargs: dict | None = None, type_expr: Any = None) -> Node:
        """Insert a ``call_method`` node into the Graph."""
        return self.create_node("call_method", method_name, args, kwargs, type_expr=type_expr)

    def call_function(self, the_function: Callable, args: tuple | None = None,
                      kwargs: dict | None = None, type_expr: Any = None,
                      name: str | None = None) -> Node:
        """Insert a ``call_function`` node into the Graph."""
        return self.create_node("call_function", the_function, args, kwargs, name=name,
                                type_expr=type_expr)

    def output(self, result: Any, type_expr: Any = None) -> Node:
        """Insert an ``output`` node into the Graph (the ``return`` of the function)."""
        return self.create_node("output", "output", (result,), type_expr=type_expr)

    def node_copy(self, node: Node, arg_transform: Callable[[Node], Any] = lambda x: x) -> Node:
        """Copy a node from one graph into another."""
        args = map_arg(node.args, arg_transform)
        kwargs = map_arg(node.kwargs, arg_transform)
        result = self.create_node(node.op, node.target, args, kwargs, node.name, node.type)
        result.meta = copy.copy(node.meta)
        return result

    def graph_copy(self, g: Graph, val_map: dict[Node, Node],
                   return_output_node: bool = False) -> Any:
        """Copy all nodes from a given graph into ``self``; returns the copied output value."""
        for node in g.nodes:
            if node in val_map:
                continue
            if node.op == "output":
                value = map_arg(node.args[0], lambda n: val_map[n])
                return (value, node) if return_output_node else value
            val_map[node] = self.node_copy(node, lambda n: val_map[n])
        return None

    def __deepcopy__(self, memo: dict | None = None) -> Graph:
        memo = memo if memo is not None else {}
        g = Graph(tracer_cls=self._tracer_cls)
        copied = g.graph_copy(self, val_map=memo, return_output_node=True)
        g._codegen = copy.deepcopy(self._codegen)
        if copied is not None:
            value, old_output = copied
            new_output = g.output(value, type_expr=old_output.type)
            new_output.meta = copy.copy(old_output.meta)
        return g

    def __getstate__(self) -> dict[str, Any]:
        nodes = list(self.nodes)
        index = {n: i for i, n in enumerate(nodes)}

        def ref(n: Node) -> _NodeRef:
            return _NodeRef(index[n])

        state = {k: v for k, v in self.__dict__.items()
                 if k not in ("_root", "_insert", "_len", "_graph_namespace", "_owning_module")}
        state["_nodes"] = [(n.op, n.name, n.target, map_arg(n.args, ref),
                            map_arg(n.kwargs, ref), n.type, n.meta) for n in nodes]
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        specs = state.pop("_nodes")
        Graph.__init__(self)
        self.__dict__.update(state)
        made: list[Node] = []

        def resolve(a: Any) -> Any:
            return map_aggregate(a, lambda x: made[x.index] if isinstance(x, _NodeRef) else x)

        for op, name, target, args, kwargs, type_expr, meta in specs:
            node = self.create_node(op, target, resolve(args), resolve(kwargs), name, type_expr)
            node.meta = meta
            made.append(node)

    def erase_node(self, to_erase: Node) -> None:
        """Erases a ``Node`` from the ``Graph``; it must have no users."""
        if to_erase.users:
            raise RuntimeError(f"Tried to erase Node {to_erase} but it still had "
                               f"{len(to_erase.users)} users in the graph: {to_erase.users}!")
        if to_erase.graph is not self:
            raise RuntimeError(f"Attempting to remove {to_erase} from wrong graph!")
        if to_erase._erased:
            warnings.warn(f"erase_node({to_erase}) on an already erased node", stacklevel=2)
            return
        to_erase._remove_from_list()
        to_erase._erased = True
        self._len -= 1
        to_erase._update_args_kwargs(map_arg(to_erase._args, lambda n: None),
                                     map_arg(to_erase._kwargs, lambda n: None))

    def inserting_before(self, n: Node | None = None) -> _InsertPoint:
        """Set the point at which create_node and companion methods will insert into the graph
        (before ``n``; at the beginning when ``n`` is None)."""
        if n is None:
            return self.inserting_after(self._root)
        if n.graph is not self:
            raise AssertionError("Node to insert before is not in graph.")
        return _InsertPoint(self, n.prepend)

    def inserting_after(self, n: Node | None = None) -> _InsertPoint:
        """Set the point at which create_node and companion methods will insert into the graph
        (after ``n``; at the end when ``n`` is None)."""
        if n is None:
            return self.inserting_before(self._root)
        if n.graph is not self:
            raise AssertionError("Node to insert after is not in graph.")
        return _InsertPoint(self, n.append)

    # ---- passes and checks ----------------------------------------------------------------------

    def eliminate_dead_code(self, is_impure_node: Callable[[Node], bool] | None = None) -> bool:
        """Remove all dead code from the graph; True if the graph changed."""
        self.lint()
        changed = False
        for node in reversed(self.nodes):
            impure = is_impure_node(node) if is_impure_node is not None else node.is_impure()
            if not impure and not node.users:
                self.erase_node(node)
                changed = True
        return changed

    def lint(self) -> None:
        """Runs various checks on this Graph to make sure it is well-formed."""
        seen_names: set[str] = set()
        seen_values: set[Node] = set()
        for node in self.nodes:
            if node.op not in ("placeholder", "call_method", "call_module", "call_function",
                               "get_attr", "output"):
                raise RuntimeError(f"Node {node} had unknown opcode {node.op}!")
            if node.graph is not self:
                raise RuntimeError(f"Node '{node}' does not belong to this Graph!")
            for arg in node._input_nodes:
                if arg.graph is not self:
                    raise RuntimeError(f"Argument '{arg}' of Node '{node}' does not belong to "
                                       "this Graph, but was used as an argument! If you are "
                                       "copying nodes from another graph, make sure to use "
                                       "``arg_transform`` on node_copy() to remap values\n"
                                       f"{self}")
                if arg not in seen_values:
                    raise RuntimeError(f"Argument '{arg}' of Node '{node}' was used before it "
                                       "has been defined! Please check that Nodes in the graph "
                                       "are topologically ordered\n"
                                       f"{self}")
            if node.name in seen_names:
                raise RuntimeError(f"Node redefined name {node.name}!")
            seen_names.add(node.name)
            seen_values.add(node)
        if self.owning_module is not None:
            for node in self.nodes:
                if node.op in ("get_attr", "call_module"):
                    module = self.owning_module
                    for i, atom in enumerate(node.target.split(".")):
                        if not hasattr(module, atom):
                            seen_qualname = ".".join(node.target.split(".")[:i])
                            raise RuntimeError(f"Node {node} target {node.target} references "
                                               f"nonexistent attribute {atom} of "
                                               f"{seen_qualname}")
                        module = getattr(module, atom)
                    if node.op == "call_module" and not isinstance(module, _nn_module()):
                        raise RuntimeError(f"Node {node} target {node.target} {atom} of "
                                           f"{'.'.join(node.target.split('.')[:-1])} does not "
                                           "reference an nn.Module")

    # ---- code and printing ----------------------------------------------------------------------

    def python_code(self, root_module: str, *, verbose: bool = False,
                    include_stride: bool = False, include_device: bool = False,
                    colored: bool = False, expanded_def: bool = False,
                    record_func: bool = False, additional_meta: list[str] | None = None
                    ) -> PythonCode:
        """Turn this ``Graph`` into valid Python code."""
        namespace = _Namespace()
        for node in self.nodes:
            namespace.create_name(node.name, node)
        return self._codegen._gen_python_code(list(self.nodes), root_module, namespace,
                                              verbose=verbose, include_stride=include_stride,
                                              include_device=include_device)

    def set_codegen(self, codegen: CodeGen) -> None:
        """Use ``codegen`` to generate this graph's code."""
        self._codegen = codegen

    @contextmanager
    def on_generate_code(self, make_transformer: Callable) -> Iterator[None]:
        """Register a transformer of the generated code's body lines while in the context."""
        previous = self._codegen._body_transformer
        self._codegen._body_transformer = make_transformer(previous)
        try:
            yield
        finally:
            self._codegen._body_transformer = previous

    def process_inputs(self, *args: Any) -> Any:
        """The inputs as the generated function takes them."""
        return self._codegen.process_inputs(*args)

    def process_outputs(self, out: Any) -> Any:
        """The outputs as the generated function returns them."""
        return self._codegen.process_outputs(out)

    def __str__(self) -> str:
        placeholder_names: list[str] = []
        return_typename = [""]
        lines = [node.format_node(placeholder_names) for node in self.nodes]
        text = f"graph({', '.join(placeholder_names)}){return_typename[0]}:"
        for line in lines:
            if line:
                text += "\n    " + line
        return text

    def print_tabular(self) -> None:
        """Prints the intermediate representation of the graph in tabular format (needs the
        ``tabulate`` library, as PyTorch's)."""
        try:
            from tabulate import tabulate
        except ImportError:
            print("`print_tabular` relies on the library `tabulate`, which could not be found on "
                  "this machine. Run `pip install tabulate` to install the library.")
            raise
        rows = [[n.op, n.name, n.target, n.args, n.kwargs] for n in self.nodes]
        print(tabulate(rows, headers=["opcode", "name", "target", "args", "kwargs"]))


class _NodeRef:
    """A node of a pickled graph, by its position."""

    __slots__ = ("index",)

    def __init__(self, index: int) -> None:
        self.index = index

    def __reduce__(self) -> tuple:
        return (_NodeRef, (self.index,))


def _nn_module() -> type:
    return _root_module().nn.Module
