"""One rank of a job the launcher started: torchrun's environment variables from MPI's, the
script run as ``__main__``, and on an error its traceback written for the launcher and the whole
job ended at once (no rank is left waiting in a collective)."""

from __future__ import annotations

import os
import runpy
import sys
import traceback


def _environment() -> None:
    env = os.environ
    rank = int(env.get("OMPI_COMM_WORLD_RANK", env.get("PMI_RANK", "0")))
    size = int(env.get("OMPI_COMM_WORLD_SIZE", env.get("PMI_SIZE", "1")))
    per_node = env.get("CHAINRULE_RUN_NPROC_PER_NODE")  # the launcher numbers node by node
    if per_node is not None:
        local_size = int(per_node)
        local_rank, node = rank % local_size, rank // local_size
    else:  # started by mpirun directly
        local_rank = int(env.get("OMPI_COMM_WORLD_LOCAL_RANK", rank))
        local_size = int(env.get("OMPI_COMM_WORLD_LOCAL_SIZE", size))
        node = rank // max(local_size, 1)
    env.update(RANK=str(rank), WORLD_SIZE=str(size), LOCAL_RANK=str(local_rank),
               LOCAL_WORLD_SIZE=str(local_size), GROUP_RANK=str(node),
               GROUP_WORLD_SIZE=str(-(-size // max(local_size, 1))), ROLE_RANK=str(rank),
               ROLE_WORLD_SIZE=str(size), ROLE_NAME="default")


def _fail(message: str) -> None:
    sys.stdout.flush()
    sys.stderr.write(message)
    sys.stderr.flush()
    errors = os.environ.get("CHAINRULE_RUN_ERRORS")
    if errors:
        try:  # the launcher's directory is on node 0: another node's rank has only stderr
            with open(os.path.join(errors, f"{os.environ['RANK']}.txt"), "w") as f:
                f.write(message)
        except OSError:
            pass
    mpi = sys.modules.get("mpi4py.MPI")
    if mpi is not None and mpi.Is_initialized() and not mpi.Is_finalized():
        mpi.COMM_WORLD.Abort(1)  # ends every rank now
    os._exit(1)


def main() -> None:
    _environment()
    try:
        # MPI's start-up waits, with no timeout, until every rank has started it: do it now, so
        # a rank that is late to init_process_group makes the others time out there instead.
        from mpi4py import MPI  # noqa: F401
    except ImportError:
        pass
    args = sys.argv[1:]
    module = args[:1] == ["-m"]
    if module:
        args = args[1:]
    sys.argv = list(args)
    try:
        if module:
            runpy.run_module(args[0], run_name="__main__", alter_sys=True)
        else:
            sys.path.insert(0, os.path.dirname(os.path.abspath(args[0])))
            runpy.run_path(args[0], run_name="__main__")
    except SystemExit as e:
        if e.code not in (None, 0):
            _fail(f"SystemExit: {e.code}\n" if not isinstance(e.code, str) else f"{e.code}\n")
    except BaseException as e:
        tb = e.__traceback__  # from the script's frame on: this file and runpy are noise
        while tb is not None and (tb.tb_frame.f_code.co_filename == __file__
                                  or "runpy" in tb.tb_frame.f_code.co_filename):
            tb = tb.tb_next
        _fail("".join(traceback.format_exception(type(e), e, tb)))


if __name__ == "__main__":
    main()
