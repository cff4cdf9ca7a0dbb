"""What a benchmark measured (TaskSpec, Measurement) and the helpers that format it.

The statistics follow PyTorch's arithmetic: quantiles and means in float64, while the
logarithms and roundings behind units and significant figures are float32 (PyTorch computes them
on default-dtype tensors), so the printed digits are PyTorch's.
"""

from __future__ import annotations

import collections
import contextlib
import dataclasses
import textwrap
from collections.abc import Iterable, Iterator
from typing import Any

import numpy as np

from .... import _settings

__all__ = ["TaskSpec", "Measurement", "select_unit", "unit_to_english", "trim_sigfig",
           "ordered_unique", "set_torch_threads"]

_MAX_SIGNIFICANT_FIGURES = 4
_MIN_CONFIDENCE_INTERVAL = 25e-9  # 25 ns
# an interquartile range above these fractions of the median is reported
_IQR_WARN_THRESHOLD = 0.1
_IQR_GROSS_WARN_THRESHOLD = 0.25

_f32 = np.float32


def _log10_f32(x: float) -> float:
    with np.errstate(divide="ignore", invalid="ignore"):
        return float(np.log10(_f32(x)))


@dataclasses.dataclass(init=True, repr=False, eq=True, frozen=True)
class TaskSpec:
    """What a Timer measures (everything but its globals)."""

    stmt: str
    setup: str
    global_setup: str = ""
    label: str | None = None
    sub_label: str | None = None
    description: str | None = None
    env: str | None = None
    num_threads: int = 1

    @property
    def title(self) -> str:
        """The label (or the statement), with the sub-label."""
        sub = f": {self.sub_label}" if self.sub_label else ""
        if self.label is not None:
            return self.label + sub
        if "\n" not in self.stmt:
            return self.stmt + sub
        inner = f" ({self.sub_label})" if self.sub_label else ""
        return f"stmt:{inner}\n{textwrap.indent(self.stmt, '  ')}"

    def setup_str(self) -> str:
        if self.setup == "pass" or not self.setup:
            return ""
        if "\n" in self.setup:
            return f"setup:\n{textwrap.indent(self.setup, '  ')}"
        return f"setup: {self.setup}"

    def summarize(self) -> str:
        """The title, description and setup, as a Measurement prints them."""
        sections = [s for s in (self.title, self.description or "", self.setup_str()) if s]
        return "\n".join(f"{s}\n" if "\n" in s else s for s in sections)


_TASKSPEC_FIELDS = tuple(f.name for f in dataclasses.fields(TaskSpec))


@dataclasses.dataclass(init=True, repr=False)
class Measurement:
    """The times of runs of one statement: ``raw_times`` of ``number_per_run`` runs each."""

    number_per_run: int
    raw_times: list[float]
    task_spec: TaskSpec
    metadata: dict[Any, Any] | None = None  # the user's

    def __post_init__(self) -> None:
        self._sorted_times: tuple[float, ...] = ()
        self._warnings: tuple[str, ...] = ()
        self._median = self._mean = self._p25 = self._p75 = -1.0

    def __getattr__(self, name: str) -> Any:
        if name in _TASKSPEC_FIELDS:  # the task's fields read through the measurement
            return getattr(self.task_spec, name)
        return super().__getattribute__(name)

    @property
    def times(self) -> list[float]:
        """The time of one run, per measurement."""
        return [t / self.number_per_run for t in self.raw_times]

    @property
    def median(self) -> float:
        self._lazy_init()
        return self._median

    @property
    def mean(self) -> float:
        self._lazy_init()
        return self._mean

    @property
    def iqr(self) -> float:
        self._lazy_init()
        return self._p75 - self._p25

    @property
    def significant_figures(self) -> int:
        """How many digits of the median the spread of the middle half supports (1 to 4)."""
        self._lazy_init()
        n = len(self._sorted_times)
        middle = self._sorted_times[n // 4:int(np.ceil(_f32(3 * n / 4)))]
        std = float(np.std(np.asarray(middle, dtype=np.float32)))
        sqrt_n = float(np.sqrt(_f32(len(middle))))
        interval = max(1.645 * std / sqrt_n, _MIN_CONFIDENCE_INTERVAL)
        figures = int(np.floor(_f32(_log10_f32(self._median / interval))))
        return min(max(figures, 1), _MAX_SIGNIFICANT_FIGURES)

    @property
    def has_warnings(self) -> bool:
        self._lazy_init()
        return bool(self._warnings)

    def _lazy_init(self) -> None:
        if not self.raw_times or self._sorted_times:
            return
        self._sorted_times = tuple(sorted(self.times))
        times = np.asarray(self._sorted_times, dtype=np.float64)
        self._median, self._p25, self._p75 = (float(np.quantile(times, q))
                                              for q in (0.5, 0.25, 0.75))
        self._mean = float(times.mean())
        for threshold, why in ((_IQR_GROSS_WARN_THRESHOLD,
                                "This suggests significant environmental influence."),
                               (_IQR_WARN_THRESHOLD, "This could indicate system fluctuation.")):
            if not self.meets_confidence(threshold):
                self._warnings += (f"  WARNING: Interquartile range is "
                                   f"{self.iqr / self.median * 100:.1f}% of the median "
                                   f"measurement.\n           {why}",)
                break

    def meets_confidence(self, threshold: float = _IQR_WARN_THRESHOLD) -> bool:
        """Whether the interquartile range is below ``threshold`` times the median."""
        return self.iqr / self.median < threshold

    @property
    def title(self) -> str:
        return self.task_spec.title

    @property
    def env(self) -> str | None:
        return self.task_spec.env

    @property
    def as_row_name(self) -> str:
        return self.sub_label or self.stmt or "[Unknown]"

    def __repr__(self) -> str:
        self._lazy_init()
        n = len(self._sorted_times)
        unit, scale = select_unit(self._median)
        lines = [object.__repr__(self), self.task_spec.summarize(),
                 f"  {'Median: ' if n > 1 else ''}{self._median / scale:.2f} {unit}"]
        if n >= 4:
            lines.append(f"  IQR:    {self.iqr / scale:.2f} {unit} ({self._p25 / scale:.2f} to "
                         f"{self._p75 / scale:.2f})")
        threads = f"{self.num_threads} thread{'s' if self.num_threads > 1 else ''}"
        lines.append(f"  {n} measurement{'s' if n > 1 else ''}, {self.number_per_run} runs "
                     f"{'per measurement,' if n > 1 else ','} {threads}")
        lines.append("\n".join(self._warnings))
        return "\n".join(lines).strip()

    @staticmethod
    def merge(measurements: Iterable[Measurement]) -> list[Measurement]:
        """One Measurement per TaskSpec, holding all its times (per run, so
        ``number_per_run=1``; metadata dropped)."""
        grouped: dict[TaskSpec, list[float]] = collections.defaultdict(list)
        for m in measurements:
            grouped[m.task_spec].extend(m.times)
        return [Measurement(number_per_run=1, raw_times=times, task_spec=spec, metadata=None)
                for spec, times in grouped.items()]


def select_unit(t: float) -> tuple[str, float]:
    """The unit (ns, us, ms or s) that gives ``t`` seconds a leading digit, and its scale."""
    unit = {-3: "ns", -2: "us", -1: "ms"}.get(int(_log10_f32(t) // 3), "s")
    return unit, {"ns": 1e-9, "us": 1e-6, "ms": 1e-3, "s": 1}[unit]


def unit_to_english(u: str) -> str:
    return {"ns": "nanosecond", "us": "microsecond", "ms": "millisecond", "s": "second"}[u]


def trim_sigfig(x: float, n: int) -> float:
    """``x`` rounded to ``n`` significant figures (3.14159, 2 -> 3.1)."""
    if n != int(n):
        raise AssertionError("Number of significant figures must be an integer")
    magnitude = int(np.ceil(_f32(_log10_f32(abs(x)))))
    scale = 10 ** (magnitude - n)
    return float(np.round(_f32(x / scale)) * _f32(scale))


def ordered_unique(elements: Iterable[Any]) -> list[Any]:
    """The distinct elements, in order of first appearance."""
    return list(dict.fromkeys(elements))


@contextlib.contextmanager
def set_torch_threads(n: int) -> Iterator[None]:
    """Set the intra-op thread count inside the block."""
    prior = _settings.get_num_threads()
    try:
        _settings.set_num_threads(n)
        yield
    finally:
        _settings.set_num_threads(prior)
