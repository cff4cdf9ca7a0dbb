"""Start a script on N ranks through the launcher, as a user does."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("mpi4py", reason="mpi4py is not installed: pip install "
                                     "'chainrule[distributed]' (the test extra brings it)")

HERE = Path(__file__).parent


def launch(script: str | Path, *args: str, nproc: int = 2,
           timeout: float = 240) -> subprocess.CompletedProcess:
    """``python -m chainrule.distributed.run --nproc-per-node N script args``, captured."""
    return subprocess.run([sys.executable, "-m", "chainrule.distributed.run", "--nproc-per-node",
                           str(nproc), str(script), *args], capture_output=True, text=True,
                          timeout=timeout)
