"""Shape helpers shared by the op families: dim normalisation, sum_to, shape errors."""

from __future__ import annotations

__all__ = ["normalize_dim", "normalize_dims", "sum_to", "size_tuple"]


def normalize_dim(dim: int, ndim: int, op: str = "") -> int:
    """A dim in ``range(ndim)``; IndexError in PyTorch's words when it is out of range."""
    low, high = (-1, 0) if ndim == 0 else (-ndim, ndim - 1)
    if not isinstance(dim, int) or isinstance(dim, bool):
        raise TypeError(f"{op}: dim must be an int, got {type(dim).__name__}")
    if not low <= dim <= high:
        raise IndexError(
            f"{op}: Dimension out of range (expected to be in range of "
            f"[{low}, {high}], but got {dim})"
        )
    return dim % max(ndim, 1)


def normalize_dims(dim, ndim: int, op: str = "") -> tuple[int, ...]:
    """A tuple of dims (all dims for None)."""
    if dim is None:
        return tuple(range(ndim))
    if isinstance(dim, int):
        dim = (dim,)
    dims = tuple(normalize_dim(d, ndim, op) for d in dim)
    if len(set(dims)) != len(dims):
        raise RuntimeError(f"{op}: dim {dims} appears multiple times in the list of dims")
    return dims


def size_tuple(size) -> tuple[int, ...]:
    """Accept ``f(2, 3)``, ``f((2, 3))`` and ``f([2, 3])`` the way PyTorch does."""
    if (
        len(size) == 1
        and isinstance(size[0], (tuple, list))
        or (len(size) == 1 and hasattr(size[0], "__iter__") and not hasattr(size[0], "shape"))
    ):
        size = tuple(size[0])
    return tuple(int(s) for s in size)


def sum_to(array, shape: tuple[int, ...]):
    """Sum a broadcast array back down to ``shape``."""
    if array.shape == shape:
        return array
    lead = array.ndim - len(shape)
    axes = tuple(range(lead)) + tuple(
        i + lead for i, s in enumerate(shape) if s == 1 and array.shape[i + lead] != 1
    )
    out = array.sum(axis=axes, keepdims=True) if axes else array
    return out.reshape(shape) if lead or out.shape != shape else out
