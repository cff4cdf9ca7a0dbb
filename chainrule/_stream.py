"""``torch.Stream`` and ``torch.Event``, the device-generic stream and event, as PyTorch's CPU
build has them: the CPU (and meta) stream runs work in order, so it is always done, and its
backend records no events."""

from __future__ import annotations

from ._device import device

__all__ = ["Stream", "Event"]

_DEVICE_TYPE = {"cpu": 0, "meta": 14}  # c10's DeviceType numbers


def _device_of(where) -> device:
    if where is None:
        return device("cpu")
    found = device(where)
    if found.type not in _DEVICE_TYPE:
        raise RuntimeError(f"PyTorch is not linked with support for {found.type} devices")
    return device(found.type)


def _no_events(where: device):
    return RuntimeError(f"{where.type} backend doesn't support events.")


class Stream:
    """An in-order queue of work on a device; on the CPU every task is done when it returns."""

    __slots__ = ("device",)

    def __init__(self, device=None, *, priority: int = 0) -> None:
        self.device = _device_of(device)

    device_index = -1
    stream_id = 0

    @property
    def device_type(self) -> int:
        return _DEVICE_TYPE[self.device.type]

    def query(self) -> bool:
        """True: all the work submitted to the stream is done."""
        return True

    def synchronize(self) -> None:
        """Wait for the stream's work (done already)."""

    def wait_event(self, event: Event) -> None:
        """Make later work wait for ``event`` (nothing to wait for)."""

    def wait_stream(self, stream: Stream) -> None:
        """Make later work wait for ``stream``'s work: an event the backend cannot record."""
        raise _no_events(self.device)

    def record_event(self, event: Event | None = None) -> Event:
        """Record an event on the stream: the backend records none."""
        raise _no_events(self.device)

    @property
    def native_handle(self):
        raise RuntimeError("Backend doesn't support getting stream native handle.")

    def is_capturing(self) -> bool:
        return False

    def __enter__(self) -> Stream:
        return self

    def __exit__(self, *exc) -> None:
        return None

    def __eq__(self, other) -> bool:
        return isinstance(other, Stream) and other.device == self.device

    def __hash__(self) -> int:
        return hash((self.device.type, self.stream_id))

    def __repr__(self) -> str:
        return (f"torch.Stream device_type={self.device.type}, device_index={self.device_index}, "
                f"stream_id={self.stream_id}")

    def __reduce__(self):
        raise TypeError("cannot pickle 'torch.Stream' object")


class Event:
    """A marker in a stream, to wait for or time work; the CPU backend records none."""

    __slots__ = ("device", "_timing")

    def __init__(self, device=None, *, enable_timing: bool = False, blocking: bool = False,
                 interprocess: bool = False) -> None:
        self.device = _device_of(device)
        self._timing = bool(enable_timing)

    device_index = -1
    event_id = 0

    def record(self, stream: Stream | None = None) -> None:
        """Record the event on ``stream``: the backend records none."""
        raise _no_events(self.device)

    def query(self) -> bool:
        """True: the work before the event is done."""
        return True

    def synchronize(self) -> None:
        """Wait for the work before the event (done already)."""

    def wait(self, stream: Stream | None = None) -> None:
        """Make ``stream``'s later work wait for the event (nothing to wait for)."""

    def elapsed_time(self, end_event: Event) -> float:
        """Milliseconds between this event and ``end_event``, both recorded with timing."""
        if not (self._timing and end_event._timing):
            raise ValueError("Both events must be created with argument 'enable_timing=True'.")
        raise ValueError("Both events must be recorded before calculating elapsed time.")

    def ipc_handle(self):
        raise NotImplementedError("torch.Event ipc is not supported yet, please open an issue "
                                  "if you need this!")

    @classmethod
    def from_ipc_handle(cls, device, ipc_handle):
        raise NotImplementedError("torch.Event ipc is not supported yet, please open an issue "
                                  "if you need this!")

    def __repr__(self) -> str:
        return (f"torch.Event device_type={self.device.type}, device_index={self.device_index}, "
                f"event_flag={int(self._timing)}, event_id={self.event_id}")


Stream.__module__ = Event.__module__ = "torch"
