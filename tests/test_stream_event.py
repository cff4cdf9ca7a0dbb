"""torch.Stream and torch.Event against a CPU build of PyTorch: what they print, answer and
raise."""

from __future__ import annotations

import pickle

import pytest
import torch

import chainrule


def _outcome(call):
    try:
        return "ok", repr(call())
    except Exception as e:  # noqa: BLE001
        return type(e).__name__, str(e)


CASES = {
    "stream": lambda lib: lib.Stream(),
    "stream on cpu": lambda lib: lib.Stream("cpu", priority=-1),
    "stream on cpu:0": lambda lib: lib.Stream("cpu:0"),
    "stream on a device object": lambda lib: lib.Stream(lib.device("cpu")),
    "stream on meta": lambda lib: lib.Stream(device="meta"),
    "stream on cuda": lambda lib: lib.Stream("cuda"),
    "stream on mps": lambda lib: lib.Stream("mps"),
    "stream on an index": lambda lib: lib.Stream(1),
    "stream on no device": lambda lib: lib.Stream("foo"),
    "device": lambda lib: lib.Stream().device,
    "device_index": lambda lib: lib.Stream().device_index,
    "device_type": lambda lib: lib.Stream().device_type,
    "meta device_type": lambda lib: lib.Stream("meta").device_type,
    "stream_id": lambda lib: lib.Stream().stream_id,
    "query": lambda lib: lib.Stream().query(),
    "synchronize": lambda lib: lib.Stream().synchronize(),
    "wait_event": lambda lib: lib.Stream().wait_event(lib.Event()),
    "wait_stream": lambda lib: lib.Stream().wait_stream(lib.Stream()),
    "meta wait_stream": lambda lib: lib.Stream("meta").wait_stream(lib.Stream("meta")),
    "record_event": lambda lib: lib.Stream().record_event(),
    "native_handle": lambda lib: lib.Stream().native_handle,
    "is_capturing": lambda lib: lib.Stream().is_capturing(),
    "equal streams": lambda lib: lib.Stream() == lib.Stream("cpu"),
    "streams of two devices": lambda lib: lib.Stream() == lib.Stream("meta"),
    "stream and int": lambda lib: lib.Stream() == 0,
    "equal hashes": lambda lib: hash(lib.Stream()) == hash(lib.Stream()),
    "pickle": lambda lib: pickle.dumps(lib.Stream()),
    "event": lambda lib: lib.Event(),
    "timing event": lambda lib: lib.Event("cpu", enable_timing=True),
    "event options": lambda lib: lib.Event(blocking=True, interprocess=True),
    "meta event": lambda lib: lib.Event("meta"),
    "event on cuda": lambda lib: lib.Event("cuda"),
    "event device": lambda lib: lib.Event().device,
    "event_id": lambda lib: lib.Event().event_id,
    "record": lambda lib: lib.Event().record(),
    "record on a stream": lambda lib: lib.Event().record(lib.Stream()),
    "meta record": lambda lib: lib.Event("meta").record(),
    "event query": lambda lib: lib.Event().query(),
    "event synchronize": lambda lib: lib.Event().synchronize(),
    "event wait": lambda lib: lib.Event().wait(),
    "elapsed without timing": lambda lib: lib.Event().elapsed_time(lib.Event()),
    "elapsed unrecorded": lambda lib: lib.Event(enable_timing=True).elapsed_time(
        lib.Event(enable_timing=True)),
    "ipc_handle": lambda lib: lib.Event().ipc_handle(),
    "from_ipc_handle": lambda lib: lib.Event.from_ipc_handle("cpu", b"x"),
    "events are distinct": lambda lib: lib.Event() == lib.Event(),
}


@pytest.mark.parametrize("case", CASES)
def test_stream_and_event_as_a_cpu_build(case):
    assert _outcome(lambda: CASES[case](chainrule)) == _outcome(lambda: CASES[case](torch))


def test_stream_is_a_context_manager():
    for lib in (chainrule, torch):
        stream = lib.Stream()
        with stream as entered:
            assert entered is None or entered is stream
        assert type(stream).__name__ == "Stream" and type(stream).__module__ == "torch"
