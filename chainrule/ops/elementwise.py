"""Elementwise ops: arithmetic, unary math, special functions, rounding, clamping, binary math,
masking, comparisons and logic."""

from __future__ import annotations

import math
from fractions import Fraction

from .._backend import get_default_dtype, result_type, xp
from .._dispatch import apply, apply_inplace
from .._modes import seen, stack
from .._validation import bool_condition
from ..tensor import Tensor
from ._registry import ZERO, defop, not_implemented

_ndarray = xp.ndarray
_LN2 = math.log(2.0)
_LN10 = math.log(10.0)
_SQRT_PI = math.sqrt(math.pi)
_NO_DERIVATIVE = "torch::autograd::NotImplemented"  # torch's grad_fn for ops without a formula

# PyTorch's names for dtypes in kernel errors ("abs_cpu" not implemented for 'Bool') and in
# dtype errors (expected dtype float ... but got dtype long int).
_KERNEL_NAMES = {"bool": "Bool", "uint8": "Byte", "int8": "Char", "int16": "Short",
                 "int32": "Int", "int64": "Long", "float16": "Half", "float32": "Float",
                 "float64": "Double", "complex64": "ComplexFloat", "complex128": "ComplexDouble"}
_C_NAMES = {"bool": "bool", "uint8": "unsigned char", "int8": "signed char", "int16": "short int",
            "int32": "int", "int64": "long int", "float16": "c10::Half", "float32": "float",
            "float64": "double", "complex64": "c10::complex<float>",
            "complex128": "c10::complex<double>", "bfloat16": "c10::BFloat16"}


def _unsupported(kernel: str, dtype) -> NotImplementedError:
    return NotImplementedError(
        f'"{kernel}" not implemented for \'{_KERNEL_NAMES.get(dtype.name, dtype.name)}\'')


def _dtype(*arrays):
    """The dtype of the first array among ``arrays`` (after promotion all arrays share it)."""
    for a in arrays:
        if type(a) is _ndarray:
            return a.dtype
    return xp.asarray(arrays[0]).dtype


def _require_tensor(fn: str, name: str, position: int, value) -> None:
    if not isinstance(value, Tensor):
        raise TypeError(f"{fn}(): argument '{name}' (position {position}) must be Tensor, not "
                        f"{type(value).__name__}")


# ---- arithmetic -------------------------------------------------------------------------------


ADD = defop(
    "add", xp.add, ("input", "other"), (lambda g: g, lambda g: g), promote=True, jvp="elementwise"
)
SUB = defop(
    "sub",
    xp.subtract,
    ("input", "other"),
    (lambda g: g, lambda g: -g),
    promote=True,
    jvp="elementwise",
)


def _rsub(input, other):
    return xp.subtract(other, input)


# other - input: RsubBackward1 for a number other (x.__rsub__), RsubBackward0 for a tensor.
RSUB = defop(
    "rsub",
    _rsub,
    ("input", "other"),
    (lambda g: -g, None),
    promote=True,
    backward_name="RsubBackward1",
    jvp="elementwise",
)
RSUB_TENSOR = defop(
    "rsub_tensor",
    _rsub,
    ("input", "other"),
    (lambda g: -g, lambda g: g),
    promote=True,
    backward_name="RsubBackward0",
    jvp="elementwise",
)
MUL = defop(
    "mul",
    xp.multiply,
    ("input", "other"),
    (lambda g, other: g * other, lambda g, input: g * input),
    promote=True,
    jvp="elementwise",
)
DIV = defop(
    "div",
    xp.true_divide,
    ("input", "other"),
    (lambda g, other: g / other, lambda g, input, other: -g * input / (other * other)),
    promote=True,
    float_out=True,
    jvp="elementwise",
)


def _neg(input):
    if input.dtype.kind == "b":
        raise RuntimeError("Negation, the `-` operator, on a bool tensor is not supported. If you "
                           "are trying to invert a mask, use the `~` or `logical_not()` operator "
                           "instead.")
    return xp.negative(input)


NEG = defop("neg", _neg, ("input",), (lambda g: -g,), jvp="elementwise")


def _integer_division(kernel: str, input, other) -> bool:
    """True for integer operands (which raise on a zero divisor, as in PyTorch)."""
    kind = _dtype(input, other).kind
    if kind == "b":
        raise _unsupported(kernel, _dtype(input, other))
    if kind in "iu":
        if xp.any(xp.equal(other, 0)):
            raise RuntimeError("ZeroDivisionError")
        return True
    return False


def _div_trunc(input, other):
    if _integer_division("div_trunc_cpu", input, other):
        q = xp.floor_divide(input, other)
        return q + ((xp.remainder(input, other) != 0) & ((input < 0) != (other < 0)))
    return xp.trunc(xp.true_divide(input, other))


def _div_floor(input, other):
    _integer_division("div_floor_cpu", input, other)
    return xp.floor_divide(input, other)  # Python's floor division, also for floats


def _div_rounding(input, other, rounding_mode):
    return (_div_trunc if rounding_mode == "trunc" else _div_floor)(input, other)


# A rounded quotient is piecewise constant: zero derivative for both operands, as in PyTorch.
DIV_ROUNDING = defop(
    "div_rounding",
    _div_rounding,
    ("input", "other"),
    (ZERO, ZERO),
    promote=True,
    backward_name="DivBackward2",
    jvp="elementwise",
)
# floor_divide has no derivative in PyTorch: backward raises.
FLOOR_DIVIDE = defop(
    "floor_divide",
    _div_floor,
    ("input", "other"),
    (not_implemented("floor_divide"), not_implemented("floor_divide")),
    promote=True,
    backward_name=_NO_DERIVATIVE,
    batch="elementwise",
)


def _remainder(input, other):
    """Python's modulus (the sign of the divisor), computed as PyTorch does (via fmod)."""
    if _integer_division("remainder_cpu", input, other):
        return xp.remainder(input, other)
    mod = xp.fmod(input, other)
    return xp.where((mod != 0) & ((other < 0) != (mod < 0)), mod + other, mod)


def _fmod(input, other):
    """C's fmod (the sign of the dividend)."""
    _integer_division("fmod_cpu", input, other)
    return xp.fmod(input, other)


# d/dother (x mod y) = -floor(x / y) and d/dother fmod(x, y) = -trunc(x / y), away from the jumps.
REMAINDER = defop(
    "remainder",
    _remainder,
    ("input", "other"),
    (lambda g: g, lambda g, input, other: -g * div(input, other, rounding_mode="floor")),
    promote=True,
    backward_name="RemainderBackward1",
    jvp="elementwise",
)
REMAINDER_SCALAR = defop(
    "remainder_scalar",
    _remainder,
    ("input", "other"),
    (lambda g: g, None),
    promote=True,
    backward_name="RemainderBackward0",
    jvp="elementwise",
)
# remainder(number, tensor) has no derivative in PyTorch: backward raises.
RREMAINDER = defop(
    "remainder_scalar_self",
    _remainder,
    ("input", "other"),
    (None, not_implemented("remainder")),
    promote=True,
    backward_name=_NO_DERIVATIVE,
    batch="elementwise",
)
FMOD = defop(
    "fmod",
    _fmod,
    ("input", "other"),
    (lambda g: g, lambda g, input, other: -g * div(input, other, rounding_mode="trunc")),
    promote=True,
    backward_name="FmodBackward1",
    jvp="elementwise",
)
FMOD_SCALAR = defop(
    "fmod_scalar",
    _fmod,
    ("input", "other"),
    (lambda g: g, None),
    promote=True,
    backward_name="FmodBackward0",
    jvp="elementwise",
)


def _pow_grad(g, input, exponent):
    if exponent == 0:
        return g.new_zeros(g.shape)
    if exponent == 1:  # g * (1 * x ** 0): g, also where x is nan or inf
        return g
    if exponent == 2:  # without x ** 1, a pass over x (the same values: 2 x is exact)
        return g * (2 * input)
    return g * (exponent * input ** (exponent - 1))


def _pow_exponent_grad(g, input, out):
    # d/dy x**y = x**y log x; PyTorch takes it as 0 where x == 0 (the limit for y > 0).
    return g * where(input == 0, 0.0, out * log(input))


def _pow(input, exponent):
    if type(exponent) in (int, float) and _dtype(input) in (xp.float32, xp.float64):
        return _float_pow(input, exponent)
    if getattr(exponent, "dtype", None) is not None and exponent.dtype.kind in "iu" \
            and getattr(input, "dtype", xp.dtype(type(input))).kind in "iu" \
            and bool((exponent < 0).any()):
        return _int_pow_negative(input, exponent)
    out = xp.power(input, exponent)
    # NumPy raises bools to int8; PyTorch keeps bool (x ** True is x, x ** False is True).
    return out.astype(xp.bool_) if out.dtype == xp.int8 and _dtype(input).kind == "b" else out


def _int_pow_negative(input, exponent):
    """Integers to integer tensor powers some of which are negative, as PyTorch's kernel: 1 for
    base 1, +-1 for base -1 (by the exponent's parity) and 0 for any other base there."""
    negative = exponent < 0
    out = xp.power(input, xp.where(negative, 0, exponent))
    parity = xp.where(exponent % 2 == 0, 1, -1)
    small = xp.where(input == 1, 1, xp.where(input == -1, parity, 0))
    return xp.where(negative, small, out).astype(out.dtype)


def _float_pow(input, exponent):
    """A float array to a scalar power as PyTorch's CPU kernel computes it: products and roots
    for the exponents it special-cases (so those results are its own to the last bit)."""
    if exponent == 2:
        return input * input
    if exponent == 3:
        return input * input * input
    if exponent == -2:
        return 1 / (input * input)
    if exponent == -1:
        return 1 / input
    if exponent == 0.5:
        return xp.sqrt(input)
    if exponent == -0.5:
        return 1 / xp.sqrt(input)
    return xp.power(input, exponent)


POW = defop(
    "pow",
    _pow,
    ("input", "exponent"),
    (_pow_grad, None),
    promote=True,
    backward_name="PowBackward0",
    jvp="elementwise",
)
POW_TENSOR = defop(
    "pow_tensor",
    _pow,
    ("input", "exponent"),
    (lambda g, input, exponent: g * (exponent * input ** (exponent - 1)), _pow_exponent_grad),
    promote=True,
    backward_name="PowBackward1",
    jvp="elementwise",
)
RPOW = defop(
    "rpow",
    lambda input, base: xp.power(base, input),
    ("input", "base"),
    (lambda g, out, base: g * (out * float(xp.log(base))), None),
    promote=True,
    backward_name="PowBackward2",
    jvp="elementwise",
)

# ---- unary math ------------------------------------------------------------------------------


def _unary(name: str, forward, rule, **kwargs):
    """A float-valued unary op (integer and bool inputs give the default float dtype)."""
    return defop(name, forward, ("input",), (rule,), float_out=True, jvp="elementwise", **kwargs)


EXP = _unary("exp", xp.exp, lambda g, out: g * out)
EXP2 = _unary("exp2", xp.exp2, lambda g, out: g * (out * _LN2))
EXPM1 = _unary("expm1", xp.expm1, lambda g, out: g * (out + 1))
LOG = _unary("log", xp.log, lambda g, input: g / input)
LOG2 = _unary("log2", xp.log2, lambda g, input: g / (input * _LN2))
LOG10 = _unary("log10", xp.log10, lambda g, input: g / (input * _LN10))
LOG1P = _unary("log1p", xp.log1p, lambda g, input: g / (input + 1), backward_name="Log1PBackward0")
SQRT = _unary("sqrt", xp.sqrt, lambda g, out: g / (2 * out))
RSQRT = _unary("rsqrt", lambda input: 1 / xp.sqrt(input), lambda g, out: g * (out**3 * -0.5))
RECIPROCAL = _unary("reciprocal", xp.reciprocal, lambda g, out: g * -(out * out))
SIN = _unary("sin", xp.sin, lambda g, input: g * cos(input))
COS = _unary("cos", xp.cos, lambda g, input: g * -sin(input))
TAN = _unary("tan", xp.tan, lambda g, out: g * (out * out + 1))
ASIN = _unary("asin", xp.arcsin, lambda g, input: g * rsqrt(1 - input * input))
ACOS = _unary("acos", xp.arccos, lambda g, input: g * -rsqrt(1 - input * input))
ATAN = _unary("atan", xp.arctan, lambda g, input: g / (input * input + 1))
SINH = _unary("sinh", xp.sinh, lambda g, input: g * cosh(input))
COSH = _unary("cosh", xp.cosh, lambda g, input: g * sinh(input))
ASINH = _unary("asinh", xp.arcsinh, lambda g, input: g * rsqrt(input * input + 1))
ACOSH = _unary("acosh", xp.arccosh, lambda g, input: g * rsqrt(input * input - 1))
ATANH = _unary("atanh", xp.arctanh, lambda g, input: g / (1 - input * input))

# Fused backward primitives (as PyTorch's tanh_backward): one kernel call instead of three ops.
TANH_BACKWARD = defop(
    "tanh_backward",
    lambda grad, out: grad * (1 - out * out),
    ("grad", "out_"),
    (lambda g, out_: apply(TANH_BACKWARD, g, out_), lambda g, grad, out_: g * grad * (-2 * out_)),
    promote=True,
    jvp="elementwise",
)
SIGMOID_BACKWARD = defop(
    "sigmoid_backward",
    lambda grad, out: grad * (out * (1 - out)),
    ("grad", "out_"),
    (
        lambda g, out_: apply(SIGMOID_BACKWARD, g, out_),
        lambda g, grad, out_: g * grad * (1 - 2 * out_),
    ),
    promote=True,
    jvp="elementwise",
)
TANH = _unary("tanh", xp.tanh, lambda g, out: apply(TANH_BACKWARD, g, out))


def _sigmoid(input):
    if input.dtype.kind == "c":
        return 1 / (1 + xp.exp(-input))
    # exp of a non-positive number only: no overflow for large |x|.
    e = xp.exp(-xp.abs(input))
    return xp.where(input >= 0, 1 / (1 + e), e / (1 + e)).astype(input.dtype, copy=False)


SIGMOID = _unary("sigmoid", _sigmoid, lambda g, out: apply(SIGMOID_BACKWARD, g, out))


def _logit(input, eps):
    x = input if eps is None else xp.clip(input, eps, 1 - eps)
    return xp.log(x / (1 - x))


def _logit_grad(g, input, eps):
    # As PyTorch: nan outside [0, 1] without eps; with eps, zero where the input was clamped.
    grad = g / (input * (1 - input))
    if eps is None:
        return where(logical_or(input < 0, input > 1), math.nan, grad)
    return where(logical_or(input < eps, input > 1 - eps), 0.0, grad)


LOGIT = _unary("logit", _logit, _logit_grad)


def _abs(input):
    if input.dtype.kind == "b":
        raise _unsupported("abs_cpu", input.dtype)
    return xp.abs(input)


def _sign(input):
    kind = input.dtype.kind
    if kind == "b":
        return input.copy()
    if kind == "f":  # (x > 0) - (x < 0), as PyTorch: 0 for nan, where NumPy's sign gives nan
        return xp.subtract(input > 0, input < 0, dtype=input.dtype)
    return xp.sign(input)


# abs' gradient at 0 is 0 (sign(0) = 0), as in PyTorch.
# sgn (bound from ops.complex) is z/|z| for complex input, with its own derivative.
ABS = defop("abs", _abs, ("input",), (lambda g, input: g * input.sgn(),),
            jvp=lambda t_input, input: (t_input * input.sgn().conj()).real, batch="elementwise")
SIGN = defop("sign", _sign, ("input",), (ZERO,), jvp="elementwise")
# relu's gradient as one op (PyTorch's threshold_backward at 0): g where the output is positive,
# else 0 (also for an infinite or NaN g). Linear in g; piecewise constant in the output, so zero
# there, as in PyTorch.
RELU_BACKWARD = defop(
    "threshold_backward",
    lambda grad, out: xp.where(out > 0, grad, 0),
    ("grad", "out_"),
    (lambda g, out_: apply(RELU_BACKWARD, g, out_), ZERO),
    promote=True,
    backward_name="ThresholdBackwardBackward0",
    jvp="elementwise",
)
RELU = defop(
    "relu",
    lambda input: xp.maximum(input, 0, dtype=input.dtype),
    ("input",),
    (lambda g, out: apply(RELU_BACKWARD, g, out),),
    jvp="elementwise",
)


# ---- special functions -----------------------------------------------------------------------
# NumPy has none of these: erf, erfc, erfinv, lgamma, digamma and polygamma are computed here, in
# the input's precision (float32 for float16), from the series and expansions cited at each.


def _bernoulli(n_max: int) -> list[Fraction]:
    """B_0 .. B_n_max, exactly, from sum_{k<=m} C(m+1, k) B_k = 0."""
    b = [Fraction(1)]
    for m in range(1, n_max + 1):
        b.append(-sum(math.comb(m + 1, k) * b[k] for k in range(m)) / (m + 1))
    return b


_B2K = [float(b) for b in _bernoulli(24)[2::2]]  # B_2, B_4, ..., B_24
_EULER_GAMMA = 0.5772156649015329


def _special(fn):
    """Run a special function on a flat working copy, quietly (poles give inf, not warnings)."""

    def forward(input, *args):
        dtype = input.dtype
        if dtype.kind != "f":  # in-place on an integer tensor: fails on writing, as in PyTorch
            dtype = get_default_dtype().np
        work = input.astype(xp.float32 if dtype.itemsize < 4 else dtype, copy=False)
        with xp.errstate(all="ignore"):
            out = fn(work.reshape(-1), *args)
        return out.reshape(input.shape).astype(dtype, copy=False)

    forward.__name__ = fn.__name__
    return forward


def _erf_series(a, high: float):
    """erf(a) for |a| < high: 2/sqrt(pi) exp(-a^2) a sum_n 2^n a^2n / (2n+1)!!  (A&S 7.1.6); all
    terms positive (no cancellation), as many as |a| < high needs."""
    eps = xp.finfo(a.dtype).eps / 8
    coefs = [1.0]
    while coefs[-1] * high ** (2 * len(coefs)) > eps:
        coefs.append(coefs[-1] * 2 / (2 * len(coefs) + 1))
    a2 = a * a
    acc = xp.zeros_like(a)
    for c in reversed(coefs):
        acc = acc * a2 + c
    return (2 / _SQRT_PI) * xp.exp(-a2) * a * acc


def _erfc_fraction(a, low: float):
    """erfc(a) for a >= low >= 1: the even part of Laplace's continued fraction (A&S 7.1.14),
    2a/sqrt(pi) exp(-a^2) / (b_0 - 1*2/(b_1 - 3*4/(b_2 - ...))), b_k = 2a^2 + 4k + 1, from a
    depth that converges for a >= low (measured: 90 terms at 1, 26 at 2 in float64)."""
    depth = math.ceil(84 / low**2 + 8) if a.dtype == xp.float64 else math.ceil(20 / low**2 + 3)
    a = xp.minimum(a, 30)  # erfc underflows to 0 long before; keeps inf out of the recurrence
    z = 2 * a * a
    t = z + (4 * depth + 1)
    for k in range(depth, 0, -1):
        t = (z + (4 * k - 3)) - ((2 * k - 1) * (2 * k)) / t
    return (2 / _SQRT_PI) * a * xp.exp(-a * a) / t


def _erf_pieces(x, complement: bool):
    # erf by its series below |x| = 2 (1 for erfc), erfc by the fraction above, the other one as
    # 1 - it: no cancellation where it matters. Fraction bins keep the depth low.
    a = xp.abs(x)
    out = xp.full_like(x, xp.nan)
    split = 1.0 if complement else 2.0
    m = a < split
    e = _erf_series(x[m], split)
    out[m] = 1 - e if complement else e
    for low, high in ((1.0, 1.5), (1.5, 2.0), (2.0, xp.inf)):
        if high <= split:
            continue
        m = (a >= low) & (a < high) if high < xp.inf else a >= low
        v = x[m]
        tail = _erfc_fraction(xp.abs(v), low)
        out[m] = xp.where(v > 0, tail, 2 - tail) if complement else xp.copysign(1 - tail, v)
    return out


@_special
def _erf(x):
    return _erf_pieces(x, False)


@_special
def _erfc(x):
    return _erf_pieces(x, True)


@_special
def _erfinv(y):
    a = xp.abs(y)
    out = xp.where(a == 1, xp.copysign(xp.inf, y), xp.nan).astype(y.dtype)
    inside = a < 1
    a = a[inside]
    one_minus = 1 - a
    # Winitzki's approximation (relative error < 2e-3) starts Halley's method on f(x) = erf(x) - a
    # (f' = 2/sqrt(pi) exp(-x^2), f'' = -2x f'), which converges cubically. Above 1/2 the residual
    # is taken as (1 - a) - erfc(x), where erf(x) - a would cancel.
    log_t = xp.log(one_minus * (1 + a))
    c = 2 / (math.pi * 0.147) + log_t / 2
    x = xp.sqrt(xp.sqrt(c * c - log_t / 0.147) - c)
    near_one = a > 0.5
    far = ~near_one
    f = xp.empty_like(x)
    eps = xp.finfo(y.dtype).eps
    for _ in range(4):
        f[near_one] = one_minus[near_one] - _erf_pieces(x[near_one], True)
        f[far] = _erf_pieces(x[far], False) - a[far]
        step = f / ((2 / _SQRT_PI) * xp.exp(-x * x) + x * f)
        x -= step
        # Halley's error after a step d is about (1 + x^2)/3 d^3: done once that is below eps x.
        if (step * step * xp.abs(step) * (1 + x * x) <= eps * x).all():
            break
    out[inside] = xp.copysign(x, y[inside])
    return out


def _abs_sinpi(x):
    """|sin(pi x)|, exact at the integers: x reduced mod 2 and folded into [0, 1/2] first."""
    r = xp.abs(x - 2 * xp.round(x / 2))
    return xp.sin(math.pi * xp.minimum(r, 1 - r))


def _cotpi(x):
    """cot(pi x), exactly 0 at the half integers: x reduced mod 1 into [-1/2, 1/2] first."""
    r = x - xp.round(x)
    return xp.copysign(xp.sin(math.pi * (0.5 - xp.abs(r))) / xp.sin(math.pi * xp.abs(r)), r)


def _hurwitz_zeta(s: int, q):
    """zeta(s, q) = sum_k (q + k)^-s for an integer s >= 2 and q > 0, by Euler-Maclaurin
    summation (DLMF 2.10.1): the terms below q + N >= 12 + s summed, then the tail
    w^(1-s)/(s-1) + w^-s/2 + sum_j B_2j/(2j)! s(s+1)...(s+2j-2) w^(-s-2j+1), w = q + N."""
    edge = 12 + s
    w = xp.minimum(q, edge)  # inf stays out of the sums
    total = xp.zeros_like(q)
    while True:
        low = w < edge
        if not low.any():
            break
        total += xp.where(low, w**-s, 0)
        w = xp.where(low, w + 1, w)
    w = xp.maximum(w, q)
    wi = 1 / w
    wi2 = wi * wi
    coefs = []
    rising = float(s)
    for j in range(1, 13):
        coefs.append(_B2K[j - 1] / math.factorial(2 * j) * rising)
        rising *= (s + 2 * j - 1) * (s + 2 * j)
    tail = xp.zeros_like(w)
    for c in reversed(coefs):
        tail = tail * wi2 + c
    return total + wi ** (s - 1) * (1 / (s - 1) + wi / 2 + tail * wi2)


# lgamma(2 + z) = (1 - gamma) z + sum_{k>=2} (-1)^k (zeta(k) - 1) z^k / k  (A&S 6.1.33), where
# zeta(k) - 1 = zeta(k, 2); used for |z| <= 1/2.
_LGAMMA_AT_2 = [float((-1) ** k * _hurwitz_zeta(k, xp.array(2.0)) / k) for k in range(30, 1, -1)]


def _lgamma_positive(x):
    out = xp.empty_like(x)
    big = x >= 10
    y = x[big]
    # Stirling: (y - 1/2) log y - y + log(2 pi)/2 + sum_k B_2k / (2k (2k-1) y^(2k-1))  (A&S 6.1.40)
    yi = 1 / y
    yi2 = yi * yi
    acc = xp.zeros_like(y)
    for k in range(8, 0, -1):
        acc = acc * yi2 + _B2K[k - 1] / (2 * k * (2 * k - 1))
    out[big] = (y - 0.5) * xp.log(y) - y + 0.5 * math.log(2 * math.pi) + acc * yi
    # Below 10: moved into [1.5, 2.5) by lgamma(y + 1) = lgamma(y) + log y, then the series at 2.
    small = ~big
    y = x[small]
    prod = xp.ones_like(y)
    for _ in range(8):
        high = y >= 2.5
        y = xp.where(high, y - 1, y)
        prod = xp.where(high, prod * y, prod)
    corr = xp.log(prod)
    tiny = y < 0.5
    corr[tiny] -= xp.log(y[tiny] * (1 + y[tiny]))
    y[tiny] += 2
    low = y < 1.5
    corr[low] -= xp.log1p(y[low] - 1)  # log y, accurate near the zero of lgamma at 1
    y[low] += 1
    z = y - 2
    acc = xp.zeros_like(z)
    for c in _LGAMMA_AT_2:
        acc = (acc + c) * z
    out[small] = (acc + (1 - _EULER_GAMMA)) * z + corr
    return out


@_special
def _lgamma(x):
    out = xp.where(xp.isnan(x), xp.nan, xp.inf).astype(x.dtype)  # inf at the poles and at ±inf
    pos = (x > 0) & (x < xp.inf)
    out[pos] = _lgamma_positive(x[pos])
    neg = (x < 0) & (x != xp.floor(x))
    v = x[neg]
    # Reflection: Gamma(x) Gamma(1 - x) = pi / sin(pi x)  (A&S 6.1.17)
    out[neg] = math.log(math.pi) - xp.log(_abs_sinpi(v)) - _lgamma_positive(1 - v)
    return out


def _digamma_positive(x):
    # psi(x) = psi(x + n) - sum_{k<n} 1/(x + k), then at y >= 10 the asymptotic series
    # log y - 1/(2y) - sum_k B_2k / (2k y^2k)  (A&S 6.3.5, 6.3.18)
    acc = xp.zeros_like(x)
    y = x.copy()
    while True:
        low = y < 10
        if not low.any():
            break
        acc -= xp.where(low, 1 / y, 0)
        y = xp.where(low, y + 1, y)
    yi = 1 / y
    yi2 = yi * yi
    s = xp.zeros_like(y)
    for k in range(8, 0, -1):
        s = s * yi2 + _B2K[k - 1] / (2 * k)
    return acc + xp.log(y) - 0.5 * yi - s * yi2


@_special
def _digamma(x):
    out = xp.full_like(x, xp.nan)  # nan at the negative integers and at -inf
    pos = x > 0
    out[pos] = _digamma_positive(x[pos])
    zero = x == 0
    out[zero] = xp.copysign(xp.inf, -x[zero])
    neg = (x < 0) & (x != xp.floor(x))
    v = x[neg]
    # Reflection: psi(1 - x) - psi(x) = pi cot(pi x)  (A&S 6.3.7)
    out[neg] = _digamma_positive(1 - v) - math.pi * _cotpi(v)
    return out


def _cot_derivative(n: int) -> list[int]:
    """Coefficients (lowest power first) of P_n with d^n/dx^n cot x = P_n(cot x):
    P_0 = c, P_{k+1} = -(1 + c^2) P_k'(c)."""
    p = [0, 1]
    for _ in range(n):
        d = [k * p[k] for k in range(1, len(p))] + [0, 0]
        p = [-(d[k] + (d[k - 2] if k >= 2 else 0)) for k in range(len(d))]
    return p


def _polygamma_positive(n: int, x):
    # psi^(n)(x) = (-1)^(n+1) n! zeta(n + 1, x)  (A&S 6.4.10)
    return (1.0 if n % 2 else -1.0) * math.factorial(n) * _hurwitz_zeta(n + 1, x)


@_special
def _polygamma_n(x, n):
    out = xp.full_like(x, xp.nan)
    # As PyTorch: ±inf (the sign of n!/x^(n+1) from the right) at the poles and at -inf, except
    # nan at -inf for n == 1; at +inf 0 for n == 1 and nan above.
    out[(x <= 0) & (x == xp.floor(x))] = (1.0 if n % 2 else -1.0) * xp.inf
    if n == 1:
        out[x == -xp.inf] = xp.nan
        out[x == xp.inf] = 0.0
    pos = (x > 0) & (x < xp.inf)
    out[pos] = _polygamma_positive(n, x[pos])
    neg = (x < 0) & (x != xp.floor(x))
    v = x[neg]
    # Reflection, the n-th derivative of psi(1 - x) - psi(x) = pi cot(pi x)  (A&S 6.4.7)
    c = _cotpi(v)
    p = xp.zeros_like(c)
    for coef in reversed(_cot_derivative(n)):
        p = p * c + coef
    out[neg] = (-1) ** n * _polygamma_positive(n, 1 - v) - math.pi ** (n + 1) * p
    return out


def _polygamma(input, n):
    return _digamma(input) if n == 0 else _polygamma_n(input, n)


ERF = _unary("erf", _erf, lambda g, input: g * ((2 / _SQRT_PI) * exp(-(input * input))))
ERFC = _unary("erfc", _erfc, lambda g, input: g * ((-2 / _SQRT_PI) * exp(-(input * input))))
ERFINV = _unary("erfinv", _erfinv, lambda g, out: g * ((_SQRT_PI / 2) * exp(out * out)))
LGAMMA = _unary("lgamma", _lgamma, lambda g, input: g * digamma(input))
DIGAMMA = _unary("digamma", _digamma, lambda g, input: g * polygamma(1, input))
POLYGAMMA = _unary("polygamma", _polygamma, lambda g, input, n: g * polygamma(n + 1, input))
POLYGAMMA_ = _unary("polygamma_", _polygamma, lambda g, input, n: g * polygamma(n + 1, input),
                    backward_name="PolygammaBackward1")  # the in-place variant's grad_fn name

# ---- rounding ----------------------------------------------------------------------------------
# Piecewise constant: zero derivative (ZERO), as in PyTorch. Integer inputs come back unchanged.


def _rounding(fn, kernel: str):
    def forward(input):
        kind = input.dtype.kind
        if kind == "b":
            raise _unsupported(kernel, input.dtype)
        return fn(input) if kind in "fc" else input.copy()

    forward.__name__ = fn.__name__
    return forward


def _round_decimals(input, decimals):
    if input.dtype.kind not in "fc":
        raise _unsupported("round_cpu", input.dtype)
    # As PyTorch: scale, round half to even, unscale (dividing by 10^-d for negative d).
    if decimals >= 0:
        scale = 10.0**decimals
        return xp.rint(input * scale) / scale
    scale = 10.0**-decimals
    return xp.rint(input / scale) * scale


def _frac(input):
    if input.dtype.kind not in "fc":
        raise _unsupported("frac_cpu", input.dtype)
    return input - xp.trunc(input)


FLOOR = defop("floor", _rounding(xp.floor, "floor_vml_cpu"), ("input",), (ZERO,),
              jvp="elementwise")
CEIL = defop("ceil", _rounding(xp.ceil, "ceil_vml_cpu"), ("input",), (ZERO,), jvp="elementwise")
ROUND = defop("round", _rounding(xp.rint, "round_vml_cpu"), ("input",), (ZERO,),
              jvp="elementwise")
ROUND_DECIMALS = defop("round_decimals", _round_decimals, ("input",), (ZERO,),
                       backward_name="RoundBackward1", jvp="elementwise")
TRUNC = defop("trunc", _rounding(xp.trunc, "trunc_vml_cpu"), ("input",), (ZERO,),
              jvp="elementwise")
FRAC = defop("frac", _frac, ("input",), (lambda g: g,), jvp="elementwise")

# ---- clamping ----------------------------------------------------------------------------------
# PyTorch's conventions: the input's gradient passes where min <= x <= max, bounds included; a
# tensor bound gets the gradient where it is the value taken (min where x < min and min < max, max
# where x > max or max < min, i.e. where the bounds cross max wins).


def _clamp(input, min=None, max=None):
    return xp.clip(input, min, max) if min is not None or max is not None else input.copy()


def _clamp_grad(g, input, min, max):
    if min is None:
        return g * (input <= max)
    if max is None:
        return g * (input >= min)
    return g * logical_and(input >= min, input <= max)


def _clamp_tensor(input, min, max):
    out = input if min is None else xp.maximum(input, min)
    return out if max is None else xp.minimum(out, max)


def _clamp_min_grad(g, input, min, max):
    if max is None:
        return g * (input < min)
    return g * logical_and(input < min, min < max)


def _clamp_max_grad(g, input, min, max):
    if min is None:
        return g * (input > max)
    return g * logical_or(input > max, max < min)


CLAMP = defop("clamp", _clamp, ("input",), (_clamp_grad,), backward_name="ClampBackward1",
              jvp="elementwise")
CLAMP_TENSOR = defop(
    "clamp_tensor",
    _clamp_tensor,
    ("input", "min", "max"),
    (_clamp_grad, _clamp_min_grad, _clamp_max_grad),
    promote=True,
    backward_name="ClampBackward0",
    jvp="elementwise",
)
CLAMP_MIN = defop("clamp_min", lambda input, min: xp.maximum(input, min), ("input",),
                  (lambda g, input, min: g * (input >= min),), jvp="elementwise")
CLAMP_MIN_TENSOR = defop(
    "clamp_min_tensor",
    xp.maximum,
    ("input", "min"),
    (lambda g, input, min: g * (input >= min), lambda g, input, min: g * (input < min)),
    promote=True,
    backward_name="ClampMinBackward1",
    jvp="elementwise",
)
CLAMP_MAX = defop("clamp_max", lambda input, max: xp.minimum(input, max), ("input",),
                  (lambda g, input, max: g * (input <= max),), jvp="elementwise")
CLAMP_MAX_TENSOR = defop(
    "clamp_max_tensor",
    xp.minimum,
    ("input", "max"),
    (lambda g, input, max: g * (input <= max), lambda g, input, max: g * (input > max)),
    promote=True,
    backward_name="ClampMaxBackward1",
    jvp="elementwise",
)

# ---- binary math -------------------------------------------------------------------------------


def _maximum_grad(g, input, other):
    # PyTorch splits the gradient equally between the inputs at ties (a nan goes to both).
    return where(input == other, g / 2, where(input < other, 0.0, g))


def _minimum_grad(g, input, other):
    return where(input == other, g / 2, where(input > other, 0.0, g))


def _fmax_input(input, other):
    # fmax takes the input where it is >= other or other is nan: that side gets all the gradient.
    return logical_or(input >= other, isnan(other))


def _fmin_input(input, other):
    return logical_or(input <= other, isnan(other))


def _tangents(t_input, t_other, input, other):
    return (input.new_zeros(input.shape) if t_input is None else t_input,
            other.new_zeros(other.shape) if t_other is None else t_other)


# torch's forward-mode rules pick a tangent by slightly different conventions than its gradients
# (a nan gives other's tangent; fmax gives other's at ties): matched here.
def _maximum_jvp(t_input, t_other, input, other):
    ti, to = _tangents(t_input, t_other, input, other)
    return where(input == other, (ti + to) * 0.5, where(input > other, ti, to))


def _minimum_jvp(t_input, t_other, input, other):
    ti, to = _tangents(t_input, t_other, input, other)
    return where(input == other, (ti + to) * 0.5, where(input < other, ti, to))


def _fmax_jvp(t_input, t_other, input, other):
    ti, to = _tangents(t_input, t_other, input, other)
    return where(logical_or(input > other, isnan(other)), ti, to)


def _fmin_jvp(t_input, t_other, input, other):
    ti, to = _tangents(t_input, t_other, input, other)
    return where(_fmin_input(input, other), ti, to)


MAXIMUM = defop(
    "maximum",
    xp.maximum,
    ("input", "other"),
    (_maximum_grad, lambda g, input, other: _maximum_grad(g, other, input)),
    promote=True,
    jvp=_maximum_jvp,
    batch="elementwise",
)
MINIMUM = defop(
    "minimum",
    xp.minimum,
    ("input", "other"),
    (_minimum_grad, lambda g, input, other: _minimum_grad(g, other, input)),
    promote=True,
    jvp=_minimum_jvp,
    batch="elementwise",
)
FMAX = defop(
    "fmax",
    xp.fmax,
    ("input", "other"),
    (
        lambda g, input, other: where(_fmax_input(input, other), g, 0.0),
        lambda g, input, other: where(_fmax_input(input, other), 0.0, g),
    ),
    promote=True,
    jvp=_fmax_jvp,
    batch="elementwise",
)
FMIN = defop(
    "fmin",
    xp.fmin,
    ("input", "other"),
    (
        lambda g, input, other: where(_fmin_input(input, other), g, 0.0),
        lambda g, input, other: where(_fmin_input(input, other), 0.0, g),
    ),
    promote=True,
    jvp=_fmin_jvp,
    batch="elementwise",
)


def _atan2_scale(g, input, other):
    # g / (x^2 + y^2), taken as 0 at the origin (PyTorch's value there).
    d = input * input + other * other
    origin = d == 0
    return where(origin, 0.0, g / where(origin, 1.0, d))


ATAN2 = defop(
    "atan2",
    xp.arctan2,
    ("input", "other"),
    (
        lambda g, input, other: _atan2_scale(g, input, other) * other,
        lambda g, input, other: _atan2_scale(g, input, other) * -input,
    ),
    promote=True,
    float_out=True,
    jvp="elementwise",
)


def _hypot(input, other):
    if _dtype(input, other).kind not in "fc":
        raise _unsupported("hypot_cpu", _dtype(input, other))
    return xp.hypot(input, other)


HYPOT = defop(
    "hypot",
    _hypot,
    ("input", "other"),
    (lambda g, input, out: g * input / out, lambda g, other, out: g * other / out),
    promote=True,
    jvp="elementwise",
)


def _xlogy(input, other):
    with xp.errstate(divide="ignore", invalid="ignore"):
        out = input * xp.log(other)
    return xp.where((input == 0) & ~xp.isnan(other), 0, out).astype(out.dtype, copy=False)


# A primitive for PyTorch's convention at input = 0 (derivatives.yaml): d/dinput = xlogy(g, other),
# set to 0 where input = 0 and other <= 0, where a product rule would give 0 * -inf = nan.
XLOGY = defop(
    "xlogy",
    _xlogy,
    ("input", "other"),
    (
        lambda g, input, other: where((input == 0) & (other <= 0), 0.0,
                                      apply(XLOGY, g, other)),
        lambda g, input, other: g * input / other,
    ),
    promote=True,
    float_out=True,
    jvp="elementwise",
)


def _lerp(input, end, weight):
    # As PyTorch: from the nearer end, so that weight 0 gives input and weight 1 gives end exactly.
    diff = end - input
    if type(weight) is not _ndarray:
        weight = input.dtype.type(weight)  # 1 - weight in the input's precision, as PyTorch
        return input + weight * diff if -0.5 < weight < 0.5 else end - diff * (1 - weight)
    return xp.where(xp.abs(weight) < 0.5, input + weight * diff, end - diff * (1 - weight))


LERP = defop(
    "lerp",
    _lerp,
    ("input", "end"),
    (lambda g, weight: g * (1 - weight), lambda g, weight: g * weight),
    jvp="elementwise",
)
LERP_TENSOR = defop(
    "lerp_tensor",
    _lerp,
    ("input", "end", "weight"),
    (
        lambda g, weight: g * (1 - weight),
        lambda g, weight: g * weight,
        lambda g, input, end: g * (end - input),
    ),
    backward_name="LerpBackward1",
    jvp="elementwise",
)


def _addcmul(input, tensor1, tensor2, value):
    if _dtype(input, tensor1, tensor2).kind in "biu":
        value = int(value)  # PyTorch casts the scalar to the integer type first
    return input + value * tensor1 * tensor2


def _addcdiv(input, tensor1, tensor2, value):
    return input + value * (tensor1 / tensor2)


ADDCMUL = defop(
    "addcmul",
    _addcmul,
    ("input", "tensor1", "tensor2"),
    (
        lambda g: g,
        lambda g, tensor2, value: g * tensor2 * value,
        lambda g, tensor1, value: g * tensor1 * value,
    ),
    promote=True,
    jvp="elementwise",
)
ADDCDIV = defop(
    "addcdiv",
    _addcdiv,
    ("input", "tensor1", "tensor2"),
    (
        lambda g: g,
        lambda g, tensor2, value: g * value / tensor2,
        lambda g, tensor1, tensor2, value: -g * value * tensor1 / (tensor2 * tensor2),
    ),
    promote=True,
    jvp="elementwise",
)

# ---- masking and cleaning ----------------------------------------------------------------------


def _masked_fill(input, mask, value):
    return xp.where(mask, value, input).astype(input.dtype, copy=False)


MASKED_FILL = defop(
    "masked_fill",
    _masked_fill,
    ("input", "mask"),
    (lambda g, mask: where(mask, 0.0, g), None),
    jvp="elementwise",
)
MASKED_FILL_TENSOR = defop(
    "masked_fill_tensor",
    _masked_fill,
    ("input", "mask", "value"),
    (lambda g, mask: where(mask, 0.0, g), None, lambda g, mask: where(mask, g, 0.0)),
    backward_name="MaskedFillBackward1",
    jvp="elementwise",
)


def _nan_to_num(input, nan, posinf, neginf):
    if input.dtype.kind not in "fc":
        return input.copy()
    return xp.nan_to_num(input, nan=nan, posinf=posinf, neginf=neginf)


NAN_TO_NUM = defop(
    "nan_to_num",
    _nan_to_num,
    ("input",),
    (lambda g, input: where(isfinite(input), g, 0.0),),
    jvp="elementwise",
)


def _where(condition, input, other):
    dtype = result_type(
        [a for a in (input, other) if type(a) is xp.ndarray],
        [a for a in (input, other) if type(a) is not xp.ndarray],
    )
    return xp.where(condition, input, other).astype(dtype, copy=False)


WHERE = defop(
    "where",
    _where,
    ("condition", "input", "other"),
    (
        None,
        lambda g, condition: where(condition, g, 0.0),
        lambda g, condition: where(condition, 0.0, g),
    ),
    jvp="elementwise",
)

# ---- comparisons, tests and logic (no gradient) ------------------------------------------------


def _compare(name: str, ufunc):
    return defop(name, ufunc, ("input", "other"), (None, None), promote=True, differentiable=False,
                 batch="elementwise")


def _test(name: str, fn, otherwise: bool):
    """A float test (isnan, ...): ``otherwise`` for integer and bool inputs."""

    def forward(input):
        if input.dtype.kind in "fc":
            return fn(input)
        return xp.full_like(input, otherwise, dtype=bool, order="C")

    return defop(name, forward, ("input",), (None,), differentiable=False, batch="elementwise")


def _bitwise(name: str, ufunc, kernel: str, inputs=("input", "other"), kinds: str = "biu"):
    def forward(*args):
        dtype = _dtype(*args)
        if dtype.kind not in kinds:
            raise _unsupported(kernel, dtype)
        return ufunc(*args)

    forward.__name__ = name
    return defop(name, forward, inputs, (None,) * len(inputs), promote=True, differentiable=False,
                 batch="elementwise")


EQ = _compare("eq", xp.equal)
NE = _compare("ne", xp.not_equal)
LT = _compare("lt", xp.less)
LE = _compare("le", xp.less_equal)
GT = _compare("gt", xp.greater)
GE = _compare("ge", xp.greater_equal)
LOGICAL_AND = _compare("logical_and", xp.logical_and)
LOGICAL_OR = _compare("logical_or", xp.logical_or)
LOGICAL_XOR = _compare("logical_xor", xp.logical_xor)
LOGICAL_NOT = defop("logical_not", xp.logical_not, ("input",), (None,), differentiable=False,
                    batch="elementwise")
BITWISE_AND = _bitwise("bitwise_and", xp.bitwise_and, "bitwise_and_cpu")
BITWISE_OR = _bitwise("bitwise_or", xp.bitwise_or, "bitwise_or_cpu")
BITWISE_XOR = _bitwise("bitwise_xor", xp.bitwise_xor, "bitwise_xor_cpu")
BITWISE_NOT = _bitwise("bitwise_not", xp.invert, "bitwise_not_cpu", ("input",))
BITWISE_LEFT_SHIFT = _bitwise("bitwise_left_shift", xp.left_shift, "lshift_cpu", kinds="iu")
BITWISE_RIGHT_SHIFT = _bitwise("bitwise_right_shift", xp.right_shift, "rshift_cpu", kinds="iu")
ISNAN = _test("isnan", xp.isnan, False)
ISINF = _test("isinf", xp.isinf, False)
ISFINITE = _test("isfinite", xp.isfinite, True)
ISPOSINF = _test("isposinf", lambda input: input == xp.inf, False)
ISNEGINF = _test("isneginf", lambda input: input == -xp.inf, False)


# ---- public functions: arithmetic --------------------------------------------------------------


_BOOL = xp.dtype(xp.bool_)


def _is_bool(x) -> bool:
    return x.__class__ is bool or (isinstance(x, Tensor) and x._data.dtype is _BOOL)


def _check_subtraction(input, other) -> None:
    """PyTorch refuses to subtract bools (NumPy's error would be a TypeError)."""
    if _is_bool(input) or _is_bool(other):
        if _is_bool(input) and _is_bool(other):
            raise RuntimeError("Subtraction, the `-` operator, with two bool tensors is not "
                               "supported. Use the `^` or `logical_xor()` operator instead.")
        raise RuntimeError("Subtraction, the `-` operator, with a bool tensor is not supported. "
                           "If you are trying to invert a mask, use the `~` or `logical_not()` "
                           "operator instead.")


def add(input, other, *, alpha=1) -> Tensor:
    """input + alpha * other, broadcast."""
    if alpha == 1:
        return apply(ADD, input, other)
    if stack.modes is None:
        return apply(ADD, input, other * alpha)
    return _with_alpha(apply, ADD, "add", add, input, other, alpha)


def sub(input, other, *, alpha=1) -> Tensor:
    """input - alpha * other, broadcast."""
    _check_subtraction(input, other)
    if alpha == 1:
        return apply(SUB, input, other)
    if stack.modes is None:
        return apply(SUB, input, other * alpha)
    return _with_alpha(apply, SUB, "sub", sub, input, other, alpha)


def _with_alpha(run, op, name: str, fn, input, other, alpha):
    """``run(op, input, other * alpha)``, which dispatch modes see as one call of aten's
    ``<name>.Tensor(input, other, alpha=alpha)`` (the scaling is part of it, as in PyTorch's
    kernel). A function of its own: its lambda would make the callers' arguments cells."""
    if stack.dispatch is None:
        return run(op, input, other * alpha)
    return seen(name, "Tensor", (input, other), {"alpha": alpha}, fn,
                lambda: run(op, input, other * alpha))


def rsub(input, other, *, alpha=1) -> Tensor:
    """other - alpha * input."""
    _check_subtraction(input, other)
    op = RSUB_TENSOR if isinstance(other, Tensor) else RSUB
    return apply(op, input if alpha == 1 else input * alpha, other)


def mul(input, other) -> Tensor:
    """input * other, broadcast."""
    return apply(MUL, input, other)


def _rounding_mode(rounding_mode) -> None:
    if rounding_mode not in (None, "trunc", "floor"):
        raise RuntimeError("div expected rounding_mode to be one of None, 'trunc', or 'floor' but "
                           f"found '{rounding_mode}'")


def div(input, other, *, rounding_mode: str | None = None) -> Tensor:
    """input / other, broadcast; rounding_mode 'trunc' or 'floor' rounds the quotient."""
    if rounding_mode is None:
        return apply(DIV, input, other)
    _rounding_mode(rounding_mode)
    return apply(DIV_ROUNDING, input, other, rounding_mode=rounding_mode)


def true_divide(input, other) -> Tensor:
    """input / other (true division); an alias of div."""
    return apply(DIV, input, other)


def floor_divide(input, other) -> Tensor:
    """input / other rounded down (Python's //); it has no derivative."""
    return apply(FLOOR_DIVIDE, input, other)


def remainder(input, other) -> Tensor:
    """Python's modulus: input - floor(input / other) * other, with the sign of other."""
    if not isinstance(input, Tensor):
        return apply(RREMAINDER, input, other)
    return apply(REMAINDER if isinstance(other, Tensor) else REMAINDER_SCALAR, input, other)


def fmod(input, other) -> Tensor:
    """C's fmod: input - trunc(input / other) * other, with the sign of input."""
    return apply(FMOD if isinstance(other, Tensor) else FMOD_SCALAR, input, other)


def neg(input) -> Tensor:
    """-input."""
    return apply(NEG, input)


def pow(input, exponent) -> Tensor:
    """input ** exponent, for a tensor or scalar base and exponent."""
    if isinstance(exponent, Tensor):
        if isinstance(input, Tensor):
            return apply(POW_TENSOR, input, exponent)
        return apply(RPOW, exponent, input)
    return apply(POW, input, exponent)


def square(input) -> Tensor:
    """input ** 2."""
    return apply(POW, input, 2)


# ---- public functions: unary math --------------------------------------------------------------


def exp(input) -> Tensor:
    """e ** input, elementwise."""
    return apply(EXP, input)


def exp2(input) -> Tensor:
    """2 ** input, elementwise."""
    return apply(EXP2, input)


def expm1(input) -> Tensor:
    """e ** input - 1, accurate for small input."""
    return apply(EXPM1, input)


def log(input) -> Tensor:
    """Natural logarithm, elementwise."""
    return apply(LOG, input)


def log2(input) -> Tensor:
    """Base-2 logarithm, elementwise."""
    return apply(LOG2, input)


def log10(input) -> Tensor:
    """Base-10 logarithm, elementwise."""
    return apply(LOG10, input)


def log1p(input) -> Tensor:
    """log(1 + input), accurate for small input."""
    return apply(LOG1P, input)


def sqrt(input) -> Tensor:
    """Square root, elementwise."""
    return apply(SQRT, input)


def rsqrt(input) -> Tensor:
    """1 / sqrt(input), elementwise."""
    return apply(RSQRT, input)


def reciprocal(input) -> Tensor:
    """1 / input, elementwise."""
    return apply(RECIPROCAL, input)


def sin(input) -> Tensor:
    """Sine, elementwise."""
    return apply(SIN, input)


def cos(input) -> Tensor:
    """Cosine, elementwise."""
    return apply(COS, input)


def tan(input) -> Tensor:
    """Tangent, elementwise."""
    return apply(TAN, input)


def asin(input) -> Tensor:
    """Arcsine, elementwise."""
    return apply(ASIN, input)


def acos(input) -> Tensor:
    """Arccosine, elementwise."""
    return apply(ACOS, input)


def atan(input) -> Tensor:
    """Arctangent, elementwise."""
    return apply(ATAN, input)


def sinh(input) -> Tensor:
    """Hyperbolic sine, elementwise."""
    return apply(SINH, input)


def cosh(input) -> Tensor:
    """Hyperbolic cosine, elementwise."""
    return apply(COSH, input)


def tanh(input) -> Tensor:
    """Hyperbolic tangent, elementwise."""
    return apply(TANH, input)


def asinh(input) -> Tensor:
    """Inverse hyperbolic sine, elementwise."""
    return apply(ASINH, input)


def acosh(input) -> Tensor:
    """Inverse hyperbolic cosine, elementwise."""
    return apply(ACOSH, input)


def atanh(input) -> Tensor:
    """Inverse hyperbolic tangent, elementwise."""
    return apply(ATANH, input)


def abs(input) -> Tensor:
    """Absolute value, elementwise; its gradient at 0 is 0, as in PyTorch."""
    return apply(ABS, input)


def sign(input) -> Tensor:
    """-1, 0 or 1 by the sign of each element."""
    return apply(SIGN, input)


def sigmoid(input) -> Tensor:
    """1 / (1 + exp(-input)), computed stably."""
    return apply(SIGMOID, input)


def logit(input, eps: float | None = None) -> Tensor:
    """log(input / (1 - input)), with input clamped to [eps, 1 - eps] when eps is given."""
    return apply(LOGIT, input, eps=eps)


def relu(input) -> Tensor:
    """max(input, 0); the gradient at 0 is 0, as in PyTorch."""
    return apply(RELU, input)


def erf(input) -> Tensor:
    """The error function, elementwise."""
    return apply(ERF, input)


def erfc(input) -> Tensor:
    """The complementary error function 1 - erf(input), accurate in the tails."""
    return apply(ERFC, input)


def erfinv(input) -> Tensor:
    """The inverse error function, on (-1, 1)."""
    return apply(ERFINV, input)


def lgamma(input) -> Tensor:
    """log |Gamma(input)|, elementwise."""
    return apply(LGAMMA, input)


def digamma(input) -> Tensor:
    """The logarithmic derivative of the gamma function, elementwise."""
    return apply(DIGAMMA, input)


def _check_polygamma(n: int) -> None:
    if n < 0:
        raise RuntimeError("polygamma(n, x) does not support negative n.")


def polygamma(n: int, input) -> Tensor:
    """The n-th derivative of the digamma function, elementwise."""
    _check_polygamma(n)
    return apply(POLYGAMMA, input, n=n)


# ---- public functions: rounding ----------------------------------------------------------------


def floor(input) -> Tensor:
    """The largest integer <= each element."""
    return apply(FLOOR, input)


def ceil(input) -> Tensor:
    """The smallest integer >= each element."""
    return apply(CEIL, input)


def round(input, *, decimals: int | None = None) -> Tensor:
    """Round half to even, to ``decimals`` decimal places (0 by default)."""
    if decimals is None:
        return apply(ROUND, input)
    return apply(ROUND_DECIMALS, input, decimals=decimals)


def trunc(input) -> Tensor:
    """Each element rounded toward zero."""
    return apply(TRUNC, input)


def frac(input) -> Tensor:
    """The fractional part: input - trunc(input)."""
    return apply(FRAC, input)


# ---- public functions: clamping ----------------------------------------------------------------


def _scalar_bounds(kernel: str, input, *bounds):
    """input cast to the dtype PyTorch gives it with number bounds (an int tensor and a float
    bound give the default float dtype); bool results are refused, as in PyTorch."""
    target = result_type([input._data], [b for b in bounds if b is not None])
    if target.kind == "b":
        raise _unsupported(kernel, target)
    return input if target == input._data.dtype else input.to(target)


def _tensor_bounds(name: str, min, max) -> bool:
    """True for tensor bounds, False for numbers; PyTorch refuses a mix."""
    kinds = {isinstance(b, Tensor) for b in (min, max) if b is not None}
    if len(kinds) > 1:
        raise TypeError(f"{name}() received an invalid combination of arguments: min and max must "
                        "both be Tensors or both be numbers")
    return kinds == {True}


def clamp(input, min=None, max=None) -> Tensor:
    """Clamp every element into [min, max] (numbers or broadcast tensors)."""
    if min is None and max is None:
        raise RuntimeError("torch.clamp: At least one of 'min' or 'max' must not be None")
    if _tensor_bounds("clamp", min, max):
        return apply(CLAMP_TENSOR, input, min, max)
    kernel = "clamp_scalar_cpu" if min is not None and max is not None else (
        "clamp_min_scalar_cpu" if max is None else "clamp_max_scalar_cpu")
    return apply(CLAMP, _scalar_bounds(kernel, input, min, max), min=min, max=max)


def clamp_min(input, min) -> Tensor:
    """max(input, min), with the gradient passed to input where input >= min."""
    if isinstance(min, Tensor):
        return apply(CLAMP_MIN_TENSOR, input, min)
    return apply(CLAMP_MIN, _scalar_bounds("clamp_min_scalar_cpu", input, min), min=min)


def clamp_max(input, max) -> Tensor:
    """min(input, max), with the gradient passed to input where input <= max."""
    if isinstance(max, Tensor):
        return apply(CLAMP_MAX_TENSOR, input, max)
    return apply(CLAMP_MAX, _scalar_bounds("clamp_max_scalar_cpu", input, max), max=max)


# ---- public functions: binary math -------------------------------------------------------------


def maximum(input, other) -> Tensor:
    """Elementwise maximum (nan if either is nan); ties split the gradient equally."""
    _require_tensor("maximum", "other", 2, other)
    return apply(MAXIMUM, input, other)


def minimum(input, other) -> Tensor:
    """Elementwise minimum (nan if either is nan); ties split the gradient equally."""
    _require_tensor("minimum", "other", 2, other)
    return apply(MINIMUM, input, other)


def fmax(input, other) -> Tensor:
    """Elementwise maximum that ignores a nan when the other element is a number."""
    _require_tensor("fmax", "other", 2, other)
    return apply(FMAX, input, other)


def fmin(input, other) -> Tensor:
    """Elementwise minimum that ignores a nan when the other element is a number."""
    _require_tensor("fmin", "other", 2, other)
    return apply(FMIN, input, other)


def atan2(input, other) -> Tensor:
    """The angle of the point (other, input): arctan(input / other) in the right quadrant."""
    _require_tensor("atan2", "other", 2, other)
    return apply(ATAN2, input, other)


def hypot(input, other) -> Tensor:
    """sqrt(input ** 2 + other ** 2), without overflow."""
    _require_tensor("hypot", "other", 2, other)
    return apply(HYPOT, input, other)


def _float_scalar(value, like: Tensor) -> Tensor:
    """A Python number as a 0-dim tensor of like's float dtype (the default one for integers)."""
    dtype = like._data.dtype if like._data.dtype.kind in "fcV" else get_default_dtype().np
    return like.new_full((), value, dtype=dtype)


def xlogy(input, other) -> Tensor:
    """input * log(other), with 0 where input is 0 (unless other is nan)."""
    if not isinstance(input, Tensor):
        input = _float_scalar(input, other)
    if not isinstance(other, Tensor):
        other = _float_scalar(other, input)
    return apply(XLOGY, input, other)


def _logaddexp(input, other, exp_, log_) -> Tensor:
    # Shifted by the larger input, a constant for the derivatives (so ties are smooth: each side
    # gets half); a non-finite maximum is not shifted by, so -inf, -inf gives -inf.
    m = maximum(input, other).detach()
    m = where(isfinite(m), m, 0.0)
    return log_(exp_(input - m) + exp_(other - m)) + m


def logaddexp(input, other) -> Tensor:
    """log(exp(input) + exp(other)), without overflow."""
    _require_tensor("logaddexp", "other", 2, other)
    return _logaddexp(input, other, exp, log)


def logaddexp2(input, other) -> Tensor:
    """log2(2 ** input + 2 ** other), without overflow."""
    _require_tensor("logaddexp2", "other", 2, other)
    return _logaddexp(input, other, exp2, log2)


def isclose(input, other, rtol: float = 1e-05, atol: float = 1e-08,
            equal_nan: bool = False) -> Tensor:
    """True where |input - other| <= atol + rtol * |other| (equal infinities are close; nan is
    close to nan only with ``equal_nan``)."""
    _require_tensor("isclose", "other", 2, other)
    if input._data.dtype != other._data.dtype:
        raise RuntimeError(f"{_KERNEL_NAMES.get(input._data.dtype.name)} did not match "
                           f"{_KERNEL_NAMES.get(other._data.dtype.name)}")
    if rtol < 0:
        raise RuntimeError(f"rtol must be greater than or equal to zero, but got {rtol}")
    if atol < 0:
        raise RuntimeError(f"atol must be greater than or equal to zero, but got {atol}")
    input, other = input.detach(), other.detach()
    close = input == other
    if equal_nan:
        close = close | (isnan(input) & isnan(other))
    if input._data.dtype.kind == "b":
        return close
    finite = isfinite(input) & isfinite(other)
    return close | (finite & ((input - other).abs() <= atol + rtol * other.abs()))


def allclose(input, other, rtol: float = 1e-05, atol: float = 1e-08,
             equal_nan: bool = False) -> bool:
    """Whether every element of input is close to other's (see ``isclose``)."""
    return bool(isclose(input, other, rtol, atol, equal_nan).all())


def _same_dtype(name: str, input: Tensor, other: Tensor) -> None:
    if other._data.dtype != input._data.dtype:
        raise RuntimeError(f"expected dtype {_C_NAMES.get(input._data.dtype.name)} for `{name}` "
                           f"but got dtype {_C_NAMES.get(other._data.dtype.name)}")


def lerp(input, end, weight) -> Tensor:
    """input + weight * (end - input), for a number or tensor weight."""
    _require_tensor("lerp", "end", 2, end)
    _same_dtype("end", input, end)
    tensor_weight = isinstance(weight, Tensor)
    if tensor_weight:
        _same_dtype("weight", input, weight)
    if input._data.dtype.kind not in "fcV":
        kernel = "lerp_kernel_tensor" if tensor_weight else "lerp_kernel_scalar"
        raise _unsupported(kernel, input._data.dtype)
    if tensor_weight:
        return apply(LERP_TENSOR, input, end, weight)
    return apply(LERP, input, end, weight=weight)


def addcmul(input, tensor1, tensor2, *, value=1) -> Tensor:
    """input + value * tensor1 * tensor2, broadcast."""
    return apply(ADDCMUL, input, tensor1, tensor2, value=value)


def addcdiv(input, tensor1, tensor2, *, value=1) -> Tensor:
    """input + value * tensor1 / tensor2, broadcast."""
    if tensor1._data.dtype.kind in "biu" and tensor2._data.dtype.kind in "biu":
        raise RuntimeError(
            "Integer division with addcdiv is no longer supported, and in a future  release "
            "addcdiv will perform a true division of tensor1 and tensor2. The historic addcdiv "
            "behavior can be implemented as (input + value * torch.trunc(tensor1 / tensor2))"
            ".to(input.dtype) for integer inputs and as (input + value * tensor1 / tensor2) for "
            "float inputs. The future addcdiv behavior is just the latter implementation: "
            "(input + value * tensor1 / tensor2), for all dtypes.")
    return apply(ADDCDIV, input, tensor1, tensor2, value=value)


# ---- public functions: masking and tests -------------------------------------------------------


def _masked_fill_op(mask, value):
    if mask._data.dtype.kind != "b":
        raise RuntimeError("masked_fill_ only supports boolean masks, but got mask with dtype "
                           f"{_C_NAMES.get(mask._data.dtype.name, mask._data.dtype.name)}")
    if isinstance(value, Tensor):
        if value._data.ndim:
            raise RuntimeError("masked_fill_ only supports a 0-dimensional value tensor, but got "
                               f"tensor with {value._data.ndim} dimension(s).")
        return MASKED_FILL_TENSOR
    return MASKED_FILL


def masked_fill(input, mask, value) -> Tensor:
    """A copy of input with ``value`` (a number or 0-dim tensor) where ``mask`` is True."""
    op = _masked_fill_op(mask, value)
    if op is MASKED_FILL:
        return apply(op, input, mask, value=value)
    return apply(op, input, mask, value)


def nan_to_num(input, nan: float = 0.0, posinf: float | None = None,
               neginf: float | None = None) -> Tensor:
    """nan, +inf and -inf replaced by ``nan``, ``posinf`` and ``neginf`` (default: the dtype's
    largest and smallest finite values)."""
    return apply(NAN_TO_NUM, input, nan=nan, posinf=posinf, neginf=neginf)


def where(condition, input=None, other=None) -> Tensor:
    """Elements of input where condition holds, else of other."""
    if input is None and other is None:
        raise NotImplementedError(
            "where(condition) with one argument is not implemented yet; "
            "use condition.nonzero(as_tuple=True)"
        )
    bool_condition(condition)
    return apply(WHERE, condition, input, other)


def isnan(input) -> Tensor:
    """True where input is nan."""
    return apply(ISNAN, input)


def isinf(input) -> Tensor:
    """True where input is +inf or -inf."""
    return apply(ISINF, input)


def isfinite(input) -> Tensor:
    """True where input is neither nan nor infinite."""
    return apply(ISFINITE, input)


def isposinf(input) -> Tensor:
    """True where input is +inf."""
    return apply(ISPOSINF, input)


def isneginf(input) -> Tensor:
    """True where input is -inf."""
    return apply(ISNEGINF, input)


# ---- public functions: comparisons and logic ---------------------------------------------------


def eq(input, other) -> Tensor:
    """input == other, elementwise (bool)."""
    return apply(EQ, input, other)


def ne(input, other) -> Tensor:
    """input != other, elementwise (bool)."""
    return apply(NE, input, other)


def lt(input, other) -> Tensor:
    """input < other, elementwise (bool)."""
    return apply(LT, input, other)


def le(input, other) -> Tensor:
    """input <= other, elementwise (bool)."""
    return apply(LE, input, other)


def gt(input, other) -> Tensor:
    """input > other, elementwise (bool)."""
    return apply(GT, input, other)


def ge(input, other) -> Tensor:
    """input >= other, elementwise (bool)."""
    return apply(GE, input, other)


def logical_and(input, other) -> Tensor:
    """Elementwise logical AND (bool)."""
    _require_tensor("logical_and", "other", 2, other)
    return apply(LOGICAL_AND, input, other)


def logical_or(input, other) -> Tensor:
    """Elementwise logical OR (bool)."""
    _require_tensor("logical_or", "other", 2, other)
    return apply(LOGICAL_OR, input, other)


def logical_xor(input, other) -> Tensor:
    """Elementwise logical XOR (bool)."""
    _require_tensor("logical_xor", "other", 2, other)
    return apply(LOGICAL_XOR, input, other)


def logical_not(input) -> Tensor:
    """Elementwise logical NOT (bool)."""
    return apply(LOGICAL_NOT, input)


def bitwise_and(input, other) -> Tensor:
    """Bitwise AND of integer or bool tensors."""
    return apply(BITWISE_AND, input, other)


def bitwise_or(input, other) -> Tensor:
    """Bitwise OR of integer or bool tensors."""
    return apply(BITWISE_OR, input, other)


def bitwise_xor(input, other) -> Tensor:
    """Bitwise XOR of integer or bool tensors."""
    return apply(BITWISE_XOR, input, other)


def bitwise_not(input) -> Tensor:
    """Bitwise NOT of an integer or bool tensor."""
    return apply(BITWISE_NOT, input)


def bitwise_left_shift(input, other) -> Tensor:
    """input << other, for integers."""
    return apply(BITWISE_LEFT_SHIFT, input, other)


def bitwise_right_shift(input, other) -> Tensor:
    """input >> other (arithmetic), for integers."""
    return apply(BITWISE_RIGHT_SHIFT, input, other)


# ---- tables: functions, methods, in-place variants, operators --------------------------------

FUNCTIONS = {
    f.__name__: f
    for f in (
        add, sub, rsub, mul, div, true_divide, floor_divide, remainder, fmod, neg, pow, square,
        exp, exp2, expm1, log, log2, log10, log1p, sqrt, rsqrt, reciprocal,
        sin, cos, tan, asin, acos, atan, sinh, cosh, tanh, asinh, acosh, atanh,
        abs, sign, sigmoid, logit, relu, erf, erfc, erfinv, lgamma, digamma, polygamma,
        floor, ceil, round, trunc, frac, clamp, clamp_min, clamp_max,
        maximum, minimum, fmax, fmin, atan2, hypot, xlogy, logaddexp, logaddexp2, isclose,
        allclose, lerp, addcmul, addcdiv,
        masked_fill, nan_to_num, where, isnan, isinf, isfinite, isposinf, isneginf,
        eq, ne, lt, le, gt, ge, logical_and, logical_or, logical_xor, logical_not,
        bitwise_and, bitwise_or, bitwise_xor, bitwise_not, bitwise_left_shift,
        bitwise_right_shift,
    )
}
_ALIASES = {
    "clip": clamp, "multiply": mul, "divide": div, "subtract": sub, "negative": neg,
    "absolute": abs, "fix": trunc, "arcsin": asin, "arccos": acos, "arctan": atan,
    "arcsinh": asinh, "arccosh": acosh, "arctanh": atanh, "arctan2": atan2, "greater": gt,
    "less": lt, "greater_equal": ge, "less_equal": le, "not_equal": ne,
}
FUNCTIONS.update(_ALIASES)


def _polygamma_method(self, n: int) -> Tensor:
    """The n-th derivative of the digamma function, elementwise."""
    return polygamma(n, self)


def _where_method(self, condition, other) -> Tensor:
    """Elements of self where condition holds, else of other."""
    return where(condition, self, other)


# Tensor methods: every function above whose first argument is the tensor.
METHODS = {name: fn for name, fn in FUNCTIONS.items() if name not in ("rsub", "where", "polygamma")}
METHODS.update(polygamma=_polygamma_method, where=_where_method)

# In-place variants whose call is ``target.name_(*tensors_or_numbers)``.
INPLACE = {
    "neg_": NEG, "negative_": NEG, "abs_": ABS, "absolute_": ABS, "sign_": SIGN,
    "exp_": EXP, "exp2_": EXP2, "expm1_": EXPM1, "log_": LOG, "log2_": LOG2, "log10_": LOG10,
    "log1p_": LOG1P, "sqrt_": SQRT, "rsqrt_": RSQRT, "reciprocal_": RECIPROCAL,
    "sin_": SIN, "cos_": COS, "tan_": TAN, "asin_": ASIN, "acos_": ACOS, "atan_": ATAN,
    "arcsin_": ASIN, "arccos_": ACOS, "arctan_": ATAN, "sinh_": SINH, "cosh_": COSH,
    "tanh_": TANH, "asinh_": ASINH, "acosh_": ACOSH, "atanh_": ATANH, "arcsinh_": ASINH,
    "arccosh_": ACOSH, "arctanh_": ATANH, "sigmoid_": SIGMOID, "relu_": RELU,
    "erf_": ERF, "erfc_": ERFC, "erfinv_": ERFINV, "lgamma_": LGAMMA, "digamma_": DIGAMMA,
    "floor_": FLOOR, "ceil_": CEIL, "trunc_": TRUNC, "fix_": TRUNC, "frac_": FRAC,
    "add_": ADD, "sub_": SUB, "mul_": MUL, "multiply_": MUL, "true_divide_": DIV,
    "floor_divide_": FLOOR_DIVIDE, "atan2_": ATAN2, "arctan2_": ATAN2, "hypot_": HYPOT,
    "xlogy_": XLOGY,
    "bitwise_and_": BITWISE_AND, "bitwise_or_": BITWISE_OR, "bitwise_xor_": BITWISE_XOR,
    "bitwise_not_": BITWISE_NOT, "bitwise_left_shift_": BITWISE_LEFT_SHIFT,
    "bitwise_right_shift_": BITWISE_RIGHT_SHIFT,
}


def _clamp_(self, min=None, max=None):
    if min is None and max is None:
        raise RuntimeError("torch.clamp: At least one of 'min' or 'max' must not be None")
    if _tensor_bounds("clamp_", min, max):
        return apply_inplace(CLAMP_TENSOR, self, min, max)
    return apply_inplace(CLAMP, self, min=min, max=max)


def _clamp_min_(self, min):
    if isinstance(min, Tensor):
        return apply_inplace(CLAMP_MIN_TENSOR, self, min)
    return apply_inplace(CLAMP_MIN, self, min=min)


def _clamp_max_(self, max):
    if isinstance(max, Tensor):
        return apply_inplace(CLAMP_MAX_TENSOR, self, max)
    return apply_inplace(CLAMP_MAX, self, max=max)


def _pow_(self, exponent):
    if isinstance(exponent, Tensor):
        return apply_inplace(POW_TENSOR, self, exponent)
    return apply_inplace(POW, self, exponent)


def _square_(self):
    return apply_inplace(POW, self, 2)


def _add_(self, other, *, alpha=1):
    if alpha == 1:
        return apply_inplace(ADD, self, other)
    if stack.modes is None:
        return apply_inplace(ADD, self, other * alpha)
    return _with_alpha(apply_inplace, ADD, "add_", _add_, self, other, alpha)


def _sub_(self, other, *, alpha=1):
    _check_subtraction(self, other)
    if alpha == 1:
        return apply_inplace(SUB, self, other)
    if stack.modes is None:
        return apply_inplace(SUB, self, other * alpha)
    return _with_alpha(apply_inplace, SUB, "sub_", _sub_, self, other, alpha)


def _div_(self, other, *, rounding_mode: str | None = None):
    if rounding_mode is None:
        return apply_inplace(DIV, self, other)
    _rounding_mode(rounding_mode)
    return apply_inplace(DIV_ROUNDING, self, other, rounding_mode=rounding_mode)


def _remainder_(self, other):
    return apply_inplace(REMAINDER if isinstance(other, Tensor) else REMAINDER_SCALAR, self, other)


def _fmod_(self, other):
    return apply_inplace(FMOD if isinstance(other, Tensor) else FMOD_SCALAR, self, other)


def _round_(self, *, decimals: int | None = None):
    if decimals is None:
        return apply_inplace(ROUND, self)
    return apply_inplace(ROUND_DECIMALS, self, decimals=decimals)


def _logit_(self, eps: float | None = None):
    return apply_inplace(LOGIT, self, eps=eps)


def _polygamma_(self, n: int):
    _check_polygamma(n)
    return apply_inplace(POLYGAMMA_, self, n=n)


def _lerp_(self, end, weight):
    _same_dtype("end", self, end)
    if isinstance(weight, Tensor):
        _same_dtype("weight", self, weight)
        return apply_inplace(LERP_TENSOR, self, end, weight)
    return apply_inplace(LERP, self, end, weight=weight)


def _addcmul_(self, tensor1, tensor2, *, value=1):
    return apply_inplace(ADDCMUL, self, tensor1, tensor2, value=value)


def _addcdiv_(self, tensor1, tensor2, *, value=1):
    return apply_inplace(ADDCDIV, self, tensor1, tensor2, value=value)


def _masked_fill_(self, mask, value):
    op = _masked_fill_op(mask, value)
    if op is MASKED_FILL:
        return apply_inplace(op, self, mask, value=value)
    return apply_inplace(op, self, mask, value)


def _nan_to_num_(self, nan: float = 0.0, posinf: float | None = None,
                 neginf: float | None = None):
    return apply_inplace(NAN_TO_NUM, self, nan=nan, posinf=posinf, neginf=neginf)


def _written(fn):
    """``target.fn_(other)`` for comparisons and logic: the bool result written into target's
    dtype (copy_ records it; its gradient is zero, as PyTorch's)."""
    if fn is logical_not:
        def method(self):
            return self.copy_(fn(self))
    else:
        def method(self, other):
            return self.copy_(fn(self, other))

    method.__name__ = fn.__name__ + "_"
    return method


INPLACE_METHODS = {
    "clamp_": _clamp_, "clip_": _clamp_, "clamp_min_": _clamp_min_, "clamp_max_": _clamp_max_,
    "pow_": _pow_, "square_": _square_, "add_": _add_, "sub_": _sub_, "subtract_": _sub_,
    "div_": _div_, "divide_": _div_, "remainder_": _remainder_, "fmod_": _fmod_,
    "round_": _round_, "logit_": _logit_, "polygamma_": _polygamma_, "lerp_": _lerp_,
    "addcmul_": _addcmul_, "addcdiv_": _addcdiv_, "masked_fill_": _masked_fill_,
    "nan_to_num_": _nan_to_num_,
}
INPLACE_METHODS.update(
    (fn.__name__ + "_", _written(fn))
    for fn in (eq, ne, lt, le, gt, ge, logical_and, logical_or, logical_xor, logical_not)
)
INPLACE_METHODS.update(greater_=INPLACE_METHODS["gt_"], less_=INPLACE_METHODS["lt_"],
                       greater_equal_=INPLACE_METHODS["ge_"], less_equal_=INPLACE_METHODS["le_"],
                       not_equal_=INPLACE_METHODS["ne_"])


def _inplace(op):
    def method(self, other):
        return apply_inplace(op, self, other)

    method.__name__ = op.name + "_"
    return method


def _rsub_operator(self, other) -> Tensor:
    _check_subtraction(self, other)
    return apply(RSUB_TENSOR if isinstance(other, Tensor) else RSUB, self, other)


def _rfloordiv(self, other) -> Tensor:
    return floor_divide(other, self)


def _rmod(self, other) -> Tensor:
    return remainder(other, self)


def _rlshift(self, other) -> Tensor:
    return bitwise_left_shift(other, self)


def _rrshift(self, other) -> Tensor:
    return bitwise_right_shift(other, self)


def _rtruediv(self, other) -> Tensor:
    # As PyTorch: other / self is computed as self.reciprocal() * other.
    return apply(MUL, apply(RECIPROCAL, self), other)


# Operators for ops/__init__.py to attach (for name, fn in DUNDERS.items(): setattr(Tensor, name,
# fn)); __sub__, __rsub__ and __rtruediv__ replace its own (bool checks; 2 / x as torch does it).
DUNDERS = {
    "__floordiv__": floor_divide,
    "__rfloordiv__": _rfloordiv,
    "__ifloordiv__": _inplace(FLOOR_DIVIDE),
    "__mod__": remainder,
    "__rmod__": _rmod,
    "__imod__": _remainder_,
    "__lshift__": bitwise_left_shift,
    "__rlshift__": _rlshift,
    "__rshift__": bitwise_right_shift,
    "__rrshift__": _rrshift,
    "__rtruediv__": _rtruediv,
    "__sub__": sub,
    "__rsub__": _rsub_operator,
    "__iand__": _inplace(BITWISE_AND),
    "__ior__": _inplace(BITWISE_OR),
    "__ixor__": _inplace(BITWISE_XOR),
    "__ilshift__": _inplace(BITWISE_LEFT_SHIFT),
    "__irshift__": _inplace(BITWISE_RIGHT_SHIFT),
}
