"""``torch.cuda.amp``: the deprecated CUDA spellings of ``torch.amp``'s autocast, GradScaler and
custom Function decorators (on a CPU build autocast and the scaler disable themselves)."""

from . import autocast_mode, common, grad_scaler
from .autocast_mode import autocast, custom_bwd, custom_fwd
from .common import amp_definitely_not_available
from .grad_scaler import GradScaler

__all__ = ["amp_definitely_not_available", "autocast", "custom_bwd", "custom_fwd", "GradScaler"]
