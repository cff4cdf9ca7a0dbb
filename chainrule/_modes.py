"""The stack of modes: every way an op call can be intercepted is one level here.

Dispatch, the engine and the in-place/view path consult one object, ``stack``. Its ``modes``
slot is None while no mode is active in any thread: that is the one check a plain op pays.
Otherwise it is the tuple of active modes, outermost first (by ``Mode.order``), and each seam
slot holds what the modes acting there installed, computed when a mode is pushed or popped,
never per op:

====================  ===========================  ==============================================
seam (stack slot)     modes                        what it does to an op call
====================  ===========================  ==============================================
``function``          torch function modes and     user code sees the public call first
                      subclasses (overrides.py)    (``__torch_function__``; above dispatch)
``op``                op wrappers: the profiler    wraps the whole call (a record per op)
``batched``           vmap levels (_batching)      unwraps the innermost level, runs the op's
                                                   batching rule, wraps the results
``dispatch``          dispatch modes (below        see each kernel-level call, forward and
                      autograd)                    backward: (op, args, kwargs)
``capture``           chainrule.compile (_compile) records each kernel, write and stored grad
``traced``            anomaly mode                 a node just recorded keeps the user's
                      (autograd/anomaly_mode)      traceback of the forward call
``saved``             saved-tensor hooks           a node's saved values go through the pack hook
                      (autograd/graph)
``dual``              forward-mode dual levels     computes the outputs' tangents (JVP rules)
``node``              node wrappers: profiler,     wraps each node the engine runs
                      anomaly mode, gradient
                      report
====================  ===========================  ==============================================

Gradient recording is the base level: the inputs select it (one that requires grad, as
PyTorch's Autograd key comes from the tensors) and grad mode switches it off, so it needs no
entry here. Modes whose state is per thread (vmap levels, dual levels, saved-tensor hooks) are
on the stack while some thread is inside one; their seams read their thread's state first.
"""

from __future__ import annotations

import threading
from collections.abc import Callable

__all__ = ["Mode", "stack", "push", "pop", "RUN", "ForeignArgument", "Call", "seen"]

RUN = object()  # a seam's answer meaning "not mine: run the call as usual"

class ForeignArgument(TypeError):
    """An op was given a non-Tensor object with ``__torch_function__`` that no wrapper saw (an
    operator of a plain tensor): the operator hands it to ``__torch_function__``."""


_SEAMS = ("function", "op", "batched", "dispatch", "capture", "traced", "saved", "dual", "node")


class _Stack:
    # Slots on the instance: reading one is a few ns (on every op call).
    __slots__ = ("modes",) + _SEAMS

    def __init__(self) -> None:
        self.modes: tuple | None = None  # the active modes, outermost first; None: none
        for seam in _SEAMS:
            setattr(self, seam, None)


class Mode:
    """One level of the stack. ``seams`` maps a seam's name to what the mode installs there."""

    order = 0  # its place: larger is nearer the user (see the table above)
    name = "mode"

    def __init__(self) -> None:
        self.seams: dict = {}
        self.entered = 0  # how many times (threads, nesting) it is on the stack

    def __repr__(self) -> str:
        return f"<{self.name} mode>"


stack = _Stack()
_active: list = []
_lock = threading.RLock()


def _install() -> None:
    for seam in _SEAMS:
        value = None
        for mode in _active:
            if seam in mode.seams:
                value = mode.seams[seam]
                break  # the outermost mode acting at a seam holds it
        setattr(stack, seam, value)
    stack.modes = tuple(_active) if _active else None


def push(mode: Mode) -> None:
    """Put ``mode`` on the stack (a mode entered again counts its entries)."""
    with _lock:
        mode.entered += 1
        if mode.entered == 1:
            _active.append(mode)
            _active.sort(key=lambda m: -m.order)
            _install()


def pop(mode: Mode) -> None:
    """Take one entry of ``mode`` off the stack."""
    with _lock:
        mode.entered -= 1
        if mode.entered == 0:
            _active.remove(mode)
            _install()


class Call:
    """What the ``dispatch`` seam is handed for a call that is no op record's kernel (a factory,
    a random fill, an ``out=`` form, an optimizer's update): aten's operator ``name.overload``,
    and ``impl``, which runs it when a handler passes other arguments."""

    __slots__ = ("name", "overload", "impl")
    n_outputs = 1

    def __init__(self, name: str, overload: str, impl: Callable | None) -> None:
        self.name, self.overload, self.impl = name, overload, impl


def seen(name: str, overload: str, args: tuple, kwargs: dict, impl: Callable | None,
         run: Callable):
    """``run()``, which dispatch modes see as ``aten.<name>.<overload>(*args, **kwargs)``
    (callers ask ``stack.dispatch`` first: with no dispatch mode this is never called)."""
    return stack.dispatch(Call(name, overload, impl), args, kwargs,
                          lambda op, inputs, params: (run(),))[0]


def set_seam(mode: Mode, seam: str, value: Callable | object | None) -> None:
    """Change what an active (or not yet active) mode installs at ``seam``."""
    with _lock:
        if value is None:
            mode.seams.pop(seam, None)
        else:
            mode.seams[seam] = value
        if mode.entered:
            _install()
