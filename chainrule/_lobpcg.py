"""torch.lobpcg, solved densely: the symmetric (generalized) eigenproblem through ``linalg.eigh``
(after a Cholesky reduction when B is given), so its derivatives are eigh's, to any order.

The iteration parameters (``niter``, ``tol``, ``iK``, ``method``, ``tracker``, ``ortho_*``) are
accepted and not needed; ``X`` only sets the number of pairs. A and B are used through their
symmetric (Hermitian) parts, which is what PyTorch solves when A requires grad.
"""

from __future__ import annotations

import math

from ._backend import float16, float32
from ._validation import dtype_name
from .ops import linalg as _linalg
from .ops.decomposition import solve_triangular
from .tensor import Size, Tensor


def lobpcg(
    A: Tensor,
    k: int | None = None,
    B: Tensor | None = None,
    X: Tensor | None = None,
    n: int | None = None,
    iK: Tensor | None = None,
    niter: int | None = None,
    tol: float | None = None,
    largest: bool | None = None,
    method: str | None = None,
    tracker: None = None,
    ortho_iparams: dict[str, int] | None = None,
    ortho_fparams: dict[str, float] | None = None,
    ortho_bparams: dict[str, bool] | None = None,
) -> tuple[Tensor, Tensor]:
    """The k largest (or smallest) eigenpairs of A x = λ B x, A symmetric, B positive definite."""
    count = _check(A, k, B, X, n, tol)
    sym = (A + A.mH) / 2
    if B is None:
        values, vectors = _linalg.eigh(sym)
    else:
        L = _linalg.cholesky((B + B.mH) / 2)
        half = solve_triangular(L, sym, upper=False)  # L^-1 A
        C = solve_triangular(L, half.mH, upper=False)  # L^-1 A L^-H
        values, vectors = _linalg.eigh((C + C.mH) / 2)
        vectors = solve_triangular(L.mH, vectors, upper=True)  # B-orthonormal
    if largest is None or largest:
        return values[..., -count:].flip(-1), vectors[..., -count:].flip(-1)
    return values[..., :count], vectors[..., :count]


def _is_int(value) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _check(A, k, B, X, n, tol) -> int:
    """PyTorch's checks, in its order and words; the number of pairs to return."""
    if not isinstance(A, Tensor):
        raise AttributeError(f"'{type(A).__name__}' object has no attribute 'requires_grad'")
    shape = A._data.shape
    if len(shape) < 2:
        raise IndexError("tuple index out of range")
    if shape[-2] != shape[-1]:
        raise AssertionError(f"A must be square, got shape {Size(shape)}")
    if B is not None and B._data.shape != shape:
        raise AssertionError(f"A and B must have same shape, got {Size(shape)} vs "
                             f"{Size(B._data.shape)}")
    if A.dtype == float16 and tol is None:  # PyTorch has no default tolerance for half
        raise KeyError(float16)
    m, batch = shape[-1], shape[:-2]
    if X is None:
        k = 1 if k is None else k
        n = k if n is None else n
    else:
        n = X._data.shape[-1] if X._data.ndim else 1
        k = n if k is None else k
    if m < 3 * n:
        raise ValueError(f"LOBPCG algorithm is not applicable when the number of A rows (={m}) "
                         f"is smaller than 3 x the number of requested eigenpairs (={n})")
    if X is not None and not batch and X._data.shape != (m, n):
        raise AssertionError(f"X shape mismatch: got {Size(X._data.shape)}, expected ({m}, {n})")
    if X is not None and batch and X._data.size != math.prod(batch) * m * n:
        raise RuntimeError(f"shape '{[math.prod(batch), m, n]}' is invalid for input of size "
                           f"{X._data.size}")
    if X is None and not _is_int(n):  # PyTorch's error from drawing the initial X
        raise TypeError(f"{'empty' if batch else 'randn'}(): argument 'size' failed to unpack the "
                        f"object at pos 2 with error \"type must be tuple of ints,but got "
                        f"{type(n).__name__}\"")
    if not _is_int(k):
        raise TypeError(f"lobpcg(): argument 'k' must be int, not {type(k).__name__}")
    if X is None and n < 0:
        raise RuntimeError(f"Trying to create tensor with negative dimension {n}: "
                           f"{[math.prod(batch) if batch else m, n]}")
    if n == 0:
        raise ZeroDivisionError("0.0 cannot be raised to a negative power")
    if k < 0:
        raise ValueError(f"lobpcg: k must be non-negative, got {k}")
    if X is not None and not X.is_floating_point() and not X.is_complex():
        raise RuntimeError("linalg.vector_norm: Expected a floating point or complex tensor as "
                           f"input. Got {dtype_name(X._data.dtype)}")
    x_dtype = X._data.dtype if X is not None else (
        A._data.dtype if A.is_floating_point() else float32.np)
    for M in (A, B):
        if M is not None and M._data.dtype != x_dtype:
            raise RuntimeError("expected m1 and m2 to have the same dtype, but got: "
                               f"{dtype_name(M._data.dtype, 'cpp')} != "
                               f"{dtype_name(x_dtype, 'cpp')}")
    if A.dtype == float16:
        raise NotImplementedError("\"cholesky_cpu\" not implemented for 'Half'")
    return min(k, n)
