"""Queues whose connections pickle with multiprocessing's ForkingPickler (so tensors go through
``reductions``); multiprocessing's own Queue does too, and is what ``Queue`` names."""

from __future__ import annotations

import io
import multiprocessing.queues
import pickle
from multiprocessing.reduction import ForkingPickler

__all__ = ["ConnectionWrapper", "Queue", "SimpleQueue"]


class ConnectionWrapper:
    """A connection that sends with ForkingPickler and reads with pickle."""

    def __init__(self, conn) -> None:
        self.conn = conn

    def send(self, obj) -> None:
        buf = io.BytesIO()
        ForkingPickler(buf, pickle.HIGHEST_PROTOCOL).dump(obj)
        self.send_bytes(buf.getvalue())

    def recv(self):
        return pickle.loads(self.recv_bytes())

    def __getattr__(self, name: str):
        if "conn" in self.__dict__:
            return getattr(self.conn, name)
        raise AttributeError(f"'{type(self).__name__}' object has no attribute 'conn'")


class Queue(multiprocessing.queues.Queue):
    """multiprocessing's Queue on wrapped connections."""

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self._reader = ConnectionWrapper(self._reader)
        self._writer = ConnectionWrapper(self._writer)
        self._send = self._writer.send
        self._recv = self._reader.recv


class SimpleQueue(multiprocessing.queues.SimpleQueue):
    """multiprocessing's SimpleQueue on wrapped connections."""

    def _make_methods(self) -> None:
        if not isinstance(self._reader, ConnectionWrapper):
            self._reader = ConnectionWrapper(self._reader)
            self._writer = ConnectionWrapper(self._writer)
        super()._make_methods()
