"""torch.quasirandom.SobolEngine against PyTorch's: the same points bit for bit (draw,
draw_base2, fast_forward, reset, dtypes, many dimensions), the scrambling kernel on the same
random bits, and PyTorch's errors."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from torch.quasirandom import SobolEngine as TheirEngine

import chainrule as cr
from chainrule import quasirandom
from chainrule.quasirandom import SobolEngine as OurEngine


def _same(ours, theirs) -> None:
    assert str(ours.dtype) == str(theirs.dtype)
    assert tuple(ours.shape) == tuple(theirs.shape)
    np.testing.assert_array_equal(ours.numpy(), theirs.numpy())


def test_module_names() -> None:
    assert quasirandom.__all__ == ["SobolEngine"] and hasattr(torch.quasirandom, "SobolEngine")
    assert (OurEngine.MAXBIT, OurEngine.MAXDIM) == (TheirEngine.MAXBIT, TheirEngine.MAXDIM)


@pytest.mark.parametrize("dimension", [1, 2, 3, 5, 16, 111, 1000, 21201])
def test_direction_numbers_as_torch(dimension) -> None:
    _same(OurEngine(dimension).sobolstate, TheirEngine(dimension).sobolstate)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("dimension", [1, 2, 7, 40])
def test_draws_as_torch(dimension, dtype) -> None:
    ours, theirs = OurEngine(dimension), TheirEngine(dimension)
    for n in (1, 4, 0, 27, 256, 3):
        _same(ours.draw(n, dtype=getattr(cr, dtype)), theirs.draw(n, dtype=getattr(torch, dtype)))
        assert ours.num_generated == theirs.num_generated
    _same(ours.quasi, theirs.quasi)


def test_first_draw_of_many_points() -> None:
    for n in (2, 3, 1024):
        _same(OurEngine(3).draw(n), TheirEngine(3).draw(n))


def test_draw_base2_and_its_balance_error() -> None:
    ours, theirs = OurEngine(4), TheirEngine(4)
    _same(ours.draw_base2(3), theirs.draw_base2(3))
    _same(ours.draw_base2(3, dtype=cr.float64), theirs.draw_base2(3, dtype=torch.float64))
    with pytest.raises(ValueError) as got:
        ours.draw_base2(2)
    with pytest.raises(ValueError) as want:
        theirs.draw_base2(2)
    assert str(got.value) == str(want.value)


@pytest.mark.parametrize("first", [0, 1, 5])
@pytest.mark.parametrize("skip", [0, 1, 2, 13, 1000, 2**20 + 7])
def test_fast_forward_as_torch(first, skip) -> None:
    ours, theirs = OurEngine(6), TheirEngine(6)
    if first:
        _same(ours.draw(first), theirs.draw(first))
    assert ours.fast_forward(skip) is ours
    theirs.fast_forward(skip)
    assert ours.num_generated == theirs.num_generated
    _same(ours.quasi, theirs.quasi)
    _same(ours.draw(5, dtype=cr.float64), theirs.draw(5, dtype=torch.float64))


def test_reset_starts_over() -> None:
    ours, theirs = OurEngine(3), TheirEngine(3)
    ours.draw(9)
    theirs.draw(9)
    assert ours.reset() is ours
    theirs.reset()
    assert ours.num_generated == 0
    _same(ours.draw(4), theirs.draw(4))


def test_out_is_resized_and_returned() -> None:
    ours, theirs = OurEngine(2), TheirEngine(2)
    out_ours, out_theirs = cr.empty(0), torch.empty(0)
    assert ours.draw(3, out=out_ours) is out_ours
    theirs.draw(3, out=out_theirs)
    _same(out_ours, out_theirs)


def test_first_point_keeps_the_default_dtype_of_creation() -> None:
    cr.set_default_dtype(cr.float64)
    torch.set_default_dtype(torch.float64)
    ours, theirs = OurEngine(2), TheirEngine(2)
    _same(ours.draw(3), theirs.draw(3))
    assert str(ours._first_point.dtype) == str(theirs._first_point.dtype) == "torch.float64"


def test_repr() -> None:
    for args in ((3,), (3, True), (3, True, 5), (3, False, 5)):
        assert repr(OurEngine(*args)) == repr(TheirEngine(*args))


@pytest.mark.parametrize("dimension", [1, 3, 20])
def test_scrambling_kernel_as_torch(dimension) -> None:
    # PyTorch's kernel and ours on the same random lower triangular bit matrices
    rng = np.random.default_rng(dimension)
    ltm = np.tril(rng.integers(0, 2, (dimension, 30, 30)))
    state = quasirandom._initial_state(dimension, 30)
    theirs = torch.from_numpy(state.copy())
    torch._sobol_engine_scramble_(theirs, torch.from_numpy(ltm), dimension)
    np.testing.assert_array_equal(quasirandom._scrambled_state(state, ltm), theirs.numpy())


def test_scrambled_engine_uses_the_seeded_generator() -> None:
    # the shift bits, then the matrices, from one generator seeded with seed (as PyTorch's)
    engine = OurEngine(3, scramble=True, seed=123)
    generator = cr.Generator().manual_seed(123)
    shift = cr.randint(2, (3, 30), generator=generator).numpy() @ (1 << np.arange(30))
    ltm = np.tril(cr.randint(2, (3, 30, 30), generator=generator).numpy())
    np.testing.assert_array_equal(engine.shift.numpy(), shift)
    np.testing.assert_array_equal(engine.sobolstate.numpy(), quasirandom._scrambled_state(
        quasirandom._initial_state(3, 30), ltm))
    again = OurEngine(3, scramble=True, seed=123)
    np.testing.assert_array_equal(engine.draw(8).numpy(), again.draw(8).numpy())


def test_scrambled_points_keep_the_balance() -> None:
    # every 2^m consecutive-from-the-start points put one point in each interval of width 2^-m
    points = OurEngine(5, scramble=True, seed=7).draw_base2(6, dtype=cr.float64).numpy()
    for column in points.T:
        assert sorted(np.floor(column * 64).astype(int)) == list(range(64))
    assert (points >= 0).all() and (points < 1).all()


def _error(fn):
    with pytest.raises(Exception) as info:
        fn()
    return info.type, str(info.value)


ERRORS = {
    "dimension 0": lambda E, m: E(0),
    "dimension too large": lambda E, m: E(21202),
    "half": lambda E, m: E(2).draw(3, dtype=m.float16),
    "long": lambda E, m: E(2).draw(3, dtype=m.int64),
    "negative count": lambda E, m: E(2).draw(-3),
    "no points first": lambda E, m: E(3).draw(0),
}


@pytest.mark.parametrize("case", ERRORS)
def test_errors_as_torch(case) -> None:
    assert _error(lambda: ERRORS[case](OurEngine, cr)) == _error(
        lambda: ERRORS[case](TheirEngine, torch))


def test_missing_direction_numbers_name_the_extra(monkeypatch) -> None:
    monkeypatch.setattr(quasirandom, "_DIRECTIONS", {})
    monkeypatch.setattr(quasirandom.importlib.util, "find_spec", lambda name: None)
    with pytest.raises(ImportError, match=r"chainrule\[special\]"):
        OurEngine(2)
