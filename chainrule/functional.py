"""torch.functional: the functions PyTorch writes in Python over its kernels (einsum, norm, stft,
unique, meshgrid, ...). ``torch.<name>`` is the same function (the package re-exports this
module), so the signatures here are PyTorch's, positional ``out`` included."""

from __future__ import annotations

from ._factories import broadcast_shapes
from .ops import _out
from .ops import decomposition as _decomposition
from .ops import linalg as _linalg
from .ops.decomposition import pca_lowrank, svd_lowrank
from .ops.distance import cdist
from .ops.extra import block_diag, cartesian_prod, istft, stft, unique_consecutive, unravel_index
from .ops.indexing import unique
from .ops.shape import (
    atleast_1d,
    atleast_2d,
    atleast_3d,
    broadcast_tensors,
    meshgrid,
    split,
)
from .tensor import Tensor

__all__ = ["atleast_1d", "atleast_2d", "atleast_3d", "broadcast_shapes", "broadcast_tensors",
           "cartesian_prod", "block_diag", "cdist", "chain_matmul", "einsum", "istft", "lu",
           "norm", "meshgrid", "pca_lowrank", "split", "stft", "svd_lowrank", "tensordot",
           "unique", "unique_consecutive", "unravel_index"]

chain_matmul = _out.with_out("chain_matmul", _linalg.chain_matmul)
_norm = _out.with_out("norm", _linalg.torch_norm)
_tensordot = _out.with_out("tensordot", _linalg.tensordot)
_lu = _out.with_out("lu", _decomposition.torch_lu)


def _subscript(n) -> str:
    """A sublist entry as an equation letter: 0-25 are A-Z, 26-51 a-z; Ellipsis is '...'."""
    if n is Ellipsis:
        return "..."
    if 0 <= n < 26:
        return chr(ord("A") + n)
    if 26 <= n < 52:
        return chr(ord("a") + n - 26)
    raise ValueError("einsum(): subscript in subscript list is not within the valid range "
                     "[0, 52)")


def einsum(equation, *operands) -> Tensor:
    """Sum of products of the operands' elements over the indices an equation names (Einstein
    summation): einsum("ij,jk->ik", a, b), or in sublist form einsum(a, [0, 1], b, [1, 2])."""
    if not operands:
        raise ValueError("einsum(): must specify the equation string and at least one operand, "
                         "or at least one operand and its subscripts list")
    if not isinstance(equation, Tensor):
        return _linalg.einsum(equation, *operands)
    # operand, sublist, operand, sublist, ... [, output sublist]
    args = (equation, *operands)
    equation = ",".join("".join(_subscript(s) for s in sub) for sub in args[1::2])
    if len(args) % 2:
        equation += "->" + "".join(_subscript(s) for s in args[-1])
        return _linalg.einsum(equation, *args[:-1:2])
    return _linalg.einsum(equation, *args[::2])


def norm(input, p="fro", dim=None, keepdim: bool = False, out=None, dtype=None) -> Tensor:
    """The matrix or vector norm of input (deprecated: use torch.linalg.norm and kin)."""
    return _norm(input, p, dim, keepdim, dtype, out=out)


def tensordot(a, b, dims=2, out=None) -> Tensor:
    """Contract the last ``dims`` dims of a with the first of b, or the dims listed in ``dims``."""
    return _tensordot(a, b, dims, out=out)


def lu(A, pivot: bool = True, get_infos: bool = False, out=None) -> tuple:
    """(LU, pivots[, infos]) of A (deprecated: use torch.linalg.lu_factor)."""
    return _lu(A, pivot, get_infos, out=out)
