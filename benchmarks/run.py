"""Run the workloads for each implementation and print one table.

Usage, from the project root: ``python -m benchmarks [--only W1,W2] [--impl torch,numpy]
[--reps N] [--threads N] [--tiny] [--markdown docs/performance.md]`` (or
``python benchmarks/run.py ...``).
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Callable, Sequence
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
WORKLOAD_IDS = ("W1", "W2", "W3", "W4", "W5", "W6", "W7", "W8", "W8L", "W9", "W10", "W10C", "W10T",
                "W10CT", "W11")
DEFAULT_WORKLOADS = WORKLOAD_IDS[:-1]  # W11 starts processes: --only W11
IMPL_NAMES = ("chainrule", "chainrule.compile", "torch", "torch.compile", "numpy")
DEFAULT_IMPLS = ("chainrule", "chainrule.compile", "torch", "numpy")  # torch.compile: opt-in
THREAD_VARS = (
    "OMP_NUM_THREADS",
    "MKL_NUM_THREADS",
    "OPENBLAS_NUM_THREADS",
    "VECLIB_MAXIMUM_THREADS",
    "NUMEXPR_NUM_THREADS",
)


def parse_args(argv: Sequence[str] | None = None) -> argparse.Namespace:
    """Parse the command line."""
    parser = argparse.ArgumentParser(
        prog="python -m benchmarks", description=__doc__.split("\n")[0]
    )
    parser.add_argument(
        "--only",
        type=_choices(WORKLOAD_IDS),
        default=DEFAULT_WORKLOADS,
        help="comma-separated workload ids (default: all but W11)",
    )
    parser.add_argument(
        "--impl",
        type=_choices(IMPL_NAMES),
        default=DEFAULT_IMPLS,
        help="comma-separated implementations (default: chainrule,chainrule.compile,torch,"
        "numpy; torch.compile compiles for seconds per workload)",
    )
    parser.add_argument("--reps", type=int, default=20, help="timed repetitions (default: 20)")
    parser.add_argument(
        "--threads",
        type=int,
        default=1,
        help="threads for every library: BLAS, torch's and chainrule's intra-op pools "
        "(default: 1); above 1, W6 and W2 are also timed at 1 thread for the speed-up",
    )
    parser.add_argument(
        "--tiny",
        action="store_true",
        help="shrink sizes so the whole run takes seconds (a smoke test)",
    )
    parser.add_argument(
        "--markdown",
        type=Path,
        metavar="PATH",
        help="also write the header and table as markdown to PATH",
    )
    parser.add_argument(
        "--strict",
        action="store_true",
        help="exit non-zero on chainrule failures too, not only torch/numpy ones",
    )
    args = parser.parse_args(argv)
    if args.reps < 1 or args.threads < 1:
        parser.error("--reps and --threads must be at least 1")
    return args


def _choices(allowed: Sequence[str]) -> Callable[[str], tuple[str, ...]]:
    def parse(text: str) -> tuple[str, ...]:
        names = tuple(name.strip() for name in text.split(",") if name.strip())
        unknown = [name for name in names if name not in allowed]
        if unknown or not names:
            raise argparse.ArgumentTypeError(f"choose from {','.join(allowed)}, got {text!r}")
        return tuple(name for name in allowed if name in names)  # canonical order

    return parse


def set_threads(threads: int) -> None:
    """Pin every thread pool; the variables only work before numpy and torch are imported."""
    for var in THREAD_VARS:
        os.environ[var] = str(threads)
    try:  # also covers pools already loaded, e.g. when main() runs inside a test process
        from threadpoolctl import threadpool_limits

        threadpool_limits(threads)
    except ImportError:
        pass


def pin_pools(impls: Sequence, threads: int) -> None:
    """Size the intra-op pools of torch and chainrule (set_num_threads) and the BLAS pools."""
    set_threads(threads)
    for impl in impls:
        if impl.module is not None and impl.name in ("torch", "chainrule", "chainrule.compile"):
            impl.module.set_num_threads(threads)


SPEEDUP_WORKLOADS = ("W6", "W2")


def speedups(selected: Sequence, impls: Sequence, cells: dict, config, log) -> list[str]:
    """The speed-up from 1 to ``config.threads`` threads on W6 and W2: each measured again with
    every pool at 1 thread, in this run."""
    from dataclasses import replace

    from benchmarks.harness import Cell

    runs = [i for i in impls if i.name in ("chainrule", "chainrule.compile", "torch")]
    chosen = [w for w in selected if w.id in SPEEDUP_WORKLOADS]
    if not chosen or not runs:
        return []
    pin_pools(runs, 1)
    try:
        single = {w.id: w.measure([i for i in runs if not i.compiled or w.compiles],
                                  replace(config, threads=1), log) for w in chosen}
    finally:
        pin_pools(runs, config.threads)
    out = ["", f"speed-up from 1 to {config.threads} threads (time at 1 thread / time at "
           f"{config.threads}, both in this run):", "",
           "| id | " + " | ".join(i.name for i in runs) + " |",
           "| --- |" + " --- |" * len(runs)]
    for w in chosen:
        row = []
        for impl in runs:
            one = single[w.id].get(impl.name, Cell()).value
            many = cells[w.id].get(impl.name, Cell()).value
            row.append(f"{one / many:.2f}x" if one and many else "n/a")
        out.append(f"| {w.id} | " + " | ".join(row) + " |")
    return out


def main(argv: Sequence[str] | None = None) -> int:
    """Run the benchmark; return 1 if the torch or numpy implementation failed."""
    args = parse_args(argv)
    set_threads(args.threads)
    if str(ROOT) not in sys.path:  # chainrule and benchmarks, wherever we are started from
        sys.path.insert(0, str(ROOT))

    from benchmarks import checkpointing, cnn, elementwise, func, hvp, memory, mlp, report
    from benchmarks.distributed import W11
    from benchmarks.harness import Cell, Config, load_impl

    workloads = {
        w.id: w
        for w in (elementwise.W1, mlp.W2, mlp.W3, hvp.W4, memory.W5, elementwise.W6, cnn.W7,
                  func.W8, func.W8L, func.W9, checkpointing.W10, checkpointing.W10C,
                  checkpointing.W10T, checkpointing.W10CT, W11)
    }
    impls = [load_impl(name) for name in args.impl]
    pin_pools(impls, args.threads)
    config = Config(reps=args.reps, tiny=args.tiny, threads=args.threads)

    def log(message: str) -> None:
        print(message, file=sys.stderr, flush=True)

    selected = [workloads[wid] for wid in args.only]
    cells = {}
    for w in selected:  # compiled columns only where the workload compiles its step
        runs = [i for i in impls if not i.compiled or getattr(w, "compiles", False)]
        cells[w.id] = w.measure(runs, config, log)
        for impl in impls:
            cells[w.id].setdefault(impl.name, Cell(text="n/a (not compiled)"))

    header = report.machine_facts(impls, args.threads, args.reps, args.tiny)
    lines = report.table(selected, args.impl, cells)
    if args.threads > 1:
        lines += speedups(selected, impls, cells, config, log)
    notes = report.notes(cells, impls)
    print("\n".join(["# chainrule benchmarks", *header, "", *lines]))
    if notes:
        print("\n".join(["", "notes:", *notes]))
    if args.markdown:
        body = ["# Performance", "", *(f"- {line}" for line in header), "", *lines]
        if notes:
            body += ["", "Notes:", "", *notes]
        args.markdown.write_text("\n".join(body) + "\n", encoding="utf-8")

    # torch and numpy are the references: anything but a number from them is a broken benchmark.
    fatal = {"torch", "numpy"} | ({"chainrule"} if args.strict else set())
    imported = {impl.name for impl in impls if impl.error is None}
    failed = [
        f"{wid} {name}"
        for wid, row in cells.items()
        for name, cell in row.items()
        if name in fatal & imported and cell.value is None
    ]
    if failed:
        print(f"\nFAILED: {', '.join(failed)}", file=sys.stderr)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.path[0] = str(ROOT)  # run as a script: the project root, not benchmarks/, is the base
    raise SystemExit(main())
