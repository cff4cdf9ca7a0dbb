"""Window functions for signal processing: bartlett, blackman, hamming, hann, kaiser."""

from __future__ import annotations

from ._backend import xp
from ._creation import _check_device, _dtype, _finish
from .tensor import Tensor

__all__ = ["bartlett_window", "blackman_window", "hamming_window", "hann_window",
           "kaiser_window"]


def _window(name: str, window_length: int, periodic: bool, dtype, device, requires_grad: bool,
            shape) -> Tensor:
    """shape(n, N) evaluated at n = 0..window_length-1 in float64, N the symmetric length
    (one more for a periodic window), rounded once to dtype."""
    _check_device(device)
    if not isinstance(window_length, int) or isinstance(window_length, bool):
        raise TypeError(f"{name}(): argument 'window_length' (position 1) must be int, not "
                        f"{type(window_length).__name__}")
    if window_length < 0:
        raise RuntimeError(f"{name} requires non-negative window_length, got "
                           f"window_length={window_length}")
    dt = _dtype(name, dtype)
    if dt.kind != "f":
        raise RuntimeError(f"{name} expects floating point dtypes, got: {dt.name}")
    if window_length <= 1:
        return _finish(xp.ones(window_length, dt), requires_grad)
    n = xp.arange(window_length, dtype=xp.float64)
    return _finish(shape(n, window_length + 1 if periodic else window_length).astype(dt),
                   requires_grad)


def _cosine_sum(*coefficients: float):
    def shape(n, N):
        return sum((-1) ** k * a * xp.cos(2 * xp.pi * k * n / (N - 1))
                   for k, a in enumerate(coefficients))
    return shape


def bartlett_window(window_length: int, periodic: bool = True, *, dtype=None, layout=None,
                    device=None, requires_grad: bool = False) -> Tensor:
    """The Bartlett (triangular) window."""
    return _window("bartlett_window", window_length, periodic, dtype, device, requires_grad,
                   lambda n, N: 1 - xp.abs(2 * n / (N - 1) - 1))


def blackman_window(window_length: int, periodic: bool = True, *, dtype=None, layout=None,
                    device=None, requires_grad: bool = False) -> Tensor:
    """The Blackman window."""
    return _window("blackman_window", window_length, periodic, dtype, device, requires_grad,
                   _cosine_sum(0.42, 0.5, 0.08))


def hamming_window(window_length: int, periodic: bool = True, alpha: float = 0.54,
                   beta: float = 0.46, *, dtype=None, layout=None, device=None,
                   pin_memory: bool = False, requires_grad: bool = False) -> Tensor:
    """The generalised Hamming window alpha - beta * cos(2 pi n / (N - 1))."""
    return _window("hamming_window", window_length, periodic, dtype, device, requires_grad,
                   _cosine_sum(alpha, beta))


def hann_window(window_length: int, periodic: bool = True, *, dtype=None, layout=None,
                device=None, requires_grad: bool = False) -> Tensor:
    """The Hann window."""
    return _window("hann_window", window_length, periodic, dtype, device, requires_grad,
                   _cosine_sum(0.5, 0.5))


def kaiser_window(window_length: int, periodic: bool = True, beta: float = 12.0, *, dtype=None,
                  layout=None, device=None, requires_grad: bool = False) -> Tensor:
    """The Kaiser window with shape parameter beta."""
    def shape(n, N):
        half = (N - 1) / 2
        return xp.i0(beta * xp.sqrt(xp.clip(1 - ((n - half) / half) ** 2, 0, None))) / xp.i0(beta)
    return _window("kaiser_window", window_length, periodic, dtype, device, requires_grad, shape)
