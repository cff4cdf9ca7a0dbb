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
        "--threads", type=int, default=1, help="threads for every library (default: 1)"
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
    for impl in impls:
        if impl.name == "torch" and impl.module is not None:
            impl.module.set_num_threads(args.threads)
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
