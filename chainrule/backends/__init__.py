"""``torch.backends`` as PyTorch's CPU build answers it: no CUDA, cuDNN or MPS; their flags are
settable attributes that change nothing here."""

from __future__ import annotations

from . import cpu, cuda, cudnn, mps

__all__ = ["cpu", "cuda", "cudnn", "mps"]
