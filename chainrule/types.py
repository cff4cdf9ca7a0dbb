"""``torch.types``: the type aliases PyTorch's signatures are annotated with.

chainrule has no symbolic values (torch.compile's SymInt, SymFloat, SymBool), so the
"int-like" aliases are the plain Python types and ``py_sym_types`` is empty: ``isinstance(x,
py_sym_types)`` is False for everything, as it is in PyTorch for every non-symbolic value.
"""

from __future__ import annotations

import os
from builtins import bool as _bool  # noqa: F401  (PyTorch's private aliases, imported by code)
from builtins import bytes as _bytes  # noqa: F401
from builtins import complex as _complex  # noqa: F401
from builtins import float as _float  # noqa: F401
from builtins import int as _int  # noqa: F401
from builtins import str as _str  # noqa: F401
from collections.abc import Sequence
from typing import IO, TYPE_CHECKING, Any, Protocol, TypeAlias, Union

from ._backend import dtype as _dtype
from ._device import device as _device
from ._dtypes import layout as _layout  # noqa: F401
from .tensor import Size, Tensor

if TYPE_CHECKING:
    from .autograd.graph import GradientEdge

__all__ = ["Number", "Device", "FileLike", "Storage"]

_TensorOrTensors: TypeAlias = Tensor | Sequence[Tensor]
_TensorOrOptionalTensors: TypeAlias = Tensor | Sequence[Tensor | None]
_TensorOrTensorsOrGradEdge: TypeAlias = Union[Tensor, Sequence[Tensor], "GradientEdge",
                                              Sequence["GradientEdge"]]
_size: TypeAlias = Size | list[int] | tuple[int, ...]
_symsize: TypeAlias = Size | Sequence[int]

IntLikeType: TypeAlias = int
FloatLikeType: TypeAlias = float
BoolLikeType: TypeAlias = bool
py_sym_types: tuple = ()
PySymType: TypeAlias = Any

Number: TypeAlias = int | float | bool
_Number = (int, float, bool)

FileLike: TypeAlias = str | os.PathLike | IO[bytes]

Device: TypeAlias = _device | str | int | None


class Storage(Protocol):
    """The interface of a storage object, for annotations (chainrule keeps a tensor's memory
    in its NumPy array and has no storage objects of its own)."""

    _cdata: int
    device: _device
    dtype: _dtype
    _torch_load_uninitialized: bool

    def element_size(self) -> int: ...

    def is_shared(self) -> bool: ...

    def share_memory_(self) -> Storage: ...

    def nbytes(self) -> int: ...

    def cpu(self) -> Storage: ...

    def data_ptr(self) -> int: ...

    def from_file(self, filename: str, shared: bool = False, nbytes: int = 0) -> Storage: ...
