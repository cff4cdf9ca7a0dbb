"""torch.sparse with dense tensors, against PyTorch: mm and addmm compute, the sparse-only
kernels refuse a dense input with PyTorch's exception, and the invariants switch and gradcheck's
decorator behave as PyTorch's."""

from __future__ import annotations

import inspect

import numpy as np
import pytest
import torch

import chainrule as cr
import chainrule.sparse as ours
from chainrule.autograd.gradcheck import gradcheck

RNG = np.random.default_rng(2)
A, B, C = RNG.standard_normal((2, 3)), RNG.standard_normal((3, 4)), RNG.standard_normal((2, 4))


@pytest.mark.parametrize("call", [
    lambda m, a, b, c: m.sparse.mm(a, b),
    lambda m, a, b, c: m.sparse.addmm(c, a, b),
    lambda m, a, b, c: m.sparse.addmm(c, a, b, beta=0.5, alpha=-2.0),
], ids=["mm", "addmm", "addmm beta alpha"])
def test_dense_products_and_gradients_as_torch(call, like_torch) -> None:
    results = []
    for m in (cr, torch):
        a, b = m.tensor(A, requires_grad=True), m.tensor(B, requires_grad=True)
        c = m.tensor(C, requires_grad=True)
        out = call(m, a, b, c)
        out.pow(2).sum().backward()
        results.append((out.detach(), a.grad, b.grad, c.grad))
    like_torch(results[0], results[1], rtol=1e-12, atol=1e-12)


def _error_type(fn):
    with pytest.raises(Exception) as info:
        fn()
    return info.type, str(info.value).split(" backend")[0]


@pytest.mark.parametrize("call", [
    lambda m, x: m.sparse.sum(x),
    lambda m, x: m.sparse.sum(x, 0),
    lambda m, x: m.sparse.sum(x, dtype=m.float32),
    lambda m, x: m.sparse.softmax(x, 1),
    lambda m, x: m.sparse.log_softmax(x, 0, dtype=m.float32),
    lambda m, x: m.sparse.sampled_addmm(x, x, x.T),
    lambda m, x: m.sparse.mm(x, x.T, "sum"),
    lambda m, x: m.sparse.addmm(x, x, x.T, 0.5),
], ids=["sum", "sum dim", "sum dtype", "softmax", "log_softmax", "sampled_addmm", "mm reduce",
        "addmm positional beta"])
def test_dense_inputs_refused_as_torch(call) -> None:
    got = _error_type(lambda: call(cr, cr.tensor(A)))
    want = _error_type(lambda: call(torch, torch.tensor(A)))
    assert got[0] is want[0]
    if got[0] is not TypeError:  # PyTorch's argument parser names its own function
        assert got[1] == want[1]


def test_signatures_as_torch() -> None:
    params = inspect.signature(ours.sum).parameters
    assert list(params) == list(inspect.signature(torch.sparse.sum).parameters)
    assert list(inspect.signature(ours.check_sparse_tensor_invariants).parameters) == ["enable"]


@pytest.mark.parametrize("switch", [ours.check_sparse_tensor_invariants,
                                    torch.sparse.check_sparse_tensor_invariants],
                         ids=["chainrule", "torch"])
def test_invariants_switch_as_torch(switch) -> None:
    states = [switch.is_enabled()]
    with switch():
        states.append(switch.is_enabled())
        with switch(False):
            states.append(switch.is_enabled())
    states.append(switch.is_enabled())
    switch.enable()
    states.append(switch.is_enabled())
    switch.disable()

    @switch(enable=True)
    def inside():
        return switch.is_enabled()

    states += [inside(), switch.is_enabled()]
    manager = switch()
    with manager:
        with pytest.raises(RuntimeError, match="already activated"):
            manager.__enter__()
    assert states == [False, True, False, False, True, True, False]


def test_as_sparse_gradcheck_checks_dense_functions() -> None:
    check = ours.as_sparse_gradcheck(gradcheck)
    x = cr.tensor(A, requires_grad=True)
    assert check(lambda t: (t * t).sum(1), (x,), masked=True)
    assert check(lambda t: t.exp(), x)
