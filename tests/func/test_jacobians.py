"""jacrev, jacfwd and hessian against torch.func: argnums, pytrees, has_aux, chunks, randomness."""

from __future__ import annotations

import numpy as np
import pytest

import chainrule

from .conftest import randn


def f2(a, b):
    return (a.sin() * b.exp(), (a @ b.reshape(-1, 1)).squeeze(-1) if a.dim() > 1 else a * b)


def vec(x, w):
    return (w @ x).tanh() * x.sum()


JACOBIANS = ["jacrev", "jacfwd"]


@pytest.mark.parametrize("jac", JACOBIANS)
@pytest.mark.parametrize("argnums", [0, 1, -1, (0,), (0, 1), (1, 0), (-1, 0)])
def test_argnums(same, jac, argnums):
    # torch 2.13's jacfwd does not substitute the duals for negative argnums (its Jacobian is
    # zero), so negative argnums are compared with torch's jacrev.
    negative = argnums == -1 or (isinstance(argnums, tuple) and min(argnums) < 0)

    def program(lib, x, w):
        name = "jacrev" if negative and lib is not chainrule else jac
        return getattr(lib.func, name)(vec, argnums=argnums)(x, w)

    same(program, *randn(0, (3,), (4, 3)))


@pytest.mark.parametrize("jac", JACOBIANS)
def test_scalar_input_and_output(same, jac):
    same(lambda lib, x: getattr(lib.func, jac)(lambda a: a.sin() * a)(x), *randn(1, ()))


@pytest.mark.parametrize("jac", JACOBIANS)
def test_scalar_output_of_a_matrix(same, jac):
    same(lambda lib, x: getattr(lib.func, jac)(lambda a: (a @ a).trace())(x), *randn(2, (3, 3)))


@pytest.mark.parametrize("jac", JACOBIANS)
def test_pytree_outputs(same, jac):
    def f(x):
        return {"a": x.exp(), "pair": (x.sum(), [x.reshape(2, 2) * 3])}

    same(lambda lib, x: getattr(lib.func, jac)(f)(x), *randn(3, (4,)))


@pytest.mark.parametrize("jac", JACOBIANS)
def test_pytree_inputs(same, jac):
    def f(params, x):
        return (params["w"] @ x + params["b"][0]).tanh()

    def program(lib, w, b, x):
        return getattr(lib.func, jac)(f, argnums=(0, 1))({"w": w, "b": [b]}, x)

    same(program, *randn(4, (2, 3), (2,), (3,)))


@pytest.mark.parametrize("jac", JACOBIANS)
def test_has_aux(same, jac):
    def program(lib, x, w):
        return getattr(lib.func, jac)(lambda a: (vec(a, w), {"n": a.norm(), "w": w * 2}),
                                      has_aux=True)(x)

    same(program, *randn(5, (3,), (4, 3)))


@pytest.mark.parametrize("chunk_size", [1, 2, 3, 7, None])
def test_jacrev_chunk_size_gives_the_same_result(same, chunk_size):
    def program(lib, x, w):
        f = lambda a, b: (vec(a, b), a.cumsum(0))  # noqa: E731
        return lib.func.jacrev(f, argnums=(0, 1), chunk_size=chunk_size)(x, w)

    same(program, *randn(6, (3,), (4, 3)))


@pytest.mark.parametrize("jac", JACOBIANS)
def test_multiple_outputs_and_inputs(same, jac):
    same(lambda lib, a, b: getattr(lib.func, jac)(f2, argnums=(0, 1))(a, b),
         *randn(7, (3,), (3,)))


@pytest.mark.parametrize("jac", JACOBIANS)
def test_output_independent_of_an_input(same, jac):
    same(lambda lib, a, b: getattr(lib.func, jac)(lambda x, y: x * 2, argnums=(0, 1))(a, b),
         *randn(8, (3,), (2,)))


def test_inputs_that_require_grad_give_a_differentiable_jacobian(same):
    def program(lib, x, w):
        w.requires_grad_()
        j = lib.func.jacrev(vec)(x, w)
        (gw,) = lib.autograd.grad(j.sum(), w)
        return j, gw

    same(program, *randn(9, (3,), (4, 3)))


@pytest.mark.parametrize("argnums", [0, 1, (0, 1)])
def test_hessian(same, argnums):
    def f(x, y):
        return (x.sin() * y.exp()).sum() + (x @ y) ** 2

    same(lambda lib, x, y: lib.func.hessian(f, argnums=argnums)(x, y), *randn(10, (3,), (3,)))


def test_hessian_of_a_vector_function(same):
    same(lambda lib, x: lib.func.hessian(lambda a: a.sin() * a.sum())(x), *randn(11, (3,)))


def test_hessian_of_a_matrix_input(same):
    same(lambda lib, x: lib.func.hessian(lambda a: (a @ a.t()).logsumexp((0, 1)))(x),
         *randn(12, (2, 3)))


# ---- randomness of jacfwd -----------------------------------------------------------------

@pytest.mark.parametrize("lib", [chainrule, __import__("torch")], ids=["chainrule", "torch"])
def test_jacfwd_randomness_same_uses_one_draw_for_every_column(lib):
    lib.manual_seed(0)
    x = lib.ones(4, dtype=lib.float64)
    j = lib.func.jacfwd(lambda a: a * lib.rand((), dtype=lib.float64), randomness="same")(x)
    d = np.diag(j.numpy())
    np.testing.assert_array_equal(d, d[0])
    np.testing.assert_array_equal(j.numpy() - np.diag(d), 0)


@pytest.mark.parametrize("lib", [chainrule, __import__("torch")], ids=["chainrule", "torch"])
def test_jacfwd_randomness_different_draws_per_column(lib):
    lib.manual_seed(0)
    x = lib.ones(4, dtype=lib.float64)
    j = lib.func.jacfwd(lambda a: a * lib.rand((), dtype=lib.float64),
                        randomness="different")(x)
    assert len(set(np.diag(j.numpy()))) == 4


def test_jacrev_has_aux_with_chunks(same):
    def program(lib, x, c):
        f = lambda a: (a.sin() @ c, {"s": a.sum()})  # noqa: E731
        return lib.func.jacrev(f, has_aux=True, chunk_size=2)(x)

    same(program, *randn(13, (3,), (3, 5)))


@pytest.mark.parametrize("jac", JACOBIANS)
def test_jacobian_of_the_identity(same, jac):
    same(lambda lib, x: getattr(lib.func, jac)(lambda a: a)(x), *randn(14, (2, 2)))


# From 128 rows on, a product with a diagonal factor (what vmap over the identity basis makes)
# runs as a scaling in chainrule; these check its numbers, and where it must not apply.

@pytest.mark.parametrize("jac", JACOBIANS)
def test_identity_basis_of_a_large_input(same, jac):
    def f(x, w1, w2):
        return (w2 @ (w1 @ x).tanh()).tanh()

    same(lambda lib, *a: getattr(lib.func, jac)(f)(*a), *randn(20, (256,), (256, 256), (256, 256)),
         rtol=1e-9, atol=1e-11)


@pytest.mark.parametrize("jac", JACOBIANS)
def test_identity_basis_meets_infinity_and_nan(same, jac):
    x, w = randn(21, (160,), (160, 160))
    w[3, 5], w[7, 1] = np.inf, np.nan  # a product spreads them over whole rows or columns
    same(lambda lib, x, w: getattr(lib.func, jac)(lambda x: w @ x)(x), x, w)


@pytest.mark.parametrize("side", ["left", "right"])
def test_products_with_diagonal_and_nearly_diagonal_factors(same, side):
    d, w = randn(22, (200,), (200, 200))
    near = np.diag(d)
    near[5, 2] = 0.5  # first row clean, one element below the diagonal: a full product

    def program(lib, d, w, near):
        m = lib.diag(d)
        pairs = [(m, w), (near, w), (m.mT, w.mT), (m.float(), w.float())]
        return [a @ b if side == "left" else b @ a for a, b in pairs]

    same(program, d, w, near, rtol=1e-6, atol=1e-6)


# ---- identity bases kept between calls ---------------------------------------------------


@pytest.mark.parametrize("jac", JACOBIANS)
def test_jacobian_of_the_identity_is_the_callers_own(same, jac):
    # The Jacobian of a pass-through function is the basis itself: writing into the returned
    # one must not change the next call's (the bases are kept between calls).
    def program(lib, x):
        first = getattr(lib.func, jac)(lambda a: a)(x)
        first.mul_(3)
        second = getattr(lib.func, jac)(lambda a: a.reshape(2, 3))(x)
        second.add_(1)
        third = getattr(lib.func, jac)(lambda a: a)(x)
        return first, second, third, getattr(lib.func, jac)(lambda a: a.reshape(2, 3))(x)

    same(program, *randn(40, (6,)))


def test_jacrev_backward_writing_into_its_gradient_twice(same):
    # A backward that scales its incoming gradient in place writes into the basis: the next
    # call must still start from the identity.
    def program(lib, x):
        class Double(lib.autograd.Function):
            generate_vmap_rule = True

            @staticmethod
            def forward(a):
                return a * 1.5

            @staticmethod
            def setup_context(ctx, inputs, output):
                pass

            @staticmethod
            def backward(ctx, g):
                g.mul_(2)
                return g * 1.5

        return [lib.func.jacrev(lambda a: Double.apply(a.sin()))(x) for _ in range(3)]

    same(program, *randn(41, (5,)))


@pytest.mark.parametrize("jac", JACOBIANS)
def test_repeated_jacobians_of_several_outputs_and_inputs(same, jac):
    def program(lib, x, w):
        f = lambda a, b: (vec(a, b), a.cumsum(0), b.sum(0))  # noqa: E731
        return [getattr(lib.func, jac)(f, argnums=(0, 1))(x * k, w) for k in (1.0, 2.0, 3.0)]

    same(program, *randn(42, (3,), (4, 3)))
