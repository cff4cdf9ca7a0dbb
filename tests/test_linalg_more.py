"""Linear algebra beyond the op_db rows: PyTorch's errors and deprecation warnings, its gradient
conventions where they are not the function's, and forward mode where PyTorch has none or a wrong
one (checked against torch's reverse mode, which is right)."""

from __future__ import annotations

import json
import subprocess
import sys
import warnings
from pathlib import Path

import numpy as np
import pytest
import torch

import chainrule as cr
from chainrule.autograd import forward_ad as fw
from chainrule.autograd.gradcheck import gradcheck, gradgradcheck
from chainrule.ops import linalg as ops_linalg

RNG = np.random.default_rng(11)
SQ = RNG.standard_normal((3, 3)) + 3 * np.eye(3)
TRI = np.triu(SQ)
SING = np.array([[1.0, 2.0, 3.0], [2.0, 4.0, 6.0], [1.0, 0.0, 1.0]])
NOT_PD = np.array([[1.0, 2.0], [2.0, 1.0]])


def _t(m, a):
    return m.tensor(np.array(a))


ERRORS = {
    "solve_triangular 1-D A": lambda m: m.linalg.solve_triangular(_t(m, [1.0, 2.0]), _t(m, SQ),
                                                                  upper=True),
    "solve_triangular 1-D B": lambda m: m.linalg.solve_triangular(_t(m, SQ), _t(m, SQ[0]),
                                                                  upper=True),
    "solve_triangular shapes": lambda m: m.linalg.solve_triangular(_t(m, SQ), _t(m, SQ[:2]),
                                                                   upper=True),
    "solve_triangular right": lambda m: m.linalg.solve_triangular(
        _t(m, SQ), _t(m, SQ[:, :2]), upper=True, left=False),
    "solve_triangular not square": lambda m: m.linalg.solve_triangular(
        _t(m, SQ[:2]), _t(m, SQ), upper=True),
    "solve_triangular batch": lambda m: m.linalg.solve_triangular(
        m.ones(2, 3, 3), m.ones(4, 3, 1), upper=True),
    "solve_triangular integers": lambda m: m.linalg.solve_triangular(
        m.ones(3, 3, dtype=m.int64), m.ones(3, 1, dtype=m.int64), upper=True),
    "triangular_solve 1-D b": lambda m: m.triangular_solve(_t(m, SQ[0]), _t(m, TRI)),
    "triangular_solve shapes": lambda m: m.triangular_solve(_t(m, SQ[:2]), _t(m, TRI)),
    "cholesky_solve 1-D": lambda m: m.cholesky_solve(_t(m, SQ[0]), _t(m, TRI)),
    "cholesky_solve shapes": lambda m: m.cholesky_solve(_t(m, SQ[:2]), _t(m, TRI)),
    "cholesky_inverse 1-D": lambda m: m.cholesky_inverse(_t(m, SQ[0])),
    "cholesky_inverse not square": lambda m: m.cholesky_inverse(_t(m, SQ[:2])),
    "lu_factor 1-D": lambda m: m.linalg.lu_factor(_t(m, SQ[0])),
    "lu_factor no pivot": lambda m: m.linalg.lu_factor(_t(m, SQ), pivot=False),
    "lu_factor singular": lambda m: m.linalg.lu_factor(_t(m, SING)),
    "lu_factor singular batch": lambda m: m.linalg.lu_factor(_t(m, [SQ, SING])),
    "lu_factor_ex check_errors": lambda m: m.linalg.lu_factor_ex(_t(m, [SQ, SING]),
                                                                 check_errors=True),
    "lu_solve shapes": lambda m: m.linalg.lu_solve(*m.linalg.lu_factor(_t(m, SQ)),
                                                   _t(m, SQ[:2])),
    "inv_ex check_errors": lambda m: m.linalg.inv_ex(_t(m, [SQ, SING]), check_errors=True),
    "solve_ex check_errors": lambda m: m.linalg.solve_ex(_t(m, SING), _t(m, SQ),
                                                         check_errors=True),
    "cholesky_ex check_errors": lambda m: m.linalg.cholesky_ex(_t(m, NOT_PD), check_errors=True),
    "cholesky_ex batch": lambda m: m.linalg.cholesky_ex(_t(m, [np.eye(2), NOT_PD]),
                                                        check_errors=True),
    "cond 1-D": lambda m: m.linalg.cond(_t(m, SQ[0])),
    "cond norm": lambda m: m.linalg.cond(_t(m, SQ), "bad"),
    "cond order 3": lambda m: m.linalg.cond(_t(m, SQ), 3),
    "cond fro not square": lambda m: m.linalg.cond(_t(m, SQ[:2]), "fro"),
    "matrix_rank 1-D": lambda m: m.linalg.matrix_rank(_t(m, SQ[0])),
    "tensorinv ind": lambda m: m.linalg.tensorinv(m.ones(4, 6, 8, 3), ind=0),
    "tensorinv shape": lambda m: m.linalg.tensorinv(m.ones(4, 6, 8, 3), ind=1),
    "tensorsolve shape": lambda m: m.linalg.tensorsolve(m.ones(2, 3, 6), m.ones(3, 3)),
    "vander N": lambda m: m.linalg.vander(m.tensor(1.0)),
    "householder_product 1-D": lambda m: m.linalg.householder_product(m.ones(3), m.ones(1)),
    "householder_product wide": lambda m: m.linalg.householder_product(m.ones(2, 3), m.ones(1)),
    "householder_product tau": lambda m: m.linalg.householder_product(m.ones(3, 2), m.ones(3)),
    "householder_product tau dims": lambda m: m.linalg.householder_product(m.ones(3, 2),
                                                                           m.ones(1, 1)),
    "householder_product batch": lambda m: m.linalg.householder_product(m.ones(2, 3, 2),
                                                                        m.ones(3, 1)),
    "ormqr 1-D other": lambda m: m.ormqr(m.ones(3, 2), m.ones(2), m.ones(3)),
    "ormqr tau": lambda m: m.ormqr(m.ones(3, 2), m.ones(3), m.ones(3, 3)),
    "ormqr rows": lambda m: m.ormqr(m.ones(3, 2), m.ones(2), m.ones(2, 3)),
    "ormqr right": lambda m: m.ormqr(m.ones(3, 2), m.ones(2), m.ones(3, 2), left=False),
    "geqrf 1-D": lambda m: m.geqrf(m.ones(3)),
    "pca_lowrank q": lambda m: m.pca_lowrank(m.ones(3, 4), q=5),
    "addmv shapes": lambda m: m.addmv(m.ones(3), m.ones(2, 3), m.ones(3)),
    "addmv dims": lambda m: m.addmv(m.ones(2, 2), m.ones(2, 3), m.ones(3)),
    "addmv dtypes": lambda m: m.addmv(m.ones(2, dtype=m.int64), m.ones(2, 3), m.ones(3)),
    "addmv_ size": lambda m: m.ones(1).addmv_(m.ones(2, 3), m.ones(3)),
    "addr vec1": lambda m: m.addr(m.ones(2, 2), m.ones(3, 1), m.ones(2)),
    "addr_ size": lambda m: m.ones(2, 1).addr_(m.ones(2), m.ones(3)),
    "addbmm batches": lambda m: m.addbmm(m.ones(3, 3), m.ones(2, 3, 2), m.ones(3, 2, 3)),
    "addbmm sizes": lambda m: m.addbmm(m.ones(3, 3), m.ones(2, 3, 2), m.ones(2, 3, 3)),
    "inner": lambda m: m.inner(m.ones(2, 3), m.ones(2)),
    "adjoint 1-D": lambda m: m.adjoint(m.ones(3)),
    "dist p": lambda m: m.dist(m.ones(2), m.ones(2), p="fro"),
    "chain_matmul none": lambda m: m.chain_matmul(),
    "chain_matmul 1-D": lambda m: m.chain_matmul(m.ones(2), m.ones(2, 2)),
    "matrix_power": lambda m: m.matrix_power(m.ones(2, 3), 2),
    "eig 1-D": lambda m: m.linalg.eig(_t(m, SQ[0])),
    "eig not square": lambda m: m.linalg.eig(_t(m, SQ[:2])),
    "eig integers": lambda m: m.linalg.eig(m.ones(3, dtype=m.int64)),
    "eig half": lambda m: m.linalg.eig(m.ones(2, 2, dtype=m.float16)),
    "eig nan": lambda m: m.linalg.eig(_t(m, [[1.0, np.nan], [0.0, 1.0]])),
    "eigvals bool": lambda m: m.linalg.eigvals(m.ones(2, 2, dtype=m.bool)),
    "eigvals not square": lambda m: m.linalg.eigvals(_t(m, SQ[:2])),
    "ldl_factor 1-D": lambda m: m.linalg.ldl_factor(_t(m, SQ[0])),
    "ldl_factor not square": lambda m: m.linalg.ldl_factor(_t(m, SQ[:2])),
    "ldl_factor integers": lambda m: m.linalg.ldl_factor(m.ones(2, 2, dtype=m.int64)),
    "ldl_solve dtype": lambda m: m.linalg.ldl_solve(*m.linalg.ldl_factor(_t(m, SQ + SQ.T)),
                                                    m.ones(3)),
    "ldl_solve 1-D B": lambda m: m.linalg.ldl_solve(*m.linalg.ldl_factor(_t(m, SQ + SQ.T)),
                                                    _t(m, SQ[0])),
    "ldl_solve rows": lambda m: m.linalg.ldl_solve(*m.linalg.ldl_factor(_t(m, SQ + SQ.T)),
                                                   _t(m, SQ[:2])),
    "ldl_solve pivots": lambda m: m.linalg.ldl_solve(m.linalg.ldl_factor(_t(m, SQ + SQ.T))[0],
                                                     m.ones(2, dtype=m.int32), _t(m, SQ)),
    "ldl_solve batch": lambda m: m.linalg.ldl_solve(
        *m.linalg.ldl_factor(_t(m, [SQ + SQ.T] * 2)), _t(m, [SQ] * 3)),
    "eig phase-dependent loss": lambda m: m.linalg.eig(
        m.tensor(SQ + 1j * SQ.T, requires_grad=True))[1].sum().abs().backward(),
}


def _raised(call, lib):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with pytest.raises(Exception) as info:
            call(lib)
    return info.value


@pytest.mark.parametrize("name", list(ERRORS))
def test_errors_match_torch(name):
    ours, theirs = _raised(ERRORS[name], cr), _raised(ERRORS[name], torch)
    # torch's LinAlgError class is torch._C._LinAlgError
    assert type(ours).__name__ == type(theirs).__name__.lstrip("_")
    assert isinstance(ours, RuntimeError) == isinstance(theirs, RuntimeError)
    assert str(ours) == str(theirs)


DEPRECATED = {
    "cholesky": lambda m: m.cholesky(_t(m, SQ @ SQ.T)),
    "qr": lambda m: m.qr(_t(m, SQ)),
    "chain_matmul": lambda m: m.chain_matmul(_t(m, SQ), _t(m, SQ)),
    "lu": lambda m: m.lu(_t(m, SQ)),
    "lu_solve": lambda m: m.lu_solve(_t(m, SQ), *m.linalg.lu_factor(_t(m, SQ))),
    "triangular_solve": lambda m: m.triangular_solve(_t(m, SQ), _t(m, TRI)),
    "adjoint of a scalar": lambda m: m.adjoint(m.tensor(2.0)),
}


_TORCH_WARNINGS = """
import json, sys, warnings
import numpy as np, torch
sys.path.insert(0, "tests")
from test_linalg_more import DEPRECATED
found = {}
for name, call in DEPRECATED.items():
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        call(torch)
    found[name] = [str(w.message) for w in caught if w.category is UserWarning]
print(json.dumps(found))
"""


@pytest.fixture(scope="module")
def torch_warnings() -> dict:
    """PyTorch's messages, from a fresh process (it warns once per process, and other tests
    have called these already)."""
    run = subprocess.run([sys.executable, "-c", _TORCH_WARNINGS], capture_output=True,
                         text=True, check=True, cwd=Path(__file__).parent.parent)
    return json.loads(run.stdout.splitlines()[-1])


@pytest.mark.parametrize("name", list(DEPRECATED))
def test_deprecation_warnings_are_torchs_once(name, torch_warnings):
    ops_linalg._WARNED.clear()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        DEPRECATED[name](cr)
    ours = [str(w.message) for w in caught if w.category is UserWarning]
    (theirs,) = torch_warnings[name]
    assert len(ours) == 1
    assert theirs.startswith(ours[0] + " (Triggered internally")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        DEPRECATED[name](cr)
    assert not caught  # once per process, as PyTorch's TORCH_WARN_ONCE


def _grads(lib, fn, arrays):
    xs = [lib.tensor(a, requires_grad=True) for a in arrays]
    out = fn(lib, *xs)
    seed = lib.tensor(np.linspace(-1.0, 1.0, out.numel()).reshape(tuple(out.shape)))
    return out, lib.autograd.grad(out, xs, seed)


FULL_FACTOR = {
    "cholesky_solve": lambda m, b, L: m.cholesky_solve(b, L),
    "cholesky_solve upper": lambda m, b, L: m.cholesky_solve(b, L, upper=True),
    "cholesky_inverse": lambda m, b, L: m.cholesky_inverse(L) @ b,
    "cholesky_inverse upper": lambda m, b, L: m.cholesky_inverse(L, upper=True) @ b,
}


@pytest.mark.parametrize("name", list(FULL_FACTOR))
def test_factor_gradient_convention_is_torchs(name):
    """A factor with values in its other triangle: the result ignores them, and PyTorch's
    gradient still differentiates L L^T with respect to all of L."""
    arrays = [RNG.standard_normal((3, 2)), SQ]
    ours, theirs = _grads(cr, FULL_FACTOR[name], arrays), _grads(torch, FULL_FACTOR[name], arrays)
    np.testing.assert_allclose(ours[0].detach().numpy(), theirs[0].detach().numpy(), rtol=1e-12)
    for g, h in zip(ours[1], theirs[1]):
        np.testing.assert_allclose(g.numpy(), h.numpy(), rtol=1e-10, atol=1e-12)


NO_TORCH_FORWARD = {  # torch's forward mode is missing or wrong here; its reverse mode is right
    "triangular_solve transpose": (
        lambda m, b, a: m.triangular_solve(b, a.tril(), upper=False, transpose=True)[0],
        [(3, 2), SQ]),
    "triangular_solve": (lambda m, b, a: m.triangular_solve(b, a)[0], [(3, 2), SQ]),
    "cholesky_inverse": (lambda m, L: m.cholesky_inverse(L.tril()), [SQ]),
    "cholesky": (lambda m, x: m.cholesky(x @ x.mT + m.eye(3, dtype=x.dtype)), [SQ]),
    "ormqr": (lambda m, x, tau, c: m.ormqr(x, tau, c, transpose=True),
              [(3, 2), (2,), (3, 2)]),
}


@pytest.mark.parametrize("name", list(NO_TORCH_FORWARD))
def test_forward_mode_against_torch_reverse_mode(name):
    fn, shapes = NO_TORCH_FORWARD[name]
    primals = [RNG.standard_normal(s) if isinstance(s, tuple) else s for s in shapes]
    tangents = [RNG.standard_normal(np.shape(p)) for p in primals]
    with fw.dual_level():
        duals = [fw.make_dual(cr.tensor(p), cr.tensor(t)) for p, t in zip(primals, tangents)]
        ours = fw.unpack_dual(fn(cr, *duals)).tangent.numpy()
    _, theirs = torch.autograd.functional.jvp(
        lambda *xs: fn(torch, *xs), tuple(torch.tensor(p) for p in primals),
        tuple(torch.tensor(t) for t in tangents))
    np.testing.assert_allclose(ours, theirs.numpy(), rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("p", ["fro", "nuc", 1, -1, float("inf"), -float("inf")])
def test_cond_gradients(p):
    """PyTorch cannot differentiate these norms of cond (it overwrites a saved inverse): ours
    against finite differences, to the second order, and against norm(A) * norm(inv(A))."""
    A = cr.tensor(SQ, requires_grad=True)
    assert gradcheck(lambda a: cr.linalg.cond(a, p), (A,))
    assert gradgradcheck(lambda a: cr.linalg.cond(a, p), (A,))
    B = torch.tensor(SQ, requires_grad=True)
    want = torch.linalg.matrix_norm(B, p) * torch.linalg.matrix_norm(torch.linalg.inv(B), p)
    (grad,) = cr.autograd.grad(cr.linalg.cond(A, p), A)
    np.testing.assert_allclose(grad.numpy(), torch.autograd.grad(want, B)[0].numpy(), rtol=1e-10)


def test_lu_under_vmap_pivots_per_example():
    """Each example of a batch pivots its own way (and its own singular pivot)."""
    examples = np.stack([SQ, SQ[::-1].copy(), SING])
    got = cr.func.vmap(cr.linalg.lu_factor_ex)(cr.tensor(examples))
    want = torch.linalg.lu_factor_ex(torch.tensor(examples))
    for g, w in zip(got, want):
        np.testing.assert_allclose(g.numpy(), w.numpy(), rtol=1e-12)


def test_singular_solves_give_torchs_inf_and_nan():
    for lib in (cr, torch):
        inverse, info = lib.linalg.inv_ex(_t(lib, SING))
        assert int(info) == 3
    np.testing.assert_array_equal(cr.linalg.inv_ex(_t(cr, SING))[0].numpy(),
                                  torch.linalg.inv_ex(_t(torch, SING))[0].numpy())
    np.testing.assert_array_equal(cr.linalg.solve_ex(_t(cr, SING), _t(cr, SQ[0]))[0].numpy(),
                                  torch.linalg.solve_ex(_t(torch, SING), _t(torch, SQ[0]))[0]
                                  .numpy())


def test_svd_lowrank_finds_a_low_rank_matrix():
    """For rank r <= q the randomized SVD is exact: torch's singular values and A itself."""
    A = RNG.standard_normal((7, 2)) @ RNG.standard_normal((2, 5))
    cr.manual_seed(3)
    U, S, V = cr.svd_lowrank(cr.tensor(A), q=4)
    np.testing.assert_allclose(S.numpy()[:2], torch.linalg.svdvals(torch.tensor(A)).numpy()[:2],
                               rtol=1e-12)
    np.testing.assert_allclose(((U * S) @ V.mT).numpy(), A, atol=1e-12)
    assert U.shape == (7, 4) and V.shape == (5, 4)


def test_matrix_rank_with_tensor_tolerances():
    batch = np.stack([SQ, SING])
    for atol in ([0.1, 5.0], [0.0, 0.0]):
        got = cr.linalg.matrix_rank(cr.tensor(batch), atol=cr.tensor(atol))
        want = torch.linalg.matrix_rank(torch.tensor(batch), atol=torch.tensor(atol))
        np.testing.assert_array_equal(got.numpy(), want.numpy())


EIG_INPUTS = {
    "real": RNG.standard_normal((2, 4, 4)),
    "complex": RNG.standard_normal((2, 4, 4)) + 1j * RNG.standard_normal((2, 4, 4)),
}


def _eig_loss(m, A):
    """A loss that does not depend on the phases of the eigenvectors."""
    L, V = m.linalg.eig(A)
    W = (V * L.unsqueeze(-2)) @ V.mT.conj()
    return L.abs().sum() + (V.abs() ** 3).sum() + (W.real * W.imag).sum()


@pytest.mark.parametrize("kind", list(EIG_INPUTS))
def test_eig_values_and_gradients_match_torch(kind):
    A = EIG_INPUTS[kind]
    ours, theirs = cr.tensor(A, requires_grad=True), torch.tensor(A, requires_grad=True)
    (L, V), (L_t, V_t) = cr.linalg.eig(ours), torch.linalg.eig(theirs)
    assert (L.dtype, V.dtype) == (cr.complex128, cr.complex128)
    np.testing.assert_allclose(L.detach().numpy(), L_t.detach().numpy(), atol=1e-12)
    # unit columns, equal to torch's up to the phase LAPACK builds may choose differently
    V, V_t = V.detach().numpy(), V_t.detach().numpy()
    np.testing.assert_allclose(np.linalg.norm(V, axis=-2), 1, atol=1e-12)
    phase = (V.conj() * V_t).sum(-2, keepdims=True)
    np.testing.assert_allclose(np.abs(phase), 1, atol=1e-12)
    np.testing.assert_allclose(V * phase, V_t, atol=1e-12)
    np.testing.assert_allclose(cr.linalg.eigvals(ours).detach().numpy(),
                               torch.linalg.eigvals(theirs).detach().numpy(), atol=1e-12)
    g = cr.autograd.grad(_eig_loss(cr, ours), ours)[0]
    expected = torch.autograd.grad(_eig_loss(torch, theirs), theirs)[0]
    assert g.dtype == ours.dtype
    np.testing.assert_allclose(g.numpy(), expected.numpy(), atol=1e-10)
    g = cr.autograd.grad(cr.linalg.eigvals(ours).imag.sum(), ours)[0]
    expected = torch.autograd.grad(torch.linalg.eigvals(theirs).imag.sum(), theirs)[0]
    np.testing.assert_allclose(g.numpy(), expected.numpy(), atol=1e-10)
    assert gradcheck(lambda x: _eig_loss(cr, x), (ours,))
    assert gradgradcheck(lambda x: _eig_loss(cr, x), (ours,))


def test_eig_of_float32_is_complex64_and_grad_fn_is_torchs():
    L, V = cr.linalg.eig(cr.tensor(SQ, dtype=cr.float32, requires_grad=True))
    assert (L.dtype, V.dtype) == (cr.complex64, cr.complex64)
    assert L.grad_fn.name() == V.grad_fn.name() == "LinalgEigBackward0"
    assert repr(cr.linalg.eig(cr.eye(2))) == repr(torch.linalg.eig(torch.eye(2)))


def _ldl_cases():
    """Symmetric, complex symmetric and Hermitian matrices, some with zero diagonals (2x2
    pivots) or zero rows (a zero block of D: info > 0)."""
    rng = np.random.default_rng(5)
    for trial in range(60):
        n = 1 + trial % 6
        A = rng.standard_normal((n, n))
        kind = trial % 3
        if kind:
            A = A + 1j * rng.standard_normal((n, n))
        if trial % 5 == 0:
            A[trial % n] = 0
        A = A + (A.conj().T if kind == 2 else A.T)
        if trial % 4 == 0:
            np.fill_diagonal(A, 0)
        yield A, kind == 2, rng.standard_normal((n, 2)) + (1j if kind else 0)


def test_ldl_factor_and_solve_are_lapacks():
    for A, hermitian, B in _ldl_cases():
        ours = cr.linalg.ldl_factor_ex(cr.tensor(A), hermitian=hermitian)
        theirs = torch.linalg.ldl_factor_ex(torch.tensor(A), hermitian=hermitian)
        for a, b in zip(ours, theirs):
            assert a.dtype == getattr(cr, str(b.dtype).split(".")[1])
            np.testing.assert_allclose(a.numpy(), b.numpy(), atol=1e-12)
        if int(theirs.info) == 0:
            X = cr.linalg.ldl_solve(ours.LD, ours.pivots, cr.tensor(B), hermitian=hermitian)
            np.testing.assert_allclose(A @ X.numpy(), B, atol=1e-9)
            expected = torch.linalg.ldl_solve(theirs.LD, theirs.pivots, torch.tensor(B),
                                              hermitian=hermitian)
            np.testing.assert_allclose(X.numpy(), expected.numpy(), rtol=1e-10, atol=1e-10)


def test_ldl_singular_and_derivatives_raise_as_torch():
    zero = np.zeros((2, 2))
    for m in (cr, torch):
        assert int(m.linalg.ldl_factor_ex(m.tensor(zero)).info) == 1
        with pytest.raises(RuntimeError, match=r"torch\.linalg\.ldl_factor: Unknown error code: 1"):
            m.linalg.ldl_factor(m.tensor(zero))
        A = m.tensor(SQ + SQ.T, requires_grad=True)
        with pytest.raises(RuntimeError, match="derivative for .*linalg_ldl_factor_ex.* is not "
                                               "implemented"):
            m.linalg.ldl_factor(A)[0].sum().backward()
        LD, pivots = m.linalg.ldl_factor(A.detach())
        B = m.tensor(SQ, requires_grad=True)
        with pytest.raises(RuntimeError, match="derivative for .*linalg_ldl_solve.* is not "
                                               "implemented"):
            m.linalg.ldl_solve(LD, pivots, B).sum().backward()


def test_ldl_solve_broadcasts_a_larger_batch_of_B():
    A = np.stack([SQ + SQ.T, SQ @ SQ.T])
    B = RNG.standard_normal((2, 1, 3, 2))
    X = cr.linalg.ldl_solve(*cr.linalg.ldl_factor(cr.tensor(A)), cr.tensor(B))
    assert X.shape == (2, 2, 3, 2)
    np.testing.assert_allclose(A @ X.numpy(), np.broadcast_to(B, (2, 2, 3, 2)), atol=1e-10)
