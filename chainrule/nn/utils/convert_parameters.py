"""Parameters flattened into one vector, and a vector copied back into parameters."""

from __future__ import annotations

from collections.abc import Iterable

from ...autograd.grad_mode import no_grad
from ...ops.shape import cat
from ...tensor import Tensor

__all__ = ["parameters_to_vector", "vector_to_parameters"]


def parameters_to_vector(parameters: Iterable[Tensor]) -> Tensor:
    """All parameters flattened into one vector (differentiable)."""
    return cat([p.reshape(-1) for p in parameters])


def vector_to_parameters(vec: Tensor, parameters: Iterable[Tensor]) -> None:
    """Copy slices of ``vec`` into the parameters, in order."""
    if not isinstance(vec, Tensor):
        raise TypeError(f"expected torch.Tensor, but got: {type(vec).__name__}")
    offset = 0
    with no_grad():
        for p in parameters:
            n = p.numel()
            p._data[...] = vec._data[offset:offset + n].reshape(p._data.shape)
            offset += n
