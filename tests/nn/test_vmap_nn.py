"""nn.functional under vmap against torch.func: what the op table's vmap test does not batch
(targets, indices, weights and biases, running statistics), per-example gradients through the
batching rules, nesting, randomness, and the errors PyTorch raises."""

from __future__ import annotations

import re
import warnings

import numpy as np
import pytest
import torch

import chainrule
from chainrule import _batching
from chainrule.ops import NN_FAMILIES, Op

LIBS = (chainrule, torch)
NN_RECORDS = {value.name for family in NN_FAMILIES
              for value in vars(family).values() if isinstance(value, Op)}


def _randn(seed: int, *shapes) -> list:
    rng = np.random.default_rng(seed)
    return [rng.standard_normal(s) for s in shapes]


def _run(program, lib, arrays):
    _batching._warned.clear()  # the fallback warns once per op
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        out = program(lib, *[lib.tensor(a) if isinstance(a, np.ndarray) else a for a in arrays])
    looped = {m.group(1) for w in caught
              if (m := re.search(r"batching rule for (\w+)\.", str(w.message)))}
    assert not looped & NN_RECORDS, f"per-example fallback for {sorted(looped & NN_RECORDS)}"
    return out


@pytest.fixture
def same(like_torch):
    """``same(program, *arrays)``: ``program(lib, *tensors)`` gives torch's result with
    chainrule, and no nn record runs the per-example fallback."""

    def check(program, *arrays, rtol=1e-10, atol=1e-12):
        ours = _run(program, chainrule, arrays)
        theirs = _run(program, torch, arrays)
        like_torch(ours, theirs, rtol, atol)
        return ours

    return check


def _looped_vmap(f):
    """vmap over dim 0 of every argument, as a loop (torch's side where torch.func refuses)."""

    def run(*args):
        outs = [f(*[a[i] for a in args]) for i in range(len(args[0]))]
        if isinstance(outs[0], tuple):
            return tuple(torch.stack(column) for column in zip(*outs))
        return torch.stack(outs)

    return run


def _labels(seed: int, shape, classes: int, ignored=()):
    rng = np.random.default_rng(seed)
    target = rng.integers(0, classes, shape)
    for index in ignored:
        target[index] = -100
    return target


def _tanh_mlp(lib, params, x):
    w1, b1, w2, b2 = params
    return lib.nn.functional.linear(lib.nn.functional.linear(x, w1, b1).tanh(), w2, b2)


# ---- per-example gradients ---------------------------------------------------------------------


def test_per_example_gradients_of_an_mlp_with_cross_entropy(same):
    def program(lib, w1, b1, w2, b2, x, y):
        def loss(params, xi, yi):
            return lib.nn.functional.cross_entropy(_tanh_mlp(lib, params, xi), yi)

        return lib.func.vmap(lib.func.grad(loss), in_dims=(None, 0, 0))((w1, b1, w2, b2), x, y)

    arrays = _randn(0, (16, 12), (16,), (5, 16), (5,), (7, 12))
    same(program, *arrays, _labels(1, (7,), 5))


@pytest.mark.parametrize("reduction", ["mean", "sum"])
def test_cross_entropy_gradients_under_nested_vmap(same, reduction):
    def program(lib, x, y, w):
        def loss(xi, yi):
            return lib.nn.functional.cross_entropy(xi, yi, w, reduction=reduction)

        grads = lib.func.vmap(lib.func.vmap(lib.func.grad(loss)))(x, y)
        return grads, lib.func.vmap(lib.func.vmap(loss, in_dims=(None, 0)), in_dims=(0, None))(
            x[:, 0], y[0])

    labels = _labels(17, (2, 3, 4), 5, ignored=[(0, 1, 2), (1, 2, 0)])
    same(program, *_randn(18, (2, 3, 4, 5)), labels, np.array([0.5, 1.0, 2.0, 1.5, 0.2]))


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
@pytest.mark.parametrize("case", ["1d", "2d", "weight", "ignored", "spatial", "smoothing"])
def test_cross_entropy_and_nll_with_batched_targets(same, reduction, case):
    # torch.func cannot vmap label smoothing with 'mean' (it selects with a batched mask):
    # there torch's side loops over the examples.
    loop_torch = case == "smoothing" and reduction == "mean"
    shapes = {"1d": (5,), "spatial": (3, 5, 2)}.get(case, (3, 5))
    target_shape = {"1d": (4,), "spatial": (4, 3, 2)}.get(case, (4, 3))
    ignored = [(1, 0), (2, 2)] if case == "ignored" else []
    weight = np.array([0.5, 1.0, 2.0, 1.5, 0.2]) if case in ("weight", "smoothing") else None
    smoothing = 0.2 if case == "smoothing" else 0.0

    def program(lib, x, y, w=None):
        f = lib.nn.functional

        def losses(xi, yi):
            ce = f.cross_entropy(xi, yi, w, reduction=reduction, label_smoothing=smoothing)
            nll = f.nll_loss(f.log_softmax(xi, 1 if xi.ndim > 1 else 0), yi, w,
                             reduction=reduction)
            return ce, nll

        def total(xi, yi):
            ce, nll = losses(xi, yi)
            return (ce * ce.detach().cos()).sum() + nll.sum()

        vmap = _looped_vmap if lib is torch and loop_torch else lib.func.vmap
        return vmap(losses)(x, y), vmap(lib.func.grad(total))(x, y)

    arrays = _randn(2, (4,) + shapes) + [_labels(3, target_shape, 5, ignored)]
    same(program, *arrays, *([] if weight is None else [weight]))


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
def test_mse_and_binary_cross_entropy_with_batched_targets(same, reduction):
    def program(lib, x, y, p, w):
        f = lib.nn.functional

        def losses(xi, yi, pi):
            return (f.mse_loss(xi, yi, reduction=reduction),
                    f.binary_cross_entropy(pi.sigmoid(), yi.sigmoid(), w, reduction=reduction))

        def total(xi, yi, pi):
            return sum((t * t.detach().cos()).sum() for t in losses(xi, yi, pi))

        return (lib.func.vmap(losses, in_dims=(0, 0, None))(x, y, p),
                lib.func.vmap(lib.func.grad(total, argnums=(0, 1)), in_dims=(0, 0, None))(
                    x, y, p))

    same(program, *_randn(4, (3, 2, 4), (3, 2, 4), (2, 4), (4,)))


def test_mse_loss_broadcasting_example_against_shared_target(same):
    def program(lib, x, y):
        return lib.func.vmap(lib.func.grad(lambda xi: lib.nn.functional.mse_loss(xi, y)))(x)

    same(program, *_randn(5, (3, 2, 4), (4,)), rtol=1e-9)


# ---- convolution and linear with per-example parameters ----------------------------------------


CONVOLUTIONS = {
    "conv2d": ((2, 4, 5, 4), (4, 2, 3, 2), {"stride": (2, 1), "padding": 1, "groups": 2}),
    "conv1d": ((2, 2, 7), (3, 2, 3), {"stride": 2, "dilation": 2}),
    "conv_transpose2d": ((2, 4, 3, 2), (4, 3, 2, 3),
                         {"stride": 2, "groups": 2, "output_padding": 1}),
    "conv_transpose1d": ((2, 2, 4), (2, 3, 3), {"stride": 3, "padding": 1}),
}


@pytest.mark.parametrize("in_dims", [(0, None, None), (None, 0, None), (0, 0, 0), (None, 0, 0),
                                     (None, None, 0), (0, None, 0)])
@pytest.mark.parametrize("name", list(CONVOLUTIONS))
def test_convolutions_with_per_example_inputs_weights_and_biases(same, name, in_dims):
    x_shape, w_shape, kwargs = CONVOLUTIONS[name]
    bias = w_shape[1] * kwargs.get("groups", 1) if "transpose" in name else w_shape[0]
    shapes = [(3,) + s if d == 0 else s for s, d in zip((x_shape, w_shape, (bias,)), in_dims)]

    def program(lib, x, w, b):
        return lib.func.vmap(lambda *a: getattr(lib.nn.functional, name)(*a, **kwargs),
                             in_dims=in_dims)(x, w, b)

    same(program, *_randn(6, *shapes), rtol=1e-9)


@pytest.mark.parametrize("name", ["conv2d", "conv_transpose2d"])
def test_per_example_gradients_of_a_convolution(same, name):
    x_shape, w_shape, kwargs = CONVOLUTIONS[name]

    def program(lib, x, w):
        def loss(wi, xi):
            out = getattr(lib.nn.functional, name)(xi.unsqueeze(0), wi, **kwargs)
            return (out * out.detach().cos()).sum()

        grad = lib.func.grad(loss, argnums=(0, 1))
        return lib.func.vmap(grad, in_dims=(None, 0))(w, x), lib.func.vmap(grad)(
            w.expand((3,) + tuple(w.shape)) * 1, x[:3])

    same(program, *_randn(7, (5,) + x_shape[1:], w_shape), rtol=1e-9)


@pytest.mark.parametrize("in_dims", [(0, 0, None), (None, 0, 0), (0, None, 0), (0, 0, 0),
                                     (None, None, 0)])
@pytest.mark.parametrize("rows", [(), (2,), (2, 3)])
def test_linear_with_per_example_weights_and_biases(same, in_dims, rows):
    shapes = [(3,) + s if d == 0 else s for s, d in zip((rows + (4,), (5, 4), (5,)), in_dims)]
    same(lambda lib, x, w, b: lib.func.vmap(lib.nn.functional.linear, in_dims=in_dims)(x, w, b),
         *_randn(8, *shapes))


# ---- normalisation -----------------------------------------------------------------------------


def test_batch_norm_updates_per_example_running_statistics(same):
    def program(lib, x, mean, var, w, b):
        f = lib.nn.functional
        mean, var = mean.clone(), var.abs() + 0.5
        train = lib.func.vmap(lambda *a: f.batch_norm(*a, training=True, momentum=0.3))(
            x, mean, var, w, b)
        evaluate = lib.func.vmap(lambda *a: f.batch_norm(*a, training=False))(
            x, mean, var, w, b)
        return train, evaluate, mean, var

    same(program, *_randn(9, (3, 4, 2, 5), (3, 2), (3, 2), (3, 2), (3, 2)))


def _shared_running_statistics(lib):
    mean, var = lib.zeros(2), lib.ones(2)
    x = lib.tensor(_randn(10, (3, 4, 2))[0])
    lib.func.vmap(lambda t: lib.nn.functional.batch_norm(t, mean, var, training=True))(x)


def test_batch_norm_with_shared_running_statistics_raises_pytorchs_error():
    messages = []
    for lib in LIBS:
        with pytest.raises(RuntimeError) as info:
            _shared_running_statistics(lib)
        messages.append(str(info.value))
    assert messages[0] == messages[1]


@pytest.mark.parametrize("name", ["layer_norm", "group_norm", "instance_norm"])
def test_norms_with_per_example_affine_parameters(same, name):
    def program(lib, x, w, b):
        f = lib.nn.functional
        call = {"layer_norm": lambda *a: f.layer_norm(a[0], (4,), a[1], a[2]),
                "group_norm": lambda *a: f.group_norm(a[0], 2, a[1], a[2]),
                "instance_norm": lambda *a: f.instance_norm(a[0], weight=a[1], bias=a[2])}[name]
        shared = lib.func.vmap(call, in_dims=(0, None, None))(x, w[0], b[0])
        own = lib.func.vmap(call, in_dims=(0, 0, 0))(x, w, b)
        weight_only = lib.func.vmap(call, in_dims=(None, 0, None))(x[0], w, b[0])
        return shared, own, weight_only

    same(program, *_randn(11, (3, 2, 4, 4), (3, 4), (3, 4)), rtol=1e-9)


# ---- pooling, embedding, one_hot ---------------------------------------------------------------


def test_max_pooling_with_indices_and_its_gradient_under_nested_vmap(same):
    def program(lib, x):
        f = lib.nn.functional

        def pool(t):
            out, indices = f.max_pool2d(t, 2, stride=1, return_indices=True)
            return out, indices, f.adaptive_max_pool2d(t, (2, 3))

        def loss(t):
            out = f.max_pool2d(t, 3, stride=2, padding=1)
            return (out * out.detach().cos()).sum()

        return (lib.func.vmap(lib.func.vmap(pool))(x),
                lib.func.vmap(lib.func.vmap(lib.func.grad(loss)))(x))

    same(program, *_randn(12, (2, 3, 2, 5, 6)))


@pytest.mark.parametrize("in_dims", [(0, None), (None, 0), (0, 0)])
def test_embedding_with_per_example_indices_and_tables(same, in_dims):
    indices = np.random.default_rng(13).integers(0, 6, (3, 2, 4))

    def program(lib, w):
        i = lib.tensor(indices)
        i, w = (i if in_dims[0] == 0 else i[0]), (w if in_dims[1] == 0 else w[0])
        f = lib.nn.functional

        def loss(wi, ii):
            out = f.embedding(ii, wi, scale_grad_by_freq=True)
            return (out * out.detach().cos()).sum()

        padded = lib.func.vmap(lambda ii, wi: f.embedding(ii, wi, padding_idx=2),
                               in_dims=in_dims)(i, w)
        grads = lib.func.vmap(lib.func.grad(loss), in_dims=in_dims[::-1])(w, i)
        return padded, grads

    same(program, *_randn(14, (3, 6, 3)))


def test_one_hot_of_batched_indices(same):
    indices = np.random.default_rng(15).integers(0, 4, (3, 5))
    same(lambda lib, i: lib.func.vmap(lambda t: lib.nn.functional.one_hot(t, 4))(i), indices)
    for lib in LIBS:
        with pytest.raises(RuntimeError, match="explicit positive num_classes"):
            lib.func.vmap(lib.nn.functional.one_hot)(lib.tensor(indices))


def test_softmax_of_scalar_examples_and_unfold_fold(same):
    def program(lib, s, x):
        f = lib.nn.functional
        return (lib.func.vmap(lambda t: f.softmax(t, 0))(s),
                lib.func.vmap(lambda t: f.log_softmax(t, -1))(s),
                lib.func.vmap(lambda t: f.fold(f.unfold(t, 2), (4, 5), 2))(x))

    same(program, *_randn(16, (3,), (3, 2, 2, 4, 5)))


# ---- randomness --------------------------------------------------------------------------------


@pytest.mark.parametrize("lib", LIBS, ids=lambda lib: lib.__name__)
@pytest.mark.parametrize("name", ["dropout", "alpha_dropout", "dropout2d"])
def test_dropout_randomness(lib, name):
    f = getattr(lib.nn.functional, name)

    def drop(t):
        return f(t, 0.5, True)

    x = lib.ones(4, 2, 6, 1, 1)
    with pytest.raises(RuntimeError, match="randomness error mode"):
        lib.func.vmap(drop)(x)
    masked = lib.func.vmap(drop, randomness="different")(x).numpy().reshape(4, -1)
    assert not (masked == masked[0]).all(), "one mask for every example"
    masked = lib.func.vmap(drop, randomness="same")(x).numpy().reshape(4, -1)
    assert (masked == masked[0]).all(), "masks differ under 'same'"
