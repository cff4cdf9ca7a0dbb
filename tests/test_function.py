"""Custom autograd.Function: every Function is written once and defined for chainrule and for
torch; values, gradients and errors are compared."""

import functools
import types

import numpy as np
import pytest
import torch

import chainrule as cr

BOTH = pytest.mark.parametrize("m", [torch, cr], ids=["torch", "chainrule"])

X = [0.5, -1.3, 2.0]
Y = [1.5, 0.7, -0.4]


def const(m, values, dtype="float64"):
    return m.tensor(np.asarray(values, dtype=dtype))


def leaf(m, values, dtype="float64"):
    return const(m, values, dtype).requires_grad_()


def run(scenario):
    return scenario(cr), scenario(torch)


@functools.cache
def functions(m):
    """The custom Functions used below, subclassing ``m.autograd.Function``."""
    Function = m.autograd.Function
    once_differentiable = m.autograd.function.once_differentiable
    log = []  # what forward and backward observed, newest last

    class Exp(Function):
        @staticmethod
        def forward(ctx, x):
            log.append(("forward grad enabled", m.is_grad_enabled()))
            out = x.exp()
            ctx.save_for_backward(out)
            return out

        @staticmethod
        def backward(ctx, g):
            (out,) = ctx.saved_tensors
            return g * out

    class MulScale(Function):
        """x * y * scale, with a Python number scale (which gets no gradient)."""

        @staticmethod
        def forward(ctx, x, y, scale):
            ctx.save_for_backward(x, y)
            ctx.scale = scale
            log.append(("needs_input_grad in forward", ctx.needs_input_grad))
            return x * y * scale

        @staticmethod
        def backward(ctx, g):
            x, y = ctx.saved_tensors
            log.append(("needs_input_grad", ctx.needs_input_grad))
            gx = g * y * ctx.scale if ctx.needs_input_grad[0] else None
            gy = g * x * ctx.scale if ctx.needs_input_grad[1] else None
            return gx, gy, None

    class SinCos(Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x.sin(), x.cos()

        @staticmethod
        def backward(ctx, g_sin, g_cos):
            (x,) = ctx.saved_tensors
            log.append(("SinCos grads", g_sin, g_cos))
            return g_sin * x.cos() - g_cos * x.sin()

    class SinCosLazy(Function):
        @staticmethod
        def forward(ctx, x):
            ctx.set_materialize_grads(False)
            ctx.save_for_backward(x)
            return x.sin(), x.cos()

        @staticmethod
        def backward(ctx, g_sin, g_cos):
            (x,) = ctx.saved_tensors
            log.append(("SinCosLazy grads", g_sin, g_cos))
            grad = None
            if g_sin is not None:
                grad = g_sin * x.cos()
            if g_cos is not None:
                grad = -g_cos * x.sin() if grad is None else grad - g_cos * x.sin()
            return grad

    class AddOneInPlace(Function):
        @staticmethod
        def forward(ctx, x):
            x.add_(1)
            ctx.mark_dirty(x)
            return x

        @staticmethod
        def backward(ctx, g):
            return g * 1

    class TwiceAndSign(Function):
        @staticmethod
        def forward(ctx, x):
            sign = (x > 0).to(x.dtype)
            ctx.mark_non_differentiable(sign)
            return x * 2, sign

        @staticmethod
        def backward(ctx, g, g_sign):
            log.append(("TwiceAndSign grads", g, g_sign))
            return g * 2

    class Cube(Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x ** 3

        @staticmethod
        @once_differentiable
        def backward(ctx, g):
            (x,) = ctx.saved_tensors
            return g * 3 * x * x

    class Hypot(Function):
        """setup_context style: forward takes no ctx."""

        @staticmethod
        def forward(x, y):
            return (x * x + y * y).sqrt()

        @staticmethod
        def setup_context(ctx, inputs, output):
            x, y = inputs
            ctx.save_for_backward(x, y, output)

        @staticmethod
        def backward(ctx, g):
            x, y, out = ctx.saved_tensors
            return g * x / out, g * y / out

    class MyReLU(Function):
        @staticmethod
        def forward(ctx, input):
            ctx.save_for_backward(input)
            return input.clamp(min=0)

        @staticmethod
        def backward(ctx, grad_output):
            (input,) = ctx.saved_tensors
            grad_input = grad_output.clone()
            grad_input[input < 0] = 0
            return grad_input

    class TooFew(Function):
        @staticmethod
        def forward(ctx, x, y):
            return x * y

        @staticmethod
        def backward(ctx, g):
            return g

    class TooMany(Function):
        @staticmethod
        def forward(ctx, x):
            return x * 2

        @staticmethod
        def backward(ctx, g):
            return g * 2, g

    class ExtraNones(Function):
        @staticmethod
        def forward(ctx, x):
            return x * 2

        @staticmethod
        def backward(ctx, g):
            return g * 2, None, None

    class WrongShape(Function):
        @staticmethod
        def forward(ctx, x):
            return x * 2

        @staticmethod
        def backward(ctx, g):
            return g.sum()

    class BroadcastGrad(Function):
        @staticmethod
        def forward(ctx, x):
            return x * 2

        @staticmethod
        def backward(ctx, g):
            return (g * 2).expand(2, *g.shape)  # reduced back to x's shape

    class Identity(Function):
        @staticmethod
        def forward(ctx, x):
            return x

        @staticmethod
        def backward(ctx, g):
            return g * 5

    class Mixed(Function):
        """Non-tensor and integer outputs next to a differentiable one; a saved None."""

        @staticmethod
        def forward(ctx, x, n, label):
            ctx.save_for_backward(None, x)
            ctx.n = n
            return x * n, (x * 10).long(), n * 2, label

        @staticmethod
        def backward(ctx, g, g_long, g_n, g_label):
            none, x = ctx.saved_tensors
            log.append(("Mixed", none, g_long, g_n, g_label))
            return g * ctx.n, None, None

    return types.SimpleNamespace(log=log, **{c.__name__: c for c in (
        Exp, MulScale, SinCos, SinCosLazy, AddOneInPlace, TwiceAndSign, Cube, Hypot, MyReLU,
        TooFew, TooMany, ExtraNones, WrongShape, BroadcastGrad, Identity, Mixed)})


def fresh_log(m):
    fn = functions(m)
    fn.log.clear()
    return fn


# ---- forward, backward, apply ------------------------------------------------------------------


def test_forward_backward_and_saved_output(like_torch):
    def scenario(m):
        f = fresh_log(m)
        x = leaf(m, X)
        y = f.Exp.apply(x)
        (y * y).sum().backward()
        return y, x.grad, f.log

    like_torch(*run(scenario))


def test_forward_runs_without_recording(like_torch):
    def scenario(m):
        f = fresh_log(m)
        y = f.Exp.apply(leaf(m, X))
        return f.log, y.grad_fn.name(), [(fn.name(), nr) for fn, nr in y.grad_fn.next_functions]

    ours, theirs = run(scenario)
    like_torch(ours, theirs)
    assert ours[1] == "ExpBackward"


def test_several_inputs_non_tensor_argument_and_needs_input_grad(like_torch):
    def scenario(m):
        f = fresh_log(m)
        x, y = leaf(m, X), leaf(m, Y)
        plain = const(m, Y)
        both = f.MulScale.apply(x, y, 2.5)
        both.sum().backward()
        only_x = f.MulScale.apply(x, plain, -1.0)
        only_x.sum().backward()
        return both, only_x, x.grad, y.grad, f.log

    ours, theirs = run(scenario)
    like_torch(ours, theirs)
    assert ours[-1][0] == ("needs_input_grad in forward", (True, True, False))


def test_several_outputs_and_materialized_grads(like_torch):
    def scenario(m):
        f = fresh_log(m)
        x = leaf(m, X)
        s, c = f.SinCos.apply(x)
        (s * c).sum().backward()
        s, c = f.SinCos.apply(x)
        (s * 3).sum().backward()  # the cos output is unused: its gradient is zeros
        return s, c, x.grad, f.log

    like_torch(*run(scenario))


def test_set_materialize_grads_false_gives_none(like_torch):
    def scenario(m):
        f = fresh_log(m)
        x = leaf(m, X)
        s, c = f.SinCosLazy.apply(x)
        (s * 3).sum().backward()
        s, c = f.SinCosLazy.apply(x)
        c.sum().backward()
        return x.grad, f.log

    ours, theirs = run(scenario)
    like_torch(ours, theirs)
    assert ours[1][0][2] is None and ours[1][1][1] is None


def test_mark_dirty(like_torch):
    def scenario(m):
        f = fresh_log(m)
        x = leaf(m, X)
        a = x * 2
        out = f.AddOneInPlace.apply(a)
        (out * out).sum().backward()
        return out is a, out, a.grad_fn.name(), x.grad

    like_torch(*run(scenario))


@BOTH
def test_mark_dirty_on_a_leaf_requiring_grad_raises(m):
    with pytest.raises(RuntimeError, match="leaf Variable that requires grad"):
        functions(m).AddOneInPlace.apply(leaf(m, X))


def test_mark_non_differentiable(like_torch):
    def scenario(m):
        f = fresh_log(m)
        x = leaf(m, X)
        twice, sign = f.TwiceAndSign.apply(x)
        flags = (sign.requires_grad, sign.grad_fn, sign.is_leaf)
        (twice * sign).sum().backward()
        return twice, sign, flags, x.grad, f.log

    like_torch(*run(scenario))


def test_setup_context_style(like_torch):
    def scenario(m):
        f = fresh_log(m)
        x, y = leaf(m, X), leaf(m, Y)
        h = f.Hypot.apply(x, y)
        gx, gy = m.autograd.grad(h.sum(), (x, y), create_graph=True)
        second = m.autograd.grad((gx * gy).sum(), (x, y))
        return h, h.grad_fn.name(), gx, gy, second

    like_torch(*run(scenario))


def test_non_tensor_and_integer_outputs(like_torch):
    def scenario(m):
        f = fresh_log(m)
        x = leaf(m, X)
        y, as_long, n2, label = f.Mixed.apply(x, 3, "tag")
        (y.sum() * 2).backward()
        return y, as_long, n2, label, x.grad, f.log

    like_torch(*run(scenario))


def test_returning_an_input_unchanged(like_torch):
    def scenario(m):
        x = leaf(m, X)
        y = functions(m).Identity.apply(x)
        y.sum().backward()
        return y is x, y, y.grad_fn.name(), x.grad

    like_torch(*run(scenario))


def test_no_input_requires_grad(like_torch):
    def scenario(m):
        f = functions(m)
        plain = f.Exp.apply(const(m, X))
        with m.no_grad():
            under_no_grad = f.Exp.apply(leaf(m, X))
        ints = f.MulScale.apply(m.tensor([1, 2]), m.tensor([3, 4]), 2)
        return [(t, t.grad_fn) for t in (plain, under_no_grad, ints)]

    like_torch(*run(scenario))


# ---- higher order --------------------------------------------------------------------------------


@pytest.mark.parametrize("name", ["Exp", "MulScale", "SinCos", "Hypot"])
def test_backward_in_ops_is_differentiable(name, like_torch):
    def scenario(m):
        f = fresh_log(m)
        x, y = leaf(m, X), leaf(m, [1.5, 0.7, 0.4])
        call = {
            "Exp": lambda: f.Exp.apply(x * y),
            "MulScale": lambda: f.MulScale.apply(x * x, y, 1.5),
            "SinCos": lambda: f.SinCos.apply(x * y)[0] * f.SinCos.apply(x)[1],
            "Hypot": lambda: f.Hypot.apply(x, y * y),
        }[name]
        out = call()
        gx, gy = m.autograd.grad(out.sum(), (x, y), create_graph=True)
        hxx, hxy = m.autograd.grad(gx.sum(), (x, y), create_graph=True)
        (third,) = m.autograd.grad(hxx.sum(), x, materialize_grads=True)
        return out, gx, gy, hxx, hxy, third

    like_torch(*run(scenario), rtol=1e-9)


@BOTH
def test_once_differentiable(m):
    cube = functions(m).Cube
    x = leaf(m, X)
    (g,) = m.autograd.grad(cube.apply(x).sum(), x)
    np.testing.assert_allclose(g.numpy(), 3 * np.asarray(X) ** 2, rtol=1e-15)
    (g,) = m.autograd.grad((cube.apply(x) * x).sum(), x, create_graph=True)
    np.testing.assert_allclose(g.detach().numpy(), 4 * np.asarray(X) ** 3, rtol=1e-15)
    with pytest.raises(RuntimeError, match="once_differentiable"):
        g.sum().backward()


# ---- saved tensors -------------------------------------------------------------------------------


@BOTH
def test_saved_tensors_are_freed_after_backward(m):
    x = leaf(m, X)
    y = functions(m).Exp.apply(x)
    y.sum().backward(retain_graph=True)
    assert len(y.grad_fn.saved_tensors) == 1
    y.sum().backward()
    with pytest.raises(RuntimeError, match="retain_graph=True"):
        y.grad_fn.saved_tensors  # noqa: B018
    with pytest.raises(RuntimeError, match="retain_graph=True"):
        y.sum().backward()


@BOTH
def test_modified_saved_input_raises(m):
    a = leaf(m, X) * 1
    y = functions(m).MulScale.apply(a, leaf(m, Y), 2.0)
    a.mul_(2)
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        y.sum().backward()


# ---- what backward returns --------------------------------------------------------------------

RETURN_ERRORS = [
    ("TooFew", r"function TooFewBackward returned an incorrect number of gradients "
               r"\(expected 2, got 1\)"),
    ("TooMany", r"function TooManyBackward returned an incorrect number of gradients "
                r"\(expected 1, got 2\)"),
    ("WrongShape", r"Function WrongShapeBackward returned an invalid gradient at index 0 - got "
                   r"\[\] but expected shape compatible with \[3\]"),
]


@BOTH
@pytest.mark.parametrize("name,message", RETURN_ERRORS, ids=[r[0] for r in RETURN_ERRORS])
def test_backward_returning_wrong_gradients_raises(m, name, message):
    fn = getattr(functions(m), name)
    x = leaf(m, X)
    args = (x, x) if name == "TooFew" else (x,)
    with pytest.raises(RuntimeError, match=message):
        fn.apply(*args).sum().backward()


@BOTH
@pytest.mark.parametrize("name", ["ExtraNones", "BroadcastGrad"])
def test_backward_extra_nones_and_broadcast_gradient_are_accepted(m, name):
    x = leaf(m, X)
    getattr(functions(m), name).apply(x).sum().backward()
    expected = [2.0, 2.0, 2.0] if name == "ExtraNones" else [4.0, 4.0, 4.0]
    assert x.grad.tolist() == expected


# ---- names and printing --------------------------------------------------------------------------


def test_grad_fn_name_and_repr():
    def scenario(m):
        f = functions(m)
        x = m.tensor([1.0, 2.0], requires_grad=True)
        y = f.MulScale.apply(x, x, 3)
        return y.grad_fn.name(), type(y.grad_fn).__name__, repr(y), str(f.Cube.apply(x))

    ours, theirs = run(scenario)
    assert ours == theirs
    assert ours[0] == "MulScaleBackward"


@BOTH
@pytest.mark.filterwarnings("ignore:.*should not be instantiated")
def test_calling_forward_the_legacy_way_raises(m):
    with pytest.raises(RuntimeError, match="Legacy autograd function"):
        functions(m).Exp()(leaf(m, X))


def test_tutorial_relu(like_torch):
    def scenario(m):
        x = leaf(m, [-1.0, 2.0, -3.0, 0.5])
        y = functions(m).MyReLU.apply(x)
        y.backward(m.ones_like(x))
        return y, x.grad

    like_torch(*run(scenario))
