"""Forward-mode AD of the reduction and linear-algebra rows: chainrule's tangents (JVP rules)
against torch's forward AD, float64, with random tangents for every input that requires grad."""

from __future__ import annotations

import zlib

import numpy as np
import pytest
import torch
import torch.autograd.forward_ad as torch_fw
from op_db import linalg, reduction
from op_db._harness import as_tuple
from op_db._spec import T

import chainrule
import chainrule.autograd.forward_ad as fw

# In-place rows are left out: tangents through in-place ops are the dispatcher's business, and it
# does not carry them there yet (see the family report).
# PyTorch has no forward mode for these or a wrong one (tests/test_linalg_more.py checks ours
# against finite differences instead).
TORCH_WRONG = ("triangular_solve[lower,transpose]", "cholesky_inverse", "Tensor.cholesky_inverse",
               "cholesky", "ormqr", "Tensor.ormqr")
ROWS = [
    row
    for row in reduction.ROWS + linalg.ROWS
    if row.orders and not row.name.endswith("_") and row.variant != "view write"
    and row.id not in TORCH_WRONG and row.name not in TORCH_WRONG
]


def _cases():
    return [
        pytest.param(row, i, sample, id=f"{row.id}-{sample!r}")
        for row in ROWS
        for i, sample in enumerate(row.samples)
    ]


def _tangents(lib, fwd, fn, sample, arrays, seeds) -> list:
    """(primal, tangent) of each output as NumPy arrays; zeros for float outputs without one."""
    with fwd.dual_level():
        args = []
        for value, seed in zip(arrays, seeds):
            x = lib.from_numpy(np.array(value))
            args.append(x if seed is None else fwd.make_dual(x, lib.from_numpy(seed.copy())))
        out = []
        for o in as_tuple(fn(*args)):
            primal, tangent = fwd.unpack_dual(o)
            floating = primal.dtype.is_floating_point
            if floating and (tangent is None or (lib is torch and tangent._is_zerotensor())):
                tangent = lib.zeros_like(primal)
            out.append((primal.detach().numpy().copy(),
                        None if tangent is None else tangent.detach().numpy().copy()))
        return out


@pytest.mark.parametrize("row,index,sample", _cases())
def test_forward_mode_matches_torch(row, index, sample):
    arrays = sample.arrays(row.seed(index), "float64", row.domain)
    rng = np.random.default_rng(zlib.crc32(row.seed(index).encode()) + 1)
    seeds = [
        rng.standard_normal(np.shape(value)) if isinstance(a, T) and a.grad else None
        for a, value in zip(sample.args, arrays)
    ]
    ours = _tangents(chainrule, fw, row.op, sample, arrays, seeds)
    theirs = _tangents(torch, torch_fw, row.ref, sample, arrays, seeds)
    assert len(ours) == len(theirs)
    for k, ((primal, tangent), (want_primal, want_tangent)) in enumerate(zip(ours, theirs)):
        np.testing.assert_allclose(primal, want_primal, rtol=1e-7, atol=1e-9,
                                   err_msg=f"output {k}")
        assert (tangent is None) == (want_tangent is None), f"tangent of output {k}"
        if tangent is not None:
            np.testing.assert_allclose(tangent, want_tangent, rtol=1e-7, atol=1e-9,
                                       err_msg=f"tangent of output {k}")
