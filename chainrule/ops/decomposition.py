"""Factorizations and the solvers built on them: triangular solves, LU (and the solvers and
inverses that report ``info``), Householder products (geqrf, orgqr, ormqr), condition numbers and
ranks, randomized low-rank SVD/PCA, the general eigendecomposition (eig, eigvals) and the
Bunch-Kaufman LDL factorization (ldl_factor, ldl_solve).

The LU rules follow from differentiating A = P L U: P^T dA = dL U + L dU, so
L^{-1} P^T dA U^{-1} = L^{-1} dL + dU U^{-1} splits into its strictly lower part (L^{-1} dL, L
having a unit diagonal) and its upper part (dU U^{-1}); a rectangular A has one more block of L
or U, a triangular solve away from A. Every rule is written with the triangular solve below, so
it differentiates again.
"""

from __future__ import annotations

import math

from .._backend import xp
from .._batching import leading_dims, pad_leading, physical
from .._creation import randn
from .._dispatch import apply
from ..autograd.grad_mode import no_grad
from ..tensor import Tensor
from ._nnutil import on_values
from ._registry import defop, not_implemented
from .complex import real
from .elementwise import maximum, where
from .linalg import (
    LinAlgError,
    _add,
    _check_matrix,
    _const,
    _diag,
    _eye,
    _lapack,
    _type_name,
    _warn_once,
    cholesky,
    diagonal,
    eigvalsh,
    inv,
    matrix_norm,
    qr,
    solve,
    svd,
    svdvals,
)
from .reduction import amax, amin, result
from .shape import cat as _cat

# ---- triangular solves --------------------------------------------------------------------------


def _substitute(A, B, upper, unitriangular):
    """X with A X = B for triangular A (forward or back substitution over the rows; batched)."""
    batch = xp.broadcast_shapes(A.shape[:-2], B.shape[:-2])
    A = xp.broadcast_to(A, batch + A.shape[-2:])
    X = xp.array(xp.broadcast_to(B, batch + B.shape[-2:]), copy=True)
    n = A.shape[-1]
    with xp.errstate(divide="ignore", invalid="ignore"):
        for i in range(n - 1, -1, -1) if upper else range(n):
            done = slice(i + 1, n) if upper else slice(0, i)
            row = X[..., i, :] - (A[..., i : i + 1, done] @ X[..., done, :])[..., 0, :]
            X[..., i, :] = row if unitriangular else row / A[..., i, i, None]
    return X


def _triangle(M, upper: bool, unitriangular: bool):
    """The part of M a triangular solve reads (without the diagonal when it is taken as ones)."""
    return M.triu(int(unitriangular)) if upper else M.tril(-int(unitriangular))


def _tri_solve(A, B, upper: bool, unitriangular: bool = False):
    """A^{-1} B for triangular A (the record; A and B at least 2-D)."""
    return apply(LINALG_SOLVE_TRIANGULAR, A, B, upper=upper, unitriangular=unitriangular)


def _tri_solve_right(B, A, upper: bool, unitriangular: bool = False):
    """B A^{-1} for triangular A."""
    return _tri_solve(A.mT, B.mT, not upper, unitriangular).mT


def _solve_triangular_A(g, A, out, upper, unitriangular):
    # X = A^{-1} B: gA = -(A^{-T} g) X^T, on the triangle the solve reads
    gB = _tri_solve(A.mT, g, not upper, unitriangular)
    return _triangle(-(gB @ out.mT), upper, unitriangular)


def _solve_triangular_jvp(t_A, t_B, A, out, upper, unitriangular):
    rhs = t_B
    if t_A is not None:
        term = _triangle(t_A, upper, unitriangular) @ out
        rhs = -term if rhs is None else rhs - term
    return _tri_solve(A, rhs, upper, unitriangular)


LINALG_SOLVE_TRIANGULAR = defop(
    "linalg_solve_triangular",
    _substitute,
    ("A", "B"),
    (
        _solve_triangular_A,
        lambda g, A, upper, unitriangular: _tri_solve(A.mT, g, not upper, unitriangular),
    ),
    promote=True,
    jvp=_solve_triangular_jvp,
    batch=lambda op, args, flags, size, params: apply(op, *pad_leading(args, flags, (2, 2)),
                                                      **params),
)


def _check_float(name: str, *tensors) -> None:
    for t in tensors:
        if t._data.dtype.kind not in "fc":
            raise NotImplementedError(f'"{name}" not implemented for '
                                      f"'{_type_name(t).capitalize()}'")


def solve_triangular(A, B, *, upper: bool, left: bool = True,
                     unitriangular: bool = False) -> Tensor:
    """The solution X of A X = B (X A = B with left=False) for triangular A (batched)."""
    name = "linalg.solve_triangular"
    if A._data.ndim >= 2 and B._data.ndim >= 2:
        _check_float("triangular_solve_cpu", A, B)
    _check_matrix(A, name)
    if B._data.ndim < 2:
        raise RuntimeError(f"{name}: The input tensor B must have at least 2 dimensions.")
    _check_float("triangular_solve_cpu", A, B)
    n = A._data.shape[-1]
    rows, cols = B._data.shape[-2:]
    if (rows if left else cols) != n:
        raise RuntimeError(f"{name}: Incompatible shapes of A and B for the equation "
                           f"{'AX' if left else 'XA'} = B ({n}x{n} and {rows}x{cols})")
    _batch_shape(A, B)
    value = (_tri_solve(A, B, upper, unitriangular) if left
             else _tri_solve_right(B, A, upper, unitriangular))
    return value


def _batch_shape(A, B) -> tuple:
    """The broadcast batch dims of A and B, with PyTorch's error when they do not broadcast."""
    a, b = A._data.shape[:-2], B._data.shape[:-2]
    try:
        return xp.broadcast_shapes(a, b)
    except ValueError:
        nd = max(len(a), len(b))
        a, b = (1,) * (nd - len(a)) + a, (1,) * (nd - len(b)) + b
        d = next(i for i in range(nd) if 1 not in (a[i], b[i]) and a[i] != b[i])
        raise RuntimeError(f"The size of tensor a ({b[d]}) must match the size of tensor b "
                           f"({a[d]}) at non-singleton dimension {d}") from None


def triangular_solve(b, A, upper: bool = True, transpose: bool = False,
                     unitriangular: bool = False) -> tuple:
    """(solution of A X = b, a copy of A) for triangular A (deprecated: solve_triangular)."""
    _warn_once("torch.triangular_solve is deprecated in favor of torch.linalg.solve_triangularand "
               "will be removed in a future PyTorch release.\ntorch.linalg.solve_triangular has "
               "its arguments reversed and does not return a copy of one of the inputs.\nX = "
               "torch.triangular_solve(B, A).solution\nshould be replaced with\nX = "
               "torch.linalg.solve_triangular(A, B).")
    if b._data.ndim < 2:
        raise RuntimeError(f"torch.triangular_solve: Expected b to have at least 2 dimensions, "
                           f"but it has {b._data.ndim} dimensions instead")
    _check_matrix(A, "torch.triangular_solve")
    _check_float("triangular_solve_cpu", A, b)
    n = A._data.shape[-1]
    if b._data.shape[-2] != n:
        raise RuntimeError(f"Incompatible matrix sizes for triangular_solve: each A matrix is "
                           f"{n} by {n} but each b matrix is {b._data.shape[-2]} by "
                           f"{b._data.shape[-1]}")
    batch = _batch_shape(A, b)
    coefficient = A.expand(batch + (n, n)).clone()
    system = A.mT if transpose else A
    value = (_tri_solve(system, b, upper != transpose, unitriangular), coefficient)
    value = result("triangular_solve", "solution cloned_coefficient", value)
    return value


def _gram(L, upper: bool):
    """L L^H (U^H U) of the triangle of L, differentiated as L L^H of the whole of L: PyTorch's
    cholesky_solve and cholesky_inverse convention."""
    full = L.mH @ L if upper else L @ L.mH
    T = L.triu() if upper else L.tril()
    return full + ((T.mH @ T if upper else T @ T.mH) - full).detach()


def cholesky_solve(B, L, upper: bool = False) -> Tensor:
    """The solution X of A X = B from the Cholesky factor of A (L L^T, or U^T U if upper)."""
    if B._data.ndim < 2:
        raise RuntimeError(f"b should have at least 2 dimensions, but has {B._data.ndim} "
                           "dimensions instead")
    _check_matrix(L, "cholesky_solve")
    n = L._data.shape[-1]
    if B._data.shape[-2] != n:
        raise RuntimeError(f"Incompatible matrix sizes for cholesky_solve: each A matrix is {n} "
                           f"by {n} but each b matrix is {B._data.shape[-2]} by "
                           f"{B._data.shape[-1]}")
    _batch_shape(L, B)
    value = solve(_gram(L, upper), B)
    return value


def cholesky_inverse(L, upper: bool = False) -> Tensor:
    """The inverse of A = L L^T (U^T U with upper=True) from its Cholesky factor."""
    _check_matrix(L, "cholesky_inverse")
    value = inv(_gram(L, upper))
    return value


def torch_cholesky(input, upper: bool = False) -> Tensor:
    """The Cholesky factor (deprecated: linalg.cholesky)."""
    _warn_once("torch.cholesky is deprecated in favor of torch.linalg.cholesky and will be "
               "removed in a future PyTorch release.\nL = torch.cholesky(A)\nshould be replaced "
               "with\nL = torch.linalg.cholesky(A)\nand\nU = torch.cholesky(A, upper=True)\n"
               "should be replaced with\nU = torch.linalg.cholesky(A).mH\nThis transform will "
               "produce equivalent results for all valid (symmetric positive definite) inputs.")
    _check_matrix(input, "cholesky")
    value = cholesky(input, upper=upper)
    return value


# ---- LU -----------------------------------------------------------------------------------------


def _lu_factor(A):
    """(LU, pivots, info) as LAPACK's getrf: partial pivoting by the first largest magnitude
    (|re| + |im| for complex),
    1-based int32 pivots, info = the first zero pivot (1-based) or 0."""
    *batch, m, n = A.shape
    k = min(m, n)
    LU = A.reshape(-1, m, n).copy()
    pivots = xp.zeros((LU.shape[0], k), dtype=xp.int32)
    info = xp.zeros(LU.shape[0], dtype=xp.int32)
    rows = xp.arange(LU.shape[0])
    for j in range(k):
        column = LU[:, j:, j]
        if column.dtype.kind == "c":  # LAPACK's i?amax: |re| + |im|
            p = j + xp.argmax(xp.abs(column.real) + xp.abs(column.imag), axis=-1)
        else:
            p = j + xp.argmax(xp.abs(column), axis=-1)
        pivots[:, j] = p + 1
        top = LU[rows, j].copy()
        LU[rows, j] = LU[rows, p]
        LU[rows, p] = top
        pivot = LU[:, j, j]
        zero = pivot == 0
        info[(info == 0) & zero] = j + 1
        LU[:, j + 1 :, j] /= xp.where(zero, 1, pivot)[:, None]
        LU[:, j + 1 :, j + 1 :] -= LU[:, j + 1 :, j : j + 1] * LU[:, j : j + 1, j + 1 :]
    return (LU.reshape(A.shape), pivots.reshape(*batch, k), info.reshape(batch))


def _permutation(pivots, m: int):
    """perm with row i of P^T A = row perm[i] of A, from LAPACK's row swaps (batched)."""
    *batch, k = pivots.shape
    flat = xp.broadcast_to(xp.arange(m), (math.prod(batch), m)).copy()
    piv = pivots.reshape(-1, k) - 1
    rows = xp.arange(flat.shape[0])
    for j in range(k):
        p = piv[:, j]
        top = flat[rows, j].copy()
        flat[rows, j] = flat[rows, p]
        flat[rows, p] = top
    return flat.reshape(*batch, m)


def _lu_permutation(pivots, m, dtype):
    # P[r, c] = 1 where perm[c] = r
    perm = _permutation(pivots, m)
    return (perm[..., :, None] == xp.arange(m)).swapaxes(-1, -2).astype(dtype)


LU_PIVOTS_TO_PERMUTATION = defop(
    "lu_pivots_to_permutation",
    _lu_permutation,
    ("pivots",),
    (None,),
    differentiable=False,
    batch=lambda op, args, flags, size, params: apply(op, args[0], **params),
)


def _unpack(LU, pivots=None):
    """(P, L, U) of a packed LU factorization (P only when pivots are given)."""
    m, n = LU.shape[-2:]
    k = min(m, n)
    dtype = LU._data.dtype
    L = LU[..., :, :k].tril(-1) + _eye(m, k, dtype=dtype)
    U = LU[..., :k, :].triu()
    if pivots is None:
        return None, L, U
    P = apply(LU_PIVOTS_TO_PERMUTATION, pivots, m=m, dtype=dtype)
    return P, L, U


def _lu_rule(grads, out):
    # A = P L U. Square: gA = P L^{-T} (tril(L^T gL, -1) + triu(gU U^T)) U^{-T}; a wide A's
    # extra columns U2 = L^{-1} P^T A2 add -gU2 U2^T inside and P L^{-T} gU2 to gA2; a tall A's
    # extra rows L2 = (P^T A)_2 U^{-1} add -L2^T gL2 inside and P gL2 U^{-T} to gA_2.
    g = grads[0]
    if g is None:  # only the pivots or info were used
        return None
    LU, pivots = out[0], out[1]
    m, n = LU.shape[-2:]
    k = min(m, n)
    P, L, U = _unpack(LU, pivots)
    gL, gU = g[..., :, :k].tril(-1), g[..., :k, :].triu()
    inner = (L.mT @ gL).tril(-1) + (gU @ U.mT).triu()
    if m < n:
        U1, U2, gU2 = U[..., :, :m], U[..., :, m:], gU[..., :, m:]
        inner = inner - gU2 @ U2.mT
        gA1 = _tri_solve_right(_tri_solve(L.mT, inner, True, True), U1.mT, False)
        return P @ _cat_last(gA1, _tri_solve(L.mT, gU2, True, True))
    if m > n:
        L1, L2, gL2 = L[..., :n, :], L[..., n:, :], gL[..., n:, :]
        inner = inner - L2.mT @ gL2
        top = _tri_solve_right(_tri_solve(L1.mT, inner, True, True), U.mT, False)
        return P @ _cat_rows(top, _tri_solve_right(gL2, U.mT, False))
    return P @ _tri_solve_right(_tri_solve(L.mT, inner, True, True), U.mT, False)


def _lu_jvp(t_A, out):
    # P^T dA = dL U + L dU: with X = L^{-1} (P^T dA) U^{-1}, dL = L tril(X, -1), dU = triu(X) U
    # (the extra blocks of a rectangular A follow from the same identity).
    LU, pivots = out[0], out[1]
    m, n = LU.shape[-2:]
    P, L, U = _unpack(LU, pivots)
    dA = P.mT @ t_A
    if m < n:
        U1, U2 = U[..., :, :m], U[..., :, m:]
        X = _tri_solve_right(_tri_solve(L, dA[..., :, :m], False, True), U1, True)
        dL = L @ X.tril(-1)
        dU1 = X.triu() @ U1
        dU2 = _tri_solve(L, dA[..., :, m:] - dL @ U2, False, True)
        return _cat_last(dL + dU1, dU2), None, None
    if m > n:
        L1, L2 = L[..., :n, :], L[..., n:, :]
        X = _tri_solve_right(_tri_solve(L1, dA[..., :n, :], False, True), U, True)
        dL1 = L1 @ X.tril(-1)
        dU = X.triu() @ U
        dL2 = _tri_solve_right(dA[..., n:, :] - L2 @ dU, U, True)
        return _cat_rows(dL1 + dU, dL2), None, None
    X = _tri_solve_right(_tri_solve(L, dA, False, True), U, True)
    return L @ X.tril(-1) + X.triu() @ U, None, None


def _cat_last(a, b):
    return _cat((a, b), -1)


def _cat_rows(a, b):
    return _cat((a, b), -2)


LINALG_LU_FACTOR_EX = defop(
    "linalg_lu_factor_ex",
    _lu_factor,
    ("A",),
    (_lu_rule,),
    n_outputs=3,
    jvp=_lu_jvp,
    batch=lambda op, args, flags, size, params: apply(op, args[0], **params),
)


def _check_lu_input(A, name: str) -> None:
    if A._data.ndim < 2:
        raise RuntimeError(f"torch.lu_factor: Expected tensor with 2 or more dimensions. Got "
                           f"size: {list(A._data.shape)} instead")
    _check_float("lu_cpu", A)


def _lu_factor_ex(A, pivot: bool, name: str) -> tuple:
    _check_lu_input(A, name)
    if not pivot:
        raise RuntimeError(f"{name}: LU without pivoting is not implemented on the CPU")
    return apply(LINALG_LU_FACTOR_EX, A)


def _batch_message(info, text: str) -> str:
    """``text`` ('name: message') naming the first failing batch element after the name, as
    PyTorch does (nothing for a single matrix)."""
    if info.ndim == 0:
        return text
    name, message = text.split(": ", 1)
    return f"{name}: (Batch element {int(xp.flatnonzero(info)[0])}): {message}"


def _first_failure(info):
    """The first nonzero info value (PyTorch reports the first failing batch element)."""
    bad = xp.flatnonzero(info)
    return int(info.reshape(-1)[bad[0]]) if bad.size else 0


def lu_factor_ex(A, *, pivot: bool = True, check_errors: bool = False) -> tuple:
    """(LU, pivots, info): the packed LU factorization with partial pivoting (batched)."""
    LU, pivots, info = _lu_factor_ex(A, pivot, "linalg.lu_factor_ex")
    i = _first_failure(physical(info)) if check_errors else 0
    if i:
        raise RuntimeError(_batch_message(
            physical(info), f"torch.linalg.lu_factor_ex: U[{i},{i}] is zero and using it on "
            "lu_solve would result in a division by zero. If you still want to perform the "
            "factorization, consider calling linalg.lu(A, pivot) or linalg.lu_factor_ex(A, "
            "pivot)"))
    value = result("linalg_lu_factor_ex", "LU pivots info", (LU, pivots, info))
    return value


def lu_factor(A, *, pivot: bool = True) -> tuple:
    """(LU, pivots): the packed LU factorization with partial pivoting (batched)."""
    LU, pivots, info = _lu_factor_ex(A, pivot, "linalg.lu_factor")
    i = _first_failure(physical(info))
    if i:
        raise RuntimeError(_batch_message(
            physical(info), f"torch.linalg.lu_factor: U[{i},{i}] is zero and using it on "
            "lu_solve would result in a division by zero. If you still want to perform the "
            "factorization, consider calling linalg.lu(A, pivot) or linalg.lu_factor_ex(A, "
            "pivot)"))
    value = result("linalg_lu_factor", "LU pivots", (LU, pivots))
    return value


def lu(A, *, pivot: bool = True) -> tuple:
    """(P, L, U) with A = P L U, L unit lower triangular, U upper triangular (batched)."""
    LU, pivots, _ = _lu_factor_ex(A, pivot, "linalg.lu")
    value = result("linalg_lu", "P L U", _unpack(LU, pivots))
    return value


def lu_unpack(LU_data, LU_pivots, unpack_data: bool = True, unpack_pivots: bool = True) -> tuple:
    """(P, L, U) from a packed LU factorization and its pivots."""
    if LU_data._data.ndim < 2:
        raise RuntimeError(f"torch.lu_unpack: Expected tensor with 2 or more dimensions. Got "
                           f"size: {list(LU_data._data.shape)} instead")
    if LU_pivots._data.dtype != xp.int32:
        raise RuntimeError("torch.lu_unpack: LU_pivots is expected to be a contiguous tensor "
                           "of torch.int32 dtype. Note: this function is intended to be used "
                           "with the output produced by torch.linalg.lu_factor")
    P, L, U = _unpack(LU_data, LU_pivots if unpack_pivots else None)
    empty = LU_data.new_zeros((0,))
    value = (P if unpack_pivots else empty, L if unpack_data else empty,
             U if unpack_data else empty)
    value = result("lu_unpack", "P L U", value)
    return value


def lu_solve(LU, pivots, B, *, left: bool = True, adjoint: bool = False) -> Tensor:
    """The solution X of A X = B (X A = B with left=False; A^H with adjoint) from A's LU
    factorization (batched)."""
    name = "linalg.lu_solve"
    _check_matrix(LU, name)
    if B._data.ndim < 2:
        raise RuntimeError(f"{name}: The input tensor B must have at least 2 dimensions.")
    n = LU._data.shape[-1]
    rows, cols = B._data.shape[-2:]
    if (rows if left else cols) != n:
        raise RuntimeError(f"{name}: Incompatible shapes of A and B for the equation "
                           f"{'AX' if left else 'XA'} = B ({n}x{n} and {rows}x{cols})")
    if LU._data.dtype != B._data.dtype:
        raise RuntimeError(f"{name}: Expected LU and B to have the same dtype, but found LU of "
                           f"type {_type_name(LU)} and B of type {_type_name(B)} instead")
    _batch_shape(LU, B)
    P, L, U = _unpack(LU, pivots)
    if not left:  # X A = B is A^H X^H = B^H
        B = B.mH
        adjoint = not adjoint
    if adjoint:  # A^H X = B: X = P L^{-H} U^{-H} B
        X = P @ _tri_solve(L.mH, _tri_solve(U.mH, B, False), True, True)
    else:  # X = U^{-1} L^{-1} P^T B
        X = _tri_solve(U, _tri_solve(L, P.mT @ B, False, True), True)
    value = X if left else X.mH
    return value


def torch_lu(A, pivot: bool = True, get_infos: bool = False) -> tuple:
    """(LU, pivots[, infos]) (deprecated: linalg.lu_factor / linalg.lu_factor_ex)."""
    _warn_once("torch.lu is deprecated in favor of torch.linalg.lu_factor / "
               "torch.linalg.lu_factor_ex and will be removed in a future PyTorch release.\nLU, "
               "pivots = torch.lu(A, compute_pivots)\nshould be replaced with\nLU, pivots = "
               "torch.linalg.lu_factor(A, compute_pivots)\nand\nLU, pivots, info = torch.lu(A, "
               "compute_pivots, get_infos=True)\nshould be replaced with\nLU, pivots, info = "
               "torch.linalg.lu_factor_ex(A, compute_pivots)")
    LU, pivots, info = _lu_factor_ex(A, pivot, "torch.lu")
    value = result("_lu_with_info", "LU pivots info", (LU, pivots, info)) if get_infos else (
        LU, pivots)
    return value


def torch_lu_solve(b, LU_data, LU_pivots) -> Tensor:
    """The solution of A X = b from A's LU factorization (deprecated: linalg.lu_solve)."""
    _warn_once("torch.lu_solve is deprecated in favor of torch.linalg.lu_solveand will be removed "
               "in a future PyTorch release.\nNote that torch.linalg.lu_solve has its arguments "
               "reversed.\nX = torch.lu_solve(B, LU, pivots)\nshould be replaced with\nX = "
               "torch.linalg.lu_solve(LU, pivots, B)")
    value = lu_solve(LU_data, LU_pivots, b)
    return value


# ---- solvers and inverses with info, cholesky_ex ---------------------------------------------


def _no_failures(A) -> Tensor:
    """info = 0 for every matrix of A."""
    return _const(xp.zeros(A._data.shape[:-2], dtype=xp.int32, like=A._data))


def _raise_info(info, text: str) -> None:
    """PyTorch's check_errors: LinAlgError naming the first failing matrix."""
    values = physical(info)
    i = _first_failure(values)
    if i:
        raise LinAlgError(_batch_message(values, text.format(i=i)))


def inv_ex(A, *, check_errors: bool = False) -> tuple:
    """(inverse, info): the inverse of a square matrix and LAPACK's info (0: invertible; k: the
    k-th diagonal element of U is zero), without raising unless check_errors (batched)."""
    _check_matrix(A, "linalg.inv_ex")
    try:
        inverse, info = inv(A), _no_failures(A)
    except LinAlgError:  # a singular matrix in the batch: PyTorch's inf/nan from the LU solve
        LU, pivots, info = apply(LINALG_LU_FACTOR_EX, A)
        n = A._data.shape[-1]
        inverse = lu_solve(LU, pivots, _eye(n, dtype=A._data.dtype).expand(A.shape))
    if check_errors:
        _raise_info(info, "linalg.inv_ex: The diagonal element {i} is zero, the inversion could "
                          "not be completed because the input matrix is singular.")
    value = result("linalg_inv_ex", "inverse info", (inverse, info))
    return value


def solve_ex(A, B, *, left: bool = True, check_errors: bool = False) -> tuple:
    """(result, info): the solution of A X = B (X A = B with left=False) and LAPACK's info,
    without raising unless check_errors (batched)."""
    try:
        X, info = solve(A, B, left=left), _no_failures(A)
    except LinAlgError:
        LU, pivots, info = apply(LINALG_LU_FACTOR_EX, A)
        vector = B._data.ndim == 1 or (B._data.ndim == A._data.ndim - 1
                                      and B._data.shape == A._data.shape[:-1])
        rhs = B.unsqueeze(-1 if left else -2) if vector else B
        X = lu_solve(LU, pivots, rhs, left=left)
        X = X.squeeze(-1 if left else -2) if vector else X
    if check_errors:
        _raise_info(info, "torch.linalg.solve_ex: The solver failed because the input matrix is "
                          "singular.")
    value = result("linalg_solve_ex", "result info", (X, info))
    return value


def _cholesky_partial(A):
    """LAPACK potf2 (lower) on every matrix, stopping where a leading minor is not positive:
    (L with the failing diagonal value, the rest of the lower triangle as given), info."""
    *batch, n, _ = A.shape
    L = xp.tril(A).reshape(-1, n, n).copy()
    info = xp.zeros(L.shape[0], dtype=xp.int32)
    for j in range(n):
        d = L[:, j, j] - (L[:, j, :j] ** 2).sum(-1)
        failed = (info == 0) & ~(d > 0)
        L[failed, j, j] = d[failed]
        info[failed] = j + 1
        ok = info == 0
        root = xp.sqrt(d[ok])
        L[ok, j, j] = root
        below = L[ok, j + 1 :, j] - (L[ok, j + 1 :, :j] @ L[ok, j, :j, None])[..., 0]
        L[ok, j + 1 :, j] = below / root[:, None]
    return L.reshape(A.shape), info.reshape(batch)


def cholesky_ex(A, *, upper: bool = False, check_errors: bool = False) -> tuple:
    """(L, info): the Cholesky factor and LAPACK's info (0: positive-definite; k: the leading
    minor of order k is not), without raising unless check_errors (batched)."""
    _check_matrix(A, "linalg.cholesky_ex")
    try:
        L, info = cholesky(A, upper=upper), _no_failures(A)
    except LinAlgError:  # PyTorch's partial factor; not differentiable (see differences.md)
        L, info = on_values(lambda array, lead: _cholesky_partial(array), A)
        if upper:
            L = L.mT.contiguous()
    if check_errors:
        _raise_info(info, "linalg.cholesky_ex: The factorization could not be completed because "
                          "the input is not positive-definite (the leading minor of order {i} is "
                          "not positive-definite).")
    value = result("linalg_cholesky_ex", "L info", (L, info))
    return value


# ---- condition number, rank, tensor inverses, Vandermonde -------------------------------------

_COND_ORDERS = ("fro", "nuc", math.inf, -math.inf, 1, -1)


def cond(input, p=None) -> Tensor:
    """The condition number of input in the norm p (2 by default: largest over smallest singular
    value; other norms: norm(input) * norm(input^{-1}), inf for a singular input)."""
    if input._data.ndim < 2:
        raise RuntimeError("linalg.cond: The input tensor must have at least 2 dimensions.")
    if p in (None, 2, -2):
        s = svdvals(input)
        top, bottom = amax(s, -1), amin(s, -1)
        value = bottom / top if p == -2 else top / bottom
    elif p in _COND_ORDERS:
        _check_matrix(input, f"linalg.cond(ord={p})")
        inverse, info = inv_ex(input)
        ratio = matrix_norm(input, p) * matrix_norm(inverse, p)
        value = where(info > 0, math.inf, ratio) if (physical(info) != 0).any() else ratio
    else:
        raise RuntimeError(f"linalg.cond got an invalid norm type: {p}")
    return value


def matrix_rank(input, tol=None, hermitian: bool = False, *, atol=None, rtol=None) -> Tensor:
    """The number of singular values (eigenvalue magnitudes, if hermitian) above
    max(atol, rtol * the largest); ``tol`` is the older name of atol (batched)."""
    if input._data.ndim < 2:
        raise RuntimeError("torch.linalg.matrix_rank: The input tensor input must have at least "
                           "2 dimensions.")
    if tol is not None:
        atol, rtol = tol, 0.0 if rtol is None else rtol
    with no_grad():
        s = eigvalsh(input).abs() if hermitian else svdvals(input)
        top = amax(s, -1, keepdim=True) if s.shape[-1] else s.new_zeros(s.shape[:-1] + (1,))
        if rtol is None:  # the default unless a positive atol is given
            default = float(xp.finfo(input._data.dtype).eps * max(input._data.shape[-2:]))
            if isinstance(atol, Tensor):
                rtol = where(atol > 0, 0.0, default)
            else:
                rtol = 0.0 if atol is not None and atol > 0 else default
        atol = 0.0 if atol is None else atol
        atol, rtol = (x.unsqueeze(-1) if isinstance(x, Tensor) else x for x in (atol, rtol))
        cutoff = maximum(top * rtol, atol if isinstance(atol, Tensor) else top.new_full((), atol))
        value = (s > cutoff).sum(-1)
    return value


def tensorinv(A, ind: int = 2) -> Tensor:
    """The inverse of A for tensordot over its first ``ind`` dims."""
    if ind <= 0:
        raise RuntimeError(f"Expected a strictly positive integer for 'ind', but got {ind}")
    shape = tuple(A._data.shape)
    rows, cols = math.prod(shape[:ind]), math.prod(shape[ind:])
    if rows != cols:
        raise RuntimeError(f"Expected self to satisfy the requirement prod(self.shape[ind:]) == "
                           f"prod(self.shape[:ind]), but got {cols} != {rows}")
    value = inv(A.reshape(rows, cols)).reshape(shape[ind:] + shape[:ind])
    return value


def tensorsolve(A, B, dims=None) -> Tensor:
    """X with tensordot(A, X, X.ndim) = B; ``dims`` of A are moved to the end first."""
    if dims is not None:
        dims = [dims] if isinstance(dims, int) else list(dims)
        A = A.movedim(dims, list(range(A._data.ndim - len(dims), A._data.ndim)))
    k = B._data.ndim
    shape = tuple(A._data.shape)
    rows, cols = math.prod(B._data.shape), math.prod(shape[k:])
    if rows != cols:
        raise RuntimeError(f"Expected self to satisfy the requirement prod(self.shape[other.ndim:])"
                           f" == prod(self.shape[:other.ndim]), but got {cols} != {rows}")
    value = solve(A.reshape(rows, cols), B.reshape(rows)).reshape(shape[k:])
    return value


def vander(x, N: int | None = None) -> Tensor:
    """The Vandermonde matrix of x: powers 0, 1, ..., N-1 of x in the last dim."""
    if x._data.ndim == 0:  # a scalar is one point
        x = x.reshape(1)
    N = x._data.shape[-1] if N is None else N
    if N <= 1:
        raise RuntimeError("N must be greater than 1.")
    column = x.unsqueeze(-1)
    powers = column.expand(tuple(column.shape[:-1]) + (N - 1,)).cumprod(-1)
    return _cat((column.new_ones(()).expand(tuple(column.shape)), powers), -1)


def torch_qr(input, some: bool = True) -> tuple:
    """(Q, R) (deprecated: linalg.qr)."""
    _warn_once("torch.qr is deprecated in favor of torch.linalg.qr and will be removed in a "
               "future PyTorch release.\nThe boolean parameter 'some' has been replaced with a "
               "string parameter 'mode'.\nQ, R = torch.qr(A, some)\nshould be replaced with\nQ, R "
               "= torch.linalg.qr(A, 'reduced' if some else 'complete')")
    _check_matrix(input, "linalg.qr", square=False)
    Q, R = qr(input, "reduced" if some else "complete")
    value = result("qr", "Q R", (Q, R))
    return value


# ---- Householder reflectors: geqrf, householder_product, orgqr, ormqr ---------------------------


def _geqrf(input):
    h, tau = xp.linalg.qr(input, mode="raw")  # LAPACK's geqrf, h in Fortran order (transposed)
    return xp.ascontiguousarray(xp.swapaxes(h, -1, -2)), tau.astype(input.dtype, copy=False)


GEQRF = defop(
    "geqrf",
    _geqrf,
    ("input",),
    (not_implemented("geqrf"),),
    n_outputs=2,
    batch=lambda op, args, flags, size, params: apply(op, args[0], **params),
)


def geqrf(input) -> tuple:
    """(a, tau): the QR factorization as LAPACK's geqrf stores it (R on and above the diagonal,
    the Householder vectors below it, their scales in tau)."""
    if input._data.ndim < 2:
        raise RuntimeError("torch.geqrf: input must have at least 2 dimensions.")
    _check_float("geqrf_cpu", input)
    value = result("geqrf", "a tau", apply(GEQRF, input))
    return value


def _reflectors(A, k: int):
    """The Householder vectors (unit first entry) in the columns of an m x k matrix."""
    m = A._data.shape[-2]
    return A[..., :, :k].tril(-1) + _eye(m, k, dtype=A._data.dtype)


def _reflect(C, V, tau, order, left: bool):
    """C with the reflectors H_i = I - tau_i v_i v_i^H applied in ``order`` (from the left:
    H C; from the right: C H)."""
    for i in order:
        v, t = V[..., :, i : i + 1], tau[..., i : i + 1].unsqueeze(-1)
        C = C - (t * v) @ (v.mH @ C) if left else C - ((C @ v) * t) @ v.mH
    return C


def householder_product(A, tau) -> Tensor:
    """The first n columns of H_1 ... H_k, the product of the Householder reflectors stored in
    the columns of A (m x n) and tau (k)."""
    name = "torch.linalg.householder_product"
    if A._data.ndim < 2:
        raise RuntimeError(f"{name}: input must have at least 2 dimensions.")
    m, n = A._data.shape[-2:]
    if m < n:
        raise RuntimeError(f"{name}: input.shape[-2] must be greater than or equal to "
                           "input.shape[-1]")
    if n < tau._data.shape[-1]:
        raise RuntimeError(f"{name}: input.shape[-1] must be greater than or equal to "
                           "tau.shape[-1]")
    if tau._data.ndim != A._data.ndim - 1:
        raise RuntimeError(f"{name}: Expected tau to have one dimension less than input, but got "
                           f"tau.ndim equal to {tau._data.ndim} and input.ndim is equal to "
                           f"{A._data.ndim}")
    if tau._data.shape[:-1] != A._data.shape[:-2]:
        raise RuntimeError(f"{name}: Expected batch dimensions of tau to be equal to "
                           f"input.shape[:-2], but got {list(tau._data.shape[:-1])}")
    if tau._data.dtype != A._data.dtype:
        raise RuntimeError(f"{name}: tau dtype {_type_name(tau).capitalize()} does not match "
                           f"input dtype {_type_name(A).capitalize()}")
    k = tau._data.shape[-1]
    columns = _eye(m, n, dtype=A._data.dtype).expand(A.shape)
    value = _reflect(columns, _reflectors(A, k), tau, range(k - 1, -1, -1), True)
    return value


def orgqr(input, tau) -> Tensor:
    """The Q of a QR factorization stored as geqrf stores it (linalg.householder_product)."""
    return householder_product(input, tau)


def ormqr(input, tau, other, left: bool = True, transpose: bool = False) -> Tensor:
    """other multiplied by the Q (Q^T with transpose) of a QR factorization stored as geqrf
    stores it: Q other with left, other Q without."""
    name = "torch.ormqr"
    if input._data.ndim < 2:
        raise RuntimeError(f"{name}: input must have at least 2 dimensions.")
    if other._data.ndim < 2:
        raise RuntimeError(f"{name}: other must have at least 2 dimensions.")
    m = input._data.shape[-2]
    side = other._data.shape[-2] if left else other._data.shape[-1]
    if side != m:
        which = "other.shape[-2]" if left else "other.shape[-1]"
        raise RuntimeError(f"{name}: {which} must be equal to input.shape[-2]")
    k = tau._data.shape[-1]
    if k > min(side, input._data.shape[-1]):
        raise RuntimeError(f"{name}: tau.shape[-1] must be equal to min(other.shape[-2], "
                           "input.shape[-1])")
    V = _reflectors(input, k)
    # Q = H_1 ... H_k: Q C applies H_k first, Q^T C applies H_1 first (and the mirror on the right)
    forward = left == transpose
    order = range(k) if forward else range(k - 1, -1, -1)
    value = _reflect(other, V, tau.conj() if transpose else tau, order, left)  # H^H: conj(tau)
    return value


# ---- randomized low-rank SVD and PCA ------------------------------------------------------------


def _range_basis(A, q: int, niter: int, M=None):
    """q orthonormal columns whose span approximates the range of A - M, by randomized subspace
    iteration (N. Halko, P.-G. Martinsson and J. Tropp, "Finding structure with randomness",
    2011, Algorithm 4.4): M is subtracted from each product, never formed into A - M."""

    def times(X, adjoint: bool):
        if adjoint:
            return A.mH @ X if M is None else A.mH @ X - M.mH @ X
        return A @ X if M is None else A @ X - M @ X

    sketch = randn(A._data.shape[-1], q, dtype=A.dtype)
    Q = qr(times(sketch, False))[0]
    for _ in range(niter):
        Q = qr(times(Q, True))[0]
        Q = qr(times(Q, False))[0]
    return Q


def svd_lowrank(A, q: int | None = 6, niter: int | None = 2, M=None) -> tuple:
    """(U, S, V): an approximate rank-q SVD of A (or A - M) by randomized subspace iteration;
    draws from the global generator."""
    q = 6 if q is None else q
    niter = 2 if niter is None else niter
    m, n = A._data.shape[-2:]
    if M is not None:
        M = M.expand(A.shape)
    if m < n:  # work on the adjoint, whose range is the smaller space
        V, S, U = svd_lowrank(A.mH, q, niter, None if M is None else M.mH)
        return U, S, V
    Q = _range_basis(A, q, niter, M)
    B = Q.mH @ A if M is None else Q.mH @ A - Q.mH @ M
    U, S, Vh = svd(B, full_matrices=False)
    return Q @ U, S, Vh.mH


def pca_lowrank(A, q: int | None = None, center: bool = True, niter: int = 2) -> tuple:
    """(U, S, V) of the (column-centered) data A by svd_lowrank; q defaults to min(6, m, n)."""
    m, n = A._data.shape[-2:]
    q = min(6, m, n) if q is None else q
    if not 0 <= q <= min(m, n):
        raise ValueError(f"q(={q}) must be non-negative integer and not greater than min(m, n)="
                         f"{min(m, n)}")
    if niter < 0:
        raise ValueError(f"niter(={niter}) must be non-negative integer")
    if not center:
        return svd_lowrank(A, q, niter)
    return svd_lowrank(A, q, niter, A.mean(-2, keepdim=True))


# ---- eig, eigvals --------------------------------------------------------------------------------


def _eig(A):
    """(eigenvalues, eigenvectors) of a general square matrix as LAPACK's geev: complex, each
    eigenvector of unit norm."""
    L, V = _lapack("linalg.eig", xp.linalg.eig, A)
    dtype = xp.complex64 if A.dtype in (xp.float32, xp.complex64) else xp.complex128
    return L.astype(dtype, copy=False), V.astype(dtype, copy=False)


def _mH(M):
    return M.mT.conj()


def _eig_gaps(L):
    """E_ij = L_j - L_i, with ones on the diagonal."""
    n = L.shape[-1]
    return L.unsqueeze(-2) - L.unsqueeze(-1) + _eye(n, dtype=L._data.dtype)


def _eig_rule(grads, out):
    # In PyTorch's convention, with E_ij = L_j - L_i:
    # gA = V^{-H} (diag(gL) + off-diagonal of (V^H gV - V^H V Re(diag(V^H gV))) / conj(E)) V^H.
    # A unit eigenvector is defined up to a phase: a loss that depends on it has Im(diag(V^H gV))
    # away from zero.
    gL, gV = grads
    L, V = out
    n = L.shape[-1]
    off = 1 - _eye(n, dtype=L._data.dtype)
    inner = None if gL is None else _diag(gL)
    if gV is not None:
        VhgV = _mH(V) @ gV
        phases = diagonal(VhgV, 0, -2, -1)
        if not xp.allclose(physical(phases).imag, 0, rtol=1e-2, atol=1e-2):
            raise RuntimeError("linalg_eig_backward: The eigenvectors in the complex case are "
                               "specified up to multiplication by e^{i phi}. The specified loss "
                               "function depends on this quantity, so it is ill-defined.")
        VhV = _mH(V) @ V
        free = (VhgV - VhV * real(phases).unsqueeze(-2)) / _eig_gaps(L).conj() * off
        inner = _add(inner, free)
    return solve(_mH(V), inner @ _mH(V))


def _eig_jvp(t_A, out):
    # dP = V^{-1} dA V: dL = diag(dP); dV = V (dP / E off the diagonal), less each column's
    # component Re(v^H dv) v that would change its norm.
    L, V = out
    n = L.shape[-1]
    dP = solve(V, t_A.to(V.dtype) @ V)
    dV = V @ (dP / _eig_gaps(L) * (1 - _eye(n, dtype=L._data.dtype)))
    dV = dV - V * real(diagonal(_mH(V) @ dV, 0, -2, -1)).unsqueeze(-2)
    return diagonal(dP, 0, -2, -1), dV


LINALG_EIG = defop(
    "linalg_eig",
    _eig,
    ("A",),
    (_eig_rule,),
    n_outputs=2,
    jvp=_eig_jvp,
    batch=leading_dims(2),
    holomorphic=False,
)


def _check_eig(A, name: str) -> None:
    kind = A._data.dtype.kind
    if kind not in "fc":
        raise RuntimeError(f"Unknown Complex ScalarType for {_type_name(A).capitalize()}")
    if A._data.dtype == xp.float16:
        raise NotImplementedError("\"linalg_eig_out_cpu\" not implemented for 'Half'")
    _check_matrix(A, name)
    if not xp.isfinite(physical(A)).all():
        raise RuntimeError("torch.linalg.eig: input tensor should not contain infs or NaNs.")


def eig(A) -> tuple:
    """(eigenvalues, eigenvectors as unit-norm columns) of a square matrix, complex (batched)."""
    _check_eig(A, "linalg.eig")
    value = result("linalg_eig", "eigenvalues eigenvectors", apply(LINALG_EIG, A))
    return value


def eigvals(A) -> Tensor:
    """The (complex) eigenvalues of a square matrix (batched)."""
    _check_eig(A, "linalg.eigvals")
    value = apply(LINALG_EIG, A)[0]
    return value


# ---- LDL (Bunch-Kaufman) -------------------------------------------------------------------------

_BK_ALPHA = (1 + math.sqrt(17)) / 8


def _size(x):
    """The magnitude LAPACK's pivot searches compare: |re| + |im| for complex numbers."""
    return xp.abs(x.real) + xp.abs(x.imag) if x.dtype.kind == "c" else xp.abs(x)


def _bunch_kaufman(A, hermitian: bool):
    """LAPACK's sytf2/hetf2 on the lower triangle of one matrix, in place: (pivots, info)."""
    n = A.shape[-1]
    herm = hermitian and A.dtype.kind == "c"
    cj = xp.conj if herm else (lambda x: x)
    pivots = xp.zeros(n, dtype=xp.int32)
    info = 0
    k = 0
    while k < n:
        step = 1
        if herm:
            A[k, k] = A[k, k].real
        absakk = abs(A[k, k].real) if herm else _size(A[k, k])
        imax, colmax = k, 0.0
        if k < n - 1:
            imax = k + 1 + int(xp.argmax(_size(A[k + 1 :, k])))
            colmax = _size(A[imax, k])
        if max(absakk, colmax) == 0 or xp.isnan(absakk):
            info = info or k + 1
            pivots[k] = k + 1
            k += 1
            continue
        kp = k
        if absakk < _BK_ALPHA * colmax:
            rowmax = _size(A[imax, k:imax]).max()
            if imax < n - 1:
                rowmax = max(rowmax, _size(A[imax + 1 :, imax]).max())
            diag = abs(A[imax, imax].real) if herm else _size(A[imax, imax])
            if absakk >= _BK_ALPHA * colmax * (colmax / rowmax):
                kp = k
            elif diag >= _BK_ALPHA * rowmax:
                kp = imax
            else:
                kp, step = imax, 2
        kk = k + step - 1
        if kp != kk:  # swap rows and columns kk and kp of the trailing lower triangle
            A[kp + 1 :, [kk, kp]] = A[kp + 1 :, [kp, kk]]
            between = A[kk + 1 : kp, kk].copy()
            A[kk + 1 : kp, kk] = cj(A[kp, kk + 1 : kp])
            A[kp, kk + 1 : kp] = cj(between)
            if herm:
                A[kp, kk] = xp.conj(A[kp, kk])
            A[[kk, kp], [kk, kp]] = A[[kp, kk], [kp, kk]]
            if step == 2:
                A[[k + 1, kp], k] = A[[kp, k + 1], k]
        rest = slice(k + step, n)
        if step == 1:
            x = A[rest, k].copy()
            A[rest, rest] -= xp.tril(xp.outer(x, cj(x)) / A[k, k])
            A[rest, k] = x / A[k, k]
        else:
            a21 = A[k + 1, k]
            if herm:
                d = abs(a21)
                d11, d22, d21 = A[k + 1, k + 1].real / d, A[k, k].real / d, a21 / d
                scale = 1 / (d11 * d22 - 1) / d
                wk = scale * (d11 * A[rest, k] - d21 * A[rest, k + 1])
                wk1 = scale * (d22 * A[rest, k + 1] - xp.conj(d21) * A[rest, k])
            else:
                d11, d22 = A[k + 1, k + 1] / a21, A[k, k] / a21
                scale = 1 / (d11 * d22 - 1) / a21
                wk = scale * (d11 * A[rest, k] - A[rest, k + 1])
                wk1 = scale * (d22 * A[rest, k + 1] - A[rest, k])
            update = xp.outer(A[rest, k], cj(wk)) + xp.outer(A[rest, k + 1], cj(wk1))
            A[rest, rest] -= xp.tril(update)
            A[rest, k], A[rest, k + 1] = wk, wk1
            if herm:
                idx = xp.arange(k + step, n)
                A[idx, idx] = A[idx, idx].real
        pivots[k] = kp + 1 if step == 1 else -(kp + 1)
        if step == 2:
            pivots[k + 1] = pivots[k]
        k += step
    return pivots, info


def _ldl_factor(A, hermitian):
    *batch, n, _ = A.shape
    LD = xp.tril(A).reshape(math.prod(batch), n, n).copy()  # -1 cannot stand for an empty batch
    pivots = xp.zeros((LD.shape[0], n), dtype=xp.int32)
    info = xp.zeros(LD.shape[0], dtype=xp.int32)
    for b in range(LD.shape[0]):
        pivots[b], info[b] = _bunch_kaufman(LD[b], hermitian)
    return LD.reshape(A.shape), pivots.reshape(*batch, n), info.reshape(batch)


LINALG_LDL_FACTOR_EX = defop(
    "linalg_ldl_factor_ex",
    _ldl_factor,
    ("A",),
    (not_implemented("linalg_ldl_factor_ex"),),
    n_outputs=3,
    batch=lambda op, args, flags, size, params: apply(op, args[0], **params),
)


def _sytrs(LD, pivots, B, herm: bool):
    """X with A X = B from A's Bunch-Kaufman factorization (LAPACK's sytrs/hetrs, lower)."""
    n = LD.shape[-1]
    cj = xp.conj if herm else (lambda x: x)
    X = B.copy()
    k = 0
    while k < n:  # L D Y = P^T B
        if pivots[k] > 0:
            kp = pivots[k] - 1
            X[[k, kp]] = X[[kp, k]]
            X[k + 1 :] -= xp.outer(LD[k + 1 :, k], X[k])
            X[k] /= LD[k, k].real if herm else LD[k, k]
            k += 1
        else:
            kp = -pivots[k] - 1
            X[[k + 1, kp]] = X[[kp, k + 1]]
            X[k + 2 :] -= xp.outer(LD[k + 2 :, k], X[k]) + xp.outer(LD[k + 2 :, k + 1], X[k + 1])
            a21 = LD[k + 1, k]
            d11, d22 = LD[k, k] / cj(a21), LD[k + 1, k + 1] / a21
            denom = d11 * d22 - 1
            b1, b2 = X[k] / cj(a21), X[k + 1] / a21
            X[k], X[k + 1] = (d22 * b1 - b2) / denom, (d11 * b2 - b1) / denom
            k += 2
    k = n - 1
    while k >= 0:  # L^T (L^H) P^T X = Y
        X[k] -= cj(LD[k + 1 :, k]) @ X[k + 1 :]
        step = 1 if pivots[k] > 0 else 2
        if step == 2:
            X[k - 1] -= cj(LD[k + 1 :, k - 1]) @ X[k + 1 :]
        kp = abs(pivots[k]) - 1
        X[[k, kp]] = X[[kp, k]]
        k -= step
    return X


def _ldl_solve(LD, pivots, B, hermitian):
    batch = xp.broadcast_shapes(LD.shape[:-2], pivots.shape[:-1], B.shape[:-2])
    n, m = LD.shape[-1], B.shape[-1]
    dtype = xp.result_type(LD, B)
    LDs = xp.broadcast_to(LD, batch + (n, n)).reshape(-1, n, n)
    Ps = xp.broadcast_to(pivots, batch + (n,)).reshape(-1, n)
    Bs = xp.broadcast_to(B, batch + (n, m)).reshape(-1, n, m).astype(dtype)
    herm = hermitian and dtype.kind == "c"
    out = xp.stack([_sytrs(a, p, b, herm) for a, p, b in zip(LDs, Ps, Bs)]) if Bs.shape[0] else Bs
    return out.reshape(batch + (n, m))


LINALG_LDL_SOLVE = defop(
    "linalg_ldl_solve",
    _ldl_solve,
    ("LD", "pivots", "B"),
    (not_implemented("linalg_ldl_solve"), None, not_implemented("linalg_ldl_solve")),
    batch=lambda op, args, flags, size, params: apply(op, *pad_leading(args, flags, (2, 1, 2)),
                                                      **params),
)


def _ldl_factor_ex(A, hermitian: bool, check_errors: bool, name: str) -> tuple:
    _check_matrix(A, "torch.linalg.ldl_factor_ex")
    LD, pivots, info = apply(LINALG_LDL_FACTOR_EX, A, hermitian=hermitian)
    i = _first_failure(physical(info)) if check_errors else 0
    if i:  # a zero block of D: PyTorch fails an internal assert with this message
        raise RuntimeError(f"{name}: Unknown error code: {i}.")
    return LD, pivots, info


def ldl_factor_ex(A, *, hermitian: bool = False, check_errors: bool = False) -> tuple:
    """(LD, pivots, info): the Bunch-Kaufman LDL factorization of the lower triangle of a
    symmetric (Hermitian) matrix, as LAPACK's sytrf stores it (batched)."""
    value = result("linalg_ldl_factor_ex", "LD pivots info",
                   _ldl_factor_ex(A, hermitian, check_errors, "torch.linalg.ldl_factor_ex"))
    return value


def ldl_factor(A, *, hermitian: bool = False) -> tuple:
    """(LD, pivots): the Bunch-Kaufman LDL factorization of a symmetric (Hermitian) matrix."""
    LD, pivots, _ = _ldl_factor_ex(A, hermitian, True, "torch.linalg.ldl_factor")
    value = result("linalg_ldl_factor", "LD pivots", (LD, pivots))
    return value


def ldl_solve(LD, pivots, B, *, hermitian: bool = False) -> Tensor:
    """The solution X of A X = B from ldl_factor's (LD, pivots) of A (batched)."""
    name = "torch.linalg.ldl_solve"
    if B._data.dtype != LD._data.dtype:
        raise RuntimeError(f"Expected b and A to have the same dtype, but found b of type "
                           f"{_type_name(B).capitalize()} and A of type "
                           f"{_type_name(LD).capitalize()} instead.")
    if B._data.ndim < 2:
        raise IndexError(f"Dimension out of range (expected to be in range of "
                         f"[{-max(B._data.ndim, 1)}, {max(B._data.ndim, 1) - 1}], but got -2)")
    _check_matrix(LD, name)
    if pivots._data.shape != LD._data.shape[:-1]:
        raise RuntimeError(f"{name}: Expected LD.shape[:-1] and pivots.shape to be the same, "
                           f"but got pivots with shape {list(pivots._data.shape)} instead")
    n = LD._data.shape[-1]
    if B._data.shape[-2] != n:
        raise RuntimeError(f"Incompatible matrix sizes for {name}: each A matrix is {n} by {n} "
                           f"but each b matrix is {B._data.shape[-2]} by {B._data.shape[-1]}")
    _batch_shape(LD, B)
    value = apply(LINALG_LDL_SOLVE, LD, pivots, B, hermitian=hermitian)
    return value


# ---- public tables ------------------------------------------------------------------------------

FUNCTIONS = {
    "qr": torch_qr,
    "svd_lowrank": svd_lowrank,
    "pca_lowrank": pca_lowrank,
    "geqrf": geqrf,
    "orgqr": orgqr,
    "ormqr": ormqr,
    "lu": torch_lu,
    "lu_solve": torch_lu_solve,
    "lu_unpack": lu_unpack,
    "triangular_solve": triangular_solve,
    "cholesky_solve": cholesky_solve,
    "cholesky_inverse": cholesky_inverse,
    "cholesky": torch_cholesky,
}
def _cholesky_solve_method(self, input2, upper: bool = False) -> Tensor:
    return cholesky_solve(self, input2, upper)


def _orgqr_method(self, input2) -> Tensor:
    return householder_product(self, input2)


def _ormqr_method(self, input2, input3, left: bool = True, transpose: bool = False) -> Tensor:
    return ormqr(self, input2, input3, left, transpose)


METHODS = {name: f for name, f in FUNCTIONS.items()
           if name not in ("lu_unpack", "svd_lowrank", "pca_lowrank")}
METHODS.update(cholesky_solve=_cholesky_solve_method, orgqr=_orgqr_method, ormqr=_ormqr_method)

# torch.linalg (re-exported by chainrule.linalg)
LINALG = {
    "solve_triangular": solve_triangular,
    "lu_factor_ex": lu_factor_ex,
    "lu_factor": lu_factor,
    "lu": lu,
    "lu_solve": lu_solve,
    "inv_ex": inv_ex,
    "solve_ex": solve_ex,
    "cholesky_ex": cholesky_ex,
    "cond": cond,
    "matrix_rank": matrix_rank,
    "tensorinv": tensorinv,
    "tensorsolve": tensorsolve,
    "vander": vander,
    "householder_product": householder_product,
    "eig": eig,
    "eigvals": eigvals,
    "ldl_factor_ex": ldl_factor_ex,
    "ldl_factor": ldl_factor,
    "ldl_solve": ldl_solve,
}
