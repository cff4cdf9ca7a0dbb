"""W1 (per-op overhead on tiny tensors) and W6 (large elementwise), forward + backward."""

from __future__ import annotations

from collections.abc import Callable
from types import ModuleType
from typing import Any

import numpy as np

from benchmarks.harness import Case, Impl, Timed, to_numpy

# W1: 25 rounds of this pattern make the 200-op chain; sin/tanh between the muls and the exp
# keep the values bounded.
PATTERN = ("mul", "add", "sin", "mul", "add", "tanh", "exp", "mul")
CHAIN = PATTERN * 25


def _chain_prepare(tiny: bool) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    rng = np.random.default_rng(1)
    x = rng.standard_normal(4).astype(np.float32)
    a = rng.uniform(0.5, 1.5, 4).astype(np.float32)
    b = rng.uniform(-0.5, 0.5, 4).astype(np.float32)
    return x, a, b


def _chain_ops(t: Any, a: Any, b: Any) -> list[Callable[[Any], Any]]:
    """The chain as a list of one-argument functions; ``t`` may be numpy or a torch module."""
    table = {
        "mul": lambda y: y * a,
        "add": lambda y: y + b,
        "sin": t.sin,
        "tanh": t.tanh,
        "exp": t.exp,
    }
    return [table[name] for name in CHAIN]


def _numpy_chain(x: np.ndarray, a: np.ndarray, b: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The chain's output and the gradient of its sum, backward written by hand."""
    backward = {
        "mul": lambda g, inp, out: g * a,
        "add": lambda g, inp, out: g,
        "sin": lambda g, inp, out: g * np.cos(inp),
        "tanh": lambda g, inp, out: g * (1 - out * out),
        "exp": lambda g, inp, out: g * out,
    }
    tape = []
    y = x
    for name, op in zip(CHAIN, _chain_ops(np, a, b), strict=True):
        out = op(y)
        tape.append((backward[name], y, out))
        y = out
    g = np.ones_like(y)
    for rule, inp, out in reversed(tape):
        g = rule(g, inp, out)
    return y, g


def _chain_build(impl: Impl, data: tuple[np.ndarray, np.ndarray, np.ndarray]) -> Case:
    x0, a, b = data
    if impl.is_numpy:

        def check() -> dict[str, Any]:
            y, grad = _numpy_chain(x0, a, b)
            return {"y": y, "grad x": grad}

        return Case(check, lambda: _numpy_chain(x0, a, b))

    t = impl.module
    x = t.tensor(x0.copy(), requires_grad=True)
    ops = _chain_ops(t, t.tensor(a), t.tensor(b))

    @impl.jit
    def run() -> Any:
        y = x
        for op in ops:
            y = op(y)
        y.sum().backward()
        return y

    def check() -> dict[str, Any]:
        y = run()
        out = {"y": to_numpy(y), "grad x": to_numpy(x.grad)}
        x.grad = None
        return out

    def step() -> None:
        run()
        x.grad = None

    return Case(check, step)


W1 = Timed(
    id="W1",
    title=f"tiny-op overhead: {len(CHAIN)} elementwise ops on shape (4,), fwd+bwd",
    unit="µs/op",
    needs=("tensor", "sin", "tanh", "exp"),
    prepare=_chain_prepare,
    build=_chain_build,
    scale=1e6 / len(CHAIN),  # the final sum and the backward pass are shared among the ops
    compiles=True,
)


def _large_prepare(tiny: bool) -> np.ndarray:
    n = 4096 if tiny else 4 * 1024 * 1024
    return np.random.default_rng(6).standard_normal(n).astype(np.float32)


def _large_module(t: ModuleType, x: Any) -> Any:
    loss = (t.exp(x) * t.sin(x) + x * x).sum()
    loss.backward()
    return loss


def _numpy_large(x: np.ndarray) -> tuple[np.float32, np.ndarray]:
    """sum(exp(x) sin(x) + x^2) and its gradient exp(x) (sin x + cos x) + 2x."""
    e = np.exp(x)
    s = np.sin(x)
    loss = (e * s + x * x).sum()
    s += np.cos(x)
    s *= e
    s += 2 * x
    return loss, s


def _large_build(impl: Impl, x0: np.ndarray) -> Case:
    if impl.is_numpy:

        def check() -> dict[str, Any]:
            loss, grad = _numpy_large(x0)
            return {"loss": loss, "grad x": grad}

        return Case(check, lambda: _numpy_large(x0))

    t = impl.module
    x = t.tensor(x0.copy(), requires_grad=True)
    run = impl.jit(_large_module)

    def check() -> dict[str, Any]:
        loss = run(t, x)
        out = {"loss": to_numpy(loss), "grad x": to_numpy(x.grad)}
        x.grad = None
        return out

    def step() -> None:
        run(t, x)
        x.grad = None

    return Case(check, step)


W6 = Timed(
    id="W6",
    title="large elementwise: sum(exp(x)·sin(x) + x²), 4M float32, fwd+bwd",
    unit="ms/step",
    needs=("tensor", "exp", "sin"),
    prepare=_large_prepare,
    build=_large_build,
    compiles=True,
)
