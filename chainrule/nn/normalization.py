"""Normalisation layers: BatchNorm1d/2d/3d, InstanceNorm1d/2d/3d, LayerNorm, GroupNorm,
RMSNorm, LocalResponseNorm, CrossMapLRN2d."""

from __future__ import annotations

from .. import _creation
from .._backend import int64, xp
from ..autograd.grad_mode import no_grad
from ..ops._nnutil import const
from ..tensor import Tensor
from . import functional as F
from . import init
from .module import Module
from .parameter import Parameter

__all__ = ["BatchNorm1d", "BatchNorm2d", "BatchNorm3d", "InstanceNorm1d", "InstanceNorm2d",
           "InstanceNorm3d", "LayerNorm", "GroupNorm", "RMSNorm", "LocalResponseNorm",
           "CrossMapLRN2d"]


def _affine_parameters(module: Module, shape: tuple, affine: bool, bias: bool, dtype) -> None:
    """Register ``weight`` (ones) and ``bias`` (zeros), or None when not affine."""
    if affine:
        module.weight = Parameter(_creation.empty(*shape, dtype=dtype))
    else:
        module.register_parameter("weight", None)
    if affine and bias:
        module.bias = Parameter(_creation.empty(*shape, dtype=dtype))
    else:
        module.register_parameter("bias", None)


def _reset_affine(module: Module) -> None:
    if module.weight is not None:
        init.ones_(module.weight)
    if module.bias is not None:
        init.zeros_(module.bias)


class _BatchNorm(Module):
    """Normalises each channel over the batch (and spatial dims) and tracks running statistics.

    In training the batch statistics are used and, if ``track_running_stats``, the running
    estimates move by ``momentum`` (or, with momentum=None, to the cumulative average). In eval
    mode the running estimates are used.
    """

    _expected_dims: tuple = ()
    _optional_state_keys = ("num_batches_tracked",)

    def __init__(self, num_features: int, eps: float = 1e-5, momentum: float | None = 0.1,
                 affine: bool = True, track_running_stats: bool = True, device=None,
                 dtype=None, *, bias: bool = True) -> None:
        super().__init__()
        self.num_features, self.eps, self.momentum = num_features, eps, momentum
        self.affine, self.track_running_stats = affine, track_running_stats
        _affine_parameters(self, (num_features,), affine, bias, dtype)
        if track_running_stats:
            self.register_buffer("running_mean", _creation.zeros(num_features, dtype=dtype))
            self.register_buffer("running_var", _creation.ones(num_features, dtype=dtype))
            self.register_buffer("num_batches_tracked", _creation.tensor(0, dtype=int64))
        else:
            for name in ("running_mean", "running_var", "num_batches_tracked"):
                self.register_buffer(name, None)
        self.reset_parameters()

    def reset_running_stats(self) -> None:
        if self.track_running_stats:
            with no_grad():
                self.running_mean.zero_()
                self.running_var.fill_(1)
                self.num_batches_tracked.zero_()

    def reset_parameters(self) -> None:
        self.reset_running_stats()
        _reset_affine(self)

    def _check_input_dim(self, input: Tensor) -> None:
        if input.dim() not in self._expected_dims:
            dims = " or ".join(f"{d}D" for d in self._expected_dims)
            raise ValueError(f"expected {dims} input (got {input.dim()}D input)")

    def forward(self, input: Tensor) -> Tensor:
        self._check_input_dim(input)
        factor = 0.0 if self.momentum is None else self.momentum
        if self.training and self.track_running_stats and self.num_batches_tracked is not None:
            with no_grad():
                self.num_batches_tracked.add_(1)
            if self.momentum is None:
                factor = 1.0 / int(self.num_batches_tracked)
        use_batch_stats = self.training or self.running_mean is None
        keep_stats = not self.training or self.track_running_stats
        return F.batch_norm(input, self.running_mean if keep_stats else None,
                            self.running_var if keep_stats else None, self.weight, self.bias,
                            use_batch_stats, factor, self.eps)

    def extra_repr(self) -> str:
        return (f"{self.num_features}, eps={self.eps}, momentum={self.momentum}, "
                f"affine={self.affine}, bias={self.bias is not None}, "
                f"track_running_stats={self.track_running_stats}")


class BatchNorm1d(_BatchNorm):
    """Batch normalisation of (N, C) or (N, C, L) inputs."""

    _expected_dims = (2, 3)


class BatchNorm2d(_BatchNorm):
    """Batch normalisation of (N, C, H, W) inputs."""

    _expected_dims = (4,)


class BatchNorm3d(_BatchNorm):
    """Batch normalisation of (N, C, D, H, W) inputs."""

    _expected_dims = (5,)


class _InstanceNorm(_BatchNorm):
    """Normalises each channel of each sample over its spatial dims; running statistics and
    the affine parameters are off by default."""

    def __init__(self, num_features: int, eps: float = 1e-5, momentum: float = 0.1,
                 affine: bool = False, track_running_stats: bool = False, device=None,
                 dtype=None, *, bias: bool = True) -> None:
        super().__init__(num_features, eps, momentum, affine, track_running_stats, dtype=dtype,
                         bias=bias)

    def forward(self, input: Tensor) -> Tensor:
        self._check_input_dim(input)
        unbatched = input.dim() == self._expected_dims[0]
        channels = input.shape[0 if unbatched else 1]
        if channels != self.num_features and self.affine:
            raise ValueError(f"expected input's size at dim={0 if unbatched else 1} to match "
                             f"num_features ({self.num_features}), but got: {channels}.")
        x = input.unsqueeze(0) if unbatched else input
        out = F.instance_norm(x, self.running_mean, self.running_var, self.weight, self.bias,
                              self.training or not self.track_running_stats,
                              0.0 if self.momentum is None else self.momentum, self.eps)
        return out.squeeze(0) if unbatched else out


class InstanceNorm1d(_InstanceNorm):
    """Instance normalisation of (N, C, L) or (C, L) inputs."""

    _expected_dims = (2, 3)


class InstanceNorm2d(_InstanceNorm):
    """Instance normalisation of (N, C, H, W) or (C, H, W) inputs."""

    _expected_dims = (3, 4)


class InstanceNorm3d(_InstanceNorm):
    """Instance normalisation of (N, C, D, H, W) or (C, D, H, W) inputs."""

    _expected_dims = (4, 5)


class LayerNorm(Module):
    """Normalises over the trailing ``normalized_shape`` dims, then scales and shifts."""

    def __init__(self, normalized_shape, eps: float = 1e-5, elementwise_affine: bool = True,
                 bias: bool = True, device=None, dtype=None) -> None:
        super().__init__()
        if isinstance(normalized_shape, int):
            normalized_shape = (normalized_shape,)
        self.normalized_shape = tuple(normalized_shape)
        self.eps, self.elementwise_affine = eps, elementwise_affine
        _affine_parameters(self, self.normalized_shape, elementwise_affine, bias, dtype)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        _reset_affine(self)

    def forward(self, input: Tensor) -> Tensor:
        return F.layer_norm(input, self.normalized_shape, self.weight, self.bias, self.eps)

    def extra_repr(self) -> str:
        return (f"{self.normalized_shape}, eps={self.eps}, "
                f"elementwise_affine={self.elementwise_affine}, bias={self.bias is not None}")


class GroupNorm(Module):
    """Normalises each group of channels over its channels and spatial dims."""

    def __init__(self, num_groups: int, num_channels: int, eps: float = 1e-5, affine: bool = True,
                 device=None, dtype=None, *, bias: bool = True) -> None:
        super().__init__()
        if num_channels % num_groups != 0:
            raise ValueError("num_channels must be divisible by num_groups")
        self.num_groups, self.num_channels = num_groups, num_channels
        self.eps, self.affine = eps, affine
        _affine_parameters(self, (num_channels,), affine, bias, dtype)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        _reset_affine(self)

    def forward(self, input: Tensor) -> Tensor:
        return F.group_norm(input, self.num_groups, self.weight, self.bias, self.eps)

    def extra_repr(self) -> str:
        return (f"{self.num_groups}, {self.num_channels}, eps={self.eps}, affine={self.affine}, "
                f"bias={self.bias is not None}")


class RMSNorm(Module):
    """x / sqrt(mean(x²) + eps) over the trailing ``normalized_shape`` dims, then scaled.

    ``eps=None`` means the machine epsilon of the input's dtype."""

    def __init__(self, normalized_shape, eps: float | None = None,
                 elementwise_affine: bool = True, device=None, dtype=None) -> None:
        super().__init__()
        if isinstance(normalized_shape, int):
            normalized_shape = (normalized_shape,)
        self.normalized_shape = tuple(normalized_shape)
        self.eps, self.elementwise_affine = eps, elementwise_affine
        _affine_parameters(self, self.normalized_shape, elementwise_affine, False, dtype)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        _reset_affine(self)

    def forward(self, input: Tensor) -> Tensor:
        return F.rms_norm(input, self.normalized_shape, self.weight, self.eps)

    def extra_repr(self) -> str:
        return (f"{self.normalized_shape}, eps={self.eps}, "
                f"elementwise_affine={self.elementwise_affine}")


class LocalResponseNorm(Module):
    """Normalises each channel by the energy of its ``size`` neighbouring channels."""

    def __init__(self, size: int, alpha: float = 1e-4, beta: float = 0.75, k: float = 1.0) -> None:
        super().__init__()
        self.size, self.alpha, self.beta, self.k = size, alpha, beta, k

    def forward(self, input: Tensor) -> Tensor:
        return F.local_response_norm(input, self.size, self.alpha, self.beta, self.k)

    def extra_repr(self) -> str:
        return f"{self.size}, alpha={self.alpha}, beta={self.beta}, k={self.k}"


class CrossMapLRN2d(LocalResponseNorm):
    """Local response normalisation of (N, C, H, W) inputs across channels (Lua Torch's
    windows: channel c sums channels up to c + (size - 1) // 2, and channel 0 always)."""

    def __init__(self, size: int, alpha: float = 1e-4, beta: float = 0.75, k: float = 1) -> None:
        super().__init__(size, alpha, beta, k)

    def forward(self, input: Tensor) -> Tensor:
        if input.dim() != 4:
            raise ValueError(f"CrossMapLRN2d: Expected input to be 4D, got {input.dim()}D "
                             "instead.")
        channels = input.shape[1]
        pre = (self.size - 1) // 2 + 1
        square = input * input
        total = square.cumsum(1)
        upper = [min(c + pre - 1, channels - 1) for c in range(channels)]
        # PyTorch's running window drops channels 1.. as it slides, never channel 0.
        lower = [max(c - pre, 0) for c in range(channels)]
        dropped = (total[:, lower] - square[:, :1]) * const(
            xp.array([c > pre for c in range(channels)], dtype=input._data.dtype)
            .reshape(channels, 1, 1))
        scale = (total[:, upper] - dropped) * (self.alpha / self.size) + self.k
        return input * scale ** -self.beta
