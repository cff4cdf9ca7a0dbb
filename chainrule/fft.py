"""torch.fft: discrete Fourier transforms with derivative rules (from chainrule.ops.fft)."""

from __future__ import annotations

from .ops.fft import FFT as _FFT

globals().update(_FFT)

__all__ = list(_FFT)
