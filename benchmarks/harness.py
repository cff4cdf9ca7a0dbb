"""Measurement machinery shared by the workloads: implementations, checks, timing, cells."""

from __future__ import annotations

import importlib
import statistics
import time
import traceback
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import Any, Protocol

import numpy as np

IMPLS = ("chainrule", "chainrule.compile", "torch", "torch.compile", "numpy")
BENCH_DIR = Path(__file__).resolve().parent


@dataclass(frozen=True)
class Impl:
    """One implementation: ``numpy`` (the hand-written floor) or a torch-shaped module."""

    name: str
    module: ModuleType | None = None
    error: str | None = None  # why the module failed to import
    compiled: bool = False  # "<module>.compile": the workload's step function is compiled

    @property
    def is_numpy(self) -> bool:
        """True for the hand-written NumPy floor."""
        return self.name == "numpy"

    def jit(self, fn: Callable) -> Callable:
        """``fn`` compiled with the module's ``compile`` for a compiled column, else as is."""
        return self.module.compile(fn) if self.compiled else fn


NUMPY = Impl("numpy")


def load_impl(name: str) -> Impl:
    """Import an implementation by name, recording (not raising) an import failure."""
    if name == "numpy":
        return NUMPY
    base, _, suffix = name.partition(".")
    try:
        return Impl(name, importlib.import_module(base), compiled=suffix == "compile")
    except Exception as exc:  # noqa: BLE001 - any import failure is reported in the table
        return Impl(name, error=f"{type(exc).__name__}: {exc}")


@dataclass(frozen=True)
class Config:
    """Settings shared by all workloads in one run."""

    reps: int = 20
    tiny: bool = False
    threads: int = 1


@dataclass(frozen=True)
class Cell:
    """One table cell: a measured value, or a short text saying why there is none."""

    value: float | None = None
    text: str = ""
    note: str = ""  # details printed under the table
    failed: bool = False  # an error or a disagreement, as opposed to a missing feature
    faults: float | None = None  # minor page faults per timed step (fresh pages touched)

    @classmethod
    def missing(cls, what: str) -> Cell:
        """A cell for a function the implementation does not provide."""
        return cls(text=f"n/a (missing: {what})")


@dataclass(frozen=True)
class Case:
    """One implementation's instance of a workload.

    ``check`` runs one step and returns the values compared across implementations; ``step``
    is the timed unit.
    """

    check: Callable[[], dict[str, Any]]
    step: Callable[[], object]


class Missing(Exception):
    """The implementation lacks a function the workload needs."""

    def __init__(self, name: str) -> None:
        super().__init__(name)
        self.name = name


def require(module: ModuleType | None, names: Sequence[str]) -> None:
    """Raise Missing for the first dotted name (e.g. ``nn.functional.conv2d``) not in module."""
    if module is None:
        return
    for name in names:
        obj: Any = module
        for part in name.split("."):
            if not hasattr(obj, part):
                raise Missing(name)
            obj = getattr(obj, part)


def to_numpy(value: Any) -> np.ndarray:
    """A NumPy copy of a tensor (or array, or number)."""
    if isinstance(value, np.ndarray | float | np.floating):
        return np.array(value)
    value = value.detach()
    try:
        return np.array(value.numpy())
    except AttributeError:
        return np.array(value.tolist(), dtype=np.float32)


def disagreement(want: dict[str, Any], have: dict[str, Any], tol: float) -> str | None:
    """Describe the first value of ``have`` that differs from ``want``, or return None."""
    for key, expected in want.items():
        expected = np.asarray(expected)
        if key not in have:
            return f"{key}: not produced"
        got = np.asarray(have[key])
        if got.shape != expected.shape:
            return f"{key}: shape {got.shape}, expected {expected.shape}"
        if got.dtype != expected.dtype:
            return f"{key}: dtype {got.dtype}, expected {expected.dtype}"
        # Error relative to the array's largest magnitude: float32 sums and matmuls are
        # reordered differently by each library, so elementwise rtol is too strict near zero.
        diff = np.abs(got.astype(np.float64) - expected.astype(np.float64)).max(initial=0.0)
        scale = max(float(np.abs(expected).max(initial=0.0)), 1e-12)
        if not np.isfinite(diff) or diff / scale > tol:
            return f"{key}: max error {diff / scale:.1e} of max |value| (tolerance {tol:.0e})"
    return None


def minor_faults() -> int:
    """Minor page faults of this process so far (0 where the OS does not count them)."""
    try:
        import resource
    except ImportError:  # not on this OS
        return 0
    return resource.getrusage(resource.RUSAGE_SELF).ru_minflt


def median_seconds(step: Callable[[], object], reps: int, warmup: int,
                   min_rep_s: float) -> tuple[float, float]:
    """Median wall time of one ``step`` call, over ``reps`` repetitions after ``warmup`` calls,
    and the minor page faults per timed call.

    A repetition loops ``step`` enough times to last ``min_rep_s``, so that microsecond steps
    are not swamped by timer noise. The garbage collector stays on: collecting an autodiff
    library's graph objects is part of its cost. Page faults are counted because a fresh page
    costs microseconds here: memory the allocator gave back to the OS and takes again each
    step shows as time, whichever library allocates it.
    """
    for _ in range(warmup):
        step()
    start = time.perf_counter()
    step()
    once = time.perf_counter() - start
    inner = max(1, int(min_rep_s / max(once, 1e-9)))
    samples = []
    faults = minor_faults()
    for _ in range(reps):
        start = time.perf_counter()
        for _ in range(inner):
            step()
        samples.append((time.perf_counter() - start) / inner)
    return statistics.median(samples), (minor_faults() - faults) / (reps * inner)


def settle_fusion(impl: Impl, step: Callable[[], object]) -> None:
    """chainrule.compile: let the step's programs be built, wait for the fused back end's
    kernels, and run the replays that choose between fused and unfused (docs/performance.md),
    so that what is timed is the steady state."""
    fuse = getattr(impl.module, "_fuse", None) if impl.compiled else None
    if fuse is None or not fuse.enabled:
        return
    for _ in range(2):  # the capture that agrees with check()'s: the programs are built
        step()
    fuse.wait(600)
    for _ in range(2 * fuse.ROUNDS):
        step()


def failure_cell(exc: BaseException) -> Cell:
    """Turn an exception raised while running an implementation into a table cell."""
    if isinstance(exc, Missing):
        return Cell.missing(exc.name)
    if isinstance(exc, AttributeError) and exc.name and _raised_in_benchmarks(exc):
        # e.g. ``t.nn`` or ``loss.backward`` looked up by our code and absent.
        return Cell.missing(exc.name)
    frames = "".join(traceback.format_exception(exc)[-4:-1]).splitlines()  # innermost three
    # Drop the caret underlines, and shorten paths to the project's.
    root = f"{BENCH_DIR.parent}/"
    where = [line.replace(root, "") for line in frames if line.strip(" ^~")]
    return Cell(
        text=f"error ({type(exc).__name__})",
        note="\n".join([f"{type(exc).__name__}: {exc}", *where]),
        failed=True,
    )


def _raised_in_benchmarks(exc: BaseException) -> bool:
    tb = exc.__traceback__
    if tb is None:
        return False
    while tb.tb_next is not None:
        tb = tb.tb_next
    return Path(tb.tb_frame.f_code.co_filename).resolve().parent == BENCH_DIR


class Workload(Protocol):
    """What run.py needs of a workload: its row's labels and a Cell per implementation."""

    id: str
    title: str
    unit: str

    def measure(
        self, impls: Sequence[Impl], config: Config, log: Callable[[str], None]
    ) -> dict[str, Cell]:
        """Return a Cell per implementation name."""
        ...


@dataclass(frozen=True)
class Timed:
    """A workload timed in this process: check every implementation against numpy, then time."""

    id: str
    title: str
    unit: str
    needs: tuple[str, ...]  # functions the torch-shaped module must provide
    prepare: Callable[[bool], Any]  # tiny -> NumPy data shared by all implementations
    build: Callable[[Impl, Any], Case]
    scale: float = 1e3  # seconds per step -> unit
    tol: float = 1e-4
    rep_divisor: int = 1  # slow workloads run reps // rep_divisor repetitions
    min_rep_s: float = 0.02
    compiles: bool = False  # its step function goes through Impl.jit (compiled columns)

    def measure(
        self, impls: Sequence[Impl], config: Config, log: Callable[[str], None]
    ) -> dict[str, Cell]:
        """Return a Cell per implementation name."""
        data = self.prepare(config.tiny)
        try:
            reference = self.build(NUMPY, data).check()
        except Exception as exc:  # noqa: BLE001 - reported as the numpy cell
            reference, ref_failure = None, failure_cell(exc)
        cells: dict[str, Cell] = {}
        for impl in impls:
            if reference is None:
                cell = ref_failure if impl.is_numpy else Cell(text="not checked (no reference)")
            else:
                cell = self._measure_one(impl, data, reference, config)
            log(f"{self.id} {impl.name}: {_describe(cell, self.unit)}")
            cells[impl.name] = cell
        return cells

    def _measure_one(self, impl: Impl, data: Any, reference: dict, config: Config) -> Cell:
        if impl.error is not None:
            return Cell(text=f"n/a (import failed: {impl.error.split(':')[0]})")
        if impl.compiled and not self.compiles:
            return Cell(text="n/a (not compiled)")
        try:
            require(impl.module, self.needs)
            case = self.build(impl, data)
            problem = disagreement(reference, case.check(), self.tol)
        except Exception as exc:  # noqa: BLE001 - one implementation's failure is one cell
            return failure_cell(exc)
        if problem is not None:
            return Cell(text="FAIL (disagrees with numpy)", note=problem, failed=True)
        reps = max(1, config.reps // self.rep_divisor)
        warmup = 1 if config.tiny or self.rep_divisor > 1 else 2
        min_rep_s = self.min_rep_s / 10 if config.tiny else self.min_rep_s
        try:
            settle_fusion(impl, case.step)
            seconds, faults = median_seconds(case.step, reps, warmup, min_rep_s)
        except Exception as exc:  # noqa: BLE001
            return failure_cell(exc)
        return Cell(value=seconds * self.scale, faults=faults)


def _describe(cell: Cell, unit: str) -> str:
    return f"{cell.value:.4g} {unit}" if cell.value is not None else cell.text
