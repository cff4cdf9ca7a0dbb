"""Elementwise rows: arithmetic, powers, unary math, activations, comparisons and logic."""

from __future__ import annotations

from ._spec import NONZERO, POSITIVE, REAL, Const, Domain, OpRow, S, T, away, method, op

UNARY = (S(()), S((5,)), S((3, 4)))
BINARY = (
    S((), ()),
    S((3, 4), (3, 4)),
    S((3, 1), (1, 4)),
    S((2, 3), (3,)),
    S((), (2, 3)),
    S((2, 3), ()),
)
ONE_BINARY = (S((3, 1), (1, 4)),)
INTS = Const([[1, -2, 3]])  # int64, shape (1, 3)
BOOLS = Const([[True, False, True], [False, False, True]])
BOOLS_ROW = Const([True, True, False])
MASK = Const([[True, False, True, False], [False, False, True, True], [True, True, False, True]])
# Floats with ties, so the comparisons see equal elements too.
TIED_A = Const([[1.0, 2.0, 3.0], [-1.0, 0.0, 2.5]])
TIED_B = Const([1.0, 0.0, 2.5])
COMPARE = (S((3, 1), (1, 4)), S(TIED_A, TIED_B), S((2, 3), INTS), S((), (2,)))

ARITHMETIC = [
    op("add", BINARY, inplace=("add_", "__iadd__")),
    OpRow(
        "add",
        lambda m, x, y: m.add(x, y, alpha=2),
        BINARY,
        variant="alpha=2",
        inplace={"add_": lambda x, y: x.add_(y, alpha=2)},
    ),
    op("add", (S((2, 3), INTS),), variant="int64 tensor", inplace=("add_",)),
    method("Tensor.__add__", lambda x, y: x + y, BINARY, records=("add",)),
    method("Tensor.__add__", lambda x: x + 2.5, UNARY, variant="float", records=("add",)),
    method("Tensor.__radd__", lambda x: 3 + x, UNARY, records=("add",)),
    op("sub", BINARY, inplace=("sub_", "__isub__")),
    OpRow(
        "sub",
        lambda m, x, y: m.sub(x, y, alpha=0.5),
        BINARY,
        variant="alpha=0.5",
        inplace={"sub_": lambda x, y: x.sub_(y, alpha=0.5)},
    ),
    op("subtract", ONE_BINARY, records=("sub",)),
    method("Tensor.__sub__", lambda x, y: x - y, BINARY, records=("sub",)),
    method("Tensor.__rsub__", lambda x: 2.5 - x, UNARY, records=("rsub",)),
    op("rsub", BINARY),
    OpRow("rsub", lambda m, x, y: m.rsub(x, y, alpha=3), ONE_BINARY, variant="alpha=3"),
    op("mul", BINARY, inplace=("mul_", "__imul__")),
    op("mul", (S((2, 3), INTS),), variant="int64 tensor", inplace=("mul_",)),
    op("multiply", ONE_BINARY, records=("mul",)),
    method("Tensor.__mul__", lambda x, y: x * y, BINARY, records=("mul",)),
    method("Tensor.__rmul__", lambda x: 2 * x, UNARY, records=("mul",)),
    op("div", BINARY, domain=(REAL, NONZERO), inplace=("div_", "__itruediv__")),
    op("div", (S(Const([[1, 2, 3]]), INTS),), variant="int64 tensors", orders=()),
    op("divide", ONE_BINARY, domain=(REAL, NONZERO), records=("div",)),
    method(
        "Tensor.__truediv__", lambda x, y: x / y, BINARY, domain=(REAL, NONZERO), records=("div",)
    ),
    method("Tensor.__truediv__", lambda x: x / 4, UNARY, variant="int", records=("div",)),
    # torch computes 2 / x as x.reciprocal() * 2 (MulBackward0): its grad_fn name is internal.
    method(
        "Tensor.__rtruediv__",
        lambda x: 2 / x,
        UNARY,
        domain=NONZERO,
        orders=(1, 2, 3),
        grad_fn=False,
        records=("div",),
    ),
    op("neg", UNARY, inplace=("neg_",)),
    op("negative", UNARY[1:2], records=("neg",)),
    method("Tensor.__neg__", lambda x: -x, UNARY, records=("neg",)),
    # +x is x itself in both libraries: no op, no grad_fn.
    method("Tensor.__pos__", lambda x: +x, UNARY, orders=(1,)),
]

POWERS = [
    method(
        "Tensor.__pow__",
        lambda x: x**2,
        UNARY,
        variant="2",
        orders=(1, 2, 3),
        records=("pow",),
        inplace={"pow_": lambda x: x.pow_(2), "__ipow__": lambda x: x.__ipow__(2)},
    ),
    OpRow(
        "pow",
        lambda m, x: m.pow(x, 3),
        UNARY,
        variant="3",
        orders=(1, 2, 3),
        inplace={"pow_": lambda x: x.pow_(3)},
    ),
    OpRow(
        "pow", lambda m, x: m.pow(x, 0.5), UNARY, variant="0.5", domain=POSITIVE, orders=(1, 2, 3)
    ),
    OpRow("pow", lambda m, x: m.pow(x, -1), UNARY, variant="-1", domain=NONZERO, orders=(1, 2, 3)),
    OpRow(
        "pow", lambda m, x: m.pow(x, 0), UNARY, variant="0", inplace={"pow_": lambda x: x.pow_(0)}
    ),
    OpRow(
        "pow",
        lambda m, x: m.pow(x, 2.5),
        (S((5,)),),
        variant="2.5 at 0",
        domain=POSITIVE,
        kinks=(0.0,),
    ),
    op(
        "pow",
        BINARY,
        variant="tensor",
        domain=(POSITIVE, REAL),
        orders=(1, 2, 3),
        records=("pow_tensor",),
        inplace=("pow_", "__ipow__"),
    ),
    # d/dy x**y at x == 0 is taken as 0 (the limit for y > 0).
    op(
        "pow",
        (S((3, 4), T((3, 4), POSITIVE)), S((6,), T((6,), Domain(1.5, 3.0)))),
        variant="tensor at 0",
        domain=POSITIVE,
        kinks=(0.0,),
        records=("pow_tensor",),
    ),
    op(
        "pow", (S((2, 3), INTS),), variant="int64 exponent", domain=NONZERO, records=("pow_tensor",)
    ),
    method(
        "Tensor.__pow__",
        lambda x, y: x**y,
        BINARY[:3],
        variant="tensor",
        domain=(POSITIVE, REAL),
        records=("pow_tensor",),
    ),
    OpRow(
        "pow",
        lambda m, x: m.pow(2.0, x),
        UNARY,
        variant="scalar base",
        orders=(1, 2, 3),
        records=("rpow",),
    ),
    method("Tensor.__rpow__", lambda x: 3**x, UNARY, orders=(1, 2, 3), records=("rpow",)),
]

UNARY_MATH = [
    op("exp", UNARY, orders=(1, 2, 3), inplace=("exp_",)),
    op("log", UNARY, domain=POSITIVE, orders=(1, 2, 3), inplace=("log_",)),
    op("sin", UNARY, orders=(1, 2, 3), inplace=("sin_",)),
    op("cos", UNARY, orders=(1, 2, 3), inplace=("cos_",)),
    op("tanh", UNARY, orders=(1, 2, 3), inplace=("tanh_",)),
    op("sqrt", UNARY, domain=POSITIVE, orders=(1, 2, 3), kinks=(0.0,), inplace=("sqrt_",)),
    op("abs", UNARY, domain=away(0.0), kinks=(0.0,), inplace=("abs_",)),
    op("absolute", UNARY[1:2], domain=away(0.0), records=("abs",)),
    method("Tensor.__abs__", lambda x: abs(x), UNARY, domain=away(0.0), records=("abs",)),
    op("sign", UNARY, domain=away(0.0), kinks=(0.0,)),
    op("sigmoid", UNARY, orders=(1, 2, 3), inplace=("sigmoid_",)),
    op(
        "sigmoid",
        (S((8,)),),
        variant="large",
        domain=Domain(-40.0, 40.0, avoid=(0.0,), gap=20.0),
        orders=(1,),
    ),
    op("relu", UNARY, domain=away(0.0), kinks=(0.0,), inplace=("relu_",)),
]

CLAMP_DOMAIN = away(-0.5, 0.5)
CLAMPS = [
    OpRow(
        "clamp",
        lambda m, x: m.clamp(x, -0.5, 0.5),
        UNARY,
        variant="min,max",
        domain=CLAMP_DOMAIN,
        kinks=(-0.5, 0.5),
        inplace={"clamp_": lambda x: x.clamp_(-0.5, 0.5), "clip_": lambda x: x.clip_(-0.5, 0.5)},
    ),
    OpRow(
        "clamp",
        lambda m, x: m.clamp(x, min=0.5),
        UNARY,
        variant="min",
        domain=CLAMP_DOMAIN,
        kinks=(0.5,),
        inplace={"clamp_": lambda x: x.clamp_(min=0.5)},
    ),
    OpRow(
        "clamp",
        lambda m, x: m.clamp(x, max=-0.5),
        UNARY,
        variant="max",
        domain=CLAMP_DOMAIN,
        kinks=(-0.5,),
        inplace={"clamp_": lambda x: x.clamp_(max=-0.5)},
    ),
    OpRow("clamp", lambda m, x: m.clamp(x, min=0.5), (S(INTS),), variant="int64 input", orders=()),
    OpRow(
        "clip", lambda m, x: m.clip(x, -0.5, 0.5), UNARY, domain=CLAMP_DOMAIN, records=("clamp",)
    ),
]

WHERE = [
    op(
        "where",
        (
            S(BOOLS_ROW, (2, 3), (2, 3)),
            S(Const([[True], [False]]), (3,), (2, 1)),
            S(Const(True), (), (2,)),
            S(BOOLS, (2, 3), T((3,), grad=False)),
        ),
    ),
    OpRow(
        "where",
        lambda m, x: m.where(x > 0, x, 0.0),
        UNARY,
        variant="scalar other",
        domain=away(0.0),
        kinks=(0.0,),
        records=("where", "gt"),
    ),
]


def _no_grad_ops(names, samples, **kwargs) -> list[OpRow]:
    return [op(n, samples, orders=(), **kwargs) for n in names]


COMPARISONS = [
    *_no_grad_ops(("eq", "ne", "lt", "le", "gt", "ge"), COMPARE),
    op("greater", COMPARE[:2], orders=(), records=("gt",)),
    op("less", COMPARE[:2], orders=(), records=("lt",)),
    op("greater_equal", COMPARE[:2], orders=(), records=("ge",)),
    op("less_equal", COMPARE[:2], orders=(), records=("le",)),
    op("not_equal", COMPARE[:2], orders=(), records=("ne",)),
    method("Tensor.__eq__", lambda x, y: x == y, COMPARE, orders=(), records=("eq",)),
    method("Tensor.__ne__", lambda x, y: x != y, COMPARE, orders=(), records=("ne",)),
    method("Tensor.__lt__", lambda x, y: x < y, COMPARE, orders=(), records=("lt",)),
    method("Tensor.__le__", lambda x, y: x <= y, COMPARE, orders=(), records=("le",)),
    method("Tensor.__gt__", lambda x, y: x > y, COMPARE, orders=(), records=("gt",)),
    method("Tensor.__ge__", lambda x, y: x >= y, COMPARE, orders=(), records=("ge",)),
    method(
        "Tensor.__eq__",
        lambda x: x == 1.0,
        (S(TIED_A),),
        variant="scalar",
        orders=(),
        records=("eq",),
    ),
    method(
        "Tensor.__lt__", lambda x: x < 1, (S(TIED_A),), variant="scalar", orders=(), records=("lt",)
    ),
]

LOGIC_SAMPLES = (S(BOOLS, BOOLS_ROW), S(TIED_A, TIED_B), S(BOOLS, INTS))
INT_PAIR = S(Const([[5, -3, 12]]), Const([[6], [-7]]))
LOGIC = [
    *_no_grad_ops(("logical_and", "logical_or"), LOGIC_SAMPLES),
    op("logical_not", (S(BOOLS), S(TIED_A), S(INTS)), orders=()),
    method(
        "Tensor.__and__",
        lambda x, y: x & y,
        (S(BOOLS, BOOLS_ROW), INT_PAIR),
        orders=(),
        records=("bitwise_and",),
    ),
    method("Tensor.__rand__", lambda x: True & x, (S(BOOLS),), orders=(), records=("bitwise_and",)),
    method(
        "Tensor.__or__",
        lambda x, y: x | y,
        (S(BOOLS, BOOLS_ROW), INT_PAIR),
        orders=(),
        records=("bitwise_or",),
    ),
    method("Tensor.__ror__", lambda x: 6 | x, (S(INTS),), orders=(), records=("bitwise_or",)),
    method(
        "Tensor.__xor__",
        lambda x, y: x ^ y,
        (S(BOOLS, BOOLS_ROW), INT_PAIR),
        orders=(),
        records=("bitwise_xor",),
    ),
    method(
        "Tensor.__rxor__", lambda x: False ^ x, (S(BOOLS),), orders=(), records=("bitwise_xor",)
    ),
    method(
        "Tensor.__invert__", lambda x: ~x, (S(BOOLS), S(INTS)), orders=(), records=("bitwise_not",)
    ),
]

ROWS = ARITHMETIC + POWERS + UNARY_MATH + CLAMPS + WHERE + COMPARISONS + LOGIC
