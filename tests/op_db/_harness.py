"""Running an op_db row the same way on chainrule and on torch: outputs and derivatives."""

from __future__ import annotations

import zlib
from collections.abc import Callable

import numpy as np

from ._spec import OpRow, S, T

__all__ = ["derivatives", "inplace_fn", "inplace_samples", "as_tuple"]


def as_tuple(result) -> tuple:
    return tuple(result) if isinstance(result, (tuple, list)) else (result,)


def _seed_tensor(lib, rng: np.random.Generator, like):
    array = rng.standard_normal(tuple(like.shape)).astype(str(like.dtype).split(".")[-1])
    return lib.from_numpy(array).requires_grad_()


def derivatives(lib, fn: Callable, args: list, order: int, seed: str) -> list[tuple[str, object]]:
    """``fn(*args)``, its vector-Jacobian products (order >= 1) and the derivatives of those
    (order 2: with respect to the inputs and to the cotangents), as (label, tensor) pairs.

    The cotangents are drawn from ``seed``, so both libraries get the same numbers. A gradient
    that is not connected is reported as zeros, whichever way a library represents it.
    """
    rng = np.random.default_rng(zlib.crc32(seed.encode()))
    outs = as_tuple(fn(*args))
    results = [(f"output {i}", o) for i, o in enumerate(outs)]
    wrt = [a for a in args if isinstance(a, lib.Tensor) and a.requires_grad]
    douts = [o for o in outs if o.requires_grad]
    if order < 1 or not douts or not wrt:
        return results
    v1 = [_seed_tensor(lib, rng, o) for o in douts]
    g1 = lib.autograd.grad(douts, wrt, v1, create_graph=order >= 2, allow_unused=True)
    g1 = [lib.zeros_like(w) if g is None else g for g, w in zip(g1, wrt)]
    results += [(f"grad of input {i}", g) for i, g in enumerate(g1)]
    if order < 2:
        return results
    v2 = [_seed_tensor(lib, rng, w) for w in wrt]
    terms = [(g * v).sum() for g, v in zip(g1, v2) if g.requires_grad]
    targets = wrt + v1
    if terms:
        g2 = lib.autograd.grad(sum(terms[1:], terms[0]), targets, allow_unused=True)
    else:
        g2 = [None] * len(targets)
    g2 = [lib.zeros_like(t) if g is None else g for g, t in zip(g2, targets)]
    results += [(f"second derivative wrt input {i}", g) for i, g in enumerate(g2[: len(wrt)])]
    results += [(f"second derivative wrt cotangent {i}", g) for i, g in enumerate(g2[len(wrt) :])]
    return results


def inplace_fn(fn: Callable, through_view: bool) -> Callable:
    """A function of leaves that applies the in-place ``fn(target, *rest)`` to a non-leaf
    target: ``x * 1`` itself, or (through_view) row 1 of ``x * 1`` for an ``x`` with an extra
    leading dim of 2. Returns the modified tensor (the base, through a view)."""

    def direct(x, *rest):
        target = x * 1
        if fn(target, *rest) is not target:
            raise AssertionError("the in-place method did not return its target")
        return target

    def via_view(x, *rest):
        base = x * 1
        target = base[1]
        if fn(target, *rest) is not target:
            raise AssertionError("the in-place method did not return its target")
        return base

    return via_view if through_view else direct


def _shape(arg) -> tuple[int, ...]:
    return arg.shape if isinstance(arg, T) else np.shape(arg.value)


def inplace_samples(row: OpRow, through_view: bool) -> list[tuple[int, S]]:
    """The row's samples whose result has the first argument's shape (so an in-place version
    can write it), with the first argument widened by a leading 2 when through a view."""
    out = []
    for i, s in enumerate(row.samples):
        first = s.args[0]
        if not isinstance(first, T) or np.broadcast_shapes(*map(_shape, s.args)) != first.shape:
            continue
        if through_view:
            s = S(T((2,) + first.shape, first.domain, first.grad), *s.args[1:], grad_fn=s.grad_fn)
        out.append((i, s))
    return out
