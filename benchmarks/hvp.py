"""W4: Hessian-vector product of f(x) = sum(tanh(W x)^2) by double backward."""

from __future__ import annotations

from types import ModuleType
from typing import Any

import numpy as np

from benchmarks.harness import Case, Impl, Timed, to_numpy


def _prepare(tiny: bool) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    n = 100 if tiny else 1000
    rng = np.random.default_rng(4)
    w = rng.standard_normal((n, n), dtype=np.float32) / np.float32(np.sqrt(n))
    return w, rng.standard_normal(n, dtype=np.float32), rng.standard_normal(n, dtype=np.float32)


def module_hvp(t: ModuleType, w: Any, x: Any, v: Any) -> tuple[Any, Any]:
    """The gradient g of f at x (differentiable) and the product H v, i.e. grad of g·v."""
    h = t.tanh(w @ x)
    (g,) = t.autograd.grad((h * h).sum(), (x,), create_graph=True)
    (hv,) = t.autograd.grad((g * v).sum(), (x,))
    return g, hv


# With u = W x and h = tanh(u), f = sum(h^2):
#   df/du = 2 h (1 - h^2),  so g = W^T (2 h (1 - h^2));
#   d2f/du2 = 2 (1 - h^2)(1 - 3 h^2), diagonal,  so H v = W^T (2 (1 - h^2)(1 - 3 h^2) * (W v)).
def numpy_grad(w: np.ndarray, x: np.ndarray) -> np.ndarray:
    """The gradient of f at x."""
    h = np.tanh(w @ x)
    return w.T @ (2 * h * (1 - h * h))


def numpy_hvp(w: np.ndarray, x: np.ndarray, v: np.ndarray) -> np.ndarray:
    """H v at x, from the closed form above (the floor computes no gradient)."""
    h2 = np.tanh(w @ x) ** 2
    return w.T @ (2 * (1 - h2) * (1 - 3 * h2) * (w @ v))


def numpy_grad_and_hvp(w: np.ndarray, x: np.ndarray, v: np.ndarray) -> tuple:
    """What the autograd versions compute: the gradient and H v, sharing h (4 matvecs)."""
    h = np.tanh(w @ x)
    h2 = h * h
    g = w.T @ (2 * h * (1 - h2))
    return g, w.T @ (2 * (1 - h2) * (1 - 3 * h2) * (w @ v))


def _build(impl: Impl, data: tuple[np.ndarray, np.ndarray, np.ndarray]) -> Case:
    w0, x0, v0 = data
    if impl.is_numpy:

        def check() -> dict[str, Any]:
            return {"grad": numpy_grad(w0, x0), "hvp": numpy_hvp(w0, x0, v0)}

        # Timed: the same outputs as the autograd versions (g and H v), not H v alone.
        return Case(check, lambda: numpy_grad_and_hvp(w0, x0, v0))

    t = impl.module
    w, v = t.tensor(w0.copy()), t.tensor(v0.copy())
    x = t.tensor(x0.copy(), requires_grad=True)

    hvp = impl.jit(module_hvp)

    def check() -> dict[str, Any]:
        g, hv = hvp(t, w, x, v)
        return {"grad": to_numpy(g), "hvp": to_numpy(hv)}

    return Case(check, lambda: hvp(t, w, x, v))


W4 = Timed(
    id="W4",
    title="Hessian-vector product of sum(tanh(W x)²), n=1000",
    unit="ms/HVP",
    needs=("tensor", "tanh", "autograd.grad"),
    prepare=_prepare,
    build=_build,
    compiles=True,
)
