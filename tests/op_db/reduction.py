"""Reduction rows: sums and means, products, extrema, statistics, norms, scans, sorting and
selection; over everything or over dims, keepdim, dtype, ties and zeros (kinks)."""

from __future__ import annotations

from ._spec import Const, OpRow, S, away, method, op

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


FLAGS = Const([[0.0, 1.5, 0.0], [2.0, 0.0, -1.0]])
VALUES = Const([[3.0, -1.0, 2.0, 7.0], [0.5, 0.5, -4.0, 1.0]])
SMALL = (S(()), S((5,)), S((2, 3)))
CUBE = (S((2, 3, 2)),)


NAN = float("nan")
TIES = Const([[2.0, 1.0, 2.0, 0.0, 2.0, 1.0, 1.0, 2.0, 0.0, 2.0],
              [NAN, 1.0, NAN, 1.0, 3.0, 3.0, NAN, 0.0, 1.0, 1.0]])
LONG_TIES = Const([[float(i * 7 % 5) for i in range(130)], [float(i % 3) for i in range(130)]])


def _row(name: str, call, samples, variant: str, **kwargs) -> OpRow:
    """A row for one variant of ``name``."""
    return OpRow(name, call, samples, variant=variant, **kwargs)


PROD = [
    op("prod", SMALL, kinks=(0.0,), orders=(1, 2, 3)),
    _row(
        "prod",
        lambda m, x: m.prod(x, 1),
        (S((2, 3)), S((2, 3, 2))),
        "dim=1",
        records=("prod_dim",),
        kinks=(0.0,),
    ),
    _row(
        "prod",
        lambda m, x: x.prod(-1, keepdim=True),
        (S((2, 3)),),
        "dim=-1,keepdim",
        records=("prod_dim",),
        kinks=(0.0,),
    ),
    _row("prod", lambda m, x: m.prod(x, 0), (S(()),), "dim=0 of 0-d", records=("prod_dim",)),
    _row(
        "prod",
        lambda m, x: m.prod(x, dtype=m.float64),
        (S((2, 3)),),
        "dtype=float64",
        records=("prod", "to_copy"),
    ),
    op("prod", (S(INTS), S(BOOLS)), variant="integers", orders=(), records=("prod", "to_copy")),
]

EXTREMA = [
    op("amax", SMALL + CUBE, kinks=(5.0,)),
    _row(
        "amax", lambda m, x: m.amax(x, 1), MATRIX_AND_CUBE, "dim=1", records=("amax",), kinks=(5.0,)
    ),
    _row(
        "amax",
        lambda m, x: x.amax((0, 2), keepdim=True),
        CUBE,
        "dim=(0,2),keepdim",
        records=("amax",),
        kinks=(5.0,),
    ),
    op("amin", SMALL, kinks=(-5.0,)),
    _row(
        "amin",
        lambda m, x: m.amin(x, -1, True),
        MATRIX_AND_CUBE,
        "dim=-1,keepdim",
        records=("amin",),
        kinks=(-5.0,),
    ),
    op("max", SMALL, kinks=(5.0,)),
    _row(
        "max",
        lambda m, x: m.max(x, 1),
        MATRIX_AND_CUBE,
        "dim=1",
        records=("max_dim",),
        kinks=(5.0,),
    ),
    _row(
        "max",
        lambda m, x: x.max(dim=-1, keepdim=True),
        MATRIX_AND_CUBE,
        "dim=-1,keepdim",
        records=("max_dim",),
    ),
    _row("max", lambda m, x: m.max(x, 0), (S(()),), "dim=0 of 0-d", records=("max_dim",)),
    _row(
        "max",
        lambda m, x: tuple(m.max(x, 1)),
        (S(INTS),),
        "integers,dim",
        orders=(),
        records=("max_dim",),
    ),
    op("min", SMALL, kinks=(-5.0,)),
    _row(
        "min",
        lambda m, x: m.min(x, 0),
        MATRIX_AND_CUBE,
        "dim=0",
        records=("min_dim",),
        kinks=(-5.0,),
    ),
    _row(
        "min", lambda m, x: x.min(1, True), MATRIX_AND_CUBE, "dim=1,keepdim", records=("min_dim",)
    ),
    method("Tensor.max", lambda x: x.max(), SMALL, records=("max",)),
    method("Tensor.min", lambda x: x.min(1).values, (S((2, 3)),), records=("min_dim",)),
    _row(
        "max",
        lambda m, x: m.max(x, 1).indices,
        (S((3, 4)),),
        "indices",
        orders=(),
        records=("max_dim",),
    ),
    op("argmax", (S((5,)), S((3, 4)), S(INTS)), orders=()),
    _row(
        "argmax",
        lambda m, x: m.argmax(x, 1),
        (S((3, 4)), S(INTS)),
        "dim=1",
        orders=(),
        records=("argmax",),
    ),
    _row(
        "argmax",
        lambda m, x: x.argmax(0, keepdim=True),
        (S((3, 4)),),
        "dim=0,keepdim",
        orders=(),
        records=("argmax",),
    ),
    _row(
        "argmax",
        lambda m, x: m.argmax(x, keepdim=True),
        (S((3, 4)),),
        "keepdim",
        orders=(),
        records=("argmax",),
    ),
    op("argmin", (S((5,)), S((3, 4)), S(()), S(INTS)), orders=()),
    _row(
        "argmin", lambda m, x: x.argmin(-1), (S((3, 4)),), "dim=-1", orders=(), records=("argmin",)
    ),
    op("all", (S(BOOLS), S(INTS), S(FLAGS), S(Const([[1, 2]], dtype="uint8"))), orders=()),
    _row(
        "all", lambda m, x: m.all(x, 1), (S(BOOLS), S(FLAGS)), "dim=1", orders=(), records=("all",)
    ),
    _row(
        "all",
        lambda m, x: x.all((0, 1), keepdim=True),
        (S(FLAGS),),
        "dims,keepdim",
        orders=(),
        records=("all",),
    ),
    op("any", (S(BOOLS), S(INTS), S(FLAGS)), orders=()),
    _row(
        "any",
        lambda m, x: x.any(0, keepdim=True),
        (S(BOOLS), S(FLAGS)),
        "dim=0,keepdim",
        orders=(),
        records=("any",),
    ),
]

STATS = [
    op("var", SMALL[1:] + CUBE),
    _row("var", lambda m, x: m.var(x, 1), MATRIX_AND_CUBE, "dim=1", records=("var",)),
    _row(
        "var",
        lambda m, x: x.var((0, 2), keepdim=True, correction=0),
        CUBE,
        "dims,keepdim,correction=0",
        records=("var",),
    ),
    _row(
        "var",
        lambda m, x: m.var(x, 0, False),
        (S((3, 4)),),
        "dim=0,unbiased=False",
        records=("var",),
    ),
    _row("var", lambda m, x: m.var(x, False), (S((3, 4)),), "unbiased=False", records=("var",)),
    _row(
        "var",
        lambda m, x: x.var(dim=1, unbiased=True, keepdim=True),
        (S((3, 4)),),
        "unbiased kwarg",
        records=("var",),
    ),
    _row("var", lambda m, x: m.var(x, correction=2), (S((5,)),), "correction=2", records=("var",)),
    op("std", SMALL[1:] + CUBE),
    _row(
        "std",
        lambda m, x: m.std(x, -1, keepdim=True),
        MATRIX_AND_CUBE,
        "dim=-1,keepdim",
        records=("std",),
    ),
    _row(
        "std", lambda m, x: x.std((0, 1), correction=0), CUBE, "dims,correction=0", records=("std",)
    ),
    op("var_mean", (S((5,)), S((3, 4)))),
    _row(
        "var_mean",
        lambda m, x: m.var_mean(x, 1, keepdim=True),
        MATRIX_AND_CUBE,
        "dim=1,keepdim",
        records=("var_mean",),
    ),
    _row(
        "var_mean",
        lambda m, x: m.var_mean(x, (0, 2), correction=0),
        CUBE,
        "dims",
        records=("var_mean",),
    ),
    _row(
        "var_mean",
        lambda m, x: m.var_mean(x, 0)[1],
        (S((3, 4)),),
        "mean only",
        records=("var_mean",),
    ),
    op("std_mean", (S((5,)), S((3, 4)))),
    _row(
        "std_mean",
        lambda m, x: m.std_mean(x, 0, unbiased=False),
        MATRIX_AND_CUBE,
        "dim=0",
        records=("std_mean",),
    ),
    _row(
        "std_mean",
        lambda m, x: m.std_mean(x, -1)[0],
        (S((3, 4)),),
        "std only",
        records=("std_mean",),
    ),
]

NORMS = [
    op("norm", SMALL[1:] + CUBE, records=("linalg_vector_norm",), domain=away(0.0)),
    _row(
        "norm",
        lambda m, x: m.norm(x, 1),
        (S((5,)), S((2, 3))),
        "p=1",
        records=("linalg_vector_norm",),
        domain=away(0.0),
    ),
    _row(
        "norm",
        lambda m, x: x.norm(float("inf"), dim=1),
        (S((3, 4)),),
        "p=inf,dim",
        records=("linalg_vector_norm",),
        kinks=(3.0, -3.0),
    ),
    _row(
        "norm",
        lambda m, x: x.norm(-float("inf")),
        (S((3, 4)),),
        "p=-inf",
        records=("linalg_vector_norm",),
        domain=away(0.0),
    ),
    _row(
        "norm",
        lambda m, x: m.norm(x, 3, dim=(0, 2), keepdim=True),
        CUBE,
        "p=3,dims",
        records=("linalg_vector_norm",),
        domain=away(0.0),
    ),
    _row(
        "norm",
        lambda m, x: m.norm(x, 0.5, dim=-1),
        (S((3, 4)),),
        "p=0.5",
        records=("linalg_vector_norm",),
        domain=away(0.0),
    ),
    _row(
        "norm",
        lambda m, x: m.norm(x, 0),
        (S((3, 4)),),
        "p=0",
        records=("linalg_vector_norm",),
        kinks=(0.0,),
    ),
    _row(
        "norm",
        lambda m, x: m.norm(x, "fro", dim=(0, 1)),
        (S((3, 4)),),
        "fro,dims",
        records=("linalg_vector_norm",),
    ),
    _row(
        "norm",
        lambda m, x: m.norm(x, "nuc"),
        (S((3, 4)),),
        "nuc",
        records=("linalg_svd",),
        grad_fn=False,
    ),
    _row(
        "norm",
        lambda m, x: m.norm(x, 2, dim=1),
        (S((3, 4)),),
        "zeros",
        records=("linalg_vector_norm",),
        kinks=(0.0,),
        orders=(),
    ),
    _row(
        "logsumexp",
        lambda m, x: m.logsumexp(x, 0),
        (S((5,)), S(())),
        "dim=0",
        records=("logsumexp",),
    ),
    _row(
        "logsumexp", lambda m, x: m.logsumexp(x, 1), (S((3, 4)),), "dim=1", records=("logsumexp",)
    ),
    _row(
        "logsumexp",
        lambda m, x: m.logsumexp(x, (0, 1)),
        (S((3, 4)),),
        "dims",
        records=("logsumexp",),
    ),
    _row(
        "logsumexp",
        lambda m, x: x.logsumexp(-1, keepdim=True),
        MATRIX_AND_CUBE,
        "dim=-1,keepdim",
        records=("logsumexp",),
    ),
    _row(
        "logsumexp",
        lambda m, x: m.logsumexp(x * 500, 1),
        (S((3, 4)),),
        "large",
        records=("logsumexp",),
        grad_fn=False,
    ),
    _row(
        "logsumexp",
        lambda m, x: m.logsumexp(x, 1),
        (S(INTS),),
        "integers",
        orders=(),
        records=("logsumexp",),
    ),
]

SCANS = [
    _row(
        "cumsum",
        lambda m, x: m.cumsum(x, -1),
        SMALL + CUBE,
        "dim=-1",
        records=("cumsum", "cumsum_reverse"),
        orders=(1, 2, 3),
    ),
    _row(
        "cumsum",
        lambda m, x: x.cumsum(0),
        (S((3, 4)),),
        "dim=0",
        records=("cumsum", "cumsum_reverse"),
        inplace={"cumsum_": lambda x: x.cumsum_(0)},
    ),
    _row(
        "cumsum",
        lambda m, x: m.cumsum(x, 1, dtype=m.float64),
        (S((3, 4)),),
        "dtype",
        records=("cumsum", "to_copy"),
    ),
    _row(
        "cumsum",
        lambda m, x: m.cumsum(x, 1),
        (S(INTS), S(BOOLS)),
        "integers",
        orders=(),
        records=("cumsum",),
    ),
    _row(
        "cumprod",
        lambda m, x: m.cumprod(x, -1),
        SMALL + CUBE,
        "dim=-1",
        records=("cumprod",),
        orders=(1, 2, 3),
    ),
    _row(
        "cumprod",
        lambda m, x: x.cumprod(1),
        (S((2, 5)), S((3, 4))),
        "zeros",
        records=("cumprod",),
        kinks=(0.0,),
    ),
    _row(
        "cumprod",
        lambda m, x: x.cumprod(0),
        (S((3, 4)),),
        "dim=0",
        records=("cumprod",),
        inplace={"cumprod_": lambda x: x.cumprod_(0)},
    ),
    _row(
        "cumprod",
        lambda m, x: m.cumprod(x, 1),
        (S(INTS),),
        "integers",
        orders=(),
        records=("cumprod",),
    ),
    _row(
        "cummax",
        lambda m, x: m.cummax(x, -1),
        SMALL + CUBE,
        "dim=-1",
        kinks=(5.0,),
        records=("cummax", "select_along_dim_backward"),
    ),
    _row(
        "cummin",
        lambda m, x: m.cummin(x, 0),
        SMALL,
        "dim=0",
        kinks=(-5.0,),
        records=("cummin", "select_along_dim_backward"),
    ),
    method("Tensor.cummax", lambda x: x.cummax(1).values, (S((3, 4)),), records=("cummax",)),
]

ORDER = [
    op("sort", (S((5,)), S((3, 4)), S(())), records=("sort", "select_along_dim_backward")),
    _row(
        "sort",
        lambda m, x: m.sort(x, 0, descending=True),
        (S((3, 4)),),
        "dim=0,descending",
        records=("sort",),
    ),
    _row(
        "sort",
        lambda m, x: x.sort(stable=True, dim=1),
        (S((3, 4)),),
        "stable",
        records=("sort_stable",),
    ),
    _row(
        "sort",
        lambda m, x: m.sort(x, descending=True),
        (S(VALUES), S(INTS)),
        "ties,integers",
        orders=(),
        records=("sort",),
    ),
    _row(
        "sort",
        lambda m, x: tuple(m.sort(x)),
        (S(Const([2.0, float("nan"), -1.0, 2.0])),),
        "nan",
        orders=(),
        records=("sort",),
    ),
    _row(
        "sort",
        lambda m, x: tuple(m.sort(x, descending=True)),
        (S(Const([2.0, float("nan"), -1.0, 2.0])),),
        "nan,descending",
        orders=(),
        records=("sort",),
    ),
    op("argsort", (S((5,)), S((3, 4)), S(VALUES), S(INTS)), orders=()),
    _row(
        "argsort",
        lambda m, x: x.argsort(0, descending=True),
        (S((3, 4)), S(VALUES)),
        "dim=0,descending",
        orders=(),
        records=("argsort",),
    ),
    _row("topk", lambda m, x: m.topk(x, 1), SMALL, "k=1", records=("topk",)),
    _row("topk", lambda m, x: m.topk(x, 3), (S((3, 4)),), "k=3", records=("topk",)),
    _row(
        "topk",
        lambda m, x: m.topk(x, 2, 0, largest=False),
        (S((3, 4)),),
        "smallest,dim=0",
        records=("topk",),
    ),
    _row(
        "topk",
        lambda m, x: x.topk(1, dim=-1, sorted=True),
        (S((2, 3, 2)),),
        "k=1,3-d",
        records=("topk",),
    ),
    _row("topk", lambda m, x: m.topk(x, 3, sorted=False), (S((3, 8)),), "unsorted",
         records=("topk",)),
    # which of equal elements come out, and in which order, are PyTorch's CPU kernel's
    _row("topk", lambda m, x: m.topk(x, 4), (S(TIES),), "ties", orders=(), records=("topk",)),
    _row("topk", lambda m, x: m.topk(x, 4, largest=False, sorted=False), (S(TIES),),
         "ties,smallest,unsorted", orders=(), records=("topk",)),
    _row("topk", lambda m, x: m.topk(x, 2, largest=False), (S(LONG_TIES),), "ties,partial sort",
         orders=(), records=("topk",)),
    _row("kthvalue", lambda m, x: m.kthvalue(x, 3), (S(TIES),), "ties", orders=(),
         records=("kthvalue",)),
    _row("kthvalue", lambda m, x: m.kthvalue(x, 40, 1), (S(LONG_TIES),), "ties,long",
         orders=(), records=("kthvalue",)),
    _row("kthvalue", lambda m, x: m.kthvalue(x, 1), SMALL, "k=1", records=("kthvalue",)),
    _row("kthvalue", lambda m, x: m.kthvalue(x, 3), (S((3, 4)),), "k=3", records=("kthvalue",)),
    _row(
        "kthvalue",
        lambda m, x: m.kthvalue(x, 2, 0, True),
        (S((3, 4)),),
        "dim=0,keepdim",
        records=("kthvalue",),
    ),
    op("median", SMALL, kinks=(0.0,)),
    _row(
        "median",
        lambda m, x: m.median(x, 1),
        (S((3, 4)), S((3, 5))),
        "dim=1",
        records=("median_dim",),
    ),
    _row(
        "median",
        lambda m, x: x.median(0, keepdim=True),
        (S((3, 4)),),
        "dim=0,keepdim",
        records=("median_dim",),
    ),
    _row("median", lambda m, x: m.median(x, 0), (S(()),), "dim=0 of 0-d", records=("median_dim",)),
    _row(
        "median",
        lambda m, x: tuple(m.median(x, 1)),
        (S(Const([[2.0, float("nan"), -1.0, float("nan")], [1.0, 3.0, 2.0, 0.0]])),),
        "nan",
        orders=(),
        records=("median_dim",),
    ),
    _row(
        "median",
        lambda m, x: m.median(x),
        (S(Const([2.0, float("nan"), -1.0])), S(INTS)),
        "nan,integers",
        orders=(),
        records=("median",),
    ),
    op("mode", (S((5,)), S((3, 4)), S(())), kinks=(1.0,), records=("mode",)),
    _row(
        "mode",
        lambda m, x: m.mode(x, 0, keepdim=True),
        (S((3, 4)),),
        "dim=0,keepdim",
        records=("mode",),
        kinks=(1.0,),
    ),
    _row(
        "mode",
        lambda m, x: tuple(m.mode(x, 1)),
        (S(VALUES), S(INTS)),
        "ties,integers",
        orders=(),
        records=("mode",),
    ),
    _row(
        "quantile",
        lambda m, x: m.quantile(x, 0.3),
        SMALL,
        "q=0.3",
        grad_fn=False,
        records=("sort", "select_along_dim"),
    ),
    _row(
        "quantile",
        lambda m, x: x.quantile(1.0),
        (S((3, 4)),),
        "q=1",
        grad_fn=False,
        records=("sort",),
    ),
    _row(
        "quantile",
        lambda m, x: m.quantile(x, 0.4, dim=1),
        (S((3, 4)),),
        "dim=1",
        grad_fn=False,
        records=("sort",),
    ),
    _row(
        "quantile",
        lambda m, x: x.quantile(m.tensor([0.1, 0.5, 0.9], dtype=x.dtype), dim=0, keepdim=True),
        (S((3, 4)),),
        "q tensor,keepdim",
        grad_fn=False,
        records=("sort",),
    ),
    _row(
        "quantile",
        lambda m, x: m.quantile(x, m.tensor([0.25, 1.0], dtype=x.dtype), keepdim=True),
        (S((3, 4)),),
        "q tensor,all,keepdim",
        grad_fn=False,
        records=("sort",),
    ),
    *[
        _row(
            "quantile",
            lambda m, x, mode=mode: m.quantile(x, 0.4, dim=-1, interpolation=mode),
            (S((2, 4)),),
            mode,
            grad_fn=False,
            records=("sort",),
        )
        for mode in ("lower", "higher", "midpoint", "nearest")
    ],
    _row(
        "quantile",
        lambda m, x: m.quantile(x, 0.5, dim=1),
        (S(Const([[2.0, float("nan"), -1.0], [1.0, 3.0, 2.0]])),),
        "nan",
        orders=(),
        records=("sort",),
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
    *PROD,
    *EXTREMA,
    *STATS,
    *NORMS,
    *SCANS,
    *ORDER,
]
