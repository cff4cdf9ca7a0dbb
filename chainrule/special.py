"""torch.special: special functions (from chainrule.ops.special), softmax and log_softmax."""

from __future__ import annotations

from .ops import activation as _activation
from .ops.special import SPECIAL as _SPECIAL
from .tensor import Tensor as _Tensor

globals().update(_SPECIAL)


def softmax(input, dim: int, *, dtype=None) -> _Tensor:
    """exp(x_i) / sum_j exp(x_j) along ``dim`` (computed stably)."""
    _check("special_softmax", input)
    return _activation.softmax(input, dim, dtype)


def log_softmax(input, dim: int, *, dtype=None) -> _Tensor:
    """log(softmax(x)) along ``dim``, computed without forming the softmax."""
    _check("special_log_softmax", input)
    return _activation.log_softmax(input, dim, dtype)


def _check(fn: str, input) -> None:
    if not isinstance(input, _Tensor):
        raise TypeError(f"{fn}(): argument 'input' (position 1) must be Tensor, not "
                        f"{type(input).__name__}")


__all__ = sorted([*_SPECIAL, "softmax", "log_softmax"])
