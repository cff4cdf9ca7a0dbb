"""Peak memory per rank of a training step, DDP against FSDP, on the ranks the launcher started:
an MLP of 6 Linear(1024, 1024) (25 MB of float32 parameters) with Adam. FSDP builds the model on
the meta device, shards it and then materialises only the shards, so no rank ever holds all the
parameters. tracemalloc (NumPy reports its arrays to it) gives the peak of two steps after the
first, and of the whole run from before the model is built.

    python -m chainrule.distributed.run --nproc-per-node 2 _job_memory.py ddp|fsdp OUT.json [WIDTH]
"""

import json
import sys
import tracemalloc

import chainrule as torch
import chainrule.distributed as dist
import chainrule.nn.functional as F
from chainrule.distributed.fsdp import fully_shard
from chainrule.nn.parallel import DistributedDataParallel as DDP

mode, out = sys.argv[1], sys.argv[2]
WIDTH, LAYERS, BATCH = int(sys.argv[3]) if len(sys.argv) > 3 else 1024, 6, 16
dist.init_process_group("gloo")
rank = dist.get_rank()
tracemalloc.start()


def layers():
    mods = []
    for _ in range(LAYERS):
        mods += [torch.nn.Linear(WIDTH, WIDTH), torch.nn.Tanh()]
    return torch.nn.Sequential(*mods)


torch.manual_seed(0)
if mode == "ddp":
    model = DDP(layers())
else:
    with torch.device("meta"):
        model = layers()
    for layer in model:
        if isinstance(layer, torch.nn.Linear):
            fully_shard(layer)
    fully_shard(model)
    model.to_empty(device="cpu")
    for layer in model:
        if isinstance(layer, torch.nn.Linear):
            layer.reset_parameters()
params = sum(p.numel() * p.element_size() for p in model.parameters())
opt = torch.optim.Adam(model.parameters(), lr=1e-3)
gen = torch.Generator().manual_seed(1 + rank)


def step():
    x = torch.randn(BATCH, WIDTH, generator=gen)
    loss = F.mse_loss(model(x), x)
    opt.zero_grad()
    loss.backward()
    opt.step()


step()
_, setup = tracemalloc.get_traced_memory()  # building, sharding and the first step
tracemalloc.reset_peak()
for _ in range(2):
    step()
_, steady = tracemalloc.get_traced_memory()
current, _ = tracemalloc.get_traced_memory()
results = [None] * dist.get_world_size()
dist.all_gather_object(results, {"rank": rank, "setup_peak": setup, "step_peak": steady,
                                 "resident": current, "params_here": params})
if rank == 0:
    with open(out, "w") as f:
        json.dump({"mode": mode, "model_bytes": LAYERS * (WIDTH * WIDTH + WIDTH) * 4,
                   "ranks": results}, f)
dist.destroy_process_group()
