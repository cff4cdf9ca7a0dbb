"""The digits job on 2 ranks (``--nproc-per-node 2``) trains as one process does: the same
global batches split across ranks (33 images: shares of 16 and 17) give the single process's
losses to float32 rounding, and only rank 0 prints and writes. SGD: Adam's first steps, about
the sign of each gradient, turn rounding of near-zero gradients into 1e-4 differences."""

from __future__ import annotations

import json
import subprocess
import sys

import numpy as np
import pytest

from ._launch import launch  # noqa: F401  (skips without mpi4py)

pytest.importorskip("sklearn", reason="the digits come with scikit-learn (the demo extra)")


def _digits(out, *extra: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "chainrule.examples.digits", "--epochs", "1",
                           "--batch-size", "33", "--optimizer", "sgd", "--out", str(out), *extra],
                          capture_output=True, text=True, timeout=300)


def test_two_ranks_give_the_single_process_losses(tmp_path):
    one = _digits(tmp_path / "one")
    two = _digits(tmp_path / "two", "--nproc-per-node", "2")
    assert one.returncode == 0, one.stderr
    assert two.returncode == 0, two.stderr
    assert "on 2 processes" in two.stdout
    lines = two.stdout.splitlines()
    assert sum(line.startswith("epoch  1/1") for line in lines) == 1  # rank 0 only
    assert lines[-1].startswith("test accuracy: ")
    h1 = json.loads((tmp_path / "one" / "history.json").read_text())
    h2 = json.loads((tmp_path / "two" / "history.json").read_text())
    for key in ("train_loss", "test_loss"):
        np.testing.assert_allclose(h2[0][key], h1[0][key], rtol=1e-5, err_msg=key)
    for key in ("train_accuracy", "test_accuracy"):  # a near tie may flip an image or two
        np.testing.assert_allclose(h2[0][key], h1[0][key], atol=2.5 / 1438, err_msg=key)
    loss = [line.split("loss ")[1].split()[0] for line in (one.stdout + two.stdout).splitlines()
            if line.startswith("epoch  1/1")]
    assert loss[0] == loss[1]
