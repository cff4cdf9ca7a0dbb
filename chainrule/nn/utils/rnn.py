"""Variable-length sequences: PackedSequence, packing and padding, as nn.utils.rnn.

A packed sequence holds the batch sorted by decreasing length and, for each time step, the
rows of the sequences still running: ``data`` is those rows one step after another and
``batch_sizes[t]`` how many there are at step ``t``. Everything here is made of differentiable
ops, so gradients flow through packing and unpacking.
"""

from __future__ import annotations

from typing import NamedTuple

from ... import _creation
from ..._backend import float16, float32, float64, int8, int16, int32, int64, uint8
from ..._creation import full
from ...ops.shape import cat, stack
from ...tensor import Tensor

__all__ = ["PackedSequence", "invert_permutation", "pack_padded_sequence", "pad_packed_sequence",
           "pad_sequence", "unpad_sequence", "pack_sequence", "unpack_sequence"]


class PackedSequence_(NamedTuple):
    data: Tensor
    batch_sizes: Tensor
    sorted_indices: Tensor | None
    unsorted_indices: Tensor | None


class PackedSequence(PackedSequence_):
    """The data and batch sizes of a packed batch of sequences (and its sort order)."""

    def __new__(cls, data: Tensor, batch_sizes: Tensor | None = None,
                sorted_indices: Tensor | None = None,
                unsorted_indices: Tensor | None = None) -> PackedSequence:
        if unsorted_indices is None:
            unsorted_indices = invert_permutation(sorted_indices)
        if batch_sizes is None:  # PackedSequence((data, batch_sizes))
            data, batch_sizes = data
        return super().__new__(cls, data, batch_sizes, sorted_indices, unsorted_indices)

    def to(self, *args, **kwargs) -> PackedSequence:
        """The same sequence with ``data`` converted as ``Tensor.to`` would (self if unchanged)."""
        data = self.data.to(*args, **kwargs)
        if data is self.data:
            return self
        return type(self)(data, self.batch_sizes, self.sorted_indices, self.unsorted_indices)

    def cuda(self, *args, **kwargs) -> PackedSequence:
        raise AssertionError("Torch not compiled with CUDA enabled")

    def cpu(self, *args, **kwargs) -> PackedSequence:
        return self

    def pin_memory(self) -> PackedSequence:
        raise RuntimeError("Cannot access accelerator device when none is available.")

    def is_pinned(self) -> bool:
        return False

    @property
    def is_cuda(self) -> bool:
        return False

    def double(self) -> PackedSequence:
        return self.to(dtype=float64)

    def float(self) -> PackedSequence:
        return self.to(dtype=float32)

    def half(self) -> PackedSequence:
        return self.to(dtype=float16)

    def long(self) -> PackedSequence:
        return self.to(dtype=int64)

    def int(self) -> PackedSequence:
        return self.to(dtype=int32)

    def short(self) -> PackedSequence:
        return self.to(dtype=int16)

    def char(self) -> PackedSequence:
        return self.to(dtype=int8)

    def byte(self) -> PackedSequence:
        return self.to(dtype=uint8)


def bind(optional, fn):
    """``fn(optional)``, or None when ``optional`` is None."""
    return None if optional is None else fn(optional)


def invert_permutation(permutation: Tensor | None) -> Tensor | None:
    """The permutation that undoes ``permutation`` (None for None)."""
    if permutation is None:
        return None
    return permutation.argsort()


def _lengths(lengths) -> list[int]:
    if isinstance(lengths, Tensor):
        if lengths.dim() != 1:
            raise RuntimeError("'lengths' argument should be a 1D CPU int64 tensor, but got "
                               f"{lengths.dim()}D cpu {lengths.type()[6:-6]} tensor")
        return [int(n) for n in lengths.tolist()]
    return [int(n) for n in lengths]


def pack_padded_sequence(input: Tensor, lengths: Tensor | list[int], batch_first: bool = False,
                         enforce_sorted: bool = True) -> PackedSequence:
    """Pack a padded batch (T, B, *) of sequences with the given lengths."""
    lengths = _lengths(lengths)
    if enforce_sorted:
        if any(a < b for a, b in zip(lengths, lengths[1:])):
            raise RuntimeError("`lengths` array must be sorted in decreasing order when "
                               "`enforce_sorted` is True. You can pass `enforce_sorted=False` "
                               "to pack_padded_sequence and/or pack_sequence to sidestep this "
                               "requirement if you do not need ONNX exportability.")
        sorted_indices = None
    else:
        sorted_indices = _creation.tensor(lengths).argsort(descending=True, stable=True)
        input = input.index_select(0 if batch_first else 1, sorted_indices)
        lengths = sorted(lengths, reverse=True)
    if batch_first:
        input = input.transpose(0, 1)
    if len(lengths) != input.shape[1]:
        raise RuntimeError(f"Expected `len(lengths)` to be equal to batch_size, but got "
                           f"{len(lengths)} (batch_size={input.shape[1]})")
    if lengths and lengths[-1] <= 0:
        raise RuntimeError("Length of all samples has to be greater than 0, but found an "
                           "element in 'lengths' that is <= 0")
    if lengths and lengths[0] > input.shape[0]:
        raise RuntimeError(f"Expected all lengths to be at most the padded length "
                           f"{input.shape[0]}, but got {lengths[0]}")
    steps = lengths[0] if lengths else 0
    batch_sizes = [sum(n > t for n in lengths) for t in range(steps)]
    data = cat([input[t, :b] for t, b in enumerate(batch_sizes)])
    return PackedSequence(data, _creation.tensor(batch_sizes), sorted_indices, None)


def pad_packed_sequence(sequence: PackedSequence, batch_first: bool = False,
                        padding_value: float = 0.0,
                        total_length: int | None = None) -> tuple[Tensor, Tensor]:
    """The padded batch (T, B, *) of a packed sequence and each sequence's length."""
    data, batch_sizes = sequence.data, [int(b) for b in sequence.batch_sizes.tolist()]
    steps = len(batch_sizes)
    if total_length is not None:
        if total_length < steps:
            raise ValueError("Expected total_length to be at least the length of the longest "
                             f"sequence in input, but got total_length={total_length} and max "
                             f"sequence length being {steps}")
        steps = total_length
    batch = batch_sizes[0] if batch_sizes else 0
    feature = tuple(data.shape[1:])
    rows = []
    for chunk, b in zip(data.split(batch_sizes), batch_sizes):
        pad = full((batch - b, *feature), padding_value, dtype=data.dtype)
        rows.append(cat([chunk, pad]) if b < batch else chunk)
    rows += [full((batch, *feature), padding_value, dtype=data.dtype)] * (
        steps - len(batch_sizes))
    padded = stack(rows)
    lengths = _creation.tensor([sum(b > i for b in batch_sizes) for i in range(batch)])
    if sequence.unsorted_indices is not None:
        padded = padded.index_select(1, sequence.unsorted_indices)
        lengths = lengths.index_select(0, sequence.unsorted_indices)
    return (padded.transpose(0, 1) if batch_first else padded), lengths


def pad_sequence(sequences: Tensor | list[Tensor], batch_first: bool = False,
                 padding_value: float = 0.0, padding_side: str = "right") -> Tensor:
    """Stack sequences of different lengths (L_i, *) into (T, B, *), padding with a value."""
    if padding_side not in ("left", "right"):
        raise RuntimeError(f"Expected padding_side to be one of left or right, but got "
                           f"{padding_side}.")
    if isinstance(sequences, Tensor):
        sequences = sequences.unbind(0)
    sequences = list(sequences)
    if not sequences:
        raise RuntimeError("received an empty list of sequences")
    steps = max(s.shape[0] for s in sequences)
    trailing = tuple(sequences[0].shape[1:])
    columns = []
    for s in sequences:
        s = _broadcast_to(s, (s.shape[0], *trailing))
        pad = full((steps - s.shape[0], *trailing), padding_value,
                             dtype=sequences[0].dtype)
        columns.append(cat([s, pad] if padding_side == "right" else [pad, s]))
    return stack(columns, 0 if batch_first else 1)


def _broadcast_to(s: Tensor, shape: tuple) -> Tensor:
    """``s`` broadcast into a slot of ``shape``, with the errors of copying it there."""
    ndim = max(s.dim(), len(shape))
    a, b = (1,) * (ndim - len(shape)) + tuple(shape), (1,) * (ndim - s.dim()) + tuple(s.shape)
    for d in range(ndim - 1, -1, -1):
        if a[d] != b[d] and 1 not in (a[d], b[d]):
            raise RuntimeError(f"The size of tensor a ({a[d]}) must match the size of tensor b "
                               f"({b[d]}) at non-singleton dimension {d}")
    broadcast = [max(x, y) for x, y in zip(a, b)]
    if broadcast != list(shape):
        raise RuntimeError(f"output with shape {list(shape)} doesn't match the broadcast shape "
                           f"{broadcast}")
    return s.expand(*shape)


def unpad_sequence(padded_sequences: Tensor, lengths: Tensor,
                   batch_first: bool = False) -> list[Tensor]:
    """The sequences of a padded batch, each cut to its length."""
    if not batch_first:
        padded_sequences = padded_sequences.transpose(0, 1)
    return [s[:n] for s, n in zip(padded_sequences.unbind(0), _lengths(lengths))]


def pack_sequence(sequences: list[Tensor], enforce_sorted: bool = True) -> PackedSequence:
    """Pack a list of sequences of different lengths."""
    lengths = [s.shape[0] for s in sequences]
    return pack_padded_sequence(pad_sequence(sequences), lengths, enforce_sorted=enforce_sorted)


def unpack_sequence(packed_sequences: PackedSequence) -> list[Tensor]:
    """The list of sequences in a packed sequence."""
    padded, lengths = pad_packed_sequence(packed_sequences, batch_first=True)
    return unpad_sequence(padded, lengths, batch_first=True)
