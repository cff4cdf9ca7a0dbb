"""nn rows: chainrule.nn.functional (activations, softmax, linear, convolution, pooling,
resampling, normalisation, dropout, embedding, padding, distances, attention, losses) and the
torch.* forms of the same ops.

Rows named ``nn.functional.<name>`` call ``m.nn.functional.<name>``; rows named ``<name>`` call
``m.<name>``. grad_fn=False marks composites whose last step is not PyTorch's fused kernel.
Dropout is random: its rows use p = 0 and p = 1 (deterministic); its statistics and seeding are
in tests/nn/test_functional_extra.py.
"""

from __future__ import annotations

import torch

import chainrule.nn.functional  # noqa: F401  (chainrule.nn is a submodule, loaded on import)

from ._spec import NONZERO, POSITIVE, REAL, Const, Domain, OpRow, S, T, away, method

UNARY = (S(()), S((5,)), S((3, 4)))
PROB = Domain(0.05, 0.95)
WIDE = Domain(-4.0, 4.0)


def _F(t):
    """The functional module of the library a tensor belongs to."""
    return torch.nn.functional if isinstance(t, torch.Tensor) else chainrule.nn.functional


def fn(name: str, samples, call=None, **kwargs) -> OpRow:
    """A row for ``m.nn.functional.<name>(*args)``, or ``call(m.nn.functional, *args)``."""
    if call is None:
        def run(m, *args):
            return getattr(m.nn.functional, name)(*args)
    else:
        def run(m, *args):
            return call(m.nn.functional, *args)
    return OpRow(f"nn.functional.{name}", run, samples, **kwargs)


def top(name: str, samples, call, **kwargs) -> OpRow:
    """A row for ``m.<name>`` called as ``call(m, *args)``."""
    return OpRow(name, call, samples, **kwargs)


def inplace(name: str, **params) -> dict:
    """The ``inplace=True`` form of nn.functional.<name>, as an in-place variant."""
    return {f"{name}(inplace=True)": lambda x: getattr(_F(x), name)(x, inplace=True, **params)}


# ---- activations -------------------------------------------------------------------------------

ACTIVATIONS = [
    fn("relu", UNARY, records=("relu",), kinks=(0.0,),
       inplace={**inplace("relu"), "relu_": lambda x: _F(x).relu_(x)}),
    fn("relu6", UNARY, domain=Domain(-2, 8), records=("hardtanh",), kinks=(0.0, 6.0),
       inplace=inplace("relu6")),
    fn("leaky_relu", UNARY, records=("leaky_relu", "leaky_relu_"), kinks=(0.0,), orders=(1, 2, 3),
       inplace={**inplace("leaky_relu"), "leaky_relu_": lambda x: _F(x).leaky_relu_(x)}),
    fn("leaky_relu", (S((3, 4)),), lambda F, x: F.leaky_relu(x, 0.2), variant="0.2",
       records=("leaky_relu", "leaky_relu_"), inplace=inplace("leaky_relu", negative_slope=0.2)),
    fn("elu", UNARY, records=("elu", "elu_"), kinks=(0.0,), orders=(1, 2, 3),
       inplace={**inplace("elu"), "elu_": lambda x: _F(x).elu_(x, 0.5)}),
    fn("elu", (S((3, 4)),), lambda F, x: F.elu(x, 0.5), variant="alpha=0.5",
       records=("elu", "elu_"), kinks=(0.0,), inplace=inplace("elu", alpha=0.5)),
    fn("selu", UNARY, records=("elu", "elu_"), kinks=(0.0,),
       inplace={**inplace("selu"), "selu_": lambda x: _F(x).selu_(x)}),
    fn("celu", UNARY, lambda F, x: F.celu(x, 0.7), records=("celu", "celu_"), kinks=(0.0,),
       inplace={**inplace("celu", alpha=0.7), "celu_": lambda x: _F(x).celu_(x, 0.7)}),
    fn("gelu", UNARY, domain=WIDE, records=("gelu", "gelu_backward"), orders=(1, 2, 3)),
    fn("gelu", UNARY, lambda F, x: F.gelu(x, approximate="tanh"), variant="tanh", domain=WIDE,
       records=("gelu",), orders=(1, 2, 3)),
    fn("silu", UNARY, domain=WIDE, records=("silu",), orders=(1, 2, 3), inplace=inplace("silu")),
    fn("mish", UNARY, domain=WIDE, records=("mish", "softplus"), orders=(1, 2, 3),
       inplace=inplace("mish")),
    fn("softplus", UNARY, domain=WIDE, records=("softplus",), orders=(1, 2, 3)),
    # beta * x > threshold is the linear branch; kink at the switch x = threshold / beta.
    fn("softplus", (S((3, 4)),), lambda F, x: F.softplus(x, 2.0, 1.0), variant="beta=2,thr=1",
       domain=away(0.5), records=("softplus",), kinks=(0.5,)),
    fn("softsign", UNARY, orders=(1, 2, 3)),
    fn("hardtanh", UNARY, records=("hardtanh",), domain=away(-1.0, 1.0), kinks=(-1.0, 1.0),
       inplace={**inplace("hardtanh"), "hardtanh_": lambda x: _F(x).hardtanh_(x)}),
    fn("hardtanh", (S((3, 4)),), lambda F, x: F.hardtanh(x, -0.5, 1.5), variant="-0.5,1.5",
       records=("hardtanh",), domain=away(-0.5, 1.5), kinks=(-0.5, 1.5)),
    # torch has no second derivative of hardsigmoid.
    fn("hardsigmoid", UNARY, domain=Domain(-4, 4, avoid=(-3.0, 3.0)), records=("hardsigmoid",),
       kinks=(-3.0, 3.0), orders=(1,), inplace=inplace("hardsigmoid")),
    fn("hardswish", UNARY, domain=Domain(-4, 4, avoid=(-3.0, 3.0)), records=("hardswish",),
       kinks=(-3.0, 3.0), inplace=inplace("hardswish")),
    fn("tanh", UNARY, records=("tanh",)),
    fn("sigmoid", UNARY, records=("sigmoid",)),
    fn("logsigmoid", UNARY, domain=WIDE, records=("logsigmoid",), orders=(1, 2, 3)),
    fn("threshold", (S((3, 4)),), lambda F, x: F.threshold(x, 0.5, -1.0), domain=away(0.5),
       kinks=(0.5,), grad_fn=False,
       inplace={"threshold_": lambda x: _F(x).threshold_(x, 0.5, -1.0)}),
    fn("hardshrink", (S((3, 4)),), domain=away(-0.5, 0.5), kinks=(-0.5, 0.5), grad_fn=False),
    fn("softshrink", (S((3, 4)),), domain=away(-0.5, 0.5), kinks=(-0.5, 0.5), grad_fn=False),
    fn("tanhshrink", UNARY, grad_fn=False),
    fn("rrelu", (S((3, 4)),), variant="eval", domain=away(0.0),
       records=("leaky_relu", "leaky_relu_"), grad_fn=False,
       inplace={"rrelu_": lambda x: _F(x).rrelu_(x)}),
    fn("prelu", (S((2, 3, 4), (3,)), S((2, 3), (1,))), domain=(away(0.0), REAL),
       grad_fn=False),
    top("prelu", (S((2, 3, 4), (3,)),), lambda m, x, w: m.prelu(x, w), domain=(away(0.0), REAL),
        grad_fn=False),
    method("Tensor.prelu", lambda x, w: x.prelu(w), (S((2, 3), (3,)),), domain=(away(0.0), REAL),
           grad_fn=False),
    top("selu", UNARY, lambda m, x: m.selu(x), records=("elu",)),
    top("celu", UNARY, lambda m, x: m.celu(x), records=("celu",)),
    fn("glu", (S((3, 4)), S((3, 2, 4))), grad_fn=False),
    fn("glu", (S((4, 2, 3)),), lambda F, x: F.glu(x, 0), variant="dim=0", grad_fn=False),
]

# ---- softmax -----------------------------------------------------------------------------------

SOFTMAX_SAMPLES = (S((5,)), S((3, 4)), S((2, 3, 4)))

SOFTMAX = [
    fn("softmax", SOFTMAX_SAMPLES, lambda F, x: F.softmax(x, -1), records=("softmax",),
       domain=WIDE, orders=(1, 2, 3)),
    fn("softmax", (S((3, 4)), S((2, 3, 4))), lambda F, x: F.softmax(x, dim=1), variant="dim=1",
       records=("softmax",)),
    fn("softmax", (S((3, 4)),), lambda F, x: F.softmax(x, 0, dtype=_float64(x)),
       variant="dtype=float64", records=("softmax", "to_copy"), grad_fn=False),
    fn("log_softmax", SOFTMAX_SAMPLES, lambda F, x: F.log_softmax(x, -1),
       records=("log_softmax",), domain=WIDE, orders=(1, 2, 3)),
    fn("log_softmax", (S((3, 4)), S((2, 3, 4))), lambda F, x: F.log_softmax(x, 1),
       variant="dim=1", records=("log_softmax",)),
    fn("softmin", (S((3, 4)),), lambda F, x: F.softmin(x, 1), records=("softmax",)),
    top("softmax", (S((3, 4)),), lambda m, x: m.softmax(x, 1), records=("softmax",)),
    top("log_softmax", (S((3, 4)),), lambda m, x: m.log_softmax(x, 0), records=("log_softmax",)),
    method("Tensor.softmax", lambda x: x.softmax(-1), (S((3, 4)),), records=("softmax",)),
    method("Tensor.log_softmax", lambda x: x.log_softmax(1), (S((3, 4)),),
           records=("log_softmax",)),
]


def _float64(t):
    return torch.float64 if isinstance(t, torch.Tensor) else chainrule.float64


# ---- linear ------------------------------------------------------------------------------------

LINEAR = [
    fn("linear", (S((4, 3), (2, 3), (2,)),), records=("linear",), orders=(1, 2, 3)),
    # torch's grad_fn for other shapes names the last step of its decomposition.
    fn("linear", (S((2, 4, 3), (2, 3), (2,)), S((3,), (2, 3), (2,)), S((4, 3), (2, 3))),
       variant="other shapes", records=("linear",), grad_fn=False),
    fn("bilinear", (S((3, 2), (3, 4), (5, 2, 4), (5,)), S((2, 2), (2, 3), (1, 2, 3))),
       grad_fn=False),
    top("bilinear", (S((3, 2), (3, 4), (5, 2, 4), (5,)),),
        lambda m, a, b, w, bias: m.bilinear(a, b, w, bias), grad_fn=False),
]

# ---- dropout (deterministic cases) -------------------------------------------------------------

DROPOUT = [
    # p = 1 zeroes everything through a mask product (MulBackward0, as torch); p = 0 and eval
    # mode return the input itself.
    fn("dropout", (S((3, 4)),), lambda F, x: F.dropout(x, 1.0), variant="p=1", records=("mul",),
       inplace={"dropout(inplace=True)": lambda x: _F(x).dropout(x, 1.0, True, True)}),
    fn("dropout", (S((3, 4)),), lambda F, x: F.dropout(x * 1, 0.0), variant="p=0",
       records=("mul",)),
    fn("dropout", (S((3, 4)),), lambda F, x: F.dropout(x * 1, 0.5, False), variant="eval",
       records=("mul",)),
    fn("dropout2d", (S((2, 3, 4, 4)),), lambda F, x: F.dropout2d(x, 1.0), records=("mul",)),
    fn("dropout1d", (S((2, 3, 4)),), lambda F, x: F.dropout1d(x, 1.0), records=("mul",)),
    fn("alpha_dropout", (S((3, 4)),), lambda F, x: F.alpha_dropout(x, 1.0, True), variant="p=1",
       records=("mul",)),
    fn("alpha_dropout", (S((3, 4)),), lambda F, x: F.alpha_dropout(x * 1, 0.5), variant="eval",
       records=("mul",)),
    top("dropout", (S((3, 4)),), lambda m, x: m.dropout(x, 1.0, True), records=("mul",)),
]

# ---- embedding, one_hot, pad -------------------------------------------------------------------

INDICES = Const([[0, 2, 4], [2, 2, 1]])

EMBEDDING = [
    fn("embedding", (S(INDICES, (5, 3)), S(Const(3), (5, 2))),
       records=("embedding", "embedding_backward"), orders=(1, 2, 3)),
    # padding_idx and scale_grad_by_freq change the gradient on purpose (it is no longer the
    # derivative): tests/nn/test_functional_extra.py compares them with torch.
    top("embedding", (S((5, 3), INDICES),), lambda m, w, i: m.embedding(w, i),
        records=("embedding",)),
    fn("one_hot", (S(Const([0, 3, 1])), S(Const([[1, 0], [2, 2]]))), orders=()),
    fn("one_hot", (S(Const([0, 3, 1])),), lambda F, i: F.one_hot(i, 6), variant="6",
       orders=()),
]

PAD = [
    fn("pad", (S((3, 4)),), lambda F, x: F.pad(x, (1, 2)), records=("constant_pad_nd",),
       orders=(1, 2, 3)),
    fn("pad", (S((2, 3, 4)),), lambda F, x: F.pad(x, (1, -1, 2, 0, 0, 1), value=0.5),
       variant="negative,value", records=("constant_pad_nd",)),
    fn("pad", (S((2, 3, 4)), S((1, 2, 3, 4))), lambda F, x: F.pad(x, (2, 1, 1, 2), "reflect"),
       variant="reflect", grad_fn=False),
    fn("pad", (S((2, 3, 4)),), lambda F, x: F.pad(x, (3, 1), "replicate"), variant="replicate",
       grad_fn=False),
    fn("pad", (S((1, 2, 3, 4)),), lambda F, x: F.pad(x, (2, 1, 3, 1), "circular"),
       variant="circular", grad_fn=False),
]

# ---- convolution -------------------------------------------------------------------------------

CONV = ("convolution", "convolution_weight")

CONVOLUTION = [
    top("conv2d", (S((2, 2, 5, 4), (3, 2, 3, 2), (3,)), S((2, 4, 4), (3, 2, 2, 2), grad_fn=False)),
        lambda m, x, w, b=None: m.conv2d(x, w, b), records=CONV),
    top("conv2d", (S((1, 4, 6, 5), (4, 2, 3, 3), (4,)),),
        lambda m, x, w, b: m.conv2d(x, w, b, stride=(2, 1), padding=1, dilation=(1, 2),
                                    groups=2),
        variant="stride,padding,dilation,groups", records=CONV),
    fn("conv2d", (S((1, 2, 4, 5), (3, 2, 2, 3)),), lambda F, x, w: F.conv2d(x, w, padding="same"),
       variant="same", records=CONV),
    fn("conv2d", (S((1, 2, 4, 5), (3, 2, 2, 3), (3,)),),
       lambda F, x, w, b: F.conv2d(x, w, b, stride=2, padding="valid"), variant="valid",
       records=CONV),
    top("conv1d", (S((2, 2, 7), (3, 2, 3), (3,)),),
        lambda m, x, w, b: m.conv1d(x, w, b, stride=2, padding=1), records=CONV),
    top("conv3d", (S((1, 2, 3, 4, 3), (2, 2, 2, 2, 2), (2,)),),
        lambda m, x, w, b: m.conv3d(x, w, b, padding=(1, 0, 1)), records=CONV),
    top("conv_transpose2d", (S((2, 2, 3, 3), (2, 3, 3, 2), (3,)),),
        lambda m, x, w, b: m.conv_transpose2d(x, w, b, stride=2, padding=1, output_padding=1),
        records=CONV),
    top("conv_transpose2d", (S((1, 4, 3, 2), (4, 1, 2, 3)),),
        lambda m, x, w: m.conv_transpose2d(x, w, stride=(1, 2), groups=2, dilation=2,
                                           output_padding=(1, 0)),
        variant="groups,dilation", records=CONV),
    top("conv_transpose1d", (S((2, 2, 4), (2, 3, 3), (3,)),),
        lambda m, x, w, b: m.conv_transpose1d(x, w, b, stride=3), records=CONV),
    top("conv_transpose3d", (S((1, 2, 2, 3, 2), (2, 2, 2, 2, 2)),),
        lambda m, x, w: m.conv_transpose3d(x, w, stride=(2, 1, 1)), records=CONV),
    fn("unfold", (S((2, 2, 4, 5)), S((2, 4, 5), grad_fn=False)),
       lambda F, x: F.unfold(x, (2, 3), dilation=(1, 2), padding=1, stride=(2, 1)),
       records=("unfold", "fold")),
    fn("fold", (S((2, 12, 6)), S((12, 6), grad_fn=False)),
       lambda F, x: F.fold(x, (4, 5), (2, 3), dilation=(1, 2), padding=1, stride=2),
       records=("fold", "unfold")),
]

# ---- pooling and resampling --------------------------------------------------------------------

MAX = ("max_pool2d", "max_pool_backward")
IMAGE = S((2, 2, 5, 6))

POOLING = [
    fn("max_pool2d", (IMAGE, S((2, 4, 4))), lambda F, x: F.max_pool2d(x, 2),
       records=MAX, kinks=(0.5,), orders=(1, 2, 3)),
    fn("max_pool2d", (IMAGE,),
       lambda F, x: F.max_pool2d(x, 3, stride=2, padding=1, ceil_mode=True, return_indices=True),
       variant="overlapping,ceil,indices", records=MAX, kinks=(0.5,)),
    fn("max_pool2d", (IMAGE,),
       lambda F, x: F.max_pool2d(x, (2, 3), stride=(1, 2), dilation=(2, 1), return_indices=True),
       variant="dilation", records=MAX),
    fn("max_pool1d", (S((2, 3, 7)),), lambda F, x: F.max_pool1d(x, 3, 2, 1, return_indices=True),
       records=MAX, grad_fn=False, kinks=(0.5,)),
    fn("max_pool3d", (S((1, 2, 3, 4, 5)),), lambda F, x: F.max_pool3d(x, 2, ceil_mode=True),
       records=("max_pool3d", "max_pool_backward")),
    top("max_pool2d", (IMAGE,), lambda m, x: m.max_pool2d(x, 2, 1), records=MAX),
    top("max_pool1d", (S((2, 3, 7)),), lambda m, x: m.max_pool1d(x, 2), records=MAX,
        grad_fn=False),
    top("max_pool3d", (S((1, 2, 3, 4, 5)),), lambda m, x: m.max_pool3d(x, 2),
        records=("max_pool3d", "max_pool_backward")),
    fn("avg_pool2d", (IMAGE, S((2, 4, 4))), lambda F, x: F.avg_pool2d(x, 2),
       records=("avg_pool2d", "avg_pool_backward")),
    fn("avg_pool2d", (IMAGE,),
       lambda F, x: F.avg_pool2d(x, 3, stride=2, padding=1, ceil_mode=True,
                                 count_include_pad=False),
       variant="ceil,exclude pad", records=("avg_pool2d", "avg_pool_backward")),
    fn("avg_pool2d", (IMAGE,),
       lambda F, x: F.avg_pool2d(x, (2, 3), stride=(1, 2), padding=(1, 1), divisor_override=4),
       variant="divisor_override", records=("avg_pool2d", "avg_pool_backward")),
    fn("avg_pool1d", (S((2, 3, 7)),), lambda F, x: F.avg_pool1d(x, 3, 2, 1),
       records=("avg_pool2d",), grad_fn=False),
    fn("avg_pool3d", (S((1, 2, 3, 4, 5)),), lambda F, x: F.avg_pool3d(x, 2, stride=1),
       records=("avg_pool3d", "avg_pool_backward")),
    top("avg_pool1d", (S((2, 3, 7)),), lambda m, x: m.avg_pool1d(x, 2), records=("avg_pool2d",),
        grad_fn=False),
    fn("adaptive_avg_pool2d", (IMAGE, S((3, 5, 6), grad_fn=False)),
       lambda F, x: F.adaptive_avg_pool2d(x, (3, 4)), grad_fn=False),
    fn("adaptive_avg_pool2d", (IMAGE,), lambda F, x: F.adaptive_avg_pool2d(x, 1), variant="1"),
    fn("adaptive_avg_pool2d", (IMAGE,), lambda F, x: F.adaptive_avg_pool2d(x, (None, 3)),
       variant="None", grad_fn=False),
    fn("adaptive_avg_pool1d", (S((2, 3, 7)),), lambda F, x: F.adaptive_avg_pool1d(x, 3),
       grad_fn=False),
    fn("adaptive_avg_pool3d", (S((1, 2, 3, 4, 5)),),
       lambda F, x: F.adaptive_avg_pool3d(x, (2, 3, 2)), grad_fn=False),
    top("adaptive_avg_pool1d", (S((2, 3, 7)),), lambda m, x: m.adaptive_avg_pool1d(x, 4),
        grad_fn=False),
    fn("adaptive_max_pool2d", (IMAGE,),
       lambda F, x: F.adaptive_max_pool2d(x, (3, 4), return_indices=True),
       grad_fn=False, kinks=(0.5,)),
    fn("adaptive_max_pool1d", (S((2, 3, 7)),), lambda F, x: F.adaptive_max_pool1d(x, 3),
       grad_fn=False),
    fn("interpolate", (IMAGE,), lambda F, x: F.interpolate(x, size=(7, 4)), variant="nearest",
       grad_fn=False),
    fn("interpolate", (IMAGE,), lambda F, x: F.interpolate(x, scale_factor=1.7),
       variant="nearest,scale", grad_fn=False),
    fn("interpolate", (IMAGE,), lambda F, x: F.interpolate(x, size=(3, 9), mode="nearest-exact"),
       variant="nearest-exact", grad_fn=False),
    fn("interpolate", (IMAGE,), lambda F, x: F.interpolate(x, size=(7, 4), mode="bilinear"),
       variant="bilinear", grad_fn=False),
    fn("interpolate", (IMAGE,),
       lambda F, x: F.interpolate(x, scale_factor=(1.5, 0.7), mode="bilinear",
                                  align_corners=True),
       variant="bilinear,align_corners", grad_fn=False),
    fn("interpolate", (IMAGE,),
       lambda F, x: F.interpolate(x, scale_factor=2.5, mode="bicubic",
                                  recompute_scale_factor=True),
       variant="bicubic", grad_fn=False),
    fn("interpolate", (S((2, 3, 5)),), lambda F, x: F.interpolate(x, 8, mode="linear"),
       variant="linear", grad_fn=False),
    fn("interpolate", (S((1, 2, 3, 4, 2)),),
       lambda F, x: F.interpolate(x, size=(4, 3, 3), mode="trilinear", align_corners=True),
       variant="trilinear", grad_fn=False),
    fn("interpolate", (IMAGE,), lambda F, x: F.interpolate(x, size=(3, 4), mode="area"),
       variant="area", grad_fn=False),
    fn("max_pool2d_with_indices", (IMAGE,), lambda F, x: F.max_pool2d_with_indices(x, 2),
       records=MAX),
    fn("adaptive_max_pool3d", (S((1, 2, 3, 4, 5)),),
       lambda F, x: F.adaptive_max_pool3d(x, (2, 3, 2), return_indices=True), grad_fn=False),
    fn("max_unpool2d", (S((1, 2, 4, 6)),),
       lambda F, x: F.max_unpool2d(*F.max_pool2d(x * 1, 2, return_indices=True), 2),
       domain=Domain(-2, 2), records=MAX, grad_fn=False),
    fn("lp_pool2d", (S((2, 3, 4, 5)),), lambda F, x: F.lp_pool2d(x, 2, (2, 3)), domain=POSITIVE,
       grad_fn=False, records=("avg_pool2d",)),
    fn("lp_pool1d", (S((2, 3, 6)),), lambda F, x: F.lp_pool1d(x, 3, 2), domain=POSITIVE,
       grad_fn=False, records=("avg_pool2d",)),
    fn("pixel_shuffle", (S((2, 8, 2, 3)),), lambda F, x: F.pixel_shuffle(x, 2), grad_fn=False),
    fn("pixel_unshuffle", (S((2, 2, 4, 6)),), lambda F, x: F.pixel_unshuffle(x, 2),
       grad_fn=False),
]

# ---- normalisation -----------------------------------------------------------------------------

NORM = ("standardize",)
RUNNING = (Const([0.1, -0.2, 0.3]), Const([1.0, 0.5, 2.0]))
# vmap cannot update one set of running statistics with each example's (torch.func's error).
SHARED_RUNNING = "Batch norm got a batched tensor as input while the running_mean or running_var"

NORMALIZATION = [
    fn("layer_norm", (S((3, 4), (4,), (4,)), S((2, 3, 4), (3, 4), (3, 4))),
       lambda F, x, w, b: F.layer_norm(x, tuple(w.shape), w, b),
       records=("layer_norm",) + NORM, orders=(1, 2, 3)),
    fn("layer_norm", (S((2, 3, 4)),), lambda F, x: F.layer_norm(x, (4,), eps=0.1),
       variant="no affine", records=("layer_norm",) + NORM),
    top("layer_norm", (S((3, 4), (4,), (4,)),),
        lambda m, x, w, b: m.layer_norm(x, [4], w, b), records=("layer_norm",) + NORM),
    fn("batch_norm", (S((4, 3), (3,), (3,)), S((2, 3, 2, 2), (3,), (3,))),
       lambda F, x, w, b: F.batch_norm(x, None, None, w, b, True),
       variant="training", records=("batch_norm",) + NORM, orders=(1, 2, 3)),
    fn("batch_norm", (S((2, 3, 4), (3,), (3,), *RUNNING),),
       lambda F, x, w, b, mean, var: F.batch_norm(x, mean, var, w, b, True, 0.3),
       variant="training,running stats", records=("batch_norm",) + NORM,
       vmap_error=SHARED_RUNNING),
    fn("batch_norm", (S((2, 3, 4), (3,), (3,), *RUNNING), S((4, 3), T((3,), grad=False),
                                                           T((3,), grad=False), *RUNNING)),
       lambda F, x, w, b, mean, var: F.batch_norm(x, mean, var, w, b, False),
       variant="eval", records=("batch_norm",)),
    top("batch_norm", (S((2, 3, 4), (3,), (3,), *RUNNING),),
        lambda m, x, w, b, mean, var: m.batch_norm(x, w, b, mean, var, True, 0.1, 1e-5, False),
        records=("batch_norm",) + NORM, vmap_error=SHARED_RUNNING),
    fn("group_norm", (S((2, 4, 3), (4,), (4,)), S((2, 6, 2, 2), (6,), (6,))),
       lambda F, x, w, b: F.group_norm(x, 2, w, b),
       records=("group_norm",) + NORM, orders=(1, 2, 3)),
    fn("group_norm", (S((2, 4, 3)),), lambda F, x: F.group_norm(x, 2), variant="no affine",
       records=("group_norm",) + NORM),
    top("group_norm", (S((2, 4, 3), (4,), (4,)),),
        lambda m, x, w, b: m.group_norm(x, 1, w, b), records=("group_norm",) + NORM),
    fn("instance_norm", (S((2, 3, 4)), S((2, 3, 2, 3))), records=("batch_norm",) + NORM,
       grad_fn=False),
    fn("instance_norm", (S((2, 3, 4), *RUNNING, (3,), (3,)),),
       lambda F, x, mean, var, w, b: F.instance_norm(x, mean, var, w, b),
       variant="running stats", records=("batch_norm",) + NORM, grad_fn=False,
       vmap_error=SHARED_RUNNING),
    fn("local_response_norm", (S((2, 5, 3)), S((2, 4, 3, 2))),
       lambda F, x: F.local_response_norm(x, 3, 0.5, 0.75, 1.5), grad_fn=False),
    fn("rms_norm", (S((3, 4), (4,)), S((2, 3, 4), (3, 4))),
       lambda F, x, w: F.rms_norm(x, tuple(w.shape), w), grad_fn=False),
    fn("normalize", (S((3, 4)), S((2, 3, 4))), domain=NONZERO),
    fn("normalize", (S((3, 4)),), lambda F, x: F.normalize(x, 1, 0), variant="p=1,dim=0",
       domain=NONZERO),
]

# ---- distances and attention -------------------------------------------------------------------

CDIST_SHAPES = (S((2, 3), (4, 3)), S((2, 2, 3), (2, 4, 3)), S((2, 1, 3, 2), (3, 4, 2)),
                S((1, 1), (1, 1)))


def _cdist_twice(p: float):
    """cdist with p, against a twice-differentiable torch form of it."""

    def call(m, a, b):
        if m is torch:
            if p == 2.0:
                return torch.cdist(a, b, compute_mode="use_mm_for_euclid_dist")
            return torch.linalg.vector_norm(a.unsqueeze(-2) - b.unsqueeze(-3), p, -1)
        return m.cdist(a, b, p)

    return call


DISTANCE = [
    fn("cosine_similarity", (S((3, 4), (3, 4)), S((2, 3, 4), (3, 4))), domain=NONZERO),
    fn("cosine_similarity", (S((3, 4), (3, 4)),),
       lambda F, a, b: F.cosine_similarity(a, b, 0), variant="dim=0", domain=NONZERO),
    top("cosine_similarity", (S((3, 4), (3, 4)),), lambda m, a, b: m.cosine_similarity(a, b),
        domain=NONZERO),
    fn("pairwise_distance", (S((3, 4), (3, 4)), S((4,), (4,))), grad_fn=False),
    fn("pairwise_distance", (S((3, 4), (3, 4)),),
       lambda F, a, b: F.pairwise_distance(a, b, 1.0, 1e-6, True), variant="p=1,keepdim",
       grad_fn=False),
    fn("pairwise_distance", (S((3, 4), (3, 4)),),
       lambda F, a, b: F.pairwise_distance(a, b, 3.0), variant="p=3", grad_fn=False),
    top("pairwise_distance", (S((3, 4), (3, 4)),), lambda m, a, b: m.pairwise_distance(a, b),
        grad_fn=False),
    # cdist: torch's direct kernel has no second derivative; its matmul form (p = 2) and the
    # norm of the differences (any p) are the oracles for the second order.
    top("cdist", CDIST_SHAPES, lambda m, a, b: m.cdist(a, b), grad_fn=False, orders=(1,)),
    *[top("cdist", CDIST_SHAPES, _cdist_twice(p), variant=f"p={p}, twice",
          grad_fn=False) for p in (2.0, 1.0, 3.0, 0.5)],
    top("cdist", CDIST_SHAPES[:1], lambda m, a, b: m.cdist(a, b, p=float("inf")),
        variant="p=inf", grad_fn=False, orders=(1,)),
    # Zero distances (a row against itself): torch's gradient there is 0 for every p.
    *[top("cdist", (S((3, 2)), S((2, 3, 2))), lambda m, a, p=p: m.cdist(a, a, p),
          variant=f"zero distance p={p}", grad_fn=False, orders=(1,))
      for p in (2.0, 1.0, 3.0, float("inf"), 0.0)],
    # torch has no second derivative of pdist.
    fn("pdist", (S((4, 3)),), grad_fn=False, orders=(1,)),
    fn("pdist", (S((4, 3)),), lambda F, x: F.pdist(x, 1.5), variant="p=1.5", grad_fn=False,
       orders=(1,)),
    fn("channel_shuffle", (S((2, 6, 3)),), lambda F, x: F.channel_shuffle(x, 3), grad_fn=False),
    fn("scaled_dot_product_attention", (S((2, 3, 4), (2, 5, 4), (2, 5, 2)),),
       grad_fn=False, records=("softmax",)),
    fn("scaled_dot_product_attention", (S((1, 2, 4, 3), (1, 2, 4, 3), (1, 2, 4, 3)),),
       lambda F, q, k, v: F.scaled_dot_product_attention(q, k, v, is_causal=True, scale=0.7),
       variant="causal", grad_fn=False, records=("softmax",), orders=(1,)),
    fn("scaled_dot_product_attention",
       (S((2, 3, 4), (2, 5, 4), (2, 5, 2), Const([[True, False, True, True, False]] * 3)),
        S((2, 3, 4), (2, 5, 4), (2, 5, 2), (3, 5))),
       lambda F, q, k, v, mask: F.scaled_dot_product_attention(q, k, v, mask),
       variant="mask", grad_fn=False, records=("softmax",)),
    fn("scaled_dot_product_attention", (S((1, 4, 3, 2), (1, 2, 3, 2), (1, 2, 3, 2)),),
       lambda F, q, k, v: F.scaled_dot_product_attention(q, k, v, enable_gqa=True),
       variant="gqa", grad_fn=False, records=("softmax",), orders=(1,)),
]

# ---- losses ------------------------------------------------------------------------------------

TARGETS = Const([0, 4, 2])
CLASS_WEIGHT = Const([0.5, 1.0, 2.0, 1.5, 0.2])
IGNORED = Const([0, -100, 2])
TARGETS_2D = Const([[[0, 2], [1, 1]], [[2, 0], [-100, 1]]])
CE = ("cross_entropy", "cross_entropy_backward")


def _losses(name: str, samples, reductions=("mean", "sum", "none"), extra=None, tag: str = "",
            **kwargs):
    """One row per reduction of nn.functional.<name>(*args, reduction=r, **extra)."""
    extra = extra or {}
    rows = []
    for r in reductions:
        def call(F, *args, r=r):
            return getattr(F, name)(*args, reduction=r, **extra)

        label = ",".join(([tag] if tag else []) + [r] + [f"{k}={v}" for k, v in extra.items()])
        rows.append(fn(name, samples, call, variant=label, **kwargs))
    return rows


LOSSES = [
    *_losses("mse_loss", (S((3, 4), (3, 4)), S((), ()), S((3, 4), T((3, 4), grad=False))),
             records=("mse_loss", "mse_loss_backward"), orders=(1, 2, 3)),
    *_losses("mse_loss", (S((3, 4), (4,)), S((3, 1), (1, 4))), ("mean",), tag="broadcast",
             records=("mse_loss", "mse_loss_backward")),
    fn("mse_loss", (S((3, 4), (3, 4), T((3, 4), POSITIVE)),),
       lambda F, x, y, w: F.mse_loss(x, y, weight=w), variant="weight", grad_fn=False),
    *_losses("l1_loss", (S((3, 4), (3, 4)),), grad_fn=False),
    fn("l1_loss", (S((3, 4), (3, 4), T((3, 4), POSITIVE)),),
       lambda F, x, y, w: F.l1_loss(x, y, weight=w), variant="weight", grad_fn=False),
    *_losses("smooth_l1_loss", (S((3, 4), (3, 4)),), grad_fn=False),
    *_losses("smooth_l1_loss", (S((3, 4), (3, 4)),), ("mean",), {"beta": 0.5}, grad_fn=False),
    *_losses("smooth_l1_loss", (S((3, 4), (3, 4)),), ("sum",), {"beta": 0.0}, grad_fn=False),
    *_losses("huber_loss", (S((3, 4), (3, 4)),), grad_fn=False),
    *_losses("huber_loss", (S((3, 4), (3, 4)),), ("mean",), {"delta": 0.5}, grad_fn=False),
    fn("huber_loss", (S((3, 4), (3, 4), T((3, 4), POSITIVE)),),
       lambda F, x, y, w: F.huber_loss(x, y, weight=w), variant="weight", grad_fn=False),
    *_losses("cross_entropy", (S((3, 5), TARGETS), S((5,), Const(3))), records=CE,
             orders=(1, 2, 3)),
    *_losses("cross_entropy", (S((3, 5), TARGETS, CLASS_WEIGHT), S((3, 5), IGNORED)),
             tag="weight,ignored", records=CE),
    *_losses("cross_entropy", (S((3, 5), TARGETS, CLASS_WEIGHT),), ("mean",),
             {"ignore_index": 4}, records=CE),
    # torch views 3-D inputs as 4-D: with reduction='none' its last step is a view.
    *_losses("cross_entropy", (S((2, 3, 2, 2), TARGETS_2D),
                               S((2, 3, 4), Const([[0, 2, 1, 1], [2, 2, 0, 1]]), grad_fn=False)),
             tag="2d", records=("cross_entropy2d", "cross_entropy_backward")),
    *_losses("cross_entropy", (S((3, 5), TARGETS, CLASS_WEIGHT), S((3, 5), IGNORED)),
             extra={"label_smoothing": 0.2}, records=("log_softmax", "nll_loss"),
             grad_fn=False),
    *_losses("cross_entropy", (S((3, 5), T((3, 5), POSITIVE)), S((3, 5), (3, 5), CLASS_WEIGHT)),
             extra={"label_smoothing": 0.1}, records=("log_softmax",), grad_fn=False),
    *_losses("cross_entropy", (S((3, 5), T((3, 5), POSITIVE)),), ("mean",), tag="probabilities",
             records=("log_softmax",), grad_fn=False),
    *_losses("nll_loss", (S((3, 5), TARGETS), S((3, 5), IGNORED, CLASS_WEIGHT), S((5,), Const(1))),
             records=("nll_loss",)),
    *_losses("nll_loss", (S((2, 3, 2, 2), TARGETS_2D),), tag="2d", records=("nll_loss2d",)),
    *_losses("binary_cross_entropy", (S((3, 4), (3, 4)), S((3, 4), (3, 4), T((3, 4), POSITIVE,
                                                                              grad=False))),
             domain=PROB, records=("binary_cross_entropy",)),
    *_losses("binary_cross_entropy_with_logits", (S((3, 4), T((3, 4), PROB)),
                                                  S((3, 4), T((3, 4), PROB),
                                                    T((3, 4), POSITIVE, grad=False))),
             grad_fn=False),
    fn("binary_cross_entropy_with_logits", (S((3, 4), T((3, 4), PROB), Const([1.0, 2.0, 0.5,
                                                                              3.0])),),
       lambda F, x, y, pw: F.binary_cross_entropy_with_logits(x, y, pos_weight=pw),
       variant="pos_weight", grad_fn=False),
    *_losses("kl_div", (S((3, 4), T((3, 4), POSITIVE)),), ("batchmean", "sum", "none"),
             grad_fn=False),
    *_losses("kl_div", (S((3, 4), (3, 4)),), ("batchmean",), {"log_target": True},
             grad_fn=False),
    fn("kl_div", (S((3, 4), T((3, 4), Domain(0.0, 1.0, avoid=(0.5,)), grad=False)),),
       lambda F, x, y: F.kl_div(x, y * (y > 0.5), reduction="sum"), variant="zeros",
       grad_fn=False),
    *_losses("cosine_embedding_loss", (S((3, 4), (3, 4), Const([1, -1, 1])),
                                       S((4,), (4,), Const(-1))),
             domain=NONZERO, grad_fn=False),
    *_losses("cosine_embedding_loss", (S((3, 4), (3, 4), Const([-1, -1, 1])),), ("mean",),
             {"margin": -0.5}, domain=NONZERO, grad_fn=False),
    *_losses("margin_ranking_loss", (S((5,), (5,), Const([1.0, -1.0, 1.0, 1.0, -1.0])),),
             grad_fn=False),
    *_losses("margin_ranking_loss", (S((5,), (5,), Const([1.0, -1.0, 1.0, 1.0, -1.0])),),
             ("mean",), {"margin": 0.5}, grad_fn=False),
    *_losses("triplet_margin_loss", (S((3, 4), (3, 4), (3, 4)),), grad_fn=False),
    *_losses("triplet_margin_loss", (S((3, 4), (3, 4), (3, 4)),), ("mean",),
             {"swap": True, "margin": 2.0, "p": 1}, grad_fn=False),
    *_losses("triplet_margin_with_distance_loss", (S((3, 4), (3, 4), (3, 4)),), ("mean", "none"),
             grad_fn=False),
    *_losses("hinge_embedding_loss", (S((3, 4), Const([[1.0, -1.0, 1.0, -1.0]] * 3)),),
             grad_fn=False),
    *_losses("soft_margin_loss", (S((3, 4), Const([[1.0, -1.0, 1.0, -1.0]] * 3)),),
             grad_fn=False),
    *_losses("multilabel_soft_margin_loss", (S((3, 4), Const([[1.0, 0.0, 1.0, 0.0]] * 3)),),
             grad_fn=False),
    # torch has no second derivative of multi_margin_loss.
    *_losses("multi_margin_loss", (S((3, 5), TARGETS),), grad_fn=False, orders=(1,)),
    *_losses("multi_margin_loss", (S((3, 5), TARGETS),), ("mean",), {"p": 2, "margin": 0.5},
             grad_fn=False, orders=(1,)),
    *_losses("poisson_nll_loss", (S((3, 4), T((3, 4), POSITIVE)),), grad_fn=False),
    *_losses("poisson_nll_loss", (S((3, 4), T((3, 4), Domain(0.0, 3.0))),), ("mean",),
             {"log_input": False, "full": True}, domain=POSITIVE, grad_fn=False),
    *_losses("gaussian_nll_loss", (S((3, 4), (3, 4), T((3, 4), POSITIVE)),
                                   S((3, 4), (3, 4), T((3, 1), POSITIVE))), grad_fn=False),
]

ROWS = (ACTIVATIONS + SOFTMAX + LINEAR + DROPOUT + EMBEDDING + PAD + CONVOLUTION + POOLING
        + NORMALIZATION + DISTANCE + LOSSES)

# ---- more of torch.nn: CTC, multilabel margin, embedding bags, sampling, fractional pools -------


def _torch_ctc(log_probs, targets, input_lengths, target_lengths, reduction="mean"):
    """CTC in plain torch ops (reachable states only), twice differentiable: torch's own
    ctc_loss has no second derivative."""
    losses = []
    for n, (frames, k) in enumerate(zip(input_lengths, target_lengths)):
        labels = [0]
        for label in targets[n, :k].tolist():
            labels += [label, 0]
        alpha = {0: log_probs[0, n, 0]}
        if k:
            alpha[1] = log_probs[0, n, labels[1]]
        for t in range(1, frames):
            new = {}
            for s, label in enumerate(labels):
                prev = [alpha[j] for j in (s, s - 1) if j in alpha]
                if s >= 2 and label != 0 and label != labels[s - 2] and s - 2 in alpha:
                    prev.append(alpha[s - 2])
                if prev:
                    new[s] = torch.logsumexp(torch.stack(prev), 0) + log_probs[t, n, label]
            alpha = new
        ends = [alpha[s] for s in (len(labels) - 1, len(labels) - 2) if s in alpha]
        losses.append(-torch.logsumexp(torch.stack(ends), 0))
    losses = torch.stack(losses)
    if reduction == "none":
        return losses
    if reduction == "sum":
        return losses.sum()
    return (losses / torch.tensor(target_lengths).clamp(min=1)).mean()


CTC_TARGETS = Const([[1, 2, 2], [3, 1, 0]])


def _ctc(reduction: str, twice: bool = False, **kwargs):
    def call(m, x, targets):
        log_probs = x.log_softmax(2)
        if twice and m is torch:
            return _torch_ctc(log_probs, targets, (6, 5), (3, 2), reduction)
        return m.nn.functional.ctc_loss(log_probs, targets, (6, 5), (3, 2),
                                        reduction=reduction, **kwargs)

    return call


MORE = [
    # torch's ctc_loss gradient assumes log-softmax inputs (see chainrule/ops/loss.py), so the
    # rows feed it log_softmax(x); torch has no second derivative: a plain-torch CTC is the
    # oracle of the second order.
    *[top("nn.functional.ctc_loss", (S((6, 2, 4), CTC_TARGETS),), _ctc(r), variant=r,
          grad_fn=False, orders=(1,)) for r in ("mean", "sum", "none")],
    top("nn.functional.ctc_loss", (S((6, 2, 4), CTC_TARGETS),), _ctc("mean", True),
        variant="twice", grad_fn=False),
    top("nn.functional.ctc_loss", (S((6, 2, 4), Const([1, 2, 2, 3, 1])),),
        _ctc("none", zero_infinity=True), variant="concatenated,zero_infinity", grad_fn=False,
        orders=(1,)),
]

BAG_INDICES = Const([1, 2, 4, 4, 3, 0, 5, 6])
BAG_OFFSETS = Const([0, 2, 2, 5])


def _bag(mode: str, **kwargs):
    def call(F, indices, weight, *rest):
        offsets = rest[0] if indices.ndim == 1 else None
        weights = rest[-1] if len(rest) == 2 - (indices.ndim == 2) else None
        return F.embedding_bag(indices, weight, offsets, mode=mode, per_sample_weights=weights,
                               **kwargs)

    return call


# torch has no second derivative of embedding_bag or multilabel_margin_loss
# (tests/nn/test_modules_more.py checks ours with gradgradcheck).
MORE += [
    *[fn("embedding_bag", (S(BAG_INDICES, (7, 3), BAG_OFFSETS), S(Const([[1, 2, 4], [4, 3, 0]]),
                                                                  (7, 3))),
         _bag(mode), variant=mode, grad_fn=False, orders=(1,)) for mode in ("sum", "mean", "max")],
    fn("embedding_bag", (S(BAG_INDICES, (7, 3), BAG_OFFSETS, (8,)),), _bag("sum"),
       variant="per_sample_weights", grad_fn=False, orders=(1,)),
    *[fn("embedding_bag", (S(BAG_INDICES, (7, 3), Const([0, 2, 2, 5, 8])),),
         _bag(mode, padding_idx=4, include_last_offset=True), variant=f"{mode},padding_idx",
         grad_fn=False, orders=(1,)) for mode in ("mean", "max")],
    *_losses("multilabel_margin_loss", (S((2, 4), Const([[3, 0, -1, 1], [1, 1, 2, -1]])),
                                        S((4,), Const([2, -1, 0, 1]))),
             grad_fn=False, orders=(1,)),
]


def _sample(**kwargs):
    def call(F, input, grid):
        return F.grid_sample(input, grid, **kwargs)

    return call


GRID = Domain(-1.3, 1.3)

MORE += [
    fn("affine_grid", (S((2, 2, 3)),),
       lambda F, theta: F.affine_grid(theta, (2, 3, 4, 5), align_corners=False), grad_fn=False),
    fn("affine_grid", (S((1, 2, 3)),),
       lambda F, theta: F.affine_grid(theta, [1, 1, 1, 3], align_corners=True),
       variant="align_corners", grad_fn=False),
    fn("affine_grid", (S((2, 3, 4)),),
       lambda F, theta: F.affine_grid(theta, (2, 1, 2, 3, 4), align_corners=False),
       variant="3d", grad_fn=False),
    *[fn("grid_sample", (S((2, 3, 4, 5), T((2, 3, 2, 2), GRID)),),
         _sample(padding_mode=pm, align_corners=ac), variant=f"bilinear,{pm},{ac}",
         grad_fn=False) for pm in ("zeros", "border", "reflection") for ac in (False, True)],
    fn("grid_sample", (S((2, 3, 4, 5), T((2, 3, 2, 2), GRID)),),
       _sample(mode="nearest", padding_mode="reflection", align_corners=False),
       variant="nearest", grad_fn=False, orders=(1,)),
    # float64 only: in float32 torch's second derivatives of the cubic weights round
    # differently (relative 3e-6, above the float32 tolerance on values near 20).
    *[fn("grid_sample", (S((2, 3, 4, 5), T((2, 3, 2, 2), GRID)),),
         _sample(mode="bicubic", padding_mode=pm, align_corners=False), variant=f"bicubic,{pm}",
         grad_fn=False, dtypes=("float64",)) for pm in ("zeros", "reflection")],
    *[fn("grid_sample", (S((1, 2, 3, 4, 3), T((1, 2, 2, 3, 3), GRID)),),
         _sample(padding_mode=pm, align_corners=True), variant=f"3d,{pm}", grad_fn=False)
      for pm in ("zeros", "border")],
]

SAMPLES_2D = Const([[[0.31, 0.77], [0.05, 0.52], [0.93, 0.18]],
                    [[0.64, 0.29], [0.48, 0.91], [0.12, 0.36]]])
SAMPLES_3D = Const([[[0.31, 0.77, 0.52], [0.05, 0.93, 0.18]]])

# Fractional max pooling is random through its samples: the rows pass them explicitly.
MORE += [
    fn("fractional_max_pool2d", (S((2, 3, 7, 9), SAMPLES_2D),),
       lambda F, x, u: F.fractional_max_pool2d(x, (2, 3), (4, 5), return_indices=True,
                                               _random_samples=u),
       records=("max_pool_backward",), grad_fn=False),
    fn("fractional_max_pool2d", (S((3, 6, 8), SAMPLES_2D),),
       lambda F, x, u: F.fractional_max_pool2d(x, 2, output_ratio=(0.5, 0.7),
                                               _random_samples=u),
       variant="unbatched,ratio", records=("max_pool_backward",),
       grad_fn=False),
    fn("fractional_max_pool3d", (S((1, 2, 5, 6, 7), SAMPLES_3D),),
       lambda F, x, u: F.fractional_max_pool3d(x, (2, 3, 2), (3, 2, 4), _random_samples=u),
       records=("max_pool_backward",), grad_fn=False),
    fn("fractional_max_pool2d_with_indices", (S((2, 3, 7, 9), SAMPLES_2D),),
       lambda F, x, u: F.fractional_max_pool2d_with_indices(x, 3, (3, 4), _random_samples=u),
       records=("max_pool_backward",), grad_fn=False),
]

MORE += [
    fn("conv_tbc", (S((5, 2, 3), (3, 3, 4), (4,)),), lambda F, x, w, b: F.conv_tbc(x, w, b, 1),
       grad_fn=False),
    fn("linear_cross_entropy", (S((3, 4), (5, 4), TARGETS), S((4,), (5, 4), Const(2))),
       lambda F, x, w, t: F.linear_cross_entropy(x, w, t), grad_fn=False),
    fn("linear_cross_entropy", (S((3, 4), (5, 2, 4), Const([[0, 4], [2, 2], [1, 3]]), (5, 2)),),
       lambda F, x, w, t, b: F.linear_cross_entropy(x, w, t, linear_bias=b, reduction="none",
                                                    label_smoothing=0.1),
       variant="K-dimensional,bias,smoothing", grad_fn=False),
    fn("linear_cross_entropy", (S((3, 4), (5, 4), T((3, 5), Domain(0.1, 1.0), grad=False)),),
       lambda F, x, w, p: F.linear_cross_entropy(x, w, p / p.sum(1, keepdim=True)),
       variant="probabilities", grad_fn=False),
]


def _mha(**kwargs):
    def call(F, q, k, v, in_w, in_b, out_w, out_b, *rest):
        names = kwargs.get("rest", ())
        extra = dict(zip(names, rest))
        bias_k, bias_v = extra.pop("bias_k", None), extra.pop("bias_v", None)
        options = {k: v for k, v in kwargs.items() if k != "rest"}
        return F.multi_head_attention_forward(q, k, v, 4, 2, in_w, in_b, bias_k, bias_v,
                                              options.pop("add_zero_attn", False), 0.0, out_w,
                                              out_b, **options, **extra)

    return call


MHA = ((3, 2, 4), (5, 2, 4), (5, 2, 4), (12, 4), (12,), (4, 4), (4,))
KEY_PADDING = Const([[False, True, False, False, True], [False, False, False, True, False]])

# Second derivatives through the projections, softmax and output projection accumulate
# float32 rounding beyond the float32 tolerance (relative 2e-5): float32 to the first order.
MORE += [
    fn("multi_head_attention_forward", (S(*MHA),), _mha(), grad_fn=False, records=("softmax",),
       dtypes=("float64",)),
    fn("multi_head_attention_forward", (S(*MHA),), _mha(), variant="float32", grad_fn=False,
       records=("softmax",), dtypes=("float32",), orders=(1,)),
    fn("multi_head_attention_forward", (S(*MHA, (1, 1, 4), (1, 1, 4), KEY_PADDING, (3, 5)),),
       _mha(add_zero_attn=True, average_attn_weights=False,
            rest=("bias_k", "bias_v", "key_padding_mask", "attn_mask")),
       variant="bias_kv,zero_attn,masks", grad_fn=False, records=("softmax",),
       dtypes=("float64",)),
    fn("multi_head_attention_forward", (S((3, 4), (5, 4), (5, 4), (12, 4), (12,), (4, 4), (4,)),),
       _mha(), variant="unbatched", grad_fn=False, records=("softmax",), dtypes=("float64",)),
]

MORE += [
    fn("lp_pool2d", (S((2, 3, 5, 6)),), lambda F, x: F.lp_pool2d(x, 2.0, (2, 3), 2, True),
       variant="stride,ceil", domain=POSITIVE, grad_fn=False, records=("avg_pool2d",)),
    fn("lp_pool3d", (S((1, 2, 4, 4, 5)),), lambda F, x: F.lp_pool3d(x, 1.5, 2), domain=POSITIVE,
       grad_fn=False, records=("avg_pool3d",)),
    fn("max_unpool1d", (S((2, 3, 8)),),
       lambda F, x: F.max_unpool1d(*F.max_pool1d(x * 1, 2, return_indices=True), 2),
       records=MAX, grad_fn=False),
    fn("max_unpool3d", (S((1, 2, 4, 4, 4)),),
       lambda F, x: F.max_unpool3d(*F.max_pool3d(x * 1, 2, return_indices=True), 2,
                                   output_size=(5, 5, 4)),
       records=("max_pool3d", "max_pool_backward"), grad_fn=False),
    # torch's native_channel_shuffle has no derivative (ours is channel_shuffle's): values only.
    fn("native_channel_shuffle", (S((2, 6, 3)),), lambda F, x: F.native_channel_shuffle(x, 2),
       grad_fn=False, orders=()),
    fn("feature_alpha_dropout", (S((2, 3, 4)),),
       lambda F, x: F.feature_alpha_dropout(x * 1, 0.5), variant="eval", records=("mul",)),
    fn("dropout3d", (S((2, 3, 2, 2, 2)),), lambda F, x: F.dropout3d(x, 1.0), records=("mul",)),
]

ROWS = ROWS + MORE
