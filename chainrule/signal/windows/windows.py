"""torch.signal.windows: window functions of length M, symmetric (``sym=True``, for filter
design) or periodic (``sym=False``, for spectral analysis).

Each window is a differentiable function of a ``linspace`` grid made with the factory
arguments, as PyTorch builds them, so ``requires_grad=True`` gives the grid as the leaf and the
window as its function (a ``grad_fn``), and float32 windows round as PyTorch's do.
"""

from __future__ import annotations

import math
from collections.abc import Iterable

from ..._backend import float32, float64, get_default_dtype
from ..._creation import arange, empty, linspace, ones, tensor
from ..._dtypes import strided
from ...ops.elementwise import minimum
from ...ops.special import i0
from ...tensor import Tensor

__all__ = ["bartlett", "blackman", "cosine", "exponential", "gaussian", "general_cosine",
           "general_hamming", "hamming", "hann", "kaiser", "nuttall"]


def _checked_dtype(name: str, M: int, dtype, layout):
    """The window's dtype, after PyTorch's checks of M, layout and dtype (in its order)."""
    if dtype is None:
        dtype = get_default_dtype()
    if M < 0:
        raise ValueError(f"{name} requires non-negative window length, got M={M}")
    if layout is not strided:
        raise ValueError(f"{name} is implemented for strided tensors only, got: {layout}")
    if dtype not in (float32, float64):
        raise ValueError(f"{name} expects float32 or float64 dtypes, got: {dtype}")
    return dtype


def _denominator(M: int, sym: bool) -> int:
    """The grid spacing's divisor: M - 1 points apart for a symmetric window, M for a periodic
    one (a window of M + 1 points with the last dropped)."""
    return M - 1 if sym or M == 1 else M


def exponential(M: int, *, center: float | None = None, tau: float = 1.0, sym: bool = True,
                dtype=None, layout=strided, device=None, requires_grad: bool = False) -> Tensor:
    """The exponential window exp(-|n - center| / tau)."""
    dtype = _checked_dtype("exponential", M, dtype, layout)
    if tau <= 0:
        raise ValueError(f"Tau must be positive, got: {tau} instead.")
    if sym and center is not None:
        raise ValueError("Center must be None for symmetric windows")
    if M == 0:
        return empty((0,), dtype=dtype, device=device, requires_grad=requires_grad)
    if center is None:
        center = _denominator(M, sym) / 2.0
    scale = 1 / tau
    n = linspace(-center * scale, (-center + (M - 1)) * scale, M, dtype=dtype, device=device,
                 requires_grad=requires_grad)
    return (-n.abs()).exp()


def cosine(M: int, *, sym: bool = True, dtype=None, layout=strided, device=None,
           requires_grad: bool = False) -> Tensor:
    """The cosine (sine) window sin(pi (n + 1/2) / M)."""
    dtype = _checked_dtype("cosine", M, dtype, layout)
    if M == 0:
        return empty((0,), dtype=dtype, device=device, requires_grad=requires_grad)
    step = math.pi / (_denominator(M, sym) + 1)
    n = linspace(0.5 * step, (0.5 + (M - 1)) * step, M, dtype=dtype, device=device,
                 requires_grad=requires_grad)
    return n.sin()


def gaussian(M: int, *, std: float = 1.0, sym: bool = True, dtype=None, layout=strided,
             device=None, requires_grad: bool = False) -> Tensor:
    """The Gaussian window exp(-(n - (M - 1)/2)^2 / (2 std^2))."""
    dtype = _checked_dtype("gaussian", M, dtype, layout)
    if std <= 0:
        raise ValueError(f"Standard deviation must be positive, got: {std} instead.")
    if M == 0:
        return empty((0,), dtype=dtype, device=device, requires_grad=requires_grad)
    first = -_denominator(M, sym) / 2.0
    scale = 1 / (std * math.sqrt(2))
    n = linspace(first * scale, (first + (M - 1)) * scale, M, dtype=dtype, device=device,
                 requires_grad=requires_grad)
    return (-n**2).exp()


def kaiser(M: int, *, beta: float = 12.0, sym: bool = True, dtype=None, layout=strided,
           device=None, requires_grad: bool = False) -> Tensor:
    """The Kaiser window I0(beta sqrt(1 - (2n/(M-1) - 1)^2)) / I0(beta)."""
    dtype = _checked_dtype("kaiser", M, dtype, layout)
    if beta < 0:
        raise ValueError(f"beta must be non-negative, got: {beta} instead.")
    if M <= 1:
        return ones((M,), dtype=dtype, device=device, requires_grad=requires_grad)
    # The grid runs from -beta to beta in dtype (beta rounded to it), capped at beta where the
    # periodic window's last step would pass it.
    b = tensor(beta, dtype=dtype, device=device)
    step = 2.0 * b / _denominator(M, sym)
    end = minimum(b, -b + (M - 1) * step)
    n = linspace(-b.item(), end.item(), M, dtype=dtype, device=device,
                 requires_grad=requires_grad)
    return i0((b * b - n.pow(2)).sqrt()) / i0(b)


def hamming(M: int, *, sym: bool = True, dtype=None, layout=strided, device=None,
            requires_grad: bool = False) -> Tensor:
    """The Hamming window 0.54 - 0.46 cos(2 pi n / (M - 1))."""
    return general_hamming(M, sym=sym, dtype=dtype, layout=layout, device=device,
                           requires_grad=requires_grad)


def hann(M: int, *, sym: bool = True, dtype=None, layout=strided, device=None,
         requires_grad: bool = False) -> Tensor:
    """The Hann window 0.5 - 0.5 cos(2 pi n / (M - 1))."""
    return general_hamming(M, alpha=0.5, sym=sym, dtype=dtype, layout=layout, device=device,
                           requires_grad=requires_grad)


def blackman(M: int, *, sym: bool = True, dtype=None, layout=strided, device=None,
             requires_grad: bool = False) -> Tensor:
    """The Blackman window 0.42 - 0.5 cos(2 pi n / (M - 1)) + 0.08 cos(4 pi n / (M - 1))."""
    dtype = _checked_dtype("blackman", M, dtype, layout)
    return general_cosine(M, a=[0.42, 0.5, 0.08], sym=sym, dtype=dtype, layout=layout,
                          device=device, requires_grad=requires_grad)


def bartlett(M: int, *, sym: bool = True, dtype=None, layout=strided, device=None,
             requires_grad: bool = False) -> Tensor:
    """The Bartlett (triangular) window 1 - |2n / (M - 1) - 1|."""
    dtype = _checked_dtype("bartlett", M, dtype, layout)
    if M <= 1:
        return ones((M,), dtype=dtype, device=device, requires_grad=requires_grad)
    step = 2 / _denominator(M, sym)
    n = linspace(-1, -1 + (M - 1) * step, M, dtype=dtype, device=device,
                 requires_grad=requires_grad)
    return 1 - n.abs()


def general_cosine(M, *, a: Iterable, sym: bool = True, dtype=None, layout=strided,
                   device=None, requires_grad: bool = False) -> Tensor:
    """The generalized cosine window sum_k (-1)^k a_k cos(2 pi k n / (M - 1))."""
    dtype = _checked_dtype("general_cosine", M, dtype, layout)
    if M <= 1:
        return ones((M,), dtype=dtype, device=device, requires_grad=requires_grad)
    if not isinstance(a, Iterable):
        raise TypeError("Coefficients must be a list/tuple")
    if not a:
        raise ValueError("Coefficients cannot be empty")
    step = 2 * math.pi / _denominator(M, sym)
    n = linspace(0, (M - 1) * step, M, dtype=dtype, device=device, requires_grad=requires_grad)
    coefficients = tensor([(-1) ** k * w for k, w in enumerate(a)], dtype=dtype, device=device,
                          requires_grad=requires_grad)
    k = arange(coefficients.shape[0], dtype=dtype, device=device, requires_grad=requires_grad)
    return (coefficients.unsqueeze(-1) * (k.unsqueeze(-1) * n).cos()).sum(0)


def general_hamming(M, *, alpha: float = 0.54, sym: bool = True, dtype=None, layout=strided,
                    device=None, requires_grad: bool = False) -> Tensor:
    """The generalized Hamming window alpha - (1 - alpha) cos(2 pi n / (M - 1))."""
    return general_cosine(M, a=[alpha, 1.0 - alpha], sym=sym, dtype=dtype, layout=layout,
                          device=device, requires_grad=requires_grad)


def nuttall(M: int, *, sym: bool = True, dtype=None, layout=strided, device=None,
            requires_grad: bool = False) -> Tensor:
    """Nuttall's minimum 4-term Blackman-Harris window."""
    return general_cosine(M, a=[0.3635819, 0.4891775, 0.1365995, 0.0106411], sym=sym,
                          dtype=dtype, layout=layout, device=device,
                          requires_grad=requires_grad)
