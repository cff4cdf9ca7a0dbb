"""Utilities built on chainrule's public API, as in ``torch.utils``."""

from . import (
    _pytree,
    backcompat,
    checkpoint,
    collect_env,
    data,
    deterministic,
    dlpack,
    hooks,
    weak,
)
from ._swap import swap_tensors


def set_module(obj, mod: str) -> None:
    """Set the ``__module__`` attribute of obj to mod (for nicer printing)."""
    if not isinstance(mod, str):
        raise TypeError("The mod argument should be a string")
    obj.__module__ = mod
