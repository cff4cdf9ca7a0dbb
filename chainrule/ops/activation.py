"""Activations and softmax.

The records are the activations that earn a primitive: a PyTorch convention at a kink (hardtanh,
hardswish, leaky_relu, elu at 0) or numerical stability (softplus, logsigmoid, log_softmax); relu,
sigmoid and tanh are elementwise records, the rest (prelu, softsign, glu, ...) compositions.
"""

from __future__ import annotations

import math

from .._backend import xp
from .._batching import batch_dims
from .._dispatch import apply, apply_inplace
from .._threads import rows
from ..tensor import Tensor
from ._nnutil import check_float
from ._registry import defop
from ._shapes import normalize_dim
from .elementwise import _erf, exp, sigmoid, tanh, where

_SQRT_2_PI = math.sqrt(2.0 / math.pi)
_INV_SQRT_2PI = 1.0 / math.sqrt(2.0 * math.pi)


# ---- activations -------------------------------------------------------------------------------


def _stable_sigmoid(x):
    if x.dtype.kind == "c":  # no order to split on: the plain formula, as PyTorch's kernel
        return 1 / (1 + xp.exp(-x))
    e = xp.exp(-xp.abs(x))
    return xp.where(x >= 0, 1 / (1 + e), e / (1 + e)).astype(x.dtype, copy=False)


def _softplus_raw(z):
    # log(1 + e^z) without overflow: max(z, 0) + log1p(e^-|z|).
    return xp.maximum(z, 0) + xp.log1p(xp.exp(-xp.abs(z)))


def _leaky_relu(input, negative_slope):
    return xp.where(input > 0, input, input * negative_slope)


LEAKY_RELU = defop(
    "leaky_relu",
    _leaky_relu,
    ("input",),
    # PyTorch: the slope at 0 is negative_slope.
    (lambda g, input, negative_slope: where(input > 0, g, g * negative_slope),),
    jvp="elementwise",
)


def _elu(input, alpha, scale, input_scale):
    negative = xp.expm1(xp.minimum(input, 0) * input_scale) * (alpha * scale)
    return xp.where(input > 0, input * scale, negative)


def _elu_grad(g, input, alpha, scale, input_scale):
    # At 0 PyTorch takes the negative branch for the first derivative and 0 for the second. The
    # inner where keeps exp finite where it is not used (a second derivative of 0, not nan).
    inner = where(input < 0, input, 0.0) * input_scale
    negative = g * ((alpha * scale * input_scale) * exp(inner))
    return where(input > 0, g * scale, negative)


ELU = defop("elu", _elu, ("input",), (_elu_grad,), jvp="elementwise")
CELU = defop("celu", _elu, ("input",), (_elu_grad,), jvp="elementwise")


def _elu_result_grad(g, out, alpha, scale, input_scale):
    # From the result, as PyTorch's in-place forms (out <= 0 exactly where x <= 0).
    return where(out > 0, g * scale, g * (input_scale * (out + alpha * scale)))


# In-place forms (PyTorch's ...Backward1): the rules read the result, so the overwritten input
# need not be copied before the write.
LEAKY_RELU_ = defop(
    "leaky_relu_",
    _leaky_relu,
    ("input",),
    (lambda g, out, negative_slope: where(out > 0, g, g * negative_slope),),
    backward_name="LeakyReluBackward1",
    jvp="elementwise",
)
ELU_ = defop("elu_", _elu, ("input",), (_elu_result_grad,), backward_name="EluBackward1",
             jvp="elementwise")
CELU_ = defop("celu_", _elu, ("input",), (_elu_result_grad,), backward_name="CeluBackward1",
              jvp="elementwise")

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


def _softplus_grad(g, input, beta, threshold):
    # At beta * x == threshold PyTorch's first derivative is sigmoid(threshold) and its second
    # is 0: the inner where holds z constant there.
    z = input * beta
    return where(z > threshold, g, g * sigmoid(where(z < threshold, z, threshold)))


SOFTPLUS = defop("softplus", _softplus, ("input",), (_softplus_grad,), jvp="elementwise")
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


def log_softmax_raw(input, dim):
    if input.ndim == 0 or input.size == 0:
        return input - input
    shifted = input - input.max(axis=dim, keepdims=True)
    shifted -= xp.log(xp.exp(shifted).sum(axis=dim, keepdims=True))
    return shifted


def _sum_keep(t, dim):
    return t.sum(dim, keepdim=True) if t.ndim else t


_shift_dim = batch_dims("dim")


def _softmax_batch(op, args, flags, size, params):
    # The dim moves past the batch; 0-d examples are a batch of one-element vectors.
    if args[0].ndim == 1:
        return _shift_dim(op, [args[0].unsqueeze(1)], flags, size, params).squeeze(1)
    return _shift_dim(op, args, flags, size, params)


_softmax_batch.kind = "dims"

SOFTMAX = defop(
    "softmax",
    rows(_softmax),
    ("input",),
    (lambda g, out, dim: out * (g - _sum_keep(g * out, dim)),),
    # The Jacobian diag(s) - s s^T is symmetric: the VJP rule applied to a tangent is the JVP.
    jvp="elementwise",
    batch=_softmax_batch,
)
LOG_SOFTMAX = defop(
    "log_softmax",
    rows(log_softmax_raw),
    ("input",),
    (lambda g, out, dim: g - exp(out) * _sum_keep(g, dim),),
    jvp=lambda t_input, out, dim: t_input - _sum_keep(exp(out) * t_input, dim),
    batch=_softmax_batch,
)


def _softmax_dim(ndim: int, dim) -> int:
    if dim is None:  # PyTorch's legacy implicit choice
        dim = 0 if ndim in (0, 1, 3) else 1
    return normalize_dim(dim, ndim, "softmax")


def softmax(input: Tensor, dim=None, dtype=None) -> Tensor:
    """exp(x_i) / sum_j exp(x_j) along ``dim`` (computed stably)."""
    if dtype is not None:
        input = input.to(dtype)
    check_float(input, "softmax_lastdim_kernel_impl")
    return apply(SOFTMAX, input, dim=_softmax_dim(input.ndim, dim))


def log_softmax(input: Tensor, dim=None, dtype=None) -> Tensor:
    """log(softmax(x)) along ``dim``, computed without forming the softmax."""
    if dtype is not None:
        input = input.to(dtype)
    check_float(input, "log_softmax_lastdim_kernel_impl")
    return apply(LOG_SOFTMAX, input, dim=_softmax_dim(input.ndim, dim))


# ---- public functions ---------------------------------------------------------------------------
# PyTorch's signatures (those of torch.nn.functional where torch.* has no other form).


def leaky_relu(input: Tensor, negative_slope: float = 0.01, inplace: bool = False) -> Tensor:
    """x if x > 0 else negative_slope * x."""
    if inplace and negative_slope < 0:
        raise RuntimeError("In-place leakyReLu backward calculation is triggered with a negative "
                           "slope which is not supported. This is caused by calling in-place "
                           "forward function with a negative slope, please call out-of-place "
                           "version instead.")
    return _activation(LEAKY_RELU_ if inplace else LEAKY_RELU, input, inplace,
                       negative_slope=float(negative_slope))


def elu(input: Tensor, alpha: float = 1.0, inplace: bool = False) -> Tensor:
    """x if x > 0 else alpha * (exp(x) - 1)."""
    return _activation(ELU_ if inplace else ELU, input, inplace, alpha=float(alpha), scale=1.0,
                       input_scale=1.0)


_SELU_ALPHA = 1.6732632423543772848170429916717
_SELU_SCALE = 1.0507009873554804934193349852946


def selu(input: Tensor, inplace: bool = False) -> Tensor:
    """scale * elu(x, alpha) with the self-normalising constants."""
    return _activation(ELU_ if inplace else ELU, input, inplace, alpha=_SELU_ALPHA,
                       scale=_SELU_SCALE, input_scale=1.0)


def celu(input: Tensor, alpha: float = 1.0, inplace: bool = False) -> Tensor:
    """max(0, x) + min(0, alpha * (exp(x / alpha) - 1))."""
    if alpha == 0:
        raise RuntimeError("ZeroDivisionError: alpha of celu must not be 0")
    return _activation(CELU_ if inplace else CELU, input, inplace, alpha=float(alpha),
                       scale=1.0, input_scale=1.0 / alpha)


def hardtanh(input: Tensor, min_val: float = -1.0, max_val: float = 1.0,
             inplace: bool = False) -> Tensor:
    """x clamped to [min_val, max_val]; the gradient is 0 at the bounds."""
    if min_val > max_val:
        raise ValueError("min_val cannot be greater than max_val")
    if input._data.dtype.kind in "iu":
        # integer tensors: PyTorch's kernel clamps to the bounds truncated to integers
        low, high = int(min_val), int(max_val)
        return input.clamp_(low, high) if inplace else input.clamp(low, high)
    return _activation(HARDTANH, input, inplace, min_val=min_val, max_val=max_val)


def relu6(input: Tensor, inplace: bool = False) -> Tensor:
    """min(max(0, x), 6)."""
    return hardtanh(input, 0.0, 6.0, inplace)


def hardsigmoid(input: Tensor, inplace: bool = False) -> Tensor:
    """relu6(x + 3) / 6."""
    return _activation(HARDSIGMOID, input, inplace)


def hardswish(input: Tensor, inplace: bool = False) -> Tensor:
    """x * relu6(x + 3) / 6."""
    return _activation(HARDSWISH, input, inplace)


def silu(input: Tensor, inplace: bool = False) -> Tensor:
    """x * sigmoid(x)."""
    return _activation(SILU, input, inplace)


def mish(input: Tensor, inplace: bool = False) -> Tensor:
    """x * tanh(softplus(x))."""
    return _activation(MISH, input, inplace)


def gelu(input: Tensor, approximate: str = "none") -> Tensor:
    """x * Phi(x), Phi the standard normal CDF (or its tanh approximation)."""
    if approximate not in ("none", "tanh"):
        raise RuntimeError(f"approximate argument must be either none or tanh, got "
                           f"{approximate!r}")
    check_float(input, "GeluKernelImpl")
    return apply(GELU, input, approximate=approximate)


def softplus(input: Tensor, beta: float = 1.0, threshold: float = 20.0) -> Tensor:
    """log(1 + exp(beta * x)) / beta, and x itself where beta * x > threshold."""
    check_float(input, "softplus")
    return apply(SOFTPLUS, input, beta=float(beta), threshold=float(threshold))


def logsigmoid(input: Tensor) -> Tensor:
    """log(sigmoid(x)), computed stably."""
    check_float(input, "log_sigmoid_forward")
    return apply(LOGSIGMOID, input)


def _activation(op, input: Tensor, inplace: bool, **params) -> Tensor:
    check_float(input, op.name)
    if inplace:
        return apply_inplace(op, input, **params)
    return apply(op, input, **params)


def prelu(input, weight) -> Tensor:
    """x if x > 0 else weight * x, weight per channel (dim 1) or shared."""
    if weight.numel() != 1 and (input.ndim < 2 or weight.numel() != input.shape[1]):
        raise RuntimeError(f"Mismatch of parameter numbers and input channel size. Found "
                           f"parameter numbers = {weight.numel()} and channel size = "
                           f"{input.shape[1] if input.ndim > 1 else 1}.")
    if weight.numel() != 1 and input.ndim > 2:
        weight = weight.reshape((-1,) + (1,) * (input.ndim - 2))
    return where(input > 0, input, weight * input)


FUNCTIONS = {
    "softmax": softmax,
    "log_softmax": log_softmax,
    "selu": selu,
    "celu": celu,
    "prelu": prelu,
}


def _softmax_method(self, dim=None, dtype=None) -> Tensor:
    return softmax(self, dim, dtype)


def _log_softmax_method(self, dim=None, dtype=None) -> Tensor:
    return log_softmax(self, dim, dtype)


METHODS = {"softmax": _softmax_method, "log_softmax": _log_softmax_method, "prelu": prelu}
