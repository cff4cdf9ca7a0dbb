"""Run a library's own pytest suite on chainrule: a pytest subprocess with the plugin
``-p chainrule.as_torch`` (``import torch`` gives chainrule), outside the project's pytest
configuration, reporting each test's outcome."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

_OUTCOME = re.compile(r"^(PASSED|FAILED|ERROR|XFAIL|XPASS) (\S+)")
_COUNT = re.compile(r"(\d+) (passed|failed|skipped|errors?|xfailed|xpassed|subtests passed|"
                    r"subtests failed)")


@dataclass
class Outcome:
    tests: dict  # node id -> PASSED, FAILED, ERROR ...
    counts: dict  # passed, failed, skipped, ..., subtests passed (pytest's summary line)
    output: str

    def ids(self, outcome: str) -> set:
        return {test for test, result in self.tests.items() if result == outcome}


def run_suite(args: list[str], cwd: Path, tmp_path: Path, env: dict | None = None,
              timeout: int = 900, seeded: bool = False, library: str = "chainrule.as_torch"
              ) -> Outcome:
    """``pytest -p chainrule.as_torch args`` in ``cwd``, with an empty configuration file (not
    the project's) and no bytecode or cache written into the vendored tree; ``seeded``: each
    test starts from ``torch.manual_seed(0)`` (the plugin in _seeded.py); ``library=None`` runs
    the suite on torch itself."""
    ini = tmp_path / "pytest.ini"
    ini.write_text("[pytest]\n")
    plugins = ["-p", library] if library else []
    environment = {**os.environ, "PYTHONDONTWRITEBYTECODE": "1", **(env or {})}
    if seeded:
        plugins += ["-p", "_seeded"]
        here = str(Path(__file__).parent)
        environment["PYTHONPATH"] = os.pathsep.join(
            p for p in (here, environment.get("PYTHONPATH")) if p)
    command = [sys.executable, "-m", "pytest", "-q", "-rA", "-p", "no:cacheprovider",
               *plugins, "-c", str(ini), "--rootdir", str(cwd), *args]
    done = subprocess.run(command, cwd=cwd, env=environment, capture_output=True, text=True,
                          timeout=timeout)
    tests = {}
    for line in done.stdout.splitlines():
        match = _OUTCOME.match(line)
        if match:
            tests[match.group(2)] = match.group(1)
    summary = done.stdout.strip().splitlines()[-1] if done.stdout.strip() else ""
    counts = {name.rstrip("s") if name.startswith("error") else name: int(n)
              for n, name in _COUNT.findall(summary)}
    return Outcome(tests, counts, done.stdout[-20000:] + done.stderr[-5000:])
