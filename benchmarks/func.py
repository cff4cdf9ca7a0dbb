"""W8 and W9: function transforms. Per-sample gradients with vmap(grad), and a full Jacobian
with jacrev, each against torch.func and a hand-written NumPy floor; compiled columns compile
the transformed function as a whole.

W8L times the same per-sample gradients as a Python loop of ``grad`` over the batch, the way
one would write them without vmap (chainrule and torch; the floor is W8's).
"""

from __future__ import annotations

from types import ModuleType
from typing import Any

import numpy as np

from benchmarks.harness import Case, Impl, Timed, to_numpy

W8_SIZES = (784, 128, 10)
W8_TINY = (32, 16, 10)


def _w8_prepare(tiny: bool) -> dict[str, np.ndarray]:
    n_in, n_hidden, n_out = W8_TINY if tiny else W8_SIZES
    batch = 8 if tiny else 64
    rng = np.random.default_rng(8)
    return {
        "w1": (rng.standard_normal((n_hidden, n_in)) / np.sqrt(n_in)).astype(np.float32),
        "b1": (0.01 * rng.standard_normal(n_hidden)).astype(np.float32),
        "w2": (rng.standard_normal((n_out, n_hidden)) / np.sqrt(n_hidden)).astype(np.float32),
        "b2": (0.01 * rng.standard_normal(n_out)).astype(np.float32),
        "x": rng.standard_normal((batch, n_in)).astype(np.float32),
        "y": rng.integers(0, n_out, batch),
    }


def _loss(t: ModuleType):
    F = t.nn.functional

    def loss(params: dict, x: Any, y: Any) -> Any:
        """One example's cross-entropy (the example as a batch of one)."""
        h = t.tanh(F.linear(x.unsqueeze(0), params["w1"], params["b1"]))
        return F.cross_entropy(F.linear(h, params["w2"], params["b2"]), y.unsqueeze(0))

    return loss


def numpy_per_sample_grads(d: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    """Closed form: with h = tanh(W1 x + b1) and p = softmax(W2 h + b2), the loss gradient at
    the logits is p - onehot(y); per example, gW2 = outer(dz, h),
    gW1 = outer(dz W2 * (1 - h^2), x)."""
    x, w1, b1, w2, b2 = d["x"], d["w1"], d["b1"], d["w2"], d["b2"]
    h = np.tanh(x @ w1.T + b1)
    z = h @ w2.T + b2
    z = z - z.max(axis=1, keepdims=True)
    p = np.exp(z)
    p /= p.sum(axis=1, keepdims=True)
    p[np.arange(len(x)), d["y"]] -= 1
    du = (p @ w2) * (1 - h * h)
    # einsum's loop writes the (64, 128, 784) outer products faster than broadcast multiply
    return {"w1": np.einsum("bi,bj->bij", du, x), "b1": du,
            "w2": np.einsum("bi,bj->bij", p, h), "b2": p}


def _module_inputs(t: ModuleType, d: dict[str, np.ndarray]) -> tuple[dict, Any, Any]:
    params = {k: t.tensor(d[k].copy()) for k in ("w1", "b1", "w2", "b2")}
    return params, t.tensor(d["x"].copy()), t.tensor(d["y"].copy())


def _w8_build(impl: Impl, data: dict[str, np.ndarray]) -> Case:
    if impl.is_numpy:
        return Case(lambda: numpy_per_sample_grads(data), lambda: numpy_per_sample_grads(data))
    t = impl.module
    params, x, y = _module_inputs(t, data)
    per_sample = impl.jit(t.func.vmap(t.func.grad(_loss(t)), in_dims=(None, 0, 0)))

    def check() -> dict[str, Any]:
        return {k: to_numpy(v) for k, v in per_sample(params, x, y).items()}

    return Case(check, lambda: per_sample(params, x, y))


def _w8_loop_build(impl: Impl, data: dict[str, np.ndarray]) -> Case:
    if impl.is_numpy:
        return Case(lambda: numpy_per_sample_grads(data), lambda: numpy_per_sample_grads(data))
    t = impl.module
    params, x, y = _module_inputs(t, data)
    g = t.func.grad(_loss(t))

    def loop() -> dict[str, Any]:
        grads = [g(params, x[i], y[i]) for i in range(len(x))]
        return {k: t.stack([gi[k] for gi in grads]) for k in params}

    def check() -> dict[str, Any]:
        return {k: to_numpy(v) for k, v in loop().items()}

    return Case(check, loop)


W8 = Timed(
    id="W8",
    title="per-sample gradients, MLP 784-128-10 tanh, cross-entropy, batch 64: vmap(grad)",
    unit="ms/batch",
    needs=("func.vmap", "func.grad", "nn.functional.linear", "nn.functional.cross_entropy"),
    prepare=_w8_prepare,
    build=_w8_build,
    compiles=True,
)

W8L = Timed(
    id="W8L",
    title="the same per-sample gradients as a Python loop of grad over the 64 examples",
    unit="ms/batch",
    needs=("func.grad", "stack"),
    prepare=_w8_prepare,
    build=_w8_loop_build,
)

W9_N = 256


def _w9_prepare(tiny: bool) -> dict[str, np.ndarray]:
    n = 32 if tiny else W9_N
    rng = np.random.default_rng(9)
    return {"w1": rng.standard_normal((n, n)) / np.sqrt(n),
            "w2": rng.standard_normal((n, n)) / np.sqrt(n),
            "x": rng.standard_normal(n)}


def numpy_jacobian(d: dict[str, np.ndarray]) -> np.ndarray:
    """d tanh(W2 tanh(W1 x)) / dx = diag(1 - h2^2) W2 diag(1 - h1^2) W1."""
    h1 = np.tanh(d["w1"] @ d["x"])
    h2 = np.tanh(d["w2"] @ h1)
    return ((1 - h2 * h2)[:, None] * d["w2"]) @ ((1 - h1 * h1)[:, None] * d["w1"])


def _w9_build(impl: Impl, data: dict[str, np.ndarray]) -> Case:
    if impl.is_numpy:
        return Case(lambda: {"jac": numpy_jacobian(data)}, lambda: numpy_jacobian(data))
    t = impl.module
    w1, w2, x = (t.tensor(data[k].copy()) for k in ("w1", "w2", "x"))
    jac = impl.jit(t.func.jacrev(lambda x: t.tanh(w2 @ t.tanh(w1 @ x))))
    return Case(lambda: {"jac": to_numpy(jac(x))}, lambda: jac(x))


W9 = Timed(
    id="W9",
    title="full Jacobian of tanh(W2 tanh(W1 x)), 256 -> 256, float64: jacrev",
    unit="ms/Jacobian",
    needs=("func.jacrev", "tanh"),
    prepare=_w9_prepare,
    build=_w9_build,
    compiles=True,
)
