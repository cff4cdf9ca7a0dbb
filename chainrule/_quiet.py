"""PyTorch's silent IEEE results: NumPy's floating-point warnings off inside chainrule only.

NumPy keeps its error state (warn on divide by zero, overflow, invalid value) in a context
variable. Kernels run through ``quiet_run(f, *args)``: the bound ``run`` of one context whose
state is "ignore" (entering a context costs a fifth of setting and resetting the variable), so
``log(0)`` is ``-inf`` without a warning, and the host program's own ``np.log(0)`` still warns.
A context is entered by one caller at a time: when it is busy (another thread's kernel, or a
kernel calling ``apply``), ``run_busy`` runs the call under ``quiet()`` instead; ``run_quiet``
does both (``apply`` inlines it).
``token = enter()`` ... ``leave(token)`` quiets a longer stretch (a whole backward).
"""

from __future__ import annotations

import contextvars
from contextlib import contextmanager

from ._backend import xp

__all__ = ["enter", "leave", "quiet", "quiet_run", "run_busy", "run_quiet"]

try:  # NumPy 2: the state is a context variable
    from numpy._core._ufunc_config import _extobj_contextvar as _state
except ImportError:  # pragma: no cover - NumPy 1.26 keeps a per-thread error object

    def enter():
        token = xp.geterrobj()
        xp.seterrobj(_QUIET)
        return token

    leave = xp.seterrobj
    with xp.errstate(all="ignore"):
        _QUIET = xp.geterrobj()

    def quiet_run(f, *args, **kwargs):
        token = enter()
        try:
            return f(*args, **kwargs)
        finally:
            leave(token)
else:
    leave = _state.reset
    with xp.errstate(all="ignore"):
        _QUIET = _state.get()

    def enter():
        return _state.set(_QUIET)

    _context = contextvars.Context()
    _context.run(enter)
    quiet_run = _context.run


@contextmanager
def quiet():
    """No floating-point warnings inside the block (nor raises after ``np.seterr``)."""
    token = enter()
    try:
        yield
    finally:
        leave(token)


def run_busy(err: RuntimeError, f, *args, **kwargs):
    """``quiet_run`` failed with ``err``: if only because its context was in use, run ``f``."""
    if not str(err).startswith("cannot enter context"):
        raise err
    with quiet():
        return f(*args, **kwargs)


def run_quiet(f, *args, **kwargs):
    """``f(*args, **kwargs)`` without floating-point warnings (``quiet_run`` and its fallback)."""
    try:
        return quiet_run(f, *args, **kwargs)
    except RuntimeError as err:
        return run_busy(err, f, *args, **kwargs)
