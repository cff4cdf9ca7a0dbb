"""A plain PyTorch script: ZeroRedundancyOptimizer under DistributedDataParallel when started by
a launcher (RANK is set), the plain optimizer in one process otherwise; the same global batches
either way. It prints one JSON line: the losses, and the whole optimizer state at the end.

    python script.py OUT adam|sgd [bucket]       # argv; OUT is a directory
"""

import json
import os
import sys

import torch
import torch.nn.functional as F

out, kind = sys.argv[1], sys.argv[2]
bucket_view = "bucket" in sys.argv[3:]
distributed = "RANK" in os.environ
if distributed:
    import torch.distributed as dist
    from torch.distributed.optim import ZeroRedundancyOptimizer
    from torch.nn.parallel import DistributedDataParallel as DDP

    dist.init_process_group("gloo")
    rank, world = dist.get_rank(), dist.get_world_size()
else:
    rank, world = 0, 1

torch.manual_seed(0)
model = torch.nn.Sequential(torch.nn.Linear(8, 32), torch.nn.Tanh(), torch.nn.Linear(32, 16),
                            torch.nn.Tanh(), torch.nn.Linear(16, 3))
first = list(model[0].parameters()) + list(model[2].parameters())
last = list(model[4].parameters())
cls = torch.optim.Adam if kind == "adam" else torch.optim.SGD
options = {"lr": 0.01} if kind == "adam" else {"lr": 0.1, "momentum": 0.9}


def build(net):
    if not distributed:
        return net, cls(first, **options)
    wrapped = DDP(net)
    return wrapped, ZeroRedundancyOptimizer(first, optimizer_class=cls,
                                            parameters_as_bucket_view=bucket_view, **options)


net, opt = build(model)
gen = torch.Generator().manual_seed(1)
losses = []
for step in range(8):
    x = torch.randn(12, 8, generator=gen)
    y = torch.randint(0, 3, (12,), generator=gen)
    if step == 3:  # the last layer joins, with its own learning rate
        opt.add_param_group({"params": last, "lr": options["lr"] / 2})
    share = slice(rank * 12 // world, (rank + 1) * 12 // world)
    loss = F.cross_entropy(net(x[share]), y[share])
    opt.zero_grad()
    loss.backward()
    opt.step()
    total = loss.detach().clone()
    if distributed:
        dist.all_reduce(total, op=dist.ReduceOp.AVG)
    losses.append(total.item())

if distributed:
    opt.consolidate_state_dict(to=0)
    if rank != 0:
        try:
            opt.state_dict()
        except RuntimeError as e:
            assert "consolidate_state_dict(to=1)" in str(e), e
        else:
            raise AssertionError("state_dict() without the consolidated state")
state = opt.state_dict() if rank == 0 else None
if rank == 0:
    plain = {"param_groups": [{k: v for k, v in g.items() if k != "params"} | {
        "params": g["params"]} for g in state["param_groups"]],
        "state": {str(i): {k: v.tolist() if torch.is_tensor(v) else v for k, v in s.items()}
                  for i, s in state["state"].items()}}
    with open(os.path.join(out, "result.json"), "w") as f:
        json.dump({"losses": losses, "state": plain, "world": world}, f)

if distributed:  # a fresh optimizer loads the saved state: each rank keeps its share
    if rank == 0:
        torch.save(state, os.path.join(out, "optim.pt"))
    dist.barrier()
    again = ZeroRedundancyOptimizer(first, optimizer_class=cls, **options)
    again.add_param_group({"params": last, "lr": options["lr"] / 2})
    again.load_state_dict(torch.load(os.path.join(out, "optim.pt")))
    mine, theirs = opt.optim.state_dict(), again.optim.state_dict()
    assert mine["state"].keys() == theirs["state"].keys()
    for i, s in mine["state"].items():
        for k, v in s.items():
            assert torch.equal(v, theirs["state"][i][k]), (i, k)
    assert [g["lr"] for g in again.param_groups] == [g["lr"] for g in opt.param_groups]
    dist.destroy_process_group()
