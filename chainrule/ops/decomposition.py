"""Factorizations and the solvers built on them: triangular solves, LU (and the solvers and
inverses that report ``info``), Householder products (geqrf, orgqr, ormqr), condition numbers and
ranks, and randomized low-rank SVD/PCA.

The LU rules are the standard matrix-calculus results for A = P L U (square: S. P. Walter and A.
Lehmann, "Algorithmic differentiation of linear algebra functions with application in optimum
experimental design", 2018; the rectangular cases follow by eliminating the extra block of L or
U, which is a triangular solve away from A). Every rule is written with the triangular solve below,
so it differentiates again.
"""

from __future__ import annotations

from .._backend import xp
from .._batching import pad_leading
from .._dispatch import apply
from ..tensor import Tensor
from ._registry import defop
from .linalg import _check_matrix, _type_name, _warn_once, _write_out, cholesky, inv, solve
from .reduction import result

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


def solve_triangular(A, B, *, upper: bool, left: bool = True, unitriangular: bool = False,
                     out=None) -> Tensor:
    """The solution X of A X = B (X A = B with left=False) for triangular A (batched)."""
    name = "linalg.solve_triangular"
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
    return value if out is None else _write_out("linalg_solve_triangular", out, value, A, B)


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
                     unitriangular: bool = False, *, out=None) -> tuple:
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
    return value if out is None else _write_out("triangular_solve", out, value, b, A)


def _as_triangular(L, upper: bool):
    """L with the values of its triangle and the derivative of the whole matrix (PyTorch's
    cholesky_solve and cholesky_inverse differentiate L L^T with respect to all of L)."""
    other = L.tril(-1) if upper else L.triu(1)
    return L - other.detach()


def _gram(L, upper: bool):
    L = _as_triangular(L, upper)
    return L.mT @ L if upper else L @ L.mT


def cholesky_solve(B, L, upper: bool = False, *, out=None) -> Tensor:
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
    return value if out is None else _write_out("cholesky_solve", out, value, B, L)


def cholesky_inverse(L, upper: bool = False, *, out=None) -> Tensor:
    """The inverse of A = L L^T (U^T U with upper=True) from its Cholesky factor."""
    _check_matrix(L, "cholesky_inverse")
    value = inv(_gram(L, upper))
    return value if out is None else _write_out("cholesky_inverse", out, value, L)


def torch_cholesky(input, upper: bool = False, *, out=None) -> Tensor:
    """The Cholesky factor (deprecated: linalg.cholesky)."""
    _warn_once("torch.cholesky is deprecated in favor of torch.linalg.cholesky and will be "
               "removed in a future PyTorch release.\nL = torch.cholesky(A)\nshould be replaced "
               "with\nL = torch.linalg.cholesky(A)\nand\nU = torch.cholesky(A, upper=True)\n"
               "should be replaced with\nU = torch.linalg.cholesky(A).mH\nThis transform will "
               "produce equivalent results for all valid (symmetric positive definite) inputs.")
    _check_matrix(input, "cholesky")
    value = cholesky(input, upper=upper)
    return value if out is None else _write_out("cholesky", out, value, input)


# ---- public tables ------------------------------------------------------------------------------

FUNCTIONS = {
    "triangular_solve": triangular_solve,
    "cholesky_solve": cholesky_solve,
    "cholesky_inverse": cholesky_inverse,
    "cholesky": torch_cholesky,
}
METHODS = dict(FUNCTIONS)

# torch.linalg (re-exported by chainrule.linalg)
LINALG = {
    "solve_triangular": solve_triangular,
}
