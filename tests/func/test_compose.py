"""Transforms composed with each other and with ordinary autograd, against torch.func; nested
levels do not confuse their perturbations; gradcheck through a function that uses vmap."""

from __future__ import annotations

import numpy as np
import pytest

import chainrule

from .conftest import randn


def loss(w, x, t):
    return ((x @ w).tanh() - t).pow(2).sum()


def test_vmap_of_grad_is_per_sample_gradients(same):
    def program(lib, w, x, t):
        return lib.func.vmap(lib.func.grad(loss), in_dims=(None, 0, 0))(w, x, t)

    same(program, *randn(0, (3, 2), (5, 3), (5, 2)))


def test_vmap_of_grad_with_aux_and_several_argnums(same):
    def program(lib, w, x, t):
        g = lib.func.grad(lambda w, x, t: (loss(w, x, t), x.sum()), argnums=(0, 1), has_aux=True)
        return lib.func.vmap(g, in_dims=(None, 0, 0))(w, x, t)

    same(program, *randn(1, (3, 2), (5, 3), (5, 2)))


def test_vmap_of_grad_and_value(same):
    def program(lib, w, x, t):
        return lib.func.vmap(lib.func.grad_and_value(loss), in_dims=(None, 0, 0))(w, x, t)

    same(program, *randn(2, (3, 2), (4, 3), (4, 2)))


def test_jacfwd_of_jacrev_is_the_hessian(same):
    def f(x):
        return (x.sin() * x.cumsum(0)).sum()

    def program(lib, x):
        F = lib.func
        return F.jacfwd(F.jacrev(f))(x), F.hessian(f)(x)

    ours, _ = same(program, *randn(3, (4,)))
    np.testing.assert_allclose(ours[0].numpy(), ours[1].numpy(), rtol=1e-12)


def test_jacrev_of_jacrev_and_jacfwd_of_jacfwd(same):
    def f(x):
        return (x.exp() * x.roll(1, 0)).sum()

    def program(lib, x):
        F = lib.func
        return F.jacrev(F.jacrev(f))(x), F.jacfwd(F.jacfwd(f))(x), F.jacrev(F.jacfwd(f))(x)

    same(program, *randn(4, (3,)))


def test_grad_of_grad(same):
    def program(lib, x):
        f = lambda a: a.sin() * a**3  # noqa: E731
        g = lib.func.grad
        return g(f)(x), g(g(f))(x), g(g(g(f)))(x)

    same(program, *randn(5, ()))


def test_vmap_of_vmap(same):
    def program(lib, x, w):
        inner = lib.func.vmap(lambda row: (row @ w).relu())
        return lib.func.vmap(inner)(x)

    same(program, *randn(6, (2, 3, 4), (4, 5)))


def test_vmap_of_jvp_is_a_batch_of_directional_derivatives(same):
    def program(lib, x, ts):
        f = lambda a: (a.sin() * a.sum(), a.exp())  # noqa: E731
        return lib.func.vmap(lambda t: lib.func.jvp(f, (x,), (t,)))(ts)

    same(program, *randn(7, (3,), (5, 3)))


def test_vmap_of_vjp(same):
    def program(lib, x, cts):
        _, fn = lib.func.vjp(lambda a: a.sin() * a.sum(), x)
        return lib.func.vmap(fn)(cts)

    same(program, *randn(8, (3,), (4, 3)))


def test_jvp_of_grad_is_a_hessian_vector_product(same):
    def program(lib, x, v):
        f = lambda a: (a.sin() * a.cumsum(0)).sum()  # noqa: E731
        return lib.func.jvp(lib.func.grad(f), (x,), (v,))

    same(program, *randn(9, (4,), (4,)))


def test_grad_of_jvp_is_reverse_over_forward(same):
    def program(lib, x, v):
        f = lambda a: a.tanh() * a.sum()  # noqa: E731
        return lib.func.grad(lambda a: lib.func.jvp(f, (a,), (v,))[1].sum())(x)

    same(program, *randn(10, (3,), (3,)))


def test_jvp_of_jvp(same):
    def program(lib, x, u, v):
        f = lambda a: a.sin() * a.exp()  # noqa: E731
        inner = lambda a: lib.func.jvp(f, (a,), (u,))[1]  # noqa: E731
        return lib.func.jvp(inner, (x,), (v,))

    same(program, *randn(11, (3,), (3,), (3,)))


def test_grad_of_vmap(same):
    def program(lib, w, x, t):
        return lib.func.grad(
            lambda w: lib.func.vmap(loss, in_dims=(None, 0, 0))(w, x, t).mean())(w)

    same(program, *randn(12, (3, 2), (5, 3), (5, 2)))


def test_grad_of_vmap_closing_over_the_differentiated_value(same):
    def program(lib, w, x):
        def f(w):
            return lib.func.vmap(lambda row: (row * w).sin().sum())(x).sum()

        return lib.func.grad(f)(w)

    same(program, *randn(13, (3,), (4, 3)))


def test_vmap_of_jacrev_and_of_hessian(same):
    def program(lib, xs):
        f = lambda a: (a.sin() * a.sum()).sum()  # noqa: E731
        F = lib.func
        return F.vmap(F.jacrev(f))(xs), F.vmap(F.hessian(f))(xs)

    same(program, *randn(14, (3, 4)))


def test_jacrev_of_a_function_using_vmap(same):
    def program(lib, w, x):
        return lib.func.jacrev(lambda w: lib.func.vmap(lambda r: (r @ w).tanh())(x))(w)

    same(program, *randn(15, (3, 2), (4, 3)))


def test_transforms_around_autograd_grad(same):
    """The function calls autograd.grad itself; grad, vmap and jacrev see through it."""

    def inner(lib, x):
        z = x * 1.0
        (h,) = lib.autograd.grad((z.sin() * z).sum(), z, create_graph=True)
        return (h * h).sum()

    def program(lib, x, xs):
        F = lib.func
        return (F.grad(lambda a: inner(lib, a))(x), F.jacrev(lambda a: inner(lib, a))(x),
                F.grad(lambda a: F.grad(lambda b: inner(lib, b))(a).sum())(x))

    same(program, *randn(16, (3,), (2, 3)))


def test_perturbation_confusion_reverse(same):
    """d/dx [x * d/dy (x * y)] = d/dx [x * x]... is 1 here: the inner x is a constant to the
    inner grad and a variable to the outer one (Siskind and Pearlmutter's example)."""

    def program(lib, x):
        g = lib.func.grad
        return g(lambda x: g(lambda y: x * y)(x))(x)

    same(program, *randn(17, ()))


def test_perturbation_confusion_reverse_with_shared_input(same):
    def program(lib, x):
        g = lib.func.grad
        return g(lambda x: (x * g(lambda y: (x * y).sum())(x)).sum())(x)

    same(program, *randn(18, (3,)))


def test_perturbation_confusion_forward(same):
    def program(lib, x, one):
        jvp = lib.func.jvp

        def outer(x):
            return jvp(lambda y: x * y, (x,), (one,))[1]

        return jvp(outer, (x,), (one,))

    same(program, *randn(19, ()), np.ones(()))


def test_perturbation_confusion_mixed(same):
    def program(lib, x, one):
        F = lib.func
        return (F.grad(lambda x: F.jvp(lambda y: x * y, (x,), (one,))[1])(x),
                F.jvp(lambda x: F.grad(lambda y: x * y)(x), (x,), (one,)))

    same(program, *randn(20, ()), np.ones(()))


def test_backward_through_grad_of_parameters_that_require_grad(same):
    def program(lib, w, x, t):
        w.requires_grad_()
        gw = lib.func.grad(loss)(w, x, t)
        (gw * gw).sum().backward()
        return gw.detach(), w.grad

    same(program, *randn(21, (3, 2), (4, 3), (4, 2)))


def test_backward_through_vmap_of_grad_to_batched_inputs(same):
    """Per-sample gradients depend on the samples: the result is differentiable with respect
    to them (and to the parameters) by ordinary autograd."""

    def program(lib, w, x, t):
        x.requires_grad_()
        w.requires_grad_()
        g = lib.func.vmap(lib.func.grad(loss), in_dims=(None, 0, 0))(w, x, t)
        (g.sin().sum()).backward()
        return g.detach(), x.grad, w.grad

    same(program, *randn(24, (3, 2), (4, 3), (4, 2)))


def test_vmap_of_grad_when_only_the_samples_require_grad(same):
    def program(lib, w, x, t):
        x.requires_grad_()
        g, value = lib.func.vmap(lib.func.grad_and_value(loss), in_dims=(None, 0, 0))(w, x, t)
        (gx,) = lib.autograd.grad((g * g).sum() + value.sum(), x)
        return g.requires_grad, value.requires_grad, gx

    same(program, *randn(25, (3, 2), (4, 3), (4, 2)))


def test_gradcheck_through_vmap():
    def f(x, w):
        return chainrule.func.vmap(lambda r: (r @ w).tanh() * r.sum())(x)

    x, w = (chainrule.tensor(a, requires_grad=True) for a in randn(22, (4, 3), (3, 2)))
    assert chainrule.autograd.gradcheck(f, (x, w))
    assert chainrule.autograd.gradgradcheck(f, (x, w))


def test_gradcheck_through_vmap_of_grad():
    def f(w, x):
        return chainrule.func.vmap(chainrule.func.grad(lambda w, r: (r @ w).sin().sum()),
                                   in_dims=(None, 0))(w, x)

    w, x = (chainrule.tensor(a, requires_grad=True) for a in randn(23, (3, 2), (4, 3)))
    assert chainrule.autograd.gradcheck(f, (w, x))


def _custom_sin(lib):
    class Sin(lib.autograd.Function):
        generate_vmap_rule = True

        @staticmethod
        def forward(x):
            return x.sin()

        @staticmethod
        def setup_context(ctx, inputs, output):
            ctx.save_for_backward(inputs[0])
            ctx.save_for_forward(inputs[0])

        @staticmethod
        def backward(ctx, g):
            (x,) = ctx.saved_tensors
            return g * x.cos()

        @staticmethod
        def jvp(ctx, t):
            (x,) = ctx.saved_tensors
            return t * x.cos()

    return Sin.apply


def test_custom_function_under_transforms(same):
    def program(lib, x, xs, t):
        sin = _custom_sin(lib)
        F = lib.func
        f = lambda a: (sin(a) * a).sum()  # noqa: E731
        return (F.vmap(sin)(xs), F.grad(f)(x), F.vmap(F.grad(f))(xs), F.jacrev(sin)(x),
                F.jvp(sin, (x,), (t,)), F.hessian(f)(x))

    same(program, *randn(26, (3,), (2, 3), (3,)))


def test_grad_of_vmap_of_grad(same):
    def program(lib, w, x):
        F = lib.func
        per_sample = F.vmap(F.grad(lambda w, r: (r * w).sin().sum()), (None, 0))
        return F.grad(lambda w: per_sample(w, x).pow(2).sum())(w)

    same(program, *randn(27, (3,), (4, 3)))


def test_vmap_of_vmap_of_grad_closing_over_both_levels(same):
    def program(lib, x, b):
        F = lib.func
        inner = lambda r: F.vmap(lambda s: F.grad(lambda t: (t * s * r).sum())(b))(x)  # noqa: E731
        return F.vmap(inner)(x)

    same(program, *randn(28, (4, 3), (3,)))


def _outer_autograd_programs():
    def jvp_tangent(lib, a, b, c):
        c.requires_grad_()
        _, tout = lib.func.jvp(lambda x: x.sin() * x, (b,), (c,))
        return tout, lib.autograd.grad(tout.sum(), c)

    def hessian(lib, a, b, c):
        b.requires_grad_()
        h = lib.func.hessian(lambda x: (x.sin() * x).sum())(b)
        return h, lib.autograd.grad(h.sum(), b)

    def grad_other_arg(lib, a, b, c):
        b.requires_grad_()
        g = lib.func.grad(lambda x, w: (x * w).sin().sum())(c, b)
        return g, lib.autograd.grad(g.sum(), b)

    def jacfwd_closure(lib, a, b, c):
        b.requires_grad_()
        j = lib.func.jacfwd(lambda x: x.sin() * b)(c)
        return j, lib.autograd.grad(j.sum(), b)

    def vmap_jvp_closure(lib, a, b, c):
        b.requires_grad_()
        y = lib.func.vmap(lambda r: lib.func.jvp(lambda x: (x * b).sin(), (r,), (c,))[1])(a)
        return y, lib.autograd.grad(y.sum(), b)

    def vmap_jacrev(lib, a, b, c):
        a.requires_grad_()
        j = lib.func.vmap(lib.func.jacrev(lambda x: x.sin() * x.sum()))(a)
        return j, lib.autograd.grad(j.sum(), a)

    def vmap_jacfwd(lib, a, b, c):
        a.requires_grad_()
        j = lib.func.vmap(lib.func.jacfwd(lambda x: x.sin() * x.sum()))(a)
        return j, lib.autograd.grad(j.sum(), a)

    def vjp_of_vmap(lib, a, b, c):
        a.requires_grad_()
        out, fn = lib.func.vjp(lambda x: lib.func.vmap(lambda r: r.exp() * b)(x), a)
        g = fn(lib.ones_like(out))[0]
        return out, g, lib.autograd.grad(g.sum(), a)

    return [jvp_tangent, hessian, grad_other_arg, jacfwd_closure, vmap_jvp_closure, vmap_jacrev,
            vmap_jacfwd, vjp_of_vmap]


@pytest.mark.parametrize("program", _outer_autograd_programs(), ids=lambda p: p.__name__)
def test_ordinary_autograd_through_transforms(same, program):
    same(program, *randn(29, (4, 3), (3,), (3,)))
