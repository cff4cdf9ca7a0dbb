"""Pytrees: nested tuples, lists, dicts and namedtuples of leaves, flattened and rebuilt."""

from __future__ import annotations

from typing import Any

__all__ = ["tree_flatten", "tree_unflatten", "tree_map", "broadcast_prefix", "TreeSpec", "LEAF"]


class TreeSpec:
    """The structure of a pytree: a node kind, its context (keys, type) and children specs."""

    __slots__ = ("kind", "context", "children")

    def __init__(self, kind: str, context: Any = None, children: tuple = ()) -> None:
        self.kind = kind
        self.context = context
        self.children = children

    @property
    def num_leaves(self) -> int:
        if self.kind == "leaf":
            return 1
        return sum(c.num_leaves for c in self.children)

    def __eq__(self, other) -> bool:
        return (isinstance(other, TreeSpec) and self.kind == other.kind
                and self.context == other.context and self.children == other.children)

    def __repr__(self) -> str:
        if self.kind == "leaf":
            return "*"
        inner = ", ".join(map(repr, self.children))
        name = self.context.__name__ if self.kind == "namedtuple" else self.kind
        return f"TreeSpec({name}, {self.context if self.kind == 'dict' else None}, [{inner}])"


LEAF = TreeSpec("leaf")


def _is_namedtuple(x) -> bool:
    return isinstance(x, tuple) and hasattr(type(x), "_fields")


def _children(tree) -> tuple[str, Any, list] | None:
    if _is_namedtuple(tree):
        return "namedtuple", type(tree), list(tree)
    if isinstance(tree, tuple):
        return "tuple", None, list(tree)
    if isinstance(tree, list):
        return "list", None, tree
    if isinstance(tree, dict):
        keys = list(tree)
        return "dict", keys, [tree[k] for k in keys]
    if tree is None:
        return "none", None, []
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
    it = iter(leaves)
    out = _build(it, spec)
    return out


def _build(it, spec: TreeSpec):
    kind = spec.kind
    if kind == "leaf":
        return next(it)
    children = [_build(it, c) for c in spec.children]
    if kind == "tuple":
        return tuple(children)
    if kind == "list":
        return children
    if kind == "dict":
        return dict(zip(spec.context, children))
    if kind == "namedtuple":
        return spec.context(*children)
    return None


def tree_map(fn, tree):
    leaves, spec = tree_flatten(tree)
    return tree_unflatten([fn(x) for x in leaves], spec)


def broadcast_prefix(prefix, tree) -> list | None:
    """For each leaf of ``tree``, the leaf of ``prefix`` above it; None when ``prefix`` is not a
    prefix of ``tree``'s structure."""
    out: list = []
    return out if _prefix(prefix, tree, out) else None


def _prefix(prefix, tree, out: list) -> bool:
    node = _children(prefix)
    if node is None or prefix is None:
        out.extend([prefix] * tree_flatten(tree)[1].num_leaves)
        return True
    kind, context, children = node
    other = _children(tree)
    if other is None or other[0] != kind or len(other[2]) != len(children):
        return False
    if kind == "dict" and set(context) != set(other[1]):
        return False
    if kind == "dict":
        children = [prefix[k] for k in other[1]]
    return all(_prefix(p, t, out) for p, t in zip(children, other[2]))
