"""``out=`` as PyTorch: written in place and returned, resized with PyTorch's warning, dtype and
autograd checks with PyTorch's errors — each call compared with torch."""

import warnings

import numpy as np
import pytest
import torch

import chainrule as cr

RNG = np.random.default_rng(5)
A = RNG.normal(size=(3, 4))
B = RNG.normal(size=(3, 4))
SQ = RNG.normal(size=(3, 3)) + 3 * np.eye(3)

CALLS = {  # name -> (call(m, out), out shape, out dtype)
    "add": (lambda m, o: m.add(m.tensor(A), m.tensor(B), alpha=2, out=o), (3, 4), "float64"),
    "exp": (lambda m, o: m.exp(m.tensor(A), out=o), (3, 4), "float64"),
    "clamp": (lambda m, o: m.clamp(m.tensor(A), -0.5, 0.5, out=o), (3, 4), "float64"),
    "sum": (lambda m, o: m.sum(m.tensor(A), 1, out=o), (3,), "float64"),
    "mean": (lambda m, o: m.mean(m.tensor(A), 0, keepdim=True, out=o), (1, 4), "float64"),
    "cat": (lambda m, o: m.cat([m.tensor(A), m.tensor(B)], 1, out=o), (3, 8), "float64"),
    "stack": (lambda m, o: m.stack([m.tensor(A), m.tensor(B)], out=o), (2, 3, 4), "float64"),
    "matmul": (lambda m, o: m.matmul(m.tensor(A), m.tensor(B).T, out=o), (3, 3), "float64"),
    "where": (lambda m, o: m.where(m.tensor(A) > 0, m.tensor(A), m.tensor(B), out=o), (3, 4),
              "float64"),
    "eq": (lambda m, o: m.eq(m.tensor(A), m.tensor(B), out=o), (3, 4), "bool"),
    "gt_into_float": (lambda m, o: m.gt(m.tensor(A), 0, out=o), (3, 4), "float64"),
    "argmax_int": (lambda m, o: m.cumsum(m.tensor([1, 2, 3]), 0, out=o), (3,), "int64"),
    "int_into_float": (lambda m, o: m.add(m.tensor([1, 2]), 1, out=o), (2,), "float32"),
    "linalg.inv": (lambda m, o: m.linalg.inv(m.tensor(SQ), out=o), (3, 3), "float64"),
    "linalg.vector_norm": (lambda m, o: m.linalg.vector_norm(m.tensor(A), dim=1, out=o), (3,),
                           "float64"),
    "fft.rfft": (lambda m, o: m.fft.rfft(m.tensor(A), out=o), (3, 3), "complex128"),
}


@pytest.mark.parametrize("name", list(CALLS))
@pytest.mark.parametrize("fill", ["same shape", "empty"])
def test_writes_into_out_and_returns_it(name, fill):
    call, shape, dtype = CALLS[name]
    shape = shape if fill == "same shape" else (0,)
    oc = cr.zeros(shape, dtype=getattr(cr, dtype))
    ot = torch.zeros(shape, dtype=getattr(torch, dtype))
    rc, rt = call(cr, oc), call(torch, ot)
    assert rc is oc and rt is ot
    assert str(oc.dtype) == str(ot.dtype) and tuple(oc.shape) == tuple(ot.shape)
    np.testing.assert_allclose(oc.numpy(), ot.numpy(), rtol=1e-12, atol=1e-12)
    assert oc._version >= 1


@pytest.mark.parametrize("name", ["max", "sort", "topk", "linalg.qr"])
def test_tuple_outputs(name):
    calls = {
        "max": lambda m, o: m.max(m.tensor(A), 1, out=o),
        "sort": lambda m, o: m.sort(m.tensor(A), 1, out=o),
        "topk": lambda m, o: m.topk(m.tensor(A), 2, out=o),
        "linalg.qr": lambda m, o: m.linalg.qr(m.tensor(SQ), out=o),
    }
    kinds = {"linalg.qr": ("float64", "float64")}.get(name, ("float64", "int64"))
    outs_c = tuple(cr.empty(0, dtype=getattr(cr, k)) for k in kinds)
    outs_t = tuple(torch.empty(0, dtype=getattr(torch, k)) for k in kinds)
    rc, rt = calls[name](cr, outs_c), calls[name](torch, outs_t)
    assert all(a is b for a, b in zip(rc, outs_c)) and len(rc) == len(rt)
    for c, t in zip(outs_c, outs_t):
        np.testing.assert_allclose(c.numpy(), t.numpy(), rtol=1e-12, atol=1e-12)


def test_resizing_a_non_empty_out_warns_as_torch():
    with pytest.warns(UserWarning) as expected:
        torch.add(torch.ones(3), 1, out=torch.zeros(2))
    with pytest.warns(UserWarning) as got:
        cr.add(cr.ones(3), 1, out=cr.zeros(2))
    assert str(got[0].message) == str(expected[0].message).partition(" (Triggered")[0]
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        cr.add(cr.ones(3), 1, out=cr.empty(0))


ERRORS = {
    "input requires grad": lambda m: m.add(m.ones(3, requires_grad=True), 1, out=m.zeros(3)),
    "out requires grad": lambda m: m.exp(m.ones(3), out=m.zeros(3, requires_grad=True)),
    "float into long": lambda m: m.add(m.ones(3), 1, out=m.zeros(3, dtype=m.int64)),
    "complex into float": lambda m: m.fft.fft(m.ones(3), out=m.zeros(3)),
    "matmul dtype": lambda m: m.matmul(m.ones(2, 2), m.ones(2, 2),
                                       out=m.zeros(2, 2, dtype=m.float64)),
}


@pytest.mark.parametrize("name", list(ERRORS))
def test_errors_as_torch(name):
    with pytest.raises(Exception) as expected:
        ERRORS[name](torch)
    with pytest.raises(type(expected.value)) as got:
        ERRORS[name](cr)
    assert str(got.value) == str(expected.value)


def test_no_grad_allows_out_for_a_tensor_that_requires_grad():
    x = cr.ones(3, requires_grad=True)
    with cr.no_grad():
        out = cr.exp(x, out=cr.zeros(3))
    assert not out.requires_grad and out.tolist() == pytest.approx([np.e] * 3)


def test_out_can_alias_an_input():
    x = cr.tensor([1.0, 2.0])
    cr.mul(x, x, out=x)
    assert x.tolist() == [1.0, 4.0]


def test_methods_and_operators_are_not_wrapped():
    import inspect
    assert "out" in inspect.signature(cr.add).parameters
    assert "out" not in inspect.signature(cr.Tensor.add).parameters
