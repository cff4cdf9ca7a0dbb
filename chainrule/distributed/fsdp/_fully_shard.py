"""``fully_shard``: each rank keeps a dim-0 shard of every parameter, and so of its gradient and
optimizer state; a module's parameters are all-gathered just before its forward and freed just
after it, gathered again when backward first needs them, and their gradients reduce-scattered
(averaged) into the shards' ``.grad`` as soon as backward is done with the module.

One ``fully_shard`` call makes one group: the module's parameters not already in a submodule's
group. A group's parameters are gathered by one ``all_gather_into_tensor`` and their gradients
scattered by one ``reduce_scatter_tensor``, both on a flat buffer holding, rank after rank, each
rank's shards padded to the same number of rows (``torch.chunk``'s split of dim 0). The gather
is a custom autograd Function whose backward is the reduce-scatter, so the engine runs it once
the module's own backward nodes are done, with no hook on gradients. While a module's forward
runs, a saved-tensors hook stores the tensors that are views of its gathered parameters as where
they sit in them; after forward the gathered memory is dropped (the tensors keep their shapes on
a zero-byte broadcast array) and the first unpack in backward gathers it again.
"""

from __future__ import annotations

import contextlib
from dataclasses import dataclass
from typing import Any

import numpy as np

from ...autograd.function import Function
from ...autograd.grad_mode import is_grad_enabled, no_grad
from ...autograd.graph import saved_tensors_hooks
from ...nn.modules.module import Module
from ...nn.parameter import Parameter
from ...tensor import Tensor
from .. import distributed_c10d as dist

__all__ = ["CPUOffloadPolicy", "FSDPModule", "MixedPrecisionPolicy", "OffloadPolicy",
           "UnshardHandle", "fully_shard"]


@dataclass(frozen=True)
class MixedPrecisionPolicy:
    """The dtypes of the gathered parameters and of the gradient reduction (only the defaults,
    no casting, are supported)."""

    param_dtype: Any = None
    reduce_dtype: Any = None
    output_dtype: Any = None
    cast_forward_inputs: bool = True


@dataclass(frozen=True)
class OffloadPolicy:
    """No offloading (the default)."""


@dataclass(frozen=True)
class CPUOffloadPolicy(OffloadPolicy):
    """Keep the shards on the CPU: chainrule's tensors always are."""

    pin_memory: bool = True


class UnshardHandle:
    """The handle ``unshard(async_op=True)`` returns: the gather is already done."""

    def wait(self) -> None:
        """Wait for the gather (done)."""


class _Slot:
    """One parameter of a group: where its shard sits in the flat buffers."""

    def __init__(self, param: Tensor, owners: list, world: int, rank: int) -> None:
        if param.ndim == 0:
            raise NotImplementedError("fully_shard: 0-dim parameters are not supported")
        self.owners = owners  # (module, name) pairs holding it
        self.shape = tuple(param.shape)
        self.rows = self.shape[0]
        self.chunk = -(-self.rows // world)  # torch.chunk's rows per rank
        self.row_numel = int(np.prod(self.shape[1:], dtype=np.int64))
        self.padded = self.chunk * self.row_numel
        self.start = min(rank * self.chunk, self.rows)
        self.stop = min(self.start + self.chunk, self.rows)
        self.offset = 0  # set by the group
        self.requires_grad = param.requires_grad


def _placeholder(shape: tuple, dtype) -> np.ndarray:
    """An array of ``shape`` that holds no memory (every element is the same zero)."""
    return np.broadcast_to(np.zeros((), dtype), shape)


def _bounds(a: np.ndarray) -> tuple[int, int]:
    """The first and one-past-the-last byte addresses ``a`` reads."""
    low = high = a.__array_interface__["data"][0]
    if a.size == 0:
        return low, high
    for n, step in zip(a.shape, a.strides):
        if step < 0:
            low += (n - 1) * step
        else:
            high += (n - 1) * step
    return low, high + a.itemsize


class _SavedView:
    """A saved tensor that is a view of a gathered parameter: which, and where in it."""

    __slots__ = ("slot", "offset", "shape", "strides")

    def __init__(self, slot: int, offset: int, shape: tuple, strides: tuple) -> None:
        self.slot, self.offset, self.shape, self.strides = slot, offset, shape, strides


class _Gather(Function):
    """The group's gathered parameters from its shards; backward reduce-scatters their
    gradients (averaged over the ranks) into the shards' gradients."""

    @staticmethod
    def forward(ctx, group: _Group, *shards: Tensor):
        ctx.group = group
        ctx.set_materialize_grads(False)
        return tuple(Tensor._wrap(a, None, 0) for a in group._gather())

    @staticmethod
    def backward(ctx, *grads):
        return (None, *ctx.group._reduce_scatter(grads))


class _Group:
    """The state ``fully_shard`` gives a module: its parameters' shards and how to gather
    them."""

    def __init__(self, module: Module, params: list, owners: dict, process_group,
                 reshard_after_forward: bool | None) -> None:
        self.module = module
        self.pg = process_group
        self.world = dist.get_world_size(process_group)
        self.rank = dist.get_rank(process_group)
        self.reshard_after_forward = reshard_after_forward
        dtypes = {p._data.dtype for p in params}
        if len(dtypes) > 1:
            raise NotImplementedError("fully_shard: the parameters of one group must have one "
                                      f"dtype, got {sorted(map(str, dtypes))}")
        self.dtype = params[0]._data.dtype if params else np.dtype(np.float32)
        self.slots = [_Slot(p, owners[id(p)], self.world, self.rank) for p in params]
        offset = 0
        for slot in self.slots:
            slot.offset = offset
            offset += slot.padded
        self.numel = offset  # of one rank's share of the flat buffer
        self.shards: list[Parameter] = []
        with no_grad():
            for p, slot in zip(params, self.slots):
                local = p.detach()[slot.start:slot.stop].clone()
                shard = Parameter(local, requires_grad=p.requires_grad)
                self.shards.append(shard)
                for owner, name in slot.owners:
                    owner._parameters[name] = shard
        self.gathered: tuple | None = None  # the gathered tensors of the forward in flight
        self.arrays: list | None = None  # their memory, while it is held
        self.hooks: contextlib.ExitStack | None = None
        self.is_root = False
        self.in_forward = False
        self.divide_factor: float | None = None

    def sync_shards(self) -> None:
        """Take the module's parameters as the shards again: ``to_empty``, ``_apply`` and
        ``load_state_dict(assign=True)`` put new Parameters in place of the shards."""
        if self.in_forward:
            return  # the module holds the gathered tensors
        for i, slot in enumerate(self.slots):
            owner, name = slot.owners[0]
            current = owner._parameters.get(name)
            if isinstance(current, Parameter) and current is not self.shards[i]:
                self.shards[i] = current
                for other, other_name in slot.owners[1:]:
                    other._parameters[other_name] = current

    # ---- collectives --------------------------------------------------------------------------

    def _gather(self) -> list[np.ndarray]:
        """Every parameter whole, from every rank's shard (one all-gather)."""
        send = np.zeros(self.numel, self.dtype)
        for slot, shard in zip(self.slots, self.shards):
            n = shard._data.size
            send[slot.offset:slot.offset + n] = shard._data.reshape(-1)
        out = np.empty(self.world * self.numel, self.dtype)
        dist.all_gather_into_tensor(Tensor._wrap(out, None, 0), Tensor._wrap(send, None, 0),
                                    self.pg)
        ranks = out.reshape(self.world, self.numel)
        arrays = []
        for slot in self.slots:
            rows = ranks[:, slot.offset:slot.offset + slot.padded]
            whole = rows.reshape((self.world * slot.chunk,) + slot.shape[1:])
            arrays.append(np.ascontiguousarray(whole[:slot.rows]))
        return arrays

    def _reduce_scatter(self, grads: tuple) -> list:
        """Each shard's gradient: the gathered parameters' gradients averaged over the ranks,
        this rank's rows of them (one reduce-scatter)."""
        send = np.zeros((self.world, self.numel), self.dtype)
        for slot, grad in zip(self.slots, grads):
            if grad is None:
                continue
            padded = np.zeros((self.world * slot.chunk, slot.row_numel), self.dtype)
            padded[:slot.rows] = grad._data.reshape(slot.rows, slot.row_numel)
            send[:, slot.offset:slot.offset + slot.padded] = padded.reshape(self.world, -1)
        out = np.empty(self.numel, self.dtype)
        dist.reduce_scatter_tensor(Tensor._wrap(out, None, 0),
                                   Tensor._wrap(send.reshape(-1), None, 0), dist.ReduceOp.SUM,
                                   self.pg)
        np.divide(out, self.world if self.divide_factor is None else self.divide_factor,
                  out=out, casting="unsafe")
        self._free()
        self.gathered = None
        result = []
        for slot, shard, grad in zip(self.slots, self.shards, grads):
            if grad is None or not slot.requires_grad:
                result.append(None)
                continue
            n = shard._data.size
            result.append(Tensor._wrap(out[slot.offset:slot.offset + n].reshape(
                shard._data.shape).copy(), None, 0))
        return result

    def gather_one(self, i: int, local: np.ndarray) -> np.ndarray:
        """The whole tensor of which ``local`` is this rank's shard, shaped as parameter ``i``
        (a parameter, or optimizer state of its shape)."""
        slot = self.slots[i]
        send = np.zeros(slot.padded, local.dtype)
        send[:local.size] = local.reshape(-1)
        out = np.empty(self.world * slot.padded, local.dtype)
        dist.all_gather_into_tensor(Tensor._wrap(out, None, 0), Tensor._wrap(send, None, 0),
                                    self.pg)
        return out.reshape((self.world * slot.chunk,) + slot.shape[1:])[:slot.rows].copy()

    def shard_of(self, i: int, whole: np.ndarray) -> np.ndarray:
        """This rank's rows of a whole tensor shaped as parameter ``i``."""
        slot = self.slots[i]
        if tuple(whole.shape) != slot.shape:
            raise RuntimeError(f"fully_shard: a whole tensor of shape {tuple(whole.shape)} for a "
                               f"parameter of shape {slot.shape}")
        return np.ascontiguousarray(whole[slot.start:slot.stop])

    # ---- gathered memory ----------------------------------------------------------------------

    def _hold(self, arrays: list) -> None:
        self.arrays = arrays
        for t, a in zip(self.gathered or (), arrays):
            t._data = a

    def _free(self) -> None:
        """Drop the gathered memory; the gathered tensors keep their shapes."""
        if self.gathered is not None:
            for t in self.gathered:
                t._data = _placeholder(t._data.shape, self.dtype)
        self.arrays = None

    def _pack(self, tensor: Tensor):
        arrays = self.arrays
        if arrays is not None:
            low, high = _bounds(tensor._data)
            for i, a in enumerate(arrays):
                a_low, a_high = _bounds(a)
                if a_low <= low and high <= a_high and a.size:
                    return _SavedView(i, low - a_low if tensor._data.size else 0,
                                      tensor._data.shape, tensor._data.strides)
        return tensor

    def _unpack(self, packed):
        if not isinstance(packed, _SavedView):
            return packed
        if self.arrays is None:  # backward needs the parameters again: gather them
            self._hold(self._gather())
        base = self.arrays[packed.slot]
        view = np.ndarray(packed.shape, base.dtype, buffer=base, offset=packed.offset,
                          strides=packed.strides)
        return Tensor._wrap(view, None, 0)

    # ---- forward ------------------------------------------------------------------------------

    def _register(self, tensors) -> None:
        for slot, t in zip(self.slots, tensors):
            for owner, name in slot.owners:
                owner._parameters[name] = t

    def pre_forward(self, module: Module, args):
        if not _forward_stack:
            self.is_root = True
        _forward_stack.append(self)
        if not self.slots:
            return None
        self.sync_shards()
        self.in_forward = True
        gathered = _Gather.apply(self, *self.shards)
        if not isinstance(gathered, tuple):
            gathered = (gathered,)
        self.gathered = gathered
        self.arrays = [t._data for t in gathered]
        self._register(gathered)
        if is_grad_enabled() and self._reshards():
            self.hooks = contextlib.ExitStack()
            self.hooks.enter_context(saved_tensors_hooks(self._pack, self._unpack))
        return None

    def _reshards(self) -> bool:
        if self.reshard_after_forward is None:
            return not self.is_root
        return bool(self.reshard_after_forward)

    def post_forward(self, module: Module, args, output):
        if not self.slots:
            if _forward_stack and _forward_stack[-1] is self:
                _forward_stack.pop()
            return None
        if self.hooks is not None:
            self.hooks.close()
            self.hooks = None
        self._register(self.shards)
        self.in_forward = False
        if _forward_stack and _forward_stack[-1] is self:
            _forward_stack.pop()
        if not is_grad_enabled() or self._reshards():
            self._free()
        if not is_grad_enabled():
            self.gathered = None
        return None


_forward_stack: list[_Group] = []


def _shards_of(model: Module) -> dict:
    """id(shard) -> (its group, its index) for every ``fully_shard``-ed module in ``model``."""
    found = {}
    for m in model.modules():
        group = m.__dict__.get("_fsdp_group")
        if group is not None:
            group.sync_shards()
            for i, shard in enumerate(group.shards):
                found[id(shard)] = (group, i)
    return found


class FSDPModule:
    """The methods ``fully_shard`` adds to a module (its class becomes ``FSDP<Class>``)."""

    def __deepcopy__(self, memo: dict):
        raise AssertionError("FSDP does not support deepcopy. Please use state dict for "
                             "serialization.")

    def reshard(self) -> None:
        """Free the gathered parameters (the module's parameters are the shards)."""
        group = self._fsdp_group
        group._register(group.shards)
        group._free()
        group.gathered = None

    def unshard(self, async_op: bool = False) -> UnshardHandle | None:
        """Gather the module's parameters now (their values for inspection; no graph)."""
        group = self._fsdp_group
        with no_grad():
            arrays = group._gather()
        group.gathered = tuple(Tensor._wrap(a, None, 0) for a in arrays)
        group.arrays = arrays
        group._register(group.gathered)
        return UnshardHandle() if async_op else None

    def set_reshard_after_forward(self, reshard_after_forward: bool,
                                  recurse: bool = True) -> None:
        """Whether to free the gathered parameters after forward (and gather them again in
        backward)."""
        modules = self.modules() if recurse else [self]
        for m in modules:
            if isinstance(m, FSDPModule):
                m._fsdp_group.reshard_after_forward = bool(reshard_after_forward)

    def set_reshard_after_backward(self, reshard_after_backward: bool,
                                   *, recurse: bool = True) -> None:
        """Only True is supported: the gathered parameters are always freed after backward."""
        if not reshard_after_backward:
            raise NotImplementedError("fully_shard: set_reshard_after_backward(False) is not "
                                      "supported")

    def set_is_last_backward(self, is_last_backward: bool) -> None:
        """Accepted: every backward reduce-scatters its gradients."""

    def set_modules_to_forward_prefetch(self, modules: list) -> None:
        """Accepted with no effect: gathers are blocking, so there is nothing to prefetch."""
        for m in modules:
            if not isinstance(m, FSDPModule):
                raise ValueError(f"Expected FSDPModule but got {type(m)}")

    def set_modules_to_backward_prefetch(self, modules: list) -> None:
        """Accepted with no effect: gathers are blocking, so there is nothing to prefetch."""
        self.set_modules_to_forward_prefetch(modules)

    def set_gradient_divide_factor(self, factor: float) -> None:
        """Divide the summed gradients by ``factor`` instead of the world size."""
        self._fsdp_group.divide_factor = float(factor)

    def set_reduce_scatter_divide_factor(self, factor: float) -> None:
        """Deprecated name of ``set_gradient_divide_factor``."""
        self.set_gradient_divide_factor(factor)

    def reset_iter_state(self) -> None:
        """Forget the state of a forward or backward that raised."""
        _forward_stack.clear()
        for m in self.modules():
            if isinstance(m, FSDPModule):
                group = m._fsdp_group
                if group.hooks is not None:
                    group.hooks.close()
                    group.hooks = None
                group.in_forward = False
                group._register(group.shards)
                group._free()
                group.gathered = None

    def set_requires_gradient_sync(self, requires_gradient_sync: bool,
                                   *, recurse: bool = True) -> None:
        """Only True is supported: backward always reduce-scatters."""
        if not requires_gradient_sync:
            raise NotImplementedError("fully_shard: set_requires_gradient_sync(False) "
                                      "(accumulating unsharded gradients) is not supported")


_classes: dict = {}


def _fsdp_class(cls: type) -> type:
    if cls not in _classes:
        _classes[cls] = type(f"FSDP{cls.__name__}", (FSDPModule, cls), {})
    return _classes[cls]


def fully_shard(module: Module, *, mesh=None, reshard_after_forward: bool | int | None = None,
                shard_placement_fn=None, mp_policy: MixedPrecisionPolicy = MixedPrecisionPolicy(),
                offload_policy: OffloadPolicy = OffloadPolicy(),
                ignored_params: set | None = None, dp_mesh_dims=None) -> Module:
    """Shard ``module``'s parameters (those not in an already ``fully_shard``-ed submodule)
    across the ranks, gathering them per module for forward and backward (call it bottom-up:
    on each block, then on the root)."""
    if isinstance(module, (list, tuple)):
        raise NotImplementedError("fully_shard: a list of modules is not supported")
    if not isinstance(module, Module):
        raise ValueError(f"fully_shard does not support containers that do not implement "
                         f"forward: {module}")
    if isinstance(module, FSDPModule):
        raise ValueError("fully_shard: the module is already fully_shard-ed")
    if mesh is not None:
        raise NotImplementedError("fully_shard: only the default mesh (every rank of the "
                                  "default process group) is supported")
    if isinstance(reshard_after_forward, int) and not isinstance(reshard_after_forward, bool):
        raise NotImplementedError("fully_shard: reshard_after_forward as an int is not "
                                  "supported")
    if dp_mesh_dims is not None:
        raise NotImplementedError("fully_shard: dp_mesh_dims (an SPMD mesh) is not supported")
    if shard_placement_fn is not None:
        raise NotImplementedError("fully_shard: shard_placement_fn is not supported (shards are "
                                  "on dim 0)")
    if mp_policy != MixedPrecisionPolicy():
        raise NotImplementedError("fully_shard: mixed precision is not supported")
    if type(offload_policy) is not OffloadPolicy and not isinstance(offload_policy,
                                                                     CPUOffloadPolicy):
        raise NotImplementedError(f"fully_shard: {type(offload_policy).__name__}")
    ignored = {id(p) for p in (ignored_params or ())}
    done = set()
    for sub in module.modules():
        if sub is not module and isinstance(sub, FSDPModule):
            done.update(id(p) for p in sub._fsdp_group.shards)
    params, owners = [], {}
    for sub in module.modules():
        for name, p in list(sub._parameters.items()):
            if p is None or id(p) in ignored or id(p) in done:
                continue
            if _owned_by_inner(module, sub):
                continue
            if id(p) not in owners:
                owners[id(p)] = []
                params.append(p)
            owners[id(p)].append((sub, name))
    group = _Group(module, params, owners, dist.group.WORLD,
                   reshard_after_forward if reshard_after_forward is not None else None)
    object.__setattr__(module, "_fsdp_group", group)
    module.register_forward_pre_hook(group.pre_forward, prepend=True)
    module.register_forward_hook(group.post_forward)
    module.__class__ = _fsdp_class(type(module))
    return module


def _owned_by_inner(root: Module, sub: Module) -> bool:
    """Whether ``sub`` sits in a ``fully_shard``-ed submodule of ``root`` (its group has it)."""
    if sub is root:
        return False
    if isinstance(sub, FSDPModule):
        return True
    for inner in root.modules():
        if inner is not root and isinstance(inner, FSDPModule) and any(
                m is sub for m in inner.modules()):
            return True
    return False
