"""chainrule.nn.functional: PyTorch's functional neural-network API.

Thin functions with PyTorch's signatures. Those with a record of their own live in the nn op
files of ``chainrule/ops/`` (activation, linear, convolution, pooling, normalization, dropout,
embedding, padding, distance, loss); the rest are compositions of differentiable ops written here.
"""

from __future__ import annotations

import math
import warnings

from .. import _batching
from .._backend import xp
from .._dispatch import apply
from ..ops import activation as _activation
from ..ops import loss as _loss
from ..ops import normalization as _normalization
from ..ops._nnutil import const, ntuple, on_values, type_name
from ..ops.activation import (
    celu,
    elu,
    gelu,
    hardsigmoid,
    hardswish,
    hardtanh,
    leaky_relu,
    logsigmoid,
    mish,
    prelu,
    relu6,
    selu,
    silu,
    softplus,
)
from ..ops.convolution import (
    conv1d,
    conv2d,
    conv3d,
    conv_transpose1d,
    conv_transpose2d,
    conv_transpose3d,
    fold,
    unfold,
)
from ..ops.distance import cosine_similarity, pairwise_distance, vector_norm
from ..ops.dropout import dropout, feature_dropout
from ..ops.elementwise import relu as _relu
from ..ops.elementwise import sigmoid as _sigmoid
from ..ops.elementwise import tanh as _tanh
from ..ops.elementwise import where as _where
from ..ops.embedding import embedding, embedding_bag, one_hot
from ..ops.linear import bilinear, linear
from ..ops.loss import check_reduction, ctc_loss
from ..ops.normalization import group_norm, instance_norm, layer_norm
from ..ops.padding import pad
from ..ops.pooling import (
    MAX_POOL_BACKWARD,
    adaptive_avg_pool1d,
    adaptive_avg_pool2d,
    adaptive_avg_pool3d,
    adaptive_avg_pool_nd,
    along,
    avg_pool1d,
    avg_pool2d,
    avg_pool3d,
    fractional_max_pool,
    gather_at,
    max_pool1d,
    max_pool2d,
    max_pool3d,
)
from ..ops.sampling import (
    GRID_SAMPLE_INTERPOLATION_MODES,
    GRID_SAMPLE_PADDING_MODES,
    affine_grid,
    grid_sample,
)
from ..ops.shape import cat as _cat
from ..tensor import Tensor
from . import attention as _attention

__all__ = [
    "GRID_SAMPLE_INTERPOLATION_MODES", "GRID_SAMPLE_PADDING_MODES", "adaptive_avg_pool1d",
    "adaptive_avg_pool2d", "adaptive_avg_pool3d", "adaptive_max_pool1d", "adaptive_max_pool2d",
    "affine_grid", "avg_pool1d", "avg_pool2d", "avg_pool3d", "batch_norm", "bilinear",
    "binary_cross_entropy", "binary_cross_entropy_with_logits", "celu", "conv1d", "conv2d",
    "conv3d", "conv_transpose1d", "conv_transpose2d", "conv_tbc", "conv_transpose3d",
    "cosine_embedding_loss", "cosine_similarity", "cross_entropy", "ctc_loss", "dropout",
    "dropout1d", "dropout2d", "dropout3d", "elu", "embedding", "embedding_bag", "fold",
    "fractional_max_pool2d", "fractional_max_pool2d_with_indices", "fractional_max_pool3d",
    "fractional_max_pool3d_with_indices", "gaussian_nll_loss", "gelu", "glu", "grid_sample",
    "group_norm", "hardshrink", "hardsigmoid", "hardswish", "hardtanh", "hinge_embedding_loss",
    "huber_loss", "instance_norm", "interpolate", "kl_div", "l1_loss", "layer_norm",
    "linear_cross_entropy", "leaky_relu", "linear", "log_softmax", "logsigmoid",
    "margin_ranking_loss", "max_pool1d", "max_pool2d", "max_pool3d", "mish", "mse_loss",
    "multi_head_attention_forward", "multi_margin_loss", "multilabel_soft_margin_loss",
    "multilabel_margin_loss", "nll_loss", "normalize", "one_hot", "pad", "pairwise_distance",
    "pixel_shuffle", "pixel_unshuffle", "poisson_nll_loss", "prelu", "relu", "relu6", "rms_norm",
    "rrelu", "scaled_dot_product_attention", "selu", "sigmoid", "silu", "smooth_l1_loss",
    "soft_margin_loss", "softmax", "softmin", "softplus", "softshrink", "softsign", "tanh",
    "tanhshrink", "threshold", "triplet_margin_loss", "unfold", "upsample", "upsample_bilinear",
    "upsample_nearest", "relu_", "elu_", "selu_", "celu_", "leaky_relu_", "hardtanh_", "rrelu_",
    "threshold_", "max_pool1d_with_indices", "max_pool2d_with_indices", "max_pool3d_with_indices",
    "adaptive_max_pool3d", "adaptive_max_pool1d_with_indices", "adaptive_max_pool2d_with_indices",
    "adaptive_max_pool3d_with_indices", "alpha_dropout", "feature_alpha_dropout",
    "channel_shuffle", "native_channel_shuffle", "local_response_norm", "lp_pool1d", "lp_pool2d",
    "lp_pool3d", "max_unpool1d", "max_unpool2d", "max_unpool3d", "pdist",
    "triplet_margin_with_distance_loss", "gumbel_softmax",
]


def _implicit_dim_warning(name: str) -> None:
    warnings.warn(f"Implicit dimension choice for {name} has been deprecated. Change the call to "
                  "include dim=X as an argument.", stacklevel=3)


def _reduction(size_average, reduce, reduction: str) -> str:
    """PyTorch's legacy size_average/reduce flags as a reduction string."""
    if size_average is None and reduce is None:
        return reduction
    warnings.warn("size_average and reduce args will be deprecated, please use reduction='"
                  f"{_legacy(size_average, reduce)}' instead.", stacklevel=3)
    return _legacy(size_average, reduce)


def _legacy(size_average, reduce) -> str:
    size_average = True if size_average is None else size_average
    reduce = True if reduce is None else reduce
    return "mean" if size_average and reduce else "sum" if reduce else "none"


def _reduce(losses: Tensor, reduction: str) -> Tensor:
    check_reduction(reduction)
    if reduction == "none":
        return losses
    return losses.sum() if reduction == "sum" else losses.mean()


def _warn_size(input: Tensor, target: Tensor) -> None:
    if tuple(target.shape) != tuple(input.shape):
        warnings.warn(f"Using a target size ({target.shape!r}) that is different to the input "
                      f"size ({input.shape!r}). This will likely lead to incorrect results due "
                      "to broadcasting. Please ensure they have the same size.", stacklevel=3)


# ---- activations -------------------------------------------------------------------------------


def relu(input: Tensor, inplace: bool = False) -> Tensor:
    """max(x, 0); the gradient at 0 is 0."""
    return input.relu_() if inplace else _relu(input)


def threshold(input: Tensor, threshold: float, value: float, inplace: bool = False) -> Tensor:
    """x where x > threshold, else value."""
    # value in input's dtype (an integer tensor stays one, 0.5 becoming 0), as PyTorch
    value = float(value) if input.is_floating_point() else int(value)
    out = _where(input > threshold, input, value)
    return input.copy_(out) if inplace else out


def tanh(input: Tensor) -> Tensor:
    """Hyperbolic tangent, elementwise."""
    return _tanh(input)


def sigmoid(input: Tensor) -> Tensor:
    """1 / (1 + exp(-x)), elementwise."""
    return _sigmoid(input)


def softsign(input: Tensor) -> Tensor:
    """x / (1 + |x|)."""
    return input / (input.abs() + 1)


def hardshrink(input: Tensor, lambd: float = 0.5) -> Tensor:
    """x where |x| > lambd, else 0."""
    return _where(input.abs() > lambd, input, 0.0)


def softshrink(input: Tensor, lambd: float = 0.5) -> Tensor:
    """x - lambd above lambd, x + lambd below -lambd, 0 between."""
    return _where(input > lambd, input - lambd, _where(input < -lambd, input + lambd, 0.0))


def tanhshrink(input: Tensor) -> Tensor:
    """x - tanh(x)."""
    return input - _tanh(input)


def rrelu(input: Tensor, lower: float = 1.0 / 8, upper: float = 1.0 / 3, training: bool = False,
          inplace: bool = False) -> Tensor:
    """Leaky ReLU with a random slope in [lower, upper] per element (training), or their mean."""
    if not training:
        return leaky_relu(input, (lower + upper) / 2, inplace)
    from .._creation import rand

    if not input._holds_values():  # under vmap or on meta: a slope drawn for every element
        slope = rand(*input.shape, dtype=input.dtype) * (upper - lower) + lower
        slope = _where(input >= 0, 1.0, slope)
    else:
        # PyTorch's draws: a uniform double for each element <= 0 only, in memory order,
        # between the bounds as the input's compute type holds them
        negative = input.detach() <= 0
        opmath = xp.float64 if input._data.dtype == xp.float64 else xp.float32
        lo, hi = float(opmath(lower)), float(opmath(upper))
        drawn = rand(int(negative.sum()), dtype=xp.float64) * (hi - lo) + lo
        slope = input.detach().new_ones(input.shape)
        slope[negative] = drawn.to(input.dtype)
    out = input * slope
    return input.copy_(out) if inplace else out


def glu(input: Tensor, dim: int = -1) -> Tensor:
    """a * sigmoid(b), a and b the two halves of input along dim."""
    if input.ndim == 0:
        raise RuntimeError("glu does not support scalars because halving size must be even")
    d = dim % input.ndim
    size = input.shape[d]
    if size % 2:
        raise RuntimeError(f"Halving dimension must be even, but dimension {d} is size {size}")
    half = size // 2
    lead = (slice(None),) * d
    return input[lead + (slice(0, half),)] * _sigmoid(input[lead + (slice(half, None),)])


def softmax(input: Tensor, dim=None, _stacklevel: int = 3, dtype=None) -> Tensor:
    """exp(x_i) / sum_j exp(x_j) along dim."""
    if dim is None:
        _implicit_dim_warning("softmax")
    return _activation.softmax(input, dim, dtype)


def log_softmax(input: Tensor, dim=None, _stacklevel: int = 3, dtype=None) -> Tensor:
    """log(softmax(x)) along dim, computed stably."""
    if dim is None:
        _implicit_dim_warning("log_softmax")
    return _activation.log_softmax(input, dim, dtype)


def softmin(input: Tensor, dim=None, _stacklevel: int = 3, dtype=None) -> Tensor:
    """softmax(-x) along dim."""
    if dim is None:
        _implicit_dim_warning("softmin")
    return _activation.softmax(-input, dim, dtype)


def normalize(input: Tensor, p: float = 2.0, dim: int = 1, eps: float = 1e-12,
              out=None) -> Tensor:
    """x / max(||x||_p, eps) along dim."""
    result = input / vector_norm(input, p, dim, keepdim=True).clamp(min=eps)
    return result if out is None else out.copy_(result)


# ---- dropout -----------------------------------------------------------------------------------


def dropout1d(input: Tensor, p: float = 0.5, training: bool = True,
              inplace: bool = False) -> Tensor:
    """Zero whole channels of (N, C, L) input with probability p."""
    return feature_dropout(input, p, training, inplace, 1, "dropout1d")


def dropout2d(input: Tensor, p: float = 0.5, training: bool = True,
              inplace: bool = False) -> Tensor:
    """Zero whole channels of (N, C, H, W) input with probability p."""
    return feature_dropout(input, p, training, inplace, 2, "dropout2d")


def dropout3d(input: Tensor, p: float = 0.5, training: bool = True,
              inplace: bool = False) -> Tensor:
    """Zero whole channels of (N, C, D, H, W) input with probability p."""
    return feature_dropout(input, p, training, inplace, 3, "dropout3d")


# ---- normalisation -----------------------------------------------------------------------------


def batch_norm(input: Tensor, running_mean, running_var, weight=None, bias=None,
               training: bool = False, momentum: float = 0.1, eps: float = 1e-5) -> Tensor:
    """Normalise each channel by batch statistics (training) or the running ones (eval)."""
    return _normalization.batch_norm(input, running_mean, running_var, weight, bias, training,
                                     momentum, eps)


def rms_norm(input: Tensor, normalized_shape, weight=None, eps=None) -> Tensor:
    """x / sqrt(mean(x^2) + eps) over the trailing normalized_shape dims, times weight."""
    shape = (normalized_shape,) if isinstance(normalized_shape, int) else tuple(normalized_shape)
    if tuple(input.shape[input.ndim - len(shape):]) != shape:
        raise RuntimeError(f"Given normalized_shape={list(shape)}, expected input with shape "
                           f"[*, {', '.join(map(str, shape))}], but got input of size"
                           f"{list(input.shape)}")
    if eps is None:
        eps = float(xp.finfo(input._data.dtype).eps)
    dims = tuple(range(input.ndim - len(shape), input.ndim))
    out = input * ((input * input).mean(dims, keepdim=True) + eps) ** -0.5
    return out if weight is None else out * weight


# ---- pooling and resampling --------------------------------------------------------------------


def _adaptive_max_pool(input: Tensor, output_size, nd: int, return_indices: bool, name: str):
    if input.ndim not in (nd + 1, nd + 2):
        raise RuntimeError(f"{name}(): Expected {nd + 1}D or {nd + 2}D tensor, but got "
                           f"{list(input.shape)}")
    if not isinstance(output_size, (tuple, list)):
        output_size = (output_size,) * nd
    size = tuple(input.shape[-nd:])
    out = tuple(n if o is None else int(o) for n, o in zip(size, output_size))
    indices = on_values(lambda x, lead: _adaptive_max_indices(x, size, out), input)
    result = gather_at(input, indices, nd)
    return (result, indices) if return_indices else result


def _adaptive_max_indices(x, size, out):
    """Flat spatial index of the maximum of each adaptive window (first on ties)."""
    nd = len(size)
    starts = [(xp.arange(o) * n) // o for n, o in zip(size, out)]
    ends = [-((-(xp.arange(o) + 1) * n) // o) for n, o in zip(size, out)]
    widths = [int((e - s).max()) for s, e in zip(starts, ends)]
    best = arg = None
    for offset in xp.ndindex(*widths):
        flat = 0
        valid = True
        for i in range(nd):
            pos = starts[i] + offset[i]
            ok = pos < ends[i]
            pos = xp.minimum(pos, size[i] - 1)
            shape = [1] * nd
            shape[i] = out[i]
            flat = flat * size[i] + pos.reshape(shape)
            valid = valid & ok.reshape(shape)
        flat = xp.broadcast_to(flat, out)
        lead = x.shape[: x.ndim - nd]
        values = x.reshape(lead + (-1,))[..., flat]
        values = xp.where(valid, values, -xp.inf)
        if best is None:
            best, arg = values, xp.broadcast_to(flat, values.shape).copy()
            continue
        better = (values > best) | xp.isnan(values)
        best = xp.where(better, values, best)
        arg = xp.where(better, flat, arg)
    return arg.astype(xp.int64)


def adaptive_max_pool1d(input: Tensor, output_size, return_indices: bool = False):
    """Max pooling of the last dim to output_size positions."""
    return _adaptive_max_pool(input, output_size, 1, return_indices, "adaptive_max_pool1d")


def adaptive_max_pool2d(input: Tensor, output_size, return_indices: bool = False):
    """Max pooling of the last two dims to output_size."""
    return _adaptive_max_pool(input, output_size, 2, return_indices, "adaptive_max_pool2d")


_MODE_DIMS = {"linear": 1, "bilinear": 2, "bicubic": 2, "trilinear": 3}


def interpolate(input: Tensor, size=None, scale_factor=None, mode: str = "nearest",
                align_corners=None, recompute_scale_factor=None,
                antialias: bool = False) -> Tensor:
    """Resample the spatial dims (all but the first two) to size or by scale_factor."""
    nd = input.ndim - 2
    if nd < 1:
        raise ValueError(f"Input Error: Only 3D, 4D and 5D input Tensors supported (got "
                         f"{input.ndim}D) for the modes: nearest | linear | bilinear | bicubic | "
                         f"trilinear | area | nearest-exact (got {mode})")
    if mode in ("nearest", "area", "nearest-exact"):
        if align_corners is not None:
            raise ValueError("align_corners option can only be set with the interpolating "
                             "modes: linear | bilinear | bicubic | trilinear")
    elif mode in _MODE_DIMS:
        if _MODE_DIMS[mode] != nd:
            raise NotImplementedError(f"Got {input.ndim}D input, but {mode} mode needs "
                                      f"{_MODE_DIMS[mode] + 2}D input")
        align_corners = bool(align_corners)
    else:
        raise NotImplementedError(f"Input Error: Only 3D, 4D and 5D input Tensors supported "
                                  f"(got {input.ndim}D) for the modes: nearest | linear | "
                                  f"bilinear | bicubic | trilinear | area | nearest-exact (got "
                                  f"{mode})")
    if antialias:
        raise NotImplementedError("interpolate: antialias=True is not implemented in chainrule")
    in_size = tuple(input.shape[2:])
    if (size is None) == (scale_factor is None):
        raise ValueError("only one of size or scale_factor should be defined" if size is not None
                         else "either size or scale_factor should be defined")
    if size is not None:
        out_size = tuple(int(s) for s in (size if isinstance(size, (tuple, list))
                                          else (size,) * nd))
        if len(out_size) != nd:
            raise ValueError(f"Input and output must have the same number of spatial "
                             f"dimensions, but got input with spatial dimensions of "
                             f"{list(in_size)} and output size of {list(out_size)}. Please "
                             "provide input tensor in (N, C, d1, d2, ...,dK) format and output "
                             "size in (o1, o2, ...,oK) format.")
        scales = (None,) * nd
    else:
        factors = tuple(float(f) for f in (scale_factor if isinstance(scale_factor, (tuple, list))
                                           else (scale_factor,) * nd))
        out_size = tuple(math.floor(n * f) for n, f in zip(in_size, factors))
        scales = (None,) * nd if recompute_scale_factor else factors
    if mode == "area":
        return adaptive_avg_pool_nd(input, out_size, nd, "adaptive_avg_pool")
    if mode in ("bilinear", "bicubic") and input._data.dtype == xp.uint8:
        return const(_resample_uint8(input._data, out_size, scales, align_corners,
                                     mode == "bicubic"))
    out = input
    for i, (n, o, scale) in enumerate(zip(in_size, out_size, scales)):
        axis = 2 + i
        if mode in ("nearest", "nearest-exact"):
            out = out[(slice(None),) * axis + (_nearest_index(n, o, scale, mode),)]
        else:
            matrix = _interp_matrix(n, o, scale, align_corners, mode == "bicubic")
            out = along(out, axis, matrix.astype(input._data.dtype))
    return out


def _uint8_filter(x: float, cubic: bool) -> float:
    x = abs(x)
    if not cubic:
        return 1.0 - x if x < 1.0 else 0.0
    a = -0.75
    if x < 1.0:
        return ((a + 2) * x - (a + 3)) * x * x + 1
    if x < 2.0:
        return ((a * x - 5 * a) * x + 8 * a) * x - 4 * a
    return 0.0


def _uint8_matrix(n: int, o: int, scale, align_corners: bool, cubic: bool):
    """PyTorch's uint8 bilinear/bicubic weights along one dim: an (o, n) matrix of integers and
    their fixed-point precision (weights summed onto the border pixels they fall past, scaled
    by the largest power of two that keeps them in int16, rounded half away from zero)."""
    if align_corners:
        s = (n - 1) / (o - 1) if o > 1 else 0.0
    else:
        s = 1.0 / scale if scale is not None and scale > 0 else n / o
    size = 4 if cubic else 2
    support = size // 2
    weights = xp.zeros((o, size))
    starts = xp.zeros(o, dtype=xp.int64)
    counts = xp.zeros(o, dtype=xp.int64)
    largest = 0.0
    for i in range(o):
        real = s * i if align_corners else s * (i + 0.5) - 0.5
        if not align_corners and not cubic and real < 0:
            real = 0.0
        index = min(int(math.floor(xp.float32(real))), n - 1)  # PyTorch's floorf
        frac = min(max(real - index, 0.0), 1.0)
        low = index - support + 1
        starts[i] = max(low, 0)
        counts[i] = min(max(min(index + support + 1, n) - starts[i], 0), size)
        k = 0
        for j in range(size):
            if low + j <= 0:
                k = 0
            elif low + j >= n - 1:
                k = counts[i] - 1
            weights[i, k] += _uint8_filter(j + 1 - support - frac, cubic)
            largest = max(largest, weights[i, k])
            k += 1
    precision = 0
    while precision < 22 and int(0.5 + largest * (1 << (precision + 1))) < 1 << 15:
        precision += 1
    scaled = weights * (1 << precision)
    whole = xp.trunc(scaled + xp.where(scaled < 0, -0.5, 0.5)).astype(xp.int64)
    matrix = xp.zeros((o, n), dtype=xp.int64)
    for i in range(o):
        c = int(counts[i])
        matrix[i, starts[i]:starts[i] + c] = whole[i, :c]
    return matrix, precision


def _resample_uint8(data, out_size, scales, align_corners: bool, cubic: bool):
    """PyTorch's uint8 bilinear/bicubic kernel: the last dim, then the one before (each only if
    its size changes), each pass summing in integers and rounding and clamping to uint8."""
    for axis in (-1, -2):
        n, o = data.shape[axis], out_size[axis]
        if n == o:
            continue
        matrix, precision = _uint8_matrix(n, o, scales[axis], align_corners, cubic)
        moved = xp.moveaxis(data, axis, -1).astype(xp.int64)
        summed = (moved @ matrix.T + (1 << (precision - 1))) >> precision
        data = xp.moveaxis(xp.clip(summed, 0, 255).astype(xp.uint8), -1, axis)
    return data


def _nearest_index(n: int, o: int, scale, mode: str):
    # PyTorch computes these in single precision, whatever the input dtype.
    s = xp.float32(1.0 / scale if scale else n / o)
    dst = xp.arange(o, dtype=xp.float32)
    if mode == "nearest-exact":
        dst = dst + xp.float32(0.5)
    return xp.minimum(xp.floor(dst * s).astype(xp.int64), n - 1)


def _interp_matrix(n: int, o: int, scale, align_corners: bool, cubic: bool):
    """The (o, n) matrix of linear (or cubic-convolution) interpolation weights."""
    dst = xp.arange(o, dtype=xp.float64)
    if align_corners:
        src = dst * ((n - 1) / (o - 1) if o > 1 else 0.0)
    else:
        src = (dst + 0.5) * (1.0 / scale if scale else n / o) - 0.5
        if not cubic:
            src = xp.maximum(src, 0.0)
    m = xp.zeros((o, n), dtype=xp.float64)
    rows = xp.arange(o)
    base = xp.floor(src).astype(xp.int64)
    t = src - base
    if not cubic:
        upper = xp.minimum(base + 1, n - 1)
        xp.add.at(m, (rows, base), 1 - t)
        xp.add.at(m, (rows, upper), t)
        return m
    # Keys' cubic convolution with A = -0.75, indices clamped at the borders (as PyTorch).
    a = -0.75
    weights = (
        ((a * (t + 1) - 5 * a) * (t + 1) + 8 * a) * (t + 1) - 4 * a,
        ((a + 2) * t - (a + 3)) * t * t + 1,
        ((a + 2) * (1 - t) - (a + 3)) * (1 - t) * (1 - t) + 1,
        ((a * (2 - t) - 5 * a) * (2 - t) + 8 * a) * (2 - t) - 4 * a,
    )
    for k, w in enumerate(weights):
        xp.add.at(m, (rows, xp.clip(base - 1 + k, 0, n - 1)), w)
    return m


def upsample(input: Tensor, size=None, scale_factor=None, mode: str = "nearest",
             align_corners=None) -> Tensor:
    """Deprecated alias of interpolate."""
    return interpolate(input, size, scale_factor, mode, align_corners)


def upsample_nearest(input: Tensor, size=None, scale_factor=None) -> Tensor:
    """Deprecated: interpolate(..., mode='nearest')."""
    return interpolate(input, size, scale_factor, mode="nearest")


def upsample_bilinear(input: Tensor, size=None, scale_factor=None) -> Tensor:
    """Deprecated: interpolate(..., mode='bilinear', align_corners=True)."""
    return interpolate(input, size, scale_factor, mode="bilinear", align_corners=True)


def pixel_shuffle(input: Tensor, upscale_factor: int) -> Tensor:
    """(*, C r^2, H, W) -> (*, C, H r, W r)."""
    r = upscale_factor
    *lead, c, h, w = input.shape
    if c % (r * r):
        raise RuntimeError(f"pixel_shuffle expects its input's 'channel' dimension to be "
                           f"divisible by the square of upscale_factor, but input.size(-3)={c} "
                           f"is not divisible by {r * r}")
    k = len(lead)
    x = input.reshape(*lead, c // (r * r), r, r, h, w)
    x = x.permute(*range(k), k, k + 3, k + 1, k + 4, k + 2)
    return x.reshape(*lead, c // (r * r), h * r, w * r)


def pixel_unshuffle(input: Tensor, downscale_factor: int) -> Tensor:
    """(*, C, H r, W r) -> (*, C r^2, H, W)."""
    r = downscale_factor
    *lead, c, h, w = input.shape
    if h % r or w % r:
        raise RuntimeError(f"pixel_unshuffle expects height and width to be divisible by "
                           f"downscale_factor, but got height={h}, width={w} and "
                           f"downscale_factor={r}")
    k = len(lead)
    x = input.reshape(*lead, c, h // r, r, w // r, r)
    x = x.permute(*range(k), k, k + 2, k + 4, k + 1, k + 3)
    return x.reshape(*lead, c * r * r, h // r, w // r)


# ---- attention ---------------------------------------------------------------------------------


def scaled_dot_product_attention(query: Tensor, key: Tensor, value: Tensor, attn_mask=None,
                                 dropout_p: float = 0.0, is_causal: bool = False, scale=None,
                                 enable_gqa: bool = False) -> Tensor:
    """softmax(q k^T * scale + mask) v, with an optional causal mask and dropout."""
    if not _attention._math_available():  # sdpa_kernel left no CPU kernel enabled
        raise RuntimeError("No viable backend for scaled_dot_product_attention was found. This "
                           "is likely due to turning off both the math kernel and the fused "
                           "kernels.")
    length, source = query.shape[-2], key.shape[-2]
    scale = 1.0 / math.sqrt(query.shape[-1]) if scale is None else scale
    if enable_gqa and query.ndim >= 3 and key.shape[-3] != query.shape[-3]:
        key = _repeat_heads(key, query.shape[-3] // key.shape[-3])
        value = _repeat_heads(value, query.shape[-3] // value.shape[-3])
    scores = (query @ key.transpose(-2, -1)) * scale
    if is_causal:
        if attn_mask is not None:
            raise RuntimeError("_scaled_dot_product_attention: Explicit attn_mask should not be "
                               "set when is_causal=True")
        attn_mask = const(xp.tril(xp.ones((length, source), dtype=bool)))
    if attn_mask is not None:
        if attn_mask._data.dtype == xp.bool_:
            scores = _where(attn_mask, scores, -math.inf)
        else:
            scores = scores + attn_mask
    weights = _activation.softmax(scores, -1)
    if dropout_p > 0:
        weights = dropout(weights, dropout_p, True)
    return weights @ value


def _repeat_heads(t: Tensor, repeats: int) -> Tensor:
    """Repeat each head (dim -3) ``repeats`` times, as repeat_interleave."""
    shape = tuple(t.shape)
    expanded = t.unsqueeze(-3).expand(*shape[:-2], repeats, *shape[-2:])
    return expanded.reshape(*shape[:-3], shape[-3] * repeats, *shape[-2:])


# ---- losses ------------------------------------------------------------------------------------


def _weighted(losses: Tensor, weight, reduction: str, mean_by_weight: bool) -> Tensor:
    """PyTorch's elementwise weight: the mean divides by the weights' sum (mean_by_weight) or
    by the element count."""
    if weight is None:
        return _reduce(losses, reduction)
    if tuple(weight.shape) != tuple(losses.shape):
        raise ValueError("Weights and input must have the same size.")
    losses = losses * weight
    if reduction == "mean" and mean_by_weight:
        return losses.sum() / weight.sum()
    if reduction not in ("none", "mean", "sum"):
        raise ValueError(f"Invalid reduction mode: {reduction}. Expected one of 'none', 'mean', "
                         "'sum'.")
    return _reduce(losses, reduction)


def mse_loss(input: Tensor, target: Tensor, size_average=None, reduce=None,
             reduction: str = "mean", weight=None) -> Tensor:
    """(input - target)^2, reduced."""
    _warn_size(input, target)
    reduction = _reduction(size_average, reduce, reduction)
    if weight is None:
        return _loss.mse_loss(input, target, reduction)
    d = input - target
    return _weighted(d * d, weight, reduction, True)


def l1_loss(input: Tensor, target: Tensor, size_average=None, reduce=None,
            reduction: str = "mean", weight=None) -> Tensor:
    """|input - target|, reduced."""
    _warn_size(input, target)
    reduction = _reduction(size_average, reduce, reduction)
    return _weighted((input - target).abs(), weight, reduction, True)


def smooth_l1_loss(input: Tensor, target: Tensor, size_average=None, reduce=None,
                   reduction: str = "mean", beta: float = 1.0) -> Tensor:
    """0.5 d^2 / beta where |d| < beta, else |d| - beta / 2; d = input - target."""
    _warn_size(input, target)
    reduction = _reduction(size_average, reduce, reduction)
    if beta < 0:
        raise RuntimeError("smooth_l1_loss does not support negative values for beta.")
    d = input - target
    a = d.abs()
    if beta == 0:
        return _reduce(a, reduction)
    return _reduce(_where(a < beta, d * d * (0.5 / beta), a - 0.5 * beta), reduction)


def huber_loss(input: Tensor, target: Tensor, reduction: str = "mean", delta: float = 1.0,
               weight=None) -> Tensor:
    """0.5 d^2 where |d| < delta, else delta (|d| - delta / 2); d = input - target."""
    _warn_size(input, target)
    if delta <= 0:
        raise RuntimeError("huber_loss does not support non-positive values for delta.")
    d = input - target
    a = d.abs()
    losses = _where(a < delta, d * d * 0.5, (a - 0.5 * delta) * delta)
    return _weighted(losses, weight, reduction, False)


def nll_loss(input: Tensor, target: Tensor, weight=None, size_average=None,
             ignore_index: int = -100, reduce=None, reduction: str = "mean") -> Tensor:
    """The negative log-likelihood of the target classes, from log-probabilities."""
    reduction = _reduction(size_average, reduce, reduction)
    return _loss.nll_loss(input, target, weight, ignore_index, reduction)


def cross_entropy(input: Tensor, target: Tensor, weight=None, size_average=None,
                  ignore_index: int = -100, reduce=None, reduction: str = "mean",
                  label_smoothing: float = 0.0) -> Tensor:
    """Cross-entropy between the logits ``input`` and class indices or probabilities."""
    reduction = _reduction(size_average, reduce, reduction)
    return _loss.cross_entropy(input, target, weight, ignore_index, reduction, label_smoothing)


def binary_cross_entropy(input: Tensor, target: Tensor, weight=None, size_average=None,
                         reduce=None, reduction: str = "mean") -> Tensor:
    """-(y log x + (1 - y) log(1 - x)) for probabilities x."""
    reduction = _reduction(size_average, reduce, reduction)
    return _loss.binary_cross_entropy(input, target, weight, reduction)


def binary_cross_entropy_with_logits(input: Tensor, target: Tensor, weight=None,
                                     size_average=None, reduce=None, reduction: str = "mean",
                                     pos_weight=None) -> Tensor:
    """binary_cross_entropy(sigmoid(x), y), computed stably from the logits x."""
    reduction = _reduction(size_average, reduce, reduction)
    check_reduction(reduction)
    if tuple(target.shape) != tuple(input.shape):
        raise ValueError(f"Target size ({target.shape!r}) must be the same as input size "
                         f"({input.shape!r})")
    # (1 - y) x - w log(sigmoid(x)), w = 1 + (pos_weight - 1) y: stable for all x.
    log_sig = logsigmoid(input)
    if pos_weight is None:
        losses = (1 - target) * input - log_sig
    else:
        losses = (1 - target) * input - (target * (pos_weight - 1) + 1) * log_sig
    if weight is not None:
        losses = losses * weight
    return _reduce(losses, reduction)


def kl_div(input: Tensor, target: Tensor, size_average=None, reduce=None,
           reduction: str = "mean", log_target: bool = False) -> Tensor:
    """target * (log(target) - input), input and (with log_target) target being log-probs."""
    reduction = _reduction(size_average, reduce, reduction)
    if reduction == "mean":
        warnings.warn("reduction: 'mean' divides the total loss by both the batch size and the "
                      "support size.'batchmean' divides only by the batch size, and aligns with "
                      "the KL div math definition.'mean' will be changed to behave the same as "
                      "'batchmean' in the next major release.", stacklevel=2)
    if log_target:
        losses = target.exp() * (target - input)
    else:
        # xlogy(target, target): 0 where target == 0 (its gradient there is nan, as PyTorch's)
        losses = _where(target > 0, target * target.log(), 0.0) - target * input
    if reduction == "batchmean":
        total = losses.sum()
        return total / input.shape[0] if input.ndim else total
    return _reduce(losses, reduction)


def cosine_embedding_loss(input1: Tensor, input2: Tensor, target: Tensor, margin: float = 0,
                          size_average=None, reduce=None, reduction: str = "mean") -> Tensor:
    """1 - cos(x1, x2) where target is 1, max(0, cos(x1, x2) - margin) where it is -1."""
    reduction = _reduction(size_average, reduce, reduction)
    dim = input1.ndim - 1
    eps = 1e-12
    dot = (input1 * input2).sum(dim)
    square1 = (input1 * input1).sum(dim) + eps
    square2 = (input2 * input2).sum(dim) + eps
    cos = dot / (square1 * square2).sqrt()
    positive = _where(target == 1, 1 - cos, 0.0)
    negative = _where(target == -1, (cos - margin).clamp(min=0), 0.0)
    return _reduce(positive + negative, reduction)


def margin_ranking_loss(input1: Tensor, input2: Tensor, target: Tensor, margin: float = 0,
                        size_average=None, reduce=None, reduction: str = "mean") -> Tensor:
    """max(0, -target * (input1 - input2) + margin)."""
    reduction = _reduction(size_average, reduce, reduction)
    if not input1.ndim == input2.ndim == target.ndim:
        raise RuntimeError(f"margin_ranking_loss : All input tensors should have same dimension "
                           f"but got sizes: input1: {input1.shape!r}, input2: {input2.shape!r}, "
                           f"target: {target.shape!r} ")
    return _reduce((-target * (input1 - input2) + margin).clamp(min=0), reduction)


def triplet_margin_loss(anchor: Tensor, positive: Tensor, negative: Tensor, margin: float = 1.0,
                        p: float = 2, eps: float = 1e-6, swap: bool = False, size_average=None,
                        reduce=None, reduction: str = "mean") -> Tensor:
    """max(d(a, p) - d(a, n) + margin, 0) with d the pairwise p-norm distance."""
    reduction = _reduction(size_average, reduce, reduction)
    if not anchor.ndim == positive.ndim == negative.ndim:
        raise RuntimeError(f"The anchor, positive, and negative tensors are expected to have the "
                           f"same number of dimensions, but got: anchor {anchor.ndim}D, positive "
                           f"{positive.ndim}D, and negative {negative.ndim}D inputs")
    d_ap = pairwise_distance(anchor, positive, p, eps)
    d_an = pairwise_distance(anchor, negative, p, eps)
    if swap:
        d_pn = pairwise_distance(positive, negative, p, eps)
        d_an = _where(d_pn < d_an, d_pn, d_an)
    return _reduce((d_ap - d_an + margin).clamp(min=0), reduction)


def hinge_embedding_loss(input: Tensor, target: Tensor, margin: float = 1.0, size_average=None,
                         reduce=None, reduction: str = "mean") -> Tensor:
    """x where target is 1, max(0, margin - x) where it is -1."""
    reduction = _reduction(size_average, reduce, reduction)
    margin_part = _where(target == 1, 0.0, (margin - input).clamp(min=0))
    self_part = _where(target == -1, 0.0, input)
    return _reduce(margin_part + self_part, reduction)


def soft_margin_loss(input: Tensor, target: Tensor, size_average=None, reduce=None,
                     reduction: str = "mean") -> Tensor:
    """log(1 + exp(-target * input))."""
    reduction = _reduction(size_average, reduce, reduction)
    return _reduce(-logsigmoid(target * input), reduction)


def multilabel_soft_margin_loss(input: Tensor, target: Tensor, weight=None, size_average=None,
                                reduce=None, reduction: str = "mean") -> Tensor:
    """-mean_c [y log sigmoid(x) + (1 - y) log sigmoid(-x)] per sample."""
    reduction = _reduction(size_average, reduce, reduction)
    losses = -(target * logsigmoid(input) + (1 - target) * logsigmoid(-input))
    if weight is not None:
        losses = losses * weight
    losses = losses.sum(input.ndim - 1) / input.shape[-1]
    return _reduce(losses, reduction)


def multi_margin_loss(input: Tensor, target: Tensor, p: int = 1, margin: float = 1.0,
                      weight=None, size_average=None, reduce=None,
                      reduction: str = "mean") -> Tensor:
    """sum_{i != y} max(0, margin - x[y] + x[i])^p / C per sample."""
    reduction = _reduction(size_average, reduce, reduction)
    if p not in (1, 2):
        raise ValueError("only p == 1 and p == 2 supported")
    x = input if input.ndim > 1 else input.reshape(1, -1)
    y = target.reshape(-1)
    classes = x.shape[1]
    rows = xp.arange(x.shape[0])
    picked = x[rows, y._data].unsqueeze(1)
    hinge = (x - picked + margin).clamp(min=0)
    if p == 2:
        hinge = hinge * hinge
    not_target = const((xp.arange(classes) != y._data[:, None]).astype(input._data.dtype))
    hinge = hinge * not_target
    if weight is not None:
        hinge = hinge * weight[y._data].unsqueeze(1)
    losses = hinge.sum(1) / classes
    if input.ndim <= 1:
        losses = losses.reshape(())
    return _reduce(losses, reduction)


def _multilabel_masks(target, lead: int, classes: int, dtype):
    """For each sample: how often each class is a target (before the first -1), and whether
    it is not one."""
    valid = xp.cumprod(target >= 0, axis=-1).astype(bool)
    picked = (target[..., :, None] == xp.arange(classes)) & valid[..., :, None]
    counts = picked.sum(-2)
    return counts.astype(dtype), (counts == 0).astype(dtype)


def multilabel_margin_loss(input: Tensor, target: Tensor, size_average=None, reduce=None,
                           reduction: str = "mean") -> Tensor:
    """sum over target classes j and other classes i of max(0, 1 - (x[j] - x[i])) / C."""
    reduction = _reduction(size_average, reduce, reduction)
    if input.ndim > 2 or (input.ndim == 2 and input.shape[1] == 0):
        raise RuntimeError("Expected non-empty vector or matrix with optional 0-dim batch size, "
                           f"but got: {list(input.shape)}")
    if tuple(target.shape) != tuple(input.shape):
        raise RuntimeError(f"inconsistent target size: {list(target.shape)} for input of size: "
                           f"{list(input.shape)}")
    if target._data.dtype != xp.int64:
        raise RuntimeError(f"expected scalar type Long but found {type_name(target)}")
    x = input.reshape(-1, 1 if input.ndim == 0 else input.shape[-1])
    classes = x.shape[1]
    found = _batching.physical(target)
    if found.size and (found.min() < -1 or found.max() >= classes):
        raise RuntimeError("argument #2 'target' is out of range")
    counts, others = on_values(
        lambda t, lead: _multilabel_masks(t.reshape(t.shape[:lead] + (-1, classes)), lead,
                                          classes, input._data.dtype), target)
    hinge = (1.0 - x.unsqueeze(2) + x.unsqueeze(1)).clamp(min=0)
    losses = (hinge * (counts.unsqueeze(2) * others.unsqueeze(1))).sum((1, 2)) / classes
    if input.ndim < 2:
        losses = losses.reshape(())
    return _reduce(losses, reduction)


def poisson_nll_loss(input: Tensor, target: Tensor, log_input: bool = True, full: bool = False,
                     size_average=None, eps: float = 1e-8, reduce=None,
                     reduction: str = "mean") -> Tensor:
    """exp(x) - y x (log_input) or x - y log(x + eps), plus Stirling's term if full."""
    reduction = _reduction(size_average, reduce, reduction)
    if log_input:
        losses = input.exp() - target * input
    else:
        losses = input - target * (input + eps).log()
    if full:
        safe = _where(target > 1, target, 1.0)
        stirling = safe * safe.log() - safe + (safe * (2 * math.pi)).log() * 0.5
        losses = losses + _where(target > 1, stirling, 0.0)
    return _reduce(losses, reduction)


def gaussian_nll_loss(input: Tensor, target: Tensor, var, full: bool = False, eps: float = 1e-6,
                      reduction: str = "mean") -> Tensor:
    """(log(max(var, eps)) + (input - target)^2 / max(var, eps)) / 2, plus log(2 pi)/2 if full."""
    if not isinstance(var, Tensor):
        var = const(xp.full(tuple(input.shape), float(var), dtype=input._data.dtype))
    if tuple(var.shape) != tuple(input.shape):
        if tuple(input.shape[:-1]) == tuple(var.shape):  # one variance per sample
            var = var.unsqueeze(-1)
        elif not (tuple(input.shape[:-1]) == tuple(var.shape[:-1]) and var.shape[-1] == 1):
            raise ValueError("var is of incorrect size")
    check_reduction(reduction)
    if (var._data < 0).any():
        raise ValueError("var has negative entry/entries")
    from ..autograd.grad_mode import no_grad

    with no_grad():
        floor = _where(var < eps, eps - var, 0.0)
    var = var + floor  # clamp(min=eps) without cutting the gradient, as PyTorch
    d = input - target
    losses = (var.log() + d * d / var) * 0.5
    if full:
        losses = losses + 0.5 * math.log(2 * math.pi)
    return _reduce(losses, reduction)


# ---- in-place forms and aliases ----------------------------------------------------------------


def relu_(input: Tensor) -> Tensor:
    """relu, in place."""
    return input.relu_()


def elu_(input: Tensor, alpha: float = 1.0) -> Tensor:
    """elu, in place."""
    return elu(input, alpha, True)


def selu_(input: Tensor) -> Tensor:
    """selu, in place."""
    return selu(input, True)


def celu_(input: Tensor, alpha: float = 1.0) -> Tensor:
    """celu, in place."""
    return celu(input, alpha, True)


def leaky_relu_(input: Tensor, negative_slope: float = 0.01) -> Tensor:
    """leaky_relu, in place."""
    return leaky_relu(input, negative_slope, True)


def hardtanh_(input: Tensor, min_val: float = -1.0, max_val: float = 1.0) -> Tensor:
    """hardtanh, in place."""
    return hardtanh(input, min_val, max_val, True)


def rrelu_(input: Tensor, lower: float = 1.0 / 8, upper: float = 1.0 / 3,
           training: bool = False) -> Tensor:
    """rrelu, in place."""
    return rrelu(input, lower, upper, training, True)


def threshold_(input: Tensor, threshold: float, value: float) -> Tensor:
    """threshold, in place."""
    return globals()["threshold"](input, threshold, value, True)


def max_pool1d_with_indices(input, kernel_size, stride=None, padding=0, dilation=1,
                            ceil_mode=False, return_indices=True):
    """max_pool1d returning (values, indices)."""
    return max_pool1d(input, kernel_size, stride, padding, dilation, ceil_mode, True)


def max_pool2d_with_indices(input, kernel_size, stride=None, padding=0, dilation=1,
                            ceil_mode=False, return_indices=True):
    """max_pool2d returning (values, indices)."""
    return max_pool2d(input, kernel_size, stride, padding, dilation, ceil_mode, True)


def max_pool3d_with_indices(input, kernel_size, stride=None, padding=0, dilation=1,
                            ceil_mode=False, return_indices=True):
    """max_pool3d returning (values, indices)."""
    return max_pool3d(input, kernel_size, stride, padding, dilation, ceil_mode, True)


def adaptive_max_pool3d(input: Tensor, output_size, return_indices: bool = False):
    """Max pooling of the last three dims to output_size."""
    return _adaptive_max_pool(input, output_size, 3, return_indices, "adaptive_max_pool3d")


def adaptive_max_pool1d_with_indices(input: Tensor, output_size, return_indices: bool = True):
    """adaptive_max_pool1d returning (values, indices)."""
    return adaptive_max_pool1d(input, output_size, True)


def adaptive_max_pool2d_with_indices(input: Tensor, output_size, return_indices: bool = True):
    """adaptive_max_pool2d returning (values, indices)."""
    return adaptive_max_pool2d(input, output_size, True)


def adaptive_max_pool3d_with_indices(input: Tensor, output_size, return_indices: bool = True):
    """adaptive_max_pool3d returning (values, indices)."""
    return adaptive_max_pool3d(input, output_size, True)


# ---- more of the API ---------------------------------------------------------------------------

_ALPHA = 1.7580993408473766  # SELU's scale * alpha: the value dropped units take, negated


def _alpha_dropout(input: Tensor, p: float, training: bool, inplace: bool, feature: bool):
    if p < 0 or p > 1:
        raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")
    if not training or p == 0:
        return input
    if feature and input.ndim < 2:
        raise RuntimeError("Feature dropout requires at least 2 dimensions in the input")
    if p == 1:
        out = input * 0.0
        return input.copy_(out) if inplace else out
    from .._creation import _bernoulli_draws, _layout

    shape = tuple(input.shape[:2]) + (1,) * (input.ndim - 2) if feature else tuple(input.shape)
    # PyTorch's noise: bernoulli_(1 - p) of a tensor laid out as the input (or the features).
    # Under vmap(randomness='different') it is batched, one mask per example.
    order = None if feature else _layout(input._data, dense_only=True)[0]
    keep = _bernoulli_draws(shape, 1.0 - p, input._data.dtype, order)
    # Kept units are scaled by a and shifted, dropped ones set, so that the mean and variance
    # of SELU activations are preserved (PyTorch's alpha dropout).
    a = 1.0 / math.sqrt((_ALPHA * _ALPHA * p + 1) * (1 - p))
    out = input * (keep * a) + ((keep - 1.0) * (_ALPHA * a) + _ALPHA * a * p)
    return input.copy_(out) if inplace else out


def alpha_dropout(input: Tensor, p: float = 0.5, training: bool = False,
                  inplace: bool = False) -> Tensor:
    """Dropout that keeps SELU's self-normalising mean and variance."""
    return _alpha_dropout(input, p, training, inplace, False)


def feature_alpha_dropout(input: Tensor, p: float = 0.5, training: bool = False,
                          inplace: bool = False) -> Tensor:
    """alpha_dropout of whole channels."""
    return _alpha_dropout(input, p, training, inplace, True)


def channel_shuffle(input: Tensor, groups: int) -> Tensor:
    """Interleave the channels of ``groups`` groups: (N, g * k, ...) -> channel order k-major."""
    if input.ndim <= 2:
        raise RuntimeError("channel_shuffle expects input with > 2 dims, but got input with "
                           f"sizes {list(input.shape)}")
    if groups <= 0:
        raise RuntimeError("Number of groups to divide channels in must be positive. Value of "
                           f"groups:{groups}")
    n, c = input.shape[:2]
    if c % groups:
        raise RuntimeError(f"Number of channels must be divisible by groups. Got {c} channels "
                           f"and {groups} groups.")
    rest = tuple(input.shape[2:])
    x = input.reshape(n, groups, c // groups, *rest).transpose(1, 2)
    return x.reshape(n, c, *rest)


def native_channel_shuffle(input: Tensor, groups: int) -> Tensor:
    """channel_shuffle (PyTorch's native kernel form)."""
    return channel_shuffle(input, groups)


def local_response_norm(input: Tensor, size: int, alpha: float = 1e-4, beta: float = 0.75,
                        k: float = 1.0) -> Tensor:
    """x / (k + alpha * mean of x^2 over ``size`` neighbouring channels)^beta."""
    if input.ndim < 3:
        raise ValueError("Expected 3D or higher dimensionality" + " " * 26
                         + f"input (got {input.ndim} dimensions)")
    if input.numel() == 0:
        return input
    c = input.shape[1]
    sq = input * input
    lead = (slice(None),)
    padded = pad(sq.transpose(1, -1), (size // 2, (size - 1) // 2)).transpose(1, -1)
    total = padded[lead + (slice(0, c),)]
    for j in range(1, size):
        total = total + padded[lead + (slice(j, j + c),)]
    div = (total * (alpha / size) + k) ** beta
    return input / div


def _lp_pool(input: Tensor, norm_type: float, kernel_size, stride, ceil_mode: bool, nd: int):
    kernel = ntuple(kernel_size, nd, "lp_pool")
    pool = {1: avg_pool1d, 2: avg_pool2d, 3: avg_pool3d}[nd]
    out = pool(input.pow(norm_type), kernel, stride, 0, ceil_mode)
    return (out.sign() * _relu(out.abs())).mul(math.prod(kernel)).pow(1.0 / norm_type)


def lp_pool1d(input: Tensor, norm_type: float, kernel_size, stride=None,
              ceil_mode: bool = False) -> Tensor:
    """The p-norm over sliding windows of the last dim."""
    return _lp_pool(input, norm_type, kernel_size, stride, ceil_mode, 1)


def lp_pool2d(input: Tensor, norm_type: float, kernel_size, stride=None,
              ceil_mode: bool = False) -> Tensor:
    """The p-norm over sliding 2-D windows."""
    return _lp_pool(input, norm_type, kernel_size, stride, ceil_mode, 2)


def lp_pool3d(input: Tensor, norm_type: float, kernel_size, stride=None,
              ceil_mode: bool = False) -> Tensor:
    """The p-norm over sliding 3-D windows."""
    return _lp_pool(input, norm_type, kernel_size, stride, ceil_mode, 3)


def _max_unpool(input: Tensor, indices: Tensor, kernel_size, stride, padding, output_size,
                nd: int) -> Tensor:
    if input.ndim not in (nd + 1, nd + 2):
        raise RuntimeError(f"Input to max_unpooling{nd}d should be a {nd + 1}d or {nd + 2}d "
                           f"Tensor, but got a tensor with {input.ndim} dimensions.")
    if indices._data.dtype != xp.int64:
        raise RuntimeError("elements in indices should be type int64 but got: "
                           f"{type_name(indices)}")
    if tuple(indices.shape) != tuple(input.shape):
        raise RuntimeError("Expected shape of indices to be same as that of the input tensor "
                           f"({list(input.shape)}) but got indices tensor with shape: "
                           f"{list(indices.shape)}")
    kernel = ntuple(kernel_size, nd, "max_unpool")
    stride = kernel if stride is None else ntuple(stride, nd, "max_unpool")
    padding = ntuple(padding, nd, "max_unpool")
    size = tuple(input.shape[-nd:])
    out = tuple((n - 1) * s - 2 * p + k for n, s, p, k in zip(size, stride, padding, kernel))
    if output_size is not None:
        requested = tuple(int(o) for o in output_size)
        if len(requested) not in (nd, nd + 2):
            raise ValueError(f"output_size should be a sequence containing {nd} or {nd + 2} "
                             f"elements, but it has a length of '{len(requested)}'")
        requested = requested[-nd:]
        for d, (o, default, s) in enumerate(zip(requested, out, stride)):
            if not default - s < o < default + s:
                raise ValueError(f'invalid output_size "{tuple(output_size)}" (dim {d} must be '
                                 f"between {default - s} and {default + s})")
        out = requested
    found = _batching.physical(indices)
    if found.size and (found.min() < 0 or found.max() >= math.prod(out)):
        bad = found.max() if found.max() >= math.prod(out) else found.min()
        raise RuntimeError(f"Found an invalid max index: {bad} (output volumes are of size "
                           f"{'x'.join(map(str, out))})")
    # Scattering the values to their indices is max pooling's gradient: the same record.
    return apply(MAX_POOL_BACKWARD, input, indices, input_size=out, disjoint=True)


def max_unpool1d(input, indices, kernel_size, stride=None, padding=0, output_size=None):
    """The inverse of max_pool1d: values put back at their indices, zeros elsewhere."""
    return _max_unpool(input, indices, kernel_size, stride, padding, output_size, 1)


def max_unpool2d(input, indices, kernel_size, stride=None, padding=0, output_size=None):
    """The inverse of max_pool2d: values put back at their indices, zeros elsewhere."""
    return _max_unpool(input, indices, kernel_size, stride, padding, output_size, 2)


def max_unpool3d(input, indices, kernel_size, stride=None, padding=0, output_size=None):
    """The inverse of max_pool3d: values put back at their indices, zeros elsewhere."""
    return _max_unpool(input, indices, kernel_size, stride, padding, output_size, 3)


def fractional_max_pool2d(input: Tensor, kernel_size, output_size=None, output_ratio=None,
                          return_indices: bool = False, _random_samples=None):
    """Max over pseudorandom, overlapping 2-D windows that shrink the input to output_size
    (or by output_ratio)."""
    return fractional_max_pool(input, kernel_size, output_size, output_ratio, return_indices,
                               _random_samples, 2)


def fractional_max_pool3d(input: Tensor, kernel_size, output_size=None, output_ratio=None,
                          return_indices: bool = False, _random_samples=None):
    """Max over pseudorandom, overlapping 3-D windows that shrink the input to output_size
    (or by output_ratio)."""
    return fractional_max_pool(input, kernel_size, output_size, output_ratio, return_indices,
                               _random_samples, 3)


def fractional_max_pool2d_with_indices(input: Tensor, kernel_size, output_size=None,
                                       output_ratio=None, return_indices: bool = False,
                                       _random_samples=None):
    """fractional_max_pool2d returning (values, indices)."""
    return fractional_max_pool(input, kernel_size, output_size, output_ratio, True,
                               _random_samples, 2)


def fractional_max_pool3d_with_indices(input: Tensor, kernel_size, output_size=None,
                                       output_ratio=None, return_indices: bool = False,
                                       _random_samples=None):
    """fractional_max_pool3d returning (values, indices)."""
    return fractional_max_pool(input, kernel_size, output_size, output_ratio, True,
                               _random_samples, 3)


def conv_tbc(input: Tensor, weight: Tensor, bias: Tensor, pad: int = 0) -> Tensor:
    """1-D convolution of (time, batch, channels) input with a (kernel, in, out) weight."""
    if input.ndim != 3:
        raise RuntimeError("Input must have 3 dims: time, batch, in_channel")
    if weight.ndim != 3:
        raise RuntimeError("Weight tensor must have 3 dims: kernel_width, in_channels, "
                           "out_channels.")
    if bias.ndim != 1:
        raise RuntimeError("Bias must be 1-D")
    if input.shape[2] != weight.shape[1]:
        raise RuntimeError("Input dim 2 (input channels) is not == dim 1 in the weight tensor")
    if weight.shape[2] != bias.shape[0]:
        raise RuntimeError("Bias size must equal dim 2 in the weight tensor (output channels).")
    out = conv1d(input.permute(1, 2, 0), weight.permute(2, 1, 0), bias, padding=pad)
    return out.permute(2, 0, 1)


def linear_cross_entropy(input: Tensor, linear_weight: Tensor, target: Tensor, *,
                         linear_bias=None, weight=None, reduction: str = "mean",
                         ignore_index=None, label_smoothing: float = 0.0,
                         options=None) -> Tensor:
    """cross_entropy(linear(input, linear_weight, linear_bias), target); linear_weight may be
    (C, d_1, ..., d_K, in_features) for a K-dimensional loss. ``options`` (chunking) are
    accepted; the logits are always computed whole."""
    if input.ndim not in (1, 2):
        raise RuntimeError(f"expected input with dimensionality 1 or 2, got {input.ndim}")
    classes = tuple(linear_weight.shape[:-1])
    logits = linear(input, linear_weight.reshape(-1, linear_weight.shape[-1]))
    logits = logits.reshape(tuple(input.shape[:-1]) + classes)
    if linear_bias is not None:
        logits = logits + linear_bias
    return _loss.cross_entropy(logits, target, weight,
                               -100 if ignore_index is None else ignore_index, reduction,
                               label_smoothing)


def _additive(mask, dtype):
    """An attention mask as a float to add to the scores (True: masked out, -inf)."""
    if mask is None or mask._data.dtype.kind in "fV":
        return mask
    return _where(mask, const(xp.array(-math.inf, dtype=dtype)), const(xp.zeros((), dtype)))


def _with_free_key(mask):
    """The mask with one more key position at the end, not masked."""
    return None if mask is None else pad(mask, (0, 1))


def multi_head_attention_forward(
        query: Tensor, key: Tensor, value: Tensor, embed_dim_to_check: int, num_heads: int,
        in_proj_weight, in_proj_bias, bias_k, bias_v, add_zero_attn: bool, dropout_p: float,
        out_proj_weight: Tensor, out_proj_bias, training: bool = True, key_padding_mask=None,
        need_weights: bool = True, attn_mask=None, use_separate_proj_weight: bool = False,
        q_proj_weight=None, k_proj_weight=None, v_proj_weight=None, static_k=None,
        static_v=None, average_attn_weights: bool = True, is_causal: bool = False):
    """Multi-head attention of (L, N, E) or (L, E) query over key/value, as MultiheadAttention
    computes it from these weights: (output, weights or None)."""
    if is_causal and attn_mask is None:
        raise RuntimeError("Need attn_mask if specifying the is_causal hint. You may use the "
                           "Transformer module method `generate_square_subsequent_mask` to "
                           "create this mask.")
    batched = query.ndim == 3
    if not batched:
        query, key, value = query.unsqueeze(1), key.unsqueeze(1), value.unsqueeze(1)
        if key_padding_mask is not None:
            key_padding_mask = key_padding_mask.unsqueeze(0)
    tgt_len, bsz, embed_dim = query.shape
    if embed_dim != embed_dim_to_check:
        raise AssertionError(f"was expecting embedding dimension of {embed_dim_to_check}, but "
                             f"got {embed_dim}")
    head_dim = embed_dim // num_heads
    if head_dim * num_heads != embed_dim:
        raise AssertionError(f"embed_dim {embed_dim} not divisible by num_heads {num_heads}")
    e = embed_dim
    biases = (None,) * 3 if in_proj_bias is None else (
        in_proj_bias[:e], in_proj_bias[e:2 * e], in_proj_bias[2 * e:])
    if use_separate_proj_weight:
        weights = (q_proj_weight, k_proj_weight, v_proj_weight)
    else:
        weights = (in_proj_weight[:e], in_proj_weight[e:2 * e], in_proj_weight[2 * e:])
    q = linear(query, weights[0], biases[0])
    k = linear(key, weights[1], biases[1])
    v = linear(value, weights[2], biases[2])
    if (attn_mask is not None and key_padding_mask is not None
            and attn_mask._data.dtype != key_padding_mask._data.dtype):
        warnings.warn("Support for mismatched key_padding_mask and attn_mask is deprecated. Use "
                      "same type for both instead.", stacklevel=2)
    attn_mask = _additive(attn_mask, q._data.dtype)
    key_padding_mask = _additive(key_padding_mask, q._data.dtype)
    if attn_mask is not None and attn_mask.ndim == 2:
        attn_mask = attn_mask.unsqueeze(0)
    if bias_k is not None and bias_v is not None:
        k = _cat([k, bias_k.expand(1, bsz, e)], 0)
        v = _cat([v, bias_v.expand(1, bsz, e)], 0)
        attn_mask, key_padding_mask = _with_free_key(attn_mask), _with_free_key(key_padding_mask)
    # (L, N, E) -> (N * heads, L, head_dim); static keys and values come in that shape.
    q = q.reshape(tgt_len, bsz * num_heads, head_dim).transpose(0, 1)
    k = static_k if static_k is not None else k.reshape(
        k.shape[0], bsz * num_heads, head_dim).transpose(0, 1)
    v = static_v if static_v is not None else v.reshape(
        v.shape[0], bsz * num_heads, head_dim).transpose(0, 1)
    if add_zero_attn:
        k = pad(k, (0, 0, 0, 1))
        v = pad(v, (0, 0, 0, 1))
        attn_mask, key_padding_mask = _with_free_key(attn_mask), _with_free_key(key_padding_mask)
    src_len = k.shape[1]
    scores = (q * (1.0 / math.sqrt(head_dim))).matmul(k.transpose(1, 2))
    if key_padding_mask is not None:
        scores = (scores.reshape(bsz, num_heads, tgt_len, src_len)
                  + key_padding_mask.reshape(bsz, 1, 1, src_len)).reshape(
            bsz * num_heads, tgt_len, src_len)
    if attn_mask is not None:
        scores = scores + attn_mask
    attention = softmax(scores, -1)
    if dropout_p > 0.0:
        attention = dropout(attention, dropout_p, training)
    out = attention.matmul(v).transpose(0, 1).reshape(tgt_len * bsz, e)
    out = linear(out, out_proj_weight, out_proj_bias).reshape(tgt_len, bsz, e)
    if not batched:
        out = out.squeeze(1)
    if not need_weights:
        return out, None
    attention = attention.reshape(bsz, num_heads, tgt_len, src_len)
    if average_attn_weights:
        attention = attention.mean(1)
    return out, (attention if batched else attention.squeeze(0))


def pdist(input: Tensor, p: float = 2) -> Tensor:
    """The p-norm distances between all pairs of rows i < j, in row-major order."""
    if input.ndim != 2:
        raise RuntimeError(f"pdist only supports 2D tensors, got: {input.ndim}D")
    i, j = xp.triu_indices(input.shape[0], 1)
    return vector_norm(input[i] - input[j], p, 1)


def triplet_margin_with_distance_loss(anchor: Tensor, positive: Tensor, negative: Tensor, *,
                                      distance_function=None, margin: float = 1.0,
                                      swap: bool = False, reduction: str = "mean") -> Tensor:
    """max(d(a, p) - d(a, n) + margin, 0) for any distance function d."""
    check_reduction(reduction)
    if margin <= 0:
        raise ValueError(f"margin must be greater than 0, got {margin}")
    if not anchor.ndim == positive.ndim == negative.ndim:
        raise RuntimeError("The anchor, positive, and negative tensors are expected to have the "
                           "same number of dimensions, but got: anchor "
                           f"{anchor.ndim}D, positive {positive.ndim}D, and negative "
                           f"{negative.ndim}D inputs")
    distance = pairwise_distance if distance_function is None else distance_function
    d_ap = distance(anchor, positive)
    d_an = distance(anchor, negative)
    if swap:
        d_pn = distance(positive, negative)
        d_an = _where(d_pn < d_an, d_pn, d_an)
    return _reduce((d_ap - d_an + margin).clamp(min=0), reduction)


def gumbel_softmax(logits: Tensor, tau: float = 1, hard: bool = False, eps: float = 1e-10,
                   dim: int = -1) -> Tensor:
    """softmax((logits + Gumbel noise) / tau); with hard, one-hot forward and soft gradient."""
    from .._creation import empty_like
    from .._dtypes import contiguous_format

    # PyTorch's noise: -log of exponential_() draws into a contiguous tensor like logits (under
    # vmap(randomness='different') batched, its own per example)
    gumbels = -empty_like(logits, memory_format=contiguous_format).exponential_().log()
    soft = _activation.softmax((logits + gumbels) / tau, dim)
    if not hard:
        return soft
    index = soft.detach().argmax(dim, keepdim=True)
    classes = const(xp.arange(soft.shape[dim]).reshape(
        (-1,) + (1,) * (soft.ndim - 1 - dim % soft.ndim)))
    return (index == classes).to(soft.dtype) - soft.detach() + soft


def assert_int_or_pair(arg, arg_name: str, message: str) -> None:
    """Raise AssertionError(message.format(arg_name)) unless arg is an int or a pair."""
    if not (isinstance(arg, int) or len(arg) == 2):
        raise AssertionError(message.format(arg_name))
