"""Linear algebra: matmul in its 1-D, 2-D and batched forms."""

from __future__ import annotations

from .._backend import xp
from .._dispatch import apply
from ..tensor import Tensor
from ._registry import defop


def _mm_rules():
    return (lambda g, other: g @ other.mT, lambda g, input: input.mT @ g)


MM = defop("mm", xp.matmul, ("input", "other"), _mm_rules(), promote=True, jvp="multilinear")
BMM = defop(
    "matmul",
    xp.matmul,
    ("input", "other"),
    _mm_rules(),
    promote=True,
    backward_name="BmmBackward0",
    jvp="multilinear",
)
DOT = defop(
    "dot",
    xp.matmul,
    ("input", "other"),
    (lambda g, other: g * other, lambda g, input: g * input),
    promote=True,
    jvp="multilinear",
)
# (.., m, k) @ (k,) -> (.., m)
MV = defop(
    "mv",
    xp.matmul,
    ("input", "other"),
    (
        lambda g, other: g.unsqueeze(-1) * other,
        lambda g, input: (input.mT @ g.unsqueeze(-1)).squeeze(-1),
    ),
    promote=True,
    jvp="multilinear",
)
# (k,) @ (.., k, n) -> (.., n)
VM = defop(
    "vm",
    xp.matmul,
    ("input", "other"),
    (
        lambda g, other: (g.unsqueeze(-2) @ other.mT).squeeze(-2),
        lambda g, input: input.unsqueeze(-1) * g.unsqueeze(-2),
    ),
    promote=True,
    backward_name="MvBackward0",
    jvp="multilinear",
)


def matmul(input, other) -> Tensor:
    """Matrix product with NumPy/PyTorch broadcasting of batch dims and 1-D promotion."""
    a, b = input.data.ndim, other.data.ndim
    if a == 0 or b == 0:
        raise RuntimeError(
            f"matmul: both arguments to matmul need to be at least 1D, but they are {a}D and {b}D"
        )
    ka = input.data.shape[-1]
    kb = other.data.shape[-2] if b > 1 else other.data.shape[0]
    if ka != kb:
        shape_a = "x".join(map(str, input.data.shape[-2:] if a > 1 else (1, ka)))
        shape_b = "x".join(map(str, other.data.shape[-2:] if b > 1 else (kb, 1)))
        raise RuntimeError(
            f"matmul: mat1 and mat2 shapes cannot be multiplied ({shape_a} and {shape_b})"
        )
    if a == 1 and b == 1:
        return apply(DOT, input, other)
    if b == 1:
        return apply(MV, input, other)
    if a == 1:
        return apply(VM, input, other)
    if a == 2 and b == 2:
        return apply(MM, input, other)
    return apply(BMM, input, other)


def mm(input, other) -> Tensor:
    """Matrix product of two 2-D tensors."""
    if input.data.ndim != 2 or other.data.ndim != 2:
        raise RuntimeError(
            f"mm: expected 2-D tensors, got {input.data.ndim}-D and "
            f"{other.data.ndim}-D; use matmul for other shapes"
        )
    return matmul(input, other)


FUNCTIONS = {"matmul": matmul, "mm": mm}
METHODS = dict(FUNCTIONS)
