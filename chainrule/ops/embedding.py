"""Embedding (rows of a table at integer indices, and its scatter-add gradient) and one_hot."""

from __future__ import annotations

import math

from .._backend import xp
from .._batching import materialize, physical
from .._dispatch import apply
from ..tensor import Tensor
from ._nnutil import const, on_values
from ._registry import defop


def _embedding_backward(grad, indices, num_weights, padding_idx, scale_grad_by_freq):
    dim = grad.shape[-1]
    flat_idx = indices.reshape(-1)
    flat_grad = grad.reshape(-1, dim)
    if scale_grad_by_freq:
        counts = xp.bincount(flat_idx, minlength=num_weights)
        flat_grad = flat_grad / counts[flat_idx, None].astype(grad.dtype)
    out = xp.zeros((num_weights, dim), dtype=grad.dtype)
    xp.add.at(out, flat_idx, flat_grad)
    if padding_idx is not None:  # a row, or a list of them (vmap's stacked tables)
        out[padding_idx] = 0
    return out


def _embedding_position_scale(indices, padding_idx, scale_grad_by_freq, dtype):
    """How much of each gathered row's gradient the scatter keeps (None: all of it)."""
    if padding_idx is None and not scale_grad_by_freq:
        return None

    def scale_of(data, lead):
        scale = xp.ones(data.shape + (1,), dtype=dtype)
        if scale_grad_by_freq:  # counted within each example (the vmap batches lead)
            keys = _per_example(data, lead, int(data.max(initial=0)) + 1)
            scale /= xp.bincount(keys.reshape(-1))[keys][..., None]
        if padding_idx is not None:
            scale[xp.isin(data, padding_idx)] = 0
        return scale

    return on_values(scale_of, indices)


def _per_example(indices, lead: int, n: int):
    """Indices made distinct across the examples of the ``lead`` leading dims: each example's
    indices into a table of n rows become indices into the examples' tables stacked."""
    if not lead:
        return indices
    examples = math.prod(indices.shape[:lead])
    offsets = (xp.arange(examples) * n).reshape(indices.shape[:lead] + (1,) * (indices.ndim - lead))
    return indices + offsets


def _embedding_batch(op, args, flags, size, params):
    indices, weight = args
    batched_indices, batched_weight = flags
    if not batched_weight:  # the examples' indices are more indices into the one table
        return apply(op, indices, weight, **params)
    # An example's own table: the tables stacked, (B * V, D), each example's indices offset.
    rows = weight.shape[1]
    if not batched_indices:
        indices = materialize(indices, size)
    return apply(op, indices + _offsets(size, rows, indices.ndim - 1),
                 weight.reshape((size * rows,) + tuple(weight.shape[2:])),
                 **_stacked(params, size, rows))


def _stacked(params: dict, size: int, rows: int) -> dict:
    """The params for B tables of ``rows`` rows stacked: every example's padding row."""
    padding = params["padding_idx"]
    if padding is None:
        return params
    padding = [p + b * rows for b in range(size) for p in (
        padding if type(padding) is list else [padding])]
    return dict(params, padding_idx=padding)


def _offsets(size: int, rows: int, ndim: int):
    return const((xp.arange(size) * rows).reshape((size,) + (1,) * ndim))


def _embedding_backward_batch(op, args, flags, size, params):
    # Each example's gradient table: scattered into B stacked tables, each example's indices
    # offset.
    grad, indices = (a if f else materialize(a, size) for a, f in zip(args, flags))
    rows = params["num_weights"]
    out = apply(op, grad, indices + _offsets(size, rows, indices.ndim - 1),
                **dict(_stacked(params, size, rows), num_weights=size * rows))
    return out.reshape((size, rows) + tuple(out.shape[1:]))


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
    batch=_embedding_batch,
)
# The scatter-add of the rows' gradients; its VJP is the gather again (padding rows excluded).
EMBEDDING_BACKWARD = defop(
    "embedding_backward",
    _embedding_backward,
    ("grad", "indices"),
    (_embedding_backward_grad, None),
    backward_name="EmbeddingBackwardBackward0",
    jvp="linear",
    batch=_embedding_backward_batch,
)


_RENORM_BATCHED = (
    "vmap: aten::embedding_renorm_(self, *extra_args) is not possible: the rows of weight are "
    "renormalised in place, which vmap cannot do for a batched input or weight; renormalise "
    "outside vmap")


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
    data = physical(input)
    if data.size and (data.min() < 0 or data.max() >= num):
        raise IndexError("index out of range in self")
    if max_norm is not None:
        input._needs_values(RuntimeError, _RENORM_BATCHED)
        weight._needs_values(RuntimeError, _RENORM_BATCHED)
        _renorm_rows(weight, data, float(max_norm), float(norm_type))
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


def _bags(indices, offsets, include_last_offset: bool, padding_idx):
    """For flat indices and bag offsets: each position's bag, whether it counts (not padding)
    and the number of bags. The last bag runs to the end of input, or with
    include_last_offset to the last offset (CSR offsets)."""
    n = indices.shape[0]
    bags = offsets.shape[0] - (1 if include_last_offset else 0)
    bag = xp.clip(xp.searchsorted(offsets, xp.arange(n), side="right") - 1, 0, max(bags - 1, 0))
    keep = xp.ones(n, dtype=bool) if padding_idx is None else indices != padding_idx
    if include_last_offset and offsets.size:
        keep &= xp.arange(n) < offsets[-1]
    return bag, keep, bags


def embedding_bag(input, weight, offsets=None, max_norm=None, norm_type: float = 2,
                  scale_grad_by_freq: bool = False, mode: str = "mean", sparse: bool = False,
                  per_sample_weights=None, include_last_offset: bool = False,
                  padding_idx=None) -> Tensor:
    """The sums, means or maxima of bags of embeddings, without the intermediate rows."""
    if per_sample_weights is not None and tuple(input.shape) != tuple(per_sample_weights.shape):
        raise ValueError(f"embedding_bag: If per_sample_weights ({per_sample_weights.shape!r}) "
                         "is not None, then it must have the same shape as the input "
                         f"({input.shape!r})")
    if weight.ndim != 2:
        raise ValueError("weight has to be a 2D Tensor, but got Tensor of dimension "
                         f"{weight.ndim}")
    if input.ndim == 2:
        if offsets is not None:
            raise ValueError("if input is 2D, then offsets has to be None, as input is treated "
                             "is a mini-batch of fixed length sequences. However, found offsets "
                             f"of type {type(offsets)}")
        offsets = xp.arange(0, math.prod(input.shape), input.shape[1])
        input = input.reshape(-1)
        if per_sample_weights is not None:
            per_sample_weights = per_sample_weights.reshape(-1)
    elif input.ndim == 1:
        if offsets is None:
            raise ValueError("offsets has to be a 1D Tensor but got None")
        if offsets.ndim != 1:
            raise ValueError("offsets has to be a 1D Tensor")
    else:
        raise ValueError(f"input has to be 1D or 2D Tensor, but got Tensor of dimension "
                         f"{input.ndim}")
    if mode not in ("sum", "mean", "max"):
        raise ValueError("mode has to be one of sum, mean or max")
    if per_sample_weights is not None and mode != "sum":
        raise NotImplementedError(
            "embedding_bag: per_sample_weights was not None. per_sample_weights is only "
            f"supported for mode='sum' (got mode='{mode}'). Please open a feature request on "
            "GitHub.")
    for t in (input, offsets):  # the bags' layout is read from their values
        if isinstance(t, Tensor):
            t._needs_values(RuntimeError, "vmap: embedding_bag with batched indices or offsets "
                            "is not supported; batch the weight or per_sample_weights instead")
    # physical(): on the meta device the bags' layout comes from stand-ins (shapes are static)
    offsets = xp.asarray(physical(offsets) if isinstance(offsets, Tensor) else offsets)
    if input._data.dtype.kind not in "iu":
        raise RuntimeError("Expected tensor for argument #1 'indices' to have one of the "
                           "following scalar types: Long, Int; but got "
                           f"{input._type_desc().split()[0]} instead (while checking arguments "
                           "for embedding_bag)")
    n = input.shape[0]
    if offsets.size and offsets[0] != 0:
        raise RuntimeError("offsets[0] has to be 0, i.e., the first sequence in the mini-batch "
                           f"has to start from position 0. However, got {int(offsets[0])}")
    if offsets.size and offsets[-1] > n:
        raise RuntimeError(f"offsets[-1] can not be greater than input's length {n} but got "
                           f"offsets[-1] of {int(offsets[-1])}")
    num = weight.shape[0]
    if padding_idx is not None:
        if not -num <= padding_idx < num:
            raise AssertionError("padding_idx must be within the number of embeddings")
        padding_idx %= num
    rows = embedding(input, weight, None, max_norm, norm_type, scale_grad_by_freq)
    bag, keep, bags = _bags(physical(input), offsets, include_last_offset, padding_idx)
    dtype = rows._data.dtype
    counts = xp.bincount(bag[keep], minlength=bags)
    if mode == "max":
        # Each bag's kept positions, padded to the longest bag (bags are contiguous runs).
        longest = max(int(counts.max()) if bags else 0, 1)
        kept = xp.nonzero(keep)[0]
        first = xp.cumsum(counts) - counts
        valid = xp.arange(longest) < counts[:, None]
        slots = xp.minimum(first[:, None] + xp.arange(longest), max(kept.size - 1, 0))
        picked = rows[const(kept[slots] if kept.size else xp.zeros_like(slots))]
        fill = const(xp.array(-xp.inf, dtype=dtype))
        best = picked.where(const(valid[..., None]), fill).amax(1)
        return best.where(const(counts[:, None] > 0), const(xp.zeros((), dtype=dtype)))
    scale = keep.astype(dtype)
    if mode == "mean":
        scale = (scale / xp.maximum(counts, 1)[bag]).astype(dtype)
    rows = rows * const(scale[:, None])
    if per_sample_weights is not None:
        rows = rows * per_sample_weights.unsqueeze(1)
    empty = const(xp.zeros((bags, weight.shape[1]), dtype=dtype))
    return empty.index_add(0, const(bag), rows)


def one_hot(tensor, num_classes: int = -1) -> Tensor:
    """(..., num_classes) int64 tensor with a 1 at each index."""
    if tensor._data.dtype != xp.int64:
        raise RuntimeError("one_hot is only applicable to index tensor of type LongTensor.")
    data = physical(tensor)
    if num_classes == -1:
        if tensor.device.type == "meta":
            raise RuntimeError("Tensor.item() cannot be called on meta tensors")
        tensor._needs_values(RuntimeError, "When vmap-ing torch.nn.functional.one_hot, please "
                             "provide an explicit positive num_classes argument.")
        if data.size == 0:
            raise RuntimeError("Can not infer total number of classes from empty tensor.")
        num_classes = int(data.max()) + 1
    if data.size and data.min() < 0:
        raise RuntimeError("Class values must be non-negative.")
    if data.size and data.max() >= num_classes:
        raise RuntimeError("Class values must be smaller than num_classes.")
    return on_values(
        lambda x, lead: (x[..., None] == xp.arange(num_classes)).astype(xp.int64), tensor)


def _torch_embedding(weight, indices, padding_idx: int = -1, scale_grad_by_freq: bool = False,
                     sparse: bool = False) -> Tensor:
    """torch.embedding(weight, indices), with its own argument order."""
    return embedding(indices, weight, None if padding_idx < 0 else padding_idx, None, 2.0,
                     scale_grad_by_freq, sparse)


FUNCTIONS = {"embedding": _torch_embedding}
METHODS: dict = {}
