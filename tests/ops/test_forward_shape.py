"""Forward mode on the shape and indexing rows, in-place ones included: chainrule's tangents
(forward_ad dual tensors) against torch's, for every differentiable sample, in float64."""

from __future__ import annotations

import zlib

import numpy as np
import pytest
import torch
import torch.autograd.forward_ad as torch_fwd
from op_db import indexing, shape
from op_db._harness import as_tuple
from op_db._spec import T

import chainrule
import chainrule.autograd.forward_ad as fwd

# torch has no forward rule for scatter_reduce's prod, and through a view its in-place form
# raises rather than leaving the tangent to finite differences.
TORCH_CANNOT = ("Tensor.scatter_reduce_[prod through a view]",)


def _cases():
    out = []
    for row in shape.ROWS + indexing.ROWS:
        if not row.orders or row.id in TORCH_CANNOT:
            continue
        for i, sample in enumerate(row.samples):
            out.append(pytest.param(row, i, sample, id=f"{row.id}-{sample!r}"))
    return out


def _tangents(sample, arrays: list, seed: str) -> list:
    rng = np.random.default_rng(zlib.crc32(seed.encode()))
    return [
        rng.standard_normal(a.shape) if isinstance(arg, T) and arg.grad else None
        for arg, a in zip(sample.args, arrays)
    ]


def _forward(lib, fwd_module, fn, arrays: list, tangents: list) -> list:
    """The output tangents of fn at arrays (None where an output has none)."""
    with fwd_module.dual_level():
        args = []
        for a, t in zip(arrays, tangents):
            x = lib.from_numpy(np.array(a))
            args.append(x if t is None else fwd_module.make_dual(x, lib.from_numpy(t.copy())))
        outs = as_tuple(fn(*args))
        tangents = [fwd_module.unpack_dual(o).tangent for o in outs]
        return [None if t is None else np.array(t.detach().numpy()) for t in tangents]


def _finite_difference(fn, arrays: list, tangents: list, eps: float = 1e-6) -> list:
    """The directional derivative of fn along the tangents, by central differences."""

    def at(sign):
        args = [
            chainrule.from_numpy(np.array(a if t is None else a + sign * eps * t))
            for a, t in zip(arrays, tangents)
        ]
        return [o.detach().numpy() for o in as_tuple(fn(*args))]

    return [(hi - lo) / (2 * eps) for hi, lo in zip(at(1), at(-1))]


@pytest.mark.parametrize("row,index,sample", _cases())
def test_forward_mode_matches_torch(row, index, sample):
    """Tangents equal torch's; where torch has no forward rule (scatter_reduce's prod), they
    equal central finite differences."""
    seed = row.seed(index)
    arrays = sample.arrays(seed, "float64", row.domain)
    tangents = _tangents(sample, arrays, seed + "/tangent")
    ours = _forward(chainrule, fwd, row.op, arrays, tangents)
    theirs = _forward(torch, torch_fwd, row.ref, arrays, tangents)
    assert len(ours) == len(theirs)
    numeric = None
    for i, (got, want) in enumerate(zip(ours, theirs)):
        if got is None and want is None:  # an output that depends on no dual input
            continue
        if want is None:
            numeric = numeric or _finite_difference(row.op, arrays, tangents)
            want, rtol, atol = numeric[i], 1e-5, 1e-7
        else:
            rtol, atol = 1e-7, 1e-10
        assert got is not None, f"output {i}: no tangent"
        assert got.shape == want.shape, f"output {i}: shape {got.shape} != {want.shape}"
        np.testing.assert_allclose(got, want, rtol=rtol, atol=atol, err_msg=f"output {i}")


def _tangents_after_a_write_through_a_view(lib, fwd_module) -> list:
    with fwd_module.dual_level():
        x = fwd_module.make_dual(lib.tensor([0.5, -1.0], dtype=lib.float64),
                                 lib.tensor([1.0, 3.0], dtype=lib.float64))
        base = (-x).clone()
        row = base[0]
        other = base[1:]
        row *= 2
        base[0] *= 5  # as Python runs it: base[0] = base[0].__imul__(5)
        return [np.array(fwd_module.unpack_dual(t).tangent.numpy()) for t in (row, other, base)]


def test_view_written_in_place_has_the_new_tangent():
    # Found by tests/test_random_programs.py: the view written to kept its old tangent (and
    # ``v[0] *= 2`` then copied it back into the base).
    ours = _tangents_after_a_write_through_a_view(chainrule, fwd)
    theirs = _tangents_after_a_write_through_a_view(torch, torch_fwd)
    for got, want in zip(ours, theirs):
        np.testing.assert_allclose(got, want, rtol=0, atol=0)


def _tangent_after_a_write_into_a_broadcast_tangent(lib, fwd_module) -> np.ndarray:
    with fwd_module.dual_level():
        x = fwd_module.make_dual(lib.ones(2, 2, 2, dtype=lib.float64),
                                 lib.full((2, 2, 2), 0.5, dtype=lib.float64))
        v = lib.tensor([1.0, 2.0], dtype=lib.float64)
        v = fwd_module.make_dual(v, lib.tensor([3.0, -1.0], dtype=lib.float64))
        base = (x * 2).clone()
        flat = base.flatten()
        base[:, 0:] = v  # base's tangent: v's, broadcast (strides 0, 0, 8)
        flat.add_(x.sum())
        return np.array(fwd_module.unpack_dual(base).tangent.numpy())


def test_write_through_a_view_of_a_base_with_a_broadcast_tangent():
    # Found by tests/test_random_programs.py: the broadcast tangent was copied in an order where
    # flatten() is no view: RuntimeError.
    ours = _tangent_after_a_write_into_a_broadcast_tangent(chainrule, fwd)
    theirs = _tangent_after_a_write_into_a_broadcast_tangent(torch, torch_fwd)
    np.testing.assert_allclose(ours, theirs, rtol=0, atol=0)
