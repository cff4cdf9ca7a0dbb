"""Forward-mode AD: dual tensors whose tangents are propagated as each op runs.

The dispatch path computes an output's tangent from the op record's JVP rule while a dual level
is active; the engine is not involved.
"""

from __future__ import annotations

import weakref
from typing import NamedTuple

__all__ = ["dual_level", "make_dual", "unpack_dual", "enter_dual_level", "exit_dual_level",
           "UnpackedDualTensor"]


class _State:
    level = 0  # 0: no dual level active; tangents are ignored
    duals: list = []


state = _State()


def enter_dual_level() -> int:
    """Start a dual level (only one may be active, as in PyTorch's default use)."""
    if state.level:
        raise RuntimeError("Nested forward mode AD is not supported at the moment")
    state.level = 1
    state.duals = []
    return 0


def exit_dual_level(*, level: int | None = None) -> None:
    """End the dual level: every dual tensor made in it loses its tangent."""
    for ref in state.duals:
        t = ref()
        if t is not None and t._extra:
            t._extra.pop("tangent", None)
    state.duals = []
    state.level = 0


class dual_level:
    """Context manager for a forward-mode AD level."""

    def __enter__(self) -> int:
        return enter_dual_level()

    def __exit__(self, *exc) -> None:
        exit_dual_level()


class UnpackedDualTensor(NamedTuple):
    primal: object
    tangent: object


def get_tangent(tensor):
    """The tangent of a tensor at the active level, or None."""
    extra = tensor._extra
    return extra.get("tangent") if extra else None


def set_tangent(tensor, tangent) -> None:
    tensor._extra_dict()["tangent"] = tangent
    state.duals.append(weakref.ref(tensor))


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
    if not tensor.is_floating_point():
        raise ValueError(f"make_dual: expected a floating point primal, got {tensor.dtype}")
    dual = tensor.view_as(tensor)
    set_tangent(dual, tangent if tangent.dtype == tensor.dtype else tangent.to(tensor.dtype))
    return dual


def unpack_dual(tensor, *, level: int | None = None) -> UnpackedDualTensor:
    """``(primal, tangent)`` of a dual tensor; tangent is None for a plain tensor."""
    tangent = get_tangent(tensor) if state.level else None
    if tangent is None:
        return UnpackedDualTensor(tensor, None)
    primal = tensor.view_as(tensor)
    return UnpackedDualTensor(primal, tangent)


def _check_forward(func, inputs, wrt, numerical, atol, rtol, raise_exception) -> bool:
    """gradcheck(check_forward_ad=True): JVP columns against the numerical Jacobian."""
    from .._backend import xp
    from .._creation import zeros_like
    from .gradcheck import GradcheckError, _as_tuple

    for k, i in enumerate(wrt):
        x = inputs[i]
        for j in range(x.numel()):
            seed = zeros_like(x)
            seed._data.reshape(-1)[j] = 1
            with dual_level():
                args = list(inputs)
                args[i] = make_dual(x, seed)
                outs = [o for o in _as_tuple(func(*args)) if hasattr(o, "_data")]
                tangents = [unpack_dual(o).tangent for o in outs]
            for o, t in enumerate(tangents):
                column = numerical[o][k][j]
                got = xp.zeros_like(column) if t is None else t._data.astype(xp.float64).ravel()
                if not xp.allclose(got, column, rtol=rtol, atol=atol):
                    if not raise_exception:
                        return False
                    raise GradcheckError(
                        f"Jacobian computed with forward mode mismatch for output {o} with "
                        f"respect to input {i},\nnumerical:{column}\nanalytical:{got}\n")
    return True
