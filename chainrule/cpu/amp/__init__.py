"""``torch.cpu.amp``: the deprecated CPU spellings of ``torch.amp``'s autocast and GradScaler."""

from . import autocast_mode, grad_scaler
from .autocast_mode import autocast
from .grad_scaler import GradScaler
