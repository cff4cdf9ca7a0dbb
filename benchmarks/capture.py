"""Capture time of chainrule.compile: the first two calls of a compiled step (both eager, while
the kernels are recorded and the program is written) against the median eager step.

The two calls are two ``step()`` of a fresh compiled build (a workload's ``check()``, which also
copies its outputs to NumPy, runs after them, untimed: it replays).

Usage, from the project root: ``python -m benchmarks.capture [--threads N] [--builds N]``.
Each workload's step is compiled ``--builds`` times afresh (the cache of generated code emptied
each time, as in a new process); the table gives medians, in wall-clock time and in this
thread's CPU time (which other processes on a shared machine disturb less).
"""

from __future__ import annotations

import argparse
import statistics
import time
import warnings

from benchmarks.run import set_threads


def _timed(fn) -> tuple[float, float]:
    wall, cpu = time.perf_counter(), time.thread_time()
    fn()
    return time.perf_counter() - wall, time.thread_time() - cpu


def main() -> None:
    """Print one line per workload with a compiled column (W7 excepted: its step is an epoch)."""
    parser = argparse.ArgumentParser(prog="python -m benchmarks.capture",
                                     description=__doc__.split("\n")[0])
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--builds", type=int, default=5)
    args = parser.parse_args()
    set_threads(args.threads)
    from benchmarks import elementwise, hvp, mlp
    from benchmarks.harness import load_impl
    from chainrule import _compile, _fuse

    # The calls' own cost: the fused back end works on a built program in a thread of its own,
    # which would share the GIL with the builds timed next.
    _fuse.enabled = False
    warnings.simplefilter("error")  # a function that falls back to eager is a failure here
    print("| id | eager step | calls 1-2 (eager + recording + code generation) | eager steps "
          "| eager steps (CPU time) |")
    print("| --- | --- | --- | --- | --- |")
    for workload in (elementwise.W1, mlp.W2, mlp.W3, hvp.W4, elementwise.W6):
        data = workload.prepare(False)
        eager = workload.build(load_impl("chainrule"), data)
        eager.check()
        for _ in range(3):
            eager.step()
        steps = [_timed(eager.step) for _ in range(15)]
        firsts = []
        for _ in range(args.builds):
            _compile._CODES.clear()
            compiled = workload.build(load_impl("chainrule.compile"), data)
            firsts.append(_timed(lambda c=compiled: (c.step(), c.step())))
            compiled.check()
        step, step_cpu = (statistics.median(s[i] for s in steps) for i in (0, 1))
        first, first_cpu = (statistics.median(f[i] for f in firsts) for i in (0, 1))
        print(f"| {workload.id} | {step * 1e3:.3g} ms | {first * 1e3:.3g} ms | "
              f"{first / step:.1f} | {first_cpu / step_cpu:.1f} |", flush=True)


if __name__ == "__main__":
    main()
