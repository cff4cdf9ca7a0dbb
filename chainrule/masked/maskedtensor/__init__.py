"""torch.masked.maskedtensor: the MaskedTensor class and the operations it supports."""

from . import binary, passthrough, reductions, unary  # noqa: F401  (they bind the methods)
from .core import MaskedTensor, is_masked_tensor
from .creation import as_masked_tensor, masked_tensor

__all__ = ["MaskedTensor", "is_masked_tensor", "as_masked_tensor", "masked_tensor"]
