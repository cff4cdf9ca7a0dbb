"""The ``dtype`` argument of sum, prod, mean and the scans (and ``out=`` standing for it): result
dtypes, wrap-around in small integer types, bool, in-place scans and the errors, against torch."""

import functools
import warnings

import pytest
import torch

import chainrule as cr

INPUTS = {
    "bool": lambda m: m.tensor([True, False, True]),
    "int8": lambda m: m.tensor([100, 100, 3], dtype=m.int8),
    "int64": lambda m: m.tensor([1, 2, 3]),
    "float32": lambda m: m.tensor([1.5, 2.0, 3.0]),
    "complex64": lambda m: m.tensor([1 + 1j, 2, 3], dtype=m.complex64),
}
DTYPES = [None, "bool", "uint8", "int8", "int16", "int32", "int64", "float16", "float32",
          "float64", "complex128"]
OPS = {
    "sum": lambda m, x, d: x.sum(0, dtype=d),
    "prod": lambda m, x, d: m.prod(x, 0, dtype=d),
    "mean": lambda m, x, d: x.mean(dtype=d),
    "cumsum": lambda m, x, d: x.cumsum(0, dtype=d),
    "cumprod": lambda m, x, d: m.cumprod(x, 0, dtype=d),
    "nansum": lambda m, x, d: m.nansum(x, dtype=d),
    "nanmean": lambda m, x, d: m.nanmean(x, dtype=d),
    "cumsum_": lambda m, x, d: x.clone().cumsum_(0, dtype=d),
    "cumprod_": lambda m, x, d: x.clone().cumprod_(0, dtype=d),
}


def outcome(fn):
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # complex to real casts warn (NumPy's warning here)
            r = fn()
    except Exception as e:  # noqa: BLE001  (the exception is the outcome compared)
        return type(e).__name__, str(e)
    return str(r.dtype), r.tolist()


@pytest.mark.parametrize("op", list(OPS))
@pytest.mark.parametrize("dtype", DTYPES, ids=str)
@pytest.mark.parametrize("input", list(INPUTS))
def test_dtype_argument_as_torch(op, dtype, input):
    def run(m):
        return outcome(lambda: OPS[op](m, INPUTS[input](m), dtype and getattr(m, dtype)))

    assert run(cr) == run(torch)


@pytest.mark.parametrize("op", ["sum", "prod", "cumsum", "cumprod", "mean", "nansum"])
@pytest.mark.parametrize("dtype", ["int64", "bool", "float64"])
def test_a_dtype_without_gradients_refused_when_recording(op, dtype):
    def run(m):
        x = m.tensor([1.0, 2.0], requires_grad=True)
        recorded = outcome(lambda: getattr(m, op)(x, 0, dtype=getattr(m, dtype)))
        with m.no_grad():
            plain = outcome(lambda: getattr(m, op)(x, 0, dtype=getattr(m, dtype)))
        return recorded, plain

    assert run(cr) == run(torch)


OUT_DTYPES = ["bool", "int32", "float16", "float64", "complex64"]


@pytest.mark.parametrize("op", ["sum", "prod", "cumsum", "cumprod", "mean", "nanmean", "nansum"])
@pytest.mark.parametrize("out_dtype", OUT_DTYPES)
@pytest.mark.parametrize("dtype", [None, "float64"], ids=str)
def test_out_dtype_is_the_computation_dtype(op, out_dtype, dtype):
    def run(m):
        x = m.tensor([1.5, 2.0, 3.0])
        out = m.empty(0, dtype=getattr(m, out_dtype))
        kwargs = {} if dtype is None else {"dtype": getattr(m, dtype)}
        return outcome(lambda: getattr(m, op)(x, 0, out=out, **kwargs))

    assert run(cr) == run(torch)


def test_out_of_a_tensor_that_requires_grad_is_refused_first():
    def run(m):
        x = m.tensor([1.0, 2.0], requires_grad=True)
        return [outcome(functools.partial(getattr(m, op), x, 0, out=m.empty(0, dtype=m.int64)))
                for op in ("sum", "cumsum", "prod")]

    assert run(cr) == run(torch)
