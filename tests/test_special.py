"""torch.special beyond the op table: the namespace and signatures, out=, argument errors, dtype
promotion, forward mode, accuracy against mpmath where chainrule is closer than PyTorch, and the
ImportError naming the 'special' extra when SciPy is missing."""

from __future__ import annotations

import inspect
import math
import re
import sys
import zlib

import mpmath
import numpy as np
import pytest
import torch
import torch.autograd.forward_ad as torch_fw
from op_db import special as special_rows
from op_db._harness import as_tuple
from op_db._spec import T

import chainrule
import chainrule.autograd.forward_ad as fw

# ---- the namespace ----------------------------------------------------------------------------


def _torch_names() -> list[str]:
    return sorted(n for n in dir(torch.special)
                  if not n.startswith("_") and n != "Tensor"
                  and callable(getattr(torch.special, n)))


def test_namespace_has_every_torch_special_function():
    ours = sorted(n for n in dir(chainrule.special)
                  if not n.startswith("_") and callable(getattr(chainrule.special, n)))
    assert ours == _torch_names()
    assert sorted(chainrule.special.__all__) == _torch_names()


def _torch_parameters(doc: str) -> str:
    """'name(input, n, *, out=None) -> Tensor' -> 'input, n, *, out=None'."""
    return doc[doc.index("(") + 1: doc.index(")")]


def _parameters(fn) -> str:
    sig = inspect.signature(fn)
    plain = sig.replace(parameters=[p.replace(annotation=p.empty) for p in sig.parameters.values()],
                        return_annotation=sig.empty)
    return str(plain)[1:-1]


@pytest.mark.parametrize("name", _torch_names())
def test_signature_is_torchs(name):
    theirs = _torch_parameters(getattr(torch.special, name).__doc__.strip().splitlines()[0])
    ours = _parameters(getattr(chainrule.special, name))
    if name == "round":  # torch.special.round also takes decimals= (undocumented in its line)
        assert ours == "input, *, decimals=0, out=None"
        assert torch.special.round(torch.tensor([1.234]), decimals=1).item() == pytest.approx(1.2)
    elif name in NAMED_X:
        assert ours == theirs.replace("input", "x", 1)
    else:
        assert ours == theirs


# Documented with `input`, called with `x=` in PyTorch (input= raises there).
NAMED_X = ("airy_ai", "scaled_modified_bessel_k0", "scaled_modified_bessel_k1",
           "spherical_bessel_j0", *special_rows.POLYNOMIAL_NAMES)


@pytest.mark.parametrize("name", NAMED_X)
def test_x_keyword(name):
    extra = {"n": 3} if "polynomial" in name else {}
    results = []
    for m in (chainrule, torch):
        results.append(getattr(m.special, name)(x=m.tensor([0.25, 0.5]), **extra).tolist())
        with pytest.raises(TypeError):
            getattr(m.special, name)(input=m.tensor([0.25, 0.5]), **extra)
    np.testing.assert_allclose(results[0], results[1], rtol=1e-6)


@pytest.mark.parametrize("name", ["i0", "sinc", "igamma", "igammac", "mvlgamma"])
def test_top_level_functions_and_methods(name):
    def unwrapped(f):  # torch.X is wrapped for __torch_function__ (Tensor's methods: on demand)
        return getattr(f, "_torch_function_wrapped", f)

    assert unwrapped(getattr(chainrule, name)) is unwrapped(getattr(chainrule.Tensor, name))
    assert callable(getattr(chainrule.Tensor, name + "_"))


# ---- out= ---------------------------------------------------------------------------------------

X = np.array([0.25, 0.5, 1.5, 3.0])


@pytest.mark.parametrize("call", [
    lambda m, x, out: m.special.erfcx(x, out=out),
    lambda m, x, out: m.special.i1(x, out=out),
    lambda m, x, out: m.special.ndtr(x, out=out),
    lambda m, x, out: m.special.gammaln(x, out=out),
    lambda m, x, out: m.special.logit(x / 4, 0.1, out=out),
    lambda m, x, out: m.special.gammainc(x, x + 1, out=out),
    lambda m, x, out: m.special.zeta(x + 1, 2.0, out=out),
    lambda m, x, out: m.special.chebyshev_polynomial_t(x, 3, out=out),
    lambda m, x, out: m.special.bessel_j0(x, out=out),
    lambda m, x, out: m.special.polygamma(1, x, out=out),
    lambda m, x, out: m.special.multigammaln(x + 1, 2, out=out),
    lambda m, x, out: m.special.logsumexp(x.reshape(4, 1), 1, out=out),
    lambda m, x, out: m.i0(x, out=out),
    lambda m, x, out: m.igammac(x, x, out=out),
])
def test_out_is_written_and_returned(call):
    results = []
    for m in (chainrule, torch):
        out = m.zeros(4, dtype=m.float64)
        got = call(m, m.from_numpy(X.copy()), out)
        assert got is out
        results.append(out.numpy().copy())
    np.testing.assert_allclose(results[0].reshape(-1), results[1].reshape(-1), rtol=1e-7,
                               atol=1e-12)


def test_out_of_another_shape_is_resized_with_torchs_warning():
    for m in (chainrule, torch):
        out = m.zeros(3)
        with pytest.warns(UserWarning, match=r"had shape \[3\], which does not match the "
                                             r"required output shape \[4\]"):
            m.special.erfcx(m.from_numpy(X.astype(np.float32)), out=out)
        assert tuple(out.shape) == (4,)
        assert out[3].item() == pytest.approx(0.1790011, rel=1e-6)
        m.special.i0(m.from_numpy(X.astype(np.float32)), out=m.zeros(0))  # empty: no warning


def test_out_refuses_inputs_that_require_grad_and_narrower_dtypes():
    for m in (chainrule, torch):
        x = m.from_numpy(X.copy()).requires_grad_()
        with pytest.raises(RuntimeError, match=re.escape(
                "special_erfcx(): functions with out=... arguments don't support automatic "
                "differentiation, but one of the arguments requires grad.")):
            m.special.erfcx(x, out=m.zeros(4, dtype=m.float64))
        with pytest.raises(RuntimeError, match=re.escape(
                "erf(): functions with out=... arguments don't support automatic")):
            m.special.erf(x, out=m.zeros(4, dtype=m.float64))
        with m.no_grad():
            m.special.erfcx(x, out=m.zeros(4, dtype=m.float64))
        with pytest.raises(RuntimeError, match="result type Double can't be cast to the desired "
                                               "output type Long"):
            m.special.erfcx(x.detach(), out=m.zeros(4, dtype=m.int64))


# ---- argument errors and promotion ------------------------------------------------------------


@pytest.mark.parametrize("call,message", [
    (lambda m: m.special.erfcx(1.0), "special_erfcx(): argument 'input' (position 1) must be "
                                     "Tensor, not float"),
    (lambda m: m.special.erf(1.0), "special_erf(): argument 'input' (position 1) must be "
                                   "Tensor, not float"),
    (lambda m: m.special.airy_ai(1.0), "special_airy_ai(): argument 'x' (position 1) must be "
                                       "Tensor, not float"),
    (lambda m: m.special.gammainc(m.ones(2), 1.0), "special_gammainc(): argument 'other' "
                                                   "(position 2) must be Tensor, not float"),
    (lambda m: m.special.polygamma(1, 2.0), "special_polygamma(): argument 'input' (position "
                                            "2) must be Tensor, not float"),
    (lambda m: m.special.zeta(2.0, 3.0), "special_zeta() received an invalid combination of "
                                         "arguments - got (float, float), but expected one of:"),
    (lambda m: m.special.chebyshev_polynomial_t(0.5, 3),
     "special_chebyshev_polynomial_t() received an invalid combination of arguments - got "
     "(float, int), but expected one of:\n * (Tensor x, Tensor n, *, Tensor out = None)"),
])
def test_type_errors(call, message):
    for m in (chainrule, torch):
        with pytest.raises(TypeError, match=re.escape(message)):
            call(m)


@pytest.mark.parametrize("call", [
    lambda m: m.mvlgamma(m.ones(2), 0),
    lambda m: m.ones(2).mvlgamma_(0),
    lambda m: m.special.multigammaln(m.ones(2), -1),
])
def test_mvlgamma_p_below_one(call):
    for m in (chainrule, torch):
        with pytest.raises(RuntimeError, match="p has to be greater than or equal to 1"):
            call(m)


def test_igamma_has_no_derivative_in_its_first_argument():
    for m in (chainrule, torch):
        a = m.tensor([1.5, 2.0], requires_grad=True)
        for fn, name in ((m.special.gammainc, "igamma"), (m.special.gammaincc, "igammac")):
            with pytest.raises(RuntimeError, match=f"the derivative for '{name}: input' is not "
                                                   "implemented"):
                fn(a, m.tensor([0.5, 1.0])).sum().backward()
        with pytest.raises(RuntimeError, match="the derivative for 'zeta' is not implemented"):
            m.special.zeta(a + 1, m.tensor([0.5, 1.0])).sum().backward()


@pytest.mark.parametrize("default", ["float32", "float64"])
def test_integer_inputs_give_the_default_float_dtype(default):
    results = []
    for m in (chainrule, torch):
        previous = m.get_default_dtype()
        m.set_default_dtype(getattr(m, default))
        try:
            ints = m.tensor([1, 2, 3])
            results.append([
                m.special.i0e(ints), m.i0(ints), m.sinc(ints), m.special.ndtri(ints - 1),
                m.special.zeta(ints + 1, ints), m.special.xlog1py(ints, 2.0),
                m.special.legendre_polynomial_p(ints, m.tensor([2])),
                m.special.hermite_polynomial_h(0.5, ints), m.mvlgamma(ints, 1),
            ])
        finally:
            m.set_default_dtype(previous)
    for ours, theirs in zip(*results):
        assert str(ours.dtype) == str(theirs.dtype) == f"torch.{default}"
        np.testing.assert_allclose(ours.numpy(), theirs.numpy(), rtol=1e-6, atol=1e-7)


def test_tensor_methods_and_inplace_match_torch():
    out = []
    for m in (chainrule, torch):
        a = m.tensor([0.5, 1.5, 4.0], dtype=m.float64)
        x = m.tensor([0.3, 2.0, 7.5], dtype=m.float64)
        out.append([a.igamma(x), a.igammac(x), x.i0(), x.sinc(), x.mvlgamma(2),
                    a.clone().igamma_(x), a.clone().igammac_(x), x.clone().i0_(),
                    x.clone().sinc_(), (x + 1).mvlgamma_(3)])
    for ours, theirs in zip(*out):
        np.testing.assert_allclose(ours.numpy(), theirs.numpy(), rtol=1e-12)


def test_sinc_second_derivative_at_zero():
    # -pi^2/3 (sinc(x) = 1 - (pi x)^2/6 + ...); PyTorch gives nan (docs/differences.md).
    x = chainrule.zeros(2, dtype=chainrule.float64, requires_grad=True)
    (g,) = chainrule.autograd.grad(chainrule.sinc(x).sum(), x, create_graph=True)
    (gg,) = chainrule.autograd.grad(g.sum(), x)
    np.testing.assert_allclose(g.detach().numpy(), 0.0)
    np.testing.assert_allclose(gg.numpy(), -math.pi**2 / 3, rtol=1e-14)
    t = torch.zeros(2, dtype=torch.float64, requires_grad=True)
    (tg,) = torch.autograd.grad(torch.sinc(t).sum(), t, create_graph=True)
    assert torch.autograd.grad(tg.sum(), t)[0].isnan().all()


# ---- forward mode ------------------------------------------------------------------------------

NO_FORWARD_MODE = ("igamma", "igammac", "special_zeta")  # PyTorch has no JVP for these
FORWARD_ROWS = [row for row in special_rows.ROWS
                if row.orders and not set(row.records) & set(NO_FORWARD_MODE)]


def _dual(lib, fwd, fn, arrays, seeds):
    with fwd.dual_level():
        args = [lib.from_numpy(np.array(v)) if s is None
                else fwd.make_dual(lib.from_numpy(np.array(v)), lib.from_numpy(s.copy()))
                for v, s in zip(arrays, seeds)]
        outs = []
        for o in as_tuple(fn(*args)):
            primal, tangent = fwd.unpack_dual(o)
            if tangent is None or (lib is torch and tangent._is_zerotensor()):
                tangent = lib.zeros_like(primal)
            outs.append((primal.detach().numpy().copy(), tangent.detach().numpy().copy()))
        return outs


@pytest.mark.parametrize("row,index,sample", [
    pytest.param(row, i, s, id=f"{row.id}-{s!r}")
    for row in FORWARD_ROWS for i, s in enumerate(row.samples)
])
def test_forward_mode_matches_torch(row, index, sample):
    arrays = sample.arrays(row.seed(index), "float64", row.domain)
    rng = np.random.default_rng(zlib.crc32(row.seed(index).encode()) + 1)
    seeds = [rng.standard_normal(np.shape(v)) if isinstance(a, T) and a.grad else None
             for a, v in zip(sample.args, arrays)]
    ours = _dual(chainrule, fw, row.op, arrays, seeds)
    theirs = _dual(torch, torch_fw, row.ref, arrays, seeds)
    for (p, t), (want_p, want_t) in zip(ours, theirs):
        np.testing.assert_allclose(p, want_p, rtol=1e-7, atol=1e-9)
        np.testing.assert_allclose(t, want_t, rtol=1e-7, atol=1e-9)


@pytest.mark.parametrize("call", [
    lambda m, x: m.special.gammainc(m.ones(3), x),
    lambda m, x: m.igammac(m.ones(3), x),
    lambda m, x: m.special.zeta(m.ones(3) * 2, x),
])
def test_no_forward_mode_where_torch_has_none(call):
    for m, fwd in ((chainrule, fw), (torch, torch_fw)):
        with fwd.dual_level():
            x = fwd.make_dual(m.tensor([0.5, 1.0, 2.0]), m.ones(3))
            with pytest.raises(RuntimeError, match="Trying to use forward AD with (igamma|igammac"
                                                   "|special_zeta) that does not support it"):
                call(m, x)


@pytest.mark.parametrize("name", ["erfcx", "log_ndtr", "ndtri", "i0e", "i1", "i1e", "entr"])
def test_forward_over_reverse(name):
    """jvp of the gradient: the second derivative through the JVP of the VJP rules."""
    x = np.array([0.3, 0.7, 1.9])
    v = np.array([1.0, -2.0, 0.5])
    results = []
    for m, fwd in ((chainrule, fw), (torch, torch_fw)):
        fn = getattr(m.special, name)
        with fwd.dual_level():
            dual = fwd.make_dual(m.from_numpy(x.copy()).requires_grad_(), m.from_numpy(v.copy()))
            (g,) = m.autograd.grad(fn(dual).sum(), dual, create_graph=True)
            results.append(fwd.unpack_dual(g).tangent.detach().numpy().copy())
    np.testing.assert_allclose(results[0], results[1], rtol=1e-10)


# ---- accuracy where PyTorch is not the oracle ---------------------------------------------------

mpmath.mp.dps = 40


def _mp(fn, x: float) -> float:
    return float(fn(mpmath.mpf(x)))


MP = {
    "erfcx": lambda x: mpmath.exp(x * x) * mpmath.erfc(x),
    "log_ndtr": lambda x: mpmath.log(mpmath.ncdf(x)) if x < 0 else mpmath.log1p(-mpmath.ncdf(-x)),
    "i0": lambda x: mpmath.besseli(0, x),
    "i1": lambda x: mpmath.besseli(1, x),
    "i0e": lambda x: mpmath.exp(-abs(x)) * mpmath.besseli(0, x),
    "i1e": lambda x: mpmath.exp(-abs(x)) * mpmath.besseli(1, x),
    "airy_ai": mpmath.airyai,
}
POINTS = {
    "erfcx": [-20.0, -3.0, -0.5, 0.0, 0.3, 0.999, 1.0, 1.7, 3.5, 7.0, 50.0, 1e5, 1e9],
    "log_ndtr": [-1e4, -300.0, -38.0, -20.0, -5.0, -1.0, 0.0, 0.5, 3.0, 8.0, 30.0],
    "i0": [-100.0, -29.0, -1.0, 1e-3, 0.5, 5.0, 29.99, 30.01, 60.0, 500.0],
    "i1": [-100.0, -29.0, -1.0, 1e-3, 0.5, 5.0, 29.99, 30.01, 60.0, 500.0],
    "i0e": [-1e4, -29.0, -1.0, 1e-3, 0.5, 5.0, 29.99, 30.01, 60.0, 1e6],
    "i1e": [-1e4, -29.0, -1.0, 1e-3, 0.5, 5.0, 29.99, 30.01, 60.0, 1e6],
    "airy_ai": [-2.34, -2.77, -10.0, -30.0],
}


@pytest.mark.parametrize("name", list(MP))
def test_accuracy_against_mpmath(name):
    x = np.array(POINTS[name])
    got = getattr(chainrule.special, name)(chainrule.from_numpy(x)).numpy()
    want = np.array([_mp(MP[name], v) for v in x])
    # exp(-x^2) at large x and the phase of the oscillating function cost a few digits
    oscillating = name == "airy_ai"
    np.testing.assert_allclose(got, want, rtol=1e-13, atol=1e-15 if oscillating else 0)


@pytest.mark.parametrize("name", ["bessel_j0", "bessel_j1", "bessel_y0", "bessel_y1"])
def test_bessel_functions_are_pytorchs(name):
    # PyTorch's asymptotic form above |x| = 5 is off the true value by up to ~1e-5 relative near
    # zeros (its QQ denominators); chainrule gives PyTorch's values, to rounding
    x = np.concatenate([np.linspace(-40.0, 40.0, 40001), [0.0, -0.0, 1e-6, 1e-300, 5.0, 4.999999,
                                                           5.000001, 1e300, np.inf, -np.inf,
                                                           np.nan]])
    got = getattr(chainrule.special, name)(chainrule.from_numpy(x)).numpy()
    want = getattr(torch.special, name)(torch.from_numpy(x)).numpy()
    np.testing.assert_allclose(got, want, rtol=1e-9, atol=1e-300, err_msg=name)
    x = x[:40001].astype(np.float32)  # PyTorch computes in float32 here
    got = getattr(chainrule.special, name)(chainrule.from_numpy(x)).numpy()
    want = getattr(torch.special, name)(torch.from_numpy(x)).numpy()
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-5, err_msg=name)


def test_ndtri_against_mpmath():
    p = np.array([1e-300, 1e-100, 1e-20, 1e-10, 1e-3, 0.02, 0.2, 0.2500001, 0.5 - 1e-12, 0.5,
                  0.75, 0.98, 1 - 1e-10, 1 - 2**-52])
    got = chainrule.special.ndtri(chainrule.from_numpy(p)).numpy()
    with mpmath.workdps(350):  # 1 - 2p keeps p's digits down to 1e-300
        want = np.array([float(mpmath.sqrt(2) * mpmath.erfinv(2 * mpmath.mpf(v) - 1))
                         for v in p])
    np.testing.assert_allclose(got, want, rtol=4e-14, atol=1e-300)


# ---- SciPy is optional ---------------------------------------------------------------------------

SCIPY_CALLS = {
    "torch.special.modified_bessel_k0": lambda m, x: m.special.modified_bessel_k0(x),
    "torch.special.scaled_modified_bessel_k1": lambda m, x: m.special.scaled_modified_bessel_k1(x),
    "torch.special.airy_ai": lambda m, x: m.special.airy_ai(x),
    "torch.igamma": lambda m, x: m.special.gammainc(x, x),
    "torch.igammac": lambda m, x: m.igammac(x, x),
    "torch.special.zeta": lambda m, x: m.special.zeta(x + 1, x),
}


@pytest.fixture
def no_scipy(monkeypatch):
    for name in [n for n in sys.modules if n == "scipy" or n.startswith("scipy.")]:
        monkeypatch.delitem(sys.modules, name)
    monkeypatch.setitem(sys.modules, "scipy", None)  # import scipy raises ImportError
    monkeypatch.setitem(sys.modules, "scipy.special", None)


@pytest.mark.parametrize("name", list(SCIPY_CALLS))
def test_scipy_functions_name_the_extra_when_scipy_is_missing(no_scipy, name):
    with pytest.raises(ImportError, match=re.escape(
            f"{name} needs SciPy: pip install 'chainrule[special]'")):
        SCIPY_CALLS[name](chainrule, chainrule.tensor([0.5, 1.5]))


def test_the_rest_needs_numpy_only(no_scipy):
    x = np.array([0.1, 0.5, 0.9])
    for name in ("entr", "erfcx", "log_ndtr", "ndtri", "ndtr", "i0", "i0e", "i1", "i1e", "sinc",
                 "modified_bessel_i0", "modified_bessel_i1", "spherical_bessel_j0", "expit",
                 "bessel_j0", "bessel_j1", "bessel_y0", "bessel_y1",
                 "logit", "erf", "erfinv", "gammaln", "digamma"):
        got = getattr(chainrule.special, name)(chainrule.from_numpy(x)).numpy()
        want = getattr(torch.special, name)(torch.from_numpy(x)).numpy()
        np.testing.assert_allclose(got, want, rtol=1e-7, err_msg=name)
    got = chainrule.special.laguerre_polynomial_l(chainrule.from_numpy(x), 4).numpy()
    want = torch.special.laguerre_polynomial_l(torch.from_numpy(x), 4).numpy()
    np.testing.assert_allclose(got, want, rtol=1e-12)
    got = chainrule.mvlgamma(chainrule.from_numpy(x + 2), 3).numpy()
    np.testing.assert_allclose(got, torch.mvlgamma(torch.from_numpy(x + 2), 3).numpy())
