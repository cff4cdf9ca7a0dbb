"""Elementwise rows: arithmetic, powers, unary math, special functions, rounding, clamping, binary
math, masking, tests, comparisons and logic.

Ties and special values (gradient conventions) are put in by ``kinks``; a tie between two inputs
is made by a Const second input equal to the kink value."""

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
NAN = float("nan")
INF = float("inf")

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
    op("subtract", ONE_BINARY, records=("sub",), inplace=("subtract_",)),
    method("Tensor.__sub__", lambda x, y: x - y, BINARY, records=("sub",)),
    method("Tensor.__rsub__", lambda x: 2.5 - x, UNARY, records=("rsub",)),
    op("rsub", BINARY, records=("rsub_tensor",)),
    OpRow("rsub", lambda m, x, y: m.rsub(x, y, alpha=3), ONE_BINARY, variant="alpha=3",
          records=("rsub_tensor",)),
    OpRow("rsub", lambda m, x: m.rsub(x, 2.5), UNARY, variant="scalar other"),
    op("mul", BINARY, inplace=("mul_", "__imul__")),
    op("mul", (S((2, 3), INTS),), variant="int64 tensor", inplace=("mul_",)),
    op("multiply", ONE_BINARY, records=("mul",), inplace=("multiply_",)),
    method("Tensor.__mul__", lambda x, y: x * y, BINARY, records=("mul",)),
    method("Tensor.__rmul__", lambda x: 2 * x, UNARY, records=("mul",)),
    op("div", BINARY, domain=(REAL, NONZERO), inplace=("div_", "__itruediv__")),
    op("div", (S(Const([[1, 2, 3]]), INTS),), variant="int64 tensors", orders=()),
    op("divide", ONE_BINARY, domain=(REAL, NONZERO), records=("div",)),
    method(
        "Tensor.__truediv__", lambda x, y: x / y, BINARY, domain=(REAL, NONZERO), records=("div",)
    ),
    method("Tensor.__truediv__", lambda x: x / 4, UNARY, variant="int", records=("div",)),
    # As torch: 2 / x is x.reciprocal() * 2 (MulBackward0).
    method(
        "Tensor.__rtruediv__",
        lambda x: 2 / x,
        UNARY,
        domain=NONZERO,
        orders=(1, 2, 3),
        records=("reciprocal", "mul"),
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
    OpRow("pow", lambda m, x: m.pow(x, 1), UNARY, variant="1", orders=(1, 2, 3),
          inplace={"pow_": lambda x: x.pow_(1)}),
    OpRow("pow", lambda m, x: m.pow(x, -2), UNARY, variant="-2", domain=NONZERO, orders=(1, 2, 3)),
    OpRow("pow", lambda m, x: m.pow(x, 2.0), UNARY, variant="2.0", orders=(1, 2, 3)),
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
    op("exp2", UNARY, orders=(1, 2, 3), inplace=("exp2_",)),
    op("expm1", UNARY, orders=(1, 2, 3), inplace=("expm1_",)),
    op("log2", UNARY, domain=POSITIVE, inplace=("log2_",)),
    op("log10", UNARY, domain=POSITIVE, inplace=("log10_",)),
    op("log1p", UNARY, domain=Domain(-0.5, 2.0), orders=(1, 2, 3), inplace=("log1p_",)),
    op("rsqrt", UNARY, domain=POSITIVE, orders=(1, 2, 3), inplace=("rsqrt_",)),
    op("square", UNARY, orders=(1, 2, 3), records=("pow",), inplace=("square_",)),
    op("reciprocal", UNARY, domain=NONZERO, orders=(1, 2, 3), inplace=("reciprocal_",)),
    op("tan", UNARY, domain=Domain(-1.2, 1.2), orders=(1, 2, 3), inplace=("tan_",)),
    op("asin", UNARY, domain=Domain(-0.9, 0.9), orders=(1, 2, 3), inplace=("asin_",)),
    op("acos", UNARY, domain=Domain(-0.9, 0.9), inplace=("acos_",)),
    op("atan", UNARY, orders=(1, 2, 3), inplace=("atan_",)),
    op("sinh", UNARY, orders=(1, 2, 3), inplace=("sinh_",)),
    op("cosh", UNARY, orders=(1, 2, 3), inplace=("cosh_",)),
    op("asinh", UNARY, orders=(1, 2, 3)),
    op("acosh", UNARY, domain=Domain(1.2, 3.0), orders=(1, 2, 3)),
    op("atanh", UNARY, domain=Domain(-0.9, 0.9), orders=(1, 2, 3)),
    # torch has no derivative for asinh_, acosh_, atanh_ (backward raises): values only.
    op("asinh", (S(T((5,), grad=False)),), variant="in-place", orders=(),
       inplace=("asinh_", "arcsinh_")),
    op("acosh", (S(T((5,), Domain(1.2, 3.0), grad=False)),), variant="in-place", orders=(),
       inplace=("acosh_", "arccosh_")),
    op("atanh", (S(T((5,), Domain(-0.9, 0.9), grad=False)),), variant="in-place", orders=(),
       inplace=("atanh_", "arctanh_")),
    op("arcsin", UNARY[1:2], domain=Domain(-0.9, 0.9), records=("asin",), inplace=("arcsin_",)),
    op("arccos", UNARY[1:2], domain=Domain(-0.9, 0.9), records=("acos",), inplace=("arccos_",)),
    op("arctan", UNARY[1:2], records=("atan",), inplace=("arctan_",)),
    op("arcsinh", UNARY[1:2], records=("asinh",)),
    op("arccosh", UNARY[1:2], domain=Domain(1.2, 3.0), records=("acosh",)),
    op("arctanh", UNARY[1:2], domain=Domain(-0.9, 0.9), records=("atanh",)),
    op("negative", UNARY[2:], variant="in-place", records=("neg",), inplace=("negative_",)),
    op("absolute", UNARY[2:], variant="in-place", domain=away(0.0), records=("abs",),
       inplace=("absolute_",)),
    op("sign", UNARY[2:], variant="in-place", domain=away(0.0), inplace=("sign_",)),
    op("logit", UNARY, domain=Domain(0.1, 0.9), orders=(1, 2, 3), inplace=("logit_",)),
    # With eps the input is clamped to [eps, 1 - eps]: zero gradient outside, passed at the bounds.
    OpRow("logit", lambda m, x: m.logit(x, 0.2), (S((8,)), S((3, 4))), variant="eps",
          domain=away(0.2, 0.8, low=0.0, high=1.0), kinks=(0.2, 0.8),
          inplace={"logit_": lambda x: x.logit_(0.2)}),
    # Integer and bool inputs: float results in the default dtype, or the input's dtype kept.
    *[op(name, (S(INTS), S(BOOLS)), variant="int64 and bool", orders=())
      for name in ("exp", "exp2", "sqrt", "sin", "sigmoid", "reciprocal", "atan", "logit",
                   "square", "sign")],
    *[op(name, (S(INTS),), variant="int64", orders=()) for name in ("abs", "neg", "log1p")],
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
    OpRow("clamp", lambda m, x: m.clamp(x, min=-1, max=1), (S(BOOLS),), variant="bool input",
          orders=()),
    # Tensor bounds (ClampBackward0): lower bounds in [-1, 0], upper in [0, 1]; then crossed
    # bounds (min > max: the result is max, which gets the gradient).
    op("clamp", (S((3, 4), T((3, 4), Domain(-1.0, 0.0)), T((3, 4), Domain(0.0, 1.0))),
                 S((2, 3), T((3,), Domain(-1.0, 0.0)), T((2, 1), Domain(0.0, 1.0))),
                 S((4,), T((), Domain(-1.0, 0.0)), T((4,), Domain(0.0, 1.0))),
                 S((5,), T((5,), Domain(0.5, 1.0)), T((5,), Domain(-1.0, -0.5)))),
       variant="tensors", records=("clamp_tensor",), inplace=("clamp_",)),
    OpRow("clamp", lambda m, x, lo: m.clamp(x, lo), (S((3, 4), (3, 4)), S((2, 3), (3,))),
          variant="tensor min", records=("clamp_tensor",),
          inplace={"clamp_": lambda x, lo: x.clamp_(lo)}),
    OpRow("clamp", lambda m, x, hi: m.clamp(x, max=hi), (S((3, 4), (3, 4)), S((2, 3), (3,))),
          variant="tensor max", records=("clamp_tensor",),
          inplace={"clip_": lambda x, hi: x.clip_(max=hi)}),
    # Ties between the input and a bound: the input gets the gradient, the bound none.
    OpRow("clamp", lambda m, x, lo, hi: m.clamp(x, lo, hi),
          (S((8,), Const([0.5] * 8), Const([1.5] * 8)),), variant="ties with min",
          domain=away(0.5, 1.5), kinks=(0.5,), records=("clamp_tensor",)),
    OpRow("clamp", lambda m, x, lo, hi: m.clamp(x, lo, hi),
          (S((8,), Const([-1.5] * 8), Const([0.5] * 8)),), variant="ties with max",
          domain=away(0.5, -1.5), kinks=(0.5,), records=("clamp_tensor",)),
    OpRow("clamp", lambda m, lo, x, hi: m.clamp(x, lo, hi),
          (S((8,), Const([0.5] * 8), Const([1.5] * 8)),), variant="ties, min's gradient",
          domain=away(0.5), kinks=(0.5,), records=("clamp_tensor",)),
    OpRow("clamp", lambda m, hi, x, lo: m.clamp(x, lo, hi),
          (S((8,), Const([0.5] * 8), Const([-1.0] * 8)),), variant="ties, max's gradient",
          domain=away(0.5), kinks=(0.5,), records=("clamp_tensor",)),
    OpRow("clip", lambda m, x, lo, hi: m.clip(x, lo, hi), (S((3, 4), (3, 4), (3, 4)),),
          variant="tensors", records=("clamp_tensor",)),
    OpRow("clamp_min", lambda m, x: m.clamp_min(x, 0.5), UNARY, domain=CLAMP_DOMAIN,
          kinks=(0.5,), inplace={"clamp_min_": lambda x: x.clamp_min_(0.5)}),
    OpRow("clamp_min", lambda m, x: m.clamp_min(x, 0.5), (S(INTS),), variant="int64 input",
          orders=()),
    op("clamp_min", BINARY, variant="tensor", records=("clamp_min_tensor",),
       inplace=("clamp_min_",)),
    OpRow("clamp_min", lambda m, lo, x: m.clamp_min(x, lo), (S((8,), Const([0.5] * 8)),),
          variant="ties, min's gradient", domain=away(0.5), kinks=(0.5,),
          records=("clamp_min_tensor",)),
    OpRow("clamp_max", lambda m, x: m.clamp_max(x, -0.5), UNARY, domain=CLAMP_DOMAIN,
          kinks=(-0.5,), inplace={"clamp_max_": lambda x: x.clamp_max_(-0.5)}),
    op("clamp_max", BINARY, variant="tensor", records=("clamp_max_tensor",),
       inplace=("clamp_max_",)),
    OpRow("clamp_max", lambda m, x, hi: m.clamp_max(x, hi), (S((8,), Const([0.5] * 8)),),
          variant="ties", domain=away(0.5), kinks=(0.5,), records=("clamp_max_tensor",)),
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
SHIFTS = S(Const([[5, -3, 12]]), Const([[0], [3]]))
SHIFT_TARGETS = (S(Const([[5, -3, 12], [1, 2, 3]]), Const([[0], [3]])),)
LOGIC = [
    *_no_grad_ops(("logical_and", "logical_or", "logical_xor"), LOGIC_SAMPLES),
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
    *_no_grad_ops(("bitwise_and", "bitwise_or", "bitwise_xor"), (S(BOOLS, BOOLS_ROW), INT_PAIR)),
    op("bitwise_not", (S(BOOLS), S(INTS)), orders=()),
    op("bitwise_left_shift", (SHIFTS, S(INTS, Const(2))), orders=()),
    op("bitwise_right_shift", (SHIFTS, S(Const([[-64, 64, 7]]), Const(3))), orders=()),
    method("Tensor.__lshift__", lambda x, y: x << y, (SHIFTS,), orders=(),
           records=("bitwise_left_shift",)),
    method("Tensor.__lshift__", lambda x: x << 3, (S(INTS),), variant="number", orders=(),
           records=("bitwise_left_shift",)),
    method("Tensor.__rlshift__", lambda x: 3 << x, (S(Const([[0, 1, 4]])),), orders=(),
           records=("bitwise_left_shift",)),
    method("Tensor.__rshift__", lambda x, y: x >> y, (SHIFTS,), orders=(),
           records=("bitwise_right_shift",)),
    method("Tensor.__rrshift__", lambda x: 100 >> x, (S(Const([[0, 1, 4]])),), orders=(),
           records=("bitwise_right_shift",)),
]


def _on_copy(name: str, *args):
    """``target.<name>(*args)`` on a copy of an integer or bool target (no gradient)."""

    def call(m, x, *rest):
        target = x.clone()
        if getattr(target, name)(*rest, *args) is not target:
            raise AssertionError(f"{name} did not return its target")
        return target

    return call


# In-place logic, bitwise ops and comparisons: on integer and bool targets, and on float targets
# that require grad (the result is written in the target's dtype; values only: torch gives the
# comparisons a zero gradient, but leaves its logical in-place ops unrecorded).
INT_TARGETS = (S(Const([[5, -3, 12], [0, 1, 7]]), Const([[6, 1, -7]])),)
BOOL_TARGETS = (S(BOOLS, BOOLS_ROW),)
INPLACE_LOGIC = [
    *[OpRow(f"Tensor.{name}_", _on_copy(name + "_"), INT_TARGETS + BOOL_TARGETS, orders=(),
            records=(name,))
      for name in ("bitwise_and", "bitwise_or", "bitwise_xor", "logical_and", "logical_or",
                   "logical_xor", "eq", "ne", "lt", "le", "gt", "ge")],
    OpRow("Tensor.bitwise_not_", _on_copy("bitwise_not_"), (S(BOOLS), S(INTS)), orders=(),
          records=("bitwise_not",)),
    OpRow("Tensor.bitwise_left_shift_", _on_copy("bitwise_left_shift_"), SHIFT_TARGETS,
          orders=(), records=("bitwise_left_shift",)),
    OpRow("Tensor.bitwise_right_shift_", _on_copy("bitwise_right_shift_"), SHIFT_TARGETS,
          orders=(), records=("bitwise_right_shift",)),
    *[OpRow(f"Tensor.{name}", _on_copy(name), INT_TARGETS + BOOL_TARGETS, orders=(),
            records=(record,))
      for name, record in (("__iand__", "bitwise_and"), ("__ior__", "bitwise_or"),
                           ("__ixor__", "bitwise_xor"))],
    OpRow("Tensor.__ilshift__", _on_copy("__ilshift__"), SHIFT_TARGETS, orders=(),
          records=("bitwise_left_shift",)),
    OpRow("Tensor.__irshift__", _on_copy("__irshift__"), SHIFT_TARGETS, orders=(),
          records=("bitwise_right_shift",)),
    OpRow("logical_not", lambda m, x: x.logical_not(), (S((2, 3)),), variant="float target",
          orders=(), grad_fn=False, inplace=("logical_not_",)),
    op("logical_and", (S((2, 3), BOOLS_ROW), S((2, 3), (3,))), variant="float target",
       orders=(), grad_fn=False, inplace=("logical_and_",)),
    op("logical_or", (S((2, 3), BOOLS_ROW),), variant="float target", orders=(), grad_fn=False,
       inplace=("logical_or_",)),
    op("logical_xor", (S((2, 3), BOOLS_ROW),), variant="float target", orders=(), grad_fn=False,
       inplace=("logical_xor_",)),
    *[op(name, (S((2, 3), TIED_B), S((3, 4), (3, 4))), variant="float target", orders=(),
         grad_fn=False, inplace=(name + "_",))
      for name in ("eq", "ne", "lt", "le", "gt", "ge")],
]

INT_DIVIDEND = Const([[7, -7, 6]])
INT_DIVISOR = Const([[2], [-4]])
QUOTIENTS = [
    # A rounded quotient is piecewise constant: zero gradients (DivBackward2).
    OpRow("div", lambda m, x, y: m.div(x, y, rounding_mode="trunc"), BINARY, variant="trunc",
          domain=(REAL, NONZERO), records=("div_rounding",),
          inplace={"div_": lambda x, y: x.div_(y, rounding_mode="trunc")}),
    OpRow("div", lambda m, x, y: m.div(x, y, rounding_mode="floor"), BINARY, variant="floor",
          domain=(REAL, NONZERO), records=("div_rounding",),
          inplace={"divide_": lambda x, y: x.divide_(y, rounding_mode="floor")}),
    OpRow("div", lambda m, x: m.div(x, -0.3, rounding_mode="floor"), UNARY, variant="floor number",
          records=("div_rounding",)),
    OpRow("div", lambda m, x, y: m.div(x, y, rounding_mode="trunc"),
          (S(INT_DIVIDEND, INT_DIVISOR),), variant="trunc int64", orders=(),
          records=("div_rounding",)),
    OpRow("div", lambda m, x, y: m.div(x, y, rounding_mode="floor"),
          (S(INT_DIVIDEND, INT_DIVISOR),), variant="floor int64", orders=(),
          records=("div_rounding",)),
    OpRow("divide", lambda m, x, y: m.divide(x, y, rounding_mode="trunc"), ONE_BINARY,
          variant="trunc", domain=(REAL, NONZERO), records=("div_rounding",)),
    op("true_divide", BINARY[:3], domain=(REAL, NONZERO), records=("div",),
       inplace=("true_divide_",)),
    # floor_divide, and remainder of a number by a tensor, have no derivative in torch (grad_fn
    # NotImplemented, backward raises): values only.
    op("floor_divide", BINARY[:3] + (S(INT_DIVIDEND, INT_DIVISOR),), domain=(REAL, NONZERO),
       orders=(), inplace=("floor_divide_",)),
    method("Tensor.__floordiv__", lambda x, y: x // y, BINARY[:3], domain=(REAL, NONZERO),
           orders=(), records=("floor_divide",), inplace=("__ifloordiv__",)),
    method("Tensor.__floordiv__", lambda x: x // 0.7, UNARY, variant="number", orders=(),
           records=("floor_divide",)),
    method("Tensor.__rfloordiv__", lambda x: 2.5 // x, UNARY, domain=NONZERO, orders=(),
           records=("floor_divide",)),
    op("remainder", BINARY, domain=(REAL, NONZERO), inplace=("remainder_",)),
    OpRow("remainder", lambda m, x: m.remainder(x, 0.7), UNARY, variant="number other",
          records=("remainder_scalar",), inplace={"remainder_": lambda x: x.remainder_(0.7)}),
    OpRow("remainder", lambda m, x: m.remainder(-1.5, x), UNARY, variant="number input",
          domain=NONZERO, orders=(), records=("remainder_scalar_self",)),
    # Exact multiples give +-0 with the divisor's sign rule of torch (fmod, then a correction).
    op("remainder", (S(INT_DIVIDEND, INT_DIVISOR), S(Const([[-2.0, 2.0, 5.0]]), TIED_B)),
       variant="exact", orders=()),
    method("Tensor.__mod__", lambda x, y: x % y, BINARY[:3], domain=(REAL, NONZERO),
           records=("remainder",), inplace=("__imod__",)),
    method("Tensor.__mod__", lambda x: x % -0.7, UNARY, variant="number",
           records=("remainder_scalar",)),
    method("Tensor.__rmod__", lambda x: 2.5 % x, UNARY, domain=NONZERO, orders=(),
           records=("remainder_scalar_self",)),
    op("fmod", BINARY, domain=(REAL, NONZERO), inplace=("fmod_",)),
    OpRow("fmod", lambda m, x: m.fmod(x, -0.7), UNARY, variant="number other",
          records=("fmod_scalar",), inplace={"fmod_": lambda x: x.fmod_(-0.7)}),
    op("fmod", (S(INT_DIVIDEND, INT_DIVISOR),), variant="int64", orders=()),
]

SPECIAL_DOMAIN = Domain(-3.0, 3.0)  # both sides of erf's switch to a continued fraction at |x| = 2
GAMMA_DOMAIN = Domain(0.2, 12.0)  # both sides of the asymptotic series' start at 10
NEGATIVE_GAMMA = Domain(-3.8, -0.2, avoid=(-3.0, -2.0, -1.0), gap=0.2)
SPECIAL = [
    op("erf", UNARY, domain=SPECIAL_DOMAIN, orders=(1, 2, 3), inplace=("erf_",)),
    op("erfc", UNARY, domain=SPECIAL_DOMAIN, orders=(1, 2, 3), inplace=("erfc_",)),
    op("erfinv", UNARY, domain=Domain(-0.95, 0.95), orders=(1, 2, 3), inplace=("erfinv_",)),
    op("erfinv", (S((6,)),), variant="tails", domain=Domain(0.99, 0.99999), kinks=(1.0, -1.0)),
    op("lgamma", UNARY, domain=GAMMA_DOMAIN, orders=(1, 2, 3), inplace=("lgamma_",)),
    op("lgamma", (S((3, 4)),), variant="negative", domain=NEGATIVE_GAMMA),
    op("digamma", UNARY, domain=GAMMA_DOMAIN, orders=(1, 2, 3), inplace=("digamma_",)),
    op("digamma", (S((3, 4)),), variant="negative", domain=NEGATIVE_GAMMA),
    OpRow("polygamma", lambda m, x: m.polygamma(1, x), UNARY, variant="1", domain=GAMMA_DOMAIN,
          orders=(1, 2, 3)),
    OpRow("polygamma", lambda m, x: m.polygamma(2, x), (S((3, 4)),), variant="2",
          domain=GAMMA_DOMAIN),
    OpRow("polygamma", lambda m, x: m.polygamma(3, x), (S((3, 4)),), variant="3 negative",
          domain=NEGATIVE_GAMMA),
    OpRow("polygamma", lambda m, x: m.polygamma(0, x), (S((5,)),), variant="0",
          domain=GAMMA_DOMAIN),
    # The in-place form has its own grad_fn name (PolygammaBackward1).
    method("Tensor.polygamma", lambda x: x.polygamma(2), (S((5,)),), domain=GAMMA_DOMAIN,
           records=("polygamma", "polygamma_"),
           inplace={"polygamma_": lambda x: x.polygamma_(2)}),
    *[op(name, (S(Const([[1, 2, 3]])), S(BOOLS)), variant="int64 and bool", orders=())
      for name in ("erf", "erfc", "erfinv", "lgamma", "digamma")],
    # Values on wide ranges (every series, fraction and reflection), and at the special points.
    *[op(name, (S(T((500,), domain, grad=False)), S(Const(points))), variant="wide", orders=())
      for name, domain, points in (
          ("erf", Domain(-7.0, 7.0), [0.0, -0.0, 1.0, 2.0, -2.0, 30.0, INF, -INF, NAN]),
          ("erfc", Domain(-7.0, 30.0), [0.0, 1.0, 1.5, 2.0, -1.0, 27.0, INF, -INF, NAN]),
          ("erfinv", Domain(-1.0, 1.0), [0.0, -0.0, 0.5, -0.5, 0.999999, 1.0, -1.0, 1.5, NAN]),
          ("lgamma", Domain(-40.0, 60.0), [0.0, 1.0, 2.0, -1.0, 10.0, 2.5, INF, -INF, NAN]),
          ("digamma", Domain(-40.0, 60.0), [0.0, -0.0, 1.0, 1.4616321449683622, 10.0, -1.0,
                                             INF, 1e-300, NAN]))],
    # torch's float32 trigamma loses digits for negative x (its sin(pi x) in float32): float64.
    OpRow("polygamma", lambda m, x: m.polygamma(1, x), (S(T((500,), Domain(-40.0, 60.0),
                                                            grad=False)),),
          variant="1 wide", orders=(), dtypes=("float64",)),
    OpRow("polygamma", lambda m, x: m.polygamma(4, x), (S(T((500,), Domain(-10.0, 30.0),
                                                            grad=False)),),
          variant="4 wide", orders=()),
]

ROUNDING_DOMAIN = Domain(-2.5, 2.5, avoid=(-2.5, -2.0, -1.5, -1.0, -0.5, 0.0, 0.5, 1.0, 1.5, 2.0))
ROUNDING = [
    op("floor", UNARY, domain=ROUNDING_DOMAIN, kinks=(1.0, -0.5), inplace=("floor_",)),
    op("ceil", UNARY, domain=ROUNDING_DOMAIN, kinks=(1.0, -0.5), inplace=("ceil_",)),
    op("round", UNARY, domain=ROUNDING_DOMAIN, kinks=(0.5, 1.5, -2.5), inplace=("round_",)),
    OpRow("round", lambda m, x: m.round(x, decimals=2), UNARY, variant="decimals=2",
          records=("round_decimals",), inplace={"round_": lambda x: x.round_(decimals=2)}),
    OpRow("round", lambda m, x: m.round(x, decimals=-1), (S((5,)),), variant="decimals=-1",
          domain=Domain(-30.0, 30.0, avoid=(-25.0, -15.0, -5.0, 5.0, 15.0, 25.0)),
          records=("round_decimals",)),
    OpRow("round", lambda m, x: m.round(x, decimals=0), (S((5,)),), variant="decimals=0",
          domain=ROUNDING_DOMAIN, records=("round_decimals",)),
    op("trunc", UNARY, domain=ROUNDING_DOMAIN, kinks=(1.0, -1.0), inplace=("trunc_",)),
    op("fix", UNARY[1:2], domain=ROUNDING_DOMAIN, records=("trunc",), inplace=("fix_",)),
    op("frac", UNARY, domain=ROUNDING_DOMAIN, kinks=(1.0, -1.0), inplace=("frac_",)),
    *[op(name, (S(INTS),), variant="int64", orders=())
      for name in ("floor", "ceil", "round", "trunc")],
]

# Ties: the Const second argument equals the kink put into the first (nans too), either way round.
TIES = (S((8,), Const([0.5] * 8)),)


def _ties(name: str) -> list[OpRow]:
    return [
        OpRow(name, lambda m, x, c: getattr(m, name)(x, c), TIES, variant="ties", domain=away(0.5),
              kinks=(0.5, NAN)),
        OpRow(name, lambda m, x, c: getattr(m, name)(c, x), TIES, variant="ties, other",
              domain=away(0.5), kinks=(0.5, NAN)),
    ]


MIXED = (S(INTS, Const([[0.5, -3.0, 3.0]])), S(BOOLS, BOOLS_ROW))
BINARY_MATH = [
    op("maximum", BINARY),
    *_ties("maximum"),
    op("minimum", BINARY),
    *_ties("minimum"),
    op("fmax", BINARY),
    *_ties("fmax"),
    op("fmin", BINARY),
    *_ties("fmin"),
    *[op(name, MIXED, variant="mixed dtypes", orders=())
      for name in ("maximum", "minimum", "fmax", "fmin")],
    op("atan2", BINARY, domain=(NONZERO, REAL), orders=(1, 2, 3), inplace=("atan2_",)),
    op("atan2", (S(INTS, Const([[2, 2, -1]])),), variant="int64", orders=()),
    op("arctan2", ONE_BINARY, domain=(NONZERO, REAL), records=("atan2",), inplace=("arctan2_",)),
    op("hypot", BINARY, domain=NONZERO, orders=(1, 2, 3), inplace=("hypot_",)),
    # xlogy at input = 0: PyTorch's d/dinput is 0 there (kinks), also where other is 0 (Const).
    op("xlogy", BINARY, domain=(REAL, POSITIVE), orders=(1, 2, 3), kinks=(0.0,),
       inplace=("xlogy_",)),
    OpRow("xlogy", lambda m, x, c, y: m.xlogy(x * c, y),
          (S((4,), Const([0.0, 1.0, 1.0, 0.0]), Const([0.0, 2.0, 0.5, 1.0])),),
          variant="input 0 at other 0"),
    OpRow("xlogy", lambda m, y: m.xlogy(2.5, y), UNARY, variant="number input",
          domain=POSITIVE, grad_fn=False),
    OpRow("xlogy", lambda m, x: m.xlogy(x, 3.0), UNARY, variant="number other", grad_fn=False),
    op("xlogy", (S(INTS, Const([[2, 3, 1]])),), variant="int64", orders=()),
    # logaddexp(2) are composites shifted by the (detached) maximum: ties are smooth (kinks).
    *[op(name, BINARY, grad_fn=False) for name in ("logaddexp", "logaddexp2")],
    *[op(name, (S((3,), TIED_B),), variant="ties", grad_fn=False, kinks=(1.0, 2.5))
      for name in ("logaddexp", "logaddexp2")],
    *[op(name, (S(Const([-INF, INF, -INF, 1.0e30]), Const([-INF, 1.0, 2.0, 1.0e30])),),
         variant="infinities", orders=()) for name in ("logaddexp", "logaddexp2")],
    OpRow("Tensor.logaddexp", lambda m, x, y: x.logaddexp(y), ONE_BINARY, grad_fn=False),
    OpRow("lerp", lambda m, x, y: m.lerp(x, y, 0.3), BINARY, variant="weight=0.3",
          orders=(1, 2, 3), inplace={"lerp_": lambda x, y: x.lerp_(y, 0.3)}),
    OpRow("lerp", lambda m, x, y: m.lerp(x, y, 0.8), BINARY[:3], variant="weight=0.8"),
    op("lerp", (S((3, 4), (3, 4), (3, 4)), S((2, 3), (3,), (2, 1)), S((), (), ()),
                S((2, 3), (), (3,))),
       variant="tensor weight", orders=(1, 2, 3), records=("lerp_tensor",), inplace=("lerp_",)),
    op("addcmul", (S((3, 4), (3, 4), (3, 4)), S((2, 3), (3,), (2, 1)), S((), (2, 3), ())),
       orders=(1, 2, 3), inplace=("addcmul_",)),
    OpRow("addcmul", lambda m, x, a, b: m.addcmul(x, a, b, value=-0.5), (S((2, 3), (3,), (2, 3)),),
          variant="value=-0.5",
          inplace={"addcmul_": lambda x, a, b: x.addcmul_(a, b, value=-0.5)}),
    OpRow("addcmul", lambda m, x, a, b: m.addcmul(x, a, b, value=2),
          (S(INTS, INTS, Const([[2], [3]])),), variant="int64", orders=()),
    op("addcdiv", (S((3, 4), (3, 4), (3, 4)), S((2, 3), (3,), (2, 1)), S((), (2, 3), ())),
       domain=(REAL, REAL, NONZERO), orders=(1, 2, 3), inplace=("addcdiv_",)),
    OpRow("addcdiv", lambda m, x, a, b: m.addcdiv(x, a, b, value=3), (S((2, 3), (3,), (2, 3)),),
          variant="value=3", domain=(REAL, REAL, NONZERO),
          inplace={"addcdiv_": lambda x, a, b: x.addcdiv_(a, b, value=3)}),
]

ROW_MASK = Const([True, False, True, False])
MASKING = [
    OpRow("masked_fill", lambda m, x, mask: m.masked_fill(x, mask, -1.5),
          (S((3, 4), MASK), S((3, 4), ROW_MASK), S((4,), MASK), S((), Const(True))),
          inplace={"masked_fill_": lambda x, mask: x.masked_fill_(mask, -1.5)}),
    op("masked_fill",
       (S((3, 4), MASK, ()), S((4,), MASK, ()), S((3, 4), ROW_MASK, T((), grad=False))),
       variant="tensor value", orders=(1, 2, 3), records=("masked_fill_tensor",),
       inplace=("masked_fill_",)),
    OpRow("masked_fill", lambda m, x, mask: m.masked_fill(x, mask, 2.7), (S(INTS, BOOLS_ROW),),
          variant="int64 input", orders=()),
    # The kinks put nan, inf and -inf into the input: their gradient is zero.
    op("nan_to_num", UNARY, kinks=(NAN, INF, -INF), inplace=("nan_to_num_",)),
    OpRow("nan_to_num", lambda m, x: m.nan_to_num(x, nan=1.0, posinf=2.0, neginf=-3.0),
          (S((6,)),), variant="values", kinks=(NAN, INF, -INF),
          inplace={"nan_to_num_": lambda x: x.nan_to_num_(1.0, 2.0, -3.0)}),
    op("nan_to_num", (S(INTS),), variant="int64", orders=()),
    method("Tensor.where", lambda x, c, y: x.where(c, y), (S((2, 3), BOOLS, (3,)),),
           records=("where",)),
]

SPECIAL_VALUES = Const([[1.0, NAN, INF, -INF], [0.0, -0.0, -2.5, 3.0e38]])
TESTS = [
    op(name, (S(SPECIAL_VALUES), S(INTS), S(BOOLS), S((3,))), orders=())
    for name in ("isnan", "isinf", "isfinite", "isposinf", "isneginf")
]

CLOSE_A = Const([[1.0, NAN, INF, -INF, 1.0, 2.0], [1.0, NAN, INF, INF, 1.0e-9, 0.0]])
CLOSE_B = Const([[1.0 + 1e-6, NAN, INF, INF, INF, 2.001], [1.1, 1.0, INF, INF, 0.0, 1e-9]])
CLOSENESS = [
    op("isclose", (S(CLOSE_A, CLOSE_B), S(TIED_A, TIED_B), S((2, 3), (3,)),
                   S(Const([[1, 2, 3]]), Const([1, 2, 4])), S(BOOLS, BOOLS_ROW)), orders=()),
    *[OpRow("isclose", lambda m, x, y, kw=kw: m.isclose(x, y, **kw), (S(CLOSE_A, CLOSE_B),),
            variant=str(kw), orders=())
      for kw in ({"rtol": 0.0, "atol": 0.01}, {"rtol": 1e-3}, {"equal_nan": True})],
    OpRow("allclose", lambda m, x, y, **kw: m.tensor(m.allclose(x, y)),
          (S(TIED_A, TIED_B), S(TIED_B, TIED_B), S(CLOSE_A, CLOSE_A)), orders=()),
    OpRow("allclose", lambda m, x, y: m.tensor(x.allclose(y, 0.0, 1e-3, True)),
          (S(CLOSE_A, CLOSE_A), S(Const([1.0, NAN]), Const([1.0005, NAN]))), variant="method",
          orders=()),
]

ROWS = (ARITHMETIC + QUOTIENTS + POWERS + UNARY_MATH + SPECIAL + ROUNDING + CLAMPS + BINARY_MATH
        + MASKING + WHERE + TESTS + CLOSENESS + COMPARISONS + LOGIC + INPLACE_LOGIC)
