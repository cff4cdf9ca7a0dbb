"""torch.linalg: factorizations, solvers, inverses and norms (from chainrule.ops.linalg)."""

from __future__ import annotations

from .ops.decomposition import LINALG as _DECOMPOSITION
from .ops.linalg import LINALG as _LINALG
from .ops.linalg import LinAlgError

globals().update(_LINALG)
globals().update(_DECOMPOSITION)

__all__ = ["LinAlgError", *_LINALG, *_DECOMPOSITION]
