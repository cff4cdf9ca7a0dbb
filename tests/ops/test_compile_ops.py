"""Every op_db row under chainrule.compile: a function calling the op and taking gradients of its
outputs is captured on two calls with different values and replayed on a third, bit for bit
equal to eager. A row whose kernels read values outside a recorded kernel (a raw-NumPy index or
mask computed from the data) shows up as two captures that differ."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import chainrule
from tests.op_db import ROWS

# Rows that do not become programs, each with the reason: they hand a tensor's value to Python
# (a graph break: eagerly, with a warning), compute an index or a value from the data outside a
# recorded kernel (two captures differ: found, not replayed).
_BOOL = "bool(tensor)"
_ITEM = "Tensor.item()"
_DIFFER = "captures differ in"
EAGER = {
    "allclose": _BOOL, "allclose[method]": _BOOL, "istft": _BOOL, "istft[two-sided]": _BOOL,
    "istft[complex spectrum]": _BOOL,
    "Tensor.__contains__": _BOOL, "Tensor.__complex__": _ITEM, "Tensor.__long__": _ITEM,
    "Tensor.__getitem__[bool mask from input]": "captures differ in the kernels",
    **{name: _DIFFER for name in (
        "diagonal[view write]", "Tensor.view[own dtype]", "Tensor.view[bits as int]",
        "Tensor.t_[through a view]", "Tensor.scatter_reduce_",
        "Tensor.scatter_reduce_[prod through a view]", "histogramdd", "Tensor.__idiv__",
        "nn.functional.multilabel_margin_loss[mean]",
        "nn.functional.multilabel_margin_loss[sum]",
        "nn.functional.multilabel_margin_loss[none]")},
}


def _float_outputs(result):
    items = result if isinstance(result, tuple | list) else (result,)
    return [t for t in items if isinstance(t, chainrule.Tensor)]


def _program(row, sample):
    def f(*args):
        outs = _float_outputs(row.op(*args))
        wanted = [o for o in outs if o.requires_grad]
        inputs = [a for a in args if isinstance(a, chainrule.Tensor) and a.requires_grad]
        grads = []
        if wanted and inputs and row.orders:  # rows without derivatives: values only
            loss = sum((o.real if o.is_complex() else o).sum() for o in wanted)
            grads = chainrule.autograd.grad(loss, inputs, allow_unused=True)
        return [o.detach() for o in outs], [g for g in grads if g is not None]

    return f


def _args(row, sample, k: int):
    arrays = sample.arrays(row.seed(0) + f"/compile{k}", "float64", row.domain)
    return sample.tensors(chainrule, arrays)


@pytest.mark.parametrize("row", ROWS, ids=lambda r: r.id)
def test_op_replays_like_eager(row):
    sample = row.samples[0]
    f = _program(row, sample)
    compiled = chainrule.compile(f)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        for k in range(3):
            args = _args(row, sample, k)
            chainrule.manual_seed(k)
            want = f(*args)
            chainrule.manual_seed(k)
            got = compiled(*args)
            for a, b in zip(want[0] + list(want[1]), got[0] + list(got[1])):
                assert a.dtype == b.dtype and a.shape == b.shape
                np.testing.assert_array_equal(a.numpy(), b.numpy())
    reason = compiled._eager_reason or compiled._why
    if row.id in EAGER:
        assert not compiled._programs and EAGER[row.id] in reason, reason
    else:
        assert reason is None and len(compiled._programs) == 1, (
            reason, [str(w.message) for w in caught])
