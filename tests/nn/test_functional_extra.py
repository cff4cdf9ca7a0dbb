"""chainrule.nn.functional beyond the op table: dropout statistics and seeding, running
statistics and train flags, the gradient conventions that are not derivatives (padding_idx,
scale_grad_by_freq), losses' reductions, errors, and forward mode on every nn row."""

from __future__ import annotations

import warnings
import zlib

import numpy as np
import pytest
import torch
import torch.autograd.forward_ad as torch_fwd
import torch.nn.functional as TF
from op_db import nn as nn_rows
from op_db._harness import as_tuple
from op_db._spec import T

import chainrule
import chainrule.autograd.forward_ad as fwd
import chainrule.nn.functional as F


def ours(array, grad: bool = False):
    t = chainrule.from_numpy(np.array(array))
    return t.requires_grad_() if grad else t


def theirs(array, grad: bool = False):
    t = torch.from_numpy(np.array(array))
    return t.requires_grad_() if grad else t


def close(got, want, rtol=1e-7, atol=1e-9):
    want = want.detach().numpy() if isinstance(want, torch.Tensor) else np.asarray(want)
    np.testing.assert_allclose(np.asarray(got.detach().numpy()), want, rtol=rtol, atol=atol)


# ---- dropout -------------------------------------------------------------------------------


def test_dropout_zeroes_a_fraction_p_and_scales_the_rest():
    chainrule.manual_seed(0)
    x = chainrule.ones(200, 500)
    out = F.dropout(x, 0.3).numpy()
    kept = out != 0
    assert abs(1 - kept.mean() - 0.3) < 0.01
    np.testing.assert_allclose(out[kept], 1 / 0.7, rtol=1e-6)
    assert out.dtype == np.float32
    assert abs(out.mean() - 1.0) < 0.02  # unbiased in expectation


def test_dropout_is_reproducible_under_manual_seed():
    x = chainrule.randn(50, 40)
    chainrule.manual_seed(123)
    a = F.dropout(x, 0.5).numpy()
    b = F.dropout(x, 0.5).numpy()
    chainrule.manual_seed(123)
    c = F.dropout(x, 0.5).numpy()
    np.testing.assert_array_equal(a, c)
    assert not np.array_equal(a != 0, b != 0)
    # The generator state can be saved and restored too.
    state = chainrule.default_generator.get_state()
    d = F.dropout(x, 0.5).numpy()
    chainrule.default_generator.set_state(state)
    np.testing.assert_array_equal(F.dropout(x, 0.5).numpy(), d)


def test_dropout_gradient_is_the_scaled_mask():
    chainrule.manual_seed(1)
    x = chainrule.randn(30, 20, requires_grad=True)
    out = F.dropout(x, 0.25)
    assert out.grad_fn.name() == "MulBackward0"
    out.sum().backward()
    mask = (out.detach().numpy() != 0) / 0.75
    np.testing.assert_allclose(x.grad.numpy(), mask, rtol=1e-6)


def test_dropout_train_flags_and_edge_probabilities():
    x = chainrule.randn(4, 5, requires_grad=True)
    assert F.dropout(x, 0.5, training=False) is x
    assert F.dropout(x, 0.0) is x
    assert chainrule.dropout(x, 0.5, False) is x
    zeros = F.dropout(x, 1.0)
    assert not zeros.numpy(force=True).any() and zeros.grad_fn.name() == "MulBackward0"
    for p in (-0.1, 1.5):
        with pytest.raises(ValueError, match="dropout probability has to be between 0 and 1, "
                                             f"but got {p}"):
            F.dropout(x, p)


def test_dropout_in_place_writes_the_input():
    chainrule.manual_seed(2)
    y = chainrule.randn(6, 7, requires_grad=True) * 1
    before = y.detach().numpy().copy()
    out = F.dropout(y, 0.5, inplace=True)
    assert out is y
    data = y.detach().numpy()
    np.testing.assert_allclose(data[data != 0], before[data != 0] * 2, rtol=1e-6)


def test_dropout2d_zeroes_whole_channels():
    chainrule.manual_seed(3)
    out = F.dropout2d(chainrule.ones(8, 16, 5, 5), 0.5).numpy()
    per_channel = out.reshape(8, 16, 25)
    assert ((per_channel == 0).all(axis=2) | (per_channel == 2).all(axis=2)).all()
    assert 0 < (per_channel == 0).all(axis=2).mean() < 1


def test_alpha_dropout_keeps_zero_mean_and_unit_variance():
    chainrule.manual_seed(5)
    x = chainrule.randn(400, 500)
    out = F.alpha_dropout(x, 0.2, training=True).numpy()
    assert abs(out.mean()) < 0.01 and abs(out.var() - 1) < 0.02
    alpha = 1.7580993408473766
    a = 1 / np.sqrt((alpha**2 * 0.2 + 1) * 0.8)
    dropped = np.isclose(out, alpha * a * (0.2 - 1))  # the value dropped units take
    assert abs(dropped.mean() - 0.2) < 0.01
    assert F.alpha_dropout(x, 0.2) is x  # training defaults to False
    chainrule.manual_seed(5)
    per_channel = F.feature_alpha_dropout(chainrule.zeros(8, 16, 3, 3), 0.5, True).numpy()
    assert (per_channel == per_channel[:, :, :1, :1]).all()


def test_gumbel_softmax_samples_the_simplex_and_hard_is_one_hot():
    chainrule.manual_seed(6)
    logits = chainrule.randn(5, 4, requires_grad=True)
    soft = F.gumbel_softmax(logits, tau=0.5)
    np.testing.assert_allclose(soft.detach().numpy().sum(1), 1, rtol=1e-6)
    hard = F.gumbel_softmax(logits, hard=True)
    values = hard.detach().numpy()
    assert ((values == 0) | (values == 1)).all() and (values.sum(1) == 1).all()
    (grad,) = chainrule.autograd.grad((hard * chainrule.arange(4.0)).sum(), logits)
    assert grad.numpy().any()  # the straight-through estimator passes the soft gradient


# ---- running statistics and train flags ------------------------------------------------------


@pytest.mark.parametrize("shape", [(6, 3), (4, 3, 5), (2, 3, 4, 4)])
def test_batch_norm_training_updates_running_stats_like_torch(shape):
    rng = np.random.default_rng(0)
    x = rng.standard_normal(shape) * 2 + 1
    mean0, var0 = rng.standard_normal(3), rng.uniform(0.5, 2, 3)
    stats = [(ours(mean0), ours(var0)), (theirs(mean0), theirs(var0))]
    out_c = F.batch_norm(ours(x), *stats[0], training=True, momentum=0.3)
    out_t = TF.batch_norm(theirs(x), *stats[1], training=True, momentum=0.3)
    close(out_c, out_t)
    close(stats[0][0], stats[1][0])
    close(stats[0][1], stats[1][1])
    assert stats[0][0]._version == 1  # written in place, as torch's buffers are


def test_batch_norm_eval_uses_running_stats_and_leaves_them():
    rng = np.random.default_rng(1)
    x, w, b = rng.standard_normal((5, 3, 2)), rng.standard_normal(3), rng.standard_normal(3)
    mean, var = rng.standard_normal(3), rng.uniform(0.5, 2, 3)
    rm, rv = ours(mean), ours(var)
    xc = ours(x, grad=True)
    out = F.batch_norm(xc, rm, rv, ours(w), ours(b), training=False, eps=1e-3)
    xt = theirs(x, grad=True)
    want = TF.batch_norm(xt, theirs(mean), theirs(var), theirs(w), theirs(b), False, eps=1e-3)
    close(out, want)
    out.sum().backward()
    want.sum().backward()
    close(xc.grad, xt.grad)
    np.testing.assert_array_equal(rm.numpy(), mean)
    np.testing.assert_array_equal(rv.numpy(), var)
    with pytest.raises(RuntimeError, match="running_mean must be defined in evaluation mode"):
        F.batch_norm(xc, None, None)


def test_batch_norm_without_running_stats_and_single_value_error():
    x = np.random.default_rng(2).standard_normal((4, 3))
    close(F.batch_norm(ours(x), None, None, training=True),
          TF.batch_norm(theirs(x), None, None, training=True))
    with pytest.raises(ValueError, match="Expected more than 1 value per channel when training"):
        F.batch_norm(ours(x[:1]), None, None, training=True)


def test_instance_norm_running_stats_like_torch():
    rng = np.random.default_rng(3)
    x = rng.standard_normal((2, 3, 5))
    rm_c, rv_c, rm_t, rv_t = ours(np.zeros(3)), ours(np.ones(3)), theirs(np.zeros(3)), theirs(
        np.ones(3))
    close(F.instance_norm(ours(x), rm_c, rv_c, momentum=0.2),
          TF.instance_norm(theirs(x), rm_t, rv_t, momentum=0.2))
    close(rm_c, rm_t)
    close(rv_c, rv_t)
    # use_input_stats=False: the running statistics normalise.
    close(F.instance_norm(ours(x), rm_c, rv_c, use_input_stats=False),
          TF.instance_norm(theirs(x), rm_t, rv_t, use_input_stats=False))


def test_rrelu_training_draws_slopes_in_bounds():
    chainrule.manual_seed(4)
    x = -chainrule.ones(1000)
    slopes = -F.rrelu(x, 0.1, 0.3, training=True).numpy()
    assert slopes.min() >= 0.1 and slopes.max() <= 0.3 and slopes.std() > 0.03
    np.testing.assert_allclose(F.rrelu(x, 0.1, 0.3).numpy(), -0.2, rtol=1e-6)


# ---- gradients that are not derivatives: padding_idx, scale_grad_by_freq ----------------------


@pytest.mark.parametrize("kwargs", [{"padding_idx": 2}, {"padding_idx": -1},
                                    {"scale_grad_by_freq": True},
                                    {"padding_idx": 0, "scale_grad_by_freq": True}])
def test_embedding_gradient_conventions_like_torch(kwargs):
    rng = np.random.default_rng(5)
    weight = rng.standard_normal((5, 3))
    idx = np.array([[0, 2, 4], [2, 2, 1]])
    cw, tw = ours(weight, grad=True), theirs(weight, grad=True)
    out_c = F.embedding(ours(idx), cw, **kwargs)
    out_t = TF.embedding(theirs(idx), tw, **kwargs)
    close(out_c, out_t)
    seed = rng.standard_normal(out_t.shape)
    out_c.backward(ours(seed))
    out_t.backward(theirs(seed))
    close(cw.grad, tw.grad)
    assert out_c.grad_fn is None or out_c.grad_fn.name() == "EmbeddingBackward0"


def test_embedding_max_norm_renormalises_rows_in_place_like_torch():
    rng = np.random.default_rng(6)
    weight = rng.standard_normal((6, 4)) * 3
    idx = np.array([1, 3, 3, 5])
    cw, tw = ours(weight), theirs(weight)
    close(F.embedding(ours(idx), cw, max_norm=1.5), TF.embedding(theirs(idx), tw, max_norm=1.5))
    close(cw, tw)
    np.testing.assert_array_equal(cw.numpy()[0], weight[0])  # rows not looked up are kept


def test_embedding_errors():
    w = chainrule.randn(3, 2)
    with pytest.raises(IndexError, match="index out of range in self"):
        F.embedding(chainrule.tensor([3]), w)
    with pytest.raises(RuntimeError, match="Expected tensor for argument #1 'indices'"):
        F.embedding(chainrule.tensor([1.0]), w)
    with pytest.raises(AssertionError, match="Padding_idx must be within num_embeddings"):
        F.embedding(chainrule.tensor([1]), w, padding_idx=3)


# ---- losses: reductions, ignore_index, legacy flags, errors -------------------------------------


def test_cross_entropy_ignore_index_everywhere_gives_nan_like_torch():
    x = np.random.default_rng(7).standard_normal((3, 4))
    target = np.array([-100, -100, -100])
    got = F.cross_entropy(ours(x), ours(target))
    want = TF.cross_entropy(theirs(x), theirs(target))
    assert np.isnan(got.item()) and np.isnan(want.item())
    close(F.cross_entropy(ours(x), ours(target), reduction="sum"),
          TF.cross_entropy(theirs(x), theirs(target), reduction="sum"))


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
@pytest.mark.parametrize("smoothing", [0.0, 0.3])
def test_cross_entropy_weights_ignore_and_smoothing_like_torch(reduction, smoothing):
    rng = np.random.default_rng(8)
    x, w = rng.standard_normal((6, 4)), rng.uniform(0.1, 2, 4)
    target = np.array([0, 3, 1, 1, 2, 3])
    results = []
    for lib, f, make in ((chainrule, F, ours), (torch, TF, theirs)):
        xi = make(x, grad=True)
        loss = f.cross_entropy(xi, make(target), make(w), ignore_index=3, reduction=reduction,
                               label_smoothing=smoothing)
        (g,) = lib.autograd.grad(loss.sum(), xi)
        results.append((loss, g))
    close(results[0][0], results[1][0])
    close(results[0][1], results[1][1])


def test_legacy_size_average_and_reduce_flags():
    x, y = np.random.default_rng(9).standard_normal((2, 5, 3))
    for size_average, reduce in ((None, False), (False, None), (True, True), (False, True)):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            got = F.mse_loss(ours(x), ours(y), size_average, reduce)
        assert any("size_average and reduce args will be deprecated" in str(w.message)
                   for w in caught)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            close(got, TF.mse_loss(theirs(x), theirs(y), size_average, reduce))


def test_loss_argument_errors_match_torch():
    x = chainrule.rand(2, 3)
    with pytest.raises(ValueError, match="foo is not a valid value for reduction"):
        F.nll_loss(x, chainrule.tensor([0, 1]), reduction="foo")
    with pytest.raises(ValueError, match=r"Expected input batch_size \(2\) to match target "
                                         r"batch_size \(3\)"):
        F.cross_entropy(x, chainrule.tensor([0, 1, 2]))
    with pytest.raises(IndexError, match="Target 5 is out of bounds."):
        F.cross_entropy(x, chainrule.tensor([0, 5]))
    with pytest.raises(RuntimeError, match="expected target dtype to be Long or Byte, but got "
                                           "Float"):
        F.nll_loss(x, chainrule.tensor([0.0, 1.0]))
    with pytest.raises(RuntimeError, match="all elements of input should be between 0 and 1"):
        F.binary_cross_entropy(x * 3 - 1, x)
    with pytest.raises(ValueError, match="Using a target size"):
        F.binary_cross_entropy(x, x[0])
    with pytest.raises(RuntimeError, match="label_smoothing must be between 0.0 and 1.0"):
        F.cross_entropy(x, chainrule.tensor([0, 1]), label_smoothing=1.5)


def test_size_mismatch_and_kl_div_mean_warn_like_torch():
    x = chainrule.rand(3, 2)
    with pytest.warns(UserWarning, match="Using a target size"):
        F.mse_loss(x, chainrule.rand(2))
    with pytest.warns(UserWarning, match="'batchmean' divides only by the batch size"):
        F.kl_div(x, x)


def test_binary_cross_entropy_saturated_input_gives_finite_gradient_like_torch():
    x = np.array([0.0, 1.0, 0.5, 1e-30])
    y = np.array([1.0, 0.0, 1.0, 0.0])
    xc, xt = ours(x, grad=True), theirs(x, grad=True)
    lc = F.binary_cross_entropy(xc, ours(y), reduction="sum")
    lt = TF.binary_cross_entropy(xt, theirs(y), reduction="sum")
    close(lc, lt)
    lc.backward()
    lt.backward()
    close(xc.grad, xt.grad, rtol=1e-6)


# ---- shapes and errors in PyTorch's words -------------------------------------------------------


@pytest.mark.parametrize("call", [
    lambda f, m: f.conv2d(m.zeros(1, 3, 5, 5), m.zeros(4, 2, 3, 3)),
    lambda f, m: f.conv2d(m.zeros(1, 3, 2, 2), m.zeros(4, 3, 3, 3)),
    lambda f, m: f.conv2d(m.zeros(3, 5), m.zeros(4, 3, 3, 3)),
    lambda f, m: f.conv2d(m.zeros(1, 3, 5, 5), m.zeros(4, 3, 3, 3), stride=2, padding="same"),
    lambda f, m: f.conv2d(m.zeros(1, 3, 5, 5).double(), m.zeros(4, 3, 3, 3)),
    lambda f, m: f.linear(m.zeros(2, 3), m.zeros(4, 5)),
    lambda f, m: f.max_pool2d(m.zeros(1, 1, 5, 5), 2, padding=2),
    lambda f, m: f.max_pool2d(m.zeros(1, 1, 1, 1), 3),
    lambda f, m: f.layer_norm(m.zeros(2, 3, 4), (5,)),
    lambda f, m: f.group_norm(m.zeros(2, 3, 4), 2),
    lambda f, m: f.glu(m.zeros(3, 3)),
    lambda f, m: f.one_hot(m.tensor([1, -1])),
    lambda f, m: f.one_hot(m.tensor([1, 3]), 2),
    lambda f, m: f.softmax(m.tensor([1, 2]), 0),
    lambda f, m: f.pad(m.zeros(1, 1, 3, 3), (3, 3), mode="reflect"),
])
def test_errors_like_torch(call):
    with pytest.raises(Exception) as want:
        call(TF, torch)
    with pytest.raises(type(want.value)) as got:
        call(F, chainrule)
    # PyTorch's words first; chainrule may add what to do.
    assert str(got.value).split("\n")[0].startswith(str(want.value).split("\n")[0])


@pytest.mark.parametrize("fn", [
    lambda m, x, y: m.nn.functional.normalize(x, dim=-1),
    lambda m, x, y: m.nn.functional.cosine_similarity(x, y, dim=-1),
    lambda m, x, y: m.nn.functional.normalize(x, p=1.0, dim=0),
], ids=["normalize", "cosine_similarity", "normalize_p1"])
def test_zero_vectors_have_torchs_finite_gradient(fn):
    # Found by tests/test_random_programs.py: the norm was sqrt(sum(x * x)), whose gradient at a
    # zero row is inf * 0 = nan where PyTorch's is finite (1 / eps through the clamp).
    x = np.array([[0.0, 0.0, 0.0], [1.0, -2.0, 0.5]])
    y = np.array([[0.5, 1.0, -1.0], [0.0, 0.0, 0.0]])
    w = np.array([[1.0, 2.0, 3.0], [-1.0, 0.5, 2.0]])
    grads = []
    for m, make in ((chainrule, ours), (torch, theirs)):
        a, b = make(x, True), make(y, True)
        out = fn(m, a, b)
        weight = make(w[: out.shape[0]] if out.ndim == 2 else w[0, : out.shape[0]])
        grads.append(m.autograd.grad((out * weight).sum(), (a, b), allow_unused=True))
    for got, want in zip(*grads):
        assert (got is None) == (want is None)
        if want is not None:
            close(got, want, rtol=1e-10, atol=0)


def test_conv_and_pool_accept_unbatched_inputs_and_tuple_arguments():
    rng = np.random.default_rng(10)
    x, w = rng.standard_normal((3, 7, 6)), rng.standard_normal((4, 3, 2, 3))
    close(F.conv2d(ours(x), ours(w), stride=[2, 1], padding=(1, 0), dilation=(1, 2)),
          TF.conv2d(theirs(x), theirs(w), stride=[2, 1], padding=(1, 0), dilation=(1, 2)))
    got, got_idx = F.max_pool2d(ours(x), (2, 3), return_indices=True)
    want, want_idx = TF.max_pool2d(theirs(x), (2, 3), return_indices=True)
    close(got, want)
    np.testing.assert_array_equal(got_idx.numpy(), want_idx.numpy())


def test_max_pool_ties_and_nan_choose_torchs_index():
    x = np.array([[[[1.0, 1.0, 2.0, 2.0], [1.0, 1.0, 2.0, np.nan]]]])
    for nan_last in (False, True):
        data = x if nan_last else x[..., ::-1].copy()
        got = F.max_pool2d(ours(data), 2, return_indices=True)
        want = TF.max_pool2d(theirs(data), 2, return_indices=True)
        np.testing.assert_array_equal(got[1].numpy(), want[1].numpy())
        np.testing.assert_array_equal(got[0].numpy(), want[0].numpy())


def test_channels_last_inputs_give_torchs_results():
    """Convolution outputs are channels-last in memory; every op downstream must not care."""
    rng = np.random.default_rng(11)
    x, w1, w2 = (rng.standard_normal(s) for s in ((2, 3, 8, 8), (4, 3, 3, 3), (5, 4, 3, 3)))
    results = []
    for lib, f, make in ((chainrule, F, ours), (torch, TF, theirs)):
        params = [make(a, grad=True) for a in (w1, w2)]
        h = f.max_pool2d(f.relu(f.conv2d(make(x), params[0], padding=1)), 2)
        h = f.avg_pool2d(f.conv2d(h, params[1], padding=1), 2)
        loss = f.batch_norm(h, None, None, training=True).pow(2).sum()
        results.append([loss] + list(lib.autograd.grad(loss, params)))
    for a, b in zip(*results):
        close(a, b, rtol=1e-6)


# ---- forward mode on every nn row ---------------------------------------------------------------


def _forward_cases():
    out = []
    for row in nn_rows.ROWS:
        if not row.orders:
            continue
        for i, sample in enumerate(row.samples):
            out.append(pytest.param(row, i, sample, id=f"{row.id}-{sample!r}"))
    return out


def _tangent_outputs(lib, fwd_module, fn, arrays: list, tangents: list) -> list:
    with fwd_module.dual_level():
        args = []
        for a, t in zip(arrays, tangents):
            x = lib.from_numpy(np.array(a))
            args.append(x if t is None else fwd_module.make_dual(x, lib.from_numpy(t.copy())))
        outs = as_tuple(fn(*args))
        tangents = [fwd_module.unpack_dual(o).tangent for o in outs]
        return [None if t is None else np.array(t.detach().numpy()) for t in tangents]


def _finite_difference(fn, arrays: list, tangents: list, eps: float = 1e-6) -> list:
    def at(sign):
        args = [chainrule.from_numpy(np.array(a if t is None else a + sign * eps * t))
                for a, t in zip(arrays, tangents)]
        return [np.array(o.detach().numpy(), dtype=np.float64) for o in as_tuple(fn(*args))]

    return [(hi - lo) / (2 * eps) for hi, lo in zip(at(1), at(-1))]


@pytest.mark.parametrize("row,index,sample", _forward_cases())
def test_forward_mode_matches_torch(row, index, sample):
    """Tangents (forward_ad dual tensors) equal torch's, or, where torch has no forward rule,
    central finite differences."""
    seed = row.seed(index)
    arrays = sample.arrays(seed, "float64", row.domain)
    rng = np.random.default_rng(zlib.crc32((seed + "/tangent").encode()))
    tangents = [rng.standard_normal(a.shape) if isinstance(arg, T) and arg.grad else None
                for arg, a in zip(sample.args, arrays)]
    got = _tangent_outputs(chainrule, fwd, row.op, arrays, tangents)
    try:
        want = _tangent_outputs(torch, torch_fwd, row.ref, arrays, tangents)
        rtol, atol = 1e-7, 1e-10
    except (NotImplementedError, RuntimeError):  # torch has no forward rule for this op
        want = _finite_difference(row.op, arrays, tangents)
        want = [w if np.issubdtype(w.dtype, np.floating) else None for w in want]
        rtol, atol = 1e-5, 1e-7
    assert len(got) == len(want)
    for i, (g, w) in enumerate(zip(got, want)):
        if w is None:
            assert g is None or not g.any(), f"output {i}: a tangent where torch has none"
            continue
        assert g is not None, f"output {i}: no tangent"
        np.testing.assert_allclose(g, w, rtol=rtol, atol=atol, err_msg=f"output {i}")
