"""Every op_db row against finite differences (float64) and against torch (float32, float64).

The tests are parametrised over the table: a new op is a new row in tests/op_db, not a new test.
"""

from __future__ import annotations

import numpy as np
import pytest
import torch
from op_db import ROWS, S, T
from op_db._harness import as_tuple, derivatives, inplace_fn, inplace_samples

import chainrule
from chainrule.autograd import gradcheck, gradgradcheck


def _cases(orders=None, kinks=False):
    out = []
    for row in ROWS:
        if orders is not None and not set(orders) & set(row.orders):
            continue
        if kinks and not row.kinks:
            continue
        for i, sample in enumerate(row.samples):
            out.append(pytest.param(row, i, sample, id=f"{row.id}-{sample!r}"))
    return out


def _float64_inputs(row, index: int, sample: S) -> list:
    return sample.tensors(chainrule, sample.arrays(row.seed(index), "float64", row.domain))


# ---- (a) finite differences, float64 -------------------------------------------------------


@pytest.mark.parametrize("row,index,sample", _cases(orders=(1,)))
def test_gradcheck(row, index, sample):
    assert gradcheck(row.op, _float64_inputs(row, index, sample), **row.gradcheck_kwargs)


@pytest.mark.parametrize("row,index,sample", _cases(orders=(2,)))
def test_gradgradcheck(row, index, sample):
    assert gradgradcheck(row.op, _float64_inputs(row, index, sample), **row.gradcheck_kwargs)


def _first_derivatives(fn, n_inputs: int):
    """The vector-Jacobian products of fn, as a function of its inputs and the cotangents."""

    def first(*args):
        inputs, seeds = args[:n_inputs], args[n_inputs:]
        wrt = [a for a in inputs if isinstance(a, chainrule.Tensor) and a.requires_grad]
        outs = [o for o in as_tuple(fn(*inputs)) if o.requires_grad]
        grads = chainrule.autograd.grad(outs, wrt, seeds, create_graph=True, allow_unused=True)
        return tuple(g for g in grads if g is not None)

    return first


@pytest.mark.parametrize("row,index,sample", _cases(orders=(3,)))
def test_third_order(row, index, sample):
    """gradgradcheck of the first derivatives: checks the third derivatives."""
    inputs = _float64_inputs(row, index, sample)
    rng = np.random.default_rng(3)
    outs = [o for o in as_tuple(row.op(*inputs)) if o.requires_grad]
    seeds = [chainrule.from_numpy(rng.standard_normal(o.shape)).requires_grad_() for o in outs]
    first = _first_derivatives(row.op, len(inputs))
    assert gradgradcheck(first, inputs + seeds, **row.gradcheck_kwargs)


# ---- (b) values and derivatives equal to torch's, float32 and float64 ---------------------------


def _compare(ours: list, theirs: list) -> None:
    assert [label for label, _ in ours] == [label for label, _ in theirs]
    for (label, got), (_, want) in zip(ours, theirs):
        assert isinstance(got, chainrule.Tensor), f"{label}: got {type(got).__name__}"
        assert str(got.dtype) == str(want.dtype), f"{label}: dtype {got.dtype} != {want.dtype}"
        assert tuple(got.shape) == tuple(want.shape), f"{label}: shape {got.shape} != {want.shape}"
        assert got.requires_grad == want.requires_grad or not label.startswith("output"), (
            f"{label}: requires_grad {got.requires_grad} != {want.requires_grad}"
        )
        torch.testing.assert_close(
            torch.from_numpy(np.array(got.detach().numpy())),
            want.detach(),
            equal_nan=True,
            msg=lambda m, label=label: f"{label}: {m}",
        )


def _against_torch(row, fn_ours, fn_theirs, sample: S, arrays: list, seed: str) -> None:
    order = min(max(row.orders, default=0), 2)
    ours = derivatives(chainrule, fn_ours, sample.tensors(chainrule, arrays), order, seed)
    theirs = derivatives(torch, fn_theirs, sample.tensors(torch, arrays), order, seed)
    _compare(ours, theirs)


def _dtype_cases(cases):
    return [
        pytest.param(*c.values, dtype, id=f"{c.id}-{dtype}")
        for c in cases
        for dtype in c.values[0].dtypes
    ]


@pytest.mark.parametrize("row,index,sample,dtype", _dtype_cases(_cases()))
def test_matches_torch(row, index, sample, dtype):
    arrays = sample.arrays(row.seed(index), dtype, row.domain)
    _against_torch(row, row.op, row.ref, sample, arrays, row.seed(index))


@pytest.mark.parametrize("row,index,sample,dtype", _dtype_cases(_cases(kinks=True)))
def test_matches_torch_at_kinks(row, index, sample, dtype):
    """The gradient conventions at non-smooth points: the row's kink values in the first input."""
    arrays = sample.arrays(row.seed(index), dtype, row.domain)
    first = arrays[0].reshape(-1)  # a view: writes go to arrays[0]
    for j in range(0, first.size, 2):
        first[j] = row.kinks[j // 2 % len(row.kinks)]
    _against_torch(row, row.op, row.ref, sample, arrays, row.seed(index))


# ---- (c) grad_fn names ----------------------------------------------------------------------


def _grad_fn_cases():
    return [c for c in _cases() if c.values[0].grad_fn_comparable(c.values[2])]


def _grad_fn_name(out) -> str | None:
    return None if out.grad_fn is None else out.grad_fn.name()


@pytest.mark.parametrize("row,index,sample", _grad_fn_cases())
def test_grad_fn_name(row, index, sample):
    arrays = sample.arrays(row.seed(index), "float64", row.domain)
    ours = as_tuple(row.op(*sample.tensors(chainrule, arrays)))
    theirs = as_tuple(row.ref(*sample.tensors(torch, arrays)))
    assert [_grad_fn_name(o) for o in ours] == [_grad_fn_name(o) for o in theirs]


# ---- (d) in-place variants on non-leaf tensors ---------------------------------------------------


def _inplace_cases():
    out = []
    for row in ROWS:
        for name, fn in row.inplace.items():
            for through_view in (False, True):
                for index, sample in inplace_samples(row, through_view):
                    for dtype in row.dtypes:
                        where = "through a view" if through_view else "direct"
                        out.append(
                            pytest.param(
                                row,
                                fn,
                                through_view,
                                index,
                                sample,
                                dtype,
                                id=f"{row.id}-{name}-{where}-{sample!r}-{dtype}",
                            )
                        )
    return out


def _inplace_run(row, fn, through_view, index, sample, dtype):
    seed = row.seed(index) + ("/view" if through_view else "")
    return inplace_fn(fn, through_view), sample.arrays(seed, dtype, row.domain), seed


@pytest.mark.parametrize("row,fn,through_view,index,sample,dtype", _inplace_cases())
def test_inplace(row, fn, through_view, index, sample, dtype):
    """``target.op_(...)`` on ``x * 1`` (or on a row of it): torch's values, gradients and second
    derivatives."""
    wrapped, arrays, seed = _inplace_run(row, fn, through_view, index, sample, dtype)
    _against_torch(row, wrapped, wrapped, sample, arrays, seed)


def _inplace_grad_fn_cases():
    """One float64 case per row, variant and target: the last (largest) sample, since the name
    does not depend on the shape."""
    last = {}
    for c in _inplace_cases():
        row, fn, through_view, _, sample, dtype = c.values
        if dtype == "float64" and row.grad_fn_comparable(sample):
            last[row.id, fn, through_view] = c
    return list(last.values())


@pytest.mark.parametrize("row,fn,through_view,index,sample,dtype", _inplace_grad_fn_cases())
def test_inplace_grad_fn_name(row, fn, through_view, index, sample, dtype):
    wrapped, arrays, _ = _inplace_run(row, fn, through_view, index, sample, dtype)
    ours = wrapped(*sample.tensors(chainrule, arrays))
    theirs = wrapped(*sample.tensors(torch, arrays))
    assert _grad_fn_name(ours) == _grad_fn_name(theirs)


def test_table_rows_are_well_formed():
    """Rows that check derivatives have an input that requires grad; ids are unique."""
    ids = [row.id for row in ROWS]
    assert len(ids) == len(set(ids))
    for row in ROWS:
        assert row.samples, row.id
        assert set(row.orders) <= {1, 2, 3}, row.id
        if row.orders:
            for s in row.samples:
                assert any(isinstance(a, T) and a.grad for a in s.args), (row.id, s)
