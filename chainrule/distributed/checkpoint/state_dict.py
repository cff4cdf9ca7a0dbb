"""``torch.distributed.checkpoint.state_dict``: model and optimizer state dicts in full form
(every tensor whole, gathered from the ranks' shards) or sharded form (each rank its shards), and
loading either back into a ``fully_shard``-ed (or DDP, or plain) model.

Sharded tensors are plain tensors holding this rank's rows (dim 0, ``torch.chunk``'s split), not
DTensors. Optimizer state dicts are keyed by parameter names, as PyTorch's are.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

import numpy as np

from ... import _backend
from ...autograd.grad_mode import no_grad
from ...nn.modules.module import Module
from ...optim.optimizer import Optimizer
from ...tensor import Tensor
from .. import distributed_c10d as dist
from ..fsdp._fully_shard import _shards_of

__all__ = ["FQNS_T", "PrimitiveType", "ValueType", "DictValueType", "ListDictValueType",
           "OptimizerStateType", "StateDictOptions", "get_model_state_dict",
           "get_optimizer_state_dict", "get_state_dict", "set_model_state_dict",
           "set_optimizer_state_dict", "set_state_dict"]

FQNS_T = set[str]
PrimitiveType = Tensor | int | float | str
ValueType = PrimitiveType | list[PrimitiveType] | tuple[PrimitiveType, ...] | dict[str, Any]
DictValueType = dict[str, ValueType]
ListDictValueType = list[DictValueType]
OptimizerStateType = dict[str, DictValueType | ListDictValueType]


@dataclass
class StateDictOptions:
    """How the state dict functions work: ``full_state_dict`` gathers whole tensors (and loads
    them); ``cpu_offload`` with it leaves the result on rank 0 only; ``broadcast_from_rank0``
    loads a full state dict that only rank 0 has."""

    full_state_dict: bool = False
    cpu_offload: bool = False
    ignore_frozen_params: bool = False
    keep_submodule_prefixes: bool = True
    strict: bool = True
    broadcast_from_rank0: bool = False
    flatten_optimizer_state_dict: bool = False
    dsd_fqn_modifiers: str = "_fqn_modifiers"


def _inner(model: Module) -> Module:
    """The user's model inside a DistributedDataParallel wrapper (names without ``module.``)."""
    from ...nn.parallel import DistributedDataParallel
    return model.module if isinstance(model, DistributedDataParallel) else model


def _named_params(model: Module) -> dict[str, Tensor]:
    return dict(_inner(model).named_parameters())


def _wrap(array: np.ndarray) -> Tensor:
    return Tensor._wrap(array, None, 0)


def _rank0_only(options: StateDictOptions) -> bool:
    return options.full_state_dict and options.cpu_offload and dist.is_initialized() and \
        dist.get_rank() != 0


def get_model_state_dict(model: Module, *, submodules: set | None = None,
                         options: StateDictOptions | None = None) -> dict[str, Any]:
    """The model's state dict: its shards, or with ``full_state_dict`` every tensor whole."""
    if submodules is not None:
        raise NotImplementedError("get_model_state_dict: submodules is deprecated and not "
                                  "supported")
    options = options or StateDictOptions()
    inner = _inner(model)
    state = inner.state_dict()
    params = _named_params(model)
    if options.ignore_frozen_params:
        state = {k: v for k, v in state.items() if k not in params or params[k].requires_grad}
    if options.full_state_dict:
        shards = _shards_of(inner)
        with no_grad():
            for name in list(state):
                p = params.get(name)
                if p is not None and id(p) in shards:
                    group, i = shards[id(p)]
                    state[name] = _wrap(group.gather_one(i, p._data))
    if _rank0_only(options):
        return {}
    return state


def _full_from_rank0(state: dict | None) -> dict:
    """Rank 0's full state dict on every rank (tensors broadcast one by one)."""
    me = dist.get_rank()
    specs = [None]
    if me == 0:
        specs = [[[k, str(v.dtype).split(".")[-1], list(v.shape)] if isinstance(v, Tensor)
                  else [k, None, None] for k, v in state.items()]]
    dist.broadcast_object_list(specs, 0)
    out = {}
    for key, dtype, shape in specs[0]:
        if dtype is None:
            objects = [state[key] if me == 0 else None]
            dist.broadcast_object_list(objects, 0)
            out[key] = objects[0]
            continue
        t = state[key].detach().contiguous().clone() if me == 0 else _wrap(
            np.empty(shape, getattr(_backend, dtype).np))
        dist.broadcast(t, 0)
        out[key] = t
    return out


def set_model_state_dict(model: Module, model_state_dict: dict[str, Any], *,
                         options: StateDictOptions | None = None):
    """Load a state dict from ``get_model_state_dict`` (full or sharded, as ``options`` say)."""
    options = options or StateDictOptions()
    inner = _inner(model)
    state = dict(model_state_dict)
    if options.full_state_dict and options.broadcast_from_rank0 and dist.is_initialized():
        state = _full_from_rank0(state if dist.get_rank() == 0 else None)
    if options.full_state_dict:
        shards = _shards_of(inner)
        params = _named_params(model)
        for name, value in list(state.items()):
            p = params.get(name)
            if p is not None and id(p) in shards and isinstance(value, Tensor):
                group, i = shards[id(p)]
                state[name] = _wrap(group.shard_of(i, value._data))
    return inner.load_state_dict(state, strict=options.strict)


def _optimizers(optimizers) -> list[Optimizer]:
    return [optimizers] if isinstance(optimizers, Optimizer) else list(optimizers)


def _init_optim_state(opt: Optimizer) -> None:
    """Give a fresh optimizer its state (as PyTorch's: one step of zero gradients at lr 0), so
    its state dict has every entry a checkpoint fills."""
    if opt.state or any(p.grad is not None for g in opt.param_groups for p in g["params"]):
        return
    for group in opt.param_groups:
        for p in group["params"]:
            if p.requires_grad:
                p.grad = p.detach().new_zeros(tuple(p.shape))
    rates = [group.get("lr") for group in opt.param_groups]
    for group in opt.param_groups:
        if "lr" in group:
            group["lr"] = group["lr"] * 0 if isinstance(group["lr"], Tensor) else 0.0
    opt.step()
    for group, rate in zip(opt.param_groups, rates):
        if rate is not None:
            group["lr"] = rate
    opt.zero_grad(set_to_none=True)


def get_optimizer_state_dict(model: Module, optimizers: Optimizer | Iterable[Optimizer], *,
                             submodules: set | None = None,
                             options: StateDictOptions | None = None) -> dict[str, Any]:
    """The optimizers' state keyed by parameter names: shards, or with ``full_state_dict``
    every state tensor shaped as its parameter gathered whole."""
    options = options or StateDictOptions()
    params = _named_params(model)
    name_of = {id(p): n for n, p in params.items()}
    shards = _shards_of(_inner(model))
    state: dict = {}
    groups: list = []
    for opt in _optimizers(optimizers):
        _init_optim_state(opt)
        for group in opt.param_groups:
            packed = {k: v for k, v in group.items() if k != "params"}
            packed["params"] = [name_of[id(p)] for p in group["params"]]
            groups.append(packed)
            for p in group["params"]:
                buffers = opt.state.get(p)
                if not buffers:
                    continue
                entry = {}
                for key, value in buffers.items():
                    if options.full_state_dict and isinstance(value, Tensor) and \
                            id(p) in shards and tuple(value.shape) == tuple(p.shape) and \
                            value.ndim:
                        g, i = shards[id(p)]
                        value = _wrap(g.gather_one(i, value._data))
                    elif options.full_state_dict and isinstance(value, Tensor):
                        value = value.detach().clone()  # a snapshot, as the gathered ones are
                    entry[key] = value
                state[name_of[id(p)]] = entry
    if _rank0_only(options):
        return {}
    return {"state": state, "param_groups": groups}


def set_optimizer_state_dict(model: Module, optimizers: Optimizer | Iterable[Optimizer],
                             optim_state_dict: dict[str, Any], *,
                             options: StateDictOptions | None = None) -> None:
    """Load an optimizer state dict from ``get_optimizer_state_dict`` (full or sharded)."""
    options = options or StateDictOptions()
    params = _named_params(model)
    shards = _shards_of(_inner(model))
    saved_groups = list(optim_state_dict["param_groups"])
    for opt in _optimizers(optimizers):
        mine, saved_groups = saved_groups[:len(opt.param_groups)], \
            saved_groups[len(opt.param_groups):]
        index, state, groups = 0, {}, []
        for saved in mine:
            indices = []
            for name in saved["params"]:
                p = params[name]
                buffers = optim_state_dict["state"].get(name)
                if buffers is not None:
                    entry = {}
                    for key, value in buffers.items():
                        if options.full_state_dict and isinstance(value, Tensor) and \
                                id(p) in shards and value.ndim and \
                                tuple(value.shape) == shards[id(p)][0].slots[
                                    shards[id(p)][1]].shape:
                            g, i = shards[id(p)]
                            value = _wrap(g.shard_of(i, value._data))
                        entry[key] = value
                    state[index] = entry
                indices.append(index)
                index += 1
            groups.append({**{k: v for k, v in saved.items() if k != "params"},
                           "params": indices})
        opt.load_state_dict({"state": state, "param_groups": groups})


def get_state_dict(model: Module, optimizers: Optimizer | Iterable[Optimizer], *,
                   submodules: set | None = None,
                   options: StateDictOptions | None = None) -> tuple[dict, dict]:
    """The model's and the optimizers' state dicts."""
    return (get_model_state_dict(model, submodules=submodules, options=options),
            get_optimizer_state_dict(model, optimizers, submodules=submodules, options=options))


def set_state_dict(model: Module, optimizers: Optimizer | Iterable[Optimizer], *,
                   model_state_dict: dict[str, Any], optim_state_dict: dict[str, Any],
                   options: StateDictOptions | None = None):
    """Load the model's and the optimizers' state dicts."""
    keys = set_model_state_dict(model, model_state_dict, options=options)
    set_optimizer_state_dict(model, optimizers, optim_state_dict, options=options)
    return keys
