"""Utilities built on chainrule's public API, as in ``torch.utils``."""

from . import checkpoint, data, dlpack
