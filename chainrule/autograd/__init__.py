"""Reverse-mode automatic differentiation: backward, grad, grad modes and custom Functions."""

from __future__ import annotations

from . import anomaly_mode, engine, forward_ad, functional, graph
from ._backward import backward, grad
from .anomaly_mode import (
    detect_anomaly,
    is_anomaly_check_nan_enabled,
    is_anomaly_enabled,
    set_detect_anomaly,
)
from .function import Function, FunctionCtx, NestedIOFunction, once_differentiable
from .grad_mode import _is_multithreading_enabled as is_multithreading_enabled
from .grad_mode import (
    enable_grad,
    enforce_grad_layout_policy,
    inference_mode,
    is_grad_enabled,
    is_inference_mode_enabled,
    no_grad,
    set_grad_enabled,
    set_multithreading_enabled,
)
from .gradcheck import GradcheckError, gradcheck, gradgradcheck
from .graph import SavedTensor

__all__ = ["backward", "grad", "Function", "FunctionCtx", "once_differentiable", "no_grad",
           "enable_grad", "set_grad_enabled", "inference_mode", "is_grad_enabled",
           "is_inference_mode_enabled", "gradcheck", "gradgradcheck", "GradcheckError", "graph",
           "forward_ad", "functional", "detect_anomaly", "set_detect_anomaly",
           "is_anomaly_enabled", "is_anomaly_check_nan_enabled", "anomaly_mode", "profiler",
           "Variable", "set_multithreading_enabled", "enforce_grad_layout_policy",
           "NestedIOFunction", "grad_mode", "variable"]


def is_view_replay_enabled() -> bool:
    """True: after an in-place change of its base, chainrule remakes a view by replaying the
    ops that made it (PyTorch does so only when view replay is enabled)."""
    return True


from . import profiler, profiler_legacy, profiler_util  # noqa: E402  (top layer)
from .profiler import (  # noqa: E402
    DeviceType,
    ProfilerActivity,
    ProfilerState,
    kineto_available,
)
from .variable import Variable  # noqa: E402  (over the factories)


def variable(*args, **kwargs):
    """Removed long ago (it hides the module autograd.variable, as in PyTorch): raises."""
    raise RuntimeError("torch.autograd.variable(...) is deprecated, use torch.tensor(...) instead")
