"""Window functions for signal processing: bartlett, blackman, hamming, hann, kaiser."""

from __future__ import annotations

from ._backend import xp
from ._creation import _check_device, _dtype, _finish
from .tensor import Tensor

__all__ = ["bartlett_window", "blackman_window", "hamming_window", "hann_window",
           "kaiser_window"]


def _window(name: str, window_length: int, periodic: bool, dtype, device, requires_grad: bool,
            shape) -> Tensor:
    """shape(N, dt): the symmetric window of length N (one more than window_length for a
    periodic window, which drops the last point), computed in dt step by step as PyTorch does,
    so float32 results round as PyTorch's do."""
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
    window = shape(window_length + 1 if periodic else window_length, dt.type)
    return _finish(window[:window_length], requires_grad)


def _hamming(alpha: float, beta: float):
    def shape(N, dt):
        return xp.cos(xp.arange(N, dtype=dt) * dt(2 * xp.pi / (N - 1))) * dt(-beta) + dt(alpha)
    return shape


def _bartlett(N, dt):
    window = xp.arange(N, dtype=dt) * dt(2.0 / (N - 1))
    half = (N - 1) // 2 + 1
    window[half:] = window[half:] * dt(-1) + dt(2)
    return window


def _blackman(N, dt):
    x = xp.arange(N, dtype=dt) * dt(xp.pi / (N - 1))
    return xp.cos(x * dt(4)) * dt(0.08) - xp.cos(x * dt(2)) * dt(0.5) + dt(0.42)


def bartlett_window(window_length: int, periodic: bool = True, *, dtype=None, layout=None,
                    device=None, requires_grad: bool = False) -> Tensor:
    """The Bartlett (triangular) window."""
    return _window("bartlett_window", window_length, periodic, dtype, device, requires_grad,
                   _bartlett)


def blackman_window(window_length: int, periodic: bool = True, *, dtype=None, layout=None,
                    device=None, requires_grad: bool = False) -> Tensor:
    """The Blackman window."""
    return _window("blackman_window", window_length, periodic, dtype, device, requires_grad,
                   _blackman)


def hamming_window(window_length: int, periodic: bool = True, alpha: float = 0.54,
                   beta: float = 0.46, *, dtype=None, layout=None, device=None,
                   pin_memory: bool = False, requires_grad: bool = False) -> Tensor:
    """The generalised Hamming window alpha - beta * cos(2 pi n / (N - 1))."""
    return _window("hamming_window", window_length, periodic, dtype, device, requires_grad,
                   _hamming(alpha, beta))


def hann_window(window_length: int, periodic: bool = True, *, dtype=None, layout=None,
                device=None, requires_grad: bool = False) -> Tensor:
    """The Hann window."""
    return _window("hann_window", window_length, periodic, dtype, device, requires_grad,
                   _hamming(0.5, 0.5))


def kaiser_window(window_length: int, periodic: bool = True, beta: float = 12.0, *, dtype=None,
                  layout=None, device=None, requires_grad: bool = False) -> Tensor:
    """The Kaiser window with shape parameter beta."""
    def shape(N, dt):
        # in float64 (NumPy's i0 has no float32 kernel), rounded once to dt
        half = (N - 1) / 2
        n = xp.arange(N, dtype=xp.float64)
        ratio = xp.clip(1 - ((n - half) / half) ** 2, 0, None)
        return (xp.i0(beta * xp.sqrt(ratio)) / xp.i0(beta)).astype(dt)
    return _window("kaiser_window", window_length, periodic, dtype, device, requires_grad, shape)
