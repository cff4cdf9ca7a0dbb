"""``torch.utils._pytree``: nested containers as trees of leaves. The registry, TreeSpec and
flattening live in ``chainrule.func._pytree`` (torch.func's transforms use the same registry);
this module adds registration, key paths, the mapping and predicate helpers, and the JSON form
of specs (PyTorch's protocol 1, so specs dumped by either library load in the other)."""

from __future__ import annotations

import dataclasses
import functools
import importlib
import json
import types
import warnings
from collections import OrderedDict, defaultdict, deque, namedtuple
from collections.abc import Callable, Hashable, Iterable
from enum import Enum
from typing import Any, Generic, TypeVar

from .. import return_types
from ..func._pytree import (
    _NODE_REGISTRY_LOCK,
    LEAF,
    SUPPORTED_NODES,
    LeafSpec,
    NodeDef,
    TreeSpec,
    _node_def,
    _node_type,
    is_namedtuple_class,
    tree_flatten,
    tree_is_leaf,
    tree_map,
    tree_unflatten,
    treespec_pprint,
)
from ..tensor import Size

__all__ = ["PyTree", "Context", "FlattenFn", "UnflattenFn", "DumpableContext",
           "ToDumpableContextFn", "FromDumpableContextFn", "PyTreeSpec", "TreeSpec", "LeafSpec",
           "keystr", "key_get", "register_pytree_node", "tree_is_leaf", "tree_flatten",
           "tree_flatten_with_path", "tree_unflatten", "tree_iter", "tree_leaves",
           "tree_leaves_with_path", "tree_structure", "tree_map", "tree_map_with_path",
           "tree_map_", "tree_map_only", "tree_map_only_", "tree_all", "tree_any",
           "tree_all_only", "tree_any_only", "treespec_dumps", "treespec_loads",
           "treespec_pprint", "is_namedtuple", "is_namedtuple_class", "is_namedtuple_instance",
           "is_structseq", "is_structseq_class", "is_structseq_instance"]

T = TypeVar("T")
K = TypeVar("K", bound=Hashable)

PyTree = Any
Context = Any
DumpableContext = Any
FlattenFn = Callable[[PyTree], tuple[list, Context]]
UnflattenFn = Callable[[Iterable, Context], PyTree]
ToDumpableContextFn = Callable[[Context], DumpableContext]
FromDumpableContextFn = Callable[[DumpableContext], Context]
KeyPath = tuple
FlattenWithKeysFn = Callable[[PyTree], tuple[list, Context]]
PyTreeSpec = TreeSpec

DEFAULT_TREESPEC_SERIALIZATION_PROTOCOL = 1
NO_SERIALIZED_TYPE_NAME_FOUND = "NO_SERIALIZED_TYPE_NAME_FOUND"
STANDARD_DICT_TYPES: frozenset = frozenset({dict, OrderedDict, defaultdict})
BUILTIN_TYPES: frozenset = frozenset({tuple, list, dict, namedtuple, OrderedDict, defaultdict,
                                      deque})


# ---- keys ------------------------------------------------------------------------------------


@dataclasses.dataclass(frozen=True)
class SequenceKey(Generic[T]):
    """The key of a sequence element: prints as ``[idx]``."""

    idx: int

    def __str__(self) -> str:
        return f"[{self.idx!r}]"

    def get(self, sequence):
        return sequence[self.idx]


@dataclasses.dataclass(frozen=True)
class MappingKey(Generic[K, T]):
    """The key of a mapping entry: prints as ``['key']``."""

    key: Any

    def __str__(self) -> str:
        return f"[{self.key!r}]"

    def get(self, mapping):
        return mapping[self.key]


@dataclasses.dataclass(frozen=True)
class GetAttrKey:
    """The key of an attribute: prints as ``.name``."""

    name: str

    def __str__(self) -> str:
        return f".{self.name}"

    def get(self, obj):
        return getattr(obj, self.name)


def keystr(kp: KeyPath) -> str:
    """A key path as a string: ``[0]['a'].x``."""
    return "".join(str(k) for k in kp)


def key_get(obj, kp: KeyPath):
    """The subtree of ``obj`` at key path ``kp``."""
    for k in kp:
        obj = k.get(obj)
    return obj


def _sequence_with_keys(flatten_fn: Callable) -> Callable:
    def flatten_with_keys(d):
        values, context = flatten_fn(d)
        return [(SequenceKey(i), v) for i, v in enumerate(values)], context
    return flatten_with_keys


def _dict_with_keys(d):
    values, context = SUPPORTED_NODES[dict].flatten_fn(d)
    return [(MappingKey(k), v) for k, v in zip(context, values)], context


def _ordereddict_with_keys(d):
    values, context = SUPPORTED_NODES[OrderedDict].flatten_fn(d)
    return [(MappingKey(k), v) for k, v in zip(context, values)], context


def _defaultdict_with_keys(d):
    values, context = SUPPORTED_NODES[defaultdict].flatten_fn(d)
    return [(MappingKey(k), v) for k, v in zip(context[1], values)], context


def _namedtuple_with_keys(d):
    values, context = SUPPORTED_NODES[namedtuple].flatten_fn(d)
    return [(GetAttrKey(f), v) for f, v in zip(context._fields, values)], context


# ---- registration ----------------------------------------------------------------------------


class _SerializeNodeDef(Generic[T]):
    """How a node type's spec is written to JSON: its name and its context's converters."""

    def __init__(self, typ, serialized_type_name: str, to_dumpable_context,
                 from_dumpable_context) -> None:
        self.typ = typ
        self.serialized_type_name = serialized_type_name
        self.to_dumpable_context = to_dumpable_context
        self.from_dumpable_context = from_dumpable_context


SUPPORTED_SERIALIZED_TYPES: dict = {}
SERIALIZED_TYPE_TO_PYTHON_TYPE: dict = {}
CONSTANT_NODES: set = set()


def _private_register_pytree_node(cls, flatten_fn: FlattenFn, unflatten_fn: UnflattenFn, *,
                                  serialized_type_name: str | None = None,
                                  to_dumpable_context: ToDumpableContextFn | None = None,
                                  from_dumpable_context: FromDumpableContextFn | None = None,
                                  flatten_with_keys_fn: FlattenWithKeysFn | None = None) -> None:
    with _NODE_REGISTRY_LOCK:
        if cls in SUPPORTED_NODES:
            warnings.warn(f"{cls} is already registered as pytree node. Overwriting the "
                          "previous registration.", stacklevel=3)
        SUPPORTED_NODES[cls] = NodeDef(cls, flatten_fn, unflatten_fn, flatten_with_keys_fn)
        if (to_dumpable_context is None) ^ (from_dumpable_context is None):
            raise ValueError(f"Both to_dumpable_context and from_dumpable_context for {cls} must "
                             "be None or registered.")
        name = NO_SERIALIZED_TYPE_NAME_FOUND if serialized_type_name is None \
            else serialized_type_name
        SUPPORTED_SERIALIZED_TYPES[cls] = _SerializeNodeDef(cls, name, to_dumpable_context,
                                                            from_dumpable_context)
        SERIALIZED_TYPE_TO_PYTHON_TYPE[name] = cls


def register_pytree_node(cls, flatten_fn: FlattenFn, unflatten_fn: UnflattenFn, *,
                         serialized_type_name: str | None = None,
                         to_dumpable_context: ToDumpableContextFn | None = None,
                         from_dumpable_context: FromDumpableContextFn | None = None,
                         flatten_with_keys_fn: FlattenWithKeysFn | None = None) -> None:
    """Register a container type as a pytree node: ``flatten_fn(obj) -> (children, context)``,
    ``unflatten_fn(children, context) -> obj``."""
    with _NODE_REGISTRY_LOCK:
        if cls in SUPPORTED_NODES:
            raise ValueError(f"{cls} is already registered as pytree node.")
    _private_register_pytree_node(cls, flatten_fn, unflatten_fn,
                                  serialized_type_name=serialized_type_name,
                                  to_dumpable_context=to_dumpable_context,
                                  from_dumpable_context=from_dumpable_context,
                                  flatten_with_keys_fn=flatten_with_keys_fn)


def _register_pytree_node(cls, flatten_fn: FlattenFn, unflatten_fn: UnflattenFn,
                          to_str_fn=None, maybe_from_str_fn=None, *,
                          serialized_type_name: str | None = None,
                          to_dumpable_context: ToDumpableContextFn | None = None,
                          from_dumpable_context: FromDumpableContextFn | None = None,
                          flatten_with_keys_fn: FlattenWithKeysFn | None = None) -> None:
    """Deprecated: ``register_pytree_node`` (which refuses a type registered twice)."""
    warnings.warn("`torch.utils._pytree._register_pytree_node` is deprecated. Please use "
                  "`torch.utils._pytree.register_pytree_node` instead.", FutureWarning,
                  stacklevel=2)
    if to_str_fn is not None or maybe_from_str_fn is not None:
        warnings.warn("`to_str_fn` and `maybe_from_str_fn` is deprecated. Please use "
                      "`to_dumpable_context` and `from_dumpable_context` instead.",
                      FutureWarning, stacklevel=2)
    _private_register_pytree_node(cls, flatten_fn, unflatten_fn,
                                  serialized_type_name=serialized_type_name,
                                  to_dumpable_context=to_dumpable_context,
                                  from_dumpable_context=from_dumpable_context,
                                  flatten_with_keys_fn=flatten_with_keys_fn)


def _deregister_pytree_node(cls) -> None:
    with _NODE_REGISTRY_LOCK:
        del SUPPORTED_NODES[cls]
        node_def = SUPPORTED_SERIALIZED_TYPES.pop(cls)
        SERIALIZED_TYPE_TO_PYTHON_TYPE.pop(node_def.serialized_type_name, None)
        CONSTANT_NODES.discard(cls)


def register_dataclass(cls, *, field_names: list[str] | None = None,
                       drop_field_names: list[str] | None = None,
                       serialized_type_name: str | None = None) -> None:
    """Register a dataclass (or a class built from keyword fields) as a pytree node whose
    children are its fields; fields that are None are kept in the spec, not as leaves."""
    drop_field_names = drop_field_names or []
    if not dataclasses.is_dataclass(cls):
        if field_names is None:
            raise ValueError("field_names must be specified with a list of all fields used to "
                             f"initialize {cls}, as it is not a dataclass.")
    elif field_names is None:
        field_names = [f.name for f in dataclasses.fields(cls) if f.init]
    else:
        init_fields = {f.name for f in dataclasses.fields(cls) if f.init}
        init_fields.difference_update(drop_field_names)
        if init_fields != set(field_names):
            error = "field_names does not include all dataclass fields.\n"
            if missing := init_fields - set(field_names):
                error += (f"Missing fields in `field_names`: {missing}. If you want to include "
                          "these fields in the pytree, please add them to `field_names`, "
                          "otherwise please add them to `drop_field_names`.\n")
            if unexpected := set(field_names) - init_fields:
                error += (f"Unexpected fields in `field_names`: {unexpected}. Please remove "
                          "these fields, or add them to `drop_field_names`.\n")
            raise ValueError(error)
    names = list(field_names)

    def flatten(obj):
        present = [n for n in names if getattr(obj, n) is not None]
        absent = [n for n in names if getattr(obj, n) is None]
        return [getattr(obj, n) for n in present], [present, absent]

    def unflatten(values, context):
        present, absent = context
        return cls(**dict(zip(present, values)), **dict.fromkeys(absent))

    def flatten_with_keys(obj):
        values, (present, _) = flatten(obj)
        return [(GetAttrKey(n), v) for n, v in zip(present, values)], present

    _private_register_pytree_node(cls, flatten, unflatten,
                                  serialized_type_name=serialized_type_name,
                                  flatten_with_keys_fn=flatten_with_keys)


@dataclasses.dataclass(frozen=True)
class ConstantNode(Generic[T]):
    """The context of a registered constant: the value itself."""

    value: Any


def register_constant(cls) -> None:
    """Register a hashable type whose instances are nodes with no leaves (the value is kept in
    the spec)."""
    if cls.__eq__ is object.__eq__:
        raise TypeError("register_constant(cls) expects `cls` to have a non-default `__eq__` "
                        "implementation.")
    if cls.__hash__ is None:
        raise TypeError("register_constant(cls) expects `cls` to have a non-default `__hash__` "
                        "implementation.")

    def flatten(x):
        return [], ConstantNode(x)

    def unflatten(_, context):
        return context.value

    with _NODE_REGISTRY_LOCK:
        _private_register_pytree_node(cls, flatten, unflatten, flatten_with_keys_fn=flatten)
        CONSTANT_NODES.add(cls)


def is_constant_class(cls) -> bool:
    """Whether ``cls`` was registered with ``register_constant``."""
    return isinstance(cls, type) and cls in CONSTANT_NODES


def _namedtuple_serialize(context) -> str:
    node = SUPPORTED_SERIALIZED_TYPES.get(context)
    if node is None:
        raise NotImplementedError(f"Can't serialize TreeSpec of namedtuple class {context} "
                                  "because we didn't register a serializated_type_name. Please "
                                  "register using `_register_namedtuple`.")
    if node.serialized_type_name == NO_SERIALIZED_TYPE_NAME_FOUND:
        raise NotImplementedError(f"Can't serialize TreeSpec of namedtuple class {context} "
                                  "because we couldn't find a serializated_type_name. Please "
                                  "register using `_register_namedtuple`.")
    return node.serialized_type_name


def _namedtuple_deserialize(dumpable_context: str):
    if dumpable_context not in SERIALIZED_TYPE_TO_PYTHON_TYPE:
        raise NotImplementedError(f"Can't deserialize TreeSpec of namedtuple class "
                                  f"{dumpable_context} because we couldn't find a serializated "
                                  "name.")
    return SERIALIZED_TYPE_TO_PYTHON_TYPE[dumpable_context]


def _register_namedtuple(cls, *, serialized_type_name: str) -> None:
    """Give a namedtuple class a name, so specs holding it can be serialized."""
    node = SUPPORTED_NODES[namedtuple]
    _private_register_pytree_node(cls, node.flatten_fn, node.unflatten_fn,
                                  serialized_type_name=serialized_type_name,
                                  to_dumpable_context=_namedtuple_serialize,
                                  from_dumpable_context=_namedtuple_deserialize,
                                  flatten_with_keys_fn=_namedtuple_with_keys)


def _defaultdict_serialize(context) -> dict:
    default_factory, keys = context
    return {"default_factory_module": default_factory.__module__,
            "default_factory_name": default_factory.__qualname__, "dict_context": keys}


def _defaultdict_deserialize(dumpable_context: dict) -> list:
    module = importlib.import_module(dumpable_context["default_factory_module"])
    return [getattr(module, dumpable_context["default_factory_name"]),
            dumpable_context["dict_context"]]


def _builtin(cls, name: str, with_keys: Callable, to_context=None, from_context=None) -> None:
    """Give a node type the core registered its key paths and its serialized name."""
    SUPPORTED_NODES[cls] = SUPPORTED_NODES[cls]._replace(flatten_with_keys_fn=with_keys)
    SUPPORTED_SERIALIZED_TYPES[cls] = _SerializeNodeDef(cls, name, to_context, from_context)
    SERIALIZED_TYPE_TO_PYTHON_TYPE[name] = cls


_builtin(tuple, "builtins.tuple", _sequence_with_keys(SUPPORTED_NODES[tuple].flatten_fn))
_builtin(list, "builtins.list", _sequence_with_keys(SUPPORTED_NODES[list].flatten_fn))
_builtin(dict, "builtins.dict", _dict_with_keys)
_builtin(namedtuple, "collections.namedtuple", _namedtuple_with_keys, _namedtuple_serialize,
         _namedtuple_deserialize)
_builtin(OrderedDict, "collections.OrderedDict", _ordereddict_with_keys)
_builtin(defaultdict, "collections.defaultdict", _defaultdict_with_keys, _defaultdict_serialize,
         _defaultdict_deserialize)
_builtin(deque, "collections.deque", _sequence_with_keys(SUPPORTED_NODES[deque].flatten_fn))
_builtin(Size, "torch.Size", _sequence_with_keys(SUPPORTED_NODES[Size].flatten_fn))


# ---- namedtuples and struct sequences ------------------------------------------------------


def is_namedtuple(obj) -> bool:
    """Whether ``obj`` is a namedtuple class or instance."""
    return is_namedtuple_class(obj if isinstance(obj, type) else type(obj))


def is_namedtuple_instance(obj) -> bool:
    """Whether ``obj`` is a namedtuple instance."""
    return is_namedtuple_class(type(obj))


_Py_TPFLAGS_BASETYPE = 1 << 10


def is_structseq_class(cls) -> bool:
    """Whether ``cls`` is a struct sequence class (a direct tuple subclass with ``n_fields``,
    ``n_sequence_fields`` and ``n_unnamed_fields`` that cannot be subclassed)."""
    if not (isinstance(cls, type) and cls.__bases__ == (tuple,)
            and all(isinstance(getattr(cls, a, None), int)
                    for a in ("n_fields", "n_sequence_fields", "n_unnamed_fields"))):
        return False
    if cls.__flags__ & _Py_TPFLAGS_BASETYPE:
        # a Python class is always subclassable by its flags: ask it (torch.return_types)
        try:
            types.new_class("_probe", (cls,))
        except TypeError:
            return True
        return False
    return True


def is_structseq(obj) -> bool:
    """Whether ``obj`` is a struct sequence class or instance."""
    return is_structseq_class(obj if isinstance(obj, type) else type(obj))


def is_structseq_instance(obj) -> bool:
    """Whether ``obj`` is a struct sequence instance."""
    return is_structseq_class(type(obj))


# ---- walking and mapping ---------------------------------------------------------------------


def tree_iter(tree: PyTree, is_leaf: Callable | None = None) -> Iterable:
    """The leaves of ``tree``, lazily, in order."""
    if tree_is_leaf(tree, is_leaf=is_leaf):
        yield tree
        return
    children, _ = _node_def(tree).flatten_fn(tree)
    for child in children:
        yield from tree_iter(child, is_leaf=is_leaf)


def tree_leaves(tree: PyTree, is_leaf: Callable | None = None) -> list:
    """The leaves of ``tree`` in order."""
    return list(tree_iter(tree, is_leaf=is_leaf))


def tree_structure(tree: PyTree, is_leaf: Callable | None = None) -> TreeSpec:
    """The TreeSpec of ``tree``."""
    return tree_flatten(tree, is_leaf=is_leaf)[1]


def arg_tree_leaves(*args: PyTree, **kwargs: PyTree) -> list:
    """The leaves of ``(args, kwargs)``."""
    leaves: list = []
    for a in args:
        leaves.extend(tree_iter(a))
    for a in kwargs.values():
        leaves.extend(tree_iter(a))
    return leaves


def tree_map_(func: Callable, tree: PyTree, *rests: PyTree,
              is_leaf: Callable | None = None) -> PyTree:
    """Call ``func(x, *xs)`` at each leaf for its side effect; ``tree`` itself."""
    leaves, spec = tree_flatten(tree, is_leaf=is_leaf)
    columns = [leaves] + [spec.flatten_up_to(r) for r in rests]
    deque(map(func, *columns), maxlen=0)
    return tree


def map_only(type_or_types_or_pred, /) -> Callable:
    """Decorator: apply the function to values of the given type(s) (or passing the
    predicate), and return other values unchanged."""
    if isinstance(type_or_types_or_pred, (type, tuple, types.UnionType)):
        def pred(x) -> bool:
            return isinstance(x, type_or_types_or_pred)
    elif callable(type_or_types_or_pred):
        pred = type_or_types_or_pred
    else:
        raise TypeError("Argument must be a type, a tuple of types, or a callable.")

    def wrapper(func: Callable) -> Callable:
        @functools.wraps(func)
        def wrapped(x):
            return func(x) if pred(x) else x
        return wrapped

    return wrapper


def tree_map_only(type_or_types_or_pred, /, func: Callable, tree: PyTree,
                  is_leaf: Callable | None = None) -> PyTree:
    """``tree_map`` of ``func`` over the leaves of the given type(s) (or passing the
    predicate); other leaves are kept."""
    return tree_map(map_only(type_or_types_or_pred)(func), tree, is_leaf=is_leaf)


def tree_map_only_(type_or_types_or_pred, /, func: Callable, tree: PyTree,
                   is_leaf: Callable | None = None) -> PyTree:
    """``tree_map_`` of ``func`` over the leaves of the given type(s) (or passing the
    predicate)."""
    return tree_map_(map_only(type_or_types_or_pred)(func), tree, is_leaf=is_leaf)


def tree_all(pred: Callable, tree: PyTree, is_leaf: Callable | None = None) -> bool:
    """Whether ``pred`` holds for every leaf."""
    return all(map(pred, tree_iter(tree, is_leaf=is_leaf)))


def tree_any(pred: Callable, tree: PyTree, is_leaf: Callable | None = None) -> bool:
    """Whether ``pred`` holds for some leaf."""
    return any(map(pred, tree_iter(tree, is_leaf=is_leaf)))


def tree_all_only(type_or_types, /, pred: Callable, tree: PyTree,
                  is_leaf: Callable | None = None) -> bool:
    """Whether ``pred`` holds for every leaf of the given type(s)."""
    return all(pred(x) for x in tree_iter(tree, is_leaf=is_leaf)
               if isinstance(x, type_or_types))


def tree_any_only(type_or_types, /, pred: Callable, tree: PyTree,
                  is_leaf: Callable | None = None) -> bool:
    """Whether ``pred`` holds for some leaf of the given type(s)."""
    return any(pred(x) for x in tree_iter(tree, is_leaf=is_leaf)
               if isinstance(x, type_or_types))


def _broadcast_to_and_flatten(tree: PyTree, treespec: TreeSpec,
                              is_leaf: Callable | None = None) -> list | None:
    """``tree`` broadcast to ``treespec``'s structure, flattened; None if ``tree`` is not a
    prefix of it."""
    full_tree = tree_unflatten([0] * treespec.num_leaves, treespec)
    result: list = []

    def add_leaves(x, subtree) -> None:
        result.extend([x] * tree_structure(subtree, is_leaf=is_leaf).num_leaves)

    try:
        tree_map_(add_leaves, tree, full_tree, is_leaf=is_leaf)
    except ValueError:
        return None
    return result


# ---- key paths -------------------------------------------------------------------------------


def _key_paths(key_path: KeyPath, tree: PyTree, is_leaf: Callable | None):
    if is_leaf is not None and is_leaf(tree):
        yield key_path, tree
        return
    node = _node_def(tree)
    if node is None:
        yield key_path, tree
        return
    with_keys = node.flatten_with_keys_fn
    if with_keys is None:
        if not return_types.is_pytree_node(node.type):
            raise ValueError(f"Did not find a flatten_with_keys_fn for type: {_node_type(tree)}"
                             ". Please pass a flatten_with_keys_fn argument to "
                             "register_pytree_node.")
        with_keys = _sequence_with_keys(node.flatten_fn)  # torch.return_types: by position
    children, _ = with_keys(tree)
    for k, child in children:
        yield from _key_paths((*key_path, k), child, is_leaf)


def tree_flatten_with_path(tree: PyTree, is_leaf: Callable | None = None
                           ) -> tuple[list[tuple[KeyPath, Any]], TreeSpec]:
    """The (key path, leaf) pairs of ``tree`` in order, and its TreeSpec."""
    _, spec = tree_flatten(tree, is_leaf)
    return list(_key_paths((), tree, is_leaf)), spec


def tree_leaves_with_path(tree: PyTree, is_leaf: Callable | None = None
                          ) -> list[tuple[KeyPath, Any]]:
    """The (key path, leaf) pairs of ``tree`` in order."""
    return list(_key_paths((), tree, is_leaf))


def tree_map_with_path(func: Callable, tree: PyTree, *rests: PyTree,
                       is_leaf: Callable | None = None) -> PyTree:
    """A pytree of ``tree``'s structure with ``func(keypath, x, *xs)`` at each leaf."""
    pairs, spec = tree_flatten_with_path(tree, is_leaf)
    columns = list(zip(*pairs)) + [spec.flatten_up_to(r) for r in rests]
    return spec.unflatten(func(*xs) for xs in zip(*columns))


# ---- specs -----------------------------------------------------------------------------------


def treespec_leaf() -> LeafSpec:
    """The spec of a leaf."""
    return LEAF


def treespec_tuple(iterable: Iterable[TreeSpec] = (), /) -> TreeSpec:
    """The spec of a tuple of subtrees with the given specs."""
    children = list(iterable)
    if any(not isinstance(child, TreeSpec) for child in children):
        raise ValueError(f"Expected a tuple of TreeSpec values, got: {children!r}.")
    return TreeSpec(tuple, None, children)


def treespec_dict(mapping=(), /, **kwargs: TreeSpec) -> TreeSpec:
    """The spec of a dict of subtrees with the given specs."""
    dct = dict(mapping, **kwargs)
    if any(not isinstance(child, TreeSpec) for child in dct.values()):
        raise ValueError(f"Expected a dictionary of TreeSpec values, got: {dct!r}.")
    return TreeSpec(dict, list(dct.keys()), list(dct.values()))


class EnumEncoder(json.JSONEncoder):
    """JSON for contexts holding enum members: their class path and name."""

    def default(self, obj):
        if isinstance(obj, Enum):
            return {"__enum__": True, "fqn": f"{obj.__class__.__module__}:"
                    f"{obj.__class__.__qualname__}", "name": obj.name}
        return super().default(obj)


def enum_object_hook(obj: dict):
    """The enum member an ``EnumEncoder`` dict stands for (other dicts as they are)."""
    if "__enum__" not in obj:
        return obj
    module_name, _, class_name = obj["fqn"].partition(":")
    enum_cls = importlib.import_module(module_name)
    for attr in class_name.split("."):
        enum_cls = getattr(enum_cls, attr)
    return enum_cls[obj["name"]]


def _treespec_to_json(treespec: TreeSpec) -> dict:
    if treespec.is_leaf():
        return {"type": None, "context": None, "children_spec": []}
    node = SUPPORTED_SERIALIZED_TYPES.get(treespec.type)
    if node is None:
        raise NotImplementedError(f"Serializing {treespec.type} in pytree is not registered.")
    if node.serialized_type_name == NO_SERIALIZED_TYPE_NAME_FOUND:
        raise NotImplementedError(f"No registered serialization name for {treespec.type} found. "
                                  "Please update your _register_pytree_node call with a "
                                  "`serialized_type_name` kwarg.")
    if node.to_dumpable_context is None:
        try:
            context = json.dumps(treespec.context, cls=EnumEncoder)
        except TypeError as e:
            raise TypeError("Unable to serialize context. Please make the context json "
                            "dump-able, or register a custom serializer using "
                            "_register_pytree_node.") from e
    else:
        context = node.to_dumpable_context(treespec.context)
    return {"type": node.serialized_type_name, "context": context,
            "children_spec": [_treespec_to_json(c) for c in treespec.children()]}


def _json_to_treespec(schema: dict) -> TreeSpec:
    if schema["type"] is None and schema["context"] is None and not schema["children_spec"]:
        return LEAF
    if schema["type"] not in SERIALIZED_TYPE_TO_PYTHON_TYPE:
        raise NotImplementedError(f"Deserializing {schema['type']} in pytree is not registered.")
    typ = SERIALIZED_TYPE_TO_PYTHON_TYPE[schema["type"]]
    node = SUPPORTED_SERIALIZED_TYPES[typ]
    if node.from_dumpable_context is None:
        try:
            context = json.loads(schema["context"], object_hook=enum_object_hook)
        except TypeError as e:
            raise TypeError("Unable to deserialize context. Please make the context json "
                            "load-able, or register a custom serializer using "
                            "_register_pytree_node.") from e
    else:
        context = node.from_dumpable_context(schema["context"])
    return TreeSpec(typ, context, [_json_to_treespec(c) for c in schema["children_spec"]])


_PROTOCOLS = {1: (_treespec_to_json, _json_to_treespec)}


def treespec_dumps(treespec: TreeSpec, protocol: int | None = None) -> str:
    """The spec as a JSON string (PyTorch's serialization protocol 1)."""
    if not isinstance(treespec, TreeSpec):
        raise TypeError(f"Expected `treespec` to be an instance of PyTreeSpec but got item of "
                        f"type {type(treespec)}.")
    if protocol is None:
        protocol = DEFAULT_TREESPEC_SERIALIZATION_PROTOCOL
    if protocol not in _PROTOCOLS:
        raise ValueError(f"Unknown protocol {protocol}. Available protocols: "
                         f"{list(_PROTOCOLS.keys())}")
    return json.dumps((protocol, _PROTOCOLS[protocol][0](treespec)), cls=EnumEncoder)


@functools.lru_cache
def treespec_loads(serialized: str) -> TreeSpec:
    """The spec a ``treespec_dumps`` string describes."""
    protocol, schema = json.loads(serialized)
    if protocol not in _PROTOCOLS:
        raise ValueError(f"Unknown protocol {protocol}. Available protocols: "
                         f"{list(_PROTOCOLS.keys())}")
    return _PROTOCOLS[protocol][1](schema)


def pytree_to_str(treespec: TreeSpec) -> str:
    """Deprecated: ``treespec_dumps``."""
    warnings.warn("`pytree_to_str` is deprecated. Please use `treespec_dumps` instead.",
                  FutureWarning, stacklevel=2)
    return treespec_dumps(treespec)


def str_to_pytree(json: str) -> TreeSpec:
    """Deprecated: ``treespec_loads``."""
    warnings.warn("`str_to_pytree` is deprecated. Please use `treespec_loads` instead.",
                  FutureWarning, stacklevel=2)
    return treespec_loads(json)
