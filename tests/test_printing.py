"""Compare chainrule's tensor printing with PyTorch's, using torch as the oracle."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch

from chainrule._printing import format_tensor, get_printoptions, set_printoptions

NAN = math.nan
INF = math.inf

FLOAT_DTYPES = [np.float16, np.float32, np.float64]
INT_DTYPES = [np.uint8, np.int8, np.int16, np.int32, np.int64]


@pytest.fixture(autouse=True)
def default_printoptions():
    """Start and end every test with default print options in both libraries."""
    default_dtype = torch.get_default_dtype()
    torch.set_printoptions(profile="default", sci_mode=None)
    set_printoptions(profile="default", sci_mode=None)
    yield
    torch.set_default_dtype(default_dtype)
    torch.set_printoptions(profile="default", sci_mode=None)
    set_printoptions(profile="default", sci_mode=None)


def both_printoptions(**options) -> None:
    """Apply the same print options to torch and chainrule."""
    torch.set_printoptions(**options)
    set_printoptions(**options)


def torch_suffixes(t: torch.Tensor) -> list[str]:
    """Return the autograd suffixes a caller of format_tensor would pass for ``t``."""
    if t.grad_fn is not None:
        return [f"grad_fn=<{type(t.grad_fn).__name__}>"]
    if t.requires_grad:
        return ["requires_grad=True"]
    return []


def ours(t: torch.Tensor, prefix: str = "tensor(") -> str:
    """Format the values of ``t`` with chainrule, deciding show_dtype as the caller does."""
    show_dtype = t.dtype not in (torch.get_default_dtype(), torch.int64, torch.bool)
    return format_tensor(
        t.detach().numpy(),
        dtype_name=str(t.dtype).removeprefix("torch."),
        show_dtype=show_dtype,
        suffixes=torch_suffixes(t),
        prefix=prefix,
    )


def assert_prints_like_torch(values, dtype=None, grad: str | None = None) -> None:
    """Build a torch tensor from ``values`` and check chainrule prints it identically.

    ``grad`` is None, "leaf" (requires_grad=True) or "op" (result of an autograd op).
    """
    with np.errstate(over="ignore"):  # large random values may overflow float16 to inf
        array = np.array(values, dtype=dtype)
    t = torch.from_numpy(array.copy())
    if grad is not None:
        t.requires_grad_()
        if grad == "op":
            t = t * 1
    expected = repr(t)
    assert str(t) == expected
    assert ours(t) == expected, f"\nexpected:\n{expected}\ngot:\n{ours(t)}"


def rng() -> np.random.Generator:
    """Return a fresh generator so each case's random values are reproducible."""
    return np.random.default_rng(12345)


VALUE_CASES = [
    # 0-dim
    pytest.param(4.0, np.float32, id="scalar-int-valued"),
    pytest.param(-2.6146, np.float32, id="scalar-negative"),
    pytest.param(0.0, np.float32, id="scalar-zero"),
    pytest.param(-0.0, np.float32, id="scalar-negative-zero"),
    pytest.param(NAN, np.float32, id="scalar-nan"),
    pytest.param(INF, np.float32, id="scalar-inf"),
    pytest.param(-INF, np.float64, id="scalar-neg-inf-f64"),
    pytest.param(1e-5, np.float32, id="scalar-tiny"),
    pytest.param(1e10, np.float32, id="scalar-huge"),
    pytest.param(123456789.0, np.float64, id="scalar-huge-int-valued"),
    pytest.param(0.1, np.float16, id="scalar-f16"),
    pytest.param(3.25, np.float64, id="scalar-f64"),
    pytest.param(7, np.int64, id="scalar-int64"),
    pytest.param(-3, np.int32, id="scalar-int32"),
    pytest.param(200, np.uint8, id="scalar-uint8"),
    pytest.param(True, np.bool_, id="scalar-bool"),
    # 1-D basics
    pytest.param([0.0, 1.0, 0.0], np.float32, id="int-valued-floats"),
    pytest.param([1.0, 2.0], np.float32, id="two-floats"),
    pytest.param([1.5, -2.25, 3.125], np.float32, id="fractional"),
    pytest.param([1, 2], np.int64, id="int64"),
    pytest.param([1, 2], np.int32, id="int32"),
    pytest.param([-128, 0, 127], np.int8, id="int8"),
    pytest.param([0, 255, 7], np.uint8, id="uint8"),
    pytest.param([-32768, 5], np.int16, id="int16"),
    pytest.param([2**62, -(2**63), 1], np.int64, id="int64-extremes"),
    pytest.param([True, False], np.bool_, id="bool"),
    pytest.param([False, False, False], np.bool_, id="bool-all-false"),
    pytest.param([0.5, 1.5], np.float16, id="f16"),
    pytest.param([0.1, 0.2, 0.3], np.float64, id="f64"),
    # nan, inf and signed zeros
    pytest.param([NAN, 1.0, INF], np.float32, id="nan-int-inf"),
    pytest.param([NAN, 1.5, -INF], np.float32, id="nan-frac-neginf"),
    pytest.param([-0.0, 0.0, NAN, INF, -INF], np.float32, id="only-special"),
    pytest.param([-0.0, 0.0, NAN, 1.5], np.float32, id="zeros-nan-frac"),
    pytest.param([0.0, -0.0], np.float64, id="signed-zeros"),
    pytest.param([NAN, NAN], np.float32, id="all-nan"),
    pytest.param([0.0, 10.0, -100.0], np.float32, id="zero-with-ints"),
    pytest.param([NAN, 1e-5, 1e10], np.float32, id="nan-with-sci"),
    # where scientific notation starts
    pytest.param([1e-5, 1e10], np.float32, id="sci-wide"),
    pytest.param([1.0, 1000.0], np.float32, id="int-ratio-1000"),
    pytest.param([1.0, 1001.0], np.float32, id="int-ratio-1001"),
    pytest.param([1.5, 1500.0], np.float32, id="frac-ratio-1000"),
    pytest.param([1.5, 1501.5], np.float32, id="frac-ratio-above-1000"),
    pytest.param([1e8], np.float32, id="int-1e8"),
    pytest.param([2e8], np.float32, id="int-2e8"),
    pytest.param([1e8 + 0.5], np.float64, id="frac-above-1e8"),
    pytest.param([99999999.5], np.float64, id="frac-below-1e8"),
    pytest.param([1e-4], np.float32, id="f32-1e-4"),
    pytest.param([1e-4], np.float64, id="f64-1e-4"),
    pytest.param([1.1e-4, 0.05], np.float32, id="just-above-1e-4"),
    pytest.param([5e-5, 1.0], np.float32, id="below-1e-4"),
    pytest.param([123456.789, 0.5], np.float64, id="wide-fractional"),
    pytest.param([1e-30, -1e30], np.float32, id="extreme-f32"),
    pytest.param([1e-300, 1e300], np.float64, id="extreme-f64-3-digit-exponent"),
    pytest.param([6e-8, 65504.0], np.float16, id="f16-extremes"),
    pytest.param([0.99995, 1.0], np.float32, id="rounds-up"),
    pytest.param([0.00015, 0.5], np.float32, id="small-fixed"),
    pytest.param([-1e10, 3.0], np.float32, id="negative-sci"),
    # multi-dimensional
    pytest.param([[1.0, 2.0, 3.0], [4.0, 5.0, 6.5]], np.float32, id="2x3"),
    pytest.param(np.arange(24).reshape(2, 3, 4), np.int64, id="2x3x4-int"),
    pytest.param(np.arange(48).reshape(2, 3, 2, 4) - 20, np.int32, id="4d-int32"),
    pytest.param([[True], [False]], np.bool_, id="2x1-bool"),
    pytest.param([[[5.0]]], np.float32, id="1x1x1"),
    pytest.param(np.ones((1, 5)), np.float64, id="1x5"),
    pytest.param(np.ones((5, 1)), np.float16, id="5x1"),
    pytest.param([[NAN, 1e-5], [INF, 1e10]], np.float32, id="2x2-special-sci"),
    # line wrapping
    pytest.param(np.arange(100), np.int64, id="wrap-100-ints"),
    pytest.param(np.arange(30) / 7, np.float32, id="wrap-30-floats"),
    pytest.param(np.arange(100).reshape(2, 50) / 3, np.float32, id="wrap-rows"),
    pytest.param(np.arange(40).reshape(2, 2, 10) * 1e6, np.float32, id="wrap-3d-sci"),
    pytest.param(np.arange(160).reshape(2, 2, 2, 20), np.int64, id="wrap-4d"),
    pytest.param([True, False] * 20, np.bool_, id="wrap-bools"),
    # summarised
    pytest.param(np.arange(1001), np.int64, id="summary-1001-int"),
    pytest.param(np.arange(1001) / 3, np.float32, id="summary-1001-float"),
    pytest.param(np.arange(1000), np.int64, id="at-threshold"),
    pytest.param(np.arange(1600).reshape(40, 40), np.int64, id="summary-40x40"),
    pytest.param(np.arange(8000).reshape(20, 20, 20) / 7, np.float32, id="summary-20x20x20"),
    pytest.param(np.arange(2000).reshape(2, 1000), np.int32, id="summary-short-axis"),
    pytest.param(np.arange(2000).reshape(1000, 2), np.float64, id="summary-long-axis"),
    pytest.param(np.arange(1010).reshape(5, 202), np.int64, id="summary-5-rows"),
    pytest.param(np.arange(1200).reshape(6, 200), np.int64, id="summary-6-rows-all-shown"),
    pytest.param(np.arange(1400).reshape(7, 200), np.int64, id="summary-7-rows"),
    pytest.param(np.arange(1806).reshape(301, 6) / 8, np.float32, id="summary-6-columns"),
    pytest.param(np.arange(1001) * 1e6, np.float32, id="summary-hidden-middle-values"),
    # empty
    pytest.param(np.zeros(0), np.float32, id="empty"),
    pytest.param(np.zeros((0, 3)), np.float32, id="empty-0x3"),
    pytest.param(np.zeros((2, 0)), np.float64, id="empty-2x0-f64"),
    pytest.param(np.zeros((3, 0, 2)), np.float16, id="empty-3d-f16"),
    pytest.param(np.zeros(0), np.int64, id="empty-int64"),
    pytest.param(np.zeros(0), np.int32, id="empty-int32"),
    pytest.param(np.zeros((0, 0)), np.bool_, id="empty-bool"),
]

RANDOM_SHAPES = [(), (3,), (2, 3), (2, 3, 4), (1001,), (40, 40)]
RANDOM_SCALES = [1e-6, 1e-3, 1.0, 1e3, 1e6, 1e9]


@pytest.mark.parametrize(("values", "dtype"), VALUE_CASES)
def test_values(values, dtype):
    assert_prints_like_torch(values, dtype)


@pytest.mark.parametrize("dtype", FLOAT_DTYPES)
@pytest.mark.parametrize("scale", RANDOM_SCALES)
@pytest.mark.parametrize("shape", RANDOM_SHAPES, ids=str)
def test_random_floats(shape, scale, dtype):
    values = rng().standard_normal(shape) * scale
    assert_prints_like_torch(values, dtype)


@pytest.mark.parametrize("dtype", FLOAT_DTYPES)
@pytest.mark.parametrize("shape", RANDOM_SHAPES, ids=str)
def test_random_floats_spanning_magnitudes(shape, dtype):
    generator = rng()
    exponents = generator.uniform(-8, 8, size=shape)
    signs = generator.choice([-1.0, 1.0], size=shape)
    assert_prints_like_torch(signs * 10.0**exponents, dtype)


@pytest.mark.parametrize("dtype", FLOAT_DTYPES)
@pytest.mark.parametrize("shape", RANDOM_SHAPES, ids=str)
def test_random_integer_valued_floats(shape, dtype):
    assert_prints_like_torch(rng().integers(-50, 50, size=shape), dtype)


@pytest.mark.parametrize("dtype", [*INT_DTYPES, np.bool_])
@pytest.mark.parametrize("shape", RANDOM_SHAPES, ids=str)
def test_random_integers_and_bools(shape, dtype):
    info = np.iinfo(dtype) if dtype is not np.bool_ else None
    generator = rng()
    if info is None:
        values = generator.integers(0, 2, size=shape)
    else:
        values = generator.integers(max(info.min, -(10**6)), min(info.max, 10**6), size=shape)
    assert_prints_like_torch(values, dtype)


@pytest.mark.parametrize("grad", ["leaf", "op"])
@pytest.mark.parametrize("dtype", FLOAT_DTYPES)
@pytest.mark.parametrize(
    "shape", [(), (0,), (0, 3), (3,), (2, 3), (2, 3, 4), (1001,), (40, 40)], ids=str
)
def test_autograd_suffixes(shape, dtype, grad):
    assert_prints_like_torch(rng().standard_normal(shape), dtype, grad=grad)


def test_grad_fn_example_from_docs():
    t = torch.tensor(-1.3073, requires_grad=True) * 2
    assert repr(t) == "tensor(-2.6146, grad_fn=<MulBackward0>)"
    assert ours(t) == repr(t)


def test_dtype_suffix_comes_before_autograd_suffix():
    t = torch.tensor([1.0, 2.0], dtype=torch.float64, requires_grad=True)
    assert ours(t) == "tensor([1., 2.], dtype=torch.float64, requires_grad=True)" == repr(t)


@pytest.mark.parametrize("length", range(1, 16))
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_suffix_wrapping_by_length(length, dtype):
    assert_prints_like_torch(np.arange(length) + 0.5, dtype, grad="op")
    assert_prints_like_torch(np.arange(length) * 1000.5, dtype, grad="leaf")


@pytest.mark.parametrize("grad", ["leaf", "op"])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("precision", range(66))
def test_suffix_wrapping_by_precision(precision, dtype, grad):
    """Every line length around the point where suffixes move to a new line."""
    both_printoptions(precision=precision)
    assert_prints_like_torch(-1.5, dtype, grad=grad)
    assert_prints_like_torch([[0.25, -1.5, 3.0]] * 2, dtype, grad=grad)


@pytest.mark.parametrize("columns", range(1, 12))
def test_suffix_wrapping_after_multiline_body(columns):
    values = rng().standard_normal((2, columns))
    assert_prints_like_torch(values, np.float64, grad="op")
    assert_prints_like_torch(values * 1e5, np.float64, grad="leaf")


def test_empty_with_suffixes_in_order():
    t = torch.zeros((0, 3), dtype=torch.float64, requires_grad=True)
    assert ours(t) == "tensor([], size=(0, 3), dtype=torch.float64, requires_grad=True)"
    assert ours(t) == repr(t)


def test_parameter_prefix():
    parameter = torch.nn.Parameter(torch.from_numpy(rng().standard_normal((3, 30))))
    assert ours(parameter, prefix="Parameter containing:\ntensor(") == repr(parameter)


def test_subclass_prefix():
    class Fancy(torch.Tensor):
        pass

    t = torch.from_numpy(rng().standard_normal((4, 30)).astype(np.float32)).as_subclass(Fancy)
    assert ours(t, prefix="Fancy(") == repr(t)


@pytest.mark.parametrize("default_dtype", [torch.float32, torch.float64])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("shape", [(), (0,), (2, 0), (3,), (2, 3)], ids=str)
def test_default_dtype(default_dtype, dtype, shape):
    torch.set_default_dtype(default_dtype)
    assert_prints_like_torch(rng().standard_normal(shape), dtype)


PRINTOPTION_CASES = [
    pytest.param({"precision": 2}, id="precision-2"),
    pytest.param({"precision": 0}, id="precision-0"),
    pytest.param({"precision": 8}, id="precision-8"),
    pytest.param({"threshold": 0}, id="threshold-0"),
    pytest.param({"threshold": 5}, id="threshold-5"),
    pytest.param({"threshold": 5, "edgeitems": 1}, id="threshold-5-edgeitems-1"),
    pytest.param({"threshold": 5, "edgeitems": 0}, id="threshold-5-edgeitems-0"),
    pytest.param({"edgeitems": 0}, id="edgeitems-0"),
    pytest.param({"edgeitems": 2}, id="edgeitems-2"),
    pytest.param({"edgeitems": 10}, id="edgeitems-10"),
    pytest.param({"linewidth": 40}, id="linewidth-40"),
    pytest.param({"linewidth": 120}, id="linewidth-120"),
    pytest.param({"linewidth": 5}, id="linewidth-5"),
    pytest.param({"profile": "short"}, id="profile-short"),
    pytest.param({"profile": "full"}, id="profile-full"),
    pytest.param({"profile": "short", "precision": 5}, id="profile-short-precision-5"),
    pytest.param({"sci_mode": True}, id="sci-on"),
    pytest.param({"sci_mode": False}, id="sci-off"),
    pytest.param({"sci_mode": True, "precision": 1}, id="sci-on-precision-1"),
    pytest.param({"sci_mode": False, "linewidth": 50}, id="sci-off-linewidth-50"),
]

PRINTOPTION_VALUES = [
    pytest.param(2.5, np.float32, id="scalar"),
    pytest.param([0.0, 0.0], np.float32, id="zeros"),
    pytest.param([NAN, -0.0, INF], np.float32, id="special"),
    pytest.param([1.0, 2.0], np.float32, id="int-valued"),
    pytest.param([1.0, 1e10], np.float32, id="int-valued-sci"),
    pytest.param([1e-5, 1e10], np.float32, id="sci"),
    pytest.param([0.123456789, -12.5], np.float64, id="fractional"),
    pytest.param(np.arange(12), np.int64, id="ints"),
    pytest.param(np.arange(6) - 2, np.int64, id="six-ints"),
    pytest.param([True, False, True], np.bool_, id="bools"),
    pytest.param(np.arange(60).reshape(3, 4, 5) / 9, np.float32, id="3d"),
    pytest.param(np.arange(1001) / 7, np.float32, id="summary-vector"),
    pytest.param(np.arange(1600).reshape(40, 40) * 1e-6, np.float32, id="summary-matrix"),
    pytest.param(np.zeros((0, 3)), np.int32, id="empty"),
]


@pytest.mark.parametrize(("values", "dtype"), PRINTOPTION_VALUES)
@pytest.mark.parametrize("options", PRINTOPTION_CASES)
def test_printoptions(options, values, dtype):
    both_printoptions(**options)
    assert_prints_like_torch(values, dtype)
    if np.dtype(dtype).kind == "f":
        assert_prints_like_torch(values, dtype, grad="op")


def test_get_printoptions_defaults():
    assert get_printoptions() == {
        "precision": 4,
        "threshold": 1000,
        "edgeitems": 3,
        "linewidth": 80,
        "sci_mode": None,
    }


def torch_options() -> dict:
    """Return torch's current print options as a dict."""
    opts = torch._tensor_str.PRINT_OPTS
    names = ["precision", "threshold", "edgeitems", "linewidth", "sci_mode"]
    return {name: getattr(opts, name) for name in names}


@pytest.mark.parametrize(
    "calls",
    [
        pytest.param([{"profile": "short"}], id="short"),
        pytest.param([{"profile": "full"}], id="full"),
        pytest.param([{"profile": "full"}, {"profile": "default"}], id="full-then-default"),
        pytest.param([{"profile": "full"}, {"profile": "bogus"}], id="unknown-profile-ignored"),
        pytest.param([{"profile": "short", "linewidth": 60}], id="profile-then-override"),
        pytest.param([{"sci_mode": True}, {"precision": 3}], id="sci-mode-reset"),
        pytest.param([{"sci_mode": False}], id="sci-off"),
        pytest.param([{"edgeitems": 0, "threshold": 10}], id="zero-edgeitems"),
    ],
)
def test_set_printoptions_matches_torch(calls):
    for options in calls:
        both_printoptions(**options)
    assert get_printoptions() == torch_options()


def test_get_printoptions_returns_a_copy():
    get_printoptions()["precision"] = 99
    assert get_printoptions()["precision"] == 4


def _subclass_texts(m) -> list[str]:
    class Sub(m.Tensor):
        pass

    class Deeper(Sub):
        pass

    class P(m.nn.Parameter):
        pass

    class Shown(m.Tensor):
        def __repr__(self) -> str:
            return "shown"

    grad = m.ones(2, 3, requires_grad=True)
    return [repr(Sub([1.0, 2.0])), str(Sub([[1.0, 2.0], [3, 4]])),
            repr(m.arange(6.0).reshape(2, 3).double().as_subclass(Deeper)),
            str(grad.as_subclass(Sub)), repr(m.zeros(0).as_subclass(Sub)),
            repr(m.tensor(3).as_subclass(Sub)), f"{Sub([1.0])}",
            repr(m.arange(2000.0).as_subclass(Sub)),
            repr(m.ones(2, device="meta").as_subclass(Sub)),
            repr(P(m.ones(2, 2))), str(P(m.ones(2), requires_grad=False)),
            repr(m.nn.Parameter(m.ones(2, 2))), str(m.nn.Buffer(m.ones(2))),
            str(Shown([1.0])), repr(grad)]


def test_subclasses_print_their_name_as_torch():
    import chainrule

    assert _subclass_texts(chainrule) == _subclass_texts(torch)
