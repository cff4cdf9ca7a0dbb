"""``Variable``: PyTorch's deprecated wrapper, kept for old scripts; every tensor is one."""

from __future__ import annotations

import warnings

from .._creation import zeros
from ..tensor import Tensor
from . import engine
from .graph import _is_checkpoint_valid

__all__ = ["VariableMeta", "Variable"]


class VariableMeta(type):
    """Makes every tensor an instance of Variable."""

    def __instancecheck__(cls, obj) -> bool:
        return isinstance(obj, Tensor)


class _EngineBase:
    """The autograd engine as PyTorch exposes it (``Variable._execution_engine``)."""

    def queue_callback(self, callback) -> None:
        """Run ``callback()`` when the running backward has finished."""
        engine.queue_callback(callback)

    def is_checkpoint_valid(self) -> bool:
        """False inside autograd.grad() or backward(inputs=...)."""
        return _is_checkpoint_valid()


class Variable(metaclass=VariableMeta):
    """Deprecated: ``Variable(t, requires_grad)`` returns ``t`` detached (same storage) with
    requires_grad set, as PyTorch does today."""

    _execution_engine = _EngineBase()

    def __new__(cls, data: Tensor | None = None, requires_grad: bool = False,
                volatile: bool = False) -> Tensor:
        if data is None:
            data = zeros(0)
        if not isinstance(data, Tensor):
            raise TypeError(f"Variable data has to be a tensor, but got {type(data).__name__}")
        if volatile:
            warnings.warn("volatile was removed and now has no effect. Use `with torch.no_grad():`"
                          " instead.", UserWarning, stacklevel=2)
        return data.detach().requires_grad_(bool(requires_grad))
