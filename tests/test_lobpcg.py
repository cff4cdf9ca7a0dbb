"""torch.lobpcg: the extreme eigenpairs against PyTorch's iterative solver (values to its
tolerance, eigenvectors up to sign), its argument checks in its words, and gradients: PyTorch's
for B=None (it treats A as symmetric), gradcheck and gradgradcheck with and without B."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import chainrule as cr
from chainrule.autograd.gradcheck import gradcheck, gradgradcheck

RNG = np.random.default_rng(5)


def _sym(*shape):
    a = RNG.standard_normal(shape)
    return a + np.swapaxes(a, -1, -2) + shape[-1] * np.eye(shape[-1])


def _spd(*shape):
    a = RNG.standard_normal(shape)
    return a @ np.swapaxes(a, -1, -2) + np.eye(shape[-1])


A9, B9 = _sym(9, 9), _spd(9, 9)
A_BATCH, B_BATCH = _sym(2, 3, 9, 9), _spd(2, 3, 9, 9)


def _both(fn, *arrays, **kw):
    """fn's lobpcg on torch (seeded: its start is random) and on chainrule, as NumPy arrays."""
    torch.manual_seed(0)
    out = []
    for lib in (torch, cr):
        args = [lib.tensor(a) if isinstance(a, np.ndarray) else a for a in arrays]
        E, X = fn(lib, *args, **kw)
        out.append((E.detach().numpy(), X.detach().numpy()))
    return out


def _close(theirs, ours, tol=1e-9, vector_tol=1e-6):
    (E1, X1), (E2, X2) = theirs, ours
    assert E1.shape == E2.shape and X1.shape == X2.shape
    np.testing.assert_allclose(E2, E1, rtol=tol, atol=tol)
    np.testing.assert_allclose(np.abs(X2), np.abs(X1), atol=vector_tol)


@pytest.mark.parametrize("kw", [
    {}, {"k": 2}, {"k": 3}, {"k": 3, "largest": False}, {"k": 2, "largest": True},
    {"k": 3, "n": 2}, {"k": 1, "n": 3}, {"n": 2}, {"k": 2, "niter": 50, "method": "basic"},
    {"k": 2, "tol": 1e-12, "ortho_iparams": {}, "ortho_fparams": {}, "ortho_bparams": {}},
], ids=str)
def test_values(kw):
    _close(*_both(lambda m, A: m.lobpcg(A, **kw), A9))


@pytest.mark.parametrize("largest", [True, False])
def test_generalized(largest):
    theirs, ours = _both(lambda m, A, B: m.lobpcg(A, k=2, B=B, largest=largest), A9, B9)
    _close(theirs, ours)
    X = ours[1]
    np.testing.assert_allclose(X.T @ B9 @ X, np.eye(2), atol=1e-12)  # B-orthonormal, as torch's


@pytest.mark.parametrize("with_b", [False, True])
def test_batched(with_b):
    B = B_BATCH if with_b else None
    theirs, ours = _both(lambda m, A, B: m.lobpcg(A, k=2, B=B), A_BATCH, B)
    assert ours[0].shape == (2, 3, 2) and ours[1].shape == (2, 3, 9, 2)
    _close(theirs, ours)


def test_initial_x_sets_the_count():
    X0 = RNG.standard_normal((9, 2))
    _close(*_both(lambda m, A, X: m.lobpcg(A, X=X), A9, X0))
    _close(*_both(lambda m, A, X: m.lobpcg(A, k=3, X=X), A9, X0))
    _close(*_both(lambda m, A, X: m.lobpcg(A, X=X), A_BATCH, RNG.standard_normal((6, 9, 2))))


def test_float32():
    """PyTorch stops at a residual of float32's eps ** 0.5; the dense solve is exact."""
    theirs, ours = _both(lambda m, A: m.lobpcg(A.float(), k=2), A9)
    assert ours[0].dtype == np.float32 and ours[1].dtype == np.float32
    _close(theirs, ours, tol=1e-4, vector_tol=3e-3)
    exact = _both(lambda m, A: m.lobpcg(A, k=2), A9)[1]
    _close(exact, ours, tol=1e-5, vector_tol=1e-5)


def test_symmetric_part_when_grad_is_required():
    """PyTorch solves for (A + A^T) / 2 when A requires grad; chainrule always does."""
    A = RNG.standard_normal((9, 9)) + 9 * np.eye(9)
    _close(*_both(lambda m, A: m.lobpcg(A.requires_grad_(), k=2), A))


def _m(lib, a):
    return lib.tensor(a) if isinstance(a, np.ndarray) else a


def _r(*shape):
    return RNG.standard_normal(shape)


ERRORS = {
    "1-D": (lambda m: m.lobpcg(_m(m, _r(9)))),
    "0-D": (lambda m: m.lobpcg(m.tensor(2.0))),
    "not square": (lambda m: m.lobpcg(_m(m, _r(9, 8)), B=_m(m, _r(3, 3)))),
    "batch not square": (lambda m: m.lobpcg(_m(m, _r(2, 9, 8)))),
    "B shape": (lambda m: m.lobpcg(_m(m, A9), B=_m(m, _r(3, 3)), k=4)),
    "B not batched": (lambda m: m.lobpcg(_m(m, A_BATCH), B=_m(m, B9))),
    "k too large": (lambda m: m.lobpcg(_m(m, A9), k=4)),
    "X too wide": (lambda m: m.lobpcg(_m(m, A9), k=1, X=_m(m, _r(9, 4)))),
    "X 1-D": (lambda m: m.lobpcg(_m(m, A9), X=_m(m, _r(9)))),
    "2 rows": (lambda m: m.lobpcg(_m(m, _sym(2, 2)))),
    "X rows": (lambda m: m.lobpcg(_m(m, A9), X=_m(m, _r(8, 2)))),
    "X batched for one matrix": (lambda m: m.lobpcg(_m(m, A9), X=_m(m, _r(2, 9, 2)))),
    "X batch size": (lambda m: m.lobpcg(_m(m, A_BATCH), X=_m(m, _r(3, 9, 2)))),
    "X no columns, wrong rows": (lambda m: m.lobpcg(_m(m, A9), X=_m(m, _r(8, 0)))),
    "k=0": (lambda m: m.lobpcg(_m(m, A9), k=0)),
    "n=0": (lambda m: m.lobpcg(_m(m, A9), n=0)),
    "X no columns": (lambda m: m.lobpcg(_m(m, A9), X=_m(m, _r(9, 0)))),
    "k<0": (lambda m: m.lobpcg(_m(m, A9), k=-2)),
    "k<0 batched": (lambda m: m.lobpcg(_m(m, A_BATCH), k=-1)),
    "n float": (lambda m: m.lobpcg(_m(m, A9), n=2.0)),
    "integer A": (lambda m: m.lobpcg(m.ones(9, 9, dtype=m.int64))),
    "complex A": (lambda m: m.lobpcg(_m(m, A9).to(m.complex128))),
    "integer X": (lambda m: m.lobpcg(_m(m, A9), X=m.ones(9, 2, dtype=m.int64))),
    "X float32": (lambda m: m.lobpcg(_m(m, A9), X=_m(m, _r(9, 2)).float())),
    "A float32, X float64": (lambda m: m.lobpcg(_m(m, A9).float(), X=_m(m, _r(9, 2)))),
    "B float32": (lambda m: m.lobpcg(_m(m, A9), B=_m(m, B9).float())),
    "integer B": (lambda m: m.lobpcg(_m(m, A9), B=m.eye(9, dtype=m.int64))),
    "half": (lambda m: m.lobpcg(_m(m, A9).half(), k=4)),
    "half with tol": (lambda m: m.lobpcg(_m(m, A9).half(), tol=1e-3)),
    "list": (lambda m: m.lobpcg([[1.0, 0.0], [0.0, 1.0]])),
}


@pytest.mark.parametrize("name", list(ERRORS))
def test_errors(name):
    with pytest.raises(Exception) as theirs:
        ERRORS[name](torch)
    with pytest.raises(type(theirs.value)) as ours:
        ERRORS[name](cr)
    assert str(ours.value) == str(theirs.value)


def test_b_not_positive_definite():
    with pytest.raises(torch.linalg.LinAlgError, match="not positive-definite"):
        torch.lobpcg(torch.tensor(A9), B=-torch.tensor(B9))
    with pytest.raises(cr.linalg.LinAlgError, match="not positive-definite"):
        cr.lobpcg(cr.tensor(A9), B=-cr.tensor(B9))


W = RNG.standard_normal((9, 2))
LOSSES = {
    "E": lambda E, X: E.sum(),
    "weighted E": lambda E, X: (E * E.new_tensor([1.0, 3.0])).sum(),
    "X squared": lambda E, X: (X * X * X.new_tensor(W)).sum(),
    "projector": lambda E, X: ((X @ X.mT) * X.new_tensor(W @ W.T)).sum(),
}


@pytest.mark.parametrize("largest", [True, False])
@pytest.mark.parametrize("loss", list(LOSSES))
def test_gradient_is_torchs(loss, largest):
    A = RNG.standard_normal((9, 9)) + 9 * np.eye(9)  # not symmetric: both use A's symmetric part
    grads = []
    torch.manual_seed(0)
    for lib in (torch, cr):
        a = lib.tensor(A, requires_grad=True)
        LOSSES[loss](*lib.lobpcg(a, k=2, largest=largest)).backward()
        grads.append(a.grad.numpy())
    np.testing.assert_allclose(grads[1], grads[0], atol=1e-6)


def _scalar(loss, **kw):
    def f(S, *B):
        E, X = cr.lobpcg(S + S.mT, k=2, B=B[0] @ B[0].mT if B else None, **kw)
        return LOSSES[loss](E, X)
    return f


@pytest.mark.parametrize("loss", list(LOSSES))
def test_gradcheck(loss):
    S = cr.tensor(_sym(9, 9) / 2, requires_grad=True)
    assert gradcheck(_scalar(loss), (S,))
    assert gradgradcheck(_scalar(loss, largest=False), (S,))


@pytest.mark.parametrize("loss", ["weighted E", "projector"])
def test_gradcheck_generalized(loss):
    S = cr.tensor(_sym(9, 9) / 2, requires_grad=True)
    C = cr.tensor(np.linalg.cholesky(B9), requires_grad=True)
    assert gradcheck(_scalar(loss), (S, C))
    assert gradgradcheck(_scalar(loss), (S, C))


def test_gradcheck_batched():
    S = cr.tensor(_sym(2, 9, 9) / 2, requires_grad=True)
    assert gradcheck(lambda S: cr.lobpcg(S + S.mT, k=2)[0], (S,))
    assert gradgradcheck(lambda S: cr.lobpcg(S + S.mT, k=2)[0], (S,))


def test_negative_k_with_n_is_refused():
    """PyTorch returns a meaningless pair for k < 0 when n or X is given; chainrule refuses."""
    with pytest.raises(ValueError, match="k must be non-negative, got -1"):
        cr.lobpcg(cr.tensor(A9), k=-1, n=2)


@pytest.mark.parametrize("with_b", [False, True])
def test_complex_hermitian(with_b):
    """PyTorch's solver fails on complex input (given a complex X); the dense solve takes
    Hermitian A and B."""
    a, b = (RNG.standard_normal((2, 9, 9)) + 1j * RNG.standard_normal((2, 9, 9)) for _ in "ab")
    A = a + np.conj(np.swapaxes(a, -1, -2)) + 9 * np.eye(9)
    B = b @ np.conj(np.swapaxes(b, -1, -2)) + np.eye(9) if with_b else None
    X0 = cr.tensor(np.ones((2, 9, 2), complex))  # without X, PyTorch's dtype error (see ERRORS)
    E, X = cr.lobpcg(cr.tensor(A), B=None if B is None else cr.tensor(B), X=X0, largest=False)
    E, X = E.numpy(), X.numpy()
    BX = X if B is None else B @ X
    Linv = np.linalg.inv(np.linalg.cholesky(np.eye(9) if B is None else B))
    exact = np.linalg.eigvalsh(Linv @ A @ np.conj(np.swapaxes(Linv, -1, -2)))
    np.testing.assert_allclose(E, exact[..., :2], atol=1e-10)
    np.testing.assert_allclose(A @ X, BX * E[..., None, :], atol=1e-10)
    np.testing.assert_allclose(np.conj(np.swapaxes(X, -1, -2)) @ BX,
                               np.broadcast_to(np.eye(2), (2, 2, 2)), atol=1e-10)
