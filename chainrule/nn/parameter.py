"""nn.Parameter and nn.Buffer, and the uninitialized parameters and buffers of lazy modules."""

from __future__ import annotations

from .._backend import as_dtype, get_default_dtype, xp
from .._device import memory_of
from ..tensor import Tensor

__all__ = ["Parameter", "UninitializedParameter", "is_lazy", "Buffer", "UninitializedBuffer",
           "UninitializedTensorMixin"]


class Parameter(Tensor):
    """A tensor that is a module parameter: requires grad by default, shares ``data``."""

    def __init__(self, data: Tensor | None = None, requires_grad: bool = True) -> None:
        if data is None:
            array = xp.zeros((0,), dtype=get_default_dtype().np)
        else:
            array = data._data if isinstance(data, Tensor) else xp.asarray(data)
        self._init_leaf(array, data._vc if isinstance(data, Tensor) else None)
        if requires_grad:
            self.requires_grad_(True)

    def __repr__(self) -> str:
        if type(self) is Parameter:
            return "Parameter containing:\n" + self._repr("tensor(")
        # A subclass's name inside Parameter(...), continuation lines indented for the name only
        return f"Parameter containing:\nParameter({Tensor.__repr__(self)})"

    __str__ = __repr__

    def __deepcopy__(self, memo: dict) -> Parameter:
        if id(self) not in memo:
            copy = Tensor._wrap(self._data.copy(), None, 0)
            memo[id(self)] = Parameter(copy, self._requires_grad)
        return memo[id(self)]

    def __reduce_ex__(self, protocol):
        # Through chainrule's function (the class says torch.nn.parameter), by value, as a
        # Parameter whatever the subclass (as PyTorch's), with requires_grad and attributes.
        return _rebuild_parameter, (self._data, self._requires_grad, self.__dict__ or None)


Parameter.__module__ = "torch.nn.parameter"  # what torch.nn.Parameter.__module__ says


def _rebuild_parameter(array, requires_grad: bool, state: dict | None = None) -> Parameter:
    """A pickled Parameter."""
    param = Parameter(Tensor._wrap(array, None, 0), requires_grad)
    if state:
        param.__dict__.update(state)
    return param


class Buffer(Tensor):
    """Marks a tensor to be registered as a module buffer when assigned as an attribute."""

    def __init__(self, data: Tensor | None = None, *, persistent: bool = True) -> None:
        self._init_leaf(data._data if isinstance(data, Tensor) else xp.asarray(data))
        self.persistent = persistent

    def __repr__(self) -> str:
        return self._repr("tensor(")  # PyTorch's Buffer(...) is a plain tensor


# ---- lazy (uninitialized) parameters and buffers -------------------------------------------------

_SLOT = Tensor._data  # the array slot itself, which the uninitialized classes hide behind a check

_SHAPE_ERROR = ("Can't access the shape of an uninitialized parameter or buffer. This error "
                "usually happens in `load_state_dict` when trying to load an uninitialized "
                "parameter into an initialized one. Call `forward` to initialize the parameters "
                "before accessing their attributes.")


def _refuse(self) -> None:
    raise ValueError(
        "Attempted to use an uninitialized parameter in a torch function. This error happens "
        "when you are using a `LazyModule` or explicitly manipulating "
        f"`torch.nn.parameter.{type(self).__name__}` objects. When using LazyModules Call "
        "`forward` with a dummy batch to initialize the parameters before calling torch functions")


class UninitializedTensorMixin:
    """A parameter or buffer whose shape is not known yet: ops on it raise until
    ``materialize(shape)`` gives it storage and turns it into ``cls_to_become``."""

    __slots__ = ()
    cls_to_become: type = Tensor
    # Every op reads ``_data``; here reading it raises, so no op runs on the placeholder.
    _data = property(_refuse, _SLOT.__set__)

    def _placeholder(self) -> Tensor:
        return Tensor._wrap(_SLOT.__get__(self), None, 0)

    def materialize(self, shape, device=None, dtype=None) -> None:
        """Give the tensor uninitialized storage of ``shape`` (on ``device``, in ``dtype``;
        the placeholder's by default) and make it a regular one."""
        placeholder = self._placeholder()
        np_dtype = placeholder._data.dtype if dtype is None else as_dtype(dtype).np
        memory = memory_of(placeholder.device if device is None else device)
        self.__class__ = self.cls_to_become
        self._data = memory.empty(tuple(shape), dtype=np_dtype)
        if self._extra is not None:
            self._extra.pop("persistent", None)
            self._extra = self._extra or None

    @property
    def shape(self):
        raise RuntimeError(_SHAPE_ERROR)

    def size(self, dim: int | None = None):
        return self._placeholder().size(dim)

    @property
    def dtype(self):
        return self._placeholder().dtype

    @property
    def device(self):
        return self._placeholder().device

    def _replace_placeholder(self, tensor: Tensor) -> None:
        """Take ``tensor``'s storage as the placeholder (a module's dtype or device change)."""
        _SLOT.__set__(self, tensor._data)

    @property
    def data(self) -> Tensor:
        return self._placeholder()

    @data.setter
    def data(self, value) -> None:
        _refuse(self)

    @property
    def ndim(self) -> int:
        return self._placeholder().ndim

    def requires_grad_(self, requires_grad: bool = True):
        _refuse(self)

    def is_floating_point(self) -> bool:
        return self._placeholder().is_floating_point()

    def is_complex(self) -> bool:
        return self._placeholder().is_complex()

    def share_memory_(self):
        raise RuntimeError("Can't share memory on an uninitialized parameter or buffer. Call "
                           "`forward` to initialize the parameters before calling "
                           "`module.share_memory()`.")

    def __repr__(self) -> str:
        return f"<{type(self).__name__}>"

    __str__ = __repr__

    def __reduce_ex__(self, protocol):
        return type(self), (self._requires_grad,)

    def __deepcopy__(self, memo: dict):
        if id(self) not in memo:
            memo[id(self)] = type(self)(self._requires_grad, device=self.device,
                                        dtype=self.dtype)
        return memo[id(self)]


class UninitializedParameter(UninitializedTensorMixin, Parameter):
    """A parameter of a lazy module before its first forward: no shape, no values."""

    cls_to_become = Parameter

    def __init__(self, requires_grad: bool = True, device=None, dtype=None) -> None:
        self._init_leaf(_placeholder_array(device, dtype))
        self._requires_grad = requires_grad


class UninitializedBuffer(UninitializedTensorMixin, Tensor):
    """A buffer of a lazy module before its first forward: no shape, no values."""

    __slots__ = ()
    cls_to_become = Tensor

    def __init__(self, requires_grad: bool = False, device=None, dtype=None,
                 persistent: bool = True) -> None:
        self._init_leaf(_placeholder_array(device, dtype))
        self._requires_grad = requires_grad
        self._extra_dict()["persistent"] = persistent

    @property
    def persistent(self) -> bool:
        return self._extra_dict().get("persistent", True)

    def __deepcopy__(self, memo: dict):
        if id(self) not in memo:
            memo[id(self)] = UninitializedBuffer(self._requires_grad, device=self.device,
                                                 dtype=self.dtype,
                                                 persistent=self.persistent)
        return memo[id(self)]


def _placeholder_array(device, dtype):
    np_dtype = (get_default_dtype() if dtype is None else as_dtype(dtype)).np
    return memory_of(device).empty((0,), dtype=np_dtype)


def is_lazy(param) -> bool:
    """Whether ``param`` is an uninitialized parameter or buffer."""
    return isinstance(param, UninitializedTensorMixin)
