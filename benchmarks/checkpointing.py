"""W10: activation checkpointing. One forward + backward of a 32-layer MLP, plain and with
``checkpoint_sequential`` in 4 segments (``use_reentrant=False``): peak memory and time of each.

Every (implementation, variant) runs in a fresh process (``python -m benchmarks.checkpointing
IMPL VARIANT [--tiny] [--reps N]``): the child builds the network and its gradient buffers,
records its baseline and measures the peak of one step (as W5 does, but with the gradient
buffers already there, see ``child``), times ``--reps`` more, and prints one JSON line (a
compiled implementation: the first call, a capture, is measured as the others' step, then after
the second capture and ``malloc_trim`` the peak and times are the replay's). The
parent fills the four rows from the children's results. The NumPy floor checkpoints by hand: it
keeps each segment's input and recomputes the segment in backward.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass
from typing import Any

import numpy as np

from benchmarks.harness import Cell, Config, Impl, failure_cell, load_impl, require, to_numpy
from benchmarks.memory import _compiled_note, measure_peak, replayed, traced_peak, trim
from benchmarks.mlp import NEEDS, make_data, mlp_loss
from benchmarks.training import cross_entropy, numpy_cross_entropy

DEPTH, WIDTH, BATCH, SEGMENTS = 32, 1024, 1024, 4
TINY_DEPTH, TINY_WIDTH, TINY_BATCH = 8, 32, 16
VARIANTS = ("plain", "checkpointed")
ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def numpy_step(params: list[np.ndarray], x: np.ndarray, onehot: np.ndarray,
               grads: list[np.ndarray], segments: int) -> float:
    """One step by hand, adding the gradients into ``grads``; with ``segments`` > 1 it keeps
    only each segment's input but the last's activations, and backward recomputes a segment
    from its input (checkpoint_sequential's plan). Returns the loss."""
    n_layers = len(params) // 2
    size = n_layers // segments
    starts = list(range(0, size * (segments - 1), size)) + [size * (segments - 1)]
    bounds = list(zip(starts, starts[1:] + [n_layers], strict=True))

    def run(start: int, end: int, h: np.ndarray, keep: bool) -> list[np.ndarray]:
        hs = [h]
        for i in range(start, end):
            z = hs[-1] @ params[2 * i] + params[2 * i + 1]
            hs.append(np.maximum(z, 0) if i < n_layers - 1 else z)
            if not keep:
                del hs[0]
        return hs

    inputs, h = [], x
    for start, end in bounds[:-1]:
        inputs.append(h)
        h = run(start, end, h, keep=False)[-1]
    hs = run(*bounds[-1], h, keep=True)
    loss, g = numpy_cross_entropy(hs.pop(), onehot)
    for start, end in reversed(bounds):
        if start < bounds[-1][0]:
            hs = run(start, end, inputs.pop(), keep=True)[:-1]
        for i in reversed(range(start, end)):
            h = hs.pop()  # freed once its layer is done
            grads[2 * i] += h.T @ g
            grads[2 * i + 1] += g.sum(axis=0)
            if i > 0:
                g = g @ params[2 * i].T
                g *= h > 0
    return loss


def _checkpointed_loss(t: Any, params: list, x: Any, onehot: Any) -> Any:
    n_layers = len(params) // 2

    def layer(i: int) -> Callable[[Any], Any]:
        w, b = params[2 * i], params[2 * i + 1]
        if i == n_layers - 1:
            return lambda h: h @ w + b
        return lambda h: t.relu(h @ w + b)

    functions = [layer(i) for i in range(n_layers)]
    out = t.utils.checkpoint.checkpoint_sequential(functions, SEGMENTS, x, use_reentrant=False)
    return cross_entropy(t, out, onehot)


def _step(impl: Impl, variant: str, data: Any) -> tuple[Callable[[], Any], Callable[[], list]]:
    """``(step, zero)``: one forward + backward adding into the gradients (returns the loss),
    and a function zeroing the gradients in place (returns them before)."""
    segments = 1 if variant == "plain" else SEGMENTS
    if impl.is_numpy:
        grads = [np.zeros_like(p) for p in data.params]

        def zero(copy: bool = True) -> list:
            before = [g.copy() for g in grads] if copy else []
            for g in grads:
                g.fill(0)
            return before

        return lambda: numpy_step(data.params, data.x, data.onehot, grads, segments), zero
    t = impl.module
    tensors = [t.tensor(p, requires_grad=True) for p in data.params]
    tx, tonehot = t.tensor(data.x), t.tensor(data.onehot)
    loss_fn = mlp_loss if variant == "plain" else _checkpointed_loss

    def plain_step() -> Any:
        loss = loss_fn(t, tensors, tx, tonehot)
        loss.backward()
        return loss

    step = impl.jit(plain_step)
    for p in tensors:  # the gradient buffers, before the step
        p.grad = t.zeros_like(p)

    def zero(copy: bool = True) -> list:
        before = [to_numpy(p.grad) for p in tensors] if copy else []
        with t.no_grad():
            for p in tensors:
                p.grad.zero_()
        return before

    return step, zero


def child(impl_name: str, variant: str, tiny: bool, reps: int) -> dict[str, Any]:
    """The peak and values of one step, then ``reps`` timed steps; a JSON-able dict.

    The gradient buffers exist (zeros) before the measured step, as in training that zeroes
    them in place: the peak is the step's own memory, its saved activations and temporaries,
    which is what checkpointing trades for time. (With fresh gradients, this network's weight
    gradients, as large as all its activations together, would set the peak either way.) The
    measured step is the process's first, so no memory an earlier step freed is resident.
    """
    impl = load_impl(impl_name)
    if impl.error is not None:
        return {"cell": asdict(Cell(text=f"n/a (import failed: {impl.error})"))}
    depth, width, batch = (TINY_DEPTH, TINY_WIDTH, TINY_BATCH) if tiny else (DEPTH, WIDTH, BATCH)
    try:
        require(impl.module, NEEDS + (("utils.checkpoint.checkpoint_sequential",)
                                      if variant == "checkpointed" else ()))
        # The same step on a tiny network first: lazy imports and first-call set-up (torch
        # loads most of torch.utils.checkpoint's machinery on the first call) are not the step's.
        _step(impl, variant, make_data((4,) * 8 + (10,), 2))[0]()
        data = make_data((width,) * depth + (10,), batch)
        step, zero = _step(impl, variant, data)
        if not impl.is_numpy:
            del data  # the implementation's copies are all that stays
        zero(copy=False)  # zeros may be calloc'd pages that only become resident when written
        loss, peak, method = measure_peak(step)
        out: dict[str, Any] = {}
        if impl.compiled and replayed(step, first=True) is not None:
            out["eager"] = replayed(step, first=True)  # the step measured is eager's first
        elif impl.compiled:  # that was the first capture; the second, then a replay
            zero(copy=False)
            step()
            zero(copy=False)
            out["capture_mib"] = peak
            out["trimmed"] = trim()
            loss, peak, method = measure_peak(step)
            why = replayed(step)
            if why is not None:
                out["eager"] = why
        loss = float(to_numpy(loss))
        grad_sq = sum(float(np.square(g, dtype=np.float64).sum()) for g in zero())
        times = []
        for _ in range(reps):
            zero(copy=False)
            start = time.perf_counter()
            step()
            times.append(time.perf_counter() - start)
        if impl.name.split(".")[0] != "torch":  # NumPy reports its buffers to tracemalloc
            zero(copy=False)
            out["traced_mib"] = traced_peak(step)
        return out | {
            "peak_mib": peak,
            "method": method,
            "seconds": statistics.median(times),
            "loss": loss,
            "grad_sq": grad_sq,
        }
    except Exception as exc:  # noqa: BLE001 - reported to the parent as a cell
        return {"cell": asdict(failure_cell(exc))}


def _spawn(impl_name: str, variant: str, tiny: bool, reps: int, malloc: str) -> dict[str, Any]:
    cmd = [sys.executable, "-m", "benchmarks.checkpointing", impl_name, variant,
           "--reps", str(reps)] + (["--tiny"] if tiny else [])
    # (the fused back end's thread, translating and importing numba, would add to the peaks)
    env = dict(os.environ, CHAINRULE_FUSE="0")
    if malloc:
        env["CHAINRULE_MALLOC"] = malloc
    proc = subprocess.run(cmd, check=False, cwd=ROOT, capture_output=True, text=True,
                          timeout=1800, env=env)
    lines = proc.stdout.strip().splitlines()
    if proc.returncode != 0 or not lines:
        note = f"exit code {proc.returncode}: {proc.stderr.strip()[-800:]}"
        return {"cell": {"text": "error (subprocess)", "note": note, "failed": True}}
    return json.loads(lines[-1])


_results: dict[tuple, dict[str, Any]] = {}  # the children's results, by their arguments


def _result(impl_name: str, variant: str, config: Config, key: str) -> dict[str, Any]:
    """A child's result, with glibc's default allocator settings (as users run it and as W5)."""
    reps = 1 if config.tiny else max(1, min(config.reps, 3))
    malloc = "default"
    args = (impl_name, variant, config.tiny, reps, malloc)
    if args not in _results:
        _results[args] = _spawn(*args)
    return _results[args]


@dataclass(frozen=True)
class Checkpointing:
    """One row of W10: a variant's peak memory or time, checked against the NumPy floor."""

    id: str
    title: str
    unit: str
    variant: str
    key: str  # "peak_mib" or "seconds"
    tol: float = 1e-4
    compiles: bool = True  # compiled: the replayed step (the capture's peak in the note)

    def measure(
        self, impls: Sequence[Impl], config: Config, log: Callable[[str], None]
    ) -> dict[str, Cell]:
        """Return a Cell per implementation name."""
        reference = _result("numpy", self.variant, config, self.key)
        cells: dict[str, Cell] = {}
        for impl in impls:
            if impl.error is not None:
                cell = Cell(text=f"n/a (import failed: {impl.error.split(':')[0]})")
            else:
                cell = self._cell(_result(impl.name, self.variant, config, self.key), reference)
            log(f"{self.id} {impl.name}: {cell.text or f'{cell.value:.4g} {self.unit}'}")
            cells[impl.name] = cell
        return cells

    def _cell(self, result: dict[str, Any], reference: dict[str, Any]) -> Cell:
        if "cell" in result:
            return Cell(**result["cell"])
        if "cell" in reference:
            return Cell(text="not checked (no reference)")
        for key in ("loss", "grad_sq"):
            want, got = reference[key], result[key]
            if not abs(got - want) <= self.tol * max(abs(want), 1e-12):
                note = f"{key}: {got!r}, numpy has {want!r}"
                return Cell(text="FAIL (disagrees with numpy)", note=note, failed=True)
        note = "" if self.key != "peak_mib" or result["method"].startswith("VmHWM") \
            else result["method"]
        if "traced_mib" in result and self.key == "peak_mib":
            traced = f"traced (tracemalloc) {result['traced_mib']:.1f} MiB"
            note = f"{note}; {traced}" if note else traced
        if "eager" in result:
            note = f"runs eagerly (not replayed): {result['eager']}" + (f"; {note}" if note else "")
        elif "capture_mib" in result and self.key == "peak_mib":
            note = _compiled_note([result], note)
        elif "capture_mib" in result:
            note = "replayed steps"
        return Cell(value=result[self.key], note=note)


_SIZE = f"{DEPTH}-layer MLP, width {WIDTH}, batch {BATCH}, fwd+bwd"
_CKPT = f"checkpoint_sequential, {SEGMENTS} segments"
W10 = Checkpointing("W10", f"peak memory: {_SIZE}", "MiB", "plain", "peak_mib")
W10C = Checkpointing("W10C", f"peak memory: the same with {_CKPT}", "MiB", "checkpointed",
                     "peak_mib")
W10T = Checkpointing("W10T", f"time: {_SIZE}", "s/step", "plain", "seconds")
W10CT = Checkpointing("W10CT", f"time: the same with {_CKPT}", "s/step", "checkpointed",
                      "seconds")


def main(argv: Sequence[str] | None = None) -> None:
    """Child entry point: print one JSON line."""
    parser = argparse.ArgumentParser(prog="python -m benchmarks.checkpointing")
    parser.add_argument("impl")
    parser.add_argument("variant", choices=VARIANTS)
    parser.add_argument("--tiny", action="store_true")
    parser.add_argument("--reps", type=int, default=3)
    args = parser.parse_args(argv)
    print(json.dumps(child(args.impl, args.variant, args.tiny, args.reps)))


if __name__ == "__main__":
    main()
