"""The reverse-mode engine, checked against PyTorch running the same code.

Most tests are written once against a module ``m`` and run with ``m = chainrule`` and
``m = torch``: either the results are compared (``like_torch``), or the test is parametrised over
both libraries so that the torch row proves the expectation is PyTorch's.
"""

import gc
import weakref

import numpy as np
import pytest
import torch

import chainrule as cr

BOTH = pytest.mark.parametrize("m", [torch, cr], ids=["torch", "chainrule"])
NON_LEAF_GRAD_WARNING = pytest.mark.filterwarnings("ignore:The .grad attribute of a Tensor")

X = [0.5, -1.3, 2.0]
Y = [1.5, 0.7, -0.4]


def const(m, values, dtype="float64"):
    """A tensor holding exactly these values (built from NumPy, so no float32 rounding)."""
    return m.tensor(np.asarray(values, dtype=dtype))


def leaf(m, values, dtype="float64"):
    return const(m, values, dtype).requires_grad_()


def run(scenario):
    """The scenario's results with chainrule and with torch."""
    return scenario(cr), scenario(torch)


# ---- first-order gradients through a graph ------------------------------------------------------

GRAPHS = {
    "diamond": lambda m, x, y: (x * y + x * x).sum(),
    "reuse": lambda m, x, y: (x.sin() * x.cos() + x).sum() * y.sum(),
    "chain": lambda m, x, y: m.tanh(m.exp(x) / (1 + y * y)).mean(),
    "outer": lambda m, x, y: (x.reshape(3, 1) @ y.reshape(1, 3)).sigmoid().sum(),
    "broadcast": lambda m, x, y: (x.reshape(3, 1) - y).abs().sum(),
    "index": lambda m, x, y: (x[0] * y[1:] + x[[2, 2]] * y[y > 0][:2]).sum(),
    "where": lambda m, x, y: m.where(x > y, x * y, y - x).sum(),
    "pow": lambda m, x, y: (x.abs() ** y).sum() + (2 ** y).sum() + (x ** 3).sum(),
    "views": lambda m, x, y: (x.unsqueeze(0).expand(2, 3).transpose(0, 1).reshape(6)
                              * y.reshape(3, 1).expand(3, 2).flatten()).sum(),
    "unused_branch": lambda m, x, y: (x * 2).sum() + (y * 0).sum(),
    "clamp_relu": lambda m, x, y: (x.clamp(min=-1.0, max=1.0) + (x * y).relu()).sum(),
    "mean_dims": lambda m, x, y: (x.reshape(3, 1) * y).mean(0).sum() + (x * y).mean(),
}


@pytest.mark.parametrize("name", GRAPHS)
def test_gradients_match_torch(name, like_torch):
    def scenario(m):
        x, y = leaf(m, X), leaf(m, Y)
        GRAPHS[name](m, x, y).backward()
        return x.grad, y.grad

    like_torch(*run(scenario))


def test_grad_accumulates_across_backward_calls(like_torch):
    def scenario(m):
        x = leaf(m, X)
        (x * x).sum().backward()
        first = x.grad
        after_one = first.clone()
        (x.sin() * 3).sum().backward()
        accumulated_in_place = x.grad is first
        x.grad.zero_()
        (x * 5).sum().backward()
        after_zero = x.grad.clone()
        x.grad = None
        x.exp().sum().backward()
        return after_one, accumulated_in_place, after_zero, x.grad

    like_torch(*run(scenario))


@NON_LEAF_GRAD_WARNING
def test_non_leaf_grad_is_none_unless_retained(like_torch):
    def scenario(m):
        x = leaf(m, X)
        y = x * 2
        z = y.sin()
        z.retain_grad()
        w = z * z
        w.retain_grad()
        w.sum().backward()
        return (y.grad, z.grad, w.grad, x.is_leaf, y.is_leaf, y.retains_grad, z.retains_grad,
                x.grad)

    ours, theirs = run(scenario)
    assert ours[0] is None
    like_torch(ours, theirs)


@BOTH
def test_retain_grad_on_leaf_is_a_no_op(m):
    x = leaf(m, X)
    x.retain_grad()
    (x * 2).sum().backward()
    assert x.grad.tolist() == [2.0, 2.0, 2.0]
    assert not x.retains_grad


# ---- freeing the graph --------------------------------------------------------------------------

# Whether a second backward through the same graph fails depends on whether a node saved anything.
SECOND_BACKWARD = [
    ("exp", lambda x: x.exp(), True),
    ("mul_scalar", lambda x: x * 2, True),
    ("mul", lambda x: x * x, True),
    ("pow", lambda x: x ** 2, True),
    ("sin", lambda x: x.sin(), True),
    ("div", lambda x: x / 2, True),
    ("add_scalar", lambda x: x + 1, False),
    ("neg", lambda x: -x, False),
    ("view", lambda x: x.view(3, 1), False),
    ("clone", lambda x: x.clone(), False),
]


@BOTH
@pytest.mark.parametrize("name,fn,saves", SECOND_BACKWARD, ids=[r[0] for r in SECOND_BACKWARD])
def test_second_backward_through_freed_graph(m, name, fn, saves):
    x = leaf(m, X)
    y = fn(x).sum()
    y.backward()
    once = x.grad.clone()
    if saves:
        with pytest.raises(RuntimeError, match=r"retain_graph=True"):
            y.backward()
    else:
        y.backward()
        assert x.grad.tolist() == (2 * once).tolist()


@BOTH
def test_retain_graph_allows_a_second_backward_then_frees(m):
    x = leaf(m, X)
    y = (x * x).exp().sum()
    y.backward(retain_graph=True)
    once = x.grad.clone()
    y.backward(retain_graph=True)
    np.testing.assert_allclose(x.grad.numpy(), 2 * once.numpy(), rtol=1e-15)
    y.backward()
    np.testing.assert_allclose(x.grad.numpy(), 3 * once.numpy(), rtol=1e-15)
    with pytest.raises(RuntimeError, match=r"retain_graph=True"):
        y.backward()


@BOTH
def test_autograd_grad_frees_the_graph_too(m):
    x = leaf(m, X)
    y = x.sin().sum()
    m.autograd.grad(y, x)
    with pytest.raises(RuntimeError, match=r"retain_graph=True"):
        y.backward()


@BOTH
def test_create_graph_retains_the_graph(m):
    x = leaf(m, X)
    y = x.sin().sum()
    (g,) = m.autograd.grad(y, x, create_graph=True)
    y.backward()
    np.testing.assert_allclose(x.grad.detach().numpy(), g.detach().numpy(), rtol=1e-15)


# ---- higher order -------------------------------------------------------------------------------

HIGHER = {
    "sin_of_square": lambda m, x: m.sin(x ** 2),
    "exp_times_x": lambda m, x: m.exp(x) * x,
    "tanh": lambda m, x: m.tanh(x),
    "rational": lambda m, x: x ** 3 / (1 + x * x),
    "sigmoid": lambda m, x: m.sigmoid(2 * x),
    "log_sqrt": lambda m, x: m.log(x * x + 1) * m.sqrt(x * x + 2),
    "tensor_power": lambda m, x: (x * x + 1) ** x,
    "cos_over": lambda m, x: m.cos(x) / (x * x + 1),
    "mean_of_outer": lambda m, x: (x.reshape(3, 1) * x).mean(0) ** 2,
}


@pytest.mark.parametrize("name", HIGHER)
def test_second_and_third_derivatives(name, like_torch):
    def scenario(m):
        x = leaf(m, X)
        derivatives = [HIGHER[name](m, x)]
        for _ in range(3):
            (g,) = m.autograd.grad(derivatives[-1].sum(), x, create_graph=True)
            derivatives.append(g)
        return derivatives

    like_torch(*run(scenario), rtol=1e-9)


def test_mixed_second_partials(like_torch):
    def scenario(m):
        x, y = leaf(m, X), leaf(m, Y)
        f = (m.sin(x * y) + x * x * y).sum()
        gx, gy = m.autograd.grad(f, (x, y), create_graph=True)
        (gxy,) = m.autograd.grad(gx.sum(), y, retain_graph=True)
        (gyx,) = m.autograd.grad(gy.sum(), x)
        return gx, gy, gxy, gyx

    like_torch(*run(scenario))


@pytest.mark.filterwarnings("ignore:Using backward\\(\\) with create_graph=True")
def test_backward_with_create_graph_makes_grad_differentiable(like_torch):
    def scenario(m):
        x = leaf(m, X)
        (x ** 3).sum().backward(create_graph=True)
        first = x.grad
        has_graph = first.grad_fn is not None
        x.grad = None
        first.sum().backward()
        return first, has_graph, x.grad

    like_torch(*run(scenario))


# ---- autograd.grad ------------------------------------------------------------------------------


@BOTH
def test_grad_unused_input_raises_unless_allowed(m):
    x, y = leaf(m, X), leaf(m, Y)
    with pytest.raises(RuntimeError, match="appears to not have been used in the graph"):
        m.autograd.grad((x * x).sum(), (x, y), retain_graph=True)
    gx, gy = m.autograd.grad((x * x).sum(), (x, y), allow_unused=True)
    assert gy is None
    assert gx.tolist() == [1.0, -2.6, 4.0]


@BOTH
def test_grad_materialize_grads_gives_zeros(m):
    x, y = leaf(m, X), leaf(m, [[1.0, 2.0]])
    gx, gy = m.autograd.grad((x * x).sum(), (x, y), materialize_grads=True)
    assert gx.tolist() == [1.0, -2.6, 4.0]
    assert gy.tolist() == [[0.0, 0.0]]
    assert gy.dtype == m.float64


def test_grad_outputs_weight_each_output(like_torch):
    def scenario(m):
        x = leaf(m, X)
        v = const(m, [[1.0, -2.0, 0.5], [3.0, 0.0, 1.0]])
        y = x.reshape(1, 3).exp() * const(m, [[1.0], [2.0]])
        return m.autograd.grad(y, x, grad_outputs=v)

    like_torch(*run(scenario))


def test_grad_of_several_outputs_and_inputs(like_torch):
    def scenario(m):
        x, y = leaf(m, X), leaf(m, Y)
        scalar = (x * y).sum()
        vector = x.sin() * y
        v = const(m, [2.0, -1.0, 0.5])
        together = m.autograd.grad([scalar, vector], [x, y], grad_outputs=[None, v],
                                   retain_graph=True)
        apart = [m.autograd.grad(scalar, [x, y], retain_graph=True),
                 m.autograd.grad(vector, [x, y], v)]
        return together, apart, x.grad, y.grad

    ours, theirs = run(scenario)
    like_torch(ours, theirs)
    (tx, ty), ((sx, sy), (vx, vy)) = ours[0], ours[1]
    np.testing.assert_allclose(tx.numpy(), (sx + vx).numpy(), rtol=1e-15)
    np.testing.assert_allclose(ty.numpy(), (sy + vy).numpy(), rtol=1e-15)


def test_grad_with_respect_to_non_leaf_tensors(like_torch):
    def scenario(m):
        x = leaf(m, X)
        h = x * 2
        k = h.sin()
        out = (k * h).sum()
        return m.autograd.grad(out, [h, k, x])

    like_torch(*run(scenario))


@BOTH
def test_grad_errors(m):
    x = leaf(m, X)
    plain = const(m, X)
    with pytest.raises(RuntimeError, match="does not require grad"):
        m.autograd.grad((x * plain).sum(), plain)
    with pytest.raises(RuntimeError, match="does not require grad and does not have a grad_fn"):
        m.autograd.grad(plain.sum(), x)
    with pytest.raises(RuntimeError, match="Mismatch in shape"):
        m.autograd.grad(x * 2, x, grad_outputs=m.ones(2, dtype=m.float64))


# ---- backward(inputs=...) and backward's gradient -----------------------------------------------


@NON_LEAF_GRAD_WARNING
def test_backward_inputs_limits_accumulation(like_torch):
    def scenario(m):
        x, y = leaf(m, X), leaf(m, Y)
        h = x * y
        out = (h * h).sum()
        out.backward(inputs=[x], retain_graph=True)
        only_x = (x.grad.clone(), y.grad)
        out.backward(inputs=y, retain_graph=True)
        out.backward(inputs=[h])
        return only_x, x.grad, y.grad, h.grad

    like_torch(*run(scenario))


def test_autograd_backward_function_form(like_torch):
    def scenario(m):
        x, y = leaf(m, X), leaf(m, Y)
        a, b = x * y, (x - y).sum()
        m.autograd.backward([a, b], [const(m, [1.0, 2.0, 3.0]), None])
        return x.grad, y.grad

    like_torch(*run(scenario))


@BOTH
def test_implicit_gradient_only_for_scalar_outputs(m):
    x = leaf(m, X)
    with pytest.raises(RuntimeError, match="grad can be implicitly created only for scalar"):
        (x * 2).backward()
    (x[:1] * 2).backward()  # one element, shape (1,): implicit gradient of ones
    (x.reshape(3, 1)[1:2] * 3).backward()
    assert x.grad.tolist() == [2.0, 3.0, 0.0]
    (x * 2).backward(const(m, [1.0, 0.0, -1.0]))
    assert x.grad.tolist() == [4.0, 3.0, -2.0]


def test_gradient_reduced_to_broadcast_input_shape_and_dtype(like_torch):
    def scenario(m):
        a = leaf(m, [[1.0], [2.0], [3.0]])  # (3, 1) float64
        b = leaf(m, [0.5, -1.0, 2.0, 4.0], "float32")  # (4,)
        s = leaf(m, 3.0, "float32")  # ()
        r = leaf(m, [[2.0, 1.0, 0.5, 1.5]], "float32")  # (1, 4)
        out = (a * b + s) * r - s * s
        (out * out).sum().backward()
        return out, a.grad, b.grad, s.grad, r.grad

    like_torch(*run(scenario), rtol=1e-6)


# ---- grad_fn names and next_functions -----------------------------------------------------------


def describe(fn):
    """A grad_fn as nested (name, [(child, output_nr) or None, ...]) tuples."""
    if fn is None:
        return None
    return fn.name(), tuple(None if f is None else (describe(f), nr)
                            for f, nr in fn.next_functions)


EXPRESSIONS = {
    "mul": lambda m, x, w: x * x,
    "mul_scalar": lambda m, x, w: 2 * x,
    "add": lambda m, x, w: x + w[0],
    "add_scalar": lambda m, x, w: x + 1,
    "sub": lambda m, x, w: x - 1,
    "rsub": lambda m, x, w: 1 - x,
    "div": lambda m, x, w: x / 2,
    "rdiv": lambda m, x, w: 1 / x,
    "neg": lambda m, x, w: -x,
    "pow_scalar": lambda m, x, w: x ** 2,
    "pow_tensor": lambda m, x, w: w ** x,
    "pow_scalar_base": lambda m, x, w: 2 ** x,
    "sum": lambda m, x, w: x.sum(),
    "sum_dim": lambda m, x, w: w.sum(0),
    "mean": lambda m, x, w: x.mean(),
    "mean_dim": lambda m, x, w: w.mean(1),
    "exp_log": lambda m, x, w: x.exp().log(),
    "sin_cos_tanh": lambda m, x, w: x.sin().cos().tanh(),
    "sqrt_abs_sign": lambda m, x, w: x.abs().sqrt() * x.sign(),
    "sigmoid_relu": lambda m, x, w: x.sigmoid().relu(),
    "clamp": lambda m, x, w: x.clamp(0, 1),
    "clamp_min": lambda m, x, w: x.clamp(min=0),
    "where": lambda m, x, w: m.where(x > 0, x, x * 2),
    "to_double": lambda m, x, w: x.float().double(),
    "clone": lambda m, x, w: x.clone(),
    "select_slice_index": lambda m, x, w: x[0] + x[1:].sum() + x[[0, 1]].sum(),
    "view_reshape": lambda m, x, w: x.view(3, 1).reshape(1, 3),
    "transpose_permute_T": lambda m, x, w: w.transpose(0, 1).permute(1, 0).T,
    "squeeze": lambda m, x, w: x.view(1, 3).squeeze(),
    "squeeze_dim": lambda m, x, w: x.view(1, 3).squeeze(0),
    "unsqueeze_expand": lambda m, x, w: x.unsqueeze(0).expand(2, 3),
    "flatten": lambda m, x, w: w.flatten(),
    "mm": lambda m, x, w: w @ w.T,
    "mv": lambda m, x, w: w.T @ x[:2],
    "dot": lambda m, x, w: x @ x,
    # vector @ matrix and batched matmul are one node here (MvBackward0, BmmBackward0) where
    # PyTorch shows its internal unsqueeze/view/mm steps: see docs/differences.md.
    "mixed": lambda m, x, w: ((x * w).sum(1) ** 2).mean() + (w @ x).exp().sum(),
}


@pytest.mark.parametrize("name", EXPRESSIONS)
def test_grad_fn_names_and_next_functions(name):
    def graph(m):
        x = leaf(m, X, "float32")
        w = leaf(m, [[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]], "float32")
        return describe(EXPRESSIONS[name](m, x, w).grad_fn)

    assert graph(cr) == graph(torch)


@BOTH
def test_leaf_accumulate_grad_node(m):
    x = leaf(m, X)
    y = x * x
    (acc, nr), (acc2, _) = y.grad_fn.next_functions
    assert x.grad_fn is None and x.is_leaf and not y.is_leaf
    assert acc is acc2 and nr == 0
    assert acc.name() == "torch::autograd::AccumulateGrad"
    assert acc.next_functions == ()
    assert acc.variable is x


# ---- the engine is iterative --------------------------------------------------------------------


def test_deep_chain_backpropagates_without_recursion():
    x = cr.tensor(1.5, dtype=cr.float64, requires_grad=True)
    y = x
    for _ in range(50_000):
        y = y * 2.0
        y = y * 0.5
    assert y.item() == 1.5
    y.backward()
    assert x.grad.item() == 1.0
    del y  # releasing a 100,000-node graph must not recurse either


def test_deep_chain_through_autograd_grad():
    x = cr.tensor([1.0, 2.0], dtype=cr.float64, requires_grad=True)
    y = x
    for _ in range(100_000):
        y = y + 1.0
    (g,) = cr.autograd.grad(y.sum(), x)
    assert g.tolist() == [1.0, 1.0]


# ---- hooks --------------------------------------------------------------------------------------


def test_tensor_hooks_observe_and_replace(like_torch):
    def scenario(m):
        seen = []
        x, y = leaf(m, X), leaf(m, Y)
        x.register_hook(lambda g: seen.append(("x", g.clone())))  # observe a leaf
        y.register_hook(lambda g: g * 2)  # replace a leaf's gradient
        h = x * y
        h.register_hook(lambda g: seen.append(("h", g.clone())))  # observe a non-leaf
        h.register_hook(lambda g: g + 1)  # hooks run in order, each sees the previous result
        h.register_hook(lambda g: seen.append(("h+1", g.clone())))
        (h * h).sum().backward()
        return seen, x.grad, y.grad

    like_torch(*run(scenario))


def test_hook_handle_remove(like_torch):
    def scenario(m):
        calls = []
        x = leaf(m, X)
        handle = x.register_hook(lambda g: calls.append(g.clone()) or g * 10)
        (x * 2).sum().backward()
        handle.remove()
        handle.remove()  # a second remove is harmless
        (x * 2).sum().backward()
        return len(calls), x.grad

    like_torch(*run(scenario))


@NON_LEAF_GRAD_WARNING
def test_retain_grad_sees_the_hooked_gradient(like_torch):
    def scenario(m):
        x = leaf(m, X)
        h = x.exp()
        h.retain_grad()  # retain_grad runs after the tensor's hooks, whatever the order
        h.register_hook(lambda g: g * 3)
        (h * h).sum().backward()
        return h.grad, x.grad

    like_torch(*run(scenario))


def test_hooks_run_under_autograd_grad(like_torch):
    def scenario(m):
        seen = []
        x = leaf(m, X)
        x.register_hook(lambda g: seen.append(g.clone()))
        h = x * 2
        h.register_hook(lambda g: g * 10)
        by_x = m.autograd.grad((h * h).sum(), x, retain_graph=True)
        by_h = m.autograd.grad((h * h).sum(), h)
        return by_x, by_h, seen, x.grad

    like_torch(*run(scenario))


def test_post_accumulate_grad_hook(like_torch):
    def scenario(m):
        seen = []
        x = leaf(m, X)

        def hook(t):
            seen.append((t is x, t.grad.clone()))

        handle = x.register_post_accumulate_grad_hook(hook)
        (x * x).sum().backward()
        (x * 3).sum().backward()
        handle.remove()
        (x * 3).sum().backward()
        return seen

    like_torch(*run(scenario))


@BOTH
def test_hook_registration_errors(m):
    with pytest.raises(RuntimeError, match="doesn't require gradient"):
        m.ones(2).register_hook(lambda g: g)
    with pytest.raises(RuntimeError, match="cannot be registered on non-leaf"):
        (leaf(m, X) * 2).register_post_accumulate_grad_hook(lambda t: None)


# ---- version counters and in-place ops ----------------------------------------------------------

MODIFIED_SAVED = {
    "saved_output": lambda m, x: _modify(x.exp(), lambda y: y.add_(1), lambda y: y),
    "saved_input": lambda m, x: _modify(x * 1, lambda a: a.mul_(2), lambda a: a.sin()),
    "through_setitem": lambda m, x: _modify(x * 1, lambda a: a.__setitem__(0, 5.0),
                                            lambda a: a * a),
    "through_a_view": lambda m, x: _modify(x * 1, lambda a: a[1:].zero_(), lambda a: a.cos()),
    "through_detach": lambda m, x: _modify(x.sigmoid(), lambda y: y.detach().zero_(),
                                           lambda y: y),
    "under_no_grad": lambda m, x: _modify(x.tanh(), lambda y: _no_grad(m, y.mul_, 2),
                                          lambda y: y),
}


def _modify(a, modify, use):
    out = use(a)
    modify(a)
    return out


def _no_grad(m, fn, *args):
    with m.no_grad():
        return fn(*args)


@BOTH
@pytest.mark.parametrize("name", MODIFIED_SAVED)
def test_modifying_a_saved_tensor_raises_on_backward(m, name):
    x = leaf(m, X)
    out = MODIFIED_SAVED[name](m, x)
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        out.sum().backward()


INPLACE_ON_LEAF = {
    "add_": lambda x: x.add_(1),
    "mul_": lambda x: x.mul_(2),
    "iadd": lambda x: x.__iadd__(1),
    "exp_": lambda x: x.exp_(),
    "zero_": lambda x: x.zero_(),
    "fill_": lambda x: x.fill_(2.0),
    "clamp_": lambda x: x.clamp_(min=0),
    "setitem": lambda x: x.__setitem__(0, 1.0),
}


@BOTH
@pytest.mark.parametrize("name", INPLACE_ON_LEAF)
def test_inplace_on_a_leaf_requiring_grad_raises(m, name):
    x = leaf(m, X)
    with pytest.raises(RuntimeError, match="a leaf Variable that requires grad"):
        INPLACE_ON_LEAF[name](x)
    assert x.tolist() == X


@BOTH
def test_inplace_on_a_view_of_a_leaf_raises(m):
    x = leaf(m, X)
    with pytest.raises(RuntimeError, match="view of a leaf Variable that requires grad"):
        x[1:].mul_(2)


@BOTH
def test_inplace_on_a_leaf_under_no_grad_is_allowed(m):
    x = leaf(m, X)
    with m.no_grad():
        x.mul_(2)
        x[0] = 7.0
    assert x.tolist() == [7.0, -2.6, 4.0]
    assert x.requires_grad and x.is_leaf and x.grad_fn is None
    (x * x).sum().backward()
    assert x.grad.tolist() == [14.0, -5.2, 8.0]


def _slices_scenario(m, a, b):
    y = a * 2
    y[1:].mul_(3)
    y[0] = b[0] * 5
    return y


INPLACE_ON_NON_LEAF = {
    "slices_and_setitem": _slices_scenario,
    "add_mul_exp": lambda m, a, b: (a * 1).add_(b).mul_(b).exp_(),
    "augmented": lambda m, a, b: _augmented(a * 1, b),
    "sin_pow_clamp": lambda m, a, b: (a + b).sin_().pow_(2).clamp_(max=0.5),
    "view_of_transpose": lambda m, a, b: _view_of_transpose(a, b),
    "mask_assign": lambda m, a, b: _mask_assign(a, b),
    "div_sub_sigmoid": lambda m, a, b: (a * b).div_(b + 3).sub_(a, alpha=2).sigmoid_(),
    "fill_and_copy": lambda m, a, b: _fill_and_copy(a, b),
    "chain_of_views": lambda m, a, b: _chain_of_views(a, b),
}


def _augmented(y, b):
    y += b
    y *= b
    y -= 1
    y /= 2
    return y


def _view_of_transpose(a, b):
    y = a.reshape(3, 1) * b + 1  # (3, 3); nothing saves y itself
    y.transpose(0, 1)[0].mul_(b)
    return y


def _mask_assign(a, b):
    y = a * b
    y[y > 0] = 0.0
    y[[0, 2]] = b[:2] * 4
    return y


def _fill_and_copy(a, b):
    y = a + b * 2
    y[0].fill_(2.0)
    y[1:].copy_(b[:2] * b[1:])
    return y


def _chain_of_views(a, b):
    y = a.reshape(3, 1) * b - 0.5
    y[1:][:, 1:][0].mul_(b[1:])
    return y


@pytest.mark.parametrize("name", INPLACE_ON_NON_LEAF)
def test_inplace_on_non_leaf_tensors_matches_torch(name, like_torch):
    def scenario(m):
        a, b = leaf(m, X), leaf(m, Y)
        y = INPLACE_ON_NON_LEAF[name](m, a, b)
        (y * y).sum().backward()
        return y, a.grad, b.grad, y.grad_fn.name()

    like_torch(*run(scenario))


def test_detach_shares_storage_and_leaves_the_graph(like_torch):
    def scenario(m):
        x = leaf(m, X)
        y = x * 2
        z = y.detach()
        flags = (z.requires_grad, z.grad_fn, z.is_leaf, np.shares_memory(z.numpy(), y.detach()
                                                                         .numpy()))
        z[0] = 100.0
        y.detach_()
        return flags, y, z, y.requires_grad, y.grad_fn, x.requires_grad

    like_torch(*run(scenario))


# ---- memory -------------------------------------------------------------------------------------


def _collected_by_refcount(build):
    """Run ``build`` with the cycle collector off; return the weakrefs it left alive."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        refs = build()
        return [r for r in refs if r() is not None]
    finally:
        if enabled:
            gc.enable()


def test_graph_is_freed_by_refcount_after_backward():
    x = leaf(cr, X)

    def build():
        y = x.exp()
        z = y.sin() * y
        w = (z ** 2).sum()
        refs = [weakref.ref(t) for t in (y, z, w)]
        refs += [weakref.ref(t.grad_fn) for t in (y, z, w)]
        w.backward()
        return refs

    assert _collected_by_refcount(build) == []
    assert x.grad is not None


def test_graph_is_freed_by_refcount_without_backward():
    x = leaf(cr, X)

    def build():
        y = x.tanh()
        z = y[1:] * y[:2]
        z.retain_grad()
        z.register_hook(lambda g: g)
        w = z.mean()
        refs = [weakref.ref(t) for t in (y, z, w)]
        return refs + [weakref.ref(t.grad_fn) for t in (y, z, w)]

    assert _collected_by_refcount(build) == []


def test_graph_with_create_graph_is_freed_by_refcount():
    x = leaf(cr, X)

    def build():
        y = x.sigmoid()
        (g,) = cr.autograd.grad(y.sum(), x, create_graph=True)
        (gg,) = cr.autograd.grad(g.sum(), x)
        refs = [weakref.ref(t) for t in (y, g, gg)]
        return refs + [weakref.ref(y.grad_fn), weakref.ref(g.grad_fn)]

    assert _collected_by_refcount(build) == []


def test_freed_graph_releases_saved_tensors():
    x = leaf(cr, X)
    alive = []

    def build():
        a = x * 3
        b = a.sin()  # saves a
        alive.append(weakref.ref(a))
        del a
        b.sum().backward()  # frees b's saved a while b is still alive
        alive.append(b)
        return []

    _collected_by_refcount(build)
    assert alive[0]() is None


class _SavesItsOutput(cr.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        out = x.exp()
        ctx.save_for_backward(x, out)
        return out

    @staticmethod
    def backward(ctx, g):
        x, out = ctx.saved_tensors
        return g * out


@pytest.mark.parametrize("backward", [True, False], ids=["after_backward", "no_backward"])
def test_custom_function_graph_is_freed_by_refcount(backward):
    x = leaf(cr, X)

    def build():
        a = x * 2
        y = _SavesItsOutput.apply(a)
        z = (y * y).sum()
        refs = [weakref.ref(t) for t in (a, y, z)] + [weakref.ref(y.grad_fn)]
        if backward:
            z.backward()
        return refs

    assert _collected_by_refcount(build) == []


def test_second_backward_accumulates_into_a_grad_that_came_from_a_broadcast():
    # sum's gradient is a read-only broadcast view; the leaf must keep its own writable buffer
    x = cr.ones(3, 4, requires_grad=True)
    (x.sum(1) * cr.ones(3)).sum().backward()
    x.sum().backward()
    assert x.grad.tolist() == [[2.0] * 4] * 3
