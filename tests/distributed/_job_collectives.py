"""Run by the launcher on 2 ranks (tests/distributed/test_collectives.py): every collective,
DistributedDataParallel and DistributedSampler, each rank saving what it got to
``<out>/rank<r>.json`` for the test to compare with NumPy."""

import datetime
import json
import sys

import numpy as np

import chainrule as torch
import chainrule.distributed as dist
from chainrule.nn.parallel import DistributedDataParallel as DDP
from chainrule.utils.data import DistributedSampler

got: dict = {}
try:  # a rank and world size that are not the launcher's
    dist.init_process_group("gloo", world_size=3, rank=0)
except RuntimeError as e:
    got["wrong_world"] = str(e)
got["initialized_after_wrong_world"] = dist.is_initialized()
dist.init_process_group("mpi", init_method="env://", timeout=datetime.timedelta(seconds=60))
rank, world = dist.get_rank(), dist.get_world_size()
got.update(rank=rank, world=world, backend=dist.get_backend())


def data(shape, dtype=torch.float64, seed=0):
    """Rank-dependent values the test can recompute: seed * 100 + rank decides them."""
    values = np.random.default_rng(seed * 100 + rank).standard_normal(shape) * 4
    return torch.tensor(values, dtype=torch.float64).to(dtype)


def save(name, t):
    got[name] = t.tolist() if isinstance(t, torch.Tensor) else t


# ---- all_reduce: every op on floats, ints and bools; async; a non-contiguous view
for op in ["SUM", "AVG", "PRODUCT", "MIN", "MAX"]:
    t = data((3, 4), seed=1)
    dist.all_reduce(t, op=getattr(dist.ReduceOp, op))
    save(f"all_reduce_{op}", t)
for op in ["SUM", "PRODUCT", "MIN", "MAX", "BAND", "BOR", "BXOR"]:
    t = data((5,), torch.int64, seed=2)
    dist.all_reduce(t, op=getattr(dist.ReduceOp, op))
    save(f"all_reduce_int_{op}", t)
flags = torch.tensor([True, False, rank == 0, rank == 1])
dist.all_reduce(flags, op=dist.ReduceOp.MAX)
save("all_reduce_bool_MAX", flags)
t = data((3, 4), seed=1)
version = t._version
work = dist.all_reduce(t, async_op=True)
save("async_returns_work", type(work).__name__)
save("wait_returns", work.wait())
save("is_completed", work.is_completed())
save("all_reduce_async", t)
save("version_bumped", t._version > version)
base = data((4, 3), seed=1)
view = base.t()  # non-contiguous: written back into base's storage
dist.all_reduce(view)
save("all_reduce_view_base", base)
save("all_reduce_sync_returns", dist.all_reduce(data((2,))))

# ---- broadcast, reduce
t = data((2, 3), seed=3)
dist.broadcast(t, src=1)
save("broadcast_from_1", t)
t = data((2, 3), seed=3)
dist.broadcast(t, group_src=0, async_op=True).wait()
save("broadcast_from_0", t)
t = data((2, 3), seed=4)
dist.reduce(t, dst=1, op=dist.ReduceOp.MAX)
save("reduce_max_to_1", t)

# ---- gathers and scatters
t = data((2, 2), seed=5)
outs = [torch.zeros(2, 2, dtype=torch.float64) for _ in range(world)]
dist.all_gather(outs, t)
save("all_gather", [o.tolist() for o in outs])
out = torch.zeros(world * 2, 3, dtype=torch.float64)
dist.all_gather_into_tensor(out, data((2, 3), seed=6))
save("all_gather_into_tensor", out)
out = torch.zeros(3, dtype=torch.float64)
dist.reduce_scatter_tensor(out, data((world * 3,), seed=7))
save("reduce_scatter_tensor", out)
t = data((3,), seed=8)
gathered = [torch.zeros(3, dtype=torch.float64) for _ in range(world)] if rank == 0 else None
dist.gather(t, gathered, dst=0)
save("gather_to_0", [g.tolist() for g in gathered] if gathered else None)
t = torch.zeros(2, dtype=torch.float64)
pieces = [torch.full((2,), 10.0 * i, dtype=torch.float64) for i in range(world)]
dist.scatter(t, pieces if rank == 1 else None, src=1)
save("scatter_from_1", t)

# ---- point to point
if rank == 0:
    dist.send(torch.arange(4.0, dtype=torch.float64), dst=1)
    dist.isend(torch.arange(3), 1, tag=7).wait()
    save("recv", None)
else:
    t = torch.zeros(4, dtype=torch.float64)
    sender = dist.recv(t, src=0)
    u = torch.zeros(3, dtype=torch.int64)
    w = dist.irecv(u, tag=7)
    w.wait()
    save("recv", {"sender": sender, "values": t.tolist(), "any_source": w.source_rank(),
                  "tagged": u.tolist()})
dist.barrier()

# ---- plain-data objects (no pickle)
objects = [None] * world
dist.all_gather_object(objects, {"rank": rank, "pair": (rank, "x"), 3: [1.5, None, True]})
save("all_gather_object", repr(objects))
items = [f"from {rank}", {"k": (1, 2)}, b"\x00\xff"]
dist.broadcast_object_list(items, src=1)
save("broadcast_object_list", repr(items))
try:
    dist.all_gather_object([None] * world, object())
except TypeError as e:
    save("object_refused", str(e))

# ---- errors in PyTorch's words
try:
    dist.init_process_group("gloo")
except ValueError as e:
    save("init_twice", str(e))
try:
    dist.send(torch.zeros(1), dst=rank)
except ValueError as e:
    save("send_to_self", str(e))
try:
    dist.all_reduce([torch.zeros(1)])
except TypeError as e:
    save("all_reduce_list", str(e))

# ---- DistributedDataParallel: float64, two buckets, each rank starting from its own weights
inputs = torch.tensor(np.random.default_rng(42).standard_normal((8, 5)))
targets = torch.tensor(np.random.default_rng(43).standard_normal((8, 3)))
shard = slice(rank * 4, rank * 4 + 4)


def make_model(seed):
    torch.manual_seed(seed)
    return torch.nn.Sequential(torch.nn.Linear(5, 7), torch.nn.Tanh(),
                               torch.nn.Linear(7, 3)).double()


model = make_model(rank)
ddp = DDP(model, bucket_cap_mb=200 / 2**20)
save("ddp_state_dict_keys", list(ddp.state_dict()))
save("ddp_buckets", len(ddp._buckets))
save("ddp_module_is_model", ddp.module is model)
save("ddp_initial", {n: p.tolist() for n, p in model.named_parameters()})
loss = torch.nn.functional.mse_loss(ddp(inputs[shard]), targets[shard])
loss.backward()
save("ddp_grads", {n: p.grad.tolist() for n, p in model.named_parameters()})
# no_sync: two local micro-batches, then a synced one
model.zero_grad()
micro = [slice(rank * 4, rank * 4 + 2), slice(rank * 4 + 2, rank * 4 + 3)]
with ddp.no_sync():
    for part in micro:
        torch.nn.functional.mse_loss(ddp(inputs[part]), targets[part]).backward()
save("no_sync_local", {n: p.grad.tolist() for n, p in model.named_parameters()})
last = slice(rank * 4 + 3, rank * 4 + 4)
torch.nn.functional.mse_loss(ddp(inputs[last]), targets[last]).backward()
save("no_sync_then_synced", {n: p.grad.tolist() for n, p in model.named_parameters()})


# find_unused_parameters: `extra` unused on every rank, `only0` used only by rank 0
class Branchy(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = torch.nn.Linear(5, 3).double()
        self.only0 = torch.nn.Linear(5, 3).double()
        self.extra = torch.nn.Linear(5, 3).double()

    def forward(self, x):
        out = self.lin(x)
        return out + self.only0(x) if rank == 0 else out


torch.manual_seed(0)
branchy = DDP(Branchy(), find_unused_parameters=True)
branchy(inputs[shard]).sum().backward()
save("unused_grads", {n: None if p.grad is None else p.grad.tolist()
                      for n, p in branchy.module.named_parameters()})
# without find_unused_parameters an unused parameter leaves the reduction unfinished
torch.manual_seed(0)
strict = DDP(Branchy(), bucket_cap_mb=1e-9)
strict(inputs[shard]).sum().backward()
try:
    strict(inputs[shard])
except RuntimeError as e:
    save("unfinished_reduction", str(e))

# ---- DistributedSampler: shards for several sizes, seeds, epochs, drop_last
shards = {}
for n in [10, 11, 3, 1]:
    for shuffle in [False, True]:
        for drop_last in [False, True]:
            for epoch in [0, 1]:
                sampler = DistributedSampler(list(range(n)), shuffle=shuffle, seed=5,
                                             drop_last=drop_last)
                sampler.set_epoch(epoch)
                shards[f"{n}-{shuffle}-{drop_last}-{epoch}"] = [list(sampler), len(sampler)]
save("sampler", shards)

dist.barrier()
dist.destroy_process_group()
save("initialized_after_destroy", dist.is_initialized())
with open(f"{sys.argv[1]}/rank{rank}.json", "w") as f:
    json.dump(got, f)
