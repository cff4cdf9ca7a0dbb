"""torch.linalg: factorizations, solvers, inverses and norms (from chainrule.ops.linalg)."""

from __future__ import annotations

from .ops import _out
from .ops.decomposition import LINALG as _DECOMPOSITION
from .ops.linalg import LINALG as _LINALG
from .ops.linalg import LinAlgError

globals().update({name: _out.with_out(name, fn) if name in _out.LINALG else fn
                  for name, fn in {**_LINALG, **_DECOMPOSITION}.items()})

__all__ = ["LinAlgError", *_LINALG, *_DECOMPOSITION]
