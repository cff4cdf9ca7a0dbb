"""The launcher: torchrun's environment on each rank, and a failing rank (raising, killed, or
never arriving at a collective) ends the job with a non-zero exit and its error, well within
the time a hang would take."""

from __future__ import annotations

import time

import pytest

from ._launch import HERE, launch


def test_ranks_get_torchruns_environment():
    result = launch(HERE / "_job_fail.py", "ok", "--flag")
    assert result.returncode == 0, result.stderr
    lines = sorted(line for line in result.stdout.splitlines() if line.startswith("rank "))
    assert lines == [f"rank {r}: RANK={r} WORLD_SIZE=2 LOCAL_RANK={r} LOCAL_WORLD_SIZE=2 "
                     f"MASTER_ADDR=127.0.0.1 MASTER_PORT=29500 args=['ok', '--flag']"
                     for r in range(2)]


@pytest.mark.parametrize("how,error", [
    ("raise", "chainrule.distributed.run: rank 1 failed:\nTraceback"),
    ("kill", "a rank was killed or exited without an error"),
    ("timeout", "DistBackendError: barrier: timed out after 3000ms waiting for the other ranks "
                "(rank 0 of 2)"),
    ("late-init", "DistBackendError: init_process_group: timed out after 3000ms")])
def test_a_failing_rank_ends_the_job_with_its_error(how, error):
    start = time.monotonic()
    result = launch(HERE / "_job_fail.py", how, timeout=60)
    assert time.monotonic() - start < 60
    assert result.returncode == 1
    assert error in result.stderr, result.stderr
    if how == "raise":
        assert result.stderr.rstrip().endswith("ValueError: rank 1 fails on purpose")
        assert '_job_fail.py", line' in result.stderr
