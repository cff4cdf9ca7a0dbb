"""torch.functional: its names, PyTorch's signatures (positional out included) and results, and
torch.<name> being the same function."""

from __future__ import annotations

import inspect
import warnings

import numpy as np
import pytest
import torch
import torch.functional as theirs

import chainrule as cr
import chainrule.functional as ours

RNG = np.random.default_rng(3)
A = RNG.standard_normal((3, 4))
B = RNG.standard_normal((4, 5))
SQ = RNG.standard_normal((3, 3)) + 3 * np.eye(3)
SIGNAL = RNG.standard_normal(64)
BATCH = RNG.standard_normal((2, 3, 4))


def _t(m, a, **kw):
    return m.tensor(np.array(a), **kw)


def test_names() -> None:
    assert ours.__all__ == theirs.__all__


@pytest.mark.parametrize("name", theirs.__all__)
def test_torch_name_is_the_same_function(name) -> None:
    assert getattr(cr, name) is getattr(ours, name)


def _parameters(fn):
    try:
        params = inspect.signature(fn).parameters.values()
    except ValueError:  # a builtin without a signature (torch.istft)
        return None
    return [(p.name, p.kind, None if p.default is p.empty else repr(p.default)) for p in params]


# PyTorch writes these as (*args, **kwargs) dispatchers or builtins (einsum as (*args), which
# it documents as (equation, *operands)); their calls are checked below
_NO_SIGNATURE = {"einsum", "lu", "unique", "unique_consecutive", "istft"}


@pytest.mark.parametrize("name", sorted(set(theirs.__all__) - _NO_SIGNATURE))
def test_signature_as_torch(name) -> None:
    assert _parameters(getattr(ours, name)) == _parameters(getattr(theirs, name))


CALLS = {
    "atleast_1d": lambda m: m.functional.atleast_1d(_t(m, 2.0), _t(m, [1.0, 2.0])),
    "atleast_2d list": lambda m: m.functional.atleast_2d([_t(m, 2.0), _t(m, A)]),
    "atleast_3d": lambda m: m.functional.atleast_3d(_t(m, A)),
    "block_diag": lambda m: m.functional.block_diag(_t(m, A), _t(m, [1.0, 2.0]), _t(m, 3.0)),
    "broadcast_shapes": lambda m: m.functional.broadcast_shapes((2, 1), (3,), m.Size([1, 1])),
    "broadcast_tensors": lambda m: m.functional.broadcast_tensors(_t(m, A[:1]), _t(m, A[:, :1])),
    "cartesian_prod": lambda m: m.functional.cartesian_prod(_t(m, [1, 2]), _t(m, [3, 4, 5])),
    "cdist": lambda m: m.functional.cdist(_t(m, A), _t(m, A[:2]), 1.5),
    "cdist mode": lambda m: m.functional.cdist(_t(m, A), _t(m, A), 2.0,
                                               "donot_use_mm_for_euclid_dist"),
    "chain_matmul": lambda m: m.functional.chain_matmul(_t(m, A), _t(m, B), _t(m, B.T)),
    "einsum": lambda m: m.functional.einsum("ij,jk->ik", _t(m, A), _t(m, B)),
    "einsum list": lambda m: m.functional.einsum("ij,jk", [_t(m, A), _t(m, B)]),
    "einsum sublists": lambda m: m.functional.einsum(_t(m, A), [0, 1], _t(m, B), [1, 2], [0, 2]),
    "einsum sublists implicit": lambda m: m.functional.einsum(_t(m, A), [30, 1], _t(m, B),
                                                              [1, 51]),
    "einsum sublists ellipsis": lambda m: m.functional.einsum(
        _t(m, BATCH), [..., 0], _t(m, B), [0, 1], [..., 1]),
    "lu": lambda m: m.functional.lu(_t(m, SQ)),
    "lu get_infos positional": lambda m: m.functional.lu(_t(m, SQ), True, True),
    "meshgrid": lambda m: m.functional.meshgrid(_t(m, [1, 2]), _t(m, [3, 4, 5]), indexing="xy"),
    "meshgrid list": lambda m: m.functional.meshgrid([_t(m, [1, 2]), _t(m, [3, 4, 5])],
                                                     indexing="ij"),
    "norm": lambda m: m.functional.norm(_t(m, A)),
    "norm positional": lambda m: m.functional.norm(_t(m, A), 3, 1, True),
    "norm nuc": lambda m: m.functional.norm(_t(m, A), "nuc"),
    "norm dtype": lambda m: m.functional.norm(_t(m, A, dtype=m.float32), 2, 0, False, None,
                                              m.float64),
    "pca_lowrank": lambda m: m.functional.pca_lowrank(_t(m, A), 3, True, 0)[1],
    "split": lambda m: m.functional.split(_t(m, A), [1, 3], 1),
    "split size": lambda m: m.functional.split(_t(m, A), 2),
    "stft": lambda m: m.functional.stft(_t(m, SIGNAL), 16, 4, 16,
                                        m.hann_window(16, dtype=m.float64), True, "reflect",
                                        False, True, True),
    "istft": lambda m: m.functional.istft(
        m.functional.stft(_t(m, SIGNAL), 16, window=m.hann_window(16, dtype=m.float64),
                          return_complex=True),
        16, window=m.hann_window(16, dtype=m.float64), length=64),
    "svd_lowrank singular values": lambda m: m.functional.svd_lowrank(_t(m, A), 3, 2)[1],
    "tensordot": lambda m: m.functional.tensordot(_t(m, A), _t(m, B), 1),
    "tensordot lists": lambda m: m.functional.tensordot(_t(m, A), _t(m, B), ([1], [0])),
    "unique": lambda m: m.functional.unique(_t(m, [3, 1, 3, 2]), True, True, True),
    "unique dim": lambda m: m.functional.unique(_t(m, [[1, 2], [1, 2], [0, 1]]), dim=0,
                                                return_counts=True),
    "unique_consecutive": lambda m: m.functional.unique_consecutive(_t(m, [1, 1, 2, 1]), True,
                                                                    True),
    "unravel_index": lambda m: m.functional.unravel_index(_t(m, [5, 7]), (2, 2, 3)),
}


@pytest.mark.parametrize("case", CALLS)
def test_calls_as_torch(case, like_torch) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # lu and chain_matmul are deprecated in both
        got, want = CALLS[case](cr), CALLS[case](torch)
    if isinstance(want, tuple):
        assert type(got).__name__ == type(want).__name__
    like_torch(got, want, rtol=1e-9, atol=1e-10)


OUT_CALLS = {
    "norm": lambda m, o: m.functional.norm(_t(m, A), 2, 1, False, o),
    "tensordot": lambda m, o: m.functional.tensordot(_t(m, A), _t(m, B), 1, o),
}


@pytest.mark.parametrize("case", OUT_CALLS)
def test_positional_out_as_torch(case, like_torch) -> None:
    out_ours, out_theirs = cr.empty(0, dtype=cr.float64), torch.empty(0, dtype=torch.float64)
    got, want = OUT_CALLS[case](cr, out_ours), OUT_CALLS[case](torch, out_theirs)
    assert got is out_ours and want is out_theirs
    like_torch(got, want, rtol=1e-12, atol=1e-12)


def test_lu_out_as_torch(like_torch) -> None:
    outs = [(m.empty(0, dtype=m.float64), m.empty(0, dtype=m.int32)) for m in (cr, torch)]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        got = ours.lu(_t(cr, SQ), True, False, outs[0])
        want = theirs.lu(_t(torch, SQ), True, False, outs[1])
    like_torch(tuple(got), tuple(want), rtol=1e-12, atol=1e-12)
    like_torch(outs[0], outs[1], rtol=1e-12, atol=1e-12)


ERRORS = {
    "einsum alone": lambda m: m.functional.einsum("ij"),
    "einsum subscript range": lambda m: m.functional.einsum(_t(m, A), [0, 52]),
    "einsum negative subscript": lambda m: m.functional.einsum(_t(m, A), [-1, 0]),
}


@pytest.mark.parametrize("case", ERRORS)
def test_errors_as_torch(case) -> None:
    with pytest.raises(Exception) as got:
        ERRORS[case](cr)
    with pytest.raises(Exception) as want:
        ERRORS[case](torch)
    assert (got.type, str(got.value)) == (want.type, str(want.value))


def test_einsum_sublists_differentiate_as_torch(like_torch) -> None:
    grads = []
    for m in (cr, torch):
        a, b = _t(m, A, requires_grad=True), _t(m, B, requires_grad=True)
        m.functional.einsum(a, [0, 1], b, [1, 2], [2]).pow(2).sum().backward()
        grads.append((a.grad, b.grad))
    like_torch(grads[0], grads[1], rtol=1e-10, atol=1e-12)
