"""Random programs run by chainrule and by torch: values, gradients, Hessian-vector products and
forward-mode tangents must agree (float64).

The programs (tests/_random_programs.py) are 3 to 25 statements over one to four inputs: elementwise
ops with broadcasting, reductions, views, indexing, matmul, ``nn.functional`` ops, and in-place ops
on clones and their views, with values reused. A failure prints the program as a torch script.

Every program is checked in the three modes. Environment: ``CHAINRULE_FUZZ_EXAMPLES`` sets the
number of programs (default 200);
``CHAINRULE_FUZZ_RANDOM=1`` draws new programs on each run (by default the draw is derandomized,
so every run, CI's included, tests the same programs).
"""

from __future__ import annotations

import os

import numpy as np
import torch
import torch.autograd.forward_ad as torch_fwd
from _random_programs import Program, programs, run
from hypothesis import HealthCheck, given, settings

import chainrule
import chainrule.autograd.forward_ad as fwd

EXAMPLES = int(os.environ.get("CHAINRULE_FUZZ_EXAMPLES", "200"))
FUZZ = settings(
    max_examples=EXAMPLES,
    deadline=None,
    derandomize=os.environ.get("CHAINRULE_FUZZ_RANDOM") != "1",
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large,
                           HealthCheck.filter_too_much],
)
RTOL = 1e-7


def _inputs(lib, program: Program, requires_grad: bool) -> list:
    return [lib.from_numpy(a.copy()).requires_grad_(requires_grad) for _, a in program.inputs]


def _array(t) -> np.ndarray | None:
    return None if t is None else np.array(t.detach().numpy())


def _weights(lib, program: Program, outputs: list) -> list:
    """Fixed random weights, one per output, so the scalar loss sees every element."""
    return [
        lib.from_numpy(np.random.default_rng([program.seed, k]).uniform(0.5, 1.5, tuple(o.shape)))
        for k, o in enumerate(outputs)
    ]


def _loss(lib, program: Program, outputs: list):
    return sum((o * w).sum() for o, w in zip(outputs, _weights(lib, program, outputs)))


def _reverse(lib, program: Program) -> list:
    """The outputs and their flags, the gradients of the weighted sum of the outputs w.r.t. the
    inputs, and the inputs' and outputs' (retain_grad) .grad after two backward() calls."""
    xs = _inputs(lib, program, True)
    _, outs = run(program, lib, xs)
    # Not is_contiguous(): layouts differ for some ops (rot90); a view() that torch makes and
    # chainrule cannot (or the reverse) shows as an error in the program itself.
    flags = [(o.requires_grad, o.is_leaf) for o in outs]
    for o in outs:
        if o.requires_grad and not o.is_leaf:
            o.retain_grad()
    loss = _loss(lib, program, outs)
    grads = lib.autograd.grad(loss, xs, allow_unused=True, retain_graph=True)
    loss.backward(retain_graph=True)
    loss.backward()
    accumulated = [x.grad for x in xs] + [o.grad for o in outs]
    return [flags] + [_array(t) for t in outs + list(grads) + accumulated]


def _hvp(lib, program: Program) -> list:
    """The gradients (create_graph=True) and the gradient of their product with a fixed v."""
    xs = _inputs(lib, program, True)
    _, outs = run(program, lib, xs)
    # The quadratic term makes every gradient depend on the inputs (linear programs too).
    loss = _loss(lib, program, outs) + sum((x * x).sum() for x in xs) / 2
    grads = lib.autograd.grad(loss, xs, create_graph=True)
    rng = np.random.default_rng([program.seed, 99])
    vs = [lib.from_numpy(rng.standard_normal(x.shape)) for x in xs]
    hvps = lib.autograd.grad(sum((g * v).sum() for g, v in zip(grads, vs)), xs, allow_unused=True)
    return [_array(t) for t in list(grads) + list(hvps)]


def _forward(lib, fwd_module, program: Program) -> list:
    """The outputs and their tangents, the inputs being dual tensors with fixed tangents."""
    rng = np.random.default_rng([program.seed, 7])
    with fwd_module.dual_level():
        xs = [
            fwd_module.make_dual(x, lib.from_numpy(rng.standard_normal(tuple(x.shape))))
            for x in _inputs(lib, program, False)
        ]
        _, outs = run(program, lib, xs)
        unpacked = [fwd_module.unpack_dual(o) for o in outs]
        return [_array(u.primal) for u in unpacked] + [_array(u.tangent) for u in unpacked]


def _outcome(fn, *args):
    try:
        return fn(*args), None
    except Exception as err:  # compared with the other library's outcome
        return None, err


def _check(program: Program, check: str, ours, theirs) -> None:
    """chainrule's results (or error) are torch's."""
    (got, err), (want, want_err) = _outcome(*ours), _outcome(*theirs)
    where = f"\n--- program ---\n{program.source(check)}\n"
    if want_err is not None or err is not None:
        assert type(err) is type(want_err), (
            f"{check}: chainrule {type(err).__name__}: {err}; "
            f"torch {type(want_err).__name__}: {want_err}{where}")
        return
    assert len(got) == len(want), f"{check}: {len(got)} results, torch {len(want)}{where}"
    for i, (g, w) in enumerate(zip(got, want)):
        if not isinstance(w, np.ndarray) and w is not None:  # flags: compared as they are
            assert g == w, f"{check}: result {i} is {g!r}, torch's {w!r}{where}"
            continue
        assert (g is None) == (w is None), f"{check}: result {i} is {g!r}, torch's {w!r}{where}"
        if w is None:
            continue
        assert g.shape == w.shape, f"{check}: result {i} shape {g.shape} != {w.shape}{where}"
        scale = 1.0 + (float(np.abs(w).max()) if w.size and np.isfinite(w).all() else 0.0)
        np.testing.assert_allclose(g, w, rtol=RTOL, atol=RTOL * scale,
                                   err_msg=f"{check}: result {i}{where}")


@FUZZ
@given(programs())
def test_random_programs_agree_with_torch(program: Program) -> None:
    # One program, every check: drawing a program costs more than running it.
    _check(program, "values and gradients", (_reverse, chainrule, program),
           (_reverse, torch, program))
    _check(program, "gradients (create_graph) and Hessian-vector products",
           (_hvp, chainrule, program), (_hvp, torch, program))
    _check(program, "values and forward-mode tangents", (_forward, chainrule, fwd, program),
           (_forward, torch, torch_fwd, program))


def _tangent_of_index_assignment(lib, fwd_module) -> np.ndarray:
    x = lib.arange(1.0, 3.0, dtype=lib.float64).reshape(2, 1, 1)
    t = lib.tensor([0.5, -2.0], dtype=lib.float64).reshape(2, 1, 1)
    with fwd_module.dual_level():
        x0 = fwd_module.make_dual(x, t)
        v1 = x0 + x0
        v2 = v1 + v1
        v3 = v2.clone()
        v3[:, :, :] = v1
        return _array(fwd_module.unpack_dual(v3).tangent)


def test_forward_index_assignment_takes_the_value_tangent() -> None:
    # Found by the random programs: the assignment wrote v1's values but kept v2's tangent (4t).
    got = _tangent_of_index_assignment(chainrule, fwd)
    want = _tangent_of_index_assignment(torch, torch_fwd)
    np.testing.assert_allclose(got, want, rtol=0, atol=0)
    np.testing.assert_allclose(got.ravel(), [1.0, -4.0], rtol=0, atol=0)
