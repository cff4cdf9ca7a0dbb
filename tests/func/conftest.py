"""One program, two libraries: run it with chainrule and with torch, compare results or errors."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
import torch

import chainrule
from chainrule._batched import state as vmap_state
from chainrule.autograd.forward_ad import state as forward_state
from chainrule.autograd.grad_mode import state as grad_state

LIBS = (chainrule, torch)


def randn(seed: int, *shapes) -> list:
    """float64 arrays of ``shapes`` from one seeded generator."""
    rng = np.random.default_rng(seed)
    return [rng.standard_normal(s) for s in shapes]


def run(program, lib, arrays):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # ops still without a batching rule warn; fine here
        return program(lib, *[lib.tensor(a) for a in arrays])


@pytest.fixture
def same(like_torch):
    """``same(program, *arrays)``: ``program(lib, *tensors)`` gives torch's result with
    chainrule; returns both results."""

    def check(program, *arrays, rtol=1e-10, atol=1e-12):
        ours, theirs = run(program, chainrule, arrays), run(program, torch, arrays)
        like_torch(ours, theirs, rtol, atol)
        return ours, theirs

    return check


def _error(program, lib, arrays) -> BaseException:
    try:
        run(program, lib, arrays)
    except Exception as err:  # noqa: BLE001  (any error is the result being compared)
        return err
    raise AssertionError(f"{lib.__name__}: no error raised")


@pytest.fixture
def same_error():
    """``same_error(program, *arrays)``: chainrule raises torch's error type with torch's message
    (with the library's name in type names made neutral); returns the message."""

    def check(program, *arrays):
        ours, theirs = _error(program, chainrule, arrays), _error(program, torch, arrays)
        assert type(ours).__name__ == type(theirs).__name__, (ours, theirs)
        assert _neutral(str(ours)) == _neutral(str(theirs))
        # The failed transform left no level open.
        assert (vmap_state.level, vmap_state.sizes, vmap_state.randomness) == (0, [], [])
        assert (grad_state.reverse_levels, forward_state.level, forward_state.nesting) == (0, 0, 0)
        return str(theirs)

    return check


def _neutral(message: str) -> str:
    for name in ("chainrule._batched.BatchedTensor", "chainrule.tensor.Tensor", "torch.Tensor"):
        message = message.replace(name, "Tensor")
    return message
