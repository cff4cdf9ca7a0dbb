"""The slots the debugging tools install into, so the hot path pays one flag check per tool.

``_dispatch.apply`` checks ``hooks.op`` (set while the profiler records), recording checks
``hooks.anomaly`` (anomaly mode) and the engine checks ``hooks.node`` (set while the profiler,
anomaly mode or a gradient report watches backward) and then runs each node through the
installed wrappers. The tools live above (``chainrule.profiler``, ``autograd.anomaly_mode``,
``autograd.graph.gradient_report``) and install themselves here; nothing below imports them.

It also keeps the in-place notes: the version counter ``[version]`` of a tensor that a node
saved gets a second slot, a list the saved values share; ``bump_version`` appends to it the first
in-place op after the save and the user's line that called it, for the "modified by an inplace
operation" error. The list is alive only while a saved value holds it: once backward has
released them, the next in-place op drops the slot, so later updates (an optimizer's) note
nothing.
"""

from __future__ import annotations

import functools
import linecache
import os
import sys
import threading
from collections.abc import Callable

__all__ = ["hooks", "RUN", "add_op_wrapper", "remove_op_wrapper", "run_op", "add_node_wrapper",
           "remove_node_wrapper", "run_node", "user_frames", "user_location", "user_stacklevel",
           "describe_location", "notes_of", "note_inplace"]

_PACKAGE = os.path.dirname(os.path.abspath(__file__)) + os.sep


class _Hooks:
    # Slots, set on the instance: reading them is a few ns (a class attribute read through an
    # instance costs several times more, on every op).
    __slots__ = ("op", "node", "anomaly")

    def __init__(self) -> None:
        self.op: Callable | None = None  # run_op while some tool wraps every op call
        self.node: Callable | None = None  # run_node while some tool watches the engine
        self.anomaly = False  # anomaly mode: nodes record the forward traceback that made them


class _Local(threading.local):
    inside = False  # this thread is inside a wrapped op: its inner calls run plainly


hooks = _Hooks()
_local = _Local()
_op_wrappers: list = []
_node_wrappers: list = []
RUN = object()  # run_op's answer to a call from inside a wrapped op: run it as usual


def add_op_wrapper(wrapper: Callable) -> None:
    """Have ``apply`` run each op as ``wrapper(op, suffix, inputs, call)``: ``call()`` runs the
    op; ``suffix`` is ``"_"`` for the in-place form."""
    _op_wrappers.append(wrapper)
    hooks.op = run_op


def remove_op_wrapper(wrapper: Callable) -> None:
    _op_wrappers.remove(wrapper)
    if not _op_wrappers:
        hooks.op = None


def run_op(fn: Callable, op, inputs: tuple, params: dict, suffix: str):
    """``fn(op, *inputs, **params)`` inside every op wrapper; ``RUN`` if already inside one."""
    if _local.inside:
        return RUN  # the op's own inner calls (forward mode, batching rules) are part of it
    call = functools.partial(_call, fn, op, inputs, params)
    for wrapper in reversed(_op_wrappers):
        call = functools.partial(wrapper, op, suffix, inputs, call)
    _local.inside = True
    try:
        return call()
    finally:
        _local.inside = False


def _call(fn: Callable, op, inputs: tuple, params: dict):
    return fn(op, *inputs, **params)  # re-enters apply, which gets RUN and runs the op


def add_node_wrapper(wrapper: Callable) -> None:
    """Have the engine run each node as ``wrapper(node, call, *args)``, where ``call(*args)``
    runs the node (its ``apply(grads)``, or an AccumulateGrad's ``accumulate(grad, ...)``)."""
    _node_wrappers.append(wrapper)
    hooks.node = run_node


def remove_node_wrapper(wrapper: Callable) -> None:
    _node_wrappers.remove(wrapper)
    if not _node_wrappers:
        hooks.node = None


def run_node(node, fn: Callable, *args):
    """``fn(*args)`` (a node's apply or accumulate) inside every installed wrapper."""
    inside, _local.inside = _local.inside, False  # the node's ops are ops of their own
    call = fn
    for wrapper in reversed(_node_wrappers):
        call = functools.partial(wrapper, node, call)
    try:
        return call(*args)
    finally:
        _local.inside = inside


def user_frames(depth: int = 1):
    """The frames of the caller's stack outside chainrule's package, innermost first."""
    frame = sys._getframe(depth)
    while frame is not None:
        if not frame.f_code.co_filename.startswith(_PACKAGE):
            yield frame
        frame = frame.f_back


def user_location() -> tuple[str, int] | None:
    """(file, line) of the innermost call in user code (outside chainrule)."""
    for frame in user_frames(2):
        return frame.f_code.co_filename, frame.f_lineno
    return None


def user_stacklevel() -> int:
    """The ``stacklevel`` that makes a warning issued by the caller point at user code."""
    level, frame = 1, sys._getframe(1)
    while frame is not None and frame.f_code.co_filename.startswith(_PACKAGE):
        frame = frame.f_back
        level += 1
    return level


def _short(path: str) -> str:
    rel = os.path.relpath(path) if os.path.isabs(path) else path
    return path if rel.startswith("..") else rel


def describe_location(where: tuple[str, int]) -> str:
    """``file:line (source)``, the file relative to the working directory when inside it."""
    path, line = where
    text = linecache.getline(path, line).split("  #")[0].strip()  # without a trailing comment
    return f"{_short(path)}:{line}" + (f" ({text})" if text else "")


def notes_of(counter: list) -> list:
    """The notes list a value saved now shares (the counter's second slot, made if needed)."""
    if len(counter) == 1:
        counter.append([])
    elif counter[1]:
        counter[1] = []  # the list there noted a change made before this save: start another
    return counter[1]


def note_inplace(counter: list, name: str | None) -> None:
    """Called by bump_version for a counter with a notes slot: note the op and the user's line
    if a saved value still holds the slot and nothing is noted yet; drop the slot otherwise."""
    notes = counter[1]
    # References: the counter's slot, this frame's variable and getrefcount's argument; any
    # more are saved values that will check this counter in backward.
    if sys.getrefcount(notes) <= 3:
        del counter[1:]
    elif not notes:
        notes.append((name or "an in-place operation", user_location() or ("?", 0)))
