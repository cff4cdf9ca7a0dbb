"""Elementwise ops: arithmetic, unary math, activations and comparisons."""

from __future__ import annotations

from .._backend import result_type, xp
from .._dispatch import apply, apply_inplace
from ..tensor import Tensor
from ._registry import ZERO, defop

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
RSUB = defop(
    "rsub",
    lambda input, other: xp.subtract(other, input),
    ("input", "other"),
    (lambda g: -g, lambda g: g),
    promote=True,
    backward_name="RsubBackward1",
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
NEG = defop("neg", xp.negative, ("input",), (lambda g: -g,), jvp="elementwise")


def _pow_grad(g, input, exponent):
    if exponent == 0:
        return g.new_zeros(g.shape)
    return g * (exponent * input ** (exponent - 1))


def _pow_exponent_grad(g, input, out):
    # d/dy x**y = x**y log x; PyTorch takes it as 0 where x == 0 (the limit for y > 0).
    return g * where(input == 0, 0.0, out * log(input))


POW = defop(
    "pow",
    xp.power,
    ("input", "exponent"),
    (_pow_grad, None),
    promote=True,
    backward_name="PowBackward0",
    jvp="elementwise",
)
POW_TENSOR = defop(
    "pow_tensor",
    xp.power,
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

EXP = defop("exp", xp.exp, ("input",), (lambda g, out: g * out,), float_out=True, jvp="elementwise")
LOG = defop(
    "log", xp.log, ("input",), (lambda g, input: g / input,), float_out=True, jvp="elementwise"
)
SIN = defop(
    "sin", xp.sin, ("input",), (lambda g, input: g * cos(input),), float_out=True, jvp="elementwise"
)
COS = defop(
    "cos",
    xp.cos,
    ("input",),
    (lambda g, input: g * -sin(input),),
    float_out=True,
    jvp="elementwise",
)
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
TANH = defop(
    "tanh",
    xp.tanh,
    ("input",),
    (lambda g, out: apply(TANH_BACKWARD, g, out),),
    float_out=True,
    jvp="elementwise",
)
SQRT = defop(
    "sqrt", xp.sqrt, ("input",), (lambda g, out: g / (2 * out),), float_out=True, jvp="elementwise"
)
ABS = defop("abs", xp.abs, ("input",), (lambda g, input: g * sign(input),), jvp="elementwise")
SIGN = defop("sign", xp.sign, ("input",), (ZERO,), jvp="elementwise")


def _sigmoid(input):
    # exp of a non-positive number only: no overflow for large |x|.
    e = xp.exp(-xp.abs(input))
    return xp.where(input >= 0, 1 / (1 + e), e / (1 + e)).astype(input.dtype, copy=False)


SIGMOID = defop(
    "sigmoid",
    _sigmoid,
    ("input",),
    (lambda g, out: apply(SIGMOID_BACKWARD, g, out),),
    float_out=True,
    jvp="elementwise",
)
RELU = defop(
    "relu",
    lambda input: xp.maximum(input, 0, dtype=input.dtype),
    ("input",),
    (lambda g, out: g * (out > 0),),
    jvp="elementwise",
)


def _clamp(input, min=None, max=None):
    return xp.clip(input, min, max) if min is not None or max is not None else input.copy()


def _clamp_grad(g, input, min, max):
    # PyTorch passes the gradient where min <= x <= max, bounds included.
    if min is None:
        return g * (input <= max)
    if max is None:
        return g * (input >= min)
    return g * logical_and(input >= min, input <= max)


CLAMP = defop(
    "clamp",
    _clamp,
    ("input",),
    (_clamp_grad,),
    promote=True,
    backward_name="ClampBackward1",
    jvp="elementwise",
)

# ---- comparisons and logic (no gradient) -----------------------------------------------------


def _compare(name: str, ufunc):
    return defop(name, ufunc, ("input", "other"), (None, None), promote=True, differentiable=False)


EQ = _compare("eq", xp.equal)
NE = _compare("ne", xp.not_equal)
LT = _compare("lt", xp.less)
LE = _compare("le", xp.less_equal)
GT = _compare("gt", xp.greater)
GE = _compare("ge", xp.greater_equal)
LOGICAL_AND = _compare("logical_and", xp.logical_and)
LOGICAL_OR = _compare("logical_or", xp.logical_or)
BITWISE_AND = _compare("bitwise_and", xp.bitwise_and)
BITWISE_OR = _compare("bitwise_or", xp.bitwise_or)
BITWISE_XOR = _compare("bitwise_xor", xp.bitwise_xor)
LOGICAL_NOT = defop("logical_not", xp.logical_not, ("input",), (None,), differentiable=False)
BITWISE_NOT = defop("bitwise_not", xp.invert, ("input",), (None,), differentiable=False)


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


# ---- public functions --------------------------------------------------------------------------


def add(input, other, *, alpha=1) -> Tensor:
    """input + alpha * other, broadcast."""
    return apply(ADD, input, other if alpha == 1 else other * alpha)


def sub(input, other, *, alpha=1) -> Tensor:
    """input - alpha * other, broadcast."""
    return apply(SUB, input, other if alpha == 1 else other * alpha)


def rsub(input, other, *, alpha=1) -> Tensor:
    """other - alpha * input."""
    return apply(RSUB, input if alpha == 1 else input * alpha, other)


def mul(input, other) -> Tensor:
    """input * other, broadcast."""
    return apply(MUL, input, other)


def div(input, other) -> Tensor:
    """input / other (true division), broadcast."""
    return apply(DIV, input, other)


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


def exp(input) -> Tensor:
    """e ** input, elementwise."""
    return apply(EXP, input)


def log(input) -> Tensor:
    """Natural logarithm, elementwise."""
    return apply(LOG, input)


def sin(input) -> Tensor:
    """Sine, elementwise."""
    return apply(SIN, input)


def cos(input) -> Tensor:
    """Cosine, elementwise."""
    return apply(COS, input)


def tanh(input) -> Tensor:
    """Hyperbolic tangent, elementwise."""
    return apply(TANH, input)


def sqrt(input) -> Tensor:
    """Square root, elementwise."""
    return apply(SQRT, input)


def abs(input) -> Tensor:
    """Absolute value, elementwise."""
    return apply(ABS, input)


def sign(input) -> Tensor:
    """-1, 0 or 1 by the sign of each element."""
    return apply(SIGN, input)


def sigmoid(input) -> Tensor:
    """1 / (1 + exp(-input)), computed stably."""
    return apply(SIGMOID, input)


def relu(input) -> Tensor:
    """max(input, 0); the gradient at 0 is 0, as in PyTorch."""
    return apply(RELU, input)


def clamp(input, min=None, max=None) -> Tensor:
    """Clamp every element into [min, max]."""
    if min is None and max is None:
        raise RuntimeError("clamp: at least one of 'min' or 'max' must not be None")
    if isinstance(min, Tensor) or isinstance(max, Tensor):
        raise NotImplementedError(
            "clamp with tensor bounds is not implemented yet; use "
            "maximum/minimum or Python number bounds"
        )
    return apply(CLAMP, input, min=min, max=max)


clip = clamp


def where(condition, input=None, other=None) -> Tensor:
    """Elements of input where condition holds, else of other."""
    if input is None and other is None:
        raise NotImplementedError(
            "where(condition) with one argument is not implemented yet; "
            "use condition.nonzero(as_tuple=True)"
        )
    return apply(WHERE, condition, input, other)


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
    return apply(LOGICAL_AND, input, other)


def logical_or(input, other) -> Tensor:
    """Elementwise logical OR (bool)."""
    return apply(LOGICAL_OR, input, other)


def logical_not(input) -> Tensor:
    """Elementwise logical NOT (bool)."""
    return apply(LOGICAL_NOT, input)


FUNCTIONS = {
    f.__name__: f
    for f in (
        add,
        sub,
        rsub,
        mul,
        div,
        neg,
        pow,
        exp,
        log,
        sin,
        cos,
        tanh,
        sqrt,
        abs,
        sign,
        sigmoid,
        relu,
        clamp,
        where,
        eq,
        ne,
        lt,
        le,
        gt,
        ge,
        logical_and,
        logical_or,
        logical_not,
    )
}
FUNCTIONS.update(
    clip=clamp,
    multiply=mul,
    divide=div,
    subtract=sub,
    negative=neg,
    absolute=abs,
    greater=gt,
    less=lt,
    greater_equal=ge,
    less_equal=le,
    not_equal=ne,
)

METHODS = {
    name: FUNCTIONS[name]
    for name in (
        "add",
        "sub",
        "mul",
        "div",
        "neg",
        "pow",
        "exp",
        "log",
        "sin",
        "cos",
        "tanh",
        "sqrt",
        "abs",
        "sign",
        "sigmoid",
        "relu",
        "clamp",
        "clip",
        "eq",
        "ne",
        "lt",
        "le",
        "gt",
        "ge",
        "logical_and",
        "logical_or",
        "logical_not",
        "multiply",
        "divide",
        "subtract",
        "negative",
        "absolute",
        "greater",
        "less",
        "greater_equal",
        "less_equal",
        "not_equal",
    )
}

INPLACE = {
    "add_": ADD,
    "sub_": SUB,
    "mul_": MUL,
    "div_": DIV,
    "neg_": NEG,
    "exp_": EXP,
    "log_": LOG,
    "sin_": SIN,
    "cos_": COS,
    "tanh_": TANH,
    "sqrt_": SQRT,
    "abs_": ABS,
    "sigmoid_": SIGMOID,
    "relu_": RELU,
}


def _clamp_(self, min=None, max=None):
    return apply_inplace(CLAMP, self, min=min, max=max)


def _pow_(self, exponent):
    if isinstance(exponent, Tensor):
        return apply_inplace(POW_TENSOR, self, exponent)
    return apply_inplace(POW, self, exponent)


def _add_(self, other, *, alpha=1):
    return apply_inplace(ADD, self, other if alpha == 1 else other * alpha)


def _sub_(self, other, *, alpha=1):
    return apply_inplace(SUB, self, other if alpha == 1 else other * alpha)


INPLACE_METHODS = {"clamp_": _clamp_, "clip_": _clamp_, "pow_": _pow_, "add_": _add_, "sub_": _sub_}
