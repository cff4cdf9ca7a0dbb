"""masked_tensor and as_masked_tensor, the MaskedTensor factories (as torch.tensor and
torch.as_tensor: a new leaf, or a tensor that keeps its data's history)."""

from __future__ import annotations

from .core import MaskedTensor

__all__ = ["as_masked_tensor", "masked_tensor"]


def masked_tensor(data, mask, requires_grad: bool = False) -> MaskedTensor:
    """A MaskedTensor of data and mask, a new leaf (requiring grad if asked)."""
    return MaskedTensor(data, mask, requires_grad)


def as_masked_tensor(data, mask) -> MaskedTensor:
    """A MaskedTensor of data and mask through which gradients reach data."""
    return MaskedTensor._from_values(data, mask)
