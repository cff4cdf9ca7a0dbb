"""The launcher on several nodes, here two "nodes" that are both this machine (loopback): two
launchers with torchrun's --nnodes 2 --node-rank 0/1 --master-addr 127.0.0.1 form one job, as
does one launcher given a hostfile naming the machine twice; ranks are numbered node by node
and a collective spans both nodes. A node with a different --nproc-per-node is refused."""

from __future__ import annotations

import re
import socket
import subprocess
import sys

import pytest

from chainrule.distributed.run import main

from ._launch import HERE, launch

JOB = HERE / "_job_nodes.py"
RUN = [sys.executable, "-m", "chainrule.distributed.run"]


def _port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _lines(out: str) -> list[str]:
    return sorted(line for line in out.splitlines() if line.startswith("rank "))


def _expected(world: int, per_node: int) -> list[str]:
    return sorted(f"rank RANK={r} WORLD_SIZE={world} LOCAL_RANK={r % per_node} "
                  f"LOCAL_WORLD_SIZE={per_node} GROUP_RANK={r // per_node} "
                  f"GROUP_WORLD_SIZE={world // per_node} MASTER_ADDR=127.0.0.1 "
                  f"sum={world * (world + 1) // 2}" for r in range(world))


def _nodes(*extra: str, nproc=(1, 1)) -> tuple:
    port = str(_port())
    common = ["--nnodes", "2", "--master-addr", "127.0.0.1", "--master-port", port,
              "--rdzv-conf", "join_timeout=60", *extra]
    second = subprocess.Popen([*RUN, *common, "--node-rank", "1", "--nproc-per-node",
                               str(nproc[1]), str(JOB)], stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True)
    first = subprocess.run([*RUN, *common, "--node-rank", "0", "--nproc-per-node",
                            str(nproc[0]), str(JOB)], capture_output=True, text=True,
                           timeout=120)
    out, err = second.communicate(timeout=60)
    return first, (second.returncode, out, err)


def test_two_launchers_form_one_job_across_the_nodes():
    first, (code, out, err) = _nodes()
    assert first.returncode == 0, first.stdout + first.stderr
    assert code == 0, out + err
    assert _lines(first.stdout) == _expected(2, 1)  # every rank's output comes through node 0


def test_a_hostfile_names_the_nodes():
    hostfile = HERE / "_hostfile_loopback"
    result = launch("--hostfile", str(hostfile), str(JOB), nproc=1)
    assert result.returncode == 0, result.stdout + result.stderr
    assert _lines(result.stdout) == _expected(2, 1)


def test_a_node_that_disagrees_is_refused():
    first, (code, out, err) = _nodes(nproc=(1, 2))
    assert first.returncode != 0 and code != 0
    assert "node 1 has --nproc-per-node 2, node 0 has 1" in first.stderr
    assert "node 0 refused this node: node 1 has --nproc-per-node 2" in err


@pytest.mark.parametrize("argv,message", [
    (["--nnodes", "1:2"], "--nnodes 1:2 needs MIN == MAX (no elastic training)"),
    (["--nnodes", "2", "--node-rank", "2"], "--node-rank must be in [0, 1], got 2"),
    (["--nnodes", "2", "--hostfile", "hosts"], "--hostfile names every node"),
    (["--nnodes", "two"], "--nnodes must be N or MIN:MAX, got 'two'")])
def test_arguments_torchrun_takes_and_chainrule_refuses(argv, message):
    with pytest.raises(SystemExit, match=re.escape(message)):
        main([*argv, "train.py"])
