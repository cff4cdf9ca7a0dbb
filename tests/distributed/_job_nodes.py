"""Run by the launcher on two "nodes" (test_nodes.py): each rank prints torchrun's variables
and the sum of every rank's rank + 1, all-reduced across the nodes."""

import os

import chainrule as torch
import chainrule.distributed as dist

dist.init_process_group("gloo")
total = torch.tensor([float(dist.get_rank() + 1)])
dist.all_reduce(total)
names = ("RANK", "WORLD_SIZE", "LOCAL_RANK", "LOCAL_WORLD_SIZE", "GROUP_RANK",
         "GROUP_WORLD_SIZE", "MASTER_ADDR")
print("rank", " ".join(f"{n}={os.environ[n]}" for n in names), f"sum={total.item():g}",
      flush=True)
dist.destroy_process_group()
