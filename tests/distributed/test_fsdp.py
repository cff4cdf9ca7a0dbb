"""FSDP (``fully_shard``): a plain PyTorch script (tests/distributed/_job_fsdp.py) run on 2 ranks
by the launcher through the torch alias trains as the real PyTorch trains the plain model in one
process (uneven shards: 31 and 3 rows on 2 ranks); its full model and optimizer state dicts
equal the one-process ones; reloading them (full, broadcast from rank 0) and the sharded ones
gives the same parameters (checked in the job) and the same losses after."""

from __future__ import annotations

import json
import subprocess
import sys

import numpy as np

from ._launch import HERE, launch

JOB = HERE / "_job_fsdp.py"


def test_two_ranks_train_and_save_as_pytorch_in_one_process(tmp_path):
    (tmp_path / "one").mkdir()
    (tmp_path / "two").mkdir()
    one = subprocess.run([sys.executable, str(JOB), str(tmp_path / "one")],
                         capture_output=True, text=True, timeout=120)  # the real torch
    assert one.returncode == 0, one.stderr
    two = launch("-m", "chainrule.as_torch", str(JOB), str(tmp_path / "two"))
    assert two.returncode == 0, two.stdout + two.stderr
    want = json.loads((tmp_path / "one" / "result.json").read_text())
    got = json.loads((tmp_path / "two" / "result.json").read_text())
    assert (want["world"], got["world"]) == (1, 2)
    np.testing.assert_allclose(got["losses"], want["losses"], rtol=1e-5)
    assert got["model"].keys() == want["model"].keys()
    for name, value in want["model"].items():
        np.testing.assert_allclose(got["model"][name], value, rtol=1e-5, atol=1e-6,
                                   err_msg=name)
    assert got["optim"].keys() == want["optim"].keys()
    for name, buffers in want["optim"].items():
        assert got["optim"][name].keys() == buffers.keys()
        for key, value in buffers.items():
            np.testing.assert_allclose(got["optim"][name][key], value, rtol=1e-4, atol=1e-6,
                                       err_msg=f"{name} {key}")
