"""Memory-format conversion of convolution weights: NumPy arrays have one layout, so a no-op."""

from __future__ import annotations

__all__ = ["convert_conv2d_weight_memory_format", "convert_conv3d_weight_memory_format"]


def convert_conv2d_weight_memory_format(module, memory_format):
    """Return ``module``: chainrule keeps one memory layout, so there is nothing to convert."""
    return module


def convert_conv3d_weight_memory_format(module, memory_format):
    """Return ``module``: chainrule keeps one memory layout, so there is nothing to convert."""
    return module
