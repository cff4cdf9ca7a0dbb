"""relu's gradient is one op (PyTorch's threshold_backward): its graph, its values at the kink and
at NaN, and its derivatives of every order match torch's."""

from __future__ import annotations

import numpy as np
import torch

import chainrule


def _graph(lib, x):
    x = lib.tensor(x, requires_grad=True)
    y = lib.relu(x)
    v = lib.tensor(np.linspace(-1.0, 2.0, x.numel()).reshape(tuple(x.shape)), requires_grad=True)
    (g,) = lib.autograd.grad(y, x, v, create_graph=True)
    names = (type(g.grad_fn).__name__,
             [type(f).__name__ if f is not None else None for f, _ in g.grad_fn.next_functions])
    gx, gv = lib.autograd.grad((g * g).sum(), (x, v))
    return g, gx, gv, names


def test_relu_gradient_graph_and_second_derivatives_match_torch():
    x = np.array([[-1.5, 0.0, 0.5], [2.0, -0.0, 3.0]])
    ours, theirs = _graph(chainrule, x), _graph(torch, x)
    assert ours[3] == theirs[3]  # ThresholdBackwardBackward0 -> (the seed's, ReluBackward0)
    for got, want in zip(ours[:3], theirs[:3], strict=True):
        np.testing.assert_array_equal(got.detach().numpy(), want.detach().numpy())


def test_relu_gradient_of_the_gradient_with_respect_to_x_is_zero():
    ours = chainrule.tensor([-1.0, 0.0, 2.0], requires_grad=True)
    theirs = torch.tensor([-1.0, 0.0, 2.0], requires_grad=True)
    results = []
    for lib, x in ((chainrule, ours), (torch, theirs)):
        (g,) = lib.autograd.grad(lib.relu(x).sum(), x, create_graph=True)
        results.append(lib.autograd.grad(g.sum(), x)[0])
    np.testing.assert_array_equal(results[0].numpy(), results[1].numpy())


def test_relu_gradient_dtypes_and_forward_mode():
    for dtype in (np.float32, np.float64):
        x = np.array([-1.0, 0.0, 0.25, 4.0], dtype=dtype)
        t = np.array([1.0, 2.0, 3.0, 4.0], dtype=dtype)
        ours = chainrule.func.jvp(chainrule.relu, (chainrule.tensor(x),), (chainrule.tensor(t),))
        theirs = torch.func.jvp(torch.relu, (torch.tensor(x),), (torch.tensor(t),))
        for got, want in zip(ours, theirs, strict=True):
            assert got.dtype == (chainrule.float32 if dtype == np.float32 else chainrule.float64)
            np.testing.assert_array_equal(got.numpy(), want.numpy())
        xs = chainrule.tensor(x, requires_grad=True)
        chainrule.relu(xs).backward(chainrule.tensor(t))
        xt = torch.tensor(x, requires_grad=True)
        torch.relu(xt).backward(torch.tensor(t))
        assert xs.grad.dtype == (chainrule.float32 if dtype == np.float32 else chainrule.float64)
        np.testing.assert_array_equal(xs.grad.numpy(), xt.grad.numpy())


def test_relu_gradcheck_and_gradgradcheck():
    x = chainrule.tensor([[-1.3, 0.4, 2.1], [0.7, -0.2, 1.5]], dtype=chainrule.float64,
                         requires_grad=True)
    assert chainrule.autograd.gradcheck(chainrule.relu, (x,))
    assert chainrule.autograd.gradgradcheck(chainrule.relu, (x,))


def test_relu_gradient_is_zero_where_the_output_is_not_positive_even_for_nonfinite_grads():
    x = np.array([-1.0, 0.0, 2.0, -3.0, 1.0], dtype=np.float32)
    g = np.array([np.inf, np.nan, np.nan, -np.inf, 2.0], dtype=np.float32)
    grads = []
    for lib in (chainrule, torch):
        xt = lib.tensor(x, requires_grad=True)
        lib.relu(xt).backward(lib.tensor(g))
        grads.append(xt.grad.numpy())
    np.testing.assert_array_equal(grads[0], grads[1])  # [0, 0, nan, 0, 2]
    assert grads[0].dtype == np.float32
