"""Pooling: max and average pooling over windows, and adaptive pooling to a fixed size."""

from __future__ import annotations

from ...ops._nnutil import ntuple
from ...tensor import Tensor
from .. import functional as F
from .module import Module
from .utils import _functional, _single

__all__ = ["MaxPool1d", "MaxPool2d", "MaxPool3d", "AvgPool1d", "AvgPool2d", "AvgPool3d",
           "AdaptiveAvgPool1d", "AdaptiveAvgPool2d", "AdaptiveAvgPool3d", "AdaptiveMaxPool1d",
           "AdaptiveMaxPool2d", "AdaptiveMaxPool3d", "LPPool1d", "LPPool2d", "LPPool3d",
           "MaxUnpool1d", "MaxUnpool2d", "MaxUnpool3d", "FractionalMaxPool2d",
           "FractionalMaxPool3d"]


class _MaxPoolNd(Module):
    def __init__(self, kernel_size, stride=None, padding=0, dilation=1,
                 return_indices: bool = False, ceil_mode: bool = False) -> None:
        super().__init__()
        self.kernel_size = kernel_size
        self.stride = kernel_size if stride is None else stride
        self.padding, self.dilation = padding, dilation
        self.return_indices, self.ceil_mode = return_indices, ceil_mode

    def extra_repr(self) -> str:
        return (f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}, "
                f"dilation={self.dilation}, ceil_mode={self.ceil_mode}")

    def forward(self, input: Tensor):
        return type(self)._function(input, self.kernel_size, self.stride, self.padding,
                                    self.dilation, ceil_mode=self.ceil_mode,
                                    return_indices=self.return_indices)


class MaxPool1d(_MaxPoolNd):
    """Maximum over sliding windows of (N, C, L) or (C, L) inputs."""

    _function = _functional("max_pool1d")


class MaxPool2d(_MaxPoolNd):
    """Maximum over sliding windows of (N, C, H, W) or (C, H, W) inputs."""

    _function = _functional("max_pool2d")


class MaxPool3d(_MaxPoolNd):
    """Maximum over sliding windows of (N, C, D, H, W) or (C, D, H, W) inputs."""

    _function = _functional("max_pool3d")


class _AvgPoolNd(Module):
    def extra_repr(self) -> str:
        return f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}"


class AvgPool1d(_AvgPoolNd):
    """Mean over sliding windows of (N, C, L) or (C, L) inputs."""

    def __init__(self, kernel_size, stride=None, padding=0, ceil_mode: bool = False,
                 count_include_pad: bool = True) -> None:
        super().__init__()
        # As in PyTorch, the 1-d pool keeps its sizes as 1-tuples (and prints them so).
        self.kernel_size = _single(kernel_size)
        self.stride = _single(kernel_size if stride is None else stride)
        self.padding = _single(padding)
        self.ceil_mode, self.count_include_pad = ceil_mode, count_include_pad

    def forward(self, input: Tensor) -> Tensor:
        return F.avg_pool1d(input, self.kernel_size, self.stride, self.padding, self.ceil_mode,
                            self.count_include_pad)


class _AvgPool(_AvgPoolNd):
    def __init__(self, kernel_size, stride=None, padding=0, ceil_mode: bool = False,
                 count_include_pad: bool = True, divisor_override: int | None = None) -> None:
        super().__init__()
        self.kernel_size = kernel_size
        self.stride = kernel_size if stride is None else stride
        self.padding, self.ceil_mode = padding, ceil_mode
        self.count_include_pad, self.divisor_override = count_include_pad, divisor_override

    def forward(self, input: Tensor) -> Tensor:
        return type(self)._function(input, self.kernel_size, self.stride, self.padding,
                                    self.ceil_mode, self.count_include_pad,
                                    self.divisor_override)


class AvgPool2d(_AvgPool):
    """Mean over sliding windows of (N, C, H, W) or (C, H, W) inputs."""

    _function = _functional("avg_pool2d")


class AvgPool3d(_AvgPool):
    """Mean over sliding windows of (N, C, D, H, W) or (C, D, H, W) inputs."""

    _function = _functional("avg_pool3d")


class _AdaptiveAvgPoolNd(Module):
    def __init__(self, output_size) -> None:
        super().__init__()
        self.output_size = output_size

    def forward(self, input: Tensor) -> Tensor:
        return type(self)._function(input, self.output_size)

    def extra_repr(self) -> str:
        return f"output_size={self.output_size}"


class AdaptiveAvgPool1d(_AdaptiveAvgPoolNd):
    """Mean pooling of (N, C, L) or (C, L) inputs to a fixed length."""

    _function = _functional("adaptive_avg_pool1d")


class AdaptiveAvgPool2d(_AdaptiveAvgPoolNd):
    """Mean pooling to a fixed output size (None keeps that dim's input size)."""

    _function = _functional("adaptive_avg_pool2d")


class AdaptiveAvgPool3d(_AdaptiveAvgPoolNd):
    """Mean pooling of 3-D volumes to a fixed output size."""

    _function = _functional("adaptive_avg_pool3d")


class _AdaptiveMaxPoolNd(Module):
    def __init__(self, output_size, return_indices: bool = False) -> None:
        super().__init__()
        self.output_size, self.return_indices = output_size, return_indices

    def forward(self, input: Tensor):
        return type(self)._function(input, self.output_size, self.return_indices)

    def extra_repr(self) -> str:
        return f"output_size={self.output_size}"


class AdaptiveMaxPool1d(_AdaptiveMaxPoolNd):
    """Max pooling of (N, C, L) or (C, L) inputs to a fixed length."""

    _function = _functional("adaptive_max_pool1d")


class AdaptiveMaxPool2d(_AdaptiveMaxPoolNd):
    """Max pooling to a fixed output size (None keeps that dim's input size)."""

    _function = _functional("adaptive_max_pool2d")


class AdaptiveMaxPool3d(_AdaptiveMaxPoolNd):
    """Max pooling of 3-D volumes to a fixed output size (None keeps that dim's input size)."""

    _function = _functional("adaptive_max_pool3d")


class _LPPoolNd(Module):
    def __init__(self, norm_type: float, kernel_size, stride=None,
                 ceil_mode: bool = False) -> None:
        super().__init__()
        self.norm_type, self.kernel_size = norm_type, kernel_size
        self.stride, self.ceil_mode = stride, ceil_mode

    def forward(self, input: Tensor) -> Tensor:
        return type(self)._function(input, float(self.norm_type), self.kernel_size, self.stride,
                                    self.ceil_mode)

    def extra_repr(self) -> str:
        return (f"norm_type={self.norm_type}, kernel_size={self.kernel_size}, "
                f"stride={self.stride}, ceil_mode={self.ceil_mode}")


class LPPool1d(_LPPoolNd):
    """The p-norm over sliding windows of (N, C, L) or (C, L) inputs."""

    _function = _functional("lp_pool1d")


class LPPool2d(_LPPoolNd):
    """The p-norm over sliding windows of (N, C, H, W) or (C, H, W) inputs."""

    _function = _functional("lp_pool2d")


class LPPool3d(_LPPoolNd):
    """The p-norm over sliding windows of (N, C, D, H, W) or (C, D, H, W) inputs."""

    _function = _functional("lp_pool3d")


class _MaxUnpoolNd(Module):
    _nd = 2

    def __init__(self, kernel_size, stride=None, padding=0) -> None:
        super().__init__()
        nd = self._nd
        self.kernel_size = ntuple(kernel_size, nd, type(self).__name__)
        self.stride = ntuple(kernel_size if stride is None else stride, nd, type(self).__name__)
        self.padding = ntuple(padding, nd, type(self).__name__)

    def forward(self, input: Tensor, indices: Tensor, output_size=None) -> Tensor:
        return type(self)._function(input, indices, self.kernel_size, self.stride, self.padding,
                                    output_size)

    def extra_repr(self) -> str:
        return f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}"


class MaxUnpool1d(_MaxUnpoolNd):
    """The inverse of MaxPool1d: values put back at their indices, zeros elsewhere."""

    _nd = 1
    _function = _functional("max_unpool1d")


class MaxUnpool2d(_MaxUnpoolNd):
    """The inverse of MaxPool2d: values put back at their indices, zeros elsewhere."""

    _nd = 2
    _function = _functional("max_unpool2d")


class MaxUnpool3d(_MaxUnpoolNd):
    """The inverse of MaxPool3d: values put back at their indices, zeros elsewhere."""

    _nd = 3
    _function = _functional("max_unpool3d")


class _FractionalMaxPoolNd(Module):
    _nd = 2

    def __init__(self, kernel_size, output_size=None, output_ratio=None,
                 return_indices: bool = False, _random_samples=None) -> None:
        super().__init__()
        nd, name = self._nd, type(self).__name__
        self.kernel_size = ntuple(kernel_size, nd, name)
        self.return_indices = return_indices
        self.register_buffer("_random_samples", _random_samples)
        self.output_size = None if output_size is None else ntuple(output_size, nd, name)
        self.output_ratio = None if output_ratio is None else (
            tuple(output_ratio) if isinstance(output_ratio, (tuple, list))
            else (output_ratio,) * nd)
        if output_size is None and output_ratio is None:
            raise ValueError(f"{name} requires specifying either an output size, or a pooling "
                             "ratio")
        if output_size is not None and output_ratio is not None:
            raise ValueError("only one of output_size and output_ratio may be specified")
        if self.output_ratio is not None and not all(0 < r < 1 for r in self.output_ratio):
            raise ValueError(f"output_ratio must be between 0 and 1 (got {output_ratio})")

    def forward(self, input: Tensor):
        return type(self)._function(input, self.kernel_size, self.output_size, self.output_ratio,
                                    self.return_indices, _random_samples=self._random_samples)


class FractionalMaxPool2d(_FractionalMaxPoolNd):
    """Max over pseudorandom, overlapping windows that shrink (N, C, H, W) or (C, H, W) inputs
    to output_size (or by output_ratio)."""

    _nd = 2
    _function = _functional("fractional_max_pool2d")


class FractionalMaxPool3d(_FractionalMaxPoolNd):
    """Max over pseudorandom, overlapping windows that shrink (N, C, D, H, W) or (C, D, H, W)
    inputs to output_size (or by output_ratio)."""

    _nd = 3
    _function = _functional("fractional_max_pool3d")
