"""Run by the launcher on 2 ranks (tests/distributed/test_more_collectives.py): the collectives
and helpers the namespace walk added (all_to_all, reduce_scatter, coalesced forms, batched
point-to-point, object exchanges, monitored_barrier, rank queries), each rank saving what it got
to ``<out>/rank<r>.json``."""

import datetime
import json
import sys
import time
import warnings

import numpy as np

import chainrule as torch
import chainrule.distributed as dist

got: dict = {}
dist.init_process_group("gloo", timeout=datetime.timedelta(seconds=60))
rank, world = dist.get_rank(), dist.get_world_size()


def data(shape, seed=0):
    values = np.random.default_rng(seed * 100 + rank).standard_normal(shape) * 4
    return torch.tensor(values, dtype=torch.float64)


def save(name, value):
    got[name] = value.tolist() if isinstance(value, torch.Tensor) else value


# ---- rank queries on the default group
save("pg_count", dist.get_pg_count())
save("ranks", dist.get_process_group_ranks(dist.group.WORLD))
save("global_rank", dist.get_global_rank(dist.group.WORLD, 1))
save("group_rank", dist.get_group_rank(dist.group.WORLD, 1))
save("backend_config", dist.get_backend_config())
save("world_is_group_world", dist.group.WORLD is dist.GroupMember.WORLD)

# ---- all_to_all: rank r sends r * 10 + j (j + 1 elements) to rank j
inputs = [torch.full((j + 1,), float(rank * 10 + j), dtype=torch.float64) for j in range(world)]
outputs = [torch.zeros(rank + 1, dtype=torch.float64) for _ in range(world)]
dist.all_to_all(outputs, inputs)
save("all_to_all", [o.tolist() for o in outputs])

# ---- all_to_all_single: equal splits, then uneven splits of rows
t = torch.arange(4.0, dtype=torch.float64).reshape(4, 1) + 100 * rank
out = torch.zeros(4, 1, dtype=torch.float64)
dist.all_to_all_single(out, t)
save("all_to_all_single", out)
send_sizes = [1, 2] if rank == 0 else [3, 1]  # rank 0 gets 1 + 3 rows, rank 1 gets 2 + 1
t = torch.arange(3.0 if rank == 0 else 4.0, dtype=torch.float64) + 100 * rank
out = torch.zeros(4 if rank == 0 else 3, dtype=torch.float64)
work = dist.all_to_all_single(out, t, [1, 3] if rank == 0 else [2, 1], send_sizes,
                              async_op=True)
work.wait()
save("all_to_all_single_uneven", out)

# ---- reduce_scatter (list form), the single-tensor aliases
out = torch.zeros(3, dtype=torch.float64)
dist.reduce_scatter(out, [data((3,), seed=1 + j) for j in range(world)])
save("reduce_scatter", out)
out = torch.zeros(3, dtype=torch.float64)
dist.reduce_scatter(out, [data((3,), seed=1 + j) for j in range(world)], op=dist.ReduceOp.MAX)
save("reduce_scatter_max", out)
out = torch.zeros(world * 2, dtype=torch.float64)
dist.all_gather_single(out, data((2,), seed=5))
save("all_gather_single", out)
out = torch.zeros(2, dtype=torch.float64)
dist.reduce_scatter_single(out, data((world * 2,), seed=6))
save("reduce_scatter_single", out)

# ---- coalesced forms (deprecated in PyTorch: they warn)
with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    tensors = [data((2,), seed=7), data((3,), seed=8)]
    dist.all_reduce_coalesced(tensors)
    save("all_reduce_coalesced", [t.tolist() for t in tensors])
    lists = [[torch.zeros(2, dtype=torch.float64), torch.zeros(1, dtype=torch.float64)]
             for _ in range(world)]
    work = dist.all_gather_coalesced(lists, [data((2,), seed=9), data((1,), seed=10)],
                                     async_op=True)
    work.wait()
    save("all_gather_coalesced", [[t.tolist() for t in lst] for lst in lists])
save("coalesced_warnings", [w.category.__name__ for w in caught])

# ---- batched point-to-point: each rank sends to the other and receives from it
peer = 1 - rank
recv = torch.zeros(3, dtype=torch.float64)
works = dist.batch_isend_irecv([dist.P2POp(dist.isend, data((3,), seed=11), peer),
                                dist.P2POp(dist.irecv, recv, peer)])
for w in works:
    w.wait()
save("batch_isend_irecv", recv)

# ---- objects
gathered = [None] * world if rank == 1 else None
dist.gather_object({"rank": rank, "tag": f"r{rank}"}, gathered, dst=1)
save("gather_object", gathered)
output = [None]
dist.scatter_object_list(output, [[j, "x" * j] for j in range(world)] if rank == 0 else None,
                         src=0)
save("scatter_object_list", output)
if rank == 0:
    dist.send_object_list([1, "two", (3.0, None)], dst=1)
    save("recv_object_list", None)
else:
    received = [None, None, None]
    sender = dist.recv_object_list(received)
    save("recv_object_list", [received, sender])

# ---- monitored_barrier: all arrive; then rank 1 arrives late
dist.monitored_barrier()
save("monitored_barrier", "passed")
if rank == 1:
    time.sleep(1.5)
try:
    dist.monitored_barrier(timeout=datetime.timedelta(seconds=0.5))
    save("monitored_barrier_late", "passed")
except RuntimeError as e:
    save("monitored_barrier_late", [type(e).__name__, str(e)])
dist.barrier()

with open(f"{sys.argv[1]}/rank{rank}.json", "w") as f:
    json.dump(got, f)
dist.destroy_process_group()
