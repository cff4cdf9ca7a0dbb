"""Capture time of chainrule.compile: the first two calls of a compiled step (both eager, while
the kernels are recorded and the program is written) against the median eager step.

Usage, from the project root: ``python -m benchmarks.capture [--threads N]``.
"""

from __future__ import annotations

import argparse
import statistics
import time
import warnings

from benchmarks.run import set_threads


def main() -> None:
    """Print one line per workload with a compiled column (W7 excepted: its step is an epoch)."""
    parser = argparse.ArgumentParser(prog="python -m benchmarks.capture",
                                     description=__doc__.split("\n")[0])
    parser.add_argument("--threads", type=int, default=1)
    args = parser.parse_args()
    set_threads(args.threads)
    from benchmarks import elementwise, hvp, mlp
    from benchmarks.harness import load_impl

    warnings.simplefilter("error")  # a function that falls back to eager is a failure here
    print("| id | eager step | calls 1-2 (eager + recording + code generation) | eager steps |")
    print("| --- | --- | --- | --- |")
    for workload in (elementwise.W1, mlp.W2, mlp.W3, hvp.W4, elementwise.W6):
        data = workload.prepare(False)
        eager = workload.build(load_impl("chainrule"), data)
        eager.check()
        for _ in range(3):
            eager.step()
        times = []
        for _ in range(15):
            start = time.perf_counter()
            eager.step()
            times.append(time.perf_counter() - start)
        step = statistics.median(times)
        compiled = workload.build(load_impl("chainrule.compile"), data)
        start = time.perf_counter()
        compiled.check()
        compiled.step()
        first_two = time.perf_counter() - start
        print(f"| {workload.id} | {step * 1e3:.3g} ms | {first_two * 1e3:.3g} ms | "
              f"{first_two / step:.1f} |")


if __name__ == "__main__":
    main()
