"""``torch.utils.data._utils``: the DataLoader's helpers code imports by path, here ``collate``
(the collate engine with a per-type function map)."""

from . import collate

__all__ = ["collate"]
