"""Timer and Compare: measurements of two ops on three "branches" (the real library and two
copies slowed down per element), pickled as separate processes would write them, then compared
as printed tables:

$ python -m chainrule.utils.benchmark.examples.compare
"""

from __future__ import annotations

import pickle
import sys
import time

from .. import Compare, Timer


class FauxTorch:
    """The library with an extra cost of ``extra_ns_per_element`` per output element, as an
    older or newer version of it might have (simulated with a sleep, for outputs of more than
    5000 elements: a sleep costs tens of microseconds by itself)."""

    def __init__(self, real_torch, extra_ns_per_element) -> None:
        self._real_torch = real_torch
        self._extra_ns_per_element = extra_ns_per_element

    def extra_overhead(self, result):
        numel = int(result.numel())
        if numel > 5000:
            time.sleep(numel * self._extra_ns_per_element * 1e-9)
        return result

    def add(self, *args, **kwargs):
        return self.extra_overhead(self._real_torch.add(*args, **kwargs))

    def mul(self, *args, **kwargs):
        return self.extra_overhead(self._real_torch.mul(*args, **kwargs))

    def cat(self, *args, **kwargs):
        return self.extra_overhead(self._real_torch.cat(*args, **kwargs))

    def matmul(self, *args, **kwargs):
        return self.extra_overhead(self._real_torch.matmul(*args, **kwargs))


def main() -> None:
    import chainrule

    tasks = [("add", "add", "torch.add(x, y)"), ("add", "add (extra +0)", "torch.add(x, y + zero)")]
    branches = [("master", None), ("my_branch", 1), ("severe_regression", 5)]
    timers = [
        Timer(stmt=stmt, label=label, sub_label=sub_label, description=f"size: {size}",
              env=branch, num_threads=num_threads,
              globals={"torch": chainrule if branch == "master" else FauxTorch(chainrule, extra),
                       "x": chainrule.ones((size, 4)), "y": chainrule.ones((1, 4)),
                       "zero": chainrule.zeros(())})
        for branch, extra in branches
        for label, sub_label, stmt in tasks
        for size in (1, 10, 100, 1000, 10000, 50000)
        for num_threads in (1, 4)
    ]
    repeats = 2
    serialized = []
    for i, timer in enumerate(timers * repeats):
        serialized.append(pickle.dumps(timer.blocked_autorange(min_run_time=0.05)))
        print(f"\r{i + 1} / {len(timers) * repeats}", end="")
        sys.stdout.flush()
    print()
    comparison = Compare([pickle.loads(s) for s in serialized])
    print("== Unformatted " + "=" * 80 + "\n" + "/" * 95 + "\n")
    comparison.print()
    print("== Formatted " + "=" * 80 + "\n" + "/" * 93 + "\n")
    comparison.trim_significant_figures()
    comparison.colorize()
    comparison.print()


if __name__ == "__main__":
    main()
