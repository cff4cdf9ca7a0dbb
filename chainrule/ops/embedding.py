"""Embedding (rows of a table at integer indices, and its scatter-add gradient) and one_hot."""

from __future__ import annotations

from .._backend import xp
from .._dispatch import apply
from ..tensor import Tensor
from ._nnutil import const
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


def _torch_embedding(weight, indices, padding_idx: int = -1, scale_grad_by_freq: bool = False,
                     sparse: bool = False) -> Tensor:
    """torch.embedding(weight, indices), with its own argument order."""
    return embedding(indices, weight, None if padding_idx < 0 else padding_idx, None, 2.0,
                     scale_grad_by_freq, sparse)


FUNCTIONS = {"embedding": _torch_embedding}
METHODS: dict = {}
