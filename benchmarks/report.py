"""The run's header (machine, versions, threads, BLAS) and the results table."""

from __future__ import annotations

import datetime
import math
import os
import platform
from collections.abc import Sequence
from typing import Any

import numpy as np

from benchmarks.harness import Cell, Impl, Workload


def machine_facts(impls: Sequence[Impl], threads: int, reps: int, tiny: bool) -> list[str]:
    """Header lines: date, versions, threads, BLAS per implementation, CPU."""
    versions = [f"Python {platform.python_version()}", f"NumPy {np.__version__}"]
    for impl in impls:
        if impl.module is not None:
            versions.append(f"{impl.name} {getattr(impl.module, '__version__', '?')}")
        elif impl.error is not None:
            versions.append(f"{impl.name} not importable")
    method = f"median of {reps} repetitions after warm-up (W7: {max(1, reps // 5)})"
    method += ", W5 and W10 in fresh processes (W10: 3 timed steps); ratios from this run"
    if tiny:
        method += " (--tiny: sizes shrunk, numbers meaningless)"
    return [
        f"date: {datetime.datetime.now().astimezone().isoformat(timespec='seconds')}",
        "versions: " + ", ".join(versions),
        f"threads: {threads} (OMP/MKL/OPENBLAS_NUM_THREADS; torch's and chainrule's "
        "set_num_threads)",
        "BLAS: " + _blas(impls),
        f"CPU: {_cpu_model()}, {os.cpu_count()} logical CPUs",
        f"method: {method}",
    ]


def _cpu_model() -> str:
    try:
        with open("/proc/cpuinfo") as cpuinfo:
            for line in cpuinfo:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def _blas(impls: Sequence[Impl]) -> str:
    """Which BLAS (and thread pool) each implementation uses, as loaded in this process."""
    try:
        from threadpoolctl import threadpool_info

        pools = threadpool_info()
    except ImportError:
        pools = []
    numpy_pools = [p for p in pools if "numpy" in p["filepath"]]
    if numpy_pools:
        numpy_blas = "; ".join(_pool(p) for p in numpy_pools)
    else:
        blas = np.show_config(mode="dicts")["Build Dependencies"]["blas"]
        numpy_blas = f"{blas.get('name', '?')} {blas.get('version', '')}".strip()
    parts = [f"numpy: {numpy_blas}"]
    for impl in impls:
        if impl.name.split(".")[0] == "torch" and impl.module is not None:
            parts.append(f"{impl.name}: {_torch_blas(impl.module)}")
        elif impl.name != "numpy" and impl.module is not None:
            parts.append(f"{impl.name}: NumPy's")
    return " | ".join(parts)


def _pool(info: dict[str, Any]) -> str:
    extra = ", ".join(str(info[k]) for k in ("architecture", "threading_layer") if info.get(k))
    name = f"{info['internal_api']} {info.get('version') or ''}".strip()
    return f"{name} ({extra}{', ' if extra else ''}threads: {info['num_threads']})"


def _torch_blas(torch: Any) -> str:
    config = torch.__config__.show()
    blas = next(
        (s.split("=")[1] for s in config.replace(",", "\n").split() if "BLAS_INFO=" in s), "?"
    )
    return f"{blas} (threads: {torch.get_num_threads()}; oneDNN for conv)"


def format_value(value: float) -> str:
    """Three significant figures, never in exponent notation."""
    if value == 0:
        return "0"
    decimals = max(0, 2 - math.floor(math.log10(abs(value))))
    return f"{value:.{decimals}f}"


def table(
    workloads: Sequence[Workload], impl_names: Sequence[str], cells: dict[str, dict[str, Cell]]
) -> list[str]:
    """The results as markdown table lines: a value per implementation, then the ratios."""
    ratios = [(name, "numpy") for name in impl_names if name != "numpy" and "numpy" in impl_names]
    for name in ("chainrule", "chainrule.compile"):
        if name in impl_names and "torch" in impl_names:
            ratios.append((name, "torch"))
    header = ["id", "workload", "unit", *impl_names, *(f"{a} / {b}" for a, b in ratios)]
    rows = [header, ["---"] * len(header)]
    for workload in workloads:
        row_cells = cells[workload.id]
        row = [workload.id, workload.title, workload.unit]
        for name in impl_names:
            cell = row_cells[name]
            row.append(format_value(cell.value) if cell.value is not None else cell.text)
        for a, b in ratios:
            va, vb = row_cells[a].value, row_cells[b].value
            row.append(f"{va / vb:.2f}" if va is not None and vb else "–")
        rows.append(row)
    return ["| " + " | ".join(row) + " |" for row in rows]


FAULTS_NOTED = 10  # page faults per step worth a note


def notes(cells: dict[str, dict[str, Cell]], impls: Sequence[Impl]) -> list[str]:
    """Details of every n/a, failure and disagreement, one bullet each; and the cells whose
    steps fault in fresh pages."""
    lines = [f"- {impl.name}: import failed: {impl.error}" for impl in impls if impl.error]
    where: dict[tuple[str, str], list[str]] = {}  # (implementation, note) -> workload ids
    for workload_id, row in cells.items():
        for name, cell in row.items():
            if cell.note:
                where.setdefault((name, cell.note), []).append(workload_id)
    for (name, note), workload_ids in where.items():
        first, *rest = note.splitlines()
        lines.append(f"- {', '.join(workload_ids)} {name}: {first}")
        lines += [f"      {line.strip()}" for line in rest]
    faulting = [f"{workload_id} {name} {cell.faults:.0f}"
                 for workload_id, row in cells.items() for name, cell in row.items()
                 if cell.faults is not None and cell.faults >= FAULTS_NOTED]
    if faulting:
        lines.append("- minor page faults per timed step (pages the allocator returned to the OS "
                     "and took again; each costs time): " + ", ".join(faulting))
    return lines
