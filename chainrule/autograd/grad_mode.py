"""Grad modes: no_grad, enable_grad, set_grad_enabled, inference_mode, and the backward
switches set_multithreading_enabled and enforce_grad_layout_policy (all thread-local)."""

from __future__ import annotations

import functools
import inspect
import threading

from ..tensor import _Uncounted

__all__ = ["no_grad", "enable_grad", "set_grad_enabled", "inference_mode", "is_grad_enabled",
           "is_inference_mode_enabled", "set_multithreading_enabled", "enforce_grad_layout_policy"]


class _State(threading.local):
    enabled = True
    inference = False
    reverse_levels = 0  # torch.func grad/vjp calls running their function
    # Recorded only: backward always runs on the calling thread, and a leaf's .grad is always a
    # new contiguous array or the parameter-shaped buffer it already was.
    multithreading = True
    grad_layout = True


state = _State()


def is_grad_enabled() -> bool:
    """True if gradient recording is on in this thread."""
    return state.enabled


def is_inference_mode_enabled() -> bool:
    """True inside an ``inference_mode`` block in this thread."""
    return state.inference


class _Mode:
    """A context manager that is also a decorator, as PyTorch's grad modes are."""

    _enabled: bool = True
    _inference: bool | None = None

    def __enter__(self) -> None:
        self._saved = (state.enabled, state.inference)
        state.enabled = self._enabled
        if self._inference is not None:
            state.inference = self._inference

    def __exit__(self, *exc) -> None:
        state.enabled, state.inference = self._saved

    def __new__(cls, *args, **kwargs):
        # `@no_grad` without parentheses: the function arrives as the first argument.
        if cls is not set_grad_enabled and len(args) == 1 and callable(args[0]):
            return cls()(args[0])
        return super().__new__(cls)

    def __call__(self, func):
        if inspect.isgeneratorfunction(func):
            return self._wrap_generator(func)

        @functools.wraps(func)
        def wrapper(*args, **kwargs):
            with self.clone():
                return func(*args, **kwargs)

        return wrapper

    def _wrap_generator(self, func):
        """Run every step of the generator in this mode, not just its creation."""

        @functools.wraps(func)
        def wrapper(*args, **kwargs):
            gen = func(*args, **kwargs)
            try:
                with self.clone():
                    value = next(gen)
                while True:
                    try:
                        sent = yield value
                    except BaseException as exc:
                        with self.clone():
                            value = gen.throw(exc)
                    else:
                        with self.clone():
                            value = gen.send(sent)
            except StopIteration as stop:
                return stop.value

        return wrapper

    def clone(self):
        return self.__class__()


class no_grad(_Mode):
    """Context manager and decorator that disables gradient recording."""

    _enabled = False

    def __init__(self, orig_func=None) -> None:
        pass


class enable_grad(_Mode):
    """Context manager and decorator that enables gradient recording."""

    _enabled = True


class set_grad_enabled(_Mode):
    """Set gradient recording on or off: as a function, a context manager or a decorator."""

    def __init__(self, mode: bool) -> None:
        self._prev = state.enabled
        self._enabled = bool(mode)
        state.enabled = self._enabled

    def __enter__(self) -> None:
        self._saved = (self._prev, state.inference)

    def __call__(self, func):
        state.enabled = self._prev
        return super().__call__(func)

    def clone(self):
        return self.__class__(self._enabled)


class inference_mode(_Mode):
    """Like no_grad, for code that will never need gradients (``inference_mode(False)`` undoes);
    the tensors made inside are inference tensors."""

    def __init__(self, mode: bool = True) -> None:
        self._enabled = not mode
        self._inference = bool(mode)

    def __enter__(self) -> None:
        if self._inference:
            _count_inference_blocks(1)
        super().__enter__()

    def __exit__(self, *exc) -> None:
        super().__exit__(*exc)
        if self._inference:
            _count_inference_blocks(-1)

    def clone(self):
        return self.__class__(self._inference)


# Inference tensors: a tensor made in inference mode has the version counter tensor.INFERENCE
# (it has none). Marking new tensors costs nothing while no thread is in inference mode: the
# first block to open, in any thread, starts it and the last to close stops it.
_inference_blocks = [0]
_inference_lock = threading.Lock()


def _inference_marking(on: bool) -> None:
    """Start (True) or stop marking the tensors made in inference mode (bound by _dispatch)."""


def _count_inference_blocks(change: int) -> None:
    with _inference_lock:
        _inference_blocks[0] += change
        if _inference_blocks[0] == (1 if change > 0 else 0):
            _inference_marking(change > 0)


_Uncounted.inference_mode = staticmethod(is_inference_mode_enabled)


class _Switch:
    """A thread-local switch that is set when made, restored on leaving a ``with`` block, and
    that decorates a function to run with it set (PyTorch's set_multithreading_enabled form)."""

    _attr = ""
    _undo_when_decorating = True

    def __init__(self, mode: bool) -> None:
        self._prev = getattr(state, self._attr)
        self._mode = bool(mode)
        setattr(state, self._attr, self._mode)

    def __enter__(self) -> None:
        pass

    def __exit__(self, *exc) -> None:
        setattr(state, self._attr, self._prev)

    def __call__(self, func):
        if self._undo_when_decorating:
            setattr(state, self._attr, self._prev)

        @functools.wraps(func)
        def wrapper(*args, **kwargs):
            with self.__class__(self._mode):
                return func(*args, **kwargs)

        return wrapper


class set_multithreading_enabled(_Switch):
    """Turn multithreaded backward on or off in this thread (chainrule's backward always runs
    on the calling thread: the switch is recorded)."""

    _attr = "multithreading"
    _undo_when_decorating = False  # as PyTorch's: decorating leaves the switch set


class enforce_grad_layout_policy(_Switch):
    """Turn the gradient layout contract's enforcement on or off in this thread (recorded:
    chainrule's gradients are always laid out as their parameters)."""

    _attr = "grad_layout"

    def __init__(self, enable: bool = True) -> None:
        super().__init__(enable)


def _is_multithreading_enabled() -> bool:
    return state.multithreading


def _is_grad_layout_enforcement_enabled() -> bool:
    return state.grad_layout
