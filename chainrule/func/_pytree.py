"""Pytrees as torch.utils._pytree has them: tuples, lists, dicts and namedtuples are nodes,
everything else (None included) is a leaf. Specs compare and print as PyTorch's, so error
messages that show a structure read the same."""

from __future__ import annotations

from collections import OrderedDict
from typing import Any

from .. import return_types

__all__ = ["tree_flatten", "tree_unflatten", "tree_map", "broadcast_prefix", "treespec_pprint",
           "TreeSpec", "LEAF"]


class TreeSpec:
    """The structure of a pytree: the node type, its context (keys, namedtuple class) and the
    children's specs; a leaf is ``LEAF``."""

    __slots__ = ("type", "context", "children")

    def __init__(self, type: type | None, context: Any = None, children: tuple = ()) -> None:
        self.type = type
        self.context = context
        self.children = children

    @property
    def num_leaves(self) -> int:
        if self.type is None:
            return 1
        return sum(c.num_leaves for c in self.children)

    def __eq__(self, other) -> bool:
        return (isinstance(other, TreeSpec) and self.type is other.type
                and self.context == other.context and self.children == other.children)

    def __repr__(self, indent: int = 0) -> str:
        if self.type is None:
            return "*"
        name = "namedtuple" if self.type is _NamedTuple else self.type.__name__
        indent += 2
        inner = (",\n" + " " * indent).join(c.__repr__(indent) for c in self.children)
        return f"TreeSpec({name}, {self.context}, [{inner}])"


class _NamedTuple:
    """The node type of namedtuples (the class itself is the context)."""


LEAF = TreeSpec(None)


def _children(tree) -> tuple[type, Any, list] | None:
    kind = type(tree)
    if kind is tuple:
        return tuple, None, list(tree)
    if kind is list:
        return list, None, tree
    if kind is dict or kind is OrderedDict:
        keys = list(tree)
        return kind, keys, [tree[k] for k in keys]
    if isinstance(tree, tuple) and hasattr(kind, "_fields"):
        return _NamedTuple, kind, list(tree)
    if return_types.is_pytree_node(kind):  # torch.return_types.max and kin
        return kind, None, list(tree)
    return None


def tree_flatten(tree) -> tuple[list, TreeSpec]:
    """The leaves of ``tree`` in order, and its structure."""
    leaves: list = []
    return leaves, _flatten(tree, leaves)


def _flatten(tree, leaves: list) -> TreeSpec:
    node = _children(tree)
    if node is None:
        leaves.append(tree)
        return LEAF
    kind, context, children = node
    return TreeSpec(kind, context, tuple(_flatten(c, leaves) for c in children))


def tree_unflatten(leaves, spec: TreeSpec):
    """Rebuild a pytree of ``spec``'s structure from its leaves."""
    return _build(iter(leaves), spec)


def _build(it, spec: TreeSpec):
    if spec.type is None:
        return next(it)
    children = [_build(it, c) for c in spec.children]
    if spec.type is _NamedTuple:
        return spec.context(*children)
    if spec.type is dict or spec.type is OrderedDict:
        return spec.type(zip(spec.context, children))
    return spec.type(children)


def tree_map(fn, tree):
    leaves, spec = tree_flatten(tree)
    return tree_unflatten([fn(x) for x in leaves], spec)


class _Asterisk(str):
    def __repr__(self) -> str:
        return "*"


def treespec_pprint(spec: TreeSpec) -> str:
    """The structure as a tree of ``*`` leaves: ``(*, {'a': *})``."""
    return repr(tree_unflatten([_Asterisk("*")] * spec.num_leaves, spec))


def broadcast_prefix(prefix, spec: TreeSpec) -> list | None:
    """For each leaf of the tree of ``spec``, the leaf of ``prefix`` above it; None when
    ``prefix`` is not a prefix of that structure."""
    out: list = []
    return out if _prefix(prefix, spec, out) else None


def _prefix(prefix, spec: TreeSpec, out: list) -> bool:
    node = _children(prefix)
    if node is None:
        out.extend([prefix] * spec.num_leaves)
        return True
    kind, context, children = node
    if kind is not spec.type or len(children) != len(spec.children):
        return False
    if kind is _NamedTuple and context is not spec.context:
        return False
    if kind is dict or kind is OrderedDict:
        if set(context) != set(spec.context):
            return False
        children = [prefix[k] for k in spec.context]  # by key, in the tree's order
    return all(_prefix(p, s, out) for p, s in zip(children, spec.children))
