"""The rest of torch.nn's layers against torch (same weights, inputs, outputs and gradients),
and what a row cannot show: warnings, errors, second derivatives torch does not have."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
import torch
from op_db.nn import MORE

import chainrule
import chainrule.autograd.forward_ad as fw
import chainrule.nn as nn
from chainrule.autograd import gradcheck, gradgradcheck

from ._helpers import Case, data, grad, run_twins, twin

_SEEDED = torch.Generator().manual_seed(0)  # the cases' fixed tensors: test ids alike in every process


def _positive(shape):
    return grad(lambda r: r.uniform(0.5, 2.0, shape))


def _pooled(nd: int):
    """(values, indices) of a 2-wide max pool of a random (2, 3, 4, ...) input."""
    pool = getattr(torch.nn.functional, f"max_pool{nd}d")

    def make(r):
        x = torch.tensor(r.standard_normal((2, 3) + (4,) * nd))
        return pool(x, 2, return_indices=True)

    return make


def _unpool_case(nd: int) -> Case:
    make = _pooled(nd)
    return Case(f"MaxUnpool{nd}d", (2,),
                inputs=[grad(lambda r: make(r)[0].numpy()), data(lambda r: make(r)[1].numpy())])


CTC_TARGETS = data(lambda r: np.array([[1, 2, 2], [3, 1, 0]]))

CASES = [
    Case("AlphaDropout", train=False, inputs=[(3, 4)]),
    Case("FeatureAlphaDropout", (0.2, True), train=False, inputs=[(2, 3, 4)]),
    Case("ChannelShuffle", (3,), inputs=[(2, 6, 2)]),
    Case("LocalResponseNorm", (3,), inputs=[(2, 5, 3, 2)]),
    Case("LocalResponseNorm", (2, 0.5, 0.5, 2.0), inputs=[(2, 4, 3)]),
    Case("CrossMapLRN2d", (3, 0.5, 0.75, 1.5), inputs=[(2, 5, 3, 2)], id="CrossMapLRN2d"),
    Case("LPPool1d", (2, 3), inputs=[_positive((2, 3, 7))]),
    Case("LPPool2d", (3.0, (2, 3), 1, True), inputs=[_positive((2, 3, 4, 5))]),
    Case("LPPool3d", (1, 2), inputs=[_positive((1, 2, 4, 4, 4))]),
    _unpool_case(1),
    _unpool_case(2),
    _unpool_case(3),
    Case("AdaptiveMaxPool3d", ((2, None, 1),), inputs=[(1, 2, 3, 4, 5)]),
    Case("AdaptiveMaxPool3d", (2, True), inputs=[(2, 3, 4, 5)]),
    Case("TripletMarginWithDistanceLoss", inputs=[(3, 4), (3, 4), (3, 4)]),
    Case("TripletMarginWithDistanceLoss", kwargs={"margin": 2.0, "swap": True,
                                                  "reduction": "sum"},
         inputs=[(3, 4), (3, 4), (3, 4)]),
    Case("NLLLoss2d", inputs=[(2, 3, 2, 2), data(lambda r: r.integers(0, 3, (2, 2, 2)))]),
    Case("MultiLabelMarginLoss",
         inputs=[(2, 4), data(lambda r: np.array([[3, 0, -1, 1], [1, 1, 2, -1]]))]),
    Case("MultiLabelMarginLoss", kwargs={"reduction": "none"},
         inputs=[(2, 4), data(lambda r: np.array([[3, 0, -1, 1], [1, 1, 2, -1]]))]),
    Case("CTCLoss", inputs=[grad(lambda r: np.log(r.dirichlet(np.ones(4), (6, 2)))),
                            CTC_TARGETS, data(lambda r: np.array([6, 5])),
                            data(lambda r: np.array([3, 2]))]),
    Case("CTCLoss", (1, "sum", True),
         inputs=[grad(lambda r: np.log(r.dirichlet(np.ones(4), (4, 2)))),
                 data(lambda r: np.array([[2, 2, 2], [3, 2, 0]])), data(lambda r: np.array([4, 4])),
                 data(lambda r: np.array([3, 2]))], id="CTCLoss(zero_infinity)"),
    Case("FractionalMaxPool2d", ((2, 3),), {"output_size": (4, 5), "return_indices": True,
                                             "_random_samples": torch.rand(2, 3, 2, generator=_SEEDED)},
         inputs=[(2, 3, 7, 9)]),
    Case("FractionalMaxPool2d", (2,), {"output_ratio": 0.6, "_random_samples": torch.rand(1, 3, 2, generator=_SEEDED)},
         inputs=[(3, 6, 8)]),
    Case("FractionalMaxPool3d", (2,), {"output_size": 3, "_random_samples": torch.rand(1, 2, 3, generator=_SEEDED)},
         inputs=[(1, 2, 5, 6, 7)]),
    Case("AdaptiveLogSoftmaxWithLoss", (8, 10, [4, 8]),
         inputs=[(5, 8), data(lambda r: np.array([1, 5, 9, 3, 8]))]),
    Case("AdaptiveLogSoftmaxWithLoss", (8, 10, [3]), {"div_value": 2.0, "head_bias": True},
         inputs=[(8,), data(lambda r: np.array(7))]),
    Case("LinearCrossEntropyLoss", (4, 5), inputs=[(3, 4), data(lambda r: np.array([0, 4, 2]))]),
    Case("LinearCrossEntropyLoss", (4, 5), {"out_features": (2,), "bias": True,
                                            "reduction": "none", "label_smoothing": 0.1,
                                            "weight": torch.rand(5, generator=_SEEDED)},
         inputs=[(3, 4), data(lambda r: np.array([[0, 4], [2, 2], [1, 3]]))]),
    Case("LinearCrossEntropyLoss", (4, 5), {"ignore_index": 1,
                                            "options": torch.nn.LinearCrossEntropyOptions()},
         inputs=[(3, 4), data(lambda r: np.array([0, 1, 2]))], id="LinearCrossEntropyLoss(opt)"),
    Case("EmbeddingBag", (7, 3), inputs=[data(lambda r: np.array([1, 2, 4, 4, 3, 0, 5])),
                                         data(lambda r: np.array([0, 2, 2, 5]))]),
    Case("EmbeddingBag", (7, 3), {"mode": "max", "padding_idx": 4},
         inputs=[data(lambda r: np.array([[1, 2, 4], [4, 3, 0]]))]),
    Case("EmbeddingBag", (7, 3), {"mode": "sum", "include_last_offset": True},
         inputs=[data(lambda r: np.array([1, 2, 4, 4, 3, 0, 5])),
                 data(lambda r: np.array([0, 2, 2, 5, 7])), (7,)]),
    Case("EmbeddingBag", (7, 3), {"mode": "mean", "include_last_offset": True},
         inputs=[data(lambda r: np.array([1, 2, 4, 4, 3, 0, 5])),
                 data(lambda r: np.array([0, 2, 2, 7]))]),
]

# The public names of torch.nn these tests cover (test_layers checks that every one is).
COVERED = {c.name for c in CASES} | {"LinearCrossEntropyOptions"}


@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize("case", CASES, ids=lambda c: c.id)
def test_layer_like_torch(case: Case, dtype: str) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)  # NLLLoss2d
        pair = twin(case.name, *case.args, **case.kwargs)
    if case.name == "CrossMapLRN2d":
        # torch's hand-written backward of CrossMapLRN2d is not the derivative of its forward
        # (its own gradcheck fails); ours is: compare the values, and check ours by gradcheck.
        run_twins(case, dtype, check_grads=False, pair=pair)
        return
    run_twins(case, dtype, pair=pair)


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.id)
def test_repr_like_torch(case: Case) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)
        ours, theirs = twin(case.name, *case.args, **case.kwargs)
    assert repr(ours) == repr(theirs)


def _f64(*shape, low=-1.0, high=1.0, seed=0):
    values = np.random.default_rng(seed).uniform(low, high, shape)
    return chainrule.tensor(values, requires_grad=True)


def test_cross_map_lrn2d_gradients() -> None:
    layer = nn.CrossMapLRN2d(4, 0.5, 0.75, 1.5)
    x = _f64(2, 7, 2, 2)
    assert gradcheck(layer, (x,))
    assert gradgradcheck(layer, (x,))


# ---- forward mode of the new functions ---------------------------------------------------------


def _float_outputs(result) -> list:
    result = result if isinstance(result, (tuple, list)) else (result,)
    return [o for o in result if o.dtype in (chainrule.float32, chainrule.float64)]


@pytest.mark.parametrize("row", [r for r in MORE if r.orders], ids=lambda r: r.id)
def test_forward_mode_agrees_with_reverse_mode(row) -> None:
    """<u, J v> from tangents equals <J^T u, v> from the backward, for the rows' new functions
    (reverse mode is checked against torch and by finite differences in tests/ops)."""
    sample = row.samples[0]
    args = sample.tensors(chainrule, sample.arrays(row.seed(0), "float64", row.domain))
    rng = np.random.default_rng(0)
    wrt = [i for i, a in enumerate(args) if isinstance(a, chainrule.Tensor) and a.requires_grad]
    tangents = {i: chainrule.tensor(rng.standard_normal(tuple(args[i].shape))) for i in wrt}
    with fw.dual_level():
        duals = [fw.make_dual(a.detach(), tangents[i]) if i in wrt else a
                 for i, a in enumerate(args)]
        outs = _float_outputs(row.op(*duals))
        forward = [fw.unpack_dual(o).tangent for o in outs]
    outs = _float_outputs(row.op(*args))
    seeds = [chainrule.tensor(rng.standard_normal(tuple(o.shape))) for o in outs]
    used = [(o, u, t) for o, u, t in zip(outs, seeds, forward) if o.requires_grad]
    grads = chainrule.autograd.grad([o for o, _, _ in used], [args[i] for i in wrt],
                                    [u for _, u, _ in used], allow_unused=True)
    lhs = sum(float((u * (0 if t is None else t)).sum()) for _, u, t in used)
    rhs = sum(float((g * tangents[i]).sum()) for g, i in zip(grads, wrt) if g is not None)
    assert np.isclose(lhs, rhs, rtol=1e-9, atol=1e-10), (lhs, rhs)
    assert lhs != 0 or row.id == "nn.functional.dropout3d"  # p = 1: zero


# ---- second derivatives torch does not have ------------------------------------------------


def test_multilabel_margin_loss_second_order() -> None:
    target = chainrule.tensor([[3, 0, -1, 1], [1, 1, 2, -1]])
    x = _f64(2, 4, low=-0.3, high=0.3)
    loss = lambda t: chainrule.nn.functional.multilabel_margin_loss(t, target)  # noqa: E731
    assert gradgradcheck(loss, (x,))


@pytest.mark.parametrize("mode", ["sum", "mean", "max"])
def test_embedding_bag_second_order(mode) -> None:
    indices = chainrule.tensor([1, 2, 4, 4, 3, 0, 5])
    offsets = chainrule.tensor([0, 2, 2, 5])
    weight = _f64(7, 3)
    bag = lambda w: chainrule.nn.functional.embedding_bag(indices, w, offsets, mode=mode) ** 2  # noqa: E731
    assert gradgradcheck(bag, (weight,))


def test_embedding_bag_per_sample_weights_second_order() -> None:
    indices = chainrule.tensor([[1, 2, 4], [4, 3, 0]])
    weight, scale = _f64(7, 3), _f64(2, 3, seed=1)

    def bag(w, s):
        return chainrule.nn.functional.embedding_bag(indices, w, mode="sum",
                                                     per_sample_weights=s) ** 2

    assert gradgradcheck(bag, (weight, scale))


@pytest.mark.parametrize("kwargs, error, message", [
    ({"offsets": None}, ValueError, "offsets has to be a 1D Tensor but got None"),
    ({"offsets": [1, 2]}, RuntimeError, "offsets\\[0\\] has to be 0"),
    ({"offsets": [0, 9]}, RuntimeError, "offsets\\[-1\\] can not be greater than input's length"),
    ({"offsets": [0, 2], "mode": "foo"}, ValueError, "mode has to be one of sum, mean or max"),
    ({"offsets": [0, 2], "mode": "max", "per_sample_weights": [1.0] * 7}, NotImplementedError,
     "per_sample_weights is only supported for mode='sum'"),
])
def test_embedding_bag_errors_like_torch(kwargs, error, message) -> None:
    for lib in (torch, chainrule):
        args = {k: lib.tensor(v) if isinstance(v, list) else v for k, v in kwargs.items()}
        with pytest.raises(error, match=message):
            lib.nn.functional.embedding_bag(lib.tensor([1, 2, 4, 4, 3, 0, 5]),
                                            lib.ones(7, 3), **args)


# ---- ctc_loss ---------------------------------------------------------------------------------


def test_ctc_loss_gradient_convention_like_torch() -> None:
    """Unnormalised log_probs: torch's gradient adds exp(log_probs) in the input's frames."""
    x = np.random.default_rng(0).standard_normal((6, 2, 4))
    grads = []
    for lib in (torch, chainrule):
        lp = lib.tensor(x, requires_grad=True)
        loss = lib.nn.functional.ctc_loss(lp, lib.tensor([[1, 2, 2], [3, 1, 0]]),
                                          lib.tensor([6, 4]), lib.tensor([3, 2]))
        loss.backward()
        grads.append(lp.grad.numpy())
    np.testing.assert_allclose(grads[1], grads[0], rtol=1e-10, atol=1e-12)
    assert (grads[1][4:, 1] == 0).all()


def test_ctc_loss_impossible_alignment_like_torch() -> None:
    x = np.log(np.random.default_rng(0).dirichlet(np.ones(4), (3, 2)))
    for zero_infinity in (False, True):
        out = []
        for lib in (torch, chainrule):
            lp = lib.tensor(x, requires_grad=True)
            loss = lib.nn.functional.ctc_loss(lp, lib.tensor([[1, 1, 1], [2, 3, 0]]), (3, 3),
                                              (3, 2), reduction="none",
                                              zero_infinity=zero_infinity)
            loss.sum().backward()
            out.append((loss.detach().numpy(), lp.grad.numpy()))
        np.testing.assert_allclose(out[1][0], out[0][0], rtol=1e-10)
        np.testing.assert_allclose(out[1][1], out[0][1], rtol=1e-10, atol=1e-12)


def test_ctc_loss_unbatched_like_torch() -> None:
    x = np.log(np.random.default_rng(0).dirichlet(np.ones(4), 5))
    values = [lib.nn.functional.ctc_loss(lib.tensor(x), lib.tensor([1, 2]), lib.tensor(5),
                                         lib.tensor(2), reduction=r).item()
              for r in ("none", "mean") for lib in (torch, chainrule)]
    np.testing.assert_allclose(values[1::2], values[::2], rtol=1e-12)


def test_ctc_loss_minus_inf_log_probs_like_torch() -> None:
    x = np.log(np.random.default_rng(0).dirichlet(np.ones(4), (5, 2)))
    x[:, 0, 1] = -np.inf  # the first target's first label can never be emitted
    for zero_infinity in (False, True):
        values = [lib.nn.functional.ctc_loss(lib.tensor(x), lib.tensor([[1, 2], [2, 1]]), (5, 5),
                                             (2, 2), reduction="none",
                                             zero_infinity=zero_infinity).numpy()
                  for lib in (torch, chainrule)]
        np.testing.assert_allclose(values[1], values[0], rtol=1e-12)


@pytest.mark.parametrize("input_lengths, target_lengths, message", [
    ((5, 6), (2, 2), "Expected input_lengths to have value at most 5, but got value 6"),
    ((5,), (2, 2), "input_lengths must be of size batch_size"),
    ((5, 5), (4, 2), "Expected tensor to have size at least 4 at dimension 1, but got size 3"),
    ((5, 5), (-1, 2), "Expected target_lengths to have value at least 0, but got value -1"),
])
def test_ctc_loss_errors_like_torch(input_lengths, target_lengths, message) -> None:
    x = np.log(np.random.default_rng(0).dirichlet(np.ones(4), (5, 2)))
    for lib in (torch, chainrule):
        with pytest.raises(RuntimeError, match=message):
            lib.nn.functional.ctc_loss(lib.tensor(x), lib.tensor([[1, 2, 3], [2, 2, 1]]),
                                       input_lengths, target_lengths)


# ---- dropout -----------------------------------------------------------------------------------


def _warnings_of(fn) -> list[str]:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        fn()
    return [str(w.message) for w in caught]


@pytest.mark.parametrize("name, shape", [
    ("dropout2d", (3, 4)), ("dropout2d", (2, 3, 4)), ("dropout2d", (2, 3, 4, 5, 2)),
    ("dropout3d", (2, 3, 4)), ("dropout3d", (2,) * 6), ("dropout2d", (3, 4, 5)),
    ("dropout3d", (2, 3, 4, 5)), ("dropout1d", (3, 4)),
])
def test_channel_dropout_warns_and_proceeds_like_torch(name, shape) -> None:
    got = {}
    for lib in (torch, chainrule):
        f = getattr(lib.nn.functional, name)
        result = []
        said = _warnings_of(lambda f=f, lib=lib, result=result: result.append(
            f(lib.ones(*shape), 0.5)))
        got[lib] = said, result[0]
    assert got[chainrule][0] == got[torch][0]
    ours = got[chainrule][1].numpy()
    assert ours.shape == shape
    assert set(np.unique(ours)) <= {0.0, 2.0}


@pytest.mark.parametrize("shape, channels", [((40, 50), (40, 50)), ((40, 50, 6), (40, 50, 1))])
def test_dropout2d_masks_as_torch_reads_the_dims(shape, channels) -> None:
    """A 2-D input is dropped elementwise, a 3-D one as (N, C, L) channels."""
    chainrule.manual_seed(0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        out = chainrule.nn.functional.dropout2d(chainrule.ones(*shape)).numpy()
    assert (out == np.broadcast_to(out.max(-1, keepdims=True), shape)).all() or len(shape) == 2
    per_mask = out.reshape(channels + (-1,))
    assert (per_mask.min(-1) == per_mask.max(-1)).all()
    assert abs((per_mask[..., 0] == 0).mean() - 0.5) < 0.05


@pytest.mark.parametrize("name, shape, message", [
    ("dropout1d", (4,), "dropout1d: Expected 2D or 3D input, but received a 1D input"),
    ("dropout1d", (2, 3, 4, 5), "dropout1d: Expected 2D or 3D input, but received a 4D input"),
    ("dropout2d", (4,), "Feature dropout requires at least 2 dimensions in the input"),
])
def test_channel_dropout_errors_like_torch(name, shape, message) -> None:
    for lib in (torch, chainrule):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            with pytest.raises(RuntimeError, match=message):
                getattr(lib.nn.functional, name)(lib.ones(*shape))


def test_alpha_dropout_modules_keep_selu_statistics() -> None:
    chainrule.manual_seed(0)
    x = chainrule.randn(400, 400)
    for layer in (nn.AlphaDropout(0.3), nn.FeatureAlphaDropout(0.3)):
        out = layer(x.reshape(400, 400, 1)).numpy()
        assert abs(out.mean()) < 0.05 and abs(out.std() - 1) < 0.05
        layer.eval()
        assert layer(x) is x


def test_fractional_max_pool_draws_its_samples() -> None:
    """Without _random_samples: windows drawn from the generator, seeded like the rest."""
    x = chainrule.randn(2, 3, 10, 10)
    chainrule.manual_seed(3)
    first = nn.FractionalMaxPool2d(2, output_size=4)(x)
    chainrule.manual_seed(3)
    again = nn.FractionalMaxPool2d(2, output_size=4)(x)
    np.testing.assert_array_equal(first.numpy(), again.numpy())
    draws = {tuple(nn.FractionalMaxPool2d(2, output_ratio=0.4)(x)[0, 0].flatten().tolist())
             for _ in range(20)}
    assert len(draws) > 1


@pytest.mark.filterwarnings("ignore:Initializing zero-element tensors")
def test_adaptive_log_softmax_log_prob_and_predict_like_torch() -> None:
    ours, theirs = twin("AdaptiveLogSoftmaxWithLoss", 8, 10, [2, 6], div_value=2.0)
    ours.double()
    theirs.double()
    x = np.random.default_rng(0).standard_normal((6, 8)) * 3
    np.testing.assert_allclose(ours.log_prob(chainrule.tensor(x)).detach().numpy(),
                               theirs.log_prob(torch.tensor(x)).detach().numpy(), rtol=1e-12)
    np.testing.assert_array_equal(ours.predict(chainrule.tensor(x)).numpy(),
                                  theirs.predict(torch.tensor(x)).numpy())
    for lib, layer in ((torch, theirs), (chainrule, ours)):  # batches only, as torch's
        with pytest.raises(IndexError, match="Dimension out of range"):
            layer.log_prob(lib.ones(8, dtype=lib.float64))


def test_adaptive_log_softmax_errors_like_torch() -> None:
    for lib in (torch, chainrule):
        with pytest.raises(ValueError, match="cutoffs should be a sequence of unique"):
            lib.nn.AdaptiveLogSoftmaxWithLoss(8, 10, [4, 4])
        layer = lib.nn.AdaptiveLogSoftmaxWithLoss(8, 10, [4])
        with pytest.raises(RuntimeError, match=r"Target values should be in \[0, 9\]"):
            layer(lib.ones(2, 8), lib.tensor([1, 10]))
        with pytest.raises(RuntimeError, match="0D or 1D target tensor expected"):
            layer(lib.ones(2, 8), lib.tensor([[1, 2]]))


@pytest.mark.parametrize("kwargs, message", [
    ({"chunking_method": "batch"}, "invalid chunking_method: 'batch'"),
    ({"acc_policy": "foo"}, "invalid acc_policy: 'foo'"),
    ({"batch_chunk_size": 0}, "batch_chunk_size must be positive int or None, got 0"),
])
def test_linear_cross_entropy_options_like_torch(kwargs, message) -> None:
    for lib in (torch, chainrule):
        with pytest.raises(ValueError, match=message):
            lib.nn.LinearCrossEntropyOptions(**kwargs)
    options = {"chunking_method": "aspect_ratio:2", "batch_chunk_size": 4}
    assert (repr(nn.LinearCrossEntropyOptions(**options))
            == repr(torch.nn.LinearCrossEntropyOptions(**options)))


@pytest.mark.parametrize("nd", [1, 2, 3])
def test_nn_grad_conv_gradients_like_torch(nd) -> None:
    """torch.nn.grad: the convolution's input and weight gradients, and their own gradients."""
    rng = np.random.default_rng(nd)
    x, w = rng.standard_normal((2, 4) + (5,) * nd), rng.standard_normal((6, 2) + (3,) * nd)
    options = {"stride": 2, "padding": 1, "groups": 2}
    conv = getattr(torch.nn.functional, f"conv{nd}d")
    g = rng.standard_normal(tuple(conv(torch.tensor(x), torch.tensor(w), **options).shape))
    results = []
    for lib in (torch, chainrule):
        weight, seed, inp = (lib.tensor(a, requires_grad=True) for a in (w, g, x))
        by_input = getattr(lib.nn.grad, f"conv{nd}d_input")(x.shape, weight, seed, **options)
        by_weight = getattr(lib.nn.grad, f"conv{nd}d_weight")(inp, w.shape, seed, **options)
        second = lib.autograd.grad((by_input ** 2).sum() + (by_weight ** 3).sum(),
                                   [weight, seed, inp])
        results.append([t.detach().numpy() for t in (by_input, by_weight, *second)])
    for ours, theirs in zip(results[1], results[0]):
        np.testing.assert_allclose(ours, theirs, rtol=1e-10, atol=1e-10)


def test_nll_loss2d_is_deprecated() -> None:
    with pytest.warns(FutureWarning, match="`NLLLoss2d` has been deprecated"):
        nn.NLLLoss2d()


# ---- max_unpool, channel_shuffle, local_response_norm: errors --------------------------------


@pytest.mark.parametrize("kwargs, error, message", [
    ({"output_size": (2, 2)}, ValueError, "dim 0 must be between 2 and 6"),
    ({"output_size": (2, 5, 5)}, ValueError, "output_size should be a sequence containing 2 or 4"),
    ({"stride": 1, "output_size": (3, 3)}, RuntimeError, "Found an invalid max index"),
])
def test_max_unpool_errors_like_torch(kwargs, error, message) -> None:
    x = np.random.default_rng(0).standard_normal((1, 2, 4, 4))
    for lib in (torch, chainrule):
        out, idx = lib.nn.functional.max_pool2d(lib.tensor(x), 2, return_indices=True)
        with pytest.raises(error, match=message):
            lib.nn.functional.max_unpool2d(out, idx, 2, **kwargs)


@pytest.mark.parametrize("shape, groups, message", [
    ((2, 6), 3, "channel_shuffle expects input with > 2 dims"),
    ((2, 6, 1), 0, "Number of groups to divide channels in must be positive"),
    ((2, 6, 1), 4, "Number of channels must be divisible by groups"),
])
def test_channel_shuffle_errors_like_torch(shape, groups, message) -> None:
    for lib in (torch, chainrule):
        with pytest.raises(RuntimeError, match=message):
            lib.nn.functional.channel_shuffle(lib.ones(*shape), groups)


def test_local_response_norm_error_like_torch() -> None:
    messages = []
    for lib in (torch, chainrule):
        with pytest.raises(ValueError) as caught:
            lib.nn.functional.local_response_norm(lib.ones(2, 3), 3)
        messages.append(str(caught.value))
    assert messages[0] == messages[1]


def test_multilabel_margin_loss_errors_like_torch() -> None:
    for lib in (torch, chainrule):
        x = lib.ones(2, 4)
        with pytest.raises(RuntimeError, match="inconsistent target size"):
            lib.nn.functional.multilabel_margin_loss(x, lib.tensor([0, 1, -1, 2]))
        with pytest.raises(RuntimeError, match="argument #2 'target' is out of range"):
            lib.nn.functional.multilabel_margin_loss(x, lib.tensor([[5, -1, 0, 0]] * 2))
