"""``torch.distributed.checkpoint``: its ``state_dict`` module (full and sharded state dicts of
``fully_shard``-ed models) and ``save``/``load`` of them to a checkpoint directory (each rank its
own file; loaded on as many ranks as saved it)."""

from ._saveload import Metadata, load, save

__all__ = ["Metadata", "save", "load"]
