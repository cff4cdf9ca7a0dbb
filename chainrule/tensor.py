"""Tensor: a NumPy array with requires_grad, grad, grad_fn and a version counter.

Dunders and methods delegate to the op registry; no math and no derivative rules live here.
Most methods are attached from the op families (see ``chainrule/ops/__init__.py``).
"""

from __future__ import annotations

from collections.abc import Callable

from . import _printing
from ._backend import as_dtype, from_np, get_default_dtype, xp
from ._device import CPU, META, device
from ._meta import MetaArray
from ._shapes import normalize_dim
from ._tooling import hooks as _hooks
from ._validation import check_grad, dtype_argument
from ._validation import size as check_size

__all__ = ["Tensor", "Size"]

_ndarray = xp.ndarray


class Size(tuple):
    """A tensor's shape: a tuple that prints as ``torch.Size([2, 3])``."""

    def __repr__(self) -> str:
        return f"torch.Size({list(self)})"

    def numel(self) -> int:
        n = 1
        for s in self:
            n *= s
        return n

    # Like torch.Size: concatenation, repetition and slices stay Sizes.
    def __add__(self, other) -> Size:
        return Size(tuple(self) + tuple(other)) if isinstance(other, tuple) else NotImplemented

    def __radd__(self, other) -> Size:
        return Size(tuple(other) + tuple(self)) if isinstance(other, tuple) else NotImplemented

    def __mul__(self, n) -> Size:
        return Size(tuple(self) * n)

    __rmul__ = __mul__

    def __getitem__(self, index):
        item = tuple.__getitem__(self, index)
        return Size(item) if isinstance(index, slice) else item


def type_desc(array) -> str:
    """PyTorch's legacy type name and shape, e.g. ``torch.FloatTensor [2, 3]``."""
    names = {"float32": "Float", "float64": "Double", "float16": "Half", "int64": "Long",
             "int32": "Int", "int16": "Short", "int8": "Char", "uint8": "Byte", "bool": "Bool",
             "complex64": "ComplexFloat", "complex128": "ComplexDouble"}
    return f"torch.{names.get(array.dtype.name, array.dtype.name)}Tensor {list(array.shape)}"


_LEGACY = ("float32", "float64", "float16", "int64", "int32", "int16", "int8", "uint8", "bool",
           "complex64", "complex128")


def _new_dtype(name: str, dtype):
    """The NumPy dtype of a ``new_*`` method's ``dtype`` argument."""
    dtype_argument(name, dtype)
    return as_dtype(dtype).np


class Tensor:
    """A multi-dimensional array that can record the operations applied to it."""

    __slots__ = ("_data", "_requires_grad", "_grad", "grad_fn", "_output_nr", "_vc", "_extra",
                 "__weakref__")
    __array_priority__ = 1000  # NumPy defers binary operators to Tensor

    def __init__(self, data=None, *, requires_grad: bool = False) -> None:
        self._init_leaf(xp.asarray([] if data is None else data, dtype=get_default_dtype().np))
        if requires_grad:
            self.requires_grad_(True)

    def _init_leaf(self, array, vc: list | None = None) -> None:
        """Every slot of a new leaf holding ``array`` (the constructors' common part)."""
        self._data = array
        self._requires_grad = False
        self._grad = None
        self.grad_fn = None
        self._output_nr = 0
        self._vc = vc
        self._extra = None

    @staticmethod
    def _wrap(array, grad_fn, output_nr: int) -> Tensor:
        t = _new(Tensor)
        t._data = array
        t._requires_grad = grad_fn is not None
        t._grad = None
        t.grad_fn = grad_fn
        t._output_nr = output_nr
        t._vc = None
        t._extra = None
        return t

    # ---- data -------------------------------------------------------------------------------

    @property
    def data(self) -> Tensor:
        """The values as a tensor outside the graph, sharing storage (PyTorch's unchecked alias:
        changes through it are not seen by version counters; prefer ``detach()``)."""
        return Tensor._wrap(self._data, None, 0)

    @data.setter
    def data(self, value) -> None:
        if not isinstance(value, Tensor):
            raise TypeError(f"Variable data has to be a tensor, but got {type(value).__name__}")
        array = value._data
        if array.dtype.kind not in "fc" and self._requires_grad:
            raise RuntimeError(f"data set to a tensor that requires gradients must be floating "
                               f"point or complex dtype, got {from_np(array.dtype)}")
        _graph_break("setting Tensor.data")
        self._data = array

    # ---- autograd state ---------------------------------------------------------------------

    @property
    def grad(self) -> Tensor | None:
        """The gradient accumulated by backward (None until then)."""
        return self._grad

    @grad.setter
    def grad(self, value) -> None:
        check_grad(self, value, Tensor)
        if _hooks.capture is not None:
            _hooks.capture.set_grad(self, value)
        self._grad = value

    @property
    def requires_grad(self) -> bool:
        return self._requires_grad

    @requires_grad.setter
    def requires_grad(self, value: bool) -> None:
        if not value and self.grad_fn is not None:
            raise RuntimeError("you can only change requires_grad flags of leaf variables. If you "
                               "want to use a computed variable in a subgraph that doesn't require "
                               "differentiation use var_no_grad = var.detach().")
        if value and self._data.dtype.kind not in "fc":
            raise RuntimeError("only Tensors of floating point and complex dtype can require "
                               f"gradients (got {self.dtype}); convert with .float() first")
        self._requires_grad = bool(value)

    def requires_grad_(self, requires_grad: bool = True) -> Tensor:
        """Set requires_grad in place; returns self."""
        self.requires_grad = requires_grad
        return self

    @property
    def is_leaf(self) -> bool:
        return self.grad_fn is None

    @property
    def output_nr(self) -> int:
        return self._output_nr

    def _edge(self) -> tuple:
        if self.grad_fn is not None:
            return (self.grad_fn, self._output_nr)
        return (self._accumulator(), 0)

    def _accumulator(self):
        """The leaf's AccumulateGrad node (bound by autograd.graph)."""
        raise NotImplementedError

    def _extra_dict(self) -> dict:
        if self._extra is None:
            self._extra = {}
        return self._extra

    @property
    def _version(self) -> int:
        """How many times the storage was changed in place (PyTorch's ``tensor._version``).

        The counter itself is ``_vc``, a list shared by a tensor and its views: ``[version]``,
        or with in-place notes for saved tensors (see ``_tooling``)."""
        return self._vc[0] if self._vc is not None else 0

    @property
    def retains_grad(self) -> bool:
        return bool(self._extra and self._extra.get("retains_grad"))

    @property
    def name(self) -> str | None:
        return self._extra.get("name") if self._extra else None

    @name.setter
    def name(self, value: str | None) -> None:
        self._extra_dict()["name"] = value

    def retain_grad(self) -> None:
        """Keep this non-leaf tensor's gradient in ``.grad`` during backward."""
        if not self._requires_grad:
            raise RuntimeError("can't retain_grad on Tensor that has requires_grad=False")
        if self.grad_fn is None or self.retains_grad:
            return
        self.grad_fn._retain_grad(self, self._output_nr)
        self._extra_dict()["retains_grad"] = True

    def register_hook(self, hook: Callable):
        """Call ``hook(grad)`` when this tensor's gradient is computed; a returned tensor
        replaces the gradient. Returns a handle with ``remove()``."""
        if not self._requires_grad:
            raise RuntimeError("cannot register a hook on a tensor that doesn't require gradient")
        node = self.grad_fn if self.grad_fn is not None else self._accumulator()
        return node._add_tensor_hook(self._output_nr, hook)

    def register_post_accumulate_grad_hook(self, hook: Callable):
        """Call ``hook(tensor)`` after a gradient has been accumulated into this leaf's .grad."""
        if self.grad_fn is not None:
            raise RuntimeError("post accumulate grad hooks cannot be registered on non-leaf "
                               "tensors")
        if not self._requires_grad:
            raise RuntimeError("cannot register a hook on a tensor that doesn't require gradient")
        return self._accumulator().register_post_accumulate_grad_hook(hook)

    def backward(self, gradient=None, retain_graph=None, create_graph: bool = False,
                 inputs=None) -> None:
        """Accumulate the gradient of this tensor into the ``.grad`` of the leaves."""
        self._backward(gradient, retain_graph, create_graph, inputs=inputs)

    def _backward(self, gradient, retain_graph, create_graph, inputs) -> None:
        raise NotImplementedError  # bound by the autograd package

    def detach(self) -> Tensor:
        """The same data, cut from the graph (shares storage and version counter)."""
        t = Tensor._wrap(self._data, None, 0)
        if self._vc is None:
            self._vc = [0]
        t._vc = self._vc
        return t

    def detach_(self) -> Tensor:
        """Cut this tensor from the graph in place."""
        if self._extra and "view" in self._extra:
            raise RuntimeError("Can't detach views in-place. Use detach() instead.")
        self.grad_fn = None
        self._output_nr = 0
        self._requires_grad = False
        return self

    def _alias(self) -> Tensor:
        return self.detach()

    # ---- metadata ---------------------------------------------------------------------------

    @property
    def shape(self) -> Size:
        return Size(self._data.shape)

    def size(self, dim: int | None = None):
        """The shape, or one dim's size."""
        if dim is None:
            return Size(self._data.shape)
        return self._data.shape[normalize_dim(dim, self._data.ndim, "size")]

    @property
    def dtype(self):
        return from_np(self._data.dtype)

    @property
    def device(self) -> device:
        return META if type(self._data) is MetaArray else CPU

    @property
    def is_cuda(self) -> bool:
        return False

    @property
    def ndim(self) -> int:
        return self._data.ndim

    def dim(self) -> int:
        """Number of dims."""
        return self._data.ndim

    ndimension = dim

    def numel(self) -> int:
        """Number of elements."""
        return self._data.size

    nelement = numel

    def element_size(self) -> int:
        """Bytes per element."""
        return self._data.itemsize

    def is_floating_point(self) -> bool:
        return self._data.dtype.kind == "f"

    def is_contiguous(self, memory_format=None) -> bool:
        return self._data.flags.c_contiguous

    def stride(self, dim: int | None = None):
        """Strides in elements."""
        strides = tuple(s // self._data.itemsize for s in self._data.strides)
        return strides if dim is None else strides[dim]

    def data_ptr(self) -> int:
        return self._data.ctypes.data

    @property
    def T(self) -> Tensor:
        return self.permute(tuple(range(self._data.ndim - 1, -1, -1)))

    @property
    def mT(self) -> Tensor:
        return self.transpose(-2, -1)

    # ---- conversion -------------------------------------------------------------------------

    def numpy(self, *, force: bool = False):
        """The NumPy array behind this tensor (shared memory)."""
        if self._requires_grad and not force:
            raise RuntimeError("Can't call numpy() on Tensor that requires grad. Use "
                               "tensor.detach().numpy() instead.")
        _graph_break("Tensor.numpy()")
        return self._data

    def item(self):
        """The value of a one-element tensor as a Python number."""
        if self._data.size != 1:
            raise RuntimeError(f"a Tensor with {self._data.size} elements cannot be converted to "
                               "Scalar")
        _graph_break("Tensor.item()")
        return self._data.item()

    def tolist(self):
        """Nested Python lists of Python numbers."""
        _graph_break("Tensor.tolist()")
        return self._data.tolist()

    def to(self, *args, **kwargs) -> Tensor:
        """Convert dtype (devices other than 'cpu' are not available)."""
        dtype = kwargs.pop("dtype", None)
        copy = kwargs.pop("copy", False)
        for a in args:
            if isinstance(a, Tensor):
                dtype = a.dtype
            elif str(a) == "cpu" or getattr(a, "type", None) == "cpu":
                continue
            elif isinstance(a, str):
                raise RuntimeError(f"to: device '{a}' is not available: chainrule runs on the CPU")
            else:
                dtype = a
        if isinstance(dtype, str):
            dtype_argument("to", dtype)
        kwargs.pop("device", None)
        kwargs.pop("non_blocking", None)
        if dtype is None:
            return self.clone() if copy else self
        out = self._to_dtype(dtype)
        return out.clone() if copy and out is self else out

    def type(self, dtype=None, non_blocking: bool = False, **kwargs):
        """Convert to ``dtype``, or without argument the legacy type name."""
        if dtype is None:
            return type_desc(self._data).split()[0]
        if isinstance(dtype, str):  # a legacy name, "torch.DoubleTensor"
            names = {type_desc(xp.empty(0, d.np)).split()[0]: d for d in map(as_dtype, _LEGACY)}
            if dtype not in names:
                raise ValueError(f"invalid type: '{dtype}'")
            dtype = names[dtype]
        return self.to(dtype)

    def float(self, memory_format=None) -> Tensor:
        return self.to(as_dtype("float32"))

    def double(self, memory_format=None) -> Tensor:
        return self.to(as_dtype("float64"))

    def half(self, memory_format=None) -> Tensor:
        return self.to(as_dtype("float16"))

    def long(self, memory_format=None) -> Tensor:
        return self.to(as_dtype("int64"))

    def int(self, memory_format=None) -> Tensor:
        return self.to(as_dtype("int32"))

    def bool(self, memory_format=None) -> Tensor:
        return self.to(as_dtype("bool"))

    def cpu(self, memory_format=None) -> Tensor:
        return self

    def _to_device(self, device) -> Tensor:
        """This tensor on ``device`` (bound by the ops, where the copy is an op)."""
        raise NotImplementedError

    def __array__(self, dtype=None, copy=None):
        if self._requires_grad:
            raise RuntimeError("Can't call numpy() on Tensor that requires grad. Use "
                               "tensor.detach().numpy() instead.")
        _graph_break("np.asarray(tensor)")
        if dtype is not None and dtype != self._data.dtype:
            return self._data.astype(dtype)
        return self._data.copy() if copy else self._data

    def __len__(self) -> int:
        if self._data.ndim == 0:
            raise TypeError("len() of a 0-d tensor")
        return self._data.shape[0]

    def __iter__(self):
        if self._data.ndim == 0:
            raise TypeError("iteration over a 0-d tensor")
        return (self[i] for i in range(self._data.shape[0]))

    def _scalar(self, kind: str):
        if self._data.size != 1:
            raise ValueError("only one element tensors can be converted to Python scalars")
        _graph_break(f"{kind}(tensor)")
        return self._data.item()

    def __bool__(self) -> bool:
        if self._data.size != 1:
            raise RuntimeError(f"Boolean value of Tensor with more than one value is ambiguous "
                               f"(shape {list(self._data.shape)}); use .any() or .all()")
        _graph_break("bool(tensor) (Python control flow on a tensor's value)")
        return bool(self._data.item())

    def __float__(self) -> float:
        return float(self._scalar("float"))

    def __int__(self) -> int:
        return int(self._scalar("int"))

    def __index__(self) -> int:
        if self._data.dtype.kind not in "iub" or self._data.size != 1:
            raise TypeError("only integer tensors of a single element can be converted to an "
                            "index")
        _graph_break("a tensor used as an index")
        return int(self._data.item())

    def __hash__(self) -> int:
        return id(self)

    def __repr__(self) -> str:
        _graph_break("printing a tensor")
        suffixes = []
        if self.grad_fn is not None:
            suffixes.append(f"grad_fn=<{self.grad_fn.name().rpartition('::')[2]}>")
        elif self._requires_grad:
            suffixes.append("requires_grad=True")
        dtype = self.dtype
        default = get_default_dtype()
        complex_default = as_dtype("complex128" if default.name == "float64" else "complex64")
        show_dtype = dtype not in (default, complex_default, as_dtype("int64"), as_dtype("bool"))
        return _printing.format_tensor(self._data, dtype_name=dtype.name, show_dtype=show_dtype,
                                       suffixes=suffixes)

    __str__ = __repr__

    def __format__(self, spec: str) -> str:
        _graph_break("formatting a tensor")
        if self._data.ndim == 0:
            return format(self._data.item(), spec)
        return format(repr(self), spec)

    # ---- creation helpers -------------------------------------------------------------------

    def new_zeros(self, *size, dtype=None) -> Tensor:
        dt = self._data.dtype if dtype is None else _new_dtype("new_zeros", dtype)
        return Tensor._wrap(xp.zeros(check_size("new_zeros", size), dtype=dt), None, 0)

    def new_ones(self, *size, dtype=None) -> Tensor:
        dt = self._data.dtype if dtype is None else _new_dtype("new_ones", dtype)
        return Tensor._wrap(xp.ones(check_size("new_ones", size), dtype=dt), None, 0)

    def new_full(self, size, fill_value, *, dtype=None) -> Tensor:
        dt = self._data.dtype if dtype is None else _new_dtype("new_full", dtype)
        return Tensor._wrap(xp.full(check_size("new_full", (size,)), fill_value, dtype=dt), None, 0)

    def new_tensor(self, data, *, dtype=None, requires_grad: bool = False) -> Tensor:
        """A new tensor from ``data`` with this tensor's dtype by default (bound by
        _creation)."""
        raise NotImplementedError

    def __deepcopy__(self, memo: dict) -> Tensor:
        if self.grad_fn is not None:
            raise RuntimeError("Only Tensors created explicitly by the user (graph leaves) support "
                               "the deepcopy protocol at the moment; deepcopy x.detach() instead")
        if id(self) not in memo:
            t = Tensor._wrap(self._data.copy(), None, 0)
            t._requires_grad = self._requires_grad
            if self.grad is not None:
                t.grad = self.grad.__deepcopy__(memo)
            memo[id(self)] = t
        return memo[id(self)]

    def _type_desc(self) -> str:
        return type_desc(self._data)


_new = object.__new__


def _graph_break(what: str) -> None:
    """A tensor's value left the kernels (chainrule.compile cannot replay what Python did
    with it)."""
    if _hooks.capture is not None:
        _hooks.capture.graph_break(what)
