"""torch.signal.windows against PyTorch: values (float32 and float64, symmetric and periodic,
lengths 0 to 101, window parameters), signatures, gradients and PyTorch's errors."""

from __future__ import annotations

import inspect

import numpy as np
import pytest
import torch
import torch.signal.windows as theirs

import chainrule as cr
import chainrule.signal.windows as ours
from chainrule.autograd.gradcheck import gradcheck

LENGTHS = (0, 1, 2, 3, 4, 7, 8, 9, 16, 33, 101)
PARAMS = {  # keyword parameters each window is checked with, besides its defaults
    "bartlett": [{}],
    "blackman": [{}],
    "cosine": [{}],
    "exponential": [{}, {"tau": 0.3}, {"tau": 4.0}],
    "gaussian": [{}, {"std": 0.4}, {"std": 7.5}],
    "general_cosine": [{"a": [0.46, 0.23, 0.31]}, {"a": (1.0,)}],
    "general_hamming": [{}, {"alpha": 0.6}],
    "hamming": [{}],
    "hann": [{}],
    "kaiser": [{}, {"beta": 0.0}, {"beta": 2.5}, {"beta": 30.0}],
    "nuttall": [{}],
}
# float32 grids differ from PyTorch's by an ulp or two (its linspace rounds differently by CPU
# vector width), which exp(-k^2) at the tails turns into a few 1e-6 relative
TOLERANCE = {"float32": {"rtol": 5e-5, "atol": 3e-6}, "float64": {"rtol": 1e-12, "atol": 1e-14}}


def test_names_and_modules() -> None:
    assert ours.__all__ == theirs.__all__
    assert cr.signal.__all__ == torch.signal.__all__
    assert cr.signal.windows.windows.__all__ == theirs.windows.__all__


@pytest.mark.parametrize("name", theirs.__all__)
def test_signature_as_torch(name) -> None:
    ours_params = inspect.signature(getattr(ours, name)).parameters
    their_params = inspect.signature(getattr(theirs, name)).parameters
    assert [(p.name, p.kind) for p in ours_params.values()] == [
        (p.name, p.kind) for p in their_params.values()]
    for p in their_params.values():
        if p.name not in ("dtype", "layout", "device"):
            assert ours_params[p.name].default == p.default, p.name


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("name", theirs.__all__)
def test_values_as_torch(name, dtype) -> None:
    for params in PARAMS[name]:
        for M in LENGTHS:
            for sym in (True, False):
                got = getattr(ours, name)(M, sym=sym, dtype=getattr(cr, dtype), **params)
                want = getattr(theirs, name)(M, sym=sym, dtype=getattr(torch, dtype), **params)
                assert got.dtype == getattr(cr, dtype) and got.shape == want.shape
                np.testing.assert_allclose(got.numpy(), want.numpy(), **TOLERANCE[dtype],
                                           err_msg=f"{name}({M}, sym={sym}, {params})")


@pytest.mark.parametrize("center", [None, 0.0, 2.5, 11.0])
def test_exponential_center(center) -> None:
    for M in (1, 6, 9):
        got = ours.exponential(M, center=center, sym=False, dtype=cr.float64)
        want = theirs.exponential(M, center=center, sym=False, dtype=torch.float64)
        np.testing.assert_allclose(got.numpy(), want.numpy(), **TOLERANCE["float64"])


def test_default_dtype_is_used() -> None:
    cr.set_default_dtype(cr.float64)
    torch.set_default_dtype(torch.float64)
    got, want = ours.hann(6), theirs.hann(6)
    assert got.dtype == cr.float64
    np.testing.assert_allclose(got.numpy(), want.numpy(), **TOLERANCE["float64"])


@pytest.mark.parametrize("name", theirs.__all__)
def test_requires_grad_gives_the_graph_torch_gives(name) -> None:
    params = PARAMS[name][0]
    for M in (1, 6):
        got = getattr(ours, name)(M, requires_grad=True, dtype=cr.float64, **params)
        want = getattr(theirs, name)(M, requires_grad=True, dtype=torch.float64, **params)
        assert got.requires_grad and want.requires_grad
        assert (got.grad_fn and got.grad_fn.name()) == (want.grad_fn and want.grad_fn.name())


def _grid(window):
    """The linspace leaf a window was computed from."""
    node = window.grad_fn
    while node.next_functions:
        node = node.next_functions[0][0]
    return node.variable


def test_gradients_through_the_grid() -> None:
    weights = np.linspace(0.5, 2.0, 7)
    for name in ("exponential", "gaussian", "cosine", "bartlett"):
        got = getattr(ours, name)(7, sym=False, requires_grad=True, dtype=cr.float64)
        want = getattr(theirs, name)(7, sym=False, requires_grad=True, dtype=torch.float64)
        grid_ours, grid_theirs = _grid(got), _grid(want)
        (got * cr.tensor(weights)).sum().backward()
        (want * torch.tensor(weights)).sum().backward()
        np.testing.assert_allclose(grid_ours.grad.numpy(), grid_theirs.grad.numpy(),
                                   rtol=1e-12, atol=1e-14, err_msg=name)


def test_window_of_a_grid_passes_gradcheck() -> None:
    grid = cr.linspace(-2.0, 2.0, 9, dtype=cr.float64, requires_grad=True)
    assert gradcheck(lambda k: (-k**2).exp(), (grid,))


def _error(fn):
    with pytest.raises(Exception) as info:
        fn()
    return info.type, str(info.value)


ERRORS = {
    "negative length": lambda w, m: w.hann(-1),
    "negative length (blackman)": lambda w, m: w.blackman(-3),
    "negative length (nuttall)": lambda w, m: w.nuttall(-3),
    "integer dtype": lambda w, m: w.gaussian(4, dtype=m.int64),
    "float16": lambda w, m: w.kaiser(4, dtype=m.float16),
    "complex dtype": lambda w, m: w.bartlett(4, dtype=m.complex64),
    "layout": lambda w, m: w.cosine(4, layout=None),
    "tau": lambda w, m: w.exponential(4, tau=0.0),
    "center of a symmetric window": lambda w, m: w.exponential(4, center=1.0),
    "std": lambda w, m: w.gaussian(4, std=-1.0),
    "beta": lambda w, m: w.kaiser(4, beta=-0.5),
    "coefficients not iterable": lambda w, m: w.general_cosine(4, a=3),
    "no coefficients": lambda w, m: w.general_cosine(4, a=[]),
    "positional sym": lambda w, m: w.hann(4, False),
}


@pytest.mark.parametrize("case", ERRORS)
def test_errors_as_torch(case) -> None:
    got = _error(lambda: ERRORS[case](ours, cr))
    want = _error(lambda: ERRORS[case](theirs, torch))
    assert got[0] is want[0]
    if case != "positional sym":  # Python names the function: hann() in both
        assert got[1] == want[1]
