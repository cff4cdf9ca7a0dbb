"""torch.masked against PyTorch: every function's values, dtypes and gradients for masks that
broadcast, fully masked slices, dims and keepdim; gradcheck and gradgradcheck in float64;
PyTorch's errors; and MaskedTensor (construction, printing, its unary, binary, reduction and
view methods, gradients)."""

from __future__ import annotations

import inspect

import numpy as np
import pytest
import torch
import torch.masked as theirs

import chainrule as cr
import chainrule.masked as ours
from chainrule.autograd.gradcheck import gradcheck, gradgradcheck

pytestmark = pytest.mark.filterwarnings("ignore:The PyTorch API of MaskedTensors",
                                        "ignore:It is not recommended to create a MaskedTensor")

RNG = np.random.default_rng(7)
X = RNG.standard_normal((3, 4))
X3 = RNG.standard_normal((2, 3, 4))
MASK = np.array([[True, False, True, True], [False, False, False, False],
                 [True, True, False, True]])  # row 1 fully masked
MASKS = {
    "full": MASK,
    "all true": np.ones((3, 4), bool),
    "none": np.zeros((3, 4), bool),
    "row": np.array([True, False, True, False]),  # broadcasts over rows
    "column": np.array([[True], [False], [True]]),  # fully masks row 1
    "0-d": np.array(True),
    "no mask": None,
}


def _mask(m, values):
    return None if values is None else m.tensor(values)


def _nan_equal(got, want, rtol=1e-12, atol=1e-12, what=""):
    """Tensors equal to torch's: dtype, shape and values, nan where torch has nan."""
    assert str(got.dtype) == str(want.dtype), what
    assert tuple(got.shape) == tuple(want.shape), what
    np.testing.assert_allclose(got.detach().numpy(), want.detach().numpy(), rtol=rtol, atol=atol,
                               equal_nan=True, err_msg=what)


# ---- names and signatures ----------------------------------------------------------------


def test_names_as_torch() -> None:
    assert ours.__all__ == theirs.__all__
    assert ours._ops.__all__ == theirs._ops.__all__
    for name in ("_canonical_dim", "_combine_input_and_mask", "_input_mask", "_output_mask",
                 "_reduction_identity", "_where", "maskedtensor"):
        assert hasattr(ours, name)


@pytest.mark.parametrize("name", [n for n in theirs.__all__ if n != "MaskedTensor"])
def test_signature_as_torch(name) -> None:
    def params(fn):
        return [(p.name, p.kind, p.default) for p in inspect.signature(fn).parameters.values()]
    assert params(getattr(ours, name)) == params(getattr(theirs, name))


# ---- values ------------------------------------------------------------------------------

REDUCTIONS = {  # name: the dims to try (each with and without keepdim)
    "sum": [None, 0, 1, -1, (0, 1), (), [1]],
    "prod": [None, 0, (0, 1), -1],
    "amax": [None, 0, 1, (0, 1)],
    "amin": [None, 0, -1, [0, 1]],
    "mean": [None, 0, 1, (0, 1)],
    "logsumexp": [None, 0, 1],
    "norm": [None, 0, 1],
    "var": [None, 0, 1, (0, 1)],
    "std": [None, 0, 1],
}


@pytest.mark.parametrize("mask", MASKS)
@pytest.mark.parametrize("name", REDUCTIONS)
def test_reductions_as_torch(name, mask) -> None:
    ord = (2.0,) if name == "norm" else ()
    for dim in REDUCTIONS[name]:
        for keepdim in (False, True):
            got = getattr(ours, name)(cr.tensor(X), *ord, dim, keepdim=keepdim,
                                      mask=_mask(cr, MASKS[mask]))
            want = getattr(theirs, name)(torch.tensor(X), *ord, dim, keepdim=keepdim,
                                         mask=_mask(torch, MASKS[mask]))
            _nan_equal(got, want, what=f"{name} dim={dim} keepdim={keepdim}")


@pytest.mark.parametrize("mask", MASKS)
def test_selections_and_scans_as_torch(mask) -> None:
    x = X.copy()
    x[0, 3] = x[0, 0]  # a tie
    for m in (cr, torch):
        m.x, m.mask = m.tensor(x), _mask(m, MASKS[mask])
    calls = [
        lambda m: m.masked.argmax(m.x, 1, mask=m.mask),
        lambda m: m.masked.argmin(m.x, mask=m.mask),
        lambda m: m.masked.argmax(m.x, 0, keepdim=True, mask=m.mask),
        lambda m: m.masked.median(m.x, mask=m.mask),
        lambda m: m.masked.median(m.x, 0, keepdim=True, mask=m.mask),
        lambda m: m.masked.cumsum(m.x, 1, mask=m.mask),
        lambda m: m.masked.cumprod(m.x, -2, mask=m.mask),
        lambda m: m.masked.softmax(m.x, 1, mask=m.mask),
        lambda m: m.masked.log_softmax(m.x, 0, mask=m.mask),
        lambda m: m.masked.softmin(m.x, -1, mask=m.mask),
        lambda m: m.masked.normalize(m.x, 2.0, 1, mask=m.mask),
        lambda m: m.masked.normalize(m.x, 1.0, 0, eps=0.5, mask=m.mask),
        lambda m: m.masked.norm(m.x, 1.0, 1, mask=m.mask),
        lambda m: m.masked.norm(m.x, float("inf"), mask=m.mask),
        lambda m: m.masked.norm(m.x, float("-inf"), 0, mask=m.mask),
        lambda m: m.masked.var(m.x, 1, False, mask=m.mask),
        lambda m: m.masked.std(m.x, 0, correction=0, keepdim=True, mask=m.mask),
        lambda m: m.masked.var(m.x, (0, 1), correction=2, mask=m.mask),
        lambda m: m.masked.logaddexp(m.x, m.x.flip(0), input_mask=m.mask),
        lambda m: m.masked.logaddexp(m.x, m.x.flip(1), other_mask=m.mask, dtype=m.float32),
    ]
    for i, call in enumerate(calls):
        _nan_equal(call(cr), call(torch), what=f"call {i}")


INTEGERS = np.array([[3, -1, 4, 1], [5, 9, -2, 6], [0, 5, 3, -5]])


@pytest.mark.parametrize("dtype", ["int32", "int64", "int16", "uint8", "bool", "float32"])
def test_dtypes_as_torch(dtype) -> None:
    values = np.abs(INTEGERS) if dtype == "uint8" else INTEGERS
    mask = MASK.copy()
    mask[1, 0] = True  # no fully masked row: integer medians need one element
    calls = [
        lambda m: m.masked.sum(m.x, mask=m.mask),
        lambda m: m.masked.sum(m.x, 1, dtype=m.float64, mask=m.mask),
        lambda m: m.masked.prod(m.x, 0, mask=m.mask),
        lambda m: m.masked.cumprod(m.x, 1, dtype=m.float64, mask=m.mask),
        lambda m: m.masked.std(m.x, 1, mask=m.mask),
        lambda m: m.masked.mean(m.x, 1, dtype=m.float64, mask=m.mask),
    ]
    if dtype != "bool":
        calls += [
            lambda m: m.masked.cumsum(m.x, 1, mask=m.mask),
            lambda m: m.masked.amax(m.x, 1, mask=m.mask),
            lambda m: m.masked.amin(m.x, mask=m.mask),
            lambda m: m.masked.argmax(m.x, 1, mask=m.mask),
            lambda m: m.masked.median(m.x, 1, mask=m.mask),
            lambda m: m.masked.amax(m.x, 1, mask=m.tensor(MASK)),  # a fully masked row
        ]
    for m in (cr, torch):
        m.x, m.mask = m.tensor(values).to(getattr(m, dtype)), m.tensor(mask)
    for i, call in enumerate(calls):
        try:
            want = call(torch)
        except Exception as error:  # PyTorch's kernels refuse some dtypes (a bool cumsum)
            with pytest.raises(type(error)):
                call(cr)
            continue
        _nan_equal(call(cr), want, rtol=1e-6, atol=1e-6, what=f"call {i}")


def test_mask_of_another_dtype_is_read_as_bool() -> None:
    got = ours.sum(cr.tensor(X), 1, mask=cr.tensor([1, 0, 2, 0]))
    want = theirs.sum(torch.tensor(X), 1, mask=torch.tensor([1, 0, 2, 0]))
    _nan_equal(got, want)


def test_three_dims_with_a_broadcast_mask() -> None:
    mask = np.array([[True, False, True, True], [False, True, True, False],
                     [True, True, False, False]])
    for name, kw in (("sum", {"dim": (0, 2)}), ("mean", {"dim": 1}), ("amax", {"dim": (-1, 0)}),
                     ("var", {"dim": 2, "keepdim": True}), ("softmax", {"dim": 0}),
                     ("cumsum", {"dim": 2}), ("median", {"dim": 1})):
        got = getattr(ours, name)(cr.tensor(X3), mask=cr.tensor(mask), **kw)
        want = getattr(theirs, name)(torch.tensor(X3), mask=torch.tensor(mask), **kw)
        _nan_equal(got, want, what=name)


def test_helpers_as_torch() -> None:
    for m, lib in ((cr, ours), (torch, theirs)):
        m.out = [lib._input_mask(m.tensor(X), mask=m.tensor(MASKS["row"])),
                 lib._output_mask(lib.sum, m.tensor(X), 1, mask=m.tensor(MASK)),
                 lib._output_mask(lib.norm, m.tensor(X), 2.0, 0, keepdim=True,
                                  mask=m.tensor(MASK)),
                 lib._output_mask(lib.softmax, m.tensor(X), 1, mask=m.tensor(MASKS["row"])),
                 lib._reduction_identity("amax", m.tensor([1, 2], dtype=m.int16)),
                 lib._reduction_identity("torch.masked.prod", m.tensor(X)),
                 lib._reduction_identity("norm", m.tensor(X), float("-inf")),
                 lib._reduction_identity("median", m.tensor([1, 2]))]
        assert lib._reduction_identity("mean", m.tensor(X)) is None
        assert lib._canonical_dim((-1, 0), 3) == (0, 2) and lib._canonical_dim(None, 2) == (0, 1)
    for got, want in zip(cr.out, torch.out):
        _nan_equal(got, want)


# ---- gradients ---------------------------------------------------------------------------

GRAD_MASK = np.array([[True, False, True, True], [False, True, True, False],
                      [True, True, False, True]])  # two elements or more in every row and column
GRAD_CALLS = {
    "sum": lambda m, x, k: m.masked.sum(x, 1, mask=k),
    "sum all": lambda m, x, k: m.masked.sum(x, mask=k),
    "prod": lambda m, x, k: m.masked.prod(x, 0, mask=k),
    "prod all": lambda m, x, k: m.masked.prod(x, mask=k),
    "cumsum": lambda m, x, k: m.masked.cumsum(x, 1, mask=k),
    "cumprod": lambda m, x, k: m.masked.cumprod(x, 0, mask=k),
    "amax": lambda m, x, k: m.masked.amax(x, 1, mask=k),
    "amin": lambda m, x, k: m.masked.amin(x, (0, 1), mask=k),
    "mean": lambda m, x, k: m.masked.mean(x, 1, mask=k),
    "median": lambda m, x, k: m.masked.median(x, 0, mask=k),
    "logsumexp": lambda m, x, k: m.masked.logsumexp(x, 1, keepdim=True, mask=k),
    "logaddexp": lambda m, x, k: m.masked.logaddexp(x, x.flip(0), input_mask=k),
    "norm": lambda m, x, k: m.masked.norm(x, 2.0, 1, mask=k),
    "norm 3": lambda m, x, k: m.masked.norm(x, 3.0, 0, mask=k),
    "var": lambda m, x, k: m.masked.var(x, 1, mask=k),
    "std": lambda m, x, k: m.masked.std(x, 0, correction=0, mask=k),
    "softmax": lambda m, x, k: m.masked.softmax(x, 1, mask=k),
    "log_softmax": lambda m, x, k: m.masked.log_softmax(x, 0, mask=k),
    "softmin": lambda m, x, k: m.masked.softmin(x, 1, mask=k),
    "normalize": lambda m, x, k: m.masked.normalize(x, 2.0, 1, mask=k),
}


def _finite(out):
    return out.masked_fill(~out.isfinite(), 0)


@pytest.mark.parametrize("name", GRAD_CALLS)
def test_gradients_as_torch(name) -> None:
    weights = RNG.standard_normal((3, 4))
    grads = []
    for m in (cr, torch):
        x = m.tensor(X, requires_grad=True)
        out = _finite(GRAD_CALLS[name](m, x, m.tensor(GRAD_MASK)))
        (out * m.tensor(weights.reshape(-1)[:out.numel()].reshape(out.shape))).sum().backward()
        grads.append(x.grad)
    _nan_equal(grads[0], grads[1], rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("name", GRAD_CALLS)
def test_gradcheck_and_gradgradcheck(name) -> None:
    x = cr.tensor(X, requires_grad=True)
    mask = cr.tensor(GRAD_MASK)

    def fn(t):  # -inf where log_softmax's elements are masked out
        return _finite(GRAD_CALLS[name](cr, t, mask))

    assert gradcheck(fn, (x,))
    if name not in ("amax", "amin", "median"):  # piecewise linear: no second derivative
        assert gradgradcheck(fn, (x,))


def test_masked_out_elements_get_no_gradient() -> None:
    x = cr.tensor(X, requires_grad=True)
    ours.mean(x, 1, mask=cr.tensor(GRAD_MASK)).sum().backward()
    assert (x.grad.numpy()[~GRAD_MASK] == 0).all()


# ---- errors ------------------------------------------------------------------------------


def _error(fn):
    with pytest.raises(Exception) as info:
        fn()
    return info.type, str(info.value)


ERRORS = {
    "dim repeated": lambda m: m.masked.sum(m.tensor(X), (0, 0), mask=m.tensor(MASK)),
    "dim out of range": lambda m: m.masked.amax(m.tensor(X), 2, mask=m.tensor(MASK)),
    "negative dim out of range": lambda m: m.masked.softmax(m.tensor(X), -3),
    "mask with more dims": lambda m: m.masked.sum(m.tensor(X), mask=m.ones(1, 3, 4, dtype=m.bool)),
    "mean of integers": lambda m: m.masked.mean(m.tensor(INTEGERS), mask=m.tensor(MASK)),
    "mean to an integer dtype": lambda m: m.masked.mean(m.tensor(X), dtype=m.int64),
    "integer median of an empty row": lambda m: m.masked.median(m.tensor(INTEGERS), 1,
                                                                mask=m.tensor(MASK)),
    "amax of bools": lambda m: m.masked.amax(m.tensor(MASK), mask=m.tensor(MASK)),
    "unbiased and correction": lambda m: m.masked.var(m.tensor(X), 1, True, correction=1),
    "output mask of a non-masked op": lambda m: m.masked._output_mask(m.exp, m.tensor(X)),
    "input mask without a mask": lambda m: m.masked._input_mask(m.tensor(X)),
}


@pytest.mark.parametrize("case", ERRORS)
def test_errors_as_torch(case) -> None:
    got, want = _error(lambda: ERRORS[case](cr)), _error(lambda: ERRORS[case](torch))
    assert got[0] is want[0]
    if case != "output mask of a non-masked op":  # names the function's module
        assert got[1] == want[1]


# ---- MaskedTensor ------------------------------------------------------------------------

DATA = np.array([[1.5, -2.0, 0.25, 3.0], [0.5, 4.0, -1.0, 2.0], [-0.75, 1.0, 2.5, -3.5]])


def _pair(values=DATA, mask=MASK, requires_grad=False):
    return (ours.masked_tensor(cr.tensor(values), cr.tensor(mask), requires_grad),
            theirs.masked_tensor(torch.tensor(values), torch.tensor(mask), requires_grad))


def _same_masked(got, want, rtol=1e-12, atol=1e-12, what="") -> None:
    """Both MaskedTensors, the same mask, dtype and shape, and the same specified values."""
    assert ours.is_masked_tensor(got) and theirs.is_masked_tensor(want), what
    mask = want.get_mask().numpy()
    np.testing.assert_array_equal(got.get_mask().numpy(), mask, err_msg=what)
    assert str(got.dtype) == str(want.dtype) and tuple(got.shape) == tuple(want.shape), what
    np.testing.assert_allclose(got.get_data().detach().numpy()[mask],
                               want.get_data().detach().numpy()[mask], rtol=rtol, atol=atol,
                               err_msg=what)


def test_factories_and_accessors() -> None:
    got, want = _pair()
    assert isinstance(got, cr.Tensor) and ours.is_masked_tensor(got)
    assert not ours.is_masked_tensor(cr.tensor(DATA))
    _nan_equal(got.get_data(), want.get_data())
    _nan_equal(got.get_mask(), want.get_mask())
    _nan_equal(got.to_tensor(0.0), want.to_tensor(0.0))
    _nan_equal(got.to_tensor(float("nan")), want.to_tensor(float("nan")))
    assert (got.shape, got.dim(), got.numel(), len(got), got.size(1)) == (
        want.shape, want.dim(), want.numel(), len(want), want.size(1))
    assert str(got.dtype) == str(want.dtype) and str(got.device) == str(want.device)
    assert got.is_sparse is want.is_sparse is False
    assert got.is_contiguous() and got.requires_grad is want.requires_grad is False


def test_construction_warns_as_torch() -> None:
    for lib, m in ((ours, cr), (theirs, torch)):
        with pytest.warns(UserWarning, match="prototype stage"):
            lib.masked_tensor(m.tensor(DATA), m.tensor(MASK))
        with pytest.warns(UserWarning, match="not recommended to create a MaskedTensor"):
            lib.masked_tensor(m.tensor(DATA, requires_grad=True), m.tensor(MASK))


@pytest.mark.parametrize("build", [
    lambda lib, m: lib.masked_tensor(DATA, m.tensor(MASK)),
    lambda lib, m: lib.masked_tensor(m.tensor(DATA), MASK),
    lambda lib, m: lib.masked_tensor(m.tensor(DATA), m.tensor(DATA)),
    lambda lib, m: lib.masked_tensor(m.tensor(DATA), m.tensor(MASK[0])),
    lambda lib, m: lib.masked_tensor(m.tensor(DATA), m.tensor(MASK[:2])),
    lambda lib, m: lib.masked_tensor(m.tensor(DATA, dtype=m.complex64), m.tensor(MASK)),
    lambda lib, m: lib.as_masked_tensor(m.tensor(DATA), [True]),
], ids=["data not a tensor", "mask not a tensor", "mask not bool", "fewer dims", "other size",
        "complex", "as_masked_tensor mask"])
def test_construction_errors_as_torch(build) -> None:
    assert _error(lambda: build(ours, cr)) == _error(lambda: build(theirs, torch))


@pytest.mark.parametrize("values,mask", [
    (DATA, MASK),
    (DATA[0], MASK[0]),
    (DATA[0], np.zeros(4, bool)),
    (np.array([1, -20, 300]), np.array([True, False, True])),
    (np.array([True, False]), np.array([True, True])),
    (np.array(2.5), np.array(True)),
    (np.array(2.5), np.array(False)),
    (np.array(7), np.array(True)),
    (X3, np.broadcast_to(MASK, X3.shape).copy()),
    (DATA.astype(np.float32), MASK),
], ids=["2-d", "1-d", "all masked", "ints", "bools", "0-d", "0-d masked", "0-d int", "3-d",
        "float32"])
def test_printed_as_torch(values, mask) -> None:
    got, want = _pair(values, mask)
    assert repr(got) == repr(want)
    assert str(got) == str(want)


def _unary_domain(name):
    if name in ("acosh", "arccosh"):
        return np.abs(DATA) + 1.0
    if name in ("log", "log10", "log2", "sqrt", "rsqrt", "lgamma", "digamma"):
        return np.abs(DATA) + 0.5
    if name in ("acos", "arccos", "asin", "arcsin", "atanh", "arctanh", "erfinv"):
        return DATA / 5
    if name == "logit":
        return 1 / (1 + np.exp(-DATA))
    return DATA


UNARY_ARGS = {"clamp": (-1.0, 2.0), "clip": (0.0,), "pow": (2,), "round": (), "nan_to_num": ()}


@pytest.mark.parametrize("name", ours.maskedtensor.unary.UNARY_NAMES)
def test_unary_methods_as_torch(name) -> None:
    if name == "bitwise_not":
        got, want = _pair(INTEGERS)
    else:
        got, want = _pair(_unary_domain(name))
    args = UNARY_ARGS.get(name, ())
    _same_masked(getattr(got, name)(*args), getattr(want, name)(*args), rtol=1e-10, what=name)
    inplace = name + "_"
    if inplace in ours.maskedtensor.unary.INPLACE_UNARY_NAMES and name not in ("bitwise_not",):
        assert getattr(got, inplace)(*args) is got
        getattr(want, inplace)(*args)
        _same_masked(got, want, rtol=1e-10, what=inplace)


def test_unary_operators_and_argument_errors() -> None:
    got, want = _pair()
    for fn in (lambda t: -t, abs, lambda t: t ** 2, lambda t: +t, lambda t: ~(t > 0)):
        _same_masked(fn(got), fn(want))
    _same_masked(got.clamp(min=0.0), want.clamp(min=0.0))
    _same_masked(got.nan_to_num(posinf=1.0), want.nan_to_num(posinf=1.0))
    assert _error(lambda: got.round(decimals=1)) == _error(lambda: want.round(decimals=1))
    assert _error(lambda: got.pow(got.get_data())) == _error(lambda: want.pow(want.get_data()))
    assert _error(lambda: 2 ** got)[0] is _error(lambda: 2 ** want)[0] is TypeError


BINARY_DOMAIN = {"bitwise_and", "bitwise_or", "bitwise_xor", "bitwise_left_shift",
                 "bitwise_right_shift"}


@pytest.mark.parametrize("name", ours.maskedtensor.binary.BINARY_NAMES)
def test_binary_methods_as_torch(name) -> None:
    values = np.abs(INTEGERS) % 4 if name in BINARY_DOMAIN else DATA
    other_values = values[::-1].copy() + (1 if name in BINARY_DOMAIN else 0.5)
    got, want = _pair(values)
    got_other, want_other = _pair(other_values)
    _same_masked(getattr(got, name)(got_other), getattr(want, name)(want_other), what=name)
    plain_ours, plain_theirs = cr.tensor(other_values), torch.tensor(other_values)
    _same_masked(getattr(got, name)(plain_ours), getattr(want, name)(plain_theirs), what=name)
    inplace = name + "_"
    if inplace in ours.maskedtensor.binary.INPLACE_BINARY_NAMES and name not in (
            "eq", "ne", "le", "ge", "greater", "greater_equal", "gt", "less_equal", "lt", "less",
            "not_equal"):
        assert getattr(got, inplace)(got_other) is got
        getattr(want, inplace)(want_other)
        _same_masked(got, want, what=inplace)


@pytest.mark.parametrize("op", [
    lambda a, b: a + b, lambda a, b: a - b, lambda a, b: a * b, lambda a, b: a / b,
    lambda a, b: a // b, lambda a, b: a % b, lambda a, b: a == b, lambda a, b: a != b,
    lambda a, b: a < b, lambda a, b: a <= b, lambda a, b: a > b, lambda a, b: a >= b,
], ids=["+", "-", "*", "/", "//", "%", "==", "!=", "<", "<=", ">", ">="])
def test_binary_operators_as_torch(op) -> None:
    got, want = _pair()
    got_other, want_other = _pair(DATA[::-1].copy() + 0.5)
    _same_masked(op(got, got_other), op(want, want_other))
    plain = DATA + 1
    for left, right, t_left, t_right in ((got, cr.tensor(plain), want, torch.tensor(plain)),
                                         (cr.tensor(plain), got, torch.tensor(plain), want),
                                         (got, 2.0, want, 2.0)):
        _same_masked(op(left, right), op(t_left, t_right))


def test_reflected_operators_with_numbers_as_torch() -> None:
    got, want = _pair()
    _same_masked(1.5 + got, 1.5 + want)
    _same_masked(2.0 * got, 2.0 * want)
    _same_masked(2.0 / got, 2.0 / want)
    assert _error(lambda: 1 - got) == _error(lambda: 1 - want)


def test_binary_errors_as_torch() -> None:
    got, want = _pair()
    got_other, want_other = _pair(DATA, ~MASK)
    for fn in (lambda a, b: a + b, lambda a, b: a.add(b, alpha=2), lambda a, b: a.mul_(b),
               lambda a, b: a @ b):
        assert _error(lambda: fn(got, got_other)) == _error(  # noqa: B023  (called right here)
            lambda: fn(want, want_other))  # noqa: B023


@pytest.mark.parametrize("name", ours.maskedtensor.reductions.REDUCE_NAMES)
def test_reduction_methods_as_torch(name) -> None:
    values = DATA > 0 if name == "all" else DATA
    got, want = _pair(values)
    if name == "norm":  # Tensor.norm hands p on, which PyTorch's MaskedTensor refuses
        assert _error(lambda: got.norm()) == _error(lambda: want.norm())
        assert _error(lambda: got.norm(1)) == _error(lambda: want.norm(1))
        return
    _same_masked(getattr(got, name)(), getattr(want, name)(), rtol=1e-10, what=name)
    for args, kwargs in (((1,), {}), ((0, True), {}), ((), {"dim": -1, "keepdim": True})):
        _same_masked(getattr(got, name)(*args, **kwargs), getattr(want, name)(*args, **kwargs),
                     rtol=1e-10, what=f"{name}{args}{kwargs}")
    if name not in ("argmin", "argmax", "all", "prod"):
        _same_masked(getattr(got, name)((0, 1)), getattr(want, name)((0, 1)), rtol=1e-10)
    if name in ("sum", "mean", "prod"):
        _same_masked(getattr(got, name)(1, dtype=cr.float32),
                     getattr(want, name)(1, dtype=torch.float32), rtol=1e-6, atol=1e-6)
    # PyTorch's argument parser words this error its own way
    assert _error(lambda: getattr(got, name)(keepdim=True))[0] is _error(
        lambda: getattr(want, name)(keepdim=True))[0] is TypeError


def test_softmax_method_as_torch() -> None:
    got, want = _pair()
    for dim in (0, 1, -1):
        _same_masked(got.softmax(dim), want.softmax(dim))
    _nan_equal(got.softmax(1).get_data(), want.softmax(1).get_data())


@pytest.mark.parametrize("call", [
    lambda t: t.select(0, 2), lambda t: t.transpose(0, 1), lambda t: t.t(),
    lambda t: t.narrow(1, 1, 2), lambda t: t.expand(2, 3, 4), lambda t: t.view(-1),
    lambda t: t.view(4, 3), lambda t: t.reshape(2, 6), lambda t: t.flatten(),
    lambda t: t.unsqueeze(1), lambda t: t.unfold(1, 2, 1), lambda t: t[1],
    lambda t: t[:, 1:3], lambda t: t[..., ::2], lambda t: t.split(1), lambda t: t.chunk(2, 1),
], ids=["select", "transpose", "t", "narrow", "expand", "view", "view 2-d", "reshape", "flatten",
        "unsqueeze", "unfold", "index", "slice", "ellipsis", "split", "chunk"])
def test_views_as_torch(call) -> None:
    got, want = _pair()
    got, want = call(got), call(want)
    if isinstance(want, tuple):
        assert isinstance(got, tuple) and len(got) == len(want)
        for g, w in zip(got, want):
            _same_masked(g, w)
    else:
        _same_masked(got, want)


def test_views_with_masked_arguments() -> None:
    got, want = _pair()
    other_got, other_want = _pair(np.zeros((2, 3, 4)), np.ones((2, 3, 4), bool))
    _same_masked(got.expand_as(other_got), want.expand_as(other_want))
    _same_masked(got.view_as(got.get_data()), want.view_as(want.get_data()))
    _same_masked(got[cr.tensor(MASK)], want[torch.tensor(MASK)])


def test_conversions_and_copies_as_torch() -> None:
    got, want = _pair()
    _same_masked(got.to(cr.float32), want.to(torch.float32), rtol=1e-6)
    for fn in (lambda t: t.double(), lambda t: t.int(), lambda t: t.long(), lambda t: t.bool(),
               lambda t: t.half(), lambda t: t.float(), lambda t: t.detach(),
               lambda t: t.clone(), lambda t: t.contiguous()):
        _same_masked(fn(got), fn(want), rtol=1e-3, atol=1e-3)
    assert got.to(cr.float64) is got and got.contiguous() is got
    assert got[0, 0].item() == want[0, 0].item()
    assert _error(lambda: got[0, 1].item()) == _error(lambda: want[0, 1].item())


def test_masked_tensor_gradients_as_torch() -> None:
    weights = RNG.standard_normal((3, 4))
    calls = [lambda t, w: (t.sin() * 2).sum(),
             lambda t, w: (t * t).mean(),
             lambda t, w: t.exp().sum(1).sum(),
             lambda t, w: t.softmax(1).mul(t.reciprocal()).amax(),
             lambda t, w: (t.get_data() * w).sum(),
             lambda t, w: t.to_tensor(0.0).pow(2).sum(),
             lambda t, w: t.var(),
             lambda t, w: t[1:].transpose(0, 1).prod(0).sum()]
    for i, call in enumerate(calls):
        got, want = _pair(requires_grad=True)
        call(got, cr.tensor(weights)).backward()
        call(want, torch.tensor(weights)).backward()
        # PyTorch's grad is specified where its backward reached; chainrule's grad has the
        # leaf's mask (0 where nothing reached)
        reached = want.grad.get_mask().numpy()
        assert (got.grad.get_mask().numpy() == MASK).all() and not (reached & ~MASK).any()
        np.testing.assert_allclose(got.grad.get_data().numpy()[reached],
                                   want.grad.get_data().numpy()[reached], rtol=1e-10, atol=1e-12,
                                   err_msg=f"call {i}")
        assert (got.grad.get_data().numpy()[MASK & ~reached] == 0).all()
        assert got.is_leaf and got.grad_fn is None


def test_as_masked_tensor_keeps_the_history() -> None:
    grads = []
    for lib, m in ((ours, cr), (theirs, torch)):
        x = m.tensor(DATA, requires_grad=True)
        mt = lib.as_masked_tensor(x * 2, m.tensor(MASK))
        assert mt.requires_grad and not mt.is_leaf
        lib.sum(mt).backward()
        grads.append(x.grad)
    # PyTorch hands x a MaskedTensor gradient; chainrule a tensor, 0 where masked out
    np.testing.assert_array_equal(grads[0].numpy()[MASK], grads[1].get_data().numpy()[MASK])
    assert (grads[0].numpy()[~MASK] == 0).all()


def test_masked_functions_take_a_masked_tensor() -> None:
    got, want = _pair()
    for name in ("sum", "amax", "argmin", "logsumexp", "norm", "prod"):
        _nan_equal(getattr(ours, name)(got, 1), getattr(theirs, name)(want, 1), what=name)
    _nan_equal(ours.softmax(got, 0), theirs.softmax(want, 0))
    _nan_equal(ours.cumsum(got, 1), theirs.cumsum(want, 1))


def test_torch_functions_refuse_a_masked_tensor() -> None:
    # chainrule has no __torch_function__: a plain function cannot see the mask, so it refuses
    # rather than compute on the masked-out values
    got, _ = _pair()
    for fn in (cr.sin, cr.sum, lambda t: cr.cat([t, t]), cr.nn.functional.relu):
        with pytest.raises(TypeError, match="__torch_function__"):
            fn(got)
