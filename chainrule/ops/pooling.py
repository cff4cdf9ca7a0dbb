"""Pooling: max and average pooling over sliding windows, adaptive average pooling.

Max pooling computes the indices of the window maxima once, without gradient, and passes them to
its record: the VJP scatters to them and the scatter's VJP gathers at them. Average pooling and
its VJP are each other's adjoints. Adaptive pools are matrices applied along each spatial dim.
"""

from __future__ import annotations

import functools
import itertools
import math

from .._backend import xp
from .._batching import physical
from .._dispatch import apply
from ..tensor import Tensor
from ._nnutil import check_float, const, ntuple, on_values, with_batch
from ._registry import defop
from .convolution import col2im, pad_spatial

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
    return pad_spatial(x, pairs, value), pairs


def _offset_view(x, offset, stride, dilation, out):
    nd = len(offset)
    index = tuple(
        slice(o * d, o * d + (n - 1) * s + 1, s)
        for o, d, n, s in zip(offset, dilation, out, stride)
    )
    return x[(slice(None),) * (x.ndim - nd) + index]


def _window_max(x, kernel, stride, padding, dilation, out):
    """The views of x at each kernel offset (padded with -inf) and their elementwise maximum."""
    fill = -xp.inf if x.dtype.kind in "fV" else xp.iinfo(x.dtype).min  # "V": bfloat16
    padded, _ = _pool_pad(x, kernel, stride, padding, dilation, out, fill)
    offsets = list(itertools.product(*(range(k) for k in kernel)))
    views = [_offset_view(padded, o, stride, dilation, out) for o in offsets]
    best = views[0].copy() if len(views) == 1 else xp.maximum(views[0], views[1])
    for view in views[2:]:
        xp.maximum(best, view, out=best)  # NaN propagates, as in PyTorch
    return offsets, views, best


# The window maxima of the last tiled pooling, as (input, indices, maxima): computed with the
# indices, they are the forward's result when it runs on that same input and those indices.
_last_maxima = None


@functools.lru_cache(maxsize=64)
def _tile_offsets(kernel, out, size):
    """The flat spatial index of each window's start, (*out), and of each place in a window
    relative to its start, in scan order (both read-only)."""
    nd = len(kernel)
    place = [math.prod(size[i + 1:]) for i in range(nd)]
    base = xp.zeros((1,) * nd, dtype=xp.int64)
    for i in range(nd):
        dims = [1] * nd
        dims[i] = out[i]
        base = base + (xp.arange(out[i]) * (kernel[i] * place[i])).reshape(dims)
    delta = xp.array([sum(o * p for o, p in zip(offset, place))
                      for offset in itertools.product(*(range(k) for k in kernel))],
                     dtype=xp.int64)
    base.flags.writeable = delta.flags.writeable = False
    return base, delta


def _tiled_max(x, kernel, out):
    """Windows that tile x (stride = kernel, no padding or dilation): their maxima and the flat
    spatial index of each one's first maximum, or None if a maximum is NaN.

    Windows are scanned as PyTorch scans them (the last dim fastest), one dim at a time, on the
    flat C-ordered data: each kernel offset along a dim is the data shifted by that many steps,
    so every comparison is one contiguous pass (NumPy's short strided rows cost ~10 ns each),
    computed at every position and read only at the windows' starts, which a strided copy then
    takes. A later element wins only if greater, so ties keep the first. ``code`` numbers the
    winner's place in its window in scan order."""
    nd = len(kernel)
    lead = x.shape[: x.ndim - nd]
    size = x.shape[x.ndim - nd:]
    tiled = tuple(o * k for o, k in zip(out, kernel))
    if tiled != size:  # the remainder is in no window
        x = x[(Ellipsis,) + tuple(slice(0, n) for n in tiled)]
    shape = list(lead + tiled)
    values = xp.ascontiguousarray(x).reshape(-1)
    count = math.prod(kernel)
    code_type = xp.uint8 if count <= 256 else xp.int64
    code = None  # None: all zero
    scan = 1  # the code's step along the current dim
    for d in range(nd - 1, -1, -1):
        k = kernel[d]
        if k == 1:
            continue
        axis = len(lead) + d
        step = math.prod(shape[axis + 1:])
        n = values.size - (k - 1) * step
        first = values[:n]
        best = xp.empty_like(values)
        codes = xp.empty(values.size, dtype=code_type)
        top, now = best[:n], codes[:n]
        for j in range(1, k):
            view = values[j * step: j * step + n]
            if j == 1 and code is None and scan == 1 and code_type is xp.uint8:
                xp.greater(view, first, out=now.view(xp.bool_))  # the code: 1 where later
                xp.maximum(first, view, out=top)
                continue
            later = (view > (first if j == 1 else top)).view(xp.uint8)
            if j == 1 and code is None:
                xp.multiply(later, code_type(scan), out=now)
            elif j == 1:
                xp.subtract(code[step: step + n], code[:n], out=now)
                now += code_type(scan)
                now *= later
                now += code[:n]
            else:  # now + later * (here - now), wrapping in uint8 and landing in range
                here = code_type(j * scan) if code is None else \
                    code[j * step: j * step + n] + code_type(j * scan)
                change = here - now
                change *= later
                now += change
            xp.maximum(first if j == 1 else top, view, out=top)
        # each window's start along this dim, copied (the rest is never read): the next dim's
        # passes then run on contiguous data too, 2-3x faster than on a strided view
        split = shape[:axis] + [out[d], k] + shape[axis + 1:]
        start = (slice(None),) * (axis + 1) + (0,)
        values = xp.ascontiguousarray(best.reshape(split)[start]).reshape(-1)
        code = xp.ascontiguousarray(codes.reshape(split)[start]).reshape(-1)
        shape[axis] = out[d]
        scan *= k
    shape = tuple(shape)
    values = values.reshape(shape)
    if code is None or not values.flags.c_contiguous:  # x itself, or a strided view
        values = values.copy()
    if values.dtype.kind == "f" and values.size and xp.isnan(xp.minimum.reduce(values, None)):
        return None  # a NaN maximum: the last NaN wins, which the general scan handles
    base, delta = _tile_offsets(kernel, out, size)
    if code is None:  # a kernel of ones
        indices = xp.empty(shape, dtype=xp.int64)
        indices[...] = base
        return values, indices
    indices = xp.take(delta, code).reshape(shape)
    indices += base
    return values, indices


def max_pool_indices(x, kernel, stride, padding, dilation, out):
    """For each window, the flat index (over the spatial dims) of its maximum: the first one on
    ties, the last NaN if any (PyTorch's scan order)."""
    global _last_maxima
    nd = len(kernel)
    if (stride == kernel and not any(padding) and all(d == 1 for d in dilation)
            and x.dtype.kind in "fiu" and x.flags.c_contiguous
            and all(o * k <= n for o, k, n in zip(out, kernel, x.shape[x.ndim - nd:]))):
        tiled = _tiled_max(x, kernel, out)
        if tiled is not None:
            _last_maxima = (x, tiled[1], tiled[0])
            return tiled[1]
    offsets, views, best = _window_max(x, kernel, stride, padding, dilation, out)
    # The offset of the first view equal to the maximum, as a small integer code: counted down
    # from the last offset by arithmetic (no data-dependent branches, which ties from relu's zeros
    # make costly in `where`), in best's memory layout.
    code_type = xp.uint8 if len(views) < 256 else xp.int32
    code = xp.full_like(best, len(views) - 1, dtype=code_type)
    for k in range(len(views) - 2, -1, -1):
        code -= (views[k] == best).view(xp.uint8) * (code - code_type(k))
    if x.dtype.kind in "fV" and xp.isnan(best.min()):  # min propagates NaN: one pass to see
        nan = xp.isnan(best)  # no view equals a NaN maximum: take the last NaN
        for k, view in enumerate(views):
            code = xp.where(nan & xp.isnan(view), code_type(k), code)
    size = x.shape[x.ndim - nd:]
    if any(padding):
        # A window whose values all equal the padding's fill (-inf, say) takes its first
        # position inside the input, as PyTorch's, never the padding.
        fill = -xp.inf if x.dtype.kind in "fV" else xp.iinfo(x.dtype).min
        at_fill = best == fill
        if at_fill.any():
            first = xp.zeros(out, dtype=code_type)
            for k in range(len(offsets) - 1, -1, -1):
                inside = True
                for i, (o, n, s, p, d) in enumerate(zip(offsets[k], size, stride, padding,
                                                        dilation)):
                    start = xp.arange(out[i]) * s - p + o * d
                    shape = [1] * nd
                    shape[i] = out[i]
                    inside = inside & ((start >= 0) & (start < n)).reshape(shape)
                first = xp.where(inside, code_type(k), first)
            code = xp.where(at_fill, first, code)
    place = [math.prod(size[i + 1:]) for i in range(nd)]
    delta = xp.array([sum(o * d * p for o, d, p in zip(off, dilation, place))
                      for off in offsets], dtype=xp.int64)
    base = 0
    for i in range(nd):
        shape = [1] * nd
        shape[i] = out[i]
        base = base + ((xp.arange(out[i]) * stride[i] - padding[i]) * place[i]).reshape(shape)
    # In x's memory layout, which the scatter gives the gradient back in.
    return xp.add(xp.take(delta, code), base, out=xp.empty_like(code, dtype=xp.int64))


def _max_pool(input, indices, kernel, stride, padding, dilation, out, disjoint):
    global _last_maxima
    last = _last_maxima
    if last is not None and last[0] is input and last[1] is indices:
        _last_maxima = None
        return last[2]
    # The window maxima straight from strided views (they keep a channels-last layout); equal
    # to gathering the input at the indices.
    return _window_max(input, kernel, stride, padding, dilation, out)[2]


def gather_at(t: Tensor, indices: Tensor, nd: int) -> Tensor:
    """t (..., *spatial) gathered at flat spatial indices (..., *out)."""
    return apply(MAX_POOL_DOUBLE_BACKWARD, t, indices, nd=nd)


def _gather_at(input, indices, nd):
    lead = indices.shape[: indices.ndim - nd]
    flat = input.reshape(lead + (-1,))
    return xp.take_along_axis(flat, indices.reshape(lead + (-1,)), axis=-1).reshape(indices.shape)


def _max_pool_scatter(grad, indices, input_size, disjoint):
    nd = len(input_size)
    if disjoint and indices.ndim > nd and indices.strides[-nd - 1] == indices.itemsize < \
            indices.nbytes:
        return _scatter_channels_last(grad, indices, input_size)
    lead = math.prod(grad.shape[: grad.ndim - nd])
    out = xp.zeros((lead, math.prod(input_size)), dtype=grad.dtype)
    flat_idx = indices.reshape(lead, -1)
    flat_grad = grad.reshape(lead, -1)
    if disjoint:  # no input element is in two windows: a plain scatter, into the flat buffer
        rows = xp.arange(0, out.size, out.shape[1], dtype=xp.int64).reshape(lead, 1)
        out.reshape(-1)[xp.add(flat_idx, rows).reshape(-1)] = flat_grad.reshape(-1)
    else:
        xp.add.at(out, (xp.arange(lead)[:, None], flat_idx), flat_grad)
    return out.reshape(grad.shape[: grad.ndim - nd] + tuple(input_size))


def _scatter_channels_last(grad, indices, input_size):
    """The plain scatter into a channels-last image, for a channels-last input (a
    convolution's): the backward after it (relu's, the convolution's) then reads one layout."""
    nd = len(input_size)
    lead = grad.shape[: grad.ndim - nd]
    size, channels, rest = math.prod(input_size), lead[-1], math.prod(lead[:-1])
    out = xp.zeros((rest, size, channels), dtype=grad.dtype)
    start, order = _channels_last_starts(lead, size, nd)
    place = xp.multiply(indices, channels)
    place += start
    out.reshape(-1)[place] = grad
    return out.reshape(lead[:-1] + tuple(input_size) + (channels,)).transpose(order)


@functools.lru_cache(maxsize=64)
def _channels_last_starts(lead, size, nd):
    """Where each (sample, channel)'s image starts in a channels-last buffer, shaped to broadcast
    against the indices (read-only), and the transpose of that buffer back to channels-first."""
    channels, rest = lead[-1], math.prod(lead[:-1])
    start = xp.arange(0, rest * size * channels, size * channels)[:, None] + xp.arange(channels)
    start = start.reshape(lead + (1,) * nd)
    start.flags.writeable = False
    k = len(lead) - 1  # the channel dim, last in the buffer
    order = tuple(range(k)) + (k + nd,) + tuple(range(k, k + nd))
    return start, order


def _max_pool_grad(g, indices, input_shape, kernel, disjoint):
    return apply(MAX_POOL_BACKWARD, g, indices, input_size=input_shape[-len(kernel):],
                 disjoint=disjoint)


def _max_pool_record(name: str, backward_name: str):
    # The indices of the window maxima are computed once, without gradient, and passed in: the
    # VJP scatters g to them, and the scatter's VJP gathers at them. All three act on the
    # trailing dims, so under vmap the examples are more leading dims.
    return defop(
        name,
        _max_pool,
        ("input", "indices"),
        (_max_pool_grad, None),
        backward_name=backward_name,
        jvp=lambda t_input, indices, kernel: gather_at(t_input, indices, len(kernel)),
        batch=with_batch,
    )


MAX_POOL2D = _max_pool_record("max_pool2d", "MaxPool2DWithIndicesBackward0")
MAX_POOL3D = _max_pool_record("max_pool3d", "MaxPool3DWithIndicesBackward0")
MAX_POOL_BACKWARD = defop(
    "max_pool_backward",
    _max_pool_scatter,
    ("grad", "indices"),
    (lambda g, indices, input_size: gather_at(g, indices, len(input_size)), None),
    jvp="linear",
    batch=with_batch,
)
# The gather at the indices (PyTorch's max_pool_double_backward; adaptive max pooling's forward):
# its VJP is the scatter-add, windows may overlap.
MAX_POOL_DOUBLE_BACKWARD = defop(
    "max_pool_double_backward",
    _gather_at,
    ("input", "indices"),
    (
        lambda g, indices, input_shape, nd: apply(
            MAX_POOL_BACKWARD, g, indices, input_size=tuple(input_shape[len(input_shape) - nd:]),
            disjoint=False),
        None,
    ),
    jvp="linear",
    batch=with_batch,
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
    padded, _ = _pool_pad(input, kernel, stride, padding, ones, out, 0)
    total = None
    for offset in itertools.product(*(range(k) for k in kernel)):
        view = _offset_view(padded, offset, stride, ones, out)
        if total is None:
            total = view.copy()
        else:
            total += view
    if total.dtype.kind in "iu":  # integer division, truncated toward zero (as C++'s)
        divisor = xp.rint(1.0 / scale).astype(total.dtype)
        return xp.sign(total) * xp.sign(divisor) * (xp.abs(total) // xp.abs(divisor))
    total *= scale
    return total


def _avg_pool_backward(grad, kernel, stride, padding, scale, input_size):
    nd = len(kernel)
    lead = grad.shape[: grad.ndim - nd]
    out = grad.shape[grad.ndim - nd:]
    g = (grad * scale).reshape((math.prod(lead), 1) + tuple(out))
    pairs = tuple((p, 0) for p in padding)
    image = col2im(lambda offset: xp.moveaxis(g, 1, -1), g.shape[0], 1, kernel, stride,
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
        batch=with_batch,
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
    batch=with_batch,
)


# ---- public functions ---------------------------------------------------------------------------


def _pool_geometry(input, nd, kernel_size, stride, padding, dilation, ceil_mode, name):
    # only the batch dim (of nd + 2 dims) may be empty
    if input.ndim not in (nd + 1, nd + 2) or 0 in input.shape[input.ndim - nd - 1 + (
            input.ndim == nd + 2):]:
        raise RuntimeError(f"non-empty {nd + 1}D or {nd + 2}D (batch mode) tensor expected for "
                           "input")
    kernel = ntuple(kernel_size, nd, name)
    stride = kernel if stride is None or stride == [] or stride == () else ntuple(stride, nd,
                                                                                  name)
    padding = ntuple(padding, nd, name)
    dilation = ntuple(dilation, nd, name)
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


# The checked geometry of recent max-pooling calls, keyed by the input's shape and the arguments
# as given (ints or tuples of ints; stride also None): 5-10 us of checks a call.
_geometry: dict = {}
_GEOMETRY_SIZE = 256


def _plain_ints(value) -> bool:
    return type(value) is int or type(value) is tuple and all(type(v) is int for v in value)


def _max_pool_geometry(input, nd, kernel_size, stride, padding, dilation, ceil_mode, name):
    """(kernel, stride, padding, dilation, out, disjoint), checked (once per shape and
    arguments)."""
    key = None
    if (_plain_ints(kernel_size) and (stride is None or _plain_ints(stride))
            and _plain_ints(padding) and _plain_ints(dilation) and type(ceil_mode) is bool):
        key = (input._data.shape, nd, kernel_size, stride, padding, dilation, ceil_mode, name)
        geometry = _geometry.get(key)
        if geometry is not None:
            return geometry
    kernel, stride, padding, dilation, out = _pool_geometry(
        input, nd, kernel_size, stride, padding, dilation, ceil_mode, name)
    disjoint = all(s >= (k - 1) * d + 1 for k, s, d in zip(kernel, stride, dilation))
    geometry = kernel, stride, padding, dilation, out, disjoint
    if key is not None:
        if len(_geometry) >= _GEOMETRY_SIZE:
            _geometry.clear()
        _geometry[key] = geometry
    return geometry


def _max_pool_nd(input, nd, kernel_size, stride, padding, dilation, ceil_mode, return_indices,
                 name):
    kernel, stride, padding, dilation, out, disjoint = _max_pool_geometry(
        input, nd, kernel_size, stride, padding, dilation, ceil_mode, name)
    indices = on_values(
        lambda x, lead: max_pool_indices(x, kernel, stride, padding, dilation, out), input)
    record = MAX_POOL3D if nd == 3 else MAX_POOL2D
    try:
        result = apply(record, input, indices, kernel=kernel, stride=stride, padding=padding,
                       dilation=dilation, out=out, disjoint=disjoint)
    finally:
        global _last_maxima
        _last_maxima = None  # used, or not this call's (batched, cast): hold no arrays
    return (result, indices) if return_indices else result


def max_pool1d(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False,
               return_indices=False):
    """Max over sliding windows of the last dim; ties go to the first maximum."""
    if input.ndim not in (2, 3) or input.numel() == 0:
        raise RuntimeError("max_pool1d() Expected 2D or 3D input tensor, but got "
                           f"{list(input.shape)}")
    stride = kernel_size if stride is None or stride == [] else stride
    out = _max_pool_nd(input.unsqueeze(-2), 2, (1, ntuple(kernel_size, 1, "max_pool1d")[0]),
                       (1, ntuple(stride, 1, "max_pool1d")[0]),
                       (0, ntuple(padding, 1, "max_pool1d")[0]),
                       (1, ntuple(dilation, 1, "max_pool1d")[0]), ceil_mode, return_indices,
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
    integer = input._data.dtype == xp.int64  # PyTorch's CPU kernels: floats and int64
    if not integer:
        check_float(input, "avg_pool3d_out_frame" if name == "avg_pool3d" else "avg_pool2d")
    kernel, stride, padding, _, out = _pool_geometry(input, nd, kernel_size, stride, padding, 1,
                                                     ceil_mode, name)
    if divisor_override is not None and divisor_override == 0:
        raise RuntimeError("divisor must be not zero")
    scale = avg_pool_divisor(input.shape[-nd:], kernel, stride, padding, out, count_include_pad,
                             divisor_override, xp.float64 if integer else input._data.dtype)
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
    out = _avg_pool_nd(input.unsqueeze(-2), 2, (1, ntuple(kernel_size, 1, "avg_pool1d")[0]),
                       (1, ntuple(stride, 1, "avg_pool1d")[0]),
                       (0, ntuple(padding, 1, "avg_pool1d")[0]), ceil_mode, count_include_pad,
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


def adaptive_avg_pool_nd(input, output_size, nd, name):
    if input.ndim not in (nd + 1, nd + 2):
        raise RuntimeError(f"{name}(): Expected {nd + 1}D or {nd + 2}D tensor, but got "
                           f"{list(input.shape)}")
    check_float(input, name)
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
    return adaptive_avg_pool_nd(input, output_size, 1, "adaptive_avg_pool1d")


def adaptive_avg_pool2d(input, output_size) -> Tensor:
    """Mean pooling of the last two dims to ``output_size``."""
    return adaptive_avg_pool_nd(input, output_size, 2, "adaptive_avg_pool2d")


def adaptive_avg_pool3d(input, output_size) -> Tensor:
    """Mean pooling of the last three dims to ``output_size``."""
    return adaptive_avg_pool_nd(input, output_size, 3, "adaptive_avg_pool3d")


# ---- fractional max pooling --------------------------------------------------------------------


def _fractional_starts(u, size: int, out: int, kernel: int, dtype):
    """The window starts of fractional max pooling (Graham 2014, pseudorandom sequences) for
    samples u in [0, 1): (planes,) -> (planes, out), in the input's precision as PyTorch's."""
    starts = xp.full(u.shape + (out,), size - kernel, dtype=xp.int64)
    if out > 1:
        alpha = dtype.type(size - kernel) / dtype.type(out - 1)
        u = u.astype(dtype)
        steps = (xp.arange(out - 1, dtype=dtype) + u[:, None]) * alpha
        starts[:, :-1] = steps.astype(xp.int64) - (u * alpha).astype(xp.int64)[:, None]
    return starts


def fractional_max_pool_indices(x, samples, kernel, out, order):
    """Flat spatial index of the maximum of each fractional window (first on ties), for x
    (..., planes, *spatial) and samples (planes, nd); ``order[d]`` is the sample of dim d."""
    nd = len(kernel)
    size = x.shape[x.ndim - nd:]
    planes = samples.shape[0]
    lead = x.shape[: x.ndim - nd - 1]
    flat = x.reshape((-1, planes, math.prod(size)))
    index = xp.zeros((planes,) + (1,) * (2 * nd), dtype=xp.int64)
    for d in range(nd):
        starts = _fractional_starts(samples[:, order[d]], size[d], out[d], kernel[d], x.dtype)
        pos = starts[:, :, None] + xp.arange(kernel[d])  # (planes, out, kernel)
        shape = [planes] + [1] * (2 * nd)
        shape[1 + d], shape[1 + nd + d] = out[d], kernel[d]
        index = index * size[d] + pos.reshape(shape)
    index = xp.broadcast_to(index, (planes,) + tuple(out) + tuple(kernel)).reshape(
        planes, math.prod(out), -1)
    values = flat[:, xp.arange(planes)[:, None, None], index]  # (L, planes, outs, window)
    best = xp.argmax(values, axis=-1)
    found = xp.take_along_axis(xp.broadcast_to(index, values.shape), best[..., None], -1)
    return found.reshape(lead + (planes,) + tuple(out))


def fractional_max_pool(input, kernel_size, output_size, output_ratio, return_indices,
                        samples, nd: int):
    name = f"fractional_max_pool{nd}d"
    if output_size is None and output_ratio is None:
        raise ValueError(f"{name} requires specifying either an output_size or an output_ratio")
    if input.ndim not in (nd + 1, nd + 2):
        raise RuntimeError(f"{name}(): Expected {nd + 1}D or {nd + 2}D tensor, but got: "
                           f"{list(input.shape)}")
    kernel = ntuple(kernel_size, nd, name)
    size = tuple(input.shape[-nd:])
    if output_size is None:
        ratio = output_ratio if isinstance(output_ratio, (tuple, list)) else (output_ratio,) * nd
        out = tuple(int(n * r) for n, r in zip(size, ratio))
    else:
        out = ntuple(output_size, nd, name)
    words = ("height", "width") if nd == 2 else ("time", "height", "width")
    for o, k, n, word in zip(out, kernel, size, words):
        if o + k - 1 > n:
            raise RuntimeError(f"{name}(): pool {word} {k} too large relative to input {word} "
                               f"{n}")
    batch = 1 if input.ndim == nd + 1 else input.shape[0]
    channels = input.shape[-nd - 1]
    if samples is None:
        from .._creation import rand

        samples = rand(batch, channels, nd, dtype=input.dtype)
    if samples.dtype != input.dtype:
        raise RuntimeError("Expect _random_samples to have the same dtype as input")
    if samples.shape[0] < batch:
        raise RuntimeError("Expect _random_samples.size(0) no less then input batch size.")
    if type(samples) is not Tensor:
        raise RuntimeError(f"vmap: {name} needs the same _random_samples for every example; "
                           "pass them explicitly")
    # PyTorch's samples: (W, H) in 2-D, (T, H, W) in 3-D.
    order = (1, 0) if nd == 2 else (0, 1, 2)
    planes = physical(samples)[:batch].reshape(batch * channels, nd)  # (meta: a stand-in)
    x = input if input.ndim == nd + 2 else input.unsqueeze(0)
    indices = on_values(lambda a, lead: fractional_max_pool_indices(
        a.reshape(a.shape[:lead] + (batch * channels,) + size), planes, kernel, out, order)
        .reshape(a.shape[: a.ndim - nd] + out), x)
    result = gather_at(x, indices, nd)
    if input.ndim == nd + 1:
        result, indices = result.squeeze(0), indices.squeeze(0)
    return (result, indices) if return_indices else result


def _torch_max_pool(fn):
    def pool(input, kernel_size, stride=(), padding=0, dilation=1, ceil_mode=False):
        return fn(input, kernel_size, stride or None, padding, dilation, ceil_mode)

    pool.__name__ = fn.__name__
    pool.__doc__ = fn.__doc__
    return pool


FUNCTIONS = {
    "max_pool1d": _torch_max_pool(max_pool1d),
    "max_pool2d": _torch_max_pool(max_pool2d),
    "max_pool3d": _torch_max_pool(max_pool3d),
    "avg_pool1d": avg_pool1d,
    "adaptive_avg_pool1d": adaptive_avg_pool1d,
}
METHODS: dict = {}
