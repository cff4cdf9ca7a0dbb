"""Shape helpers shared by the op families: dim normalisation, sum_to, shape errors, and memory
layouts (PyTorch's memory formats as strides)."""

from __future__ import annotations

__all__ = ["normalize_dim", "normalize_dims", "sum_to", "size_tuple", "format_strides",
           "is_laid_out", "non_overlapping_and_dense", "suggested_format"]


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


# ---- memory formats ------------------------------------------------------------------------------
# A format names where a copy puts its elements: "contiguous" (row-major), "channels_last" and
# "channels_last_3d" (the channels dim, the 3rd or 4th from the end, innermost; dims before the
# last 4 or 5, a vmap batch, stay outermost), or "preserve" (the source's own layout). Strides are
# in elements.


def _dense_order(shape: tuple, strides: tuple, channels: int | None) -> tuple:
    """The dims from innermost to outermost of a row-major layout, with the channels dim
    (counted from the end) moved innermost."""
    order = list(range(len(shape) - 1, -1, -1))
    if channels is not None:
        order.remove(len(shape) - channels)
        order.insert(0, len(shape) - channels)
    return tuple(order)


def _strides_in(shape: tuple, order: tuple, floor: int) -> tuple:
    """Dense strides laying dims out in ``order`` (innermost first); a size below ``floor``
    counts as ``floor`` (PyTorch's row-major strides count empty dims as 1, its channels-last
    ones as they are)."""
    strides = [0] * len(shape)
    step = 1
    for d in order:
        strides[d] = step
        step *= max(shape[d], floor)
    return tuple(strides)


def non_overlapping_and_dense(shape: tuple, strides: tuple) -> bool:
    """Whether the elements fill a block of memory once each (size-1 dims' strides free; no
    elements fill nothing)."""
    if 0 in shape:
        return True
    step = 1
    for d in sorted((d for d in range(len(shape)) if shape[d] >= 2), key=lambda d: strides[d]):
        if strides[d] != step:
            return False
        step *= shape[d]
    return True


def _kept_order(shape: tuple, strides: tuple) -> tuple:
    """The dims from innermost to outermost of a strided layout, as PyTorch keeps it in a dense
    copy: by increasing stride, the smaller size inner among equal ones, and dims of stride 0
    (broadcast) left in place (an insertion sort that never moves an element past them)."""
    order = list(range(len(shape) - 1, -1, -1))
    for i in range(1, len(order)):
        j = i
        for k in range(i - 1, -1, -1):
            a, b = abs(strides[order[k]]), abs(strides[order[j]])
            if a == 0 or b == 0:
                continue
            if a < b:
                break
            if a > b or shape[order[k]] > shape[order[j]]:
                order[k], order[j] = order[j], order[k]
                j = k
    return tuple(order)


def format_strides(shape: tuple, strides: tuple, memory_format: str) -> tuple:
    """The strides of a copy of a tensor of ``shape`` and ``strides`` in ``memory_format``:
    for "preserve", its own strides when its memory is dense without overlap, else dense ones
    in its order (PyTorch's preserve_format)."""
    if memory_format == "channels_last":
        return _strides_in(shape, _dense_order(shape, strides, 3), 0)
    if memory_format == "channels_last_3d":
        return _strides_in(shape, _dense_order(shape, strides, 4), 0)
    if memory_format == "preserve":
        if all(s >= 0 for s in strides) and non_overlapping_and_dense(shape, strides):
            return tuple(strides)
        return _strides_in(shape, _kept_order(shape, strides), 1)
    return _strides_in(shape, _dense_order(shape, strides, None), 1)


def is_laid_out(shape: tuple, strides: tuple, memory_format: str) -> bool:
    """Whether ``strides`` are ``memory_format``'s for ``shape`` (PyTorch's is_contiguous: dims
    of size 1 may have any stride; a tensor without elements is row-major contiguous)."""
    if memory_format == "contiguous" and 0 in shape:
        return True
    channels = {"channels_last": 3, "channels_last_3d": 4}.get(memory_format)
    if channels is not None and len(shape) != channels + 1:
        return False
    step = 1
    for d in _dense_order(shape, strides, channels):
        if shape[d] != 1:
            if strides[d] != step:
                return False
            step *= shape[d]
    return True


def suggested_format(shape: tuple, strides: tuple) -> str:
    """The format a 4-d or 5-d tensor's strides look like (PyTorch's suggest_memory_format):
    channels-last when the strides grow from the channels dim through the spatial dims to the
    batch dim (ties with a channels dim of size 1 read as row-major), else "contiguous"."""
    dims = {4: (1, 3, 2, 0), 5: (1, 4, 3, 2, 0)}.get(len(shape))
    if dims is None or strides[1] == 0:
        return "contiguous"
    least = 0
    for d in dims:
        if shape[d] == 0 or strides[d] < least or (d == 0 and least == strides[1]):
            return "contiguous"
        least = strides[d] * max(shape[d], 1)
    return "channels_last" if len(shape) == 4 else "channels_last_3d"
