"""Convolution and its transpose in 1-3 spatial dims, and unfold/fold.

Convolutions are im2col (a strided window view) plus one matmul; their derivatives are
convolutions again, so every order of derivative comes from two records that are each other's
VJPs. unfold and fold (im2col and its adjoint col2im) are the same window machinery as records.
"""

from __future__ import annotations

import functools
import itertools
import math

from .._backend import xp
from .._batching import materialize
from .._dispatch import apply
from .._meta import as_strided
from ..tensor import Tensor
from ._nnutil import check_float, fold_batch, ntuple, sum_terms, type_name, with_batch
from ._registry import defop

_as_strided = as_strided  # either device's arrays
_ndarray = xp.ndarray
_FEW_CHANNELS = 4  # below it, im2col's copy loops over positions rather than channels


# ---- convolution -------------------------------------------------------------------------------
# Shapes: input (N, C, *spatial), weight (O, C/groups, *kernel). ``padding`` is a tuple of
# (before, after) pairs, one per spatial dim, so 'same' with an even kernel needs no extra copy.


def _channels_to_end(x):
    """(N, C, *rest) -> (N, *rest, C) as a view (np.moveaxis costs 2 us a call)."""
    return x.transpose((0,) + tuple(range(2, x.ndim)) + (1,))


def _channels_to_front(x):
    """(N, *rest, C) -> (N, C, *rest) as a view."""
    return x.transpose((0, x.ndim - 1) + tuple(range(1, x.ndim - 1)))


def pad_spatial(x, padding, value=0.0):
    """x padded by (before, after) pairs on its trailing dims (cropped where negative), in x's
    memory layout."""
    lead = x.ndim - len(padding)
    shape = list(x.shape)
    inside = [slice(None)] * x.ndim
    for i, (lo, hi) in enumerate(padding, lead):
        if lo < 0 or hi < 0:
            return _pad_cropping(x, padding, value, lead)
        if lo or hi:
            shape[i] += lo + hi
            inside[i] = slice(lo, lo + x.shape[i])
    if tuple(shape) == x.shape:
        return x
    out = xp.empty_like(x, shape=shape)  # order 'K': a channels-last x stays so
    xp.copyto(out, value, casting="unsafe")
    out[tuple(inside)] = x
    return out


def _pad_cropping(x, padding, value, lead):
    x = x[(slice(None),) * lead + tuple(
        slice(max(-lo, 0), n - max(-hi, 0)) for n, (lo, hi) in zip(x.shape[lead:], padding))]
    return pad_spatial(x, tuple((max(lo, 0), max(hi, 0)) for lo, hi in padding), value)


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
    if type(x) is _ndarray:
        # NumPy's as_strided costs 4 us a call; a view of x's memory block built directly, 1
        # (x is C-contiguous, or channels-last from _for_columns; the windows lie inside it).
        block = x if x.flags.c_contiguous else _channels_to_end(x)
        if block.flags.c_contiguous:
            view = _ndarray(shape, x.dtype, buffer=block, strides=strides)
            view.flags.writeable = False
            return view
    return _as_strided(x, shape=shape, strides=strides, writeable=False)


def _im2col(x, kernel, stride, dilation, out, channel_minor=False):
    """Columns (N * prod(out), C * prod(kernel)) of the padded x: one row per output position.
    The columns run over (C, *kernel), or (*kernel, C) with channel_minor: a copy whose inner
    loop runs over the channels, several times faster in NumPy unless C is tiny. With fewer than
    4 channels (an image's colours) the copy's inner loop runs over the positions instead, and
    the columns come back transposed (Fortran order), as BLAS takes them."""
    windows = _windows(x, kernel, stride, dilation, out, channel_minor)
    rows = windows.shape[0] * math.prod(out)
    columns = x.shape[1] * math.prod(kernel)  # explicit: an empty batch has no -1 to infer
    if channel_minor and x.shape[1] < _FEW_CHANNELS:
        nd = len(kernel)
        order = tuple(range(1 + nd, 2 + 2 * nd)) + tuple(range(1 + nd))  # (*kernel, C, N, *out)
        return xp.ascontiguousarray(windows.transpose(order)).reshape(columns, rows).T
    return windows.reshape(rows, columns)


def _for_columns(x, padding):
    """x (N, C, *spatial) padded, in the memory layout channel-minor columns copy fastest from:
    channels-last unless C is tiny. A channels-first x is moved and padded in one copy."""
    if x.shape[1] < _FEW_CHANNELS:
        return pad_spatial(x, padding)
    plan = _padding_plan(x.shape, padding)
    if plan is None:  # no padding, or some negative (cropping)
        return pad_spatial(_channels_to_front(xp.ascontiguousarray(_channels_to_end(x))), padding)
    shape, inside, order = plan
    out = xp.empty_like(x, shape=shape, order="C")
    xp.copyto(out, 0, casting="unsafe")
    out[inside] = _channels_to_end(x)
    return out.transpose(order)


@functools.lru_cache(maxsize=256)
def _padding_plan(shape, padding):
    """For padding x of ``shape`` (N, C, *spatial) into a channels-last buffer: the buffer's
    shape, where x goes in it, and its transpose to (N, C, *spatial); None without padding or
    with negative padding."""
    if not any(lo or hi for lo, hi in padding) or any(lo < 0 or hi < 0 for lo, hi in padding):
        return None
    nd = len(padding)
    spatial = tuple(n + lo + hi for n, (lo, hi) in zip(shape[2:], padding))
    inside = (slice(None),) + tuple(slice(lo, lo + n) for n, (lo, _) in zip(shape[2:], padding))
    return (shape[0],) + spatial + (shape[1],), inside, (0, nd + 1) + tuple(range(1, nd + 1))


def _kernel_major(w):
    """(O, C, *k) -> (O, *k, C): a weight laid out like channel-minor columns."""
    return _channels_to_end(w)


def _channels_last(y, nd):
    """(N, C, *spatial) as a (N * prod(spatial), C) matrix (free when y is channels-last)."""
    return _channels_to_end(y).reshape(-1, y.shape[1])


def conv_out_size(size, padding, kernel, stride, dilation):
    return tuple(
        (n + lo + hi - d * (k - 1) - 1) // s + 1
        for n, (lo, hi), k, s, d in zip(size, padding, kernel, stride, dilation)
    )


def _correlate(x, w, stride, padding, dilation, groups, output_size=None):
    nd = w.ndim - 2
    kernel = w.shape[2:]
    n, out_channels = x.shape[0], w.shape[0]
    x = _for_columns(x, padding) if groups == 1 else pad_spatial(x, padding)
    if output_size is None:
        output_size = conv_out_size(x.shape[2:], ((0, 0),) * nd, kernel, stride, dilation)
    if groups == 1:
        cols = _im2col(x, kernel, stride, dilation, output_size, True)
        if x.shape[1] < _FEW_CHANNELS:
            # Columns come transposed: the product transposed, (O, N * out), leaves the output
            # channels-first per position block, which the contiguous copy moves in long rows.
            y = _kernel_major(w).reshape(out_channels, -1) @ cols.T
            return y.reshape((out_channels, n) + tuple(output_size)).swapaxes(0, 1)
        y = cols @ _kernel_major(w).reshape(out_channels, -1).T
    else:
        cols = _im2col(x, kernel, stride, dilation, output_size)
        cols = cols.reshape(cols.shape[0], groups, -1).transpose(1, 0, 2)
        y = cols @ w.reshape(groups, out_channels // groups, -1).transpose(0, 2, 1)
        y = y.transpose(1, 0, 2).reshape(-1, out_channels)
    # Channels-last in memory, (N, O, *out) to the user: no transposing copy.
    return _channels_to_front(y.reshape((n,) + tuple(output_size) + (out_channels,)))


def col2im(blocks, n, channels, kernel, stride, dilation, positions, padding, size, dtype):
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
    # contiguous, as PyTorch's results are (views, strides and memory-order draws depend on it)
    return xp.ascontiguousarray(_channels_to_front(buf[(slice(None),) + crop]))


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
    return col2im(block, n, c_out, kernel, stride, dilation, positions, padding, output_size,
                  x.dtype)


def _correlate_weight(x, g, kernel, stride, padding, dilation, groups):
    """d<g, correlate(x, w)>/dw: the correlation of the padded x with g."""
    out_channels = g.shape[1]
    x = _for_columns(x, padding) if groups == 1 else pad_spatial(x, padding)
    if groups == 1 and x.shape[1] < _FEW_CHANNELS and g.flags.c_contiguous:
        # Transposed columns and a channels-first g: g as (O, N * out) is a copy in long rows
        # (half the time of the channels-last one), and the product needs no transpose.
        cols = _im2col(x, kernel, stride, dilation, g.shape[2:], True)
        dw = g.swapaxes(0, 1).reshape(out_channels, -1) @ cols
        dw = dw.reshape((out_channels,) + tuple(kernel) + (x.shape[1],))
        return xp.ascontiguousarray(_channels_to_front(dw))
    g2 = _channels_last(g, len(kernel))
    if groups == 1:
        # (cols^T g)^T: the faster orientation for BLAS with these tall matrices.
        dw = (_im2col(x, kernel, stride, dilation, g.shape[2:], True).T @ g2).T
        dw = dw.reshape((out_channels,) + tuple(kernel) + (x.shape[1],))
        return xp.ascontiguousarray(_channels_to_front(dw))
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
    # contiguous (the matmul left the channels last), as PyTorch's: views, strides and
    # memory-order draws (dropout's mask) depend on it; the bias is added in the same pass
    if bias is None:
        return xp.ascontiguousarray(y)
    return xp.add(y, bias.reshape((-1,) + (1,) * (weight.ndim - 2)),
                  out=xp.empty_like(y, order="C"))


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
    return sum_terms(
        None if t_input is None else apply(CONVOLUTION, t_input, weight, None, **params),
        None if t_weight is None else apply(CONVOLUTION, input, t_weight, None, **params),
        None if t_bias is None else t_bias.reshape((-1,) + (1,) * (weight.ndim - 2)),
    )


def _channels_with_batch(x):
    """(B, N, C, *spatial) -> (N, B * C, *spatial): each example's channels a group of their
    own."""
    shape = tuple(x.shape)
    return x.movedim(0, 1).reshape((shape[1], shape[0] * shape[2]) + shape[3:])


def _batch_from_channels(y, size: int):
    """(N, B * C, *spatial) -> (B, N, C, *spatial)."""
    shape = tuple(y.shape)
    return y.reshape((shape[0], size, shape[1] // size) + shape[2:]).movedim(1, 0)


def _conv_batch(op, args, flags, size, params):
    # A batched input: the examples' samples are one batch. A batched weight: the examples
    # become groups, B * groups of them, each with its own weight (PyTorch's rule).
    input, weight, bias = args
    batched_input, batched_weight, batched_bias = flags
    nd = len(params["stride"])
    if batched_bias:
        bias = bias.reshape((size, 1, -1) + (1,) * nd)
    if not batched_weight:
        if not batched_input:
            return apply(op, input, weight, None, **params) + bias
        out = fold_batch(op, [input, weight, None if batched_bias else bias], flags, size,
                         params)
        return out + bias if batched_bias else out
    groups = params["groups"]
    shape = tuple(weight.shape)  # (B, O, C / groups, *k), transposed (B, C, O / groups, *k)
    if batched_input:
        # Groups ordered (example, group): the input's channels and the weight's rows line up.
        w = weight.reshape((size * shape[1],) + shape[2:])
        out = apply(op, _channels_with_batch(input), w, None,
                    **dict(params, groups=size * groups))
        out = _batch_from_channels(out, size)
    else:
        # One input: the examples' output channels side by side within each group.
        if params["transposed"]:  # (B, C, O/g, *k) -> (C, B * O/g, *k)
            w = weight.movedim(0, 1).reshape((shape[1], size * shape[2]) + shape[3:])
        else:  # (B, O, C/g, *k) -> (g, B, O/g, C/g, *k) -> (g * B * O/g, C/g, *k)
            w = weight.reshape((size, groups, shape[1] // groups) + shape[2:]).movedim(0, 1)
            w = w.reshape((size * shape[1],) + shape[2:])
        out = apply(op, input, w, None, **params)  # (N, g * B * O/g, *out)
        n, spatial = out.shape[0], tuple(out.shape[2:])
        out = out.reshape((n, groups, size, -1) + spatial).movedim(2, 0)
        out = out.reshape((size, n, -1) + spatial)
    return out if bias is None else out + (bias if batched_bias else bias.reshape(
        (-1,) + (1,) * nd))


def _conv_weight_batch(op, args, flags, size, params):
    # Each example's weight gradient: the examples become groups of one convolution_weight.
    x, grad = (a if f else materialize(a, size) for a, f in zip(args, flags))
    dw = apply(op, _channels_with_batch(x), _channels_with_batch(grad),
               **dict(params, groups=size * params["groups"]))
    return dw.reshape((size, -1) + tuple(dw.shape[1:]))


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
        lambda g: apply(CONVOLUTION_BIAS_GRAD, g, nd=g.ndim - 2),
    ),
    jvp=_conv_jvp,
    batch=_conv_batch,
)


def _bias_grad(grad, nd):
    """grad (..., N, C, *spatial) summed over N and the spatial dims: (..., C)."""
    # The batch dim first: NumPy's sum over several dims at once is 5-50x slower here.
    out = grad.sum(axis=grad.ndim - nd - 2)
    return out.sum(axis=tuple(range(out.ndim - nd, out.ndim)))


# The bias gradient as one op (two sums before): its VJP spreads g back over the batch and the
# positions. Both act on trailing dims, so under vmap the examples are more leading dims.
CONVOLUTION_BIAS_GRAD = defop(
    "convolution_bias_grad",
    _bias_grad,
    ("grad",),
    (lambda g, grad_shape, nd: g.reshape(tuple(g.shape[:-1]) + (1, g.shape[-1]) + (1,) * nd)
     .expand(grad_shape),),
    backward_name="ConvolutionBackwardBackward0",
    jvp="linear",
    batch=with_batch,
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
    batch=_conv_weight_batch,
)

# ---- unfold / fold -----------------------------------------------------------------------------


def _unfold(input, kernel, dilation, padding, stride):
    n, c = input.shape[:2]
    x = pad_spatial(input, padding)
    out = conv_out_size(x.shape[2:], ((0, 0),) * len(kernel), kernel, stride, dilation)
    windows = _windows(x, kernel, stride, dilation, out)  # (N, *out, C, *k)
    nd = len(kernel)
    order = (0, 1 + nd) + tuple(range(2 + nd, 2 + 2 * nd)) + tuple(range(1, 1 + nd))
    return windows.transpose(order).reshape(n, c * math.prod(kernel), math.prod(out))


def _fold(input, output_size, kernel, dilation, padding, stride):
    n = input.shape[0]
    nd = len(kernel)
    c = input.shape[1] // math.prod(kernel)
    padded = tuple(s + lo + hi for s, (lo, hi) in zip(output_size, padding))
    positions = conv_out_size(padded, ((0, 0),) * nd, kernel, stride, dilation)
    cols = input.reshape((n, c) + tuple(kernel) + tuple(positions))

    def block(offset):
        return _channels_to_end(cols[(slice(None), slice(None)) + offset])

    return col2im(block, n, c, kernel, stride, dilation, positions, padding, output_size,
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
    batch=fold_batch,
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
    batch=fold_batch,
)


# ---- public functions ---------------------------------------------------------------------------


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
    pad = ntuple(padding, nd, name)
    if any(p < 0 for p in pad):
        raise RuntimeError("negative padding is not supported")
    return tuple((p, p) for p in pad)


def _check_conv_dtype(input, nd: int, transposed: bool, dilation: tuple) -> None:
    """PyTorch's CPU kernels: convolutions of any integer type, dilated and transposed ones of
    int64 only."""
    if input._data.dtype == xp.int64:
        return
    if input._data.dtype.kind in "iu":
        if transposed:
            check_float(input, f"slow_conv_transpose{max(nd, 2)}d_out_cpu")
        if any(d != 1 for d in dilation):
            check_float(input, "slow_conv_dilated<>")
        return
    if transposed:
        check_float(input, f"slow_conv_transpose{max(nd, 2)}d_out_cpu")
    check_float(input, "compute_columns3d" if nd == 3 else "slow_conv2d_cpu")


# The checked geometry of recent calls, keyed by everything the checks read: the shapes and
# dtypes of input, weight and bias and the arguments as given (ints, tuples of ints or a padding
# string only: a list or a tensor is not a key). 10-20 us of checks a call, ~1 us to look up.
_geometry: dict = {}
_GEOMETRY_SIZE = 256


def _plain_ints(value) -> bool:
    return type(value) is int or type(value) is tuple and all(type(v) is int for v in value)


def _conv_nd(input, weight, bias, stride, padding, dilation, groups, nd, name,
             transposed=False, output_padding=0):
    key = None
    if (_plain_ints(stride) and (_plain_ints(padding) or type(padding) is str)
            and _plain_ints(dilation) and type(groups) is int and _plain_ints(output_padding)):
        data, w = input._data, weight._data
        key = (data.shape, data.dtype, w.shape, w.dtype,
               None if bias is None else (bias._data.shape, bias._data.dtype),
               stride, padding, dilation, groups, nd, name, transposed, output_padding)
        geometry = _geometry.get(key)
        if geometry is not None:
            stride, pads, dilation, size, unbatched = geometry
            if unbatched:
                input = input.unsqueeze(0)
            out = apply(CONVOLUTION, input, weight, bias, stride=stride, padding=pads,
                        dilation=dilation, groups=groups, transposed=transposed,
                        output_size=size)
            return out.squeeze(0) if unbatched else out
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
            raise RuntimeError(f"expected scalar type {type_name(input)} but found "
                               f"{type_name(other)}")
    kernel = weight.shape[2:]
    stride = ntuple(stride, nd, name)
    dilation = ntuple(dilation, nd, name)
    _check_conv_dtype(input, nd, transposed, dilation)
    if any(s <= 0 for s in stride):
        raise RuntimeError("non-positive stride is not supported")
    if any(d <= 0 for d in dilation):
        raise RuntimeError(f"dilation should be greater than zero, but got {list(dilation)}")
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
        extra = ntuple(output_padding, nd, name)
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
    if key is not None:
        if len(_geometry) >= _GEOMETRY_SIZE:
            _geometry.clear()
        _geometry[key] = (stride, pads, dilation, size, unbatched)
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
    size = ntuple(output_size, 2, "fold")
    kernel = params["kernel"]
    if input.shape[1] % math.prod(kernel):
        raise RuntimeError(
            "Expected size of input's dimension 1 to be divisible by the product of "
            f"kernel_size, but got input.size(1)={input.shape[1]} and "
            f"kernel_size={kernel}")
    padded = tuple(s + lo + hi for s, (lo, hi) in zip(size, params["padding"]))
    blocks = conv_out_size(padded, ((0, 0),) * 2, kernel, params["stride"], params["dilation"])
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
    pad = ntuple(padding, 2, "unfold")
    return dict(kernel=ntuple(kernel_size, 2, "unfold"), dilation=ntuple(dilation, 2, "unfold"),
                padding=tuple((p, p) for p in pad), stride=ntuple(stride, 2, "unfold"))


FUNCTIONS = {
    "conv1d": conv1d,
    "conv2d": conv2d,
    "conv3d": conv3d,
    "conv_transpose1d": conv_transpose1d,
    "conv_transpose2d": conv_transpose2d,
    "conv_transpose3d": conv_transpose3d,
}
METHODS: dict = {}
