"""Dropout of elements (Dropout) or of whole channels (Dropout1d/2d/3d)."""

from __future__ import annotations

from ...tensor import Tensor
from .module import Module
from .utils import _functional

__all__ = ["Dropout", "Dropout1d", "Dropout2d", "Dropout3d", "AlphaDropout", "FeatureAlphaDropout"]


class _DropoutNd(Module):
    def __init__(self, p: float = 0.5, inplace: bool = False) -> None:
        super().__init__()
        if p < 0 or p > 1:
            raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")
        self.p, self.inplace = p, inplace

    def forward(self, input: Tensor) -> Tensor:
        return type(self)._function(input, self.p, self.training, self.inplace)

    def extra_repr(self) -> str:
        return f"p={self.p}, inplace={self.inplace}"


class Dropout(_DropoutNd):
    """Zeroes each element with probability p in training and scales the rest by 1 / (1 - p)."""

    _function = _functional("dropout")


class Dropout1d(_DropoutNd):
    """Zeroes whole channels of (N, C, L) or (C, L) inputs with probability p in training."""

    _function = _functional("dropout1d")


class Dropout2d(_DropoutNd):
    """Zeroes whole channels of (N, C, H, W) or (C, H, W) inputs with probability p."""

    _function = _functional("dropout2d")


class Dropout3d(_DropoutNd):
    """Zeroes whole channels of (N, C, D, H, W) or (C, D, H, W) inputs with probability p."""

    _function = _functional("dropout3d")


class AlphaDropout(_DropoutNd):
    """Dropout that keeps the self-normalising mean and variance of SELU activations."""

    _function = _functional("alpha_dropout")


class FeatureAlphaDropout(_DropoutNd):
    """Alpha dropout of whole channels."""

    _function = _functional("feature_alpha_dropout")
