"""Causal attention biases: ``causal_upper_left`` and ``causal_lower_right`` masks for
scaled_dot_product_attention when the query and key lengths differ."""

from __future__ import annotations

import warnings
from enum import IntEnum, auto

from ..._backend import xp
from ..._device import memory_of
from ...tensor import Tensor

__all__ = ["causal_upper_left", "causal_lower_right", "CausalVariant", "CausalBias"]


class CausalVariant(IntEnum):
    """Where the causal triangle is anchored: the upper-left corner (``is_causal=True``) or the
    lower-right one (the last query sees every key)."""

    UPPER_LEFT = auto()
    LOWER_RIGHT = auto()


class CausalBias(Tensor):
    """A causal attention mask of (seq_len_q, seq_len_kv) that scaled_dot_product_attention
    takes as ``attn_mask``; its values are the boolean mask (True: attend)."""

    def __init__(self, variant: CausalVariant, seq_len_q: int, seq_len_kv: int) -> None:
        if not isinstance(variant, CausalVariant):
            raise AssertionError(f"variant must be a CausalVariant, got {type(variant).__name__}")
        self.variant, self.seq_len_q, self.seq_len_kv = variant, seq_len_q, seq_len_kv
        if seq_len_q > seq_len_kv and variant == CausalVariant.LOWER_RIGHT:
            warnings.warn("Lower right causal bias will produce NaNs in the output when "
                          "seq_len_q > seq_len_kv!", stacklevel=2)
        self._init_leaf(self._mask(None))

    def _mask(self, device):
        offset = 0 if self.variant == CausalVariant.UPPER_LEFT else \
            self.seq_len_kv - self.seq_len_q
        mask = xp.tril(xp.ones((self.seq_len_q, self.seq_len_kv), dtype=bool), k=offset)
        memory = memory_of(device)
        return mask if memory is xp else memory.asarray(mask)

    def _upper_left(self, device) -> Tensor:
        """The mask anchored at the upper-left corner."""
        return CausalBias(CausalVariant.UPPER_LEFT, self.seq_len_q,
                          self.seq_len_kv)._materialize(device)

    def _lower_right(self, device) -> Tensor:
        """The mask anchored at the lower-right corner."""
        return CausalBias(CausalVariant.LOWER_RIGHT, self.seq_len_q,
                          self.seq_len_kv)._materialize(device)

    def _materialize(self, device=None) -> Tensor:
        """The mask as a plain boolean tensor."""
        return Tensor._wrap(self._mask(device), None, 0)

    @staticmethod
    def _dispatch(query: Tensor, key: Tensor, value: Tensor, attn_mask: CausalBias,
                  dropout_p: float = 0.0, is_causal: bool = False, scale: float | None = None,
                  enable_gqa: bool = False) -> Tensor:
        """scaled_dot_product_attention under this causal mask."""
        from .. import functional as F

        if is_causal:
            raise ValueError("CausalBias should not be used with causal=True")
        if attn_mask.seq_len_q == attn_mask.seq_len_kv \
                or attn_mask.variant == CausalVariant.UPPER_LEFT:
            return F.scaled_dot_product_attention(query, key, value, None, dropout_p, True,
                                                  scale=scale, enable_gqa=enable_gqa)
        return F.scaled_dot_product_attention(query, key, value,
                                              attn_mask._materialize(query.device), dropout_p,
                                              False, scale=scale, enable_gqa=enable_gqa)

    def __repr__(self) -> str:
        return repr(self._materialize())


def causal_upper_left(*size) -> CausalBias:
    """The causal mask of shape ``size`` (q, kv) anchored at the upper-left corner, as
    ``is_causal=True``."""
    if len(size) != 2:
        raise AssertionError("causal_upper_left only supports 2D tensors")
    return CausalBias(CausalVariant.UPPER_LEFT, size[0], size[1])


def causal_lower_right(*size) -> CausalBias:
    """The causal mask of shape ``size`` (q, kv) anchored at the lower-right corner."""
    if len(size) != 2:
        raise AssertionError("causal_lower_right only supports 2D tensors")
    return CausalBias(CausalVariant.LOWER_RIGHT, size[0], size[1])
