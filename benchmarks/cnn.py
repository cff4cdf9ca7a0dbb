"""W7: one epoch of SGD training of a small CNN on scikit-learn's 8x8 digits."""

from __future__ import annotations

from dataclasses import dataclass
from types import ModuleType
from typing import Any

import numpy as np
from numpy.lib.stride_tricks import sliding_window_view

from benchmarks.harness import Case, Impl, Timed
from benchmarks.training import cross_entropy, numpy_cross_entropy, training_case

BATCH = 64


@dataclass(frozen=True)
class DigitsData:
    """CNN weights and the epoch's batches, as float32 NumPy arrays."""

    params: list[np.ndarray]  # conv1 w, b (16,1,3,3); conv2 w, b (32,16,3,3); linear w (128,10), b
    batches: list[tuple[np.ndarray, np.ndarray]]  # (images (n,1,8,8), one-hot labels)


def _prepare(tiny: bool) -> DigitsData:
    from sklearn.datasets import load_digits

    digits = load_digits()
    rng = np.random.default_rng(7)
    images = (digits.images / 16).astype(np.float32)[:, None]
    onehot = np.eye(10, dtype=np.float32)[digits.target]
    order = rng.permutation(len(images))[: 2 * BATCH if tiny else None]
    batches = [
        (images[idx], onehot[idx])
        for idx in (order[i : i + BATCH] for i in range(0, len(order), BATCH))
    ]
    params = []
    for shape, n_out, fan_in in (
        ((16, 1, 3, 3), 16, 9),
        ((32, 16, 3, 3), 32, 144),
        ((128, 10), 10, 128),
    ):
        w = rng.standard_normal(shape, dtype=np.float32) * np.float32(np.sqrt(2 / fan_in))
        params += [w, 0.01 * rng.standard_normal(n_out, dtype=np.float32)]
    return DigitsData(params, batches)


def cnn_loss(t: ModuleType, params: list, x: Any, onehot: Any) -> Any:
    """Cross-entropy of conv-relu-pool, conv-relu-pool, linear on one batch."""
    conv2d, max_pool2d = t.nn.functional.conv2d, t.nn.functional.max_pool2d
    w1, b1, w2, b2, w3, b3 = params
    h = max_pool2d(t.relu(conv2d(x, w1, b1, padding=1)), 2)
    h = max_pool2d(t.relu(conv2d(h, w2, b2, padding=1)), 2)
    return cross_entropy(t, h.reshape(h.shape[0], -1) @ w3 + b3, onehot)


# The NumPy floor works in NHWC (channels last) so that im2col's columns and the matmul
# outputs need no transposes; only the input and the flatten before the linear layer convert.
def _conv(x: np.ndarray, w: np.ndarray, b: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """3x3 convolution, padding 1, NHWC, via im2col; returns the output and the columns."""
    n, height, width, c = x.shape
    padded = np.pad(x, ((0, 0), (1, 1), (1, 1), (0, 0)))
    windows = sliding_window_view(padded, (3, 3), axis=(1, 2))  # (n, height, width, c, 3, 3)
    cols = windows.transpose(0, 1, 2, 4, 5, 3).reshape(n * height * width, 9 * c)
    out = cols @ _as_matrix(w).T + b
    return out.reshape(n, height, width, len(w)), cols


def _as_matrix(w: np.ndarray) -> np.ndarray:
    """A (out, in, 3, 3) weight as the (out, 3*3*in) matrix matching the columns."""
    return w.transpose(0, 2, 3, 1).reshape(len(w), -1)


def _conv_backward(
    g: np.ndarray, x_shape: tuple[int, ...], cols: np.ndarray, w: np.ndarray, need_input: bool
) -> tuple[np.ndarray | None, np.ndarray, np.ndarray]:
    """Gradients of ``_conv`` with respect to its input (if needed), weight and bias."""
    n, height, width, c = x_shape
    g = g.reshape(-1, len(w))
    gw = (g.T @ cols).reshape(len(w), 3, 3, c).transpose(0, 3, 1, 2)
    gb = g.sum(axis=0)
    if not need_input:
        return None, gw, gb
    gcols = (g @ _as_matrix(w)).reshape(n, height, width, 3, 3, c)
    gpadded = np.zeros((n, height + 2, width + 2, c), np.float32)
    for i in range(3):  # col2im: window offset (i, j) read padded[y + i, x + j]
        for j in range(3):
            gpadded[:, i : i + height, j : j + width] += gcols[:, :, :, i, j]
    return gpadded[:, 1:-1, 1:-1], gw, gb


def _pool(x: np.ndarray) -> tuple[np.ndarray, list[np.ndarray]]:
    """2x2 max pooling, stride 2, NHWC; returns the output and which input each output took."""
    corners = [x[:, i::2, j::2] for i in (0, 1) for j in (0, 1)]  # in PyTorch's scan order
    out = np.maximum(np.maximum(corners[0], corners[1]), np.maximum(corners[2], corners[3]))
    # The first maximum gets the gradient, as in PyTorch: ties are common here, since
    # zero-padded blank regions of a digit convolve to exactly the bias.
    taken = np.zeros(out.shape, bool)
    masks = []
    for corner in corners:
        mask = (corner == out) & ~taken
        taken |= mask
        masks.append(mask)
    return out, masks


def _pool_backward(g: np.ndarray, masks: list[np.ndarray], x_shape: tuple[int, ...]) -> np.ndarray:
    """Gradient of ``_pool`` with respect to its input."""
    gx = np.empty(x_shape, np.float32)
    for (i, j), mask in zip(((0, 0), (0, 1), (1, 0), (1, 1)), masks, strict=True):
        gx[:, i::2, j::2] = g * mask
    return gx


def numpy_cnn_grads(
    params: list[np.ndarray], x: np.ndarray, onehot: np.ndarray
) -> tuple[float, list[np.ndarray]]:
    """``cnn_loss`` and its parameter gradients, backward written by hand."""
    w1, b1, w2, b2, w3, b3 = params
    x = x.transpose(0, 2, 3, 1)
    z1, cols1 = _conv(x, w1, b1)
    a1 = np.maximum(z1, 0)
    p1, masks1 = _pool(a1)
    z2, cols2 = _conv(p1, w2, b2)
    a2 = np.maximum(z2, 0)
    p2, masks2 = _pool(a2)
    flat = p2.transpose(0, 3, 1, 2).reshape(len(x), -1)  # PyTorch flattens channels first
    loss, g = numpy_cross_entropy(flat @ w3 + b3, onehot)

    gw3, gb3 = flat.T @ g, g.sum(axis=0)
    g = (g @ w3.T).reshape(p2.shape[0], p2.shape[3], *p2.shape[1:3]).transpose(0, 2, 3, 1)
    g = _pool_backward(g, masks2, a2.shape) * (a2 > 0)
    g, gw2, gb2 = _conv_backward(g, p1.shape, cols2, w2, need_input=True)
    g = _pool_backward(g, masks1, a1.shape) * (a1 > 0)
    _, gw1, gb1 = _conv_backward(g, x.shape, cols1, w1, need_input=False)
    return loss, [gw1, gb1, gw2, gb2, gw3, gb3]


def _build(impl: Impl, data: DigitsData) -> Case:
    return training_case(impl, data.params, data.batches, cnn_loss, numpy_cnn_grads)


W7 = Timed(
    id="W7",
    title="digits CNN (conv16-pool-conv32-pool-linear), one epoch, batch 64",
    unit="s/epoch",
    needs=(
        "tensor",
        "relu",
        "exp",
        "log",
        "no_grad",
        "nn.functional.conv2d",
        "nn.functional.max_pool2d",
    ),
    prepare=_prepare,
    build=_build,
    scale=1.0,
    rep_divisor=5,
    min_rep_s=0.0,
    compiles=True,
)
