"""MaskedTensor: a tensor whose mask says which elements are specified (PyTorch's prototype).

PyTorch routes every operation on a MaskedTensor through ``__torch_dispatch__``; chainrule has no
such dispatch, so a MaskedTensor holds its data and mask as two ordinary tensors and supports
PyTorch's MaskedTensor operations as its methods and operators (``mt.sin()``, ``mt + other``,
``mt.sum(1)``, ``mt.softmax(-1)``, ``mt[0]``, ...; bound by the ``unary``, ``binary``,
``reductions`` and ``passthrough`` modules) and through torch.masked's functions. Functions of
the torch namespace read a tensor's values directly: given a MaskedTensor they raise a TypeError
that says so, rather than compute on masked-out values.

Gradients flow through the data: a leaf MaskedTensor (``requires_grad=True``) accumulates a
MaskedTensor ``grad`` with its mask.
"""

from __future__ import annotations

import copy
import warnings

from ..._backend import bool_, float16, float32, float64, int8, int16, int32, int64
from ...tensor import Size, Tensor

__all__ = ["MaskedTensor", "is_masked_tensor"]

_DTYPES = (float16, float32, float64, bool_, int8, int16, int32, int64)
_PROTOTYPE = ("The PyTorch API of MaskedTensors is in prototype stage and will change in the near "
              "future. Please open a Github issue for features requests and see our documentation "
              "on the torch.masked module for further information about the project.")
_NOT_DISPATCHED = ("chainrule's MaskedTensor has no __torch_function__ dispatch: this function "
                   "reads the tensor's values directly. Use the MaskedTensor's own methods and "
                   "operators (mt.sum(), mt.sin(), mt + other, mt.softmax(dim), ...), "
                   "torch.masked's functions, or get_data() / get_mask() / to_tensor(value).")


def is_masked_tensor(obj, /) -> bool:
    """True if obj is a MaskedTensor."""
    return isinstance(obj, MaskedTensor)


def _tensors_match(a, b, exact: bool = True, rtol: float = 1e-05, atol: float = 1e-08) -> bool:
    if is_masked_tensor(a) or is_masked_tensor(b):
        raise ValueError("Neither `a` nor `b` can be a MaskedTensor.")
    if a.dtype != b.dtype:
        b = b.type(a.dtype)
    if exact:
        return a.dim() == b.dim() and bool(a.eq(b).all().item())
    return a.dim() == b.dim() and a.allclose(b, rtol=rtol, atol=atol)


def _masks_match(a, b) -> bool:
    if is_masked_tensor(a) and is_masked_tensor(b):
        return _tensors_match(a.get_mask(), b.get_mask(), exact=True)
    return True


def _get_data(a):
    return a.get_data() if is_masked_tensor(a) else a


def _maybe_get_mask(a):
    return a.get_mask() if is_masked_tensor(a) else None


def _format(value, formatter: str) -> str:
    return formatter.format(value) if isinstance(value, float) else str(value)


def _masked_tensor_str(data: list, mask: list, formatter: str) -> str:
    """Nested brackets of the values, '--' where the mask is False (PyTorch's layout)."""
    if not data or not isinstance(data[0], list):
        cells = [_format(d, formatter) for d in data]
        width = max((len(c) if m else 8 for c, m in zip(cells, mask)), default=0)
        return "[" + ", ".join(c if m else "--".rjust(width) for c, m in zip(cells, mask)) + "]"
    rows = [_masked_tensor_str(d, m, formatter) for d, m in zip(data, mask)]
    rows = ["\n".join("  " + line for line in row.split("\n")) for row in rows]
    return "[\n" + ",\n".join(rows) + "\n]"


class MaskedTensor(Tensor):
    """A tensor with a boolean mask of the same shape saying which elements are specified."""

    def __init__(self, data, mask, requires_grad: bool = False) -> None:
        if is_masked_tensor(data) or not isinstance(data, Tensor):
            raise TypeError("data must be a Tensor")
        if is_masked_tensor(mask) or not isinstance(mask, Tensor):
            raise TypeError("mask must be a Tensor")
        warnings.warn(_PROTOTYPE, UserWarning, stacklevel=2)
        if data.requires_grad:
            warnings.warn("It is not recommended to create a MaskedTensor with a tensor that "
                          "requires_grad. To avoid this, you can use data.detach().clone()",
                          UserWarning, stacklevel=2)
        # A new leaf: gradients reach this MaskedTensor, not the tensor it was made from.
        self._set_data_mask(data.detach().clone(), mask.clone())
        if requires_grad:
            self._masked_data.requires_grad_(True)

    @classmethod
    def _wrap(cls, data: Tensor, mask: Tensor) -> MaskedTensor:
        """A MaskedTensor over data as it is (its graph included): the results of operations."""
        self = Tensor.__new__(cls)
        self._set_data_mask(data, mask)
        return self

    def _set_data_mask(self, data, mask) -> None:
        self._masked_data = data
        self._masked_mask = mask
        self._validate_members()
        # the Tensor slots that methods not overridden here read
        self._requires_grad, self._grad, self._output_nr, self._vc, self._extra = (
            False, None, 0, None, None)

    @staticmethod
    def _from_values(data, mask) -> MaskedTensor:
        """A MaskedTensor differentiable with respect to data (as_masked_tensor)."""
        if is_masked_tensor(data) or not isinstance(data, Tensor):
            raise TypeError("data must be a Tensor")
        if is_masked_tensor(mask) or not isinstance(mask, Tensor):
            raise TypeError("mask must be a Tensor")
        warnings.warn(_PROTOTYPE, UserWarning, stacklevel=3)
        return MaskedTensor._wrap(data.clone(), mask.clone())

    def _validate_members(self) -> None:
        data, mask = self._masked_data, self._masked_mask
        if mask.dtype != bool_:
            raise TypeError("mask must have dtype bool.")
        if data.dtype not in _DTYPES:
            raise TypeError(f"{data.dtype} is not supported in MaskedTensor.")
        if data.dim() != mask.dim():
            raise ValueError("data.dim() must equal mask.dim()")
        if data.size() != mask.size():
            raise ValueError("data.size() must equal mask.size()")

    # ---- the values are not a plain tensor's ----------------------------------------------

    @property
    def _data(self):
        raise TypeError(_NOT_DISPATCHED)

    def get_data(self) -> Tensor:
        """The data, masked-out elements included, as a tensor differentiable back to this one."""
        return self._masked_data.view_as(self._masked_data)

    def get_mask(self) -> Tensor:
        """The boolean mask: True where an element is specified."""
        return self._masked_mask

    def to_tensor(self, value) -> Tensor:
        """The data with value in the masked-out places."""
        return self.get_data().masked_fill(~self.get_mask(), value)

    # ---- metadata -----------------------------------------------------------------------

    @property
    def shape(self) -> Size:
        return self._masked_data.shape

    @property
    def dtype(self):
        return self._masked_data.dtype

    @property
    def device(self):
        return self._masked_data.device

    @property
    def layout(self):
        return self._masked_data.layout

    @property
    def ndim(self) -> int:
        return self._masked_data.ndim

    def dim(self) -> int:
        return self._masked_data.dim()

    def size(self, dim: int | None = None):
        return self._masked_data.size(dim)

    def numel(self) -> int:
        return self._masked_data.numel()

    def __len__(self) -> int:
        return len(self._masked_data)

    def is_floating_point(self) -> bool:
        return self._masked_data.is_floating_point()

    def is_complex(self) -> bool:
        return self._masked_data.is_complex()

    def is_contiguous(self, memory_format=None) -> bool:
        return self._masked_data.is_contiguous()

    def stride(self, dim: int | None = None):
        return self._masked_data.stride(dim)

    def is_same_size(self, other) -> bool:
        return self._masked_data.is_same_size(_get_data(other))

    @property
    def is_sparse(self) -> bool:
        return False

    def is_sparse_coo(self) -> bool:
        return False

    def is_sparse_csr(self) -> bool:
        return False

    # ---- autograd: the data's -----------------------------------------------------------

    @property
    def requires_grad(self) -> bool:
        return self._masked_data.requires_grad

    @requires_grad.setter
    def requires_grad(self, value: bool) -> None:
        self._masked_data.requires_grad = value

    def requires_grad_(self, requires_grad: bool = True) -> MaskedTensor:
        self._masked_data.requires_grad_(requires_grad)
        return self

    @property
    def grad_fn(self):
        return self._masked_data.grad_fn

    @property
    def is_leaf(self) -> bool:
        return self._masked_data.is_leaf

    @property
    def grad(self) -> MaskedTensor | None:
        grad = self._masked_data.grad
        return None if grad is None else MaskedTensor._wrap(grad, self._masked_mask)

    @grad.setter
    def grad(self, value) -> None:
        self._masked_data.grad = _get_data(value)

    def retain_grad(self) -> None:
        self._masked_data.retain_grad()

    def backward(self, gradient=None, retain_graph=None, create_graph: bool = False,
                 inputs=None) -> None:
        """Differentiate through the data (gradient: a tensor or MaskedTensor like this one)."""
        self._masked_data.backward(_get_data(gradient), retain_graph, create_graph, inputs)

    # ---- copies and conversions ---------------------------------------------------------

    def detach(self) -> MaskedTensor:
        return MaskedTensor._wrap(self._masked_data.detach(), self._masked_mask)

    def clone(self, *, memory_format=None) -> MaskedTensor:
        return MaskedTensor._wrap(self.get_data().clone(), self._masked_mask)

    def contiguous(self, memory_format=None) -> MaskedTensor:
        if self.is_contiguous():
            return self
        return MaskedTensor._wrap(self.get_data().contiguous(), self._masked_mask.contiguous())

    def to(self, *args, **kwargs) -> MaskedTensor:
        """The data converted as Tensor.to converts it; the mask stays boolean."""
        data = self.get_data().to(*args, **kwargs)
        if data.dtype == self.dtype and data.device == self.device:
            return self
        return MaskedTensor._wrap(data, self._masked_mask.to(device=data.device))

    def type(self, dtype=None, non_blocking: bool = False, **kwargs):
        if dtype is None:
            return self._masked_data.type()
        return self.to(dtype)

    def copy_(self, src, non_blocking: bool = False) -> MaskedTensor:
        if not _masks_match(self, src):
            raise ValueError("args[0] mask and args[1] mask must match but do not")
        self._masked_data.copy_(_get_data(src))
        return self

    def item(self):
        if not self._masked_mask.all().item():
            raise ValueError("__torch_dispatch__, aten._local_scalar_dense: expected a mask "
                             "tensor")
        return self._masked_data.item()

    def __bool__(self) -> bool:
        return bool(self.item())

    def __repr__(self) -> str:
        formatter = "{0:8.4f}"
        if self.dim() == 0:
            value = _format(self._masked_data.item(), formatter)
            specified = self._masked_mask.item()
            return f"MaskedTensor({value if specified else '--'}, {specified})"
        text = _masked_tensor_str(self._masked_data.tolist(), self._masked_mask.tolist(),
                                  formatter)
        return "MaskedTensor(\n" + "\n".join("  " + line for line in text.split("\n")) + "\n)"

    __str__ = __repr__

    def __format__(self, spec: str) -> str:
        return repr(self) if not spec else format(self.item(), spec)

    __hash__ = Tensor.__hash__

    def __reduce_ex__(self, protocol):
        return _rebuild, (self._masked_data.detach(), self._masked_mask,
                          self._masked_data.requires_grad)

    def __deepcopy__(self, memo):
        return MaskedTensor._wrap(copy.deepcopy(self._masked_data, memo),
                                  copy.deepcopy(self._masked_mask, memo))


def _converter(name: str, dtype):
    def convert(self, memory_format=None) -> MaskedTensor:
        return self.to(dtype)

    convert.__name__ = name
    convert.__doc__ = f"self.to({dtype})"
    return convert


for _name, _dtype in (("half", float16), ("float", float32), ("double", float64),
                      ("bool", bool_), ("char", int8), ("short", int16), ("int", int32),
                      ("long", int64)):
    setattr(MaskedTensor, _name, _converter(_name, _dtype))


def _rebuild(data, mask, requires_grad):
    result = MaskedTensor._wrap(data.clone(), mask)
    if requires_grad:
        result._masked_data.requires_grad_(True)
    return result
