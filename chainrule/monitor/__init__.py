"""``torch.monitor``: events logged to registered handlers, and stats aggregated over fixed
time windows (each closed window is logged as a ``torch.monitor.Stat`` event), as PyTorch's.

Handlers run in the thread that logs, in the order they were registered; an exception raised
by one reaches the caller of ``log_event`` (or of ``Stat.add``). Event data values are str,
float, int or bool (a bool is kept as a float, as PyTorch's conversion does).
"""

from __future__ import annotations

import datetime
import numbers
import sys
import threading
import time
from collections.abc import Callable, Mapping, Sequence

__all__ = ["Aggregation", "Event", "EventHandlerHandle", "Stat", "TensorboardEventHandler",
           "data_value_t", "log_event", "register_event_handler", "unregister_event_handler",
           "STAT_EVENT", "VALUE", "MEAN", "COUNT", "SUM", "MAX", "MIN"]

STAT_EVENT = "torch.monitor.Stat"
_INT64_MAX = (1 << 63) - 1


def _incompatible(what: str, signature: str, args: tuple) -> TypeError:
    """pybind11's error for arguments a binding cannot take (PyTorch's words)."""
    return TypeError(f"{what}: incompatible {'constructor' if what == '__init__()' else 'function'}"
                     f" arguments. The following argument types are supported:\n    1. "
                     f"{signature}\n\nInvoked with: {', '.join(map(repr, args))}")


def _no_constructor(cls: type):
    def __init__(self, *args, **kwargs) -> None:
        raise TypeError(f"torch._C._monitor.{cls.__name__}: No constructor defined!")
    cls.__init__ = __init__
    return cls


class Aggregation:
    """These are types of aggregations that can be used to accumulate stats."""

    __slots__ = ("_value",)
    __members__: dict[str, Aggregation] = {}

    def __init__(self, value: int) -> None:
        if not hasattr(value, "__index__"):
            raise _incompatible("__init__()", "torch._C._monitor.Aggregation(value: "
                                "typing.SupportsInt | typing.SupportsIndex)", (value,))
        self._value = value.__index__()

    @property
    def value(self) -> int:
        return self._value

    @property
    def name(self) -> str:
        return next((k for k, v in self.__members__.items() if v._value == self._value), "???")

    def __eq__(self, other) -> bool:
        return type(other) is Aggregation and other._value == self._value

    def __hash__(self) -> int:
        return self._value

    def __int__(self) -> int:
        return self._value

    __index__ = __int__

    def __repr__(self) -> str:
        return f"<Aggregation.{self.name}: {self._value}>"

    def __str__(self) -> str:
        return f"Aggregation.{self.name}"


# VALUE is PyTorch's NONE (0): a stat never reports it.
for _name, _value in (("VALUE", 0), ("MEAN", 2), ("COUNT", 3), ("SUM", 4), ("MAX", 5),
                      ("MIN", 6)):
    Aggregation.__members__[_name] = Aggregation(_value)
    setattr(Aggregation, _name, Aggregation.__members__[_name])
VALUE, MEAN, COUNT, SUM, MAX, MIN = Aggregation.__members__.values()
_NAMES = {MEAN: "mean", COUNT: "count", SUM: "sum", MAX: "max", MIN: "min"}


@_no_constructor
class data_value_t:  # noqa: N801  (PyTorch's name)
    """data_value_t is one of ``str``, ``float``, ``int``, ``bool``."""


def _data_value(value):
    """``value`` as an event keeps it, or None if it is not a data_value_t."""
    if isinstance(value, str):
        return value
    if isinstance(value, (bool, float)):
        return float(value)
    if hasattr(value, "__index__"):
        value = value.__index__()
        if not -_INT64_MAX - 1 <= value <= _INT64_MAX:
            raise ValueError("Overflow when unpacking long long")
        return value
    return float(value) if isinstance(value, numbers.Real) else None


def _event_data(data, args: tuple, signature: str, what: str) -> dict:
    if not isinstance(data, Mapping):
        raise _incompatible(what, signature, args)
    out = {}
    for key, value in data.items():
        converted = _data_value(value)
        if not isinstance(key, str) or converted is None:
            raise _incompatible(what, signature, args)
        out[key] = converted
    return out


def _local(timestamp: datetime.datetime) -> datetime.datetime:
    """A timestamp as PyTorch keeps it: naive, in local time."""
    return timestamp if timestamp.tzinfo is None else \
        timestamp.astimezone().replace(tzinfo=None)


_EVENT_INIT = ("torch._C._monitor.Event(name: str, timestamp: datetime.datetime, data: "
               "collections.abc.Mapping[str, data_value_t])")


class Event:
    """Event represents a specific typed event to be logged (all events of one type share a
    name, for the handlers)."""

    __slots__ = ("_name", "_timestamp", "_data")

    def __init__(self, name: str, timestamp: datetime.datetime, data: Mapping) -> None:
        args = (name, timestamp, data)
        if not isinstance(name, str) or not isinstance(timestamp, datetime.datetime):
            raise _incompatible("__init__()", _EVENT_INIT, args)
        self._name = name
        self._timestamp = _local(timestamp)
        self._data = _event_data(data, args, _EVENT_INIT, "__init__()")

    @property
    def name(self) -> str:
        """The name of the ``Event``."""
        return self._name

    @name.setter
    def name(self, value: str) -> None:
        if not isinstance(value, str):
            raise _incompatible("()", "(self: torch._C._monitor.Event, arg0: str) -> None",
                                (self, value))
        self._name = value

    @property
    def timestamp(self) -> datetime.datetime:
        """The timestamp when the ``Event`` happened."""
        return self._timestamp

    @timestamp.setter
    def timestamp(self, value: datetime.datetime) -> None:
        if not isinstance(value, datetime.datetime):
            raise _incompatible("()", "(self: torch._C._monitor.Event, arg0: datetime.datetime)"
                                " -> None", (self, value))
        self._timestamp = _local(value)

    @property
    def data(self) -> dict:
        """The structured data contained within the ``Event`` (a copy)."""
        return dict(self._data)

    @data.setter
    def data(self, value: Mapping) -> None:
        self._data = _event_data(value, (self, value), "(self: torch._C._monitor.Event, arg0: "
                                 "collections.abc.Mapping[str, data_value_t]) -> None", "()")


@_no_constructor
class EventHandlerHandle:
    """What ``register_event_handler`` returns, to pass to ``unregister_event_handler``."""

    __slots__ = ("_callback",)


_handlers: list[EventHandlerHandle] = []
_handlers_lock = threading.Lock()


def log_event(event: Event) -> None:
    """Pass ``event`` to every registered handler (nothing happens when there is none)."""
    if not isinstance(event, Event):
        raise _incompatible("log_event()", "(event: torch._C._monitor.Event) -> None", (event,))
    with _handlers_lock:
        handlers = tuple(_handlers)
    for handle in handlers:
        handle._callback(event)


def register_event_handler(callback: Callable[[Event], None]) -> EventHandlerHandle:
    """Call ``callback(event)`` for every event logged from now on; returns its handle."""
    if not callable(callback):
        raise _incompatible("register_event_handler()", "(callback: collections.abc.Callable"
                            "[[torch._C._monitor.Event], None]) -> torch._C._monitor."
                            "EventHandlerHandle", (callback,))
    handle = object.__new__(EventHandlerHandle)
    handle._callback = callback
    with _handlers_lock:
        _handlers.append(handle)
    return handle


def unregister_event_handler(handler: EventHandlerHandle) -> None:
    """Stop calling the handler of ``handler`` (a handle no longer registered is ignored)."""
    if not isinstance(handler, EventHandlerHandle):
        raise _incompatible("unregister_event_handler()", "(handler: torch._C._monitor."
                            "EventHandlerHandle) -> None", (handler,))
    with _handlers_lock:
        if handler in _handlers:
            _handlers.remove(handler)


_STAT_INIT = ("torch._C._monitor.Stat(name: str, aggregations: collections.abc.Sequence["
              "torch._C._monitor.Aggregation], window_size: datetime.timedelta, max_samples: "
              "typing.SupportsInt | typing.SupportsIndex = 9223372036854775807)")


class Stat:
    """Summary statistics of the values added in each window of ``window_size`` (millisecond
    precision, windows aligned on a monotonic clock); when a window closes (noticed by the next
    ``add``) the stats are logged as a ``torch.monitor.Stat`` event named ``<name>.<agg>``.
    With ``max_samples`` a window takes that many values and is then logged; later values of
    that window are dropped. A stat being destroyed logs what it holds."""

    def __init__(self, name: str, aggregations: Sequence[Aggregation],
                 window_size: datetime.timedelta, max_samples: int = _INT64_MAX) -> None:
        args = (name, aggregations, window_size, max_samples)
        if not (isinstance(name, str) and isinstance(aggregations, Sequence)
                and not isinstance(aggregations, str)
                and all(type(a) is Aggregation for a in aggregations)
                and isinstance(window_size, datetime.timedelta)
                and hasattr(max_samples, "__index__")):
            raise _incompatible("__init__()", _STAT_INIT, args)
        self._name = name
        self._aggregations = tuple(a for a in _NAMES if a in aggregations)
        self._window_ms = window_size // datetime.timedelta(milliseconds=1)
        self._max_samples = max_samples.__index__()
        self._lock = threading.Lock()
        self._current = self._empty()
        self._previous = self._empty()
        self._window = 0
        self._last_logged = 0

    @staticmethod
    def _empty() -> list:
        return [0.0, 0.0, 0.0, 0]  # sum, min, max, count

    @property
    def name(self) -> str:
        """The name of the stat that was set during creation."""
        return self._name

    @property
    def count(self) -> int:
        """Number of data points that have currently been collected. Resets once the event
        has been logged."""
        with self._lock:
            return self._current[3]

    def _window_id(self) -> int:
        return time.monotonic_ns() // 1_000_000 // max(self._window_ms, 1) + 1

    def _maybe_log(self) -> None:
        window = self._window_id()
        due = window != self._window or self._current[3] >= self._max_samples
        if due and self._last_logged != window:
            self._log()
            self._last_logged, self._window = self._window, window

    def _log(self) -> None:
        self._previous, self._current = self._current, self._empty()
        if self._previous[3] == 0:
            return
        data = {f"{self._name}.{_NAMES[a]}": v for a, v in self._stats().items()}
        log_event(Event(STAT_EVENT, datetime.datetime.now(), data))

    def _stats(self) -> dict:
        total, low, high, count = self._previous
        values = {MEAN: total / count if count else 0.0, COUNT: float(count), SUM: total,
                  MAX: high, MIN: low}
        return {a: values[a] for a in self._aggregations}

    def add(self, v: float) -> None:
        """Adds a value to the stat to be aggregated according to the configured stat type and
        aggregations."""
        if not (hasattr(v, "__float__") or hasattr(v, "__index__")):
            raise _incompatible("add()", "(self: torch._C._monitor.Stat, v: typing.SupportsFloat"
                                " | typing.SupportsIndex) -> None", (self, v))
        v = float(v) if hasattr(v, "__float__") else float(v.__index__())
        with self._lock:
            self._maybe_log()
            if self._last_logged == self._window_id():
                return  # this window was logged already (max_samples reached)
            current = self._current
            current[0] += v
            if current[3] == 0 or v > current[2]:
                current[2] = v
            if current[3] == 0 or v < current[1]:
                current[1] = v
            current[3] += 1
            self._maybe_log()

    def get(self) -> dict:
        """The stats of the last logged window (zeros when nothing was logged)."""
        with self._lock:
            return self._stats()

    def __del__(self, _finalizing=sys.is_finalizing) -> None:
        lock = getattr(self, "_lock", None)
        if lock is not None and not _finalizing():  # handlers may be gone at shutdown
            with lock:
                self._log()


class TensorboardEventHandler:
    """An event handler writing ``torch.monitor.Stat`` events to a tensorboard SummaryWriter,
    as scalars."""

    def __init__(self, writer) -> None:
        """Constructs the ``TensorboardEventHandler``."""
        self._writer = writer

    def __call__(self, event: Event) -> None:
        if event.name == STAT_EVENT:
            for key, value in event.data.items():
                self._writer.add_scalar(key, value, walltime=event.timestamp.timestamp())


@_no_constructor
class _WaitCounterTracker:
    """The guard of one unit of work a ``_WaitCounter`` counts (no counting back end is
    registered, as in PyTorch by default)."""

    def __enter__(self) -> None:
        return None

    def __exit__(self, *exc) -> None:
        return None


class _WaitCounter:
    """A named counter of units of work and the time spent waiting on them."""

    def __init__(self, key: str) -> None:
        self._key = key

    def guard(self) -> _WaitCounterTracker:
        """Creates a guard that manages a single unit of work."""
        return object.__new__(_WaitCounterTracker)


for _cls in (Aggregation, Event, EventHandlerHandle, Stat, data_value_t, _WaitCounter,
             _WaitCounterTracker):
    _cls.__module__ = "torch._C._monitor"
del _cls, _name, _value
