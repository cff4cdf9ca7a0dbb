"""Rows for chainrule/ops/extra.py: torch's remaining math, statistics and shape functions,
mostly compositions of other ops (``grad_fn=False``: their last op is not PyTorch's fused one)."""

from __future__ import annotations

from ._spec import NONZERO, POSITIVE, Const, OpRow, S, T, method, op

UNARY = (S(()), S((5,)), S((3, 4)))
BINARY = (S((), ()), S((3, 4), (3, 4)), S((3, 1), (1, 4)), S((2, 3), ()))
# Non-negative: PyTorch 2.13 takes 2 ** other in integers in the gradient (0 for other < 0).
INT_EXPONENT = Const([[1, 0, 3]])

ELEMENTWISE = [
    op("copysign", (S((3, 4), T((3, 4), NONZERO, grad=False)), S((3, 1), (1, 4)),
                    S((), (2, 3))),
       domain=NONZERO, inplace=("copysign_",)),
    OpRow("copysign", lambda m, x: m.copysign(x, -1.5), UNARY, domain=NONZERO,
          variant="scalar other", grad_fn=False,
          inplace={"copysign_": lambda x: x.copysign_(-1.5)}),
    op("deg2rad", UNARY, grad_fn=False, inplace=("deg2rad_",)),
    op("rad2deg", UNARY, grad_fn=False, inplace=("rad2deg_",)),
    op("ldexp", (S((2, 3), INT_EXPONENT), S((), Const(2))), grad_fn=False, inplace=("ldexp_",)),
    OpRow("frexp", lambda m, x: m.frexp(x).mantissa, UNARY, domain=NONZERO, grad_fn=False,
          records=("frexp_exponent",)),
    OpRow("float_power", lambda m, x, y: m.float_power(x, y), BINARY, domain=POSITIVE,
          grad_fn=False),
    OpRow("float_power", lambda m, x: m.float_power(x, 2.5), UNARY, domain=POSITIVE,
          variant="scalar exponent", grad_fn=False),
    OpRow("float_power", lambda m, x: m.float_power(1.5, x), UNARY, variant="scalar base",
          grad_fn=False),
    method("Tensor.float_power_", lambda x, y: (x * 1).double().float_power_(y),
           (S((3, 4), (3, 4)),), domain=POSITIVE, grad_fn=False),
    op("positive", UNARY, grad_fn=False),
]

ROWS: list[OpRow] = ELEMENTWISE
