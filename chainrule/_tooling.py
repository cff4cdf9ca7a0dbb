"""Two modes of the stack (``_modes``) the debugging tools share, and their helpers.

The op wrappers (the profiler's record per op) are the ``op`` seam: while one is installed,
``apply`` hands each call to ``run_op``. The node wrappers (the profiler, anomaly mode, a
gradient report) are the ``node`` seam: the engine runs each node through ``run_node``.
``kernel(fn, ...)`` runs array code outside an op so that chainrule.compile's capture (the
``capture`` seam) records it too. The tools live above (``chainrule.profiler``,
``autograd.anomaly_mode``, ``autograd.graph.gradient_report``, ``chainrule._compile``) and
install themselves here; nothing below imports them.

It also keeps the in-place notes, for the "modified by an inplace operation" error: which
in-place op first changed a saved value after the save, and the user's line that called it.
``bump_version`` writes them into the version counter of a tensor a node saved:

- ``[version, None, None]``: made when a new tensor (no counter yet) is saved; the third slot
  takes the first change's note. Nothing is allocated for it: most saved values are new outputs.
- ``[version, notes]``: an older tensor's saved values share the list ``notes`` (the note goes in
  it). It is alive only while a saved value holds it (its reference count says so); once backward
  has released them, the next in-place op drops it, so an optimizer's updates note nothing.
"""

from __future__ import annotations

import functools
import linecache
import os
import sys
import threading
from collections.abc import Callable

from ._meta import NeedsValues, call_on_standins
from ._modes import RUN, Mode, pop, push, stack

__all__ = ["RUN", "kernel", "add_op_wrapper", "remove_op_wrapper", "run_op",
           "add_node_wrapper", "remove_node_wrapper", "run_node", "user_frames", "user_location",
           "user_stacklevel", "describe_location", "notes_of", "note_inplace"]

_PACKAGE = os.path.dirname(os.path.abspath(__file__)) + os.sep


class _OpWrappers(Mode):
    """Op wrappers (the profiler's record per op): each op call runs inside them."""

    order = 90
    name = "op wrappers"


class _NodeWrappers(Mode):
    """Node wrappers (the profiler, anomaly mode, a gradient report): each node the engine runs
    runs inside them."""

    order = 10
    name = "node wrappers"


class _Local(threading.local):
    inside = False  # this thread is inside a wrapped op: its inner calls run plainly


_local = _Local()
_op_wrappers: list = []
_node_wrappers: list = []
_installing = threading.Lock()  # tools in several threads install and remove wrappers at once
OP_WRAPPERS = _OpWrappers()
NODE_WRAPPERS = _NodeWrappers()


def kernel(fn: Callable, *args, **kwargs):
    """``fn(*args, **kwargs)`` on arrays outside an op (a random draw, a mask), recorded while
    chainrule.compile captures so that a replay runs it again."""
    capture = stack.capture
    if capture is None:
        try:
            return fn(*args, **kwargs)
        except NeedsValues:  # meta arrays: run on stand-ins (see _meta)
            return call_on_standins(fn, args, kwargs)
    return capture.call(fn, args, kwargs)


def add_op_wrapper(wrapper: Callable) -> None:
    """Have ``apply`` run each op as ``wrapper(op, suffix, inputs, call)``: ``call()`` runs the
    op; ``suffix`` is ``"_"`` for the in-place form."""
    with _installing:
        _op_wrappers.append(wrapper)
        if len(_op_wrappers) == 1:
            push(OP_WRAPPERS)


def remove_op_wrapper(wrapper: Callable) -> None:
    with _installing:
        _op_wrappers.remove(wrapper)
        if not _op_wrappers:
            pop(OP_WRAPPERS)


def run_op(fn: Callable, op, inputs: tuple, params: dict, suffix: str):
    """``fn(op, *inputs, **params)`` inside every op wrapper; ``RUN`` if already inside one."""
    if _local.inside:
        return RUN  # the op's own inner calls (forward mode, batching rules) are part of it
    call = functools.partial(_call, fn, op, inputs, params)
    for wrapper in reversed(tuple(_op_wrappers)):  # a snapshot: other threads may add some
        call = functools.partial(wrapper, op, suffix, inputs, call)
    _local.inside = True
    try:
        return call()
    finally:
        _local.inside = False


def _call(fn: Callable, op, inputs: tuple, params: dict):
    return fn(op, *inputs, **params)  # re-enters apply, which gets RUN and runs the op


OP_WRAPPERS.seams["op"] = run_op


def add_node_wrapper(wrapper: Callable) -> None:
    """Have the engine run each node as ``wrapper(node, call, *args)``, where ``call(*args)``
    runs the node (its ``apply(grads)``, or an AccumulateGrad's ``accumulate(grad, ...)``)."""
    with _installing:
        _node_wrappers.append(wrapper)
        if len(_node_wrappers) == 1:
            push(NODE_WRAPPERS)


def remove_node_wrapper(wrapper: Callable) -> None:
    with _installing:
        _node_wrappers.remove(wrapper)
        if not _node_wrappers:
            pop(NODE_WRAPPERS)


def run_node(node, fn: Callable, *args):
    """``fn(*args)`` (a node's apply or accumulate) inside every installed wrapper."""
    inside, _local.inside = _local.inside, False  # the node's ops are ops of their own
    call = fn
    for wrapper in reversed(tuple(_node_wrappers)):
        call = functools.partial(wrapper, node, call)
    try:
        return call(*args)
    finally:
        _local.inside = inside


NODE_WRAPPERS.seams["node"] = run_node


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
    elif counter[1] is None or counter[1]:
        counter[1] = []  # none yet, or the list there noted a change made before this save
    return counter[1]


def note_inplace(counter: list, name: str | None) -> None:
    """Called by bump_version for a counter with note slots: note the op and the user's line
    for the saved values that wait for it; drop the slots nobody waits on."""
    notes = counter[1]
    # References to the shared list: the counter's slot, this frame's variable and getrefcount's
    # argument; any more are saved values that will check this counter in backward.
    if notes is not None and sys.getrefcount(notes) <= 3:
        notes = counter[1] = None
    first = len(counter) > 2 and counter[2] is None  # saved while new: its first change
    if first or (notes is not None and not notes):
        note = (name or "an in-place operation", user_location() or ("?", 0))
        if first:
            counter[2] = note
        if notes is not None and not notes:
            notes.append(note)
    elif notes is None and len(counter) == 2:
        del counter[1]  # nothing to note any more: back to [version]
