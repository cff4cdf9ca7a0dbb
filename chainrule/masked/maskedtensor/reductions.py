"""The reductions a MaskedTensor has as methods: torch.masked's, over the specified elements;
the result is specified where its slice had a specified element."""

from __future__ import annotations

from .. import _ops
from .core import MaskedTensor

__all__: list[str] = []

REDUCE_NAMES = ["sum", "mean", "amin", "amax", "argmin", "argmax", "prod", "all", "norm", "var",
                "std"]  # norm as a method is refused (see below), as in PyTorch


def _masked_all(data, dim=None, keepdim: bool = False, *, mask):
    """all() over the specified elements (masked-out ones count as True)."""
    data = data.masked_fill(~mask, True)
    return data.all() if dim is None else data.all(dim=dim, keepdim=keepdim)


def _multidim_any(mask, dim, keepdim: bool):
    for d in sorted([dim] if isinstance(dim, int) else dim, reverse=True):
        mask = mask.any(dim=d, keepdim=keepdim)
    return mask


def _reduce_dim_args(input, dim, keepdim=False, dtype=None):
    return input, dim, keepdim, dtype


def _reduction(name: str):
    def method(*args, **kwargs):
        self = args[0]
        mask = self.get_mask()
        if len(args) == 1 and not kwargs:
            if name == "all":
                data = _masked_all(self.get_data(), mask=mask)
            else:
                data = getattr(_ops, name)(self, mask=mask)
            return MaskedTensor._wrap(data, mask.any())
        self, dim, keepdim, dtype = _reduce_dim_args(*args, **kwargs)
        if name == "all":
            data = _masked_all(self.get_data(), dim, keepdim, mask=mask)
        else:
            data = getattr(_ops, name)(self, dim=dim, keepdim=keepdim, dtype=dtype, mask=mask)
        return MaskedTensor._wrap(data, _multidim_any(mask, dim, keepdim))

    method.__name__ = name
    method.__doc__ = f"torch.masked.{name} over the specified elements, as a MaskedTensor."
    return method


for _name in REDUCE_NAMES:
    setattr(MaskedTensor, _name, _reduction(_name))


def norm(self, p="fro", dim=None, keepdim: bool = False, dtype=None) -> MaskedTensor:
    """Refused, as PyTorch's MaskedTensor refuses it: Tensor.norm hands p on to the reduction,
    which takes none (torch.masked.norm(mt) is the masked norm)."""
    raise TypeError("_reduce_dim_args() got an unexpected keyword argument 'p'")


MaskedTensor.norm = norm


def softmax(self, dim: int, dtype=None) -> MaskedTensor:
    """Softmax along dim over the specified elements."""
    return MaskedTensor._wrap(_ops.softmax(self.get_data(), dim, dtype=dtype,
                                           mask=self.get_mask()), self.get_mask())


MaskedTensor.softmax = softmax
