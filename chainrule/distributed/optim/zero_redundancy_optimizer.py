"""ZeroRedundancyOptimizer: each rank keeps the optimizer state of its share of the parameters,
steps only those, and broadcasts them to the other ranks (ZeRO stage 1).

The parameters are partitioned as PyTorch partitions them: group by group, largest first, each
to the rank with the fewest elements so far. The state dict of the whole optimizer is gathered
on one rank by ``consolidate_state_dict(to=...)``; tensors travel by ``broadcast`` and the rest
as plain data, as chainrule's object collectives send it.
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from itertools import chain
from typing import Any

from ... import _backend, _creation
from ..._dtypes import typename
from ...autograd.grad_mode import no_grad
from ...optim.optimizer import Optimizer
from ...tensor import Tensor
from .. import distributed_c10d as dist

__all__ = ["ZeroRedundancyOptimizer"]

_TENSOR = "__chainrule_tensor__"


def _is_trainable(param: Tensor) -> bool:
    return param.requires_grad


def _broadcast_state(obj, src: int, group) -> Any:
    """Rank ``src``'s ``obj`` (plain data and tensors) on every rank of ``group``."""
    tensors: list = []

    def strip(value):
        if isinstance(value, Tensor):
            tensors.append(value)
            return [_TENSOR, len(tensors) - 1, str(value.dtype).split(".")[-1], list(value.shape)]
        if isinstance(value, dict):
            return {k: strip(v) for k, v in value.items()}
        if isinstance(value, (list, tuple)):
            return type(value)(strip(v) for v in value)
        return value

    me = dist.get_rank(group)
    message = [strip(obj) if me == src else None]
    dist.broadcast_object_list(message, src, group)
    received: list = []

    def fill(value):
        if isinstance(value, list) and len(value) == 4 and value[0] == _TENSOR:
            return received[value[1]]
        if isinstance(value, dict):
            return {k: fill(v) for k, v in value.items()}
        if isinstance(value, (list, tuple)):
            return type(value)(fill(v) for v in value)
        return value

    specs: list = []

    def collect(value):
        if isinstance(value, list) and len(value) == 4 and value[0] == _TENSOR:
            specs.append(value)
        elif isinstance(value, dict):
            for v in value.values():
                collect(v)
        elif isinstance(value, (list, tuple)):
            for v in value:
                collect(v)

    collect(message[0])
    with no_grad():
        for _, i, dtype, shape in sorted(specs, key=lambda s: s[1]):
            t = (tensors[i].detach().clone() if me == src else
                 _creation.empty(shape, dtype=getattr(_backend, dtype)))
            dist.broadcast(t, src, group)
            received.append(t)
    return fill(message[0])


class ZeroRedundancyOptimizer(Optimizer):
    """Wrap ``optimizer_class`` so that each rank holds the state of, and updates, only its
    share of the parameters; the updated parameters are then broadcast to every rank."""

    def __init__(self, params, optimizer_class: type[Optimizer], process_group: Any = None,
                 parameters_as_bucket_view: bool = False, overlap_with_ddp: bool = False,
                 **defaults: Any) -> None:
        params = self._verify_and_init_params(params)
        self._verify_same_dense_param_type()
        if overlap_with_ddp:
            raise NotImplementedError("ZeroRedundancyOptimizer(overlap_with_ddp=True) is not "
                                      "supported: chainrule's DDP has no communication hooks")
        self.initialized = False
        Optimizer.__init__(self, params, defaults)
        self._param_to_rank_cache: dict = {}
        self._param_to_index_cache: dict = {}
        self._partition_parameters_cache: list = []
        self._index_to_param_cache: list = []
        self._is_trainable_mask = self._get_is_trainable_mask()
        self._default_device = self._all_params[0].device
        self.process_group = process_group if process_group is not None else dist.group.WORLD
        self.world_size: int = dist.get_world_size(self.process_group)
        self.rank: int = dist.get_rank(self.process_group)
        self.global_rank: int = dist.get_global_rank(self.process_group, self.rank)
        self._overlap_with_ddp = overlap_with_ddp
        self._optim_defaults = defaults
        self._optim_constructor = optimizer_class
        self._init_local_optimizer()
        self.parameters_as_bucket_view = parameters_as_bucket_view
        self._buckets: list = []
        self._build_param_buckets()
        self._all_state_dicts: list = []
        self.initialized = True

    # ---- checks --------------------------------------------------------------------------------

    def _verify_and_init_params(self, params: Any) -> list:
        if isinstance(params, Tensor):
            raise TypeError("`params` argument should be an iterable of Tensors, but got "
                            f"{typename(params)}")
        try:
            all_params = list(params)
        except TypeError as e:
            raise TypeError("`params` argument should be an iterable of Tensors or dicts, but "
                            f"got {typename(params)}") from e
        if not all_params:
            raise ValueError("ZeroRedundancyOptimizer got an empty parameter list")
        if all(isinstance(p, Tensor) for p in all_params):
            self._all_params = all_params
        elif all(isinstance(p, dict) for p in all_params):
            self._all_params = []
            for group in all_params:
                if "params" not in group:
                    raise ValueError("Each parameter group passed-in via `params` must have a "
                                     "'params' key mapping to the parameters in the group")
                self._all_params.extend(group["params"])
        else:
            raise TypeError("`params` argument should be an iterable of Tensors or dicts")
        return all_params

    def _verify_same_dense_param_type(self) -> None:
        name = typename(self._all_params[0])
        for param in self._all_params[1:]:
            other = typename(param)
            if other != name:
                raise ValueError("ZeroRedundancyOptimizer only supports using the same dense "
                                 f"type for all parameters but got both {name} and {other}")

    def _get_is_trainable_mask(self) -> list[bool]:
        return [_is_trainable(p) for p in self._all_params]

    # ---- the partition -------------------------------------------------------------------------

    def _clear_cache(self) -> None:
        self._partition_parameters_cache.clear()
        self._param_to_rank_cache.clear()
        self._index_to_param_cache.clear()
        self._param_to_index_cache.clear()

    def _partition_parameters(self, params_per_rank: list | None = None) -> list[list[dict]]:
        """Each rank's parameter groups: every group's parameters, largest first, each to the
        rank with the fewest elements so far."""
        if params_per_rank is not None:
            if self._partition_parameters_cache:
                raise AssertionError("Specifying `params_per_rank` should only be done when the "
                                     "parameters have not been partitioned yet")
            if len(self.param_groups) != 1:
                raise RuntimeError("Specifying `params_per_rank` only supports a single "
                                   "parameter group")
            self._partition_parameters_cache = [[] for _ in range(self.world_size)]
            self._partition_param_group(self.param_groups[0], params_per_rank)
            return self._partition_parameters_cache
        if not self._partition_parameters_cache:
            self._partition_parameters_cache = [[] for _ in range(self.world_size)]
            sizes = [0] * self.world_size
            for group in self.param_groups:
                per_rank: list[list] = [[] for _ in range(self.world_size)]
                for param in sorted(group["params"], key=lambda t: t.numel(), reverse=True):
                    rank = sizes.index(min(sizes))
                    per_rank[rank].append(param)
                    sizes[rank] += param.numel()
                self._partition_param_group(group, per_rank)
        return self._partition_parameters_cache

    def _partition_param_group(self, param_group: dict, params_per_rank: list) -> None:
        for rank, params in enumerate(params_per_rank):
            group = copy.copy(param_group)
            group["params"] = params
            self._partition_parameters_cache[rank].append(group)

    @property
    def _param_to_rank(self) -> dict:
        if not self._param_to_rank_cache:
            for rank, groups in enumerate(self._partition_parameters()):
                for group in groups:
                    for param in group["params"]:
                        self._param_to_rank_cache[param] = rank
        return self._param_to_rank_cache

    @property
    def _param_to_index(self) -> dict:
        if not self._param_to_index_cache:
            self._param_to_index_cache = {p: i for i, p in enumerate(self._index_to_param)}
        return self._param_to_index_cache

    @property
    def _index_to_param(self) -> list:
        if not self._index_to_param_cache:
            self._index_to_param_cache = list(chain.from_iterable(
                g["params"] for g in self.param_groups))
        return self._index_to_param_cache

    def _init_local_optimizer(self) -> None:
        self.optim: Optimizer = self._optim_constructor(self._partition_parameters()[self.rank],
                                                        **self._optim_defaults)
        self._sync_param_groups(self.optim.param_groups, self.param_groups)

    def add_param_group(self, param_group: dict[str, Any]) -> None:
        """Add a parameter group (on every rank): its parameters are partitioned as the
        first ones were."""
        super().add_param_group(param_group)
        if self.initialized:
            self._clear_cache()
            groups = self._partition_parameters()[self.rank]
            if len(groups) == len(self.optim.param_groups) + 1:
                self.optim.add_param_group(groups[-1])
            if self.parameters_as_bucket_view:
                self._build_param_buckets()

    @staticmethod
    def _sync_param_groups(src_param_groups: list, dst_param_groups: list) -> None:
        if len(src_param_groups) != len(dst_param_groups):
            raise AssertionError("Mismatch between number of source and destination parameter "
                                 "groups")
        for src, dst in zip(src_param_groups, dst_param_groups):
            for key in src:
                if key != "params":
                    dst[key] = src[key]

    # ---- buckets -------------------------------------------------------------------------------

    def _build_param_buckets(self) -> None:
        """With ``parameters_as_bucket_view``: each rank's trainable parameters become views of
        one flat tensor, broadcast in one call."""
        if not self.parameters_as_bucket_view:
            return
        self._buckets = []
        with no_grad():
            for groups in self._partition_parameters():
                params = [p for g in groups for p in g["params"]]
                trainable = [p for p in params if _is_trainable(p)]
                for p in params:
                    if not _is_trainable(p):
                        p.data = p.data.detach().clone()
                size = sum(p.numel() for p in trainable)
                if size == 0:
                    self._buckets.append(_creation.zeros(1))
                    continue
                bucket = _creation.empty(size, dtype=trainable[0].dtype)
                offset = 0
                for p in trainable:
                    end = offset + p.numel()
                    bucket[offset:end].copy_(p.data.flatten())
                    p.data = bucket[offset:end].view_as(p.data)
                    offset = end
                self._buckets.append(bucket)

    # ---- stepping ------------------------------------------------------------------------------

    def _broadcast_params_from_rank(self, rank: int) -> list:
        global_rank = dist.get_global_rank(self.process_group, rank)
        if self.parameters_as_bucket_view:
            return [dist.broadcast(self._buckets[rank], global_rank, self.process_group,
                                   async_op=True)]
        return [dist.broadcast(p.data, global_rank, self.process_group, async_op=True)
                for group in self._partition_parameters()[rank] for p in group["params"]]

    def _sync_params(self) -> None:
        handles = []
        for rank in range(self.world_size):
            handles.extend(self._broadcast_params_from_rank(rank))
        for handle in handles:
            handle.wait()

    def _local_step(self, closure: Callable | None = None, **kwargs: Any):
        mask = self._get_is_trainable_mask()
        if mask != self._is_trainable_mask:
            self._build_param_buckets()
            self._is_trainable_mask = mask
        self._sync_param_groups(self.param_groups, self.optim.param_groups)
        loss = (self.optim.step(**kwargs) if closure is None
                else self.optim.step(closure=closure, **kwargs))
        self._sync_param_groups(self.optim.param_groups, self.param_groups)
        return loss

    def step(self, closure: Callable | None = None, **kwargs: Any):
        """Step this rank's share of the parameters, then broadcast every share."""
        loss = self._local_step(closure=closure, **kwargs)
        self._sync_params()
        return loss

    # ---- state dicts ---------------------------------------------------------------------------

    def consolidate_state_dict(self, to: int = 0) -> None:
        """Gather every rank's optimizer state on rank ``to`` (call it on every rank)."""
        self._sync_param_groups(self.param_groups, self.optim.param_groups)
        self._all_state_dicts = []
        for rank in range(self.world_size):
            if rank == to:
                if self.rank == to:
                    self._all_state_dicts.append(self.optim.state_dict())
                continue
            local = self.optim.state_dict() if rank == self.rank else None
            received = _broadcast_state(local, dist.get_global_rank(self.process_group, rank),
                                        self.process_group)
            if self.rank == to:
                self._all_state_dicts.append(received)

    def state_dict(self) -> dict[str, Any]:
        """The whole optimizer's state as last consolidated on this rank."""
        if not self._all_state_dicts:
            raise RuntimeError("Optimizer state has not been consolidated on this rank. Please "
                               f"call `consolidate_state_dict(to={self.rank})` on all ranks "
                               "beforehand if you meant to save the global state.")
        state_dict = super().state_dict()
        for rank, local in enumerate(self._all_state_dicts):
            global_groups = self._partition_parameters()[rank]
            for local_group, global_group in zip(local["param_groups"], global_groups):
                for index, param in zip(local_group["params"], global_group["params"]):
                    if index in local["state"]:
                        state_dict["state"][self._param_to_index[param]] = local["state"][index]
        state_dict["state"] = dict(sorted(state_dict["state"].items()))
        return state_dict

    def load_state_dict(self, state_dict: dict[str, Any]) -> None:
        """Load a whole optimizer's state: each rank keeps the state of its share."""
        state_dict = dict(state_dict, state=dict(state_dict["state"]))
        for index, value in state_dict["state"].items():
            param = self._index_to_param[index]
            if self._param_to_rank[param] != self.rank:
                state_dict["state"][index] = None
            else:
                self.optim.state[param] = value
        super().load_state_dict(state_dict)
        self._sync_param_groups(state_dict["param_groups"], self.param_groups)
        self._sync_param_groups(self.param_groups, self.optim.param_groups)
