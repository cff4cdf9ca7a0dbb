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
