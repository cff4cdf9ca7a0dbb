"""Instructions of one step of a timed workload (callgrind), for each implementation side by
side, which the machine's load does not change: the part of a gap that is work done, apart
from the rate it runs at.

Usage, from the project root: ``python -m benchmarks.step_instructions W3 W8 [--impl
chainrule,torch,numpy] [--no-gc]`` (needs valgrind; a minute or two per cell, but torch's W7,
oneDNN under valgrind, over six minutes). Each (workload, implementation) runs in its own
process under ``valgrind --tool=callgrind --dump-before=getppid``: after the check and 5
warm-up steps, ``os.getppid()`` brackets ``STEPS`` steps. ``--no-gc`` turns Python's garbage collector off for them (what collecting
the graph's objects costs is the difference).
"""

from __future__ import annotations

import argparse
import gc
import os

from benchmarks.capture_instructions import bracketed

WORKLOADS = ("W1", "W2", "W3", "W4", "W6", "W7", "W8", "W9")
IMPLS = ("chainrule", "torch", "numpy")
STEPS = 10


def _child(spec: str) -> None:
    """Run under callgrind: ``spec`` is ``workload:implementation[:nogc]``."""
    from benchmarks.run import set_threads

    set_threads(1)
    from benchmarks import cnn, elementwise, func, hvp, mlp
    from benchmarks.harness import load_impl

    workload_id, impl, *flags = spec.split(":")
    workload = {w.id: w for w in (elementwise.W1, mlp.W2, mlp.W3, hvp.W4, elementwise.W6,
                                  cnn.W7, func.W8, func.W9)}[workload_id]
    case = workload.build(load_impl(impl), workload.prepare(False))
    case.check()
    for _ in range(5):
        case.step()
    if "nogc" in flags:
        gc.disable()
    os.getppid()  # part 2: the steps
    for _ in range(STEPS):
        case.step()
    os.getppid()
    gc.enable()


def main() -> None:
    """Print instructions per step, one row per workload, one column per implementation."""
    parser = argparse.ArgumentParser(prog="python -m benchmarks.step_instructions",
                                     description=__doc__.split("\n")[0])
    parser.add_argument("workloads", nargs="*", help=f"some of {', '.join(WORKLOADS)} (all)")
    parser.add_argument("--impl", default=",".join(IMPLS),
                        help=f"comma-separated, some of {', '.join(IMPLS)} (all)")
    parser.add_argument("--no-gc", action="store_true",
                        help="the garbage collector off during the counted steps")
    parser.add_argument("--child", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        _child(args.child)
        return
    impls = [name.strip() for name in args.impl.split(",") if name.strip()]
    unknown = (set(args.workloads) - set(WORKLOADS)) | (set(impls) - set(IMPLS))
    if unknown or not impls:
        parser.error(f"unknown workloads or implementations: {', '.join(sorted(unknown))}")
    ratios = [name for name in ("numpy", "torch") if name in impls and "chainrule" in impls]
    print("| id | " + " | ".join(impls) + "".join(f" | chainrule / {r}" for r in ratios) + " |")
    print("| --- |" + " --- |" * (len(impls) + len(ratios)))
    suffix = ":nogc" if args.no_gc else ""
    for workload_id in args.workloads or WORKLOADS:
        counts = {impl: bracketed("benchmarks.step_instructions",
                                  f"{workload_id}:{impl}{suffix}", range(2, 3))[0] / STEPS
                  for impl in impls}
        cells = [f"{counts[impl] / 1e6:.3g} M" for impl in impls]
        cells += [f"{counts['chainrule'] / counts[r]:.2f}" for r in ratios]
        print(f"| {workload_id} | " + " | ".join(cells) + " |", flush=True)


if __name__ == "__main__":
    main()
