"""Devices: ``torch.device`` objects, the default device, and where a device's memory lives.

A tensor's device is the array namespace that holds its data: ``cpu`` is NumPy, ``meta`` is
``_meta`` (shape, dtype and strides, no data). Every other device PyTorch names can be written
down as an object; asking it for memory raises what a CPU build of PyTorch raises.
"""

from __future__ import annotations

import re
import threading

from . import _meta
from ._backend import xp

__all__ = ["device", "get_default_device", "set_default_device", "memory_of"]

# The device types PyTorch's parser knows, in its order (its error message lists them).
TYPES = ("cpu", "cuda", "ipu", "xpu", "mkldnn", "opengl", "opencl", "ideep", "hip", "ve", "fpga",
         "maia", "xla", "lazy", "vulkan", "mps", "meta", "hpu", "mtia", "privateuseone")
_PATTERN = re.compile(r"[a-zA-Z_]+(:(0|[1-9][0-9]*))?")  # what PyTorch's parser accepts
# What asking for memory there raises on PyTorch's CPU build.
_NOT_COMPILED = {"cuda": "CUDA", "xpu": "XPU", "mtia": "MTIA"}
_MTIA_HINT = (". Ensure you have `import mtia.host_runtime.torch_mtia.dynamic_library` in your "
              "python src file and include `//mtia/host_runtime/torch_mtia:torch_mtia` as your "
              "target dependency!")
_BACKEND = {"mps": "MPS", "xla": "XLA", "lazy": "Lazy", "ipu": "IPU", "vulkan": "Vulkan",
            "fpga": "FPGA", "maia": "MAIA", "ve": "VE", "hip": "HIP"}
_NO_MODULE = ("hpu", "privateuseone")  # PyTorch imports torch.<type> first, and has none
_CAFFE2 = ("mkldnn", "opengl", "opencl", "ideep")


class device:
    """Where a tensor's memory is (``torch.device('cpu')``, ``torch.device('cuda', 0)``)."""

    __slots__ = ("type", "index")

    def __init__(self, type, index: int | None = None) -> None:  # noqa: A002  (PyTorch's name)
        if isinstance(type, device):
            if index is not None:
                raise TypeError("device(): a device object takes no index")
            self.type, self.index = type.type, type.index
            return
        if not isinstance(type, (str, int)) and isinstance(getattr(type, "type", None), str):
            type = str(type)  # another library's device object  # noqa: A001
        if isinstance(type, int) and not isinstance(type, bool):
            raise RuntimeError("Cannot access accelerator device when none is available.")
        if not isinstance(type, str):
            raise TypeError(f"device() received an invalid combination of arguments - got "
                            f"({type.__class__.__name__}), but expected one of:\n * (torch.device "
                            "device)\n * (str type, int index = -1)")
        if index is not None and (not isinstance(index, int) or isinstance(index, bool)):
            raise TypeError(f"device(): argument 'index' (position 2) must be int, not "
                            f"{index.__class__.__name__}")
        if not _PATTERN.fullmatch(type):
            raise RuntimeError(f"Invalid device string: '{type}'")
        name, colon, ordinal = type.partition(":")
        if name not in TYPES:
            raise RuntimeError(f"Expected one of {', '.join(TYPES)} device type at start of "
                               f"device string: {name}")
        if colon:
            if index is not None:
                raise RuntimeError(f"type (string) must not include an index because index was "
                                   f"passed explicitly: {type}")
            index = int(ordinal)
        if index is not None and index < 0:
            raise RuntimeError("Device index must not be negative")
        self.type, self.index = name, index

    def __repr__(self) -> str:
        if self.index is None:
            return f"device(type='{self.type}')"
        return f"device(type='{self.type}', index={self.index})"

    def __str__(self) -> str:
        return self.type if self.index is None else f"{self.type}:{self.index}"

    def __eq__(self, other) -> bool:
        if not isinstance(other, device):
            return NotImplemented
        return self.type == other.type and self.index == other.index

    def __hash__(self) -> int:
        return hash((self.type, self.index))

    def __reduce__(self):
        # Not the class (its module says "torch", which may be PyTorch): the parsing function.
        return as_device, (str(self),)

    # ``with torch.device('meta'):`` makes it the factories' default inside the block
    def __enter__(self) -> device:
        stack = _stack()
        stack.append(_state.default)
        _state.default = self
        return self

    def __exit__(self, *exc) -> None:
        _state.default = _stack().pop()


device.__module__ = "torch"


class _State(threading.local):
    default: device | None = None  # None: the CPU, and factories need not ask


_state = _State()


def _stack() -> list:
    stack = getattr(_state, "stack", None)
    if stack is None:
        stack = _state.stack = []
    return stack


CPU = device("cpu")
META = device("meta")


def as_device(d) -> device:
    """The device object for a device, a string or None (the default device)."""
    if d is None:
        return _state.default or CPU
    return d if isinstance(d, device) else device(d)


def get_default_device() -> device:
    """The device factories allocate on when given none (the CPU unless changed)."""
    return _state.default or CPU


def set_default_device(device) -> None:
    """Make factories allocate on ``device`` when given no device (None: the CPU)."""
    _state.default = None if device is None else as_device(device)
    if _state.default == CPU:
        _state.default = None


def memory_of(d, what: str = "empty"):
    """The array namespace holding memory on device ``d`` (None: the default device): NumPy
    for the CPU, ``_meta`` for the meta device; any other device raises what PyTorch's CPU
    build raises when a factory (or, ``what="_to_copy"``, a move) asks for memory there.
    """
    if d is None:
        d = _state.default
        if d is None:
            return xp
    elif not isinstance(d, device):
        d = device(d)
    if d.type == "cpu":
        return xp
    if d.type == "meta":
        return _meta
    kind = d.type
    if kind in _NOT_COMPILED:
        raise AssertionError(f"Torch not compiled with {_NOT_COMPILED[kind]} enabled"
                             + (_MTIA_HINT if kind == "mtia" else ""))
    if kind in _NO_MODULE:
        raise ModuleNotFoundError(f"No module named 'torch.{kind}'", name=f"torch.{kind}")
    if what == "_to_copy" and kind != "lazy":
        raise RuntimeError(f"PyTorch is not linked with support for {kind} devices")
    if kind in _CAFFE2:
        raise RuntimeError(f"This is a grandfathered Caffe2 device type {kind}, it shouldn't "
                           "ever convert to a DispatchKey (chainrule has the 'cpu' and 'meta' "
                           "devices only).")
    raise NotImplementedError(
        f"Could not run 'aten::empty.memory_format' with arguments from the '{_BACKEND[kind]}' "
        "backend. This could be because the operator doesn't exist for this backend "
        "(chainrule has the 'cpu' and 'meta' devices only).")

