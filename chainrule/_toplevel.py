"""torch's top-level names that are other names under another form: the in-place functions
(``torch.abs_(x)`` is ``x.abs_()``, ``torch.dropout_`` is dropout in place), the constants
PyTorch re-exports from math and NumPy (``torch.pi``, ``torch.newaxis``), and ``from_file``
(a tensor over a memory-mapped file, the memory of ``UntypedStorage.from_file``)."""

from __future__ import annotations

import inspect
import math
import os
import types

from . import _torch_nn
from ._backend import as_dtype, get_default_dtype, xp
from ._device import device as as_device
from .autograd.grad_mode import is_grad_enabled
from .nn import functional as F
from .tensor import Tensor

e, pi, inf, nan = math.e, math.pi, math.inf, math.nan
newaxis = None

# torch.<name>(input, ...) is input.<name>(...)
_METHODS = (
    "abs_", "acos_", "acosh_", "arccos_", "arccosh_", "arcsin_", "arcsinh_", "arctan_",
    "arctanh_", "asin_", "asinh_", "atan_", "atanh_", "ceil_", "clamp_", "clamp_max_",
    "clamp_min_", "clip_", "conj_physical_", "cos_", "cosh_", "deg2rad_", "detach_", "erf_",
    "erfc_", "exp2_", "exp_", "expm1_", "fill_", "fix_", "floor_", "frac_", "gcd_", "i0_",
    "index_put_", "lcm_", "ldexp_", "log10_", "log1p_", "log2_", "log_", "logit_", "nan_to_num_",
    "neg_", "negative_", "rad2deg_", "reciprocal_", "relu_", "resize_as_", "round_", "rsqrt_",
    "sigmoid_", "sin_", "sinc_", "sinh_", "sqrt_", "square_", "tan_", "tanh_", "trunc_", "xlogy_",
    "zero_",
)

__all__ = ["e", "pi", "inf", "nan", "newaxis", *_METHODS, "dropout_", "alpha_dropout_",
           "feature_dropout_", "feature_alpha_dropout_", "celu_", "selu_", "rrelu_",
           "threshold_", "embedding_renorm_", "from_file", "get_device_module", "is_tensor",
           "is_floating_point", "numel"]


def is_tensor(obj) -> bool:
    """True if obj is a chainrule Tensor."""
    return isinstance(obj, Tensor)


def is_floating_point(input: Tensor) -> bool:
    """True if input has a floating point dtype."""
    if not isinstance(input, Tensor):
        raise TypeError("is_floating_point(): argument 'input' (position 1) must be Tensor, not "
                        f"{type(input).__name__}")
    return input.is_floating_point()


def numel(input: Tensor) -> int:
    """Number of elements of input."""
    return input.numel()


def _check_input(input, name: str) -> None:
    if not isinstance(input, Tensor):
        raise TypeError(f"{name}(): argument 'input' (position 1) must be Tensor, not "
                        f"{type(input).__name__}")


def _method_form(name: str):
    """``torch.<name>``: the Tensor method called on ``input``."""
    def form(input, *args, **kwargs):
        _check_input(input, name)
        return getattr(input, name)(*args, **kwargs)

    signature = inspect.signature(getattr(Tensor, name))
    params = list(signature.parameters.values())
    form.__signature__ = signature.replace(parameters=[params[0].replace(name="input"),
                                                       *params[1:]])
    form.__name__ = form.__qualname__ = name
    form.__doc__ = f"In-place version of torch.{name[:-1]}: ``input.{name}(...)``."
    return form


globals().update({name: _method_form(name) for name in _METHODS})


def dropout_(input: Tensor, p: float, train: bool) -> Tensor:
    """In-place version of torch.dropout."""
    _check_input(input, "dropout_")
    return F.dropout(input, p, train, inplace=True)


def alpha_dropout_(input: Tensor, p: float, train: bool) -> Tensor:
    """In-place version of torch.alpha_dropout."""
    _check_input(input, "alpha_dropout_")
    return F.alpha_dropout(input, p, train, inplace=True)


def feature_alpha_dropout_(input: Tensor, p: float, train: bool) -> Tensor:
    """In-place version of torch.feature_alpha_dropout."""
    _check_input(input, "feature_alpha_dropout_")
    return F.feature_alpha_dropout(input, p, train, inplace=True)


def feature_dropout_(input: Tensor, p: float, train: bool) -> Tensor:
    """In-place version of torch.feature_dropout."""
    _check_input(input, "feature_dropout_")
    out = _torch_nn.feature_dropout(input, p, train)
    return input if out is input else input.copy_(out)


def celu_(input: Tensor, alpha: float = 1.0) -> Tensor:
    """In-place version of torch.celu."""
    _check_input(input, "celu_")
    return F.celu_(input, alpha)


def selu_(input: Tensor) -> Tensor:
    """In-place version of torch.selu."""
    _check_input(input, "selu_")
    return F.selu_(input)


def rrelu_(input: Tensor, lower: float = 1.0 / 8, upper: float = 1.0 / 3,
           training: bool = False, generator=None) -> Tensor:
    """In-place version of torch.rrelu."""
    _check_input(input, "rrelu_")
    return input.copy_(_torch_nn.rrelu(input, lower, upper, training, generator))


def threshold_(input: Tensor, threshold: float, value: float) -> Tensor:
    """In-place version of torch.threshold."""
    _check_input(input, "threshold_")
    return F.threshold_(input, threshold, value)


def embedding_renorm_(input: Tensor, indices: Tensor, max_norm: float,
                      norm_type: float) -> Tensor:
    """Rescale in place the rows of input at indices whose norm exceeds max_norm."""
    from ._batching import physical
    from ._dispatch import _check_inplace
    from .ops.embedding import _renorm_rows

    _check_input(input, "embedding_renorm_")
    where = "(while checking arguments for embedding_renorm_)"
    if input.ndim != 2:
        raise RuntimeError(f"Expected 2-dimensional tensor, but got {input.ndim}-dimensional "
                           f"tensor for argument #1 'self' {where}")
    if indices.dtype.is_floating_point or indices.dtype.is_complex or indices.dtype.itemsize < 4:
        raise RuntimeError("Expected tensor for argument #2 'indices' to have one of the "
                           "following scalar types: Long, Int; but got "
                           f"{indices._type_desc().split()[0]} instead {where}")
    rows = physical(indices).reshape(-1)
    num = input.shape[0]
    bad = rows[(rows < -num) | (rows >= num)]
    if bad.size:
        raise IndexError(f"select(): index {int(bad[0])} out of range for tensor of size "
                         f"[{num}, {input.shape[1]}] at dimension 0")
    _check_inplace(input, is_grad_enabled())
    _renorm_rows(input, rows % num, float(max_norm), float(norm_type))
    return input


def from_file(filename: str, shared: bool | None = None, size: int = 0, *, dtype=None,
              layout=None, device=None, pin_memory: bool = False,
              requires_grad: bool = False) -> Tensor:
    """A CPU tensor of ``size`` elements whose memory is the file mapped into memory (with
    ``shared``, changes are written to the file, created or grown as needed)."""
    dtype = get_default_dtype() if dtype is None else as_dtype(dtype)
    where = as_device(device if device is not None else "cpu")
    if where.type == "meta":
        raise NotImplementedError(
            "aten::from_file: attempted to run this operator with Meta tensors, but there was no "
            "fake impl or Meta kernel registered. You may have run into this message while using "
            "an operator with PT2 compilation APIs (torch.compile/torch.export); in order to use "
            "this operator with those APIs you'll need to add a fake impl. Please see the "
            "following for next steps:  "
            "https://pytorch.org/tutorials/advanced/custom_ops_landing_page.html")
    if where.type != "cpu":
        from ._device import memory_of

        memory_of(where, "from_file")  # raises what a CPU build raises for that device
    nbytes = size * dtype.itemsize
    if shared:
        with open(os.open(filename, os.O_RDWR | os.O_CREAT, 0o600), "r+b") as file:
            if os.fstat(file.fileno()).st_size < nbytes:
                file.truncate(nbytes)
    elif not os.path.exists(filename):
        raise RuntimeError(f"unable to open file <{filename}> in read-only mode: No such file or "
                           "directory (2)")
    elif os.path.getsize(filename) < nbytes:
        raise RuntimeError(f"file <{filename}> size <{os.path.getsize(filename)}> is smaller "
                           f"than the required mapping size <{nbytes}>")
    if nbytes == 0:
        data = xp.empty(0, dtype.np)
    else:
        data = xp.memmap(filename, dtype=dtype.np, mode="r+" if shared else "c",
                         shape=(size,)).view(xp.ndarray)
    out = Tensor._wrap(data, None, 0)
    return out.requires_grad_() if requires_grad else out


def _device_module(name: str) -> types.ModuleType | None:
    """``torch.<name>`` for a device type chainrule has a module for (cpu, cuda), else None."""
    from . import cpu, cuda

    return {"cpu": cpu, "cuda": cuda}.get(name)


def get_device_module(device=None):
    """The module of a device type (``torch.cuda`` for ``'cuda'``); for None, the current
    accelerator's, or ``torch.cpu`` when there is none (as here)."""
    if isinstance(device, (str, as_device)):
        name = as_device(device).type
    elif device is None:
        name = "cpu"  # a CPU build has no accelerator
    else:
        raise RuntimeError(f"Invalid value of device '{device}', expect torch.device, str, or None")
    module = _device_module(name)
    if module is None:
        raise RuntimeError(f"Device '{name}' does not have a corresponding module registered as "
                           f"'torch.{name}'.")
    return module
