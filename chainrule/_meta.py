"""The meta device's memory: arrays with a shape, a dtype and strides, and no data."""

from __future__ import annotations

from ._backend import xp

__all__ = ["MetaArray"]


class MetaArray:
    """An array of the meta device: shape, dtype and strides only."""

    __slots__ = ("shape", "dtype", "strides")

    def __init__(self, shape, dtype, strides=None) -> None:
        self.shape = tuple(int(s) for s in shape)
        self.dtype = xp.dtype(dtype)
        self.strides = _contiguous(self.shape, self.dtype.itemsize) if strides is None else strides

    @property
    def ndim(self) -> int:
        return len(self.shape)

    @property
    def size(self) -> int:
        n = 1
        for s in self.shape:
            n *= s
        return n

    @property
    def itemsize(self) -> int:
        return self.dtype.itemsize


def _contiguous(shape: tuple, itemsize: int) -> tuple:
    strides, step = [], itemsize
    for s in reversed(shape):
        strides.append(step)
        step *= max(s, 1)
    return tuple(reversed(strides))


def zeros(shape, dtype) -> MetaArray:
    return MetaArray(_shape(shape), dtype)


ones = empty = zeros


def full(shape, fill_value, dtype=None) -> MetaArray:
    return MetaArray(_shape(shape), xp.asarray(fill_value).dtype if dtype is None else dtype)


def arange(*args, dtype=None) -> MetaArray:
    return MetaArray((len(range(*(int(a) for a in args))) if all(isinstance(a, int) for a in args)
                      else xp.arange(*args).size,), xp.arange(0, dtype=dtype).dtype)


def linspace(start, end, steps, dtype=None) -> MetaArray:
    return MetaArray((steps,), dtype)


def eye(n, m=None, dtype=None) -> MetaArray:
    return MetaArray((n, n if m is None else m), dtype)


def _shape(shape) -> tuple:
    return (shape,) if isinstance(shape, int) else tuple(shape)
