"""Linear algebra rows: matmul in every form, the other products, einsum, diagonals and
triangles, and torch.linalg. Factorizations are checked through gauge-invariant functions of
their outputs on well-conditioned inputs with distinct eigenvalues / singular values."""

from __future__ import annotations

import numpy as np

import chainrule.linalg  # noqa: F401  (until chainrule/__init__.py imports it)

from ._spec import Const, Domain, OpRow, S, T, method, op

# torch's grad_fn for the other forms names the last step of its decomposition
# (SqueezeBackward4, UnsafeViewBackward0, CloneBackward0), not the product: not comparable.
MATMUL = (
    S((3,), (3,)),  # dot
    S((2, 3), (3,)),  # matrix @ vector
    S((3,), (3, 2), grad_fn=False),  # vector @ matrix
    S((2, 3), (3, 4)),  # mm
    S((2, 2, 3), (2, 3, 2), grad_fn=False),  # bmm
    S((2, 2, 3), (3, 2), grad_fn=False),  # batch @ matrix
    S((2, 3), (2, 3, 2), grad_fn=False),  # matrix @ batch
    S((2, 2, 3), (3,), grad_fn=False),  # batch @ vector
    S((3,), (2, 3, 2), grad_fn=False),  # vector @ batch
    S((1, 2, 3), (2, 3, 2), grad_fn=False),  # batch dims broadcast 1 -> 2
    S((2, 1, 2, 2), (3, 2, 2), grad_fn=False),  # 4-D @ 3-D, batch dims broadcast
    S((1, 3), (3, 1)),  # 1x1 result
)
MATMUL_RECORDS = ("dot", "mv", "vm", "mm", "matmul")

INTS = Const([[1, -2, 3], [4, 5, -6]])


def _row(name: str, call, samples, variant: str = "", **kwargs) -> OpRow:
    """A row for one variant of ``name``."""
    return OpRow(name, call, samples, variant=variant, **kwargs)


def _spd(m, x):
    """A well-conditioned symmetric positive-definite matrix from x (batched)."""
    n = x.shape[-1]
    return x @ x.mT + n * m.eye(n, dtype=x.dtype)


def _sym(m, x):
    """A symmetric matrix with well-separated eigenvalues (distinct diagonal shift)."""
    n = x.shape[-1]
    return (x + x.mT) * 0.25 + m.diag(m.arange(n, dtype=x.dtype) * 2.0)


def _wellcond(m, x):
    """x plus a diagonal shift: invertible and well conditioned."""
    n = x.shape[-1]
    return x + 3 * m.eye(n, dtype=x.dtype)


def _distinct(m, x):
    """x with distinct, well separated singular values (x is small next to the scaled part)."""
    k = min(x.shape[-2:])
    d = m.zeros(x.shape[-2:], dtype=x.dtype)
    d[:k, :k] = m.diag(m.arange(1, k + 1, dtype=x.dtype) * 1.5)
    return d + 0.3 * x


PRODUCTS = [
    op("bmm", (S((2, 2, 3), (2, 3, 4)), S((1, 1, 2), (1, 2, 1)))),
    method(
        "Tensor.bmm",
        lambda x, y: x.bmm(y),
        (S((2, 2, 3), (2, 3, 2)),),
        records=("matmul",),
        grad_fn=False,
    ),
    op("mv", (S((2, 3), (3,)),)),
    method("Tensor.mv", lambda x, y: x.mv(y), (S((2, 3), (3,)),), records=("mv",)),
    method("Tensor.mm", lambda x, y: x.mm(y), (S((2, 3), (3, 2)),), records=("mm",)),
    method("Tensor.matmul", lambda x, y: x.matmul(y), (S((2, 3), (3,)),), records=("mv",)),
    op("dot", (S((3,), (3,)),)),
    method("Tensor.dot", lambda x, y: x.dot(y), (S((3,), (3,)),), records=("dot",)),
    op("vdot", (S((3,), (3,)),)),
    method("Tensor.vdot", lambda x, y: x.vdot(y), (S((4,), (4,)),), records=("vdot",)),
    op("outer", (S((3,), (4,)), S((1,), (2,))), records=("mul",)),
    op("ger", (S((3,), (2,)),), records=("mul",)),
    method("Tensor.outer", lambda x, y: x.outer(y), (S((3,), (2,)),), records=("mul",)),
    method("Tensor.ger", lambda x, y: x.ger(y), (S((3,), (2,)),), records=("mul",)),
    op("addmm", (S((2, 4), (2, 3), (3, 4)), S((4,), (2, 3), (3, 4)), S((), (2, 3), (3, 1)))),
    _row(
        "addmm",
        lambda m, x, a, b: m.addmm(x, a, b, beta=0.5, alpha=-2),
        (S((2, 4), (2, 3), (3, 4)),),
        "beta,alpha",
        records=("addmm",),
    ),
    # in place on a non-leaf (the harness's in-place cases assume broadcasting arguments)
    OpRow(
        "Tensor.addmm_",
        lambda m, x, a, b: (x * 1).addmm_(a, b, beta=0.5, alpha=-2),
        (S((2, 4), (2, 3), (3, 4)),),
        records=("addmm",),
    ),
    OpRow(
        "Tensor.addmm_",
        lambda m, x, a, b: (x * 1)[1].addmm_(a, b),
        (S((2, 2, 4), (2, 3), (3, 4)),),
        variant="through a view",
        records=("addmm",),
        grad_fn=False,
    ),
    _row(
        "addmm",
        lambda m, x, a, b: m.addmm(x, a, b, beta=0),
        (S(Const([[float("nan")] * 4] * 2), (2, 3), (3, 4)),),
        "beta=0",
        records=("addmm",),
    ),
    method(
        "Tensor.addmm",
        lambda x, a, b: x.addmm(a, b, alpha=3),
        (S((2, 2), (2, 3), (3, 2)),),
        records=("addmm",),
    ),
    op("baddbmm", (S((2, 2, 4), (2, 2, 3), (2, 3, 4)), S((2, 4), (2, 2, 3), (2, 3, 4)))),
    OpRow(
        "Tensor.baddbmm_",
        lambda m, x, a, b: (x * 1).baddbmm_(a, b, alpha=2),
        (S((2, 2, 4), (2, 2, 3), (2, 3, 4)),),
        records=("baddbmm",),
    ),
    _row(
        "baddbmm",
        lambda m, x, a, b: m.baddbmm(x, a, b, beta=2, alpha=0.5),
        (S((2, 2, 2), (2, 2, 3), (2, 3, 2)),),
        "beta,alpha",
        records=("baddbmm",),
    ),
    method(
        "Tensor.baddbmm",
        lambda x, a, b: x.baddbmm(a, b),
        (S((2, 2, 2), (2, 2, 3), (2, 3, 2)),),
        records=("baddbmm",),
    ),
]

# addmv, addr and addbmm run addmm's record (grad_fn: the squeeze/view after it, not torch's).
ADD_PRODUCTS = [
    op("addmv", (S((2,), (2, 3), (3,)), S((), (2, 3), (3,)), S((1,), (2, 3), (3,))),
       records=("addmm",), grad_fn=False),
    _row(
        "addmv",
        lambda m, x, a, v: m.addmv(x, a, v, beta=0.5, alpha=-2),
        (S((2,), (2, 3), (3,)),),
        "beta,alpha",
        records=("addmm",),
        grad_fn=False,
    ),
    _row(
        "addmv",
        lambda m, x, a, v: m.addmv(x, a, v, beta=0),
        (S(Const([float("nan")] * 2), (2, 3), (3,)),),
        "beta=0",
        records=("addmm",),
        grad_fn=False,
    ),
    method("Tensor.addmv", lambda x, a, v: x.addmv(a, v, alpha=2), (S((2,), (2, 3), (3,)),),
           records=("addmm",), grad_fn=False),
    OpRow("Tensor.addmv_", lambda m, x, a, v: (x * 1).addmv_(a, v, beta=2),
          (S((2,), (2, 3), (3,)),), records=("addmm",), grad_fn=False),
    op("addr", (S((2, 3), (2,), (3,)), S((), (2,), (3,)), S((3,), (2,), (3,))), records=("addmm",),
       grad_fn=False),
    _row(
        "addr",
        lambda m, x, a, v: m.addr(x, a, v, beta=-1, alpha=0.5),
        (S((2, 3), (2,), (3,)),),
        "beta,alpha",
        records=("addmm",),
        grad_fn=False,
    ),
    method("Tensor.addr", lambda x, a, v: x.addr(a, v), (S((2, 3), (2,), (3,)),),
           records=("addmm",), grad_fn=False),
    OpRow("Tensor.addr_", lambda m, x, a, v: (x * 1).addr_(a, v, alpha=3),
          (S((2, 3), (2,), (3,)),), records=("addmm",), grad_fn=False),
    op("addbmm", (S((2, 4), (3, 2, 2), (3, 2, 4)), S((4,), (2, 2, 3), (2, 3, 4))),
       records=("addmm",), grad_fn=False),
    _row(
        "addbmm",
        lambda m, x, a, b: m.addbmm(x, a, b, beta=0.5, alpha=2),
        (S((2, 2), (2, 2, 3), (2, 3, 2)),),
        "beta,alpha",
        records=("addmm",),
        grad_fn=False,
    ),
    method("Tensor.addbmm", lambda x, a, b: x.addbmm(a, b), (S((2, 2), (2, 2, 3), (2, 3, 2)),),
           records=("addmm",), grad_fn=False),
    OpRow("Tensor.addbmm_", lambda m, x, a, b: (x * 1).addbmm_(a, b, beta=2),
          (S((2, 2), (2, 2, 3), (2, 3, 2)),), records=("addmm",), grad_fn=False),
    op("inner", (S((3,), (3,)), S((2, 3), (4, 3)), S((), (2, 3)), S((2, 2, 3), (3,))),
       grad_fn=False, records=()),
    method("Tensor.inner", lambda x, y: x.inner(y), (S((2, 3), (3,)),), grad_fn=False),
    op("adjoint", (S((2, 3)), S((2, 3, 4))), grad_fn=False),
    method("Tensor.adjoint", lambda x: x.adjoint(), (S((3, 2)),), grad_fn=False),
    op("dist", (S((3,), (3,)), S((2, 3), (3,))), records=("linalg_vector_norm",),
       grad_fn=False),
    _row("dist", lambda m, x, y: m.dist(x, y, 3), (S((2, 3), (2, 3)),), "p=3",
         records=("linalg_vector_norm",), grad_fn=False),
    method("Tensor.dist", lambda x, y: x.dist(y, p=1), (S((4,), (4,)),),
           records=("linalg_vector_norm",), grad_fn=False),
    op("chain_matmul", (S((2, 3), (3, 4), (4, 2)), S((2, 3), (3, 2))), grad_fn=False,
       records=("mm",)),
    _row("matrix_power", lambda m, x: m.matrix_power(x, 3), (S((2, 2)), S((2, 3, 3))),
         grad_fn=False, records=("mm", "matmul")),
    method("Tensor.matrix_power", lambda x: x.matrix_power(2), (S((3, 3)),), grad_fn=False,
           records=("mm",)),
]

EINSUM_CASES = [
    ("ij,jk->ik", (2, 3), (3, 4)),
    ("ij,jk", (2, 3), (3, 2)),
    ("bij,bjk->bik", (2, 2, 3), (2, 3, 2)),
    ("i,i->", (3,), (3,)),
    ("i,j->ij", (2,), (3,)),
    ("ii->i", (3, 3)),
    ("ii", (3, 3)),
    ("ij->ji", (2, 3)),
    ("ijk->k", (2, 3, 2)),
    ("iij,jk->ik", (2, 2, 3), (3, 2)),
    ("...ij,...jk->...ik", (2, 2, 3), (3, 2)),
    ("...ij,...jk", (1, 2, 3), (2, 3, 2)),
    ("bi,Bi", (2, 3), (4, 3)),
    ("ij,jk,kl->il", (2, 3), (3, 2), (2, 2)),
    ("ab,bc,ca->", (2, 3), (3, 2), (2, 2)),
    ("ij,ij->i", (1, 3), (2, 3)),
    ("i,ij,j", (2,), (2, 3), (3,)),
]

EINSUM = [
    _row(
        "einsum",
        lambda m, *xs, eq=eq: m.einsum(eq, *xs),
        (S(*shapes),),
        eq,
        records=("einsum",) if len(shapes) > 1 else (),
        grad_fn=False,
    )
    for eq, *shapes in EINSUM_CASES
]
EINSUM += [
    _row(
        "einsum",
        lambda m, x, y: m.einsum("ij,jk->ik", [x, y]),
        (S((2, 3), (3, 2)),),
        "list",
        records=("einsum",),
        grad_fn=False,
    ),
    _row(
        "einsum",
        lambda m, x: m.einsum("ijji->i", x),
        (S((2, 3, 3, 2)),),
        "diagonals",
        records=("diagonal",),
        grad_fn=False,
    ),
    op("tensordot", (S((2, 3, 4), (3, 4, 2)),)),
    _row(
        "tensordot",
        lambda m, x, y: m.tensordot(x, y, 1),
        (S((2, 3), (3, 2)),),
        "dims=1",
        records=("mm",),
    ),
    _row(
        "tensordot",
        lambda m, x, y: m.tensordot(x, y, dims=([1, 0], [0, 2])),
        (S((3, 2, 2), (2, 4, 3)),),
        "lists",
        records=("mm",),
    ),
    _row(
        "tensordot",
        lambda m, x, y: m.tensordot(x, y, 0),
        (S((2,), (3,)),),
        "dims=0",
        records=("mm",),
    ),
    op(
        "kron",
        (S((2, 2), (2, 3)), S((2,), (3,)), S((2, 1, 2), (2, 2)), S((), (2,))),
        grad_fn=False,
        records=("mul",),
    ),
    method(
        "Tensor.kron", lambda x, y: x.kron(y), (S((2, 2), (1, 2)),), grad_fn=False, records=("mul",)
    ),
]

DIAGONALS = [
    op("trace", (S((3, 3)), S((2, 4)), S((4, 2)))),
    method("Tensor.trace", lambda x: x.trace(), (S((3, 3)),), records=("trace",)),
    op("trace", (S(INTS),), variant="integers", orders=()),
    op("diag", (S((3,)), S((3, 3)), S((2, 4)))),
    _row(
        "diag",
        lambda m, x: m.diag(x, 1),
        (S((3,)), S((3, 4))),
        "diagonal=1",
        records=("diag_embed", "diagonal_copy"),
    ),
    _row(
        "diag",
        lambda m, x: x.diag(-2),
        (S((2,)), S((4, 3))),
        "diagonal=-2",
        records=("diag_embed", "diagonal_copy"),
    ),
    op("diagonal", (S((3, 3)), S((2, 4)), S((2, 3, 4)))),
    _row(
        "diagonal",
        lambda m, x: m.diagonal(x, 1, 2, 0),
        (S((2, 3, 4)), S((3, 3, 3))),
        "offset=1,dims",
        records=("diagonal",),
    ),
    _row(
        "diagonal",
        lambda m, x: x.diagonal(offset=-1, dim1=-1, dim2=-2),
        (S((3, 4)),),
        "offset=-1",
        records=("diagonal",),
    ),
    _row(
        "diagonal",
        lambda m, x: _scale_diagonal(x),
        (S((3, 3)), S((2, 3, 4))),
        "view write",
        records=("diagonal",),
        grad_fn=False,
    ),
    _row(
        "diagonal",
        lambda m, x: x.mT.diagonal(1),
        (S((3, 4)),),
        "of a transpose",
        records=("diagonal",),
    ),
    op("diagonal_copy", (S((3, 3)), S((2, 3, 4)))),
    op("diag_embed", (S((3,)), S((2, 3)))),
    _row(
        "diag_embed",
        lambda m, x: m.diag_embed(x, 1, 0, 2),
        (S((2, 3)),),
        "offset=1,dims",
        records=("diag_embed",),
    ),
    _row(
        "diag_embed",
        lambda m, x: x.diag_embed(-1),
        (S((2, 3)),),
        "offset=-1",
        records=("diag_embed",),
    ),
    op("tril", (S((3, 3)), S((2, 3, 4))), inplace=("tril_",)),
    _row(
        "tril",
        lambda m, x: m.tril(x, -1),
        (S((3, 4)),),
        "diagonal=-1",
        records=("tril",),
        inplace={"tril_": lambda x: x.tril_(-1)},
    ),
    op("triu", (S((3, 3)), S((2, 3, 4))), inplace=("triu_",)),
    _row(
        "triu",
        lambda m, x: x.triu(diagonal=2),
        (S((3, 4)),),
        "diagonal=2",
        records=("triu",),
        inplace={"triu_": lambda x: x.triu_(2)},
    ),
]

# ---- torch.linalg ------------------------------------------------------------------------------


def _lin(name: str, call, samples, variant: str = "", **kwargs) -> OpRow:
    """A row for ``torch.linalg.<name>``."""
    return OpRow(f"linalg.{name}", call, samples, variant=variant, **kwargs)


LINALG = [
    _lin("matmul", lambda m, x, y: m.linalg.matmul(x, y), (S((2, 3), (3, 2)),), records=("mm",)),
    _lin(
        "inv",
        lambda m, x: m.linalg.inv(_wellcond(m, x)),
        (S((3, 3)), S((2, 2, 2))),
        records=("linalg_inv",),
        orders=(1, 2, 3),
    ),
    op("inverse", (S((2, 2)),), records=("linalg_inv",), domain=Domain(1.0, 2.0)),
    method(
        "Tensor.inverse",
        lambda x: x.inverse(),
        (S((2, 2)),),
        records=("linalg_inv",),
        domain=Domain(1.0, 2.0),
    ),
    _lin(
        "det",
        lambda m, x: m.linalg.det(x),
        (S((3, 3)), S((2, 2, 2)), S((1, 1))),
        records=("linalg_det",),
        orders=(1, 2, 3),
    ),
    _lin(
        "det",
        lambda m, x: m.linalg.det(x * m.tensor([[1.0], [0.0]], dtype=x.dtype)),
        (S((2, 2)),),
        "singular",
        records=("linalg_det", "linalg_svd"),
        grad_fn=False,
    ),
    _lin(
        "det",
        lambda m, x: m.linalg.det(
            x * m.tensor([[1.0], [1.0], [0.0]], dtype=x.dtype)
            + m.tensor([[0.0], [0.0], [1.0]], dtype=x.dtype) * x[:1]
        ),
        (S((3, 3)),),
        "rank 2",
        records=("linalg_det", "linalg_svd"),
        grad_fn=False,
    ),
    op("det", (S((3, 3)),), records=("linalg_det",)),
    method("Tensor.det", lambda x: x.det(), (S((2, 2)),), records=("linalg_det",)),
    _lin(
        "slogdet",
        lambda m, x: m.linalg.slogdet(x),
        (S((3, 3)), S((2, 2, 2))),
        records=("linalg_slogdet",),
    ),
    op("slogdet", (S((3, 3)),), records=("linalg_slogdet",)),
    method("Tensor.slogdet", lambda x: x.slogdet(), (S((2, 2)),), records=("linalg_slogdet",)),
    OpRow(
        "logdet",
        lambda m, x: m.logdet(_spd(m, x)),
        (S((2, 2)), S((2, 3, 3))),
        records=("linalg_slogdet",),
    ),
    op(
        "logdet",
        (S((2, 2)), S((3, 2, 2))),
        variant="any sign",
        orders=(),
        records=("linalg_slogdet",),
    ),
    OpRow(
        "Tensor.logdet", lambda m, x: _spd(m, x).logdet(), (S((3, 3)),), records=("linalg_slogdet",)
    ),
    _lin(
        "solve",
        lambda m, a, b: m.linalg.solve(_wellcond(m, a), b),
        (
            S((3, 3), (3,)),
            S((3, 3), (3, 2)),
            S((2, 3, 3), (2, 3)),
            S((2, 3, 3), (3, 1)),
            S((3, 3), (2, 3, 2)),
        ),
        records=("linalg_solve",),
        grad_fn=False,
    ),
    _lin(
        "solve",
        lambda m, a, b: m.linalg.solve(_wellcond(m, a), b, left=False),
        (S((3, 3), (2, 3)),),
        "left=False",
        records=("linalg_solve",),
        grad_fn=False,
    ),
    _lin(
        "cholesky",
        lambda m, x: m.linalg.cholesky(_spd(m, x)),
        (S((3, 3)), S((2, 2, 2))),
        records=("linalg_cholesky",),
        grad_fn=False,
    ),
    _lin(
        "cholesky",
        lambda m, x: m.linalg.cholesky(_spd(m, x), upper=True),
        (S((3, 3)),),
        "upper",
        records=("linalg_cholesky",),
        grad_fn=False,
    ),
    _lin(
        "qr",
        lambda m, x: m.linalg.qr(x),
        (S((3, 3)), S((4, 2)), S((2, 4)), S((2, 3, 2))),
        records=("linalg_qr",),
    ),
    _lin(
        "qr",
        lambda m, x: m.linalg.qr(x, mode="complete"),
        (S((2, 4)), S((3, 3))),
        "complete",
        records=("linalg_qr",),
    ),
    _lin(
        "qr",
        lambda m, x: m.linalg.qr(x, mode="r")[1],
        (S((3, 2)),),
        "r",
        orders=(),
        records=("linalg_qr",),
    ),
    _lin("qr", lambda m, x: m.linalg.qr(x).R, (S((3, 2)),), "R only", records=("linalg_qr",)),
    _lin(
        "eigh",
        lambda m, x: _eigh_invariants(m, m.linalg.eigh(_sym(m, x))),
        (S((3, 3)), S((2, 2, 2))),
        records=("linalg_eigh",),
        grad_fn=False,
    ),
    _lin(
        "eigh",
        lambda m, x: m.linalg.eigh(_sym(m, x), UPLO="U").eigenvalues,
        (S((3, 3)),),
        "UPLO=U",
        records=("linalg_eigh",),
        grad_fn=False,
    ),
    _lin(
        "eigvalsh",
        lambda m, x: m.linalg.eigvalsh(_sym(m, x)),
        (S((3, 3)),),
        records=("linalg_eigh",),
        grad_fn=False,
    ),
    _lin(
        "eig",
        lambda m, x: _eig_invariants(m, m.linalg.eig(_real_spectrum(m, x))),
        (S((3, 3)), S((2, 2, 2))),
        "real spectrum",
        records=("linalg_eig",),
        grad_fn=False,
    ),
    _lin(
        "eig",
        lambda m, x: _eig_invariants(m, m.linalg.eig(_complex_spectrum(m, x))),
        (S((3, 3)),),
        "complex pair",
        records=("linalg_eig",),
        grad_fn=False,
    ),
    _lin(
        "eig",
        lambda m, x, y: _eig_invariants(m, m.linalg.eig(m.complex(_real_spectrum(m, x), y))),
        (S((3, 3), (3, 3)),),
        "complex input",
        records=("linalg_eig", "complex"),
        grad_fn=False,
    ),
    _lin(
        "eigvals",
        lambda m, x: m.view_as_real(m.linalg.eigvals(_complex_spectrum(m, x))),
        (S((3, 3)), S((2, 3, 3))),
        records=("linalg_eig",),
        grad_fn=False,
    ),
    _lin(
        "svd",
        lambda m, x: _svd_invariants(m, m.linalg.svd(_distinct(m, x), full_matrices=False)),
        (S((3, 3)), S((4, 2)), S((2, 3)), S((2, 3, 2))),
        records=("linalg_svd",),
        grad_fn=False,
    ),
    _lin(
        "svd",
        lambda m, x: _svd_invariants(m, m.linalg.svd(_distinct(m, x))),
        (S((3, 3)), S((4, 2)), S((2, 3))),
        "full_matrices",
        records=("linalg_svd",),
        grad_fn=False,
    ),
    _lin(
        "svdvals",
        lambda m, x: m.linalg.svdvals(_distinct(m, x)),
        (S((3, 3)), S((2, 3))),
        records=("linalg_svd",),
        grad_fn=False,
    ),
    op("svd", (S((3, 2)),), grad_fn=False, records=("linalg_svd",), orders=()),
    _row(
        "svd",
        lambda m, x: _svd_invariants(
            m, m.svd(_distinct(m, x))[:2] + (m.svd(_distinct(m, x))[2].mT,)
        ),
        (S((3, 2)), S((2, 3))),
        "invariants",
        grad_fn=False,
        records=("linalg_svd",),
    ),
    method("Tensor.svd", lambda x: x.svd().S, (S((3, 2)),), grad_fn=False, records=("linalg_svd",)),
    _lin(
        "pinv",
        lambda m, x: m.linalg.pinv(_distinct(m, x)),
        (S((3, 3)), S((4, 2)), S((2, 3)), S((2, 3, 2))),
        records=("linalg_pinv",),
        grad_fn=False,
    ),
    _lin(
        "pinv",
        lambda m, x: m.linalg.pinv(_spd(m, x), hermitian=True),
        (S((3, 3)),),
        "hermitian",
        records=("linalg_pinv",),
        grad_fn=False,
    ),
    _lin(
        "pinv",
        lambda m, x: m.linalg.pinv(_distinct(m, x), atol=0.1, rtol=0.01),
        (S((3, 2)),),
        "atol,rtol",
        records=("linalg_pinv",),
        grad_fn=False,
    ),
    _lin(
        "pinv",
        lambda m, x: m.linalg.pinv(x),
        (S((3, 2)),),
        "plain",
        records=("linalg_pinv",),
        dtypes=("float64",),
    ),
    OpRow(
        "pinverse",
        lambda m, x: m.pinverse(_distinct(m, x)),
        (S((3, 2)),),
        records=("linalg_pinv",),
        grad_fn=False,
    ),
    method(
        "Tensor.pinverse",
        lambda x: x.pinverse(),
        (S((2, 3)),),
        records=("linalg_pinv",),
        dtypes=("float64",),
    ),
    _lin(
        "lstsq",
        lambda m, a, b: m.linalg.lstsq(_distinct(m, a), b),
        (S((4, 3), (4, 2)), S((4, 2), (4,)), S((2, 3, 2), (2, 3, 1))),
        records=("linalg_pinv",),
        grad_fn=False,
    ),
    _lin(
        "lstsq",
        lambda m, a, b: m.linalg.lstsq(_wellcond(m, a), b).solution,
        (S((3, 3), (3, 2)),),
        "square",
        records=("linalg_pinv",),
        grad_fn=False,
    ),
    _lin(
        "matrix_exp",
        lambda m, x: m.linalg.matrix_exp(x),
        (S((2, 2)), S((3, 3)), S((2, 2, 2))),
        records=("linalg_matrix_exp",),
    ),
    _lin(
        "matrix_exp",
        lambda m, x: m.linalg.matrix_exp(x * 0.01),
        (S((3, 3)),),
        "small",
        records=("linalg_matrix_exp",),
        grad_fn=False,
    ),
    _lin(
        "matrix_exp",
        lambda m, x: m.linalg.matrix_exp(x * 3),
        (S((3, 3)),),
        "large",
        records=("linalg_matrix_exp",),
        grad_fn=False,
        orders=(1,),
    ),
    op("matrix_exp", (S((2, 2)),), records=("linalg_matrix_exp",)),
    method(
        "Tensor.matrix_exp", lambda x: x.matrix_exp(), (S((2, 2)),), records=("linalg_matrix_exp",)
    ),
    _lin(
        "cross",
        lambda m, x, y: m.linalg.cross(x, y),
        (S((3,), (3,)), S((1, 3), (2, 3))),
        records=("linalg_cross",),
    ),
    _lin(
        "cross",
        lambda m, x, y: m.linalg.cross(x, y, dim=0),
        (S((3, 2), (3, 1)),),
        "dim=0",
        records=("linalg_cross",),
    ),
    op("cross", (S((3, 2), (3, 2)),), records=("linalg_cross",)),
    _row(
        "cross",
        lambda m, x, y: m.cross(x, y, dim=1),
        (S((2, 3), (2, 3)),),
        "dim=1",
        records=("linalg_cross",),
    ),
    method(
        "Tensor.cross",
        lambda x, y: x.cross(y, dim=-1),
        (S((2, 3), (2, 3)),),
        records=("linalg_cross",),
    ),
    _lin(
        "norm",
        lambda m, x: m.linalg.norm(x),
        (S((5,)), S((3, 4)), S((2, 3, 2))),
        records=("linalg_vector_norm",),
    ),
    *[
        _lin(
            "norm",
            lambda m, x, o=o: m.linalg.norm(x, o),
            (S((3, 4)),),
            f"ord={o}",
            grad_fn=False,
            records=("linalg_vector_norm",) if o == "fro" else (),
        )
        for o in ("fro", "nuc", 2, -2, 1, -1, float("inf"), -float("inf"))
    ],
    _lin(
        "norm",
        lambda m, x: m.linalg.norm(x, 3),
        (S((4,)),),
        "vector ord=3",
        records=("linalg_vector_norm",),
        domain=Domain(0.5, 2.0),
    ),
    _lin(
        "norm",
        lambda m, x: m.linalg.norm(x, dim=(0, 2), keepdim=True),
        (S((2, 3, 2)),),
        "dims",
        records=("linalg_vector_norm",),
    ),
    _lin(
        "norm",
        lambda m, x: m.linalg.norm(x, 1, dim=1),
        (S((2, 3)),),
        "dim",
        records=("linalg_vector_norm",),
        domain=Domain(0.5, 2.0),
    ),
    _lin(
        "vector_norm",
        lambda m, x: m.linalg.vector_norm(x),
        (S((5,)), S((3, 4)), S(())),
        records=("linalg_vector_norm",),
    ),
    _lin(
        "vector_norm",
        lambda m, x: m.linalg.vector_norm(x, 1.5, dim=(0, 1), keepdim=True),
        (S((2, 3, 2)),),
        "ord=1.5,dims",
        records=("linalg_vector_norm",),
        domain=Domain(0.5, 2.0),
    ),
    _lin(
        "vector_norm",
        lambda m, x: m.linalg.vector_norm(x, dtype=m.float64),
        (S((3,)),),
        "dtype",
        records=("linalg_vector_norm", "to_copy"),
    ),
    _lin(
        "matrix_norm",
        lambda m, x: m.linalg.matrix_norm(x),
        (S((3, 4)), S((2, 3, 2))),
        records=("linalg_vector_norm",),
    ),
    *[
        _lin(
            "matrix_norm",
            lambda m, x, o=o: m.linalg.matrix_norm(x, o, dim=(2, 0), keepdim=True),
            (S((3, 2, 4)),),
            f"ord={o},dims",
            grad_fn=False,
            records=("linalg_vector_norm",) if o == "fro" else (),
        )
        for o in ("fro", "nuc", 2, 1, float("inf"))
    ],
    _lin("vecdot", lambda m, x, y: m.linalg.vecdot(x, y), (S((2, 3), (3,)),), records=("mul",)),
    _lin(
        "vecdot",
        lambda m, x, y: m.linalg.vecdot(x, y, dim=0),
        (S((3, 2), (3, 2)),),
        "dim=0",
        records=("mul",),
    ),
    _lin("diagonal", lambda m, x: m.linalg.diagonal(x), (S((2, 3, 3)),), records=("diagonal",)),
    _lin(
        "diagonal",
        lambda m, x: m.linalg.diagonal(x, offset=1, dim1=0, dim2=2),
        (S((2, 3, 3)),),
        "offset,dims",
        records=("diagonal",),
    ),
    _lin(
        "multi_dot",
        lambda m, x, y, z: m.linalg.multi_dot([x, y, z]),
        (S((2, 3), (3, 4), (4, 2)), S((3,), (3, 2), (2,))),
        grad_fn=False,
        records=("mm", "vm", "dot"),
    ),
    _lin(
        "matrix_power",
        lambda m, x: m.linalg.matrix_power(x, 3),
        (S((2, 2)), S((2, 3, 3))),
        grad_fn=False,
        records=("mm", "matmul"),
    ),
    _lin(
        "matrix_power",
        lambda m, x: m.linalg.matrix_power(_wellcond(m, x), -2),
        (S((3, 3)),),
        "n=-2",
        grad_fn=False,
        records=("linalg_inv",),
    ),
    _lin(
        "matrix_power",
        lambda m, x: m.linalg.matrix_power(x, 0),
        (S((2, 2)),),
        "n=0",
        grad_fn=False,
        orders=(),
    ),
]


# linalg.solve_triangular reads one triangle of a full, diagonally shifted matrix (the other
# triangle gets no gradient, as in PyTorch); the legacy triangular_solve gets triangular input
# (PyTorch's forward mode for it reads the other triangle, and ignores transpose=True);
# cholesky_solve/inverse get a factor with a diagonal away from zero.
SOLVERS = [
    _lin(
        "solve_triangular",
        lambda m, a, b: m.linalg.solve_triangular(_wellcond(m, a), b, upper=True),
        (S((3, 3), (3, 2)), S((2, 3, 3), (3, 1)), S((3, 3), (2, 3, 2)), S((1, 1), (1, 3))),
        records=("linalg_solve_triangular",),
    ),
    _lin(
        "solve_triangular",
        lambda m, a, b: m.linalg.solve_triangular(_wellcond(m, a), b, upper=False, left=False),
        (S((3, 3), (2, 3)), S((2, 3, 3), (2, 1, 3))),
        "lower,left=False",
        records=("linalg_solve_triangular",),
        grad_fn=False,
    ),
    _lin(
        "solve_triangular",
        lambda m, a, b: m.linalg.solve_triangular(a, b, upper=False, unitriangular=True),
        (S((3, 3), (3, 2)),),
        "unitriangular",
        records=("linalg_solve_triangular",),
    ),
    _row(
        "triangular_solve",
        lambda m, b, a: m.triangular_solve(b, _wellcond(m, a).triu()),
        (S((3, 2), (3, 3)),),
        records=("linalg_solve_triangular",),
        grad_fn=False,
    ),
    _row(
        "triangular_solve",
        lambda m, b, a: m.triangular_solve(b, _factor(m, a), upper=False, transpose=True)[0],
        (S((3, 2), (3, 3)), S((2, 3, 1), (3, 3))),
        "lower,transpose",
        records=("linalg_solve_triangular",),
        grad_fn=False,
    ),
    _row(
        "triangular_solve",
        lambda m, b, a: m.triangular_solve(b, a.triu(1), unitriangular=True),
        (S((3, 2), (3, 3)),),
        "unitriangular",
        records=("linalg_solve_triangular",),
        grad_fn=False,
    ),
    method(
        "Tensor.triangular_solve",
        lambda b, a: b.triangular_solve(a.triu() + 2 * a.new_ones(()).expand(3).diag()).solution,
        (S((3, 1), (3, 3)),),
        records=("linalg_solve_triangular",),
        grad_fn=False,
    ),
    _row(
        "cholesky_solve",
        lambda m, b, x: m.cholesky_solve(b, _factor(m, x)),
        (S((3, 2), (3, 3)), S((2, 3, 1), (3, 3))),
        records=("linalg_solve",),
        grad_fn=False,
    ),
    _row(
        "cholesky_solve",
        lambda m, b, x: m.cholesky_solve(b, _factor(m, x).mT, upper=True),
        (S((3, 2), (3, 3)),),
        "upper",
        records=("linalg_solve",),
        grad_fn=False,
    ),
    method(
        "Tensor.cholesky_solve",
        lambda b, x: b.cholesky_solve(x.tril() + 3 * x.new_ones(()).expand(2).diag()),
        (S((2, 2), (2, 2)),),
        records=("linalg_solve",),
        grad_fn=False,
    ),
    _row(
        "cholesky_inverse",
        lambda m, x: m.cholesky_inverse(_factor(m, x)),
        (S((3, 3)), S((2, 2, 2))),
        records=("linalg_inv",),
        grad_fn=False,
    ),
    _row(
        "cholesky_inverse",
        lambda m, x: m.cholesky_inverse(_factor(m, x).mT, upper=True),
        (S((3, 3)),),
        "upper",
        records=("linalg_inv",),
        grad_fn=False,
    ),
    method(
        "Tensor.cholesky_inverse",
        lambda x: (x.tril() + 3 * x.new_ones(()).expand(2).diag()).cholesky_inverse(),
        (S((2, 2)),),
        records=("linalg_inv",),
        grad_fn=False,
    ),
    _row(
        "cholesky",
        lambda m, x: m.cholesky(_spd(m, x)),
        (S((3, 3)), S((2, 2, 2))),
        records=("linalg_cholesky",),
        grad_fn=False,
    ),
    _row(
        "cholesky",
        lambda m, x: _spd(m, x).cholesky(upper=True),
        (S((3, 3)),),
        "upper",
        records=("linalg_cholesky",),
        grad_fn=False,
    ),
]


def _pivoted(m, x):
    """x (small) plus a scaled cyclic permutation in its leading square: LU must swap rows, and
    the pivots stay put under small perturbations."""
    rows, cols = x.shape[-2:]
    k = min(rows, cols)
    c = np.zeros((rows, cols))
    for i in range(k):
        c[i, (i + 1) % k] = 2.0 + i
    return 0.3 * x + m.tensor(c, dtype=x.dtype)


LU_SHAPES = (S((3, 3)), S((2, 3, 3)), S((3, 4)), S((4, 3)), S((1, 1)))
LU_RECORDS = ("linalg_lu_factor_ex", "lu_pivots_to_permutation")
LU_ROWS = [
    _lin(
        "lu_factor",
        lambda m, x: m.linalg.lu_factor(_pivoted(m, x)),
        LU_SHAPES,
        records=("linalg_lu_factor_ex",),
    ),
    _lin(
        "lu_factor_ex",
        lambda m, x: m.linalg.lu_factor_ex(_pivoted(m, x)),
        (S((3, 3)), S((2, 4, 3))),
        records=("linalg_lu_factor_ex",),
    ),
    _lin(
        "lu_factor_ex",
        lambda m, x: m.linalg.lu_factor_ex(x * m.tensor([[1.0], [2.0], [0.0]], dtype=x.dtype)),
        (S((3, 3)),),
        "singular",
        orders=(),
    ),
    _lin("lu", lambda m, x: m.linalg.lu(_pivoted(m, x)), LU_SHAPES, records=LU_RECORDS,
         grad_fn=False),
    _lin("lu", lambda m, x: m.linalg.lu(_wellcond(m, x)), (S((4, 4)),), "no swaps",
         records=LU_RECORDS, grad_fn=False),
    op(
        "lu_unpack",
        (S((3, 3), Const([2, 3, 3], "int32")), S((2, 4, 3), Const([[4, 2, 3], [1, 2, 3]], "int32")),
         S((2, 3), Const([2, 2], "int32"))),
        records=LU_RECORDS[1:],
        grad_fn=False,
    ),
    _row(
        "lu_unpack",
        lambda m, x: m.lu_unpack(*m.linalg.lu_factor(_pivoted(m, x)), unpack_pivots=False),
        (S((3, 4)),),
        "unpack_pivots=False",
        records=LU_RECORDS[:1],
        grad_fn=False,
    ),
    _lin(
        "lu_solve",
        lambda m, x, b: m.linalg.lu_solve(*m.linalg.lu_factor(_pivoted(m, x)), b),
        (S((3, 3), (3, 2)), S((2, 3, 3), (3, 1)), S((3, 3), (2, 3, 2))),
        records=LU_RECORDS,
        grad_fn=False,
    ),
    *[
        _lin(
            "lu_solve",
            lambda m, x, b, left=left, adjoint=adjoint: m.linalg.lu_solve(
                *m.linalg.lu_factor(_pivoted(m, x)), b, left=left, adjoint=adjoint),
            (S((3, 3), (3, 3)), S((2, 3, 3), (2, 3, 3))),
            f"left={left},adjoint={adjoint}",
            records=LU_RECORDS,
            grad_fn=False,
        )
        for left, adjoint in ((True, True), (False, False), (False, True))
    ],
    _row("lu", lambda m, x: m.lu(_pivoted(m, x), get_infos=True), (S((3, 3)), S((2, 4, 3))),
         records=("linalg_lu_factor_ex",)),
    OpRow("Tensor.lu", lambda m, x: _pivoted(m, x).lu(), (S((2, 2)),),
          records=("linalg_lu_factor_ex",)),
    _row(
        "lu_solve",
        lambda m, b, x: m.lu_solve(b, *m.linalg.lu_factor(_pivoted(m, x))),
        (S((3, 2), (3, 3)),),
        records=LU_RECORDS,
        grad_fn=False,
    ),
    OpRow(
        "Tensor.lu_solve",
        lambda m, b, x: b.lu_solve(*_pivoted(m, x).lu()),
        (S((2, 1), (2, 2)),),
        records=LU_RECORDS,
        grad_fn=False,
    ),
]

EX_ROWS = [
    _lin("inv_ex", lambda m, x: m.linalg.inv_ex(_wellcond(m, x)), (S((3, 3)), S((2, 2, 2))),
         records=("linalg_inv",)),
    _lin(
        "inv_ex",
        lambda m, x: m.linalg.inv_ex(x * m.tensor([[1.0], [2.0], [0.0]], dtype=x.dtype)),
        (S((3, 3)), S((2, 3, 3))),
        "singular",
        orders=(),
        records=LU_RECORDS,
        grad_fn=False,
    ),
    _lin(
        "solve_ex",
        lambda m, a, b: m.linalg.solve_ex(_wellcond(m, a), b),
        (S((3, 3), (3,)), S((3, 3), (3, 2)), S((2, 3, 3), (3, 1))),
        records=("linalg_solve",),
        grad_fn=False,
    ),
    _lin(
        "solve_ex",
        lambda m, a, b: m.linalg.solve_ex(_wellcond(m, a), b, left=False),
        (S((3, 3), (2, 3)),),
        "left=False",
        records=("linalg_solve",),
        grad_fn=False,
    ),
    _lin(
        "solve_ex",
        lambda m, a, b: m.linalg.solve_ex(a * m.tensor([[1.0], [0.0]], dtype=a.dtype), b),
        (S((2, 2), (2,)), S((2, 2), (2, 3))),
        "singular",
        orders=(),
        records=LU_RECORDS,
        grad_fn=False,
    ),
    _lin(
        "cholesky_ex",
        lambda m, x: m.linalg.cholesky_ex(_spd(m, x)),
        (S((3, 3)), S((2, 2, 2))),
        records=("linalg_cholesky",),
        grad_fn=False,
    ),
    _lin(
        "cholesky_ex",
        lambda m, x: m.linalg.cholesky_ex(_spd(m, x), upper=True),
        (S((3, 3)),),
        "upper",
        records=("linalg_cholesky",),
        grad_fn=False,
    ),
    _lin(
        "cholesky_ex",
        lambda m, x: m.linalg.cholesky_ex(x - 3 * m.eye(3, dtype=x.dtype)),
        # the partial factor is not differentiable here (docs/differences.md)
        (S(T((3, 3), grad=False)), S(T((2, 3, 3), grad=False))),
        "not positive-definite",
        orders=(),
    ),
    _lin("cond", lambda m, x: m.linalg.cond(_distinct(m, x)), (S((3, 3)), S((2, 3)), S((2, 4, 3))),
         records=("linalg_svd",), grad_fn=False),
    *[
        _lin(
            "cond",
            lambda m, x, p=p: m.linalg.cond(_wellcond(m, x), p),
            (S((3, 3)), S((2, 2, 2))),
            f"p={p}",
            records=("linalg_inv",),
            grad_fn=False,
            # PyTorch cannot differentiate these (it overwrites its inverse in place):
            # tests/test_linalg_more.py gradchecks ours
            orders=(),
        )
        for p in ("fro", 1, float("inf"))
    ],
    _lin("cond", lambda m, x: m.linalg.cond(_distinct(m, x), -2), (S((3, 3)), S((2, 2, 3))),
         "p=-2", records=("linalg_svd",), grad_fn=False),
    _lin("cond", lambda m, x: m.linalg.cond(_distinct(m, x) + m.eye(3, dtype=x.dtype), "nuc"),
         (S((3, 3)),), "p=nuc", records=("linalg_inv", "linalg_svd"), grad_fn=False,
         orders=()),
    _lin(
        "cond",
        lambda m, x: m.linalg.cond(x * m.tensor([[1.0], [0.0]], dtype=x.dtype), 1),
        (S((2, 2)),),
        "singular",
        orders=(),
        grad_fn=False,
    ),
    _lin(
        "matrix_rank",
        lambda m, x: m.linalg.matrix_rank(x[..., :2] @ x[..., :2, :]),
        (S((3, 3)), S((2, 4, 4)), S((3, 4))),
        orders=(),
    ),
    _lin(
        "matrix_rank",
        lambda m, x: m.linalg.matrix_rank(x, atol=1.0, rtol=0.2),
        (S((4, 4)), S((2, 3, 5))),
        "atol,rtol",
        orders=(),
    ),
    _lin("matrix_rank", lambda m, x: m.linalg.matrix_rank(_sym(m, x), 0.5, True), (S((4, 4)),),
         "tol,hermitian", orders=()),
    _lin(
        "tensorinv",
        lambda m, x: m.linalg.tensorinv(x + 3 * m.eye(6, dtype=x.dtype).reshape(2, 3, 6)),
        (S((2, 3, 6)),),
        records=("linalg_inv",),
        grad_fn=False,
    ),
    _lin(
        "tensorinv",
        lambda m, x: m.linalg.tensorinv(x + 3 * m.eye(4, dtype=x.dtype).reshape(4, 2, 2), ind=1),
        (S((4, 2, 2)),),
        "ind=1",
        records=("linalg_inv",),
        grad_fn=False,
    ),
    _lin(
        "tensorsolve",
        lambda m, a, b: m.linalg.tensorsolve(a + 3 * m.eye(6, dtype=a.dtype).reshape(2, 3, 6), b),
        (S((2, 3, 6), (2, 3)),),
        records=("linalg_solve",),
        grad_fn=False,
    ),
    _lin(
        "tensorsolve",
        lambda m, a, b: m.linalg.tensorsolve(
            a + 3 * m.eye(6, dtype=a.dtype).reshape(6, 3, 2), b, dims=(0,)),
        (S((6, 3, 2), (3, 2)),),
        "dims",
        records=("linalg_solve",),
        grad_fn=False,
    ),
    _lin("vander", lambda m, x: m.linalg.vander(x), (S((3,)), S((2, 4))), records=("cumprod",),
         grad_fn=False),
    _lin("vander", lambda m, x: m.linalg.vander(x, N=5), (S((3,)), S(())), "N=5",
         records=("cumprod",), grad_fn=False),
    _lin("vander", lambda m, x: m.linalg.vander(x), (S(Const([0, 2, -3])),), "integers",
         orders=()),
    _row("qr", lambda m, x: m.qr(x), (S((3, 2)), S((2, 3)), S((2, 3, 3))), records=("linalg_qr",),
         grad_fn=False),
    _row("qr", lambda m, x: m.qr(x, some=False), (S((2, 3)),), "some=False",
         records=("linalg_qr",), grad_fn=False),
    method("Tensor.qr", lambda x: x.qr(), (S((3, 2)),), records=("linalg_qr",), grad_fn=False),
]

# Reflector products grow fast with their entries: float32 agrees to 1e-5 on smaller ones.
def _symmetric(m, x):
    return x + x.mT


def _hollow(m, x):
    """A symmetric x with a zero diagonal: Bunch-Kaufman takes 2x2 pivots."""
    n = x.shape[-1]
    return (x + x.mT) * (1 - m.eye(n, dtype=x.dtype))


LDL_RECORDS = ("linalg_ldl_factor_ex",)
LDL_ROWS = [
    _lin("ldl_factor_ex", lambda m, x: m.linalg.ldl_factor_ex(_symmetric(m, x)),
         (S((3, 3)), S((2, 4, 4)), S((1, 1))), orders=(), grad_fn=False, records=LDL_RECORDS),
    _lin("ldl_factor", lambda m, x: m.linalg.ldl_factor(_hollow(m, x)), (S((4, 4)), S((2, 3, 3))),
         "2x2 pivots", orders=(), grad_fn=False, records=LDL_RECORDS),
    _lin("ldl_factor", lambda m, x: m.linalg.ldl_factor(_symmetric(m, x), hermitian=True),
         (S((3, 3)),), "hermitian", orders=(), grad_fn=False, records=LDL_RECORDS),
    _lin(
        "ldl_solve",
        lambda m, x, b: m.linalg.ldl_solve(*m.linalg.ldl_factor(_hollow(m, x)), b),
        (S((3, 3), (3, 2)), S((2, 4, 4), (4, 1))),
        orders=(), grad_fn=False,
        records=LDL_RECORDS + ("linalg_ldl_solve",),
    ),
]

SMALL = Domain(-0.8, 0.8)
HOUSEHOLDER = [
    op("geqrf", (S((4, 3)), S((2, 3, 3)), S((2, 4))), orders=()),
    method("Tensor.geqrf", lambda x: x.geqrf(), (S((3, 2)),), orders=(), records=("geqrf",)),
    _lin(
        "householder_product",
        lambda m, x, tau: m.linalg.householder_product(x, tau),
        (S((3, 3), (3,)), S((4, 2), (2,)), S((4, 3), (1,)), S((2, 3, 2), (2, 2))),
        records=("mm", "matmul"),
        grad_fn=False, domain=SMALL,
    ),
    op("orgqr", (S((3, 2), (2,)),), records=("mm",), grad_fn=False, domain=SMALL),
    method("Tensor.orgqr", lambda x, tau: x.orgqr(tau), (S((3, 3), (2,)),), records=("mm",),
           grad_fn=False, domain=SMALL),
    op("ormqr", (S((3, 2), (2,), (3, 2)), S((2, 3, 3), (2, 3), (2, 3, 1))), records=("mm",),
       grad_fn=False, domain=SMALL),
    *[
        _row(
            "ormqr",
            lambda m, x, tau, c, left=left, transpose=transpose: m.ormqr(x, tau, c, left,
                                                                         transpose),
            (S((3, 2), (2,), (3, 2) if left else (2, 3)),),
            f"left={left},transpose={transpose}",
            records=("mm",),
            grad_fn=False, domain=SMALL,
        )
        for left, transpose in ((True, True), (False, False), (False, True))
    ],
    method("Tensor.ormqr", lambda x, tau, c: x.ormqr(tau, c, transpose=True),
           (S((3, 3), (3,), (3, 1)),), records=("mm",), grad_fn=False, domain=SMALL),
]

# With q = min(m, n) the randomized range is the whole column space: the result is the exact SVD
# whatever the draws (compared through sign-free functions of it); draws are seeded per call.
RANDOM_IN_VMAP = "vmap: called random operation while in randomness error mode"
LOWRANK = [
    OpRow(
        "svd_lowrank",
        lambda m, x: _seeded(m, lambda: _svd_invariants(
            m, _as_vh(m.svd_lowrank(_distinct(m, x), q=min(x.shape[-2:]))))),
        (S((4, 3)), S((2, 4)), S((2, 3, 2))),
        records=("linalg_qr", "linalg_svd"),
        grad_fn=False,
        vmap_error=RANDOM_IN_VMAP,
    ),
    OpRow(
        "svd_lowrank",
        lambda m, x, mean: _seeded(m, lambda: _svd_invariants(
            m, _as_vh(m.svd_lowrank(_distinct(m, x), q=3, niter=1, M=mean)))),
        (S((4, 3), (1, 3)),),
        variant="M,niter",
        records=("linalg_qr", "linalg_svd"),
        grad_fn=False,
        vmap_error=RANDOM_IN_VMAP,
    ),
    OpRow(
        "pca_lowrank",
        lambda m, x: _seeded(m, lambda: _svd_invariants(
            m, _as_vh(m.pca_lowrank(_distinct(m, x), q=3)))),
        (S((5, 3)),),
        records=("linalg_qr", "linalg_svd"),
        grad_fn=False,
        vmap_error=RANDOM_IN_VMAP,
    ),
    OpRow(
        "pca_lowrank",
        lambda m, x: _seeded(m, lambda: _svd_invariants(
            m, _as_vh(m.pca_lowrank(_distinct(m, x), center=False)))),
        (S((3, 4)),),
        variant="center=False",
        records=("linalg_qr", "linalg_svd"),
        grad_fn=False,
        vmap_error=RANDOM_IN_VMAP,
    ),
]


def _seeded(m, fn):
    m.manual_seed(0)
    return fn()


def _as_vh(usv):
    U, S, V = usv
    return U, S, V.mT


def _factor(m, x):
    """A lower-triangular factor with a diagonal well away from zero."""
    n = x.shape[-1]
    return x.tril() + 3 * m.eye(n, dtype=x.dtype)


def _scale_diagonal(x):
    y = x * 1
    y.diagonal(0, -2, -1).mul_(2)
    return y


def _eigh_invariants(m, result):
    L, V = result
    return L, V * V, (V * L.unsqueeze(-2)) @ V.mT


def _real_spectrum(m, x):
    """x made small next to a diagonal: distinct, well separated real eigenvalues."""
    n = x.shape[-1]
    return 0.3 * x + m.diag(m.arange(1, n + 1, dtype=x.dtype) * 1.5)


def _complex_spectrum(m, x):
    """x made small next to a rotation block: a well separated complex conjugate pair."""
    return 0.3 * x + m.tensor([[0.0, 2.0, 0.0], [-2.0, 0.0, 0.0], [0.0, 0.0, 3.0]], dtype=x.dtype)


def _eig_invariants(m, result):
    """What does not depend on the phases of the eigenvectors: L, |V|^2 and V diag(L) V^H."""
    L, V = result
    return (m.view_as_real(L), V.abs() ** 2,
            m.view_as_real((V * L.unsqueeze(-2)) @ V.mT.conj()))


def _svd_invariants(m, result):
    U, S, Vh = result
    k = S.shape[-1]
    U, Vh = U[..., :k], Vh[..., :k, :]
    return S, U * U, Vh * Vh, U @ Vh


ROWS = [
    op("matmul", MATMUL, records=MATMUL_RECORDS),
    method(
        "Tensor.__matmul__", lambda x, y: x @ y, MATMUL[:4] + MATMUL[5:6], records=MATMUL_RECORDS
    ),
    # Reached when the left operand is not a tensor; called directly here.
    method(
        "Tensor.__rmatmul__", lambda x, y: y.__rmatmul__(x), MATMUL[:4], records=MATMUL_RECORDS[:4]
    ),
    op("mm", (S((2, 3), (3, 4)), S((1, 3), (3, 1)), S((4, 1), (1, 2)))),
    *PRODUCTS,
    *ADD_PRODUCTS,
    *EINSUM,
    *DIAGONALS,
    *LINALG,
    *SOLVERS,
    *LU_ROWS,
    *EX_ROWS,
    *HOUSEHOLDER,
    *LDL_ROWS,
    *LOWRANK,
]
