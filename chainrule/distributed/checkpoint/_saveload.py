"""``torch.distributed.checkpoint.save`` and ``load``: each rank writes its own values (a sharded
state dict's shards are this rank's rows) to ``__<rank>_0.distcp`` in the checkpoint directory,
rank 0 the ``.metadata`` naming every key; ``load`` fills the given state dict in place from the
file of the same rank. The files are chainrule's (PyTorch's zip format, read without running
code); a checkpoint loads on as many ranks as saved it.
"""

from __future__ import annotations

import json
import os
import tempfile
import warnings
from dataclasses import dataclass, field
from typing import Any

from ...autograd.grad_mode import no_grad
from ...serialization import load as _load_file
from ...serialization import save as _save_file
from ...tensor import Tensor
from .. import distributed_c10d as dist

__all__ = ["Metadata", "save", "load"]

_METADATA = ".metadata"


@dataclass
class Metadata:
    """What a checkpoint holds: each flattened key's shape (a tensor's) or ``"bytes"``."""

    state_dict_metadata: dict[str, Any] = field(default_factory=dict)
    planner_data: Any = None
    storage_data: Any = None


def _flatten(value, prefix: str = "") -> dict[str, Any]:
    """Nested dicts and lists as ``{"optim.state.0.weight.exp_avg": value}`` (a tuple, such as
    Adam's betas, is one value)."""
    if isinstance(value, dict):
        items = value.items()
    elif isinstance(value, list):
        items = enumerate(value)
    else:
        return {prefix: value}
    out: dict[str, Any] = {}
    for key, item in items:
        out.update(_flatten(item, f"{prefix}.{key}" if prefix else str(key)))
    return out


def _where(checkpoint_id, storage, what: str) -> str:
    if storage is not None:
        raise NotImplementedError(f"torch.distributed.checkpoint.{what}: custom storage "
                                  f"{'writers' if what == 'save' else 'readers'} are not "
                                  "supported; give checkpoint_id (a directory)")
    if checkpoint_id is None:
        raise RuntimeError("`checkpoint_id` must be specified if storage_reader/storage_writer "
                           "is None.")
    return os.fspath(checkpoint_id)


def _ranks(no_dist: bool, what: str) -> tuple[int, int]:
    if not no_dist and dist.is_initialized():
        return dist.get_rank(), dist.get_world_size()
    if not no_dist:
        warnings.warn("torch.distributed is disabled, unavailable or uninitialized, assuming "
                      f"the intent is to {what} in a single process.", stacklevel=3)
    return 0, 1


def save(state_dict: dict[str, Any], *, checkpoint_id=None, storage_writer=None, planner=None,
         process_group=None, no_dist: bool = False, use_cached_plan: bool = False) -> Metadata:
    """Save a (sharded) state dict: every rank its values, to the directory ``checkpoint_id``."""
    path = _where(checkpoint_id, storage_writer, "save")
    rank, world = _ranks(no_dist, "save")
    os.makedirs(path, exist_ok=True)
    _save_file(state_dict, os.path.join(path, f"__{rank}_0.distcp"))
    flat = _flatten(state_dict)
    metadata = Metadata({key: list(v.shape) if isinstance(v, Tensor) else "bytes"
                         for key, v in flat.items()})
    if rank == 0:
        record = {"world_size": world, "state_dict_metadata": metadata.state_dict_metadata}
        handle, temporary = tempfile.mkstemp(dir=path, prefix=".metadata.")
        with os.fdopen(handle, "w") as f:
            json.dump(record, f)
        os.replace(temporary, os.path.join(path, _METADATA))
    if world > 1:
        dist.barrier()  # every rank's file is there before anyone loads
    return metadata


def load(state_dict: dict[str, Any], *, checkpoint_id=None, storage_reader=None, planner=None,
         process_group=None, no_dist: bool = False) -> None:
    """Fill ``state_dict`` in place from a checkpoint ``save`` wrote: tensors are copied into,
    other values replaced; its keys must be in the checkpoint."""
    path = _where(checkpoint_id, storage_reader, "load")
    rank, world = _ranks(no_dist, "load")
    with open(os.path.join(path, _METADATA)) as f:
        saved_world = json.load(f)["world_size"]
    if saved_world != world:
        raise RuntimeError(f"torch.distributed.checkpoint.load: the checkpoint at {path} was "
                           f"saved by {saved_world} ranks and is loaded by {world}; chainrule "
                           "loads a checkpoint on as many ranks as saved it (save a full state "
                           "dict, StateDictOptions(full_state_dict=True), to change the count)")
    saved = _flatten(_load_file(os.path.join(path, f"__{rank}_0.distcp"), weights_only=True))
    _fill(state_dict, saved, "")


def _fill(container, saved: dict[str, Any], prefix: str) -> None:
    items = container.items() if isinstance(container, dict) else enumerate(container)
    for key, value in list(items):
        name = f"{prefix}.{key}" if prefix else str(key)
        if isinstance(value, (dict, list)):
            _fill(value, saved, name)
            continue
        if name not in saved:
            raise RuntimeError(f"Missing key in checkpoint state_dict: {name}.")
        new = saved[name]
        if isinstance(value, Tensor):
            if not isinstance(new, Tensor) or tuple(new.shape) != tuple(value.shape):
                shape = f"torch.Size({list(new.shape)})" if isinstance(new, Tensor) else new
                raise ValueError(f"Size mismatch between saved {shape} and current: "
                                 f"torch.Size({list(value.shape)}) for {name}")
            with no_grad():
                value.copy_(new)
        else:
            container[key] = new
