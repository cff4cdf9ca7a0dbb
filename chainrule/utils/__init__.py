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
