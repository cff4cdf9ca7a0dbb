"""The order in which a backward runs leaves' AccumulateGrad, post-accumulate-grad hooks, tensor
hooks and node hooks, recorded as events and compared with PyTorch running the same code.

A leaf's gradient is accumulated the moment it is final (its AccumulateGrad is ready), not at
the end of backward: the graphs here have leaves whose gradient is final early.
"""

import numpy as np
import pytest
import torch

import chainrule as cr

BOTH = pytest.mark.parametrize("m", [torch, cr], ids=["torch", "chainrule"])


def leaf(m, shape, seed):
    values = np.random.default_rng(seed).standard_normal(shape)
    return m.tensor(values).requires_grad_()


def watch(events, leaves=None, tensors=None, nodes=None):
    """Record the hooks of named leaves (tensor hook, post-accumulate hook), of named
    intermediate tensors (tensor hook) and of the nodes that made them (node post hook)."""
    for name, t in (leaves or {}).items():
        t.register_hook(lambda g, name=name: events.append(("grad", name)))
        t.register_post_accumulate_grad_hook(lambda t, name=name: events.append(("acc", name)))
    for name, t in (tensors or {}).items():
        t.register_hook(lambda g, name=name: events.append(("grad", name)))
    for name, t in (nodes or {}).items():
        t.grad_fn.register_hook(lambda gi, go, name=name: events.append(("node", name)))


def mlp(m, events, inputs=None):
    """Three layers written as torch's linear decomposes (mm, t, add): the last layer's
    weight is final first, the input's gradient last."""
    x = leaf(m, (4, 3), 0)
    ps = {}
    h = x
    for i, (fan_in, fan_out) in enumerate([(3, 5), (5, 5), (5, 2)]):
        w, b = leaf(m, (fan_out, fan_in), 10 + i), leaf(m, (fan_out,), 20 + i)
        ps[f"w{i}"], ps[f"b{i}"] = w, b
        h = h @ w.t() + b
        if i < 2:
            h = m.tanh(h)
    loss = (h * h).sum()
    watch(events, {"x": x, **ps}, nodes={"loss": loss})
    loss.backward(inputs=inputs(x, ps) if inputs else None)
    return [x.grad] + [p.grad for p in ps.values()]


def shared(m, events):
    """A weight used in the first and the last layer is final only after the first layer's
    backward; the last layer's bias is final right after the last layer's."""
    x, w, b1, b2 = leaf(m, (3, 3), 1), leaf(m, (3, 3), 2), leaf(m, (3,), 3), leaf(m, (3,), 4)
    h1 = m.sigmoid(x @ w + b1)
    h2 = m.exp(h1 * 0.5)
    out = (h2 @ w + b2).sum()
    watch(events, {"x": x, "w": w, "b1": b1, "b2": b2}, {"h1": h1, "h2": h2},
          {"h1": h1, "h2": h2})
    out.backward()
    return [x.grad, w.grad, b1.grad, b2.grad]


def late_input(m, events):
    """The input is used at the start and again at the end: its gradient is final only when
    the first layer's backward has run, after every weight's but the first's."""
    x, a, c = leaf(m, (4,), 5), leaf(m, (4,), 6), leaf(m, (4,), 7)
    h = m.sin(x * a)
    h = m.cos(h) * c
    out = (h * x).sum()
    watch(events, {"x": x, "a": a, "c": c}, {"h": h}, {"h": h})
    out.backward()
    return [x.grad, a.grad, c.grad]


def two_roots(m, events):
    """backward of two outputs, one computed from the other."""
    x, w = leaf(m, (3,), 8), leaf(m, (3,), 9)
    y = (x * w).exp()
    z = (y * 2).sum()
    watch(events, {"x": x, "w": w}, {"y": y}, {"y": y})
    m.autograd.backward([z, y.sum()])
    return [x.grad, w.grad]


def retain_and_twice(m, events):
    """The same graph twice (retain_graph), grads accumulating, with retain_grad on the way."""
    x, w = leaf(m, (3,), 11), leaf(m, (3,), 12)
    h = x * w
    h.retain_grad()
    out = (h.exp() * w).sum()
    watch(events, {"x": x, "w": w}, {"h": h}, {"h": h})
    out.backward(retain_graph=True)
    events.append(("again",))
    out.backward()
    return [x.grad, w.grad, h.grad]


def checkpointed(m, events):
    """A reentrant checkpoint in the middle: its leaves are accumulated inside its backward."""
    x, w0, w1, w2 = (leaf(m, (3,), 13), leaf(m, (3,), 14), leaf(m, (3,), 15),
                     leaf(m, (3,), 16))

    def middle(h):
        return m.tanh(h * w1).exp()

    h = m.sin(x * w0)
    h = m.utils.checkpoint.checkpoint(middle, h, use_reentrant=True)
    out = (h * w2).sum()
    watch(events, {"x": x, "w0": w0, "w1": w1, "w2": w2})
    out.backward()
    return [x.grad, w0.grad, w1.grad, w2.grad]


def callbacks(m, events):
    """queue_callback from a post-accumulate hook runs once backward has finished."""
    x, w = leaf(m, (3,), 17), leaf(m, (3,), 18)
    engine = m.autograd.Variable._execution_engine

    def hook(t):
        events.append(("acc", "w"))
        engine.queue_callback(lambda: events.append(("callback", w.grad is not None)))

    w.register_post_accumulate_grad_hook(hook)
    x.register_post_accumulate_grad_hook(lambda t: events.append(("acc", "x")))
    out = ((x * 3).exp() * w).sum()
    out.backward()
    events.append(("returned",))
    return [x.grad, w.grad]


SCENARIOS = {
    "mlp": mlp,
    "mlp_inputs": lambda m, ev: mlp(m, ev, lambda x, ps: [ps["w2"], x, ps["b0"]]),
    "shared_weight": shared,
    "late_input": late_input,
    "two_roots": two_roots,
    "retain_graph": retain_and_twice,
    "reentrant_checkpoint": checkpointed,
    "queue_callback": callbacks,
}


@pytest.mark.parametrize("name", SCENARIOS)
def test_event_order_matches_torch(name):
    ours, theirs = [], []
    grads = SCENARIOS[name](cr, ours)
    expected = SCENARIOS[name](torch, theirs)
    assert ours == theirs
    for g, e in zip(grads, expected):
        if e is None:
            assert g is None
        else:
            np.testing.assert_allclose(g.numpy(), e.numpy(), rtol=1e-12, atol=1e-12)


@BOTH
def test_leaf_accumulated_before_backward_ends(m):
    """The last layer's weight has its .grad while the first layer's backward has not run."""
    x, w0, w1 = leaf(m, (3,), 0), leaf(m, (3,), 1), leaf(m, (3,), 2)
    h = m.exp(x * w0)
    seen = []
    h.register_hook(lambda g: seen.append(w1.grad is not None and w0.grad is None))
    (h * w1).sum().backward()
    assert seen == [True]


@BOTH
def test_queue_callback_outside_backward(m):
    with pytest.raises(RuntimeError, match="Final callbacks can only be installed during "
                                          "backward pass."):
        m.autograd.Variable._execution_engine.queue_callback(lambda: None)


def test_hook_changing_grad_in_place_while_a_node_waits_for_the_same_gradient(like_torch):
    """A leaf accumulated early does not take, as its .grad, a gradient another node still
    waits for: its post-accumulate hook changes .grad in place (as an optimizer in backward)."""
    def scenario(m):
        v, v2 = leaf(m, (3,), 19), leaf(m, (3,), 20)
        z = (v * 2).exp()
        v2.register_post_accumulate_grad_hook(lambda t: [t.grad.zero_()] and None)
        ((z + v2) * 3.0).sum().backward()
        return v.grad, v2.grad

    like_torch(scenario(cr), scenario(torch))


@BOTH
def test_post_accumulate_grad_hook_must_return_none(m):
    w = leaf(m, (3,), 21)
    handle = w.register_post_accumulate_grad_hook(lambda t: t * 2)
    with pytest.raises(RuntimeError, match="Tensor post accumulate grad hooks should return "
                                          "None."):
        (w * 2).sum().backward()
    handle.remove()
    w.register_post_accumulate_grad_hook(lambda t: 1)
    with pytest.raises(TypeError, match="expected Variable, but hook returned 'int'"):
        (w * 2).sum().backward()


@BOTH
def test_post_accumulate_grad_hook_may_return_its_tensor(m):
    """PyTorch's docstring example: an SGD step in the hook, returning add_'s result."""
    v = m.tensor([0.0, 0.0, 0.0], requires_grad=True)
    v.register_post_accumulate_grad_hook(lambda p: p.add_(p.grad, alpha=-0.01))
    v.backward(m.tensor([1.0, 2.0, 3.0]))
    np.testing.assert_array_equal(v.detach().numpy(), np.float32([-0.01, -0.02, -0.03]))


@BOTH
def test_a_root_below_another_root_is_counted_once(m):
    """Outputs of one node given as roots beside an op of them: each edge below counts once."""
    q = leaf(m, (3, 3), 7)
    values, _ = q.max(0)
    (g,) = m.autograd.grad([values, values.exp()], [q], [m.ones(3, dtype=q.dtype)] * 2)
    expected = np.zeros((3, 3))
    arg = np.random.default_rng(7).standard_normal((3, 3)).argmax(0)
    expected[arg, range(3)] = 1 + np.exp(q.detach().numpy().max(0))
    np.testing.assert_allclose(g.numpy(), expected, rtol=1e-12)
