"""Linear maps: linear (a fused matmul and bias, a hot op) and bilinear (a composite)."""

from __future__ import annotations

import math

from .._backend import xp
from .._dispatch import apply
from .._validation import check_expand
from ..tensor import Tensor
from ._nnutil import c_type, sum_terms
from ._registry import defop

# ---- linear ------------------------------------------------------------------------------------


def _linear(input, weight, bias):
    if input.ndim > 2:  # one 2-D product: NumPy's stacked matmul is ~10x slower here
        out = xp.matmul(input.reshape(-1, input.shape[-1]), weight.T)
        out = out.reshape(input.shape[:-1] + out.shape[-1:])
    else:
        out = xp.matmul(input, weight.T)
    if bias is not None:
        out += bias
    return out


def _linear_weight_grad(g, input):
    if g.ndim == 2:
        return g.mT @ input
    return g.reshape(-1, g.shape[-1]).mT @ input.reshape(-1, input.shape[-1])


def _linear_jvp(t_input, t_weight, t_bias, input, weight):
    return sum_terms(
        None if t_input is None else apply(LINEAR, t_input, weight, None),
        None if t_weight is None else apply(LINEAR, input, t_weight, None),
        t_bias,
    )


def _linear_batch(op, args, flags, size, params):
    input, weight, bias = args
    batched_input, batched_weight, batched_bias = flags
    lead = tuple(input.shape[1:-1] if batched_input else input.shape[:-1])  # an example's rows
    if batched_bias:  # (B, out) lined up with the output (B, *lead, out)
        bias = bias.reshape((size,) + (1,) * len(lead) + tuple(bias.shape[1:]))
    if not batched_weight:
        if batched_input:  # the examples are more rows: one matmul, the bias added in place
            return apply(op, input, weight, bias)
        return apply(op, input, weight, None) + bias
    # A weight per example: one batched matmul over (B or 1, rows, in).
    rows = input.reshape((size if batched_input else 1, -1, input.shape[-1]))
    out = (rows @ weight.mT).reshape((size,) + lead + (weight.shape[1],))
    return out if bias is None else out + bias


# Fused matmul + bias (a hot op): one BLAS call and an in-place add; the bias gradient is g,
# summed over the batch dims by the engine's un-broadcast.
LINEAR = defop(
    "linear",
    _linear,
    ("input", "weight", "bias"),
    (lambda g, weight: g @ weight, _linear_weight_grad, lambda g: g),
    backward_name="AddmmBackward0",
    jvp=_linear_jvp,
    batch=_linear_batch,
)


def linear(input: Tensor, weight: Tensor, bias: Tensor | None = None) -> Tensor:
    """input @ weight.T + bias."""
    if weight.ndim != 2:
        out = input @ weight.mT if weight.ndim > 1 else input @ weight
        return out if bias is None else out + bias
    k = input.shape[-1] if input.ndim else 1
    if k != weight.shape[1]:
        rows = math.prod(input.shape[:-1]) if input.ndim > 1 else 1
        raise RuntimeError(f"mat1 and mat2 shapes cannot be multiplied ({rows}x{k} and "
                           f"{weight.shape[1]}x{weight.shape[0]})")
    for other in (weight, bias):
        if other is not None and other._data.dtype != input._data.dtype:
            raise RuntimeError("expected m1 and m2 to have the same dtype, but got: "
                               f"{c_type(input)} != {c_type(other)}")
    if bias is not None and bias.ndim == 1 and bias.shape[0] not in (1, weight.shape[0]):
        check_expand((math.prod(input.shape[:-1]), weight.shape[0]), tuple(bias.shape))
    return apply(LINEAR, input, weight, bias)


def bilinear(input1, input2, weight, bias=None) -> Tensor:
    """y_k = input1^T weight_k input2 + bias_k."""
    out, in1, in2 = weight.shape
    if input1.shape[-1] != in1:
        raise RuntimeError(f"bilinear(): input1 size does not match weight size: got "
                           f"{input1.shape[-1]} but expected {in1}")
    if input2.shape[-1] != in2:
        raise RuntimeError(f"bilinear(): input2 size does not match weight size: got "
                           f"{input2.shape[-1]} but expected {in2}")
    left = input1 @ weight.permute(1, 0, 2).reshape(in1, out * in2)
    left = left.reshape(tuple(left.shape[:-1]) + (out, in2))
    y = (left * input2.unsqueeze(-2)).sum(-1)
    return y if bias is None else y + bias


FUNCTIONS = {"bilinear": bilinear}
METHODS: dict = {}
