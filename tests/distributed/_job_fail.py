"""Run by the launcher on 2 ranks (test_launcher.py): rank 1 fails as argv[1] says while rank 0
waits in a barrier whose timeout is far longer than the test allows: the launcher must end the
job and report."""

import datetime
import os
import signal
import sys
import time

import chainrule as torch
import chainrule.distributed as dist

how = sys.argv[1]
if how == "late-init" and os.environ["RANK"] == "1":
    time.sleep(120)
dist.init_process_group("gloo", timeout=datetime.timedelta(
    seconds=3 if how in ("timeout", "late-init") else 600))
rank = dist.get_rank()
print(f"rank {rank}: RANK={os.environ['RANK']} WORLD_SIZE={os.environ['WORLD_SIZE']} "
      f"LOCAL_RANK={os.environ['LOCAL_RANK']} LOCAL_WORLD_SIZE={os.environ['LOCAL_WORLD_SIZE']} "
      f"MASTER_ADDR={os.environ['MASTER_ADDR']} MASTER_PORT={os.environ['MASTER_PORT']} "
      f"args={sys.argv[1:]}", flush=True)
dist.all_reduce(torch.ones(3))
if rank == 1:
    if how == "raise":
        raise ValueError("rank 1 fails on purpose")
    if how == "kill":
        os.kill(os.getpid(), signal.SIGKILL)
    if how == "timeout":
        time.sleep(120)
dist.barrier()
