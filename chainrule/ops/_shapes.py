"""The shape helpers for the op families (they live below the tensor: ``chainrule._shapes``)."""

from .._shapes import format_strides, normalize_dim, normalize_dims, size_tuple, sum_to

__all__ = ["normalize_dim", "normalize_dims", "sum_to", "size_tuple", "format_strides"]
