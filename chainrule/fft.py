"""torch.fft: discrete Fourier transforms with derivative rules (from chainrule.ops.fft)."""

from __future__ import annotations

from .ops import _out
from .ops.fft import FFT as _FFT
from .tensor import Tensor

globals().update({name: _out.with_out(name, fn) if name in _out.FFT else fn
                  for name, fn in _FFT.items()})

__all__ = ["Tensor", *_FFT]
