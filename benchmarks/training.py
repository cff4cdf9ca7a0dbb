"""Pieces shared by the training workloads (W2, W3, W5, W7): loss, SGD and the training case."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from types import ModuleType
from typing import Any

import numpy as np

from benchmarks.harness import Case, Impl, to_numpy

LR = 0.05

# (params, x, onehot) -> loss tensor, for the torch-shaped modules.
ModuleLoss = Callable[[ModuleType, list, Any, Any], Any]
# (params, x, onehot) -> (loss, gradients), written by hand in NumPy.
NumpyGrads = Callable[[list[np.ndarray], np.ndarray, np.ndarray], tuple[float, list[np.ndarray]]]


def cross_entropy(t: ModuleType, logits: Any, onehot: Any) -> Any:
    """Mean cross-entropy of ``logits`` against one-hot targets, from basic ops only."""
    # No max shift (max is not certain to exist yet): the workloads keep logits far below
    # exp's float32 overflow. A one-hot product instead of logp[arange(n), y] needs no
    # advanced indexing, and gives the same numbers in every implementation.
    logp = logits - t.log(t.exp(logits).sum(dim=1, keepdim=True))
    return -(logp * onehot).sum(dim=1).mean()


def numpy_cross_entropy(logits: np.ndarray, onehot: np.ndarray) -> tuple[float, np.ndarray]:
    """The same loss as ``cross_entropy``, and its gradient with respect to the logits."""
    e = np.exp(logits)
    s = e.sum(axis=1, keepdims=True)
    loss = float(np.mean(np.log(s[:, 0]) - (logits * onehot).sum(axis=1)))
    return loss, (e / s - onehot) / len(logits)


def sgd(t: ModuleType, params: Sequence[Any], lr: float = LR) -> None:
    """Plain SGD, in place, then clear the gradients."""
    with t.no_grad():
        for p in params:
            p -= lr * p.grad
            p.grad = None


def training_case(
    impl: Impl,
    params: Sequence[np.ndarray],
    batches: Sequence[tuple[np.ndarray, np.ndarray]],
    module_loss: ModuleLoss,
    numpy_grads: NumpyGrads,
) -> Case:
    """A case whose check is one SGD step on the first batch and whose step is a pass over all."""
    names = [f"{'wb'[i % 2]}{i // 2 + 1}" for i in range(len(params))]  # w1, b1, w2, b2, ...

    def outputs(loss: Any, grads: Sequence[Any], updated: Sequence[Any]) -> dict[str, Any]:
        out = {"loss": to_numpy(loss)}
        out |= {f"grad {n}": to_numpy(g) for n, g in zip(names, grads, strict=True)}
        out |= {f"{n} after SGD": to_numpy(p) for n, p in zip(names, updated, strict=True)}
        return out

    if impl.is_numpy:
        state = [p.copy() for p in params]

        def train(x: np.ndarray, onehot: np.ndarray) -> tuple[np.float32, list[np.ndarray]]:
            loss, grads = numpy_grads(state, x, onehot)
            for p, g in zip(state, grads, strict=True):
                p -= LR * g
            return np.float32(loss), grads

    else:
        t = impl.module
        state = [t.tensor(p.copy(), requires_grad=True) for p in params]
        batches = [(t.tensor(x), t.tensor(onehot)) for x, onehot in batches]

        @impl.jit
        def train(x: Any, onehot: Any) -> tuple[Any, list[Any]]:
            loss = module_loss(t, state, x, onehot)
            loss.backward()
            grads = [p.grad for p in state]
            sgd(t, state)
            return loss, grads

    def check() -> dict[str, Any]:
        loss, grads = train(*batches[0])
        return outputs(loss, grads, state)

    def step() -> None:
        for x, onehot in batches:
            train(x, onehot)

    return Case(check, step)
