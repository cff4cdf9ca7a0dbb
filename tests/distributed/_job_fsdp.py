"""A plain PyTorch script: FSDP (``fully_shard`` on each Linear, then on the root) when started
by a launcher (RANK is set), the plain model in one process otherwise; the same global batches
either way. After 5 steps it takes the full model and optimizer state dicts; FSDP then reloads
them (full, broadcast from rank 0) into a fresh model and optimizer, and the sharded state dicts
into another; it saves the sharded model and optimizer with torch.distributed.checkpoint, loads
that into a third and steps 3 more times with it. Rank 0 writes OUT/result.json.

    python script.py OUT
"""

import json
import os
import sys

import torch
import torch.nn.functional as F

out = sys.argv[1]
distributed = "RANK" in os.environ
if distributed:
    import torch.distributed as dist
    from torch.distributed.checkpoint.state_dict import (
        StateDictOptions,
        get_model_state_dict,
        get_optimizer_state_dict,
        set_model_state_dict,
        set_optimizer_state_dict,
    )
    from torch.distributed.fsdp import FSDPModule, fully_shard

    dist.init_process_group("gloo")
    rank, world = dist.get_rank(), dist.get_world_size()
else:
    rank, world = 0, 1


def build(seed):
    torch.manual_seed(seed)
    net = torch.nn.Sequential(torch.nn.Linear(8, 32), torch.nn.Tanh(), torch.nn.Linear(32, 31),
                              torch.nn.Tanh(), torch.nn.Linear(31, 3))
    if distributed:
        for layer in net:
            if isinstance(layer, torch.nn.Linear):
                fully_shard(layer)
        fully_shard(net)
        assert isinstance(net, FSDPModule)
    return net, torch.optim.Adam(net.parameters(), lr=0.01)


model, opt = build(0)
names = [n for n, _ in model.named_parameters()]
gen = torch.Generator().manual_seed(1)


def step(net, optimizer):
    x = torch.randn(12, 8, generator=gen)
    y = torch.randint(0, 3, (12,), generator=gen)
    share = slice(rank * 12 // world, (rank + 1) * 12 // world)
    loss = F.cross_entropy(net(x[share]), y[share])
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    total = loss.detach().clone()
    if distributed:
        dist.all_reduce(total, op=dist.ReduceOp.AVG)
    return total.item()


losses = [step(model, opt) for _ in range(5)]
if distributed:
    full = StateDictOptions(full_state_dict=True, cpu_offload=True)
    model_state = get_model_state_dict(model, options=full)
    on_rank0 = get_optimizer_state_dict(model, opt, options=full)
    if rank != 0:  # full with cpu_offload: on rank 0 only
        assert model_state == {} and on_rank0 == {}
    everywhere = StateDictOptions(full_state_dict=True)
    optim_state = get_optimizer_state_dict(model, opt, options=everywhere)
    sharded = model.state_dict()  # this rank's rows of each parameter
    torch.save(sharded, os.path.join(out, f"shard{rank}.pt"))
    again, again_opt = build(5)  # full state from rank 0 only
    set_model_state_dict(again, model_state, options=StateDictOptions(
        full_state_dict=True, broadcast_from_rank0=True))
    set_optimizer_state_dict(again, again_opt, optim_state, options=everywhere)
    other, _ = build(6)
    other.load_state_dict(torch.load(os.path.join(out, f"shard{rank}.pt")))
    for a, b, c in zip(model.parameters(), again.parameters(), other.parameters()):
        assert torch.equal(a, b) and torch.equal(a, c)
    # the sharded checkpoint of torch.distributed.checkpoint, resumed into a fresh model
    import torch.distributed.checkpoint as dcp
    from torch.distributed.checkpoint.state_dict import get_state_dict, set_state_dict

    model_sd, optim_sd = get_state_dict(model, opt)
    dcp.save({"model": model_sd, "optim": optim_sd}, checkpoint_id=os.path.join(out, "dcp"))
    resumed, resumed_opt = build(7)
    model_sd, optim_sd = get_state_dict(resumed, resumed_opt)  # a fresh optimizer's entries
    state = {"model": model_sd, "optim": optim_sd}
    dcp.load(state, checkpoint_id=os.path.join(out, "dcp"))
    set_state_dict(resumed, resumed_opt, model_state_dict=state["model"],
                   optim_state_dict=state["optim"])
    for a, b in zip(again.parameters(), resumed.parameters()):
        assert torch.equal(a, b)
        for key, value in again_opt.state[a].items():
            assert torch.equal(torch.as_tensor(value), torch.as_tensor(resumed_opt.state[b][key]))
    model, opt = resumed, resumed_opt
else:
    model_state = model.state_dict()
    optim_state = {"state": {names[i]: s for i, s in opt.state_dict()["state"].items()}}
snapshot = {"model": {k: v.tolist() for k, v in model_state.items()},
            "optim": {n: {k: v.tolist() for k, v in s.items()}
                      for n, s in optim_state["state"].items()}}  # after 5 steps
losses += [step(model, opt) for _ in range(3)]
if rank == 0:
    with open(os.path.join(out, "result.json"), "w") as f:
        json.dump({"losses": losses, "world": world, **snapshot}, f)


class Twice(torch.nn.Module):
    """A block applied twice in one forward, then a head."""

    def __init__(self):
        super().__init__()
        self.block = torch.nn.Linear(6, 6)
        self.head = torch.nn.Linear(6, 3)

    def forward(self, x):
        return self.head(torch.tanh(self.block(torch.tanh(self.block(x)))))


if distributed:  # gradients against the plain model on the whole batch, on every rank
    x = torch.randn(8, 6, generator=torch.Generator().manual_seed(2))
    share = slice(rank * 8 // world, (rank + 1) * 8 // world)
    for reshard, factor in ((True, None), (False, None), (None, None), (None, 1.0)):
        torch.manual_seed(3)
        plain = Twice()
        torch.manual_seed(3)
        sharded = Twice()
        fully_shard(sharded.block, reshard_after_forward=reshard)
        fully_shard(sharded, reshard_after_forward=reshard)
        if factor is not None:  # the gradients summed over the ranks, not averaged
            sharded.block.set_gradient_divide_factor(factor)
            sharded.set_gradient_divide_factor(factor)
        plain(x).square().mean().backward()
        sharded(x[share]).square().mean().backward()
        for (name, p), q in zip(plain.named_parameters(), sharded.parameters()):
            rows = torch.chunk(p.grad, world)[rank] if rank < len(torch.chunk(p, world)) \
                else p.grad[:0]
            rows = rows * (world if factor == 1.0 else 1)
            assert q.grad.shape == rows.shape, (name, q.grad.shape, rows.shape)
            assert torch.allclose(q.grad, rows, rtol=1e-5, atol=1e-7), (reshard, name)
        with torch.no_grad():
            assert torch.allclose(sharded(x), plain(x), rtol=1e-5, atol=1e-7)
        sharded.unshard()
        assert torch.equal(sharded.head.weight, plain.head.weight)
        sharded.reshard()
        assert sharded.head.weight.shape == torch.chunk(plain.head.weight, world)[rank].shape
    dist.destroy_process_group()
