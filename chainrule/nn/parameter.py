"""nn.Parameter: a tensor that a Module registers as a parameter."""

from __future__ import annotations

from .. import _printing
from .._backend import get_default_dtype, xp
from ..tensor import Tensor

__all__ = ["Parameter", "Buffer"]


class Parameter(Tensor):
    """A tensor that is a module parameter: requires grad by default, shares ``data``."""

    def __init__(self, data: Tensor | None = None, requires_grad: bool = True) -> None:
        if data is None:
            array = xp.zeros((0,), dtype=get_default_dtype().np)
        else:
            array = data._data if isinstance(data, Tensor) else xp.asarray(data)
        self._init_leaf(array, data._vc if isinstance(data, Tensor) else None)
        if requires_grad:
            self.requires_grad_(True)

    def __repr__(self) -> str:
        return "Parameter containing:\n" + _printing.format_tensor(
            self._data, dtype_name=self.dtype.name, show_dtype=self._show_dtype(),
            suffixes=["requires_grad=True"] if self._requires_grad else [])

    __str__ = __repr__

    def _show_dtype(self) -> bool:
        return self._data.dtype not in (get_default_dtype().np, xp.int64, xp.bool_)

    def __deepcopy__(self, memo: dict) -> Parameter:
        if id(self) not in memo:
            copy = Tensor._wrap(self._data.copy(), None, 0)
            memo[id(self)] = Parameter(copy, self._requires_grad)
        return memo[id(self)]


class Buffer(Tensor):
    """Marks a tensor to be registered as a module buffer when assigned as an attribute."""

    def __init__(self, data: Tensor | None = None, *, persistent: bool = True) -> None:
        self._init_leaf(data._data if isinstance(data, Tensor) else xp.asarray(data))
        self.persistent = persistent
