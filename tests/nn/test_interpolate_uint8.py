"""uint8 images through bilinear and bicubic interpolate: PyTorch's fixed-point kernel (int16
weights, a horizontal then a vertical pass, each rounded and clamped to uint8), exactly."""

import numpy as np
import pytest
import torch

import chainrule as cr

RNG = np.random.default_rng(11)


def _equal(x, **kwargs):
    ours = cr.nn.functional.interpolate(cr.tensor(x), **kwargs)
    theirs = torch.nn.functional.interpolate(torch.tensor(x), **kwargs)
    assert str(ours.dtype) == str(theirs.dtype) == "torch.uint8"
    np.testing.assert_array_equal(ours.numpy(), theirs.numpy(), err_msg=str(kwargs))


@pytest.mark.parametrize("mode", ["bilinear", "bicubic"])
@pytest.mark.parametrize("align_corners", [False, True])
@pytest.mark.parametrize("size", [(13, 7), (4, 30), (1, 9), (9, 9), (27, 2)])
def test_sizes(mode, align_corners, size):
    x = RNG.integers(0, 256, (2, 3, 9, 11)).astype(np.uint8)
    _equal(x, size=size, mode=mode, align_corners=align_corners)


@pytest.mark.parametrize("mode", ["bilinear", "bicubic"])
@pytest.mark.parametrize("recompute", [False, True])
def test_scale_factors(mode, recompute):
    x = RNG.integers(0, 256, (1, 4, 10, 7)).astype(np.uint8)
    for factor in [(0.45, 2.3), (1.7, 0.6), 3.0]:
        _equal(x, scale_factor=factor, mode=mode, recompute_scale_factor=recompute)


@pytest.mark.parametrize("mode", ["bilinear", "bicubic"])
def test_downsampling_many_channels(mode):
    # more than 4 channels runs PyTorch's generic kernel (4 or fewer: its AVX2 one): the same
    # values
    x = RNG.integers(0, 256, (1, 6, 40, 33)).astype(np.uint8)
    _equal(x, size=(17, 12), mode=mode)


def test_upsample_bilinear():
    x = RNG.integers(0, 256, (2, 3, 4, 4)).astype(np.uint8)
    ours = cr.nn.functional.upsample_bilinear(cr.tensor(x), size=(3, 7))
    theirs = torch.nn.functional.upsample_bilinear(torch.tensor(x), size=(3, 7))
    np.testing.assert_array_equal(ours.numpy(), theirs.numpy())
