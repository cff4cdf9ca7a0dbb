"""torch.return_types: every op with a named result returns PyTorch's class (its `_out` class
with out=), printed, built, pickled and flattened as PyTorch's struct sequences."""

from __future__ import annotations

import copy
import pickle

import numpy as np
import pytest
import torch
from torch.utils.data import default_collate as theirs_collate

import chainrule as cr
from chainrule.func import _pytree
from chainrule.utils.data import default_collate as ours_collate

RNG = np.random.default_rng(5)
SQ = RNG.standard_normal((3, 3)) + 3 * np.eye(3)
SPD = SQ @ SQ.T
M = RNG.standard_normal((3, 4))
V = np.array([3.0, 1.0, 4.0, 1.5, 5.0, 9.0, 2.0, 6.0])


def _t(m, a):
    return m.tensor(np.array(a))


CALLS = {
    "max": lambda m: m.max(_t(m, M), 1),
    "max method": lambda m: _t(m, M).max(dim=0, keepdim=True),
    "min": lambda m: m.min(_t(m, M), 0),
    "sort": lambda m: m.sort(_t(m, V)),
    "sort method": lambda m: _t(m, M).sort(dim=0, descending=True),
    "topk": lambda m: m.topk(_t(m, V), 3),
    "kthvalue": lambda m: m.kthvalue(_t(m, V), 2),
    "mode": lambda m: m.mode(_t(m, [1.0, 2.0, 2.0, 3.0])),
    "median": lambda m: m.median(_t(m, M), 1),
    "nanmedian": lambda m: m.nanmedian(_t(m, M), 1),
    "cummax": lambda m: m.cummax(_t(m, V), 0),
    "cummin": lambda m: m.cummin(_t(m, V), 0),
    "aminmax": lambda m: m.aminmax(_t(m, M), dim=1),
    "frexp": lambda m: m.frexp(_t(m, V)),
    "histogram": lambda m: m.histogram(_t(m, V), 4),
    "histogramdd": lambda m: m.histogramdd(_t(m, M.T[:, :2]), bins=[2, 3]),
    "svd": lambda m: m.svd(_t(m, SQ)),
    "qr": lambda m: m.qr(_t(m, SQ)),
    "slogdet": lambda m: m.slogdet(_t(m, SQ)),
    "geqrf": lambda m: m.geqrf(_t(m, SQ)),
    "triangular_solve": lambda m: m.triangular_solve(_t(m, SQ[:, :1]), _t(m, np.triu(SQ))),
    "lu_unpack": lambda m: m.lu_unpack(*m.linalg.lu_factor(_t(m, SQ))),
    "linalg.svd": lambda m: m.linalg.svd(_t(m, M), full_matrices=False),
    "linalg.qr": lambda m: m.linalg.qr(_t(m, SQ)),
    "linalg.eigh": lambda m: m.linalg.eigh(_t(m, SPD)),
    "linalg.eig": lambda m: m.linalg.eig(_t(m, SPD)),
    "linalg.slogdet": lambda m: m.linalg.slogdet(_t(m, SQ)),
    "linalg.lu": lambda m: m.linalg.lu(_t(m, SQ)),
    "linalg.lu_factor": lambda m: m.linalg.lu_factor(_t(m, SQ)),
    "linalg.lu_factor_ex": lambda m: m.linalg.lu_factor_ex(_t(m, SQ)),
    "linalg.cholesky_ex": lambda m: m.linalg.cholesky_ex(_t(m, SPD)),
    "linalg.inv_ex": lambda m: m.linalg.inv_ex(_t(m, SQ)),
    "linalg.solve_ex": lambda m: m.linalg.solve_ex(_t(m, SQ), _t(m, SQ[:, :1])),
    "linalg.ldl_factor": lambda m: m.linalg.ldl_factor(_t(m, SPD)),
    "linalg.ldl_factor_ex": lambda m: m.linalg.ldl_factor_ex(_t(m, SPD)),
    "linalg.lstsq": lambda m: m.linalg.lstsq(_t(m, SQ), _t(m, SQ[:, :1])),
    "lu (plain tuple)": lambda m: m.lu(_t(m, SQ), get_infos=True),
    "unique (plain tuple)": lambda m: m.unique(_t(m, V), return_counts=True),
}


def _type_name(result) -> str:
    cls = type(result)
    return cls.__name__ if cls.__module__.endswith("return_types") else cls.__qualname__


@pytest.mark.filterwarnings("ignore:torch.lu is deprecated", "ignore:torch.qr is deprecated",
                            "ignore:torch.triangular_solve")
@pytest.mark.parametrize("name", CALLS)
def test_ops_return_torchs_class(name, like_torch) -> None:
    ours, theirs = CALLS[name](cr), CALLS[name](torch)
    assert _type_name(ours) == _type_name(theirs)
    if _type_name(theirs) != "tuple":
        assert isinstance(ours, getattr(cr.return_types, type(theirs).__name__))
        assert ours.__match_args__ == theirs.__match_args__
        for field in theirs.__match_args__:
            assert getattr(ours, field) is ours[theirs.__match_args__.index(field)]
    if name not in ("linalg.eig",):  # eigenvectors are defined up to a phase
        like_torch(tuple(ours), tuple(theirs), rtol=1e-9, atol=1e-10)


OUT_CALLS = {
    "max": lambda m: m.max(_t(m, M), 1, out=(m.empty(3, dtype=m.float64),
                                             m.empty(3, dtype=m.int64))),
    "sort": lambda m: m.sort(_t(m, V), out=(m.empty(8, dtype=m.float64),
                                            m.empty(8, dtype=m.int64))),
    "linalg.qr": lambda m: m.linalg.qr(_t(m, SQ), out=(m.empty(3, 3, dtype=m.float64),
                                                       m.empty(3, 3, dtype=m.float64))),
    "aminmax": lambda m: m.aminmax(_t(m, V), out=(m.empty((), dtype=m.float64),
                                                  m.empty((), dtype=m.float64))),
}


@pytest.mark.parametrize("name", OUT_CALLS)
def test_out_gives_the_out_class(name, like_torch) -> None:
    ours, theirs = OUT_CALLS[name](cr), OUT_CALLS[name](torch)
    assert type(theirs).__name__.endswith("_out")
    assert type(ours).__name__ == type(theirs).__name__
    like_torch(tuple(ours), tuple(theirs), rtol=1e-9, atol=1e-10)


def test_printed_as_torch() -> None:
    x = [[1.0, 3.0], [2.0, 0.0]]
    for fn in (lambda m: m.max(m.tensor(x), 1), lambda m: m.linalg.svd(m.eye(2))):
        ours, theirs = fn(cr), fn(torch)
        assert repr(ours) == repr(theirs)
        assert str(ours) == str(theirs)
    assert repr(cr.return_types.max([1, 2])) == repr(torch.return_types.max([1, 2]))


def test_names_and_fields_as_torch() -> None:
    assert cr.return_types.__all__ == torch.return_types.__all__
    assert ([c.__name__ for c in cr.return_types.all_return_types]
            == [c.__name__ for c in torch.return_types.all_return_types])
    for ours, theirs in zip(cr.return_types.all_return_types,
                            torch.return_types.all_return_types):
        for attr in ("__match_args__", "n_fields", "n_sequence_fields", "n_unnamed_fields"):
            assert getattr(ours, attr) == getattr(theirs, attr), (ours, attr)
        assert ours.__bases__ == (tuple,)
        assert not hasattr(ours, "_fields") and not hasattr(ours, "_asdict")


def _error(fn) -> tuple[type, str]:
    with pytest.raises(Exception) as info:
        fn()
    return info.type, str(info.value)


@pytest.mark.parametrize("build", [
    lambda R: R.max(1, 2),
    lambda R: R.max((1, 2, 3)),
    lambda R: R.max((1,)),
    lambda R: R.max(),
    lambda R: R.max(values=1, indices=2),
    lambda R: R.max((1, 2), values=1),
    lambda R: setattr(R.max((1, 2)), "values", 3),
    lambda R: type("X", (R.max,), {}),
], ids=["not a sequence", "too long", "too short", "no argument", "fields by name",
        "unknown keyword", "read-only", "subclass"])
def test_construction_errors_as_torch(build) -> None:
    ours = _error(lambda: build(cr.return_types))
    theirs = _error(lambda: build(torch.return_types))
    assert ours == theirs


def test_built_from_any_iterable_and_behaves_as_a_tuple() -> None:
    for R in (cr.return_types, torch.return_types):
        r = R.max(iter([1, 2]))
        assert r == (1, 2) and hash(r) == hash((1, 2)) and r.indices == 2
        assert type(r[:1]) is tuple and r + (3,) == (1, 2, 3)
        assert R.topk("ab", {}) == ("a", "b")
        match r:
            case R.max(values, indices):
                assert (values, indices) == (1, 2)


def test_pickle_and_copy_keep_the_class() -> None:
    r = cr.max(cr.tensor([[1.0, 3.0]]), 1)
    for again in (pickle.loads(pickle.dumps(r)), copy.deepcopy(r), copy.copy(r)):
        assert type(again) is cr.return_types.max
        assert again.values.tolist() == [3.0] and again.indices.tolist() == [1]


def test_pytree_flattens_them_as_torch() -> None:
    r = cr.sort(cr.tensor([2.0, 1.0]))
    leaves, spec = _pytree.tree_flatten(r)
    theirs = torch.utils._pytree.tree_flatten(torch.sort(torch.tensor([2.0, 1.0])))[1]
    assert len(leaves) == 2 and repr(spec) == repr(theirs)
    again = _pytree.tree_unflatten(leaves, spec)
    assert type(again) is cr.return_types.sort and again.values is leaves[0]
    batched = cr.vmap(lambda t: t.max(0))(cr.tensor([[1.0, 3.0], [4.0, 2.0]]))
    expected = torch.vmap(lambda t: t.max(0))(torch.tensor([[1.0, 3.0], [4.0, 2.0]]))
    assert type(batched).__name__ == type(expected).__name__ == "max"
    assert batched.values.tolist() == expected.values.tolist()
    assert batched.indices.tolist() == expected.indices.tolist()


def test_register_structseq() -> None:
    for R in (cr.return_types, torch.return_types):
        with pytest.raises(ValueError, match="is already registered as pytree node"):
            R.pytree_register_structseq(R.max)


def test_data_loader_collates_them_as_plain_tuples() -> None:
    ours = ours_collate([cr.return_types.max([1, 2]), cr.return_types.max([3, 4])])
    theirs = theirs_collate([torch.return_types.max([1, 2]), torch.return_types.max([3, 4])])
    assert type(ours) is type(theirs)
    assert [t.tolist() for t in ours] == [t.tolist() for t in theirs]
