"""``torch.utils.deterministic``: ``fill_uninitialized_memory``, whether uninitialized memory
is filled with a known value under ``torch.use_deterministic_algorithms(True)``. chainrule's
``empty`` always gives zeros, so its memory is never uninitialized; the flag is recorded."""

from __future__ import annotations

import sys
import types

_fill = [True]


class _Deterministic(types.ModuleType):
    """The module, with ``fill_uninitialized_memory`` checked when set."""

    @property
    def fill_uninitialized_memory(self) -> bool:
        """Whether uninitialized memory is filled in deterministic mode (default True)."""
        return _fill[0]

    @fill_uninitialized_memory.setter
    def fill_uninitialized_memory(self, mode: bool) -> None:
        if not isinstance(mode, bool):
            raise RuntimeError(f"expected a bool, but got {type(mode).__name__}")
        _fill[0] = mode


sys.modules[__name__].__class__ = _Deterministic
