"""Linear algebra: products (matmul, einsum, ...), diagonals and triangles, and ``torch.linalg``.

The derivative rules of the factorizations are the standard matrix-calculus results: M. B. Giles,
"An extended collection of matrix derivative results for forward and reverse mode algorithmic
differentiation" (2008) for inv, det, solve and cholesky (with the symmetrized form of
I. Murray, "Differentiation of the Cholesky decomposition", 2016); H.-J. Liao et al.,
"Differentiable programming tensor networks" (2019) for qr; J. Townsend, "Differentiating the
singular value decomposition" (2016) for svd; the same eigenvector formula for eigh; G. H. Golub
and V. Pereyra (1973) for pinv. Like PyTorch's, the eigh and svd rules divide by differences of
eigenvalues (squared singular values): they hold for distinct ones only.
"""

from __future__ import annotations

import math
import string
import warnings

from .._backend import xp
from .._batching import batch_dims, fallback, leading_dims, logical_ndim, pad_leading, physical
from .._dispatch import apply, apply_inplace
from .._meta import MetaArray, array_of
from .._validation import dtype_name, int_argument
from ..tensor import Tensor
from ._registry import defop
from ._shapes import normalize_dim
from .elementwise import MUL
from .reduction import SUM_DIM, _prod_others, amax, amin, result, vector_norm


class LinAlgError(RuntimeError):
    """A linear algebra error (singular or not positive-definite input), as torch.linalg's."""


def _const(array) -> Tensor:
    return Tensor._wrap(array_of(array), None, 0)


def _eye(n: int, m: int | None = None, k: int = 0, dtype=None) -> Tensor:
    return _const(xp.eye(n, m, k, dtype=dtype))


def _diag(v) -> Tensor:
    """Batched diagonal matrices from vectors (the last dim)."""
    return diag_embed(v)


def _solve_left(a, b):
    """a^{-1} b for matrices b."""
    return apply(LINALG_SOLVE, a, b, vector=False)


def _solve_right(b, a):
    """b a^{-1} for matrices b."""
    return apply(LINALG_SOLVE, a.mT, b.mT, vector=False).mT


def _add(a, b):
    """a + b where either may be None (no term)."""
    if a is None:
        return b
    return a if b is None else a + b


# ---- products ------------------------------------------------------------------------------------


def _matmul_batch(op, args, flags, size, params):
    """vmap of a product with matmul's semantics (mm, matmul, mv, vm, dot), on batch-first
    values: ``matmul`` of the values shaped so that it computes every example's product."""
    a, b = args
    fa, fb = flags
    na, nb = logical_ndim(a, fa), logical_ndim(b, fb)
    if na == 1 and nb == 1:  # dot products
        if fa and fb:
            return apply(EINSUM, a, b, equation="zi,zi->z")
        return matmul(a, b) if fa else matmul(b, a)  # (B, k) @ (k,)
    if fa and not fb and nb <= 2:
        # (B, ..., k) @ (k, n): one product with the batch (and a's leading dims) as rows,
        # rather than B products against a broadcast copy of b.
        shape = a._data.shape
        if nb == 2 or len(shape) == 2:  # (the kernel makes a stack @ matrix one 2-D product)
            return matmul(a, b)
        return matmul(a.reshape(-1, shape[-1]), b).reshape(shape[:-1])
    if fb and not fa and na == 2 and nb <= 2:
        # (m, k) @ (B, k, n) as (B n, k) @ (k, m), transposed back (a copy of b at most, where
        # n > 1, against B separate products)
        if nb == 1:
            return matmul(b, a.mT)
        _, k, n = b._data.shape
        if n == 1:  # a column per example: the columns are the rows of one product
            return matmul(b.reshape(size, k), a.mT).unsqueeze(-1)
        out = matmul(b.mT.reshape(-1, k), a.mT)
        return out.reshape(size, n, out._data.shape[-1]).mT
    # A vector is a one-row (left) or one-column (right) matrix, for batched and unbatched
    # values alike; the leading dims of batched values are lined up and broadcast.
    if na == 1:
        a = a.unsqueeze(-2)
    if nb == 1:
        b = b.unsqueeze(-1)
    a, b = pad_leading((a, b), flags, (2, 2))
    out = matmul(a, b)
    if nb == 1:
        out = out.squeeze(-1)
    return out.squeeze(-2) if na == 1 else out


def _mm_rules():
    return (lambda g, other: g @ other.mT, lambda g, input: input.mT @ g)


def _matmul(a, b):
    """matmul; a product over a dim of size 1 (an outer product, as in per-example weight
    gradients) as a broadcast product: the same numbers, several times faster than NumPy's
    matmul loop over tiny inner products (einsum's loop beats multiply's on large outputs)."""
    if a.ndim >= 2 and b.ndim >= 2 and a.shape[-1] == 1 == b.shape[-2]:
        # (row-major as a product is: the layout decides the order random ops draw in)
        if a.size * b.shape[-1] > 16384:
            return xp.einsum("...ik,...kj->...ij", a, b, order="C")
        return xp.multiply(a, b, order="C")
    if a.ndim > 2 and b.ndim == 2:  # one 2-D product: NumPy's stacked matmul calls BLAS per matrix
        return xp.matmul(a.reshape(-1, a.shape[-1]), b).reshape(a.shape[:-1] + b.shape[-1:])
    if a.ndim == 2 == b.ndim:
        out = _diagonal_product(a, b)
        if out is not None:
            return out
    return xp.matmul(a, b)


_ndarray = xp.ndarray
_DIAGONAL_MIN = 128  # below this a product is cheap next to the check
_DIAGONAL_OTHER = 16


def _is_diagonal(m) -> bool:
    """Whether a square matrix has no nonzero element off its diagonal (a dense one is told
    apart by its first row, O(n))."""
    n = m.shape[0]
    if m.shape[1] != n or n < _DIAGONAL_MIN or type(m) is not _ndarray or m.dtype.kind not in "fc":
        return False
    if not m.flags.c_contiguous:
        m = m.T  # diagonal if its transpose is
        if not m.flags.c_contiguous:
            return False
    # In the flat matrix, the n - 1 runs of n elements after each diagonal one are the rest.
    return not m[0, 1:].any() and not m.reshape(-1)[1:].reshape(n - 1, n + 1)[:, :n].any()


def _diagonal_product(a, b):
    """``a @ b`` where one factor is a diagonal matrix, as a scaling of the other's rows or
    columns: O(n^2) instead of a product's O(n^3). Jacobians make these: vmap over the
    identity basis of jacrev or jacfwd multiplies a scaled identity by a weight. The numbers
    are the product's (one nonzero term per sum), unless the other factor holds an infinity or
    a NaN, which a product spreads over whole columns or rows: then None, and a product."""
    # (against a few columns or rows the product is as cheap as the check)
    if b.shape[1] >= _DIAGONAL_OTHER and _is_diagonal(a):
        out = xp.multiply(a.diagonal()[:, None], b, order="C")
    elif a.shape[0] >= _DIAGONAL_OTHER and _is_diagonal(b):
        out = xp.multiply(a, b.diagonal(), order="C")
    else:
        return None
    return out if xp.isfinite(out).all() else None


MM = defop("mm", _matmul, ("input", "other"), _mm_rules(), promote=True, jvp="multilinear",
           batch=_matmul_batch)
BMM = defop(
    "matmul",
    _matmul,
    ("input", "other"),
    _mm_rules(),
    promote=True,
    backward_name="BmmBackward0",
    jvp="multilinear",
    batch=_matmul_batch,
)
DOT = defop(
    "dot",
    xp.matmul,
    ("input", "other"),
    MUL.vjp,  # g is a scalar: the elementwise product's rules
    promote=True,
    jvp="multilinear",
    batch=_matmul_batch,
)
# (.., m, k) @ (k,) -> (.., m)
MV = defop(
    "mv",
    xp.matmul,
    ("input", "other"),
    (
        lambda g, other: g.unsqueeze(-1) * other,
        # one vector-matrix product for a matrix (4 ops less, 8 less under vmap)
        lambda g, input: g @ input if input.ndim == 2 else (input.mT @ g.unsqueeze(-1)).squeeze(-1),
    ),
    promote=True,
    jvp="multilinear",
    batch=_matmul_batch,
)
# (k,) @ (.., k, n) -> (.., n)
VM = defop(
    "vm",
    xp.matmul,
    ("input", "other"),
    (
        lambda g, other: other @ g if other.ndim == 2 else (g.unsqueeze(-2) @ other.mT).squeeze(-2),
        lambda g, input: input.unsqueeze(-1) * g.unsqueeze(-2),
    ),
    promote=True,
    backward_name="MvBackward0",
    jvp="multilinear",
    batch=_matmul_batch,
)


def _vdot_batch(op, args, flags, size, params):
    if any(isinstance(a, Tensor) and a._data.dtype.kind == "c" for a in args):
        # Complex inputs need a conjugate, and chainrule has no conj op: run per example.
        return fallback(op, args, flags, size, params)
    return _matmul_batch(op, args, flags, size, params)  # real: the dot product


VDOT = defop(
    "vdot",
    xp.vdot,
    ("input", "other"),
    # conj(input) . other: the rules follow the complex convention themselves
    (lambda g, other: g.conj() * other, lambda g, input: g * input),
    promote=True,
    holomorphic=False,
    jvp="multilinear",
    batch=_vdot_batch,
)


def _matmul_dtypes(input, other) -> None:
    """The matmul family multiplies one dtype (no promotion), in the words of PyTorch's kernel
    for the shapes: dot, addmv (mv), mm, or the batched product."""
    x, y = input._data.dtype, other._data.dtype
    if x == y:
        return
    a, b = input._data.ndim, other._data.ndim
    if a == 1 and b == 1:
        raise RuntimeError(f"dot : expected both vectors to have same dtype, but found "
                           f"{dtype_name(x)} and {dtype_name(y)}")
    if b == 1:
        raise RuntimeError(f"addmv input tensors must have the same dtype, but got "
                           f"{dtype_name(y)}, {dtype_name(x)}, and {dtype_name(y)}")
    if b == 2:
        raise RuntimeError(f"expected m1 and m2 to have the same dtype, but got: "
                           f"{dtype_name(x, 'cpp')} != {dtype_name(y, 'cpp')}")
    raise RuntimeError(f"expected scalar type {dtype_name(x)} but found {dtype_name(y)}")


def _addmm_dtypes(input, mat1, mat2) -> None:
    i, m1, m2 = input._data.dtype, mat1._data.dtype, mat2._data.dtype
    if m1 != m2 and i != m1:
        raise RuntimeError(f"mat1 and mat2 must have the same dtype, but got {dtype_name(m1)} "
                           f"and {dtype_name(m2)}")
    if i != m2:
        raise RuntimeError(f"self and mat2 must have the same dtype, but got {dtype_name(i)} and "
                           f"{dtype_name(m2)}")


def matmul(input, other) -> Tensor:
    """Matrix product with NumPy/PyTorch broadcasting of batch dims and 1-D promotion."""
    a, b = input._data.ndim, other._data.ndim
    if a == 0 or b == 0:
        raise RuntimeError(
            f"matmul: both arguments to matmul need to be at least 1D, but they are {a}D and {b}D"
        )
    _matmul_dtypes(input, other)
    ka = input._data.shape[-1]
    kb = other._data.shape[-2] if b > 1 else other._data.shape[0]
    if ka != kb:
        shape_a = "x".join(map(str, input._data.shape[-2:] if a > 1 else (1, ka)))
        shape_b = "x".join(map(str, other._data.shape[-2:] if b > 1 else (kb, 1)))
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


def mm(input, mat2) -> Tensor:
    """Matrix product of two 2-D tensors."""
    if input._data.ndim != 2 or mat2._data.ndim != 2:
        raise RuntimeError(
            f"mm: expected 2-D tensors, got {input._data.ndim}-D and "
            f"{mat2._data.ndim}-D; use matmul for other shapes"
        )
    return matmul(input, mat2)


def _no_out_dtype(name: str) -> None:
    # torch has out_dtype kernels on CUDA only
    raise NotImplementedError(f"Could not run 'aten::{name}.dtype' with arguments from the 'CPU' "
                              "backend.")


def bmm(input, mat2, out_dtype=None) -> Tensor:
    """Batched matrix product of two 3-D tensors with the same batch size (no broadcasting)."""
    if out_dtype is not None:
        _no_out_dtype("bmm")
    if input._data.ndim != 3:
        raise RuntimeError("batch1 must be a 3D tensor")
    if mat2._data.ndim != 3:
        raise RuntimeError("batch2 must be a 3D tensor")
    b, _, k = input._data.shape
    if mat2._data.shape[:2] != (b, k):
        raise RuntimeError(f"Expected size for first two dimensions of batch2 tensor to be: "
                           f"[{b}, {k}] but got: {list(mat2._data.shape[:2])}.")
    _matmul_dtypes(input, mat2)
    return apply(BMM, input, mat2)


def mv(input, vec) -> Tensor:
    """Product of a matrix and a vector."""
    if input._data.ndim != 2 or vec._data.ndim != 1:
        raise RuntimeError(f"vector + matrix @ vector expected, got 1, {input._data.ndim}, "
                           f"{vec._data.ndim}")
    (n, m), k = input._data.shape, vec._data.shape[0]
    if m != k:
        raise RuntimeError(f"size mismatch, got input ({n}), mat ({n}x{m}), vec ({k})")
    return matmul(input, vec)


def _vector_pair(name: str, input, other) -> None:
    if input._data.ndim != 1 or other._data.ndim != 1:
        raise RuntimeError(f"1D tensors expected, but got {input._data.ndim}D and "
                           f"{other._data.ndim}D tensors")
    if input._data.shape != other._data.shape:
        n, m = input._data.shape[0], other._data.shape[0]
        raise RuntimeError(f"inconsistent tensor size, expected tensor [{n}] and src [{m}] to "
                           f"have the same number of elements, but got {n} and {m} elements "
                           "respectively")
    if input._data.dtype != other._data.dtype:
        raise RuntimeError(f"{name} : expected both vectors to have same dtype, but found "
                           f"{_type_name(input)} and {_type_name(other)}")


def _type_name(t) -> str:
    return t._type_desc().split()[0][len("torch."):-len("Tensor")]


def dot(input, tensor) -> Tensor:
    """Inner product of two 1-D tensors."""
    _vector_pair("dot", input, tensor)
    return apply(DOT, input, tensor)


def vdot(input, other) -> Tensor:
    """Inner product of two 1-D tensors, conjugating the first."""
    _vector_pair("vdot", input, other)
    return apply(VDOT, input, other)


def outer(input, vec2) -> Tensor:
    """Outer product of two 1-D tensors."""
    if input._data.ndim != 1:
        raise RuntimeError(f"outer: Expected 1-D argument self, but got {input._data.ndim}-D")
    if vec2._data.ndim != 1:
        raise RuntimeError(f"outer: Expected 1-D argument vec2, but got {vec2._data.ndim}-D")
    return input.unsqueeze(-1) * vec2


def _scaled(x, factor):
    return x if factor == 1 else x * factor


def _addmm(input, mat1, mat2, beta, alpha):
    product = xp.matmul(mat1, mat2)
    if product.dtype.kind in "iu":  # PyTorch truncates the scalars for integer tensors
        beta, alpha = int(beta), int(alpha)
    if alpha != 1:
        product *= alpha
    if beta == 0:  # input is ignored, NaN and inf included (PyTorch's convention)
        return xp.broadcast_to(product, xp.broadcast_shapes(input.shape, product.shape)).copy()
    return (input * beta if beta != 1 else input) + product


def _addmm_jvp(t_input, t_mat1, t_mat2, mat1, mat2, beta, alpha):
    out = None
    if t_mat1 is not None:
        out = t_mat1 @ mat2
    if t_mat2 is not None:
        out = _add(out, mat1 @ t_mat2)
    if out is not None:
        out = _scaled(out, alpha)
    if t_input is not None and beta != 0:
        out = _add(out, _scaled(t_input, beta))
    return out


def _addmm_batch(op, args, flags, size, params):
    input, mat1, mat2 = args
    if flags == [False, True, False] and mat1._data.ndim == 3 and mat2._data.ndim == 2 and (
            input._data.ndim < 2 or input._data.shape[:-1] == (1,)):
        # A batched mat1 times mat2 plus a row (a bias): one product with the batch as rows.
        _, m, k = mat1._data.shape
        out = apply(op, input, mat1.reshape(-1, k), mat2, **params)
        return out.reshape(size, m, out._data.shape[-1])
    # matmul's leading dims, and the input broadcast against the product
    return apply(op, *pad_leading(args, flags, (2, 2, 2)), **params)


def _addmm_record(name: str):
    return defop(
        name,
        _addmm,
        ("input", "mat1", "mat2"),
        (
            lambda g, beta: g * beta,
            lambda g, mat2, alpha: _scaled(g @ mat2.mT, alpha),
            lambda g, mat1, alpha: _scaled(mat1.mT @ g, alpha),
        ),
        promote=True,
        jvp=_addmm_jvp,
        batch=_addmm_batch,
    )


ADDMM = _addmm_record("addmm")
BADDBMM = _addmm_record("baddbmm")


def addmm(input, mat1, mat2, out_dtype=None, *, beta=1, alpha=1) -> Tensor:
    """beta * input + alpha * (mat1 @ mat2)."""
    if out_dtype is not None:
        _no_out_dtype("addmm")
    mm_check = mm  # the shape errors of mm
    if mat1._data.ndim != 2 or mat2._data.ndim != 2:
        mm_check(mat1, mat2)
    if mat1._data.shape[1] != mat2._data.shape[0]:
        raise RuntimeError(f"mat1 and mat2 shapes cannot be multiplied "
                           f"({mat1._data.shape[0]}x{mat1._data.shape[1]} and "
                           f"{mat2._data.shape[0]}x{mat2._data.shape[1]})")
    _addmm_dtypes(input, mat1, mat2)
    return apply(ADDMM, input, mat1, mat2, beta=beta, alpha=alpha)


def baddbmm(input, batch1, batch2, out_dtype=None, *, beta=1, alpha=1) -> Tensor:
    """beta * input + alpha * (batch1 @ batch2), batched."""
    if out_dtype is not None:
        _no_out_dtype("baddbmm")
    if batch1._data.ndim != 3 or batch2._data.ndim != 3 or (
            batch1._data.shape[0] != batch2._data.shape[0]
            or batch1._data.shape[2] != batch2._data.shape[1]):
        bmm(batch1, batch2)
    dtypes = (input._data.dtype, batch1._data.dtype, batch2._data.dtype)
    if len(set(dtypes)) > 1:
        i, b1, b2 = (dtype_name(d, "cpp") for d in dtypes)
        raise RuntimeError(f"Input dtypes must be the same, got: input {i}, batch1: {b1}, "
                           f"batch2: {b2}")
    return apply(BADDBMM, input, batch1, batch2, beta=beta, alpha=alpha)


def _addmm_(self, mat1, mat2, *, beta=1, alpha=1) -> Tensor:
    return apply_inplace(ADDMM, self, mat1, mat2, beta=beta, alpha=alpha)


def _baddbmm_(self, batch1, batch2, *, beta=1, alpha=1) -> Tensor:
    return apply_inplace(BADDBMM, self, batch1, batch2, beta=beta, alpha=alpha)


# addmv, addr and addbmm are addmm with the vectors as one-column/one-row matrices (addbmm: the
# batch laid side by side), so they share its rules, its beta=0 convention and its batching.


def _check_addmv(input, mat, vec) -> None:
    if mat._data.ndim != 2 or vec._data.ndim != 1 or input._data.ndim > 1:
        raise RuntimeError(f"vector + matrix @ vector expected, got {input._data.ndim}, "
                           f"{mat._data.ndim}, {vec._data.ndim}")
    n, k = mat._data.shape
    if vec._data.shape[0] != k or input._data.shape not in ((), (1,), (n,)):
        shape = "x".join(map(str, input._data.shape))
        raise RuntimeError(f"size mismatch, got input ({shape}), mat ({n}x{k}), "
                           f"vec ({vec._data.shape[0]})")


def _check_dtypes(name: str, *tensors) -> None:
    if len({t._data.dtype for t in tensors}) > 1:
        names = [_type_name(t).capitalize() for t in tensors]
        raise RuntimeError(f"{name} input tensors must have the same dtype, but got "
                           f"{', '.join(names[:-1])}, and {names[-1]}")


def addmv(input, mat, vec, *, beta=1, alpha=1) -> Tensor:
    """beta * input + alpha * (mat @ vec)."""
    _check_addmv(input, mat, vec)
    _check_dtypes("addmv", input, mat, vec)
    value = apply(ADDMM, input.unsqueeze(-1) if input._data.ndim else input, mat,
                  vec.unsqueeze(-1), beta=beta, alpha=alpha).squeeze(-1)
    return value


def _check_addr(input, vec1, vec2, inplace: bool) -> None:
    for name, v in (("vec1", vec1), ("vec2", vec2)):
        if v._data.ndim != 1:
            raise RuntimeError(f"addr: Expected 1-D argument {name}, but got {v._data.ndim}-D")
    shape = (vec1._data.shape[0], vec2._data.shape[0])
    if inplace and input._data.shape != shape:
        raise RuntimeError(f"size mismatch, input: {list(input._data.shape)}, v1: "
                           f"{list(vec1._data.shape)}, v2: {list(vec2._data.shape)}")


def addr(input, vec1, vec2, *, beta=1, alpha=1) -> Tensor:
    """beta * input + alpha * outer(vec1, vec2)."""
    _check_addr(input, vec1, vec2, False)
    value = apply(ADDMM, input, vec1.unsqueeze(-1), vec2.unsqueeze(0), beta=beta, alpha=alpha)
    return value


def _side_by_side(batch1, batch2):
    """(b, n, k) and (b, k, p) as (n, b k) and (b k, p): one product sums the b products."""
    if batch1._data.ndim != 3 or batch2._data.ndim != 3:
        bmm(batch1, batch2)
    b, n, k = batch1._data.shape
    if batch2._data.shape[0] != b:
        raise RuntimeError(f"batch1 and batch2 must have same number of batches, got {b} and "
                           f"{batch2._data.shape[0]}")
    if batch2._data.shape[1] != k:
        raise RuntimeError(f"Incompatible matrix sizes for bmm ({n}x{k} and "
                           f"{batch2._data.shape[1]}x{batch2._data.shape[2]})")
    return batch1.permute(1, 0, 2).reshape(n, b * k), batch2.reshape(b * k, -1)


def addbmm(input, batch1, batch2, *, beta=1, alpha=1) -> Tensor:
    """beta * input + alpha * (the sum of the products batch1[i] @ batch2[i])."""
    mat1, mat2 = _side_by_side(batch1, batch2)
    _addmm_dtypes(input, mat1, mat2)
    value = apply(ADDMM, input, mat1, mat2, beta=beta, alpha=alpha)
    return value


def _inplace_result(self, value) -> Tensor:
    """``self`` overwritten by ``value`` (an in-place op computed out of place)."""
    if value._data.shape != self._data.shape:
        raise RuntimeError(f"Bad in-place call: input tensor size {list(self._data.shape)} and "
                           f"output tensor size {list(value._data.shape)} should match")
    return self.copy_(value)


def _addmv_(self, mat, vec, *, beta=1, alpha=1) -> Tensor:
    return _inplace_result(self, addmv(self, mat, vec, beta=beta, alpha=alpha))


def _addr_(self, vec1, vec2, *, beta=1, alpha=1) -> Tensor:
    _check_addr(self, vec1, vec2, True)
    return _inplace_result(self, addr(self, vec1, vec2, beta=beta, alpha=alpha))


def _addbmm_(self, batch1, batch2, *, beta=1, alpha=1) -> Tensor:
    return _inplace_result(self, addbmm(self, batch1, batch2, beta=beta, alpha=alpha))


def inner(input, other) -> Tensor:
    """Sum of products over the last dims (a scalar operand multiplies)."""
    if input._data.ndim == 0 or other._data.ndim == 0:
        value = input * other
    else:
        if input._data.shape[-1] != other._data.shape[-1]:
            raise RuntimeError(f"inner() the last dimension must match on both input tensors "
                               f"but got shapes {list(input._data.shape)} and "
                               f"{list(other._data.shape)}")
        if input._data.dtype != other._data.dtype:
            raise RuntimeError("both inputs should have same dtype")
        value = tensordot(input, other, ([-1], [-1]))
    return value


def adjoint(input) -> Tensor:
    """A view of the matrices transposed (conjugated, for complex input)."""
    ndim = input._data.ndim
    if ndim == 0:
        _warn_once("adjoint() is deprecated on 0-D tensors. Consider using x.conj().")
        return input.conj() if input._data.dtype.kind == "c" else input.view(())
    if ndim == 1:
        raise RuntimeError("tensor.adjoint() is only supported on matrices or batches of "
                           "matrices. Got 1-D tensor.")
    out = input.transpose(-2, -1)
    return out.conj() if input._data.dtype.kind == "c" else out


def dist(input, other, p=2) -> Tensor:
    """The p-norm of input - other."""
    if not isinstance(p, (int, float)) or isinstance(p, bool):
        raise TypeError(f"dist(): argument 'p' must be Number, not {type(p).__name__}")
    return vector_norm(input - other, p)


def chain_matmul(*matrices) -> Tensor:
    """The product of a chain of matrices (deprecated: use linalg.multi_dot)."""
    _warn_once("torch.chain_matmul is deprecated and will be removed in a future PyTorch "
               "release. Use torch.linalg.multi_dot instead, which accepts a list of two or more "
               "tensors rather than multiple parameters.")
    if not matrices:
        raise RuntimeError("chain_matmul(): Expected one or more matrices")
    for m in matrices:
        if m._data.ndim != 2:
            raise RuntimeError(f"Tensor dimension is {m._data.ndim}, expected 2 instead.")
    value = matrices[0].clone() if len(matrices) == 1 else multi_dot(list(matrices))
    return value


# ---- once-only warnings --------------------------------------------------------------------------

_WARNED: set = set()


def _warn_once(message: str) -> None:
    """A UserWarning PyTorch gives once per process (TORCH_WARN_ONCE)."""
    if message not in _WARNED:
        _WARNED.add(message)
        warnings.warn(message, UserWarning, stacklevel=3)



# ---- einsum, tensordot, kron ------------------------------------------------------------------


def _swap_equation(equation: str, which: int) -> str:
    """'a,b->o' as the equation of its VJP for input ``which``: 'o,b->a' or 'a,o->b'."""
    inputs, out = equation.split("->")
    a, b = inputs.split(",")
    return f"{out},{b}->{a}" if which == 0 else f"{a},{out}->{b}"


# A binary contraction whose subscripts are unique within each operand and each appear in one of
# the other two terms; einsum() reduces any equation to these (plus diagonals and sums), so the
# gradient of each operand is again such a contraction, of g with the other operand.
def _einsum_batch(op, args, flags, size, params):
    """The batch as one more subscript, of the batched operands and of the output."""
    equation = params["equation"]
    inputs, out = equation.split("->")
    z = next(c for c in string.ascii_letters if c not in equation)
    a, b = (z + t if f else t for t, f in zip(inputs.split(","), flags))
    return apply(op, *args, equation=f"{a},{b}->{z}{out}")


def _einsum_pair(input, other, equation):
    out = xp.asarray(xp.einsum(equation, input, other, optimize=True))
    # PyTorch's result of two operands is contiguous; NumPy's may be a transpose.
    return out if out.flags.c_contiguous else out.copy(order="C")


EINSUM = defop(
    "einsum",
    _einsum_pair,
    ("input", "other"),
    (
        lambda g, other, equation: apply(EINSUM, g, other, equation=_swap_equation(equation, 0)),
        lambda g, input, equation: apply(EINSUM, input, g, equation=_swap_equation(equation, 1)),
    ),
    promote=True,
    jvp="multilinear",
    batch=_einsum_batch,
)


def _einsum_terms(equation: str, operands: tuple) -> tuple[list[str], str]:
    """Each operand's subscripts and the output's, with '...' replaced by letters."""
    equation = equation.replace(" ", "")
    lhs, arrow, rhs = equation.partition("->")
    terms = lhs.split(",")
    if len(terms) > len(operands):
        raise RuntimeError("einsum(): fewer operands were provided than specified in the equation")
    if len(terms) < len(operands):
        raise RuntimeError("einsum(): more operands were provided than specified in the equation")
    free = [c for c in string.ascii_letters if c not in equation]
    counts = []
    for i, (term, x) in enumerate(zip(terms, operands)):
        named = len(term.replace("...", ""))
        ndim = x._data.ndim
        if "..." not in term and named != ndim:
            raise RuntimeError(f"einsum(): the number of subscripts in the equation ({named}) "
                               f"does not match the number of dimensions ({ndim}) for operand "
                               f"{i} and no ellipsis was given")
        if named > ndim:
            raise RuntimeError(f"einsum(): the number of subscripts in the equation ({named}) is "
                               f"more than the number of dimensions ({ndim}) for operand {i}")
        counts.append(ndim - named if "..." in term else 0)
    ellipsis = "".join(free[: max(counts, default=0)])
    terms = [t.replace("...", ellipsis[len(ellipsis) - n:]) for t, n in zip(terms, counts)]
    for t in terms:
        bad = [c for c in t if c not in string.ascii_letters]
        if bad:
            raise RuntimeError(f"einsum(): invalid subscript given in the equation string: "
                               f"{bad[0]!r}")
    if arrow:
        out = rhs.replace("...", ellipsis)
    else:
        seen = "".join(terms)
        out = ellipsis + "".join(sorted(c for c in set(seen) if seen.count(c) == 1
                                        and c not in ellipsis))
    for c in out:
        if c not in "".join(terms):
            raise RuntimeError(f"einsum(): output subscript {c} does not appear in the equation "
                               "for any input operand")
        if out.count(c) > 1:
            raise RuntimeError(f"einsum(): output subscript {c} appears more than once in the "
                               "output")
    return terms, out


def einsum(equation: str, *operands) -> Tensor:
    """Sum of products of the operands' elements over the indices the equation names
    (Einstein summation), with '...' and broadcasting."""
    if len(operands) == 1 and isinstance(operands[0], (list, tuple)):
        operands = tuple(operands[0])
    terms, out = _einsum_terms(equation, operands)
    dtypes = {x._data.dtype for x in operands}
    if len(dtypes) > 1:
        first = operands[0]
        other = next(x for x in operands if x._data.dtype != first._data.dtype)
        raise RuntimeError(f"expected scalar type {_type_name(first)} but found "
                           f"{_type_name(other)}")
    # Sizes, with size-1 dims broadcasting against larger ones (such dims are squeezed away).
    sizes: dict = {}
    for i, (t, x) in enumerate(zip(terms, operands)):
        for c, n in zip(t, x._data.shape):
            if n != 1 and sizes.get(c, 1) not in (1, n):
                raise RuntimeError(f"einsum(): subscript {c} has size {n} for operand {i} which "
                                   f"does not broadcast with previously seen size {sizes[c]}")
            sizes[c] = n if sizes.get(c, 1) == 1 else sizes[c]
    ops = []
    for t, x in zip(terms, operands):
        drop = tuple(d for d, (c, n) in enumerate(zip(t, x._data.shape)) if n == 1
                     and sizes[c] != 1)
        if drop:
            x = x.squeeze(drop)
            t = "".join(c for d, c in enumerate(t) if d not in drop)
        ops.append([x, t])
    for entry in ops:  # repeated subscripts within an operand: take the diagonal
        x, t = entry
        while len(set(t)) < len(t):
            c = next(c for c in t if t.count(c) > 1)
            p = t.index(c)
            q = t.index(c, p + 1)
            x = diagonal(x, 0, p, q)
            t = "".join(s for d, s in enumerate(t) if d not in (p, q)) + c
        entry[:] = [x, t]
    for i, entry in enumerate(ops):  # subscripts nothing else names: sum them out
        x, t = entry
        elsewhere = out + "".join(o[1] for j, o in enumerate(ops) if j != i)
        lonely = tuple(d for d, c in enumerate(t) if c not in elsewhere)
        if lonely:
            entry[:] = [x.sum(lonely), "".join(c for c in t if c in elsewhere)]
    while len(ops) > 1:
        (a, sa), (b, sb) = ops[0], ops[1]
        rest = ops[2:]
        needed = out + "".join(t for _, t in rest)
        keep = out if not rest else "".join(c for c in dict.fromkeys(sa + sb) if c in needed)
        ops = [[apply(EINSUM, a, b, equation=f"{sa},{sb}->{keep}"), keep]] + rest
    x, t = ops[0]
    return x.permute(tuple(t.index(c) for c in out))


def tensordot(a, b, dims=2) -> Tensor:
    """Contract the last ``dims`` dims of a with the first of b, or the dims listed in ``dims``."""
    if isinstance(dims, Tensor):
        dims = dims.tolist()
    if isinstance(dims, int):
        if dims < 0:
            raise RuntimeError(f"tensordot expects dims >= 0, but got dims={dims}")
        dims_a = list(range(a._data.ndim - dims, a._data.ndim))
        dims_b = list(range(dims))
    else:
        dims_a, dims_b = ([d] if isinstance(d, int) else list(d) for d in dims)
    dims_a = [normalize_dim(d, a._data.ndim, "tensordot") for d in dims_a]
    dims_b = [normalize_dim(d, b._data.ndim, "tensordot") for d in dims_b]
    if len(dims_a) != len(dims_b):
        raise RuntimeError("both dimension lists should have same length")
    if a._data.dtype != b._data.dtype:
        raise RuntimeError("both inputs should have same dtype")
    for da, db in zip(dims_a, dims_b):
        # a contracted dim of size 1 meets the other side's dim summed, as PyTorch's does
        if a._data.shape[da] != b._data.shape[db] and b._data.shape[db] == 1:
            a = a.sum(da, keepdim=True)
        elif a._data.shape[da] != b._data.shape[db] and a._data.shape[da] == 1:
            b = b.sum(db, keepdim=True)
        if a._data.shape[da] != b._data.shape[db]:
            raise RuntimeError(f"contracted dimensions need to match, but first has size "
                               f"{a._data.shape[da]} in dim {da} and second has size "
                               f"{b._data.shape[db]} in dim {db}")
    free_a = [d for d in range(a._data.ndim) if d not in dims_a]
    free_b = [d for d in range(b._data.ndim) if d not in dims_b]
    k = math.prod(a._data.shape[d] for d in dims_a)
    left = a.permute(tuple(free_a + dims_a)).reshape(-1, k)
    right = b.permute(tuple(dims_b + free_b)).reshape(k, -1)
    shape = tuple(a._data.shape[d] for d in free_a) + tuple(b._data.shape[d] for d in free_b)
    return mm(left, right).reshape(shape)


def kron(input, other) -> Tensor:
    """Kronecker product."""
    nd = max(input._data.ndim, other._data.ndim)
    sa = (1,) * (nd - input._data.ndim) + input._data.shape
    sb = (1,) * (nd - other._data.ndim) + other._data.shape
    a = input.reshape(tuple(s for n in sa for s in (n, 1)))
    b = other.reshape(tuple(s for n in sb for s in (1, n)))
    return (a * b).reshape(tuple(m * n for m, n in zip(sa, sb)))


# ---- diagonals and triangles --------------------------------------------------------------------


def _diagonal_view(input, offset: int, dim1: int, dim2: int):
    """A writable view of the diagonal (PyTorch's layout: the diagonal becomes the last dim).

    Built on the array that owns the memory, so that the view shares its base with ``input``.
    """
    s1, s2 = input.strides[dim1], input.strides[dim2]
    n1, n2 = input.shape[dim1], input.shape[dim2]
    if offset >= 0:
        length, start = max(min(n1, n2 - offset), 0), offset * s2
    else:
        length, start = max(min(n1 + offset, n2), 0), -offset * s1
    rest = [d for d in range(input.ndim) if d not in (dim1, dim2)]
    shape = tuple(input.shape[d] for d in rest) + (length,)
    strides = tuple(input.strides[d] for d in rest) + (s1 + s2,)
    if type(input) is MetaArray:  # a view of the meta storage
        return xp.diagonal(input, offset, dim1, dim2)
    owner = input.base if input.base is not None else input
    if not isinstance(owner, xp.ndarray) or length == 0 or 0 in shape:
        return xp.diagonal(input, offset, dim1, dim2).copy()
    if not (owner.flags.c_contiguous or owner.flags.f_contiguous):
        # Memory in another order (a stack of transposes) is no buffer to build on; NumPy's
        # diagonal is a view of it too, read-only until told otherwise.
        view = xp.diagonal(input, offset, dim1, dim2)
        view.flags.writeable = input.flags.writeable
        return view
    at = input.__array_interface__["data"][0] - owner.__array_interface__["data"][0]
    return xp.ndarray(shape, input.dtype, buffer=owner, offset=at + start, strides=strides)


def _embed_diagonal(input, offset, dim1, dim2, shape):
    out = xp.zeros(shape, dtype=input.dtype)
    _diagonal_view(out, offset, dim1, dim2)[...] = input
    return out


def _diagonal_grad(g, input_shape, offset, dim1, dim2):
    return apply(DIAG_EMBED, g, offset=offset, dim1=dim1, dim2=dim2, shape=input_shape)


def _diag_embed_batch(op, args, flags, size, params):
    return apply(op, args[0], offset=params["offset"], dim1=params["dim1"] + 1,
                 dim2=params["dim2"] + 1, shape=(size,) + tuple(params["shape"]))


DIAGONAL = defop("diagonal", _diagonal_view, ("input",), (_diagonal_grad,), view=True,
                 jvp="linear", batch=batch_dims("dim1", "dim2"))
DIAGONAL_COPY = defop(
    "diagonal_copy",
    lambda input, offset, dim1, dim2: xp.diagonal(input, offset, dim1, dim2).copy(),
    ("input",),
    (_diagonal_grad,),
    backward_name="DiagonalBackward0_copy",
    jvp="linear",
    batch=batch_dims("dim1", "dim2"),
)
DIAG_EMBED = defop(
    "diag_embed",
    _embed_diagonal,
    ("input",),
    (lambda g, offset, dim1, dim2: apply(DIAGONAL_COPY, g, offset=offset, dim1=dim1,
                                         dim2=dim2),),
    jvp="linear",
    batch=_diag_embed_batch,
)


def _diagonal_dims(input, dim1, dim2, name):
    ndim = input._data.ndim
    d1, d2 = normalize_dim(dim1, ndim, name), normalize_dim(dim2, ndim, name)
    if d1 == d2:
        raise RuntimeError(f"{name}: dimensions cannot be identical {dim1}, {dim2}")
    return d1, d2


def diagonal(input, offset: int = 0, dim1: int = 0, dim2: int = 1) -> Tensor:
    """A view of the diagonal ``offset`` of the matrices in dims dim1 and dim2 (appended last)."""
    d1, d2 = _diagonal_dims(input, dim1, dim2, "diagonal")
    return apply(DIAGONAL, input, offset=offset, dim1=d1, dim2=d2)


def diagonal_copy(input, offset: int = 0, dim1: int = 0, dim2: int = 1) -> Tensor:
    """A copy of ``diagonal(input, offset, dim1, dim2)``."""
    d1, d2 = _diagonal_dims(input, dim1, dim2, "diagonal_copy")
    return apply(DIAGONAL_COPY, input, offset=offset, dim1=d1, dim2=d2)


def diag_embed(input, offset: int = 0, dim1: int = -2, dim2: int = -1) -> Tensor:
    """Matrices (in dims dim1, dim2) whose diagonal ``offset`` holds the last dim of input."""
    ndim = input._data.ndim + 1
    d1, d2 = normalize_dim(dim1, ndim, "diag_embed"), normalize_dim(dim2, ndim, "diag_embed")
    if d1 == d2:
        raise RuntimeError(f"diagonal dimensions cannot be identical {dim1}, {dim2}")
    n = input._data.shape[-1] + abs(offset)
    batch = iter(input._data.shape[:-1])
    shape = tuple(n if d in (d1, d2) else next(batch) for d in range(ndim))
    return apply(DIAG_EMBED, input, offset=offset, dim1=d1, dim2=d2, shape=shape)


def diag(input, diagonal: int = 0) -> Tensor:
    """A square matrix with ``input`` (1-D) on a diagonal, or the diagonal of a matrix (2-D)."""
    if input._data.ndim == 1:
        return diag_embed(input, diagonal, 0, 1)
    if input._data.ndim == 2:
        return diagonal_copy(input, diagonal)
    raise RuntimeError(f"diag(): Supports 1D or 2D tensors. Got {input._data.ndim}D")


def _trace_batch(op, args, flags, size, params):
    diagonals = apply(DIAGONAL_COPY, args[0], offset=0, dim1=1, dim2=2)
    return apply(SUM_DIM, diagonals, dim=(1,), keepdim=False)


_trace_batch.kind = "dims"
TRACE = defop(
    "trace",
    xp.trace,
    ("input",),
    (lambda g, input_shape: g * _eye(*input_shape, dtype=g._data.dtype),),
    jvp="linear",
    batch=_trace_batch,
)


def trace(input) -> Tensor:
    """Sum of the main diagonal of a matrix."""
    if input._data.ndim != 2:
        raise RuntimeError(f"trace: expected a matrix, but got tensor with dim {input._data.ndim}")
    if input._data.dtype.kind in "biu" and input._data.dtype != xp.int64:
        input = input.to(xp.int64)
    return apply(TRACE, input)


TRIL = defop(
    "tril",
    lambda input, diagonal: xp.tril(input, diagonal),
    ("input",),
    (lambda g, diagonal: apply(TRIL, g, diagonal=diagonal),),
    jvp="linear",
    batch=leading_dims(2),
)
TRIU = defop(
    "triu",
    lambda input, diagonal: xp.triu(input, diagonal),
    ("input",),
    (lambda g, diagonal: apply(TRIU, g, diagonal=diagonal),),
    jvp="linear",
    batch=leading_dims(2),
)


def _check_2d(input, name: str) -> None:
    if input._data.ndim < 2:
        raise RuntimeError(f"{name}: input tensor must have at least 2 dimensions.")


def tril(input, diagonal: int = 0) -> Tensor:
    """The lower triangle (on and below diagonal ``diagonal``) of the last two dims."""
    _check_2d(input, "tril")
    return apply(TRIL, input, diagonal=int_argument("tril", "diagonal", diagonal, 2))


def triu(input, diagonal: int = 0) -> Tensor:
    """The upper triangle (on and above diagonal ``diagonal``) of the last two dims."""
    _check_2d(input, "triu")
    return apply(TRIU, input, diagonal=int_argument("triu", "diagonal", diagonal, 2))


def _tril_(self, diagonal: int = 0) -> Tensor:
    _check_2d(self, "tril_")
    return apply_inplace(TRIL, self, diagonal=int_argument("tril_", "diagonal", diagonal, 1))


def _triu_(self, diagonal: int = 0) -> Tensor:
    _check_2d(self, "triu_")
    return apply_inplace(TRIU, self, diagonal=int_argument("triu_", "diagonal", diagonal, 1))


# ---- torch.linalg: checks ------------------------------------------------------------------------


def _check_matrix(A, name: str, square: bool = True, bfloat16: bool = False) -> None:
    if A._data.ndim < 2:
        raise RuntimeError(f"{name}: The input tensor A must have at least 2 dimensions.")
    if A._data.dtype.kind not in ("fcV" if bfloat16 else "fc"):
        raise RuntimeError(f"{name}: Expected a floating point or complex tensor as input. Got "
                           f"{_type_name(A)}")
    m, n = A._data.shape[-2:]
    if square and m != n:
        raise RuntimeError(f"{name}: A must be batches of square matrices, but they are {m} by "
                           f"{n} matrices")


def _lapack(name: str, fn, *args, **kwargs):
    try:
        return fn(*args, **kwargs)
    except xp.linalg.LinAlgError as err:
        text = str(err).lower()
        if "positive definite" in text:
            raise LinAlgError(f"{name}: The factorization could not be completed because the "
                              "input is not positive-definite.") from None
        if "singular" in text:
            raise LinAlgError(f"{name}: The solver failed because the input matrix is "
                              "singular.") from None
        raise LinAlgError(f"{name}: {err}") from None


# ---- inv, det, slogdet, solve --------------------------------------------------------------------


LINALG_INV = defop(
    "linalg_inv",
    lambda A: _lapack("linalg.inv", xp.linalg.inv, A),
    ("A",),
    # d(A^-1) = -A^-1 dA A^-1  (Giles 2008)
    (lambda g, out: -(out.mT @ g @ out.mT),),
    backward_name="LinalgInvExBackward0",
    jvp=lambda t_A, out: -(out @ t_A @ out),
    batch=leading_dims(2),
)


def inv(A) -> Tensor:
    """Inverse of a square matrix (batched)."""
    _check_matrix(A, "linalg.inv")
    return apply(LINALG_INV, A)


def _cofactor(A, det):
    """d det(A) / dA = det(A) A^{-T} (Giles 2008); for singular matrices the cofactor
    matrix from the SVD A = U S V^T: det(U) det(V) U diag(prod_{j != i} s_j) V^T."""
    if (physical(det) != 0).all():  # no singular matrix in any example
        return det.unsqueeze(-1).unsqueeze(-1) * inv(A).mT
    U, S, Vh = svd(A)
    sign = (apply(LINALG_DET, U) * apply(LINALG_DET, Vh)).detach()  # +-1
    others = _prod_others(S, S.prod(-1, keepdim=True), -1)
    return sign.unsqueeze(-1).unsqueeze(-1) * ((U * others.unsqueeze(-2)) @ Vh)


def _det(A):
    with xp.errstate(over="ignore"):
        return xp.linalg.det(A)


LINALG_DET = defop(
    "linalg_det",
    _det,
    ("A",),
    (lambda g, A, out: g.unsqueeze(-1).unsqueeze(-1) * _cofactor(A, out),),
    jvp=lambda t_A, A, out: (_cofactor(A, out) * t_A).sum((-2, -1)),
    batch=leading_dims(2),
)


def det(A) -> Tensor:
    """Determinant of a square matrix (batched)."""
    _check_matrix(A, "linalg.det")
    return apply(LINALG_DET, A)


def _slogdet_rule(grads, A, out):
    # t = tr(A^{-1} dA): d log|det A| = Re t and, complex, d sign = sign i Im t, so
    # gA = (g_logabsdet + i Im(conj(sign) g_sign)) A^{-H}
    g_sign, g_logabsdet = grads
    if not A.is_complex():
        return None if g_logabsdet is None else _as_matrix(g_logabsdet) * inv(A).mT
    weight = None if g_logabsdet is None else g_logabsdet.to(A.dtype)
    if g_sign is not None:
        weight = _add(weight, (out[0].conj() * g_sign).imag * 1j)
    return None if weight is None else _as_matrix(weight) * inv(A).mH


def _slogdet_jvp(t_A, A, out):
    trace = (inv(A).mT * t_A).sum((-2, -1))
    if not A.is_complex():
        return out[0].new_zeros(out[0].shape), trace
    return out[0] * (trace.imag * 1j), trace.real


def _as_matrix(v):
    return v.unsqueeze(-1).unsqueeze(-1)


LINALG_SLOGDET = defop(
    "linalg_slogdet",
    lambda A: tuple(xp.linalg.slogdet(A)),
    ("A",),
    (_slogdet_rule,),
    n_outputs=2,
    holomorphic=False,
    jvp=_slogdet_jvp,
    batch=leading_dims(2),
)


def slogdet(A) -> tuple:
    """(sign, log|det|) of a square matrix (batched)."""
    _check_matrix(A, "linalg.slogdet")
    return result("linalg_slogdet", "sign logabsdet", apply(LINALG_SLOGDET, A))


def torch_det(input) -> Tensor:
    """Determinant of a square matrix (batched)."""
    return det(input)


def torch_inverse(input) -> Tensor:
    """Inverse of a square matrix (batched)."""
    return inv(input)


def torch_slogdet(input) -> tuple:
    """(sign, log|det|) of a square matrix (batched)."""
    return result("slogdet", "sign logabsdet", slogdet(input))


def logdet(input) -> Tensor:
    """log(det(input)): nan for a negative determinant, -inf for zero."""
    _check_matrix(input, "logdet")
    sign, logabsdet = apply(LINALG_SLOGDET, input)
    from .elementwise import where

    if input.is_complex():
        # log(det) = log|det| + i arg(det), the principal branch as PyTorch's
        return logabsdet + sign.log()
    return where(sign == -1, math.nan, logabsdet)


def _solve(A, B, vector):
    if vector:
        return _lapack("torch.linalg.solve", xp.linalg.solve, A, B[..., None])[..., 0]
    return _lapack("torch.linalg.solve", xp.linalg.solve, A, B)


def _solve_A_rule(g, A, out, vector):
    # X = A^{-1} B: gB = A^{-T} g, gA = -gB X^T (Giles 2008)
    gB = apply(LINALG_SOLVE, A.mT, g, vector=vector)
    if vector:
        return -(gB.unsqueeze(-1) * out.unsqueeze(-2))
    return -(gB @ out.mT)


def _solve_jvp(t_A, t_B, A, out, vector):
    rhs = t_B
    if t_A is not None:
        term = (t_A @ out.unsqueeze(-1)).squeeze(-1) if vector else t_A @ out
        rhs = -term if rhs is None else rhs - term
    return apply(LINALG_SOLVE, A, rhs, vector=vector)


def _solve_batch(op, args, flags, size, params):
    core = (2, 1 if params["vector"] else 2)
    return apply(op, *pad_leading(args, flags, core), **params)


LINALG_SOLVE = defop(
    "linalg_solve",
    _solve,
    ("A", "B"),
    (_solve_A_rule, lambda g, A, vector: apply(LINALG_SOLVE, A.mT, g, vector=vector)),
    promote=True,
    backward_name="LinalgSolveExBackward0",
    jvp=_solve_jvp,
    batch=_solve_batch,
)


def solve(A, B, *, left: bool = True) -> Tensor:
    """The solution X of A X = B (or X A = B with left=False), batched and broadcast."""
    _check_matrix(A, "linalg.solve")
    if A._data.dtype != B._data.dtype:
        raise RuntimeError(f"linalg.solve: Expected A and B to have the same dtype, but found A "
                           f"of type {_type_name(A)} and B of type {_type_name(B)} instead")
    n = A._data.shape[-1]
    vector = B._data.ndim == 1 or (B._data.ndim == A._data.ndim - 1
                                  and B._data.shape == A._data.shape[:-1])
    if not left:
        if vector:
            return apply(LINALG_SOLVE, A.mT, B, vector=True)
        return apply(LINALG_SOLVE, A.mT, B.mT, vector=False).mT
    rows = B._data.shape[-1] if vector else B._data.shape[-2] if B._data.ndim >= 2 else None
    if rows != n:
        cols = 1 if vector or B._data.ndim < 2 else B._data.shape[-1]
        raise RuntimeError(f"linalg.solve: Incompatible shapes of A and B for the equation "
                           f"AX = B ({n}x{n} and {rows}x{cols})")
    return apply(LINALG_SOLVE, A, B, vector=vector)


# ---- cholesky, qr --------------------------------------------------------------------------------


def _phi(x):
    """The lower triangle with its diagonal halved."""
    return x.tril(-1) + diagonal(x, 0, -2, -1).mul(0.5).diag_embed()


def _cholesky_rule(g, out, upper):
    # gA = L^{-H} Psi L^{-1}, Psi = (X + tril(X, -1)^H) / 2 with X = tril(L^H gL) (Murray 2016;
    # for complex A the diagonal of X keeps its imaginary part, as PyTorch's rule does)
    L, gL = (out.mH, g.mH) if upper else (out, g)
    Linv = inv(L)
    X = (L.mH @ gL).tril()
    return Linv.mH @ ((X + X.tril(-1).mH) * 0.5) @ Linv


def _cholesky_jvp(t_A, out, upper):
    # dL = L Phi(L^{-1} dA L^{-H})
    L = out.mH if upper else out
    Linv = inv(L)
    dL = L @ _phi(Linv @ t_A @ Linv.mH)
    return dL.mH if upper else dL


LINALG_CHOLESKY = defop(
    "linalg_cholesky",
    lambda A, upper: _lapack("linalg.cholesky", xp.linalg.cholesky, A, upper=upper),
    ("A",),
    (_cholesky_rule,),
    backward_name="LinalgCholeskyExBackward0",
    holomorphic=False,  # its rules are written in the complex convention (conjugate transposes)
    jvp=_cholesky_jvp,
    batch=leading_dims(2),
)


def cholesky(A, *, upper: bool = False) -> Tensor:
    """The Cholesky factor L (A = L L^T) of a symmetric positive-definite matrix (batched)."""
    _check_matrix(A, "linalg.cholesky")
    return apply(LINALG_CHOLESKY, A, upper=upper)


def _qr(A, mode):
    if mode == "r":
        R = _lapack("linalg.qr", xp.linalg.qr, A, mode="r")
        return xp.zeros((0,), dtype=A.dtype), R
    return tuple(_lapack("linalg.qr", xp.linalg.qr, A, mode=mode))


def _real_diagonal(M):
    """M's diagonal as a diagonal matrix, its real part for complex M."""
    d = diagonal(M, 0, -2, -1)
    return _diag(d.real if M.is_complex() else d)


def _copyltu(M):
    """The Hermitian matrix with M's strict lower triangle and the real part of its diagonal."""
    return M.tril(-1) + M.tril(-1).mH + _real_diagonal(M)


def _qr_grad_tall(gQ, gR, Q, R):
    # m >= n: M = R gR^H - gQ^H Q, gA = (gQ + Q copyltu(M)) R^{-H} (Liao et al. 2019; complex:
    # Q^H dQ is skew-Hermitian and R's diagonal real)
    M = _add(None if gR is None else R @ gR.mH, None if gQ is None else -(gQ.mH @ Q))
    b = _add(gQ, None if M is None else Q @ _copyltu(M))
    return _solve_right(b, R.mH)


def _qr_rule(grads, A, out, mode):
    gQ, gR = grads
    m, n = A.shape[-2:]
    if mode == "r":
        raise RuntimeError("The derivative of linalg.qr depends on Q, which is not computed when "
                           "mode='r'. Please use linalg.qr(A, mode='reduced') if you are going "
                           "to differentiate through linalg.qr.")
    if mode == "complete" and m > n:
        raise RuntimeError("The QR decomposition is not differentiable when mode='complete' and "
                           "nrows > ncols.")
    Q, R = out
    if m >= n:
        return _qr_grad_tall(gQ, gR, Q, R)
    # m < n: A = [X | Y], R = [U | V], X = Q U, Y = Q V (Liao et al. 2019)
    U, Y = R[..., :m], A[..., m:]
    gU, gV = (None, None) if gR is None else (gR[..., :m], gR[..., m:])
    gX = _qr_grad_tall(_add(gQ, None if gV is None else Y @ gV.mH), gU, Q, U)
    gA = gX @ _eye(m, n, dtype=A._data.dtype)
    if gV is not None:
        gA = gA + (Q @ gV) @ _eye(n - m, n, m, dtype=A._data.dtype)
    return gA


def _qr_jvp_tall(dA, Q, R):
    # C = Q^H dA R^{-1} = Omega + dR R^{-1}, Omega = Q^H dQ skew-Hermitian and dR R^{-1} upper
    # triangular with a real diagonal: dR = (C - Omega) R, dQ = dA R^{-1} - Q (C - Omega)
    dAR = _solve_right(dA, R)
    C = Q.mH @ dAR
    upper = C.triu(1) + C.tril(-1).mH + _real_diagonal(C)
    return dAR - Q @ upper, upper @ R


def _qr_jvp(t_A, A, out, mode):
    Q, R = out
    m, n = A.shape[-2:]
    if mode == "r" or (mode == "complete" and m > n):
        raise RuntimeError("linalg.qr: forward-mode derivatives need mode='reduced' (or "
                           "mode='complete' with nrows <= ncols)")
    if m >= n:
        return _qr_jvp_tall(t_A, Q, R)
    dQ, dU = _qr_jvp_tall(t_A[..., :m], Q, R[..., :m])
    dV = Q.mH @ (t_A[..., m:] - dQ @ R[..., m:])
    dR = dU @ _eye(m, n, dtype=A._data.dtype) + dV @ _eye(n - m, n, m, dtype=A._data.dtype)
    return dQ, dR


def _qr_batch(op, args, flags, size, params):
    Q, R = apply(op, args[0], **params)
    if params["mode"] == "r":  # Q is an empty vector, for each example
        Q = Q.new_zeros((size, 0))
    return Q, R


LINALG_QR = defop("linalg_qr", _qr, ("A",), (_qr_rule,), n_outputs=2, jvp=_qr_jvp,
                  batch=_qr_batch, holomorphic=False)


def qr(A, mode: str = "reduced") -> tuple:
    """(Q, R) with A = Q R, Q orthonormal columns and R upper triangular."""
    _check_matrix(A, "linalg.qr", square=False)
    if mode not in ("reduced", "complete", "r"):
        raise RuntimeError(f"qr received unrecognized mode '{mode}' but expected one of "
                           "'reduced' (default), 'r', or 'complete'")
    return result("linalg_qr", "Q R", apply(LINALG_QR, A, mode=mode))


# ---- eigh, svd, pinv --------------------------------------------------------------------------


def _gaps(w):
    """E_ij = w_j - w_i, with ones on the diagonal (where the formulas multiply by zero)."""
    n = w.shape[-1]
    return w.unsqueeze(-2) - w.unsqueeze(-1) + _eye(n, dtype=w._data.dtype)


def _eigh_rule(grads, out):
    # gA = V (diag(gL) + skew(V^H gV) / E) V^H with E_ij = L_j - L_i (distinct eigenvalues);
    # complex: the skew part's diagonal (i Im) stays where gL is not given (as PyTorch's)
    gL, gV = grads
    L, V = out
    inner = None if gL is None else _diag(gL)
    if gV is not None:
        VhgV = V.mH @ gV
        skew = (VhgV - VhgV.mH) * 0.5 / _gaps(L)
        if gL is not None and V.is_complex():
            skew = skew * (1 - _eye(L.shape[-1], dtype=L._data.dtype))
        inner = _add(inner, skew)
    return V @ inner.to(V.dtype) @ V.mH


def _eigh_jvp(t_A, out):
    # P = V^H dA V: dL = Re diag(P), dV = V (P / E off the diagonal)
    L, V = out
    P = V.mH @ t_A @ V
    n = L.shape[-1]
    off = 1 - _eye(n, dtype=L._data.dtype)
    dL = diagonal(P, 0, -2, -1)
    return dL.real if dL.is_complex() else dL, V @ (P * off / _gaps(L))


LINALG_EIGH = defop(
    "linalg_eigh",
    lambda A, UPLO: tuple(_lapack("linalg.eigh", xp.linalg.eigh, A, UPLO=UPLO)),
    ("A",),
    (_eigh_rule,),
    n_outputs=2,
    holomorphic=False,
    jvp=_eigh_jvp,
    batch=leading_dims(2),
)


def eigh(A, UPLO: str = "L") -> tuple:
    """(eigenvalues ascending, eigenvectors as columns) of a symmetric matrix (batched)."""
    _check_matrix(A, "linalg.eigh")
    if UPLO not in ("L", "U"):
        raise RuntimeError(f"Expected UPLO argument to be 'L' or 'U', but got {UPLO}")
    return result("linalg_eigh", "eigenvalues eigenvectors", apply(LINALG_EIGH, A, UPLO=UPLO))


def eigvalsh(A, UPLO: str = "L") -> Tensor:
    """Eigenvalues (ascending) of a symmetric matrix (batched)."""
    return eigh(A, UPLO)[0]


def _svd_rule(grads, A, out):
    # Townsend 2016, with F_ij = 1 / (s_j^2 - s_i^2) (distinct singular values):
    # gA = U [(F o (U^H gU - gU^H U)) S + diag(gS) + S (F o (V^H gV - gV^H V))] V^H
    #      + (I - U U^H) gU S^{-1} V^H + U S^{-1} gV^H (I - V V^H);
    # complex: plus i Im(diag(U^H gU)) / S on the diagonal (the phase of U's columns)
    gU, gS, gVh = grads
    U, S, Vh = out
    k = S.shape[-1]
    if U.shape[-1] != k:  # full_matrices: only the first k columns take part (as PyTorch)
        U, gU = U[..., :k], None if gU is None else gU[..., :k]
    if Vh.shape[-2] != k:
        Vh, gVh = Vh[..., :k, :], None if gVh is None else gVh[..., :k, :]
    inner = None if gS is None else _diag(gS)
    S2 = S * S
    F = 1 / _gaps(S2) * (1 - _eye(k, dtype=S._data.dtype))
    out_grad = None
    if gU is not None:
        UhgU = U.mH @ gU
        inner = _add(inner, (F * (UhgU - UhgU.mH)) * S.unsqueeze(-2))
        if U.is_complex():
            inner = inner + _diag(diagonal(UhgU, 0, -2, -1).imag / S * 1j)
        if U.shape[-2] > k:
            out_grad = ((gU - U @ UhgU) / S.unsqueeze(-2)) @ Vh
    if gVh is not None:
        gV, V = gVh.mH, Vh.mH
        VhgV = V.mH @ gV
        inner = _add(inner, S.unsqueeze(-1) * (F * (VhgV - VhgV.mH)))
        if V.shape[-2] > k:
            out_grad = _add(out_grad, (U / S.unsqueeze(-2)) @ (gV - V @ VhgV).mH)
    return _add(None if inner is None else U @ inner.to(U.dtype) @ Vh, out_grad)


def _svd_jvp(t_A, A, out):
    # dP = U^H dA V: dS = Re diag(dP), U^H dU = F o (dP S + S dP^H), V^H dV = F o (S dP + dP^H S),
    # plus the parts outside the span of U (V) for non-square A; complex: U^H dU also has
    # i Im(diag(dP)) / S on its diagonal (PyTorch's choice of phase).
    U, S, Vh = out
    k = S.shape[-1]
    Uk = U[..., :k]
    Vk = Vh[..., :k, :].mH
    dP = Uk.mH @ t_A @ Vk
    Sr, Sc = S.unsqueeze(-2), S.unsqueeze(-1)
    F = 1 / _gaps(S * S) * (1 - _eye(k, dtype=S._data.dtype))
    UhdU = F * (dP * Sr + Sc * dP.mH)
    dS = diagonal(dP, 0, -2, -1)
    if dP.is_complex():
        UhdU = UhdU + _diag(dS.imag / S * 1j)
        dS = dS.real
    dU = Uk @ UhdU
    dV = Vk @ (F * (Sc * dP + dP.mH * Sr))
    m, n = A.shape[-2:]
    if m > k:
        dU = dU + (t_A @ Vk - Uk @ (Uk.mH @ t_A @ Vk)) / Sr
    if n > k:
        dV = dV + (t_A.mH @ Uk - Vk @ (Vk.mH @ t_A.mH @ Uk)) / Sr
    dtype = A._data.dtype
    if U.shape[-1] != k:  # full_matrices: the extra columns get zero tangents (as PyTorch)
        dU = dU @ _eye(k, m, dtype=dtype)
    if Vh.shape[-2] != k:
        dV = dV @ _eye(k, n, dtype=dtype)
    return dU, dS, dV.mH


LINALG_SVD = defop(
    "linalg_svd",
    lambda A, full_matrices: tuple(_lapack("linalg.svd", xp.linalg.svd, A,
                                           full_matrices=full_matrices)),
    ("A",),
    (_svd_rule,),
    n_outputs=3,
    holomorphic=False,
    jvp=_svd_jvp,
    batch=leading_dims(2),
)


def _check_driver(driver) -> None:
    if driver is not None:  # it picks a cuSOLVER routine
        raise RuntimeError("torch.linalg.svd: keyword argument `driver=` is only supported on "
                           "CUDA inputs with cuSOLVER backend.")


def svd(A, full_matrices: bool = True, *, driver: str | None = None) -> tuple:
    """(U, S, Vh) with A = U diag(S) Vh, singular values descending."""
    _check_matrix(A, "linalg.svd", square=False)
    _check_driver(driver)
    return result("linalg_svd", "U S Vh", apply(LINALG_SVD, A, full_matrices=full_matrices))


def svdvals(A, *, driver: str | None = None) -> Tensor:
    """Singular values, descending (batched)."""
    _check_matrix(A, "linalg.svdvals", square=False)
    _check_driver(driver)
    return apply(LINALG_SVD, A, full_matrices=False)[1]


def torch_svd(input, some: bool = True, compute_uv: bool = True) -> tuple:
    """(U, S, V) with input = U diag(S) V^T (the legacy torch.svd)."""
    _check_matrix(input, "svd", square=False)
    U, S, Vh = apply(LINALG_SVD, input, full_matrices=not some)
    if not compute_uv:
        U, Vh = U.new_zeros(U.shape), Vh.new_zeros(Vh.shape)
    return result("svd", "U S V", (U, S, Vh.mT))


def _pinv(A, atol, rtol, hermitian):
    m, n = A.shape[-2:]
    if hermitian:
        w, V = xp.linalg.eigh(A)
        s = xp.abs(w)
    else:
        U, s, Vh = xp.linalg.svd(A, full_matrices=False)
    top = s.max(axis=-1, keepdims=True, initial=0)
    cutoff = xp.maximum(atol, rtol * top)
    with xp.errstate(divide="ignore"):
        if hermitian:
            winv = xp.where(s > cutoff, 1 / w, 0).astype(A.dtype)
            return (V * winv[..., None, :]) @ xp.swapaxes(V, -1, -2).conj()
        sinv = xp.where(s > cutoff, 1 / s, 0).astype(A.dtype)
    return xp.swapaxes(Vh, -1, -2).conj() @ (sinv[..., :, None] * xp.swapaxes(U, -1, -2).conj())


def _pinv_rule(g, A, out):
    # Golub & Pereyra 1973: gA = -P^H g P^H + (I - A P) g^H P P^H + P^H P g^H (I - P A)
    # (conjugate transposes: the rule is written in the complex convention)
    P = out
    gH = g.mH
    X = gH @ (P @ P.mH)
    Y = (P.mH @ P) @ gH
    return -(P.mH @ g @ P.mH) + (X - A @ (P @ X)) + (Y - (Y @ P) @ A)


def _pinv_jvp(t_A, A, out):
    # dP = -P dA P + P P^H dA^H (I - A P) + (I - P A) dA^H P^H P
    P = out
    dAH = t_A.mH
    X = (P @ P.mH) @ dAH
    Y = dAH @ (P.mH @ P)
    return -(P @ t_A @ P) + (X - (X @ A) @ P) + (Y - P @ (A @ Y))


LINALG_PINV = defop("linalg_pinv", _pinv, ("A",), (_pinv_rule,), jvp=_pinv_jvp,
                    batch=leading_dims(2), holomorphic=False)


def pinv(input, *, atol=None, rtol=None, hermitian: bool = False, rcond=None) -> Tensor:
    """Moore-Penrose pseudo-inverse; singular values at or below max(atol, rtol * s_max) count
    as zero."""
    _check_matrix(input, "linalg.pinv", square=False)
    if rcond is not None:
        rtol = rcond
    if isinstance(atol, Tensor) or isinstance(rtol, Tensor):
        return _pinv_tensor_tolerances(input, atol, rtol, hermitian)
    if rtol is None:
        rtol = 0.0 if atol is not None and atol > 0 else (
            xp.finfo(input._data.dtype).eps * max(input._data.shape[-2:]))
    return apply(LINALG_PINV, input, atol=0.0 if atol is None else float(atol), rtol=float(rtol),
                 hermitian=hermitian)


def _pinv_tensor_tolerances(input, atol, rtol, hermitian: bool) -> Tensor:
    """pinv with tolerances given as tensors broadcast over the batch: matrix by matrix."""
    batch = tuple(input._data.shape[:-2])
    tols = []
    for tol in (atol, rtol):
        if isinstance(tol, Tensor):
            tol = xp.broadcast_to(xp.asarray(tol.detach()._data, dtype=xp.float64), batch)
            tol = tol.reshape(-1)
        tols.append(tol)
    count = math.prod(batch)
    if count == 0 or input._data.size == 0:
        return pinv(input, hermitian=hermitian)
    flat_in = input.reshape((count,) + tuple(input._data.shape[-2:]))
    parts = []
    for i in range(count):
        a, r = (float(t[i]) if hasattr(t, "shape") else t for t in tols)
        parts.append(pinv(flat_in[i], atol=a, rtol=r, hermitian=hermitian).unsqueeze(0))
    from .shape import cat

    out = cat(parts)
    return out.reshape(batch + tuple(out._data.shape[-2:]))


def pinverse(input, rcond: float = 1e-15) -> Tensor:
    """Moore-Penrose pseudo-inverse (the legacy torch.pinverse)."""
    return pinv(input, rtol=rcond)


def lstsq(A, B, rcond=None, *, driver=None) -> tuple:
    """The least-squares solution of A X = B: (solution, residuals, rank, singular_values),
    filled as PyTorch's CPU drivers fill them: the rank except with 'gels', the singular values
    with 'gelsd' and 'gelss', the squared residuals with those two and 'gels' when A is tall and
    every A has full rank (else empty)."""
    _check_matrix(A, "linalg.lstsq", square=False)
    driver = "gelsy" if driver is None else driver
    if driver not in ("gels", "gelsy", "gelsd", "gelss"):
        raise RuntimeError("torch.linalg.lstsq: parameter `driver` should be one of (gels, "
                           "gelsy, gelsd, gelss)")
    vector = B._data.ndim == A._data.ndim - 1
    P = pinv(A, rtol=rcond)
    X = (P @ B.unsqueeze(-1)).squeeze(-1) if vector else P @ B
    s = svdvals(A).detach()
    rtol = rcond if rcond is not None else xp.finfo(A._data.dtype).eps * max(A._data.shape[-2:])
    top = amax(s, -1, keepdim=True) if s.shape[-1] else s.new_zeros(s.shape[:-1] + (1,))
    rank = (s > top * rtol).sum(-1)
    m, n = A._data.shape[-2:]
    real = s._data.dtype
    if driver != "gelsy" and m > n and (driver == "gels" or bool((rank == n).all())):
        misfit = A @ X.unsqueeze(-1) - B.unsqueeze(-1) if vector else A @ X - B
        residuals = (misfit.abs() ** 2).sum(-2)
    else:
        residuals = X.reshape(-1)[:0].abs()  # empty, but on the graph as PyTorch's is
    if driver == "gels":
        rank = _const(xp.zeros((0,), dtype=xp.int64, like=A._data))
    singular_values = s if driver in ("gelsd", "gelss") else _const(
        xp.zeros((0,), dtype=real, like=A._data))
    return result("linalg_lstsq", "solution residuals rank singular_values",
                  (X, residuals, rank, singular_values))


# ---- matrix_exp, cross ---------------------------------------------------------------------------

# Padé approximants and their ranges (N. J. Higham, "The scaling and squaring method for the
# matrix exponential revisited", SIAM J. Matrix Anal. Appl. 26, 2005, Table 2.3).
_PADE = {
    3: (120.0, 60.0, 12.0, 1.0),
    5: (30240.0, 15120.0, 3360.0, 420.0, 30.0, 1.0),
    7: (17297280.0, 8648640.0, 1995840.0, 277200.0, 25200.0, 1512.0, 56.0, 1.0),
    9: (17643225600.0, 8821612800.0, 2075673600.0, 302702400.0, 30270240.0, 2162160.0,
        110880.0, 3960.0, 90.0, 1.0),
    13: (64764752532480000.0, 32382376266240000.0, 7771770303897600.0, 1187353796428800.0,
         129060195264000.0, 10559470521600.0, 670442572800.0, 33522128640.0, 1323241920.0,
         40840800.0, 960960.0, 16380.0, 182.0, 1.0),
}
_THETA = {3: 1.495585217958292e-2, 5: 2.539398330063230e-1, 7: 9.504178996162932e-1,
          9: 2.097847961257068e0, 13: 5.371920351148152e0}


def _matrix_exp(A):
    n = A.shape[-1]
    if A.size == 0:
        return A.copy()
    eye = xp.eye(n, dtype=A.dtype)
    norm = float(xp.abs(A).sum(axis=-2).max())  # the largest 1-norm in the batch
    degree = next((m for m in (3, 5, 7, 9) if norm <= _THETA[m]), 13)
    s = 0
    if degree == 13 and norm > _THETA[13]:
        s = int(math.ceil(math.log2(norm / _THETA[13])))
        A = A / A.dtype.type(2.0**s)
    b = _PADE[degree]
    A2 = A @ A
    if degree < 13:
        powers = [eye, A2]
        while len(powers) <= degree // 2:
            powers.append(powers[-1] @ A2)
        U = A @ sum(b[2 * j + 1] * p for j, p in enumerate(powers))
        V = sum(b[2 * j] * p for j, p in enumerate(powers))
    else:
        A4 = A2 @ A2
        A6 = A4 @ A2
        U = A @ (A6 @ (b[13] * A6 + b[11] * A4 + b[9] * A2) + b[7] * A6 + b[5] * A4
                 + b[3] * A2 + b[1] * eye)
        V = A6 @ (b[12] * A6 + b[10] * A4 + b[8] * A2) + b[6] * A6 + b[4] * A4 + b[2] * A2 \
            + b[0] * eye
    R = xp.linalg.solve(V - U, V + U)
    for _ in range(s):
        R = R @ R
    return R.astype(A.dtype, copy=False)


def _frechet_exp(A, E):
    """The Fréchet derivative of exp at A in direction E: the top-right block of
    exp([[A, E], [0, A]]) (Najfeld & Havel 1995)."""
    n = A.shape[-1]
    dtype = A._data.dtype
    top, bottom = _eye(n, 2 * n, dtype=dtype), _eye(n, 2 * n, n, dtype=dtype)
    block = top.mT @ A @ top + top.mT @ E @ bottom + bottom.mT @ A @ bottom
    return apply(LINALG_MATRIX_EXP, block)[..., :n, n:]


LINALG_MATRIX_EXP = defop(
    "linalg_matrix_exp",
    _matrix_exp,
    ("A",),
    # gA = L(A^T, g), the Fréchet derivative at A^T applied to g
    (lambda g, A: _frechet_exp(A.mT, g),),
    jvp=lambda t_A, A: _frechet_exp(A, t_A),
    batch=leading_dims(2),
)


def matrix_exp(A) -> Tensor:
    """The matrix exponential of a square matrix (batched)."""
    _check_matrix(A, "linalg.matrix_exp", bfloat16=True)
    return apply(LINALG_MATRIX_EXP, A)


def _cross(input, other, dim):
    a, b = xp.broadcast_arrays(input, other)
    return xp.cross(a, b, axis=dim)


LINALG_CROSS = defop(
    "linalg_cross",
    _cross,
    ("input", "other"),
    (
        lambda g, other, dim: apply(LINALG_CROSS, other, g, dim=dim),
        lambda g, input, dim: apply(LINALG_CROSS, g, input, dim=dim),
    ),
    promote=True,
    jvp="multilinear",
    batch=batch_dims("dim"),
)


def linalg_cross(input, other, *, dim: int = -1) -> Tensor:
    """Cross product of 3-vectors along ``dim`` (broadcast)."""
    ndim = input._data.ndim
    if other._data.ndim != ndim:
        raise RuntimeError("linalg.cross: inputs must have the same number of dimensions.")
    d = normalize_dim(dim, ndim, "linalg.cross")
    sa, sb = input._data.shape[d], other._data.shape[d]
    if sa != 3 or sb != 3:
        raise RuntimeError(f"linalg.cross: inputs dimension {dim} must have length 3. Got {sa} "
                           f"and {sb}")
    return apply(LINALG_CROSS, input, other, dim=d)


def cross(input, other, dim: int | None = None) -> Tensor:
    """Cross product along ``dim`` (default: the first dim of size 3)."""
    if dim is None:
        warnings.warn("Using torch.cross without specifying the dim arg is deprecated.\nPlease "
                      "either pass the dim explicitly or simply use torch.linalg.cross.\nThe "
                      "default value of dim will change to agree with that of linalg.cross in a "
                      "future release.", UserWarning, stacklevel=2)
        shape = xp.broadcast_shapes(input._data.shape, other._data.shape)
        dim = next((d for d, s in enumerate(shape) if s == 3), -1)
    return linalg_cross(input, other, dim=dim)


# ---- norms and small composites -----------------------------------------------------------------


def matrix_norm(input, ord="fro", dim=(-2, -1), keepdim: bool = False, *, dtype=None) -> Tensor:
    """Matrix norm over the two dims ``dim``: 'fro', 'nuc', 2, -2, 1, -1, inf, -inf."""
    if dtype is not None:
        input = input.to(dtype)
    _check_matrix(input, "linalg.matrix_norm", square=False, bfloat16=True)
    d0, d1 = (normalize_dim(d, input._data.ndim, "linalg.matrix_norm") for d in dim)
    if d0 == d1:
        raise RuntimeError(f"linalg.matrix_norm: dims must be different. Got ({d0}, {d1})")
    if ord == "fro":
        return vector_norm(input, 2, (d0, d1), keepdim)
    if ord in ("nuc", 2, -2):
        rest = tuple(d for d in range(input._data.ndim) if d not in (d0, d1))
        s = svdvals(input.permute(rest + (d0, d1)))
        out = s.sum(-1) if ord == "nuc" else amax(s, -1) if ord == 2 else amin(s, -1)
        if keepdim:
            for d in sorted((d0, d1)):
                out = out.unsqueeze(d)
        return out
    if ord in (1, -1, math.inf, -math.inf):
        summed, over = (d0, d1) if ord in (1, -1) else (d1, d0)
        out = input.abs().sum(summed, keepdim=True)
        out = amax(out, over, keepdim=True) if ord > 0 else amin(out, over, keepdim=True)
        return out if keepdim else out.squeeze((d0, d1))
    raise RuntimeError(f"linalg.matrix_norm: Order {ord} not supported.")


def norm(input, ord=None, dim=None, keepdim: bool = False, *, dtype=None) -> Tensor:
    """A vector norm (1-D, or one dim) or a matrix norm (2-D, or two dims)."""
    if isinstance(dim, int):
        dim = (dim,)
    if dim is not None and len(dim) == 2:
        return matrix_norm(input, "fro" if ord is None else ord, dim, keepdim, dtype=dtype)
    if dim is None and ord is not None:
        if input._data.ndim == 2:
            return matrix_norm(input, ord, (-2, -1), keepdim, dtype=dtype)
        if input._data.ndim != 1:
            raise RuntimeError("linalg.norm: If dim is not specified but ord is, the input must "
                               f"be 1D or 2D. Got {input._data.ndim}D.")
    if isinstance(ord, str):
        raise RuntimeError(f"linalg.vector_norm: ord {ord!r} is a matrix norm: pass two dims")
    return vector_norm(input, 2 if ord is None else ord, dim, keepdim, dtype=dtype)


def vecdot(x, y, *, dim: int = -1) -> Tensor:
    """Dot products of vectors along ``dim`` (broadcast); x is conjugated, as PyTorch's."""
    return ((x.conj() if x.is_complex() else x) * y).sum(dim)


def linalg_diagonal(A, *, offset: int = 0, dim1: int = -2, dim2: int = -1) -> Tensor:
    """A view of the diagonals of the matrices in dims dim1 and dim2."""
    return diagonal(A, offset, dim1, dim2)


def multi_dot(tensors) -> Tensor:
    """The product of a chain of matrices (the first and last may be vectors)."""
    if len(tensors) < 2:
        raise RuntimeError(f"multi_dot(): expected at least 2 tensors but got {len(tensors)}")
    out = tensors[0]
    for t in tensors[1:]:
        out = matmul(out, t)
    return out


def matrix_power(A, n: int) -> Tensor:
    """A to the integer power n (n < 0: of the inverse)."""
    _check_matrix(A, "linalg.matrix_power", bfloat16=True)
    if n == 0:  # the identity, still part of the graph (with zero gradient), as PyTorch
        return A.clone().copy_(_eye(A._data.shape[-1], dtype=A._data.dtype))
    if n < 0:
        A, n = inv(A), -n
    out = None
    base = A
    while n:  # binary powering
        if n & 1:
            out = base if out is None else out @ base
        n >>= 1
        if n:
            base = base @ base
    return out


def torch_matrix_power(input, n: int) -> Tensor:
    """input to the integer power n (n < 0: of the inverse)."""
    return matrix_power(input, n)


def torch_norm(input, p="fro", dim=None, keepdim: bool = False, dtype=None) -> Tensor:
    """``torch.norm``: a vector norm (``p`` a number or 'fro') or the nuclear norm ('nuc')."""
    if p == "nuc":
        return matrix_norm(input, "nuc", (-2, -1) if dim is None else dim, keepdim, dtype=dtype)
    if p == "fro":
        p = 2
    elif isinstance(p, str):
        raise RuntimeError(f"norm: invalid norm type {p!r}; use a number, 'fro' or 'nuc'")
    if isinstance(dim, int):
        dim = (dim,)
    return vector_norm(input, p, dim, keepdim, dtype=dtype)


# ---- public tables ------------------------------------------------------------------------------

FUNCTIONS = {
    f.__name__: f
    for f in (matmul, mm, bmm, mv, dot, vdot, outer, addmm, baddbmm, einsum, tensordot, kron,
              diagonal, diagonal_copy, diag_embed, diag, trace, tril, triu, logdet, pinverse,
              cross, addmv, addr, addbmm, inner, adjoint, dist, chain_matmul)
}
FUNCTIONS.update(ger=outer, det=torch_det, slogdet=torch_slogdet, inverse=torch_inverse,
                 matrix_exp=matrix_exp,
                 svd=torch_svd, norm=torch_norm, matrix_power=torch_matrix_power)

METHODS = {
    name: FUNCTIONS[name]
    for name in ("matmul", "mm", "bmm", "mv", "dot", "vdot", "outer", "ger", "addmm", "baddbmm",
                 "kron", "diagonal", "diag_embed", "diag", "trace", "tril", "triu", "det",
                 "logdet", "slogdet", "inverse", "pinverse", "matrix_exp", "svd", "cross",
                 "norm")
}
METHODS.update(addmm_=_addmm_, baddbmm_=_baddbmm_, tril_=_tril_, triu_=_triu_, addmv=addmv,
               addr=addr, addbmm=addbmm, inner=inner, adjoint=adjoint, dist=dist,
               addmv_=_addmv_, addr_=_addr_, addbmm_=_addbmm_, matrix_power=torch_matrix_power)

# torch.linalg (re-exported by chainrule.linalg)
LINALG = {
    "matmul": matmul,
    "inv": inv,
    "det": det,
    "slogdet": slogdet,
    "solve": solve,
    "cholesky": cholesky,
    "qr": qr,
    "eigh": eigh,
    "eigvalsh": eigvalsh,
    "svd": svd,
    "svdvals": svdvals,
    "pinv": pinv,
    "lstsq": lstsq,
    "matrix_exp": matrix_exp,
    "cross": linalg_cross,
    "norm": norm,
    "vector_norm": vector_norm,
    "matrix_norm": matrix_norm,
    "vecdot": vecdot,
    "diagonal": linalg_diagonal,
    "multi_dot": multi_dot,
    "matrix_power": matrix_power,
}
