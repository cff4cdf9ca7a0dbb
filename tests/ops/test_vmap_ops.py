"""Every op_db row under vmap equals the row looped over the batch (float64), and batching rules
run without the per-example fallback unless the registry says the op has none.

Float arguments get a batch of 3 in front (and, in a second pass, at the end); constant
arguments (indices, masks) stay unbatched. The first derivative is checked too: ``vmap`` of the
vector-Jacobian product equals the products looped over the batch.
"""

from __future__ import annotations

import re
import warnings

import numpy as np
import pytest
from op_db import ROWS, S, T
from op_db._harness import as_tuple

import chainrule
from chainrule import _batching
from chainrule.func import vmap

B = 3


def _cases():
    out = []
    for row in ROWS:
        for i, sample in enumerate(row.samples):
            if any(isinstance(a, T) for a in sample.args):
                out.append(pytest.param(row, i, sample, id=f"{row.id}-{sample!r}"))
    return out


def _batch_inputs(row, index: int, sample: S, last: bool):
    """Per-example arguments (B lists) and the batched arguments with their in_dims."""
    per_example = [sample.arrays(f"{row.seed(index)}/{b}", "float64", row.domain)
                   for b in range(B)]
    batched, dims = [], []
    for k, a in enumerate(sample.args):
        if isinstance(a, T):
            stacked = np.stack([ex[k] for ex in per_example], axis=-1 if last else 0)
            batched.append(chainrule.from_numpy(np.ascontiguousarray(stacked)))
            dims.append(-1 if last else 0)
        else:
            batched.append(chainrule.from_numpy(np.array(per_example[0][k])))
            dims.append(None)
            for ex in per_example[1:]:
                ex[k] = per_example[0][k]
    return per_example, batched, tuple(dims)


def _looped(row, per_example):
    outs = [as_tuple(row.op(*[chainrule.from_numpy(np.array(a)) for a in ex]))
            for ex in per_example]
    return [np.stack([np.asarray(o[j]._data) for o in outs]) for j in range(len(outs[0]))]


def _rule_kinds(row) -> set:
    return {_batching.rule_kind(chainrule.ops.REGISTRY[r]) for r in row.records}


@pytest.mark.parametrize("last", [False, True], ids=["dim0", "dim-1"])
@pytest.mark.parametrize("row,index,sample", _cases())
def test_vmap_equals_loop(row, index, sample, last):
    per_example, batched, dims = _batch_inputs(row, index, sample, last)
    if row.vmap_error:  # PyTorch refuses this batching
        with pytest.raises(RuntimeError, match=re.escape(row.vmap_error)):
            vmap(row.op, in_dims=dims)(*batched)
        return
    want = _looped(row, per_example)
    _batching._warned.clear()  # the fallback warns once per op and process: see every one here
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        got = as_tuple(vmap(row.op, in_dims=dims)(*batched))
    assert len(got) == len(want)
    for g, w in zip(got, want):
        assert tuple(g.shape) == w.shape
        np.testing.assert_allclose(np.asarray(g._data), w, rtol=1e-10, atol=1e-12)
    fallbacks = [str(w.message) for w in caught if "performance drop" in str(w.message)]
    if "fallback" not in _rule_kinds(row):
        assert not fallbacks, fallbacks


def _vjp_cases():
    """Rows with a first derivative, a differentiable argument, and a batching vmap accepts."""
    return [c for c in _cases()
            if 1 in c.values[0].orders and not c.values[0].vmap_error
            and any(isinstance(a, T) and a.grad for a in c.values[2].args)]


@pytest.mark.parametrize("row,index,sample", _vjp_cases())
def test_vmap_of_vjp_equals_loop(row, index, sample):
    """vmap over examples of the gradient of sum(output * seed) equals the looped gradients."""
    per_example, batched, dims = _batch_inputs(row, index, sample, last=False)
    wrt = [k for k, a in enumerate(sample.args) if isinstance(a, T) and a.grad]

    def first(*args):
        args = list(args)
        for k in wrt:
            args[k] = args[k].detach().requires_grad_()
        outs = [o for o in as_tuple(row.op(*args)) if o.requires_grad]
        total = sum((o * o.detach().cos()).sum() for o in outs)
        grads = chainrule.autograd.grad(total, [args[k] for k in wrt], allow_unused=True)
        return tuple(chainrule.zeros_like(args[k]) if g is None else g
                     for g, k in zip(grads, wrt))

    want = [np.stack(col) for col in zip(*[
        [np.asarray(g._data) for g in first(*[chainrule.from_numpy(np.array(a)) for a in ex])]
        for ex in per_example])]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        got = vmap(first, in_dims=dims)(*batched)
    for g, w in zip(got, want):
        np.testing.assert_allclose(np.asarray(g._data), w, rtol=1e-9, atol=1e-11)
