"""Activation modules: each one calls its function in nn.functional."""

from __future__ import annotations

import math
import warnings

from ... import _creation
from ...ops.elementwise import where
from ...ops.shape import cat
from ...tensor import Tensor
from .. import functional as F
from .. import init
from ..parameter import Parameter
from .linear import NonDynamicallyQuantizableLinear
from .module import Module

__all__ = ["ReLU", "ReLU6", "LeakyReLU", "PReLU", "RReLU", "ELU", "SELU", "CELU", "GELU", "SiLU",
           "Mish", "Softplus", "Softsign", "Hardtanh", "Hardsigmoid", "Hardswish", "Tanh",
           "Sigmoid", "LogSigmoid", "Softmax", "LogSoftmax", "Softmin", "Softmax2d", "GLU",
           "Threshold", "Hardshrink", "Softshrink", "Tanhshrink", "MultiheadAttention"]


class _Inplace(Module):
    """An activation with an ``inplace`` flag, shown in the repr only when set."""

    def __init__(self, inplace: bool = False) -> None:
        super().__init__()
        self.inplace = inplace

    def _inplace_repr(self, sep: str = ", ") -> str:
        return f"{sep}inplace=True" if self.inplace else ""

    def extra_repr(self) -> str:
        return self._inplace_repr(sep="")


class ReLU(_Inplace):
    """max(0, x)."""

    def forward(self, input: Tensor) -> Tensor:
        return F.relu(input, inplace=self.inplace)


class Hardtanh(_Inplace):
    """x clamped to [min_val, max_val]."""

    def __init__(self, min_val: float = -1.0, max_val: float = 1.0, inplace: bool = False,
                 min_value: float | None = None, max_value: float | None = None) -> None:
        super().__init__(inplace)
        for old, new, value in (("min_value", "min_val", min_value),
                                ("max_value", "max_val", max_value)):
            if value is not None:
                warnings.warn(f"keyword argument `{old}` is deprecated and renamed to `{new}`",
                              FutureWarning, stacklevel=2)
        min_val = min_val if min_value is None else min_value
        max_val = max_val if max_value is None else max_value
        if max_val <= min_val:
            raise AssertionError(f"max_val ({max_val}) must be greater than min_val ({min_val})")
        self.min_val, self.max_val = min_val, max_val

    def forward(self, input: Tensor) -> Tensor:
        return F.hardtanh(input, self.min_val, self.max_val, self.inplace)

    def extra_repr(self) -> str:
        return f"min_val={self.min_val}, max_val={self.max_val}{self._inplace_repr()}"


class ReLU6(Hardtanh):
    """min(max(0, x), 6)."""

    def __init__(self, inplace: bool = False) -> None:
        super().__init__(0.0, 6.0, inplace)

    def extra_repr(self) -> str:
        return self._inplace_repr(sep="")


class LeakyReLU(_Inplace):
    """x for x ≥ 0, negative_slope · x otherwise."""

    def __init__(self, negative_slope: float = 1e-2, inplace: bool = False) -> None:
        super().__init__(inplace)
        self.negative_slope = negative_slope

    def forward(self, input: Tensor) -> Tensor:
        return F.leaky_relu(input, self.negative_slope, self.inplace)

    def extra_repr(self) -> str:
        return f"negative_slope={self.negative_slope}{self._inplace_repr()}"


class PReLU(Module):
    """x for x ≥ 0, a · x otherwise, with a learned slope a (one, or one per channel)."""

    def __init__(self, num_parameters: int = 1, init: float = 0.25, device=None,
                 dtype=None) -> None:
        super().__init__()
        self.num_parameters, self.init = num_parameters, init
        self.weight = Parameter(_creation.empty(num_parameters, device=device, dtype=dtype))
        self.reset_parameters()

    def reset_parameters(self) -> None:
        init.constant_(self.weight, self.init)

    def forward(self, input: Tensor) -> Tensor:
        return F.prelu(input, self.weight)

    def extra_repr(self) -> str:
        return f"num_parameters={self.num_parameters}"


class RReLU(_Inplace):
    """LeakyReLU with a random slope from U(lower, upper) in training, their mean in eval."""

    def __init__(self, lower: float = 1.0 / 8, upper: float = 1.0 / 3,
                 inplace: bool = False) -> None:
        super().__init__(inplace)
        self.lower, self.upper = lower, upper

    def forward(self, input: Tensor) -> Tensor:
        return F.rrelu(input, self.lower, self.upper, self.training, self.inplace)

    def extra_repr(self) -> str:
        return f"lower={self.lower}, upper={self.upper}{self._inplace_repr()}"


class Threshold(_Inplace):
    """x where x > threshold, ``value`` elsewhere."""

    def __init__(self, threshold: float, value: float, inplace: bool = False) -> None:
        super().__init__(inplace)
        self.threshold, self.value = threshold, value

    def forward(self, input: Tensor) -> Tensor:
        return F.threshold(input, self.threshold, self.value, self.inplace)

    def extra_repr(self) -> str:
        return f"threshold={self.threshold}, value={self.value}{self._inplace_repr()}"


class _Shrink(Module):
    def __init__(self, lambd: float = 0.5) -> None:
        super().__init__()
        self.lambd = lambd

    def extra_repr(self) -> str:
        return f"{self.lambd}"


class Hardshrink(_Shrink):
    """x where |x| > lambd, 0 elsewhere."""

    def forward(self, input: Tensor) -> Tensor:
        return F.hardshrink(input, self.lambd)


class Softshrink(_Shrink):
    """x - sign(x) · lambd where |x| > lambd, 0 elsewhere."""

    def forward(self, input: Tensor) -> Tensor:
        return F.softshrink(input, self.lambd)


class Tanhshrink(Module):
    """x - tanh(x)."""

    def forward(self, input: Tensor) -> Tensor:
        return F.tanhshrink(input)


class ELU(_Inplace):
    """x for x > 0, alpha · (exp(x) - 1) otherwise."""

    def __init__(self, alpha: float = 1.0, inplace: bool = False) -> None:
        super().__init__(inplace)
        self.alpha = alpha

    def forward(self, input: Tensor) -> Tensor:
        return F.elu(input, self.alpha, self.inplace)

    def extra_repr(self) -> str:
        return f"alpha={self.alpha}{self._inplace_repr()}"


class CELU(ELU):
    """max(0, x) + min(0, alpha · (exp(x / alpha) - 1))."""

    def forward(self, input: Tensor) -> Tensor:
        return F.celu(input, self.alpha, self.inplace)


class SELU(_Inplace):
    """scale · ELU(x, alpha) with the self-normalising constants."""

    def forward(self, input: Tensor) -> Tensor:
        return F.selu(input, self.inplace)


class GELU(Module):
    """x · Φ(x), exactly or with the tanh approximation."""

    def __init__(self, approximate: str = "none") -> None:
        super().__init__()
        self.approximate = approximate

    def forward(self, input: Tensor) -> Tensor:
        return F.gelu(input, approximate=self.approximate)

    def extra_repr(self) -> str:
        return f"approximate={self.approximate!r}"


class SiLU(_Inplace):
    """x · sigmoid(x)."""

    def forward(self, input: Tensor) -> Tensor:
        return F.silu(input, inplace=self.inplace)


class Mish(_Inplace):
    """x · tanh(softplus(x))."""

    def forward(self, input: Tensor) -> Tensor:
        return F.mish(input, inplace=self.inplace)


class Hardsigmoid(_Inplace):
    """Piecewise-linear sigmoid: clamp(x / 6 + 1 / 2, 0, 1)."""

    def forward(self, input: Tensor) -> Tensor:
        return F.hardsigmoid(input, self.inplace)

    def extra_repr(self) -> str:
        return ""


class Hardswish(_Inplace):
    """x · hardsigmoid(x)."""

    def forward(self, input: Tensor) -> Tensor:
        return F.hardswish(input, self.inplace)

    def extra_repr(self) -> str:
        return ""


class Softplus(Module):
    """log(1 + exp(beta · x)) / beta, linear above ``threshold``."""

    def __init__(self, beta: float = 1.0, threshold: float = 20.0) -> None:
        super().__init__()
        self.beta, self.threshold = beta, threshold

    def forward(self, input: Tensor) -> Tensor:
        return F.softplus(input, self.beta, self.threshold)

    def extra_repr(self) -> str:
        return f"beta={self.beta}, threshold={self.threshold}"


class Softsign(Module):
    """x / (1 + |x|)."""

    def forward(self, input: Tensor) -> Tensor:
        return F.softsign(input)


class Tanh(Module):
    """tanh(x)."""

    def forward(self, input: Tensor) -> Tensor:
        return input.tanh()


class Sigmoid(Module):
    """1 / (1 + exp(-x))."""

    def forward(self, input: Tensor) -> Tensor:
        return input.sigmoid()


class LogSigmoid(Module):
    """log(sigmoid(x))."""

    def forward(self, input: Tensor) -> Tensor:
        return F.logsigmoid(input)


class _SoftmaxBase(Module):
    def __init__(self, dim: int | None = None) -> None:
        super().__init__()
        self.dim = dim

    def extra_repr(self) -> str:
        return f"dim={self.dim}"


class Softmax(_SoftmaxBase):
    """exp(x) normalised to sum to 1 along ``dim``."""

    def forward(self, input: Tensor) -> Tensor:
        return F.softmax(input, self.dim)


class LogSoftmax(_SoftmaxBase):
    """log(softmax(x)) along ``dim``."""

    def forward(self, input: Tensor) -> Tensor:
        return F.log_softmax(input, self.dim)


class Softmin(_SoftmaxBase):
    """softmax(-x) along ``dim``."""

    def forward(self, input: Tensor) -> Tensor:
        return F.softmin(input, self.dim)


class Softmax2d(Module):
    """Softmax over the channels of (N, C, H, W) or (C, H, W) inputs."""

    def forward(self, input: Tensor) -> Tensor:
        if input.dim() not in (3, 4):
            raise ValueError(f"Softmax2d: expected input to be 3D or 4D, got {input.dim()}D "
                             "instead")
        return F.softmax(input, -3)


class GLU(Module):
    """a · sigmoid(b), where a and b are the two halves of the input along ``dim``."""

    def __init__(self, dim: int = -1) -> None:
        super().__init__()
        self.dim = dim

    def forward(self, input: Tensor) -> Tensor:
        return F.glu(input, self.dim)

    def extra_repr(self) -> str:
        return f"dim={self.dim}"


def _additive_mask(mask: Tensor | None, dtype) -> Tensor | None:
    """A mask to add to attention scores: bool True (masked out) becomes -inf, floats stay."""
    if mask is None or mask.is_floating_point():
        return mask
    zeros = _creation.zeros(*mask.shape, dtype=dtype)
    return where(mask, zeros - math.inf, zeros)


def _pad_last(mask: Tensor | None) -> Tensor | None:
    """The mask with one more key position at the end, not masked (for bias_k / zero_attn)."""
    if mask is None:
        return None
    return cat([mask, _creation.zeros(*mask.shape[:-1], 1, dtype=mask.dtype)], -1)


class MultiheadAttention(Module):
    """Attention over ``num_heads`` heads: softmax(q kᵀ / √d + mask) v, projected back.

    The q/k/v projections are packed in ``in_proj_weight`` (3E × E) when key and value have the
    query's size, as in PyTorch; otherwise they are q_proj_weight, k_proj_weight, v_proj_weight.
    """

    def __init__(self, embed_dim: int, num_heads: int, dropout: float = 0.0, bias: bool = True,
                 add_bias_kv: bool = False, add_zero_attn: bool = False, kdim: int | None = None,
                 vdim: int | None = None, batch_first: bool = False, device=None,
                 dtype=None) -> None:
        super().__init__()
        if embed_dim <= 0 or num_heads <= 0:
            raise ValueError(f"embed_dim and num_heads must be greater than 0, got "
                             f"embed_dim={embed_dim} and num_heads={num_heads} instead")
        self.embed_dim, self.num_heads = embed_dim, num_heads
        self.kdim = embed_dim if kdim is None else kdim
        self.vdim = embed_dim if vdim is None else vdim
        self._qkv_same_embed_dim = self.kdim == embed_dim and self.vdim == embed_dim
        self.dropout, self.batch_first = dropout, batch_first
        self.head_dim = embed_dim // num_heads
        if self.head_dim * num_heads != embed_dim:
            raise AssertionError("embed_dim must be divisible by num_heads")
        empty = lambda *shape: Parameter(_creation.empty(*shape, device=device, dtype=dtype))
        if self._qkv_same_embed_dim:
            self.in_proj_weight = empty(3 * embed_dim, embed_dim)
            for name in ("q_proj_weight", "k_proj_weight", "v_proj_weight"):
                self.register_parameter(name, None)
        else:
            self.q_proj_weight = empty(embed_dim, embed_dim)
            self.k_proj_weight = empty(embed_dim, self.kdim)
            self.v_proj_weight = empty(embed_dim, self.vdim)
            self.register_parameter("in_proj_weight", None)
        if bias:
            self.in_proj_bias = empty(3 * embed_dim)
        else:
            self.register_parameter("in_proj_bias", None)
        self.out_proj = NonDynamicallyQuantizableLinear(embed_dim, embed_dim, bias=bias,
                                                        device=device, dtype=dtype)
        if add_bias_kv:
            self.bias_k = empty(1, 1, embed_dim)
            self.bias_v = empty(1, 1, embed_dim)
        else:
            self.bias_k = self.bias_v = None
        self.add_zero_attn = add_zero_attn
        self._reset_parameters()

    def _reset_parameters(self) -> None:
        if self._qkv_same_embed_dim:
            init.xavier_uniform_(self.in_proj_weight)
        else:
            for w in (self.q_proj_weight, self.k_proj_weight, self.v_proj_weight):
                init.xavier_uniform_(w)
        if self.in_proj_bias is not None:
            init.constant_(self.in_proj_bias, 0.0)
            init.constant_(self.out_proj.bias, 0.0)
        if self.bias_k is not None:
            init.xavier_normal_(self.bias_k)
            init.xavier_normal_(self.bias_v)

    def _projections(self) -> tuple:
        """(weight, bias) of the q, k and v projections."""
        e = self.embed_dim
        b = self.in_proj_bias
        biases = (None,) * 3 if b is None else (b[:e], b[e:2 * e], b[2 * e:])
        if self._qkv_same_embed_dim:
            w = self.in_proj_weight
            weights = (w[:e], w[e:2 * e], w[2 * e:])
        else:
            weights = (self.q_proj_weight, self.k_proj_weight, self.v_proj_weight)
        return tuple(zip(weights, biases))

    def forward(self, query: Tensor, key: Tensor, value: Tensor,
                key_padding_mask: Tensor | None = None, need_weights: bool = True,
                attn_mask: Tensor | None = None, average_attn_weights: bool = True,
                is_causal: bool = False) -> tuple[Tensor, Tensor | None]:
        if is_causal and attn_mask is None:
            raise RuntimeError("Need attn_mask if specifying the is_causal hint. You may use "
                               "the Transformer module method `generate_square_subsequent_mask` "
                               "to create this mask.")
        batched = query.dim() == 3
        if not batched:  # (L, E): a batch of one, and (S,) padding masks become (1, S)
            query, key, value = query.unsqueeze(1), key.unsqueeze(1), value.unsqueeze(1)
            if key_padding_mask is not None:
                key_padding_mask = key_padding_mask.unsqueeze(0)
        elif self.batch_first:
            query, key, value = (x.transpose(0, 1) for x in (query, key, value))
        tgt_len, bsz, embed_dim = query.shape
        if embed_dim != self.embed_dim:
            raise AssertionError(f"was expecting embedding dimension of {self.embed_dim}, but "
                                 f"got {embed_dim}")
        heads, head_dim = self.num_heads, self.head_dim
        (wq, bq), (wk, bk), (wv, bv) = self._projections()
        q, k, v = F.linear(query, wq, bq), F.linear(key, wk, bk), F.linear(value, wv, bv)

        attn_mask = _additive_mask(attn_mask, q.dtype)
        key_padding_mask = _additive_mask(key_padding_mask, q.dtype)
        if attn_mask is not None and attn_mask.dim() == 2:
            attn_mask = attn_mask.unsqueeze(0)
        if self.bias_k is not None:
            k = cat([k, self.bias_k.expand(1, bsz, embed_dim)], 0)
            v = cat([v, self.bias_v.expand(1, bsz, embed_dim)], 0)
            attn_mask, key_padding_mask = _pad_last(attn_mask), _pad_last(key_padding_mask)

        # (L, N, E) -> (N * heads, L, head_dim)
        q = q.reshape(tgt_len, bsz * heads, head_dim).transpose(0, 1)
        k = k.reshape(k.shape[0], bsz * heads, head_dim).transpose(0, 1)
        v = v.reshape(v.shape[0], bsz * heads, head_dim).transpose(0, 1)
        if self.add_zero_attn:
            k = cat([k, _creation.zeros(bsz * heads, 1, head_dim, dtype=k.dtype)], 1)
            v = cat([v, _creation.zeros(bsz * heads, 1, head_dim, dtype=v.dtype)], 1)
            attn_mask, key_padding_mask = _pad_last(attn_mask), _pad_last(key_padding_mask)
        src_len = k.shape[1]

        scores = (q * (1.0 / math.sqrt(head_dim))).matmul(k.transpose(1, 2))
        if key_padding_mask is not None:
            padding = key_padding_mask.reshape(bsz, 1, 1, src_len)
            scores = (scores.reshape(bsz, heads, tgt_len, src_len) + padding).reshape(
                bsz * heads, tgt_len, src_len)
        if attn_mask is not None:
            scores = scores + attn_mask
        weights = F.softmax(scores, -1)
        if self.dropout > 0.0:
            weights = F.dropout(weights, self.dropout, self.training)
        out = weights.matmul(v).transpose(0, 1).reshape(tgt_len * bsz, embed_dim)
        out = self.out_proj(out).reshape(tgt_len, bsz, embed_dim)
        if not batched:
            out = out.squeeze(1)
        elif self.batch_first:
            out = out.transpose(0, 1)
        if not need_weights:
            return out, None
        weights = weights.reshape(bsz, heads, tgt_len, src_len)
        if average_attn_weights:
            weights = weights.mean(1)
        return out, (weights if batched else weights.squeeze(0))
