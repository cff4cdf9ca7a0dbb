"""``torch.cpu.amp.autocast``: deprecated for ``torch.amp.autocast('cpu', ...)``."""

from __future__ import annotations

import warnings

from ... import _backend
from ...amp.autocast_mode import autocast as _autocast

__all__ = ["autocast"]

# PyTorch's default is bfloat16; where chainrule has no bfloat16 the CPU autocast dtype it
# can run is float16.
_DEFAULT_DTYPE = getattr(_backend, "bfloat16", _backend.float16)


class autocast(_autocast):
    """``torch.amp.autocast('cpu', ...)`` under its deprecated name (a FutureWarning)."""

    def __init__(self, enabled: bool = True, dtype=_DEFAULT_DTYPE,
                 cache_enabled: bool = True) -> None:
        warnings.warn("`torch.cpu.amp.autocast(args...)` is deprecated. Please use "
                      "`torch.amp.autocast('cpu', args...)` instead.", FutureWarning,
                      stacklevel=2)
        super().__init__("cpu", enabled=enabled, dtype=dtype, cache_enabled=cache_enabled)
