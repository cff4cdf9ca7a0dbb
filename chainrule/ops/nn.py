"""Neural-network ops: activations, softmax, linear, convolution, pooling, normalisation, losses.

Most of ``chainrule.nn.functional`` is composed from the other families; the records here are the
primitives that earn their place: a PyTorch convention at a kink (hardtanh, hardswish), numerical
stability (softplus, logsigmoid, log_softmax, the fused cross-entropy, binary cross-entropy), or
the speed and memory of a hot op (linear, convolution, pooling, normalisation). Convolutions are
im2col (a strided window view) plus one matmul; their derivatives are convolutions again, so every
order of derivative comes from three records that are each other's VJPs.
"""

from __future__ import annotations

import itertools
import math

from .._backend import xp
from .._dispatch import apply
from ..tensor import Tensor
from ._registry import defop
from .elementwise import exp, log, sigmoid, tanh, where

_as_strided = xp.lib.stride_tricks.as_strided
_SQRT_2_PI = math.sqrt(2.0 / math.pi)
_INV_SQRT_2PI = 1.0 / math.sqrt(2.0 * math.pi)


def _const(array) -> Tensor:
    """A raw array as a tensor that needs no gradient (masks, one-hot weights)."""
    return Tensor._wrap(array, None, 0)


def _sum_terms(*terms):
    """The sum of the terms that are not None (None if all are)."""
    total = None
    for t in terms:
        if t is not None:
            total = t if total is None else total + t
    return total


# ---- activations -------------------------------------------------------------------------------


def _stable_sigmoid(x):
    e = xp.exp(-xp.abs(x))
    return xp.where(x >= 0, 1 / (1 + e), e / (1 + e)).astype(x.dtype, copy=False)


def _softplus_raw(z):
    # log(1 + e^z) without overflow: max(z, 0) + log1p(e^-|z|).
    return xp.maximum(z, 0) + xp.log1p(xp.exp(-xp.abs(z)))


LEAKY_RELU = defop(
    "leaky_relu",
    lambda input, negative_slope: xp.where(input > 0, input, input * negative_slope),
    ("input",),
    # PyTorch: the slope at 0 is negative_slope.
    (lambda g, input, negative_slope: where(input > 0, g, g * negative_slope),),
    jvp="elementwise",
)


def _elu(input, alpha, scale, input_scale):
    negative = xp.expm1(xp.minimum(input, 0) * input_scale) * (alpha * scale)
    return xp.where(input > 0, input * scale, negative)


def _elu_grad(g, input, alpha, scale, input_scale):
    # At 0 PyTorch takes the negative branch. The clamp keeps exp finite where it is not used,
    # so a second derivative through the unused branch is 0, not nan.
    negative = g * ((alpha * scale * input_scale) * exp(input.clamp(max=0) * input_scale))
    return where(input > 0, g * scale, negative)


ELU = defop("elu", _elu, ("input",), (_elu_grad,), jvp="elementwise")
CELU = defop("celu", _elu, ("input",), (_elu_grad,), jvp="elementwise")

HARDTANH = defop(
    "hardtanh",
    lambda input, min_val, max_val: xp.clip(input, min_val, max_val),
    ("input",),
    # PyTorch passes the gradient strictly inside (min_val, max_val): 0 at the bounds.
    (lambda g, input, min_val, max_val: g * ((input > min_val) & (input < max_val)),),
    jvp="elementwise",
)
HARDSIGMOID = defop(
    "hardsigmoid",
    lambda input: xp.clip(input + 3, 0, 6) / 6,
    ("input",),
    (lambda g, input: g * ((input > -3) & (input < 3)) / 6,),
    jvp="elementwise",
)
HARDSWISH = defop(
    "hardswish",
    lambda input: input * (xp.clip(input + 3, 0, 6) / 6),
    ("input",),
    # PyTorch: 0 for x <= -3, x/3 + 1/2 strictly inside, 1 for x >= 3.
    (
        lambda g, input: where(
            input <= -3, 0.0, where(input < 3, g * (input / 3 + 0.5), g)
        ),
    ),
    jvp="elementwise",
)


def _softplus(input, beta, threshold):
    z = input * beta
    return xp.where(z > threshold, input, _softplus_raw(z) / beta).astype(input.dtype, copy=False)


SOFTPLUS = defop(
    "softplus",
    _softplus,
    ("input",),
    (
        lambda g, input, beta, threshold: where(
            input * beta > threshold, g, g * sigmoid(input * beta)
        ),
    ),
    jvp="elementwise",
)
LOGSIGMOID = defop(
    "logsigmoid",
    lambda input: -_softplus_raw(-input),
    ("input",),
    (lambda g, input: g * sigmoid(-input),),
    backward_name="LogSigmoidBackward0",
    jvp="elementwise",
)
SILU = defop(
    "silu",
    lambda input: input * _stable_sigmoid(input),
    ("input",),
    (lambda g, input: _silu_grad(g, input),),
    jvp="elementwise",
)


def _silu_grad(g, input):
    s = sigmoid(input)
    return g * (s * (1 + input * (1 - s)))


def _mish_grad(g, input):
    t = tanh(apply(SOFTPLUS, input, beta=1.0, threshold=20.0))
    return g * (t + input * sigmoid(input) * (1 - t * t))


MISH = defop(
    "mish",
    lambda input: input * xp.tanh(_softplus_raw(input)),
    ("input",),
    (_mish_grad,),
    jvp="elementwise",
)


def _erf(x):
    """erf to float precision with NumPy only: a series of positive terms for |x| < 2.5, a
    continued fraction for erfc beyond (Abramowitz & Stegun 7.1.6 and 7.1.14)."""
    single = x.dtype.itemsize < 8
    n_series, n_fraction = (24, 20) if single else (40, 40)
    a = xp.abs(x)
    small = a < 2.5
    out = xp.empty_like(x)
    xs = x[small]
    if xs.size:
        # erf(x) = 2/sqrt(pi) e^(-x^2) sum_n 2^n x^(2n+1) / (1*3*...*(2n+1))
        term = xs.copy()
        total = xs.copy()
        two_x2 = 2 * xs * xs
        for n in range(1, n_series):
            term *= two_x2
            term /= 2 * n + 1
            total += term
        out[small] = total * xp.exp(-xs * xs) * (2 / math.sqrt(math.pi))
    large = ~small
    xl = a[large]
    if xl.size:
        f = xl.copy()
        for k in range(n_fraction, 0, -1):
            f = xl + (k / 2) / f
        erfc = xp.exp(-xl * xl) / (math.sqrt(math.pi) * f)
        out[large] = xp.sign(x[large]) * (1 - erfc)
    return out


def _gelu(input, approximate):
    if approximate == "tanh":
        inner = _SQRT_2_PI * (input + 0.044715 * input * input * input)
        return 0.5 * input * (1 + xp.tanh(inner))
    return 0.5 * input * (1 + _erf(input * (1 / math.sqrt(2.0))))


def _gelu_tanh_grad(g, input):
    # d/dx of x/2 (1 + tanh(k (x + c x^3))), written in differentiable ops.
    t = tanh(_SQRT_2_PI * (input + 0.044715 * input * input * input))
    dinner = _SQRT_2_PI * (1 + 3 * 0.044715 * input * input)
    return g * (0.5 * (1 + t) + 0.5 * input * (1 - t * t) * dinner)


def _gelu_backward(grad, input):
    cdf = 0.5 * (1 + _erf(input * (1 / math.sqrt(2.0))))
    pdf = xp.exp(-0.5 * input * input) * _INV_SQRT_2PI
    return grad * (cdf + input * pdf)


# gelu'(x) = Phi(x) + x phi(x) needs erf, which has no record of its own: a fused backward
# primitive (as PyTorch's gelu_backward) whose own derivative, phi(x) (2 - x^2), needs only exp.
GELU_BACKWARD = defop(
    "gelu_backward",
    _gelu_backward,
    ("grad", "input"),
    (
        lambda g, input: apply(GELU_BACKWARD, g, input),
        lambda g, grad, input: g * grad * (exp(-0.5 * input * input) * _INV_SQRT_2PI)
        * (2 - input * input),
    ),
    backward_name="GeluBackwardBackward0",
    jvp="elementwise",
)
GELU = defop(
    "gelu",
    _gelu,
    ("input",),
    (
        lambda g, input, approximate: (
            _gelu_tanh_grad(g, input)
            if approximate == "tanh"
            else apply(GELU_BACKWARD, g, input)
        ),
    ),
    jvp="elementwise",
)

# ---- softmax -----------------------------------------------------------------------------------


def _softmax(input, dim):
    if input.ndim == 0 or input.size == 0:
        return xp.exp(input - input)
    e = input - input.max(axis=dim, keepdims=True)
    xp.exp(e, out=e)
    e /= e.sum(axis=dim, keepdims=True)
    return e


def _log_softmax(input, dim):
    if input.ndim == 0 or input.size == 0:
        return input - input
    shifted = input - input.max(axis=dim, keepdims=True)
    shifted -= xp.log(xp.exp(shifted).sum(axis=dim, keepdims=True))
    return shifted


def _sum_keep(t, dim):
    return t.sum(dim, keepdim=True) if t.ndim else t


SOFTMAX = defop(
    "softmax",
    _softmax,
    ("input",),
    (lambda g, out, dim: out * (g - _sum_keep(g * out, dim)),),
    # The Jacobian diag(s) - s s^T is symmetric: the VJP rule applied to a tangent is the JVP.
    jvp="elementwise",
)
LOG_SOFTMAX = defop(
    "log_softmax",
    _log_softmax,
    ("input",),
    (lambda g, out, dim: g - exp(out) * _sum_keep(g, dim),),
    jvp=lambda t_input, out, dim: t_input - _sum_keep(exp(out) * t_input, dim),
)

# ---- linear ------------------------------------------------------------------------------------


def _linear(input, weight, bias):
    out = xp.matmul(input, weight.T)
    if bias is not None:
        out += bias
    return out


def _linear_weight_grad(g, input):
    if g.ndim == 2:
        return g.mT @ input
    return g.reshape(-1, g.shape[-1]).mT @ input.reshape(-1, input.shape[-1])


def _linear_jvp(t_input, t_weight, t_bias, input, weight):
    return _sum_terms(
        None if t_input is None else apply(LINEAR, t_input, weight, None),
        None if t_weight is None else apply(LINEAR, input, t_weight, None),
        t_bias,
    )


# Fused matmul + bias (a hot op): one BLAS call and an in-place add; the bias gradient is g,
# summed over the batch dims by the engine's un-broadcast.
LINEAR = defop(
    "linear",
    _linear,
    ("input", "weight", "bias"),
    (lambda g, weight: g @ weight, _linear_weight_grad, lambda g: g),
    backward_name="AddmmBackward0",
    jvp=_linear_jvp,
)
