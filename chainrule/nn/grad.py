"""Gradients of convolutions with respect to their input or weight (torch.nn.grad)."""

from __future__ import annotations

from .. import _creation
from ..autograd import grad as _grad
from ..autograd.grad_mode import enable_grad
from ..tensor import Tensor
from . import functional as F

__all__ = ["conv1d_input", "conv1d_weight", "conv2d_input", "conv2d_weight", "conv3d_input",
           "conv3d_weight"]


def _vjp(conv, input: Tensor, weight: Tensor, grad_output: Tensor, wrt: Tensor, stride, padding,
         dilation, groups) -> Tensor:
    # The convolution's own VJP, kept differentiable in weight, input and grad_output.
    with enable_grad():
        out = conv(input, weight, None, stride, padding, dilation, groups)
        return _grad(out, wrt, grad_output, create_graph=True)[0]


def _input_grad(conv, input_size, weight, grad_output, stride, padding, dilation, groups):
    zeros = _creation.zeros(*input_size, dtype=grad_output.dtype).requires_grad_()
    return _vjp(conv, zeros, weight, grad_output, zeros, stride, padding, dilation, groups)


def _weight_grad(conv, input, weight_size, grad_output, stride, padding, dilation, groups):
    zeros = _creation.zeros(*weight_size, dtype=grad_output.dtype).requires_grad_()
    return _vjp(conv, input, zeros, grad_output, zeros, stride, padding, dilation, groups)


def conv1d_input(input_size, weight, grad_output, stride=1, padding=0, dilation=1,
                 groups=1) -> Tensor:
    """Compute the gradient of conv1d with respect to the input of the convolution."""
    return _input_grad(F.conv1d, input_size, weight, grad_output, stride, padding, dilation,
                       groups)


def conv1d_weight(input, weight_size, grad_output, stride=1, padding=0, dilation=1,
                  groups=1) -> Tensor:
    """Compute the gradient of conv1d with respect to the weight of the convolution."""
    return _weight_grad(F.conv1d, input, weight_size, grad_output, stride, padding, dilation,
                        groups)


def conv2d_input(input_size, weight, grad_output, stride=1, padding=0, dilation=1,
                 groups=1) -> Tensor:
    """Compute the gradient of conv2d with respect to the input of the convolution."""
    return _input_grad(F.conv2d, input_size, weight, grad_output, stride, padding, dilation,
                       groups)


def conv2d_weight(input, weight_size, grad_output, stride=1, padding=0, dilation=1,
                  groups=1) -> Tensor:
    """Compute the gradient of conv2d with respect to the weight of the convolution."""
    return _weight_grad(F.conv2d, input, weight_size, grad_output, stride, padding, dilation,
                        groups)


def conv3d_input(input_size, weight, grad_output, stride=1, padding=0, dilation=1,
                 groups=1) -> Tensor:
    """Compute the gradient of conv3d with respect to the input of the convolution."""
    return _input_grad(F.conv3d, input_size, weight, grad_output, stride, padding, dilation,
                       groups)


def conv3d_weight(input, weight_size, grad_output, stride=1, padding=0, dilation=1,
                  groups=1) -> Tensor:
    """Compute the gradient of conv3d with respect to the weight of the convolution."""
    return _weight_grad(F.conv3d, input, weight_size, grad_output, stride, padding, dilation,
                        groups)
