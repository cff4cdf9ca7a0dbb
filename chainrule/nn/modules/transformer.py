"""The Transformer and its encoder and decoder stacks and layers."""

from __future__ import annotations

import copy
import math
from collections.abc import Callable

from ... import _creation
from ...ops.linalg import triu
from ...tensor import Tensor
from .. import functional as F
from .. import init
from .activation import MultiheadAttention
from .container import ModuleList
from .dropout import Dropout
from .linear import Linear
from .module import Module
from .normalization import LayerNorm

__all__ = ["TransformerEncoderLayer", "TransformerEncoder",
           "TransformerDecoderLayer", "TransformerDecoder", "Transformer"]


def _get_activation_fn(activation: str) -> Callable[[Tensor], Tensor]:
    """F.relu or F.gelu by name."""
    if activation == "relu":
        return F.relu
    if activation == "gelu":
        return F.gelu
    raise RuntimeError(f"activation should be relu/gelu, not {activation}")


def _activation(activation: str | Callable) -> Callable:
    return _get_activation_fn(activation) if isinstance(activation, str) else activation


def _get_clones(module: Module, N: int) -> ModuleList:  # noqa: N803  (PyTorch's name)
    """A ModuleList of ``N`` deep copies of ``module``."""
    return ModuleList([copy.deepcopy(module) for _ in range(N)])


def _generate_square_subsequent_mask(sz: int, device=None, dtype=None) -> Tensor:
    """A causal mask: -inf above the diagonal (position i sees positions <= i), 0 elsewhere."""
    mask = _creation.full((sz, sz), -math.inf, device=device, dtype=dtype)
    return triu(mask, diagonal=1)


def _get_seq_len(src: Tensor, batch_first: bool) -> int | None:
    """The sequence length of a (batched or unbatched) transformer input."""
    if src.dim() == 2:
        return src.size(0)
    return src.size(1 if batch_first else 0)


def _detect_is_causal_mask(mask: Tensor | None, is_causal: bool | None = None,
                           size: int | None = None) -> bool:
    """``is_causal``, or when it is None whether ``mask`` is the square causal mask."""
    if is_causal is not None or mask is None:
        return is_causal is True
    causal = _generate_square_subsequent_mask(mask.size(-2) if size is None else size,
                                              device=mask.device, dtype=mask.dtype)
    return mask.size() == causal.size() and bool((mask == causal).all())


class TransformerEncoderLayer(Module):
    """Self-attention then a feed-forward block, each with a residual connection and LayerNorm
    (after the residual by default, before the block with ``norm_first``)."""

    def __init__(self, d_model: int, nhead: int, dim_feedforward: int = 2048,
                 dropout: float = 0.1, activation: str | Callable = F.relu,
                 layer_norm_eps: float = 1e-5, batch_first: bool = False,
                 norm_first: bool = False, bias: bool = True, device=None, dtype=None) -> None:
        super().__init__()
        self.self_attn = MultiheadAttention(d_model, nhead, dropout=dropout, bias=bias,
                                            batch_first=batch_first, device=device, dtype=dtype)
        self.linear1 = Linear(d_model, dim_feedforward, bias=bias, device=device, dtype=dtype)
        self.dropout = Dropout(dropout)
        self.linear2 = Linear(dim_feedforward, d_model, bias=bias, device=device, dtype=dtype)
        self.norm_first = norm_first
        self.norm1 = LayerNorm(d_model, eps=layer_norm_eps, bias=bias, device=device, dtype=dtype)
        self.norm2 = LayerNorm(d_model, eps=layer_norm_eps, bias=bias, device=device, dtype=dtype)
        self.dropout1 = Dropout(dropout)
        self.dropout2 = Dropout(dropout)
        self.activation = _activation(activation)

    def _sa_block(self, x: Tensor, attn_mask, key_padding_mask, is_causal: bool) -> Tensor:
        x = self.self_attn(x, x, x, attn_mask=attn_mask, key_padding_mask=key_padding_mask,
                           need_weights=False, is_causal=is_causal)[0]
        return self.dropout1(x)

    def _ff_block(self, x: Tensor) -> Tensor:
        return self.dropout2(self.linear2(self.dropout(self.activation(self.linear1(x)))))

    def forward(self, src: Tensor, src_mask: Tensor | None = None,
                src_key_padding_mask: Tensor | None = None, is_causal: bool = False) -> Tensor:
        x = src
        if self.norm_first:
            x = x + self._sa_block(self.norm1(x), src_mask, src_key_padding_mask, is_causal)
            return x + self._ff_block(self.norm2(x))
        x = self.norm1(x + self._sa_block(x, src_mask, src_key_padding_mask, is_causal))
        return self.norm2(x + self._ff_block(x))


class TransformerEncoder(Module):
    """``num_layers`` copies of an encoder layer applied in turn, then an optional norm."""

    def __init__(self, encoder_layer: TransformerEncoderLayer, num_layers: int,
                 norm: Module | None = None, enable_nested_tensor: bool = True,
                 mask_check: bool = True) -> None:
        super().__init__()
        self.layers = _get_clones(encoder_layer, num_layers)
        self.num_layers = num_layers
        self.norm = norm
        self.enable_nested_tensor, self.mask_check = enable_nested_tensor, mask_check

    def forward(self, src: Tensor, mask: Tensor | None = None,
                src_key_padding_mask: Tensor | None = None,
                is_causal: bool | None = None) -> Tensor:
        out = src
        for layer in self.layers:
            out = layer(out, src_mask=mask, src_key_padding_mask=src_key_padding_mask,
                        is_causal=bool(is_causal))
        return out if self.norm is None else self.norm(out)


class TransformerDecoderLayer(Module):
    """Self-attention, attention over the encoder's output (memory), then a feed-forward block,
    each with a residual connection and LayerNorm (before the block with ``norm_first``)."""

    def __init__(self, d_model: int, nhead: int, dim_feedforward: int = 2048,
                 dropout: float = 0.1, activation: str | Callable = F.relu,
                 layer_norm_eps: float = 1e-5, batch_first: bool = False,
                 norm_first: bool = False, bias: bool = True, device=None, dtype=None) -> None:
        super().__init__()
        self.self_attn = MultiheadAttention(d_model, nhead, dropout=dropout, bias=bias,
                                            batch_first=batch_first, device=device, dtype=dtype)
        self.multihead_attn = MultiheadAttention(d_model, nhead, dropout=dropout, bias=bias,
                                                 batch_first=batch_first, device=device,
                                                 dtype=dtype)
        self.linear1 = Linear(d_model, dim_feedforward, bias=bias, device=device, dtype=dtype)
        self.dropout = Dropout(dropout)
        self.linear2 = Linear(dim_feedforward, d_model, bias=bias, device=device, dtype=dtype)
        self.norm_first = norm_first
        self.norm1 = LayerNorm(d_model, eps=layer_norm_eps, bias=bias, device=device, dtype=dtype)
        self.norm2 = LayerNorm(d_model, eps=layer_norm_eps, bias=bias, device=device, dtype=dtype)
        self.norm3 = LayerNorm(d_model, eps=layer_norm_eps, bias=bias, device=device, dtype=dtype)
        self.dropout1 = Dropout(dropout)
        self.dropout2 = Dropout(dropout)
        self.dropout3 = Dropout(dropout)
        self.activation = _activation(activation)

    def _sa_block(self, x: Tensor, attn_mask, key_padding_mask, is_causal: bool) -> Tensor:
        x = self.self_attn(x, x, x, attn_mask=attn_mask, key_padding_mask=key_padding_mask,
                           need_weights=False, is_causal=is_causal)[0]
        return self.dropout1(x)

    def _mha_block(self, x: Tensor, mem: Tensor, attn_mask, key_padding_mask,
                   is_causal: bool) -> Tensor:
        x = self.multihead_attn(x, mem, mem, attn_mask=attn_mask,
                                key_padding_mask=key_padding_mask, need_weights=False,
                                is_causal=is_causal)[0]
        return self.dropout2(x)

    def _ff_block(self, x: Tensor) -> Tensor:
        return self.dropout3(self.linear2(self.dropout(self.activation(self.linear1(x)))))

    def forward(self, tgt: Tensor, memory: Tensor, tgt_mask: Tensor | None = None,
                memory_mask: Tensor | None = None, tgt_key_padding_mask: Tensor | None = None,
                memory_key_padding_mask: Tensor | None = None, tgt_is_causal: bool = False,
                memory_is_causal: bool = False) -> Tensor:
        x = tgt
        if self.norm_first:
            x = x + self._sa_block(self.norm1(x), tgt_mask, tgt_key_padding_mask, tgt_is_causal)
            x = x + self._mha_block(self.norm2(x), memory, memory_mask, memory_key_padding_mask,
                                    memory_is_causal)
            return x + self._ff_block(self.norm3(x))
        x = self.norm1(x + self._sa_block(x, tgt_mask, tgt_key_padding_mask, tgt_is_causal))
        x = self.norm2(x + self._mha_block(x, memory, memory_mask, memory_key_padding_mask,
                                           memory_is_causal))
        return self.norm3(x + self._ff_block(x))


class TransformerDecoder(Module):
    """``num_layers`` copies of a decoder layer applied in turn, then an optional norm."""

    def __init__(self, decoder_layer: TransformerDecoderLayer, num_layers: int,
                 norm: Module | None = None) -> None:
        super().__init__()
        self.layers = _get_clones(decoder_layer, num_layers)
        self.num_layers = num_layers
        self.norm = norm

    def forward(self, tgt: Tensor, memory: Tensor, tgt_mask: Tensor | None = None,
                memory_mask: Tensor | None = None, tgt_key_padding_mask: Tensor | None = None,
                memory_key_padding_mask: Tensor | None = None, tgt_is_causal: bool | None = None,
                memory_is_causal: bool = False) -> Tensor:
        out = tgt
        for layer in self.layers:
            out = layer(out, memory, tgt_mask=tgt_mask, memory_mask=memory_mask,
                        tgt_key_padding_mask=tgt_key_padding_mask,
                        memory_key_padding_mask=memory_key_padding_mask,
                        tgt_is_causal=bool(tgt_is_causal), memory_is_causal=memory_is_causal)
        return out if self.norm is None else self.norm(out)


class Transformer(Module):
    """An encoder over ``src`` and a decoder over ``tgt`` attending to the encoder's output
    (Vaswani et al., 2017); every weight matrix is initialised Xavier uniform."""

    def __init__(self, d_model: int = 512, nhead: int = 8, num_encoder_layers: int = 6,
                 num_decoder_layers: int = 6, dim_feedforward: int = 2048,
                 dropout: float = 0.1, activation: str | Callable = F.relu,
                 custom_encoder=None, custom_decoder=None, layer_norm_eps: float = 1e-5,
                 batch_first: bool = False, norm_first: bool = False, bias: bool = True,
                 device=None, dtype=None) -> None:
        super().__init__()
        layer_kwargs = {"dim_feedforward": dim_feedforward, "dropout": dropout,
                        "activation": activation, "layer_norm_eps": layer_norm_eps,
                        "batch_first": batch_first, "norm_first": norm_first, "bias": bias,
                        "device": device, "dtype": dtype}
        if custom_encoder is not None:
            self.encoder = custom_encoder
        else:
            self.encoder = TransformerEncoder(
                TransformerEncoderLayer(d_model, nhead, **layer_kwargs), num_encoder_layers,
                LayerNorm(d_model, eps=layer_norm_eps, bias=bias, device=device, dtype=dtype))
        if custom_decoder is not None:
            self.decoder = custom_decoder
        else:
            self.decoder = TransformerDecoder(
                TransformerDecoderLayer(d_model, nhead, **layer_kwargs), num_decoder_layers,
                LayerNorm(d_model, eps=layer_norm_eps, bias=bias, device=device, dtype=dtype))
        self._reset_parameters()
        self.d_model, self.nhead, self.batch_first = d_model, nhead, batch_first

    def _reset_parameters(self) -> None:
        for p in self.parameters():
            if p.dim() > 1:
                init.xavier_uniform_(p)

    @staticmethod
    def generate_square_subsequent_mask(sz: int, device=None, dtype=None) -> Tensor:
        """A causal mask: -inf above the diagonal (position i sees positions <= i), 0 elsewhere."""
        return _generate_square_subsequent_mask(sz, device, dtype)

    def forward(self, src: Tensor, tgt: Tensor, src_mask: Tensor | None = None,
                tgt_mask: Tensor | None = None, memory_mask: Tensor | None = None,
                src_key_padding_mask: Tensor | None = None,
                tgt_key_padding_mask: Tensor | None = None,
                memory_key_padding_mask: Tensor | None = None, src_is_causal: bool | None = None,
                tgt_is_causal: bool | None = None, memory_is_causal: bool = False) -> Tensor:
        batch_dim = 0 if self.batch_first else 1
        if src.dim() == 3 and src.shape[batch_dim] != tgt.shape[batch_dim]:
            raise RuntimeError("the batch number of src and tgt must be equal")
        if src.shape[-1] != self.d_model or tgt.shape[-1] != self.d_model:
            raise RuntimeError("the feature number of src and tgt must be equal to d_model")
        memory = self.encoder(src, mask=src_mask, src_key_padding_mask=src_key_padding_mask,
                              is_causal=src_is_causal)
        return self.decoder(tgt, memory, tgt_mask=tgt_mask, memory_mask=memory_mask,
                            tgt_key_padding_mask=tgt_key_padding_mask,
                            memory_key_padding_mask=memory_key_padding_mask,
                            tgt_is_causal=tgt_is_causal, memory_is_causal=memory_is_causal)
