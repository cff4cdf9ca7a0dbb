"""Forward-mode AD: dual tensors whose tangents are propagated as each op runs.

The dispatch path computes an output's tangent from the op record's JVP rule while a dual level
is active; the engine is not involved.
"""

from __future__ import annotations

import threading
import weakref
from typing import NamedTuple

from .._batched import BatchedTensor, batched
from .._modes import Mode, pop, push
from ..tensor import Tensor

__all__ = ["dual_level", "make_dual", "unpack_dual", "enter_dual_level", "exit_dual_level",
           "UnpackedDualTensor"]


class _State(threading.local):  # per thread (PyTorch's are process-wide: docs/differences.md)
    level = 0  # the number of active dual levels; 0: tangents are ignored
    duals: list = []  # per level, the live tensors given a tangent in it, weakly, by id
    nesting = 0  # levels entered by function transforms (which may nest)


state = _State()


class _Dual(Mode):
    """Forward mode on the stack while some thread has a dual level open; its seam (``dual``,
    dispatch's ``_forward``) computes each output's tangent from the op's JVP rule."""

    order = 30
    name = "forward AD"


DUAL = _Dual()

_NESTED = "Nested forward mode AD is not supported at the moment"


def enter_dual_level() -> int:
    """Start a dual level (only one may be active, as in PyTorch's default use)."""
    if state.level > state.nesting:
        raise RuntimeError(_NESTED)
    return _enter()


def _enter() -> int:
    state.level += 1
    state.duals = state.duals + [weakref.WeakValueDictionary()]
    push(DUAL)
    return state.level - 1


def exit_dual_level(*, level: int | None = None) -> None:
    """End the innermost dual level: every dual tensor made in it loses that tangent."""
    if not state.level:
        raise RuntimeError("exit_dual_level: no forward AD level is active")
    key = state.level
    for t in list(state.duals[-1].values()):
        if t._extra:
            tangents = t._extra.get("tangent")
            if tangents:
                tangents.pop(key, None)
    state.duals = state.duals[:-1]
    state.level -= 1
    pop(DUAL)


class dual_level:
    """Context manager for a forward-mode AD level."""

    def __enter__(self) -> int:
        return enter_dual_level()

    def __exit__(self, *exc) -> None:
        exit_dual_level()


class UnpackedDualTensor(NamedTuple):
    primal: object
    tangent: object


def get_tangent(tensor, level: int | None = None):
    """The tangent of a tensor at ``level`` (the innermost active one by default), or None."""
    extra = tensor._extra
    if not extra:
        return None
    tangents = extra.get("tangent")
    if not tangents:
        return None
    return tangents.get(state.level if level is None else level)


def set_tangent(tensor, tangent, level: int | None = None) -> None:
    level = state.level if level is None else level
    tangents = tensor._extra_dict().get("tangent")
    if tangents is None:
        tangents = tensor._extra["tangent"] = {}
    tangents[level] = tangent
    state.duals[level - 1][id(tensor)] = tensor  # a tensor that dies leaves it


def copy_tangents(source, target) -> None:
    """Give ``target`` the tangents ``source`` has at the active levels."""
    tangents = source._extra.get("tangent") if source._extra else None
    if tangents:
        for level, t in list(tangents.items()):
            if level <= state.level:
                set_tangent(target, t, level)


def detach_keeping_tangents(tensor):
    """``tensor.detach()`` that keeps its forward-mode tangents (forward-over-reverse needs
    them), also those on the values of a batched tensor."""
    if type(tensor) is BatchedTensor:
        out = batched(detach_keeping_tangents(tensor._value), tensor._level)
    elif type(tensor) is Tensor:
        out = tensor._detached()  # backward's own: not a call dispatch modes see
    else:
        out = tensor.detach()
    if state.level:
        copy_tangents(tensor, out)
    return out


def make_dual(tensor, tangent, *, level: int | None = None):
    """A view of ``tensor`` carrying ``tangent`` as its forward-mode derivative."""
    if not state.level:
        raise RuntimeError("make_dual: no forward AD level is active; use it inside "
                           "`with forward_ad.dual_level():`")
    if tangent.shape != tensor.shape:
        raise RuntimeError(f"Trying to set a forward gradient that has a different size than "
                           f"that of the original Tensor, this is not supported. Tensor is of "
                           f"size {list(tensor.shape)} while the given forward gradient is of "
                           f"size {list(tangent.shape)}.")
    if not (tensor.is_floating_point() or tensor._data.dtype.kind == "c"):
        raise ValueError(f"Expected primal to be floating point or complex, but got: "
                         f"{tensor.dtype}")
    key = state.level if level is None else level + 1
    dual = tensor.view_as(tensor)
    set_tangent(dual, tangent if tangent.dtype == tensor.dtype else tangent.to(tensor.dtype), key)
    return dual


def unpack_dual(tensor, *, level: int | None = None) -> UnpackedDualTensor:
    """``(primal, tangent)`` of a dual tensor; tangent is None for a plain tensor."""
    key = state.level if level is None else level + 1
    tangent = get_tangent(tensor, key) if state.level else None
    if tangent is None:
        return UnpackedDualTensor(tensor, None)
    primal = tensor.view_as(tensor)
    primal._extra["tangent"].pop(key, None)
    return UnpackedDualTensor(primal, tangent)
