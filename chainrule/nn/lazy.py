"""Lazy modules: shapes inferred from the first input (LazyModuleMixin), and the lazy
BatchNorm1d/2d/3d and InstanceNorm1d/2d/3d."""

from __future__ import annotations

from .. import _creation
from .._backend import int64
from ..autograd.grad_mode import no_grad
from ..tensor import Tensor
from .normalization import (
    BatchNorm1d,
    BatchNorm2d,
    BatchNorm3d,
    InstanceNorm1d,
    InstanceNorm2d,
    InstanceNorm3d,
)
from .parameter import UninitializedBuffer, UninitializedParameter, is_lazy

__all__ = ["LazyModuleMixin", "LazyBatchNorm1d", "LazyBatchNorm2d", "LazyBatchNorm3d",
           "LazyInstanceNorm1d", "LazyInstanceNorm2d", "LazyInstanceNorm3d"]


class LazyModuleMixin:
    """A module whose parameters are UninitializedParameters until its first forward, which
    calls ``initialize_parameters(input)`` and then turns the module into ``cls_to_become``."""

    cls_to_become: type | None = None

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self._initialize_hook = self.register_forward_pre_hook(LazyModuleMixin._infer_parameters,
                                                               with_kwargs=True)

    def initialize_parameters(self, *args, **kwargs) -> None:
        """Materialize the parameters from the first input's shape (subclasses say how)."""
        raise NotImplementedError(
            f"initialize_parameters is not implemented for {type(self).__name__}")

    def has_uninitialized_params(self) -> bool:
        """Whether any parameter or buffer is still uninitialized."""
        return any(is_lazy(t) for t in (*self._parameters.values(), *self._buffers.values()))

    @staticmethod
    def _infer_parameters(module, args: tuple, kwargs: dict) -> None:
        module.initialize_parameters(*args, **kwargs)
        if module.has_uninitialized_params():
            raise RuntimeError(f"module {module._get_name()} has not been fully initialized")
        module._initialize_hook.remove()
        del module._initialize_hook
        if module.cls_to_become is not None:
            module.__class__ = module.cls_to_become


class _LazyNormBase(LazyModuleMixin):
    """A batch or instance norm whose ``num_features`` is the first input's dim 1."""

    def __init__(self, eps: float = 1e-5, momentum: float | None = 0.1, affine: bool = True,
                 track_running_stats: bool = True, device=None, dtype=None, *,
                 bias: bool = True) -> None:
        super().__init__(0, eps, momentum, False, False, dtype=dtype, bias=False)
        self.affine, self.track_running_stats = affine, track_running_stats
        if affine:
            self.weight = UninitializedParameter(dtype=dtype)
            if bias:
                self.bias = UninitializedParameter(dtype=dtype)
        if track_running_stats:
            self.running_mean = UninitializedBuffer(dtype=dtype)
            self.running_var = UninitializedBuffer(dtype=dtype)
            self.num_batches_tracked = _creation.tensor(0, dtype=int64)

    def reset_parameters(self) -> None:
        if not self.has_uninitialized_params() and self.num_features != 0:
            super().reset_parameters()

    def initialize_parameters(self, input: Tensor) -> None:
        if not self.has_uninitialized_params():
            return
        with no_grad():
            self.num_features = input.shape[1]
            for name in ("weight", "bias", "running_mean", "running_var"):
                tensor = getattr(self, name)
                if tensor is not None:
                    tensor.materialize((self.num_features,))
            self.reset_parameters()


class LazyBatchNorm1d(_LazyNormBase, BatchNorm1d):
    """BatchNorm1d with ``num_features`` inferred from the first input."""

    cls_to_become = BatchNorm1d


class LazyBatchNorm2d(_LazyNormBase, BatchNorm2d):
    """BatchNorm2d with ``num_features`` inferred from the first input."""

    cls_to_become = BatchNorm2d


class LazyBatchNorm3d(_LazyNormBase, BatchNorm3d):
    """BatchNorm3d with ``num_features`` inferred from the first input."""

    cls_to_become = BatchNorm3d


class LazyInstanceNorm1d(_LazyNormBase, InstanceNorm1d):
    """InstanceNorm1d with ``num_features`` inferred from the first input."""

    cls_to_become = InstanceNorm1d


class LazyInstanceNorm2d(_LazyNormBase, InstanceNorm2d):
    """InstanceNorm2d with ``num_features`` inferred from the first input."""

    cls_to_become = InstanceNorm2d


class LazyInstanceNorm3d(_LazyNormBase, InstanceNorm3d):
    """InstanceNorm3d with ``num_features`` inferred from the first input."""

    cls_to_become = InstanceNorm3d
