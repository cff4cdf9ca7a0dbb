"""Neural-network ops: activations, softmax, linear, convolution, pooling, normalisation, losses.

Most of ``chainrule.nn.functional`` is composed from the other families; the records here are the
primitives that earn their place: a PyTorch convention at a kink (hardtanh, hardswish), numerical
stability (softplus, logsigmoid, log_softmax, the fused cross-entropy, binary cross-entropy), or
the speed and memory of a hot op (linear, convolution, pooling, normalisation). Convolutions are
im2col (a strided window view) plus one matmul; their derivatives are convolutions again, so every
order of derivative comes from two records that are each other's VJPs.
"""

from __future__ import annotations

import itertools
import math

from .._backend import xp
from .._dispatch import apply, apply_inplace
from ..tensor import Tensor
from ._registry import defop
from ._shapes import normalize_dim
from .elementwise import _erf, exp, log, sigmoid, tanh, where

_as_strided = xp.lib.stride_tricks.as_strided
_SQRT_2_PI = math.sqrt(2.0 / math.pi)
_INV_SQRT_2PI = 1.0 / math.sqrt(2.0 * math.pi)


def const(array) -> Tensor:
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

# ---- convolution -------------------------------------------------------------------------------
# Shapes: input (N, C, *spatial), weight (O, C/groups, *kernel). ``padding`` is a tuple of
# (before, after) pairs, one per spatial dim, so 'same' with an even kernel needs no extra copy.


def _pad_spatial(x, padding, value=0.0):
    """x padded by (before, after) pairs on its trailing dims (cropped where negative), in x's
    memory layout."""
    if not any(lo or hi for lo, hi in padding):
        return x
    lead = x.ndim - len(padding)
    if any(lo < 0 or hi < 0 for lo, hi in padding):
        x = x[(slice(None),) * lead + tuple(
            slice(max(-lo, 0), n - max(-hi, 0)) for n, (lo, hi) in zip(x.shape[lead:], padding))]
        padding = tuple((max(lo, 0), max(hi, 0)) for lo, hi in padding)
        if not any(lo or hi for lo, hi in padding):
            return x
    shape = x.shape[:lead] + tuple(n + lo + hi for n, (lo, hi) in zip(x.shape[lead:], padding))
    out = xp.full_like(x, value, shape=shape)  # order 'K': a channels-last x stays so
    out[(slice(None),) * lead + tuple(slice(lo, lo + n) for n, (lo, _) in
                                      zip(x.shape[lead:], padding))] = x
    return out


def _windows(x, kernel, stride, dilation, out, channel_minor=False):
    """The (N, *out, C, *kernel) view of x's windows, x being (N, C, *spatial), padded; with
    channel_minor, (N, *out, *kernel, C)."""
    step = x.strides[2:]
    for size, o, k, s, d in zip(x.shape[2:], out, kernel, stride, dilation):
        if (o - 1) * s + (k - 1) * d >= size:
            raise RuntimeError("internal error: convolution windows exceed the input")
    positions = tuple(st * s for st, s in zip(step, stride))
    offsets = tuple(st * d for st, d in zip(step, dilation))
    if channel_minor:
        shape = (x.shape[0],) + tuple(out) + tuple(kernel) + (x.shape[1],)
        strides = (x.strides[0],) + positions + offsets + (x.strides[1],)
    else:
        shape = (x.shape[0],) + tuple(out) + (x.shape[1],) + tuple(kernel)
        strides = (x.strides[0],) + positions + (x.strides[1],) + offsets
    return _as_strided(x, shape=shape, strides=strides, writeable=False)


def _im2col(x, kernel, stride, dilation, out, channel_minor=False):
    """Columns (N * prod(out), C * prod(kernel)) of the padded x: one row per output position.
    The columns run over (C, *kernel), or (*kernel, C) with channel_minor: a copy whose inner
    loop runs over the channels, several times faster in NumPy unless C is tiny."""
    windows = _windows(x, kernel, stride, dilation, out, channel_minor)
    return windows.reshape(windows.shape[0] * math.prod(out), -1)


def _kernel_major(w):
    """(O, C, *k) -> (O, *k, C): a weight laid out like channel-minor columns."""
    return xp.moveaxis(w, 1, -1)


def _channels_last(y, nd):
    """(N, C, *spatial) as a (N * prod(spatial), C) matrix (free when y is channels-last)."""
    return xp.moveaxis(y, 1, -1).reshape(-1, y.shape[1])


def _conv_out_size(size, padding, kernel, stride, dilation):
    return tuple(
        (n + lo + hi - d * (k - 1) - 1) // s + 1
        for n, (lo, hi), k, s, d in zip(size, padding, kernel, stride, dilation)
    )


def _correlate(x, w, stride, padding, dilation, groups, output_size=None):
    nd = w.ndim - 2
    kernel = w.shape[2:]
    n, out_channels = x.shape[0], w.shape[0]
    x = _pad_spatial(x, padding)
    if output_size is None:
        output_size = _conv_out_size(x.shape[2:], ((0, 0),) * nd, kernel, stride, dilation)
    if groups == 1:
        cols = _im2col(x, kernel, stride, dilation, output_size, True)
        y = cols @ _kernel_major(w).reshape(out_channels, -1).T
    else:
        cols = _im2col(x, kernel, stride, dilation, output_size)
        cols = cols.reshape(cols.shape[0], groups, -1).transpose(1, 0, 2)
        y = cols @ w.reshape(groups, out_channels // groups, -1).transpose(0, 2, 1)
        y = y.transpose(1, 0, 2).reshape(-1, out_channels)
    # Channels-last in memory, (N, O, *out) to the user: no transposing copy.
    return xp.moveaxis(y.reshape((n,) + tuple(output_size) + (out_channels,)), -1, 1)


def _col2im(blocks, n, channels, kernel, stride, dilation, positions, padding, size, dtype):
    """Sum window blocks back into an image: the adjoint of taking windows.

    ``blocks(offset)`` gives the (N, *positions, C) contributions of one kernel offset; the result
    is (N, C, *size), with the ``padding`` (before, after) cropped away.
    """
    extent = tuple(
        max(lo + s + hi, (p - 1) * st + (k - 1) * d + 1)
        for (lo, hi), s, p, k, st, d in zip(padding, size, positions, kernel, stride, dilation)
    )
    buf = xp.zeros((n,) + extent + (channels,), dtype=dtype)
    for offset in itertools.product(*(range(k) for k in kernel)):
        index = tuple(
            slice(o * d, o * d + (p - 1) * st + 1, st)
            for o, d, p, st in zip(offset, dilation, positions, stride)
        )
        buf[(slice(None),) + index] += blocks(offset)
    crop = tuple(slice(lo, lo + s) for (lo, _), s in zip(padding, size))
    return xp.moveaxis(buf[(slice(None),) + crop], -1, 1)


def _correlate_transpose(x, w, stride, padding, dilation, groups, output_size):
    """The adjoint of ``_correlate`` in its input: x (N, C_in, *p), w (C_in, C_out/groups, *k)."""
    nd = w.ndim - 2
    kernel = w.shape[2:]
    n, c_in = x.shape[:2]
    positions = x.shape[2:]
    c_out = w.shape[1] * groups
    if groups == 1 and all(s == 1 for s in stride):
        # With stride 1 the adjoint is itself a correlation: of x padded by the kernel's reach
        # less the padding, with the flipped kernel (one im2col and matmul, no scatter).
        pads = tuple(
            ((k - 1) * d - lo, size + lo - p)
            for (lo, _), k, d, size, p in zip(padding, kernel, dilation, output_size, positions))
        flipped = w[(slice(None), slice(None)) + (slice(None, None, -1),) * nd].swapaxes(0, 1)
        return _correlate(x, flipped, stride, pads, dilation, 1, tuple(output_size))
    x2 = _channels_last(x, nd)
    if groups == 1:
        # Columns ordered (*k, C_out): each offset's block is then channels-last.
        cols = x2 @ _kernel_major(w).reshape(c_in, -1)
        cols = cols.reshape((n,) + tuple(positions) + tuple(kernel) + (c_out,))

        def block(offset):
            return cols[(slice(None),) * (1 + nd) + offset]
    else:
        x3 = x2.reshape(x2.shape[0], groups, -1).transpose(1, 0, 2)
        cols = (x3 @ w.reshape(groups, c_in // groups, -1)).transpose(1, 0, 2)
        cols = cols.reshape((n,) + tuple(positions) + (c_out,) + tuple(kernel))

        def block(offset):
            return cols[(Ellipsis,) + offset]
    return _col2im(block, n, c_out, kernel, stride, dilation, positions, padding, output_size,
                   x.dtype)


def _correlate_weight(x, g, kernel, stride, padding, dilation, groups):
    """d<g, correlate(x, w)>/dw: the correlation of the padded x with g."""
    out_channels = g.shape[1]
    x = _pad_spatial(x, padding)
    g2 = _channels_last(g, len(kernel))
    if groups == 1:
        # (cols^T g)^T: the faster orientation for BLAS with these tall matrices.
        dw = (_im2col(x, kernel, stride, dilation, g.shape[2:], True).T @ g2).T
        dw = dw.reshape((out_channels,) + tuple(kernel) + (x.shape[1],))
        return xp.ascontiguousarray(xp.moveaxis(dw, -1, 1))
    else:
        cols = _im2col(x, kernel, stride, dilation, g.shape[2:])
        g3 = g2.reshape(g2.shape[0], groups, -1).transpose(1, 2, 0)
        dw = g3 @ cols.reshape(cols.shape[0], groups, -1).transpose(1, 0, 2)
    return dw.reshape((out_channels, x.shape[1] // groups) + tuple(kernel))


def _convolution(input, weight, bias, stride, padding, dilation, groups, transposed, output_size):
    if transposed:
        y = _correlate_transpose(input, weight, stride, padding, dilation, groups, output_size)
    else:
        y = _correlate(input, weight, stride, padding, dilation, groups, output_size)
    if bias is not None:
        y += bias.reshape((-1,) + (1,) * (weight.ndim - 2))
    return y


def _conv(x, w, forward_size, **geometry):
    """Convolution (no bias) as a recorded op: correlate, or with forward_size its adjoint."""
    if forward_size is None:
        return apply(CONVOLUTION, x, w, None, transposed=False, output_size=None, **geometry)
    return apply(CONVOLUTION, x, w, None, transposed=True, output_size=forward_size, **geometry)


def _conv_input_grad(g, weight, input_shape, stride, padding, dilation, groups, transposed):
    geometry = dict(stride=stride, padding=padding, dilation=dilation, groups=groups)
    if transposed:
        return apply(CONVOLUTION, g, weight, None, transposed=False,
                     output_size=input_shape[2:], **geometry)
    return _conv(g, weight, input_shape[2:], **geometry)


def _conv_weight_grad(g, input, weight_shape, stride, padding, dilation, groups, transposed):
    x, grad = (g, input) if transposed else (input, g)
    return apply(CONVOLUTION_WEIGHT, x, grad, kernel=weight_shape[2:], stride=stride,
                 padding=padding, dilation=dilation, groups=groups)


def _conv_jvp(t_input, t_weight, t_bias, input, weight, stride, padding, dilation, groups,
              transposed, output_size):
    params = dict(stride=stride, padding=padding, dilation=dilation, groups=groups,
                  transposed=transposed, output_size=output_size)
    return _sum_terms(
        None if t_input is None else apply(CONVOLUTION, t_input, weight, None, **params),
        None if t_weight is None else apply(CONVOLUTION, input, t_weight, None, **params),
        None if t_bias is None else t_bias.reshape((-1,) + (1,) * (weight.ndim - 2)),
    )


# One record for conv1d/2d/3d and their transposes (as PyTorch's ConvolutionBackward0). Its VJPs
# are a convolution (transposed the other way) and CONVOLUTION_WEIGHT, whose VJPs are again the
# two convolutions: all orders of derivative close over these two records.
CONVOLUTION = defop(
    "convolution",
    _convolution,
    ("input", "weight", "bias"),
    (
        _conv_input_grad,
        _conv_weight_grad,
        lambda g: g.sum(dim=(0,) + tuple(range(2, g.ndim))),
    ),
    jvp=_conv_jvp,
)
CONVOLUTION_WEIGHT = defop(
    "convolution_weight",
    _correlate_weight,
    ("input", "grad"),
    (
        lambda g, grad, input_shape, stride, padding, dilation, groups: _conv(
            grad, g, input_shape[2:], stride=stride, padding=padding, dilation=dilation,
            groups=groups,
        ),
        lambda g, input, grad_shape, stride, padding, dilation, groups: apply(
            CONVOLUTION, input, g, None, stride=stride, padding=padding, dilation=dilation,
            groups=groups, transposed=False, output_size=grad_shape[2:],
        ),
    ),
    backward_name="ConvolutionBackwardBackward0",
    jvp="multilinear",
)

# ---- unfold / fold -----------------------------------------------------------------------------


def _unfold(input, kernel, dilation, padding, stride):
    n, c = input.shape[:2]
    x = _pad_spatial(input, padding)
    out = _conv_out_size(x.shape[2:], ((0, 0),) * len(kernel), kernel, stride, dilation)
    windows = _windows(x, kernel, stride, dilation, out)  # (N, *out, C, *k)
    nd = len(kernel)
    order = (0, 1 + nd) + tuple(range(2 + nd, 2 + 2 * nd)) + tuple(range(1, 1 + nd))
    return windows.transpose(order).reshape(n, c * math.prod(kernel), math.prod(out))


def _fold(input, output_size, kernel, dilation, padding, stride):
    n = input.shape[0]
    nd = len(kernel)
    c = input.shape[1] // math.prod(kernel)
    padded = tuple(s + lo + hi for s, (lo, hi) in zip(output_size, padding))
    positions = _conv_out_size(padded, ((0, 0),) * nd, kernel, stride, dilation)
    cols = input.reshape((n, c) + tuple(kernel) + tuple(positions))

    def block(offset):
        return xp.moveaxis(cols[(slice(None), slice(None)) + offset], 1, -1)

    return _col2im(block, n, c, kernel, stride, dilation, positions, padding, output_size,
                   input.dtype)


UNFOLD = defop(
    "unfold",
    _unfold,
    ("input",),
    (
        lambda g, input_shape, kernel, dilation, padding, stride: apply(
            FOLD, g, output_size=input_shape[2:], kernel=kernel, dilation=dilation,
            padding=padding, stride=stride,
        ),
    ),
    backward_name="Im2ColBackward0",
    jvp="linear",
)
FOLD = defop(
    "fold",
    _fold,
    ("input",),
    (
        lambda g, kernel, dilation, padding, stride: apply(
            UNFOLD, g, kernel=kernel, dilation=dilation, padding=padding, stride=stride
        ),
    ),
    backward_name="Col2ImBackward0",
    jvp="linear",
)

# ---- pooling -----------------------------------------------------------------------------------


def pool_out_size(size, kernel, stride, padding, dilation, ceil_mode):
    """PyTorch's pooled length; with ceil_mode the last window must start inside the input or
    its left padding."""
    span = size + 2 * padding - dilation * (kernel - 1) - 1
    out = (span + (stride - 1 if ceil_mode else 0)) // stride + 1
    if ceil_mode and (out - 1) * stride >= size + padding:
        out -= 1
    return out


def _pool_pad(x, kernel, stride, padding, dilation, out, value):
    """x padded before by ``padding`` and after as far as the last window reaches."""
    size = x.shape[x.ndim - len(kernel):]
    pairs = tuple(
        (p, max(0, (o - 1) * s + d * (k - 1) + 1 - p - n))
        for n, k, s, p, d, o in zip(size, kernel, stride, padding, dilation, out)
    )
    return _pad_spatial(x, pairs, value), pairs


def _offset_view(x, offset, stride, dilation, out):
    nd = len(offset)
    index = tuple(
        slice(o * d, o * d + (n - 1) * s + 1, s)
        for o, d, n, s in zip(offset, dilation, out, stride)
    )
    return x[(slice(None),) * (x.ndim - nd) + index]


def _window_max(x, kernel, stride, padding, dilation, out):
    """The views of x at each kernel offset (padded with -inf) and their elementwise maximum."""
    fill = -xp.inf if x.dtype.kind == "f" else xp.iinfo(x.dtype).min
    padded, _ = _pool_pad(x, kernel, stride, padding, dilation, out, fill)
    offsets = list(itertools.product(*(range(k) for k in kernel)))
    views = [_offset_view(padded, o, stride, dilation, out) for o in offsets]
    best = views[0].copy() if len(views) == 1 else xp.maximum(views[0], views[1])
    for view in views[2:]:
        xp.maximum(best, view, out=best)  # NaN propagates, as in PyTorch
    return offsets, views, best


def max_pool_indices(x, kernel, stride, padding, dilation, out):
    """For each window, the flat index (over the spatial dims) of its maximum: the first one on
    ties, the last NaN if any (PyTorch's scan order)."""
    nd = len(kernel)
    offsets, views, best = _window_max(x, kernel, stride, padding, dilation, out)
    # The offset of the first view equal to the maximum, as a small integer code.
    code_type = xp.int8 if len(views) < 128 else xp.int32
    code = xp.full(best.shape, len(views) - 1, dtype=code_type)
    for k in range(len(views) - 2, -1, -1):
        code = xp.where(views[k] == best, code_type(k), code)
    if x.dtype.kind == "f":
        nan = xp.isnan(best)
        if nan.any():  # no view equals a NaN maximum: take the last NaN
            for k, view in enumerate(views):
                code = xp.where(nan & xp.isnan(view), code_type(k), code)
    size = x.shape[x.ndim - nd:]
    place = [math.prod(size[i + 1:]) for i in range(nd)]
    delta = xp.array([sum(o * d * p for o, d, p in zip(off, dilation, place))
                      for off in offsets], dtype=xp.int64)
    base = 0
    for i in range(nd):
        shape = [1] * nd
        shape[i] = out[i]
        base = base + ((xp.arange(out[i]) * stride[i] - padding[i]) * place[i]).reshape(shape)
    return xp.take(delta, code) + base


def _max_pool(input, indices, kernel, stride, padding, dilation, out, disjoint):
    # The window maxima straight from strided views (they keep a channels-last layout); equal
    # to gathering the input at the indices.
    return _window_max(input, kernel, stride, padding, dilation, out)[2]


def gather_at(t: Tensor, indices, nd: int) -> Tensor:
    """t (..., *spatial) gathered at flat spatial indices (..., *out), in differentiable ops."""
    lead = math.prod(t.shape[: t.ndim - nd])
    index = indices._data if isinstance(indices, Tensor) else indices
    rows = xp.arange(lead)[:, None]
    flat = t.reshape(lead, -1)[rows, index.reshape(lead, -1)]
    return flat.reshape(index.shape)


def _max_pool_scatter(grad, indices, input_size, disjoint):
    nd = len(input_size)
    lead = math.prod(grad.shape[: grad.ndim - nd])
    out = xp.zeros((lead, math.prod(input_size)), dtype=grad.dtype)
    flat_idx = indices.reshape(lead, -1)
    flat_grad = grad.reshape(lead, -1)
    if disjoint:  # no input element is in two windows: a plain scatter
        xp.put_along_axis(out, flat_idx, flat_grad, axis=1)
    else:
        xp.add.at(out, (xp.arange(lead)[:, None], flat_idx), flat_grad)
    return out.reshape(grad.shape[: grad.ndim - nd] + tuple(input_size))


def _max_pool_grad(g, indices, input_shape, kernel, disjoint):
    return apply(MAX_POOL_BACKWARD, g, indices, input_size=input_shape[-len(kernel):],
                 disjoint=disjoint)


def _max_pool_record(name: str, backward_name: str):
    # The indices of the window maxima are computed once, without gradient, and passed in: the
    # VJP scatters g to them, and the scatter's VJP gathers at them.
    return defop(
        name,
        _max_pool,
        ("input", "indices"),
        (_max_pool_grad, None),
        backward_name=backward_name,
        jvp=lambda t_input, indices, kernel: gather_at(t_input, indices, len(kernel)),
    )


MAX_POOL2D = _max_pool_record("max_pool2d", "MaxPool2DWithIndicesBackward0")
MAX_POOL3D = _max_pool_record("max_pool3d", "MaxPool3DWithIndicesBackward0")
MAX_POOL_BACKWARD = defop(
    "max_pool_backward",
    _max_pool_scatter,
    ("grad", "indices"),
    (lambda g, indices, input_size: gather_at(g, indices, len(input_size)), None),
    jvp="linear",
)


def avg_pool_divisor(size, kernel, stride, padding, out, count_include_pad, divisor_override,
                     dtype):
    """1 / (the number of elements each window averages), as an array of the pooled shape."""
    if divisor_override:
        return xp.full(out, 1.0 / divisor_override, dtype=dtype)
    total = xp.ones((), dtype=xp.float64)
    for n, k, s, p, o in zip(size, kernel, stride, padding, out):
        start = xp.arange(o) * s - p
        end = xp.minimum(start + k, n + p)
        count = end - start if count_include_pad else (
            xp.minimum(end, n) - xp.maximum(start, 0))
        total = xp.multiply.outer(total, count)
    return (1.0 / total).astype(dtype)


def _avg_pool(input, kernel, stride, padding, out, scale):
    ones = (1,) * len(kernel)
    padded, _ = _pool_pad(input, kernel, stride, padding, ones, out, 0.0)
    total = None
    for offset in itertools.product(*(range(k) for k in kernel)):
        view = _offset_view(padded, offset, stride, ones, out)
        if total is None:
            total = view.copy()
        else:
            total += view
    total *= scale
    return total


def _avg_pool_backward(grad, kernel, stride, padding, scale, input_size):
    nd = len(kernel)
    lead = grad.shape[: grad.ndim - nd]
    out = grad.shape[grad.ndim - nd:]
    g = (grad * scale).reshape((math.prod(lead), 1) + tuple(out))
    pairs = tuple((p, 0) for p in padding)
    image = _col2im(lambda offset: xp.moveaxis(g, 1, -1), g.shape[0], 1, kernel, stride,
                    (1,) * nd, out, pairs, input_size, grad.dtype)
    return image.reshape(lead + tuple(input_size))


def _avg_pool_record(name: str, backward_name: str):
    return defop(
        name,
        _avg_pool,
        ("input",),
        (
            lambda g, input_shape, kernel, stride, padding, scale: apply(
                AVG_POOL_BACKWARD, g, kernel=kernel, stride=stride, padding=padding,
                scale=scale, input_size=input_shape[-len(kernel):],
            ),
        ),
        backward_name=backward_name,
        jvp="linear",
    )


# Average pooling and its VJP are each other's adjoints (both linear).
AVG_POOL2D = _avg_pool_record("avg_pool2d", "AvgPool2DBackward0")
AVG_POOL3D = _avg_pool_record("avg_pool3d", "AvgPool3DBackward0")
AVG_POOL_BACKWARD = defop(
    "avg_pool_backward",
    _avg_pool_backward,
    ("grad",),
    (
        lambda g, kernel, stride, padding, scale: apply(
            AVG_POOL2D, g, kernel=kernel, stride=stride, padding=padding,
            out=scale.shape, scale=scale,
        ),
    ),
    jvp="linear",
)

# ---- normalisation -----------------------------------------------------------------------------
# STANDARDIZE gives xhat = (x - mean) * rstd over some dims, rstd = 1/sqrt(var + eps), with the
# mean and rstd as extra outputs (for running statistics). Its rule is the classic normalisation
# gradient, written in its saved outputs; it also takes the gradients of mean and rstd, so the
# rule is exact and higher orders follow. The affine records (layer, batch, group norm: PyTorch's
# grad_fn names) scale and shift xhat. The user's output is never saved (an in-place activation
# after a norm layer stays legal, as in PyTorch).


def _standardize(input, dims, eps):
    n = math.prod(input.shape[d] for d in dims)
    mean = input.sum(axis=dims, keepdims=True)
    mean /= max(n, 1)
    xhat = input - mean
    # The sum of squares without a squared temporary.
    letters = "abcdefghijklmnopqrstuvwxyz"[: input.ndim]
    kept = "".join(c for i, c in enumerate(letters) if i not in dims)
    var = xp.einsum(f"{letters},{letters}->{kept}", xhat, xhat).reshape(mean.shape)
    var /= max(n, 1)
    rstd = 1 / xp.sqrt(var + eps)
    xhat *= rstd
    return xhat, mean, rstd


def _standardize_grad(grads, out, dims):
    g_hat, g_mean, g_rstd = grads
    xhat, mean, rstd = out
    n = math.prod(xhat.shape[d] for d in dims)
    return _sum_terms(
        # rstd (g - mean(g) - xhat mean(g xhat))
        None if g_hat is None else rstd * (
            g_hat - g_hat.mean(dims, keepdim=True)
            - xhat * (g_hat * xhat).mean(dims, keepdim=True)),
        None if g_mean is None else (g_mean / n).expand(xhat.shape),
        # d rstd / dx = -rstd^3 (x - mean) / n = -rstd^2 xhat / n
        None if g_rstd is None else xhat * (g_rstd * rstd * rstd * (-1.0 / n)),
    )


def _standardize_jvp(t_input, out, dims):
    xhat, mean, rstd = out
    dot = (xhat * t_input).mean(dims, keepdim=True)
    t_mean = t_input.mean(dims, keepdim=True)
    return rstd * (t_input - t_mean - xhat * dot), t_mean, -(rstd * rstd) * dot


STANDARDIZE = defop(
    "standardize",
    _standardize,
    ("input",),
    (_standardize_grad,),
    n_outputs=3,
    backward_name="NativeStandardizeBackward0",
    jvp=_standardize_jvp,
)


def _affine(input, weight, bias, affine_shape):
    if weight is None:
        out = input.copy()
    else:
        out = input * weight.reshape(affine_shape)
    if bias is not None:
        out += bias.reshape(affine_shape)
    return out


def _scaled(t, weight, affine_shape):
    return t if weight is None else t * weight.reshape(affine_shape)


_AFFINE_RULES = (
    lambda g, weight, affine_shape: _scaled(g, weight, affine_shape),
    lambda g, input, affine_shape, weight_shape: (
        (g * input).sum_to_size(affine_shape).reshape(weight_shape)),
    lambda g, affine_shape, bias_shape: g.sum_to_size(affine_shape).reshape(bias_shape),
)


def _affine_jvp(t_input, t_weight, t_bias, input, weight, affine_shape):
    return _sum_terms(
        None if t_input is None else _scaled(t_input, weight, affine_shape),
        None if t_weight is None else input * t_weight.reshape(affine_shape),
        None if t_bias is None else t_bias.reshape(affine_shape),
    )


def _norm_record(name: str, backward_name: str):
    return defop(name, _affine, ("input", "weight", "bias"), _AFFINE_RULES,
                 backward_name=backward_name, jvp=_affine_jvp)


LAYER_NORM = _norm_record("layer_norm", "NativeLayerNormBackward0")
BATCH_NORM = _norm_record("batch_norm", "NativeBatchNormBackward0")
GROUP_NORM = _norm_record("group_norm", "NativeGroupNormBackward0")

# ---- embedding and padding ---------------------------------------------------------------------


def _embedding_backward(grad, indices, num_weights, padding_idx, scale_grad_by_freq):
    dim = grad.shape[-1]
    flat_idx = indices.reshape(-1)
    flat_grad = grad.reshape(-1, dim)
    if scale_grad_by_freq:
        counts = xp.bincount(flat_idx, minlength=num_weights)
        flat_grad = flat_grad / counts[flat_idx, None].astype(grad.dtype)
    out = xp.zeros((num_weights, dim), dtype=grad.dtype)
    xp.add.at(out, flat_idx, flat_grad)
    if padding_idx is not None:
        out[padding_idx] = 0
    return out


def _embedding_position_scale(indices, padding_idx, scale_grad_by_freq, dtype):
    """How much of each gathered row's gradient the scatter keeps (None: all of it)."""
    if padding_idx is None and not scale_grad_by_freq:
        return None
    data = indices._data
    scale = xp.ones(data.shape + (1,), dtype=dtype)
    if scale_grad_by_freq:
        counts = xp.bincount(data.reshape(-1))
        scale /= counts[data][..., None]
    if padding_idx is not None:
        scale[data == padding_idx] = 0
    return const(scale)


def _embedding_backward_grad(g, indices, padding_idx, scale_grad_by_freq):
    rows = apply(EMBEDDING, indices, g, padding_idx=padding_idx,
                 scale_grad_by_freq=scale_grad_by_freq)
    scale = _embedding_position_scale(indices, padding_idx, scale_grad_by_freq, g._data.dtype)
    return rows if scale is None else rows * scale


EMBEDDING = defop(
    "embedding",
    lambda input, weight, padding_idx, scale_grad_by_freq: xp.take(weight, input, axis=0),
    ("input", "weight"),
    (
        None,
        lambda g, input, weight_shape, padding_idx, scale_grad_by_freq: apply(
            EMBEDDING_BACKWARD, g, input, num_weights=weight_shape[0],
            padding_idx=padding_idx, scale_grad_by_freq=scale_grad_by_freq,
        ),
    ),
    jvp="linear",
)
# The scatter-add of the rows' gradients; its VJP is the gather again (padding rows excluded).
EMBEDDING_BACKWARD = defop(
    "embedding_backward",
    _embedding_backward,
    ("grad", "indices"),
    (_embedding_backward_grad, None),
    backward_name="EmbeddingBackwardBackward0",
    jvp="linear",
)


def _constant_pad(input, pad, value):
    """Pad (or crop, for negative amounts) the last len(pad) // 2 dims; pad is torch's order."""
    nd = len(pad) // 2
    pairs = [(pad[2 * i], pad[2 * i + 1]) for i in range(nd)][::-1]
    lead = input.ndim - nd
    shape = input.shape[:lead] + tuple(
        n + lo + hi for n, (lo, hi) in zip(input.shape[lead:], pairs))
    out = xp.full(shape, value, dtype=input.dtype)
    src = (slice(None),) * lead + tuple(
        slice(max(-lo, 0), n - max(-hi, 0)) for n, (lo, hi) in zip(input.shape[lead:], pairs))
    dst = (slice(None),) * lead + tuple(
        slice(max(lo, 0), m - max(hi, 0)) for m, (lo, hi) in zip(shape[lead:], pairs))
    out[dst] = input[src]
    return out


CONSTANT_PAD = defop(
    "constant_pad_nd",
    _constant_pad,
    ("input",),
    # The adjoint of padding is cropping: padding by the negated amounts.
    (lambda g, pad: apply(CONSTANT_PAD, g, pad=tuple(-p for p in pad), value=0),),
    jvp=lambda t_input, pad: apply(CONSTANT_PAD, t_input, pad=pad, value=0),
)

# ---- losses ------------------------------------------------------------------------------------


def _reduce(losses, reduction):
    if reduction == "none":
        return losses
    return losses.sum() if reduction == "sum" else losses.mean()


def _unreduce(g, reduction, shape):
    """The gradient of a reduced loss spread over the elementwise losses."""
    if reduction == "none":
        return g
    g = g.expand(shape)
    return g if reduction == "sum" else g / max(math.prod(shape), 1)


def _target_weights(target, weight, ignore_index, n_classes, dtype):
    """The target with ignored entries made 0, and each entry's class weight (0 if ignored)."""
    valid = target != ignore_index
    every = bool(valid.all())
    safe = target if every else xp.where(valid, target, 0)
    if safe.size and (safe.min() < 0 or safe.max() >= n_classes):
        bad = (safe < 0) | (safe >= n_classes)
        raise IndexError(f"Target {int(target[bad].reshape(-1)[0])} is out of bounds.")
    w = xp.ones(target.shape, dtype=dtype) if weight is None else weight[safe].astype(dtype)
    if not every:
        w[~valid] = 0
    return safe, w


def _pick(a, safe, cdim):
    """a's entries at the class indices ``safe`` along the class dim."""
    if a.ndim == 2:
        return a[xp.arange(a.shape[0]), safe]
    return xp.squeeze(xp.take_along_axis(a, xp.expand_dims(safe, cdim), axis=cdim), cdim)


def _nll_loss(input, target, weight, ignore_index, reduction):
    cdim = 1 if input.ndim > 1 else 0
    safe, w = _target_weights(target, weight, ignore_index, input.shape[cdim], input.dtype)
    losses = -(_pick(input, safe, cdim) * w)
    if reduction == "none":
        return losses
    total = losses.sum()
    return total if reduction == "sum" else total / w.sum()


def _loss_weights(target, weight, ignore_index, reduction, shape, dtype):
    """The class dim, the targets (ignored ones made 0) and each target's share of the loss:
    its class weight, over the total weight for 'mean'."""
    cdim = 1 if len(shape) > 1 else 0
    safe, w = _target_weights(target, weight, ignore_index, shape[cdim], dtype)
    if reduction == "mean":
        w /= w.sum()
    return cdim, safe, w


def _nll_matrix(target, weight, ignore_index, reduction, shape, dtype):
    """d loss / d input as constants: -w_t at each target (over the total weight for 'mean'),
    and w_t alone, with a size-1 class dim."""
    cdim, safe, w = _loss_weights(target._data, None if weight is None else weight._data,
                                  ignore_index, reduction, shape, dtype)
    w = xp.expand_dims(w, cdim)
    m = xp.zeros(shape, dtype=dtype)
    xp.put_along_axis(m, xp.expand_dims(safe, cdim), -w, axis=cdim)
    return cdim, const(m), const(w)


def _nll_grad(g, input_shape, target, weight, ignore_index, reduction):
    cdim, m, _ = _nll_matrix(target, weight, ignore_index, reduction, input_shape, g._data.dtype)
    return (g.unsqueeze(cdim) if reduction == "none" else g) * m


def _nll_record(name: str, backward_name: str):
    return defop(
        name,
        _nll_loss,
        ("input", "target", "weight"),
        (_nll_grad, None, None),
        backward_name=backward_name,
        jvp="linear",
    )


NLL_LOSS = _nll_record("nll_loss", "NllLossBackward0")
NLL_LOSS2D = _nll_record("nll_loss2d", "NllLoss2DBackward0")


def _cross_entropy(input, target, weight, ignore_index, reduction):
    logp = _log_softmax(input, 1 if input.ndim > 1 else 0)
    return _nll_loss(logp, target, weight, ignore_index, reduction), logp


def _cross_entropy_backward(grad, logp, target, weight, ignore_index, reduction):
    # w (softmax - onehot) * g in place on one array: exp, scale, subtract at the targets.
    cdim, safe, w = _loss_weights(target, weight, ignore_index, reduction, logp.shape,
                                  logp.dtype)
    w *= grad
    coef = xp.expand_dims(w, cdim)
    out = xp.exp(logp)
    out *= coef
    if out.ndim == 2:
        out[xp.arange(out.shape[0]), safe] -= w
    else:
        index = xp.expand_dims(safe, cdim)
        xp.put_along_axis(out, index, xp.take_along_axis(out, index, cdim) - coef, cdim)
    return out


def _ce_backward_grad_grad(g, logp, target, weight, ignore_index, reduction):
    cdim, m, w = _nll_matrix(const(target), None if weight is None else const(weight),
                             ignore_index, reduction, logp.shape, logp._data.dtype)
    t = g * (exp(logp) * w + m)
    return t.sum(cdim) if reduction == "none" else t.sum()


def _ce_backward_logp_grad(g, grad, logp, target, weight, ignore_index, reduction):
    cdim, _, w = _nll_matrix(const(target), None if weight is None else const(weight),
                             ignore_index, reduction, logp.shape, logp._data.dtype)
    return g * exp(logp) * (w * (grad.unsqueeze(cdim) if reduction == "none" else grad))


# The fused gradient of cross-entropy (first order: one NumPy pass, one node); its own rules,
# for higher orders, are differentiable ops.
CROSS_ENTROPY_BACKWARD = defop(
    "cross_entropy_backward",
    _cross_entropy_backward,
    ("grad", "logp"),
    (_ce_backward_grad_grad, _ce_backward_logp_grad),
    jvp=lambda t_grad, t_logp, grad, logp, target, weight, ignore_index, reduction: _sum_terms(
        None if t_grad is None else apply(
            CROSS_ENTROPY_BACKWARD, t_grad, logp, target=target, weight=weight,
            ignore_index=ignore_index, reduction=reduction),
        None if t_logp is None else _ce_backward_logp_grad(
            t_logp, grad, logp, target, weight, ignore_index, reduction),
    ),
)


def _cross_entropy_grad(grads, out, target, weight, ignore_index, reduction):
    g_loss, g_logp = grads
    logp = out[1]
    cdim = 1 if logp.ndim > 1 else 0
    result = None
    if g_loss is not None:
        result = apply(CROSS_ENTROPY_BACKWARD, g_loss, logp, target=target._data,
                       weight=None if weight is None else weight._data,
                       ignore_index=ignore_index, reduction=reduction)
    if g_logp is not None:
        result = _sum_terms(result, g_logp - exp(logp) * g_logp.sum(cdim, keepdim=True))
    return result


def _cross_entropy_jvp(t_input, out, target, weight, ignore_index, reduction):
    logp = out[1]
    cdim = 1 if logp.ndim > 1 else 0
    t_logp = t_input - (exp(logp) * t_input).sum(cdim, keepdim=True)
    record = NLL_LOSS2D if logp.ndim > 2 else NLL_LOSS
    t_loss = apply(record, t_logp, target, weight, ignore_index=ignore_index, reduction=reduction)
    return t_loss, t_logp


def _cross_entropy_record(name: str, backward_name: str):
    # log_softmax and nll_loss fused (a hot op): one node, and its rule is one expression in the
    # saved log-probabilities, which it also returns (the second output, never shown to users).
    return defop(
        name,
        _cross_entropy,
        ("input", "target", "weight"),
        (_cross_entropy_grad, None, None),
        n_outputs=2,
        backward_name=backward_name,
        jvp=_cross_entropy_jvp,
    )


CROSS_ENTROPY = _cross_entropy_record("cross_entropy", "NllLossBackward0")
CROSS_ENTROPY2D = _cross_entropy_record("cross_entropy2d", "NllLoss2DBackward0")


def _bce(input, target, weight, reduction):
    # PyTorch clamps the logs at -100, so a saturated probability gives a finite loss.
    losses = (target - 1) * xp.maximum(xp.log1p(-input), -100)
    losses -= target * xp.maximum(xp.log(input), -100)
    if weight is not None:
        losses *= weight
    return _reduce(losses, reduction)


def _bce_input_grad(g, input, target, weight, reduction):
    # (x - y) / max(x (1 - x), 1e-12), PyTorch's form: finite at x = 0 and x = 1.
    d = (input - target) / ((1 - input) * input).clamp(min=1e-12)
    return _scaled_loss(_unreduce(g, reduction, input.shape) * d, weight)


def _bce_target_grad(g, input, weight, reduction):
    d = log(1 - input).clamp(min=-100) - log(input).clamp(min=-100)
    return _scaled_loss(_unreduce(g, reduction, input.shape) * d, weight)


def _scaled_loss(t, weight):
    return t if weight is None else t * weight


def _bce_jvp(t_input, t_target, input, target, weight, reduction):
    terms = _sum_terms(
        None if t_input is None else
        t_input * ((input - target) / ((1 - input) * input).clamp(min=1e-12)),
        None if t_target is None else
        t_target * (log(1 - input).clamp(min=-100) - log(input).clamp(min=-100)),
    )
    if terms is None:
        return None
    terms = _scaled_loss(terms, weight)
    if reduction == "none":
        return terms
    return terms.sum() if reduction == "sum" else terms.mean()


BINARY_CROSS_ENTROPY = defop(
    "binary_cross_entropy",
    _bce,
    ("input", "target", "weight"),
    (_bce_input_grad, _bce_target_grad, None),
    jvp=_bce_jvp,
)



def _mse_loss(input, target, reduction):
    d = input - target
    d *= d
    return _reduce(d, reduction)


def _mse_backward(grad, input, target, reduction):
    # 2 (input - target) * g, spread over the elements for 'mean'.
    d = input - target
    d *= 2.0 / d.size if reduction == "mean" and d.size else 2.0
    d *= grad
    return d


def _mse_backward_grad_grad(g, input, target, reduction):
    t = g * (input - target) * 2.0
    if reduction == "none":
        return t
    return t.sum() / max(t.numel(), 1) if reduction == "mean" else t.sum()


def _mse_backward_input_grad(g, grad, input, target, reduction):
    shape = xp.broadcast_shapes(tuple(input.shape), tuple(target.shape))
    return g * _unreduce(grad, reduction, shape) * 2.0


def _mse_backward_jvp(t_grad, t_input, t_target, grad, input, target, reduction):
    shape = xp.broadcast_shapes(tuple(input.shape), tuple(target.shape))
    t_diff = _sum_terms(t_input, None if t_target is None else -t_target)
    return _sum_terms(
        None if t_grad is None else apply(MSE_LOSS_BACKWARD, t_grad, input, target,
                                          reduction=reduction),
        None if t_diff is None else t_diff * _unreduce(grad, reduction, shape) * 2.0,
    )


# mse_loss as one node (a hot op); its gradient is a fused kernel whose own rules are ops.
MSE_LOSS_BACKWARD = defop(
    "mse_loss_backward",
    _mse_backward,
    ("grad", "input", "target"),
    (
        _mse_backward_grad_grad,
        _mse_backward_input_grad,
        lambda g, grad, input, target, reduction: -_mse_backward_input_grad(
            g, grad, input, target, reduction),
    ),
    backward_name="MseLossBackwardBackward0",
    jvp=_mse_backward_jvp,
)


def _mse_jvp(t_input, t_target, input, target, reduction):
    t_diff = _sum_terms(t_input, None if t_target is None else -t_target)
    if t_diff is None:
        return None
    return _reduce_tensor(t_diff * (input - target) * 2.0, reduction)


def _reduce_tensor(t: Tensor, reduction: str) -> Tensor:
    if reduction == "none":
        return t
    return t.sum() if reduction == "sum" else t.mean()


MSE_LOSS = defop(
    "mse_loss",
    _mse_loss,
    ("input", "target"),
    (
        lambda g, input, target, reduction: apply(MSE_LOSS_BACKWARD, g, input, target,
                                                  reduction=reduction),
        lambda g, input, target, reduction: apply(MSE_LOSS_BACKWARD, g, target, input,
                                                  reduction=reduction),
    ),
    promote=True,
    jvp=_mse_jvp,
)


def mse_loss(input, target, reduction: str = "mean") -> Tensor:
    """(input - target)^2, reduced (input and target broadcast)."""
    check_reduction(reduction)
    return apply(MSE_LOSS, input, target, reduction=reduction)


# ---- public functions --------------------------------------------------------------------------
# PyTorch's signatures (those of torch.nn.functional where torch.* has no other form).

_TYPE_NAMES = {"float32": "Float", "float64": "Double", "float16": "Half", "int64": "Long",
               "int32": "Int", "int16": "Short", "int8": "Char", "uint8": "Byte", "bool": "Bool"}


def _type_name(t: Tensor) -> str:
    return _TYPE_NAMES.get(t._data.dtype.name, t._data.dtype.name)


def _c_type(t: Tensor) -> str:
    return _TYPE_NAMES.get(t._data.dtype.name, t._data.dtype.name).lower()


def _ntuple(value, n: int, name: str) -> tuple[int, ...]:
    if isinstance(value, Tensor):
        value = value.tolist()
    if isinstance(value, (tuple, list)):
        if len(value) == 1:
            return (int(value[0]),) * n
        if len(value) != n:
            raise RuntimeError(f"{name}: expected {n} values (one per spatial dim) or one, got "
                               f"{list(value)}")
        return tuple(int(v) for v in value)
    return (int(value),) * n


def _check_float(input: Tensor, name: str) -> None:
    if input._data.dtype.kind not in "fc":
        raise NotImplementedError(f'"{name}" not implemented for \'{_type_name(input)}\'; '
                                  "convert the input with .float()")


def _softmax_dim(ndim: int, dim) -> int:
    if dim is None:  # PyTorch's legacy implicit choice
        dim = 0 if ndim in (0, 1, 3) else 1
    return normalize_dim(dim, ndim, "softmax")


def softmax(input: Tensor, dim=None, dtype=None) -> Tensor:
    """exp(x_i) / sum_j exp(x_j) along ``dim`` (computed stably)."""
    if dtype is not None:
        input = input.to(dtype)
    _check_float(input, "softmax_lastdim_kernel_impl")
    return apply(SOFTMAX, input, dim=_softmax_dim(input.ndim, dim))


def log_softmax(input: Tensor, dim=None, dtype=None) -> Tensor:
    """log(softmax(x)) along ``dim``, computed without forming the softmax."""
    if dtype is not None:
        input = input.to(dtype)
    _check_float(input, "log_softmax_lastdim_kernel_impl")
    return apply(LOG_SOFTMAX, input, dim=_softmax_dim(input.ndim, dim))


def linear(input: Tensor, weight: Tensor, bias: Tensor | None = None) -> Tensor:
    """input @ weight.T + bias."""
    if weight.ndim != 2:
        out = input @ weight.mT if weight.ndim > 1 else input @ weight
        return out if bias is None else out + bias
    k = input.shape[-1] if input.ndim else 1
    if k != weight.shape[1]:
        rows = math.prod(input.shape[:-1]) if input.ndim > 1 else 1
        raise RuntimeError(f"mat1 and mat2 shapes cannot be multiplied ({rows}x{k} and "
                           f"{weight.shape[1]}x{weight.shape[0]})")
    for other in (weight, bias):
        if other is not None and other._data.dtype != input._data.dtype:
            raise RuntimeError("expected m1 and m2 to have the same dtype, but got: "
                               f"{_c_type(input)} != {_c_type(other)}")
    return apply(LINEAR, input, weight, bias)


# ---- activations with a record ---------------------------------------------------------------


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
    _check_float(input, "GeluKernelImpl")
    return apply(GELU, input, approximate=approximate)


def softplus(input: Tensor, beta: float = 1.0, threshold: float = 20.0) -> Tensor:
    """log(1 + exp(beta * x)) / beta, and x itself where beta * x > threshold."""
    _check_float(input, "softplus")
    return apply(SOFTPLUS, input, beta=float(beta), threshold=float(threshold))


def logsigmoid(input: Tensor) -> Tensor:
    """log(sigmoid(x)), computed stably."""
    _check_float(input, "log_sigmoid_forward")
    return apply(LOGSIGMOID, input)


def _activation(op, input: Tensor, inplace: bool, **params) -> Tensor:
    _check_float(input, op.name)
    if inplace:
        return apply_inplace(op, input, **params)
    return apply(op, input, **params)


# ---- convolution -------------------------------------------------------------------------------


def _conv_padding(padding, nd, kernel, stride, dilation, name):
    if isinstance(padding, str):
        if padding == "valid":
            return ((0, 0),) * nd
        if padding != "same":
            raise ValueError(f"Invalid padding string {padding!r}, should be one of "
                             "['valid', 'same']")
        if any(s != 1 for s in stride):
            raise RuntimeError("padding='same' is not supported for strided convolutions")
        totals = [d * (k - 1) for k, d in zip(kernel, dilation)]
        return tuple((t // 2, t - t // 2) for t in totals)
    pad = _ntuple(padding, nd, name)
    if any(p < 0 for p in pad):
        raise RuntimeError("negative padding is not supported")
    return tuple((p, p) for p in pad)


def _conv_nd(input, weight, bias, stride, padding, dilation, groups, nd, name,
             transposed=False, output_padding=0):
    if input.ndim not in (nd + 1, nd + 2):
        raise RuntimeError(f"Expected {nd + 1}D (unbatched) or {nd + 2}D (batched) input to "
                           f"{name}, but got input of size: {list(input.shape)}")
    if weight.ndim != nd + 2:
        raise RuntimeError(f"{name}: expected weight to be {nd + 2}-dimensional, but got weight "
                           f"of size {list(weight.shape)}")
    unbatched = input.ndim == nd + 1
    if unbatched:
        input = input.unsqueeze(0)
    for other in (weight, bias):
        if other is not None and other._data.dtype != input._data.dtype:
            raise RuntimeError(f"expected scalar type {_type_name(input)} but found "
                               f"{_type_name(other)}")
    _check_float(input, f"slow_conv{nd}d_cpu")
    kernel = weight.shape[2:]
    stride = _ntuple(stride, nd, name)
    dilation = _ntuple(dilation, nd, name)
    if any(s <= 0 for s in stride):
        raise RuntimeError("non-positive stride is not supported")
    if any(d <= 0 for d in dilation):
        raise RuntimeError("dilation should be greater than zero")
    pads = _conv_padding(padding, nd, kernel, stride, dilation, name)
    channels = input.shape[1]
    if groups <= 0:
        raise RuntimeError("non-positive groups is not supported")
    out_channels = weight.shape[1] * groups if transposed else weight.shape[0]
    if transposed:
        if channels != weight.shape[0]:
            raise RuntimeError(f"Given transposed=1, weight of size {list(weight.shape)}, "
                               f"expected input{list(input.shape)} to have {weight.shape[0]} "
                               f"channels, but got {channels} channels instead")
        if weight.shape[0] % groups:
            raise RuntimeError(f"Given groups={groups}, expected weight to be divisible by "
                               f"{groups} at dimension 0, but got weight of size "
                               f"[{list(weight.shape)}] instead")
        extra = _ntuple(output_padding, nd, name)
        if any(e >= max(s, d) for e, s, d in zip(extra, stride, dilation)):
            raise RuntimeError(
                "output padding must be smaller than either stride or dilation, but got "
                + " ".join(f"output_padding_{a}: {e}" for a, e in zip(_AXES[-nd:], extra)) + " "
                + " ".join(f"stride_{a}: {s}" for a, s in zip(_AXES[-nd:], stride)) + " "
                + " ".join(f"dilation_{a}: {d}" for a, d in zip(_AXES[-nd:], dilation)))
        size = tuple(
            (n - 1) * s - lo - hi + d * (k - 1) + e + 1
            for n, s, (lo, hi), d, k, e in zip(input.shape[2:], stride, pads, dilation, kernel,
                                               extra))
        if any(o <= 0 for o in size):
            raise RuntimeError(f"Given input size per channel: {list(input.shape[2:])}. "
                               f"Calculated output size per channel: {list(size)}. Output size "
                               "is too small")
    else:
        if weight.shape[0] % groups:
            raise RuntimeError(f"Given groups={groups}, expected weight to be divisible by "
                               f"{groups} at dimension 0, but got weight of size "
                               f"[{list(weight.shape)}] instead")
        if channels != weight.shape[1] * groups:
            raise RuntimeError(f"Given groups={groups}, weight of size {list(weight.shape)}, "
                               f"expected input{list(input.shape)} to have "
                               f"{weight.shape[1] * groups} channels, but got {channels} "
                               "channels instead")
        padded = [n + lo + hi for n, (lo, hi) in zip(input.shape[2:], pads)]
        effective = [d * (k - 1) + 1 for k, d in zip(kernel, dilation)]
        if any(p < e for p, e in zip(padded, effective)):
            raise RuntimeError(
                f"Calculated padded input size per channel: ({' x '.join(map(str, padded))}). "
                f"Kernel size: ({' x '.join(map(str, effective))}). Kernel size can't be "
                "greater than actual input size")
        size = None
    if bias is not None and tuple(bias.shape) != (out_channels,):
        raise RuntimeError(f"Given weight of size {list(weight.shape)}, expected bias to be "
                           f"1-dimensional with {out_channels} elements, but got bias of size "
                           f"{list(bias.shape)} instead")
    out = apply(CONVOLUTION, input, weight, bias, stride=stride, padding=pads,
                dilation=dilation, groups=groups, transposed=transposed, output_size=size)
    return out.squeeze(0) if unbatched else out


_AXES = ("depth", "height", "width")


def conv1d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1) -> Tensor:
    """1-D cross-correlation over (N, C, L) inputs."""
    return _conv_nd(input, weight, bias, stride, padding, dilation, groups, 1, "conv1d")


def conv2d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1) -> Tensor:
    """2-D cross-correlation over (N, C, H, W) inputs."""
    return _conv_nd(input, weight, bias, stride, padding, dilation, groups, 2, "conv2d")


def conv3d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1) -> Tensor:
    """3-D cross-correlation over (N, C, D, H, W) inputs."""
    return _conv_nd(input, weight, bias, stride, padding, dilation, groups, 3, "conv3d")


def conv_transpose1d(input, weight, bias=None, stride=1, padding=0, output_padding=0, groups=1,
                     dilation=1) -> Tensor:
    """The transpose (gradient) of conv1d, sometimes called a deconvolution."""
    return _conv_nd(input, weight, bias, stride, padding, dilation, groups, 1,
                    "conv_transpose1d", True, output_padding)


def conv_transpose2d(input, weight, bias=None, stride=1, padding=0, output_padding=0, groups=1,
                     dilation=1) -> Tensor:
    """The transpose (gradient) of conv2d, sometimes called a deconvolution."""
    return _conv_nd(input, weight, bias, stride, padding, dilation, groups, 2,
                    "conv_transpose2d", True, output_padding)


def conv_transpose3d(input, weight, bias=None, stride=1, padding=0, output_padding=0, groups=1,
                     dilation=1) -> Tensor:
    """The transpose (gradient) of conv3d."""
    return _conv_nd(input, weight, bias, stride, padding, dilation, groups, 3,
                    "conv_transpose3d", True, output_padding)


def unfold(input, kernel_size, dilation=1, padding=0, stride=1) -> Tensor:
    """Sliding local blocks of a (N, C, H, W) input as columns (N, C * kh * kw, L)."""
    if input.ndim not in (3, 4):
        raise RuntimeError("Input Error: Only 3D or 4D input Tensors are supported (got "
                           f"{input.ndim}D)")
    unbatched = input.ndim == 3
    if unbatched:
        input = input.unsqueeze(0)
    params = _block_params(kernel_size, dilation, padding, stride)
    out = apply(UNFOLD, input, **params)
    return out.squeeze(0) if unbatched else out


def fold(input, output_size, kernel_size, dilation=1, padding=0, stride=1) -> Tensor:
    """Sum columns of sliding blocks (N, C * kh * kw, L) back into a (N, C, H, W) image."""
    if input.ndim not in (2, 3):
        raise RuntimeError("Input Error: Only unbatched (2D) or batched (3D) input Tensors are "
                           f"supported (got {input.ndim}D)")
    unbatched = input.ndim == 2
    if unbatched:
        input = input.unsqueeze(0)
    params = _block_params(kernel_size, dilation, padding, stride)
    size = _ntuple(output_size, 2, "fold")
    kernel = params["kernel"]
    if input.shape[1] % math.prod(kernel):
        raise RuntimeError(
            "Expected size of input's dimension 1 to be divisible by the product of "
            f"kernel_size, but got input.size(1)={input.shape[1]} and "
            f"kernel_size={kernel}")
    padded = tuple(s + lo + hi for s, (lo, hi) in zip(size, params["padding"]))
    blocks = _conv_out_size(padded, ((0, 0),) * 2, kernel, params["stride"], params["dilation"])
    if input.shape[2] != math.prod(blocks):
        raise RuntimeError(
            f"Given output_size={size}, kernel_size={kernel}, dilation={params['dilation']}, "
            f"padding={tuple(p for p, _ in params['padding'])}, stride={params['stride']}, "
            f"expected size of input's dimension 2 to match the calculated number of sliding "
            f"blocks {' * '.join(map(str, blocks))} = {math.prod(blocks)}, but got "
            f"input.size(2)={input.shape[2]}.")
    out = apply(FOLD, input, output_size=size, **params)
    return out.squeeze(0) if unbatched else out


def _block_params(kernel_size, dilation, padding, stride) -> dict:
    pad = _ntuple(padding, 2, "unfold")
    return dict(kernel=_ntuple(kernel_size, 2, "unfold"), dilation=_ntuple(dilation, 2, "unfold"),
                padding=tuple((p, p) for p in pad), stride=_ntuple(stride, 2, "unfold"))


# ---- pooling -----------------------------------------------------------------------------------


def _pool_geometry(input, nd, kernel_size, stride, padding, dilation, ceil_mode, name):
    if input.ndim not in (nd + 1, nd + 2) or input.numel() == 0:
        raise RuntimeError(f"non-empty {nd + 1}D or {nd + 2}D (batch mode) tensor expected for "
                           "input")
    kernel = _ntuple(kernel_size, nd, name)
    stride = kernel if stride is None or stride == [] or stride == () else _ntuple(stride, nd,
                                                                                   name)
    padding = _ntuple(padding, nd, name)
    dilation = _ntuple(dilation, nd, name)
    if any(s <= 0 for s in stride):
        raise RuntimeError("stride should be greater than zero")
    for k, p, d in zip(kernel, padding, dilation):
        if p > ((k - 1) * d + 1) // 2:
            raise RuntimeError("pad should be at most half of effective kernel size, but got "
                               f"pad={p}, kernel_size={k} and dilation={d}")
    size = input.shape[-nd:]
    out = tuple(pool_out_size(n, k, s, p, d, ceil_mode)
                for n, k, s, p, d in zip(size, kernel, stride, padding, dilation))
    if any(o < 1 for o in out):
        channels = input.shape[-nd - 1]
        raise RuntimeError(
            f"Given input size: ({'x'.join(map(str, (channels,) + tuple(size)))}). Calculated "
            f"output size: ({'x'.join(map(str, (channels,) + out))}). Output size is too small")
    return kernel, stride, padding, dilation, out


def _max_pool_nd(input, nd, kernel_size, stride, padding, dilation, ceil_mode, return_indices,
                 name):
    kernel, stride, padding, dilation, out = _pool_geometry(
        input, nd, kernel_size, stride, padding, dilation, ceil_mode, name)
    indices = const(max_pool_indices(input._data, kernel, stride, padding, dilation, out))
    disjoint = all(s >= (k - 1) * d + 1 for k, s, d in zip(kernel, stride, dilation))
    record = MAX_POOL3D if nd == 3 else MAX_POOL2D
    result = apply(record, input, indices, kernel=kernel, stride=stride, padding=padding,
                   dilation=dilation, out=out, disjoint=disjoint)
    return (result, indices) if return_indices else result


def max_pool1d(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False,
               return_indices=False):
    """Max over sliding windows of the last dim; ties go to the first maximum."""
    if input.ndim not in (2, 3) or input.numel() == 0:
        raise RuntimeError("max_pool1d() Expected 2D or 3D input tensor, but got "
                           f"{list(input.shape)}")
    stride = kernel_size if stride is None or stride == [] else stride
    out = _max_pool_nd(input.unsqueeze(-2), 2, (1, _ntuple(kernel_size, 1, "max_pool1d")[0]),
                       (1, _ntuple(stride, 1, "max_pool1d")[0]),
                       (0, _ntuple(padding, 1, "max_pool1d")[0]),
                       (1, _ntuple(dilation, 1, "max_pool1d")[0]), ceil_mode, return_indices,
                       "max_pool1d")
    if return_indices:
        return out[0].squeeze(-2), out[1].squeeze(-2)
    return out.squeeze(-2)


def max_pool2d(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False,
               return_indices=False):
    """Max over sliding 2-D windows; ties go to the first maximum."""
    return _max_pool_nd(input, 2, kernel_size, stride, padding, dilation, ceil_mode,
                        return_indices, "max_pool2d")


def max_pool3d(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False,
               return_indices=False):
    """Max over sliding 3-D windows; ties go to the first maximum."""
    return _max_pool_nd(input, 3, kernel_size, stride, padding, dilation, ceil_mode,
                        return_indices, "max_pool3d")


def _avg_pool_nd(input, nd, kernel_size, stride, padding, ceil_mode, count_include_pad,
                 divisor_override, name):
    _check_float(input, name)
    kernel, stride, padding, _, out = _pool_geometry(input, nd, kernel_size, stride, padding, 1,
                                                     ceil_mode, name)
    if divisor_override is not None and divisor_override == 0:
        raise RuntimeError("divisor must be not zero")
    scale = avg_pool_divisor(input.shape[-nd:], kernel, stride, padding, out, count_include_pad,
                             divisor_override, input._data.dtype)
    record = AVG_POOL3D if nd == 3 else AVG_POOL2D
    return apply(record, input, kernel=kernel, stride=stride, padding=padding, out=out,
                 scale=scale)


def avg_pool1d(input, kernel_size, stride=None, padding=0, ceil_mode=False,
               count_include_pad=True) -> Tensor:
    """Mean over sliding windows of the last dim."""
    if input.ndim not in (2, 3):
        raise RuntimeError(f"avg_pool1d() Expected 2D or 3D input tensor, but got "
                           f"{list(input.shape)}")
    stride = kernel_size if stride is None or stride == [] else stride
    out = _avg_pool_nd(input.unsqueeze(-2), 2, (1, _ntuple(kernel_size, 1, "avg_pool1d")[0]),
                       (1, _ntuple(stride, 1, "avg_pool1d")[0]),
                       (0, _ntuple(padding, 1, "avg_pool1d")[0]), ceil_mode, count_include_pad,
                       None, "avg_pool1d")
    return out.squeeze(-2)


def avg_pool2d(input, kernel_size, stride=None, padding=0, ceil_mode=False,
               count_include_pad=True, divisor_override=None) -> Tensor:
    """Mean over sliding 2-D windows."""
    return _avg_pool_nd(input, 2, kernel_size, stride, padding, ceil_mode, count_include_pad,
                        divisor_override, "avg_pool2d")


def avg_pool3d(input, kernel_size, stride=None, padding=0, ceil_mode=False,
               count_include_pad=True, divisor_override=None) -> Tensor:
    """Mean over sliding 3-D windows."""
    return _avg_pool_nd(input, 3, kernel_size, stride, padding, ceil_mode, count_include_pad,
                        divisor_override, "avg_pool3d")


def _adaptive_matrix(size: int, out: int, dtype):
    """The (out, size) matrix averaging PyTorch's adaptive windows
    [floor(i * size / out), ceil((i + 1) * size / out))."""
    m = xp.zeros((out, size), dtype=xp.float64)
    for i in range(out):
        start = (i * size) // out
        end = -((-(i + 1) * size) // out)
        m[i, start:end] = 1.0 / (end - start)
    return m.astype(dtype)


def along(x: Tensor, axis: int, matrix) -> Tensor:
    """Apply an (out, size) matrix along one axis of x."""
    m = const(matrix)
    if axis == x.ndim - 1:
        return x @ m.mT
    if axis == x.ndim - 2:
        return m @ x
    return (x.transpose(axis, -1) @ m.mT).transpose(axis, -1)


def _adaptive_avg_pool_nd(input, output_size, nd, name):
    if input.ndim not in (nd + 1, nd + 2):
        raise RuntimeError(f"{name}(): Expected {nd + 1}D or {nd + 2}D tensor, but got "
                           f"{list(input.shape)}")
    _check_float(input, name)
    if not isinstance(output_size, (tuple, list)):
        output_size = (output_size,) * nd
    size = input.shape[-nd:]
    out = tuple(n if o is None else int(o) for n, o in zip(size, output_size))
    if all(o == 1 for o in out):
        return input.mean(tuple(range(-nd, 0)), keepdim=True)
    result = input
    for i, (n, o) in enumerate(zip(size, out)):
        if n != o:
            result = along(result, input.ndim - nd + i, _adaptive_matrix(n, o, input._data.dtype))
    return result if result is not input else input.clone()


def adaptive_avg_pool1d(input, output_size) -> Tensor:
    """Mean pooling of the last dim to ``output_size`` positions."""
    return _adaptive_avg_pool_nd(input, output_size, 1, "adaptive_avg_pool1d")


def adaptive_avg_pool2d(input, output_size) -> Tensor:
    """Mean pooling of the last two dims to ``output_size``."""
    return _adaptive_avg_pool_nd(input, output_size, 2, "adaptive_avg_pool2d")


def adaptive_avg_pool3d(input, output_size) -> Tensor:
    """Mean pooling of the last three dims to ``output_size``."""
    return _adaptive_avg_pool_nd(input, output_size, 3, "adaptive_avg_pool3d")


# ---- normalisation -----------------------------------------------------------------------------


def layer_norm(input, normalized_shape, weight=None, bias=None, eps: float = 1e-5) -> Tensor:
    """Normalise over the trailing ``normalized_shape`` dims, then scale and shift."""
    shape = (normalized_shape,) if isinstance(normalized_shape, int) else tuple(normalized_shape)
    k = len(shape)
    if k == 0 or tuple(input.shape[input.ndim - k:]) != shape or input.ndim < k:
        raise RuntimeError(f"Given normalized_shape={list(shape)}, expected input with shape "
                           f"[*, {', '.join(map(str, shape))}], but got input of size"
                           f"{list(input.shape)}")
    for name, t in (("weight", weight), ("bias", bias)):
        if t is not None and tuple(t.shape) != shape:
            raise RuntimeError(f"Expected {name} to be of same shape as normalized_shape, but "
                               f"got {name} of shape {list(t.shape)} and normalized_shape = "
                               f"{list(shape)}")
    _check_float(input, "layer_norm")
    xhat = apply(STANDARDIZE, input, dims=tuple(range(input.ndim - k, input.ndim)),
                 eps=float(eps))[0]
    return apply(LAYER_NORM, xhat, weight, bias, affine_shape=shape)


def _channel_shape(input: Tensor) -> tuple[int, ...]:
    return (input.shape[1],) + (1,) * (input.ndim - 2)


def _update_running(running, new, momentum: float) -> None:
    """running = (1 - momentum) * running + momentum * new, in place (no gradient)."""
    from ..autograd.grad_mode import no_grad

    data = running._data
    with no_grad():  # one write (one version bump), as PyTorch's fused update
        running.copy_(const(data * (1 - momentum) + new.astype(data.dtype) * momentum))


def batch_norm(input, running_mean, running_var, weight=None, bias=None, training: bool = False,
               momentum: float = 0.1, eps: float = 1e-5) -> Tensor:
    """Normalise each channel (dim 1) by batch statistics (training, updating the running ones
    in place) or by the running statistics (eval)."""
    if input.ndim < 2:
        raise ValueError(f"expected 2D or more input (got {input.ndim}D input)")
    channels = input.shape[1]
    for name, t in (("running_mean", running_mean), ("running_var", running_var),
                    ("weight", weight), ("bias", bias)):
        if t is not None and t.numel() != channels:
            raise RuntimeError(f"{name} should contain {channels} elements not {t.numel()}")
    _check_float(input, "batch_norm")
    affine = _channel_shape(input)
    dims = (0,) + tuple(range(2, input.ndim))
    if training:
        count = input.numel() // max(channels, 1)
        if count <= 1:
            raise ValueError("Expected more than 1 value per channel when training, got input "
                             f"size {input.shape!r}".replace("Size(", "torch.Size(")
                             .replace("torch.torch.", "torch."))
        xhat, mean, rstd = apply(STANDARDIZE, input, dims=dims, eps=float(eps))
        if running_mean is not None:
            _update_running(running_mean, mean._data.reshape(channels), momentum)
        if running_var is not None:
            var = 1 / (rstd._data.reshape(channels) ** 2) - eps
            _update_running(running_var, var * (count / (count - 1)), momentum)
    else:
        if running_mean is None or running_var is None:
            raise RuntimeError(f"running_{'mean' if running_mean is None else 'var'} must be "
                               "defined in evaluation mode")
        dtype = input._data.dtype
        shape = (1,) + affine
        mean = running_mean._data.astype(dtype, copy=False).reshape(shape)
        rstd = (1 / xp.sqrt(running_var._data.astype(dtype) + eps)).reshape(shape)
        xhat = (input - mean) * rstd
    return apply(BATCH_NORM, xhat, weight, bias, affine_shape=affine)


def instance_norm(input, running_mean=None, running_var=None, weight=None, bias=None,
                  use_input_stats: bool = True, momentum: float = 0.1,
                  eps: float = 1e-5) -> Tensor:
    """Normalise each channel of each sample over its spatial dims."""
    if input.ndim < 3:
        raise ValueError(f"expected 3D or more input (got {input.ndim}D input)")
    _check_float(input, "instance_norm")
    affine = _channel_shape(input)
    if not use_input_stats:
        return batch_norm(input, running_mean, running_var, weight, bias, False, momentum, eps)
    count = math.prod(input.shape[2:])
    if count <= 1:
        raise ValueError("Expected more than 1 spatial element when training, got input size "
                         f"torch.Size({list(input.shape)})")
    xhat, mean, rstd = apply(STANDARDIZE, input, dims=tuple(range(2, input.ndim)),
                             eps=float(eps))
    if running_mean is not None:
        _update_running(running_mean, mean._data.mean(axis=0).reshape(-1), momentum)
    if running_var is not None:
        var = (1 / (rstd._data ** 2) - eps) * (count / (count - 1))
        _update_running(running_var, var.mean(axis=0).reshape(-1), momentum)
    return apply(BATCH_NORM, xhat, weight, bias, affine_shape=affine)


def group_norm(input, num_groups: int, weight=None, bias=None, eps: float = 1e-5) -> Tensor:
    """Normalise each group of channels of each sample, then scale and shift per channel."""
    if input.ndim < 2:
        raise RuntimeError(f"Expected at least 2 dimensions for input tensor but received "
                           f"{input.ndim}")
    n, channels = input.shape[:2]
    if channels % num_groups:
        raise RuntimeError("Expected number of channels in input to be divisible by "
                           f"num_groups, but got input of shape {list(input.shape)} and "
                           f"num_groups={num_groups}")
    _check_float(input, "group_norm")
    xhat = apply(STANDARDIZE, input.reshape(n, num_groups, -1), dims=(2,), eps=float(eps))[0]
    return apply(GROUP_NORM, xhat.reshape(input.shape), weight, bias,
                 affine_shape=_channel_shape(input))


# ---- dropout, embedding, one_hot, pad ----------------------------------------------------------


def _keep_mask(shape, p: float, dtype):
    """A mask of 0 and 1/(1-p), drawn from the default generator (chainrule.manual_seed)."""
    from .._creation import rand

    if p == 1:
        return xp.zeros(shape, dtype=dtype)
    keep = rand(*shape, dtype=xp.float64 if dtype == xp.float16 else dtype)._data >= p
    return xp.multiply(keep, 1.0 / (1.0 - p), dtype=dtype)


def _dropout(input, p, training, inplace, mask_shape) -> Tensor:
    if p < 0 or p > 1:
        raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")
    if not training or p == 0:
        return input
    _check_float(input, "dropout")
    mask = _keep_mask(mask_shape, float(p), input._data.dtype)
    return input.mul_(mask) if inplace else input * mask


def dropout(input, p: float = 0.5, training: bool = True, inplace: bool = False) -> Tensor:
    """Zero each element with probability p and scale the rest by 1 / (1 - p) (training only)."""
    return _dropout(input, p, training, inplace, input.shape)


def feature_dropout(input, p: float, training: bool, inplace: bool, nd: int,
                    name: str) -> Tensor:
    """Zero whole channels (dim -nd-1) with probability p."""
    if input.ndim not in (nd + 1, nd + 2):
        raise RuntimeError(f"{name}: Expected {nd + 1}D or {nd + 2}D input, but received a "
                           f"{input.ndim}D input")
    shape = tuple(input.shape[: input.ndim - nd]) + (1,) * nd
    return _dropout(input, p, training, inplace, shape)


def embedding(input, weight, padding_idx=None, max_norm=None, norm_type: float = 2.0,
              scale_grad_by_freq: bool = False, sparse: bool = False) -> Tensor:
    """Rows of ``weight`` at the integer ``input`` indices (the gradient is always dense)."""
    if input._data.dtype.kind not in "iu":
        raise RuntimeError("Expected tensor for argument #1 'indices' to have one of the "
                           "following scalar types: Long, Int; but got "
                           f"{input._type_desc().split()[0]} instead (while checking arguments "
                           "for embedding)")
    num = weight.shape[0]
    if padding_idx is not None:
        if not -num <= padding_idx < num:
            raise AssertionError("Padding_idx must be within num_embeddings")
        padding_idx = padding_idx % num
    if input.numel() and (input._data.min() < 0 or input._data.max() >= num):
        raise IndexError("index out of range in self")
    if max_norm is not None:
        _renorm_rows(weight, input._data, float(max_norm), float(norm_type))
    return apply(EMBEDDING, input, weight, padding_idx=padding_idx,
                 scale_grad_by_freq=bool(scale_grad_by_freq))


def _renorm_rows(weight: Tensor, indices, max_norm: float, norm_type: float) -> None:
    """Rescale, in place and without gradient, the looked-up rows whose norm exceeds max_norm."""
    from .._dispatch import bump_version

    rows = xp.unique(indices)
    data = weight._data[rows]
    norms = xp.linalg.norm(data, ord=norm_type, axis=1) if norm_type != 2 else xp.sqrt(
        (data * data).sum(axis=1))
    over = norms > max_norm
    if over.any():
        scale = (max_norm / (norms[over] + 1e-7)).astype(weight._data.dtype)
        weight._data[rows[over]] = data[over] * scale[:, None]
        bump_version(weight)


def one_hot(tensor, num_classes: int = -1) -> Tensor:
    """(..., num_classes) int64 tensor with a 1 at each index."""
    if tensor._data.dtype != xp.int64:
        raise RuntimeError("one_hot is only applicable to index tensor of type LongTensor.")
    data = tensor._data
    if num_classes == -1:
        if data.size == 0:
            raise RuntimeError("Can not infer total number of classes from empty tensor.")
        num_classes = int(data.max()) + 1
    if data.size and data.min() < 0:
        raise RuntimeError("Class values must be non-negative.")
    if data.size and data.max() >= num_classes:
        raise RuntimeError("Class values must be smaller than num_classes.")
    return const((data[..., None] == xp.arange(num_classes)).astype(xp.int64))


def pad(input, pad, mode: str = "constant", value=None) -> Tensor:
    """Pad the last len(pad) // 2 dims; pad lists (before, after) from the last dim backwards."""
    pad = tuple(int(p) for p in pad)
    if len(pad) % 2:
        raise RuntimeError("Padding length must be divisible by 2")
    if len(pad) // 2 > input.ndim:
        raise RuntimeError("Padding length should be less than or equal to two times the input "
                           f"dimension but got padding length {len(pad)} and input of dimension "
                           f"{input.ndim}")
    if mode == "constant":
        return apply(CONSTANT_PAD, input, pad=pad, value=0 if value is None else value)
    if mode not in ("reflect", "replicate", "circular"):
        raise NotImplementedError(f"Unrecognised padding mode {mode}")
    if value is not None and value != 0:
        raise NotImplementedError(f"Padding mode \"{mode}\" doesn't take in value argument")
    nd = len(pad) // 2
    if nd not in (1, 2, 3) or input.ndim not in (nd + 1, nd + 2):
        raise NotImplementedError(
            f"Padding size {len(pad)} is not supported for {input.ndim}D input tensor.\n"
            "Supported combinations for non-constant padding:\n"
            "  - 2D or 3D input: padding size = 2 (pads last dimension)\n"
            "  - 3D or 4D input: padding size = 4 (pads last 2 dimensions)\n"
            "  - 4D or 5D input: padding size = 6 (pads last 3 dimensions)")
    out = input
    for i in range(nd):
        axis = input.ndim - 1 - i
        lo, hi = pad[2 * i], pad[2 * i + 1]
        n = input.shape[axis]
        if mode == "reflect" and (lo >= n or hi >= n):
            raise RuntimeError(f"Argument #4: Padding size should be less than the "
                               f"corresponding input dimension, but got: padding ({lo}, {hi}) "
                               f"at dimension {axis} of input {list(input.shape)}")
        if mode == "circular" and (lo > n or hi > n):
            raise RuntimeError("Padding value causes wrapping around more than once.")
        positions = xp.arange(-lo, n + hi)
        if mode == "reflect":
            index = xp.abs(positions)
            index = xp.where(index >= n, 2 * (n - 1) - index, index)
        elif mode == "replicate":
            index = xp.clip(positions, 0, n - 1)
        else:
            index = positions % n
        out = out[(slice(None),) * axis + (index,)]
    return out


# ---- losses with a record ----------------------------------------------------------------------


def check_reduction(reduction: str) -> None:
    if reduction not in ("none", "mean", "sum"):
        raise ValueError(f"{reduction} is not a valid value for reduction")


def _check_class_target(input, target, weight) -> None:
    if input.ndim == 0:
        raise ValueError("Expected 1 or more dimensions (got 0)")
    if input.ndim == 1:
        if target.ndim != 0:
            raise RuntimeError("0D or 1D target tensor expected, multi-target not supported")
    elif input.ndim == 2:
        if target.ndim != 1:
            raise RuntimeError("0D or 1D target tensor expected, multi-target not supported")
        if input.shape[0] != target.shape[0]:
            raise ValueError(f"Expected input batch_size ({input.shape[0]}) to match target "
                             f"batch_size ({target.shape[0]}).")
    elif tuple(target.shape) != (input.shape[0],) + tuple(input.shape[2:]):
        raise RuntimeError(f"Expected target size {[input.shape[0]] + list(input.shape[2:])}, "
                           f"got {list(target.shape)}")
    if target._data.dtype not in (xp.int64, xp.uint8):
        raise RuntimeError("expected target dtype to be Long or Byte, but got "
                           f"{_type_name(target)}")
    classes = input.shape[1 if input.ndim > 1 else 0]
    if weight is not None and (weight.ndim != 1 or weight.shape[0] != classes):
        raise RuntimeError(f"weight tensor should be defined either for all {classes} classes "
                           f"or no classes but got weight tensor of shape: {list(weight.shape)}")


def _long(target: Tensor) -> Tensor:
    return target if target._data.dtype == xp.int64 else const(target._data.astype(xp.int64))


def nll_loss(input, target, weight=None, ignore_index: int = -100,
             reduction: str = "mean") -> Tensor:
    """-input[i, target[i]] * weight[target[i]], reduced; class dim 1 (or 0 unbatched)."""
    check_reduction(reduction)
    _check_class_target(input, target, weight)
    record = NLL_LOSS2D if input.ndim > 2 else NLL_LOSS
    return apply(record, input, _long(target), weight, ignore_index=int(ignore_index),
                 reduction=reduction)


def cross_entropy(input, target, weight=None, ignore_index: int = -100, reduction: str = "mean",
                  label_smoothing: float = 0.0) -> Tensor:
    """nll_loss(log_softmax(input, 1), target) for class indices, or the cross-entropy against
    class probabilities; with optional label smoothing."""
    check_reduction(reduction)
    if not 0.0 <= label_smoothing <= 1.0:
        raise RuntimeError(f"label_smoothing must be between 0.0 and 1.0. Got: {label_smoothing}")
    if input.ndim == 0:
        raise ValueError("Expected 1 or more dimensions (got 0)")
    cdim = 1 if input.ndim > 1 else 0
    classes = input.shape[cdim]
    if tuple(target.shape) == tuple(input.shape) and target._data.dtype.kind != "b":
        if target._data.dtype.kind != "f":
            raise RuntimeError("Expected floating point type for target with class "
                               f"probabilities, got {_type_name(target)}")
        return _cross_entropy_probabilities(input, target, weight, reduction, label_smoothing,
                                            cdim)
    _check_class_target(input, target, weight)
    _check_float(input, "log_softmax_lastdim_kernel_impl")
    target = _long(target)
    if label_smoothing > 0:
        return _cross_entropy_smoothed(input, target, weight, int(ignore_index), reduction,
                                       label_smoothing, cdim, classes)
    record = CROSS_ENTROPY2D if input.ndim > 2 else CROSS_ENTROPY
    return apply(record, input, target, weight, ignore_index=int(ignore_index),
                 reduction=reduction)[0]


def _class_view(weight: Tensor, ndim: int, cdim: int) -> Tensor:
    """A (C,) class weight shaped to broadcast along the class dim."""
    return weight.reshape((-1,) + (1,) * (ndim - 1 - cdim))


def _cross_entropy_probabilities(input, target, weight, reduction, smoothing, cdim):
    classes = input.shape[cdim]
    logp = log_softmax(input, cdim)
    if smoothing > 0:
        target = target * (1 - smoothing) + smoothing / classes
    if weight is not None:
        logp = logp * _class_view(weight, input.ndim, cdim)
    losses = -(logp * target).sum(cdim)
    if reduction == "none":
        return losses
    total = losses.sum()
    return total if reduction == "sum" else total / (input.numel() / classes)


def _cross_entropy_smoothed(input, target, weight, ignore_index, reduction, smoothing, cdim,
                            classes):
    # (1 - e) * nll + e * (the loss against the uniform distribution, weighted and normalised
    # as nll is), as PyTorch defines label smoothing for class indices.
    logp = log_softmax(input, cdim)
    nll = nll_loss(logp, target, weight, ignore_index, reduction)
    kept = target._data != ignore_index
    weighted = logp if weight is None else logp * _class_view(weight, input.ndim, cdim)
    smooth = -weighted.sum(cdim) * const(kept.astype(input._data.dtype))
    if reduction == "mean":
        if weight is None:
            denom = kept.sum()
        else:
            denom = weight._data[target._data[kept]].sum()
        smooth = smooth.sum() / float(denom)
    elif reduction == "sum":
        smooth = smooth.sum()
    return nll * (1 - smoothing) + smooth * (smoothing / classes)


def binary_cross_entropy(input, target, weight=None, reduction: str = "mean") -> Tensor:
    """-(y log x + (1 - y) log(1 - x)), the logs clamped at -100, reduced."""
    check_reduction(reduction)
    if tuple(target.shape) != tuple(input.shape):
        raise ValueError(f"Using a target size ({target.shape!r}) that is different to the "
                         f"input size ({input.shape!r}) is deprecated. Please ensure they have "
                         "the same size.")
    data = input._data
    if data.size and ((data < 0) | (data > 1)).any():
        raise RuntimeError("all elements of input should be between 0 and 1")
    return apply(BINARY_CROSS_ENTROPY, input, target, weight, reduction=reduction)


# ---- composites PyTorch also exposes as torch.* ------------------------------------------------


def vector_norm(t: Tensor, p: float, dim, keepdim: bool = False) -> Tensor:
    """The p-norm along dim, in differentiable ops."""
    if p == 2:
        return (t * t).sum(dim, keepdim=keepdim).sqrt()
    if p == 1:
        return t.abs().sum(dim, keepdim=keepdim)
    if p == 0:
        return (t != 0).to(t.dtype).sum(dim, keepdim=keepdim)
    if math.isinf(p):
        reduce = getattr(t.abs(), "amax" if p > 0 else "amin", None)
        if reduce is None:
            raise NotImplementedError("the infinity norm needs amax/amin, which this build of "
                                      "chainrule lacks; use p=1 or p=2")
        return reduce(dim, keepdim=keepdim)
    return (t.abs() ** p).sum(dim, keepdim=keepdim) ** (1.0 / p)


def cosine_similarity(x1, x2, dim: int = 1, eps: float = 1e-8) -> Tensor:
    """x1 . x2 / (max(|x1|, eps) * max(|x2|, eps)) along dim (of the broadcast shape)."""
    shape = xp.broadcast_shapes(tuple(x1.shape), tuple(x2.shape))
    if tuple(x1.shape) != shape:
        x1 = x1.expand(shape)
    if tuple(x2.shape) != shape:
        x2 = x2.expand(shape)
    n1 = vector_norm(x1, 2, dim, keepdim=True).clamp(min=eps)
    n2 = vector_norm(x2, 2, dim, keepdim=True).clamp(min=eps)
    return ((x1 / n1) * (x2 / n2)).sum(dim)


def pairwise_distance(x1, x2, p: float = 2.0, eps: float = 1e-6, keepdim: bool = False) -> Tensor:
    """The p-norm of x1 - x2 + eps along the last dim."""
    dim = max(x1.ndim, x2.ndim) - 1
    return vector_norm(x1 - x2 + eps, p, max(dim, 0), keepdim=keepdim)


def bilinear(input1, input2, weight, bias=None) -> Tensor:
    """y_k = input1^T weight_k input2 + bias_k."""
    out, in1, in2 = weight.shape
    if input1.shape[-1] != in1:
        raise RuntimeError(f"bilinear(): input1 size does not match weight size: got "
                           f"{input1.shape[-1]} but expected {in1}")
    if input2.shape[-1] != in2:
        raise RuntimeError(f"bilinear(): input2 size does not match weight size: got "
                           f"{input2.shape[-1]} but expected {in2}")
    left = input1 @ weight.permute(1, 0, 2).reshape(in1, out * in2)
    left = left.reshape(tuple(left.shape[:-1]) + (out, in2))
    y = (left * input2.unsqueeze(-2)).sum(-1)
    return y if bias is None else y + bias


def prelu(input, weight) -> Tensor:
    """x if x > 0 else weight * x, weight per channel (dim 1) or shared."""
    if weight.numel() != 1 and (input.ndim < 2 or weight.numel() != input.shape[1]):
        raise RuntimeError(f"Mismatch of parameter numbers and input channel size. Found "
                           f"parameter numbers = {weight.numel()} and channel size = "
                           f"{input.shape[1] if input.ndim > 1 else 1}.")
    if weight.numel() != 1 and input.ndim > 2:
        weight = weight.reshape((-1,) + (1,) * (input.ndim - 2))
    return where(input > 0, input, weight * input)


def _torch_dropout(input, p: float, train: bool) -> Tensor:
    """torch.dropout(input, p, train)."""
    return dropout(input, p, train)


def _torch_batch_norm(input, weight, bias, running_mean, running_var, training, momentum, eps,
                      cudnn_enabled=True) -> Tensor:
    """torch.batch_norm, with its own argument order."""
    return batch_norm(input, running_mean, running_var, weight, bias, training, momentum, eps)


def _torch_embedding(weight, indices, padding_idx: int = -1, scale_grad_by_freq: bool = False,
                     sparse: bool = False) -> Tensor:
    """torch.embedding(weight, indices), with its own argument order."""
    return embedding(indices, weight, None if padding_idx < 0 else padding_idx, None, 2.0,
                     scale_grad_by_freq, sparse)


def _torch_layer_norm(input, normalized_shape, weight=None, bias=None, eps=1e-5,
                      cudnn_enable=True) -> Tensor:
    """torch.layer_norm."""
    return layer_norm(input, normalized_shape, weight, bias, eps)


def _torch_group_norm(input, num_groups, weight=None, bias=None, eps=1e-5,
                      cudnn_enabled=True) -> Tensor:
    """torch.group_norm."""
    return group_norm(input, num_groups, weight, bias, eps)


def _torch_max_pool(fn):
    def pool(input, kernel_size, stride=(), padding=0, dilation=1, ceil_mode=False):
        return fn(input, kernel_size, stride or None, padding, dilation, ceil_mode)

    pool.__name__ = fn.__name__
    pool.__doc__ = fn.__doc__
    return pool


FUNCTIONS = {
    "softmax": softmax,
    "log_softmax": log_softmax,
    "selu": selu,
    "celu": celu,
    "prelu": prelu,
    "conv1d": conv1d,
    "conv2d": conv2d,
    "conv3d": conv3d,
    "conv_transpose1d": conv_transpose1d,
    "conv_transpose2d": conv_transpose2d,
    "conv_transpose3d": conv_transpose3d,
    "max_pool1d": _torch_max_pool(max_pool1d),
    "max_pool2d": _torch_max_pool(max_pool2d),
    "max_pool3d": _torch_max_pool(max_pool3d),
    "avg_pool1d": avg_pool1d,
    "adaptive_avg_pool1d": adaptive_avg_pool1d,
    "dropout": _torch_dropout,
    "batch_norm": _torch_batch_norm,
    "layer_norm": _torch_layer_norm,
    "group_norm": _torch_group_norm,
    "embedding": _torch_embedding,
    "cosine_similarity": cosine_similarity,
    "pairwise_distance": pairwise_distance,
    "bilinear": bilinear,
}


def _softmax_method(self, dim=None, dtype=None) -> Tensor:
    return softmax(self, dim, dtype)


def _log_softmax_method(self, dim=None, dtype=None) -> Tensor:
    return log_softmax(self, dim, dtype)


METHODS = {"softmax": _softmax_method, "log_softmax": _log_softmax_method, "prelu": prelu}
