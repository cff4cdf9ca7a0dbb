"""bfloat16 and the float8 dtypes (ml_dtypes) against torch: dtype objects, finfo, conversions
bit for bit, printing, promotion, ops computed in float32 and rounded once, autograd, float8's
refusals, sampling, save/load, and the error without ml_dtypes."""

from __future__ import annotations

import os
import pickle
import re
import subprocess
import sys
import textwrap

import numpy as np
import pytest
import safetensors.torch
import torch

import chainrule as cr

LOW = ["bfloat16", "float8_e4m3fn", "float8_e5m2", "float8_e4m3fnuz", "float8_e5m2fnuz",
       "float8_e8m0fnu"]
FLOAT8 = LOW[1:]
RNG = np.random.default_rng(7)


def bits(t) -> np.ndarray:
    """The raw bits of a chainrule or torch tensor (uint8 / int16)."""
    view = t.view(torch.uint8 if isinstance(t, torch.Tensor) and t.element_size() == 1 else
                  torch.int16 if isinstance(t, torch.Tensor) else
                  cr.uint8 if t.element_size() == 1 else cr.int16)
    return view.numpy()


def values(t) -> np.ndarray:
    return t.detach().float().numpy()


def same(a: np.ndarray, b: np.ndarray) -> bool:
    """Equal values, NaN where the other has NaN."""
    return a.shape == b.shape and bool(np.all((a == b) | (np.isnan(a) & np.isnan(b))))


# ---- dtype objects and finfo --------------------------------------------------------------------


@pytest.mark.parametrize("name", LOW)
def test_dtype_object(name):
    ours, theirs = getattr(cr, name), getattr(torch, name)
    assert repr(ours) == repr(theirs) and str(ours) == str(theirs)
    for attr in ("is_floating_point", "is_complex", "is_signed", "itemsize"):
        assert getattr(ours, attr) == getattr(theirs, attr), attr
    assert pickle.loads(pickle.dumps(ours)) is ours
    assert cr.zeros(2, dtype=ours).dtype is ours
    assert cr.tensor([1.0], dtype=ours).element_size() == theirs.itemsize


@pytest.mark.parametrize("name", ["float16", "float32", "float64", "complex64", *LOW])
def test_finfo(name):
    ours, theirs = cr.finfo(getattr(cr, name)), torch.finfo(getattr(torch, name))
    assert repr(ours) == repr(theirs)
    for field in ("bits", "eps", "max", "min", "tiny", "smallest_normal", "resolution", "dtype"):
        assert getattr(ours, field) == getattr(theirs, field), field
        assert type(getattr(ours, field)) is type(getattr(theirs, field)), field


def test_iinfo_refuses_bfloat16():
    with pytest.raises(TypeError, match="requires an integer input type"):
        torch.iinfo(torch.bfloat16)
    with pytest.raises(TypeError, match="requires an integer input type"):
        cr.iinfo(cr.bfloat16)


def test_typed_names():
    x, t = cr.zeros(2, dtype=cr.bfloat16), torch.zeros(2, dtype=torch.bfloat16)
    assert x.type() == t.type() == "torch.BFloat16Tensor"
    assert cr.typename(x) == torch.typename(t)
    assert cr.ones(2).type(cr.BFloat16Tensor).dtype is cr.bfloat16
    assert cr.ones(2).type("torch.BFloat16Tensor").dtype is cr.bfloat16
    for name in FLOAT8:
        assert cr.typename(cr.zeros(1, dtype=getattr(cr, name))) == \
            torch.typename(torch.zeros(1, dtype=getattr(torch, name)))


# ---- conversions bit for bit --------------------------------------------------------------------

_SPECIAL = [0.0, -0.0, np.inf, -np.inf, np.nan, 448, 464, 479.9, 480, 500, 1e6, 57344, 61440,
            65536, 1e-9, 2**-10, 2**-9 * 1.5, 240, 247, 248, 256, 2**-127, 6e-39, 5.8e-39, 3e38,
            1.5, 0.75, 0.7, -2.0, 3.0]


@pytest.mark.parametrize("source", ["float32", "float64", "int64"])
@pytest.mark.parametrize("name", LOW)
def test_conversion_matches_torch(source, name):
    if source == "int64":
        data = RNG.integers(-2**40, 2**40, 4000)
    else:
        with np.errstate(over="ignore"):
            data = np.concatenate([RNG.standard_normal(4000) * 10.0 ** RNG.integers(-45, 40, 4000),
                                   _SPECIAL]).astype(source)
    ours = cr.from_numpy(data).to(getattr(cr, name))
    theirs = torch.from_numpy(data).to(getattr(torch, name))
    assert ours.dtype is getattr(cr, name)
    assert same(values(ours), values(theirs))
    nan = np.isnan(values(theirs))  # NaN payload bits are not matched (docs/differences.md)
    assert np.array_equal(bits(ours)[~nan], bits(theirs)[~nan])
    # and back, exactly
    assert same(ours.double().numpy(), theirs.double().numpy())


@pytest.mark.parametrize("name", LOW)
def test_tensor_from_python_numbers(name):
    data = (RNG.standard_normal(500) * 50).tolist() + [1e10, -1e-10, 1 / 3]
    ours = cr.tensor(data, dtype=getattr(cr, name))
    theirs = torch.tensor(data, dtype=getattr(torch, name))
    assert same(values(ours), values(theirs))


def test_conversion_methods():
    x = cr.tensor([1.3, -2.7, 1e3])
    t = torch.tensor([1.3, -2.7, 1e3])
    for ours, theirs in ((x.bfloat16(), t.bfloat16()), (x.to(cr.bfloat16), t.to(torch.bfloat16)),
                         (x.bfloat16().float(), t.bfloat16().float()),
                         (x.bfloat16().half(), t.bfloat16().half()),
                         (x.bfloat16().long(), t.bfloat16().long())):
        assert str(ours.dtype) == str(theirs.dtype)
        assert same(ours.double().numpy(), theirs.double().numpy())
    assert x.bfloat16()[0].item() == t.bfloat16()[0].item()
    assert type(x.bfloat16()[0].item()) is float
    assert x.bfloat16().tolist() == t.bfloat16().tolist()


def test_writes_convert_as_torch():
    """copy_ and item assignment into low-precision tensors round (and saturate) as PyTorch."""
    src = [1 / 3, 500.0, -1e9, 0.3]
    for name in ("bfloat16", "float8_e4m3fn", "float8_e5m2"):
        ours = cr.zeros(4, dtype=getattr(cr, name)).copy_(cr.tensor(src, dtype=cr.float64))
        theirs = torch.zeros(4, dtype=getattr(torch, name)).copy_(
            torch.tensor(src, dtype=torch.float64))
        assert same(values(ours), values(theirs))
        o, t = cr.zeros(2, dtype=getattr(cr, name)), torch.zeros(2, dtype=getattr(torch, name))
        o[0], t[0] = 1000.0, 1000.0
        o[cr.tensor([1])], t[torch.tensor([1])] = 0.1, 0.1
        assert same(values(o), values(t))


def test_numpy_is_refused():
    for name in LOW:
        t = torch.zeros(2, dtype=getattr(torch, name))
        with pytest.raises(TypeError) as expected:
            t.numpy()
        with pytest.raises(TypeError, match=str(expected.value)):
            cr.zeros(2, dtype=getattr(cr, name)).numpy()
        with pytest.raises(TypeError, match=str(expected.value)):
            np.asarray(cr.zeros(2, dtype=getattr(cr, name)))


# ---- printing -----------------------------------------------------------------------------------

_PRINTED = [[1.5, 2.25], [1 / 3, 1e10, 1e-10, 3.14159], [1e30, 3.0], [100.0, 200.0, 300.0],
            [float("nan"), float("inf"), 1.0], [257.0, 1.0], 1 / 3, [[1.0, 2.0], [3.0, 4.0]],
            [0.1, 0.2, 0.3], [-0.0, 0.0], [1e-5, 1.0], [65504.0, 70000.0], [12345.678, 0.001],
            (RNG.standard_normal(7)).tolist(), (RNG.standard_normal((3, 4)) * 1000).tolist(),
            RNG.standard_normal(2000).tolist(), [float("nan"), 4.0], [2.0**-127, 4.0],
            [2.0**-127, 0.5, 1e10], [2.0**-127]]


@pytest.mark.parametrize("name", LOW)
def test_printing(name):
    for data in _PRINTED:
        assert repr(cr.tensor(data, dtype=getattr(cr, name))) == \
            repr(torch.tensor(data, dtype=getattr(torch, name)))
    assert repr(cr.ones(2, dtype=getattr(cr, name), requires_grad=True)) == \
        repr(torch.ones(2, dtype=getattr(torch, name), requires_grad=True))
    assert repr(cr.zeros(2, 0, dtype=getattr(cr, name))) == \
        repr(torch.zeros(2, 0, dtype=getattr(torch, name)))


# ---- promotion ----------------------------------------------------------------------------------

_OTHERS = ["bool", "uint8", "int64", "float16", "bfloat16", "float32", "float64", "complex64"]


@pytest.mark.parametrize("other", _OTHERS)
def test_promote_types(other):
    assert str(cr.promote_types(cr.bfloat16, getattr(cr, other))) == \
        str(torch.promote_types(torch.bfloat16, getattr(torch, other)))
    assert cr.can_cast(cr.bfloat16, getattr(cr, other)) == \
        torch.can_cast(torch.bfloat16, getattr(torch, other))
    assert cr.can_cast(getattr(cr, other), cr.bfloat16) == \
        torch.can_cast(getattr(torch, other), torch.bfloat16)


@pytest.mark.parametrize("name", FLOAT8)
@pytest.mark.parametrize("other", _OTHERS)
def test_float8_promotion_is_refused(name, other):
    with pytest.raises(RuntimeError) as expected:
        torch.promote_types(getattr(torch, name), getattr(torch, other))
    with pytest.raises(RuntimeError, match=str(expected.value)):
        cr.promote_types(getattr(cr, name), getattr(cr, other))
    ours = cr.ones(2, dtype=getattr(cr, name))
    with pytest.raises(RuntimeError, match="Promotion for Float8 Types is not supported"):
        ours * cr.ones(2, dtype=getattr(cr, other))


def _operands(m):
    b = m.tensor([1.3, -2.7, 0.1], dtype=m.bfloat16)
    return {"f32": m.ones(3), "int": m.tensor([1, 2, 3]), "f64_0d": m.tensor(1.1, dtype=m.float64),
            "f32_0d": m.tensor(1.5), "half": m.ones(3, dtype=m.float16), "bool": m.tensor(True),
            "py_float": 1.5, "py_int": 3, "py_bool": True, "py_complex": 1j}, b


def test_result_types():
    ours, ob = _operands(cr)
    theirs, tb = _operands(torch)
    for key in ours:
        assert str((ob + ours[key]).dtype) == str((tb + theirs[key]).dtype), key
        assert str(cr.result_type(ob, ours[key])) == str(torch.result_type(tb, theirs[key])), key
        assert str((ob == ours[key]).dtype) == str((tb == theirs[key]).dtype), key
    f8 = cr.ones(2, dtype=cr.float8_e4m3fn)
    t8 = torch.ones(2, dtype=torch.float8_e4m3fn)
    for o, t in ((1.0, 1.0), (1, 1), (cr.tensor(1.0), torch.tensor(1.0))):
        assert str(cr.result_type(f8, o)) == str(torch.result_type(t8, t))


# ---- ops: computed in float32, rounded once ------------------------------------------------------


def _data(m, shape, scale=3.0, seed=0, positive=False):
    a = np.random.default_rng(seed).standard_normal(shape).astype(np.float32) * scale
    a = np.abs(a) + 0.1 if positive else a
    return m.tensor(a).to(m.bfloat16)


_BF16_EPS = 2.0**-7  # one bfloat16 rounding


def _close(ours, theirs, ulps=1):
    """Within ``ulps`` bfloat16 roundings: float32 sums in another order may round differently."""
    o, t = values(ours), values(theirs)
    assert np.array_equal(np.isnan(o), np.isnan(t))
    scale = np.nanmax(np.abs(t)) if t.size else 0.0
    np.testing.assert_allclose(o, t, rtol=ulps * _BF16_EPS, atol=ulps * _BF16_EPS * scale)


# Correctly rounded in float32 (or exact): the bfloat16 result is PyTorch's bit for bit.
_EXACT_UNARY = ["sqrt", "abs", "neg", "floor", "ceil", "round", "trunc", "reciprocal", "sign",
                "square", "relu", "frac"]
# libm/SLEEF functions: float32 results that differ in the last bit may round apart.
_LIBM_UNARY = ["exp", "log", "rsqrt", "tanh", "sigmoid", "sin", "cos", "erf", "expm1", "log1p",
               "atan", "sinh", "exp2", "log2"]


def _unary(m, op):
    positive = op in ("log", "sqrt", "rsqrt", "log2")
    return getattr(_data(m, (5, 7), positive=positive), op)()


@pytest.mark.parametrize("op", _EXACT_UNARY)
def test_unary_exact(op):
    ours, theirs = _unary(cr, op), _unary(torch, op)
    assert ours.dtype is cr.bfloat16
    assert same(values(ours), values(theirs))


@pytest.mark.parametrize("op", _LIBM_UNARY)
def test_unary_within_rounding(op):
    ours, theirs = _unary(cr, op), _unary(torch, op)
    assert ours.dtype is cr.bfloat16
    _close(ours, theirs)


_BINARY = {
    "add": lambda a, b: a + b, "sub": lambda a, b: a - b, "mul": lambda a, b: a * b,
    "div": lambda a, b: a / b, "add_scalar": lambda a, b: a + 0.7123,
    "sub_scalar": lambda a, b: a - 1.37, "mul_scalar": lambda a, b: a * 0.7123,
    "div_scalar": lambda a, b: a / 0.7123, "remainder": lambda a, b: a % 0.7,
    "fmod": lambda a, b: a.fmod(0.7), "floordiv": lambda a, b: a // 0.7,
    "maximum": lambda a, b: a.maximum(b), "add_int": lambda a, b: a + 1001,
    "mul_int": lambda a, b: a * 3, "lt": lambda a, b: a < b,
    "eq_scalar": lambda a, b: a == a[0, 0].item(), "where": lambda a, b: a.where(a > 0, b),
    "clamp": lambda a, b: a.clamp(-1.0, 1.0), "lerp": lambda a, b: a.lerp(b, 0.3),
    "addcmul": lambda a, b: a.addcmul(a, b, value=0.3),
}


@pytest.mark.parametrize("op", list(_BINARY))
def test_binary(op):
    """A Python number is rounded to bfloat16 first, except by mul and div (PyTorch's kernels)."""
    ours = _BINARY[op](_data(cr, (6, 9)), _data(cr, (6, 9), seed=1))
    theirs = _BINARY[op](_data(torch, (6, 9)), _data(torch, (6, 9), seed=1))
    assert str(ours.dtype) == str(theirs.dtype)
    assert same(values(ours), values(theirs))


@pytest.mark.parametrize("op", ["pow_scalar", "atan2"])
def test_binary_within_rounding(op):
    fn = {"pow_scalar": lambda a, b: a.abs() ** 1.7, "atan2": lambda a, b: a.atan2(b)}[op]
    ours = fn(_data(cr, (6, 9)), _data(cr, (6, 9), seed=1))
    theirs = fn(_data(torch, (6, 9)), _data(torch, (6, 9), seed=1))
    assert ours.dtype is cr.bfloat16
    _close(ours, theirs)


_REDUCTIONS = {
    "sum": lambda a: a.sum(), "sum_dim": lambda a: a.sum(1), "mean": lambda a: a.mean(),
    "mean_dim": lambda a: a.mean(0), "cumsum": lambda a: a.cumsum(1),
    "cumprod": lambda a: (a / 8 + 1).cumprod(1), "amax": lambda a: a.amax(1),
    "argmax": lambda a: a.argmax(1), "logsumexp": lambda a: a.logsumexp(1),
    "var": lambda a: a.var(1), "std": lambda a: a.std(), "norm": lambda a: a.norm(),
    "prod_short": lambda a: (a[:, :20] / 8 + 1).prod(1),
}


@pytest.mark.parametrize("op", list(_REDUCTIONS))
def test_reductions_bit_for_bit(op):
    """PyTorch accumulates in float32 and rounds once (products: in bfloat16, step by step)."""
    ours = _REDUCTIONS[op](_data(cr, (8, 3000)))
    theirs = _REDUCTIONS[op](_data(torch, (8, 3000)))
    assert str(ours.dtype) == str(theirs.dtype)
    assert same(ours.detach().double().numpy(), theirs.detach().double().numpy())


_PRODUCTS = {
    "matmul": lambda m, a, b: a @ b.mT, "mm": lambda m, a, b: m.mm(a, b.T),
    "bmm": lambda m, a, b: m.bmm(a[None], b.T[None]),
    "linear": lambda m, a, b: m.nn.functional.linear(a, b, b[:, 0]),
    "addmm": lambda m, a, b: m.addmm(a[:, :6], a, b.T),
    "einsum": lambda m, a, b: m.einsum("ij,kj->ik", a, b),
    "conv1d": lambda m, a, b: m.nn.functional.conv1d(a[None], b[:, :6, None].expand(6, 6, 3)),
    "conv2d": lambda m, a, b: m.nn.functional.conv2d(a.reshape(1, 2, 3, 6), b.reshape(2, 2, 3, 3)),
    "softmax": lambda m, a, b: m.nn.functional.softmax(a, -1),
    "log_softmax": lambda m, a, b: m.nn.functional.log_softmax(a, -1),
    "layer_norm": lambda m, a, b: m.nn.functional.layer_norm(a, (6,)),
    "gelu": lambda m, a, b: m.nn.functional.gelu(a),
    "silu": lambda m, a, b: m.nn.functional.silu(a),
    "cross_entropy": lambda m, a, b: m.nn.functional.cross_entropy(a, m.tensor([0, 5, 2, 1, 3, 4])),
    "mse": lambda m, a, b: m.nn.functional.mse_loss(a, b),
}


@pytest.mark.parametrize("op", list(_PRODUCTS))
def test_products_and_nn_within_rounding(op):
    """Matrix products, convolutions and fused nn kernels: PyTorch accumulates in float32 and
    rounds intermediates where its kernels do; the results agree within a bfloat16 rounding."""
    ours = _PRODUCTS[op](cr, _data(cr, (6, 6)), _data(cr, (6, 6), seed=1))
    theirs = _PRODUCTS[op](torch, _data(torch, (6, 6)), _data(torch, (6, 6), seed=1))
    assert ours.dtype is cr.bfloat16 and theirs.dtype is torch.bfloat16
    _close(ours, theirs)


def test_sum_to_float32():
    """sum(dtype=float32) of bfloat16: float32 sums, equal up to float32 summation order."""
    ours = _data(cr, (8, 3000)).sum(dtype=cr.float32)
    theirs = _data(torch, (8, 3000)).sum(dtype=torch.float32)
    assert ours.dtype is cr.float32
    np.testing.assert_allclose(ours.item(), theirs.item(), rtol=1e-6)


def test_inplace_and_mixed():
    for fn in (lambda m, a: a.add_(1.37), lambda m, a: a.mul_(m.tensor([0.3, 0.25, 3.0])),
               lambda m, a: a.add_(a), lambda m, a: a.sub_(m.ones(3, dtype=m.float64) / 3),
               lambda m, a: a.clamp_(-1, 1), lambda m, a: a.exp_()):
        ours = fn(cr, cr.tensor([1.3, -2.7, 0.1], dtype=cr.bfloat16))
        theirs = fn(torch, torch.tensor([1.3, -2.7, 0.1], dtype=torch.bfloat16))
        assert ours.dtype is cr.bfloat16
        assert same(values(ours), values(theirs))


def _grads(m):
    w = _data(m, (3, 4)).requires_grad_()
    v = _data(m, (4,), seed=2).requires_grad_()
    y = ((w @ v).sigmoid().sum() + (w * 3.1).pow(2).mean() + (w.exp() / (v.abs() + 1)).sum()
         + m.nn.functional.relu(w - 0.5).sum())
    y.backward()
    return y, w.grad, v.grad


def test_autograd():
    ours, theirs = _grads(cr), _grads(torch)
    for o, t in zip(ours, theirs):
        assert o.dtype is cr.bfloat16
        _close(o, t)
    assert cr.ones(2, dtype=cr.bfloat16).requires_grad_().requires_grad
    x = cr.ones(2, requires_grad=True)
    y = x.bfloat16() * 2.5
    y.float().sum().backward()
    assert x.grad.dtype is cr.float32 and x.grad.tolist() == [2.5, 2.5]


# ---- float8 -------------------------------------------------------------------------------------


def _f8(m, name):
    return m.tensor([[1.0, 2.5], [-3.0, 0.5]]).to(getattr(m, name))


_FLOAT8_OPS = {
    "add": lambda m, a: a + a, "sub": lambda m, a: a - a, "neg": lambda m, a: -a,
    "mul": lambda m, a: a * a, "mul_scalar": lambda m, a: a * 2, "div": lambda m, a: a / a,
    "abs": lambda m, a: a.abs(), "eq": lambda m, a: a == a, "ne": lambda m, a: a != a,
    "lt": lambda m, a: a < a, "sum": lambda m, a: a.sum(), "mean": lambda m, a: a.mean(),
    "max": lambda m, a: a.max(), "isnan": lambda m, a: a.isnan(), "clone": lambda m, a: a.clone(),
    "reshape": lambda m, a: a.reshape(4), "t": lambda m, a: a.t().contiguous(),
    "cat": lambda m, a: m.cat([a, a]), "stack": lambda m, a: m.stack([a, a]),
    "index": lambda m, a: a[m.tensor([1, 0])], "slice": lambda m, a: a[:, 1],
    "where": lambda m, a: m.where(m.tensor([[True, False], [False, True]]), a, a),
    "matmul": lambda m, a: a @ a, "flip": lambda m, a: a.flip(0),
    "flip_last": lambda m, a: a.flip(1), "sort": lambda m, a: a.sort().values,
    "masked_fill": lambda m, a: a.masked_fill(m.tensor([[True, False], [False, True]]), 0.0),
    "nonzero": lambda m, a: a.nonzero(), "pow": lambda m, a: a ** 2,
    "fill": lambda m, a: a.clone().fill_(1.0), "zero": lambda m, a: a.clone().zero_(),
    "relu": lambda m, a: m.relu(a), "sigmoid": lambda m, a: a.sigmoid(),
    "zeros_like": lambda m, a: m.zeros_like(a), "split": lambda m, a: a.split(1)[1],
}


@pytest.mark.parametrize("name", FLOAT8)
@pytest.mark.parametrize("op", list(_FLOAT8_OPS))
def test_float8_ops_and_refusals(name, op):
    """PyTorch moves float8 values and computes only a few ops on them; the rest raise."""
    try:
        theirs = _FLOAT8_OPS[op](torch, _f8(torch, name))
    except NotImplementedError:
        with pytest.raises(NotImplementedError, match="not implemented for 'Float8_"):
            _FLOAT8_OPS[op](cr, _f8(cr, name))
        return
    ours = _FLOAT8_OPS[op](cr, _f8(cr, name))
    assert str(ours.dtype) == str(theirs.dtype)
    if ours.dtype in (cr.bool, cr.int64):
        assert ours.tolist() == theirs.tolist()
    else:
        assert same(values(ours), values(theirs))


def test_float8_refusal_names_the_kernel():
    for op in ("add", "sum", "neg"):
        with pytest.raises(NotImplementedError) as expected:
            _FLOAT8_OPS[op](torch, _f8(torch, "float8_e4m3fn"))
        with pytest.raises(NotImplementedError) as got:
            _FLOAT8_OPS[op](cr, _f8(cr, "float8_e4m3fn"))
        assert str(got.value) == str(expected.value)


def test_float8_saturates_in_products():
    for fn in (lambda m, a: a * a, lambda m, a: a @ a):
        ours = fn(cr, cr.full((2, 2), 300.0).to(cr.float8_e4m3fn))
        theirs = fn(torch, torch.full((2, 2), 300.0).to(torch.float8_e4m3fn))
        assert same(values(ours), values(theirs))


def test_float8_factories():
    for name in FLOAT8:
        for fn in (lambda m, d: m.randn(3, dtype=d), lambda m, d: m.rand(3, dtype=d),
                   lambda m, d: m.arange(3, dtype=d)):
            try:
                fn(torch, getattr(torch, name))
            except NotImplementedError as expected:
                with pytest.raises(NotImplementedError, match=re.escape(str(expected))):
                    fn(cr, getattr(cr, name))
            else:
                fn(cr, getattr(cr, name))
        for value in (100.0, -0.3, 500.0, float("inf")):
            assert same(values(cr.full((1,), value, dtype=getattr(cr, name))),
                        values(torch.full((1,), value, dtype=getattr(torch, name))))


# ---- sampling, set_default_dtype, save/load -----------------------------------------------------


@pytest.mark.parametrize("n", [3, 16, 20, 1000])
def test_sampling_matches_torch(n):
    for fn in (lambda m: m.randn(n, dtype=m.bfloat16), lambda m: m.rand(n, dtype=m.bfloat16),
               lambda m: m.empty(n, dtype=m.bfloat16).normal_(2.0, 3.0),
               lambda m: m.empty(n, dtype=m.bfloat16).uniform_(-1.0, 5.0),
               lambda m: m.randint(0, 9, (n,), dtype=m.bfloat16)):
        cr.manual_seed(3)
        torch.manual_seed(3)
        assert np.array_equal(values(fn(cr)), values(fn(torch)))


def test_default_dtype_bfloat16():
    try:
        cr.set_default_dtype(cr.bfloat16)
        torch.set_default_dtype(torch.bfloat16)
        for fn in (lambda m: m.tensor([1 / 3]), lambda m: m.zeros(2), lambda m: m.tensor([1]) * 1.5,
                   lambda m: m.arange(0, 1, 0.1)):
            ours, theirs = fn(cr), fn(torch)
            assert str(ours.dtype) == str(theirs.dtype)
            assert same(values(ours), values(theirs))
    finally:
        cr.set_default_dtype(cr.float32)
        torch.set_default_dtype(torch.float32)


def test_save_load(tmp_path):
    obj = {"w": cr.tensor([1.5, -2.25, 1 / 3], dtype=cr.bfloat16, requires_grad=True),
           "f8": cr.tensor([1.0, 448.0]).to(cr.float8_e4m3fn),
           "e5": cr.tensor([0.5]).to(cr.float8_e5m2), "plain": cr.ones(2), "dtype": cr.bfloat16}
    cr.save(obj, tmp_path / "a.pt")
    back = cr.load(tmp_path / "a.pt")
    assert back["dtype"] is cr.bfloat16 and back["w"].requires_grad
    for key in ("w", "f8", "e5", "plain"):
        assert back[key].dtype is obj[key].dtype
        assert same(values(back[key]), values(obj[key]))
    theirs = torch.load(tmp_path / "a.pt", weights_only=True)  # PyTorch's zip format
    assert theirs["w"].dtype is torch.bfloat16 and theirs["f8"].dtype is torch.float8_e4m3fn
    assert theirs["w"].float().tolist() == values(obj["w"]).tolist()
    assert theirs["e5"].dtype is torch.float8_e5m2 and theirs["w"].requires_grad
    cr.save(obj, tmp_path / "a.safetensors")  # and safetensors, for other readers
    theirs = safetensors.torch.load_file(tmp_path / "a.safetensors")
    assert theirs["w"].dtype is torch.bfloat16 and theirs["f8"].dtype is torch.float8_e4m3fn
    assert theirs["w"].float().tolist() == values(obj["w"]).tolist()


def test_without_ml_dtypes():
    """The names import without ml_dtypes; making a tensor of one names the extra."""
    code = textwrap.dedent("""
        import sys
        sys.modules["ml_dtypes"] = None
        import chainrule as torch
        x = torch.ones(2)
        assert x.dtype in [torch.float16, torch.float32, torch.bfloat16]
        assert torch.bfloat16.is_floating_point and torch.float8_e4m3fn.itemsize == 1
        for make in (lambda: torch.zeros(2, dtype=torch.bfloat16), lambda: x.bfloat16(),
                     lambda: x.to(torch.float8_e5m2), lambda: torch.finfo(torch.bfloat16)):
            try:
                make()
            except ModuleNotFoundError as e:
                assert "pip install 'chainrule[low-precision]'" in str(e), e
                assert e.name == "ml_dtypes"
            else:
                raise AssertionError("no error")
        print("ok")
    """)
    env = dict(os.environ, PYTHONPATH=os.path.dirname(os.path.dirname(cr.__file__)))
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env,
                         timeout=300)
    assert out.stdout.strip() == "ok", out.stderr
