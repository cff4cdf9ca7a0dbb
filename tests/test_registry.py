"""Every registered op and every public op name has an op_db row that runs it; docs/ops.md is
current."""

from __future__ import annotations

import contextlib
import functools
import inspect
from pathlib import Path

import numpy as np
import pytest
from op_db import INTERNAL, ROWS
from op_db._harness import derivatives, inplace_fn, inplace_samples

import chainrule
from chainrule.ops import FUNCTIONS, REGISTRY
from chainrule.ops._coverage import render

DOCS = Path(__file__).resolve().parents[1] / "docs" / "ops.md"


def _traced(fn, ran: set, key: tuple):
    @functools.wraps(fn)
    def traced(*args, **kwargs):
        ran.add(key)
        return fn(*args, **kwargs)

    return traced


@contextlib.contextmanager
def _trace():
    """Record, as (op name, "forward" or input position), every forward and VJP rule that runs."""
    ran: set = set()
    saved = {name: (op.forward, op.vjp) for name, op in REGISTRY.items()}
    try:
        for name, op in REGISTRY.items():
            op.forward = _traced(op.forward, ran, (name, "forward"))
            op.vjp = tuple(
                None if rule is None else _traced(rule, ran, (name, i))
                for i, rule in enumerate(op.vjp)
            )
        yield ran
    finally:
        for name, (forward, vjp) in saved.items():
            REGISTRY[name].forward, REGISTRY[name].vjp = forward, vjp


def _run(fn, sample, seed: str, order: int, row) -> None:
    for dtype in row.dtypes:
        arrays = sample.arrays(seed, dtype, row.domain)
        with contextlib.suppress(Exception):  # a failing op is reported by tests/ops, not here
            derivatives(chainrule, fn, sample.tensors(chainrule, arrays), order, seed)


@pytest.fixture(scope="module")
def exercised() -> dict[str, set]:
    """Row id -> what running the row in its dtypes (values, first and second derivatives, its
    in-place variants direct and through a view) ran in the registry."""
    out = {}
    for row in ROWS:
        order = 2 if row.orders else 0
        with _trace() as ran:
            for i, sample in enumerate(row.samples):
                _run(row.op, sample, row.seed(i), order, row)
            for fn in row.inplace.values():
                for through_view in (False, True):
                    for i, sample in inplace_samples(row, through_view):
                        _run(inplace_fn(fn, through_view), sample, row.seed(i), order, row)
        out[row.id] = ran
    return out


def _expected(name: str) -> set:
    op = REGISTRY[name]
    rules = {(name, i) for i, rule in enumerate(op.vjp)
             if rule is not None and not rule.__qualname__.startswith("not_implemented")}
    return {(name, "forward")} | (rules if op.differentiable else set())


def test_every_record_has_a_row():
    covered = {r for row in ROWS for r in row.records} | set(INTERNAL)
    assert [name for name in REGISTRY if name not in covered] == []


def test_rows_and_internal_name_registered_records():
    named = {r for row in ROWS for r in row.records} | set(INTERNAL)
    assert sorted(named - set(REGISTRY)) == []
    assert sorted(set(INTERNAL) & {r for row in ROWS for r in row.records}) == []


@pytest.mark.parametrize("row", [r for r in ROWS if r.records], ids=lambda r: r.id)
def test_row_runs_its_records(row, exercised):
    ran = {name for name, _ in exercised[row.id]}
    assert sorted(set(row.records) - ran) == []


def _to_meta_and_back() -> None:
    x = chainrule.ones(2, 3, requires_grad=True)
    moved = x.to("meta")
    with contextlib.suppress(NotImplementedError):  # the gradient cannot leave the meta device
        moved.sum().backward()


# Records no row can run (rows run on one device), each with the call that runs it.
DEVICE_MOVES = {"to_device": _to_meta_and_back}


def _rows_for(name: str) -> list:
    if name in INTERNAL:
        return [row for row in ROWS if row.name in INTERNAL[name][1]]
    return [row for row in ROWS if name in row.records]


@pytest.mark.parametrize("name", list(REGISTRY))
def test_record_forward_and_rules_run(name, exercised):
    """The record's forward and each of its VJP rules run in some row that covers it (internal
    records: in the rows INTERNAL names)."""
    if name in DEVICE_MOVES:
        with _trace() as ran:
            DEVICE_MOVES[name]()
        assert sorted(_expected(name) - ran, key=str) == []
        return
    rows = _rows_for(name)
    assert rows, f"no row covers {name}"
    ran = set().union(*(exercised[row.id] for row in rows))
    assert sorted(_expected(name) - ran, key=str) == []


def _public_tensor_names() -> list[str]:
    """Tensor attributes the op families attach (methods, in-place methods, operators)."""
    return sorted(
        name
        for name, value in vars(chainrule.Tensor).items()
        if callable(value) and getattr(value, "__module__", "").startswith("chainrule.ops")
        and (not name.startswith("_") or name.startswith("__"))  # not the bound internals
    )


def test_every_public_name_has_a_row():
    names = {row.name for row in ROWS}
    inplace = {n for row in ROWS for n in row.inplace}
    missing = [n for n in FUNCTIONS if n not in names]
    for n in _public_tensor_names():
        # (methods wrapped for autocast or deprecated overloads compare by what they wrap)
        method = inspect.unwrap(vars(chainrule.Tensor)[n])
        same_as_function = method is FUNCTIONS.get(n) and n in names
        if f"Tensor.{n}" not in names and n not in inplace and not same_as_function:
            missing.append(f"Tensor.{n}")
    assert missing == []


def test_docs_ops_md_is_current():
    assert DOCS.read_text() == render(), (
        "docs/ops.md is stale: python -m chainrule.ops._coverage > docs/ops.md"
    )


def test_unsqueeze_kernel_takes_every_dim_as_expand_dims():
    a = np.arange(6.0).reshape(2, 3)
    for dim in range(-3, 3):
        got = REGISTRY["unsqueeze"].forward(a, dim)
        assert got.shape == np.expand_dims(a, dim).shape
        assert np.shares_memory(got, a)
