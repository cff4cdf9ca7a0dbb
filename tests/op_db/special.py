"""torch.special rows, and the special functions torch also has at the top level (i0, sinc, igamma,
igammac, mvlgamma).

Values are compared on wide ranges and at the special points (0, poles, the switches between
series and expansions, ±inf, nan) in rows without derivatives; the derivative rows stay where
finite differences are smooth. PyTorch differentiates neither the Bessel functions of
torch.special nor its polynomials: their rows check values only (and that the result does not
require grad)."""

from __future__ import annotations

from functools import partial

from ._spec import POSITIVE, REAL, Const, Domain, OpRow, S, T

UNARY = (S(()), S((5,)), S((3, 4)))
BINARY = (S((), ()), S((3, 4), (3, 4)), S((3, 1), (1, 4)), S((2, 3), ()))
NAN = float("nan")
INF = float("inf")


def _special(name: str, m, *args):
    return getattr(m.special, name)(*args)


def sp(name: str, samples, **kwargs) -> OpRow:
    """A row for ``m.special.<name>(*args)``."""
    return OpRow(f"special.{name}", partial(_special, name), samples, **kwargs)


def wide(name: str, domain: Domain, points: list, record: str, **kwargs) -> OpRow:
    """Values only: 500 draws from ``domain`` and the special ``points``."""
    return sp(name, (S(T((500,), domain, grad=False)), S(Const(points))), variant="wide",
              orders=(), records=(record,), **kwargs)


SYMMETRIC = Domain(-6.0, 6.0, avoid=(0.0,), gap=0.2)  # |x| has a kink at 0 (i0e, i1e)
BESSEL_POINTS = [0.0, -0.0, 1.0, -1.0, 29.9, 30.0, 30.1, -31.0, 700.0, 800.0, -800.0, INF, -INF,
                 NAN]

DIFFERENTIABLE = [
    sp("entr", UNARY, domain=Domain(0.1, 3.0), orders=(1, 2, 3), records=("special_entr",),
       kinks=(0.0,)),
    wide("entr", Domain(-2.0, 50.0), [0.0, -0.0, 1.0, -1.0, 1e-300, INF, -INF, NAN],
         "special_entr"),
    sp("erfcx", UNARY, domain=Domain(-3.0, 6.0), orders=(1, 2, 3), records=("special_erfcx",)),
    # torch's float32 erfcx loses digits below -5 (exp(x^2) in float32): those in float64.
    wide("erfcx", Domain(-5.0, 60.0), [0.0, -0.0, 0.99, 1.0, 2.0, 4.0, 26.0, 1e8, 1e10, 1e30,
                                       INF, -INF, NAN], "special_erfcx"),
    sp("erfcx", (S(T((500,), Domain(-27.0, 0.0), grad=False)),), variant="negative",
       orders=(), dtypes=("float64",), records=("special_erfcx",)),
    sp("log_ndtr", UNARY, domain=Domain(-6.0, 5.0), orders=(1, 2, 3),
       records=("special_log_ndtr",)),
    # PyTorch's float32 derivative loses digits in the far tail (exp(-(out + x^2/2)) in float32).
    sp("log_ndtr", (S((20,)),), domain=Domain(-30.0, -5.0), variant="tail",
       dtypes=("float64",), records=("special_log_ndtr",)),
    wide("log_ndtr", Domain(-60.0, 40.0), [0.0, -0.0, 1.0, -1.0, -38.0, -40.0, -1e10, 8.0,
                                           INF, -INF, NAN], "special_log_ndtr"),
    sp("ndtri", UNARY, domain=Domain(0.02, 0.98), orders=(1, 2, 3), records=("special_ndtri",)),
    wide("ndtri", Domain(0.0, 1.0), [0.0, 1.0, 0.5, 0.25, 0.75, 1e-300, 1e-20, 1e-10,
                                     0.999999, 1 - 2**-40, -0.5, 1.5, NAN], "special_ndtri"),
    sp("ndtri", (S(Const([10.0**-k for k in range(1, 300, 7)])),), variant="lower tail",
       orders=(), dtypes=("float64",), records=("special_ndtri",)),
    OpRow("i0", lambda m, x: m.i0(x), UNARY, domain=Domain(-6.0, 6.0), orders=(1, 2, 3),
          kinks=(0.0,), inplace=("i0_",)),
    OpRow("Tensor.i0", lambda m, x: x.i0(), (S((5,)),), records=("i0",)),
    sp("i0", UNARY, domain=Domain(-6.0, 6.0), records=("i0",)),
    wide("i0", Domain(-60.0, 60.0), BESSEL_POINTS, "i0"),
    sp("i0e", UNARY, domain=SYMMETRIC, orders=(1, 2, 3), records=("special_i0e",), kinks=(0.0,)),
    wide("i0e", Domain(-60.0, 60.0), BESSEL_POINTS, "special_i0e"),
    sp("i1", UNARY, domain=Domain(-6.0, 6.0), orders=(1, 2, 3), records=("special_i1",),
       kinks=(0.0,)),
    wide("i1", Domain(-60.0, 60.0), BESSEL_POINTS, "special_i1"),
    sp("i1e", UNARY, domain=SYMMETRIC, orders=(1, 2, 3), records=("special_i1e",), kinks=(0.0,)),
    wide("i1e", Domain(-60.0, 60.0), BESSEL_POINTS, "special_i1e"),
    OpRow("sinc", lambda m, x: m.sinc(x), UNARY, domain=Domain(-3.0, 3.0), orders=(1, 2, 3),
          inplace=("sinc_",)),
    sp("sinc", UNARY, domain=Domain(-3.0, 3.0), records=("sinc",)),
    wide("sinc", Domain(-50.0, 50.0), [0.0, -0.0, 1.0, -1.0, 0.5, 1e-20, 1e6, INF, -INF, NAN],
         "sinc"),
    # PyTorch's ndtr is the composite (1 + erf(x / sqrt 2)) / 2 (MulBackward1 there).
    sp("ndtr", UNARY, domain=Domain(-3.0, 3.0), orders=(1, 2, 3), grad_fn=False),
    sp("ndtr", (S(Const([0.0, -1.0, 1.0, -10.0, -40.0, 10.0, INF, -INF, NAN])),),
       variant="points", orders=()),
    sp("xlog1py", BINARY, domain=(REAL, Domain(-0.5, 2.0)), orders=(1, 2, 3), kinks=(0.0,),
       records=("special_xlog1py",)),
    # At input = 0 and other <= -1: PyTorch's zero derivative in input (not 0 * -inf = nan).
    OpRow("special.xlog1py", lambda m, x, c, y: m.special.xlog1py(x * c, y),
          (S((4,), Const([0.0, 1.0, 1.0, 0.0]), Const([-1.0, 2.0, 0.5, -2.0])),),
          variant="input 0 at other <= -1", records=("special_xlog1py",)),
    # A number argument: PyTorch's grad_fn is then SpecialXlog1PyBackward1 or 2 (ours: 0).
    OpRow("special.xlog1py", lambda m, y: m.special.xlog1py(2.5, y), UNARY,
          variant="number input", domain=Domain(-0.5, 2.0), records=("special_xlog1py",),
          grad_fn=False),
    OpRow("special.xlog1py", lambda m, x: m.special.xlog1py(x, 3.0), UNARY,
          variant="number other", records=("special_xlog1py",), grad_fn=False),
    sp("xlog1py", (S(Const([0.0, 0.0, 0.0, 1.0, -1.0, 2.0]),
                     Const([NAN, -1.0, INF, -1.0, -2.0, NAN])),), variant="points", orders=(),
       records=("special_xlog1py",)),
    # igamma and zeta: PyTorch has no derivative in the first argument.
    OpRow("igamma", lambda m, a, x: m.igamma(a, x),
          (S(T((), grad=False), ()), S(T((3, 4), grad=False), (3, 4)),
           S(T((3, 1), grad=False), (1, 4))),
          domain=(Domain(0.5, 4.0), Domain(0.2, 5.0)), inplace=("igamma_",)),
    OpRow("igammac", lambda m, a, x: m.igammac(a, x),
          (S(T((), grad=False), ()), S(T((3, 4), grad=False), (3, 4)),
           S(T((3, 1), grad=False), (1, 4))),
          domain=(Domain(0.5, 4.0), Domain(0.2, 5.0)), inplace=("igammac_",)),
    OpRow("Tensor.igamma", lambda m, a, x: a.igamma(x), (S(T((3,), grad=False), (3,)),),
          domain=(Domain(0.5, 4.0), Domain(0.2, 5.0)), records=("igamma",)),
    OpRow("Tensor.igammac", lambda m, a, x: a.igammac(x), (S(T((3,), grad=False), (3,)),),
          domain=(Domain(0.5, 4.0), Domain(0.2, 5.0)), records=("igammac",)),
    sp("gammainc", (S(T((3, 4), grad=False), (3, 4)), S(T((2, 1), grad=False), (1, 3))),
       domain=(Domain(0.5, 4.0), Domain(0.2, 5.0)), records=("igamma",)),
    sp("gammaincc", (S(T((3, 4), grad=False), (3, 4)), S(T((2, 1), grad=False), (1, 3))),
       domain=(Domain(0.5, 4.0), Domain(0.2, 5.0)), records=("igammac",)),
    *[sp(name, (S(T((60, 1), grad=False), Const([[0.0, 0.1, 1.0, 3.0, 10.0, 50.0, -1.0, INF,
                                                   NAN, 500.0]])),
                S(Const([[0.0], [-1.0], [INF], [NAN], [1e-3], [1000.0]]),
                  T((1, 5), grad=False))),
         domain=Domain(0.5, 20.0), variant="wide", orders=(), records=(record,))
      for name, record in (("gammainc", "igamma"), ("gammaincc", "igammac"))],
    sp("zeta", (S(T((3, 4), grad=False), (3, 4)), S(T((3, 1), grad=False), (1, 4))),
       domain=(Domain(1.5, 5.0), Domain(0.5, 3.0)), records=("special_zeta",)),
    OpRow("special.zeta", lambda m, q: m.special.zeta(2.5, q), UNARY, variant="number input",
          domain=Domain(0.5, 3.0), records=("special_zeta",), grad_fn=False),
    OpRow("special.zeta", lambda m, s: m.special.zeta(s, 2.0), UNARY, variant="number other",
          domain=Domain(1.5, 5.0), orders=(), records=("special_zeta",), grad_fn=False),
    sp("zeta", (S(Const([[1.0], [1.5], [2.0], [0.5], [-1.0], [INF], [NAN], [30.0]]),
                  Const([[0.0, -1.0, -1.5, 1.0, 0.25, 7.0, INF, NAN, 1e-5]])),),
       variant="points", orders=(), records=("special_zeta",)),
    OpRow("mvlgamma", lambda m, x: m.mvlgamma(x, 2), UNARY, domain=Domain(1.5, 6.0),
          orders=(1, 2, 3), inplace={"mvlgamma_": lambda x: x.mvlgamma_(2)},
          records=("mvlgamma", "mvlgamma_")),
    OpRow("Tensor.mvlgamma", lambda m, x: x.mvlgamma(p=3), (S((5,)),), domain=Domain(1.5, 6.0),
          records=("mvlgamma",)),
    OpRow("special.multigammaln", lambda m, x: m.special.multigammaln(x, 4), UNARY,
          domain=Domain(2.0, 12.0), records=("mvlgamma",)),
    OpRow("special.multigammaln", lambda m, x: m.special.multigammaln(x, 1),
          (S(T((200,), Domain(-30.0, 30.0), grad=False)),), variant="p=1 wide", orders=(),
          records=("mvlgamma",)),
]

# torch.special's names for the elementwise functions, with their records.
ALIASES = [
    sp("digamma", UNARY, domain=POSITIVE, records=("digamma",)),
    sp("psi", UNARY, domain=POSITIVE, records=("digamma",)),
    sp("erf", UNARY, records=("erf",)),
    sp("erfc", UNARY, records=("erfc",)),
    sp("erfinv", UNARY, domain=Domain(-0.9, 0.9), records=("erfinv",)),
    sp("exp2", UNARY, records=("exp2",)),
    sp("expit", UNARY, records=("sigmoid",)),
    sp("expm1", UNARY, records=("expm1",)),
    sp("gammaln", UNARY, domain=POSITIVE, records=("lgamma",)),
    sp("log1p", UNARY, domain=Domain(-0.5, 2.0), records=("log1p",)),
    sp("logit", UNARY, domain=Domain(0.1, 0.9), records=("logit",)),
    OpRow("special.logit", lambda m, x: m.special.logit(x, eps=0.2), (S((8,)),), variant="eps",
          records=("logit",)),
    OpRow("special.polygamma", lambda m, x: m.special.polygamma(2, x), UNARY, domain=POSITIVE,
          records=("polygamma",)),
    sp("round", UNARY, orders=(1,), records=("round_decimals",)),
    OpRow("special.round", lambda m, x: m.special.round(x, decimals=2), (S((5,)),),
          variant="decimals", orders=(1,), records=("round_decimals",)),
    sp("xlogy", BINARY, domain=(REAL, POSITIVE), records=("xlogy",)),
    OpRow("special.xlogy", lambda m, y: m.special.xlogy(2.0, y), UNARY, variant="number input",
          domain=POSITIVE, records=("xlogy",), grad_fn=False),
    OpRow("special.logsumexp", lambda m, x: m.special.logsumexp(x, 1), (S((3, 4)),),
          records=("logsumexp",)),
    OpRow("special.logsumexp", lambda m, x: m.special.logsumexp(x, (0, 1), keepdim=True),
          (S((3, 4)),), variant="keepdim", records=("logsumexp",)),
    OpRow("special.softmax", lambda m, x: m.special.softmax(x, 1), (S((3, 4)),),
          records=("softmax",)),
    OpRow("special.softmax", lambda m, x: m.special.softmax(x, 0, dtype=m.float64),
          (S((3, 4)),), variant="dtype", dtypes=("float32",), records=("softmax",)),
    OpRow("special.log_softmax", lambda m, x: m.special.log_softmax(x, -1), (S((3, 4)),),
          records=("log_softmax",)),
]

# Not differentiated by PyTorch: values only.
J_POINTS = [0.0, -0.0, 1.0, -1.0, 2.5, 4.9, INF, -INF, NAN]
K_POINTS = [0.0, -0.0, 1e-300, 1.0, 2.0, -1.0, 100.0, 700.0, 800.0, INF, -INF, NAN]
NO_GRAD = [
    *[sp(name, (S(T((400,), domain)), S(Const(points))), orders=(),
         records=("special_" + name,))
      for name, domain, points in (
          ("bessel_j0", Domain(-5.0, 5.0), J_POINTS),
          ("bessel_j1", Domain(-5.0, 5.0), J_POINTS),
          ("bessel_y0", Domain(0.05, 5.0), J_POINTS),
          ("bessel_y1", Domain(0.05, 5.0), J_POINTS),
          ("modified_bessel_i0", Domain(-40.0, 40.0), BESSEL_POINTS),
          ("modified_bessel_i1", Domain(-40.0, 40.0), BESSEL_POINTS),
          ("modified_bessel_k0", Domain(0.01, 40.0), K_POINTS),
          ("modified_bessel_k1", Domain(0.01, 40.0), K_POINTS),
          ("scaled_modified_bessel_k0", Domain(0.01, 40.0), K_POINTS),
          ("scaled_modified_bessel_k1", Domain(0.01, 40.0), K_POINTS),
          # Below -2, where Ai oscillates, PyTorch's values are off in the 7th digit: SciPy's
          # agree with mpmath to the last (docs/differences.md).
          ("airy_ai", Domain(-2.0, 10.0), [0.0, 1.0, -1.0, -2.0, 50.0, 200.0, INF, NAN]),
          ("spherical_bessel_j0", Domain(-30.0, 30.0), J_POINTS),
      )],
]
# Above |x| = 5, PyTorch's J and Y are good to about 1e-6 (float32 quality) in float64 too; SciPy's
# agree with mpmath to the last digits (tests/test_special.py): compared in float32 there.
NO_GRAD += [
    sp(name, (S(T((400,), domain)),), variant="large", orders=(), dtypes=("float32",),
       records=("special_" + name,))
    for name, domain in (("bessel_j0", Domain(-60.0, 60.0)), ("bessel_j1", Domain(-60.0, 60.0)),
                         ("bessel_y0", Domain(5.0, 60.0)), ("bessel_y1", Domain(5.0, 60.0)))
]
POLYNOMIAL_NAMES = (
    "chebyshev_polynomial_t", "chebyshev_polynomial_u", "chebyshev_polynomial_v",
    "chebyshev_polynomial_w", "shifted_chebyshev_polynomial_t", "shifted_chebyshev_polynomial_u",
    "shifted_chebyshev_polynomial_v", "shifted_chebyshev_polynomial_w", "hermite_polynomial_h",
    "hermite_polynomial_he", "laguerre_polynomial_l", "legendre_polynomial_p",
)
# n of every kind: negative (0), 0, 1, the recurrence, past PyTorch's switch to cos(n acos x) at
# 6 for Chebyshev, fractional (truncated) and non-finite (0, as PyTorch's cast gives a negative n).
N = Const([[-1.0, 0.0, 1.0, 2.0, 3.0, 5.0, 7.0, 9.0, 2.5, NAN, INF, -INF]])
X_POINTS = Const([[-1.0], [1.0], [0.0], [0.5], [2.0], [NAN]])
POLYNOMIALS = [
    *[sp(name, (S(T((20, 1), Domain(-1.2, 1.2)), N), S(X_POINTS, N),
                S(T((3,), Domain(-1.2, 1.2)), Const(4.0))),
         orders=(), records=("special_" + name,))
      for name in POLYNOMIAL_NAMES],
    OpRow("special.chebyshev_polynomial_t", lambda m, n: m.special.chebyshev_polynomial_t(0.3, n),
          (S(N),), variant="number x", orders=(), records=("special_chebyshev_polynomial_t",)),
    OpRow("special.hermite_polynomial_h", lambda m, x: m.special.hermite_polynomial_h(x, 3),
          (S((4,)),), variant="number n", orders=(), records=("special_hermite_polynomial_h",)),
    sp("legendre_polynomial_p", (S(Const([[0, 1, 2]]), Const([[3], [4]])),), variant="int64",
       orders=(), records=("special_legendre_polynomial_p",)),
]

INTEGER_INPUTS = [
    sp(name, (S(Const([[1, 2, 3]])), S(Const([True, False]))), variant="int64 and bool",
       orders=(), records=(record,))
    for name, record in (("entr", "special_entr"), ("erfcx", "special_erfcx"),
                         ("i0e", "special_i0e"), ("i1", "special_i1"), ("sinc", "sinc"),
                         ("log_ndtr", "special_log_ndtr"), ("bessel_j0", "special_bessel_j0"))
]

ROWS = DIFFERENTIABLE + ALIASES + NO_GRAD + POLYNOMIALS + INTEGER_INPUTS
