"""``torch.profiler.profiler``: the module PyTorch defines ``profile`` and its schedule in
(chainrule defines them in ``chainrule.profiler``; these are the same objects)."""

from __future__ import annotations

from . import (  # noqa: F401  (ProfilerActivity, kineto_available: importable here too)
    ExecutionTraceObserver,
    ProfilerAction,
    ProfilerActivity,
    kineto_available,
    profile,
    schedule,
    supported_activities,
    tensorboard_trace_handler,
)

__all__ = ["supported_activities", "ProfilerAction", "schedule", "tensorboard_trace_handler",
           "profile", "ExecutionTraceObserver"]

PROFILER_STEP_NAME = "ProfilerStep"  # the ranges prof.step() opens are "ProfilerStep#<n>"

