"""``torch.backends.xnnpack``: the XNNPACK kernels, which chainrule does not use."""

from __future__ import annotations

import sys
import types


class _XNNPACKEngine(types.ModuleType):
    """The module, with a read-only ``enabled``."""

    @property
    def enabled(self) -> bool:
        return False

    @enabled.setter
    def enabled(self, value) -> None:
        raise RuntimeError("Assignment not supported")


sys.modules[__name__].__class__ = _XNNPACKEngine
