"""Reduction rows: sum and mean over everything or over dims, keepdim, dtype."""

from __future__ import annotations

from ._spec import Const, OpRow, S, op

WHOLE = (S(()), S((5,)), S((3, 4)), S((2, 3, 2)))
MATRIX_AND_CUBE = (S((3, 4)), S((2, 3, 2)))
INTS = Const([[1, -2, 3], [4, 5, -6]])
BOOLS = Const([[True, False, True], [True, True, True]])


def _reductions(name: str) -> list[OpRow]:
    record = name + "_dim"
    return [
        op(name, WHOLE, orders=(1, 2, 3)),
        OpRow(
            name,
            lambda m, x: getattr(m, name)(x, 1),
            MATRIX_AND_CUBE,
            variant="dim=1",
            records=(record,),
        ),
        OpRow(
            name,
            lambda m, x: getattr(m, name)(x, dim=-1, keepdim=True),
            MATRIX_AND_CUBE,
            variant="dim=-1,keepdim",
            records=(record,),
        ),
        OpRow(
            name,
            lambda m, x: getattr(m, name)(x, (0, 2)),
            (S((2, 3, 2)),),
            variant="dim=(0,2)",
            records=(record,),
        ),
        OpRow(
            name,
            lambda m, x: getattr(m, name)(x, (2, 0), keepdim=True),
            (S((2, 3, 2)),),
            variant="dim=(2,0),keepdim",
            records=(record,),
        ),
        OpRow(
            name,
            lambda m, x: getattr(m, name)(x, 0),
            (S(()),),
            variant="dim=0 of 0-d",
            records=(record,),
        ),
        OpRow(
            name,
            lambda m, x: getattr(m, name)(x, dtype=m.float64),
            (S((3, 4)),),
            variant="dtype=float64",
            records=(name, "to_copy"),
        ),
        OpRow(
            name,
            lambda m, x: getattr(m, name)(x, 0, dtype=m.float64),
            (S((3, 4)),),
            variant="dim=0,dtype=float64",
            records=(record, "to_copy"),
        ),
    ]


ROWS = [
    *_reductions("sum"),
    *_reductions("mean"),
    op("sum", (S(INTS), S(BOOLS)), variant="integers", orders=(), records=("sum", "to_copy")),
    OpRow(
        "sum",
        lambda m, x: m.sum(x, 1, keepdim=True),
        (S(INTS),),
        variant="integers,dim",
        orders=(),
        records=("sum_dim",),
    ),
    OpRow(
        "mean",
        lambda m, x: m.mean(x, dtype=m.float32),
        (S(INTS),),
        variant="int64,dtype",
        orders=(),
        records=("mean", "to_copy"),
    ),
]
