"""grad, grad_and_value, vjp, jvp and linearize against torch.func: results, pytrees, has_aux."""

from __future__ import annotations

from collections import namedtuple

import pytest

from .conftest import randn

Point = namedtuple("Point", ["x", "y"])


def f2(a, b):
    return (a.sin() * b + a * a).sum()


# ---- grad -------------------------------------------------------------------------------------

@pytest.mark.parametrize("argnums", [0, 1, -1, (0,), (0, 1), (1, 0)])
def test_grad_argnums(same, argnums):
    same(lambda lib, a, b: lib.func.grad(f2, argnums=argnums)(a, b), *randn(0, (3,), (3,)))


def test_grad_of_a_scalar_input(same):
    same(lambda lib, a: lib.func.grad(lambda x: x.exp() * x.cos())(a), *randn(1, ()))


def test_grad_has_aux_returns_aux_untouched(same):
    def program(lib, a, b):
        def f(x, y):
            out = f2(x, y)
            return out, {"value": out, "parts": (x.cos(), [y * 2, Point(x, y)])}

        return lib.func.grad(f, argnums=(0, 1), has_aux=True)(a, b)

    same(program, *randn(2, (2, 3), (2, 3)))


def test_grad_keyword_arguments_are_not_differentiated(same):
    def program(lib, a, b):
        return lib.func.grad(lambda x, *, scale: (x * scale).pow(3).sum())(a, scale=b)

    same(program, *randn(3, (4,), (4,)))


def test_grad_of_dict_list_tuple_namedtuple_inputs(same):
    def loss(tree, point):
        a = tree["a"]
        b, (c, d) = tree["rest"][0], tree["rest"][1]
        return (a * b).sum() + (c * d.exp()).sum() + (point.x * point.y.sin()).sum()

    def program(lib, a, b, c, d, px, py):
        tree = {"a": a, "rest": [b, (c, d)]}
        return lib.func.grad(loss, argnums=(0, 1))(tree, Point(px, py))

    ours, _ = same(program, *randn(4, (3,), (3,), (2,), (2,), (2, 2), (2, 2)))
    assert type(ours[1]) is Point


def test_grad_does_not_touch_inputs_or_their_grad(same):
    def program(lib, a):
        a.requires_grad_()
        g = lib.func.grad(lambda x: (x**3).sum())(a)
        return g, a.grad, a.requires_grad

    same(program, *randn(5, (3,)))


def test_grad_of_an_input_that_requires_grad_stays_differentiable(same):
    def program(lib, a):
        a.requires_grad_()
        g = lib.func.grad(lambda x: (x**3).sum())(a)
        (gg,) = lib.autograd.grad(g.sum(), a)
        return g, gg

    same(program, *randn(6, (3,)))


def test_grad_of_a_function_not_using_its_input_is_zero(same):
    same(lambda lib, a, b: lib.func.grad(lambda x, y: (y * 2).sum())(a, b), *randn(7, (3,), (3,)))


def test_grad_of_a_constant_output_is_zero(same):
    same(lambda lib, a: lib.func.grad(lambda x: lib.ones(()))(a), *randn(8, (2,)))


def test_grad_and_value(same):
    def program(lib, a, b):
        return lib.func.grad_and_value(f2, argnums=(0, 1))(a, b)

    same(program, *randn(9, (3,), (3,)))


def test_grad_and_value_has_aux(same):
    def program(lib, a):
        return lib.func.grad_and_value(lambda x: ((x**2).sum(), x.exp()), has_aux=True)(a)

    same(program, *randn(10, (3,)))


def test_grad_through_autograd_grad_inside(same):
    """The function itself calls autograd.grad (with create_graph): grad sees through it."""

    def program(lib, a):
        def f(x):
            y = lib.ones(3, dtype=lib.float64, requires_grad=True)
            (g,) = lib.autograd.grad((y * x).sum(), y)  # x, but without its history
            z = x * 1.0
            (h,) = lib.autograd.grad((z.sin() * z).sum(), z, create_graph=True)
            return (g * x + h * h).sum()

        return lib.func.grad(f)(a)

    same(program, *randn(11, (3,)))


def test_grad_under_no_grad_still_differentiates(same):
    def program(lib, a):
        with lib.no_grad():
            return lib.func.grad(lambda x: (x.sin() * x).sum())(a)

    same(program, *randn(12, (3,)))


def test_grad_inside_the_function_no_grad_blocks(same):
    def program(lib, a):
        def f(x):
            with lib.no_grad():
                c = x * 3
            return (c * x).sum()

        return lib.func.grad(f)(a)

    same(program, *randn(13, (3,)))


# ---- vjp --------------------------------------------------------------------------------------

def test_vjp_single_output(same):
    def program(lib, a, b, ct):
        out, fn = lib.func.vjp(lambda x, y: x.sin() @ y, a, b)
        return out, fn(ct)

    same(program, *randn(14, (2, 3), (3, 4), (2, 4)))


def test_vjp_pytree_outputs_and_inputs(same):
    def f(tree, y):
        return {"s": (tree["u"] * y).sum(0), "pair": (tree["v"].exp(), [y.cos()])}

    def program(lib, u, v, y, c1, c2, c3):
        out, fn = lib.func.vjp(f, {"u": u, "v": v}, y)
        return out, fn({"s": c1, "pair": (c2, [c3])})

    same(program, *randn(15, (2, 3), (4,), (2, 3), (3,), (4,), (2, 3)))


def test_vjp_has_aux(same):
    def program(lib, a, ct):
        out, fn, aux = lib.func.vjp(lambda x: (x.tanh(), {"n": x.norm()}), a, has_aux=True)
        return out, fn(ct), aux

    same(program, *randn(16, (3,), (3,)))


def test_vjp_fn_can_be_called_twice(same):
    def program(lib, a, c1, c2):
        _, fn = lib.func.vjp(lambda x: x.sin() * x, a)
        return fn(c1), fn(c2)

    same(program, *randn(17, (3,), (3,), (3,)))


def test_vjp_fn_called_twice_keeps_the_graph_to_an_outside_tensor(same):
    # Whether the graph reaches a tensor from before the call is found once per vjp; every
    # call of vjp_fn (and its cotangents) must still give a differentiable result, and a
    # call with a cotangent that requires grad after one without must too.
    def program(lib, a, w, c1, c2):
        w.requires_grad_()
        _, fn = lib.func.vjp(lambda x: (x * w).sin(), a)
        (g1,) = fn(c1)
        (g2,) = fn(c2 * 2)
        c2.requires_grad_()
        (g3,) = fn(c2)
        (gw, gc) = lib.autograd.grad((g1 * g2 + g3).sum(), (w, c2))
        return g1, g2, g3, gw, gc

    same(program, *randn(19, (3,), (3,), (3,), (3,)))


def test_vjp_fn_of_a_function_without_outside_tensors_twice(same):
    def program(lib, a, c1):
        _, fn = lib.func.vjp(lambda x: x.exp() * x, a)
        (g1,) = fn(c1)
        (g2,) = fn(c1 * 3)
        return g1, g2, g1.requires_grad, g2.requires_grad

    same(program, *randn(20, (4,), (4,)))


def test_vjp_with_a_cotangent_that_requires_grad_is_differentiable(same):
    def program(lib, a, ct):
        ct.requires_grad_()
        _, fn = lib.func.vjp(lambda x: x.sin() * x, a)
        (g,) = fn(ct)
        (back,) = lib.autograd.grad((g * g).sum(), ct)
        return g, back

    same(program, *randn(18, (3,), (3,)))


def test_vjp_of_an_output_independent_of_the_input(same):
    def program(lib, a, b, ct):
        _, fn = lib.func.vjp(lambda x, y: y * 2, a, b)
        return fn(ct)

    same(program, *randn(19, (3,), (3,), (3,)))


# ---- jvp --------------------------------------------------------------------------------------

def test_jvp_single(same):
    same(lambda lib, a, t: lib.func.jvp(lambda x: x.sin() * x.exp(), (a,), (t,)),
         *randn(20, (3,), (3,)))


def test_jvp_several_inputs_and_pytree_outputs(same):
    def f(x, tree):
        return (x @ tree[0], {"e": tree[1]["w"].exp() * x.sum()})

    def program(lib, x, m, w, tx, tm, tw):
        return lib.func.jvp(f, (x, (m, {"w": w})), (tx, (tm, {"w": tw})))

    same(program, *randn(21, (3,), (3, 2), (4,), (3,), (3, 2), (4,)))


def test_jvp_has_aux(same):
    def program(lib, a, t):
        return lib.func.jvp(lambda x: (x.cos(), (x * 2, [x.sin()])), (a,), (t,), has_aux=True)

    same(program, *randn(22, (3,), (3,)))


def test_jvp_of_an_output_independent_of_the_input_is_zero(same):
    same(lambda lib, a, b, t: lib.func.jvp(lambda x: b * 2, (a,), (t,)),
         *randn(24, (3,), (3,), (3,)))


# ---- linearize --------------------------------------------------------------------------------

def test_linearize(same):
    def program(lib, a, b, t1, t2, s1, s2):
        out, fn = lib.func.linearize(lambda x, y: (x.sin() * y, x @ y), a, b)
        return out, fn(t1, t2), fn(s1, s2)

    same(program, *randn(25, (3,), (3,), (3,), (3,), (3,), (3,)))


def test_vjp_fn_create_graph_and_grad_mode(same):
    def program(lib, a, ct):
        a.requires_grad_()
        _, fn = lib.func.vjp(lambda x: x.sin() * x, a)
        (default,) = fn(ct)
        (flat,) = fn(ct, create_graph=False)
        with lib.no_grad():
            (no_grad,) = fn(ct)
        return default, flat, no_grad

    same(program, *randn(26, (3,), (3,)))


def test_vjp_fn_without_retain_graph_frees_it(same_error):
    def program(lib, a, ct):
        _, fn = lib.func.vjp(lambda x: x.sin() * x, a)
        fn(ct, retain_graph=False)
        return fn(ct)

    same_error(program, *randn(27, (3,), (3,)))


def test_jvp_and_vjp_under_no_grad(same):
    def program(lib, a, t):
        with lib.no_grad():
            out, fn = lib.func.vjp(lambda x: (x * x).sum(), a)
            return out, fn(lib.ones((), dtype=lib.float64)), lib.func.jvp(lib.tanh, (a,), (t,))

    same(program, *randn(28, (3,), (3,)))


def test_transform_outputs_keep_the_history_of_inputs_that_require_grad(same):
    def program(lib, a, t):
        a.requires_grad_()
        F = lib.func
        out, tangent = F.jvp(lambda x: x.exp() * x, (a,), (t,))
        lin_out, lin_fn = F.linearize(lambda x: x.exp() * x, a)
        value, vjp_fn = F.vjp(lambda x: x.exp(), a)
        g, v = F.grad_and_value(lambda x: (x.exp() * x).sum())(a)
        # (linearize's jvp_fn is left out: torch's traced one holds the Jacobian as constants,
        # so its result does not lead back to the primals)
        results = (out, tangent, lin_out, value, vjp_fn(t)[0], g, v)
        grads = lib.autograd.grad(sum(r.sum() for r in results), a)
        return results, grads

    same(program, *randn(29, (3,), (3,)))


def test_identity_and_view_functions(same):
    def program(lib, a, t):
        F = lib.func
        return (F.jvp(lambda x: x, (a,), (t,)), F.jvp(lambda x: x[1:], (a,), (t,)),
                F.grad(lambda x: x[0])(a), F.vjp(lambda x: x, a)[1](t), F.grad(lambda x: x)(a[0]))

    same(program, *randn(30, (3,), (3,)))


@pytest.mark.parametrize("name", ["grad", "grad_and_value", "vjp", "jvp", "linearize", "jacrev",
                                  "jacfwd", "hessian", "vmap", "functional_call",
                                  "stack_module_state"])
def test_signatures_are_torch_funcs(name):
    import inspect

    import torch

    import chainrule

    def params(fn):
        return [(p.name, p.kind, p.default) for p in inspect.signature(fn).parameters.values()
                if not p.name.startswith("_")]

    assert params(getattr(chainrule.func, name)) == params(getattr(torch.func, name))
    assert getattr(chainrule.func, name).__name__ == name


def test_transformed_functions_keep_the_name_and_docstring(same):
    def program(lib, x):
        def my_loss(a):
            """My loss."""
            return a.sum()

        F = lib.func
        return [(t.__name__, t.__doc__) for t in (F.grad(my_loss), F.grad_and_value(my_loss),
                                                  F.jacrev(my_loss), F.jacfwd(my_loss),
                                                  F.vmap(my_loss))]

    same(program, *randn(31, (2,)))
