"""W5: peak memory of one forward + backward of a 20-layer MLP, in a fresh process per run.

The parent (``Memory.measure``) starts ``python -m benchmarks.memory IMPL [--tiny]`` for each
run; the child builds the network, records its baseline, runs forward + backward, and prints
one JSON line. A compiled implementation's first two calls capture (eagerly): the child measures
the first (the process's first step, as the others'), runs the second, returns the memory
freed meanwhile to the system (``malloc_trim``), and measures the third, replayed, call: the
compiled column is the replay's peak, the capture's is in its note.
"""

from __future__ import annotations

import argparse
import ctypes
import gc
import json
import os
import resource
import statistics
import subprocess
import sys
import tracemalloc
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass
from typing import Any

import numpy as np

from benchmarks.harness import Cell, Config, Impl, failure_cell, load_impl, require, to_numpy
from benchmarks.mlp import NEEDS, make_data, mlp_loss, numpy_mlp_grads

DEPTH, WIDTH, BATCH = 20, 1024, 256
TINY_DEPTH, TINY_WIDTH, TINY_BATCH = 4, 64, 16
ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


# Peak memory is read from /proc/self/status: VmRSS at the baseline, then VmHWM (the resident
# high-water mark) after resetting it to the current RSS by writing "5" to
# /proc/self/clear_refs (Linux >= 4.0). ru_maxrss cannot be reset, so it would also count the
# set-up's own peak (imports, weight initialisation); it is the fallback where clear_refs is
# refused, and the result then says so.
def _status_kib(field: str) -> int:
    with open("/proc/self/status") as status:
        for line in status:
            if line.startswith(field + ":"):
                return int(line.split()[1])
    raise RuntimeError(f"{field} not in /proc/self/status")


def _reset_peak() -> bool:
    try:
        with open("/proc/self/clear_refs", "w") as clear_refs:
            clear_refs.write("5")
        return True
    except OSError:
        return False


def trim() -> bool:
    """Return the heap's free memory to the system (glibc's ``malloc_trim``): what earlier
    steps freed is then not resident at the baseline, where it would hide the next peak."""
    try:
        ctypes.CDLL(None).malloc_trim(0)
    except (OSError, AttributeError):  # not glibc
        return False
    return True


def measure_peak(run: Callable[[], Any]) -> tuple[Any, float, str]:
    """``run()``'s result, its peak resident memory above the baseline in MiB, and how it was
    read."""
    gc.collect()
    baseline = _status_kib("VmRSS")
    exact = _reset_peak()
    result = run()
    if exact:
        peak = _status_kib("VmHWM")
    else:
        peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss  # KiB on Linux
    return result, (peak - baseline) / 1024, ("VmHWM after clear_refs" if exact
                                             else "ru_maxrss (includes set-up)")


def traced_peak(run: Callable[[], Any]) -> float:
    """The peak of the memory allocated during ``run()`` above what was allocated before, in
    MiB, as tracemalloc sees it: the live buffers, whatever the allocator keeps resident."""
    gc.collect()
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        run()
        return (tracemalloc.get_traced_memory()[1] - before) / 2**20
    finally:
        tracemalloc.stop()


def replayed(run: Callable[[], Any], first: bool = False) -> str | None:
    """After a compiled ``run``: why its step did not replay (None: it did); ``first``: after
    its first call, why it runs eagerly from now on (None: it may replay)."""
    fn = getattr(run, "compiled", run)  # W5's run holds its compiled step; W10's is one
    stats = getattr(fn, "stats", None)
    if stats is None or (stats.get("replays") if not first else fn._eager_reason is None):
        return None
    return fn._eager_reason or fn._why or "not replayed"


def child(impl_name: str, tiny: bool) -> dict[str, Any]:
    """Measure one forward + backward in this process; return the result as a JSON-able dict."""
    impl = load_impl(impl_name)
    if impl.error is not None:
        return {"cell": asdict(Cell(text=f"n/a (import failed: {impl.error})"))}
    depth, width, batch = (TINY_DEPTH, TINY_WIDTH, TINY_BATCH) if tiny else (DEPTH, WIDTH, BATCH)
    try:
        require(impl.module, NEEDS)
        data = make_data((width,) * depth + (10,), batch)
        run = _forward_backward(impl, data.params, data.x, data.onehot)
        del data  # the implementation's copies are all that stays
        (loss, grads), peak, method = measure_peak(run)
        out: dict[str, Any] = {}
        if impl.compiled and replayed(run, first=True) is not None:  # eager from now on
            return {"cell": {"text": "error (not replayed)", "note": replayed(run, first=True),
                             "failed": True}}
        if impl.compiled:  # that was the first capture; the second, then a replay
            del loss, grads
            run.forget()
            run()
            run.forget()
            out["capture_mib"] = peak
            out["trimmed"] = trim()
            (loss, grads), peak, method = measure_peak(run)
            why = replayed(run)
            if why is not None:
                return {"cell": {"text": "error (not replayed)", "note": why, "failed": True}}
        out |= {
            "peak_mib": peak,
            "method": method,
            "loss": float(to_numpy(loss)),
            "grad_sq": sum(float(np.square(to_numpy(g), dtype=np.float64).sum()) for g in grads),
        }
        if impl.name.split(".")[0] != "torch":  # NumPy reports its buffers to tracemalloc
            del loss, grads
            getattr(run, "forget", lambda: None)()
            out["traced_mib"] = traced_peak(run)
        return out
    except Exception as exc:  # noqa: BLE001 - reported to the parent as a cell
        return {"cell": asdict(failure_cell(exc))}


def _forward_backward(
    impl: Impl, params: list[np.ndarray], x: np.ndarray, onehot: np.ndarray
) -> Callable[[], tuple[Any, list[Any]]]:
    """A function running one forward + backward and returning (loss, gradients)."""
    if impl.is_numpy:
        return lambda: numpy_mlp_grads(params, x, onehot)
    t = impl.module
    tensors = [t.tensor(p, requires_grad=True) for p in params]
    tx, tonehot = t.tensor(x), t.tensor(onehot)

    def step() -> Any:
        loss = mlp_loss(t, tensors, tx, tonehot)
        loss.backward()
        return loss

    step = impl.jit(step)

    def run() -> tuple[Any, list[Any]]:
        return step(), [p.grad for p in tensors]

    def forget() -> None:  # before a call: each call makes the gradients
        for p in tensors:
            p.grad = None

    run.compiled = step if impl.compiled else None  # type: ignore[attr-defined]
    run.forget = forget  # type: ignore[attr-defined]
    return run


def _spawn(impl_name: str, tiny: bool) -> dict[str, Any]:
    """Run ``child`` in a fresh interpreter; thread settings pass through the environment."""
    cmd = [sys.executable, "-m", "benchmarks.memory", impl_name] + (["--tiny"] if tiny else [])
    # chainrule keeps freed buffers for reuse (its glibc tuning); freed set-up memory would then
    # be resident at the baseline and hide the run's peak, so W5 measures with glibc's defaults.
    # CHAINRULE_FUSE=0: the fused back end's thread (translating, importing numba) would add its
    # own allocations to the compiled column's peak.
    env = dict(os.environ, CHAINRULE_MALLOC="default", CHAINRULE_FUSE="0")
    proc = subprocess.run(cmd, check=False, cwd=ROOT, capture_output=True, text=True, timeout=900,
                          env=env)
    lines = proc.stdout.strip().splitlines()
    if proc.returncode != 0 or not lines:
        note = f"exit code {proc.returncode}: {proc.stderr.strip()[-800:]}"
        return {"cell": {"text": "error (subprocess)", "note": note, "failed": True}}
    return json.loads(lines[-1])


@dataclass(frozen=True)
class Memory:
    """W5: the median peak over fresh processes, checked against the numpy process's numbers."""

    id: str = "W5"
    title: str = f"peak memory: {DEPTH}-layer MLP, width {WIDTH}, batch {BATCH}, fwd+bwd"
    unit: str = "MiB"
    tol: float = 1e-4
    compiles: bool = True  # compiled: the replayed step's peak (the capture's in the note)

    def measure(
        self, impls: Sequence[Impl], config: Config, log: Callable[[str], None]
    ) -> dict[str, Cell]:
        """Return a Cell per implementation name."""
        runs = 1 if config.tiny else 3
        reference = _spawn("numpy", config.tiny)
        cells: dict[str, Cell] = {}
        for impl in impls:
            if impl.error is not None:
                cell = Cell(text=f"n/a (import failed: {impl.error.split(':')[0]})")
            else:
                results = [reference] if impl.is_numpy else []
                results += [_spawn(impl.name, config.tiny) for _ in range(runs - len(results))]
                cell = self._cell(results, reference)
            log(f"{self.id} {impl.name}: {cell.text or f'{cell.value:.4g} {self.unit}'}")
            cells[impl.name] = cell
        return cells

    def _cell(self, results: list[dict[str, Any]], reference: dict[str, Any]) -> Cell:
        for result in results:
            if "cell" in result:
                return Cell(**result["cell"])
        if "cell" in reference:
            return Cell(text="not checked (no reference)")
        for key in ("loss", "grad_sq"):
            want, got = reference[key], results[0][key]
            if not abs(got - want) <= self.tol * max(abs(want), 1e-12):
                note = f"{key}: {got!r}, numpy has {want!r}"
                return Cell(text="FAIL (disagrees with numpy)", note=note, failed=True)
        note = "" if results[0]["method"].startswith("VmHWM") else results[0]["method"]
        if "traced_mib" in results[0]:
            traced = f"traced (tracemalloc) {results[0]['traced_mib']:.1f} MiB"
            note = f"{note}; {traced}" if note else traced
        return Cell(value=statistics.median(r["peak_mib"] for r in results),
                    note=_compiled_note(results, note))


def _compiled_note(results: list[dict[str, Any]], note: str) -> str:
    """A compiled column's note: the captures' peak, and whether the heap was trimmed."""
    if "capture_mib" not in results[0]:
        return note
    capture = statistics.median(r["capture_mib"] for r in results)
    text = f"replayed step; the first call (a capture) peaks at {capture:.1f} MiB"
    if not results[0]["trimmed"]:
        text += " (no malloc_trim: memory freed by the captures may hide the replay's peak)"
    return f"{note}; {text}" if note else text


def main(argv: Sequence[str] | None = None) -> None:
    """Child entry point: print one JSON line."""
    parser = argparse.ArgumentParser(prog="python -m benchmarks.memory")
    parser.add_argument("impl")
    parser.add_argument("--tiny", action="store_true")
    args = parser.parse_args(argv)
    print(json.dumps(child(args.impl, args.tiny)))


W5 = Memory()

if __name__ == "__main__":
    main()
