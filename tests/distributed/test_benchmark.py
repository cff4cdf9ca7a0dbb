"""W11 runs: the benchmark's DDP step on 2 ranks for chainrule, torch (gloo) and the NumPy +
mpi4py floor, tiny sizes (a smoke test: no time is asserted)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from ._launch import launch  # noqa: F401  (skips without mpi4py)

ROOT = Path(__file__).resolve().parents[2]


def test_w11_runs_for_every_implementation():
    proc = subprocess.run([sys.executable, "-m", "benchmarks", "--only", "W11", "--tiny",
                           "--reps", "1", "--impl", "chainrule,torch,numpy"],
                          capture_output=True, text=True, cwd=ROOT, timeout=600)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    row = next(line for line in proc.stdout.splitlines() if line.startswith("| W11 "))
    cells = [c.strip() for c in row.split("|")[4:7]]
    assert all(c.replace(".", "", 1).isdigit() for c in cells), row
