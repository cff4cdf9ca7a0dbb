"""The neural-network kernels PyTorch also exposes as ``torch.<name>``: thin wrappers over
chainrule.nn.functional with the top-level signatures (losses take ``reduction`` as PyTorch's
integer enum: 0 none, 1 mean, 2 sum, and default to 0 as PyTorch 2.13's do in practice, whatever
their schema says; the native_* kernels return their saved statistics)."""

from __future__ import annotations

from . import linalg as _linalg
from ._backend import as_dtype, xp
from .nn import functional as F
from .nn.modules.rnn import _gru_step, _input_projection, _lstm_step, _rnn_step
from .ops import reduction as _reduction
from .ops import shape as _shape
from .tensor import Tensor

__all__ = [
    "hardshrink", "threshold", "rrelu", "pixel_shuffle", "pixel_unshuffle", "rms_norm",
    "instance_norm", "kl_div", "margin_ranking_loss", "hinge_embedding_loss",
    "cosine_embedding_loss", "triplet_margin_loss", "poisson_nll_loss",
    "binary_cross_entropy_with_logits", "pdist", "constant_pad_nd", "convolution",
    "adaptive_max_pool1d", "max_pool1d_with_indices", "native_layer_norm", "native_batch_norm",
    "native_group_norm", "native_dropout", "native_channel_shuffle",
    "feature_dropout", "norm_except_dim", "frobenius_norm", "channel_shuffle", "alpha_dropout",
    "feature_alpha_dropout", "rnn_tanh_cell", "rnn_relu_cell", "lstm_cell", "gru_cell",
    "rnn_tanh", "rnn_relu", "lstm", "gru",
]

_REDUCTIONS = {0: "none", 1: "mean", 2: "sum"}


def _reduction_name(reduction: int) -> str:
    if reduction not in _REDUCTIONS:
        raise ValueError(f"{reduction} is not a valid value for reduction")
    return _REDUCTIONS[reduction]


def hardshrink(input: Tensor, lambd: float = 0.5) -> Tensor:
    """input where |input| > lambd, else 0."""
    return F.hardshrink(input, lambd)


def threshold(input: Tensor, threshold: float, value: float) -> Tensor:
    """input where input > threshold, else value."""
    return F.threshold(input, threshold, value)


def rrelu(input: Tensor, lower: float = 1.0 / 8, upper: float = 1.0 / 3, training: bool = False,
          generator=None) -> Tensor:
    """Randomized leaky ReLU (the mean slope when not training)."""
    return F.rrelu(input, lower, upper, training)


def pixel_shuffle(input: Tensor, upscale_factor: int) -> Tensor:
    """(*, C r^2, H, W) rearranged to (*, C, H r, W r)."""
    return F.pixel_shuffle(input, upscale_factor)


def pixel_unshuffle(input: Tensor, downscale_factor: int) -> Tensor:
    """(*, C, H r, W r) rearranged to (*, C r^2, H, W)."""
    return F.pixel_unshuffle(input, downscale_factor)


def rms_norm(input: Tensor, normalized_shape, weight=None, eps=None) -> Tensor:
    """Root-mean-square normalization over the last dims."""
    return F.rms_norm(input, normalized_shape, weight, eps)


def instance_norm(input: Tensor, weight, bias, running_mean, running_var, use_input_stats: bool,
                  momentum: float, eps: float, cudnn_enabled: bool) -> Tensor:
    """Normalization of each channel of each example (ATen's argument order)."""
    return F.instance_norm(input, running_mean, running_var, weight, bias, use_input_stats,
                           momentum, eps)


def kl_div(input: Tensor, target: Tensor, reduction: int = 0, *,
           log_target: bool = False) -> Tensor:
    """The Kullback-Leibler divergence loss (``reduction`` 1: the mean of all elements)."""
    return F.kl_div(input, target, reduction=_reduction_name(reduction), log_target=log_target)


def margin_ranking_loss(input1: Tensor, input2: Tensor, target: Tensor, margin: float = 0.0,
                        reduction: int = 0) -> Tensor:
    """max(0, -target * (input1 - input2) + margin), reduced."""
    return F.margin_ranking_loss(input1, input2, target, margin,
                                 reduction=_reduction_name(reduction))


def hinge_embedding_loss(input: Tensor, target: Tensor, margin: float = 1.0,
                         reduction: int = 0) -> Tensor:
    """input where target is 1, max(0, margin - input) where it is -1, reduced."""
    return F.hinge_embedding_loss(input, target, margin, reduction=_reduction_name(reduction))


def cosine_embedding_loss(input1: Tensor, input2: Tensor, target: Tensor, margin: float = 0.0,
                          reduction: int = 0) -> Tensor:
    """1 - cos where target is 1, max(0, cos - margin) where it is -1, reduced."""
    return F.cosine_embedding_loss(input1, input2, target, margin,
                                   reduction=_reduction_name(reduction))


def triplet_margin_loss(anchor: Tensor, positive: Tensor, negative: Tensor, margin: float = 1.0,
                        p: float = 2.0, eps: float = 1e-6, swap: bool = False,
                        reduction: int = 0) -> Tensor:
    """max(d(anchor, positive) - d(anchor, negative) + margin, 0), reduced."""
    return F.triplet_margin_loss(anchor, positive, negative, margin, p, eps, swap,
                                 reduction=_reduction_name(reduction))


def poisson_nll_loss(input: Tensor, target: Tensor, log_input: bool, full: bool, eps: float,
                     reduction: int) -> Tensor:
    """The Poisson negative log likelihood, reduced."""
    return F.poisson_nll_loss(input, target, log_input, full, eps=eps,
                              reduction=_reduction_name(reduction))


def binary_cross_entropy_with_logits(input: Tensor, target: Tensor, weight=None, pos_weight=None,
                                     reduction: int = 0) -> Tensor:
    """Binary cross entropy of sigmoid(input), reduced."""
    return F.binary_cross_entropy_with_logits(input, target, weight,
                                              reduction=_reduction_name(reduction),
                                              pos_weight=pos_weight)


def pdist(input: Tensor, p: float = 2.0) -> Tensor:
    """The p-norm distances between the rows of input (upper triangle, row by row)."""
    return F.pdist(input, p)


def constant_pad_nd(input: Tensor, pad, value=0) -> Tensor:
    """input padded with ``value`` (pad: before/after pairs from the last dim)."""
    return F.pad(input, tuple(pad), "constant", value)


def convolution(input: Tensor, weight: Tensor, bias, stride, padding, dilation, transposed: bool,
                output_padding, groups: int) -> Tensor:
    """The 1-, 2- or 3-d convolution (or transposed convolution) that weight's rank gives."""
    n = weight.dim() - 2
    if n not in (1, 2, 3):
        raise RuntimeError(f"convolution: expected a 3-, 4- or 5-D weight, got {weight.dim()}-D")
    if transposed:
        conv = (F.conv_transpose1d, F.conv_transpose2d, F.conv_transpose3d)[n - 1]
        return conv(input, weight, bias, tuple(stride), tuple(padding), tuple(output_padding),
                    groups, tuple(dilation))
    conv = (F.conv1d, F.conv2d, F.conv3d)[n - 1]
    return conv(input, weight, bias, tuple(stride), tuple(padding), tuple(dilation), groups)


def adaptive_max_pool1d(input: Tensor, output_size) -> tuple:
    """(values, indices) of the adaptive max pooling over the last dim."""
    return F.adaptive_max_pool1d(input, output_size, return_indices=True)


def max_pool1d_with_indices(input: Tensor, kernel_size, stride=(), padding=0, dilation=1,
                            ceil_mode: bool = False) -> tuple:
    """(values, indices) of the max pooling over the last dim."""
    return F.max_pool1d(input, kernel_size, stride or None, padding, dilation,
                        ceil_mode=ceil_mode, return_indices=True)


def _moments(input: Tensor, dims: tuple, eps: float) -> tuple:
    """The mean and 1 / sqrt(biased variance + eps) over ``dims``, kept, outside the graph
    (layer and batch norm's, as PyTorch's; group norm's are differentiable)."""
    x = input.detach()
    mean = x.mean(dims, keepdim=True)
    var = x.var(dims, correction=0, keepdim=True)
    return mean, (var + eps).rsqrt()


def native_layer_norm(input: Tensor, normalized_shape, weight, bias, eps: float) -> tuple:
    """(layer_norm(...), the mean, the reciprocal standard deviation) over the last dims."""
    dims = tuple(range(input.dim() - len(normalized_shape), input.dim()))
    mean, rstd = _moments(input, dims, eps)
    return F.layer_norm(input, normalized_shape, weight, bias, eps), mean, rstd


def native_batch_norm(input: Tensor, weight, bias, running_mean, running_var, training: bool,
                      momentum: float, eps: float) -> tuple:
    """(batch_norm(...), the batch mean, its reciprocal standard deviation) per channel (empty
    when not training)."""
    dims = (0,) + tuple(range(2, input.dim()))
    if training:
        mean, rstd = _moments(input, dims, eps)
        mean, rstd = mean.reshape(-1), rstd.reshape(-1)
    else:
        mean = rstd = input.new_zeros((0,))
    out = F.batch_norm(input, running_mean, running_var, weight, bias, training, momentum, eps)
    return out, mean, rstd


def native_group_norm(input: Tensor, weight, bias, N: int, C: int, HxW: int, group: int,
                      eps: float) -> tuple:
    """(group_norm(...), the mean, the reciprocal standard deviation) per example and group."""
    grouped = input.reshape(N, group, -1)
    mean = grouped.mean(2)
    rstd = (grouped.var(2, correction=0) + eps).rsqrt()
    out = F.group_norm(input, group, weight, bias, eps)
    return out, mean, rstd


def native_dropout(input: Tensor, p: float, train) -> tuple:
    """(dropout(input), the mask of the kept elements)."""
    if train is False:
        return input.clone(), input.new_ones(tuple(input.shape), dtype=as_dtype("bool"))
    if p >= 1:
        return input * 0, input.new_zeros(tuple(input.shape), dtype=as_dtype("bool"))
    keep = F.dropout(input.new_ones(tuple(input.shape)), p, True)
    mask = keep != 0
    return input * keep, mask


def native_channel_shuffle(input: Tensor, groups: int) -> Tensor:
    """The channels interleaved across ``groups`` groups."""
    return F.channel_shuffle(input, groups)


def feature_dropout(input: Tensor, p: float, train: bool) -> Tensor:
    """Whole channels zeroed with probability p (the rest scaled by 1 / (1 - p))."""
    if not train or p == 0:
        return input
    mask_shape = tuple(input.shape[:2]) + (1,) * (input.dim() - 2)
    keep = F.dropout(input.new_ones(mask_shape), p, True)
    return input * keep


def norm_except_dim(v: Tensor, pow: int = 2, dim: int = 0) -> Tensor:
    """The ``pow``-norm over every dim but ``dim`` (kept as size-1 dims); of all if dim is -1."""
    if dim == -1:
        return _reduction.vector_norm(v, pow)
    others = tuple(d for d in range(v.dim()) if d != dim % max(v.dim(), 1))
    return _reduction.vector_norm(v, pow, others, True)


def frobenius_norm(input: Tensor, dim, keepdim: bool = False) -> Tensor:
    """sqrt of the sum of squares over ``dim``."""
    return _reduction.vector_norm(input, 2, dim, keepdim)


def channel_shuffle(input: Tensor, groups: int) -> Tensor:
    """The channels interleaved across ``groups`` groups."""
    return F.channel_shuffle(input, groups)


def alpha_dropout(input: Tensor, p: float, train: bool) -> Tensor:
    """Dropout that keeps the self-normalizing mean and variance (SELU networks)."""
    return F.alpha_dropout(input, p, train)


def feature_alpha_dropout(input: Tensor, p: float, train: bool) -> Tensor:
    """alpha_dropout of whole channels."""
    return F.feature_alpha_dropout(input, p, train)


# ---- recurrent kernels: the step math of chainrule.nn.rnn over explicit weights ----------------


def rnn_tanh_cell(input: Tensor, hx: Tensor, w_ih: Tensor, w_hh: Tensor, b_ih=None,
                  b_hh=None) -> Tensor:
    """One Elman RNN step: tanh(input w_ihᵀ + b_ih + hx w_hhᵀ + b_hh)."""
    return _rnn_step(_input_projection(input, w_ih, b_ih), hx, w_hh, b_hh, "tanh")


def rnn_relu_cell(input: Tensor, hx: Tensor, w_ih: Tensor, w_hh: Tensor, b_ih=None,
                  b_hh=None) -> Tensor:
    """One Elman RNN step with relu: relu(input w_ihᵀ + b_ih + hx w_hhᵀ + b_hh)."""
    return _rnn_step(_input_projection(input, w_ih, b_ih), hx, w_hh, b_hh, "relu")


def lstm_cell(input: Tensor, hx, w_ih: Tensor, w_hh: Tensor, b_ih=None,
              b_hh=None) -> tuple[Tensor, Tensor]:
    """One LSTM step; hx is (h, c), returns the new (h, c)."""
    h, c = hx
    return _lstm_step(_input_projection(input, w_ih, b_ih), h, c, w_hh, b_hh)


def gru_cell(input: Tensor, hx: Tensor, w_ih: Tensor, w_hh: Tensor, b_ih=None,
             b_hh=None) -> Tensor:
    """One GRU step."""
    return _gru_step(_input_projection(input, w_ih, b_ih), hx, w_hh, b_hh)


def _recurrent(mode: str, input, hx, params, has_biases, num_layers, dropout, train,
               bidirectional, batch_first, data, batch_sizes) -> tuple:
    """The multi-layer recurrence over flat weights, padded (input, hx, params, has_biases,
    num_layers, dropout, train, bidirectional, batch_first) or packed (data, batch_sizes, hx,
    params, has_biases, num_layers, dropout, train, bidirectional), by position or keyword."""
    if data is None and isinstance(hx, Tensor) and hx.dim() == 1:  # packed, by position
        data, batch_sizes, hx, params, has_biases, num_layers, dropout, train, bidirectional = (
            input, hx, params, has_biases, num_layers, dropout, train, bidirectional,
            batch_first)
        batch_first = False
    if data is not None:
        x, sizes = data, [int(b) for b in batch_sizes.tolist()]
    else:
        x, sizes = (input.transpose(0, 1) if batch_first else input), None
    given = (x, hx, params, has_biases, num_layers, dropout, train, bidirectional)
    if any(a is None for a in given) or (sizes is None and batch_first is None):
        raise TypeError(f"{mode}() missing required arguments: (input, hx, params, has_biases, "
                        "num_layers, dropout, train, bidirectional, batch_first) or (data, "
                        "batch_sizes, hx, params, has_biases, num_layers, dropout, train, "
                        "bidirectional)")
    states = [hx] if isinstance(hx, Tensor) else list(hx)
    directions = 2 if bidirectional else 1
    per = len(params) // (num_layers * directions)
    join = _shape.stack if sizes is None else _shape.cat
    finals: list[list[Tensor]] = [[] for _ in states]
    for layer in range(num_layers):
        if layer > 0 and dropout > 0 and train:
            x = F.dropout(x, dropout, True)
        outs = []
        for direction in range(directions):
            k = layer * directions + direction
            w = list(params[k * per:(k + 1) * per])
            w_ih, w_hh = w[0], w[1]
            b_ih, b_hh = (w[2], w[3]) if has_biases else (None, None)
            w_hr = w[4 if has_biases else 2] if len(w) > 2 + 2 * has_biases else None
            out, last = _run_direction(mode, _input_projection(x, w_ih, b_ih),
                                       [s[k] for s in states], w_hh, b_hh, w_hr,
                                       direction == 1, sizes)
            outs.append(join(out, 0))
            for final, s in zip(finals, last):
                final.append(s)
        x = outs[0] if directions == 1 else _shape.cat(outs, -1)
    if sizes is None and batch_first:
        x = x.transpose(0, 1)
    return (x, *(_shape.stack(f, 0) for f in finals))


def _run_direction(mode: str, gi: Tensor, states: list, w_hh, b_hh, w_hr, reverse: bool,
                   sizes) -> tuple[list, list]:
    """One layer in one direction; packed, only a step's first ``sizes[t]`` states advance."""
    steps = gi.unbind(0) if sizes is None else gi.split(sizes)
    outputs = []
    for step in reversed(steps) if reverse else steps:
        n = step.shape[0]
        current = states if n == states[0].shape[0] else [s[:n] for s in states]
        if mode == "lstm":
            new = list(_lstm_step(step, current[0], current[1], w_hh, b_hh, w_hr))
        elif mode == "gru":
            new = [_gru_step(step, current[0], w_hh, b_hh)]
        else:
            new = [_rnn_step(step, current[0], w_hh, b_hh, mode[4:])]
        states = new if n == states[0].shape[0] else [
            _shape.cat([a, s[n:]]) for a, s in zip(new, states)]
        outputs.append(states[0][:n])
    if reverse:
        outputs.reverse()
    return outputs, states


def rnn_tanh(input=None, hx=None, params=None, has_biases=None, num_layers=None,
             dropout=None, train=None, bidirectional=None, batch_first=None, *, data=None,
             batch_sizes=None) -> tuple[Tensor, Tensor]:
    """(output, h_n) of a multi-layer tanh RNN over flat weights (see _recurrent)."""
    return _recurrent("rnn_tanh", input, hx, params, has_biases, num_layers, dropout, train,
                      bidirectional, batch_first, data, batch_sizes)


def rnn_relu(input=None, hx=None, params=None, has_biases=None, num_layers=None,
             dropout=None, train=None, bidirectional=None, batch_first=None, *, data=None,
             batch_sizes=None) -> tuple[Tensor, Tensor]:
    """(output, h_n) of a multi-layer relu RNN over flat weights."""
    return _recurrent("rnn_relu", input, hx, params, has_biases, num_layers, dropout, train,
                      bidirectional, batch_first, data, batch_sizes)


def lstm(input=None, hx=None, params=None, has_biases=None, num_layers=None, dropout=None,
         train=None, bidirectional=None, batch_first=None, *, data=None,
         batch_sizes=None) -> tuple[Tensor, Tensor, Tensor]:
    """(output, h_n, c_n) of a multi-layer LSTM over flat weights; hx is (h_0, c_0)."""
    return _recurrent("lstm", input, hx, params, has_biases, num_layers, dropout, train,
                      bidirectional, batch_first, data, batch_sizes)


def gru(input=None, hx=None, params=None, has_biases=None, num_layers=None, dropout=None,
        train=None, bidirectional=None, batch_first=None, *, data=None,
        batch_sizes=None) -> tuple[Tensor, Tensor]:
    """(output, h_n) of a multi-layer GRU over flat weights."""
    return _recurrent("gru", input, hx, params, has_biases, num_layers, dropout, train,
                      bidirectional, batch_first, data, batch_sizes)


# ---- the ATen forms of ctc_loss, embedding_bag, grid sampling and conv_tbc ----------------------
__all__ += ["ctc_loss", "embedding_bag", "grid_sampler", "grid_sampler_2d", "grid_sampler_3d",
            "affine_grid_generator", "conv_tbc"]

_INTERPOLATION = {0: "bilinear", 1: "nearest", 2: "bicubic"}
_PADDING = {0: "zeros", 1: "border", 2: "reflection"}


def ctc_loss(log_probs: Tensor, targets: Tensor, input_lengths, target_lengths, blank: int = 0,
             reduction: int = 0, zero_infinity: bool = False) -> Tensor:
    """The connectionist temporal classification loss (``reduction`` as an int)."""
    return F.ctc_loss(log_probs, targets, input_lengths, target_lengths, blank,
                      _reduction_name(reduction), zero_infinity)


def _ints(array, like: Tensor) -> Tensor:
    return Tensor._wrap(array.astype(like.dtype.np), None, 0)


def embedding_bag(weight: Tensor, indices: Tensor, offsets: Tensor,
                  scale_grad_by_freq: bool = False, mode: int = 0, sparse: bool = False,
                  per_sample_weights=None, include_last_offset: bool = False,
                  padding_idx=None) -> tuple[Tensor, Tensor, Tensor, Tensor]:
    """(output, offset2bag, bag_size, max_indices) of bags of embeddings (mode 0 sum, 1 mean,
    2 max; the sum mode leaves the last three empty or zero, as PyTorch's CPU kernel does: no
    offset2bag either for reduced-precision weights without padding_idx)."""
    if mode not in (0, 1, 2):
        raise ValueError(f"{mode} is not a valid embedding_bag mode")
    output = F.embedding_bag(indices, weight, offsets, None, 2, scale_grad_by_freq,
                             ("sum", "mean", "max")[mode], sparse, per_sample_weights,
                             include_last_offset, padding_idx)
    idx = indices.detach().numpy().reshape(-1)
    starts = [int(o) for o in offsets.detach().numpy().reshape(-1)]
    if include_last_offset:
        starts = starts[:-1]
    bags = len(starts)
    bag_of = xp.zeros(idx.size, dtype=xp.int64)
    for b, s in enumerate(starts):
        bag_of[s:] = b
    pad = None if padding_idx is None else padding_idx % weight.shape[0]
    kept = idx != pad
    sizes = xp.bincount(bag_of[kept], minlength=bags)[:bags].astype(xp.int64)
    zeros = xp.zeros(bags, dtype=xp.int64)
    if mode == 0:
        fast = pad is None and weight.dtype.np.itemsize < 8 and weight.is_floating_point()
        offset2bag = xp.zeros(0, dtype=xp.int64) if fast else bag_of
        return output, _ints(offset2bag, indices), _ints(zeros, indices), _ints(zeros, indices)
    if mode == 1:
        return output, _ints(bag_of, indices), _ints(sizes, indices), _ints(sizes, indices)
    table = weight.detach().numpy()
    argmax = xp.zeros((bags, weight.shape[1]), dtype=xp.int64)
    for b in range(bags):
        rows = idx[(bag_of == b) & kept]
        if rows.size:
            argmax[b] = rows[xp.argmax(table[rows], axis=0)]
    return output, _ints(bag_of, indices), _ints(sizes, indices), _ints(argmax, indices)


def grid_sampler(input: Tensor, grid: Tensor, interpolation_mode: int, padding_mode: int,
                 align_corners: bool) -> Tensor:
    """Samples input at grid (modes as ints: 0 bilinear, 1 nearest, 2 bicubic; padding 0 zeros,
    1 border, 2 reflection)."""
    if interpolation_mode not in _INTERPOLATION or padding_mode not in _PADDING:
        raise ValueError(f"grid_sampler(): invalid mode {interpolation_mode} or padding mode "
                         f"{padding_mode}")
    return F.grid_sample(input, grid, _INTERPOLATION[interpolation_mode], _PADDING[padding_mode],
                         align_corners)


def _grid_sampler_nd(input: Tensor, grid: Tensor, ndim: int, args: tuple) -> Tensor:
    if input.dim() != ndim or grid.dim() != ndim:
        raise RuntimeError(
            f"grid_sampler(): expected {ndim}D input and grid with same number of dimensions, "
            f"but got input with sizes {list(input.shape)} and grid with sizes "
            f"{list(grid.shape)}")
    return grid_sampler(input, grid, *args)


def grid_sampler_2d(input: Tensor, grid: Tensor, interpolation_mode: int, padding_mode: int,
                    align_corners: bool) -> Tensor:
    """grid_sampler on (N, C, H, W) input."""
    return _grid_sampler_nd(input, grid, 4, (interpolation_mode, padding_mode, align_corners))


def grid_sampler_3d(input: Tensor, grid: Tensor, interpolation_mode: int, padding_mode: int,
                    align_corners: bool) -> Tensor:
    """grid_sampler on (N, C, D, H, W) input."""
    return _grid_sampler_nd(input, grid, 5, (interpolation_mode, padding_mode, align_corners))


def affine_grid_generator(theta: Tensor, size, align_corners: bool) -> Tensor:
    """The sampling grid of the affine maps theta for an output of the given size."""
    return F.affine_grid(theta, size, align_corners)


def conv_tbc(input: Tensor, weight: Tensor, bias: Tensor, pad: int = 0) -> Tensor:
    """1-D convolution of (time, batch, channels) input."""
    return F.conv_tbc(input, weight, bias, pad)


__all__ += ["nuclear_norm"]


def nuclear_norm(input: Tensor, dim=None, keepdim: bool = False, *, out=None) -> Tensor:
    """The sum of the singular values over ``dim`` (default the last two), as
    linalg.matrix_norm(input, 'nuc', dim, keepdim)."""
    if isinstance(dim, bool):  # the (input, keepdim) overload
        dim, keepdim = None, dim
    dims = (-2, -1) if dim is None else tuple(dim)
    if len(dims) != 2:
        raise RuntimeError(f"linalg.matrix_norm: dim must be a 2-tuple. Got "
                           f"{' '.join(str(d) for d in dims)}")
    result = _linalg.matrix_norm(input, "nuc", dims, keepdim)
    return result if out is None else out.resize_(result.shape).copy_(result)


__all__ += ["segment_reduce"]
_SEGMENT_REDUCTIONS = {"sum": "sum", "prod": "prod", "mean": "mean", "max": "amax",
                       "amax": "amax", "min": "amin", "amin": "amin"}


def _segment(seg: Tensor, reduce: str, initial) -> Tensor:
    """One segment (its elements along dim 0) reduced, with ``initial`` as PyTorch folds it in."""
    n, fill = seg.shape[0], {"sum": 0.0, "prod": 1.0, "mean": float("nan"),
                             "amax": float("-inf"), "amin": float("inf")}[reduce]
    if n == 0:
        return seg.new_full(tuple(seg.shape[1:]), fill if initial is None else initial)
    if reduce == "mean":
        total = seg.sum(0) if initial is None else seg.sum(0) + initial
        return total / n
    out = getattr(seg, reduce)(0)
    if initial is None:
        return out
    if reduce == "sum":
        return out + initial
    if reduce == "prod":
        return out * initial
    return out.clamp(min=initial) if reduce == "amax" else out.clamp(max=initial)


def segment_reduce(data: Tensor, reduce: str, *, lengths=None, indices=None, offsets=None,
                   axis: int = 0, unsafe: bool = False, initial=None) -> Tensor:
    """data reduced over consecutive segments along ``axis`` (their ``lengths``, or their
    ``offsets``); empty segments give ``initial`` or the reduction's identity."""
    if reduce not in _SEGMENT_REDUCTIONS:
        raise RuntimeError("reduce argument must be either sum, prod, mean, amax or amin, got "
                           f"{reduce}")
    if indices is not None:
        raise RuntimeError("segment_reduce(): indices based reduction is not supported yet.")
    if lengths is None and offsets is None:
        raise RuntimeError("segment_reduce(): Either lengths or offsets must be defined.")
    axis = axis % data.dim()
    if offsets is None:
        lens = lengths.detach().numpy().astype(xp.int64)
        if not unsafe and (lens.sum(-1) != data.shape[axis]).any():
            raise RuntimeError("segment_reduce(): Expected all rows of lengths along axis to sum "
                               "to data.size(lengths.dim()-1) when !unsafe.")
        zero = xp.zeros(lens.shape[:-1] + (1,), dtype=xp.int64)
        bounds = xp.concatenate([zero, xp.cumsum(lens, -1)], -1)
    else:
        bounds = offsets.detach().numpy().astype(xp.int64)
    rows = []
    for lead in xp.ndindex(*bounds.shape[:-1]):
        base = data[lead]
        edges = bounds[lead]
        rows.append(_shape.stack([_segment(base[int(a):int(b)], _SEGMENT_REDUCTIONS[reduce],
                                           initial) for a, b in zip(edges[:-1], edges[1:])]))
    out = rows[0] if bounds.ndim == 1 else _shape.stack(rows).reshape(
        tuple(bounds.shape[:-1]) + tuple(rows[0].shape))
    return out


Tensor.hardshrink = hardshrink
