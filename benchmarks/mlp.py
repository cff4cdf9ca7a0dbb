"""W2 and W3: one SGD step of a 784-512-256-10 relu MLP (the network W5 also uses)."""

from __future__ import annotations

import itertools
from dataclasses import dataclass
from types import ModuleType
from typing import Any

import numpy as np

from benchmarks.harness import Case, Impl, Timed
from benchmarks.training import cross_entropy, numpy_cross_entropy, training_case

SIZES = (784, 512, 256, 10)
TINY_SIZES = (64, 32, 16, 10)


@dataclass(frozen=True)
class MLPData:
    """Weights and one batch, as float32 NumPy arrays."""

    params: list[np.ndarray]  # w1, b1, w2, b2, ...; w is (in, out), so a layer is h @ w + b
    x: np.ndarray
    onehot: np.ndarray


def make_data(sizes: tuple[int, ...], batch: int, seed: int = 2) -> MLPData:
    """He-initialised weights, small random biases, a random batch and random labels."""
    rng = np.random.default_rng(seed)
    params = []
    for fan_in, fan_out in itertools.pairwise(sizes):
        w = rng.standard_normal((fan_in, fan_out), dtype=np.float32) * np.float32(
            np.sqrt(2 / fan_in)
        )
        params += [w, 0.01 * rng.standard_normal(fan_out, dtype=np.float32)]
    x = rng.standard_normal((batch, sizes[0]), dtype=np.float32)
    onehot = np.eye(sizes[-1], dtype=np.float32)[rng.integers(0, sizes[-1], batch)]
    return MLPData(params, x, onehot)


def mlp_loss(t: ModuleType, params: list, x: Any, onehot: Any) -> Any:
    """Cross-entropy of the relu MLP given by ``params`` on one batch."""
    h = x
    layers = list(zip(params[::2], params[1::2], strict=True))
    for i, (w, b) in enumerate(layers):
        h = h @ w + b
        if i < len(layers) - 1:
            h = t.relu(h)
    return cross_entropy(t, h, onehot)


def numpy_mlp_grads(
    params: list[np.ndarray], x: np.ndarray, onehot: np.ndarray
) -> tuple[float, list[np.ndarray]]:
    """``mlp_loss`` and its parameter gradients, backward written by hand."""
    n_layers = len(params) // 2
    hs = [x]  # each layer's input; relu'(z) is read off the relu output (h > 0)
    for i in range(n_layers):
        z = hs[-1] @ params[2 * i] + params[2 * i + 1]
        hs.append(np.maximum(z, 0) if i < n_layers - 1 else z)
    loss, g = numpy_cross_entropy(hs.pop(), onehot)
    grads: list[np.ndarray] = [np.empty(0)] * len(params)
    for i in reversed(range(n_layers)):
        h = hs.pop()  # layer i's input, freed once its layer is done (matters for W5)
        grads[2 * i] = h.T @ g
        grads[2 * i + 1] = g.sum(axis=0)
        if i > 0:
            g = g @ params[2 * i].T
            g *= h > 0
    return loss, grads


def _prepare(batch: int) -> Any:
    def prepare(tiny: bool) -> MLPData:
        return make_data(TINY_SIZES if tiny else SIZES, batch)

    return prepare


def _build(impl: Impl, data: MLPData) -> Case:
    return training_case(impl, data.params, [(data.x, data.onehot)], mlp_loss, numpy_mlp_grads)


NEEDS = ("tensor", "relu", "exp", "log", "no_grad")
W2 = Timed(
    id="W2",
    title="MLP 784-512-256-10 training step, batch 128",
    unit="ms/step",
    needs=NEEDS,
    prepare=_prepare(128),
    build=_build,
    compiles=True,
)
W3 = Timed(
    id="W3",
    title="the same MLP step, batch 16",
    unit="ms/step",
    needs=NEEDS,
    prepare=_prepare(16),
    build=_build,
    compiles=True,
)
