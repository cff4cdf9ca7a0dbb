"""Folding an eval-mode batch norm into the convolution or linear layer before it."""

from __future__ import annotations

import copy

from ..._creation import ones_like, zeros_like
from ...autograd.grad_mode import no_grad
from ...ops.elementwise import rsqrt
from ...tensor import Tensor
from ..parameter import Parameter

__all__ = ["fuse_conv_bn_eval", "fuse_conv_bn_weights", "fuse_linear_bn_eval",
           "fuse_linear_bn_weights"]


def fuse_conv_bn_eval(conv, bn, transpose: bool = False):
    """A copy of ``conv`` whose weight and bias apply ``bn``'s eval-mode normalization too."""
    assert not (conv.training or bn.training), "Fusion only for eval!"
    fused = copy.deepcopy(conv)
    assert bn.running_mean is not None and bn.running_var is not None
    fused.weight, fused.bias = fuse_conv_bn_weights(
        fused.weight, fused.bias, bn.running_mean, bn.running_var, bn.eps, bn.weight, bn.bias,
        transpose)
    return fused


def fuse_conv_bn_weights(conv_w: Tensor, conv_b: Tensor | None, bn_rm: Tensor, bn_rv: Tensor,
                         bn_eps: float, bn_w: Tensor | None, bn_b: Tensor | None,
                         transpose: bool = False) -> tuple[Parameter, Parameter]:
    """Convolution weight and bias that include a batch norm with these statistics."""
    dtype = conv_w.dtype
    bias_dtype = conv_b.dtype if conv_b is not None else dtype
    conv_b = zeros_like(bn_rm) if conv_b is None else conv_b
    bn_w = ones_like(bn_rm) if bn_w is None else bn_w
    bn_b = zeros_like(bn_rm) if bn_b is None else bn_b
    scale = bn_w * rsqrt(bn_rv + bn_eps)
    # the channel dim of the weight: out channels first, or second for a transposed conv
    shape = ([1, -1] if transpose else [-1, 1]) + [1] * (conv_w.dim() - 2)
    with no_grad():
        fused_w = (conv_w * scale.reshape(shape)).to(dtype)
        fused_b = ((conv_b - bn_rm) * scale + bn_b).to(bias_dtype)
    return Parameter(fused_w, conv_w.requires_grad), Parameter(fused_b, conv_b.requires_grad)


def fuse_linear_bn_eval(linear, bn):
    """A copy of ``linear`` whose weight and bias apply ``bn``'s eval-mode normalization too."""
    assert not (linear.training or bn.training), "Fusion only for eval!"
    fused = copy.deepcopy(linear)
    assert linear.out_features == bn.num_features or bn.num_features == 1, (
        "To fuse, linear.out_features == bn.num_features or bn.num_features == 1")
    assert bn.running_mean is not None and bn.running_var is not None
    fused.weight, fused.bias = fuse_linear_bn_weights(
        fused.weight, fused.bias, bn.running_mean, bn.running_var, bn.eps, bn.weight, bn.bias)
    return fused


def fuse_linear_bn_weights(linear_w: Tensor, linear_b: Tensor | None, bn_rm: Tensor,
                           bn_rv: Tensor, bn_eps: float, bn_w: Tensor,
                           bn_b: Tensor) -> tuple[Parameter, Parameter]:
    """Linear weight and bias that include a batch norm with these statistics."""
    linear_b = zeros_like(bn_rm) if linear_b is None else linear_b
    scale = bn_w * rsqrt(bn_rv + bn_eps)
    with no_grad():
        fused_w = linear_w * scale.unsqueeze(-1)
        fused_b = (linear_b - bn_rm) * scale + bn_b
    return Parameter(fused_w, linear_w.requires_grad), Parameter(fused_b, linear_b.requires_grad)
