"""MultiheadAttention, TransformerEncoderLayer and TransformerEncoder against torch."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import chainrule
import chainrule.nn as nn

from ._helpers import Case, copy_weights, data, run_twins, twin

E, HEADS, L, S, N = 8, 2, 4, 5, 3


def _padding_mask(batch=N, length=S, floats=False):
    def fn(r):
        mask = r.uniform(size=(batch, length)) < 0.4
        mask[:, 0] = False  # every query keeps a key, else the softmax is all -inf (NaN)
        return np.where(mask, -1e9, 0.0) if floats else mask

    return data(fn)


def _attn_mask(shape, floats=False):
    def fn(r):
        mask = r.uniform(size=shape) < 0.4
        mask[..., 0] = False
        return r.standard_normal(shape) if floats else mask

    return data(fn)


QKV = [(L, N, E), (S, N, E), (S, N, E)]

ATTENTION = [
    Case("MultiheadAttention", (E, HEADS), inputs=QKV),
    Case("MultiheadAttention", (E, 1), inputs=QKV),
    Case("MultiheadAttention", (E, HEADS), {"batch_first": True},
         inputs=[(N, L, E), (N, S, E), (N, S, E)]),
    Case("MultiheadAttention", (E, HEADS), inputs=[(L, E), (S, E), (S, E)], id="MHA-unbatched"),
    Case("MultiheadAttention", (E, HEADS), inputs=[(L, E), (S, E), (S, E)],
         forward_kwargs={"key_padding_mask": data(lambda r: np.array([0, 1, 0, 0, 1], bool)),
                         "average_attn_weights": False}, id="MHA-unbatched-masked"),
    Case("MultiheadAttention", (E, HEADS), inputs=QKV,
         forward_kwargs={"key_padding_mask": _padding_mask()}, id="MHA-key_padding_mask"),
    Case("MultiheadAttention", (E, HEADS), inputs=QKV,
         forward_kwargs={"key_padding_mask": _padding_mask(floats=True)},
         id="MHA-float-key_padding_mask"),
    Case("MultiheadAttention", (E, HEADS), inputs=QKV,
         forward_kwargs={"attn_mask": _attn_mask((L, S))}, id="MHA-bool-attn_mask"),
    Case("MultiheadAttention", (E, HEADS), inputs=QKV,
         forward_kwargs={"attn_mask": _attn_mask((L, S), floats=True)},
         id="MHA-float-attn_mask"),
    Case("MultiheadAttention", (E, HEADS), inputs=QKV,
         forward_kwargs={"attn_mask": _attn_mask((N * HEADS, L, S)),
                         "key_padding_mask": _padding_mask()}, id="MHA-3d-attn_mask-and-padding"),
    Case("MultiheadAttention", (E, HEADS), inputs=QKV,
         forward_kwargs={"need_weights": False}, id="MHA-no-weights"),
    Case("MultiheadAttention", (E, HEADS), inputs=QKV,
         forward_kwargs={"average_attn_weights": False}, id="MHA-per-head-weights"),
    Case("MultiheadAttention", (E, HEADS), {"kdim": 3, "vdim": 6},
         inputs=[(L, N, E), (S, N, 3), (S, N, 6)]),
    Case("MultiheadAttention", (E, HEADS), {"add_bias_kv": True, "add_zero_attn": True},
         inputs=QKV, forward_kwargs={"key_padding_mask": _padding_mask(),
                                     "attn_mask": _attn_mask((L, S))}, id="MHA-bias_kv-zero_attn"),
    Case("MultiheadAttention", (E, HEADS), {"add_bias_kv": True}, inputs=QKV),
    Case("MultiheadAttention", (E, HEADS), {"bias": False}, inputs=QKV),
    Case("MultiheadAttention", (E, HEADS), {"dropout": 0.3}, inputs=QKV, train=False),
]

SRC = [(L, N, E)]
ENCODER_LAYERS = [
    Case("TransformerEncoderLayer", (E, HEADS, 16), {"dropout": 0.0}, inputs=SRC),
    Case("TransformerEncoderLayer", (E, HEADS, 16), {"dropout": 0.0, "norm_first": True},
         inputs=SRC),
    Case("TransformerEncoderLayer", (E, HEADS, 16), {"dropout": 0.0, "activation": "gelu",
                                                     "batch_first": True}, inputs=[(N, L, E)]),
    Case("TransformerEncoderLayer", (E, HEADS, 16), {"dropout": 0.0, "bias": False,
                                                     "layer_norm_eps": 1e-3}, inputs=SRC),
    Case("TransformerEncoderLayer", (E, HEADS, 16), {"dropout": 0.0}, inputs=SRC,
         forward_kwargs={"src_mask": _attn_mask((L, L)),
                         "src_key_padding_mask": _padding_mask(N, L)}, id="EncoderLayer-masks"),
    Case("TransformerEncoderLayer", (E, HEADS, 16), inputs=SRC, train=False,
         id="EncoderLayer-eval"),
    Case("TransformerEncoderLayer", (E, HEADS, 16), {"dropout": 0.0}, inputs=[(L, E)],
         id="EncoderLayer-unbatched"),
]


@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize("case", ATTENTION + ENCODER_LAYERS, ids=lambda c: c.id)
def test_attention_like_torch(case: Case, dtype: str) -> None:
    run_twins(case, dtype)


def _encoder_pair(norm_first=False):
    theirs = torch.nn.TransformerEncoder(
        torch.nn.TransformerEncoderLayer(E, HEADS, 16, dropout=0.0, norm_first=norm_first), 2,
        norm=torch.nn.LayerNorm(E), enable_nested_tensor=False)
    ours = nn.TransformerEncoder(nn.TransformerEncoderLayer(E, HEADS, 16, dropout=0.0,
                                                            norm_first=norm_first), 2,
                                 norm=nn.LayerNorm(E))
    copy_weights(theirs, ours)
    return ours, theirs


@pytest.mark.parametrize("norm_first", [False, True])
@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_encoder_like_torch(dtype: str, norm_first: bool) -> None:
    case = Case("TransformerEncoder", inputs=SRC,
                forward_kwargs={"src_key_padding_mask": _padding_mask(N, L)})
    run_twins(case, dtype, pair=_encoder_pair(norm_first))


def test_encoder_layers_are_independent_copies() -> None:
    ours, theirs = _encoder_pair()
    assert repr(ours) == repr(theirs)
    assert list(ours.state_dict()) == list(theirs.state_dict())
    first, second = ours.layers[0].linear1.weight, ours.layers[1].linear1.weight
    assert first is not second
    np.testing.assert_array_equal(first.detach().numpy(), second.detach().numpy())


@pytest.mark.parametrize("case", ATTENTION + ENCODER_LAYERS, ids=lambda c: c.id)
def test_attention_repr_and_state_like_torch(case: Case) -> None:
    ours, theirs = twin(case.name, *case.args, **case.kwargs)
    assert repr(ours) == repr(theirs)
    assert [(k, tuple(v.shape)) for k, v in ours.state_dict().items()] == [
        (k, tuple(v.shape)) for k, v in theirs.state_dict().items()]


def test_encoder_layer_with_an_activation_module() -> None:
    ours = nn.TransformerEncoderLayer(E, HEADS, 16, activation=nn.GELU())
    theirs = torch.nn.TransformerEncoderLayer(E, HEADS, 16, activation=torch.nn.GELU())
    assert repr(ours) == repr(theirs)
    with pytest.raises(RuntimeError, match="activation should be relu/gelu, not tanh"):
        nn.TransformerEncoderLayer(E, HEADS, activation="tanh")


def test_attention_init() -> None:
    chainrule.manual_seed(0)
    mha = nn.MultiheadAttention(64, 4, add_bias_kv=True)
    bound = np.sqrt(6 / (64 + 3 * 64))  # xavier_uniform_ on the packed (3E, E) weight
    w = mha.in_proj_weight.detach().numpy()
    assert np.abs(w).max() <= bound and np.abs(w).max() > 0.95 * bound
    assert not mha.in_proj_bias.detach().numpy().any()
    assert not mha.out_proj.bias.detach().numpy().any()
    out_bound = 1 / np.sqrt(64)  # out_proj keeps Linear's init
    assert np.abs(mha.out_proj.weight.detach().numpy()).max() <= out_bound
    assert mha.bias_k.shape == (1, 1, 64)


def test_attention_errors() -> None:
    with pytest.raises(AssertionError, match="embed_dim must be divisible by num_heads"):
        nn.MultiheadAttention(6, 4)
    mha = nn.MultiheadAttention(E, HEADS)
    x = chainrule.randn(L, N, E)
    with pytest.raises(RuntimeError, match="Need attn_mask if specifying the is_causal hint"):
        mha(x, x, x, is_causal=True)
    causal = chainrule.tensor(np.triu(np.ones((L, L), bool), 1))
    out, weights = mha(x, x, x, attn_mask=causal, is_causal=True)
    assert not np.triu(weights.detach().numpy()[0], 1).any()


def _causal(size):
    return data(lambda r: np.triu(np.full((size, size), -np.inf), 1))


def _bool_causal(size):
    return data(lambda r: np.triu(np.ones((size, size), bool), 1))


TGT_MEM = [(L, N, E), (S, N, E)]
DECODER_LAYERS = [
    Case("TransformerDecoderLayer", (E, HEADS, 16), {"dropout": 0.0}, inputs=TGT_MEM),
    Case("TransformerDecoderLayer", (E, HEADS, 16), {"dropout": 0.0, "norm_first": True},
         inputs=TGT_MEM),
    Case("TransformerDecoderLayer", (E, HEADS, 16), {"dropout": 0.0, "activation": "gelu",
                                                     "batch_first": True},
         inputs=[(N, L, E), (N, S, E)]),
    Case("TransformerDecoderLayer", (E, HEADS, 16), {"dropout": 0.0, "bias": False,
                                                     "layer_norm_eps": 1e-3}, inputs=TGT_MEM),
    Case("TransformerDecoderLayer", (E, HEADS, 16), {"dropout": 0.0}, inputs=TGT_MEM,
         forward_kwargs={"tgt_mask": _causal(L), "tgt_is_causal": True,
                         "memory_mask": _attn_mask((L, S)),
                         "tgt_key_padding_mask": _padding_mask(N, L),
                         "memory_key_padding_mask": _padding_mask(N, S)},
         id="DecoderLayer-masks"),
    Case("TransformerDecoderLayer", (E, HEADS, 16), {"dropout": 0.0}, inputs=TGT_MEM,
         forward_kwargs={"tgt_mask": _bool_causal(L),
                         "memory_key_padding_mask": _padding_mask(N, S, floats=True)},
         id="DecoderLayer-bool-tgt_mask-float-padding"),
    Case("TransformerDecoderLayer", (E, HEADS, 16), inputs=TGT_MEM, train=False,
         id="DecoderLayer-eval"),
    Case("TransformerDecoderLayer", (E, HEADS, 16), {"dropout": 0.0}, inputs=[(L, E), (S, E)],
         id="DecoderLayer-unbatched"),
]

TRANSFORMERS = [
    Case("Transformer", (E, HEADS, 2, 2, 16), {"dropout": 0.0}, inputs=[(S, N, E), (L, N, E)]),
    Case("Transformer", (E, HEADS, 1, 2, 16), {"dropout": 0.0, "norm_first": True,
                                               "activation": "gelu"},
         inputs=[(S, N, E), (L, N, E)]),
    Case("Transformer", (E, HEADS, 2, 1, 16), {"dropout": 0.0, "batch_first": True,
                                               "bias": False, "layer_norm_eps": 1e-4},
         inputs=[(N, S, E), (N, L, E)],
         forward_kwargs={"tgt_mask": _causal(L), "src_key_padding_mask": _padding_mask(N, S)},
         id="Transformer-batch_first-causal-padding"),
    Case("Transformer", (E, HEADS, 1, 1, 16), {"dropout": 0.0}, inputs=[(S, N, E), (L, N, E)],
         forward_kwargs={"src_mask": _attn_mask((S, S)), "tgt_mask": _causal(L),
                         "memory_mask": _attn_mask((L, S), floats=True),
                         "src_key_padding_mask": _padding_mask(N, S),
                         "tgt_key_padding_mask": _padding_mask(N, L),
                         "memory_key_padding_mask": _padding_mask(N, S),
                         "tgt_is_causal": True},
         id="Transformer-all-masks"),
    Case("Transformer", (E, HEADS, 1, 1, 16), inputs=[(S, N, E), (L, N, E)], train=False,
         id="Transformer-eval"),
    Case("Transformer", (E, HEADS, 1, 1, 16), {"dropout": 0.0}, inputs=[(S, E), (L, E)],
         id="Transformer-unbatched"),
]


@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize("case", DECODER_LAYERS + TRANSFORMERS, ids=lambda c: c.id)
def test_decoder_like_torch(case: Case, dtype: str) -> None:
    run_twins(case, dtype)


@pytest.mark.parametrize("case", DECODER_LAYERS + TRANSFORMERS, ids=lambda c: c.id)
def test_decoder_repr_and_state_like_torch(case: Case) -> None:
    ours, theirs = twin(case.name, *case.args, **case.kwargs)
    assert repr(ours) == repr(theirs)
    assert [(k, tuple(v.shape)) for k, v in ours.state_dict().items()] == [
        (k, tuple(v.shape)) for k, v in theirs.state_dict().items()]


def _decoder_pair(norm_first=False, norm=True):
    theirs = torch.nn.TransformerDecoder(
        torch.nn.TransformerDecoderLayer(E, HEADS, 16, dropout=0.0, norm_first=norm_first), 2,
        norm=torch.nn.LayerNorm(E) if norm else None)
    ours = nn.TransformerDecoder(nn.TransformerDecoderLayer(E, HEADS, 16, dropout=0.0,
                                                            norm_first=norm_first), 2,
                                 norm=nn.LayerNorm(E) if norm else None)
    copy_weights(theirs, ours)
    return ours, theirs


@pytest.mark.parametrize("norm_first, norm", [(False, True), (True, True), (False, False)])
@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_decoder_stack_like_torch(dtype: str, norm_first: bool, norm: bool) -> None:
    case = Case("TransformerDecoder", inputs=TGT_MEM,
                forward_kwargs={"tgt_mask": _causal(L),
                                "memory_key_padding_mask": _padding_mask(N, S)})
    pair = _decoder_pair(norm_first, norm)
    assert repr(pair[0]) == repr(pair[1])
    run_twins(case, dtype, pair=pair)


def test_transformer_with_custom_encoder_and_decoder() -> None:
    theirs = torch.nn.Transformer(E, HEADS, dim_feedforward=16, dropout=0.0,
                                  custom_encoder=torch.nn.Identity(),
                                  custom_decoder=torch.nn.Linear(E, E))
    ours = nn.Transformer(E, HEADS, dim_feedforward=16, dropout=0.0,
                          custom_encoder=nn.Identity(), custom_decoder=nn.Linear(E, E))
    assert repr(ours) == repr(theirs)
    assert list(ours.state_dict()) == list(theirs.state_dict()) == ["decoder.weight",
                                                                    "decoder.bias"]
    # the custom decoder's weight is redrawn Xavier uniform, its bias (1-D) is not
    bound = np.sqrt(6 / (E + E))
    w = ours.decoder.weight.detach().numpy()
    assert np.abs(w).max() <= bound and np.abs(w).max() > 1 / np.sqrt(E)
    assert (ours.d_model, ours.nhead, ours.batch_first) == (E, HEADS, False)


def test_transformer_init_is_xavier_on_matrices() -> None:
    chainrule.manual_seed(0)
    model = nn.Transformer(16, 2, 1, 1, 64, dropout=0.0)
    w = model.encoder.layers[0].linear1.weight.detach().numpy()  # (64, 16)
    bound = np.sqrt(6 / (16 + 64))
    assert np.abs(w).max() <= bound and np.abs(w).max() > 0.95 * bound
    np.testing.assert_array_equal(model.decoder.norm.weight.detach().numpy(), np.ones(16))


@pytest.mark.parametrize("dtype", [None, "float64", "float32"])
@pytest.mark.parametrize("size", [0, 1, 4])
def test_generate_square_subsequent_mask_like_torch(size: int, dtype) -> None:
    ours = nn.Transformer.generate_square_subsequent_mask(
        size, dtype=None if dtype is None else getattr(chainrule, dtype))
    theirs = torch.nn.Transformer.generate_square_subsequent_mask(
        size, dtype=None if dtype is None else getattr(torch, dtype))
    assert str(ours.dtype) == str(theirs.dtype)
    assert repr(ours) == repr(theirs)
    np.testing.assert_array_equal(ours.numpy(), theirs.numpy())


def _error(fn_ours, fn_theirs):
    with pytest.raises(Exception) as theirs:
        fn_theirs()
    with pytest.raises(theirs.type) as ours:
        fn_ours()
    assert str(ours.value) == str(theirs.value)


@pytest.mark.parametrize("src, tgt, batch_first", [
    ((S, N, E), (L, N + 1, E), False), ((N, S, E), (N + 1, L, E), True),
    ((S, N, E), (L, N, E + 2), False), ((S, N, E), (L, E), False)])
def test_transformer_shape_errors_like_torch(src, tgt, batch_first) -> None:
    ours, theirs = twin("Transformer", E, HEADS, 1, 1, 16, batch_first=batch_first)
    _error(lambda: ours(chainrule.randn(*src), chainrule.randn(*tgt)),
           lambda: theirs(torch.randn(*src), torch.randn(*tgt)))


def test_decoder_is_causal_without_a_mask_like_torch() -> None:
    ours, theirs = twin("TransformerDecoderLayer", E, HEADS, 16)
    _error(lambda: ours(chainrule.randn(L, N, E), chainrule.randn(S, N, E), tgt_is_causal=True),
           lambda: theirs(torch.randn(L, N, E), torch.randn(S, N, E), tgt_is_causal=True))
    with pytest.raises(RuntimeError, match="activation should be relu/gelu, not tanh"):
        nn.TransformerDecoderLayer(E, HEADS, activation="tanh")


def test_decoder_layer_with_an_activation_module_like_torch() -> None:
    ours = nn.TransformerDecoderLayer(E, HEADS, 16, activation=nn.GELU())
    theirs = torch.nn.TransformerDecoderLayer(E, HEADS, 16, activation=torch.nn.GELU())
    assert repr(ours) == repr(theirs)
    assert list(ours.state_dict()) == list(theirs.state_dict())


def test_decoder_layer_second_derivatives() -> None:
    chainrule.manual_seed(0)
    layer = nn.TransformerDecoderLayer(4, 2, 8, dropout=0.0, norm_first=True).double()
    tgt = chainrule.randn(2, 1, 4, dtype=chainrule.float64, requires_grad=True)
    memory = chainrule.randn(3, 1, 4, dtype=chainrule.float64, requires_grad=True)
    mask = nn.Transformer.generate_square_subsequent_mask(2, dtype=chainrule.float64)

    def fn(tgt, memory):
        return layer(tgt, memory, tgt_mask=mask, tgt_is_causal=True)

    assert chainrule.autograd.gradcheck(fn, (tgt, memory))
    assert chainrule.autograd.gradgradcheck(fn, (tgt, memory))
