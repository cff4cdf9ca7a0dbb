"""debug_unwrap: the tensor a function transform wraps, for looking at it in a debugger.

chainrule's vmap wraps a tensor in a BatchedTensor whose value is the whole batch with the
batch dim in front (PyTorch's keeps the batch dim where it is); grad and jvp wrap nothing, so
their tensors come back as they are.
"""

from __future__ import annotations

from .._batched import BatchedTensor
from ..tensor import Tensor

__all__ = ["debug_unwrap"]


def debug_unwrap(tensor: Tensor, *, recurse: bool = True) -> Tensor:
    """Unwraps a functorch tensor (e.g. BatchedTensor, GradTrackingTensor) to its underlying
    tensor (every level with ``recurse``, else one)."""
    while isinstance(tensor, BatchedTensor):
        tensor = tensor._value
        if not recurse:
            break
    return tensor
