"""Normalisation: layer, batch, instance and group norm."""

from __future__ import annotations

import math

from .._backend import xp
from .._batching import batch_dims, on_values
from .._dispatch import apply
from ..autograd.grad_mode import no_grad
from ..tensor import Tensor
from ._nnutil import check_float, sum_terms
from ._registry import defop

# ---- normalisation -----------------------------------------------------------------------------
# STANDARDIZE gives xhat = (x - mean) * rstd over some dims, rstd = 1/sqrt(var + eps), with the
# mean and rstd as extra outputs (for running statistics). Its rule is the classic normalisation
# gradient, written in its saved outputs; it also takes the gradients of mean and rstd, so the
# rule is exact and higher orders follow. The affine records (layer, batch, group norm: PyTorch's
# grad_fn names) scale and shift xhat. The user's output is never saved (an in-place activation
# after a norm layer stays legal, as in PyTorch).


def _standardize(input, dims, eps):
    n = math.prod(input.shape[d] for d in dims)
    mean = input.sum(axis=dims, keepdims=True)
    mean /= max(n, 1)
    xhat = input - mean
    # The sum of squares without a squared temporary.
    letters = "abcdefghijklmnopqrstuvwxyz"[: input.ndim]
    kept = "".join(c for i, c in enumerate(letters) if i not in dims)
    var = xp.einsum(f"{letters},{letters}->{kept}", xhat, xhat).reshape(mean.shape)
    var /= max(n, 1)
    rstd = 1 / xp.sqrt(var + eps)
    xhat *= rstd
    return xhat, mean, rstd


def _standardize_grad(grads, out, dims):
    g_hat, g_mean, g_rstd = grads
    xhat, mean, rstd = out
    n = math.prod(xhat.shape[d] for d in dims)
    return sum_terms(
        # rstd (g - mean(g) - xhat mean(g xhat))
        None if g_hat is None else rstd * (
            g_hat - g_hat.mean(dims, keepdim=True)
            - xhat * (g_hat * xhat).mean(dims, keepdim=True)),
        None if g_mean is None else (g_mean / n).expand(xhat.shape),
        # d rstd / dx = -rstd^3 (x - mean) / n = -rstd^2 xhat / n
        None if g_rstd is None else xhat * (g_rstd * rstd * rstd * (-1.0 / n)),
    )


def _standardize_jvp(t_input, out, dims):
    xhat, mean, rstd = out
    dot = (xhat * t_input).mean(dims, keepdim=True)
    t_mean = t_input.mean(dims, keepdim=True)
    return rstd * (t_input - t_mean - xhat * dot), t_mean, -(rstd * rstd) * dot


STANDARDIZE = defop(
    "standardize",
    _standardize,
    ("input",),
    (_standardize_grad,),
    n_outputs=3,
    backward_name="NativeStandardizeBackward0",
    jvp=_standardize_jvp,
    batch=batch_dims("dims"),  # each example's statistics over its own dims
)


def _affine(input, weight, bias, affine_shape):
    if weight is None:
        out = input.copy()
    else:
        out = input * weight.reshape(affine_shape)
    if bias is not None:
        out += bias.reshape(affine_shape)
    return out


def _scaled(t, weight, affine_shape):
    return t if weight is None else t * weight.reshape(affine_shape)


_AFFINE_RULES = (
    lambda g, weight, affine_shape: _scaled(g, weight, affine_shape),
    lambda g, input, affine_shape, weight_shape: (
        (g * input).sum_to_size(affine_shape).reshape(weight_shape)),
    lambda g, affine_shape, bias_shape: g.sum_to_size(affine_shape).reshape(bias_shape),
)


def _affine_jvp(t_input, t_weight, t_bias, input, weight, affine_shape):
    return sum_terms(
        None if t_input is None else _scaled(t_input, weight, affine_shape),
        None if t_weight is None else input * t_weight.reshape(affine_shape),
        None if t_bias is None else t_bias.reshape(affine_shape),
    )


def _affine_batch(op, args, flags, size, params):
    # affine_shape lines up with the trailing dims, so shared parameters broadcast over the
    # batch as they are; an example's own weight or bias gets the batch in front.
    input, weight, bias = args
    batched_input, batched_weight, batched_bias = flags
    if not (batched_weight or batched_bias):
        return apply(op, input, weight, bias, **params)
    affine = tuple(params["affine_shape"])
    ndim = input.ndim - 1 if batched_input else input.ndim

    def per_example(t):
        return t.reshape((size,) + (1,) * (ndim - len(affine)) + affine)

    if batched_weight:
        out = input * per_example(weight)
        if bias is not None:
            out = out + (per_example(bias) if batched_bias else bias.reshape(affine))
        return out
    return apply(op, input, weight, None, **params) + per_example(bias)


def _norm_record(name: str, backward_name: str):
    return defop(name, _affine, ("input", "weight", "bias"), _AFFINE_RULES,
                 backward_name=backward_name, jvp=_affine_jvp, batch=_affine_batch)


LAYER_NORM = _norm_record("layer_norm", "NativeLayerNormBackward0")
BATCH_NORM = _norm_record("batch_norm", "NativeBatchNormBackward0")
GROUP_NORM = _norm_record("group_norm", "NativeGroupNormBackward0")


# ---- public functions ---------------------------------------------------------------------------


def layer_norm(input, normalized_shape, weight=None, bias=None, eps: float = 1e-5) -> Tensor:
    """Normalise over the trailing ``normalized_shape`` dims, then scale and shift."""
    shape = (normalized_shape,) if isinstance(normalized_shape, int) else tuple(normalized_shape)
    k = len(shape)
    if k == 0 or tuple(input.shape[input.ndim - k:]) != shape or input.ndim < k:
        raise RuntimeError(f"Given normalized_shape={list(shape)}, expected input with shape "
                           f"[*, {', '.join(map(str, shape))}], but got input of size"
                           f"{list(input.shape)}")
    for name, t in (("weight", weight), ("bias", bias)):
        if t is not None and tuple(t.shape) != shape:
            raise RuntimeError(f"Expected {name} to be of same shape as normalized_shape, but "
                               f"got {name} of shape {list(t.shape)} and normalized_shape = "
                               f"{list(shape)}")
    check_float(input, "layer_norm")
    xhat = apply(STANDARDIZE, input, dims=tuple(range(input.ndim - k, input.ndim)),
                 eps=float(eps))[0]
    return apply(LAYER_NORM, xhat, weight, bias, affine_shape=shape)


def _channel_shape(input: Tensor) -> tuple[int, ...]:
    return (input.shape[1],) + (1,) * (input.ndim - 2)


def _statistics(mean: Tensor, rstd: Tensor):
    """The batch statistics outside the graph (under vmap one per example); tensors, so that
    the running-statistics update is ops (chainrule.compile replays them)."""
    return mean.detach(), rstd.detach()


def _update_running(running, new, momentum: float) -> None:
    """running = (1 - momentum) * running + momentum * new, in place (no gradient)."""
    with no_grad():  # one write (one version bump), as PyTorch's fused update
        running.copy_(running * (1 - momentum) + new.to(running.dtype) * momentum)


_RUNNING_UNBATCHED = (
    "Batch norm got a batched tensor as input while the running_mean or running_var, which will "
    "be updated in place, were not batched.\nIf you are using a module and do not need eval "
    "mode, please set `track_running_stats` to be False.If you are using a prebuilt module and "
    "do not need eval mode, please see the functorch website for resources on how to patch your "
    "module to work with vmap")


def _check_running(input, running_mean, running_var) -> None:
    """The running statistics take values computed from input, in place (under vmap, each
    example's go to running statistics of its own)."""
    for running in (running_mean, running_var):
        if running is not None:
            input._check_write(running, RuntimeError, _RUNNING_UNBATCHED)


def batch_norm(input, running_mean, running_var, weight=None, bias=None, training: bool = False,
               momentum: float = 0.1, eps: float = 1e-5) -> Tensor:
    """Normalise each channel (dim 1) by batch statistics (training, updating the running ones
    in place) or by the running statistics (eval)."""
    if input.ndim < 2 and input.numel() == 0:
        # PyTorch reads a 1-D input as having no channels: an empty one normalises to itself
        for name, t in (("running_mean", running_mean), ("running_var", running_var),
                        ("weight", weight), ("bias", bias)):
            if t is not None and t.numel() != 0:
                raise RuntimeError(f"{name} should contain 0 elements not {t.numel()}")
        return input * 1
    if input.ndim < 2:
        raise ValueError(f"expected 2D or more input (got {input.ndim}D input)")
    channels = input.shape[1]
    for name, t in (("running_mean", running_mean), ("running_var", running_var),
                    ("weight", weight), ("bias", bias)):
        if t is not None and t.numel() != channels:
            raise RuntimeError(f"{name} should contain {channels} elements not {t.numel()}")
    check_float(input, "batch_norm")
    affine = _channel_shape(input)
    dims = (0,) + tuple(range(2, input.ndim))
    if training:
        count = input.numel() // max(channels, 1)
        if count <= 1:
            raise ValueError("Expected more than 1 value per channel when training, got input "
                             f"size {input.shape!r}".replace("Size(", "torch.Size(")
                             .replace("torch.torch.", "torch."))
        _check_running(input, running_mean, running_var)
        xhat, mean, rstd = apply(STANDARDIZE, input, dims=dims, eps=float(eps))
        mean, rstd = _statistics(mean, rstd)
        if running_mean is not None:
            _update_running(running_mean, mean.reshape(channels), momentum)
        if running_var is not None:
            var = 1 / (rstd.reshape(channels) ** 2) - eps
            _update_running(running_var, var * (count / (count - 1)), momentum)
    else:
        if running_mean is None or running_var is None:
            raise RuntimeError(f"running_{'mean' if running_mean is None else 'var'} must be "
                               "defined in evaluation mode")
        dtype = input._data.dtype
        # On the statistics' arrays, outside the graph (under vmap, each example's own)
        mean = on_values(lambda m, lead: m.astype(dtype, copy=False).reshape(
            m.shape[:lead] + affine), running_mean)
        rstd = on_values(lambda v, lead: (1 / xp.sqrt(v.astype(dtype) + eps)).reshape(
            v.shape[:lead] + affine), running_var)
        xhat = (input - mean) * rstd
    return apply(BATCH_NORM, xhat, weight, bias, affine_shape=affine)


def instance_norm(input, running_mean=None, running_var=None, weight=None, bias=None,
                  use_input_stats: bool = True, momentum: float = 0.1,
                  eps: float = 1e-5) -> Tensor:
    """Normalise each channel of each sample over its spatial dims."""
    if input.ndim < 3:
        raise ValueError(f"expected 3D or more input (got {input.ndim}D input)")
    check_float(input, "instance_norm")
    affine = _channel_shape(input)
    if not use_input_stats:
        return batch_norm(input, running_mean, running_var, weight, bias, False, momentum, eps)
    count = math.prod(input.shape[2:])
    if count <= 1:
        raise ValueError("Expected more than 1 spatial element when training, got input size "
                         f"torch.Size({list(input.shape)})")
    _check_running(input, running_mean, running_var)
    xhat, mean, rstd = apply(STANDARDIZE, input, dims=tuple(range(2, input.ndim)),
                             eps=float(eps))
    mean, rstd = _statistics(mean, rstd)
    if running_mean is not None:
        _update_running(running_mean, mean.mean(0).reshape(-1), momentum)
    if running_var is not None:
        var = (1 / (rstd ** 2) - eps) * (count / (count - 1))
        _update_running(running_var, var.mean(0).reshape(-1), momentum)
    return apply(BATCH_NORM, xhat, weight, bias, affine_shape=affine)


def group_norm(input, num_groups: int, weight=None, bias=None, eps: float = 1e-5) -> Tensor:
    """Normalise each group of channels of each sample, then scale and shift per channel."""
    if input.ndim < 2:
        raise RuntimeError(f"Expected at least 2 dimensions for input tensor but received "
                           f"{input.ndim}")
    n, channels = input.shape[:2]
    if channels % num_groups:
        raise RuntimeError("Expected number of channels in input to be divisible by "
                           f"num_groups, but got input of shape {list(input.shape)} and "
                           f"num_groups={num_groups}")
    check_float(input, "group_norm")
    xhat = apply(STANDARDIZE, input.reshape(n, num_groups, -1), dims=(2,), eps=float(eps))[0]
    return apply(GROUP_NORM, xhat.reshape(input.shape), weight, bias,
                 affine_shape=_channel_shape(input))


def _torch_batch_norm(input, weight, bias, running_mean, running_var, training, momentum, eps,
                      cudnn_enabled=True) -> Tensor:
    """torch.batch_norm, with its own argument order."""
    return batch_norm(input, running_mean, running_var, weight, bias, training, momentum, eps)


def _torch_layer_norm(input, normalized_shape, weight=None, bias=None, eps=1e-5,
                      cudnn_enable=True) -> Tensor:
    """torch.layer_norm."""
    return layer_norm(input, normalized_shape, weight, bias, eps)


def _torch_group_norm(input, num_groups, weight=None, bias=None, eps=1e-5,
                      cudnn_enabled=True) -> Tensor:
    """torch.group_norm."""
    return group_norm(input, num_groups, weight, bias, eps)


FUNCTIONS = {
    "batch_norm": _torch_batch_norm,
    "layer_norm": _torch_layer_norm,
    "group_norm": _torch_group_norm,
}
METHODS: dict = {}
