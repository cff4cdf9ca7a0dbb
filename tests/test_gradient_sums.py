"""The engine adds a node's gradients that meet at one input in place (x * x), but never into a
gradient something else can still see: a node hook holding the outputs, a tensor hook, the
same tensor handed to two inputs. Values against torch."""

import numpy as np
import pytest
import torch

import chainrule as cr
from chainrule.utils._python_dispatch import TorchDispatchMode

BOTH = pytest.mark.parametrize("m", [torch, cr], ids=["torch", "chainrule"])


def x0(n=6):
    return np.random.default_rng(3).standard_normal(n)


def run(m, fn, n=6):
    x = m.tensor(x0(n), requires_grad=True)
    fn(m, x).sum().backward()
    return x.grad.detach().numpy().copy()


CASES = {
    "x * x": lambda m, x: x * x,
    "x * x + x": lambda m, x: x * x + x,
    "(x * x) * x": lambda m, x: (x * x) * x,
    "x + x": lambda m, x: x + x,
    "x ** 2 * x": lambda m, x: x ** 2 * x,
    "exp(x) * sin(x) + x * x": lambda m, x: m.exp(x) * m.sin(x) + x * x,
}


@pytest.mark.parametrize("n", [6, 300_000], ids=["small", "large"])
@pytest.mark.parametrize("name", list(CASES))
def test_gradients_meeting_at_one_input_equal_torch(name, n):
    np.testing.assert_allclose(run(cr, CASES[name], n), run(torch, CASES[name], n), rtol=1e-12)


class Names(TorchDispatchMode):
    def __init__(self):
        super().__init__()
        self.names = []

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        self.names.append(str(func))
        return func(*args, **(kwargs or {}))


def test_the_sum_of_x_times_x_is_in_place():
    """No add kernel: the second gradient goes into the first (an out-of-place sum would be one)."""
    x = cr.tensor(x0(), requires_grad=True)
    loss = (x * x).sum()
    with Names() as mode:
        loss.backward()
    assert not any("add" in name for name in mode.names), mode.names
    np.testing.assert_array_equal(x.grad.numpy(), 2 * x0())


@BOTH
def test_a_node_hook_keeping_the_outputs_sees_them_unchanged(m):
    x = m.tensor(x0(), requires_grad=True)
    y = x * x
    kept = []
    y.grad_fn.register_hook(lambda grad_inputs, grad_outputs: kept.append(grad_inputs))
    y.sum().backward()
    assert len(kept[0]) == 2
    for g in kept[0]:
        np.testing.assert_array_equal(g.numpy(), x0())
    np.testing.assert_array_equal(x.grad.numpy(), 2 * x0())


@BOTH
def test_a_tensor_hook_keeping_the_gradient_sees_it_unchanged(m):
    x = m.tensor(x0(), requires_grad=True)
    y = x * 3.0
    seen = []
    y.register_hook(lambda g: seen.append(g))
    (y * y).sum().backward()
    np.testing.assert_allclose(seen[0].numpy(), 6 * x0())
    np.testing.assert_allclose(x.grad.numpy(), 18 * x0())


@BOTH
def test_second_order_through_x_times_x(m):
    x = m.tensor(x0(), requires_grad=True)
    (g,) = m.autograd.grad((x * x * x).sum(), x, create_graph=True)
    (h,) = m.autograd.grad(g.sum(), x)
    np.testing.assert_allclose(h.numpy(), 6 * x0(), rtol=1e-12)
