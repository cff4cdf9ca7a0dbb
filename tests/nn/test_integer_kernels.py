"""Integer convolutions and average pooling, as PyTorch's CPU kernels compute them (any integer
type for a convolution, int64 for dilated and transposed ones and for average pooling: sums wrap,
averages divide truncating toward zero), and the dtypes they refuse — against torch."""

import itertools

import numpy as np
import pytest
import torch

import chainrule as cr

RNG = np.random.default_rng(3)


def _both(fn, *arrays):
    return [fn(m, *[m.tensor(a) for a in arrays]) for m in (cr, torch)]


def _equal(ours, theirs):
    assert str(ours.dtype) == str(theirs.dtype)
    np.testing.assert_array_equal(ours.numpy(), theirs.numpy())


@pytest.mark.parametrize("dtype", ["int8", "uint8", "int16", "int32", "int64"])
@pytest.mark.parametrize("nd", [1, 2, 3])
def test_convolution_of_integers(dtype, nd):
    low = 0 if dtype == "uint8" else -60
    x = RNG.integers(low, 60, (2, 4) + (5,) * nd).astype(dtype)  # int8 and uint8 sums wrap
    w = RNG.integers(low // 10, 7, (2, 2) + (3,) * nd).astype(dtype)
    b = RNG.integers(0, 5, (2,)).astype(dtype)
    conv = f"conv{nd}d"
    _equal(*_both(lambda m, x, w, b: getattr(m.nn.functional, conv)(
        x, w, b, stride=2, padding=1, groups=2), x, w, b))
    if dtype == "int64":
        _equal(*_both(lambda m, x, w: getattr(m.nn.functional, conv)(x, w, dilation=2, groups=2),
                      x, w))


@pytest.mark.parametrize("nd", [1, 2, 3])
def test_transposed_convolution_of_int64(nd):
    x = RNG.integers(-9, 9, (2, 4) + (4,) * nd)
    w = RNG.integers(-3, 4, (4, 3) + (2,) * nd)
    _equal(*_both(lambda m, x, w: getattr(m.nn.functional, f"conv_transpose{nd}d")(
        x, w, stride=2, padding=1, output_padding=1), x, w))


@pytest.mark.parametrize("nd", [1, 2, 3])
def test_average_pooling_of_int64_truncates(nd):
    x = RNG.integers(-50, 50, (2, 3) + (6,) * nd)
    overrides = (None,) if nd == 1 else (None, 3, -2)
    for k, s, p, ceil, include, divisor in itertools.product(
            (2, 3), (1, 2), (0, 1), (False, True), (False, True), overrides):
        kwargs = dict(kernel_size=k, stride=s, padding=p, ceil_mode=ceil,
                      count_include_pad=include)
        if divisor is not None:
            kwargs["divisor_override"] = divisor
        _equal(*_both(lambda m, x, kw=kwargs: getattr(m.nn.functional, f"avg_pool{nd}d")(
            x, **kw), x))


@pytest.mark.parametrize("call", [
    lambda m: m.nn.functional.avg_pool1d(m.ones(1, 1, 4, dtype=m.int32), 2),
    lambda m: m.nn.functional.avg_pool3d(m.ones(1, 1, 2, 4, 4, dtype=m.uint8), 2),
    lambda m: m.nn.functional.conv_transpose1d(m.ones(1, 1, 4, dtype=m.int32),
                                               m.ones(1, 1, 2, dtype=m.int32)),
    lambda m: m.nn.functional.conv3d(m.ones(1, 1, 4, 4, 4, dtype=m.bool),
                                     m.ones(1, 1, 2, 2, 2, dtype=m.bool)),
    lambda m: m.nn.functional.conv1d(m.ones(1, 1, 4, dtype=m.bool), m.ones(1, 1, 2, dtype=m.bool)),
    lambda m: m.nn.functional.conv2d(m.ones(1, 1, 4, 4, dtype=m.int8),
                                     m.ones(1, 1, 2, 2, dtype=m.int8), dilation=2),
])
def test_refused_dtypes_name_pytorchs_kernel(call):
    with pytest.raises(NotImplementedError) as theirs:
        call(torch)
    with pytest.raises(NotImplementedError, match=str(theirs.value).replace("(", r"\(")) as ours:
        call(cr)
    assert str(ours.value).startswith(str(theirs.value))
