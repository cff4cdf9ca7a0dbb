"""Every layer against torch: same weights, same inputs; outputs, input and parameter gradients.

One row per configuration. Each row runs in float64 (tight) and float32 (PyTorch's default).
"""

from __future__ import annotations

import numpy as np
import pytest
import torch

import chainrule
import chainrule.nn as nn

from . import test_modules_more
from ._helpers import Case, data, grad, run_twins, twin


def _ints(high, shape):
    return data(lambda r: r.integers(0, high, shape))


def _probs(shape, dim=-1):
    def fn(r):
        x = np.exp(r.standard_normal(shape))
        return x / x.sum(axis=dim, keepdims=True)

    return fn


def _signs(shape):
    return data(lambda r: r.choice([-1.0, 1.0], shape))


ACTIVATIONS = [
    Case("ReLU", inputs=[(3, 5)]),
    Case("ReLU6", inputs=[grad(lambda r: 4 * r.standard_normal((3, 5)))]),
    Case("LeakyReLU", inputs=[(3, 5)]),
    Case("LeakyReLU", (0.2,), inputs=[(3, 5)]),
    Case("ELU", inputs=[(3, 5)]),
    Case("ELU", (0.5,), inputs=[(3, 5)]),
    Case("SELU", inputs=[(3, 5)]),
    # torch's float64 derivatives of these use float32 constants (relative error ~3e-8)
    Case("CELU", (0.7,), inputs=[(3, 5)], rtol64=1e-7),
    Case("GELU", inputs=[(3, 5)]),
    Case("GELU", ("tanh",), inputs=[(3, 5)]),
    Case("SiLU", inputs=[(3, 5)]),
    Case("Mish", inputs=[(3, 5)]),
    Case("Softplus", inputs=[(3, 5)]),
    Case("Softplus", (2.0, 1.0), inputs=[(3, 5)]),
    Case("Softsign", inputs=[(3, 5)]),
    Case("Hardtanh", inputs=[grad(lambda r: 2 * r.standard_normal((3, 5)))]),
    Case("Hardtanh", (-0.5, 2.0), inputs=[grad(lambda r: 2 * r.standard_normal((3, 5)))]),
    Case("Hardsigmoid", inputs=[grad(lambda r: 4 * r.standard_normal((3, 5)))], rtol64=1e-7),
    Case("Hardswish", inputs=[grad(lambda r: 4 * r.standard_normal((3, 5)))]),
    Case("Tanh", inputs=[(3, 5)]),
    Case("Sigmoid", inputs=[(3, 5)]),
    Case("LogSigmoid", inputs=[(3, 5)]),
    Case("Softmax", (1,), inputs=[(3, 5)]),
    Case("Softmax", (0,), inputs=[(3, 5, 2)]),
    Case("LogSoftmax", (-1,), inputs=[(3, 5)]),
    Case("Softmin", (1,), inputs=[(3, 5)]),
    Case("GLU", inputs=[(3, 6)]),
    Case("GLU", (0,), inputs=[(4, 3)]),
    Case("PReLU", inputs=[(2, 3, 4)]),
    Case("PReLU", (3, 0.1), inputs=[(2, 3, 4)]),
    Case("RReLU", inputs=[(3, 5)], train=False, id="RReLU-eval"),
    Case("Threshold", (0.1, 20.0), inputs=[(3, 5)]),
    Case("Hardshrink", inputs=[(3, 5)]),
    Case("Softshrink", (0.3,), inputs=[(3, 5)]),
    Case("Tanhshrink", inputs=[(3, 5)]),
    Case("Softmax2d", inputs=[(2, 3, 4, 4)]),
    Case("Softmax2d", inputs=[(3, 4, 4)], id="Softmax2d-unbatched"),
]

LOSSES = [
    *(Case("MSELoss", kwargs={"reduction": r}, inputs=[(4, 3), (4, 3)])
      for r in ("mean", "sum", "none")),
    *(Case("L1Loss", kwargs={"reduction": r}, inputs=[(4, 3), (4, 3)]) for r in ("mean", "none")),
    Case("SmoothL1Loss", inputs=[(4, 3), (4, 3)]),
    Case("SmoothL1Loss", kwargs={"beta": 0.5, "reduction": "sum"}, inputs=[(4, 3), (4, 3)]),
    Case("HuberLoss", inputs=[(4, 3), (4, 3)]),
    Case("HuberLoss", kwargs={"delta": 0.5, "reduction": "none"}, inputs=[(4, 3), (4, 3)]),
    Case("CrossEntropyLoss", inputs=[(4, 5), _ints(5, 4)]),
    Case("CrossEntropyLoss", kwargs={"reduction": "none"}, inputs=[(4, 5), _ints(5, 4)]),
    Case("CrossEntropyLoss", kwargs={"weight": torch.tensor([1.0, 2.0, 0.5, 1.5, 3.0])},
         inputs=[(4, 5), _ints(5, 4)], id="CrossEntropyLoss-weight"),
    Case("CrossEntropyLoss", kwargs={"ignore_index": 1},
         inputs=[(6, 3), data(lambda r: np.array([0, 1, 2, 1, 0, 2]))]),
    Case("CrossEntropyLoss", kwargs={"label_smoothing": 0.1}, inputs=[(4, 5), _ints(5, 4)]),
    Case("CrossEntropyLoss", inputs=[(2, 5, 3), _ints(5, (2, 3))], id="CrossEntropyLoss-Kdim"),
    Case("CrossEntropyLoss", inputs=[(4, 5), data(_probs((4, 5)))], id="CrossEntropyLoss-probs"),
    Case("NLLLoss", inputs=[(4, 5), _ints(5, 4)]),
    Case("NLLLoss", kwargs={"weight": torch.tensor([1.0, 2.0, 0.5]), "reduction": "sum"},
         inputs=[(5, 3), _ints(3, 5)], id="NLLLoss-weight-sum"),
    Case("BCELoss", inputs=[grad(lambda r: r.uniform(0.05, 0.95, (4, 3))),
                            data(lambda r: r.uniform(0, 1, (4, 3)))]),
    Case("BCELoss", kwargs={"weight": torch.tensor([1.0, 2.0, 0.5]), "reduction": "none"},
         inputs=[grad(lambda r: r.uniform(0.05, 0.95, (4, 3))),
                 data(lambda r: r.uniform(0, 1, (4, 3)))], id="BCELoss-weight"),
    Case("BCEWithLogitsLoss", inputs=[(4, 3), data(lambda r: r.uniform(0, 1, (4, 3)))]),
    Case("BCEWithLogitsLoss", kwargs={"pos_weight": torch.tensor([1.0, 3.0, 0.5]),
                                      "weight": torch.tensor([2.0, 1.0, 1.0])},
         inputs=[(4, 3), data(lambda r: r.uniform(0, 1, (4, 3)))], id="BCEWithLogitsLoss-pos"),
    Case("KLDivLoss", kwargs={"reduction": "batchmean"},
         inputs=[(4, 5), data(_probs((4, 5)))]),
    Case("KLDivLoss", kwargs={"reduction": "sum", "log_target": True}, inputs=[(4, 5), (4, 5)]),
    Case("CosineEmbeddingLoss", inputs=[(4, 6), (4, 6), _signs(4)]),
    Case("CosineEmbeddingLoss", kwargs={"margin": 0.2, "reduction": "none"},
         inputs=[(4, 6), (4, 6), _signs(4)]),
    Case("MarginRankingLoss", kwargs={"margin": 0.3}, inputs=[(6,), (6,), _signs(6)]),
    Case("TripletMarginLoss", inputs=[(4, 6), (4, 6), (4, 6)]),
    Case("TripletMarginLoss", kwargs={"margin": 0.5, "p": 1.0, "swap": True,
                                      "reduction": "none"}, inputs=[(4, 6), (4, 6), (4, 6)]),
    Case("CosineSimilarity", inputs=[(4, 6), (4, 6)]),
    Case("CosineSimilarity", (0,), inputs=[(4, 6), (4, 6)]),
    Case("PairwiseDistance", inputs=[(4, 6), (4, 6)]),
    Case("PairwiseDistance", (1.0, 1e-6, True), inputs=[(4, 6), (4, 6)]),
    Case("PoissonNLLLoss", inputs=[(4, 3), data(lambda r: r.poisson(2.0, (4, 3)))]),
    Case("PoissonNLLLoss", kwargs={"log_input": False, "full": True, "reduction": "none"},
         inputs=[grad(lambda r: r.uniform(0.5, 3, (4, 3))),
                 data(lambda r: r.poisson(2.0, (4, 3)))]),
    Case("GaussianNLLLoss", inputs=[(4, 3), (4, 3), grad(lambda r: r.uniform(0.5, 2, (4, 3)))]),
    Case("GaussianNLLLoss", kwargs={"full": True, "reduction": "sum"},
         inputs=[(4, 3), (4, 3), grad(lambda r: r.uniform(0.5, 2, (4, 1)))]),
    Case("HingeEmbeddingLoss", kwargs={"margin": 0.5}, inputs=[(4, 3), _signs((4, 3))]),
    Case("SoftMarginLoss", inputs=[(4, 3), _signs((4, 3))]),
    Case("MultiMarginLoss", inputs=[(4, 5), _ints(5, 4)]),
    Case("MultiMarginLoss", kwargs={"p": 2, "margin": 0.5,
                                    "weight": torch.tensor([1.0, 2.0, 0.5, 1.0, 3.0])},
         inputs=[(4, 5), _ints(5, 4)], id="MultiMarginLoss-p2-weight"),
    Case("MultiLabelSoftMarginLoss", inputs=[(4, 5), data(lambda r: r.integers(0, 2, (4, 5)))]),
    Case("MultiLabelSoftMarginLoss", kwargs={"weight": torch.tensor([1.0, 2.0, 0.5, 1.0, 3.0]),
                                             "reduction": "none"},
         inputs=[(4, 5), data(lambda r: r.integers(0, 2, (4, 5)))], id="MultiLabelSoftMargin-w"),
]

CONVOLUTIONS = [
    Case("Conv1d", (2, 4, 3), inputs=[(2, 2, 9)]),
    Case("Conv1d", (2, 4, 3), inputs=[(2, 9)], id="Conv1d-unbatched"),
    Case("Conv1d", (2, 4, 3), {"stride": 2, "padding": 1, "dilation": 2, "groups": 2},
         inputs=[(2, 2, 9)]),
    Case("Conv1d", (2, 3, 4), {"padding": "same", "bias": False}, inputs=[(2, 2, 9)]),
    Case("Conv1d", (2, 3, 3), {"padding": 2, "padding_mode": "circular"}, inputs=[(2, 2, 7)]),
    Case("Conv2d", (2, 4, 3), inputs=[(2, 2, 6, 5)]),
    Case("Conv2d", (2, 4, 3), inputs=[(2, 6, 5)], id="Conv2d-unbatched"),
    Case("Conv2d", (2, 4, (3, 2)), {"stride": (2, 1), "padding": (1, 0), "bias": False,
                                    "groups": 2}, inputs=[(2, 2, 7, 6)]),
    Case("Conv2d", (3, 2, 3), {"padding": "same", "dilation": 2}, inputs=[(1, 3, 7, 7)]),
    Case("Conv2d", (3, 2, 3), {"padding": "valid"}, inputs=[(1, 3, 5, 5)]),
    Case("Conv2d", (2, 2, 3), {"padding": 1, "padding_mode": "reflect"}, inputs=[(1, 2, 5, 4)]),
    Case("Conv2d", (2, 2, 3), {"padding": (1, 2), "padding_mode": "replicate"},
         inputs=[(1, 2, 5, 4)]),
    Case("ConvTranspose2d", (2, 3, 3), inputs=[(2, 2, 4, 5)]),
    Case("ConvTranspose2d", (2, 3, 3), {"stride": 2, "padding": 1, "output_padding": 1},
         inputs=[(2, 2, 4, 4)]),
    Case("ConvTranspose2d", (2, 4, (2, 3)), {"stride": (1, 2), "groups": 2, "dilation": 2,
                                             "bias": False}, inputs=[(1, 2, 3, 4)]),
    Case("ConvTranspose2d", (2, 3, 3), {"stride": 2}, inputs=[(1, 2, 3, 3)],
         forward_kwargs={"output_size": [8, 8]}, id="ConvTranspose2d-output_size"),
    Case("Conv3d", (2, 3, 2), inputs=[(1, 2, 4, 4, 3)]),
    Case("Conv3d", (2, 4, 3), {"padding": 1, "groups": 2, "stride": (1, 2, 1)},
         inputs=[(1, 2, 4, 5, 3)]),
    Case("ConvTranspose1d", (2, 3, 3), {"stride": 2, "padding": 1, "output_padding": 1},
         inputs=[(2, 2, 5)]),
    Case("ConvTranspose3d", (2, 3, 2), {"stride": 2}, inputs=[(1, 2, 2, 3, 2)]),
]

POOLING = [
    Case("MaxPool1d", (2,), inputs=[(2, 3, 8)]),
    Case("MaxPool1d", (3, 2, 1), inputs=[(2, 3, 9)]),
    Case("MaxPool1d", (3,), {"stride": 2, "ceil_mode": True, "return_indices": True},
         inputs=[(2, 3, 8)]),
    Case("MaxPool2d", (2,), inputs=[(2, 3, 6, 6)]),
    Case("MaxPool2d", (2,), inputs=[(3, 6, 6)], id="MaxPool2d-unbatched"),
    Case("MaxPool2d", ((3, 2),), {"stride": (2, 1), "padding": 1}, inputs=[(2, 2, 7, 5)]),
    Case("MaxPool2d", (3,), {"stride": 2, "dilation": 2, "ceil_mode": True},
         inputs=[(1, 2, 9, 8)]),
    Case("MaxPool2d", (2,), {"return_indices": True}, inputs=[(1, 2, 4, 6)]),
    Case("AvgPool1d", (2,), inputs=[(2, 3, 8)]),
    Case("AvgPool1d", (3, 2, 1), {"count_include_pad": False}, inputs=[(2, 3, 9)]),
    Case("AvgPool2d", (2,), inputs=[(2, 3, 6, 6)]),
    Case("AvgPool2d", (3, 2, 1), {"ceil_mode": True, "count_include_pad": False},
         inputs=[(1, 2, 8, 7)]),
    Case("AvgPool2d", (2,), {"divisor_override": 3}, inputs=[(1, 2, 4, 4)]),
    Case("AdaptiveAvgPool2d", ((2, 3),), inputs=[(2, 3, 7, 8)]),
    Case("AdaptiveAvgPool2d", (1,), inputs=[(2, 3, 5, 5)]),
    Case("AdaptiveAvgPool2d", ((None, 2),), inputs=[(2, 3, 5, 5)]),
    Case("AdaptiveAvgPool2d", (3,), inputs=[(3, 7, 5)], id="AdaptiveAvgPool2d-unbatched"),
    Case("MaxPool3d", (2,), inputs=[(1, 2, 4, 4, 4)]),
    Case("AvgPool3d", (2,), {"stride": 1}, inputs=[(1, 2, 3, 4, 3)]),
    Case("AdaptiveAvgPool1d", (3,), inputs=[(2, 3, 8)]),
    Case("AdaptiveAvgPool3d", ((1, 2, 3),), inputs=[(1, 2, 4, 5, 6)]),
    Case("AdaptiveMaxPool1d", (3,), inputs=[(2, 3, 8)]),
    Case("AdaptiveMaxPool2d", ((2, 3),), {"return_indices": True}, inputs=[(2, 3, 5, 7)]),
]

NORMALIZATION = [
    Case("BatchNorm1d", (3,), inputs=[(5, 3)]),
    Case("BatchNorm1d", (3,), inputs=[(4, 3, 6)], id="BatchNorm1d-3d"),
    Case("BatchNorm1d", (3,), {"affine": False, "momentum": None}, inputs=[(5, 3)]),
    Case("BatchNorm1d", (3,), inputs=[(5, 3)], train=False, id="BatchNorm1d-eval"),
    Case("BatchNorm1d", (3,), {"track_running_stats": False}, inputs=[(5, 3)], train=False),
    Case("BatchNorm2d", (3,), inputs=[(2, 3, 4, 5)]),
    Case("BatchNorm2d", (3,), {"eps": 1e-3, "bias": False}, inputs=[(2, 3, 4, 5)]),
    Case("BatchNorm2d", (3,), inputs=[(2, 3, 4, 5)], train=False, id="BatchNorm2d-eval"),
    Case("LayerNorm", (5,), inputs=[(3, 5)]),
    Case("LayerNorm", ((3, 5),), inputs=[(2, 3, 5)]),
    Case("LayerNorm", (5,), {"elementwise_affine": False}, inputs=[(2, 4, 5)]),
    Case("LayerNorm", (5,), {"bias": False, "eps": 1e-3}, inputs=[(3, 5)]),
    Case("GroupNorm", (2, 4), inputs=[(2, 4, 3, 3)]),
    Case("GroupNorm", (1, 4), {"affine": False}, inputs=[(3, 4, 5)]),
    Case("GroupNorm", (4, 4), {"eps": 1e-3}, inputs=[(2, 4)]),
    Case("BatchNorm3d", (2,), inputs=[(2, 2, 3, 3, 3)]),
    Case("InstanceNorm1d", (3,), inputs=[(2, 3, 6)]),
    Case("InstanceNorm1d", (3,), inputs=[(3, 6)], id="InstanceNorm1d-unbatched"),
    Case("InstanceNorm2d", (3,), {"affine": True}, inputs=[(2, 3, 4, 5)]),
    Case("InstanceNorm2d", (3,), {"affine": True, "track_running_stats": True},
         inputs=[(2, 3, 4, 5)]),
    Case("InstanceNorm2d", (3,), {"track_running_stats": True}, inputs=[(2, 3, 4, 5)],
         train=False, id="InstanceNorm2d-eval"),
    Case("InstanceNorm3d", (2,), inputs=[(1, 2, 3, 3, 3)]),
    Case("RMSNorm", (5,), inputs=[(3, 5)]),
    Case("RMSNorm", ((3, 5),), {"eps": 1e-3, "elementwise_affine": False}, inputs=[(2, 3, 5)]),
]

OTHER = [
    Case("Linear", (4, 3), inputs=[(2, 4)]),
    Case("Linear", (4, 3), {"bias": False}, inputs=[(2, 5, 4)]),
    Case("Bilinear", (3, 4, 2), inputs=[(5, 3), (5, 4)]),
    Case("Identity", inputs=[(2, 3)]),
    Case("Flatten", inputs=[(2, 3, 4)]),
    Case("Flatten", (0, 1), inputs=[(2, 3, 4)]),
    Case("Unflatten", (1, (2, 3)), inputs=[(4, 6)]),
    Case("Dropout", inputs=[(4, 5)], train=False, id="Dropout-eval"),
    Case("Dropout", (0.0,), inputs=[(4, 5)], id="Dropout-p0"),
    Case("Embedding", (10, 3), inputs=[_ints(10, (2, 4))]),
    Case("Embedding", (10, 3), {"padding_idx": 0},
         inputs=[data(lambda r: np.array([[0, 2, 0, 5], [1, 2, 3, 0]]))]),
    Case("Embedding", (10, 3), {"scale_grad_by_freq": True},
         inputs=[data(lambda r: np.array([[1, 2, 1, 5], [1, 2, 3, 1]]))]),
    Case("Embedding", (10, 3), inputs=[_ints(10, 5)], id="Embedding-1d"),
    *(Case(f"Dropout{n}d", inputs=[(2, 3) + (4,) * n], train=False, id=f"Dropout{n}d-eval")
      for n in (1, 2, 3)),
    Case("ZeroPad1d", (2,), inputs=[(2, 3, 4)]),
    Case("ZeroPad2d", ((1, 2, 0, 3),), inputs=[(2, 3, 4)]),
    Case("ZeroPad3d", (1,), inputs=[(1, 2, 2, 3, 2)]),
    Case("ConstantPad1d", ((1, 3), 2.5), inputs=[(2, 4)]),
    Case("ConstantPad2d", (1, -1.0), inputs=[(1, 2, 3, 3)]),
    Case("ConstantPad3d", ((1, 0, 0, 1, 2, 0), 0.5), inputs=[(1, 2, 2, 2, 2)]),
    Case("ReflectionPad1d", (2,), inputs=[(2, 3, 5)]),
    Case("ReflectionPad2d", ((1, 0, 2, 1),), inputs=[(1, 2, 4, 3)]),
    Case("ReflectionPad3d", (1,), inputs=[(1, 1, 3, 3, 3)]),
    Case("ReplicationPad1d", ((0, 2),), inputs=[(2, 3, 4)]),
    Case("ReplicationPad2d", (2,), inputs=[(1, 2, 3, 3)]),
    Case("ReplicationPad3d", (1,), inputs=[(1, 1, 2, 3, 2)]),
    Case("CircularPad1d", (1,), inputs=[(2, 3, 4)]),
    Case("CircularPad2d", ((1, 2, 2, 1),), inputs=[(1, 2, 3, 4)]),
    Case("CircularPad3d", (1,), inputs=[(1, 1, 2, 3, 2)]),
    Case("Upsample", kwargs={"scale_factor": 2}, inputs=[(1, 2, 3, 4)]),
    Case("Upsample", kwargs={"size": (5, 7), "mode": "bilinear", "align_corners": True},
         inputs=[(1, 2, 3, 4)]),
    Case("Upsample", kwargs={"scale_factor": 1.5, "mode": "bilinear"}, inputs=[(1, 2, 4, 4)]),
    Case("Upsample", kwargs={"scale_factor": 2, "mode": "linear"}, inputs=[(2, 3, 5)]),
    Case("UpsamplingNearest2d", kwargs={"scale_factor": 2}, inputs=[(1, 2, 3, 3)]),
    Case("UpsamplingBilinear2d", kwargs={"size": (5, 6)}, inputs=[(1, 2, 3, 3)]),
    Case("PixelShuffle", (2,), inputs=[(1, 8, 3, 3)]),
    Case("PixelUnshuffle", (2,), inputs=[(1, 2, 4, 6)]),
    Case("Fold", ((4, 5), 2), inputs=[(1, 12, 12)]),
    Case("Unfold", (2,), {"padding": 1, "stride": 2}, inputs=[(1, 3, 4, 5)]),
]

CASES = ACTIVATIONS + LOSSES + CONVOLUTIONS + POOLING + NORMALIZATION + OTHER


@pytest.mark.filterwarnings("ignore:Using padding='same' with even kernel lengths")
@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize("case", CASES, ids=lambda c: c.id)
def test_layer_like_torch(case: Case, dtype: str) -> None:
    run_twins(case, dtype)


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.id)
def test_repr_like_torch(case: Case) -> None:
    ours, theirs = twin(case.name, *case.args, **case.kwargs)
    assert repr(ours) == repr(theirs)


def test_every_public_layer_has_a_row() -> None:
    covered = {c.name for c in CASES} | test_modules_more.COVERED
    skip = {"Module", "Parameter", "Buffer", "Sequential", "ModuleList", "ModuleDict",
            "ParameterList", "ParameterDict", "RNN", "LSTM", "GRU", "RNNCell", "LSTMCell",
            "GRUCell", "MultiheadAttention", "TransformerEncoderLayer", "TransformerEncoder",
            "RNNBase", "RNNCellBase"}  # the recurrent bases: tests/nn/test_utils_rnn.py
    # tested in test_transformer, test_lazy, test_parallel and test_nn_namespace
    skip |= {"Transformer", "TransformerDecoderLayer", "TransformerDecoder", "Container",
             "DataParallel", "SyncBatchNorm", "UninitializedParameter", "UninitializedBuffer"}
    skip |= {name for name in dir(nn) if name.startswith("Lazy")}
    layers = {name for name in dir(nn) if name[:1].isupper()} - skip
    assert layers <= covered, sorted(layers - covered)


# ---- state that a row cannot show --------------------------------------------------------------


@pytest.mark.parametrize("name, kwargs", [
    ("BatchNorm1d", {}),
    ("BatchNorm1d", {"momentum": None}),
    ("BatchNorm2d", {"momentum": 0.3}),
])
def test_batchnorm_running_stats_like_torch(name, kwargs) -> None:
    ours, theirs = twin(name, 3, **kwargs)
    shape = (6, 3) if name == "BatchNorm1d" else (2, 3, 4, 4)
    rng = np.random.default_rng(0)
    for step in range(3):
        x = (rng.standard_normal(shape) * (step + 1) + step).astype("float32")
        ours(chainrule.tensor(x))
        theirs(torch.tensor(x))
    for key, value in theirs.state_dict().items():
        np.testing.assert_allclose(ours.state_dict()[key].numpy(), value.numpy(), rtol=1e-5,
                                   atol=1e-6, err_msg=key)
    assert str(ours.num_batches_tracked.dtype) == "torch.int64"
    assert int(ours.num_batches_tracked) == 3
    ours.eval()
    theirs.eval()
    x = rng.standard_normal(shape).astype("float32")
    np.testing.assert_allclose(ours(chainrule.tensor(x)).detach().numpy(),
                               theirs(torch.tensor(x)).detach().numpy(), rtol=1e-5, atol=1e-6)


def test_batchnorm_without_running_stats_in_eval_uses_batch_stats() -> None:
    ours, theirs = twin("BatchNorm1d", 3, track_running_stats=False)
    assert ours.running_mean is None and ours.num_batches_tracked is None
    assert list(ours.state_dict()) == list(theirs.state_dict())
    ours.eval()
    x = np.random.default_rng(0).standard_normal((5, 3)).astype("float32")
    out = ours(chainrule.tensor(x)).detach().numpy()
    np.testing.assert_allclose(out.mean(0), 0, atol=1e-6)


@pytest.mark.parametrize("name, shape", [("BatchNorm1d", (2, 3, 4, 5)), ("BatchNorm2d", (2, 3))])
def test_batchnorm_checks_input_dims(name, shape) -> None:
    with pytest.raises(ValueError) as theirs:
        getattr(torch.nn, name)(3)(torch.zeros(shape))
    with pytest.raises(ValueError) as ours:
        getattr(nn, name)(3)(chainrule.zeros(*shape))
    assert str(ours.value) == str(theirs.value)


def test_batchnorm_reset_running_stats() -> None:
    bn = nn.BatchNorm1d(2)
    bn(chainrule.randn(4, 2) + 3)
    assert bn.running_mean.abs().sum().item() > 0
    bn.reset_running_stats()
    assert bn.running_mean.tolist() == [0, 0] and bn.running_var.tolist() == [1, 1]
    assert bn.num_batches_tracked.item() == 0


def test_dropout_zeroes_and_rescales_in_training() -> None:
    chainrule.manual_seed(0)
    drop = nn.Dropout(0.25)
    out = drop(chainrule.ones(200, 200)).numpy()
    kept = out != 0
    assert abs(kept.mean() - 0.75) < 0.01
    np.testing.assert_allclose(out[kept], 1 / 0.75, rtol=1e-6)
    drop.eval()
    assert (drop(chainrule.ones(3, 3)).numpy() == 1).all()


@pytest.mark.parametrize("n", [1, 2, 3])
def test_channel_dropout_zeroes_whole_channels(n) -> None:
    chainrule.manual_seed(0)
    drop = getattr(nn, f"Dropout{n}d")(0.5)
    out = drop(chainrule.ones(40, 50, *(3,) * n)).numpy().reshape(40, 50, -1)
    per_channel = out.max(-1)
    assert (out.min(-1) == per_channel).all()  # a channel is all zero or all 2
    assert set(np.unique(per_channel)) == {0.0, 2.0}
    assert abs((per_channel == 0).mean() - 0.5) < 0.05


def test_dropout_rejects_bad_probability() -> None:
    for p in (-0.1, 1.5):
        with pytest.raises(ValueError, match="dropout probability has to be between 0 and 1"):
            nn.Dropout(p)


def test_embedding_padding_row_is_zero_and_gets_no_gradient() -> None:
    chainrule.manual_seed(0)
    emb = nn.Embedding(5, 3, padding_idx=-1)
    assert emb.padding_idx == 4
    assert emb.weight[4].tolist() == [0.0, 0.0, 0.0]
    emb(chainrule.tensor([[4, 1], [1, 4]])).sum().backward()
    assert emb.weight.grad[4].tolist() == [0.0, 0.0, 0.0]
    assert emb.weight.grad[1].tolist() == [2.0, 2.0, 2.0]


def test_embedding_from_pretrained() -> None:
    weights = np.arange(12, dtype="float32").reshape(4, 3)
    ours = nn.Embedding.from_pretrained(chainrule.tensor(weights))
    theirs = torch.nn.Embedding.from_pretrained(torch.tensor(weights))
    assert repr(ours) == repr(theirs)
    assert ours.weight.requires_grad is False
    np.testing.assert_array_equal(ours(chainrule.tensor([2, 0])).numpy(),
                                  theirs(torch.tensor([2, 0])).numpy())
    trainable = nn.Embedding.from_pretrained(chainrule.tensor(weights), freeze=False,
                                             padding_idx=1)
    assert trainable.weight.requires_grad and trainable.padding_idx == 1
    assert trainable.weight[1].tolist() == [3.0, 4.0, 5.0]  # pretrained rows are kept
    with pytest.raises(AssertionError, match="2-dimensional"):
        nn.Embedding.from_pretrained(chainrule.zeros(3))


def test_embedding_max_norm_renormalises_rows_like_torch() -> None:
    ours, theirs = twin("Embedding", 6, 4, max_norm=1.0)
    index = np.array([[0, 2], [2, 5]])
    ours(chainrule.tensor(index))
    theirs(torch.tensor(index))
    np.testing.assert_allclose(ours.weight.detach().numpy(), theirs.weight.detach().numpy(),
                               rtol=1e-6, atol=1e-7)


def test_embedding_checks_padding_idx() -> None:
    with pytest.raises(AssertionError, match="Padding_idx must be within num_embeddings"):
        nn.Embedding(3, 2, padding_idx=3)


@pytest.mark.parametrize("kwargs, message", [
    ({"groups": 3}, "in_channels must be divisible by groups"),
    ({"groups": 0}, "groups must be a positive integer"),
    ({"padding": "same", "stride": 2}, "padding='same' is not supported for strided"),
    ({"padding_mode": "mirror"}, "padding_mode must be one of"),
    ({"padding": "full"}, "Invalid padding string 'full'"),
])
def test_conv_argument_errors(kwargs, message) -> None:
    with pytest.raises(ValueError, match=message):
        torch.nn.Conv2d(4, 6, 3, **kwargs)
    with pytest.raises(ValueError, match=message):
        nn.Conv2d(4, 6, 3, **kwargs)


def test_conv_transpose_only_zero_padding() -> None:
    with pytest.raises(ValueError, match='Only "zeros" padding mode is supported'):
        nn.ConvTranspose2d(2, 2, 3, padding_mode="reflect")


def test_group_norm_checks_divisibility() -> None:
    with pytest.raises(ValueError, match="num_channels must be divisible by num_groups"):
        nn.GroupNorm(3, 4)


def test_softmax_dim_none_uses_the_legacy_dim() -> None:
    x = np.random.default_rng(0).standard_normal((2, 3, 4)).astype("float32")
    with pytest.warns(UserWarning):
        theirs = torch.nn.Softmax()(torch.tensor(x))
    with pytest.warns(UserWarning):
        ours = nn.Softmax()(chainrule.tensor(x))
    np.testing.assert_allclose(ours.numpy(), theirs.numpy(), rtol=1e-6)


@pytest.mark.parametrize("name", ["ReLU", "LeakyReLU", "ELU", "SELU", "SiLU", "Mish", "Hardtanh",
                                  "ReLU6", "Hardsigmoid", "Hardswish", "CELU"])
def test_inplace_activations_like_torch(name) -> None:
    x = np.random.default_rng(0).standard_normal((3, 4)).astype("float32") * 3
    theirs, ours = torch.tensor(x), chainrule.tensor(x)
    t_out = getattr(torch.nn, name)(inplace=True)(theirs)
    c_out = getattr(nn, name)(inplace=True)(ours)
    assert repr(getattr(nn, name)(inplace=True)) == repr(getattr(torch.nn, name)(inplace=True))
    np.testing.assert_allclose(c_out.numpy(), t_out.numpy(), rtol=1e-6, atol=1e-7)
    np.testing.assert_allclose(ours.numpy(), theirs.numpy(), rtol=1e-6, atol=1e-7)


def test_loss_weights_are_buffers() -> None:
    weight = chainrule.tensor([1.0, 2.0])
    loss = nn.CrossEntropyLoss(weight=weight)
    assert list(loss.state_dict()) == ["weight"]
    assert list(nn.BCEWithLogitsLoss(pos_weight=weight).state_dict()) == ["pos_weight"]
    assert list(nn.CrossEntropyLoss().state_dict()) == []


def test_legacy_reduction_arguments() -> None:
    with pytest.warns(UserWarning, match="size_average and reduce args will be deprecated"):
        loss = nn.MSELoss(size_average=False)
    assert loss.reduction == "sum"
    with pytest.warns(UserWarning):
        assert nn.L1Loss(reduce=False).reduction == "none"
    with pytest.warns(UserWarning):
        assert torch.nn.L1Loss(reduce=False).reduction == "none"


def test_triplet_margin_must_be_positive() -> None:
    with pytest.raises(ValueError, match="expected margin to be greater than 0"):
        nn.TripletMarginLoss(margin=0.0)


@pytest.mark.parametrize("name, args, shape", [
    ("Conv1d", (6, 4, 3), (4, 3, 3)),
    ("Conv2d", (6, 4, 3), (4, 3, 3, 3)),
    ("ConvTranspose2d", (6, 4, 3), (6, 2, 3, 3)),
])
def test_conv_weight_shapes_and_init_bounds(name, args, shape) -> None:
    chainrule.manual_seed(0)
    layer = getattr(nn, name)(*args, groups=2)
    assert tuple(layer.weight.shape) == tuple(getattr(torch.nn, name)(*args, groups=2)
                                              .weight.shape) == shape
    fan_in = shape[1] * int(np.prod(shape[2:]))
    bound = 1 / np.sqrt(fan_in)
    assert np.abs(layer.weight.detach().numpy()).max() <= bound
    assert np.abs(layer.bias.detach().numpy()).max() <= bound
