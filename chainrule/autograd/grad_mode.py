"""Grad modes: no_grad, enable_grad, set_grad_enabled, inference_mode (thread-local)."""

from __future__ import annotations

import functools
import inspect
import threading

__all__ = ["no_grad", "enable_grad", "set_grad_enabled", "inference_mode", "is_grad_enabled",
           "is_inference_mode_enabled"]


class _State(threading.local):
    enabled = True
    inference = False
    reverse_levels = 0  # torch.func grad/vjp calls running their function


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
    """Like no_grad, for code that will never need gradients (``inference_mode(False)`` undoes)."""

    def __init__(self, mode: bool = True) -> None:
        self._enabled = not mode
        self._inference = bool(mode)

    def clone(self):
        return self.__class__(self._inference)
