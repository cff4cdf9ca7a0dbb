"""Smoke test of benchmarks/: every workload runs in --tiny mode and the references give numbers.

No timing is asserted. chainrule cells may read "n/a (...)" while it is incomplete; the torch
and numpy cells must hold numbers, since they are the references the benchmark checks against.
"""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
WORKLOADS = sorted([f"W{i}" for i in range(1, 11)] + ["W8L", "W10C", "W10T", "W10CT"])
REFERENCES = ["numpy"] + (["torch"] if importlib.util.find_spec("torch") else [])


def _run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, *args], check=False, cwd=ROOT, capture_output=True, text=True, timeout=600
    )


def _table(output: str) -> dict[str, dict[str, str]]:
    """The printed markdown table as {workload id: {column: cell}}."""
    rows = [
        [cell.strip() for cell in line.strip().strip("|").split("|")]
        for line in output.splitlines()
        if line.startswith("| ")
    ]
    header = next(row for row in rows if row[0] == "id")
    return {row[0]: dict(zip(header, row, strict=True)) for row in rows if row[0].startswith("W")}


@pytest.fixture(scope="module")
def tiny_run(tmp_path_factory: pytest.TempPathFactory) -> tuple[str, Path]:
    markdown = tmp_path_factory.mktemp("bench") / "performance.md"
    proc = _run("-m", "benchmarks", "--tiny", "--reps", "2", "--markdown", str(markdown))
    assert proc.returncode == 0, f"stdout:\n{proc.stdout}\nstderr:\n{proc.stderr}"
    return proc.stdout, markdown


def test_every_workload_has_reference_numbers(tiny_run: tuple[str, Path]) -> None:
    table = _table(tiny_run[0])
    assert sorted(table) == WORKLOADS
    for workload, row in table.items():
        assert "chainrule" in row
        for impl in REFERENCES:
            cell = row[impl]
            assert cell.replace(".", "", 1).isdigit(), f"{workload} {impl}: {cell!r}"


def test_header_names_the_machine(tiny_run: tuple[str, Path]) -> None:
    output = tiny_run[0]
    for fact in ("date:", "versions:", "threads: 1", "BLAS:", "CPU:"):
        assert fact in output


def test_markdown_file_has_the_same_table(tiny_run: tuple[str, Path]) -> None:
    assert _table(tiny_run[1].read_text(encoding="utf-8")) == _table(tiny_run[0])


def test_runs_as_a_script_with_filters() -> None:
    proc = _run("benchmarks/run.py", "--tiny", "--reps", "1", "--only", "W1", "--impl", "numpy")
    assert proc.returncode == 0, proc.stderr
    table = _table(proc.stdout)
    assert list(table) == ["W1"]
    assert "torch" not in table["W1"]
    assert table["W1"]["numpy"].replace(".", "", 1).isdigit()


@pytest.mark.parametrize("impl", ["chainrule"] + (["torch"] if "torch" in REFERENCES else []))
def test_op_instructions_parts_run(impl: str) -> None:
    """The callgrind tool's parts (run here without valgrind: its brackets are plain calls)."""
    from benchmarks.op_instructions import _child

    _child(impl, steps=1)


@pytest.mark.parametrize("spec", ["W1:chainrule", "W9:numpy:nogc"]
                         + (["W9:torch"] if "torch" in REFERENCES else []))
def test_step_instructions_child_runs(spec: str) -> None:
    """The callgrind tool's child (run here without valgrind: its brackets are plain calls),
    which leaves the garbage collector on."""
    import gc

    from benchmarks.step_instructions import _child

    _child(spec)
    assert gc.isenabled()


def test_page_faults_are_counted_and_noted() -> None:
    """A step that touches fresh pages each call (a new mapping of 64 pages, written, unmapped)
    is counted; the report notes the cell, and leaves out a step that faults in nothing."""
    import mmap

    from benchmarks.harness import Cell, median_seconds
    from benchmarks.report import notes

    def fresh_pages() -> None:
        with mmap.mmap(-1, 64 * mmap.PAGESIZE) as m:
            for i in range(64):
                m[i * mmap.PAGESIZE] = 1

    _, faults = median_seconds(fresh_pages, reps=3, warmup=1, min_rep_s=0.0)
    assert faults >= 64
    _, none = median_seconds(lambda: None, reps=3, warmup=1, min_rep_s=0.0)
    assert none < 1
    lines = notes({"W2": {"torch": Cell(value=1.0, faults=faults),
                          "chainrule": Cell(value=1.0, faults=none)}}, [])
    assert len(lines) == 1 and f"W2 torch {faults:.0f}" in lines[0]
    assert "chainrule" not in lines[0]
