"""Standard Gamma samples with an implicit reparameterization gradient.

A Gamma(alpha, 1) sample x = F^{-1}(u; alpha) has, holding u fixed, the pathwise derivative
dx/dalpha = -(dF/dalpha) / (dF/dx) (implicit reparameterization: Figurnov, Mohamed and Mnih,
"Implicit Reparameterization Gradients", NeurIPS 2018; PyTorch's `_standard_gamma_grad`
approximates the same quantity, Jankowiak and Obermeyer, "Pathwise Derivatives Beyond the
Reparameterization Trick", ICML 2018).

F is the regularized lower incomplete gamma function P(alpha, x) = sum_n x^(alpha+n) e^-x /
Gamma(alpha+n+1) (Abramowitz and Stegun 6.5.29). Dividing its derivative in alpha term by term
by the density x^(alpha-1) e^-x / Gamma(alpha) gives

    dx/dalpha = -sum_n r_n (log x - digamma(alpha+n+1)),
    r_n = x^(n+1) / (alpha (alpha+1)...(alpha+n))

which we sum exactly (enough terms to pass the peak of r_n). For alpha > 50 the series would
need too many terms; there the Wilson-Hilferty approximation (Wilson and Hilferty 1931:
(x/alpha)^(1/3) is close to normal with mean 1 - 1/(9 alpha) and variance 1/(9 alpha)) is
accurate to O(1/alpha), and we differentiate x = alpha c^3, c = 1 - 1/(9 alpha) + z/(3 sqrt
alpha), holding the normal deviate z fixed.
"""

from __future__ import annotations

from chainrule.autograd import once_differentiable

from .. import autograd
from .._backend import xp
from .._creation import from_numpy
from ..ops.elementwise import digamma, exp, lgamma, log
from ..ops.shape import broadcast_tensors
from .utils import draw, finfo

_SERIES_MAX_ALPHA = 50.0


def standard_gamma_grad(alpha, x):
    """dx/dalpha of a standard Gamma sample x at concentration alpha (arrays, float64)."""
    alpha = xp.asarray(alpha, dtype=xp.float64)
    x = xp.maximum(xp.asarray(x, dtype=xp.float64), 1e-300)
    alpha, x = xp.broadcast_arrays(alpha, x)
    out = xp.empty(alpha.shape)
    small = alpha <= _SERIES_MAX_ALPHA
    if small.any():
        out[small] = _series(alpha[small], x[small])
    if (~small).any():
        out[~small] = _wilson_hilferty(alpha[~small], x[~small])
    return out


def _series(a, x):
    n_terms = int(xp.ceil(x.max() + 10 * xp.sqrt(x.max()) + 30))
    log_x = xp.log(x)
    psi = digamma(from_numpy(a + 1.0)).numpy()  # digamma(a + n + 1) at n = 0
    r = x / a
    total = r * (log_x - psi)
    for n in range(1, n_terms):
        psi = psi + 1.0 / (a + n)
        r = r * x / (a + n)
        total = total + r * (log_x - psi)
    return -total


def _wilson_hilferty(a, x):
    c = xp.cbrt(x / a)
    z = 3 * xp.sqrt(a) * (c - 1 + 1 / (9 * a))
    dc = 1 / (9 * a**2) - z / (6 * a**1.5)
    return c**3 + 3 * a * c**2 * dc


class _StandardGamma(autograd.Function):
    @staticmethod
    def forward(ctx, concentration):
        x = draw("standard_gamma", concentration.shape, concentration.dtype, concentration)
        x = x.clamp(min=float(finfo(concentration.dtype).tiny))
        ctx.save_for_backward(concentration, x)
        return x

    @staticmethod
    @once_differentiable  # the derivative is computed on arrays, as PyTorch's (no second order)
    def backward(ctx, grad):
        concentration, x = ctx.saved_tensors
        dx = standard_gamma_grad(concentration.detach().numpy(), x.detach().numpy())
        return grad * from_numpy(dx).to(concentration.dtype)


def standard_gamma(concentration):
    """Gamma(concentration, 1) samples of concentration's shape, differentiable in it."""
    return _StandardGamma.apply(concentration)


def _lgamma(a):
    return lgamma(from_numpy(xp.asarray(a, dtype=xp.float64))).numpy()


def regularized_gamma_p(a, x, iterations: int = 400):
    """P(a, x), the regularized lower incomplete gamma function (arrays, float64): its power
    series below x = a + 1 and the continued fraction of Q = 1 - P above (Numerical Recipes,
    3rd ed., section 6.2, `gser` and `gcf` with Lentz's method)."""
    a, x = xp.broadcast_arrays(xp.asarray(a, dtype=xp.float64), xp.asarray(x, dtype=xp.float64))
    x = xp.maximum(x, 0.0)
    with xp.errstate(divide="ignore", invalid="ignore"):
        log_prefactor = a * xp.log(x) - x - _lgamma(a)
    out = xp.zeros(a.shape)
    series = x < a + 1
    if series.any():
        aa, xx = a[series], x[series]
        term = 1.0 / aa
        total = term.copy()
        for n in range(1, iterations):
            term = term * xx / (aa + n)
            total = total + term
        out[series] = total * xp.exp(log_prefactor[series])
    cf = ~series
    if cf.any():
        aa, xx = a[cf], x[cf]
        tiny = 1e-300
        b = xx + 1 - aa
        c = xp.full(aa.shape, 1 / tiny)
        d = 1 / b
        h = d.copy()
        for i in range(1, iterations):
            an = -i * (i - aa)
            b = b + 2
            d = an * d + b
            d = xp.where(xp.abs(d) < tiny, tiny, d)
            c = b + an / c
            c = xp.where(xp.abs(c) < tiny, tiny, c)
            d = 1 / d
            h = h * d * c
        out[cf] = 1 - xp.exp(log_prefactor[cf]) * h
    return xp.where(x == 0, 0.0, out)


class _GammaP(autograd.Function):
    @staticmethod
    def forward(ctx, a, x):
        ctx.save_for_backward(a, x)
        p = regularized_gamma_p(a.detach().numpy(), x.detach().numpy())
        return from_numpy(p).to(x.dtype)

    @staticmethod
    @once_differentiable  # d/da is computed on arrays (and PyTorch has no d/da at all)
    def backward(ctx, grad):
        a, x = ctx.saved_tensors
        # dP/dx is the Gamma(a, 1) density; dP/da = -density * dx/da (implicit function theorem
        # with the sample derivative above)
        density = exp((a - 1) * log(x) - x - lgamma(a))
        grad_a = None
        if ctx.needs_input_grad[0]:
            dx = from_numpy(standard_gamma_grad(a.detach().numpy(), x.detach().numpy()))
            grad_a = -grad * density.detach() * dx.to(a.dtype)
        return grad_a, grad * density


def gammainc(a, x):
    """The regularized lower incomplete gamma function P(a, x), differentiable in both."""
    a, x = broadcast_tensors(a, x)
    return _GammaP.apply(a, x)
