"""Pytrees as torch.utils._pytree has them: a registry of node types (tuples, lists, dicts,
OrderedDict, defaultdict, deque, namedtuples, torch.return_types, Size, and what
``torch.utils._pytree.register_pytree_node`` adds); everything else (None included) is a leaf.
Specs compare and print as PyTorch's, so error messages that show a structure read the same.
torch.func's transforms and ``chainrule.utils._pytree`` share this registry."""

from __future__ import annotations

import threading
import warnings
from collections import OrderedDict, defaultdict, deque, namedtuple
from collections.abc import Callable, Iterable
from typing import Any, NamedTuple

from .. import return_types
from .._batched import BatchedTensor
from ..tensor import Size, Tensor

__all__ = ["tree_flatten", "tree_unflatten", "tree_map", "broadcast_prefix", "treespec_pprint",
           "TreeSpec", "LeafSpec", "LEAF", "SUPPORTED_NODES", "NodeDef", "tree_is_leaf"]


class NodeDef(NamedTuple):
    """How a node type flattens (to children and a context) and is rebuilt from them."""

    type: Any
    flatten_fn: Callable
    unflatten_fn: Callable
    flatten_with_keys_fn: Callable | None


_NODE_REGISTRY_LOCK = threading.RLock()
SUPPORTED_NODES: dict[Any, NodeDef] = {}


def _register(cls, flatten_fn: Callable, unflatten_fn: Callable,
              flatten_with_keys_fn: Callable | None = None) -> None:
    with _NODE_REGISTRY_LOCK:
        SUPPORTED_NODES[cls] = NodeDef(cls, flatten_fn, unflatten_fn, flatten_with_keys_fn)


def is_namedtuple_class(cls) -> bool:
    """Whether ``cls`` is a namedtuple class (a tuple with ``_fields``, ``_make``, ``_asdict``)."""
    return (isinstance(cls, type) and issubclass(cls, tuple)
            and isinstance(getattr(cls, "_fields", None), tuple)
            and all(type(field) is str for field in cls._fields)
            and callable(getattr(cls, "_make", None))
            and callable(getattr(cls, "_asdict", None)))


_register(tuple, lambda d: (list(d), None), lambda values, context: tuple(values))
_register(list, lambda d: (d, None), lambda values, context: list(values))
_register(dict, lambda d: (list(d.values()), list(d)),
          lambda values, context: dict(zip(context, values)))
_register(namedtuple, lambda d: (list(d), type(d)), lambda values, context: context(*values))
_register(OrderedDict, lambda d: (list(d.values()), list(d)),
          lambda values, context: OrderedDict(zip(context, values)))
_register(defaultdict, lambda d: (list(d.values()), [d.default_factory, list(d)]),
          lambda values, context: defaultdict(context[0], zip(context[1], values)))
_register(deque, lambda d: (list(d), d.maxlen),
          lambda values, context: deque(values, maxlen=context))
# PyTorch rebuilds a Size as a plain tuple (torch.fx registers it so)
_register(Size, lambda d: (list(d), None), lambda values, context: tuple(values))


def _structseq_node(cls) -> NodeDef:
    """A torch.return_types class flattens to its fields (registered on first sight)."""
    _register(cls, lambda d: (list(d), None), lambda values, context: cls(values))
    return SUPPORTED_NODES[cls]


def _node_type(tree) -> Any:
    kind = type(tree)
    return namedtuple if is_namedtuple_class(kind) else kind


def _node_def(tree) -> NodeDef | None:
    kind = type(tree)
    # (only a subclass of tuple can be a namedtuple: _node_type without its checks for others)
    node = SUPPORTED_NODES.get(kind if kind is tuple or not issubclass(kind, tuple)
                               else _node_type(tree))
    if node is None and return_types.is_pytree_node(kind):
        node = _structseq_node(kind)
    return node


def tree_is_leaf(tree, is_leaf: Callable | None = None) -> bool:
    """Whether ``tree`` is a leaf: not a registered node type, or ``is_leaf(tree)``."""
    if is_leaf is not None and is_leaf(tree):
        return True
    return _node_def(tree) is None


class TreeSpec:
    """The structure of a pytree: the node type, its context (keys, namedtuple class) and the
    children's specs; a leaf's spec is ``LEAF``."""

    __slots__ = ("type", "_context", "_children", "num_nodes", "num_leaves", "num_children")

    def __init__(self, type: Any, context: Any, children_specs: list) -> None:  # noqa: A002
        self.type = type
        self._context = context
        self._children = list(children_specs)
        if type is None:
            if context is not None:
                raise AssertionError("leaf node should not have a context")
            if self._children:
                raise AssertionError("leaf node should not have children")
            self.num_nodes = self.num_leaves = 1
        else:
            nodes, leaves = 1, 0
            for c in self._children:
                nodes += c.num_nodes
                leaves += c.num_leaves
            self.num_nodes, self.num_leaves = nodes, leaves
        self.num_children = len(self._children)

    @property
    def context(self) -> Any:
        return self._context

    @property
    def children_specs(self) -> list:
        warnings.warn("`treespec.children_specs` is deprecated. Use `treespec.child(index)` to "
                      "access a single child, or `treespec.children()` to get all children.",
                      FutureWarning, stacklevel=2)
        return self._children

    def is_leaf(self) -> bool:
        """Whether this spec is a leaf's."""
        return self.num_nodes == 1 and self.num_leaves == 1

    def children(self) -> list:
        """The children's specs."""
        return list(self._children)

    def child(self, index: int) -> TreeSpec:
        """The spec of child ``index``."""
        return self._children[index]

    def flatten_up_to(self, tree) -> list:
        """The subtrees of ``tree`` at this spec's leaves (``tree`` must have this structure
        down to them; dicts of the standard kinds match by keys)."""
        subtrees: list = []
        self._flatten_up_to(tree, subtrees)
        return subtrees

    def _flatten_up_to(self, node, subtrees: list) -> None:
        if self.is_leaf():
            subtrees.append(node)
            return
        kind = _node_type(node)
        node_def = _node_def(node)
        if self.type not in _BUILTIN_TYPES:
            if kind != self.type:
                raise ValueError(f"Type mismatch; expected {self.type!r}, but got {kind!r}.")
            children, context = node_def.flatten_fn(node)
            if len(children) != self.num_children:
                raise ValueError(f"Node arity mismatch; expected {self.num_children}, but got "
                                 f"{len(children)}.")
            if context != self._context:
                raise ValueError(f"Node context mismatch for custom node type {self.type!r}.")
        else:
            both_dicts = self.type in _DICT_TYPES and kind in _DICT_TYPES
            if not both_dicts and kind != self.type:
                raise ValueError(f"Node type mismatch; expected {self.type!r}, but got "
                                 f"{kind!r}.")
            if len(node) != self.num_children:
                raise ValueError(f"Node arity mismatch; expected {self.num_children}, but got "
                                 f"{len(node)}.")
            if both_dicts:
                keys = self._context if self.type is not defaultdict else self._context[1]
                got, expected = set(node), set(keys)
                if got != expected:
                    message = ""
                    if expected - got:
                        message += f"; missing key(s): {expected - got}"
                    if got - expected:
                        message += f"; extra key(s): {got - expected}"
                    raise ValueError(f"Node keys mismatch{message}.")
                children = [node[key] for key in keys]
            else:
                children, context = node_def.flatten_fn(node)
                if kind is not deque and context != self._context:
                    raise ValueError(f"Node context mismatch for node type {self.type!r}; "
                                     f"expected {self._context!r}, but got {context!r}.")
        for subtree, spec in zip(children, self._children):
            spec._flatten_up_to(subtree, subtrees)

    def unflatten(self, leaves: Iterable) -> Any:
        """The pytree of this structure with ``leaves`` at its leaves."""
        if not isinstance(leaves, (list, tuple)):
            leaves = list(leaves)
        if len(leaves) != self.num_leaves:
            raise ValueError(f"treespec.unflatten(leaves): `leaves` has length {len(leaves)} but "
                             f"the spec refers to a pytree that holds {self.num_leaves} items "
                             f"({self}).")
        return self._build(leaves, 0)

    def _build(self, leaves, start: int) -> Any:
        if self.type is None:  # a leaf
            return leaves[start]
        children = []
        for spec in self._children:
            if spec.type is None:  # a leaf
                children.append(leaves[start])
                start += 1
            else:
                children.append(spec._build(leaves, start))
                start += spec.num_leaves
        return SUPPORTED_NODES[self.type].unflatten_fn(children, self._context)

    def __eq__(self, other) -> bool:
        if self is other:
            return True
        if not isinstance(other, TreeSpec):
            return NotImplemented
        return (str(self.type) == str(other.type) and self._context == other._context
                and self._children == other._children)

    def __hash__(self) -> int:
        kind = self.type
        if kind is defaultdict:
            context = (self._context[0], tuple(self._context[1]))
        elif kind in (dict, OrderedDict):
            context = tuple(self._context)
        elif kind is None or kind in _BUILTIN_TYPES:
            context = self._context
        else:
            context = None  # a custom node's context may not be hashable
        return hash((kind, context, tuple(self._children)))

    def __repr__(self, indent: int = 0) -> str:
        if self.type is None:
            return "*"
        indent += 2
        inner = (",\n" + " " * indent).join(c.__repr__(indent) for c in self._children)
        return f"TreeSpec({self.type.__name__}, {self._context}, [{inner}])"


class LeafSpec(TreeSpec):
    """The spec of a leaf (deprecated in PyTorch for ``treespec.is_leaf()``)."""

    __slots__ = ()

    def __init__(self) -> None:
        warnings.warn("`isinstance(treespec, LeafSpec)` is deprecated, use "
                      "`isinstance(treespec, TreeSpec) and treespec.is_leaf()` instead.",
                      FutureWarning, stacklevel=2)
        super().__init__(None, None, [])

    def __repr__(self, indent: int = 0) -> str:
        return "*"


with warnings.catch_warnings():
    warnings.simplefilter("ignore", FutureWarning)
    LEAF = LeafSpec()

_DICT_TYPES = frozenset({dict, OrderedDict, defaultdict})
_TENSORS = frozenset({Tensor, BatchedTensor})
_BUILTIN_TYPES = frozenset({tuple, list, dict, namedtuple, OrderedDict, defaultdict, deque})


def tree_flatten(tree, is_leaf: Callable | None = None) -> tuple[list, TreeSpec]:
    """The leaves of ``tree`` in order, and its structure."""
    if type(tree) in _TENSORS and is_leaf is None and type(tree) not in SUPPORTED_NODES:
        return [tree], LEAF  # (the transforms flatten single tensors often)
    leaves: list = []
    return leaves, _flatten(tree, leaves, is_leaf)


def _flatten(tree, leaves: list, is_leaf: Callable | None) -> TreeSpec:
    if type(tree) in _TENSORS and is_leaf is None and type(tree) not in SUPPORTED_NODES:
        leaves.append(tree)
        return LEAF
    node_def = None if is_leaf is not None and is_leaf(tree) else _node_def(tree)
    if node_def is None:
        leaves.append(tree)
        return LEAF
    children, context = node_def.flatten_fn(tree)
    return TreeSpec(node_def.type, context, [_flatten(c, leaves, is_leaf) for c in children])


def tree_unflatten(leaves: Iterable, treespec: TreeSpec) -> Any:
    """Rebuild a pytree of ``treespec``'s structure from its leaves."""
    if not isinstance(treespec, TreeSpec):
        if not isinstance(leaves, TreeSpec):
            raise TypeError(f"Expected `treespec` to be an instance of PyTreeSpec but got item of "
                            f"type {type(treespec)}.")
        leaves, treespec = treespec, leaves  # PyTorch accepts the spec first too
    if treespec is LEAF and type(leaves) is list and len(leaves) == 1:
        return leaves[0]
    return treespec.unflatten(leaves)


def tree_map(func: Callable, tree, *rests, is_leaf: Callable | None = None) -> Any:
    """A pytree of ``tree``'s structure with ``func(x, *xs)`` at each leaf ``x``; ``xs`` are the
    subtrees of ``rests`` at that place (each must have ``tree``'s structure down to it)."""
    leaves, spec = tree_flatten(tree, is_leaf=is_leaf)
    columns = [leaves] + [spec.flatten_up_to(r) for r in rests]
    return spec.unflatten(map(func, *columns))


class _Asterisk(str):
    def __repr__(self) -> str:
        return "*"


def treespec_pprint(treespec: TreeSpec) -> str:
    """The structure as a tree of ``*`` leaves: ``(*, {'a': *})``."""
    return repr(tree_unflatten([_Asterisk("*")] * treespec.num_leaves, treespec))


def broadcast_prefix(prefix, spec: TreeSpec) -> list | None:
    """For each leaf of the tree of ``spec``, the leaf of ``prefix`` above it; None when
    ``prefix`` is not a prefix of that structure."""
    out: list = []
    return out if _prefix(prefix, spec, out) else None


def _prefix(prefix, spec: TreeSpec, out: list) -> bool:
    node_def = _node_def(prefix)
    if node_def is None:
        out.extend([prefix] * spec.num_leaves)
        return True
    children, context = node_def.flatten_fn(prefix)
    if node_def.type is not spec.type or len(children) != spec.num_children:
        return False
    if node_def.type in (dict, OrderedDict):
        if set(context) != set(spec.context):
            return False
        children = [prefix[k] for k in spec.context]  # by key, in the tree's order
    elif context != spec.context and node_def.type is not deque:
        return False
    return all(_prefix(p, s, out) for p, s in zip(children, spec.children()))
