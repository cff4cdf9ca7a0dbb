"""PyTorch's legacy typed tensor classes: ``torch.FloatTensor`` and kin, and the CUDA ones that a
CPU build names but cannot make.

A typed class is not a Tensor subclass (as in PyTorch): calling it runs the legacy constructor
in its dtype, ``isinstance`` asks a tensor's dtype and device, and its other attributes are
Tensor's (``torch.FloatTensor.add`` is ``Tensor.add``).
"""

from __future__ import annotations

from . import _backend
from .tensor import _LEGACY_NAMES, Tensor, _legacy_new

__all__ = ["tensortype", "typed_classes", "CPU_TYPES", "CUDA_TYPES"]


class tensortype(type):
    """The class of the legacy typed tensor classes."""

    dtype: _backend.dtype
    _legacy_device: str  # also how Tensor.type() recognizes these classes

    def __call__(cls, *args, **kwargs) -> Tensor:
        if cls._legacy_device != "cpu":
            raise TypeError(f"type {cls.__module__}.{cls.__name__} not available. Torch not "
                            "compiled with CUDA enabled.")
        return _legacy_new(Tensor, cls.dtype, args, kwargs)

    def __instancecheck__(cls, obj) -> bool:
        return (isinstance(obj, Tensor) and obj.dtype is cls.dtype
                and obj.device.type == cls._legacy_device)

    def __getattr__(cls, name: str):
        return getattr(Tensor, name)

    @property
    def is_cuda(cls) -> bool:
        return cls._legacy_device == "cuda"

    is_sparse_csr = is_xpu = False


tensortype.__module__ = "torch"

# the dtypes PyTorch has typed classes for (no complex ones)
_TYPED = ("float32", "float64", "float16", "bfloat16", "uint8", "int8", "int16", "int32",
          "int64", "bool")


def typed_classes(module: str, device: str, sparse: bool = False) -> dict[str, tensortype]:
    """The typed classes of ``module`` (``torch``, ``torch.cuda``, ``torch.cuda.sparse``), by
    name, for tensors on ``device``."""
    classes = {}
    for name in _TYPED:
        # bfloat16 only where chainrule has it
        dtype = getattr(_backend, "bool_" if name == "bool" else name, None)
        if dtype is None or (sparse and name == "bool"):
            continue
        cls_name = f"{_LEGACY_NAMES[name]}Tensor"
        classes[cls_name] = tensortype(cls_name, (), {
            "__module__": module, "__qualname__": cls_name, "dtype": dtype,
            "_legacy_device": device, "is_sparse": sparse})
    return classes


CPU_TYPES = typed_classes("torch", "cpu")
CUDA_TYPES = typed_classes("torch.cuda", "cuda")
