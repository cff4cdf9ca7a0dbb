"""``torch.backends`` as PyTorch's CPU build answers it: no CUDA, cuDNN or MPS; their flags are
settable attributes that change nothing here. The CPU libraries PyTorch links (MKL, oneDNN,
OpenMP, NNPACK, XNNPACK, KleidiAI) are not used by chainrule, so they answer "not available"."""

from __future__ import annotations

from . import (
    cpu,
    cuda,
    cudnn,
    cusparselt,
    kleidiai,
    mha,
    miopen,
    mkl,
    mkldnn,
    mps,
    nnpack,
    openmp,
    opt_einsum,
    quantized,
)

__all__ = ["cpu", "cuda", "cudnn", "cusparselt", "kleidiai", "mha", "miopen", "mkl", "mkldnn",
           "mps", "nnpack", "openmp", "opt_einsum", "quantized"]
