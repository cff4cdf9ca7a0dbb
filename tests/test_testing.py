"""torch.testing: assert_close's verdicts and messages, assert_allclose, make_tensor, each against
torch on the same inputs."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
import torch

import chainrule
import chainrule.testing

_OURS = {"chainrule.tensor.Tensor": "torch.Tensor", "chainrule.nn.parameter": "torch.nn.parameter"}


def _ours(x):
    """The same value with chainrule tensors in place of torch's."""
    if isinstance(x, torch.Tensor):
        dtype = getattr(chainrule, str(x.dtype).split(".")[1])
        if x.device.type == "meta":
            return chainrule.empty(tuple(x.shape), dtype=dtype, device="meta")
        t = chainrule.tensor(x.detach().numpy(), dtype=dtype, requires_grad=x.requires_grad)
        if isinstance(x, torch.nn.Parameter):
            return chainrule.nn.Parameter(t)
        return t if x.is_contiguous() else t.t().contiguous().t()
    if isinstance(x, (list, tuple)):
        return type(x)(_ours(v) for v in x)
    if isinstance(x, dict):
        return {k: _ours(v) for k, v in x.items()}
    return x


def _outcome(fn, *args, **kwargs):
    """'ok', or the exception's type and message (chainrule's type names read as torch's)."""
    try:
        fn(*args, **kwargs)
        return "ok"
    except Exception as e:  # noqa: BLE001 - the outcome is what is compared
        text = str(e)
        for ours, theirs in _OURS.items():
            text = text.replace(ours, theirs)
        return type(e).__name__, text


nan, inf = float("nan"), float("inf")
T = torch.tensor
CASES = [
    # numbers, booleans, None
    ((5, 6), {}), ((1, 1.0), {}), ((1, 1.0), {"check_dtype": False}), ((True, 1), {}),
    ((1 + 2j, 1 + 3j), {}), ((1.0, 1.0 + 1e-8), {}), ((0.0, 1e-6), {}), ((1e-6, 0.0), {}),
    ((nan, nan), {}), ((nan, nan), {"equal_nan": True}), ((inf, inf), {}), ((inf, -inf), {}),
    ((np.float32(1), 1.0), {}), ((np.float32(1), np.float32(1.1)), {}), ((np.int64(3), 3), {}),
    ((np.bool_(True), False), {}), ((True, False), {}), ((None, 1), {}), (([None], [None]), {}),
    ((1, 2), {"rtol": None, "atol": 1}), ((1, 2), {"rtol": 0.5, "atol": 0}),
    # types that do not pair
    (("a", "a"), {}), ((T(1.0), 1.0), {}), ((1.0, T(1.0)), {}),
    ((T([1.0, 2.0]), np.array([1.0, 2.0])), {}),
    ((np.array([1.0, 2.0]), [1.0, 2.0]), {}),
    ((torch.nn.Parameter(torch.zeros(2)), torch.zeros(2)), {}),
    ((torch.nn.Parameter(torch.zeros(2)), torch.zeros(2)), {"allow_subclasses": False}),
    # NumPy arrays
    ((np.array([1.0, 2.0]), np.array([1.0, 2.5])), {}),
    ((np.array([1, 2], dtype=np.int32), np.array([1, 2], dtype=np.int32)), {}),
    # containers
    (([1.0, 2.0], (1.0, 2.0)), {}), (([1, 2], [1, 2, 3]), {}), (([1, 2], [1, 2, 3]), {"msg": "m"}),
    (({"a": 1}, {"b": 1}), {}), (({"a": [1, 2]}, {"a": [1, 3]}), {}),
    (({"b": [1.0], "a": {"x": 2}}, {"b": [1.0], "a": {"x": 3}}), {}),
    (({1: 1, "a": 2}, {1: 1, "a": 3}), {}),
    (((1, (2, T([3.0]))), (1, (2, T([4.0])))), {}),
    # attributes
    ((torch.zeros(2), torch.zeros(3)), {}), ((torch.zeros(()), torch.zeros(0)), {}),
    ((torch.zeros(2), torch.zeros(2, dtype=torch.float64)), {}),
    ((torch.zeros(2), torch.zeros(2, dtype=torch.float64)), {"check_dtype": False}),
    ((torch.zeros(2, 3).t(), torch.zeros(3, 2)), {"check_stride": True}),
    ((torch.zeros(2, 3).t(), torch.zeros(3, 2)), {}),
    ((torch.zeros(2, device="meta"), torch.ones(2)), {}),
    ((torch.zeros(2, device="meta"), torch.ones(2)), {"check_device": False}),
    ((torch.zeros(2), torch.zeros(2)), {"rtol": 1}),
    ((torch.zeros(2), torch.zeros(2)), {"atol": 1}),
    # values
    ((T(nan), T(nan)), {}), ((T(nan), T(nan)), {"equal_nan": True}), ((T(3), T(4)), {}),
    ((T([1.0, nan]), T([1.0, nan])), {}), ((T([1.0, nan]), T([1.0, 2.0])), {}),
    ((T([1.0, -inf]), T([1.0, inf])), {}), ((T([0.0, 0.0]), T([0.0, 1.0])), {}),
    ((T([1.0, 2.0]), T([0.0, 0.0])), {}), ((torch.zeros(0), torch.zeros(0)), {}),
    ((T([1.0, 2.0, 3.0]), T([1.0, 2.0, 3.0001])), {}),
    ((T([1.0, 2.0]), T([1.0, 2.1])), {"rtol": 0.01, "atol": 0}),
    ((T([1.0, 2.0]), T([1.0, 2.1])), {"rtol": 0, "atol": 0}),
    ((T([1.0, 2.0]), T([1.0, 2.1])), {"rtol": 0.1, "atol": 0}),
    ((T([1.0, 2.0], dtype=torch.float64), T([1.0, 2.0 + 1e-6], dtype=torch.float64)), {}),
    ((T([1.0, 2.0], dtype=torch.float16), T([1.0, 2.01], dtype=torch.float16)), {}),
    ((T([1, 2], dtype=torch.int32), T([1.0, 2.5])), {"check_dtype": False}),
    ((T([1, 2, 3]), T([1, 5, 3])), {}),
    ((T([1, 2, 3], dtype=torch.uint8), T([1, 5, 3], dtype=torch.uint8)), {}),
    ((T([1, 2], dtype=torch.int8), T([1, -100], dtype=torch.int8)), {}),
    ((T([True, False]), T([True, True])), {}), ((T([1 + 1j, 2]), T([1 + 1j, 3])), {}),
    ((torch.arange(24.0).reshape(2, 3, 4), torch.arange(24.0).reshape(2, 3, 4).flip(0)), {}),
    ((T([[1.0, 2.0], [3.0, 4.0]]), T([[1.0, 2.0], [3.0, 0.0]])), {}),
    ((T([1.0, 2.0], requires_grad=True), T([1.0, 3.0])), {}),
    # msg
    ((T([1.0, 2.0, 3.0]), T([1.0, 4.0, 5.0])), {"msg": "Argh"}),
    ((T([1.0, 2.0, 3.0]), T([1.0, 4.0, 5.0])), {"msg": lambda m: f"Header\n\n{m}\n\nFooter"}),
    (([T([1.0, 2.0])], [T([1.0, 3.0])]), {"msg": lambda m: f"<{m}>"}),
    (([T([1.0, 2.0])], [T([1.0, 3.0])]), {"msg": "custom"}),
]


@pytest.mark.parametrize(("args", "kwargs"), CASES)
def test_assert_close_like_torch(args, kwargs):
    theirs = _outcome(torch.testing.assert_close, *args, **kwargs)
    ours = _outcome(chainrule.testing.assert_close, *_ours(args), **kwargs)
    assert ours == theirs


def test_assert_close_passes_and_fails_on_tolerance_edges():
    rng = np.random.default_rng(0)
    for _ in range(20):
        a = rng.standard_normal(6).astype(np.float32)
        b = a + rng.standard_normal(6).astype(np.float32) * 10.0 ** rng.integers(-8, -3)
        for kwargs in ({}, {"rtol": 1e-5, "atol": 1e-6}, {"rtol": 0, "atol": 0}):
            theirs = _outcome(torch.testing.assert_close, torch.from_numpy(a),
                              torch.from_numpy(b), **kwargs)
            ours = _outcome(chainrule.testing.assert_close, chainrule.from_numpy(a),
                            chainrule.from_numpy(b), **kwargs)
            assert ours == theirs


@pytest.mark.parametrize("args", [(T([1.0, 2.0]), T([1.0, 2.00001])), ([1.0, 2.0], [1.0, 2.5]),
                                  (T([1, 2]), [1, 3]), (T([1.0, nan]), T([1.0, nan]))])
def test_assert_allclose_deprecated_like_torch(args):
    with warnings.catch_warnings(record=True) as theirs_w:
        warnings.simplefilter("always")
        theirs = _outcome(torch.testing.assert_allclose, *args)
    with warnings.catch_warnings(record=True) as ours_w:
        warnings.simplefilter("always")
        ours = _outcome(chainrule.testing.assert_allclose, *_ours(args))
    assert ours == theirs
    assert [(w.category, str(w.message)) for w in ours_w] == \
        [(w.category, str(w.message)) for w in theirs_w]
    assert ours_w[0].filename == __file__


def test_default_tolerances_like_torch():
    from torch.testing._comparison import default_tolerances as theirs

    from chainrule.testing._comparison import default_tolerances as ours
    for names in (["float32"], ["float16", "float64"], ["int64"], ["complex64", "float32"]):
        assert ours(*[getattr(chainrule, n) for n in names]) == \
            theirs(*[getattr(torch, n) for n in names])
    with pytest.raises(TypeError, match="Expected a torch.Tensor or a torch.dtype"):
        ours(1.0)


def _made(lib, args, kwargs):
    """make_tensor's result described (dtype, shape, grad, layout, range), or its error, and
    the warnings it gave."""
    kwargs = {k: getattr(lib, str(v).split(".")[1]) if isinstance(v, torch.dtype) else v
              for k, v in kwargs.items()}
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        try:
            t = lib.testing.make_tensor(*args, **kwargs)
            out = (str(t.dtype), tuple(t.shape), t.requires_grad, t.is_leaf, t.is_contiguous(),
                   t.device.type)
            values = t.detach()
            if values.dtype.is_complex:
                values = lib.view_as_real(values)
            low = kwargs.get("low")
            if low is not None and values.numel():
                out += (float(values.min()) >= max(low, -3.4e38),)
        except Exception as e:  # noqa: BLE001 - the outcome is what is compared
            out = (type(e).__name__, str(e))
    return out, [(x.category, str(x.message)) for x in w]


f32, f64, i64 = torch.float32, torch.float64, torch.int64
MAKE = [
    ((2, 3), {"dtype": f32}), (((2, 3),), {"dtype": f32}), ((), {"dtype": f32}),
    ((torch.Size([2, 3]),), {"dtype": f64, "requires_grad": True}),
    ((2, 3), {"dtype": i64, "requires_grad": True}),
    ((2, 3), {"dtype": torch.bool, "requires_grad": True}),
    ((2, 3), {"dtype": f32, "low": 5, "high": 2}), ((2, 3), {"dtype": f32, "low": 2, "high": 2}),
    ((2, 3), {"dtype": torch.int32, "low": 2, "high": 2}),
    ((2, 3), {"dtype": f32, "low": nan}), ((2, 3), {"dtype": f32, "high": nan}),
    ((2, 3), {"dtype": torch.uint8, "low": -10, "high": -1}),
    ((2, 3), {"dtype": torch.uint8, "low": 300, "high": 400}),
    ((2, 3), {"dtype": torch.int8, "low": -1000, "high": 1000}),
    ((2, 3), {"dtype": torch.float16, "low": -1e6, "high": 1e6}),
    ((2,), {"dtype": f32, "low": -inf, "high": inf}),
    ((2,), {"dtype": i64, "low": -2**70, "high": 2**70}),
    ((4, 5), {"dtype": f32, "noncontiguous": True}), ((1,), {"dtype": f32, "noncontiguous": True}),
    ((4, 5), {"dtype": f32, "noncontiguous": True, "requires_grad": True}),
    ((4, 5), {"dtype": f32, "noncontiguous": True, "memory_format": torch.contiguous_format}),
    ((10,), {"dtype": i64, "exclude_zero": True, "low": 0, "high": 2}),
    ((10,), {"dtype": torch.complex64, "low": 0, "high": 1, "requires_grad": True}),
]


@pytest.mark.parametrize(("args", "kwargs"), MAKE)
def test_make_tensor_like_torch(args, kwargs):
    kwargs = {**kwargs, "device": "cpu"}
    assert _made(chainrule, args, kwargs) == _made(torch, args, kwargs)


VALUES = [
    ((3, 4), {"dtype": "float32"}), ((5,), {"dtype": "float64", "low": -2, "high": 3}),
    ((6,), {"dtype": "int8"}), ((6,), {"dtype": "uint8"}), ((7,), {"dtype": "bool"}),
    ((4,), {"dtype": "complex64"}), ((3, 4), {"dtype": "float32", "noncontiguous": True}),
    ((9,), {"dtype": "int64", "low": 0, "high": 2, "exclude_zero": True}),
    ((2, 3), {"dtype": "float16"}), ((2, 3), {"dtype": "int32", "low": -1000, "high": 1000}),
]


@pytest.mark.parametrize(("args", "kwargs"), VALUES)
def test_make_tensor_values_like_torch(args, kwargs):
    """chainrule's generator is PyTorch's, so the same seed gives the same values."""
    made = []
    for lib in (torch, chainrule):
        lib.manual_seed(3)
        t = lib.testing.make_tensor(*args, device="cpu", **{**kwargs,
                                                            "dtype": getattr(lib, kwargs["dtype"])})
        made.append((t.numpy().tolist(), t.stride()))
    assert made[1] == made[0]


@pytest.mark.parametrize("dtype", ["float32", "int64", "bool", "complex64"])
def test_make_tensor_on_meta_like_torch(dtype):
    made = []
    for lib in (torch, chainrule):
        t = lib.testing.make_tensor(2, 3, dtype=getattr(lib, dtype), device="meta",
                                    noncontiguous=True)
        made.append((str(t.dtype), tuple(t.shape), t.device.type, t.stride()))
    assert made[1] == made[0]


def test_make_tensor_ranges_and_exclude_zero():
    make = chainrule.testing.make_tensor
    x = make(2000, dtype=chainrule.int64, device="cpu", low=0, high=2, exclude_zero=True)
    assert int((x == 1).sum()) == 2000  # every zero became one
    x = make(2000, dtype=chainrule.float32, device="cpu", low=0, high=2)
    assert 0 <= float(x.min()) and float(x.max()) < 2 and float(x.std()) > 0.4
    x = make(2000, dtype=chainrule.int8, device="cpu")  # default [-9, 10)
    assert (int(x.min()), int(x.max())) == (-9, 9)
    x = make(2000, dtype=chainrule.uint8, device="cpu")  # default clamped to [0, 10)
    assert (int(x.min()), int(x.max())) == (0, 9)
    x = make(2000, dtype=chainrule.bool, device="cpu")
    assert 0 < int(x.sum()) < 2000
    x = make(500, dtype=chainrule.float32, device="cpu", low=-1, high=1, exclude_zero=True)
    assert bool((x != 0).all())
    x = make(4, 6, dtype=chainrule.float64, device="cpu", noncontiguous=True)
    assert x.stride() == (12, 2) and len(set(x.flatten().tolist())) == 24
