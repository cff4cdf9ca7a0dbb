"""Capture cost of chainrule.compile in instructions (callgrind), which the machine's load does
not change: the first two calls of a fresh compiled build against an eager step.

Usage, from the project root: ``python -m benchmarks.capture_instructions W1 W3 W4`` (needs
valgrind; a few minutes per workload). Each workload runs in its own process under
``valgrind --tool=callgrind --dump-before=getppid``: after one warm-up capture (imports, regex
caches), ``os.getppid()`` brackets 3 eager steps, then 3 fresh builds' calls 1-2 (two
``step()``, the code cache emptied before each); the table gives each part's count over 3.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
from pathlib import Path

WORKLOADS = ("W1", "W2", "W3", "W4", "W6")


def _child(workload_id: str) -> None:
    """Run under callgrind: warm up, then the two bracketed parts."""
    from benchmarks.run import set_threads

    set_threads(1)
    from benchmarks import elementwise, hvp, mlp
    from benchmarks.harness import load_impl
    from chainrule import _compile

    workload = {w.id: w for w in (elementwise.W1, mlp.W2, mlp.W3, hvp.W4,
                                  elementwise.W6)}[workload_id]
    data = workload.prepare(False)
    eager = workload.build(load_impl("chainrule"), data)
    eager.check()
    for _ in range(3):
        eager.step()
    builds = [workload.build(load_impl("chainrule.compile"), data) for _ in range(4)]
    builds[0].step()
    builds[0].step()
    os.getppid()  # part 2 starts: eager steps
    for _ in range(3):
        eager.step()
    os.getppid()  # part 3 starts: captures
    for compiled in builds[1:]:
        _compile._CODES.clear()
        compiled.step()
        compiled.step()
    os.getppid()


def _total(path: Path) -> int:
    for line in path.read_text().splitlines():
        if line.startswith(("summary:", "totals:")):
            return int(line.split()[1])
    raise RuntimeError(f"no totals in {path}")


def bracketed(module: str, child: str, parts: range) -> list[int]:
    """Instructions of each part of ``python -m module --child child`` under callgrind, parts
    numbered by the ``os.getppid()`` calls that begin them (2 is the first after warm-up)."""
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "cg.out"
        subprocess.run(
            ["valgrind", "--tool=callgrind", "--dump-before=getppid",
             f"--callgrind-out-file={out}", sys.executable, "-m", module, "--child", child],
            # (CHAINRULE_FUSE=0: callgrind counts every thread's instructions, and the fused
            # back end works on built programs in a thread of its own)
            check=True, capture_output=True,
            env={**os.environ, "PYTHONHASHSEED": "0", "CHAINRULE_FUSE": "0"})
        return [_total(Path(f"{out}.{part}")) for part in parts]


def main() -> None:
    """Print one line per workload: instructions of an eager step and of calls 1-2."""
    parser = argparse.ArgumentParser(prog="python -m benchmarks.capture_instructions",
                                     description=__doc__.split("\n")[0])
    parser.add_argument("workloads", nargs="*", help=f"some of {', '.join(WORKLOADS)} (all)")
    parser.add_argument("--child", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        _child(args.child)
        return
    unknown = set(args.workloads) - set(WORKLOADS)
    if unknown:
        parser.error(f"unknown workloads: {', '.join(sorted(unknown))}")
    print("| id | eager step | calls 1-2 | eager steps |")
    print("| --- | --- | --- | --- |")
    for workload_id in args.workloads or WORKLOADS:
        eager, capture = (n / 3 for n in bracketed("benchmarks.capture_instructions",
                                                    workload_id, range(2, 4)))
        print(f"| {workload_id} | {eager / 1e6:.3g} M | {capture / 1e6:.3g} M | "
              f"{capture / eager:.2f} |", flush=True)


if __name__ == "__main__":
    main()
