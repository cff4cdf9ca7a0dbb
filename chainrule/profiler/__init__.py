"""``chainrule.profiler``: time every op forward and every backward node, as torch.profiler does.

While a ``profile`` is open in a thread it installs itself in the slots that ``_dispatch.apply``
and the engine check (``chainrule._tooling``): each op call becomes an event ``aten::<op>`` (an
in-place one ``aten::<op>_``), each backward node an ``autograd::engine::evaluate_function:
<Node>`` event around a ``<Node>`` event, and ``record_function`` adds named ranges. Events nest
by time: an event's self time is its time minus its children's. When no profiler is open, the
hot path pays one flag check and nothing else.

Only the CPU is measured. Options PyTorch has for other devices and tools (CUDA activities,
``with_flops``, ``with_modules``, ``experimental_config``, ``use_cuda``,
``custom_trace_id_callback``, ``post_processing_timeout_s``) are accepted and ignored.
``profile_memory`` counts the bytes of each op's new outputs (frees are not tracked);
``with_stack`` records the user's frames (outside chainrule) of each call; an
``execution_trace_observer`` records while the profile does (``_execution_trace``).
"""

from __future__ import annotations

import enum
import functools
import json
import os
import threading
import time
from collections.abc import Callable, Iterable

from .. import _tooling
from ..tensor import Tensor

__all__ = ["profile", "record_function", "ProfilerActivity", "ProfilerAction", "schedule",
           "supported_activities", "kineto_available", "tensorboard_trace_handler", "DeviceType",
           "ExecutionTraceObserver"]

_perf_ns = time.perf_counter_ns
_active = threading.local()  # .profiler: the profile recording in this thread


class ProfilerActivity(enum.Enum):
    """The devices a profile can cover; chainrule measures ``CPU`` only."""

    CPU = 0
    XPU = 1
    MTIA = 2
    CUDA = 3
    HPU = 4
    PrivateUse1 = 5


class ProfilerAction(enum.Enum):
    """What the profiler does during a step of a ``schedule``."""

    NONE = 0
    WARMUP = 1
    RECORD = 2
    RECORD_AND_SAVE = 3


def supported_activities() -> set:
    """The activities chainrule can profile."""
    return {ProfilerActivity.CPU}


def kineto_available() -> bool:
    """False: chainrule's profiler is its own, not Kineto."""
    return False


def schedule(*, wait: int, warmup: int, active: int, repeat: int = 0, skip_first: int = 0,
             skip_first_wait: int = 0) -> Callable[[int], ProfilerAction]:
    """Steps to skip, wait, warm up and record, as torch.profiler.schedule: ``prof.step()``
    moves through them and ``on_trace_ready`` runs at the end of each recorded cycle."""
    if wait < 0 or warmup < 0 or active <= 0 or repeat < 0 or skip_first < 0:
        raise AssertionError("Invalid profiler schedule arguments")
    cycle = wait + warmup + active

    def action(step: int) -> ProfilerAction:
        if step < skip_first:
            return ProfilerAction.NONE
        step -= skip_first
        if skip_first_wait:
            step += wait  # the first cycle starts without its wait
        if repeat > 0 and step // cycle >= repeat:
            return ProfilerAction.NONE
        mod = step % cycle
        if mod < wait:
            return ProfilerAction.NONE
        if mod < wait + warmup:
            return ProfilerAction.WARMUP
        return ProfilerAction.RECORD if mod < cycle - 1 else ProfilerAction.RECORD_AND_SAVE

    return action


def _default_schedule(step: int) -> ProfilerAction:
    return ProfilerAction.RECORD


def tensorboard_trace_handler(dir_name: str, worker_name: str | None = None,
                              use_gzip: bool = False) -> Callable:
    """An ``on_trace_ready`` that writes each trace as ``<worker>.<ms>.pt.trace.json[.gz]``."""

    def handler(prof) -> None:
        import socket

        os.makedirs(dir_name, exist_ok=True)
        worker = worker_name or f"{socket.gethostname()}_{os.getpid()}"
        name = f"{worker}.{time.time_ns() // 1_000_000}.pt.trace.json" + (".gz" if use_gzip
                                                                            else "")
        prof.export_chrome_trace(os.path.join(dir_name, name))

    return handler


# ---- events ------------------------------------------------------------------------------------

def _format_time(us: float) -> str:
    if us >= 1e6:
        return f"{us / 1e6:.3f}s"
    if us >= 1e3:
        return f"{us / 1e3:.3f}ms"
    return f"{us:.3f}us"


def _format_memory(nbytes: int) -> str:
    for unit, size in (("GB", 1 << 30), ("MB", 1 << 20), ("KB", 1 << 10)):
        if abs(nbytes) >= size:
            return f"{nbytes / size:.2f} {unit}"
    return f"{nbytes} B"


class _Times:
    """Time and memory columns shared by one event and an average of events."""

    count = 1
    cpu_time_total = 0.0
    self_cpu_time_total = 0.0
    cpu_memory_usage = 0
    self_cpu_memory_usage = 0
    # Device columns exist (for sort_by="cuda_time_total" and the like) and stay zero.
    device_time_total = self_device_time_total = device_time = 0.0
    cuda_time_total = self_cuda_time_total = cuda_time = 0.0
    device_memory_usage = self_device_memory_usage = 0
    cuda_memory_usage = self_cuda_memory_usage = 0
    is_async = False
    is_remote = False
    is_legacy = False
    node_id = -1
    overload_name = ""
    flops = 0

    @property
    def cpu_time(self) -> float:
        """The average time of a call, in microseconds."""
        return self.cpu_time_total / self.count if self.count else 0.0

    @property
    def cpu_time_str(self) -> str:
        return _format_time(self.cpu_time)

    @property
    def cpu_time_total_str(self) -> str:
        return _format_time(self.cpu_time_total)

    @property
    def self_cpu_time_total_str(self) -> str:
        return _format_time(self.self_cpu_time_total)


class FunctionEvent(_Times):
    """One recorded call: an op, a backward node or a ``record_function`` range."""

    def __init__(self, id: int, name: str, thread: int, start_us: float, end_us: float,
                 input_shapes: list, stack: list, cat: str, self_memory: int) -> None:
        self.id = id
        self.trace_name = name
        # As PyTorch: every step of a schedule is one row of the table, "ProfilerStep*".
        self.name = self.key = "ProfilerStep*" if name.startswith("ProfilerStep#") else name
        self.thread = thread
        self.start_us = start_us
        self.end_us = end_us
        self.cpu_time_total = end_us - start_us
        self.input_shapes = input_shapes
        self.stack = stack
        self.cat = cat
        self.cpu_children: list[FunctionEvent] = []
        self.cpu_parent: FunctionEvent | None = None
        self.self_cpu_memory_usage = self_memory
        self.is_user_annotation = cat == "user_annotation"

    @property
    def self_cpu_time_total(self) -> float:
        return self.cpu_time_total - sum(c.cpu_time_total for c in self.cpu_children)

    @property
    def cpu_memory_usage(self) -> int:
        return self.self_cpu_memory_usage + sum(c.cpu_memory_usage for c in self.cpu_children)

    def __repr__(self) -> str:
        return (f"<FunctionEvent id={self.id} name={self.name} cpu_time="
                f"{self.cpu_time_total_str} start_us={self.start_us:.3f} end_us="
                f"{self.end_us:.3f} cpu_children={[c.id for c in self.cpu_children]} "
                f"thread={self.thread} input_shapes={self.input_shapes}>")


class FunctionEventAvg(_Times):
    """The events of one name (and input shapes or stack, if grouped by them), summed."""

    def __init__(self, key: str) -> None:
        self.key = key
        self.count = 0
        self.cpu_time_total = 0.0
        self.self_cpu_time_total = 0.0
        self.cpu_memory_usage = 0
        self.self_cpu_memory_usage = 0
        self.input_shapes = None
        self.stack = None
        self.cpu_parent = None
        self.is_user_annotation = False

    def add(self, event: _Times) -> FunctionEventAvg:
        if self.count == 0:
            self.input_shapes = event.input_shapes
            self.stack = event.stack
            self.cpu_parent = event.cpu_parent
            self.is_user_annotation = event.is_user_annotation
        self.count += event.count
        self.cpu_time_total += event.cpu_time_total
        self.self_cpu_time_total += event.self_cpu_time_total
        self.cpu_memory_usage += event.cpu_memory_usage
        self.self_cpu_memory_usage += event.self_cpu_memory_usage
        return self

    def __repr__(self) -> str:
        return (f"<FunctionEventAvg key={self.key} self_cpu_time={self.self_cpu_time_total_str} "
                f"cpu_time={self.cpu_time_str} input_shapes={self.input_shapes} "
                f"cpu_memory_usage={self.cpu_memory_usage}>")


class EventList(list):
    """A list of events (or of averages) that prints as PyTorch's profiler table."""

    def __init__(self, events: Iterable = (), *, profile_memory: bool = False,
                 meta: dict | None = None) -> None:
        super().__init__(events)
        self._profile_memory = profile_memory
        self._meta = meta or {}

    @property
    def self_cpu_time_total(self) -> float:
        """The summed self time of all events, in microseconds (the table's footer)."""
        return sum(e.self_cpu_time_total for e in self)

    def key_averages(self, group_by_input_shape: bool = False, group_by_stack_n: int = 0,
                     group_by_overload_name: bool = False) -> EventList:
        """One row per event name (and input shapes / first stack frames when asked)."""
        groups: dict = {}
        for e in self:
            key = (e.key, str(e.input_shapes) if group_by_input_shape else None,
                   tuple(e.stack[:group_by_stack_n]) if group_by_stack_n and e.stack else None)
            avg = groups.get(key)
            if avg is None:
                avg = groups[key] = FunctionEventAvg(e.key)
            avg.add(e)
        for avg in groups.values():  # the columns show only what the rows are grouped by
            avg.stack = avg.stack[:group_by_stack_n] if avg.stack else []
            if not group_by_input_shape:
                avg.input_shapes = ""
        return EventList(groups.values(), profile_memory=self._profile_memory, meta=self._meta)

    def total_average(self) -> FunctionEventAvg:
        """All events summed into one."""
        total = FunctionEventAvg("Total")
        for e in self:
            total.add(e)
        total.key = "Total"
        return total

    def table(self, sort_by: str | None = None, row_limit: int = 100,
              max_src_column_width: int = 75, max_name_column_width: int = 55,
              max_shapes_column_width: int = 80, header: str | None = None,
              top_level_events_only: bool = False, time_unit: str | None = None) -> str:
        """The events as PyTorch's table, sorted by an attribute (e.g. ``"cpu_time_total"``)."""
        return _table(self, sort_by, row_limit, max_src_column_width, max_name_column_width,
                      max_shapes_column_width, header, top_level_events_only, time_unit,
                      self._profile_memory)

    def __str__(self) -> str:
        return self.table()

    def export_chrome_trace(self, path: str) -> None:
        """Write the events as Chrome trace JSON (``traceEvents``; Perfetto and
        chrome://tracing open it). A path ending in ``.gz`` is gzipped."""
        _write_trace(self, path, self._meta)

    def export_stacks(self, path: str, metric: str = "self_cpu_time_total") -> None:
        """Write ``frame;frame;...;event value`` lines for flame graphs (needs with_stack)."""
        with open(path, "w") as f:
            for e in self:
                if e.stack:
                    frames = ";".join(reversed([s.replace(";", "_") for s in e.stack]))
                    f.write(f"{frames};{e.name} {int(getattr(e, metric))}\n")


def _table(events, sort_by, row_limit, max_src, max_name, max_shapes, header, top_level_only,
           time_unit, profile_memory) -> str:
    if not events:
        return ""
    events = list(events)
    if sort_by is not None:
        attr = sort_by.replace("cuda", "device").replace("xpu", "device")
        events.sort(key=lambda e: getattr(e, attr), reverse=True)
    has_shapes = any(e.input_shapes for e in events)
    has_stack = any(e.stack for e in events)

    def fmt_time(us: float) -> str:
        if time_unit == "s":
            return f"{us / 1e6:.3f}s"
        if time_unit == "ms":
            return f"{us / 1e3:.3f}ms"
        if time_unit == "us":
            return f"{us:.3f}us"
        return _format_time(us)

    name_width = min(max(len(e.key) for e in events) + 4, max_name)
    columns = [("Name", name_width, ">")]
    columns += [(h, 12, ">") for h in ("Self CPU %", "Self CPU", "CPU total %", "CPU total",
                                       "CPU time avg")]
    if profile_memory:
        columns += [("CPU Mem", 12, ">"), ("Self CPU Mem", 12, ">")]
    columns.append(("# of Calls", 12, ">"))
    if has_shapes:
        shapes_width = min(max(len(str(e.input_shapes)) for e in events) + 4, max_shapes)
        columns.append(("Input Shapes", shapes_width, ">"))
    if has_stack:
        src_width = min(max(len(s) for e in events if e.stack for s in e.stack) + 4, max_src)
        columns.append(("Source Location", src_width, "<"))

    def row(values) -> str:
        return "".join(f"{str(v):{align}{width}}  " for v, (_, width, align) in
                       zip(values, columns))

    def trim(path: str) -> str:
        if len(path) > src_width:
            path = "..." + path[len(path) - src_width + 3:]
        return path

    total = sum(e.self_cpu_time_total for e in events)

    def share(us: float) -> str:
        return f"{us * 100.0 / total:.2f}%" if total else "NaN"

    sep = "".join("-" * width + "  " for _, width, _ in columns)
    lines = []
    if header is not None:
        lines += ["=" * (len(sep) - 2), header]
    if top_level_only:
        lines += ["=" * (len(sep) - 2), "This report only display top-level ops statistics"]
    lines += [sep, row([c[0] for c in columns]), sep]
    shown = 0
    for e in events:
        if shown == row_limit:
            break
        if top_level_only and e.cpu_parent is not None:
            continue
        shown += 1
        name = e.key
        if len(name) >= max_name - 3:
            name = name[:max_name - 3] + "..."
        values = [name, share(e.self_cpu_time_total), fmt_time(e.self_cpu_time_total),
                  share(e.cpu_time_total), fmt_time(e.cpu_time_total), fmt_time(e.cpu_time)]
        if profile_memory:
            values += [_format_memory(e.cpu_memory_usage),
                       _format_memory(e.self_cpu_memory_usage)]
        values.append(e.count)
        if has_shapes:
            values.append(str(e.input_shapes)[:shapes_width])
        if has_stack:
            values.append(trim(e.stack[0]) if e.stack else "")
        lines.append(row(values))
        if has_stack and e.stack:
            blank = [""] * (len(columns) - 1)
            lines += [row(blank + [trim(s)]) for s in e.stack[1:]]
            lines.append(row(blank + [""]))
    lines += [sep, f"Self CPU time total: {fmt_time(total)}"]
    return "\n".join(lines) + "\n"


def _write_trace(events, path: str, meta: dict) -> None:
    pid = os.getpid()
    trace = [{"ph": "M", "name": "process_name", "pid": pid, "tid": 0, "ts": 0,
              "args": {"name": "python"}},
             {"ph": "M", "name": "process_labels", "pid": pid, "tid": 0, "ts": 0,
              "args": {"labels": "CPU"}}]
    for tid in dict.fromkeys(e.thread for e in events):
        trace.append({"ph": "M", "name": "thread_name", "pid": pid, "tid": tid, "ts": 0,
                      "args": {"name": f"thread {tid} (python)"}})
    for e in events:
        args: dict = {"External id": e.id}
        if e.input_shapes:
            args["Input Dims"] = e.input_shapes
        if e.stack:
            args["Call stack"] = ";".join(e.stack)
        if e.self_cpu_memory_usage:
            args["Bytes"] = e.self_cpu_memory_usage
        trace.append({"ph": "X", "cat": e.cat, "name": e.trace_name, "pid": pid, "tid": e.thread,
                      "ts": e.start_us, "dur": e.cpu_time_total, "args": args})
    doc = {"schemaVersion": 1, "deviceProperties": [], **meta, "displayTimeUnit": "ms",
           "traceEvents": trace, "traceName": path}
    text = json.dumps(doc)
    if path.endswith(".gz"):
        import gzip

        with gzip.open(path, "wt") as f:
            f.write(text)
    else:
        with open(path, "w") as f:
            f.write(text)


# ---- recording ---------------------------------------------------------------------------------

def _shapes(values) -> list:
    return [list(v._data.shape) if isinstance(v, Tensor) else
            [list(t._data.shape) if isinstance(t, Tensor) else [] for t in v]
            if type(v) in (list, tuple) and v and isinstance(v[0], Tensor) else []
            for v in values]


def _new_bytes(result) -> int:
    """Bytes of the arrays an op created (views and in-place results own none)."""
    total = 0
    for r in result if type(result) is tuple else (result,):
        if isinstance(r, Tensor) and r._data.base is None:
            total += r._data.nbytes
    return total


def _stack() -> list:
    return [f"{f.f_code.co_filename}({f.f_lineno}): {f.f_code.co_name}"
            for f in _tooling.user_frames(2)]


class _Profiler:
    """What ``profile`` and the legacy ``autograd.profiler.profile`` share: the recording."""

    def __init__(self, record_shapes: bool, profile_memory: bool, with_stack: bool) -> None:
        self.record_shapes = record_shapes
        self.profile_memory = profile_memory
        self.with_stack = with_stack
        self._raw: list = []  # per event: [name, cat, start_ns, end_ns, parent, shapes, stack, mem]
        self._open_events: list = []  # indices of the events not closed yet, innermost last
        self._recording = False
        self._tid: int | None = None  # the recording thread: threading's id, the OS's for traces
        self._thread = 0
        self._base_ns = (0, 0)  # (wall clock, perf counter) when recording began
        self._meta: dict = {}
        self._events: EventList | None = None
        self._op_hook = self._op  # the bound methods installed (removed by identity)
        self._node_hook = self._node

    # The two hooks and the ranges.
    def _begin(self, name: str, cat: str, shapes) -> int:
        i = len(self._raw)
        parent = self._open_events[-1] if self._open_events else -1
        stack = _stack() if self.with_stack else None
        self._raw.append([name, cat, 0, 0, parent, shapes if self.record_shapes else None,
                          stack, 0])
        self._open_events.append(i)
        self._raw[i][2] = _perf_ns()
        return i

    def _end(self, i: int, nbytes: int = 0) -> None:
        end = _perf_ns()
        raw = self._raw[i]
        raw[3] = end
        raw[7] = nbytes
        if self._open_events and self._open_events[-1] == i:
            self._open_events.pop()
        elif i in self._open_events:  # a range closed out of order
            self._open_events.remove(i)

    def _op(self, op, suffix: str, inputs: tuple, call):
        if not self._recording or threading.get_ident() != self._tid:
            return call()
        # a custom op carries its own namespace (mylib::op)
        i = self._begin(("" if "::" in op.name else "aten::") + op.name + suffix, "cpu_op",
                        _shapes(inputs) if self.record_shapes else None)
        result = None
        try:
            result = call()
            return result
        finally:
            self._end(i, _new_bytes(result) if self.profile_memory and not suffix else 0)

    def _node(self, node, call, *args):
        if not self._recording or threading.get_ident() != self._tid:
            return call(*args)
        name = node.name()
        grads = args[0] if type(args[0]) is list else args[:1]
        shapes = [list(g._data.shape) if g is not None else [] for g in grads] \
            if self.record_shapes else None
        outer = self._begin("autograd::engine::evaluate_function: " + name, "cpu_op", [])
        inner = self._begin(name, "cpu_op", shapes)
        try:
            return call(*args)
        finally:
            self._end(inner)
            self._end(outer)

    # Turning recording on and off.
    def _start_recording(self) -> None:
        if getattr(_active, "profiler", None) is not None:
            raise RuntimeError("Profiler is already enabled on this thread")
        _active.profiler = self
        observer = getattr(self, "execution_trace_observer", None)
        if observer:
            observer.start()
        self._tid = threading.get_ident()
        self._thread = threading.get_native_id()
        self._recording = True
        self._base_ns = (time.time_ns(), _perf_ns())
        _tooling.add_op_wrapper(self._op_hook)
        _tooling.add_node_wrapper(self._node_hook)

    def _stop_recording(self) -> None:
        if not self._recording:
            return
        self._recording = False
        observer = getattr(self, "execution_trace_observer", None)
        if observer:
            observer.stop()
        _tooling.remove_op_wrapper(self._op_hook)
        _tooling.remove_node_wrapper(self._node_hook)
        _active.profiler = None
        end = _perf_ns()
        for i in reversed(self._open_events):  # ranges still open end here
            self._raw[i][3] = end
        self._open_events = []
        self._events = None

    def _build(self) -> EventList:
        """FunctionEvents from the raw records, children linked to their parents."""
        if self._events is not None:
            return self._events
        wall0, perf0 = self._base_ns
        thread = self._thread
        events = []
        for i, (name, cat, start, end, parent, shapes, stack, mem) in enumerate(self._raw):
            e = FunctionEvent(i + 1, name, thread, (wall0 + start - perf0) / 1000,
                              (wall0 + end - perf0) / 1000, shapes or [], stack or [], cat, mem)
            if parent >= 0:
                e.cpu_parent = events[parent]
                events[parent].cpu_children.append(e)
            events.append(e)
        meta = {"baseTimeNanoseconds": wall0, **self._meta}
        self._events = EventList(events, profile_memory=self.profile_memory, meta=meta)
        return self._events

    def events(self) -> EventList:
        """Every recorded event, in the order the calls began."""
        return self._build()

    def key_averages(self, group_by_input_shape: bool = False, group_by_stack_n: int = 0,
                     group_by_overload_name: bool = False) -> EventList:
        """The events averaged by name (and input shapes / stack), for ``.table()``."""
        return self._build().key_averages(group_by_input_shape, group_by_stack_n)

    def export_chrome_trace(self, path: str) -> None:
        """Write the trace as Chrome trace JSON (Perfetto, chrome://tracing)."""
        self._build().export_chrome_trace(path)

    def export_stacks(self, path: str, metric: str = "self_cpu_time_total") -> None:
        """Write the stacks for a flame graph (needs ``with_stack=True``)."""
        self._build().export_stacks(path, metric)


class profile(_Profiler):
    """Profile the ops and backward nodes run inside the block (``torch.profiler.profile``).

    ``prof.key_averages().table(sort_by="cpu_time_total", row_limit=10)`` prints the summary,
    ``prof.export_chrome_trace(path)`` writes a trace for Perfetto. With a ``schedule``, call
    ``prof.step()`` after each step; ``on_trace_ready(prof)`` runs when a cycle's recording ends
    (without a schedule, when the profile stops). Only the thread that opened it is recorded;
    device activities and the options listed in the module docstring are ignored.
    """

    def __init__(self, *, activities: Iterable | None = None, schedule: Callable | None = None,
                 on_trace_ready: Callable | None = None, record_shapes: bool = False,
                 profile_memory: bool = False, with_stack: bool = False,
                 with_flops: bool = False, with_modules: bool = False, experimental_config=None,
                 execution_trace_observer=None, acc_events: bool = False,
                 use_cuda: bool | None = None, custom_trace_id_callback: Callable | None = None,
                 post_processing_timeout_s: float | None = None) -> None:
        super().__init__(record_shapes, profile_memory, with_stack)
        self.activities = set(activities) if activities is not None else supported_activities()
        self.schedule = schedule or _default_schedule
        self._scheduled = schedule is not None
        self.acc_events = acc_events
        self.on_trace_ready = on_trace_ready
        self.execution_trace_observer = execution_trace_observer
        self.step_num = 0
        self._action = ProfilerAction.NONE
        self._step_range: int | None = None

    def __enter__(self) -> profile:
        self.start()
        return self

    def __exit__(self, *exc) -> None:
        self.stop()
        if self.execution_trace_observer:
            self.execution_trace_observer.cleanup()

    def start(self) -> None:
        """Begin profiling (entering the ``with`` block does this)."""
        self._action = self.schedule(self.step_num)
        self._enter_action()

    def stop(self) -> None:
        """End profiling; calls ``on_trace_ready`` if this cycle was being recorded."""
        recording = self._recording
        self._close_step()
        self._stop_recording()
        if recording and self.on_trace_ready is not None:
            self.on_trace_ready(self)

    def step(self) -> None:
        """Mark the end of a training step: move to the schedule's next action."""
        prev = self._action
        self.step_num += 1
        self._action = self.schedule(self.step_num)
        self._close_step()
        if prev is ProfilerAction.RECORD_AND_SAVE:
            self._stop_recording()
            if self.on_trace_ready is not None:
                self.on_trace_ready(self)
        self._enter_action()

    def _enter_action(self) -> None:
        record = self._action in (ProfilerAction.RECORD, ProfilerAction.RECORD_AND_SAVE)
        if record and not self._recording:
            if not self.acc_events:  # a new cycle: the last one's events are gone
                self._raw, self._open_events, self._events = [], [], None
            self._start_recording()
        elif not record and self._recording:
            self._stop_recording()
        if record and self._scheduled:
            self._step_range = self._begin(f"ProfilerStep#{self.step_num}", "user_annotation",
                                           [])

    def _close_step(self) -> None:
        if self._step_range is not None and self._recording:
            self._end(self._step_range)
        self._step_range = None

    def add_metadata(self, key: str, value: str) -> None:
        """Add a string entry to the exported trace's top level."""
        self._meta[key] = value

    def add_metadata_json(self, key: str, value: str) -> None:
        """Add a JSON entry to the exported trace's top level."""
        self._meta[key] = json.loads(value)


class record_function:
    """Mark a named range in the profile: a context manager and a decorator.

    Outside a profile it does nothing.
    """

    def __init__(self, name: str, args: str | None = None) -> None:
        self.name = name
        self.args = args
        self._token = None
        self._traced: list = []

    def __enter__(self) -> record_function:
        prof = getattr(_active, "profiler", None)
        if prof is not None and prof._recording:
            self._token = (prof, prof._begin(self.name, "user_annotation", []))
        if _execution_trace._running:
            self._traced = _execution_trace.user_scope_begin(self.name)
        return self

    def __exit__(self, *exc) -> None:
        if self._traced:
            _execution_trace.user_scope_end(self._traced)
            self._traced = []
        if self._token is not None:
            prof, i = self._token
            self._token = None
            if prof._recording:
                prof._end(i)

    def __call__(self, func: Callable) -> Callable:
        @functools.wraps(func)
        def wrapper(*args, **kwargs):
            with record_function(self.name, self.args):
                return func(*args, **kwargs)

        return wrapper


class RecordScope(enum.Enum):
    """The kinds of ranges PyTorch's profiler records (ops, backward functions, user scopes)."""

    FUNCTION = 0
    BACKWARD_FUNCTION = 1
    TORCHSCRIPT_FUNCTION = 2
    KERNEL_FUNCTION_DTYPE = 3
    CUSTOM_CLASS = 4
    BUILD_FEATURE = 5
    LITE_INTERPRETER = 6
    USER_SCOPE = 7
    STATIC_RUNTIME_OP = 8
    STATIC_RUNTIME_MODEL = 9


# torch.profiler re-exports these from torch.autograd.profiler, which imports this module.
_FROM_AUTOGRAD_PROFILER = ("DeviceType", "KinetoStepTracker")


def __getattr__(name: str):
    if name in _FROM_AUTOGRAD_PROFILER:
        from ..autograd import profiler as autograd_profiler

        return getattr(autograd_profiler, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_FROM_AUTOGRAD_PROFILER))


from ._execution_trace import ExecutionTraceObserver  # noqa: E402, I001  (profiler.py reads it)
from . import _execution_trace, itt, profiler, python_tracer  # noqa: E402  (submodules)
