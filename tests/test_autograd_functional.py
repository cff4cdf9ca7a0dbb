"""chainrule.autograd.functional against torch.autograd.functional: same values and structure."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import chainrule as cr

X = np.array([0.3, -1.2, 2.0])
Y = np.array([[0.5, 1.5], [-0.7, 0.2]])


def one_in(m, x):
    return (x.sin() * x).exp()


def scalar_one_in(m, x):
    return (x**3).sum() + (x[0] * x[1]).tanh()


def two_in(m, x, y):
    return (x[:2] @ y).sin(), x.sum() * y


def scalar_two_in(m, x, y):
    return (x[:2] @ y @ x[1:]) + (y * y).sum()


def _tensors(m, arrays):
    return tuple(m.tensor(a, dtype=m.float64) for a in arrays)


def _flat(value):
    if isinstance(value, tuple):
        return [v for item in value for v in _flat(item)]
    return [value]


def _compare(got, want):
    assert type(got) is tuple if isinstance(want, tuple) else not isinstance(got, tuple)
    if isinstance(want, tuple):
        assert len(got) == len(want)
    got, want = _flat(got), _flat(want)
    assert len(got) == len(want)
    for g, w in zip(got, want):
        assert tuple(g.shape) == tuple(w.shape)
        np.testing.assert_allclose(g.detach().numpy(), w.detach().numpy(), rtol=1e-10, atol=1e-12)


def _call(m, name, fn, arrays, v_arrays, single):
    f = getattr(m.autograd.functional, name)
    inputs = _tensors(m, arrays)
    inputs = inputs[0] if single else inputs
    func = (lambda *a: fn(m, *a))
    if v_arrays is None:
        return f(func, inputs)
    v = _tensors(m, v_arrays)
    return f(func, inputs, v[0] if len(v) == 1 else v)


CASES = {
    "vjp-one": ("vjp", one_in, (X,), (np.array([1.0, -2.0, 0.5]),), True),
    "vjp-two": ("vjp", two_in, (X, Y), (np.array([1.0, 2.0]), np.ones((2, 2))), False),
    "jvp-one": ("jvp", one_in, (X,), (np.array([1.0, -2.0, 0.5]),), True),
    "jvp-two": ("jvp", two_in, (X, Y), (np.array([0.1, 0.2, 0.3]), np.eye(2)), False),
    "vhp-one": ("vhp", scalar_one_in, (X,), (np.array([1.0, 0.5, -1.0]),), True),
    "hvp-two": ("hvp", scalar_two_in, (X, Y), (np.array([1.0, 0.0, 2.0]), np.ones((2, 2))),
                False),
    "jacobian-one": ("jacobian", one_in, (X,), None, True),
    "jacobian-two": ("jacobian", two_in, (X, Y), None, False),
    "hessian-one": ("hessian", scalar_one_in, (X,), None, True),
    "hessian-two": ("hessian", scalar_two_in, (X, Y), None, False),
}


@pytest.mark.parametrize("case", CASES)
def test_matches_torch(case):
    name, fn, arrays, v_arrays, single = CASES[case]
    got = _call(cr, name, fn, arrays, v_arrays, single)
    want = _call(torch, name, fn, arrays, v_arrays, single)
    _compare(got, want)


def test_create_graph_keeps_the_result_differentiable():
    x = cr.tensor(X, dtype=cr.float64, requires_grad=True)
    _, g = cr.autograd.functional.vjp(lambda a: (a**3).sum(), x, create_graph=True)
    (h,) = cr.autograd.grad(g.sum(), x)
    np.testing.assert_allclose(h.numpy(), 6 * X)


def test_v_is_required_for_non_scalar_outputs():
    with pytest.raises(RuntimeError, match="v can only be None"):
        cr.autograd.functional.vjp(lambda a: a * 2, cr.tensor(X))
