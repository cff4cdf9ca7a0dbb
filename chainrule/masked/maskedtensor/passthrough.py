"""The views, selections and joins a MaskedTensor has as methods: applied to the data and the
mask alike."""

from __future__ import annotations

from ...tensor import Tensor
from .core import MaskedTensor, is_masked_tensor

__all__: list[str] = []

PASSTHROUGH_NAMES = ["select", "transpose", "split", "chunk", "t", "narrow", "expand",
                     "expand_as", "view", "view_as", "reshape", "reshape_as", "flatten",
                     "unsqueeze", "unfold", "__getitem__"]


def _parts(args: tuple, part: str) -> tuple:
    """args with each MaskedTensor (also inside lists and tuples) replaced by its data or mask."""
    def one(a):
        if is_masked_tensor(a):
            return a.get_data() if part == "data" else a.get_mask()
        if isinstance(a, (list, tuple)):
            return type(a)(one(x) for x in a)
        return a
    return tuple(one(a) for a in args)


def _pass_through(name: str):
    fn = getattr(Tensor, name)

    def method(self, *args, **kwargs):
        data = fn(self.get_data(), *_parts(args, "data"), **kwargs)
        mask = fn(self.get_mask(), *_parts(args, "mask"), **kwargs)
        if isinstance(data, tuple):
            return tuple(MaskedTensor._wrap(d, m) for d, m in zip(data, mask))
        return MaskedTensor._wrap(data, mask)

    method.__name__ = name
    method.__doc__ = f"Tensor.{name} of the data and of the mask."
    return method


for _name in PASSTHROUGH_NAMES:
    setattr(MaskedTensor, _name, _pass_through(_name))
