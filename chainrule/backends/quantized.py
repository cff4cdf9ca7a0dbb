"""``torch.backends.quantized``: the engine of quantized kernels. chainrule has no quantized
tensors (NumPy has no quantized dtypes), so its only engine is 'none'."""

from __future__ import annotations

import sys
import types

_ENGINES = ("none", "fbgemm", "qnnpack", "onednn", "x86")


def _set_engine(engine: str) -> None:
    if engine in ("", None):
        engine = "none"
    if engine not in _ENGINES:
        raise RuntimeError(f"{engine} is not a valid value for quantized engine")
    if engine != "none":
        raise RuntimeError(f"quantized engine {engine.upper()} is not supported")


class _QuantizedEngine(types.ModuleType):
    """The module, with ``engine`` checked when set and ``supported_engines`` read-only."""

    @property
    def engine(self) -> str:
        return "none"

    @engine.setter
    def engine(self, value: str) -> None:
        _set_engine(value)

    @property
    def supported_engines(self) -> list[str]:
        return ["none"]

    @supported_engines.setter
    def supported_engines(self, value) -> None:
        raise RuntimeError("Assignment not supported")


sys.modules[__name__].__class__ = _QuantizedEngine
