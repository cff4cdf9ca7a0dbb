"""Argument helpers of the modules (_single, _pair, ...) and state-dict prefix stripping."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

__all__ = ["consume_prefix_in_state_dict_if_present"]


class _functional:
    """A module class's ``_function``: the function of ``nn.functional`` named ``name``, read
    when used, so a module calls F's public function as wrapped for ``__torch_function__``."""

    def __init__(self, name: str) -> None:
        self.name = name

    def __get__(self, obj, owner=None) -> Callable:
        from .. import functional

        return getattr(functional, self.name)


def _ntuple(n: int, name: str = "parse") -> Callable[[Any], tuple]:
    """A parser giving an iterable as a tuple and repeating anything else ``n`` times."""

    def parse(x) -> tuple:
        return tuple(x) if isinstance(x, Iterable) else (x,) * n

    parse.__name__ = name
    return parse


_single = _ntuple(1, "_single")
_pair = _ntuple(2, "_pair")
_triple = _ntuple(3, "_triple")
_quadruple = _ntuple(4, "_quadruple")


def _reverse_repeat_tuple(t, n: int) -> tuple:
    """``t`` reversed with each element repeated ``n`` times: F.pad's order for padding sizes."""
    return tuple(x for x in reversed(t) for _ in range(n))


def _list_with_default(out_size, defaults: list) -> list:
    """``out_size`` with each None replaced by the matching trailing size of ``defaults``."""
    if isinstance(out_size, int):
        return out_size
    if len(defaults) <= len(out_size):
        raise ValueError(f"Input dimension should be at least {len(out_size) + 1}")
    return [d if v is None else v for v, d in zip(out_size, defaults[-len(out_size):])]


def consume_prefix_in_state_dict_if_present(state_dict: dict[str, Any], prefix: str) -> None:
    """Strip ``prefix`` from the keys of ``state_dict`` (and of its ``_metadata``) in place."""
    for key in list(state_dict.keys()):
        if key.startswith(prefix):
            state_dict[key[len(prefix):]] = state_dict.pop(key)
    metadata = getattr(state_dict, "_metadata", None)
    if metadata is None:
        return
    for key in list(metadata.keys()):
        # '' is the wrapper's own entry; 'module' (the prefix without its dot) the wrapped model
        if key and (key == prefix.replace(".", "") or key.startswith(prefix)):
            metadata[key[len(prefix):]] = metadata.pop(key)
