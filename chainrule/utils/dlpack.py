"""DLPack exchange, as ``torch.utils.dlpack``: zero-copy with NumPy, PyTorch, JAX and others."""

from .._interop import from_dlpack, to_dlpack

__all__ = ["from_dlpack", "to_dlpack"]
