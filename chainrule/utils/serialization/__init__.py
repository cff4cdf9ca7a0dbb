"""``torch.utils.serialization``: the settings of save and load (``config``)."""

from . import config

__all__ = ["config"]
