"""``torch.cuda.amp.autocast`` and the custom Function decorators: deprecated for
``torch.amp``'s with ``device_type='cuda'``."""

from __future__ import annotations

import functools
import warnings

from ..._backend import float16
from ...amp import autocast_mode as _amp

__all__ = ["autocast", "custom_fwd", "custom_bwd"]


class autocast(_amp.autocast):
    """``torch.amp.autocast('cuda', ...)`` under its deprecated name (a FutureWarning)."""

    def __init__(self, enabled: bool = True, dtype=float16, cache_enabled: bool = True) -> None:
        warnings.warn("`torch.cuda.amp.autocast(args...)` is deprecated. Please use "
                      "`torch.amp.autocast('cuda', args...)` instead.", FutureWarning,
                      stacklevel=2)
        super().__init__("cuda", enabled=enabled, dtype=dtype, cache_enabled=cache_enabled)


def custom_fwd(fwd=None, *, cast_inputs=None):
    """``torch.amp.custom_fwd(device_type='cuda')`` under its deprecated name."""
    warnings.warn("`torch.cuda.amp.custom_fwd(args...)` is deprecated. Please use "
                  "`torch.amp.custom_fwd(args..., device_type='cuda')` instead.", FutureWarning,
                  stacklevel=2)
    if fwd is None:
        return functools.partial(_amp.custom_fwd, device_type="cuda", cast_inputs=cast_inputs)
    return _amp.custom_fwd(fwd, device_type="cuda", cast_inputs=cast_inputs)


def custom_bwd(bwd=None):
    """``torch.amp.custom_bwd(device_type='cuda')`` under its deprecated name."""
    warnings.warn("`torch.cuda.amp.custom_bwd(args...)` is deprecated. Please use "
                  "`torch.amp.custom_bwd(args..., device_type='cuda')` instead.", FutureWarning,
                  stacklevel=2)
    if bwd is None:
        return functools.partial(_amp.custom_bwd, device_type="cuda")
    return _amp.custom_bwd(bwd, device_type="cuda")
