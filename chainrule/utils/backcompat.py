"""``torch.utils.backcompat``: switches for warnings about behaviour that changed long ago
(broadcasting of pointwise ops, ``keepdim`` of reductions); recorded, off by default, and
chainrule has no legacy behaviour to warn about."""

from __future__ import annotations

from collections.abc import Callable


class Warning:  # noqa: A001  (PyTorch's name)
    """One backward-compatibility warning: ``enabled`` is read and set through its getter and
    setter."""

    def __init__(self, setter: Callable, getter: Callable) -> None:
        self.setter = setter
        self.getter = getter

    def set_enabled(self, value) -> None:
        self.setter(value)

    def get_enabled(self):
        return self.getter()

    enabled = property(get_enabled, set_enabled)


_flags = {"broadcast": False, "keepdim": False}


def _setter(name: str) -> Callable:
    def set_flag(value) -> None:
        _flags[name] = bool(value)
    return set_flag


def _getter(name: str) -> Callable:
    def get_flag() -> bool:
        return _flags[name]
    return get_flag


broadcast_warning = Warning(_setter("broadcast"), _getter("broadcast"))
keepdim_warning = Warning(_setter("keepdim"), _getter("keepdim"))
