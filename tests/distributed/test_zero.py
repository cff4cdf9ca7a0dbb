"""ZeroRedundancyOptimizer: a plain PyTorch script (tests/distributed/_job_zero.py) run on 2
ranks by the launcher through the torch alias trains as the real PyTorch runs it in one process:
the same losses and, consolidated on rank 0, the same optimizer state; a fresh
ZeroRedundancyOptimizer loads that state back (checked in the job)."""

from __future__ import annotations

import json
import subprocess
import sys

import numpy as np
import pytest

from ._launch import HERE, launch

JOB = HERE / "_job_zero.py"


@pytest.mark.parametrize("kind,extra", [("adam", ()), ("sgd", ("bucket",))])
def test_two_ranks_train_as_pytorch_in_one_process(tmp_path, kind, extra):
    (tmp_path / "one").mkdir()
    (tmp_path / "two").mkdir()
    one = subprocess.run([sys.executable, str(JOB), str(tmp_path / "one"), kind],
                         capture_output=True, text=True, timeout=120)  # the real torch
    assert one.returncode == 0, one.stderr
    two = launch("-m", "chainrule.as_torch", str(JOB), str(tmp_path / "two"), kind, *extra)
    assert two.returncode == 0, two.stdout + two.stderr
    want = json.loads((tmp_path / "one" / "result.json").read_text())
    got = json.loads((tmp_path / "two" / "result.json").read_text())
    assert (want["world"], got["world"]) == (1, 2)
    np.testing.assert_allclose(got["losses"], want["losses"], rtol=1e-5)
    assert got["state"]["param_groups"] == want["state"]["param_groups"]
    assert got["state"]["state"].keys() == want["state"]["state"].keys()
    for index, buffers in want["state"]["state"].items():
        assert buffers.keys() == got["state"]["state"][index].keys()
        for name, value in buffers.items():
            np.testing.assert_allclose(got["state"]["state"][index][name], value, rtol=1e-4,
                                       atol=1e-6, err_msg=f"{index} {name}")
