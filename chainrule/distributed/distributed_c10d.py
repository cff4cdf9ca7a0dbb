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
import warnings
from collections.abc import Callable
from typing import NewType

import numpy as np

from .._dispatch import bump_version
from ..tensor import Tensor

__all__ = ["Backend", "BackendConfig", "DebugLevel", "DistBackendError", "DistError",
           "DistNetworkError", "DistStoreError", "GroupMember", "GroupName", "P2POp",
           "ProcessGroup", "QueueEmptyError", "ReduceOp", "Work", "all_gather",
           "all_gather_coalesced", "all_gather_into_tensor", "all_gather_object",
           "all_gather_single", "all_reduce", "all_reduce_coalesced", "all_to_all",
           "all_to_all_single", "barrier", "batch_isend_irecv", "broadcast",
           "broadcast_object_list", "destroy_process_group", "gather", "gather_object",
           "get_backend", "get_backend_config", "get_debug_level", "get_default_backend_for_device",
           "get_global_rank", "get_group_rank", "get_node_local_rank", "get_pg_count",
           "get_process_group_ranks", "get_rank", "get_world_size", "group", "init_process_group",
           "irecv", "is_available", "is_backend_available", "is_gloo_available", "is_initialized",
           "is_mpi_available", "is_nccl_available", "is_torchelastic_launched", "is_ucc_available",
           "is_xccl_available", "isend", "monitored_barrier", "recv", "recv_object_list",
           "reduce", "reduce_op", "reduce_scatter", "reduce_scatter_single",
           "reduce_scatter_tensor", "scatter", "scatter_object_list", "send", "send_object_list",
           "set_debug_level", "set_debug_level_from_env", "supports_complex"]

default_pg_timeout = datetime.timedelta(minutes=30)
_NOT_INITIALIZED = ("Default process group has not been initialized, please make sure to call "
                    "init_process_group.")


class DistError(RuntimeError):
    """An error of the distributed package."""


class DistBackendError(DistError):
    """An error of a backend (a collective that failed or timed out)."""


class DistNetworkError(DistError):
    """A network error."""


class DistStoreError(DistError):
    """An error of a key-value store."""


class QueueEmptyError(DistStoreError):
    """A store's queue was empty."""


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


class _World(type):
    @property
    def WORLD(cls) -> ProcessGroup | None:  # noqa: N802  (PyTorch's name)
        return GroupMember.WORLD


class group(metaclass=_World):  # noqa: N801  (PyTorch's name)
    """``group.WORLD``: the default group once initialised, else None."""


GroupName = NewType("GroupName", str)


class DebugLevel(enum.Enum):
    """How much the distributed package checks and logs (``TORCH_DISTRIBUTED_DEBUG``)."""

    OFF = 0
    INFO = 1
    DETAIL = 2

    def __int__(self) -> int:
        return self.value


_debug_level = [DebugLevel.OFF]


def get_debug_level() -> DebugLevel:
    """The debug level of the distributed package."""
    return _debug_level[0]


def set_debug_level(level: DebugLevel) -> None:
    """Set the debug level of the distributed package."""
    if not isinstance(level, DebugLevel):
        raise TypeError("set_debug_level(): incompatible function arguments. The following "
                        "argument types are supported:\n    1. (arg0: "
                        "torch._C._distributed_c10d.DebugLevel) -> None\n\nInvoked with: "
                        f"{level!r}")
    _debug_level[0] = level


def set_debug_level_from_env() -> None:
    """Set the debug level from ``TORCH_DISTRIBUTED_DEBUG`` (OFF, INFO or DETAIL)."""
    value = os.environ.get("TORCH_DISTRIBUTED_DEBUG", "OFF").upper()
    if value not in DebugLevel.__members__:
        raise ValueError("The value of TORCH_DISTRIBUTED_DEBUG must be OFF, INFO, or DETAIL.")
    _debug_level[0] = DebugLevel[value]


class BackendConfig:
    """The backend of each device type in a process group (``"gloo"``, ``"cpu:gloo,cuda:nccl"``)."""

    def __init__(self, backend: str) -> None:
        backend = Backend(backend)
        if backend == Backend.UNDEFINED:
            self.device_backend_map = {"cpu": Backend.GLOO}
        elif ":" not in backend:
            self.device_backend_map = {"cpu": backend, "cuda": backend}
        else:
            self.device_backend_map = {}
            for pair in backend.split(","):
                if ":" not in pair:
                    raise ValueError(f"Invalid backend string argument: {backend}")
                device, name = pair.split(":", 1)
                self.device_backend_map[device.strip()] = Backend(name.strip())

    def __repr__(self) -> str:
        return ",".join(f"{device}:{name}" for device, name in self.device_backend_map.items())

    def get_device_backend_map(self) -> dict[str, str]:
        """Device type -> backend name."""
        return self.device_backend_map


def supports_complex(reduceOp: ReduceOp) -> bool:  # noqa: N803  (PyTorch's name)
    """Whether the reduction works on complex tensors (not MAX, MIN, PRODUCT or the bitwise
    ones)."""
    return reduceOp not in (ReduceOp.MAX, ReduceOp.MIN, ReduceOp.PRODUCT, ReduceOp.BAND,
                            ReduceOp.BOR, ReduceOp.BXOR)


class _ReduceOpAlias:
    """``reduce_op``: the deprecated name of ReduceOp (its attributes warn)."""

    def __getattribute__(self, name: str):
        warnings.warn("`torch.distributed.reduce_op` is deprecated, please use "
                      "`torch.distributed.ReduceOp` instead", FutureWarning, stacklevel=2)
        return getattr(ReduceOp, name)


reduce_op = _ReduceOpAlias()


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
            raise DistBackendError(f"{what}: timed out after {int(timeout * 1000)}ms waiting for "
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


def is_ucc_available() -> bool:
    """Whether the UCC backend is available (never)."""
    return False


def is_xccl_available() -> bool:
    """Whether the XCCL backend (Intel GPUs) is available (never)."""
    return False


def is_backend_available(backend: str) -> bool:
    """Whether ``backend`` can run here: "gloo" and "mpi" when mpi4py is installed."""
    return backend.lower() in ("gloo", "mpi") and is_mpi_available()


def get_default_backend_for_device(device) -> str:
    """The backend a process group uses for a device type: gloo for the CPU."""
    kind = device if isinstance(device, str) else device.type
    kind = kind.split(":")[0]
    backends = {"cpu": "gloo", "cuda": "nccl", "xpu": "xccl", "mtia": "gloo"}
    if kind not in backends:
        raise ValueError(f"Default backend not registered for device : {kind}")
    return backends[kind]


def get_pg_count() -> int:
    """The number of process groups (the default one, once initialised)."""
    return int(GroupMember.WORLD is not None)


def get_node_local_rank(fallback_rank: int | None = None) -> int:
    """This process's rank on its node: ``LOCAL_RANK``, else ``fallback_rank``."""
    if "LOCAL_RANK" in os.environ:
        return int(os.environ["LOCAL_RANK"])
    if fallback_rank is not None:
        return int(fallback_rank)
    raise RuntimeError("LOCAL_RANK is not in the environment. Consider passing fallback_rank to "
                       "allow `get_node_local_rank` to work, assuming you are not running in a "
                       "multi-device context and want the code to run locally instead.")


def _registered(group) -> ProcessGroup:
    if group is not GroupMember.WORLD:  # before init_process_group: None is the world
        raise ValueError(f"Group {group} is not registered, please create group with "
                         "torch.distributed.new_group API")
    return group


def get_global_rank(group: ProcessGroup, group_rank: int) -> int:
    """The global rank of ``group_rank`` in ``group`` (the default group: itself)."""
    _registered(group)
    return group_rank


def get_group_rank(group: ProcessGroup, global_rank: int) -> int:
    """The rank in ``group`` of ``global_rank`` (the default group: itself)."""
    _registered(group)
    return global_rank


def get_process_group_ranks(group: ProcessGroup | None) -> list[int]:
    """The global ranks of ``group``'s members."""
    return list(range(_group(group).size()))


def get_backend_config(group: ProcessGroup | None = None) -> str:
    """The group's backend per device type (``"cpu:gloo,cuda:gloo"``)."""
    return str(BackendConfig(get_backend(group)))


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


def all_gather_single(output_tensor: Tensor, input_tensor: Tensor,
                      group: ProcessGroup | None = None, async_op: bool = False) -> Work | None:
    """Every rank's ``input_tensor`` concatenated (or stacked) into ``output_tensor``."""
    return all_gather_into_tensor(output_tensor, input_tensor, group, async_op)


def reduce_scatter_single(output: Tensor, input: Tensor, op=ReduceOp.SUM,
                          group: ProcessGroup | None = None,
                          async_op: bool = False) -> Work | None:
    """Reduce ``input`` across ranks and give rank r the r-th of its world-size chunks."""
    return reduce_scatter_tensor(output, input, op, group, async_op)


def reduce_scatter(output: Tensor, input_list: list, op=ReduceOp.SUM,
                   group: ProcessGroup | None = None, async_op: bool = False) -> Work | None:
    """Reduce ``input_list[r]`` across ranks into ``output`` of rank r."""
    pg = _group(group)
    output = _tensor(output, "output")
    inputs = _tensors(input_list, "input_list")
    if len(inputs) != pg.size():
        raise ValueError(f"reduce_scatter: input_list must have {pg.size()} tensors, "
                         f"got {len(inputs)}")
    _same_shape(inputs, output, "reduce_scatter")
    buf = np.ascontiguousarray(np.stack([t._data for t in inputs]))
    mop = _mpi_op(op, buf.dtype)
    out = np.empty_like(_buffer(output))

    def finish() -> None:
        if op == ReduceOp.AVG:
            np.divide(out, pg.size(), out=out, casting="unsafe")
        _write(output, out)

    return _run(pg, "reduce_scatter", lambda: pg._comm.Ireduce_scatter_block(buf, out, op=mop),
                finish, async_op)


def _exchange(pg: ProcessGroup, what: str, send: np.ndarray, send_counts: list,
              recv: np.ndarray, recv_counts: list, finish: Callable, async_op: bool):
    """MPI's all-to-all of flat buffers cut into per-rank counts of elements."""
    def displacements(counts: list) -> list:
        return np.concatenate([[0], np.cumsum(counts)[:-1]]).astype(int).tolist()

    return _run(pg, what, lambda: pg._comm.Ialltoallv(
        [send, (send_counts, displacements(send_counts))],
        [recv, (recv_counts, displacements(recv_counts))]), finish, async_op)


def all_to_all(output_tensor_list: list, input_tensor_list: list,
               group: ProcessGroup | None = None, async_op: bool = False) -> Work | None:
    """Send ``input_tensor_list[r]`` to rank r and receive rank r's into
    ``output_tensor_list[r]``."""
    pg = _group(group)
    outputs = _tensors(output_tensor_list, "output_tensor_list")
    inputs = _tensors(input_tensor_list, "input_tensor_list")
    if len(outputs) != pg.size() or len(inputs) != pg.size():
        raise ValueError(f"all_to_all: the tensor lists must have {pg.size()} tensors, got "
                         f"{len(outputs)} and {len(inputs)}")
    dtypes = {t.dtype for t in outputs + inputs}
    if len(dtypes) > 1:
        raise RuntimeError("all_to_all: every tensor must have the same dtype")
    send = np.concatenate([np.ascontiguousarray(t._data).reshape(-1) for t in inputs])
    recv = np.empty(sum(t.numel() for t in outputs), send.dtype)
    counts = [t.numel() for t in outputs]

    def finish() -> None:
        start = 0
        for t, n in zip(outputs, counts):
            _write(t, recv[start:start + n])
            start += n

    return _exchange(pg, "all_to_all", send, [t.numel() for t in inputs], recv, counts, finish,
                     async_op)


def _splits(sizes, tensor: Tensor, n: int, name: str) -> list:
    rows = tensor.shape[0] if tensor.ndim else 1
    if sizes is None or len(sizes) == 0:
        if rows % n:
            raise ValueError(f"all_to_all_single: the first dim of {name} ({rows}) is not "
                             f"divisible by the world size {n}")
        return [rows // n] * n
    sizes = [int(s) for s in sizes]
    if len(sizes) != n or sum(sizes) != rows:
        raise ValueError(f"all_to_all_single: {name}_split_sizes {sizes} must have {n} entries "
                         f"adding up to the first dim of {name} ({rows})")
    return sizes


def all_to_all_single(output: Tensor, input: Tensor, output_split_sizes=None,
                      input_split_sizes=None, group: ProcessGroup | None = None,
                      async_op: bool = False) -> Work | None:
    """Split ``input`` along dim 0, send split r to rank r, and concatenate what each rank
    sends into ``output`` (equal splits unless sizes are given)."""
    pg = _group(group)
    output, input = _tensor(output, "output"), _tensor(input, "input")
    if output.dtype != input.dtype:
        raise RuntimeError("all_to_all_single: output and input must have the same dtype")
    n = pg.size()
    row_in = input.numel() // max(input.shape[0], 1) if input.ndim else 1
    row_out = output.numel() // max(output.shape[0], 1) if output.ndim else 1
    send_counts = [s * row_in for s in _splits(input_split_sizes, input, n, "input")]
    recv_counts = [s * row_out for s in _splits(output_split_sizes, output, n, "output")]
    send = np.ascontiguousarray(input._data).reshape(-1)
    recv = np.empty(output.numel(), send.dtype)
    return _exchange(pg, "all_to_all_single", send, send_counts, recv, recv_counts,
                     lambda: _write(output, recv), async_op)


def all_reduce_coalesced(tensors: list, op=ReduceOp.SUM, group: ProcessGroup | None = None,
                         async_op: bool = False) -> Work | None:
    """all_reduce each of ``tensors`` (deprecated in PyTorch)."""
    warnings.warn("`torch.distributed.all_reduce_coalesced` will be deprecated. If you must use "
                  "it, please revisit our documentation later at "
                  "https://pytorch.org/docs/main/distributed.html#collective-functions",
                  FutureWarning, stacklevel=2)
    if isinstance(tensors, Tensor):
        tensors = [tensors]
    works = [all_reduce(t, op, group, async_op=True) for t in _tensors(tensors, "tensors")]
    return _joined(works, async_op)


def all_gather_coalesced(output_tensor_lists: list, input_tensor_list: list,
                         group: ProcessGroup | None = None,
                         async_op: bool = False) -> Work | None:
    """all_gather each of ``input_tensor_list`` into the matching list of
    ``output_tensor_lists`` (deprecated in PyTorch)."""
    warnings.warn("`torch.distributed.all_gather_coalesced` will be deprecated. If you must use "
                  "it, please revisit our documentation later at "
                  "https://pytorch.org/docs/main/distributed.html#collective-functions",
                  FutureWarning, stacklevel=2)
    pg = _group(group)
    inputs = _tensors(input_tensor_list, "input_tensor_list")
    if len(output_tensor_lists) != pg.size():
        raise ValueError(f"all_gather_coalesced: output_tensor_lists must have {pg.size()} "
                         f"lists, got {len(output_tensor_lists)}")
    works = [all_gather([outputs[i] for outputs in output_tensor_lists], t, group, True)
             for i, t in enumerate(inputs)]
    return _joined(works, async_op)


def _joined(works: list, async_op: bool) -> Work | None:
    """One Work for several (waiting for all of them), or None once they are done."""
    work = Work([], 0.0, "coalesced", finish=lambda: [w.wait() for w in works])
    if async_op:
        return work
    work.wait()
    return None


class P2POp:
    """A point-to-point operation for batch_isend_irecv: ``op`` is isend or irecv."""

    def __init__(self, op: Callable, tensor: Tensor, peer: int | None = None,
                 group: ProcessGroup | None = None, tag: int = 0,
                 group_peer: int | None = None) -> None:
        if op not in (isend, irecv):
            raise ValueError("Invalid ``op``. Expected ``op`` to be of type ``torch.distributed."
                             "isend`` or ``torch.distributed.irecv``.")
        self.op, self.tensor, self.peer, self.group = op, _tensor(tensor), peer, group
        self.tag, self.group_peer = tag, group_peer

    def __repr__(self) -> str:
        return (f"P2POp(op={self.op.__name__}, peer={self.peer}, group_peer={self.group_peer}, "
                f"tag={self.tag}, shape={tuple(self.tensor.shape)}, dtype={self.tensor.dtype})")


def batch_isend_irecv(p2p_op_list: list) -> list[Work]:
    """Start every send and receive of ``p2p_op_list``; their Works."""
    if not isinstance(p2p_op_list, list) or not all(isinstance(p, P2POp) for p in p2p_op_list):
        raise ValueError("Invalid ``p2p_op_list``. Each op is expected to to be of type "
                         "``torch.distributed.P2POp``.")
    return [p.op(p.tensor, p.peer, p.group, p.tag, p.group_peer) for p in p2p_op_list]


def monitored_barrier(group: ProcessGroup | None = None,
                      timeout: datetime.timedelta | None = None,
                      wait_all_ranks: bool = False) -> None:
    """A barrier that rank 0 checks: past ``timeout`` it raises naming the first rank that did
    not arrive (every such rank with ``wait_all_ranks``)."""
    pg = _group(group)
    seconds = pg._timeout if timeout is None else timeout.total_seconds()
    MPI, tag = _mpi(), 32001
    token = np.zeros(1, np.uint8)
    if pg.rank() != 0:
        pg._comm.Send(token, dest=0, tag=tag)
        try:
            _wait_all([pg._comm.Irecv(np.empty(1, np.uint8), source=0, tag=tag)], seconds,
                      "monitored_barrier")
        except DistBackendError:
            raise DistBackendError(f"Rank {pg.rank()} successfully reached monitoredBarrier, "
                                   "but received errors while waiting for send/recv from rank "
                                   "0.") from None
        return
    pending = {r: pg._comm.Irecv(np.empty(1, np.uint8), source=r, tag=tag)
               for r in range(1, pg.size())}
    deadline = time.monotonic() + seconds
    while pending and time.monotonic() < deadline:
        for r in [r for r, request in pending.items() if request.Test()]:
            del pending[r]
        time.sleep(0.001)
    for request in pending.values():
        request.Cancel()
    if pending:
        late = sorted(pending)
        ms = int(seconds * 1000)
        raise DistBackendError(
            f"Ranks {', '.join(map(str, late))} failed to pass monitoredBarrier in {ms} ms"
            if wait_all_ranks else f"Rank {late[0]} failed to pass monitoredBarrier in {ms} ms")
    MPI.Request.Waitall([pg._comm.Isend(token, dest=r, tag=tag) for r in range(1, pg.size())])


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


def gather_object(obj, object_gather_list: list | None = None, dst: int | None = None,
                  group: ProcessGroup | None = None, group_dst: int | None = None) -> None:
    """Every rank's ``obj`` into ``object_gather_list`` on rank ``dst`` (plain data only)."""
    pg = _group(group)
    root = _check_rank(pg, 0 if dst is None and group_dst is None else dst, group_dst,
                       "destination")
    if pg.rank() == root and object_gather_list is None:
        raise ValueError("Argument ``object_gather_list`` must be specified on destination rank.")
    gathered = [None] * pg.size()
    all_gather_object(gathered, obj, group)
    if pg.rank() == root:
        object_gather_list[:len(gathered)] = gathered


def scatter_object_list(scatter_object_output_list: list,
                        scatter_object_input_list: list | None = None, src: int | None = None,
                        group: ProcessGroup | None = None, group_src: int | None = None) -> None:
    """Rank ``src``'s ``scatter_object_input_list[r]`` into ``scatter_object_output_list[0]``
    of rank r (plain data only)."""
    pg = _group(group)
    root = _check_rank(pg, 0 if src is None and group_src is None else src, group_src, "source")
    if not isinstance(scatter_object_output_list, list) or len(scatter_object_output_list) < 1:
        raise ValueError("Expected argument scatter_object_output_list to be a list of size at "
                         "least 1.")
    objects = [None]
    if pg.rank() == root:
        objects = [list(scatter_object_input_list)]
    broadcast_object_list(objects, root, group)
    scatter_object_output_list[0] = objects[0][pg.rank()]


def send_object_list(object_list: list, dst: int | None = None,
                     group: ProcessGroup | None = None, device=None,
                     group_dst: int | None = None, use_batch: bool = False) -> None:
    """Send ``object_list`` to rank ``dst`` (plain data only)."""
    pg = _group(group)
    peer = _check_rank(pg, dst, group_dst, "destination")
    data = _encode(list(object_list))
    pg._comm.Send(np.array([data.size], np.int64), dest=peer, tag=32002)
    pg._comm.Send(data, dest=peer, tag=32003)


def recv_object_list(object_list: list, src: int | None = None,
                     group: ProcessGroup | None = None, device=None,
                     group_src: int | None = None, use_batch: bool = False) -> int:
    """Receive into ``object_list`` the list rank ``src`` sent (any rank when None); the
    sender's rank."""
    pg = _group(group)
    MPI = _mpi()
    peer = MPI.ANY_SOURCE if src is None and group_src is None else _check_rank(
        pg, src, group_src, "source")
    size, status = np.empty(1, np.int64), MPI.Status()
    _wait_all([pg._comm.Irecv(size, source=peer, tag=32002)], pg._timeout, "recv_object_list",
              [status])
    sender = status.Get_source()
    data = np.empty(int(size[0]), np.uint8)
    _wait_all([pg._comm.Irecv(data, source=sender, tag=32003)], pg._timeout,
              "recv_object_list")
    object_list[:] = _decode(data)[:len(object_list)]
    return sender
