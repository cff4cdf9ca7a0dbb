"""Per-op cost of eager W1 in instructions (callgrind), which the machine's load does not change:
the op alone, with recording, with backward, and the engine alone, for chainrule and PyTorch.

Usage, from the project root: ``python -m benchmarks.op_instructions`` (needs valgrind; a few
minutes). Each implementation runs in its own process under ``valgrind --tool=callgrind
--dump-before=getppid``: after a warm-up, ``os.getppid()`` brackets each part, ``STEPS`` passes
over W1's 200-op chain: grad off; recorded, the graph dropped unused; forward and backward; and a
chain of 200 ``add``s, forward and backward, whose rule returns ``g`` unchanged (its backward
minus its forward is the engine's cost per node). The table gives instructions per op.
"""

from __future__ import annotations

import argparse
import os

from benchmarks.capture_instructions import bracketed

IMPLS = ("chainrule", "torch")
PARTS = ("grad off", "recorded", "forward + backward", "add chain: forward",
         "add chain: forward + backward")
STEPS = 30
CHAIN = 200


def _child(impl: str, steps: int = STEPS) -> None:
    """Run under callgrind: warm up, then one bracketed part per entry of ``PARTS``."""
    from benchmarks.run import set_threads

    set_threads(1)
    from benchmarks.elementwise import _chain_ops, _chain_prepare

    if impl == "torch":
        import torch as t
    else:
        import chainrule as t
    x0, a, b = _chain_prepare(False)
    x = t.tensor(x0.copy(), requires_grad=True)
    ops = _chain_ops(t, t.tensor(a), t.tensor(b))
    ones = t.ones(4)

    def forward():
        y = x
        for op in ops:
            y = op(y)
        return y.sum()

    def grad_off():
        with t.no_grad():
            forward()

    def step():
        forward().backward()
        x.grad = None

    def adds():
        y = x
        for _ in range(CHAIN):
            y = y + ones
        return y.sum()

    def adds_step():
        adds().backward()
        x.grad = None

    parts = (grad_off, forward, step, adds, adds_step)
    for _ in range(steps):
        for part in parts:
            part()
    for part in parts:
        os.getppid()  # a part starts
        for _ in range(steps):
            part()
    os.getppid()


def main() -> None:
    """Print the table: instructions per op of each part, for each implementation."""
    parser = argparse.ArgumentParser(prog="python -m benchmarks.op_instructions",
                                     description=__doc__.split("\n")[0])
    parser.add_argument("impls", nargs="*", help=f"some of {', '.join(IMPLS)} (both)")
    parser.add_argument("--child", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        _child(args.child)
        return
    unknown = set(args.impls) - set(IMPLS)
    if unknown:
        parser.error(f"unknown implementations: {', '.join(sorted(unknown))}")
    impls = args.impls or IMPLS
    counts = {}
    for impl in impls:
        counts[impl] = [n / (STEPS * CHAIN) for n in bracketed(
            "benchmarks.op_instructions", impl, range(2, 2 + len(PARTS)))]
    print("| part | " + " | ".join(impls) + (" | chainrule / torch |" if len(impls) == 2
                                              else " |"))
    print("| --- |" + " --- |" * (len(impls) + (len(impls) == 2)))
    rows = list(zip(*(counts[impl] for impl in impls), strict=True))
    engine = [rows[4][i] - rows[3][i] for i in range(len(impls))]
    for name, row in [*zip(PARTS, rows, strict=True), ("engine per node (add chain)", engine)]:
        ratio = f" {row[0] / row[1]:.2f} |" if len(impls) == 2 else ""
        print(f"| {name} | " + " | ".join(f"{v / 1e3:.1f} k" for v in row) + " |" + ratio,
              flush=True)


if __name__ == "__main__":
    main()
