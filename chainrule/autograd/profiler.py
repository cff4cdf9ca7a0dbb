"""``autograd.profiler``: PyTorch's older profiler API over the same recording as
``chainrule.profiler`` (``profile(enabled=True, ...)``, ``record_function``)."""

from __future__ import annotations

from ..profiler import EventList, FunctionEvent, FunctionEventAvg, _Profiler, record_function

__all__ = ["profile", "record_function", "EventList", "FunctionEvent", "FunctionEventAvg"]


class profile(_Profiler):
    """Profile the block's ops and backward nodes; ``prof.table()`` or
    ``prof.key_averages().table()`` prints the summary. CUDA and other device options are
    accepted and ignored."""

    def __init__(self, enabled: bool = True, *, use_cuda: bool = False, use_device=None,
                 record_shapes: bool = False, with_flops: bool = False,
                 profile_memory: bool = False, with_stack: bool = False,
                 with_modules: bool = False, use_kineto: bool = False, use_cpu: bool = True,
                 experimental_config=None, acc_events: bool = False,
                 custom_trace_id_callback=None, post_processing_timeout_s: float | None = None,
                 activity_filters: dict | None = None) -> None:
        super().__init__(record_shapes, profile_memory, with_stack)
        self.enabled = enabled

    def __enter__(self) -> profile:
        if self.enabled:
            self._start_recording()
        return self

    def __exit__(self, *exc) -> None:
        if self.enabled:
            self._stop_recording()

    @property
    def function_events(self) -> EventList:
        """Every recorded event."""
        return self._build()

    @property
    def self_cpu_time_total(self) -> float:
        """The summed self time of all events, in microseconds."""
        return self._build().self_cpu_time_total

    def total_average(self) -> FunctionEventAvg:
        return self._build().total_average()

    def table(self, sort_by: str | None = None, row_limit: int = 100, **kwargs) -> str:
        """The events as PyTorch's profiler table."""
        return self._build().table(sort_by=sort_by, row_limit=row_limit, **kwargs)

    def __str__(self) -> str:
        return self.table()
