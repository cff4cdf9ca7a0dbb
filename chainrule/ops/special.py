"""Special functions (torch.special and the ones torch also has at the top level: i0, sinc,
igamma, igammac, mvlgamma).

NumPy has none of them. Kernels work in float64 and cast back to the result dtype. Most are
computed here from the series, expansions and recurrences cited at each; the Bessel functions J0,
J1, Y0, Y1, K0 and K1 (and the scaled K), Airy's Ai, the incomplete gamma functions and Hurwitz's
zeta come from SciPy, an optional extra (``pip install 'chainrule[special]'``) imported when one
of them is first called.
"""

from __future__ import annotations

import importlib
import math
import warnings

from .._backend import _category, get_default_dtype, xp
from .._dispatch import apply, apply_inplace, bump_version
from ..autograd.grad_mode import is_grad_enabled
from ..tensor import Tensor
from ._registry import defop, not_implemented
from .elementwise import (
    _KERNEL_NAMES,
    ROUND_DECIMALS,
    _erfc,
    _erfinv,
    _float_scalar,
    _lgamma,
    cos,
    digamma,
    erf,
    erfc,
    erfinv,
    exp,
    exp2,
    expm1,
    lgamma,
    log,
    log1p,
    logit,
    polygamma,
    sigmoid,
    sign,
    where,
    xlogy,
)
from .reduction import logsumexp

_SQRT_PI = math.sqrt(math.pi)
_SQRT_2PI = math.sqrt(2 * math.pi)
_SQRT1_2 = math.sqrt(0.5)
_LOG_PI = math.log(math.pi)


# ---- kernels -----------------------------------------------------------------------------------


def _kernel(fn):
    """Run ``fn`` on float64 flat copies of the broadcast inputs, quietly (poles give inf, not
    warnings), and cast the result to the inputs' dtype (the default float one for integers)."""

    def forward(*arrays, **params):
        arrays = [xp.asarray(a) for a in arrays]
        dtype = arrays[0].dtype
        if dtype.kind != "f":
            dtype = get_default_dtype().np
        shape = xp.broadcast_shapes(*(a.shape for a in arrays))
        flat = [xp.broadcast_to(a, shape).astype(xp.float64).reshape(-1) for a in arrays]
        with xp.errstate(all="ignore"):
            out = fn(*flat, **params)
        return xp.asarray(out).reshape(shape).astype(dtype, copy=False)

    forward.__name__ = fn.__name__
    return forward


def _scipy(public: str, name: str, pick=None):
    """A kernel calling ``scipy.special.<name>``; SciPy is imported on the first call."""

    def call(*arrays):
        try:
            special = importlib.import_module("scipy.special")
        except ImportError:
            raise ImportError(
                f"{public} needs SciPy: pip install 'chainrule[special]'") from None
        out = getattr(special, name)(*arrays)
        return out if pick is None else out[pick]

    call.__name__ = name
    return _kernel(call)


@_kernel
def _entr(x):
    # -x log x for x > 0, 0 at 0, -inf below (and nan for nan).
    return xp.where(x > 0, -x * xp.log(x), xp.where(x == 0, 0.0, xp.where(x < 0, -xp.inf, x)))


def _erfcx_fraction(a):
    """erfcx(a) = exp(a^2) erfc(a) for a >= 1: 2a/sqrt(pi) / (b_0 - 1*2/(b_1 - 3*4/(b_2 - ...))),
    b_k = 2a^2 + 4k + 1 (the even part of Laplace's continued fraction, A&S 7.1.14), from a
    depth that converges in float64 on each bin; above 1e8, erfcx(a) = 1/(a sqrt(pi)) to eps."""
    out = 1 / (a * _SQRT_PI)
    for low, high, depth in ((1.0, 2.0, 92), (2.0, 4.0, 29), (4.0, 1e8, 14)):
        m = (a >= low) & (a < high)
        v = a[m]
        z = 2 * v * v
        t = z + (4 * depth + 1)
        for k in range(depth, 0, -1):
            t = (z + (4 * k - 3)) - ((2 * k - 1) * (2 * k)) / t
        out[m] = (2 / _SQRT_PI) * v / t
    return out


def _erfcx_f64(x):
    out = xp.exp(x * x) * _erfc(x)  # below 1: no cancellation (erfc(x) >= 0.15)
    big = x >= 1
    out[big] = _erfcx_fraction(x[big])
    return out


_erfcx = _kernel(_erfcx_f64)


def _log_ndtr_f64(x):
    # log(1 - ndtr(-x)) above 0; below, ndtr(x) = erfcx(-x/sqrt 2) exp(-x^2/2) / 2 in logs, which
    # stays finite where ndtr underflows.
    out = xp.log1p(-0.5 * _erfc(x * _SQRT1_2))
    neg = x < 0
    v = x[neg]
    out[neg] = xp.log(0.5 * _erfcx_f64(-v * _SQRT1_2)) - 0.5 * v * v
    return out


_log_ndtr = _kernel(_log_ndtr_f64)


@_kernel
def _ndtri(p):
    out = xp.where(p == 0, -xp.inf, xp.where(p == 1, xp.inf, xp.nan))
    # sqrt(2) erfinv(2p - 1), with 2p - 1 exact for p >= 1/4 (Sterbenz).
    upper = (p >= 0.25) & (p < 1)
    out[upper] = math.sqrt(2) * _erfinv(2 * p[upper] - 1)
    # The lower tail: Newton's method on log ndtr(x) = log p, whose derivative is
    # sqrt(2/pi) / erfcx(-x/sqrt 2); started from erfinv where 2p - 1 keeps p's first digits, else
    # from the tail asymptotics x ~ -sqrt(t - log t - log 2 pi), t = -2 log p (ndtr(x) ~
    # phi(x) / |x|, solved for x).
    lower = (p > 0) & (p < 0.25)
    q = p[lower]
    t = -2 * xp.log(q)
    x = xp.where(q > 1e-10, math.sqrt(2) * _erfinv(2 * q - 1),
                 -xp.sqrt(xp.maximum(t - xp.log(t) - math.log(2 * math.pi), 0.0)))
    log_q = xp.log(q)
    for _ in range(6):
        x = x - (_log_ndtr_f64(x) - log_q) * _erfcx_f64(-x * _SQRT1_2) / math.sqrt(2 / math.pi)
    out[lower] = x
    return out


def _bessel_i_scaled(x, nu: int):
    """exp(-|x|) I_nu(x) for nu = 0, 1: the power series sum_k (x/2)^(2k+nu) / (k! (k+nu)!)
    (A&S 9.6.10) up to |x| = 30, all terms positive; above, the asymptotic expansion
    exp(-x) I_nu(x) ~ (2 pi x)^(-1/2) sum_k (-1)^k a_k(nu) / x^k,
    a_k = prod_{j<=k} (4 nu^2 - (2j - 1)^2) / (k! 8^k)  (A&S 9.7.1), 30 terms."""
    a = xp.abs(x)
    out = xp.full_like(a, xp.nan)
    small = a <= 30
    s = a[small] / 2
    term = s if nu else xp.ones_like(s)
    total = term.copy()
    for k in range(1, 64):
        term = term * (s * s) / (k * (k + nu))
        total += term
    out[small] = total * xp.exp(-a[small])
    big = a > 30
    y = a[big]
    term = xp.ones_like(y)
    total = term.copy()
    for k in range(1, 31):
        term = term * -(4 * nu * nu - (2 * k - 1) ** 2) / (8 * k * y)
        total += term
    out[big] = total / xp.sqrt(2 * math.pi * y)
    return xp.copysign(out, x) if nu else out


def _bessel_i(x, nu: int):
    return _bessel_i_scaled(x, nu) * xp.exp(xp.abs(x))  # nan at ±inf (0 * inf), as PyTorch


_i0 = _kernel(lambda x: _bessel_i(x, 0))
_i1 = _kernel(lambda x: _bessel_i(x, 1))
_i0e = _kernel(lambda x: _bessel_i_scaled(x, 0))
_i1e = _kernel(lambda x: _bessel_i_scaled(x, 1))


# ---- Bessel functions of order 0 and 1 ----------------------------------------------------------
# PyTorch's kernels: Cephes' rational approximations (below 5) and asymptotic forms (above 5),
# evaluated as PyTorch does, whose asymptotic denominators QQ lack Cephes' implicit leading 1
# (so its values differ from Cephes' by up to ~1e-5 relative near zeros; these are PyTorch's).

_J0_PP = (7.96936729297347051624e-04, 8.28352392107440799803e-02, 1.23953371646414299388e+00,
          5.44725003058768775090e+00, 8.74716500199817011941e+00, 5.30324038235394892183e+00,
          9.99999999999999997821e-01)
_J0_PQ = (9.24408810558863637013e-04, 8.56288474354474431428e-02, 1.25352743901058953537e+00,
          5.47097740330417105182e+00, 8.76190883237069594232e+00, 5.30605288235394617618e+00,
          1.00000000000000000218e+00)
_J0_QP = (-1.13663838898469149931e-02, -1.28252718670509318512e+00, -1.95539544257735972385e+01,
          -9.32060152123768231369e+01, -1.77681167980488050595e+02, -1.47077505154951170175e+02,
          -5.14105326766599330220e+01, -6.05014350600728481186e+00)
_J0_QQ = (6.43178256118178023184e+01, 8.56430025976980587198e+02, 3.88240183605401609683e+03,
          7.24046774195652478189e+03, 5.93072701187316984827e+03, 2.06209331660327847417e+03,
          2.42005740240291393179e+02)
_J0_RP = (-4.79443220978201773821e+09, 1.95617491946556577543e+12, -2.49248344360967716204e+14,
          9.70862251047306323952e+15)
_J0_RQ = (4.99563147152651017219e+02, 1.73785401676374683123e+05, 4.84409658339962045305e+07,
          1.11855537045356834862e+10, 2.11277520115489217587e+12, 3.10518229857422583814e+14,
          3.18121955943204943306e+16, 1.71086294081043136091e+18)
_Y0_YP = (1.55924367855235737965e+04, -1.46639295903971606143e+07, 5.43526477051876500413e+09,
          -9.82136065717911466409e+11, 8.75906394395366999549e+13, -3.46628303384729719441e+15,
          4.42733268572569800351e+16, -1.84950800436986690637e+16)
_Y0_YQ = (1.04128353664259848412e+03, 6.26107330137134956842e+05, 2.68919633393814121987e+08,
          8.64002487103935000337e+10, 2.02979612750105546709e+13, 3.17157752842975028269e+15,
          2.50596256172653059228e+17)
_J1_PP = (7.62125616208173112003e-04, 7.31397056940917570436e-02, 1.12719608129684925192e+00,
          5.11207951146807644818e+00, 8.42404590141772420927e+00, 5.21451598682361504063e+00,
          1.00000000000000000254e+00)
_J1_PQ = (5.71323128072548699714e-04, 6.88455908754495404082e-02, 1.10514232634061696926e+00,
          5.07386386128601488557e+00, 8.39985554327604159757e+00, 5.20982848682361821619e+00,
          9.99999999999999997461e-01)
_J1_QP = (5.10862594750176621635e-02, 4.98213872951233449420e+00, 7.58238284132545283818e+01,
          3.66779609360150777800e+02, 7.10856304998926107277e+02, 5.97489612400613639965e+02,
          2.11688757100572135698e+02, 2.52070205858023719784e+01)
_J1_QQ = (7.42373277035675149943e+01, 1.05644886038262816351e+03, 4.98641058337653607651e+03,
          9.56231892404756170795e+03, 7.99704160447350683650e+03, 2.82619278517639096600e+03,
          3.36093607810698293419e+02)
_J1_RP = (-8.99971225705559398224e+08, 4.52228297998194034323e+11, -7.27494245221818276015e+13,
          3.68295732863852883286e+15)
_J1_RQ = (6.20836478118054335476e+02, 2.56987256757748830383e+05, 8.35146791431949253037e+07,
          2.21511595479792499675e+10, 4.74914122079991414898e+12, 7.84369607876235854894e+14,
          8.95222336184627338078e+16, 5.32278620332680085395e+18)
_Y1_YP = (1.26320474790178026440e+09, -6.47355876379160291031e+11, 1.14509511541823727583e+14,
          -8.12770255501325109621e+15, 2.02439475713594898196e+17, -7.78877196265950026825e+17)
_Y1_YQ = (5.94301592346128195359e+02, 2.35564092943068577943e+05, 7.34811944459721705660e+07,
          1.87601316108706159478e+10, 3.88231277496238566008e+12, 6.20557727146953693363e+14,
          6.87141087355300489866e+16, 3.97270608116560655612e+18)
_SQRT_2_OVER_PI = 0.797884560802865355879892119868763737
_TWO_OVER_PI = 0.636619772367581343075535053490057448


def _horner(coefficients, z):
    out = xp.zeros_like(z)
    for c in coefficients:
        out = out * z + c
    return out


def _bessel_asymptotic(x, z, order: int, second_kind: bool):
    """The x > 5 form of J_order / Y_order, z = (5/x)^2 as PyTorch computes it."""
    pp, pq, qp, qq = (_J0_PP, _J0_PQ, _J0_QP, _J0_QQ) if order == 0 else \
        (_J1_PP, _J1_PQ, _J1_QP, _J1_QQ)
    p = _horner(pp, z) / _horner(pq, z)
    q = 5.0 / x * (_horner(qp, z) / _horner(qq, z))
    phase = x - (0.785398163397448309615660845819875721 if order == 0
                 else 2.356194490192344928846982537459627163)
    value = p * xp.sin(phase) + q * xp.cos(phase) if second_kind \
        else p * xp.cos(phase) - q * xp.sin(phase)
    return value * _SQRT_2_OVER_PI / xp.sqrt(x)


def _j0_values(x):
    x = xp.abs(x)
    x2 = x * x
    small = (x2 - 5.78318596294678452118e+00) * (x2 - 3.04712623436620863991e+01) \
        * _horner(_J0_RP, x2) / _horner(_J0_RQ, x2)
    small = xp.where(x < 1e-5, 1.0 - x2 / 4.0, small)
    return xp.where(x <= 5.0, small, _bessel_asymptotic(x, 25.0 / x2, 0, False))


def _j1_values(x):
    sign = xp.where(x < 0, -1.0, 1.0)
    x = xp.abs(x)
    x2 = x * x
    small = _horner(_J1_RP, x2) / _horner(_J1_RQ, x2) * x \
        * (x2 - 1.46819706421238932572e+01) * (x2 - 4.92184563216946036703e+01)
    w = 5.0 / x
    return sign * xp.where(x <= 5.0, small, _bessel_asymptotic(x, w * w, 1, False))


def _y0_values(x):
    x2 = x * x
    small = _horner(_Y0_YP, x2) / _horner(_Y0_YQ, x2) + _TWO_OVER_PI * xp.log(x) * _j0_values(x)
    small = xp.where(x == 0, -xp.inf, xp.where(x < 0, xp.nan, small))
    return xp.where(x <= 5.0, small, _bessel_asymptotic(x, 25.0 / x2, 0, True))


def _y1_values(x):
    x2 = x * x
    small = x * (_horner(_Y1_YP, x2) / _horner(_Y1_YQ, x2)) \
        + _TWO_OVER_PI * (_j1_values(x) * xp.log(x) - 1.0 / x)
    small = xp.where(x == 0, -xp.inf, xp.where(x < 0, xp.nan, small))
    w = 5.0 / x
    return xp.where(x <= 5.0, small, _bessel_asymptotic(x, w * w, 1, True))


_bessel_j0 = _kernel(_j0_values)
_bessel_j1 = _kernel(_j1_values)
_bessel_y0 = _kernel(_y0_values)
_bessel_y1 = _kernel(_y1_values)


@_kernel
def _sinc(x):
    px = math.pi * x
    return xp.where(x == 0, 1.0, xp.sin(px) / px)


@_kernel
def _spherical_bessel_j0(x):
    return xp.where(xp.isinf(x), 0.0, xp.where(x == 0, 1.0, xp.sin(x) / x))


@_kernel
def _xlog1py(input, other):
    out = input * xp.log1p(other)
    return xp.where((input == 0) & ~xp.isnan(other), 0.0, out)


@_kernel
def _mvlgamma(input, p):
    # log of the multivariate gamma function: p(p-1)/4 log pi + sum_{j<p} lgamma(x - j/2)
    return p * (p - 1) / 4 * _LOG_PI + sum(_lgamma(input - j / 2) for j in range(p))


def _polynomial(first, step):
    """A polynomial family from P_0 = 1, P_1 = first(x) and P_{k+1} = step(k, x, P_k, P_{k-1});
    n is truncated to an integer, as PyTorch does; a negative or non-finite n gives 0."""

    def forward(x, n):
        n = xp.where(xp.isfinite(n), xp.trunc(n), -1.0)
        out = xp.where(n < 0, 0.0, 1.0)
        prev, cur = xp.ones_like(x), first(x)
        out = xp.where(n == 1, cur, out)
        top = int(n.max(initial=0)) if n.size else 0
        for k in range(1, top):
            prev, cur = cur, step(k, x, cur, prev)
            out = xp.where(n == k + 1, cur, out)
        return out

    return _kernel(forward)


def _three_term(k, x, cur, prev):
    return 2 * x * cur - prev


def _shifted(family):
    return lambda k, x, cur, prev: family(k, 2 * x - 1, cur, prev)


_chebyshev_t = _polynomial(lambda x: x, _three_term)
_chebyshev_u = _polynomial(lambda x: 2 * x, _three_term)
_chebyshev_v = _polynomial(lambda x: 2 * x - 1, _three_term)
_chebyshev_w = _polynomial(lambda x: 2 * x + 1, _three_term)
_shifted_chebyshev_t = _polynomial(lambda x: 2 * x - 1, _shifted(_three_term))
_shifted_chebyshev_u = _polynomial(lambda x: 4 * x - 2, _shifted(_three_term))
_shifted_chebyshev_v = _polynomial(lambda x: 4 * x - 3, _shifted(_three_term))
_shifted_chebyshev_w = _polynomial(lambda x: 4 * x - 1, _shifted(_three_term))
# Physicists' and probabilists' Hermite, Laguerre and Legendre recurrences (A&S 22.7.13, 22.7.14,
# 22.7.12, 22.7.10).
_hermite_h = _polynomial(lambda x: 2 * x, lambda k, x, cur, prev: 2 * x * cur - 2 * k * prev)
_hermite_he = _polynomial(lambda x: x, lambda k, x, cur, prev: x * cur - k * prev)
_laguerre_l = _polynomial(
    lambda x: 1 - x, lambda k, x, cur, prev: ((2 * k + 1 - x) * cur - k * prev) / (k + 1))
_legendre_p = _polynomial(
    lambda x: x, lambda k, x, cur, prev: ((2 * k + 1) * x * cur - k * prev) / (k + 1))


# ---- records -----------------------------------------------------------------------------------


def _unary(name: str, forward, rule, **kwargs):
    return defop(name, forward, ("input",), (rule,), float_out=True, jvp="elementwise", **kwargs)


def _no_grad(name: str, forward, inputs=("input",)):
    """A record PyTorch does not differentiate: its result never requires grad."""
    return defop(name, forward, inputs, (None,) * len(inputs), promote=True, float_out=True,
                 differentiable=False, batch="elementwise")


def _nonzero(x):
    """x, with 1 where x is 0: a divisor for a branch that where() replaces at 0 (no 0/0 in the
    derivatives of the rule either)."""
    return where(x == 0, 1.0, x)


ENTR = _unary("special_entr", _entr, lambda g, input: g * -(log(input) + 1))
ERFCX = _unary("special_erfcx", _erfcx,
               lambda g, input, out: g * (2 * input * out - 2 / _SQRT_PI))
LOG_NDTR = _unary("special_log_ndtr", _log_ndtr,
                  lambda g, input, out: g * exp(-(out + input * input / 2)) / _SQRT_2PI)
NDTRI = _unary("special_ndtri", _ndtri, lambda g, out: g * (_SQRT_2PI * exp(out * out / 2)))
I0 = _unary("i0", _i0, lambda g, input: g * i1(input))
I0E = _unary("special_i0e", _i0e, lambda g, input, out: g * (i1e(input) - sign(input) * out),
             backward_name="SpecialI0EBackward0")
# I1' = I0 - I1/x, and 1/2 at 0 (A&S 9.6.27).
I1 = _unary("special_i1", _i1, lambda g, input, out: g * where(
    input == 0, 0.5, i0(input) - out / _nonzero(input)))
I1E = _unary("special_i1e", _i1e, lambda g, input, out: g * where(
    input == 0, 0.5, i0e(input) - out * (sign(input) + 1 / _nonzero(input))),
    backward_name="SpecialI1EBackward0")


def _sinc_grad(g, input, out):
    # (cos(pi x) - sinc(x)) / x, by its Taylor series -pi^2 x/3 + pi^4 x^3/30 near 0 (so the
    # second derivative there is -pi^2/3; PyTorch's is nan at 0).
    near = input.abs() < 1e-3
    series = (math.pi**2 / 3) * input * ((math.pi**2 / 10) * input * input - 1)
    return g * where(near, series, (cos(math.pi * input) - out) / _nonzero(input))


SINC = _unary("sinc", _sinc, _sinc_grad)
MVLGAMMA = _unary("mvlgamma", _mvlgamma, lambda g, input, p: g * sum(
    digamma(input - j / 2) for j in range(p)))
MVLGAMMA_ = _unary("mvlgamma_", _mvlgamma, lambda g, input, p: g * sum(
    digamma(input - j / 2) for j in range(p)), backward_name="MvlgammaBackward0")

# As PyTorch (derivatives.yaml): d/dinput is 0 where input = 0 and other <= -1.
XLOG1PY = defop(
    "special_xlog1py",
    _xlog1py,
    ("input", "other"),
    (
        lambda g, input, other: where((input == 0) & (other <= -1), 0.0,
                                      apply(XLOG1PY, g, other)),
        lambda g, input, other: g * input / (other + 1),
    ),
    promote=True,
    float_out=True,
    jvp="elementwise",
    backward_name="SpecialXlog1PyBackward0",
)


def _igamma_density(input, other):
    """d/dx P(a, x) = x^(a-1) exp(-x) / Gamma(a)  (DLMF 8.8.13)."""
    return exp((input - 1) * log(other) - other - lgamma(input))


def _igamma_edges(a, x, out, upper: bool):
    """PyTorch's values where one argument is nan: 0 at x = 0 and at a = inf (x finite), 1 at
    x = inf (a finite) for P; the reverse for Q."""
    valid = ~((x < 0) | (a < 0) | (a == 0))
    low, high = (1.0, 0.0) if upper else (0.0, 1.0)
    out = xp.where(valid & (x == 0), low, out)
    out = xp.where(valid & (x != 0) & xp.isposinf(a) & ~xp.isinf(x), low, out)
    return xp.where(valid & (x != 0) & ~xp.isinf(a) & xp.isposinf(x), high, out)


def _with_edges(kernel, edges, **kwargs):
    def forward(*arrays):
        out = kernel(*arrays)
        return edges(*(xp.asarray(a) for a in arrays), out, **kwargs).astype(out.dtype)

    forward.__name__ = kernel.__name__
    return forward


def _zeta_edges(s, q, out):
    return xp.where(xp.isposinf(q) & (s != 1), xp.nan, out)  # PyTorch's nan (SciPy: 0)


IGAMMA = defop(
    "igamma",
    _with_edges(_scipy("torch.igamma", "gammainc"), _igamma_edges, upper=False),
    ("input", "other"),
    (not_implemented("igamma: input"), lambda g, input, other: g * _igamma_density(input, other)),
    promote=True,
    float_out=True,
    batch="elementwise",  # and no JVP rule: PyTorch has no forward mode for it
)
IGAMMAC = defop(
    "igammac",
    _with_edges(_scipy("torch.igammac", "gammaincc"), _igamma_edges, upper=True),
    ("input", "other"),
    (not_implemented("igammac: input"),
     lambda g, input, other: g * -_igamma_density(input, other)),
    promote=True,
    float_out=True,
    batch="elementwise",  # and no JVP rule: PyTorch has no forward mode for it
)
# d/dq zeta(s, q) = -s zeta(s + 1, q); none in s, as in PyTorch.
ZETA = defop(
    "special_zeta",
    _with_edges(_scipy("torch.special.zeta", "zeta"), _zeta_edges),
    ("input", "other"),
    (not_implemented("zeta"), lambda g, input, other: g * -input * zeta(input + 1, other)),
    promote=True,
    float_out=True,
    batch="elementwise",  # and no JVP rule: PyTorch has no forward mode for it
)

_SCIPY_UNARY = {
    "modified_bessel_k0": "k0", "modified_bessel_k1": "k1",
    "scaled_modified_bessel_k0": "k0e", "scaled_modified_bessel_k1": "k1e",
}
NO_GRAD_UNARY = {
    name: _no_grad("special_" + name, _scipy("torch.special." + name, fn))
    for name, fn in _SCIPY_UNARY.items()
}
NO_GRAD_UNARY.update(
    bessel_j0=_no_grad("special_bessel_j0", _bessel_j0),
    bessel_j1=_no_grad("special_bessel_j1", _bessel_j1),
    bessel_y0=_no_grad("special_bessel_y0", _bessel_y0),
    bessel_y1=_no_grad("special_bessel_y1", _bessel_y1),
    airy_ai=_no_grad("special_airy_ai", _scipy("torch.special.airy_ai", "airy", pick=0)),
    modified_bessel_i0=_no_grad("special_modified_bessel_i0", _i0),
    modified_bessel_i1=_no_grad("special_modified_bessel_i1", _i1),
    spherical_bessel_j0=_no_grad("special_spherical_bessel_j0", _spherical_bessel_j0),
)
POLYNOMIALS = {
    name: _no_grad("special_" + name, kernel, ("input", "n"))
    for name, kernel in (
        ("chebyshev_polynomial_t", _chebyshev_t), ("chebyshev_polynomial_u", _chebyshev_u),
        ("chebyshev_polynomial_v", _chebyshev_v), ("chebyshev_polynomial_w", _chebyshev_w),
        ("shifted_chebyshev_polynomial_t", _shifted_chebyshev_t),
        ("shifted_chebyshev_polynomial_u", _shifted_chebyshev_u),
        ("shifted_chebyshev_polynomial_v", _shifted_chebyshev_v),
        ("shifted_chebyshev_polynomial_w", _shifted_chebyshev_w),
        ("hermite_polynomial_h", _hermite_h), ("hermite_polynomial_he", _hermite_he),
        ("laguerre_polynomial_l", _laguerre_l), ("legendre_polynomial_p", _legendre_p),
    )
}


# ---- argument checks and out= ------------------------------------------------------------------


def _require_tensor(fn: str, name: str, position: int, value) -> None:
    if not isinstance(value, Tensor):
        raise TypeError(f"{fn}(): argument '{name}' (position {position}) must be Tensor, not "
                        f"{type(value).__name__}")


def _tensor_or_number(fn: str, input, other, names=("input", "other")):
    """The (Tensor, Tensor), (Number, Tensor) and (Tensor, Number) forms: the number becomes a
    0-dim tensor of the other's float dtype."""
    if isinstance(input, Tensor) and isinstance(other, Tensor):
        return input, other
    if isinstance(other, Tensor):
        return _float_scalar(input, other), other
    if isinstance(input, Tensor):
        return input, _float_scalar(other, input)
    raise TypeError(
        f"{fn}() received an invalid combination of arguments - got "
        f"({type(input).__name__}, {type(other).__name__}), but expected one of:\n"
        f" * (Tensor {names[0]}, Tensor {names[1]}, *, Tensor out = None)\n"
        f" * (Number {'self' if names[0] == 'input' else names[0]}, Tensor {names[1]}, *, "
        f"Tensor out = None)\n"
        f" * (Tensor {names[0]}, Number {names[1]}, *, Tensor out = None)\n")


def _check_out(fn: str, out, *inputs) -> None:
    if out is None:
        return
    _require_tensor(fn, "out", len(inputs) + 1, out)
    if is_grad_enabled() and any(isinstance(t, Tensor) and t.requires_grad
                                 for t in inputs + (out,)):
        raise RuntimeError(f"{fn}(): functions with out=... arguments don't support automatic "
                           "differentiation, but one of the arguments requires grad.")


def _write_out(result: Tensor, out):
    """``result`` written into ``out`` (resized, with PyTorch's warning, if its shape differs)."""
    if out is None:
        return result
    array = result._data
    if _category(array.dtype) > _category(out._data.dtype):
        raise RuntimeError(
            f"result type {_KERNEL_NAMES[array.dtype.name]} can't be cast to the desired output "
            f"type {_KERNEL_NAMES[out._data.dtype.name]}")
    if out._data.shape != array.shape:
        if out._data.size:
            warnings.warn(
                f"An output with one or more elements was resized since it had shape "
                f"{list(out._data.shape)}, which does not match the required output shape "
                f"{list(array.shape)}. This behavior is deprecated, and in a future PyTorch "
                f"release outputs will not be resized unless they have zero elements. You can "
                f"explicitly reuse an out tensor t by resizing it, inplace, to zero elements with "
                f"t.resize_(0).", UserWarning, stacklevel=3)
        out._data = xp.empty(array.shape, out._data.dtype)
    out._data[...] = array
    bump_version(out)
    return out


def _unary_call(op, fn: str, input, out, **params) -> Tensor:
    _require_tensor(fn, "input", 1, input)
    _check_out(fn, out, input)
    return _write_out(apply(op, input, **params), out)


def _binary_call(op, fn: str, input, other, out) -> Tensor:
    _require_tensor(fn, "input", 1, input)
    _require_tensor(fn, "other", 2, other)
    _check_out(op.name, out, input, other)
    return _write_out(apply(op, input, other), out)


# ---- public functions: the new records ---------------------------------------------------------


def i0(input, *, out=None) -> Tensor:
    """The modified Bessel function of the first kind of order 0, elementwise."""
    return _unary_call(I0, "i0", input, out)


def i0e(input, *, out=None) -> Tensor:
    """exp(-|input|) * i0(input), without overflow."""
    return _unary_call(I0E, "special_i0e", input, out)


def i1(input, *, out=None) -> Tensor:
    """The modified Bessel function of the first kind of order 1, elementwise."""
    return _unary_call(I1, "special_i1", input, out)


def i1e(input, *, out=None) -> Tensor:
    """exp(-|input|) * i1(input), without overflow."""
    return _unary_call(I1E, "special_i1e", input, out)


def sinc(input, *, out=None) -> Tensor:
    """The normalized sinc function sin(pi x) / (pi x), 1 at 0."""
    if out is None and isinstance(input, Tensor) and input.is_complex():
        scaled = input * math.pi
        safe = where(input == 0, 1.0, scaled)
        return where(input == 0, 1.0, safe.sin() / safe)
    return _unary_call(SINC, "sinc", input, out)


def entr(input, *, out=None) -> Tensor:
    """-input * log(input): 0 at 0, -inf for negative input."""
    return _unary_call(ENTR, "special_entr", input, out)


def erfcx(input, *, out=None) -> Tensor:
    """The scaled complementary error function exp(input**2) * erfc(input)."""
    return _unary_call(ERFCX, "special_erfcx", input, out)


def log_ndtr(input, *, out=None) -> Tensor:
    """The log of the standard normal CDF, accurate in the lower tail."""
    return _unary_call(LOG_NDTR, "special_log_ndtr", input, out)


def ndtri(input, *, out=None) -> Tensor:
    """The inverse of the standard normal CDF (its quantile function)."""
    return _unary_call(NDTRI, "special_ndtri", input, out)


def ndtr(input, *, out=None) -> Tensor:
    """The standard normal CDF."""
    _require_tensor("special_ndtr", "input", 1, input)
    # PyTorch's composite: (1 + erf(x / sqrt 2)) / 2.
    return _write_out((1 + erf(input * _SQRT1_2)) * 0.5, out)


def mvlgamma(input, p: int, *, out=None) -> Tensor:
    """The log of the multivariate gamma function of dimension p, elementwise."""
    _require_tensor("mvlgamma", "input", 1, input)
    _check_mvlgamma(p)
    _check_out("mvlgamma", out, input)
    return _write_out(apply(MVLGAMMA, input, p=p), out)


def _check_mvlgamma(p: int) -> None:
    if p < 1:
        raise RuntimeError("p has to be greater than or equal to 1")


def igamma(input, other, *, out=None) -> Tensor:
    """The regularized lower incomplete gamma function P(input, other)."""
    return _binary_call(IGAMMA, "igamma", input, other, out)


def igammac(input, other, *, out=None) -> Tensor:
    """The regularized upper incomplete gamma function Q(input, other) = 1 - P(input, other)."""
    return _binary_call(IGAMMAC, "igammac", input, other, out)


def xlog1py(input, other, *, out=None) -> Tensor:
    """input * log1p(other), with 0 where input is 0 (unless other is nan)."""
    input, other = _tensor_or_number("special_xlog1py", input, other)
    _check_out("special_xlog1py", out, input, other)
    return _write_out(apply(XLOG1PY, input, other), out)


def zeta(input, other, *, out=None) -> Tensor:
    """The Hurwitz zeta function sum_k (other + k) ** -input."""
    input, other = _tensor_or_number("special_zeta", input, other)
    _check_out("special_zeta", out, input, other)
    return _write_out(apply(ZETA, input, other), out)


def _no_grad_unary(name: str):
    op = NO_GRAD_UNARY[name]

    def fn(input, *, out=None) -> Tensor:
        _require_tensor("special_" + name, "input", 1, input)
        return _write_out(apply(op, input), out)

    fn.__name__ = fn.__qualname__ = name
    return fn


# PyTorch's documented `input` is `x` in the signature of these (and of the polynomials).
def _no_grad_unary_x(name: str):
    op = NO_GRAD_UNARY[name]

    def fn(x, *, out=None) -> Tensor:
        _require_tensor("special_" + name, "x", 1, x)
        return _write_out(apply(op, x), out)

    fn.__name__ = fn.__qualname__ = name
    return fn


def _polynomial_fn(name: str):
    op = POLYNOMIALS[name]

    def fn(x, n, *, out=None) -> Tensor:
        x, n = _tensor_or_number("special_" + name, x, n, names=("x", "n"))
        return _write_out(apply(op, x, n), out)

    fn.__name__ = fn.__qualname__ = name
    return fn


_BESSEL_DOCS = {
    "airy_ai": "The Airy function Ai, elementwise.",
    "bessel_j0": "The Bessel function of the first kind of order 0, elementwise.",
    "bessel_j1": "The Bessel function of the first kind of order 1, elementwise.",
    "bessel_y0": "The Bessel function of the second kind of order 0, elementwise.",
    "bessel_y1": "The Bessel function of the second kind of order 1, elementwise.",
    "modified_bessel_i0": "The modified Bessel function of the first kind of order 0.",
    "modified_bessel_i1": "The modified Bessel function of the first kind of order 1.",
    "modified_bessel_k0": "The modified Bessel function of the second kind of order 0.",
    "modified_bessel_k1": "The modified Bessel function of the second kind of order 1.",
    "scaled_modified_bessel_k0": "exp(x) * modified_bessel_k0(x).",
    "scaled_modified_bessel_k1": "exp(x) * modified_bessel_k1(x).",
    "spherical_bessel_j0": "The spherical Bessel function of the first kind of order 0.",
}
_POLYNOMIAL_DOCS = {
    "chebyshev_polynomial_t": "Chebyshev", "chebyshev_polynomial_u": "Chebyshev",
    "chebyshev_polynomial_v": "Chebyshev", "chebyshev_polynomial_w": "Chebyshev",
    "shifted_chebyshev_polynomial_t": "shifted Chebyshev",
    "shifted_chebyshev_polynomial_u": "shifted Chebyshev",
    "shifted_chebyshev_polynomial_v": "shifted Chebyshev",
    "shifted_chebyshev_polynomial_w": "shifted Chebyshev",
    "hermite_polynomial_h": "physicists' Hermite", "hermite_polynomial_he": "probabilists' Hermite",
    "laguerre_polynomial_l": "Laguerre", "legendre_polynomial_p": "Legendre",
}


def _generated() -> dict:
    out = {}
    for name, doc in _BESSEL_DOCS.items():
        x = name in ("airy_ai", "spherical_bessel_j0") or name.startswith("scaled")
        out[name] = (_no_grad_unary_x if x else _no_grad_unary)(name)
        out[name].__doc__ = doc
    for name, kind in _POLYNOMIAL_DOCS.items():
        out[name] = _polynomial_fn(name)
        letter = name.rsplit("_", 1)[1].upper()
        out[name].__doc__ = f"The {kind} polynomial {letter}_n(x), n truncated to an integer."
    return out


# ---- torch.special's other names, with out= ----------------------------------------------------


def _alias(fn, special_name: str, out_name: str, doc: str):
    def alias(input, *, out=None) -> Tensor:
        _require_tensor("special_" + special_name, "input", 1, input)
        _check_out(out_name, out, input)
        return _write_out(fn(input), out)

    alias.__name__ = alias.__qualname__ = special_name
    alias.__doc__ = doc
    return alias


_ALIASES = {
    name: _alias(fn, name, out_name, fn.__doc__)
    for name, fn, out_name in (
        ("digamma", digamma, "digamma"), ("psi", digamma, "digamma"), ("erf", erf, "erf"),
        ("erfc", erfc, "erfc"), ("erfinv", erfinv, "erfinv"), ("exp2", exp2, "exp2"),
        ("expit", sigmoid, "sigmoid"), ("expm1", expm1, "expm1"),
        ("gammaln", lgamma, "lgamma"), ("log1p", log1p, "log1p"),
    )
}


def special_logit(input, eps: float | None = None, *, out=None) -> Tensor:
    """log(input / (1 - input)), with input clamped to [eps, 1 - eps] when eps is given."""
    _require_tensor("special_logit", "input", 1, input)
    _check_out("logit", out, input)
    return _write_out(logit(input, eps), out)


def special_polygamma(n: int, input, *, out=None) -> Tensor:
    """The n-th derivative of the digamma function, elementwise."""
    _require_tensor("special_polygamma", "input", 2, input)
    _check_out("polygamma", out, input)
    return _write_out(polygamma(n, input), out)


def multigammaln(input, p: int, *, out=None) -> Tensor:
    """The log of the multivariate gamma function of dimension p, elementwise."""
    _require_tensor("special_multigammaln", "input", 1, input)
    return mvlgamma(input, p, out=out)


def gammainc(input, other, *, out=None) -> Tensor:
    """The regularized lower incomplete gamma function P(input, other)."""
    return _binary_call(IGAMMA, "special_gammainc", input, other, out)


def gammaincc(input, other, *, out=None) -> Tensor:
    """The regularized upper incomplete gamma function Q(input, other) = 1 - P(input, other)."""
    return _binary_call(IGAMMAC, "special_gammaincc", input, other, out)


def special_xlogy(input, other, *, out=None) -> Tensor:
    """input * log(other), with 0 where input is 0 (unless other is nan)."""
    input, other = _tensor_or_number("special_xlogy", input, other)
    _check_out("xlogy", out, input, other)
    return _write_out(xlogy(input, other), out)


def special_round(input, *, decimals: int = 0, out=None) -> Tensor:
    """input rounded to ``decimals`` decimal places (halves to even)."""
    _require_tensor("special_round", "input", 1, input)
    _check_out("round", out, input)
    return _write_out(apply(ROUND_DECIMALS, input, decimals=decimals), out)


def special_logsumexp(input, dim, keepdim: bool = False, *, out=None) -> Tensor:
    """log(sum(exp(input))) over ``dim``, computed without overflow."""
    _require_tensor("special_logsumexp", "input", 1, input)
    _check_out("logsumexp", out, input)
    return _write_out(logsumexp(input, dim, keepdim), out)


# ---- tables ------------------------------------------------------------------------------------

# torch.special (chainrule/special.py adds softmax and log_softmax, from the activation family).
SPECIAL = {
    **_ALIASES,
    **_generated(),
    "entr": entr, "erfcx": erfcx, "gammainc": gammainc, "gammaincc": gammaincc, "i0": i0,
    "i0e": i0e, "i1": i1, "i1e": i1e, "log_ndtr": log_ndtr, "logit": special_logit,
    "logsumexp": special_logsumexp, "multigammaln": multigammaln, "ndtr": ndtr, "ndtri": ndtri,
    "polygamma": special_polygamma, "round": special_round, "sinc": sinc, "xlog1py": xlog1py,
    "xlogy": special_xlogy, "zeta": zeta,
}
FUNCTIONS = {f.__name__: f for f in (i0, sinc, igamma, igammac, mvlgamma)}


def _i0_(self) -> Tensor:
    return apply_inplace(I0, self)


def _sinc_(self) -> Tensor:
    return apply_inplace(SINC, self)


def _igamma_(self, other) -> Tensor:
    _require_tensor("igamma_", "other", 1, other)
    return apply_inplace(IGAMMA, self, other)


def _igammac_(self, other) -> Tensor:
    _require_tensor("igammac_", "other", 1, other)
    return apply_inplace(IGAMMAC, self, other)


def _mvlgamma_(self, p: int) -> Tensor:
    _check_mvlgamma(p)
    return apply_inplace(MVLGAMMA_, self, p=p)


# Tensor methods and their in-place variants.
METHODS = {
    **FUNCTIONS, "i0_": _i0_, "sinc_": _sinc_, "igamma_": _igamma_, "igammac_": _igammac_,
    "mvlgamma_": _mvlgamma_,
}
