"""gradcheck and gradgradcheck catch wrong derivatives and accept right ones, as torch's do."""

from __future__ import annotations

import pytest
import torch

import chainrule as cr
from chainrule.autograd import GradcheckError, gradcheck, gradgradcheck


def make_cube(m, backward_factor: float, jvp_factor: float, once: bool = False):
    """x ** 3 with a hand-written backward and jvp scaled by the given factors (1 = right)."""

    def backward(ctx, g):
        (x,) = ctx.saved_tensors
        return g * backward_factor * 3 * x * x

    class Cube(m.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            ctx.x = x
            return x**3

        @staticmethod
        def jvp(ctx, t):
            return t * jvp_factor * 3 * ctx.x * ctx.x

    Cube.backward = staticmethod(m.autograd.function.once_differentiable(backward)
                                 if once else backward)
    return Cube


def x64(m):
    return m.tensor([0.5, -1.5, 2.0], dtype=m.float64, requires_grad=True)


@pytest.mark.parametrize("m", [cr, torch], ids=["chainrule", "torch"])
def test_right_rules_pass(m):
    cube = make_cube(m, 1.0, 1.0)
    assert gradcheck(cube.apply, (x64(cr),)) if m is cr else m.autograd.gradcheck(
        cube.apply, (x64(m),))
    if m is cr:
        assert gradgradcheck(cube.apply, (x64(cr),))
        assert gradcheck(cube.apply, (x64(cr),), check_forward_ad=True)


def test_wrong_backward_raises_and_reports():
    cube = make_cube(cr, 1.1, 1.0)
    with pytest.raises(GradcheckError, match="Jacobian mismatch for output 0 with respect to "
                                             "input 0"):
        gradcheck(cube.apply, (x64(cr),))
    assert gradcheck(cube.apply, (x64(cr),), raise_exception=False) is False
    assert issubclass(GradcheckError, RuntimeError)


def test_wrong_jvp_is_caught_with_check_forward_ad():
    cube = make_cube(cr, 1.0, 0.5)
    assert gradcheck(cube.apply, (x64(cr),))  # reverse mode alone is right
    with pytest.raises(GradcheckError, match="forward mode"):
        gradcheck(cube.apply, (x64(cr),), check_forward_ad=True)


def test_gradgradcheck_catches_a_non_differentiable_backward():
    cube = make_cube(cr, 1.0, 1.0, once=True)
    assert gradcheck(cube.apply, (x64(cr),))
    with pytest.raises(RuntimeError, match="once_differentiable"):
        gradgradcheck(cube.apply, (x64(cr),))


def test_gradgradcheck_catches_a_wrong_second_derivative():
    # backward's value is right but its own derivative is not: g * 3 x^2 computed from a detached
    # x has no dependence on x, so the second derivative is missing.
    class Detached(cr.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x**3

        @staticmethod
        def backward(ctx, g):
            (x,) = ctx.saved_tensors
            return g * 3 * x.detach() ** 2

    assert gradcheck(Detached.apply, (x64(cr),))
    with pytest.raises(GradcheckError):
        gradgradcheck(Detached.apply, (x64(cr),))


def test_float32_inputs_warn_and_no_grad_inputs_are_an_error():
    with pytest.warns(UserWarning, match="not a double precision"):
        # float32 finite differences are too coarse for the default tolerances (as in torch)
        gradcheck(lambda a: a * 2, (cr.tensor([1.0, 2.0], requires_grad=True),),
                  raise_exception=False)
    with pytest.raises(ValueError, match="at least one input tensor to require gradient"):
        gradcheck(lambda a: a * 2, (cr.tensor([1.0, 2.0], dtype=cr.float64),))
