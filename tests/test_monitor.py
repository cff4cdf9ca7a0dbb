"""torch.monitor against torch's: aggregations, events and their data, handlers, stats over
windows (a window closed by time, by max_samples, and by the stat's deletion) and the errors."""

import datetime
import gc
import time

import numpy as np
import pytest
import torch
import torch.monitor

import chainrule
import chainrule.monitor

BOTH = pytest.mark.parametrize("m", [torch.monitor, chainrule.monitor], ids=["torch", "chainrule"])


def outcome(fn):
    try:
        return ("ok", fn())
    except Exception as e:  # noqa: BLE001  (compared with torch's)
        return (type(e).__name__, str(e).split("\n")[0])


def test_aggregations():
    def facts(m):
        A = m.Aggregation
        return [repr(A.MEAN), str(A.COUNT), A.MAX.name, A.MIN.value, repr(A(3)), A(3) == A.COUNT,
                A.MEAN == 2, int(A.SUM), hash(A.SUM), {k: v.value for k, v in
                                                       A.__members__.items()},
                m.VALUE == A.VALUE, repr(A(9)), outcome(lambda: A("MEAN"))[0],
                outcome(lambda: A.MEAN < A.SUM)[0]]
    assert facts(chainrule.monitor) == facts(torch.monitor)


def test_events_and_their_data():
    when = datetime.datetime(2024, 5, 6, 7, 8, 9, 123456)

    def facts(m):
        e = m.Event("loss", when, {"a": 1, "b": 2.5, "c": "text", "d": True, "e": np.int64(3),
                                   "f": np.float32(0.5)})
        got = [e.name, e.timestamp, e.data, {k: type(v).__name__ for k, v in e.data.items()}]
        copy = e.data
        copy["z"] = 1
        got.append(e.data == copy)
        e.name, e.data = "other", {"x": 7}
        got += [e.name, e.data, e == m.Event("other", when, {"x": 7})]
        e.timestamp = datetime.datetime(2020, 1, 1, tzinfo=datetime.timezone.utc)
        got.append(e.timestamp.tzinfo)
        for bad in [lambda: m.Event("n", 5, {}), lambda: m.Event("n", when, {"a": None}),
                    lambda: m.Event("n", when, {1: 2}), lambda: m.Event("n", when, {"x": 2 ** 70}),
                    lambda: setattr(e, "name", 5), lambda: setattr(e, "data", {"a": [1]}),
                    lambda: m.data_value_t(), lambda: m.EventHandlerHandle()]:
            got.append(outcome(bad)[0])
        return got
    assert facts(chainrule.monitor) == facts(torch.monitor)


@BOTH
def test_handlers_in_order_and_unregistered(m):
    seen = []
    first = m.register_event_handler(lambda e: seen.append(("first", e.name)))
    second = m.register_event_handler(lambda e: seen.append(("second", e.data)))
    m.log_event(m.Event("one", datetime.datetime.now(), {"k": 1}))
    m.unregister_event_handler(first)
    m.log_event(m.Event("two", datetime.datetime.now(), {}))
    m.unregister_event_handler(second)
    m.log_event(m.Event("three", datetime.datetime.now(), {}))
    assert seen == [("first", "one"), ("second", {"k": 1}), ("second", {})]

    def boom(event):
        raise ValueError("handler boom")
    handle = m.register_event_handler(boom)
    try:
        with pytest.raises(ValueError, match="handler boom"):
            m.log_event(m.Event("x", datetime.datetime.now(), {}))
    finally:
        m.unregister_event_handler(handle)
    assert outcome(lambda: m.register_event_handler(5))[0] == "TypeError"
    assert outcome(lambda: m.log_event(5))[0] == "TypeError"


def stat_run(m, window, max_samples, values, wait=0.0):
    """(what get() and count say after each add, the Stat events logged)."""
    events = []
    handle = m.register_event_handler(
        lambda e: events.append((e.name, e.data)) if e.name == "torch.monitor.Stat" else None)
    try:
        A = m.Aggregation
        stat = m.Stat("s", [A.VALUE, A.MEAN, A.COUNT, A.SUM, A.MAX, A.MIN], window, max_samples)
        trace = [(stat.name, stat.count, {a.name: v for a, v in stat.get().items()})]
        for v in values:
            if v is None:
                time.sleep(wait)
                continue
            stat.add(v)
            trace.append((stat.count, {a.name: v for a, v in stat.get().items()}))
        del stat
        gc.collect()
    finally:
        m.unregister_event_handler(handle)
    return trace, events


@pytest.mark.parametrize("max_samples", [2, 3])
def test_stat_windows_by_max_samples_and_deletion(max_samples):
    args = (datetime.timedelta(hours=1), max_samples, [5.0, 6, True, 7.5, -1.0])
    assert stat_run(chainrule.monitor, *args) == stat_run(torch.monitor, *args)


def test_stat_window_closed_by_time():
    args = (datetime.timedelta(milliseconds=200), 2 ** 63 - 1, [2.0, 3.5, None, 1.0], 0.45)
    theirs, ours = stat_run(torch.monitor, *args), stat_run(chainrule.monitor, *args)
    assert ours == theirs
    assert ours[1][0] == ("torch.monitor.Stat", {"s.mean": 2.75, "s.count": 2.0, "s.sum": 5.5,
                                                 "s.max": 3.5, "s.min": 2.0})


@BOTH
def test_stat_errors(m):
    A = m.Aggregation
    stat = m.Stat("s", (A.SUM,), datetime.timedelta(seconds=1))
    got = [outcome(lambda: setattr(stat, "name", "q"))[0],
           outcome(lambda: m.Stat("s", [A.SUM], 5))[0],
           outcome(lambda: m.Stat("s", [1], datetime.timedelta(seconds=1)))[0],
           outcome(lambda: stat.add("x"))[0]]
    assert got == ["AttributeError", "TypeError", "TypeError", "TypeError"]


def test_tensorboard_event_handler():
    class Writer:
        def __init__(self):
            self.scalars = []

        def add_scalar(self, key, value, walltime=None):
            self.scalars.append((key, value, walltime))

    when = datetime.datetime(2024, 1, 2, 3, 4, 5)

    def run(m):
        writer = Writer()
        handler = m.TensorboardEventHandler(writer)
        handler(m.Event("torch.monitor.Stat", when, {"a.sum": 2.0}))
        handler(m.Event("other", when, {"b": 1.0}))
        return writer.scalars
    assert run(chainrule.monitor) == run(torch.monitor) == [("a.sum", 2.0, when.timestamp())]


def test_wait_counter_guard():
    for m in (torch.monitor, chainrule.monitor):
        with m._WaitCounter("a.b").guard() as entered:
            assert entered is None
