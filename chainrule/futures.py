"""``torch.futures``: a Future holds the result of an asynchronous computation; callbacks run
when it completes (in the thread that completes it), ``wait`` blocks until then."""

from __future__ import annotations

import sys
import threading
import traceback
from collections.abc import Callable
from typing import Generic, TypeVar

from ._device import device as _device

__all__ = ["Future", "collect_all", "wait_all"]

T = TypeVar("T")
S = TypeVar("S")


class _Raise:
    """What ``set_exception`` stores: unwrapping the value raises the exception."""

    __slots__ = ("error",)

    def __init__(self, error: BaseException) -> None:
        self.error = error


def _callback_error(e: BaseException) -> RuntimeError:
    where = "".join(traceback.format_tb(e.__traceback__))
    return RuntimeError(f"Got the following error when running the callback: "
                        f"{type(e).__name__}: {e}\n\nAt:\n{where}")


class Future(Generic[T]):
    """The result of an asynchronous computation, set once by ``set_result`` or
    ``set_exception``."""

    def __init__(self, *, devices: list | None = None) -> None:
        for d in devices or []:
            d = _device(d)
            if d.index is None:
                raise ValueError(f"Expected devices to have indices, got {d}")
            if d.type != "cpu":
                raise RuntimeError(f"PyTorch is not linked with support for {d.type} devices")
        self._done = threading.Condition()
        self._completed = False
        self._result = None
        self._callbacks: list[Callable] = []

    def done(self) -> bool:
        """True if the future has a result or an exception."""
        return self._completed

    def wait(self) -> T:
        """Block until the future completes; its value (or raise its exception)."""
        with self._done:
            self._done.wait_for(lambda: self._completed)
        return self.value()

    def value(self) -> T:
        """The value of a completed future (raises its exception if it has one)."""
        if not self._completed:
            raise RuntimeError("completed() INTERNAL ASSERT FAILED: Future.value() called on a "
                               "Future that has not completed; call wait() first")
        if type(self._result) is _Raise:
            raise self._result.error
        return self._result

    def then(self, callback: Callable[[Future[T]], S]) -> Future[S]:
        """A new future completed with ``callback(self)`` once this one completes (with the
        callback's error wrapped in a RuntimeError if it raises)."""
        chained: Future = Future()

        def run(fut: Future) -> None:
            try:
                result = callback(fut)
            except Exception as e:
                chained.set_exception(_callback_error(e))
                return
            chained.set_result(result)

        self.add_done_callback(run)
        return chained

    def add_done_callback(self, callback: Callable[[Future[T]], None]) -> None:
        """Run ``callback(self)`` when the future completes (now if it has); its errors are
        reported, not raised."""
        with self._done:
            if not self._completed:
                self._callbacks.append(callback)
                return
        self._run(callback)

    def _run(self, callback: Callable) -> None:
        try:
            callback(self)
        except Exception as e:
            print(_callback_error(e), file=sys.stderr)

    def set_result(self, result: T) -> None:
        """Complete the future with ``result``, wake its waiters and run its callbacks."""
        with self._done:
            if self._completed:
                raise RuntimeError("Attempting to mark a completed Future as complete again. "
                                   "Note that a Future can only be marked completed once.")
            self._result = result
            self._completed = True
            callbacks, self._callbacks = self._callbacks, []
            self._done.notify_all()
        for callback in callbacks:
            self._run(callback)

    def set_exception(self, result: T) -> None:
        """Complete the future with an exception, which ``wait`` and ``value`` raise."""
        if not isinstance(result, Exception):
            raise AssertionError(f"{result} is of type {type(result)}, not an Exception.")
        self.set_result(_Raise(result))


def collect_all(futures: list[Future]) -> Future[list[Future]]:
    """A future completed with the list of ``futures`` once all of them are (it holds the
    first error if one of them has failed)."""
    futures = list(futures)
    combined: Future = Future()
    remaining = [len(futures)]
    lock = threading.Lock()

    def one_done(_) -> None:
        with lock:
            remaining[0] -= 1
            last = remaining[0] == 0
        if last:
            failed = next((f._result for f in futures if type(f._result) is _Raise), None)
            combined.set_result(futures if failed is None else failed)

    if not futures:
        combined.set_result([])
    for fut in futures:
        fut.add_done_callback(one_done)
    return combined


def wait_all(futures: list[Future]) -> list:
    """Wait for all ``futures``; their values (raises the first error among them)."""
    return [fut.wait() for fut in collect_all(futures).wait()]
