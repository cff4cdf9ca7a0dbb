"""The process group and the collectives, on MPI (mpi4py): torch.distributed's functions.

Both backends PyTorch runs on a CPU, ``"mpi"`` and ``"gloo"``, are carried by MPI here: the ranks
are MPI's COMM_WORLD, started by ``chainrule.distributed.run`` (or ``mpirun``). Collectives work
in place on the tensors' arrays; ``async_op=True`` starts MPI's non-blocking form and returns a
``Work`` whose ``wait()`` finishes it. Every wait polls with a deadline, the group's ``timeout``:
a peer that never arrives raises RuntimeError instead of hanging.
"""

from __future__ import annotations

import datetime
import enum
import importlib.util
import json
import os
import time
from collections.abc import Callable

import numpy as np

from .._dispatch import bump_version
from ..tensor import Tensor

__all__ = ["Backend", "GroupMember", "ProcessGroup", "ReduceOp", "Work", "all_gather",
           "all_gather_into_tensor", "all_gather_object", "all_reduce", "barrier", "broadcast",
           "broadcast_object_list", "destroy_process_group", "gather", "get_backend", "get_rank",
           "get_world_size", "init_process_group", "irecv", "is_available", "is_gloo_available",
           "is_initialized", "is_mpi_available", "is_nccl_available", "is_torchelastic_launched",
           "isend", "recv", "reduce", "reduce_scatter_tensor", "scatter", "send"]

default_pg_timeout = datetime.timedelta(minutes=30)
_NOT_INITIALIZED = ("Default process group has not been initialized, please make sure to call "
                    "init_process_group.")


def _mpi():
    """mpi4py's MPI module (importing it initialises MPI), or an ImportError naming the extra."""
    try:
        from mpi4py import MPI
    except ImportError as e:
        raise ImportError("chainrule.distributed needs mpi4py and an MPI library: "
                          "pip install 'chainrule[distributed]'") from e
    return MPI


def is_available() -> bool:
    """Whether the distributed package can run here (mpi4py is installed)."""
    return importlib.util.find_spec("mpi4py") is not None


def is_mpi_available() -> bool:
    """Whether the MPI backend is available."""
    return is_available()


def is_gloo_available() -> bool:
    """Whether the Gloo backend is available (here: carried by MPI)."""
    return is_available()


def is_nccl_available() -> bool:
    """Whether the NCCL backend is available (never: no GPUs)."""
    return False


def is_torchelastic_launched() -> bool:
    """Whether this process was started by the launcher (``TORCHELASTIC_RUN_ID`` is set)."""
    return os.getenv("TORCHELASTIC_RUN_ID") is not None


class Backend(str):
    """A backend's name, lower case: ``Backend("GLOO") == "gloo"``."""

    UNDEFINED = "undefined"
    GLOO = "gloo"
    NCCL = "nccl"
    UCC = "ucc"
    MPI = "mpi"

    def __new__(cls, name: str) -> Backend:
        if not isinstance(name, str):
            raise ValueError(f"Backend constructor parameter must be string-ish, got {name!r}")
        return super().__new__(cls, name.lower())


class ReduceOp:
    """The reduction of a collective: ``ReduceOp.SUM``, ``AVG``, ``PRODUCT``, ``MIN``, ``MAX``,
    ``BAND``, ``BOR``, ``BXOR`` (``PREMUL_SUM`` is named but not supported)."""

    class RedOpType(enum.IntEnum):
        SUM = 0
        AVG = 1
        PRODUCT = 2
        MIN = 3
        MAX = 4
        BAND = 5
        BOR = 6
        BXOR = 7
        PREMUL_SUM = 8

        def __str__(self) -> str:
            return f"RedOpType.{self.name}"

    SUM = RedOpType.SUM
    AVG = RedOpType.AVG
    PRODUCT = RedOpType.PRODUCT
    MIN = RedOpType.MIN
    MAX = RedOpType.MAX
    BAND = RedOpType.BAND
    BOR = RedOpType.BOR
    BXOR = RedOpType.BXOR
    PREMUL_SUM = RedOpType.PREMUL_SUM


class ProcessGroup:
    """A group of ranks and its MPI communicator (the default group is every rank)."""

    def __init__(self, comm, backend: str, timeout: datetime.timedelta) -> None:
        self._comm = comm
        self._backend = Backend(backend)
        self._timeout = timeout.total_seconds()

    def rank(self) -> int:
        """This process's rank in the group."""
        return self._comm.Get_rank()

    def size(self) -> int:
        """The number of ranks in the group."""
        return self._comm.Get_size()

    def name(self) -> str:
        return self._backend

    def __repr__(self) -> str:
        return f"<ProcessGroup {self._backend} rank {self.rank()} of {self.size()}>"


class GroupMember:
    """``GroupMember.WORLD``: the default group once initialised, else None."""

    WORLD: ProcessGroup | None = None
    NON_GROUP_MEMBER = -100


def _wait_all(requests: list, timeout: float, what: str, statuses: list | None = None) -> None:
    """Complete MPI ``requests``, raising RuntimeError after ``timeout`` seconds."""
    MPI = _mpi()
    if MPI.Request.Testall(requests, statuses):
        return
    start = time.monotonic()
    deadline = start + timeout
    idle = start + 1.0
    # Each test lets MPI progress the operation; between tests give the core to whoever needs
    # it (the ranks may share cores), and after a second of waiting stop polling hard.
    while not MPI.Request.Testall(requests, statuses):
        now = time.monotonic()
        if now > deadline:
            raise RuntimeError(f"{what}: timed out after {int(timeout * 1000)}ms waiting for "
                               f"the other ranks (rank {MPI.COMM_WORLD.Get_rank()} of "
                               f"{MPI.COMM_WORLD.Get_size()})")
        if now > idle:
            time.sleep(0.001)
        else:
            os.sched_yield()


class Work:
    """A collective in flight: ``wait()`` completes it (RuntimeError past the group's timeout)."""

    def __init__(self, requests: list, timeout: float, what: str,
                 finish: Callable | None = None, source: Callable | None = None) -> None:
        self._requests = requests
        self._timeout = timeout
        self._what = what
        self._finish = finish
        self._source = source
        self._done = False
        self._statuses: list | None = None

    def wait(self, timeout: datetime.timedelta | None = None) -> bool:
        """Block until the operation completed; True."""
        if not self._done:
            seconds = self._timeout if timeout is None else timeout.total_seconds()
            _wait_all(self._requests, seconds, self._what, self._statuses)
            self._complete()
        return True

    def _complete(self) -> None:
        self._done = True
        if self._finish is not None:
            self._finish()

    def is_completed(self) -> bool:
        """Whether the operation has finished (without blocking)."""
        if not self._done and _mpi().Request.Testall(self._requests, self._statuses):
            self._complete()
        return self._done

    def is_success(self) -> bool:
        return self.is_completed()

    def exception(self) -> None:
        return None

    def result(self) -> list:
        return []

    def source_rank(self) -> int:
        """The rank a ``recv`` from any source received from."""
        if self._source is None:
            raise RuntimeError("It is only supported for recv with any source")
        self.wait()
        return self._source()

    def __repr__(self) -> str:
        return f"<Work {self._what}{' completed' if self._done else ''}>"


# ---- the default group ---------------------------------------------------------------------


def init_process_group(backend: str | None = None, init_method: str | None = None,
                       timeout: datetime.timedelta | None = None, world_size: int = -1,
                       rank: int = -1, store=None, group_name: str = "", pg_options=None,
                       device_id=None) -> None:
    """Join the default process group: every rank the launcher started (MPI's COMM_WORLD)."""
    if GroupMember.WORLD is not None:
        raise ValueError("trying to initialize the default process group twice!")
    name = Backend(backend if backend is not None else "gloo")
    name = Backend(name.split(":")[-1]) if name.startswith("cpu:") else name
    if name in ("nccl", "ucc", "xccl"):
        raise RuntimeError(f"Distributed package doesn't have {name.upper()} built in")
    if name not in ("gloo", "mpi"):
        raise ValueError(f"Unknown backend type {backend}")
    if timeout is not None and not isinstance(timeout, datetime.timedelta):
        raise TypeError(f"Expected timeout argument to be of type datetime.timedelta, "
                        f"got {timeout}")
    MPI = _mpi()
    timeout = timeout or default_pg_timeout
    comm, request = MPI.COMM_WORLD.Idup()  # every rank must arrive: within the timeout
    _wait_all([request], timeout.total_seconds(), "init_process_group")
    size, me = comm.Get_size(), comm.Get_rank()
    want_size = world_size if world_size != -1 else int(os.environ.get("WORLD_SIZE", size))
    want_rank = rank if rank != -1 else int(os.environ.get("RANK", me))
    if want_size != size or want_rank != me:
        comm.Free()
        raise RuntimeError(
            f"rank {want_rank} of world size {want_size} was asked for, but this process is "
            f"MPI rank {me} of {size}: start the ranks with "
            f"`python -m chainrule.distributed.run --nproc-per-node N script.py`")
    GroupMember.WORLD = ProcessGroup(comm, name, timeout)


def is_initialized() -> bool:
    """Whether the default process group has been initialised."""
    return GroupMember.WORLD is not None


def _group(group) -> ProcessGroup:
    world = GroupMember.WORLD
    if world is None:
        raise ValueError(_NOT_INITIALIZED)
    if group is not None and group is not world:
        raise ValueError("chainrule.distributed has one process group, the default one")
    return world


def destroy_process_group(group: ProcessGroup | None = None) -> None:
    """Leave the process group (the default one: all of them)."""
    pg = _group(group)
    pg._comm.Free()
    GroupMember.WORLD = None


def get_rank(group: ProcessGroup | None = None) -> int:
    """This process's rank in the group."""
    return _group(group).rank()


def get_world_size(group: ProcessGroup | None = None) -> int:
    """The number of processes in the group."""
    return _group(group).size()


def get_backend(group: ProcessGroup | None = None) -> Backend:
    """The backend of the group (``"gloo"`` or ``"mpi"``, both carried by MPI)."""
    return _group(group)._backend


# ---- arrays, ops and running ---------------------------------------------------------------


def _tensor(value, name: str = "tensor") -> Tensor:
    if not isinstance(value, Tensor):
        raise TypeError(f"Invalid function argument. Expected parameter `{name}` of type "
                        f"torch.Tensor\n             but got {type(value)} instead.")
    return value


def _tensors(values, name: str) -> list:
    if not isinstance(values, (list, tuple)) or not all(isinstance(v, Tensor) for v in values):
        raise TypeError(f"Invalid function argument. Expected parameter `{name}` of type "
                        f"List[torch.Tensor]\n             but got {type(values)} instead.")
    return list(values)


def _buffer(t: Tensor) -> np.ndarray:
    """A contiguous array with ``t``'s values: its own storage when that is contiguous."""
    data = t._data
    if data.flags.c_contiguous and data.flags.writeable:
        return data
    return np.ascontiguousarray(data)


def _write(t: Tensor, values: np.ndarray) -> None:
    """Put ``values`` into ``t``'s storage (no copy when they are already there)."""
    if values is not t._data:
        np.copyto(t._data, values.reshape(t._data.shape))
    bump_version(t)


def _mpi_op(op, dtype: np.dtype):
    MPI = _mpi()
    if not isinstance(op, ReduceOp.RedOpType):
        raise TypeError(f"Invalid reduce op {op!r}: expected a torch.distributed.ReduceOp")
    if op == ReduceOp.PREMUL_SUM:
        raise ValueError("ReduceOp.PREMUL_SUM is not supported")
    if dtype == np.bool_:
        return {ReduceOp.SUM: MPI.LOR, ReduceOp.AVG: MPI.LOR, ReduceOp.PRODUCT: MPI.LAND,
                ReduceOp.MIN: MPI.LAND, ReduceOp.MAX: MPI.LOR, ReduceOp.BAND: MPI.LAND,
                ReduceOp.BOR: MPI.LOR, ReduceOp.BXOR: MPI.LXOR}[op]
    if op in (ReduceOp.BAND, ReduceOp.BOR, ReduceOp.BXOR) and dtype.kind not in "iu":
        raise RuntimeError(f"Cannot use ReduceOp.{op.name} with {dtype} tensors")
    if op == ReduceOp.AVG and dtype.kind not in "fc":
        raise RuntimeError("Cannot use ReduceOp.AVG with integer tensors")
    return {ReduceOp.SUM: MPI.SUM, ReduceOp.AVG: MPI.SUM, ReduceOp.PRODUCT: MPI.PROD,
            ReduceOp.MIN: MPI.MIN, ReduceOp.MAX: MPI.MAX, ReduceOp.BAND: MPI.BAND,
            ReduceOp.BOR: MPI.BOR, ReduceOp.BXOR: MPI.BXOR}[op]


def _run(pg: ProcessGroup, what: str, start: Callable, finish: Callable | None, async_op: bool,
         source: Callable | None = None) -> Work | None:
    """Start MPI's non-blocking operation(s) ``start()``; return a Work, or complete it now."""
    requests = start()
    work = Work(requests if isinstance(requests, list) else [requests], pg._timeout, what,
                finish, source)
    if async_op:
        return work
    work.wait()
    return None


def _check_rank(pg: ProcessGroup, rank: int | None, group_rank: int | None, what: str) -> int:
    if group_rank is not None:
        if rank is not None:
            raise ValueError("Can't specify both group_rank and global_rank")
        rank = group_rank
    if rank is None:
        raise ValueError("Must specify global_rank or group_rank")
    if not 0 <= rank < pg.size():
        raise ValueError(f"Invalid {what} rank {rank}: it should be in [0, {pg.size() - 1}]")
    return rank


def _same_shape(tensors: list, like: Tensor, what: str) -> None:
    for i, t in enumerate(tensors):
        if tuple(t.shape) != tuple(like.shape) or t.dtype != like.dtype:
            raise RuntimeError(f"{what}: invalid tensor size at index {i} (expected "
                               f"({', '.join(map(str, like.shape))}) {like.dtype}, got "
                               f"({', '.join(map(str, t.shape))}) {t.dtype})")


# ---- collectives ---------------------------------------------------------------------------


def barrier(group: ProcessGroup | None = None, async_op: bool = False, device_ids=None,
            timeout: datetime.timedelta | None = None) -> Work | None:
    """Wait until every rank of the group has reached this barrier."""
    pg = _group(group)
    work = _run(pg, "barrier", lambda: pg._comm.Ibarrier(), None, True)
    if async_op:
        return work
    work.wait(timeout)
    return None


def all_reduce(tensor: Tensor, op=ReduceOp.SUM, group: ProcessGroup | None = None,
               async_op: bool = False) -> Work | None:
    """Reduce ``tensor`` across all ranks with ``op``, in place on every rank."""
    pg = _group(group)
    tensor = _tensor(tensor)
    buf = _buffer(tensor)
    mop = _mpi_op(op, buf.dtype)
    out = np.empty_like(buf)

    def finish() -> None:
        if op == ReduceOp.AVG:
            np.divide(out, pg.size(), out=out, casting="unsafe")
        _write(tensor, out)

    return _run(pg, "all_reduce", lambda: pg._comm.Iallreduce(buf, out, op=mop), finish,
                async_op)


def broadcast(tensor: Tensor, src: int | None = None, group: ProcessGroup | None = None,
              async_op: bool = False, group_src: int | None = None) -> Work | None:
    """Copy ``tensor`` of rank ``src`` into ``tensor`` on every other rank."""
    pg = _group(group)
    tensor = _tensor(tensor)
    root = _check_rank(pg, src, group_src, "source")
    buf = _buffer(tensor)
    return _run(pg, "broadcast", lambda: pg._comm.Ibcast(buf, root=root),
                lambda: _write(tensor, buf), async_op)


def reduce(tensor: Tensor, dst: int | None = None, op=ReduceOp.SUM,
           group: ProcessGroup | None = None, async_op: bool = False,
           group_dst: int | None = None) -> Work | None:
    """Reduce ``tensor`` across all ranks into ``tensor`` of rank ``dst``."""
    pg = _group(group)
    tensor = _tensor(tensor)
    root = _check_rank(pg, dst, group_dst, "destination")
    buf = _buffer(tensor)
    mop = _mpi_op(op, buf.dtype)
    out = np.empty_like(buf) if pg.rank() == root else None

    def finish() -> None:
        if out is not None:
            if op == ReduceOp.AVG:
                np.divide(out, pg.size(), out=out, casting="unsafe")
            _write(tensor, out)

    return _run(pg, "reduce", lambda: pg._comm.Ireduce(buf, out, op=mop, root=root), finish,
                async_op)


def all_gather(tensor_list: list, tensor: Tensor, group: ProcessGroup | None = None,
               async_op: bool = False) -> Work | None:
    """Every rank's ``tensor`` into ``tensor_list`` (one entry per rank) on every rank."""
    pg = _group(group)
    tensor = _tensor(tensor)
    outputs = _tensors(tensor_list, "tensor_list")
    if len(outputs) != pg.size():
        raise ValueError(f"all_gather: tensor_list must have {pg.size()} tensors, "
                         f"got {len(outputs)}")
    _same_shape(outputs, tensor, "all_gather")
    buf = _buffer(tensor)
    out = np.empty((pg.size(),) + buf.shape, buf.dtype)

    def finish() -> None:
        for t, values in zip(outputs, out):
            _write(t, values)

    return _run(pg, "all_gather", lambda: pg._comm.Iallgather(buf, out), finish, async_op)


def all_gather_into_tensor(output_tensor: Tensor, input_tensor: Tensor,
                           group: ProcessGroup | None = None,
                           async_op: bool = False) -> Work | None:
    """Every rank's ``input_tensor`` concatenated (or stacked) into ``output_tensor``."""
    pg = _group(group)
    output_tensor, input_tensor = _tensor(output_tensor, "output_tensor"), _tensor(input_tensor)
    n, shape = pg.size(), tuple(input_tensor.shape)
    if output_tensor.numel() != n * input_tensor.numel() or output_tensor.dtype != \
            input_tensor.dtype:
        raise ValueError(f"all_gather_into_tensor: output tensor size must be equal to "
                         f"world_size times input tensor size, got {tuple(output_tensor.shape)} "
                         f"and {shape} with world size {n}")
    buf = _buffer(input_tensor)
    out = _buffer(output_tensor)
    return _run(pg, "all_gather_into_tensor", lambda: pg._comm.Iallgather(buf, out),
                lambda: _write(output_tensor, out), async_op)


def reduce_scatter_tensor(output: Tensor, input: Tensor, op=ReduceOp.SUM,
                          group: ProcessGroup | None = None,
                          async_op: bool = False) -> Work | None:
    """Reduce ``input`` across ranks and give rank r the r-th of its world-size chunks."""
    pg = _group(group)
    output, input = _tensor(output, "output"), _tensor(input, "input")
    n = pg.size()
    if input.numel() != n * output.numel() or output.dtype != input.dtype:
        raise ValueError(f"reduce_scatter_tensor: input tensor size must be equal to "
                         f"world_size times output tensor size, got {tuple(input.shape)} "
                         f"and {tuple(output.shape)} with world size {n}")
    buf = _buffer(input)
    mop = _mpi_op(op, buf.dtype)
    out = _buffer(output)

    def finish() -> None:
        if op == ReduceOp.AVG:
            np.divide(out, n, out=out, casting="unsafe")
        _write(output, out)

    return _run(pg, "reduce_scatter_tensor",
                lambda: pg._comm.Ireduce_scatter_block(buf, out, op=mop), finish, async_op)


def gather(tensor: Tensor, gather_list: list | None = None, dst: int | None = None,
           group: ProcessGroup | None = None, async_op: bool = False,
           group_dst: int | None = None) -> Work | None:
    """Every rank's ``tensor`` into ``gather_list`` on rank ``dst``."""
    pg = _group(group)
    tensor = _tensor(tensor)
    root = _check_rank(pg, 0 if dst is None and group_dst is None else dst, group_dst,
                       "destination")
    buf = _buffer(tensor)
    out = None
    if pg.rank() == root:
        if not gather_list:
            raise ValueError("Argument ``gather_list`` must be specified on destination rank.")
        outputs = _tensors(gather_list, "gather_list")
        if len(outputs) != pg.size():
            raise ValueError(f"gather: gather_list must have {pg.size()} tensors, "
                             f"got {len(outputs)}")
        _same_shape(outputs, tensor, "gather")
        out = np.empty((pg.size(),) + buf.shape, buf.dtype)
    elif gather_list:
        raise ValueError("Argument ``gather_list`` must NOT be specified on non-destination "
                         "ranks.")

    def finish() -> None:
        if out is not None:
            for t, values in zip(outputs, out):
                _write(t, values)

    return _run(pg, "gather", lambda: pg._comm.Igather(buf, out, root=root), finish, async_op)


def scatter(tensor: Tensor, scatter_list: list | None = None, src: int | None = None,
            group: ProcessGroup | None = None, async_op: bool = False,
            group_src: int | None = None) -> Work | None:
    """Rank ``src``'s ``scatter_list[r]`` into ``tensor`` of rank r."""
    pg = _group(group)
    tensor = _tensor(tensor)
    root = _check_rank(pg, 0 if src is None and group_src is None else src, group_src, "source")
    buf = np.empty_like(_buffer(tensor))
    send_buf = None
    if pg.rank() == root:
        if not scatter_list:
            raise ValueError("Argument ``scatter_list`` must be specified on source rank.")
        inputs = _tensors(scatter_list, "scatter_list")
        if len(inputs) != pg.size():
            raise ValueError(f"scatter: scatter_list must have {pg.size()} tensors, "
                             f"got {len(inputs)}")
        _same_shape(inputs, tensor, "scatter")
        send_buf = np.stack([t._data for t in inputs])
    elif scatter_list:
        raise ValueError("Argument ``scatter_list`` must NOT be specified on non-source ranks.")
    return _run(pg, "scatter", lambda: pg._comm.Iscatter(send_buf, buf, root=root),
                lambda: _write(tensor, buf), async_op)


def isend(tensor: Tensor, dst: int | None = None, group: ProcessGroup | None = None,
          tag: int = 0, group_dst: int | None = None) -> Work:
    """Start sending ``tensor`` to rank ``dst``."""
    pg = _group(group)
    tensor = _tensor(tensor)
    peer = _check_rank(pg, dst, group_dst, "destination")
    if peer == pg.rank():
        raise ValueError("Invalid destination rank: destination rank should not be the same as "
                         "the rank of the current process.")
    buf = np.ascontiguousarray(tensor._data)
    return _run(pg, "send", lambda: pg._comm.Isend(buf, dest=peer, tag=tag), None, True)


def irecv(tensor: Tensor, src: int | None = None, group: ProcessGroup | None = None,
          tag: int = 0, group_src: int | None = None) -> Work:
    """Start receiving ``tensor`` from rank ``src`` (any rank when None)."""
    pg = _group(group)
    tensor = _tensor(tensor)
    MPI = _mpi()
    if src is None and group_src is None:
        peer = MPI.ANY_SOURCE
    else:
        peer = _check_rank(pg, src, group_src, "source")
        if peer == pg.rank():
            raise ValueError("Invalid source rank: source rank should not be the same as the "
                             "rank of the current process.")
    buf = np.empty_like(_buffer(tensor))
    status = MPI.Status()
    work = _run(pg, "recv", lambda: pg._comm.Irecv(buf, source=peer, tag=tag),
                lambda: _write(tensor, buf), True, source=status.Get_source)
    work._statuses = [status]
    return work


def send(tensor: Tensor, dst: int | None = None, group: ProcessGroup | None = None,
         tag: int = 0, group_dst: int | None = None) -> None:
    """Send ``tensor`` to rank ``dst`` (returns once it is sent)."""
    isend(tensor, dst, group, tag, group_dst).wait()


def recv(tensor: Tensor, src: int | None = None, group: ProcessGroup | None = None,
         tag: int = 0, group_src: int | None = None) -> int:
    """Receive ``tensor`` from rank ``src`` (any rank when None); the sender's rank."""
    work = irecv(tensor, src, group, tag, group_src)
    work.wait()
    return work._source()


# ---- plain-data objects --------------------------------------------------------------------


def _pack(obj):
    """``obj`` as JSON with its container types tagged; TypeError for anything not plain data."""
    kind = type(obj)
    if obj is None or kind in (bool, int, float, str):
        return obj
    if kind is list:
        return {"l": [_pack(v) for v in obj]}
    if kind is tuple:
        return {"t": [_pack(v) for v in obj]}
    if kind is dict:
        return {"d": [[_pack(k), _pack(v)] for k, v in obj.items()]}
    if kind is bytes:
        return {"b": obj.hex()}
    raise TypeError(f"chainrule.distributed sends plain data only (None, bool, int, float, str, "
                    f"bytes, and lists, tuples and dicts of them), not pickled objects: got "
                    f"{kind.__module__}.{kind.__qualname__}")


def _unpack(data):
    if not isinstance(data, dict):
        return data
    (tag, value), = data.items()
    if tag == "l":
        return [_unpack(v) for v in value]
    if tag == "t":
        return tuple(_unpack(v) for v in value)
    if tag == "b":
        return bytes.fromhex(value)
    return {_unpack(k): _unpack(v) for k, v in value}


def _encode(obj) -> np.ndarray:
    return np.frombuffer(json.dumps(_pack(obj)).encode(), np.uint8)


def _decode(data: np.ndarray):
    return _unpack(json.loads(data.tobytes().decode()))


def all_gather_object(object_list: list, obj, group: ProcessGroup | None = None) -> None:
    """Every rank's ``obj`` into ``object_list`` on every rank (plain data only, no pickle)."""
    pg = _group(group)
    data = _encode(obj)
    sizes = np.empty(pg.size(), np.int64)
    _run(pg, "all_gather_object",
         lambda: pg._comm.Iallgather(np.array([data.size], np.int64), sizes), None, False)
    out = np.empty(int(sizes.sum()), np.uint8)
    _run(pg, "all_gather_object",
         lambda: pg._comm.Iallgatherv(data, (out, sizes.tolist())), None, False)
    ends = np.cumsum(sizes)
    for i, end in enumerate(ends):
        object_list[i] = _decode(out[end - sizes[i]:end])


def broadcast_object_list(object_list: list, src: int | None = None,
                          group: ProcessGroup | None = None, device=None,
                          group_src: int | None = None) -> None:
    """Rank ``src``'s ``object_list`` into ``object_list`` on every rank (plain data only)."""
    pg = _group(group)
    root = _check_rank(pg, 0 if src is None and group_src is None else src, group_src, "source")
    data = _encode(list(object_list)) if pg.rank() == root else None
    size = np.array([0 if data is None else data.size], np.int64)
    _run(pg, "broadcast_object_list", lambda: pg._comm.Ibcast(size, root=root), None, False)
    buf = data if data is not None else np.empty(int(size[0]), np.uint8)
    _run(pg, "broadcast_object_list", lambda: pg._comm.Ibcast(buf, root=root), None, False)
    if pg.rank() != root:
        object_list[:] = _decode(buf)
