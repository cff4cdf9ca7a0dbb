"""The layout fast paths of convolution and max pooling (channels-last scatter, columns from few
channels, channels-first gradients) and max pooling's ties with its padding, against torch."""

from __future__ import annotations

import numpy as np
import pytest
import torch
import torch.nn.functional as TF

import chainrule
import chainrule.nn.functional as F


@pytest.mark.parametrize("fill", [-np.inf, np.iinfo(np.int64).min])
@pytest.mark.parametrize(("kernel", "stride", "padding"), [(2, 2, 1), (3, 2, 1), (3, 1, 1)])
def test_max_pool_windows_at_the_fill_value_take_a_position_inside(fill, kernel, stride,
                                                                    padding):
    data = np.full((1, 2, 5, 4), fill)
    data[0, 1, 2, 2] = 1 if np.isinf(fill) else 7  # one window that is not all fill
    got, got_idx = F.max_pool2d(chainrule.tensor(data), kernel, stride, padding,
                                return_indices=True)
    want, want_idx = TF.max_pool2d(torch.tensor(data), kernel, stride, padding,
                                   return_indices=True)
    np.testing.assert_array_equal(got_idx.numpy(), want_idx.numpy())
    np.testing.assert_array_equal(got.numpy(), want.numpy())
    if np.isinf(fill):
        ours = chainrule.tensor(data, requires_grad=True)
        theirs = torch.tensor(data, requires_grad=True)
        F.max_pool2d(ours, kernel, stride, padding).sum().backward()
        TF.max_pool2d(theirs, kernel, stride, padding).sum().backward()
        np.testing.assert_array_equal(ours.grad.numpy(), theirs.grad.numpy())


@pytest.mark.parametrize("in_channels", [1, 3, 16])
def test_digits_cnn_gradients_equal_torchs(in_channels):
    """conv-relu-pool twice, then linear (W7's network), float64: relu's zeros tie in pooling
    windows; the pooling gradients reach the convolutions channels-last and channels-first."""
    rng = np.random.default_rng(3)
    x = rng.standard_normal((6, in_channels, 8, 8))
    shapes = [(16, in_channels, 3, 3), (16,), (32, 16, 3, 3), (32,), (128, 10), (10,)]
    arrays = [rng.standard_normal(s) * 0.3 for s in shapes]
    results = []
    for lib, f in ((chainrule, F), (torch, TF)):
        params = [lib.tensor(a, requires_grad=True) for a in arrays]
        w1, b1, w2, b2, w3, b3 = params
        h = f.max_pool2d(lib.relu(f.conv2d(lib.tensor(x), w1, b1, padding=1)), 2)
        h = f.max_pool2d(lib.relu(f.conv2d(h, w2, b2, padding=1)), 2)
        loss = (h.reshape(h.shape[0], -1) @ w3 + b3).tanh().sum()
        results.append([loss, *lib.autograd.grad(loss, params)])
    for got, want in zip(*results):
        np.testing.assert_allclose(got.detach().numpy(), want.detach().numpy(), rtol=1e-10,
                                   atol=1e-12)


TILED = [  # (input shape, kernel): windows that tile the input (stride = kernel), or nearly
    ((3, 4, 8, 8), 2),
    ((2, 3, 9, 7), 2),  # sizes not divisible: the last row and column are in no window
    ((2, 3, 9, 7), 3),
    ((1, 2, 6, 6), (2, 3)),
    ((2, 2, 6, 8), (1, 2)),
    ((2, 2, 6, 8), (3, 1)),
    ((2, 2, 5, 6), 1),
    ((4, 6, 6), 2),  # unbatched
]


def _pool_both(data, kernel, stride=None, nd=2, **options):
    pools = {2: (F.max_pool2d, TF.max_pool2d), 3: (F.max_pool3d, TF.max_pool3d),
             1: (F.max_pool1d, TF.max_pool1d)}[nd]
    got = pools[0](chainrule.tensor(data), kernel, stride, return_indices=True, **options)
    want = pools[1](torch.tensor(data), kernel, stride, return_indices=True, **options)
    for g, w in zip(got, want):
        np.testing.assert_array_equal(g.numpy(), w.numpy())
        assert g.shape == w.shape and g.stride() == w.stride()


@pytest.mark.parametrize(("shape", "kernel"), TILED)
@pytest.mark.parametrize("values", ["distinct", "ties", "relu", "int64"])
def test_tiled_max_pool_equals_torchs(shape, kernel, values):
    """Ties (rounded values, relu's zeros, integers) take the first maximum in scan order."""
    rng = np.random.default_rng(5)
    data = rng.standard_normal(shape)
    if values == "ties":
        data = np.round(data)
    elif values == "relu":
        data = np.maximum(data, 0).astype(np.float32)
    elif values == "int64":
        data = np.round(data * 2).astype(np.int64)
    _pool_both(data, kernel)
    if values != "int64":
        ours = chainrule.tensor(data, requires_grad=True)
        theirs = torch.tensor(data, requires_grad=True)
        g = rng.standard_normal(TF.max_pool2d(theirs, kernel).shape).astype(data.dtype)
        F.max_pool2d(ours, kernel).backward(chainrule.tensor(g))
        TF.max_pool2d(theirs, kernel).backward(torch.tensor(g))
        np.testing.assert_array_equal(ours.grad.numpy(), theirs.grad.numpy())


def test_tiled_max_pool_every_tie_pattern_of_a_window():
    """All 2^9 patterns of which places of a 3x3 window hold the maximum."""
    patterns = (np.arange(512)[:, None] >> np.arange(9)) & 1
    data = patterns.reshape(1, 512, 3, 3).astype(np.float64) - 1.0
    _pool_both(data, 3)
    _pool_both(data.reshape(1, 512, 9), 9, nd=1)


@pytest.mark.parametrize("where", [[(0, 1)], [(0, 1), (1, 0)], [(1, 1), (0, 0)]])
def test_tiled_max_pool_takes_the_last_nan(where):
    data = np.arange(2 * 3 * 4 * 4, dtype=np.float32).reshape(2, 3, 4, 4)
    for i, j in where:
        data[1, 2, i, j] = np.nan
        data[0, 0, 2 + i, 2 + j] = np.nan
    _pool_both(data, 2)


def test_tiled_max_pool_other_layouts_and_dims():
    rng = np.random.default_rng(6)
    data = np.round(rng.standard_normal((2, 5, 6, 4)))
    # a channels-last input
    ours = chainrule.tensor(data).to(memory_format=chainrule.channels_last)
    theirs = torch.tensor(data).to(memory_format=torch.channels_last)
    got, got_idx = F.max_pool2d(ours, 2, return_indices=True)
    want, want_idx = TF.max_pool2d(theirs, 2, return_indices=True)
    np.testing.assert_array_equal(got.numpy(), want.numpy())
    np.testing.assert_array_equal(got_idx.numpy(), want_idx.numpy())
    assert got.stride() == want.stride()
    # 3-D and 1-D windows, stride given equal to the kernel, ceil_mode with tiling sizes
    _pool_both(np.round(rng.standard_normal((2, 2, 4, 6, 5))), (2, 3, 2), (2, 3, 2), nd=3)
    _pool_both(np.round(rng.standard_normal((2, 3, 9))), 3, 3, nd=1)
    _pool_both(np.round(rng.standard_normal((2, 3, 8, 6))), 2, ceil_mode=True)
    _pool_both(np.round(rng.standard_normal((2, 3, 7, 6))), 2, ceil_mode=True)  # not tiled
    _pool_both(np.round(rng.standard_normal((0, 3, 8, 6))), 2)  # empty batch


def test_tiled_max_pool_higher_order_gradients():
    rng = np.random.default_rng(7)
    x = chainrule.tensor(rng.standard_normal((2, 3, 6, 4)), requires_grad=True)
    assert chainrule.autograd.gradcheck(lambda t: F.max_pool2d(t, 2), (x,))
    assert chainrule.autograd.gradgradcheck(lambda t: F.max_pool2d(t, 2) ** 2, (x,))


@pytest.mark.parametrize("in_channels", [1, 8])
def test_conv2d_of_an_empty_batch(in_channels):
    rng = np.random.default_rng(8)
    w = rng.standard_normal((4, in_channels, 3, 3))
    grads = []
    for lib, f in ((chainrule, F), (torch, TF)):
        weight = lib.tensor(w, requires_grad=True)
        x = lib.zeros(0, in_channels, 5, 5, dtype=lib.float64, requires_grad=True)
        out = f.conv2d(x, weight, padding=1)
        assert tuple(out.shape) == (0, 4, 5, 5)
        out.sum().backward()
        grads.append((x.grad.numpy().shape, weight.grad.numpy()))
    assert grads[0][0] == grads[1][0]
    np.testing.assert_array_equal(grads[0][1], grads[1][1])


@pytest.mark.parametrize("channels_last_grad", [False, True])
@pytest.mark.parametrize(("stride", "padding", "dilation"), [(1, 1, 1), (2, 0, 1), (1, 2, 2)])
def test_conv2d_with_few_input_channels_against_torch(stride, padding, dilation,
                                                       channels_last_grad):
    """Fewer than 4 input channels: transposed columns, the product giving channels-first output
    and a channels-first gradient read in long rows (a channels-last one the other way)."""
    rng = np.random.default_rng(9)
    x = rng.standard_normal((3, 2, 7, 6))
    w = rng.standard_normal((5, 2, 3, 3))
    b = rng.standard_normal(5)
    size = TF.conv2d(torch.tensor(x), torch.tensor(w), stride=stride, padding=padding,
                     dilation=dilation).shape
    grad = rng.standard_normal(tuple(size))
    results = []
    for lib, f in ((chainrule, F), (torch, TF)):
        params = [lib.tensor(a, requires_grad=True) for a in (x, w, b)]
        out = f.conv2d(*params, stride=stride, padding=padding, dilation=dilation)
        g = lib.tensor(grad)
        if channels_last_grad:
            g = g.permute(0, 2, 3, 1).contiguous().permute(0, 3, 1, 2)
        results.append([out, *lib.autograd.grad(out, params, g)])
        assert out.is_contiguous()
    for got, want in zip(*results):
        np.testing.assert_allclose(got.detach().numpy(), want.detach().numpy(), rtol=1e-10,
                                   atol=1e-12)
