"""Forward-mode AD of the elementwise rows: chainrule's tangents (the records' JVP rules) against
torch's forward AD in float64, with random tangents for every input that requires grad; also at
the rows' kinks (ties, bounds, nan and inf), where the tangent follows the same conventions as
the gradient, and for the in-place variants."""

from __future__ import annotations

import zlib

import numpy as np
import pytest
import torch
import torch.autograd.forward_ad as torch_fw
from op_db import elementwise
from op_db._harness import as_tuple, inplace_fn, inplace_samples
from op_db._spec import T

import chainrule
import chainrule.autograd.forward_ad as fw

ROWS = [row for row in elementwise.ROWS if row.orders]


def _cases(kinks: bool = False):
    return [
        pytest.param(row, i, sample, id=f"{row.id}-{sample!r}")
        for row in ROWS
        if row.kinks or not kinks
        for i, sample in enumerate(row.samples)
    ]


def _inplace_cases():
    return [
        pytest.param(row, fn, i, sample, id=f"{row.id}-{name}-{sample!r}")
        for row in ROWS
        for name, fn in row.inplace.items()
        for i, sample in inplace_samples(row, through_view=False)
    ]


def _dual_outputs(lib, fwd, fn, arrays: list, seeds: list) -> list:
    """(primal, tangent) of each output as NumPy arrays; a float output without a tangent has
    zeros (torch may also give a zero tensor)."""
    with fwd.dual_level():
        args = []
        for value, seed in zip(arrays, seeds):
            x = lib.from_numpy(np.array(value))
            args.append(x if seed is None else fwd.make_dual(x, lib.from_numpy(seed.copy())))
        out = []
        for o in as_tuple(fn(*args)):
            primal, tangent = fwd.unpack_dual(o)
            if primal.dtype.is_floating_point and (
                    tangent is None or (lib is torch and tangent._is_zerotensor())):
                tangent = lib.zeros_like(primal)
            out.append((primal.detach().numpy().copy(),
                        None if tangent is None else tangent.detach().numpy().copy()))
        return out


def _check(row, fn_ours, fn_theirs, sample, arrays: list, seed: str) -> None:
    rng = np.random.default_rng(zlib.crc32(seed.encode()) + 1)
    seeds = [rng.standard_normal(np.shape(value)) if isinstance(a, T) and a.grad else None
             for a, value in zip(sample.args, arrays)]
    ours = _dual_outputs(chainrule, fw, fn_ours, arrays, seeds)
    theirs = _dual_outputs(torch, torch_fw, fn_theirs, arrays, seeds)
    assert len(ours) == len(theirs)
    for k, ((primal, tangent), (want_primal, want_tangent)) in enumerate(zip(ours, theirs)):
        np.testing.assert_allclose(primal, want_primal, rtol=1e-7, atol=1e-9,
                                   err_msg=f"output {k}")
        assert (tangent is None) == (want_tangent is None), f"tangent of output {k}"
        if tangent is not None:
            np.testing.assert_allclose(tangent, want_tangent, rtol=1e-7, atol=1e-9,
                                       err_msg=f"tangent of output {k}")


@pytest.mark.parametrize("row,index,sample", _cases())
def test_forward_mode_matches_torch(row, index, sample):
    arrays = sample.arrays(row.seed(index), "float64", row.domain)
    _check(row, row.op, row.ref, sample, arrays, row.seed(index))


@pytest.mark.parametrize("row,index,sample", _cases(kinks=True))
def test_forward_mode_at_kinks(row, index, sample):
    arrays = sample.arrays(row.seed(index), "float64", row.domain)
    first = arrays[0].reshape(-1)  # a view: writes go to arrays[0]
    for j in range(0, first.size, 2):
        first[j] = row.kinks[j // 2 % len(row.kinks)]
    _check(row, row.op, row.ref, sample, arrays, row.seed(index))


@pytest.mark.parametrize("row,fn,index,sample", _inplace_cases())
def test_forward_mode_inplace(row, fn, index, sample):
    """``target.op_(...)`` on ``x * 1``: the target's tangent is the op's."""
    wrapped = inplace_fn(fn, through_view=False)
    arrays = sample.arrays(row.seed(index), "float64", row.domain)
    _check(row, wrapped, wrapped, sample, arrays, row.seed(index))
