"""Padding layers: constant (and zero), reflection, replication and circular, 1-3 dims."""

from __future__ import annotations

from ...tensor import Tensor
from .. import functional as F
from .module import Module

__all__ = ["ConstantPad1d", "ConstantPad2d", "ConstantPad3d", "ZeroPad1d", "ZeroPad2d",
           "ZeroPad3d", "ReflectionPad1d", "ReflectionPad2d", "ReflectionPad3d",
           "ReplicationPad1d", "ReplicationPad2d", "ReplicationPad3d", "CircularPad1d",
           "CircularPad2d", "CircularPad3d"]


class _PadNd(Module):
    """Pads the last n dims by ``padding``: an int for all sides, or (left, right, top, ...)."""

    _n = 1
    _mode = "constant"

    def __init__(self, padding) -> None:
        super().__init__()
        n = 2 * self._n
        self.padding = (padding,) * n if isinstance(padding, int) else tuple(padding)
        if len(self.padding) != n:
            raise ValueError(f"{type(self).__name__}: padding must have {n} elements, got "
                             f"{len(self.padding)}")

    def forward(self, input: Tensor) -> Tensor:
        return F.pad(input, self.padding, self._mode)

    def extra_repr(self) -> str:
        return f"{self.padding}"


class _ConstantPadNd(_PadNd):
    def __init__(self, padding, value: float) -> None:
        super().__init__(padding)
        self.value = value

    def forward(self, input: Tensor) -> Tensor:
        return F.pad(input, self.padding, "constant", self.value)

    def extra_repr(self) -> str:
        return f"padding={self.padding}, value={self.value}"


class ConstantPad1d(_ConstantPadNd):
    """Pads the last dim with a constant."""


class ConstantPad2d(_ConstantPadNd):
    """Pads the last two dims with a constant."""

    _n = 2


class ConstantPad3d(_ConstantPadNd):
    """Pads the last three dims with a constant."""

    _n = 3


class ZeroPad1d(ConstantPad1d):
    """Pads the last dim with zeros."""

    def __init__(self, padding) -> None:
        super().__init__(padding, 0.0)

    def extra_repr(self) -> str:
        return f"{self.padding}"


class ZeroPad2d(ConstantPad2d):
    """Pads the last two dims with zeros."""

    def __init__(self, padding) -> None:
        super().__init__(padding, 0.0)

    def extra_repr(self) -> str:
        return f"{self.padding}"


class ZeroPad3d(ConstantPad3d):
    """Pads the last three dims with zeros."""

    def __init__(self, padding) -> None:
        super().__init__(padding, 0.0)

    def extra_repr(self) -> str:
        return f"{self.padding}"


class _ReflectionPadNd(_PadNd):
    _mode = "reflect"


class ReflectionPad1d(_ReflectionPadNd):
    """Pads the last dim with its reflection (the edge not repeated)."""


class ReflectionPad2d(_ReflectionPadNd):
    """Pads the last two dims with their reflection."""

    _n = 2


class ReflectionPad3d(_ReflectionPadNd):
    """Pads the last three dims with their reflection."""

    _n = 3


class _ReplicationPadNd(_PadNd):
    _mode = "replicate"


class ReplicationPad1d(_ReplicationPadNd):
    """Pads the last dim by repeating its edge values."""


class ReplicationPad2d(_ReplicationPadNd):
    """Pads the last two dims by repeating their edge values."""

    _n = 2


class ReplicationPad3d(_ReplicationPadNd):
    """Pads the last three dims by repeating their edge values."""

    _n = 3


class _CircularPadNd(_PadNd):
    _mode = "circular"


class CircularPad1d(_CircularPadNd):
    """Pads the last dim periodically (wrapping around)."""


class CircularPad2d(_CircularPadNd):
    """Pads the last two dims periodically."""

    _n = 2


class CircularPad3d(_CircularPadNd):
    """Pads the last three dims periodically."""

    _n = 3
