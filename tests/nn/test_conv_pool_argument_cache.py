"""conv2d and max_pool2d check their arguments once per (shapes, dtypes, arguments) and reuse the
result: calls that differ in any of them, one after another, still match torch (values, gradients
and errors)."""

from __future__ import annotations

import numpy as np
import pytest
import torch
import torch.nn.functional as TF

import chainrule
import chainrule.nn.functional as F

# (input shape, weight shape, keyword arguments), run in this order: each call's key differs
# from the one before it in one thing.
CONV_CALLS = [
    ((2, 3, 7, 6), (4, 3, 3, 3), {"padding": 1}),
    ((2, 3, 7, 6), (4, 3, 3, 3), {"padding": 1}),  # the same key again
    ((3, 3, 7, 6), (4, 3, 3, 3), {"padding": 1}),  # batch
    ((3, 3, 5, 6), (4, 3, 3, 3), {"padding": 1}),  # height
    ((3, 3, 5, 6), (4, 3, 3, 3), {"padding": 0}),
    ((3, 3, 5, 6), (4, 3, 3, 3), {"padding": (1, 0)}),
    ((3, 3, 5, 6), (4, 3, 3, 3), {"padding": [1, 0]}),  # a list: not a key
    ((3, 3, 5, 6), (4, 3, 3, 3), {"padding": "same"}),
    ((3, 3, 5, 6), (4, 3, 3, 3), {"padding": 1, "stride": 2}),
    ((3, 3, 5, 6), (4, 3, 3, 3), {"padding": 1, "stride": (2, 1)}),
    ((3, 3, 5, 6), (4, 3, 3, 3), {"padding": 2, "dilation": 2}),
    ((3, 3, 5, 6), (4, 3, 2, 3), {"padding": 1}),  # kernel
    ((3, 3, 5, 6), (5, 3, 3, 3), {"padding": 1}),  # out channels
    ((3, 6, 5, 6), (4, 3, 3, 3), {"padding": 1, "groups": 2}),
    ((3, 5, 6), (4, 3, 3, 3), {"padding": 1}),  # unbatched
    ((1, 3, 5, 6), (4, 3, 3, 3), {"padding": 1}),
]


@pytest.mark.parametrize("bias", [False, True])
def test_conv2d_calls_of_changing_shapes_and_arguments_match_torch(bias):
    rng = np.random.default_rng(0)
    for shape, wshape, kwargs in CONV_CALLS:
        x = rng.standard_normal(shape)
        w = rng.standard_normal(wshape)
        b = rng.standard_normal(wshape[0]) if bias else None
        results = []
        for lib, f in ((chainrule, F), (torch, TF)):
            args = [lib.tensor(a, requires_grad=True) for a in (x, w, b) if a is not None]
            y = f.conv2d(*args[:2], args[2] if bias else None, **kwargs)
            results.append([y, *lib.autograd.grad((y * y).sum(), args)])
        for got, want in zip(*results, strict=True):
            assert tuple(got.shape) == tuple(want.shape), (shape, wshape, kwargs)
            np.testing.assert_allclose(got.detach().numpy(), want.detach().numpy(),
                                       rtol=1e-10, atol=1e-10)


def test_conv2d_dtypes_and_layouts_after_a_cached_call():
    rng = np.random.default_rng(1)
    x = rng.standard_normal((2, 4, 6, 6))
    w = rng.standard_normal((3, 4, 3, 3))
    for dtype, rtol in ((np.float64, 1e-10), (np.float32, 1e-5), (np.float64, 1e-10)):
        for layout in ("contiguous", "channels last", "strided"):
            xs = x.astype(dtype)
            if layout == "channels last":
                xs = np.ascontiguousarray(xs.transpose(0, 2, 3, 1)).transpose(0, 3, 1, 2)
            elif layout == "strided":
                xs = np.repeat(xs, 2, axis=-1)[..., ::2]
            got = F.conv2d(chainrule.from_numpy(xs), chainrule.tensor(w.astype(dtype)),
                           padding=1)
            want = TF.conv2d(torch.from_numpy(xs), torch.tensor(w.astype(dtype)), padding=1)
            assert got.dtype == chainrule.float32 if dtype == np.float32 else chainrule.float64
            np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=rtol, atol=rtol)


def _error(lib, f, *args, **kwargs):
    with pytest.raises(Exception) as info:
        f(*args, **kwargs)
    return type(info.value), str(info.value)


def test_conv2d_errors_after_cached_calls_of_the_same_shapes():
    x, w = np.ones((1, 2, 5, 5)), np.ones((3, 2, 3, 3))
    F.conv2d(chainrule.tensor(x), chainrule.tensor(w), padding=1)
    F.conv2d(chainrule.tensor(x, dtype=chainrule.float32),
             chainrule.tensor(w, dtype=chainrule.float32))
    cases = [
        ((x, w.astype(np.float32)), {"padding": 1}),  # weight's dtype differs
        ((x, w), {"padding": 1, "stride": 0}),
        ((x, w), {"padding": -1}),
        ((x, w), {"padding": 1, "groups": 2}),
        ((x, w), {"padding": 1, "dilation": 0}),
        ((x, np.ones((3, 1, 3, 3))), {"padding": 1}),  # channels
        ((x[..., :2, :2], w), {}),  # kernel larger than the input
    ]
    for (a, b), kwargs in cases:
        got = _error(chainrule, F.conv2d, chainrule.tensor(a), chainrule.tensor(b), **kwargs)
        want = _error(torch, TF.conv2d, torch.tensor(a), torch.tensor(b), **kwargs)
        assert got == want, kwargs
    # a bias of the wrong size after the same call with the right one
    F.conv2d(chainrule.tensor(x), chainrule.tensor(w), chainrule.zeros(3, dtype=chainrule.float64))
    got = _error(chainrule, F.conv2d, chainrule.tensor(x), chainrule.tensor(w),
                 chainrule.zeros(2, dtype=chainrule.float64))
    want = _error(torch, TF.conv2d, torch.tensor(x), torch.tensor(w),
                  torch.zeros(2, dtype=torch.float64))
    assert got == want


POOL_CALLS = [  # (input shape, positional and keyword arguments)
    ((2, 3, 8, 8), (2,), {}),
    ((2, 3, 8, 8), (2,), {}),
    ((2, 3, 8, 8), (2,), {"return_indices": True}),
    ((2, 3, 8, 8), (2, 1), {}),
    ((2, 3, 8, 8), (3, 2, 1), {}),
    ((2, 3, 8, 8), (3, 2, 1), {"ceil_mode": True}),
    ((2, 3, 9, 7), (2,), {}),
    ((2, 3, 9, 7), ((2, 3),), {}),
    ((2, 3, 9, 7), ([2, 3],), {}),  # a list: not a key
    ((2, 3, 9, 7), (3, 2, 1, 2), {}),
    ((3, 9, 7), (2,), {}),  # unbatched
    ((5, 3, 9, 7), (2,), {}),
]


def test_max_pool2d_calls_of_changing_shapes_and_arguments_match_torch():
    rng = np.random.default_rng(2)
    for shape, args, kwargs in POOL_CALLS:
        x = np.round(rng.standard_normal(shape), 1)  # ties
        results = []
        for lib, f in ((chainrule, F), (torch, TF)):
            t = lib.tensor(x, requires_grad=True)
            out = f.max_pool2d(t, *args, **kwargs)
            y, extra = (out[0], [out[1]]) if kwargs.get("return_indices") else (out, [])
            results.append([y, *extra, *lib.autograd.grad((y * y).sum(), t)])
        for got, want in zip(*results, strict=True):
            assert tuple(got.shape) == tuple(want.shape), (shape, args, kwargs)
            np.testing.assert_array_equal(got.detach().numpy(), want.detach().numpy())


def test_max_pool2d_errors_after_cached_calls_of_the_same_shapes():
    x = np.ones((1, 2, 5, 5))
    F.max_pool2d(chainrule.tensor(x), 2)
    F.max_pool2d(chainrule.tensor(x), 3, 1, 1)
    for args in ((2, 0), (3, 1, 2), (7,), (0,)):
        got = _error(chainrule, F.max_pool2d, chainrule.tensor(x), *args)
        want = _error(torch, TF.max_pool2d, torch.tensor(x), *args)
        assert got[0] is want[0] or issubclass(want[0], got[0]) or issubclass(got[0], want[0]), \
            (args, got, want)
