"""``autograd.profiler_util``: the profiler's event types (chainrule.profiler's) and the small
helpers PyTorch keeps beside them."""

from __future__ import annotations

import bisect
from collections import defaultdict, namedtuple
from typing import Any, NamedTuple

from ..profiler import EventList, FunctionEvent, FunctionEventAvg
from ..profiler import _Times as FormattedTimesMixin

__all__ = ["EventList", "EventMetadata", "FormattedTimesMixin", "Interval", "Kernel",
           "FunctionEvent", "FunctionEventAvg", "StringTable", "MemRecordsAcc"]


class Interval:
    """A time interval (start, end)."""

    def __init__(self, start, end) -> None:
        self.start = start
        self.end = end

    def elapsed_us(self):
        """The length of the interval."""
        return self.end - self.start


Kernel = namedtuple("Kernel", ["name", "device", "duration"])


class EventMetadata(NamedTuple):
    """What a profiler reports about a device kernel, a copy or a collective (chainrule's
    CPU events have none)."""

    registers_per_thread: int | None
    shared_memory: int | None
    grid: list[int] | None
    block: list[int] | None
    priority: int | None
    blocks_per_sm: float | None
    warps_per_sm: float | None
    occupancy: dict[str, Any] | None
    est_occupancy_pct: float | None
    queued: int | None
    graph_id: int | None
    graph_node_id: int | None
    stream: int | None
    context: int | None
    channel: int | None
    channel_type: int | None
    bytes: int | None
    bandwidth_gb_s: float | None
    collective_name: str | None
    dtype: str | None
    in_msg_nelems: int | None
    out_msg_nelems: int | None
    in_split_size: str | None
    out_split_size: str | None
    global_rank_start: int | None
    global_rank_stride: int | None
    group_size: int | None
    process_group_name: str | None
    process_group_desc: str | None
    group_ranks: str | None
    rank: int | None
    src_rank: int | None
    dst_rank: int | None
    seq: int | None
    is_async: bool | None


class StringTable(defaultdict):
    """Symbol names, demangled on first use (chainrule's events name no C++ symbols: a name is
    its own demangled form)."""

    def __missing__(self, key):
        self[key] = key
        return key


class MemRecordsAcc:
    """Memory records sorted by start time, to find those in an interval."""

    def __init__(self, mem_records) -> None:
        self._mem_records = mem_records
        order = sorted((r[0].start_ns(), i) for i, r in enumerate(mem_records))
        self._start_nses = [start for start, _ in order]
        self._indices = [i for _, i in order]

    def in_interval(self, start_ns, end_ns):
        """The records that start in [start_ns, end_ns]."""
        first = bisect.bisect_left(self._start_nses, start_ns)
        last = bisect.bisect_right(self._start_nses, end_ns)
        for i in range(first, last):
            yield self._mem_records[self._indices[i]]
