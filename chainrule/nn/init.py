"""Parameter initialisation (nn.init): in place, under no_grad; the draws are PyTorch's for the same
seed."""

from __future__ import annotations

import math
import warnings
from collections.abc import Callable

from .. import linalg
from .._backend import xp
from .._creation import empty_like, randperm
from .._dispatch import bump_version
from ..autograd.grad_mode import no_grad
from ..ops.elementwise import where
from ..ops.linalg import diag
from ..tensor import Tensor

__all__ = ["calculate_gain", "uniform_", "normal_", "constant_", "zeros_", "ones_", "eye_",
           "xavier_uniform_", "xavier_normal_", "kaiming_uniform_", "kaiming_normal_",
           "orthogonal_", "trunc_normal_", "dirac_", "sparse_"]


def calculate_gain(nonlinearity: str, param: float | None = None) -> float:
    """The recommended gain for a nonlinearity (PyTorch's table)."""
    linear = ("linear", "conv1d", "conv2d", "conv3d", "conv_transpose1d", "conv_transpose2d",
              "conv_transpose3d", "sigmoid")
    if nonlinearity in linear:
        return 1
    if nonlinearity == "tanh":
        return 5.0 / 3
    if nonlinearity == "relu":
        return math.sqrt(2.0)
    if nonlinearity == "leaky_relu":
        slope = 0.01 if param is None else param
        if isinstance(slope, bool) or not isinstance(slope, (int, float)):
            raise ValueError(f"negative_slope {slope} not a valid number")
        return math.sqrt(2.0 / (1 + slope**2))
    if nonlinearity == "selu":
        return 3.0 / 4
    raise ValueError(f"Unsupported nonlinearity {nonlinearity}")


def _fill(tensor: Tensor, values) -> Tensor:
    with no_grad():
        tensor._data[...] = values
        bump_version(tensor, "fill_")
    return tensor


def uniform_(tensor: Tensor, a: float = 0.0, b: float = 1.0, generator=None) -> Tensor:
    """Fill with U(a, b)."""
    with no_grad():
        return tensor.uniform_(a, b, generator=generator)


def normal_(tensor: Tensor, mean: float = 0.0, std: float = 1.0, generator=None) -> Tensor:
    """Fill with N(mean, std²)."""
    with no_grad():
        return tensor.normal_(mean, std, generator=generator)


def _norm_cdf(x: float) -> float:
    return (1.0 + math.erf(x / math.sqrt(2.0))) / 2.0


def trunc_normal_(tensor: Tensor, mean: float = 0.0, std: float = 1.0, a: float = -2.0,
                  b: float = 2.0, generator=None) -> Tensor:
    """Fill with N(mean, std²) truncated to [a, b]: values outside are drawn again."""
    if tensor.is_meta:
        return tensor
    if mean < a - 2 * std or mean > b + 2 * std:
        warnings.warn("mean is more than 2 std from [a, b] in nn.init.trunc_normal_. The "
                      "distribution of values may be incorrect.", stacklevel=2)
    with no_grad():
        mass = _norm_cdf((b - mean) / std) - _norm_cdf((a - mean) / std)
        if mass > 0.3:  # most draws land inside: draw normals again where they did not
            lo, hi = tensor.new_tensor(a).item(), tensor.new_tensor(b).item()
            result = tensor.normal_(mean, std, generator=generator)
            while True:
                outside = (result < lo) | (result > hi)
                if not outside.any():
                    break
                again = empty_like(result).normal_(mean, std, generator=generator)
                result = where(outside, again, result)
            if tensor is not result:
                tensor.copy_(result)
            return tensor
        # A narrow window: uniform proposals on [a, b], accepted with the normal's density
        # relative to its peak in the window.
        mode = max(a, min(mean, b))
        log_peak = -0.5 * ((mode - mean) / std) ** 2
        candidates = empty_like(tensor)
        accept = empty_like(tensor)
        tensor.uniform_(a, b, generator=generator)
        candidates.copy_(tensor)
        candidates.sub_(mean).div_(std).pow_(2).mul_(-0.5).sub_(log_peak)
        pending = accept.uniform_(generator=generator).log_().gt(candidates)
        if pending.any():
            result = tensor
            while True:
                candidates.uniform_(a, b, generator=generator)
                result = where(pending, candidates, result)
                candidates.sub_(mean).div_(std).pow_(2).mul_(-0.5).sub_(log_peak)
                rejected = accept.uniform_(generator=generator).log_().gt(candidates)
                pending = where(pending, rejected, pending)
                if not pending.any():
                    break
            tensor.copy_(result)
        return tensor


def constant_(tensor: Tensor, val: float) -> Tensor:
    """Fill with ``val``."""
    return _fill(tensor, val)


def zeros_(tensor: Tensor) -> Tensor:
    return _fill(tensor, 0)


def ones_(tensor: Tensor) -> Tensor:
    return _fill(tensor, 1)


def eye_(tensor: Tensor) -> Tensor:
    """Fill a 2-D tensor with the identity."""
    if tensor.dim() != 2:
        raise ValueError("Only tensors with 2 dimensions are supported")
    return _fill(tensor, xp.eye(*tensor._data.shape))


def _calculate_fan_in_and_fan_out(tensor: Tensor) -> tuple[int, int]:
    if tensor.dim() < 2:
        raise ValueError("Fan in and fan out can not be computed for tensor with fewer than 2 "
                         "dimensions")
    receptive = math.prod(tensor.shape[2:])
    return tensor.shape[1] * receptive, tensor.shape[0] * receptive


def _fan(tensor: Tensor, mode: str) -> int:
    mode = mode.lower()
    if mode not in ("fan_in", "fan_out"):
        raise ValueError(f"Mode {mode} not supported, please use one of ['fan_in', 'fan_out']")
    fan_in, fan_out = _calculate_fan_in_and_fan_out(tensor)
    return fan_in if mode == "fan_in" else fan_out


# The bounds below are computed in PyTorch's order of operations: a bound that differs in its
# last bit scales every draw differently.


def xavier_uniform_(tensor: Tensor, gain: float = 1.0, generator=None) -> Tensor:
    """Glorot uniform: U(-a, a), a = gain * sqrt(6 / (fan_in + fan_out))."""
    fan_in, fan_out = _calculate_fan_in_and_fan_out(tensor)
    std = gain * math.sqrt(2.0 / float(fan_in + fan_out))
    a = math.sqrt(3.0) * std
    return uniform_(tensor, -a, a, generator)


def xavier_normal_(tensor: Tensor, gain: float = 1.0, generator=None) -> Tensor:
    """Glorot normal: N(0, std²), std = gain * sqrt(2 / (fan_in + fan_out))."""
    fan_in, fan_out = _calculate_fan_in_and_fan_out(tensor)
    return normal_(tensor, 0.0, gain * math.sqrt(2.0 / float(fan_in + fan_out)), generator)


def kaiming_uniform_(tensor: Tensor, a: float = 0, mode: str = "fan_in",
                     nonlinearity: str = "leaky_relu", generator=None) -> Tensor:
    """He uniform: U(-b, b), b = gain * sqrt(3 / fan)."""
    if 0 in tensor.shape:
        warnings.warn("Initializing zero-element tensors is a no-op", stacklevel=2)
        return tensor
    std = calculate_gain(nonlinearity, a) / math.sqrt(_fan(tensor, mode))
    bound = math.sqrt(3.0) * std
    return uniform_(tensor, -bound, bound, generator)


def kaiming_normal_(tensor: Tensor, a: float = 0, mode: str = "fan_in",
                    nonlinearity: str = "leaky_relu", generator=None) -> Tensor:
    """He normal: N(0, std²), std = gain / sqrt(fan)."""
    if 0 in tensor.shape:
        warnings.warn("Initializing zero-element tensors is a no-op", stacklevel=2)
        return tensor
    std = calculate_gain(nonlinearity, a) / math.sqrt(_fan(tensor, mode))
    return normal_(tensor, 0, std, generator)


def orthogonal_(tensor: Tensor, gain: float = 1.0, generator=None) -> Tensor:
    """A (semi-)orthogonal matrix from the QR decomposition of a Gaussian one, times gain."""
    if tensor.dim() < 2:
        raise ValueError("Only tensors with 2 or more dimensions are supported")
    if tensor.numel() == 0 or tensor.is_meta:
        return tensor
    rows = tensor.shape[0]
    cols = tensor.numel() // rows
    with no_grad():
        flat = tensor.new_empty((rows, cols)).normal_(0, 1, generator=generator)
        if rows < cols:
            flat = flat.t()
        q, r = linalg.qr(flat)
        q = q * diag(r, 0).sign()  # Q uniform over the orthogonal group (Mezzadri)
        if rows < cols:
            q = q.t()
        tensor.view_as(q).copy_(q)
        tensor.mul_(gain)
    return tensor


def dirac_(tensor: Tensor, groups: int = 1) -> Tensor:
    """A 3-5-D convolution weight that passes its input through: 1 at each kernel's centre,
    channel i to channel i (within each of ``groups`` groups)."""
    if tensor.dim() not in (3, 4, 5):
        raise ValueError("Only tensors with 3, 4, or 5 dimensions are supported")
    shape = tensor.shape
    if shape[0] % groups != 0:
        raise ValueError("dim 0 must be divisible by groups")
    per_group = shape[0] // groups
    values = xp.zeros(tensor._data.shape)
    centre = tuple(k // 2 for k in shape[2:])
    for g in range(groups):
        for d in range(min(per_group, shape[1])):
            values[(g * per_group + d, d, *centre)] = 1
    _fill(tensor, values)
    for _ in range(groups * min(per_group, shape[1])):  # PyTorch writes each 1 in place
        bump_version(tensor, "fill_")
    return tensor


def sparse_(tensor: Tensor, sparsity: float, std: float = 0.01, generator=None) -> Tensor:
    """A 2-D tensor drawn from N(0, std²) with a fraction ``sparsity`` of each column zeroed
    (the rows to zero come from the default generator, as in PyTorch)."""
    if tensor.dim() != 2:
        raise ValueError("Only tensors with 2 dimensions are supported")
    if tensor.is_meta:
        return tensor
    rows, cols = tensor.shape
    zeros = math.ceil(sparsity * rows)
    with no_grad():
        tensor.normal_(0, std, generator=generator)
        for col in range(cols):
            tensor[randperm(rows)[:zeros], col] = 0
    return tensor


def _deprecated(new: Callable) -> Callable:
    """The old name without the trailing underscore, warning as PyTorch's does."""
    old_name = new.__name__[:-1]

    def deprecated_init(*args, **kwargs):
        warnings.warn(f"`nn.init.{old_name}` is now deprecated in favor of "
                      f"`nn.init.{new.__name__}`.", FutureWarning, stacklevel=2)
        return new(*args, **kwargs)

    deprecated_init.__name__ = deprecated_init.__qualname__ = old_name
    deprecated_init.__doc__ = f"Deprecated: use nn.init.{new.__name__}."
    return deprecated_init


uniform = _deprecated(uniform_)
normal = _deprecated(normal_)
constant = _deprecated(constant_)
eye = _deprecated(eye_)
dirac = _deprecated(dirac_)
xavier_uniform = _deprecated(xavier_uniform_)
xavier_normal = _deprecated(xavier_normal_)
kaiming_uniform = _deprecated(kaiming_uniform_)
kaiming_normal = _deprecated(kaiming_normal_)
orthogonal = _deprecated(orthogonal_)
sparse = _deprecated(sparse_)
