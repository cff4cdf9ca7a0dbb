"""``torch.cuda.nccl``: NVIDIA's collective communication on CUDA tensors, which a CPU build
is not compiled with."""

from __future__ import annotations

import collections.abc
import warnings

from ..tensor import Tensor
from ._utils import no_binding

__all__ = ["all_reduce", "reduce", "broadcast", "all_gather", "reduce_scatter"]

SUM = 0  # ncclRedOp_t


def is_available(tensors) -> bool:
    """Whether NCCL can run a collective on ``tensors``: not in a CPU build."""
    warnings.warn("PyTorch is not compiled with NCCL support", stacklevel=2)
    return False


def version():
    """NCCL's version: a CPU build has no NCCL."""
    raise no_binding("_nccl_version")


def unique_id():
    """A new NCCL communicator id: a CPU build has no NCCL."""
    raise no_binding("_nccl_unique_id")


def init_rank(num_ranks: int, uid, rank: int):
    """This process's NCCL communicator: a CPU build has no NCCL."""
    raise no_binding("_nccl_init_rank")


def _check_sequence_type(inputs) -> None:
    if not isinstance(inputs, collections.abc.Container) or isinstance(inputs, Tensor):
        raise TypeError("Inputs should be a collection of tensors")


def all_reduce(inputs, outputs=None, op: int = SUM, streams=None, comms=None) -> None:
    """Reduce ``inputs`` across devices into ``outputs``."""
    _check_sequence_type(inputs)
    _check_sequence_type(inputs if outputs is None else outputs)
    raise no_binding("_nccl_all_reduce")


def reduce(inputs, output=None, root: int = 0, op: int = SUM, streams=None, comms=None, *,
           outputs=None) -> None:
    """Reduce ``inputs`` across devices into the root's ``output``."""
    _check_sequence_type(inputs)
    raise no_binding("_nccl_reduce")


def broadcast(inputs, root: int = 0, streams=None, comms=None) -> None:
    """Copy the root's tensor to the others of ``inputs``."""
    _check_sequence_type(inputs)
    raise no_binding("_nccl_broadcast")


def all_gather(inputs, outputs, streams=None, comms=None) -> None:
    """Gather ``inputs`` from every device into each of ``outputs``."""
    _check_sequence_type(inputs)
    _check_sequence_type(outputs)
    raise no_binding("_nccl_all_gather")


def reduce_scatter(inputs, outputs, op: int = SUM, streams=None, comms=None) -> None:
    """Reduce ``inputs`` and scatter the pieces over ``outputs``."""
    _check_sequence_type(inputs)
    _check_sequence_type(outputs)
    raise no_binding("_nccl_reduce_scatter")
