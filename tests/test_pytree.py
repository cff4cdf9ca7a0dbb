"""torch.utils._pytree: flattening, specs (repr, equality, JSON), mapping and predicate helpers,
key paths and registration, against torch's; torch.func's transforms share the registry."""

from __future__ import annotations

import collections
import dataclasses
import warnings

import pytest
import torch
import torch.utils._pytree as theirs

import chainrule as cr
import chainrule.utils._pytree as ours

P = collections.namedtuple("P", "x y")


def trees(m):
    """The same nested containers for either library (leaves are plain Python values)."""
    return [
        1, None, [], (), {}, [1, (2, 3)], {"b": 1, "a": [2, None]},
        collections.OrderedDict([("z", 1), ("y", (2,))]), P(1, [2, 3]),
        collections.defaultdict(list, {"k": [1, 2]}), collections.deque([1, (2, 3)], maxlen=4),
        {"nested": [{"deep": (1, P(2, 3))}], "s": m.Size([2, 3])},
    ]


@pytest.mark.parametrize("i", range(12))
def test_flatten_matches_torch(i):
    t_leaves, t_spec = theirs.tree_flatten(trees(torch)[i])
    o_leaves, o_spec = ours.tree_flatten(trees(cr)[i])
    assert o_leaves == t_leaves
    assert repr(o_spec) == repr(t_spec)
    assert (o_spec.num_leaves, o_spec.num_nodes, o_spec.num_children) == \
        (t_spec.num_leaves, t_spec.num_nodes, t_spec.num_children)
    assert ours.treespec_pprint(o_spec) == theirs.treespec_pprint(t_spec)
    rebuilt = ours.tree_unflatten(o_leaves, o_spec)
    assert repr(rebuilt) == repr(theirs.tree_unflatten(t_leaves, t_spec))
    assert type(rebuilt) is type(trees(cr)[i])


@pytest.mark.parametrize("i", range(11))  # the last tree holds torch.Size, named differently
def test_dumps_loads_match_torch(i):
    o_spec = ours.tree_structure(trees(cr)[i])
    t_spec = theirs.tree_structure(trees(torch)[i])
    if i == 8:  # a namedtuple without a registered serialized name
        with pytest.raises(NotImplementedError) as t_err:
            theirs.treespec_dumps(t_spec)
        with pytest.raises(NotImplementedError) as o_err:
            ours.treespec_dumps(o_spec)
        assert str(o_err.value) == str(t_err.value).replace("torch", "chainrule")
        return
    dumped = ours.treespec_dumps(o_spec)
    assert dumped == theirs.treespec_dumps(t_spec)
    assert ours.treespec_loads(dumped) == o_spec
    assert repr(theirs.treespec_loads(dumped)) == repr(o_spec)


def test_spec_equality_hash_and_children():
    a, b = ours.tree_structure({"a": [1, 2]}), ours.tree_structure({"a": [3, 4]})
    c = ours.tree_structure({"a": [1, 2, 3]})
    assert a == b and hash(a) == hash(b) and a != c
    assert ours.tree_structure(1).is_leaf() and not a.is_leaf()
    assert a.child(0) == ours.tree_structure([0, 0])
    assert len(a.children()) == 1
    with pytest.warns(FutureWarning):
        assert a.children_specs == a.children()


def test_map_with_rests_and_flatten_up_to():
    tree = {"x": [1, 2], "y": (3,)}
    rest = {"y": (30,), "x": [10, 20]}
    assert ours.tree_map(lambda a, b: a + b, tree, rest) == \
        theirs.tree_map(lambda a, b: a + b, tree, rest)
    subtrees = {"y": [1], "x": collections.OrderedDict(k=(2,))}
    assert ours.tree_structure({"x": 0, "y": 0}).flatten_up_to(subtrees) == \
        theirs.tree_structure({"x": 0, "y": 0}).flatten_up_to(subtrees)


@pytest.mark.parametrize("bad", [{"x": [1], "z": (2,)}, {"x": [1, 2], "y": (3, 4)}, [1, 2],
                                 {"x": (1, 2), "y": (3,)}])
def test_map_mismatch_errors_match_torch(bad):
    tree = {"x": [1, 2], "y": (3,)}
    with pytest.raises(ValueError) as t_err:
        theirs.tree_map(lambda a, b: a, tree, bad)
    with pytest.raises(ValueError) as o_err:
        ours.tree_map(lambda a, b: a, tree, bad)
    assert str(o_err.value) == str(t_err.value)


def test_unflatten_wrong_number_of_leaves():
    with pytest.raises(ValueError) as t_err:
        theirs.tree_unflatten([1, 2], theirs.tree_structure([0, 0, 0]))
    with pytest.raises(ValueError) as o_err:
        ours.tree_unflatten([1, 2], ours.tree_structure([0, 0, 0]))
    assert str(o_err.value) == str(t_err.value)
    with pytest.raises(TypeError) as t_err:
        theirs.tree_unflatten([1], [2])
    with pytest.raises(TypeError) as o_err:
        ours.tree_unflatten([1], [2])
    assert str(o_err.value) == str(t_err.value)


def test_only_and_predicate_helpers():
    tree = {"a": [1, 2.5, "s"], "b": (None, 4)}
    for name, args in [("tree_map_only", (int, lambda x: x * 10)),
                       ("tree_map_only", ((int, float), lambda x: -x)),
                       ("tree_map_only", (lambda x: x == 4, lambda x: 0)),
                       ("tree_all", (lambda x: x is not None,)),
                       ("tree_any", (lambda x: x == "s",)),
                       ("tree_all_only", (int, lambda x: x > 0)),
                       ("tree_any_only", (float, lambda x: x > 3)),
                       ("tree_leaves", ()), ("tree_is_leaf", ())]:
        assert getattr(ours, name)(*args, tree) == getattr(theirs, name)(*args, tree), name
    assert ours.tree_leaves(tree, is_leaf=lambda x: isinstance(x, list)) == \
        theirs.tree_leaves(tree, is_leaf=lambda x: isinstance(x, list))
    assert ours.arg_tree_leaves(1, [2], k=(3,)) == theirs.arg_tree_leaves(1, [2], k=(3,))
    seen_o, seen_t = [], []
    ours.tree_map_(seen_o.append, tree)
    theirs.tree_map_(seen_t.append, tree)
    assert seen_o == seen_t


def test_key_paths_match_torch():
    tree = {"a": [1, P(2, 3)], "b": collections.OrderedDict(c=(4,))}
    o_pairs, o_spec = ours.tree_flatten_with_path(tree)
    t_pairs, t_spec = theirs.tree_flatten_with_path(tree)
    assert [ours.keystr(k) for k, _ in o_pairs] == [theirs.keystr(k) for k, _ in t_pairs]
    assert [v for _, v in o_pairs] == [v for _, v in t_pairs]
    assert [ours.key_get(tree, k) for k, _ in o_pairs] == [v for _, v in t_pairs]
    assert ours.tree_map_with_path(lambda k, v: ours.keystr(k), tree) == \
        theirs.tree_map_with_path(lambda k, v: theirs.keystr(k), tree)


def test_key_paths_of_return_types():
    o = ours.tree_leaves_with_path(cr.max(cr.ones(2, 2), 0))
    t = theirs.tree_leaves_with_path(torch.max(torch.ones(2, 2), 0))
    assert [ours.keystr(k) for k, _ in o] == [theirs.keystr(k) for k, _ in t]


class Box:
    def __init__(self, a, b):
        self.a, self.b = a, b

    def __repr__(self) -> str:
        return f"Box({self.a!r}, {self.b!r})"


def _register_box(lib):
    lib.register_pytree_node(Box, lambda x: ([x.a, x.b], "ctx"), lambda v, c: Box(*v),
                             serialized_type_name="tests.Box",
                             flatten_with_keys_fn=lambda x: ([(lib.GetAttrKey("a"), x.a),
                                                              (lib.GetAttrKey("b"), x.b)],
                                                             "ctx"))


def test_register_pytree_node_is_shared_with_func():
    _register_box(theirs)
    _register_box(ours)
    try:
        tree = [Box(1, (2, 3))]
        o_leaves, o_spec = ours.tree_flatten(tree)
        t_leaves, t_spec = theirs.tree_flatten(tree)
        assert o_leaves == t_leaves and repr(o_spec) == repr(t_spec)
        assert ours.treespec_dumps(o_spec) == theirs.treespec_dumps(t_spec)
        assert [ours.keystr(k) for k, _ in ours.tree_leaves_with_path(tree)] == \
            [theirs.keystr(k) for k, _ in theirs.tree_leaves_with_path(tree)]
        with pytest.raises(ValueError) as t_err:
            _register_box(theirs)
        with pytest.raises(ValueError) as o_err:
            _register_box(ours)
        assert str(o_err.value) == str(t_err.value)
        # torch.func's transforms flatten with the same registry
        x = cr.tensor([1.0, 2.0])
        out = cr.func.vmap(lambda b: Box(b.a * 2, b.b))(Box(x, x))
        assert isinstance(out, Box) and out.a.tolist() == [2.0, 4.0]
        g = cr.func.grad(lambda b: (b.a * b.b).sum())(Box(x, cr.tensor([3.0, 4.0])))
        assert isinstance(g, Box) and g.a.tolist() == [3.0, 4.0] and g.b.tolist() == [1.0, 2.0]
    finally:
        theirs._deregister_pytree_node(Box)
        ours._deregister_pytree_node(Box)


def test_register_dataclass_and_constant():
    @dataclasses.dataclass
    class Pt:
        x: object
        y: object = None

    @dataclasses.dataclass(frozen=True)
    class Cfg:
        norm: str

    for lib in (theirs, ours):
        lib.register_dataclass(Pt, serialized_type_name="tests.Pt")
        lib.register_constant(Cfg)
    try:
        tree = [Pt(1, None), Pt((2,), 3), Cfg("l2")]
        o_leaves, o_spec = ours.tree_flatten(tree)
        t_leaves, t_spec = theirs.tree_flatten(tree)
        assert o_leaves == t_leaves
        assert ours.tree_unflatten(o_leaves, o_spec) == tree
        assert [ours.keystr(k) for k, _ in ours.tree_leaves_with_path(tree)] == \
            [theirs.keystr(k) for k, _ in theirs.tree_leaves_with_path(tree)]
        assert ours.is_constant_class(Cfg) and not ours.is_constant_class(Pt)

        class NoEq:
            pass

        with pytest.raises(TypeError) as t_err:
            theirs.register_constant(NoEq)
        with pytest.raises(TypeError) as o_err:
            ours.register_constant(NoEq)
        assert str(o_err.value) == str(t_err.value)
    finally:
        for lib in (theirs, ours):
            lib._deregister_pytree_node(Pt)
            lib._deregister_pytree_node(Cfg)


def test_namedtuple_and_structseq_predicates():
    cases = [P(1, 2), P, (1, 2), tuple]
    for case in cases:
        for name in ("is_namedtuple", "is_namedtuple_class", "is_namedtuple_instance",
                     "is_structseq", "is_structseq_class", "is_structseq_instance"):
            assert getattr(ours, name)(case) == getattr(theirs, name)(case), (name, case)
    o_result, t_result = cr.max(cr.ones(2), 0), torch.max(torch.ones(2), 0)
    for name in ("is_structseq", "is_structseq_instance", "is_namedtuple"):
        assert getattr(ours, name)(o_result) == getattr(theirs, name)(t_result), name
    assert ours.is_structseq_class(type(o_result)) == theirs.is_structseq_class(type(t_result))


def test_treespec_constructors_and_leaf_spec():
    leaf = ours.treespec_leaf()
    t_leaf = theirs.treespec_leaf()
    assert repr(ours.treespec_tuple([leaf, leaf])) == \
        repr(theirs.treespec_tuple([t_leaf, t_leaf]))
    assert repr(ours.treespec_dict(a=leaf, b=ours.treespec_tuple())) == \
        repr(theirs.treespec_dict(a=t_leaf, b=theirs.treespec_tuple()))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        spec = ours.LeafSpec()
    assert spec.is_leaf() and repr(spec) == "*"
    assert any(w.category is FutureWarning for w in caught)
    with pytest.raises(ValueError) as t_err:
        theirs.treespec_tuple([1])
    with pytest.raises(ValueError) as o_err:
        ours.treespec_tuple([1])
    assert str(o_err.value) == str(t_err.value)


def test_broadcast_to_and_flatten():
    for prefix, tree in [(0, [1, (2, 3)]), ([0, 1], [1, (2, 3)]), ({"a": 5}, {"a": [1, 2]}),
                         ([0, 1, 2], [1, 2])]:
        o = ours._broadcast_to_and_flatten(prefix, ours.tree_structure(tree))
        t = theirs._broadcast_to_and_flatten(prefix, theirs.tree_structure(tree))
        assert o == t


def test_func_pytree_is_the_utils_pytree():
    from chainrule.func import _pytree as func_pytree

    assert ours.SUPPORTED_NODES is func_pytree.SUPPORTED_NODES
    assert ours.TreeSpec is func_pytree.TreeSpec
    assert ours.tree_flatten is func_pytree.tree_flatten
