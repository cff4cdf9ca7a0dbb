"""torch.nn.attention.flex_attention: attention whose scores a function rewrites (``score_mod``)
and a mask function masks (``mask_mod``, carried by a ``BlockMask``).

chainrule runs it as PyTorch runs it without torch.compile, on the whole score matrix:
``scores = q k^T * scale`` (in float32, float64 for float64 inputs), then
``where(mask_mod(b, h, q_idx, kv_idx), score_mod(scores, b, h, q_idx, kv_idx), -inf)``, a
softmax (a row with nothing to attend gives zeros, its logsumexp -inf) and ``@ value``. PyTorch
vmaps the two functions over the four indices; chainrule calls each once, with index tensors
shaped to broadcast against the scores ((B, 1, 1, 1), (1, H, 1, 1), ...), which gives the same
values for the elementwise functions they are. As in PyTorch's eager path only ``mask_mod``
decides what is masked: a BlockMask's blocks are the bookkeeping a fused kernel would skip by.
The result is differentiable (PyTorch's CPU build refuses inputs that require grad).
"""

from __future__ import annotations

import functools
import inspect
import itertools
import math
import operator
import typing
import warnings
from collections.abc import Callable
from enum import Enum
from typing import Any, Literal, NamedTuple, TypedDict

from ... import _creation
from ..._backend import bool_, float32, float64, int8, int32
from ..._compile import is_compiling
from ...ops.activation import softmax
from ...ops.elementwise import where
from ...ops.indexing import repeat_interleave
from ...ops.padding import pad
from ...tensor import Tensor

__all__ = ["BlockMask", "flex_attention", "AuxOutput", "AuxRequest", "FlexKernelOptions",
           "create_block_mask", "create_mask", "or_masks", "and_masks", "noop_mask"]

# Set True to silence the once-per-process warning about running without torch.compile.
_FLEX_ATTENTION_DISABLE_COMPILE_DEBUG = False
_WARNINGS_SHOWN: set[str] = set()

_score_mod_signature = Callable[[Tensor, Tensor, Tensor, Tensor, Tensor], Tensor]
_mask_mod_signature = Callable[[Tensor, Tensor, Tensor, Tensor], Tensor]
_Backend = Literal["AUTO", "TRITON", "FLASH", "TRITON_DECODE"]

_DEFAULT_SPARSE_BLOCK_SIZE = 128
_LARGE_SPARSE_BLOCK_SIZE = 1 << 30


def _warn_once(warning_id: str, message: str, category: type[Warning] = UserWarning) -> None:
    if warning_id not in _WARNINGS_SHOWN:
        if not is_compiling():
            warnings.warn(message, category, stacklevel=3)
        _WARNINGS_SHOWN.add(warning_id)


class FlexKernelOptions(TypedDict, total=False):
    """Options of PyTorch's fused FlexAttention kernels (chainrule has none: it checks them as
    PyTorch does and otherwise ignores them)."""

    num_warps: int
    num_stages: int
    BLOCK_M: int
    BLOCK_N: int
    BLOCK_M1: int
    BLOCK_N1: int
    BLOCK_M2: int
    BLOCK_N2: int
    PRESCALE_QK: bool
    ROWS_GUARANTEED_SAFE: bool
    BLOCKS_ARE_CONTIGUOUS: bool
    WRITE_DQ: bool
    FORCE_USE_FLEX_ATTENTION: bool
    USE_TMA: bool
    kpack: int
    matrix_instr_nonkdim: int
    waves_per_eu: int
    BACKEND: _Backend


class AuxRequest(NamedTuple):
    """Which auxiliary outputs flex_attention should return."""

    lse: bool = False
    max_scores: bool = False


class AuxOutput(NamedTuple):
    """The auxiliary outputs of flex_attention (None where not requested)."""

    lse: Tensor | None = None
    max_scores: Tensor | None = None


class _ModificationType(Enum):
    SCORE_MOD = 1
    MASK_MOD = 2
    UNKNOWN = 3


def _get_mod_type(fn: Callable) -> _ModificationType:
    """A score_mod takes five positional arguments, a mask_mod four."""
    if hasattr(fn, "__code__"):
        count = fn.__code__.co_argcount - len(getattr(fn, "__defaults__", None) or ())
    else:
        count = sum(1 for p in inspect.signature(fn).parameters.values()
                    if p.default is inspect.Parameter.empty)
    if count not in (4, 5):
        raise AssertionError(f"Expected 4 or 5 positional args, got {count}")
    return _ModificationType.SCORE_MOD if count == 5 else _ModificationType.MASK_MOD


def _identity(score: Tensor, batch: Tensor, head: Tensor, token_q: Tensor,
              token_kv: Tensor) -> Tensor:
    return score


def noop_mask(batch: Tensor, head: Tensor, token_q: Tensor, token_kv: Tensor) -> Tensor:
    """Returns a noop mask_mod"""
    return batch.new_ones(size=(), dtype=bool_, device=batch.device)


def _sliced_mask_mod_error(batch: Tensor, head: Tensor, token_q: Tensor, token_kv: Tensor):
    """The mask_mod of a sliced BlockMask: it must be set from the original's."""
    raise RuntimeError(
        "Cannot use mask_mod from a sliced BlockMask. When you slice a BlockMask using [], the "
        "mask_mod attribute is reset. You must set it from the original BlockMask's mask_mod."
        "\n\nIncorrect usage:\n  base_mask = create_block_mask(my_mask_fn, ...)\n  sliced_mask "
        "= base_mask[:, :, block_idx]\n  sliced_mask.mask_mod = apply_offset(sliced_mask."
        "mask_mod, offset)  # WRONG!\n\nCorrect usage:\n  base_mask = create_block_mask("
        "my_mask_fn, ...)\n  sliced_mask = base_mask[:, :, block_idx]\n  sliced_mask.mask_mod = "
        "apply_offset(base_mask.mask_mod, offset)  # Use base_mask!")


def or_masks(*mask_mods: _mask_mod_signature) -> _mask_mod_signature:
    """Returns a mask_mod that's the union of provided mask_mods"""
    if not all(callable(arg) for arg in mask_mods):
        raise RuntimeError(f"All inputs should be callable mask_mods: {mask_mods}")

    def or_mask(b: Tensor, h: Tensor, q_idx: Tensor, kv_idx: Tensor) -> Tensor:
        result = b.new_zeros((), dtype=bool_)
        for mask in mask_mods:
            result = result | mask(b, h, q_idx, kv_idx)
        return result

    return or_mask


def and_masks(*mask_mods: _mask_mod_signature) -> _mask_mod_signature:
    """Returns a mask_mod that's the intersection of provided mask_mods"""
    if not all(callable(arg) for arg in mask_mods):
        raise RuntimeError(f"All inputs should be callable mask_mods: {mask_mods}")

    def and_mask(b: Tensor, h: Tensor, q_idx: Tensor, kv_idx: Tensor) -> Tensor:
        result = b.new_ones((), dtype=bool_)
        for mask in mask_mods:
            result = result & mask(b, h, q_idx, kv_idx)
        return result

    return and_mask


def _indices(shape: tuple, device) -> tuple[Tensor, ...]:
    """b, h, q_idx, kv_idx for a (B, H, Q, KV) grid: int64 aranges shaped to broadcast."""
    out = []
    for dim, n in enumerate(shape):
        view = [1, 1, 1, 1]
        view[dim] = n
        out.append(_creation.arange(n, device=device).view(*view))
    return tuple(out)


def create_mask(mod_fn: _score_mod_signature | _mask_mod_signature, B: int | None,
                H: int | None, Q_LEN: int, KV_LEN: int, device=None) -> Tensor:
    """The (B, H, Q_LEN, KV_LEN) boolean mask of a mask_mod (or of a score_mod: False where it
    gives -inf)."""
    device = "cpu" if device is None else device
    shape = (1 if B is None else B, 1 if H is None else H, Q_LEN, KV_LEN)
    b, h, m, n = _indices(shape, device)
    if _get_mod_type(mod_fn) == _ModificationType.SCORE_MOD:
        out = mod_fn(_creation.zeros(*shape, device=device), b, h, m, n)
        return ~out.expand(*shape).isneginf()
    return mod_fn(b, h, m, n).expand(*shape).contiguous()


# ---- block masks: which KV blocks each Q block attends to ------------------------------------

def _ordered_to_dense(num_blocks: Tensor, indices: Tensor, num_cols: int) -> Tensor:
    """The (..., rows, num_cols) 0/1 matrix of the first ``num_blocks`` column indices of each
    row."""
    *lead, entries = indices.shape
    valid = _creation.arange(entries, device=indices.device) < num_blocks.unsqueeze(-1)
    cols = where(valid, indices, num_cols)
    dense = indices.new_zeros((*lead, num_cols + 1), dtype=int32)
    # every leading position broadcast against the columns; entries past num_blocks land in
    # the extra last column
    grid = tuple(_creation.arange(n, device=indices.device).view(
        *[n if d == i else 1 for d in range(len(lead))], 1) for i, n in enumerate(lead))
    dense[(*grid, cols)] = dense.new_ones(())
    return dense[..., :num_cols].contiguous()


def _dense_to_ordered(dense: Tensor) -> tuple[Tensor, Tensor]:
    """Each row's count of nonzero columns and the columns, nonzero ones first."""
    dense = dense.to(int32)
    counts = dense.sum(dim=-1)
    order = dense.argsort(dim=-1, descending=True, stable=True)
    return counts.to(int32).contiguous(), order.to(int32).contiguous()


def _transpose_ordered(num_blocks: Tensor, indices: Tensor) -> tuple[Tensor, Tensor]:
    dense = _ordered_to_dense(num_blocks, indices, indices.shape[-1])
    return _dense_to_ordered(dense.transpose(-2, -1))


def _adjust_num_blocks_and_indices(num_blocks: Tensor, indices: Tensor, rows: int,
                                   cols: int) -> tuple[Tensor, Tensor]:
    indices = indices[:, :, :rows, :cols]
    num_blocks = num_blocks[:, :, :rows]
    num_blocks = where(num_blocks < cols, num_blocks, cols)
    num_blocks = (indices < num_blocks[:, :, :, None]).sum(dim=-1).to(int32)
    return num_blocks, indices


class BlockMask:
    """A block-sparse attention mask: for each block of Q_BLOCK_SIZE queries, the blocks of
    KV_BLOCK_SIZE keys it attends to (``kv_num_blocks`` of them, listed in ``kv_indices``;
    blocks attended in full separately in ``full_kv_*``), their transposes for the backward
    (``q_*``), and the ``mask_mod`` that masks within blocks."""

    seq_lengths: tuple[int, int]
    kv_num_blocks: Tensor
    kv_indices: Tensor
    full_kv_num_blocks: Tensor | None
    full_kv_indices: Tensor | None
    q_num_blocks: Tensor | None
    q_indices: Tensor | None
    full_q_num_blocks: Tensor | None
    full_q_indices: Tensor | None
    dq_write_order: Tensor | None
    dq_write_order_full: Tensor | None
    dq_kv_order: Tensor | None
    dq_kv_order_spt: bool | None
    BLOCK_SIZE: tuple[int, int]
    mask_mod: _mask_mod_signature

    _TENSOR_ATTRS = ["kv_num_blocks", "kv_indices", "full_kv_num_blocks", "full_kv_indices",
                     "q_num_blocks", "q_indices", "full_q_num_blocks", "full_q_indices",
                     "dq_write_order", "dq_write_order_full", "dq_kv_order"]
    _CONTEXT_ATTRS = ["seq_lengths", "BLOCK_SIZE", "mask_mod", "dq_kv_order_spt"]

    def __init__(self, seq_lengths: tuple[int, int], kv_num_blocks: Tensor, kv_indices: Tensor,
                 full_kv_num_blocks: Tensor | None, full_kv_indices: Tensor | None,
                 q_num_blocks: Tensor | None, q_indices: Tensor | None,
                 full_q_num_blocks: Tensor | None, full_q_indices: Tensor | None,
                 BLOCK_SIZE: tuple[int, int] = (_DEFAULT_SPARSE_BLOCK_SIZE,
                                                _DEFAULT_SPARSE_BLOCK_SIZE),
                 mask_mod: _mask_mod_signature = noop_mask, *,
                 dq_write_order: Tensor | None = None, dq_write_order_full: Tensor | None = None,
                 dq_kv_order: Tensor | None = None, dq_kv_order_spt: bool | None = None) -> None:
        if kv_indices.dim() < 2:
            raise RuntimeError("BlockMask must have at least 2 dimensions")
        if kv_num_blocks is None:
            raise AssertionError("kv_num_blocks must be provided")
        if (full_kv_num_blocks is None) != (full_kv_indices is None):
            raise AssertionError(
                "full_kv_num_blocks and full_kv_indices must be both provided or omitted")
        if (full_q_num_blocks is None) != (full_q_indices is None):
            raise AssertionError(
                "full_q_num_blocks and full_q_indices must be both provided or omitted")
        if dq_write_order_full is not None and dq_write_order is None:
            raise ValueError("dq_write_order_full requires dq_write_order")
        self.seq_lengths = seq_lengths
        self.kv_num_blocks, self.kv_indices = kv_num_blocks, kv_indices
        self.full_kv_num_blocks, self.full_kv_indices = full_kv_num_blocks, full_kv_indices
        self.q_num_blocks, self.q_indices = q_num_blocks, q_indices
        self.full_q_num_blocks, self.full_q_indices = full_q_num_blocks, full_q_indices
        self.dq_write_order, self.dq_write_order_full = dq_write_order, dq_write_order_full
        self.dq_kv_order, self.dq_kv_order_spt = dq_kv_order, dq_kv_order_spt
        self.BLOCK_SIZE = BLOCK_SIZE
        self.mask_mod = mask_mod

    @classmethod
    def from_kv_blocks(cls, kv_num_blocks: Tensor, kv_indices: Tensor,
                       full_kv_num_blocks: Tensor | None = None,
                       full_kv_indices: Tensor | None = None,
                       BLOCK_SIZE: int | tuple[int, int] = _DEFAULT_SPARSE_BLOCK_SIZE,
                       mask_mod: _mask_mod_signature | None = None,
                       seq_lengths: tuple[int, int] | None = None,
                       compute_q_blocks: bool = True, *, dq_write_order: Tensor | None = None,
                       dq_write_order_full: Tensor | None = None,
                       dq_kv_order: Tensor | bool | None = None) -> BlockMask:
        """A BlockMask from its KV block lists, with the Q block lists computed from them."""
        if kv_indices.dim() < 2:
            raise RuntimeError("BlockMask must have at least 2 dimensions")
        if (full_kv_num_blocks is None) != (full_kv_indices is None):
            raise AssertionError(
                "full_kv_num_blocks and full_kv_indices must be both provided or omitted")
        q_num_blocks = q_indices = full_q_num_blocks = full_q_indices = None
        if compute_q_blocks:
            q_num_blocks, q_indices = _transpose_ordered(kv_num_blocks, kv_indices)
            if full_kv_num_blocks is not None:
                full_q_num_blocks, full_q_indices = _transpose_ordered(full_kv_num_blocks,
                                                                       full_kv_indices)
        if isinstance(BLOCK_SIZE, int):
            BLOCK_SIZE = (BLOCK_SIZE, BLOCK_SIZE)
        if seq_lengths is None:
            seq_lengths = (kv_indices.shape[-2] * BLOCK_SIZE[0],
                           kv_indices.shape[-1] * BLOCK_SIZE[1])
        if dq_kv_order is not None and not isinstance(dq_kv_order, (bool, Tensor)):
            raise ValueError("dq_kv_order must be a bool, Tensor, or None")
        return cls(seq_lengths=seq_lengths, kv_num_blocks=kv_num_blocks, kv_indices=kv_indices,
                   full_kv_num_blocks=full_kv_num_blocks, full_kv_indices=full_kv_indices,
                   q_num_blocks=q_num_blocks, q_indices=q_indices,
                   full_q_num_blocks=full_q_num_blocks, full_q_indices=full_q_indices,
                   BLOCK_SIZE=BLOCK_SIZE,
                   mask_mod=mask_mod if mask_mod is not None else noop_mask,
                   dq_write_order=dq_write_order, dq_write_order_full=dq_write_order_full,
                   dq_kv_order=dq_kv_order if isinstance(dq_kv_order, Tensor) else None,
                   dq_kv_order_spt=dq_kv_order if isinstance(dq_kv_order, bool) else None)

    def as_tuple(self, flatten: bool = True) -> tuple[Any, ...]:
        """The BlockMask's attributes as a tuple (the sequence lengths and block sizes as two
        ints each when ``flatten``)."""
        lengths = tuple(self.seq_lengths) if flatten else (self.seq_lengths,)
        block = tuple(self.BLOCK_SIZE) if flatten else (self.BLOCK_SIZE,)
        return (*lengths, self.kv_num_blocks, self.kv_indices, self.full_kv_num_blocks,
                self.full_kv_indices, self.q_num_blocks, self.q_indices,
                self.full_q_num_blocks, self.full_q_indices, self.dq_write_order,
                self.dq_write_order_full, self.dq_kv_order, self.dq_kv_order_spt, *block,
                self.mask_mod)

    @property
    def shape(self) -> tuple[int, ...]:
        return tuple(self.kv_indices.shape[:-2]) + tuple(self.seq_lengths)

    def __str__(self) -> str:
        return (f"BlockMask(shape={self.shape}, sparsity={self.sparsity():.2f}%, \n"
                f"{self.to_string().strip()}\n)")

    def __getitem__(self, index) -> BlockMask:
        """The BlockMask of the batches, heads and Q blocks ``index`` selects (its mask_mod
        must be set again from the original's)."""
        if self.dq_kv_order is not None:
            raise NotImplementedError(
                "Slicing BlockMask with tensor dq_kv_order is not supported yet. Construct a new "
                "BlockMask with matching precomputed dq_write_order metadata.")
        index = index if isinstance(index, tuple) else (index,)
        padded = (*index, slice(None), slice(None), slice(None))[:3]
        # an int index keeps its dim, as a slice of length one
        index = tuple((slice(i + n, i + n + 1) if -n <= i < 0 else slice(i, i + 1))
                      if isinstance(i, int) else i
                      for i, n in zip(padded, self.kv_num_blocks.shape[:3], strict=True))
        full = self.full_kv_num_blocks is not None
        new = BlockMask.from_kv_blocks(
            self.kv_num_blocks[index], self.kv_indices[index],
            self.full_kv_num_blocks[index] if full else None,
            self.full_kv_indices[index] if full else None, BLOCK_SIZE=self.BLOCK_SIZE,
            mask_mod=_sliced_mask_mod_error, seq_lengths=self.seq_lengths,
            compute_q_blocks=self.q_indices is not None)
        new.dq_kv_order_spt = self.dq_kv_order_spt
        if self.dq_write_order is not None:
            new.dq_write_order, new.dq_write_order_full = _dq_write_order(
                new, new.dq_kv_order_spt)
        return new

    def __repr__(self) -> str:
        def shape(t):
            return None if t is None else t.shape

        name = getattr(self.mask_mod, "__name__", self.mask_mod)
        return (f"BlockMask(\n    kv_num_blocks={self.kv_num_blocks.shape},\n"
                f"    kv_indices={self.kv_indices.shape},\n"
                f"    full_kv_num_blocks={shape(self.full_kv_num_blocks)},\n"
                f"    full_kv_indices={shape(self.full_kv_indices)},\n"
                f"    q_num_blocks={shape(self.q_num_blocks)},\n"
                f"    q_indices={shape(self.q_indices)},\n"
                f"    full_q_num_blocks={shape(self.full_q_num_blocks)},\n"
                f"    full_q_indices={shape(self.full_q_indices)},\n"
                f"    BLOCK_SIZE={self.BLOCK_SIZE},\n    shape={self.shape},\n"
                f"    sparsity={self.sparsity():.2f}%,\n    mask_mod={name}\n)")

    def _adjust(self, new_q_len: int, new_kv_len: int) -> BlockMask:
        """This mask cropped to its upper left (new_q_len, new_kv_len) corner."""
        if self.dq_kv_order is not None:
            raise NotImplementedError(
                "Adjusting BlockMask with tensor dq_kv_order is not supported yet. Construct a "
                "new BlockMask with matching precomputed dq_write_order metadata.")
        rows = -(-new_q_len // self.BLOCK_SIZE[0])
        cols = -(-new_kv_len // self.BLOCK_SIZE[1])
        kv = _adjust_num_blocks_and_indices(self.kv_num_blocks, self.kv_indices, rows, cols)
        full = (None, None) if self.full_kv_num_blocks is None else \
            _adjust_num_blocks_and_indices(self.full_kv_num_blocks, self.full_kv_indices, rows,
                                           cols)
        new = self.from_kv_blocks(*kv, *full, BLOCK_SIZE=self.BLOCK_SIZE,
                                  mask_mod=self.mask_mod, seq_lengths=(new_q_len, new_kv_len),
                                  compute_q_blocks=self.q_indices is not None)
        new.dq_kv_order_spt = self.dq_kv_order_spt
        if self.dq_write_order is not None:
            new.dq_write_order, new.dq_write_order_full = _dq_write_order(
                new, new.dq_kv_order_spt)
        return new

    def numel(self) -> int:
        """Returns the number of elements (not accounting for sparsity) in the mask."""
        return functools.reduce(operator.mul, self.shape, 1)

    def sparsity(self) -> float:
        """Computes the percentage of blocks that are sparse (i.e. not computed)"""
        computed = self.kv_num_blocks.sum()
        if self.full_kv_num_blocks is not None:
            computed = computed + self.full_kv_num_blocks.sum()
        computed_size = computed.item() * self.BLOCK_SIZE[0] * self.BLOCK_SIZE[1]
        return 100 * (1 - computed_size / self.numel())

    def to_dense(self) -> Tensor:
        """Returns a dense block that is equivalent to the block mask."""
        dense = _ordered_to_dense(self.kv_num_blocks, self.kv_indices, self.kv_indices.shape[-1])
        if self.full_kv_num_blocks is not None:
            dense = dense | _ordered_to_dense(self.full_kv_num_blocks, self.full_kv_indices,
                                              self.full_kv_indices.shape[-1])
        return dense

    def to_string(self, grid_size: int | tuple[int, int] = (20, 20), limit: int = 4) -> str:
        """Returns a string representation of the block mask. Quite nifty.

        If grid_size is -1, prints out an uncompressed version. Warning, it can be quite big!
        """
        dense = self.to_dense()
        *batch_dims, num_rows, num_cols = dense.shape
        if isinstance(grid_size, int):
            max_rows = max_cols = grid_size
        else:
            max_rows, max_cols = grid_size
        if grid_size == -1:
            max_rows, max_cols = num_rows, num_cols
        row_step = max(1, -(-num_rows // max_rows))
        col_step = max(1, -(-num_cols // max_cols))

        def picture(batch_idx: tuple) -> str:
            mask = dense
            for i in batch_idx:
                mask = mask[i]
            lines = f"{batch_idx}\n"
            for r in range(0, num_rows, row_step):
                for c in range(0, num_cols, col_step):
                    share = mask[r:r + row_step, c:c + col_step].float().mean().item()
                    lines += ("█" if share == 1 else " " if share == 0 else "░") * 2
                lines += "\n"
            return lines

        parts = []
        for count, batch_idx in enumerate(itertools.product(*[range(n) for n in batch_dims])):
            if count == limit:
                parts += ["...", "To print out more, set BlockMask.to_string(limit=N)",
                          "You can also index (BlockMask[batch, head]) to choose a specific "
                          "batch or head"]
                break
            parts.append(picture(batch_idx))
        return "\n".join(parts)

    def to(self, device) -> BlockMask:
        """A new BlockMask with its tensors on ``device``."""
        moved = {a: None if getattr(self, a) is None else getattr(self, a).to(device)
                 for a in self._TENSOR_ATTRS}
        return BlockMask(seq_lengths=self.seq_lengths, **moved, BLOCK_SIZE=self.BLOCK_SIZE,
                         mask_mod=self.mask_mod, dq_kv_order_spt=self.dq_kv_order_spt)


def _round_up_to_multiple(x: int, multiple: int) -> int:
    return (x + multiple - 1) // multiple * multiple


def _convert_mask_to_block_mask(mask: Tensor, Q_BLOCK_SIZE: int = _DEFAULT_SPARSE_BLOCK_SIZE,
                                KV_BLOCK_SIZE: int = _DEFAULT_SPARSE_BLOCK_SIZE,
                                separate_full_blocks: bool = False):
    """(partial blocks, full blocks or None) of a boolean mask, as int8 block grids."""
    if mask.dtype is not bool_:
        raise AssertionError(f"mask.dtype must be torch.bool, got {mask.dtype}")
    while mask.dim() < 4:
        mask = mask.unsqueeze(0)
    q_pad = _round_up_to_multiple(mask.shape[-2], Q_BLOCK_SIZE) - mask.shape[-2]
    kv_pad = _round_up_to_multiple(mask.shape[-1], KV_BLOCK_SIZE) - mask.shape[-1]
    mask = pad(mask, (0, kv_pad, 0, q_pad))
    B, H, Q, KV = mask.shape
    blocks = mask.view(B, H, Q // Q_BLOCK_SIZE, Q_BLOCK_SIZE, KV // KV_BLOCK_SIZE, KV_BLOCK_SIZE)
    counts = blocks.permute(0, 1, 2, 4, 3, 5).sum(dim=[-2, -1])
    if not separate_full_blocks:
        return (counts > 0).to(int8), None
    size = Q_BLOCK_SIZE * KV_BLOCK_SIZE
    return ((counts > 0) & (counts < size)).to(int8), (counts == size).to(int8)


def _dq_write_order(block_mask: BlockMask, dq_kv_order: bool | None = False):
    """The dQ write order a deterministic block-sparse backward uses: for each (KV block, Q
    block) pair of the Q lists, the Q block's rank among its KV blocks (ascending, or
    descending with ``dq_kv_order``)."""
    if block_mask.q_num_blocks is None or block_mask.q_indices is None:
        raise ValueError("BlockMask must have q_num_blocks and q_indices to compute "
                         "dq_write_order")
    kv_indices, q_indices = block_mask.kv_indices, block_mask.q_indices
    shapes = [tuple(t.shape[:2]) for t in (kv_indices, q_indices, block_mask.full_kv_indices,
                                           block_mask.full_q_indices) if t is not None]
    B, H = (max(s[0] for s in shapes), max(s[1] for s in shapes))

    def grid(t):
        return None if t is None else t.expand(B, H, *t.shape[2:])

    num_m, num_n = kv_indices.shape[2], q_indices.shape[2]
    dense = _ordered_to_dense(grid(block_mask.kv_num_blocks), grid(kv_indices), num_n)
    full = block_mask.full_kv_num_blocks is not None
    if full:
        dense = (dense + _ordered_to_dense(grid(block_mask.full_kv_num_blocks),
                                           grid(block_mask.full_kv_indices),
                                           num_n)).clamp(max=1)
    running = dense.cumsum(dim=-1)
    rank = (running - dense).to(int32)
    if dq_kv_order:
        rank = (running[:, :, :, -1:] - 1 - rank).to(int32)
    device = kv_indices.device

    def gather(order: Tensor) -> Tensor:
        b = _creation.arange(B, device=device)[:, None, None, None]
        h = _creation.arange(H, device=device)[None, :, None, None]
        n = _creation.arange(order.shape[2], device=device)[None, None, :, None]
        return rank[b, h, order.long().clamp(0, num_m - 1), n].to(int32)

    full_q = block_mask.full_q_indices
    return gather(q_indices), gather(full_q) if full and full_q is not None else None


def create_block_mask(mask_mod: _mask_mod_signature, B: int | None, H: int | None, Q_LEN: int,
                      KV_LEN: int, device=None,
                      BLOCK_SIZE: int | tuple[int, int] = _DEFAULT_SPARSE_BLOCK_SIZE,
                      _compile=False, separate_full_blocks: bool = True,
                      compute_dq_write_order: bool = False,
                      dq_kv_order: bool = True) -> BlockMask:
    """The BlockMask of ``mask_mod`` over (B, H, Q_LEN, KV_LEN) (B and H default to 1, a
    mask for every batch and head)."""
    device = "cpu" if device is None else device
    if _get_mod_type(mask_mod) != _ModificationType.MASK_MOD:
        raise AssertionError(f"create-block_mask requires a mask_mod function! Got {mask_mod}")
    q_block, kv_block = (BLOCK_SIZE, BLOCK_SIZE) if isinstance(BLOCK_SIZE, int) else BLOCK_SIZE
    if _compile:
        warnings.warn(
            "_compile flag on create_block_mask was originally added to work around a "
            "torch.compile limitation. That limitation has since been addressed. So, to compile "
            "create_block_mask, we suggest doing torch.compile(create_block_mask). This still "
            "works for now, but will be removed in the future.", DeprecationWarning,
            stacklevel=2)
    if not isinstance(dq_kv_order, bool):
        raise ValueError("dq_kv_order must be a bool when using create_block_mask")
    mask = create_mask(mask_mod, B, H, Q_LEN, KV_LEN, device)
    partial, full = _convert_mask_to_block_mask(mask, q_block, kv_block, separate_full_blocks)
    full_lists = (None, None) if full is None else _dense_to_ordered(full)
    block_mask = BlockMask.from_kv_blocks(*_dense_to_ordered(partial), *full_lists,
                                          BLOCK_SIZE=(q_block, kv_block), mask_mod=mask_mod,
                                          seq_lengths=(Q_LEN, KV_LEN))
    if compute_dq_write_order:
        block_mask.dq_write_order, block_mask.dq_write_order_full = _dq_write_order(
            block_mask, dq_kv_order)
        block_mask.dq_kv_order = None
        block_mask.dq_kv_order_spt = dq_kv_order
    return block_mask


def _create_empty_block_mask(query: Tensor, key: Tensor) -> BlockMask:
    """The BlockMask flex_attention uses when given none: one block covering everything."""
    return BlockMask.from_kv_blocks(
        kv_num_blocks=_creation.ones(1, 1, 1, dtype=int32, device=query.device),
        kv_indices=_creation.zeros(1, 1, 1, 1, dtype=int32, device=query.device),
        BLOCK_SIZE=_LARGE_SPARSE_BLOCK_SIZE, seq_lengths=(1, 1))


# ---- flex_attention --------------------------------------------------------------------------

def _check_kernel_options(kernel_options, return_aux: AuxRequest | None) -> None:
    """Refuse the kernel options PyTorch refuses (chainrule has no kernel to pass them to)."""
    options = {} if kernel_options is None else dict(kernel_options)
    if "BACKEND" in options and options.get("FORCE_USE_FLEX_ATTENTION", False):
        raise RuntimeError(
            "BACKEND cannot be combined with legacy FORCE_USE_FLEX_ATTENTION. BACKEND supersedes "
            "the legacy knob; please drop FORCE_USE_FLEX_ATTENTION and only specify the desired "
            "BACKEND.")
    backends = typing.get_args(_Backend)
    if "BACKEND" in options and options["BACKEND"] not in backends:
        raise ValueError(f"Invalid BACKEND value '{options['BACKEND']}'. Must be one of "
                         f"{backends}")
    for internal in ("OUTPUT_LOGSUMEXP", "OUTPUT_MAX"):
        if internal in options:
            raise AssertionError(f"{internal} must not be in kernel_options")
    if return_aux is not None and return_aux.max_scores:
        if options.get("BACKEND", "AUTO") == "FLASH":
            raise NotImplementedError(
                "Returning max scores is not supported with BACKEND='FLASH'. Use "
                "return_aux=AuxRequest(lse=True) or omit max_scores.")
        raise NotImplementedError("Returning max scores is not supported on CPU/MPS.")


def _check_inputs(query: Tensor, key: Tensor, value: Tensor, block_mask, enable_gqa: bool):
    """PyTorch's checks of flex_attention's inputs, in its order and words."""
    if query.device != key.device or query.device != value.device:
        raise ValueError(
            f"Expected query, key, and value to have the same device type, but got "
            f"query.device: {query.device}, key.device: {key.device}, and value.device: "
            f"{value.device} instead.")
    if query.dim() < 2 or key.dim() < 2 or value.dim() < 2:
        raise ValueError(
            f"Expected query, key, and value to all be  at least 2 dimensional, but got "
            f"query.dim: {query.dim()}, key.dim: {key.dim()} and value.dim: {value.dim()} "
            "instead.")
    if query.size(-1) != key.size(-1):
        raise ValueError(f"Expect query and key/value to have the same embedding dimension but "
                         f"got E={query.size(-1)} and E={key.size(-1)}.")
    if query.device.type != "cpu":
        raise ValueError("FlexAttention is only supported on CUDA, CPU, HPU, or MPS devices. "
                         f"Found input tensors on {query.device.type} device.")
    if query.dim() != 4 or key.dim() != 4 or value.dim() != 4:
        raise NotImplementedError("NYI: query, key, and value must be 4D tensors")
    if not enable_gqa and query.size(-3) != key.size(-3):
        raise ValueError(f"Expect query and key/value to have the same number of heads but got "
                         f"Hq={query.size(-3)} and Hkv={key.size(-3)}. Try setting "
                         "enable_gqa=True for GQA.")
    if enable_gqa and query.size(1) % key.size(1) != 0:
        raise ValueError(f"Expect number of query heads to be a multiple of kv heads for GQA but "
                         f"got Hq={query.size(1)} and Hkv={key.size(1)}.")
    if query.size(0) != key.size(0):
        if block_mask is None:
            raise ValueError(
                f"Expect query and key/value to have the same batch size, or non-none "
                f"block_mask, but got block_mask=None, Bq={query.size(0)}, and "
                f"Bkv={key.size(0)}.")
        if block_mask.kv_num_blocks.size(0) != query.size(0):
            raise ValueError(
                f"Expect query and key/value to have the same batch size, or block_mask and "
                f"query to have the same batch size, but got Bq={query.size(0)}, "
                f"Bkv={key.size(0)}, B_block_mask={block_mask.kv_num_blocks.size(0)}.")


def _check_lengths(query: Tensor, key: Tensor, block_mask: BlockMask) -> None:
    if block_mask.BLOCK_SIZE == (_LARGE_SPARSE_BLOCK_SIZE, _LARGE_SPARSE_BLOCK_SIZE):
        return  # the mask made when none is given fits every length
    q_len, kv_len = block_mask.shape[-2], block_mask.shape[-1]
    got = (f"block_mask was created for block_mask.shape={block_mask.shape} but got "
           f"q_len={query.size(-2)} and kv_len={key.size(-2)}. ")
    if query.size(-2) > q_len or key.size(-2) > kv_len:
        raise ValueError(got + "As the block mask was created for a smaller length than you're "
                         "using it for, you likely need to create a new block mask.")
    if query.size(-2) < q_len or key.size(-2) < kv_len:
        raise ValueError(
            got + "As the block mask was created for a larger length than you're using it for, "
            "you can either 1. create a new block mask with the correct length, or 2. 'adjust' "
            "the existing block mask to the correct length by calling "
            "block_mask._adjust(q_len, kv_len). This essentially 'crops' the block mask to the "
            "upper left corner, which does not work for all mask_mods!")


def _math_attention(query: Tensor, key: Tensor, value: Tensor, score_mod: Callable,
                    mask_mod: Callable, scale: float) -> tuple[Tensor, Tensor]:
    """(output, logsumexp) over the whole score matrix (see the module's docstring)."""
    groups = query.size(1) // key.size(1)
    if groups > 1:
        key = repeat_interleave(key, groups, dim=1)
        value = repeat_interleave(value, groups, dim=1)
    bq, bkv = query.size(0), key.size(0)
    if not (bq == bkv or (bq > 1 and bkv == 1)):
        raise RuntimeError(f"Bq and Bkv must broadcast. Got Bq={bq} and Bkv={bkv}")
    key = key.expand(bq, *key.shape[1:])
    value = value.expand(bq, *value.shape[1:])
    precision = float64 if query.dtype is float64 else float32
    scores = (query.to(precision) @ key.to(precision).transpose(-2, -1)) * scale
    b, h, m, n = _indices(tuple(scores.shape), scores.device)
    allowed = mask_mod(b, h, m, n)
    modified = where(allowed, score_mod(scores, b, h, m, n),
                     _creation.tensor(-math.inf, dtype=precision))
    modified = modified.expand(scores.shape)
    # A row masked everywhere attends to nothing: zeros out, logsumexp -inf, and no NaN in the
    # backward (its scores are replaced by zeros before the softmax and its logsumexp).
    empty = (modified == -math.inf).all(dim=-1, keepdim=True)
    safe = where(empty, 0.0, modified)
    weights = where(empty, 0.0, softmax(safe, -1))
    lse = where(empty.squeeze(-1), -math.inf, safe.logsumexp(dim=-1))
    out = weights.to(query.dtype) @ value.to(query.dtype)
    return out, lse


def flex_attention(query: Tensor, key: Tensor, value: Tensor,
                   score_mod: _score_mod_signature | None = None,
                   block_mask: BlockMask | None = None, scale: float | None = None,
                   enable_gqa: bool = False, return_lse: bool = False,
                   kernel_options: FlexKernelOptions | None = None, *,
                   return_aux: AuxRequest | None = None):
    """Attention of (B, Hq, L, E) queries over (B, Hkv, S, E) keys and (B, Hkv, S, Ev) values,
    with the scores modified by ``score_mod`` and masked by ``block_mask``'s mask_mod."""
    _check_inputs(query, key, value, block_mask, enable_gqa)
    score_mod = _identity if score_mod is None else score_mod
    block_mask = _create_empty_block_mask(query, key) if block_mask is None else block_mask
    if getattr(block_mask, "mask_mod", None) is _sliced_mask_mod_error:
        raise RuntimeError("Cannot use mask_mod from a sliced BlockMask")
    _check_lengths(query, key, block_mask)
    scale = 1.0 / math.sqrt(query.size(-1)) if scale is None else scale
    if query.device != block_mask.kv_num_blocks.device:
        raise RuntimeError(f"Expect q/k/v and block_mask to be on the same device but got "
                           f"{query.device} and {block_mask.kv_num_blocks.device}.")
    if return_lse and return_aux is not None:
        raise ValueError("Cannot specify both return_lse and return_aux. return_lse is "
                         "deprecated, please use return_aux=AuxRequest(lse=True) instead.")
    if return_lse:
        _warn_once("deprecated_return_lse", "return_lse is deprecated and will be removed in "
                   "v2.10. Please use return_aux=AuxRequest(lse=True) instead.", FutureWarning)
    _check_kernel_options(kernel_options, return_aux)
    if not _FLEX_ATTENTION_DISABLE_COMPILE_DEBUG:
        _warn_once(
            "flex_attention_performance",
            "flex_attention called without torch.compile() - this will use an unfused "
            "implementation that materializes the full scores matrix instead of generating a "
            "fused kernel.\n\nSOLUTION: Use torch.compile(flex_attention)(...)\n\nIf you want to "
            "debug your score_mod/mask_mod, you can set:\ntorch.nn.attention.flex_attention."
            "_FLEX_ATTENTION_DISABLE_COMPILE_DEBUG = True\n\nThis will allow you to use print "
            "statements or breakpoints. Note: This doesn't work with the backwards pass and may "
            "produce incorrect results.")
    out, lse = _math_attention(query, key, value, score_mod, block_mask.mask_mod, scale)
    if return_aux is not None:
        return out, AuxOutput(lse=lse if return_aux.lse else None, max_scores=None)
    if return_lse:
        return out, lse
    return out
