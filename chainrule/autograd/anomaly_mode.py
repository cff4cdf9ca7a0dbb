"""Anomaly mode: nodes remember the forward call that made them; backward checks for NaN.

While it is on, recording stores the traceback of the forward call in ``grad_fn.metadata``
(``"traceback_"``, and ``"parent_"`` for a node made while another ran in backward), and the
engine runs each node inside ``_check``: an error in the node warns with that traceback, and with
``check_nan`` a NaN in a computed gradient raises, as in PyTorch.
"""

from __future__ import annotations

import functools
import threading
import warnings

from .. import _tooling
from .._backend import xp
from .._batched import BatchedTensor
from .._modes import Mode, pop, push

__all__ = ["detect_anomaly", "set_detect_anomaly", "is_anomaly_enabled",
           "is_anomaly_check_nan_enabled", "set_anomaly_enabled"]


class _State:
    enabled = False
    check_nan = True


class _Running(threading.local):
    node = None  # the node this thread's engine is running (the parent of nodes recorded meanwhile)


state = _State()  # process-wide, as PyTorch's anomaly mode
_running = _Running()


def is_anomaly_enabled() -> bool:
    """True while anomaly detection is on."""
    return state.enabled


class _Anomaly(Mode):
    """Anomaly mode on the stack: each node recorded keeps the forward traceback (the
    ``traced`` seam); its node wrapper checks backward's results."""

    order = 50
    name = "anomaly"


ANOMALY = _Anomaly()


def is_anomaly_check_nan_enabled() -> bool:
    """True if anomaly detection raises on NaN gradients."""
    return state.check_nan


def set_anomaly_enabled(enabled: bool, check_nan: bool = True) -> None:
    """Turn anomaly detection on or off (and its NaN check)."""
    enabled = bool(enabled)
    if enabled and not state.enabled:
        _tooling.add_node_wrapper(_check)
        push(ANOMALY)
    elif not enabled and state.enabled:
        _tooling.remove_node_wrapper(_check)
        pop(ANOMALY)
    state.enabled = enabled
    state.check_nan = bool(check_nan)


class detect_anomaly:
    """Context manager (and decorator) that turns anomaly detection on for its block.

    Backward errors then show the traceback of the forward call that created the failing node,
    and with ``check_nan`` a backward node that returns NaN raises. Slow: for debugging only.
    """

    def __init__(self, check_nan: bool = True) -> None:
        self.prev = state.enabled
        self.check_nan = check_nan
        self.prev_check_nan = state.check_nan
        warnings.warn("Anomaly Detection has been enabled. This mode will increase the runtime "
                      "and should only be enabled for debugging.", stacklevel=2)

    def __enter__(self) -> None:
        self.prev, self.prev_check_nan = state.enabled, state.check_nan
        set_anomaly_enabled(True, self.check_nan)

    def __exit__(self, *exc) -> None:
        set_anomaly_enabled(self.prev, self.prev_check_nan)

    def __call__(self, func):
        @functools.wraps(func)
        def wrapper(*args, **kwargs):
            with self:
                return func(*args, **kwargs)

        return wrapper


class set_detect_anomaly:
    """Turn anomaly detection on or off: as a function, or as a context manager that restores."""

    def __init__(self, mode: bool, check_nan: bool = True) -> None:
        self.prev = state.enabled
        self.prev_check_nan = state.check_nan
        set_anomaly_enabled(mode, check_nan)

    def __enter__(self) -> None:
        pass

    def __exit__(self, *exc) -> None:
        set_anomaly_enabled(self.prev, self.prev_check_nan)


def note_forward(node) -> None:
    """Called by recording in anomaly mode: keep the user's traceback of this forward call."""
    import traceback  # only in anomaly mode: importing chainrule stays light

    frames = traceback.extract_stack()
    while frames and frames[-1].filename.startswith(_tooling._PACKAGE):
        frames.pop()  # chainrule's own frames, innermost: dispatch, the op's function
    metadata = node.metadata
    metadata["traceback_"] = traceback.format_list(frames)
    if _running.node is not None:
        metadata["parent_"] = _running.node


def _warn_forward_trace(node) -> None:
    metadata = node.metadata
    trace = metadata.get("traceback_")
    if trace is None:
        warnings.warn(f"Error detected in {node.name()}. No forward pass information available. "
                      "Enable detect anomaly during forward pass for more information.",
                      stacklevel=_tooling.user_stacklevel())
        return
    warnings.warn(f"Error detected in {node.name()}. Traceback of forward call that caused the "
                  "error:\n" + "".join(trace), stacklevel=_tooling.user_stacklevel())
    parent = metadata.get("parent_")
    while parent is not None:
        trace = parent.metadata.get("traceback_")
        if trace is None:
            break
        warnings.warn(f"\n\nPrevious calculation was induced by {parent.name()}. Traceback of "
                      "forward call that induced the previous calculation:\n" + "".join(trace),
                      stacklevel=_tooling.user_stacklevel())
        parent = parent.metadata.get("parent_")


def _check(node, call, *args):
    """The engine's wrapper around a node while anomaly mode is on."""
    prev, _running.node = _running.node, node
    try:
        grads = call(*args)
        if state.check_nan and grads is not None:
            for i, g in enumerate(grads):
                if g is None:
                    continue
                while type(g) is BatchedTensor:
                    g = g._value  # the values of the whole batch (_data is a placeholder)
                data = g._data
                if data.dtype.kind in "fcV" and xp.isnan(data).any():
                    raise RuntimeError(f"Function '{node.name()}' returned nan values in its "
                                       f"{i}th output.")
        return grads
    except Exception:
        _warn_forward_trace(node)
        raise
    finally:
        _running.node = prev


ANOMALY.seams["traced"] = note_forward
