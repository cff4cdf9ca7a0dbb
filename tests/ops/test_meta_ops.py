"""Every op_db row on the meta device, against PyTorch.

The same call runs on meta tensors in both libraries: where PyTorch's meta device gives results,
chainrule's must give the same shapes, dtypes, requires_grad and device, for the outputs and for
the first and second derivatives. Where PyTorch's meta device refuses because the results' shapes
depend on the data, chainrule's must refuse too; where it refuses only because PyTorch has no
meta kernel for the op (or its meta kernel reads a value for a check), chainrule's results must
have the shapes PyTorch computes on the CPU. No values exist on the meta side.
"""

from __future__ import annotations

import numpy as np
import pytest
import torch
from op_db import ROWS, T
from op_db._harness import as_tuple

import chainrule


def _cases():
    return [pytest.param(row, i, sample, id=f"{row.id}-{sample!r}")
            for row in ROWS for i, sample in enumerate(row.samples)]


def _meta_args(lib, sample, arrays: list) -> list:
    out = []
    for a, value in zip(sample.args, arrays):
        t = lib.from_numpy(np.array(value)).to("meta") if lib is torch else \
            chainrule.from_numpy(np.array(value))._to_device("meta")
        out.append(t.requires_grad_() if isinstance(a, T) and a.grad else t)
    return out


def _run(lib, fn, args: list, order: int) -> list[tuple[str, object]]:
    """fn(*args) and its first and second derivatives, with cotangents of ones; a derivative
    that is not connected counts as zeros (whichever way a library represents it), as in
    tests/ops/test_ops.py."""
    outs = as_tuple(fn(*args))
    results = [(f"output {i}", o) for i, o in enumerate(outs)]
    wrt = [a for a in args if isinstance(a, lib.Tensor) and a.requires_grad]
    douts = [o for o in outs if isinstance(o, lib.Tensor) and o.requires_grad]
    if order < 1 or not douts or not wrt:
        return results
    v1 = [lib.ones_like(o).requires_grad_() for o in douts]
    g1 = lib.autograd.grad(douts, wrt, v1, create_graph=order >= 2, allow_unused=True)
    results += [(f"grad of input {i}", lib.zeros_like(w) if g is None else g)
                for i, (g, w) in enumerate(zip(g1, wrt))]
    if order < 2:
        return results
    used = [g for g in g1 if g is not None and g.requires_grad]
    targets = wrt + v1
    if used:
        total = sum((g.sum() for g in used[1:]), used[0].sum())
        g2 = lib.autograd.grad(total, targets, allow_unused=True)
    else:
        g2 = [None] * len(targets)
    results += [(f"second derivative {i}", lib.zeros_like(t) if g is None else g)
                for i, (g, t) in enumerate(zip(g2, targets))]
    return results


def _cpu_args(sample, arrays: list) -> list:
    return [torch.from_numpy(np.array(v)).requires_grad_() if isinstance(a, T) and a.grad
            else torch.from_numpy(np.array(v)) for a, v in zip(sample.args, arrays)]


def _describe(results, device: str | None = None) -> list:
    """Shape, dtype, device and (for outputs) requires_grad of each result."""
    return [(label, tuple(t.shape), str(t.dtype), t.requires_grad and label.startswith("output"),
             device or str(t.device)) if hasattr(t, "shape") else (label, t)
            for label, t in results]


# Ops whose results' shapes depend on the values: the meta device refuses them, as PyTorch's.
_DATA_DEPENDENT = ("nonzero", "argwhere", "unique", "masked_select", "bincount",
                   "repeat_interleave", "Tensor.__getitem__[bool")
# PyTorch's meta kernels that read a value (for a result's shape or only for a check), and ops
# that return a value (equal) or compare storages: here the meta device may refuse too, or give
# the results PyTorch computes on the CPU.
_READS_VALUES = ("Tensor.item() cannot be called", "aten::equal", "aten::is_set_to")


@pytest.mark.parametrize("row,index,sample", _cases())
def test_meta_matches_torch(row, index, sample):
    dtype = "float32" if "float32" in row.dtypes else row.dtypes[0]
    arrays = sample.arrays(row.seed(index), dtype, row.domain)
    order = min(max(row.orders, default=0), 2)
    try:
        theirs = _describe(_run(torch, row.ref, _meta_args(torch, sample, arrays), order))
    except (NotImplementedError, RuntimeError) as refused:
        if any(name in row.id for name in _DATA_DEPENDENT):
            with pytest.raises((NotImplementedError, RuntimeError)):
                _run(chainrule, row.op, _meta_args(chainrule, sample, arrays), order)
            return
        # PyTorch has no meta kernel (or its meta kernel mixes devices): its CPU shapes
        theirs = _describe(_run(torch, row.ref, _cpu_args(sample, arrays), order), "meta")
        if any(word in str(refused) for word in _READS_VALUES):
            try:
                ours = _describe(_run(chainrule, row.op, _meta_args(chainrule, sample, arrays),
                                      order))
            except RuntimeError as err:
                assert "meta" in str(err)
                return
            # a result the row makes from a Python value (torch.tensor(equal(...))) is a CPU one
            assert [o[:-1] for o in ours] == [t[:-1] for t in theirs]
            return
    ours = _describe(_run(chainrule, row.op, _meta_args(chainrule, sample, arrays), order))
    assert ours == theirs
