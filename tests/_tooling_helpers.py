"""What the tooling tests share: a scenario runs on chainrule and on torch, and what it returns
(values, logs, errors) must agree."""

import numpy as np
import torch

import chainrule as cr


def leaf(m, values):
    """A float64 leaf of library ``m`` that requires grad."""
    return m.tensor(np.asarray(values, dtype="float64"), requires_grad=True)


def outcome(fn):
    """The result of ``fn()``, or the type and message of what it raised."""
    try:
        return fn()
    except Exception as e:  # noqa: BLE001 - the error is what is compared
        return type(e).__name__, str(e)


def rounded(t):
    return None if t is None else np.round(t.detach().numpy(), 8).tolist()


def run(scenario):
    """``scenario(lib)`` under chainrule and under torch: the two results, asserted equal."""
    ours, theirs = scenario(cr), scenario(torch)
    assert ours == theirs
    return ours
