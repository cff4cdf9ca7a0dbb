"""A convolution's bias gradient is one op (the sum over the batch and the positions): its values,
graph and derivatives of the next order match torch's in 1-3 spatial dims, and under vmap."""

from __future__ import annotations

import numpy as np
import pytest
import torch
import torch.nn.functional as TF

import chainrule
import chainrule.nn.functional as F


@pytest.mark.parametrize(("nd", "transposed"), [(1, False), (2, False), (3, False), (2, True)])
def test_bias_gradient_and_its_derivatives_match_torch(nd, transposed):
    rng = np.random.default_rng(nd)
    x = rng.standard_normal((2, 4) + (5,) * nd)
    w = rng.standard_normal((4, 3) + (3,) * nd) if transposed else \
        rng.standard_normal((3, 4) + (3,) * nd)
    b = rng.standard_normal(3)
    name = f"conv_transpose{nd}d" if transposed else f"conv{nd}d"
    results = []
    for lib, f in ((chainrule, F), (torch, TF)):
        args = [lib.tensor(a, requires_grad=True) for a in (x, w, b)]
        y = getattr(f, name)(*args, padding=1)
        gb = lib.autograd.grad((y * y).sum(), args[2], create_graph=True)[0]
        second = lib.autograd.grad((gb * gb).sum(), args)
        results.append((type(gb.grad_fn).__name__, [gb, *second]))
    assert results[0][0] == results[1][0]
    for got, want in zip(results[0][1], results[1][1], strict=True):
        np.testing.assert_allclose(got.detach().numpy(), want.detach().numpy(), rtol=1e-10,
                                   atol=1e-10)


def test_bias_gradient_gradcheck_and_gradgradcheck():
    rng = np.random.default_rng(5)
    x, w, b = (chainrule.tensor(rng.standard_normal(s), requires_grad=True)
               for s in ((2, 3, 4, 4), (2, 3, 3, 3), (2,)))

    def f(b):
        return F.conv2d(x, w, b, padding=1)

    assert chainrule.autograd.gradcheck(f, (b,))
    assert chainrule.autograd.gradgradcheck(f, (b,))


def test_per_example_bias_gradients_under_vmap():
    rng = np.random.default_rng(6)
    x = rng.standard_normal((5, 1, 2, 6, 6))
    w, b = rng.standard_normal((3, 2, 3, 3)), rng.standard_normal(3)
    results = []
    for lib, f in ((chainrule, F), (torch, TF)):
        def loss(b, x, lib=lib, f=f):
            return f.conv2d(x, lib.tensor(w), b, padding=1).pow(2).sum()

        results.append(lib.func.vmap(lib.func.grad(loss), in_dims=(None, 0))(
            lib.tensor(b), lib.tensor(x)))
    np.testing.assert_allclose(results[0].numpy(), results[1].numpy(), rtol=1e-10, atol=1e-10)
