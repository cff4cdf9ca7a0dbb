"""DistributedDataParallel on chainrule.distributed: one model replica per rank, gradients
averaged in buckets by MPI's non-blocking all-reduce while backward runs.

At construction the parameters and buffers of rank 0 are broadcast. Parameters are grouped into
buckets in reverse order, as PyTorch groups them (the first bucket holds at most
min(1 MiB, ``bucket_cap_mb``), the others ``bucket_cap_mb``). A post-accumulate-grad hook on
every parameter marks it ready; the engine runs it the moment the parameter's gradient is final,
so a full bucket starts while backward goes on: its gradients are copied into its flat buffer,
divided by the world size and handed to ``Iallreduce``, buckets starting in the same order on
every rank (each hook also tests the buckets in flight, which is when MPI moves them on). Once
the last bucket has started, a callback queued on the running backward (PyTorch's
``queue_callback``) waits for every bucket when backward has finished and writes the averages
back into ``.grad``, so ``backward()`` returns averaged gradients.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Iterator

import numpy as np

from ... import distributed as dist
from ...autograd.engine import queue_callback
from ...autograd.grad_mode import is_grad_enabled, no_grad
from ...autograd.graph import _current_graph_task_id
from ...distributed.distributed_c10d import _group, _mpi, _wait_all
from ...tensor import Tensor
from ..modules.module import Module

__all__ = ["DistributedDataParallel"]

_FIRST_BUCKET_BYTES = 1024 * 1024
_UNFINISHED = (
    "Expected to have finished reduction in the prior iteration before starting a new one. "
    "This error indicates that your module has parameters that were not used in producing "
    "loss. You can enable unused parameter detection by passing the keyword argument "
    "`find_unused_parameters=True` to `torch.nn.parallel.DistributedDataParallel`, and by "
    "making sure all `forward` function outputs participate in calculating loss.")


class _Bucket:
    """Parameters whose gradients are all-reduced together, through one flat buffer."""

    def __init__(self, params: list) -> None:
        self.params = params
        sizes = [p.numel() for p in params]
        self.offsets = np.concatenate([[0], np.cumsum(sizes)]).astype(int)
        self.flat = np.empty(int(self.offsets[-1]), params[0]._data.dtype)
        self.ready = 0


class DistributedDataParallel(Module):
    """Data parallelism across the ranks of a process group: each rank runs ``module`` on its
    share of the batch, and backward leaves every rank the gradients averaged over all ranks."""

    def __init__(self, module: Module, device_ids=None, output_device=None, dim: int = 0,
                 broadcast_buffers: bool = True, init_sync: bool = True, process_group=None,
                 bucket_cap_mb: float | None = None, find_unused_parameters: bool = False,
                 check_reduction: bool = False, gradient_as_bucket_view: bool = False,
                 static_graph: bool = False, **kwargs) -> None:
        super().__init__()
        if device_ids:
            raise ValueError(
                f"DistributedDataParallel device_ids and output_device arguments only work with "
                f"single-device/multiple-device GPU modules or CPU modules, but got device_ids "
                f"{device_ids}, output_device {output_device}, and module parameters "
                f"{{device(type='cpu')}}.")
        self.module = module
        self.process_group = _group(process_group)
        self.broadcast_buffers = broadcast_buffers if broadcast_buffers is not None else True
        self.find_unused_parameters = find_unused_parameters
        self.require_backward_grad_sync = True
        self.require_forward_param_sync = True
        self.dim = dim
        self.device_ids = None
        self.output_device = None
        self.static_graph = static_graph
        self.gradient_as_bucket_view = gradient_as_bucket_view
        params = list(dict.fromkeys(p for p in module.parameters() if p.requires_grad))
        if not params:
            raise RuntimeError("DistributedDataParallel is not needed when a module doesn't "
                               "have any parameter that requires a gradient.")
        if init_sync:
            self._broadcast(list(module.parameters()) + list(module.buffers()))
        cap = int((25 if bucket_cap_mb is None else bucket_cap_mb) * 1024 * 1024)
        object.__setattr__(self, "_buckets", self._make_buckets(params, cap))
        object.__setattr__(self, "_where", {id(p): (b, i) for b, bucket in
                                            enumerate(self._buckets)
                                            for i, p in enumerate(bucket.params)})
        object.__setattr__(self, "_hooks", [p.register_post_accumulate_grad_hook(self._ready)
                                            for p in params])
        self._reset()

    # ---- buckets -----------------------------------------------------------------------------

    @staticmethod
    def _make_buckets(params: list, cap: int) -> list:
        buckets, current, size, limit = [], [], 0, min(_FIRST_BUCKET_BYTES, cap)
        for p in reversed(params):  # backward produces the last layer's gradients first
            if current and (size >= limit or p._data.dtype != current[0]._data.dtype):
                buckets.append(_Bucket(current))
                current, size, limit = [], 0, cap
            current.append(p)
            size += p._data.nbytes
        buckets.append(_Bucket(current))
        return buckets

    def _reset(self) -> None:
        object.__setattr__(self, "_syncing", False)
        object.__setattr__(self, "_requests", [])
        object.__setattr__(self, "_launched", 0)
        object.__setattr__(self, "_unused", ())
        object.__setattr__(self, "_queued", False)
        for bucket in self._buckets:
            bucket.ready = 0

    def _broadcast(self, tensors: list) -> None:
        with no_grad():
            for t in tensors:
                dist.broadcast(t, 0, self.process_group)

    def _ready(self, param: Tensor) -> None:
        """A parameter's gradient is accumulated: start every bucket that is now complete."""
        if not self._syncing:
            return
        b, _ = self._where[id(param)]
        self._buckets[b].ready += 1
        self._launch_ready()

    def _launch_ready(self) -> None:
        MPI = _mpi()
        buckets, comm = self._buckets, self.process_group._comm
        size = self.process_group.size()
        while self._launched < len(buckets) and \
                buckets[self._launched].ready == len(buckets[self._launched].params):
            bucket = buckets[self._launched]
            for p, start, end in zip(bucket.params, bucket.offsets, bucket.offsets[1:]):
                grad = p.grad
                if grad is None:  # unused here (find_unused_parameters): contributes zeros
                    bucket.flat[start:end] = 0
                else:
                    bucket.flat[start:end] = grad._data.reshape(-1)
            bucket.flat /= size
            if not self._launched:
                object.__setattr__(self, "_comm_started", time.perf_counter())
            self._requests.append(comm.Iallreduce(MPI.IN_PLACE, bucket.flat, op=MPI.SUM))
            object.__setattr__(self, "_launched", self._launched + 1)
        if self._launched == len(buckets) and not self._queued:
            if _current_graph_task_id() == -1:  # every parameter unused: no backward runs
                self._finish()
                return
            object.__setattr__(self, "_queued", True)
            queue_callback(self._finish)  # when backward has finished, as PyTorch's reducer
        if self._requests:
            MPI.Request.Testall(self._requests)  # lets MPI progress the buckets in flight

    def _finish(self) -> None:
        """Wait for every bucket and write the averaged gradients back into ``.grad``."""
        pg = self.process_group
        backward_done = time.perf_counter()
        requests = self._requests + ([self._used_request] if self._unused else [])
        _wait_all(requests, pg._timeout, "DistributedDataParallel all_reduce")
        # (first bucket started, backward finished, last bucket done): for the benchmark
        object.__setattr__(self, "_comm_times", (self._comm_started, backward_done,
                                                 time.perf_counter()))
        unused = set(self._unused)
        for bucket in self._buckets:
            for p, start, end in zip(bucket.params, bucket.offsets, bucket.offsets[1:]):
                values = bucket.flat[start:end].reshape(p._data.shape)
                if id(p) in unused and self._used[self._index[id(p)]] == 0:
                    continue  # unused on every rank: its .grad is left as it was
                if p.grad is None:
                    p.grad = Tensor._wrap(values.copy(), None, 0)
                else:
                    np.copyto(p.grad._data, values)
        self._reset()

    # ---- forward -----------------------------------------------------------------------------

    def forward(self, *inputs, **kwargs):
        if self._syncing:
            if self._launched < len(self._buckets) and \
                    any(bucket.ready for bucket in self._buckets):
                raise RuntimeError(_UNFINISHED)
            self._reset()
        if self.broadcast_buffers and self.require_forward_param_sync and \
                self.process_group.size() > 1:
            self._broadcast(list(self.module.buffers()))
        output = self.module(*inputs, **kwargs)
        if is_grad_enabled() and self.require_backward_grad_sync:
            object.__setattr__(self, "_syncing", True)
            if self.find_unused_parameters:
                self._mark_unused(output)
        return output

    def _mark_unused(self, output) -> None:
        """Parameters the output's graph does not reach are ready now (torch's search)."""
        seen, stack, reached = set(), [t.grad_fn for t in _tensors(output)
                                       if t.grad_fn is not None], set()
        while stack:
            node = stack.pop()
            if node is None or node in seen:
                continue
            seen.add(node)
            variable = getattr(node, "variable", None)
            if variable is not None:
                reached.add(id(variable))
            stack.extend(edge[0] for edge in node.next_functions if edge[0] is not None)
        params = [p for bucket in self._buckets for p in bucket.params]
        unused = [p for p in params if id(p) not in reached]
        object.__setattr__(self, "_index", {id(p): i for i, p in enumerate(params)})
        object.__setattr__(self, "_used", np.array([id(p) in reached for p in params],
                                                   np.int32))
        object.__setattr__(self, "_used_request", self.process_group._comm.Iallreduce(
            _mpi().IN_PLACE, self._used, op=_mpi().SUM))
        object.__setattr__(self, "_unused", tuple(id(p) for p in unused))
        for p in unused:
            self._buckets[self._where[id(p)][0]].ready += 1
        self._launch_ready()

    @contextlib.contextmanager
    def no_sync(self) -> Iterator[None]:
        """Inside, backward accumulates gradients locally; the first backward after it
        all-reduces the accumulated gradients."""
        previous = self.require_backward_grad_sync
        self.require_backward_grad_sync = False
        try:
            yield
        finally:
            self.require_backward_grad_sync = previous


def _tensors(output) -> list:
    if isinstance(output, Tensor):
        return [output]
    if isinstance(output, (list, tuple)):
        return [t for item in output for t in _tensors(item)]
    if isinstance(output, dict):
        return [t for item in output.values() for t in _tensors(item)]
    return []
