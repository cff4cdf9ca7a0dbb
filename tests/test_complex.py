"""Complex tensors: values, PyTorch's gradient convention (conjugate Wirtinger), forward mode,
gradcheck through view_as_real, and printing — each against torch."""

import numpy as np
import pytest
import torch

import chainrule as cr

RNG = np.random.default_rng(7)


def _complex(*shape, scale=1.0, shift=0.0):
    return (RNG.normal(size=shape) + 1j * RNG.normal(size=shape)) * scale + shift


def _both(array, requires_grad=True):
    return (cr.tensor(array, requires_grad=requires_grad),
            torch.tensor(array, requires_grad=requires_grad))


def _assert_close(c, t, tol=1e-10):
    np.testing.assert_allclose(c.detach().numpy(), t.detach().resolve_conj().numpy(), rtol=tol,
                               atol=tol)


def _check(fn_c, fn_t, arrays, tol=1e-10):
    """Values, then VJPs for a random (complex where the output is) upstream gradient."""
    pairs = [_both(a) for a in arrays]
    out_c = fn_c(*[p[0] for p in pairs])
    out_t = fn_t(*[p[1] for p in pairs])
    assert str(out_c.dtype) == str(out_t.dtype)
    _assert_close(out_c, out_t, tol)
    shape = tuple(out_t.shape)
    w = RNG.normal(size=shape) + (1j * RNG.normal(size=shape) if out_t.is_complex() else 0)
    grads_c = cr.autograd.grad(out_c, [p[0] for p in pairs], cr.tensor(w))
    grads_t = torch.autograd.grad(out_t, [p[1] for p in pairs], torch.tensor(w))
    for gc, gt in zip(grads_c, grads_t):
        assert str(gc.dtype) == str(gt.dtype)
        _assert_close(gc, gt, tol)


UNARY = {
    "exp": lambda m, z: m.exp(z), "log": lambda m, z: m.log(z), "sin": lambda m, z: m.sin(z),
    "cos": lambda m, z: m.cos(z), "tan": lambda m, z: m.tan(z), "tanh": lambda m, z: m.tanh(z),
    "sinh": lambda m, z: m.sinh(z), "cosh": lambda m, z: m.cosh(z),
    "sqrt": lambda m, z: m.sqrt(z), "rsqrt": lambda m, z: m.rsqrt(z),
    "reciprocal": lambda m, z: m.reciprocal(z), "neg": lambda m, z: -z,
    "square": lambda m, z: m.square(z), "pow2.5": lambda m, z: z ** 2.5,
    "pow_int": lambda m, z: z ** 3, "expm1": lambda m, z: m.expm1(z),
    "log1p": lambda m, z: m.log1p(z), "sigmoid": lambda m, z: m.sigmoid(z),
    "asin": lambda m, z: m.asin(z), "acos": lambda m, z: m.acos(z),
    "atan": lambda m, z: m.atan(z), "asinh": lambda m, z: m.asinh(z),
    "atanh": lambda m, z: m.atanh(z), "log2": lambda m, z: m.log2(z),
    "log10": lambda m, z: m.log10(z), "abs": lambda m, z: m.abs(z),
    "angle": lambda m, z: m.angle(z), "sgn": lambda m, z: m.sgn(z),
    "real": lambda m, z: m.real(z), "imag": lambda m, z: m.imag(z),
    "conj": lambda m, z: m.conj(z) * 1, "conj_physical": lambda m, z: m.conj_physical(z),
    "view_as_real": lambda m, z: m.view_as_real(z), "mul_conj": lambda m, z: z * z.conj(),
    "abs_sq": lambda m, z: z.abs() ** 2,
}


@pytest.mark.parametrize("name", list(UNARY))
def test_unary_values_and_gradients(name):
    fn = UNARY[name]
    z = _complex(3, 4, scale=0.5, shift=0.3 + 0.2j)
    _check(lambda x: fn(cr, x), lambda x: fn(torch, x), [z])


@pytest.mark.parametrize("name", ["exp", "sin", "abs", "angle", "sgn", "real", "imag", "conj",
                                  "mul_conj", "sqrt", "view_as_real"])
def test_unary_gradcheck_and_gradgradcheck(name):
    fn = UNARY[name]
    z = cr.tensor(_complex(2, 3, scale=0.5, shift=0.3 + 0.2j), requires_grad=True)
    assert cr.autograd.gradcheck(lambda x: fn(cr, x), (z,))
    assert cr.autograd.gradgradcheck(lambda x: fn(cr, x), (z,))


BINARY = {
    "add": lambda a, b: a + b, "sub": lambda a, b: a - b, "mul": lambda a, b: a * b,
    "div": lambda a, b: a / b, "pow": lambda a, b: a ** b,
}


@pytest.mark.parametrize("name", list(BINARY))
@pytest.mark.parametrize("kinds", ["cc", "cr", "rc"])
def test_binary_with_broadcasting_and_mixed_dtypes(name, kinds):
    def make(kind, shape):
        if kind == "c":
            return _complex(*shape, scale=0.5, shift=0.8 + 0.1j)
        return RNG.uniform(0.5, 1.5, shape)
    a, b = make(kinds[0], (3, 4)), make(kinds[1], (4,))
    _check(BINARY[name], BINARY[name], [a, b])


REDUCTIONS = {
    "sum": lambda m, z: z.sum(), "sum_dim": lambda m, z: z.sum(1),
    "mean": lambda m, z: z.mean(0), "prod": lambda m, z: z.prod(1),
    "cumsum": lambda m, z: z.cumsum(1), "norm": lambda m, z: m.linalg.vector_norm(z),
    "norm_dim": lambda m, z: m.linalg.vector_norm(z, dim=1),
    "var": lambda m, z: z.var(1), "std": lambda m, z: z.std(0),
    # imaginary parts beyond pi: the result is log's principal value, as PyTorch's
    "logsumexp": lambda m, z: m.logsumexp(z * 4, 1),
    "logsumexp_0d": lambda m, z: (z[0, 0] * 4).logsumexp(0),
    "renorm": lambda m, z: m.renorm(z, 2, 0, 1.5),
}


@pytest.mark.parametrize("name", list(REDUCTIONS))
def test_reductions(name):
    fn = REDUCTIONS[name]
    _check(lambda x: fn(cr, x), lambda x: fn(torch, x), [_complex(3, 4, shift=0.5)])


SHAPES = {
    "reshape": lambda m, z: z.reshape(4, 3), "transpose": lambda m, z: z.t(),
    "index": lambda m, z: z[1:, ::2], "cat": lambda m, z: m.cat([z, z * 2], 1),
    "stack": lambda m, z: m.stack([z, z]), "flip": lambda m, z: z.flip(0),
    "expand": lambda m, z: z[:, :1].expand(3, 5), "roll": lambda m, z: z.roll(1, 1),
    "gather": lambda m, z: z[m.tensor([2, 0])],
}


@pytest.mark.parametrize("name", list(SHAPES))
def test_shape_and_indexing(name):
    fn = SHAPES[name]
    _check(lambda x: fn(cr, x), lambda x: fn(torch, x), [_complex(3, 4)])


LINALG = {
    "matmul": (lambda m, a, b: a @ b, [(3, 4), (4, 2)]),
    "bmm": (lambda m, a, b: m.bmm(a, b), [(2, 3, 4), (2, 4, 2)]),
    "mv": (lambda m, a, b: m.mv(a, b), [(3, 4), (4,)]),
    "einsum": (lambda m, a, b: m.einsum("ij,jk->ik", a, b), [(3, 4), (4, 2)]),
    "inv": (lambda m, a, b: m.linalg.inv(a + 3 * m.eye(3)) @ b, [(3, 3), (3, 2)]),
    "det": (lambda m, a, b: m.linalg.det(a + 3 * m.eye(3)) * b, [(3, 3), (2,)]),
    "solve": (lambda m, a, b: m.linalg.solve(a + 3 * m.eye(3), b), [(3, 3), (3, 2)]),
}


@pytest.mark.parametrize("name", list(LINALG))
def test_linalg(name):
    fn, shapes = LINALG[name]
    _check(lambda *x: fn(cr, *x), lambda *x: fn(torch, *x), [_complex(*s) for s in shapes],
           tol=1e-9)


def test_complex_from_real_parts_and_polar():
    re, im = RNG.normal(size=(2, 3)), RNG.normal(size=(2, 3))
    _check(lambda a, b: cr.complex(a, b) ** 2, lambda a, b: torch.complex(a, b) ** 2, [re, im])
    r, th = RNG.uniform(0.5, 2, (4,)), RNG.uniform(-3, 3, (4,))
    _check(lambda a, b: cr.polar(a, b).exp(), lambda a, b: torch.polar(a, b).exp(), [r, th])
    pairs = RNG.normal(size=(3, 2))
    _check(lambda p: cr.view_as_complex(p) ** 2, lambda p: torch.view_as_complex(p) ** 2,
           [pairs])


def test_real_leaf_gets_the_real_part_of_a_complex_gradient():
    x_c, x_t = _both(RNG.normal(size=3))
    (cr.abs(x_c * (1 + 2j)) ** 2).sum().backward()
    (torch.abs(x_t * (1 + 2j)) ** 2).sum().backward()
    assert x_c.grad.dtype == cr.float64
    _assert_close(x_c.grad, x_t.grad)


def test_real_and_imag_are_views_and_assignable():
    z = cr.tensor([1 + 2j, 3 - 1j])
    z.real[0] = 5.0
    z.imag = cr.tensor([7.0, 8.0])
    t = torch.tensor([1 + 2j, 3 - 1j])
    t.real[0] = 5.0
    t.imag = torch.tensor([7.0, 8.0])
    assert z.tolist() == t.tolist()
    r = cr.view_as_real(z)
    r[1, 0] = -1.0
    assert z[1].item() == complex(-1, 8)


def test_forward_mode_matches_torch():
    import torch.autograd.forward_ad as tfwd

    import chainrule.autograd.forward_ad as cfwd
    z, t = _complex(4, scale=0.5, shift=0.5), _complex(4)
    fns = [lambda m, x: (x.exp() * x.conj()).sin(), lambda m, x: m.abs(x) + m.angle(x),
           lambda m, x: m.view_as_real(x * x), lambda m, x: m.sgn(x) * x.imag]
    for fn in fns:
        with cfwd.dual_level():
            out_c = cfwd.unpack_dual(fn(cr, cfwd.make_dual(cr.tensor(z), cr.tensor(t))))
        with tfwd.dual_level():
            out_t = tfwd.unpack_dual(fn(torch, tfwd.make_dual(torch.tensor(z), torch.tensor(t))))
        _assert_close(out_c.primal, out_t.primal)
        _assert_close(out_c.tangent, out_t.tangent)


def test_vmap_of_complex_ops():
    z = _complex(3, 4)
    fn = lambda m: m.func.vmap(lambda x: m.view_as_real(x.exp() * x.conj()).sum(0))  # noqa: E731
    _assert_close(fn(cr)(cr.tensor(z)), fn(torch)(torch.tensor(z)))


def test_backward_of_a_complex_scalar_needs_a_gradient():
    z = cr.tensor([1 + 1j], requires_grad=True)
    with pytest.raises(RuntimeError, match="grad can be implicitly created only for real scalar"):
        (z * z).sum().backward()


def test_predicates():
    z = cr.tensor([1 + 0j, 2 + 1j])
    assert cr.is_complex(z) and z.is_complex() and not cr.ones(1).is_complex()
    assert cr.isreal(z).tolist() == [True, False]
    assert cr.isreal(cr.ones(2)).tolist() == [True, True]
    assert not z.is_conj() and cr.resolve_conj(z) is z


@pytest.mark.parametrize("values", [
    [1 + 2j, 3 - 1j], [1.5 + 2j, 3 - 1j, 0, 1e-5j], [1e10 + 2j], [0j], [-1 - 1j, 2.25 - 0.5j],
    [complex(0, np.nan), complex(np.inf, 0)], [[1 + 2j, 3 - 1j], [0.5j, -2]],
    list(np.arange(30) * (1 + 0.5j)),
])
@pytest.mark.parametrize("dtype", ["complex64", "complex128"])
def test_printing_matches_torch(values, dtype):
    values = [complex(v) if not isinstance(v, list) else v for v in values]
    assert repr(cr.tensor(values, dtype=getattr(cr, dtype))) == \
        repr(torch.tensor(values, dtype=getattr(torch, dtype)))


def test_printing_large_and_scalar():
    a = np.arange(2000).reshape(40, 50) * (1 - 1j)
    assert repr(cr.tensor(a)) == repr(torch.tensor(a))
    assert repr(cr.tensor(3 + 4j)) == repr(torch.tensor(3 + 4j))


@pytest.mark.parametrize("attr", ["mH", "H"])
def test_conjugate_transposes(attr):
    z = _complex(3, 4) if attr == "H" else _complex(2, 3, 4)
    _check(lambda x: getattr(x, attr) * 1, lambda x: getattr(x, attr) * 1, [z])
    with pytest.raises(RuntimeError, match="tensor.H is only supported on matrices"):
        _ = cr.ones(2, 2, 2).H


def test_legacy_type_names_of_complex_tensors():
    for name in ("complex64", "complex128"):
        ours, theirs = cr.zeros(2, dtype=getattr(cr, name)), torch.zeros(
            2, dtype=getattr(torch, name))
        assert ours.type() == theirs.type()
        assert ours.type(theirs.type()).dtype == getattr(cr, name)


# Functions of several outputs, some real (norms, variances, decompositions): each output takes a
# cotangent, and the losses of eigen and singular vectors are invariant to their phases.
def _hermitian(n):
    a = _complex(n, n)
    return a + a.conj().T


SEVERAL = {
    "var_mean": (lambda m, z: m.var_mean(z, 1), [(3, 4)]),
    "std_mean": (lambda m, z: m.std_mean(z, 0, correction=0), [(3, 4)]),
    "vector_norm3": (lambda m, z: (m.linalg.vector_norm(z, 3, dim=1),), [(3, 4)]),
    "vector_norm_inf": (lambda m, z: (m.linalg.vector_norm(z, float("inf")),), [(5,)]),
    "vector_norm1": (lambda m, z: (m.linalg.vector_norm(z, 1, dim=0),), [(3, 2)]),
    "vdot": (lambda m, a, b: (m.vdot(a, b),), [(4,), (4,)]),
    "slogdet": (lambda m, z: tuple(m.linalg.slogdet(z)), [(3, 3)]),
    "logdet": (lambda m, z: (m.logdet(z),), [(3, 3)]),
    "qr": (lambda m, z: tuple(m.linalg.qr(z)), [(4, 3)]),
    "qr_wide": (lambda m, z: tuple(m.linalg.qr(z)), [(2, 4)]),
    "eigh": (lambda m, z: (lambda L, V: (L, V.abs()))(*m.linalg.eigh(z + z.mH)), [(3, 3)]),
    "eigh_vectors": (lambda m, z: (m.linalg.eigh(z + z.mH)[1].abs(),), [(3, 3)]),
    "svd": (lambda m, z: (lambda U, S, Vh: (U @ Vh, S))(*m.linalg.svd(z, full_matrices=False)),
            [(4, 3)]),
    "svd_wide": (lambda m, z: (lambda U, S, Vh: (U @ Vh, S))(
        *m.linalg.svd(z, full_matrices=False)), [(2, 4)]),
    "svdvals": (lambda m, z: (m.linalg.svdvals(z),), [(4, 2)]),
    "lu_solve_adjoint": (lambda m, a, b: (m.linalg.lu_solve(*m.linalg.lu_factor(a), b,
                                                            adjoint=True),), [(3, 3), (3, 2)]),
    "lu_solve_right": (lambda m, a, b: (m.linalg.lu_solve(*m.linalg.lu_factor(a), b,
                                                          left=False),), [(3, 3), (2, 3)]),
    "lu_solve_right_adjoint": (lambda m, a, b: (m.linalg.lu_solve(
        *m.linalg.lu_factor(a), b, left=False, adjoint=True),), [(3, 3), (2, 3)]),
}


def _cotangent(out):
    shape = tuple(out.shape)
    return RNG.normal(size=shape) + (1j * RNG.normal(size=shape) if out.is_complex() else 0)


@pytest.mark.parametrize("name", list(SEVERAL))
def test_several_outputs_vjp_and_jvp_match_torch(name):
    import torch.autograd.forward_ad as tfwd

    import chainrule.autograd.forward_ad as cfwd
    fn, shapes = SEVERAL[name]
    arrays = [_complex(*s) for s in shapes]
    pairs = [_both(a) for a in arrays]
    outs_c, outs_t = fn(cr, *[p[0] for p in pairs]), fn(torch, *[p[1] for p in pairs])
    for c, t in zip(outs_c, outs_t):
        assert str(c.dtype) == str(t.dtype)
        _assert_close(c, t, 1e-9)
    ws = [_cotangent(t) for t in outs_t]
    grads_c = cr.autograd.grad(outs_c, [p[0] for p in pairs], [cr.tensor(w) for w in ws])
    grads_t = torch.autograd.grad(outs_t, [p[1] for p in pairs], [torch.tensor(w) for w in ws])
    for gc, gt in zip(grads_c, grads_t):
        _assert_close(gc, gt, 1e-9)
    tangents = [_complex(*s) for s in shapes]
    with cfwd.dual_level():
        duals = [cfwd.make_dual(cr.tensor(a), cr.tensor(t)) for a, t in zip(arrays, tangents)]
        jvp_c = [cfwd.unpack_dual(o).tangent for o in fn(cr, *duals)]
    with tfwd.dual_level():
        duals = [tfwd.make_dual(torch.tensor(a), torch.tensor(t))
                 for a, t in zip(arrays, tangents)]
        jvp_t = [tfwd.unpack_dual(o).tangent for o in fn(torch, *duals)]
    for c, t in zip(jvp_c, jvp_t):
        _assert_close(c, t, 1e-9)


@pytest.mark.parametrize("name", list(SEVERAL))
def test_several_outputs_by_finite_differences(name):
    fn, shapes = SEVERAL[name]
    inputs = [cr.tensor(_complex(*s), requires_grad=True) for s in shapes]
    assert cr.autograd.gradcheck(lambda *z: fn(cr, *z), inputs, check_forward_ad=True)
    assert cr.autograd.gradgradcheck(lambda *z: fn(cr, *z), inputs)


@pytest.mark.parametrize("center", [False, True])
def test_complex_low_rank_factorizations_reconstruct(center):
    a = _complex(5, 3) @ _complex(3, 4)  # rank 3
    U, S, V = cr.pca_lowrank(cr.tensor(a), q=3, center=center)
    target = a - a.mean(0, keepdims=True) if center else a
    np.testing.assert_allclose((U * S) @ V.mH, target, atol=1e-10)
    U, S, V = cr.svd_lowrank(cr.tensor(a).mH, q=3)
    np.testing.assert_allclose((U * S) @ V.mH, a.conj().T, atol=1e-10)


def test_lu_pivots_compare_real_plus_imaginary_parts():
    """LAPACK's getrf picks the pivot by |re| + |im|: 3 + 3j (6) before 4.5 (|z| 4.5 > 4.24)."""
    a = np.array([[4.5, 1.0], [3 + 3j, 2.0]])
    ours, theirs = cr.linalg.lu_factor(cr.tensor(a)), torch.linalg.lu_factor(torch.tensor(a))
    assert ours.pivots.tolist() == theirs.pivots.tolist() == [2, 2]
    _assert_close(ours.LU, theirs.LU)
