"""Tensor: a NumPy array with requires_grad, grad, grad_fn and a version counter.

Dunders and methods delegate to the op registry; no math and no derivative rules live here.
Most methods are attached from the op families (see ``chainrule/ops/__init__.py``).
"""

from __future__ import annotations

import copy as _copy
import warnings
from collections.abc import Callable, Mapping, Sequence

from . import _backend as _backend_module
from . import _printing
from ._arguments import invalid_combination, type_name
from ._backend import (
    ALL_DTYPES,
    SCALAR_NAMES,
    USER_DTYPE_NUM,
    as_dtype,
    from_np,
    get_default_dtype,
    xp,
)
from ._backend import dtype as _dtype
from ._device import CPU, META, as_device, device, memory_of
from ._meta import MetaArray
from ._modes import seen as _seen
from ._modes import stack as _stack
from ._quiet import quiet
from ._shapes import is_laid_out, normalize_dim, suggested_format
from ._validation import check_grad, dtype_argument, dtype_name, int_sizes, nested_data
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

    def __reduce__(self):
        return _rebuild_size, (tuple(self),)


def _rebuild_size(sizes: tuple) -> Size:
    """A pickled Size (its class says module "torch": pickles name this function instead)."""
    return Size(sizes)


# PyTorch's legacy names of the dtypes: torch.FloatTensor, torch.FloatStorage, ...
_LEGACY_NAMES = {"float32": "Float", "float64": "Double", "float16": "Half", "bfloat16": "BFloat16",
                 "int64": "Long", "int32": "Int", "int16": "Short", "int8": "Char", "uint8": "Byte",
                 "bool": "Bool", "complex64": "ComplexFloat", "complex128": "ComplexDouble"}


def type_desc(array) -> str:
    """PyTorch's legacy type name and shape, e.g. ``torch.FloatTensor [2, 3]``."""
    name = array.dtype.name
    return f"torch.{_LEGACY_NAMES.get(name, name)}Tensor {list(array.shape)}"


def _on_host(array) -> None:
    """PyTorch's refusal to hand NumPy a tensor of another device (a meta tensor has no data)."""
    if type(array) is MetaArray:
        raise TypeError("can't convert meta device type tensor to numpy. Use Tensor.cpu() to "
                        "copy the tensor to host memory first.")


def _no_numpy_dtype(array) -> None:
    """PyTorch's refusal to hand NumPy a bfloat16 or float8 array (NumPy has no such type)."""
    if array.dtype.num >= USER_DTYPE_NUM:
        raise TypeError(f"Got unsupported ScalarType {SCALAR_NAMES[array.dtype.name]}")


class _Uncounted(list):
    """The version counter of every inference tensor (one made in inference mode): it has none.
    One shared ``[0]`` that never moves: counting an in-place change (bump_version, after the
    write, as PyTorch checks) raises outside inference mode and does nothing inside."""

    __slots__ = ()

    @staticmethod
    def inference_mode() -> bool:
        """Whether this thread is in inference mode (bound by autograd.grad_mode)."""
        return False

    def __setitem__(self, index, value) -> None:
        if not self.inference_mode():
            raise RuntimeError(INFERENCE_INPLACE)


class _InferenceAlias(list):
    """The version counter of ``detach()`` or ``.data`` of an inference tensor taken outside
    inference mode: PyTorch gives such an alias a counter of its own, so it may change in place,
    while it stays an inference tensor otherwise."""

    __slots__ = ()


def is_inference_counter(counter) -> bool:
    """Whether a tensor with this version counter (``_vc``) is an inference tensor."""
    return counter is INFERENCE or type(counter) is _InferenceAlias


def _alias_counter(counter):
    """The version counter of detach() or .data of an inference tensor with ``counter``."""
    if counter is INFERENCE and not INFERENCE.inference_mode():
        return _InferenceAlias([0])
    return counter


INFERENCE = _Uncounted([0])
INFERENCE_INPLACE = (
    "Inplace update to inference tensor outside InferenceMode is not allowed.You can make a "
    "clone to get a normal tensor before doing inplace update.See "
    "https://github.com/pytorch/rfcs/pull/17 for more details.")


def _new_dtype(name: str, dtype):
    """The NumPy dtype of a ``new_*`` method's ``dtype`` argument."""
    dtype_argument(name, dtype)
    return as_dtype(dtype).np


class Tensor:
    """A multi-dimensional array that can record the operations applied to it."""

    # __dict__: Python attributes, as on PyTorch's tensors (libraries tag tensors); it costs
    # nothing until an attribute is set.
    __slots__ = ("_data", "_requires_grad", "_grad", "grad_fn", "_output_nr", "_vc", "_extra",
                 "__weakref__", "__dict__")
    __array_priority__ = 1000  # NumPy defers binary operators to Tensor

    def __new__(cls, *args, **kwargs) -> Tensor:
        # A subclass that sets itself up in its own __init__ (nn.Parameter) starts bare.
        if cls.__init__ is not _object_init and cls.__new__ is Tensor.__new__:
            return _new(cls)
        return _legacy_new(cls, None, args, kwargs)

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
        t = Tensor._wrap(self._data, None, 0)
        # no counter shared (an unchecked alias), but an inference tensor's alias is one
        t._vc = _alias_counter(self._vc) if is_inference_counter(self._vc) else None
        return t

    @data.setter
    def data(self, value) -> None:
        if not isinstance(value, Tensor):
            raise TypeError(f"Variable data has to be a tensor, but got {type(value).__name__}")
        array = value._data
        if array.dtype.kind not in "fcV" and self._requires_grad:
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
        if _stack.capture is not None:
            _stack.capture.set_grad(self, value)
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
        if value and self._data.dtype.kind not in "fcV":  # "V": bfloat16, float8
            raise RuntimeError("only Tensors of floating point and complex dtype can require "
                               f"gradients (got {self.dtype}); convert with .float() first")
        if value and is_inference_counter(self._vc) and not INFERENCE.inference_mode():
            raise RuntimeError("Setting requires_grad=True on inference tensor outside "
                               "InferenceMode is not allowed.")
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
        or with in-place notes for saved tensors (see ``_tooling``); ``INFERENCE`` for
        inference tensors, which have none."""
        if self._vc is INFERENCE:
            raise RuntimeError("Inference tensors do not track version counter.")
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
        if _stack.modes is not None and _stack.dispatch is not None:  # seen: aten.detach
            return _seen("detach", "default", (self,), {}, Tensor._detached, self._detached)
        t = Tensor._wrap(self._data, None, 0)  # _detached's body, inline: no call per leaf
        counter = self._vc
        if counter is None:
            counter = self._vc = [0]
        elif counter is INFERENCE:
            counter = _alias_counter(counter)
        t._vc = counter
        return t

    def _detached(self) -> Tensor:
        """``detach()`` that no dispatch mode sees (backward's own)."""
        t = Tensor._wrap(self._data, None, 0)
        counter = self._vc
        if counter is None:
            counter = self._vc = [0]
        elif counter is INFERENCE:
            counter = _alias_counter(counter)
        t._vc = counter
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
        """A view of all of this tensor (bound by the ops, where a view is an op)."""
        raise NotImplementedError

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
    def is_cpu(self) -> bool:
        return type(self._data) is not MetaArray

    @property
    def is_meta(self) -> bool:
        return type(self._data) is MetaArray

    # the devices and layouts a CPU build has no memory or kernels for
    is_xpu = is_mps = is_xla = is_ipu = is_mtia = is_maia = is_vulkan = is_cuda
    is_sparse = is_sparse_csr = is_mkldnn = is_quantized = is_nested = is_cuda

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
        return self._data.dtype.kind in "fV"

    def is_contiguous(self, memory_format=None) -> bool:
        """Whether the memory is laid out row-major (or in ``memory_format``) without gaps."""
        if memory_format is None:
            return self._data.flags.c_contiguous
        name = str(memory_format).rpartition(".")[2].removesuffix("_format")
        if name == "preserve":
            return self._data.flags.c_contiguous
        return is_laid_out(self._data.shape, self.stride(), name)

    def stride(self, dim: int | None = None):
        """Strides in elements."""
        strides = tuple(s // self._data.itemsize for s in self._data.strides)
        return strides if dim is None else strides[dim]

    def data_ptr(self) -> int:
        return self._data.ctypes.data

    @property
    def _base(self) -> Tensor | None:
        """The tensor this view was made from (None when it is not a view)."""
        view = self._extra.get("view") if self._extra else None
        return None if view is None else view[0]

    def _is_view(self) -> bool:
        return bool(self._extra and "view" in self._extra)

    @property
    def T(self) -> Tensor:
        return self.permute(tuple(range(self._data.ndim - 1, -1, -1)))

    @property
    def mT(self) -> Tensor:
        return self.transpose(-2, -1)

    # ---- conversion -------------------------------------------------------------------------

    def numpy(self, *, force: bool = False):
        """The NumPy array behind this tensor (shared memory)."""
        _on_host(self._data)
        if self._requires_grad and not force:
            raise RuntimeError("Can't call numpy() on Tensor that requires grad. Use "
                               "tensor.detach().numpy() instead.")
        _no_numpy_dtype(self._data)
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
        """This tensor in another dtype and/or on another device, itself when nothing changes
        (unless ``copy``): ``to(dtype)``, ``to(device, dtype)`` or ``to(other)``, each with
        ``non_blocking``, ``copy`` and ``memory_format``."""
        target, dtype, copy, memory_format = _to_arguments(args, kwargs)
        result = self
        if dtype is not None and dtype.np != self._data.dtype:
            result = result._to_dtype(dtype, memory_format)
        if target is not None and target.type != result.device.type:
            result = result._to_device(target)
        if result is self and (copy or not _in_memory_format(self, memory_format)):
            result = self.clone(memory_format=memory_format)
        return result

    def type(self, dtype=None, non_blocking: bool = False, **kwargs):
        """The legacy type name (``'torch.FloatTensor'``), or this tensor converted to a dtype,
        a legacy type or its name."""
        for key in kwargs:
            if key != "memory_format":  # (``async``, deprecated: see chainrule._deprecated)
                raise TypeError(f"type() got an unexpected keyword argument '{key}'")
        if dtype is None:
            return self._type_name()
        if isinstance(dtype, str):
            named = _LEGACY_TYPES.get(dtype)
            if named is None:
                if dtype.startswith("torch.cuda."):
                    raise RuntimeError(_NO_CUDA_LIBRARY)
                raise ValueError(f"invalid type: '{dtype}'")
            dtype = named
        elif dtype is Tensor:
            dtype = get_default_dtype()
        elif isinstance(dtype, type):
            legacy = getattr(dtype, "_legacy_device", None)  # torch.FloatTensor and kin
            if legacy is None:
                raise ValueError(f"invalid type: '{dtype.__module__}.{dtype.__qualname__}'"
                                 if dtype.__module__ != "builtins" else
                                 f"invalid type: '{dtype.__qualname__}'")
            if legacy != "cpu":
                raise RuntimeError(_NO_CUDA_LIBRARY)
            dtype = dtype.dtype
        elif not isinstance(dtype, _dtype):
            raise TypeError("dtype must be a type, str, or dtype object")
        return self._to_dtype(dtype)

    def _type_name(self) -> str:
        name = type_desc(self._data).split()[0]
        return name if self.device.type == "cpu" else f"torch.{self.device.type}.{name[6:]}"

    def _converted(self, dtype_name: str, memory_format) -> Tensor:
        """self in the dtype of a conversion method (float(), long(), ...)."""
        if memory_format is None:
            return self.to(as_dtype(dtype_name))
        return self.to(as_dtype(dtype_name), memory_format=memory_format)

    def float(self, memory_format=None) -> Tensor:
        return self._converted("float32", memory_format)

    def double(self, memory_format=None) -> Tensor:
        return self._converted("float64", memory_format)

    def half(self, memory_format=None) -> Tensor:
        return self._converted("float16", memory_format)

    def bfloat16(self, memory_format=None) -> Tensor:
        return self._converted("bfloat16", memory_format)

    def long(self, memory_format=None) -> Tensor:
        return self._converted("int64", memory_format)

    def int(self, memory_format=None) -> Tensor:
        return self._converted("int32", memory_format)

    def bool(self, memory_format=None) -> Tensor:
        return self._converted("bool", memory_format)

    def cpu(self, *, memory_format=None) -> Tensor:
        """This tensor in CPU memory (itself when it is there)."""
        return self if type(self._data) is not MetaArray else self._to_device(CPU)

    def cuda(self, device=None, non_blocking: bool = False, memory_format=None) -> Tensor:
        """This tensor in CUDA memory: a CPU build of PyTorch has none."""
        if isinstance(device, int) and not isinstance(device, bool):
            if device < 0:
                raise RuntimeError("Device index must not be negative")
        elif device is not None and not isinstance(device, (str, _Device)):
            raise TypeError(f"cuda(): argument 'device' (position 1) must be torch.device, not "
                            f"{type_name(device)}")
        elif device is not None and as_device(device).type != "cuda":
            raise RuntimeError("Invalid device, must be cuda device")
        return self._to_device(device if device is not None else "cuda")

    def pin_memory(self, device=None) -> Tensor:
        """This tensor in page-locked memory, for fast copies to an accelerator (none here)."""
        if device is not None:
            _deprecated_device_argument("pin_memory")
            self.is_pinned(device)
            kind = as_device(device).type
            if kind == "cpu":
                raise RuntimeError("CPU device type not an accelerator.")
            if kind == "cuda":
                raise RuntimeError(_NO_CUDA_LIBRARY)
        raise RuntimeError("Cannot access accelerator device when none is available.")

    def is_pinned(self, device=None) -> bool:
        """False: there is no accelerator to pin memory for."""
        if device is not None:
            _deprecated_device_argument("is_pinned")
        return False

    def _to_device(self, device) -> Tensor:
        """This tensor on ``device`` (bound by the ops, where the copy is an op)."""
        raise NotImplementedError

    def __array__(self, dtype=None, copy=None):
        _on_host(self._data)
        if self._requires_grad:
            raise RuntimeError("Can't call numpy() on Tensor that requires grad. Use "
                               "tensor.detach().numpy() instead.")
        _no_numpy_dtype(self._data)
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
        cls = type(self)
        return self._repr("tensor(" if cls is Tensor else f"{cls.__name__}(")

    def _repr(self, prefix: str) -> str:
        """PyTorch's printed form, opening with ``prefix`` (a subclass's instances print
        their class's name)."""
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
                                       suffixes=suffixes, prefix=prefix)

    def __format__(self, spec: str) -> str:
        _graph_break("formatting a tensor")
        if self._data.ndim == 0:
            return format(self._data.item(), spec)
        return format(repr(self), spec)

    # ---- creation helpers -------------------------------------------------------------------

    @staticmethod
    def _make_subclass(cls, data, require_grad: bool = False, dispatch_strides: bool = False,
                       dispatch_device: bool = False, device_for_backend_keys=None) -> Tensor:
        """A leaf of subclass ``cls`` sharing ``data``'s memory and version counter (how
        nn.Parameter and other subclasses are made)."""
        _check_subclass(cls)
        if not isinstance(data, Tensor):
            raise TypeError(f"_make_subclass(): argument 'data' (position 2) must be Tensor, "
                            f"not {type_name(data)}")
        if require_grad and data._data.dtype.kind not in "fcV":
            raise RuntimeError("Only Tensors of floating point and complex dtype can require "
                               "gradients")
        t = _as_class(cls, data.detach())
        t._requires_grad = bool(require_grad)
        return t

    def as_subclass(self, cls) -> Tensor:
        """This tensor as an instance of subclass ``cls`` (a view that keeps the history)."""
        _check_subclass(cls)
        return _as_class(cls, self._alias())

    def new(self, *args, **kwargs) -> Tensor:
        """Legacy: a tensor of this tensor's dtype and device from sizes, data, a tensor or a
        storage, as ``torch.Tensor(...)`` takes them."""
        return _legacy_new(Tensor, self.dtype, args, kwargs, self.device)

    def new_empty(self, *sizes, size=None, dtype=None, device=None, requires_grad: bool = False,
                  layout=None, pin_memory: bool = False) -> Tensor:
        """An uninitialized tensor (zeros here) with this tensor's dtype and device by
        default."""
        shape = check_size("new_empty", _sizes_argument(sizes, size))
        return _new_filled(self, "new_empty", shape, None, dtype, device, requires_grad,
                           layout, pin_memory)

    def new_empty_strided(self, size, stride, *, dtype=None, device=None,
                          requires_grad: bool = False, layout=None,
                          pin_memory: bool = False) -> Tensor:
        """An uninitialized tensor (zeros here) with the given strides, with this tensor's
        dtype and device by default."""
        shape = check_size("new_empty_strided", (size,))
        strides = int_sizes("new_empty_strided", (stride,), "stride", 2)
        if len(shape) != len(strides):
            raise RuntimeError(f"dimensionality of sizes ({len(shape)}) must match "
                               f"dimensionality of strides ({len(strides)})")
        if any(s < 0 for s in strides):
            raise RuntimeError(f"Storage size calculation overflowed with sizes={list(shape)} "
                               f"and strides={list(strides)}")
        return _new_filled(self, "new_empty_strided", shape, None, dtype, device, requires_grad,
                           layout, pin_memory, strides)

    def new_zeros(self, *sizes, size=None, dtype=None, device=None, requires_grad: bool = False,
                  layout=None, pin_memory: bool = False) -> Tensor:
        """A tensor of zeros with this tensor's dtype and device by default."""
        shape = check_size("new_zeros", _sizes_argument(sizes, size))
        return _new_filled(self, "new_zeros", shape, 0, dtype, device, requires_grad, layout,
                           pin_memory)

    def new_ones(self, *sizes, size=None, dtype=None, device=None, requires_grad: bool = False,
                 layout=None, pin_memory: bool = False) -> Tensor:
        """A tensor of ones with this tensor's dtype and device by default."""
        shape = check_size("new_ones", _sizes_argument(sizes, size))
        return _new_filled(self, "new_ones", shape, 1, dtype, device, requires_grad, layout,
                           pin_memory)

    def new_full(self, size, fill_value, *, dtype=None, device=None, requires_grad: bool = False,
                 layout=None, pin_memory: bool = False) -> Tensor:
        """A tensor filled with ``fill_value``, with this tensor's dtype and device by
        default."""
        if not isinstance(size, (tuple, list)):
            raise TypeError(f"new_full(): argument 'size' (position 1) must be tuple of ints, "
                            f"not {type_name(size)}")
        if isinstance(fill_value, Tensor):
            fill_value = fill_value.item()
        if not isinstance(fill_value, (int, float, complex, xp.number, xp.bool_)):
            raise TypeError(f"new_full(): argument 'fill_value' (position 2) must be Number, not "
                            f"{type_name(fill_value)}")
        return _new_filled(self, "new_full", check_size("new_full", (size,)), fill_value, dtype,
                           device, requires_grad, layout, pin_memory)

    def new_tensor(self, data, *, dtype=None, device=None, requires_grad: bool = False) -> Tensor:
        """A new tensor from ``data`` with this tensor's dtype and device by default (bound by
        _creation)."""
        raise NotImplementedError

    # ---- pickling and copying --------------------------------------------------------------

    def __reduce_ex__(self, protocol):
        # By value, through chainrule's own function: Tensor.__module__ says "torch", and a
        # pickle must load where torch is not chainrule. As PyTorch's: requires_grad and the
        # attributes are kept, .grad and the history are not.
        state = self.__dict__ or None
        cls = None if type(self) is Tensor else type(self)
        return _rebuild_tensor, (self._data, self._requires_grad, cls, state)

    def __copy__(self) -> Tensor:
        """A new leaf on the same memory, with requires_grad and the attributes (as PyTorch)."""
        t = _new(type(self))
        t._init_leaf(self._data)
        t._requires_grad = self._requires_grad
        t.__dict__.update(self.__dict__)
        return t

    def __deepcopy__(self, memo: dict) -> Tensor:
        if self.grad_fn is not None:
            raise RuntimeError(
                "Only Tensors created explicitly by the user (graph leaves) support the deepcopy "
                "protocol at the moment.  If you were attempting to deepcopy a module, this may "
                "be because of a torch.nn.utils.weight_norm usage, see "
                "https://github.com/pytorch/pytorch/pull/103001")
        if id(self) not in memo:
            t = _new(type(self))
            # Tensors sharing memory (or a version counter) share the copies', as in PyTorch.
            t._init_leaf(_deepcopy_array(self._data, memo), _deepcopy_counter(self._vc, memo))
            t._requires_grad = self._requires_grad
            if self.grad is not None:
                t.grad = _copy.deepcopy(self.grad, memo)
            if self.__dict__:
                t.__dict__.update(_copy.deepcopy(self.__dict__, memo))
            memo[id(self)] = t
        return memo[id(self)]

    def _type_desc(self) -> str:
        return type_desc(self._data)


_new = object.__new__
_object_init = object.__init__
_Device = device
# What torch.Tensor.__module__ and torch.Size.__module__ say (pickling reads neither).
Tensor.__module__ = Size.__module__ = "torch"


def _rebuild_tensor(array, requires_grad: bool, cls: type | None = None,
                    state: dict | None = None) -> Tensor:
    """A pickled tensor (``Tensor.__reduce_ex__``): a leaf holding ``array``."""
    t = _new(cls or Tensor)
    t._init_leaf(array)
    t._requires_grad = requires_grad
    if state:
        t.__dict__.update(state)
    return t


def _deepcopy_array(array, memo: dict):
    """A copy of ``array``; arrays viewing one buffer in one deepcopy view one copy of it."""
    if type(array) is not _ndarray:
        return array.copy()
    owner = array
    while type(owner.base) is _ndarray:
        owner = owner.base
    if not (owner.flags.c_contiguous or owner.flags.f_contiguous):
        return array.copy()
    copied = memo.get(id(owner))
    if copied is None:
        copied = memo[id(owner)] = owner.copy(order="A")
        memo.setdefault(id(memo), []).append(owner)  # its id names it until the end
    offset = array.__array_interface__["data"][0] - owner.__array_interface__["data"][0]
    return _ndarray(array.shape, array.dtype, buffer=copied, offset=offset,
                    strides=array.strides)


def _deepcopy_counter(counter: list | None, memo: dict) -> list | None:
    """The copies' version counter: one for the copies of tensors that shared one."""
    if counter is None or counter is INFERENCE:  # copies of inference tensors are normal ones
        return None
    copied = memo.get(id(counter))
    if copied is None:
        copied = memo[id(counter)] = [0]
        memo.setdefault(id(memo), []).append(counter)
    return copied


# ---- conversion: to, type, memory formats --------------------------------------------------

_TO_SIGNATURES = (
    "torch.device device = None, torch.dtype dtype = None, bool non_blocking = False, "
    "bool copy = False, *, torch.memory_format memory_format = None",
    "torch.dtype dtype, bool non_blocking = False, bool copy = False, *, "
    "torch.memory_format memory_format = None",
    "Tensor tensor, bool non_blocking = False, bool copy = False, *, "
    "torch.memory_format memory_format = None")
_PYTHON_DTYPES = {float: "float64", int: "int64", bool: "bool", complex: "complex128"}


def _to_arguments(args: tuple, kwargs: dict) -> tuple:
    """``Tensor.to``'s arguments in any of its forms, as (device, dtype, copy, memory_format)."""
    first = args[0] if args else None
    if not kwargs and len(args) == 1 and isinstance(first, _dtype):
        return None, first, False, None
    if _is_numpy_dtype(first):  # chainrule's own code converts with NumPy's dtypes
        args = (as_dtype(first),) + args[1:]
        first = args[0]
    if isinstance(first, Tensor):
        names = ("tensor", "non_blocking", "copy")
    elif isinstance(first, _dtype) or (isinstance(first, type) and first in _PYTHON_DTYPES):
        names = ("dtype", "non_blocking", "copy")
    else:
        names = ("device", "dtype", "non_blocking", "copy")
    values = dict(zip(names, args))
    keywords = names[len(args):] + ("memory_format",)
    values.update(kwargs)
    target, dtype = values.get("device"), values.get("dtype")
    if _is_numpy_dtype(dtype):
        dtype = as_dtype(dtype)
    copy, memory_format = values.get("copy", False), values.get("memory_format")
    if "tensor" in values:
        target, dtype = values["tensor"].device, values["tensor"].dtype
    if isinstance(dtype, type) and dtype in _PYTHON_DTYPES:
        dtype = as_dtype(_PYTHON_DTYPES[dtype])
    if (len(args) > len(names) or any(k not in keywords for k in kwargs)
            or not isinstance(values.get("non_blocking", False), bool)
            or not isinstance(copy, bool) or not (dtype is None or isinstance(dtype, _dtype))
            or not (memory_format is None or type(memory_format).__name__ == "memory_format")
            or not (target is None or isinstance(target, (str, int, _Device)))
            or isinstance(target, bool)):
        raise TypeError(invalid_combination("to", args, kwargs, _TO_SIGNATURES))
    return (None if target is None else as_device(target)), dtype, copy, memory_format


def _is_numpy_dtype(value) -> bool:
    return isinstance(value, xp.dtype) or (isinstance(value, type) and issubclass(value,
                                                                              xp.generic))


def _in_memory_format(t: Tensor, memory_format) -> bool:
    """Whether ``to(memory_format=...)`` may return ``t`` itself: its strides look like that
    format (PyTorch asks suggest_memory_format, not is_contiguous)."""
    if memory_format is None or str(memory_format) == "torch.preserve_format":
        return True
    name = str(memory_format).rpartition(".")[2].removesuffix("_format")
    return suggested_format(t._data.shape, t.stride()) == name


# Legacy type names: x.type('torch.DoubleTensor') and torch.FloatTensor's kin
_LEGACY_TYPES = {f"torch.{_LEGACY_NAMES[d.name]}Tensor": d
                 for d in (*ALL_DTYPES, getattr(_backend_module, "bfloat16", None))
                 if d is not None and d.name in _LEGACY_NAMES}
_NO_CUDA_LIBRARY = (
    "Cannot initialize CUDA without ATen_cuda library. PyTorch splits its backend into two "
    "shared libraries: a CPU library and a CUDA library; this error has occurred because you "
    "are trying to use some CUDA functionality, but the CUDA library has not been loaded by the "
    "dynamic linker for some reason.  The CUDA library MUST be loaded, EVEN IF you don't "
    "directly use any symbols from the CUDA library! One common culprit is a lack of "
    "-Wl,--no-as-needed in your link arguments; many dynamic linkers will delete dynamic "
    "library dependencies if you don't depend on any of their symbols.  You can check if this "
    "has occurred by using ldd on your binary to see if there is a dependency on *_cuda.so "
    "library.")


def _deprecated_device_argument(method: str) -> None:
    warnings.warn(f"The argument 'device' of Tensor.{method}() is deprecated. Please do not pass "
                  "this argument.", DeprecationWarning, stacklevel=3)


# ---- new_* ------------------------------------------------------------------------------------

def _sizes_argument(sizes: tuple, size) -> tuple:
    """A ``new_*`` method's sizes, given as ``*sizes`` or as the ``size`` keyword."""
    if size is None:
        return sizes
    if sizes:
        raise TypeError("got multiple values for argument 'size'")
    return (size,)


def _new_filled(self: Tensor, name: str, shape: tuple, fill, dtype, target, requires_grad: bool,
                layout, pin_memory: bool, strides: tuple | None = None) -> Tensor:
    """The tensor of a ``new_*`` method: ``shape`` filled with ``fill`` (None: uninitialized,
    zeros here) in self's dtype and on self's device unless given."""
    np_dtype = self._data.dtype if dtype is None else _new_dtype(name, dtype)
    if layout is not None and str(layout) != "torch.strided":
        raise RuntimeError(f"{name}(): only the strided layout is provided (got {layout}); "
                           "sparse tensors do not exist in chainrule")
    if pin_memory:
        raise RuntimeError("pin_memory=True requires a CUDA or other accelerator backend; no "
                           "pinned memory allocator is available on this system.")
    if requires_grad and np_dtype.kind not in "fcV":
        raise RuntimeError("Only Tensors of floating point and complex dtype can require "
                           "gradients")
    memory = memory_of(self.device if target is None else target, name)
    if strides is None:
        array = memory.zeros(shape, np_dtype) if fill is None else memory.full(shape, fill,
                                                                               np_dtype)
    else:
        itemsize = np_dtype.itemsize
        if memory is xp:
            extent = 0 if 0 in shape else 1 + sum((n - 1) * s for n, s in zip(shape, strides))
            array = xp.lib.stride_tricks.as_strided(xp.zeros(extent, np_dtype), shape,
                                                    [s * itemsize for s in strides])
        else:
            array = MetaArray(shape, np_dtype, tuple(s * itemsize for s in strides))
    t = Tensor._wrap(array, None, 0)
    t._requires_grad = requires_grad
    return t


# ---- the legacy constructor: torch.Tensor(...), torch.FloatTensor(...), x.new(...) ----------

_LEGACY_SIGNATURES = ("*, torch.device device = None", "torch.Storage storage", "Tensor other",
                      "tuple of ints size, *, torch.device device = None",
                      "object data, *, torch.device device = None")
_LEGACY_FORMS = ("size", "data", "other", "storage")


def _legacy_new(cls, dtype, args: tuple, kwargs: dict, home: device = CPU) -> Tensor:
    """PyTorch's legacy constructor: sizes, data, another tensor (aliased), a storage or
    nothing, as a ``cls`` on ``home`` (the CPU; self's device for ``new``) in ``dtype``. With
    ``dtype`` None (``torch.Tensor``) data and sizes take the default dtype and a tensor or a
    storage keeps its own; otherwise they must have ``dtype``."""
    named = [k for k in kwargs if k != "device"]
    if named and (args or len(named) > 1 or named[0] not in _LEGACY_FORMS):
        raise TypeError(invalid_combination("new", args, kwargs, _LEGACY_SIGNATURES))
    form = named[0] if named else None
    if form is not None:
        args = (kwargs[form],)
    target = kwargs.get("device")
    if target is not None:
        target = as_device(target)
        if target.type != home.type:
            raise RuntimeError(f"legacy constructor expects device type: {home.type} but device "
                               f"type: {target.type} was passed")
    np_dtype = (dtype or get_default_dtype()).np
    first = args[0] if args else None
    if not args:
        array = memory_of(home).zeros((0,), np_dtype)
    elif isinstance(first, Tensor) and len(args) == 1 and form in (None, "other"):
        if target is not None:
            raise RuntimeError("Legacy tensor constructor of the form torch.Tensor(tensor, "
                               "device=device) is not supported.  Use torch.tensor(...) or "
                               "torch.as_tensor(...) instead.")
        if dtype is not None and first._data.dtype != np_dtype:
            raise TypeError(f"expected {_options(np_dtype, home)} (got "
                            f"{_options(first._data.dtype, first.device)})")
        return _as_class(cls, first._alias())
    elif hasattr(first, "_legacy_array") and len(args) == 1 and form in (None, "storage"):
        array = first._legacy_array(dtype)  # a storage (chainrule.storage)
    elif form == "size" or _is_size(first):
        array = memory_of(home).zeros(check_size("new", args), np_dtype)
    elif len(args) > 1:
        raise TypeError(invalid_combination("new", args, kwargs, _LEGACY_SIGNATURES))
    else:
        array = _legacy_values(first, np_dtype)
        if home.type != "cpu":
            array = memory_of(home).zeros(array.shape, np_dtype)
    t = _new(cls)
    t._init_leaf(array)
    return t


def _is_size(value) -> bool:
    return isinstance(value, Size) or (isinstance(value, (int, xp.integer))
                                       and not isinstance(value, (bool, xp.bool_)))


def _options(np_dtype, where: device) -> str:
    """PyTorch's C++ description of a tensor's options, in its dtype-mismatch error."""
    return (f"TensorOptions(dtype={dtype_name(np_dtype, 'cpp')}, device={where}, "
            "layout=Strided, requires_grad=false (default), pinned_memory=false (default), "
            "memory_format=(nullopt))")


def _legacy_values(data, np_dtype):
    """The array of the legacy constructor's ``data`` (shared when it is a NumPy array of that
    dtype), with PyTorch's errors."""
    if isinstance(data, (str, bytes)):
        raise TypeError(f"new(): invalid data type '{type_name(data)}'")
    if not isinstance(data, xp.ndarray) and (not isinstance(data, Sequence) or
                                             isinstance(data, Mapping)):
        raise TypeError(f"new(): data must be a sequence (got {type_name(data)})")
    try:
        with quiet():  # 1e300 as float32 is inf, as in PyTorch, without NumPy's warning
            array = xp.asarray(data, dtype=np_dtype)
    except OverflowError:
        raise RuntimeError(f"value cannot be converted to type {as_dtype(np_dtype).name} "
                           "without overflow") from None
    except (TypeError, ValueError):
        _check_elements(data, np_dtype)
        raise
    if array.dtype.kind == "f" and not isinstance(data, xp.ndarray) and xp.isnan(array).any():
        _check_elements(data, np_dtype)  # NumPy reads None as NaN
    return array


def _check_elements(data, np_dtype) -> None:
    """PyTorch's error for nested data that holds something other than numbers, or is ragged."""
    stack = [data]
    while stack:
        item = stack.pop()
        if isinstance(item, (list, tuple)):
            stack.extend(reversed(item))
        elif not isinstance(item, (int, float, complex, xp.number, xp.bool_, Tensor)) or (
                isinstance(item, (complex, xp.complexfloating)) and np_dtype.kind != "c"):
            kind = type_name(item)
            if np_dtype.kind == "f":
                raise TypeError(f"must be real number, not {kind}")
            if isinstance(item, str):
                raise ValueError(f"too many dimensions '{kind}'")
            raise TypeError(f"'{kind}' object cannot be interpreted as an integer")
    nested_data(data)


def _check_subclass(cls) -> None:
    if not (isinstance(cls, type) and issubclass(cls, Tensor)):
        raise TypeError("Creating a Tensor subclass from a class that does not inherit from "
                        "Tensor is not possible. Make sure your class inherits from Tensor.")


def _as_class(cls, t: Tensor) -> Tensor:
    """``t`` as an instance of ``cls``: itself, or a new object of the subclass holding its
    state."""
    if type(t) is cls:
        return t
    s = _new(cls)
    for slot in Tensor.__slots__:
        if slot != "__weakref__" and slot != "__dict__":  # a new object: no attributes
            setattr(s, slot, getattr(t, slot))
    return s


def _graph_break(what: str) -> None:
    """A tensor's value left the kernels (chainrule.compile cannot replay what Python did
    with it)."""
    if _stack.capture is not None:
        _stack.capture.graph_break(what)


# The default __torch_function__ and the subclass hook, before any subclass is defined.
from . import _torch_function  # noqa: E402, F401
