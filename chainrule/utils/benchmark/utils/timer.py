"""Timer: timeit for tensor code, with warm-up, a thread count, replicates and labels."""

from __future__ import annotations

import enum
import sys
import textwrap
import timeit
from collections.abc import Callable
from typing import Any

import numpy as np

from . import common

__all__ = ["Timer", "timer", "Language"]


def timer() -> float:
    """The clock Timer reads by default (no accelerator to synchronize)."""
    return timeit.default_timer()


class Language(enum.Enum):
    PYTHON = 0
    CPP = 1


class Timer:
    """Measures the run time of ``stmt`` (after ``setup``), as ``timeit.Timer`` does, in replicates
    that a :class:`Measurement` summarizes; ``label``, ``sub_label``, ``description`` and ``env``
    say what was measured (``Compare`` arranges its tables by them)."""

    _timer_cls: type = timeit.Timer

    def __init__(self, stmt: str = "pass", setup: str = "pass", global_setup: str = "",
                 timer: Callable[[], float] = timer, globals: dict[str, Any] | None = None,
                 label: str | None = None, sub_label: str | None = None,
                 description: str | None = None, env: str | None = None, num_threads: int = 1,
                 language: Language | str = Language.PYTHON) -> None:
        if not isinstance(stmt, str):
            raise ValueError("Currently only a `str` stmt is supported.")
        self._globals = dict(globals or {})
        if language in (Language.PYTHON, "py", "python"):
            # statements read `torch`: chainrule itself
            self._globals.setdefault("torch", sys.modules[__name__.partition(".")[0]])
            self._language = Language.PYTHON
            if global_setup:
                raise ValueError(f"global_setup is C++ only, got `{global_setup}`. Most likely "
                                 "this code can simply be moved to `setup`.")
        elif language in (Language.CPP, "cpp", "c++"):
            raise NotImplementedError("Timer(language='c++') compiles the statement against "
                                      "libtorch's C++ API; chainrule has no C++ API")
        else:
            raise ValueError(f"Invalid language `{language}`.")
        stmt, setup = (self._clean(s) for s in (stmt, setup))
        self._timer = self._timer_cls(stmt=stmt, setup=setup, timer=timer, globals=self._globals)
        self._task_spec = common.TaskSpec(stmt=stmt, setup=setup, global_setup=global_setup,
                                          label=label, sub_label=sub_label,
                                          description=description, env=env,
                                          num_threads=num_threads)

    @staticmethod
    def _clean(code: str) -> str:
        code = textwrap.dedent(code)
        return (code[1:] if code.startswith("\n") else code).rstrip()

    def _timeit(self, number: int) -> float:
        return max(self._timer.timeit(number), 1e-9)  # a zero would break the statistics

    def timeit(self, number: int = 1000000) -> common.Measurement:
        """Run ``stmt`` ``number`` times (after a warm-up of a hundredth of that) and time it."""
        with common.set_torch_threads(self._task_spec.num_threads):
            self._timeit(number=max(int(number // 100), 2))
            return common.Measurement(number_per_run=number,
                                      raw_times=[self._timeit(number=number)],
                                      task_spec=self._task_spec)

    def repeat(self, repeat: int = -1, number: int = -1) -> None:
        raise NotImplementedError("See `Timer.blocked_autorange.`")

    def autorange(self, callback: Callable[[int, float], None] | None = None) -> None:
        raise NotImplementedError("See `Timer.blocked_autorange.`")

    def _measure(self, number: int, stop: Callable[[list[float]], bool], min_run_time: float,
                 max_run_time: float | None = None,
                 callback: Callable[[int, float], None] | None = None) -> list[float]:
        """Time blocks of ``number`` runs until ``min_run_time`` has passed and ``stop`` agrees,
        or ``max_run_time`` has passed."""
        total, can_stop, times = 0.0, False, []
        with common.set_torch_threads(self._task_spec.num_threads):
            while total < min_run_time or not can_stop:
                spent = self._timeit(number)
                times.append(spent)
                total += spent
                if callback:
                    callback(number, spent)
                can_stop = stop(times)
                if max_run_time and total > max_run_time:
                    break
        return times

    def _estimate_block_size(self, min_run_time: float) -> int:
        """Runs per block: grown tenfold until the timer's own overhead is negligible."""
        with common.set_torch_threads(self._task_spec.num_threads):
            overhead = float(np.median(np.asarray([self._timeit(0) for _ in range(5)],
                                                  dtype=np.float32)))
            number = 1
            while True:
                taken = self._timeit(number)
                if overhead / taken <= 1e-4 and taken >= min_run_time / 1000:
                    break
                if taken > min_run_time or number * 10 > 2147483647:
                    break
                number *= 10
        return number

    def blocked_autorange(self, callback: Callable[[int, float], None] | None = None,
                          min_run_time: float = 0.2) -> common.Measurement:
        """Time blocks of runs (the block size chosen so the clock's overhead is negligible)
        until at least ``min_run_time`` seconds have been measured."""
        number = self._estimate_block_size(min_run_time)
        times = self._measure(number, lambda times: True, min_run_time, callback=callback)
        return common.Measurement(number_per_run=number, raw_times=times,
                                  task_spec=self._task_spec)

    def adaptive_autorange(self, threshold: float = 0.1, *, min_run_time: float = 0.01,
                           max_run_time: float = 10.0,
                           callback: Callable[[int, float], None] | None = None
                           ) -> common.Measurement:
        """Time blocks of runs until the interquartile range is below ``threshold`` of the
        median (after at least 4 blocks and ``min_run_time``), or ``max_run_time`` passed."""
        number = self._estimate_block_size(min_run_time=0.05)

        def stop(times: list[float]) -> bool:
            return len(times) > 3 and common.Measurement(
                number_per_run=number, raw_times=times,
                task_spec=self._task_spec).meets_confidence(threshold=threshold)

        times = self._measure(number, stop, min_run_time, max_run_time, callback=callback)
        return common.Measurement(number_per_run=number, raw_times=times,
                                  task_spec=self._task_spec)

    def collect_callgrind(self, number: int = 100, *, repeats: int | None = None,
                          collect_baseline: bool = True, retain_out_file: bool = False):
        """Instruction counts under Valgrind's Callgrind: not available (PyTorch instruments its
        own C++ build in a subprocess)."""
        raise NotImplementedError("Timer.collect_callgrind runs the statement under Valgrind "
                                  "against PyTorch's C++ build; chainrule does not provide it. "
                                  "Use blocked_autorange or adaptive_autorange for wall times.")
