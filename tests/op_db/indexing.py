"""Indexing rows: basic and advanced indexing, index assignment (direct and through views),
select and narrow, gather/scatter, the index_* ops, take/put, masked ops and their in-place forms,
nonzero and unique."""

from __future__ import annotations

from ._spec import Const, Domain, OpRow, S, T, method, op
from .shape import CUBE, MATRIX, _on_clone

IDX = Const([0, 2, 0])  # a repeated index: gradients add up
IDX2 = Const([[0, 1], [2, 2]])
IDX_NEG = Const([-1, 0])
MASK = Const([[True, False, True, False], [False, False, True, True], [True, True, False, True]])
ROW_MASK = Const([True, False, True])


def getitem(
    variant: str, fn, samples, *, grad_fn: bool = True, record: str = "slice", **kwargs
) -> OpRow:
    return method(
        "Tensor.__getitem__",
        fn,
        samples,
        variant=variant,
        grad_fn=grad_fn,
        records=(record,),
        **kwargs,
    )


# Indexing with None or Ellipsis is a chain of steps in torch; its grad_fn names the last one.
GETITEM = [
    getitem("int", lambda x: x[1], MATRIX + (S((4,)),), record="select"),
    getitem("-int", lambda x: x[-1], MATRIX + (S((4,)),), record="select"),
    getitem("int,int", lambda x: x[1, 2], MATRIX, record="select"),
    getitem("slice", lambda x: x[1:3], MATRIX),
    getitem("step", lambda x: x[::2], (S((5,)),) + MATRIX),
    getitem("slices with steps", lambda x: x[1::2, 0:4:3], MATRIX),
    getitem("slice,int", lambda x: x[:, -2], MATRIX),
    getitem("negative start", lambda x: x[-2:], MATRIX),
    getitem("empty", lambda x: x[5:], (S((3,)),)),
    getitem("None", lambda x: x[None], (S(()), S((3,)))),
    getitem("Ellipsis,int", lambda x: x[..., 1], CUBE),
    getitem("None,int,Ellipsis,None", lambda x: x[None, 1, ..., None], CUBE),
    getitem("Ellipsis", lambda x: x[...], MATRIX + (S(()),), record="alias"),
    getitem("bool mask", lambda x, m: x[m], (S((3, 4), MASK),), record="index"),
    getitem("bool rows", lambda x, m: x[m], (S((3, 4), ROW_MASK),), record="index"),
    getitem(
        "bool mask from input",
        lambda x: x[x > 0],
        MATRIX,
        record="index",
        vmap_error="vmap: We do not support batching operators that can support dynamic shape. "
        "Attempting to batch over indexing with a boolean mask.",
    ),
    getitem("index tensor", lambda x, i: x[i], (S((3, 4), IDX), S((4,), IDX)), record="index"),
    getitem("2-d index tensor", lambda x, i: x[i], (S((3, 4), IDX2),), record="index"),
    getitem("negative indices", lambda x, i: x[i], (S((3, 4), IDX_NEG),), record="index"),
    getitem("list", lambda x: x[[0, 2, 2]], MATRIX, record="index"),
    getitem("slice,index tensor", lambda x, i: x[:, i], (S((3, 4), IDX),), record="index"),
    getitem(
        "two index tensors",
        lambda x, i, j: x[i, j],
        (S((3, 4), IDX, Const([3, 1, 0])),),
        record="index",
    ),
    getitem("int,index tensor", lambda x, i: x[1, i], (S((3, 4), IDX),), record="index"),
    getitem("index tensor,slice", lambda x, i: x[i, 1:3], (S((3, 4), IDX),), record="index"),
    getitem(
        "Ellipsis,index tensor", lambda x, i: x[..., i], (S((2, 3, 2), IDX_NEG),), record="index"
    ),
    getitem("0-d index tensor", lambda x, i: x[i], (S((3, 4), Const(2)),), record="select"),
]


CONSTS = object()  # the key is the row's Const arguments


def assign(key, value=None):
    """``y = x.clone(); y[key] = value; y``: value is the second argument when None; a CONSTS
    key is the Const arguments after it (one, or a tuple of them)."""

    def fn(x, *rest):
        v, consts = (rest[0], rest[1:]) if value is None else (value, rest)
        y = x.clone()
        y[(consts[0] if len(consts) == 1 else consts) if key is CONSTS else key] = v
        return y

    return fn


def setitem(variant: str, fn, samples, records=("index_put",)) -> OpRow:
    return method("Tensor.__setitem__", fn, samples, variant=variant, records=records)


# Basic-index assignment is a copy into a view in torch (grad_fn CopySlices), advanced-index
# assignment is index_put (IndexPutBackward0), and x[...] = v a copy into x (CopyBackwards).
SETITEM = [
    setitem("int", assign(1), (S((3, 4), (4,)), S((3, 4), ())), records=("copy",)),
    setitem("int=scalar", assign(1, 2.5), MATRIX, records=("copy",)),
    setitem("slices", assign((slice(None), slice(1, 3))), (S((3, 4), (2,)),), records=("copy",)),
    setitem("step", assign(slice(None, None, 2)), (S((5,), (3,)),), records=("copy",)),
    setitem("Ellipsis,int", assign((Ellipsis, 0)), (S((2, 3, 2), (2, 3)),), records=("copy",)),
    setitem("None,int", assign((None, 1)), (S((3, 4), (4,)),), records=("copy",)),
    setitem("Ellipsis", assign(Ellipsis), (S((3, 4), (4,)),), records=("copy",)),
    setitem("leading ones", assign(0), (S((3, 4), (1, 4)),), records=("copy",)),
    setitem("mask=scalar", assign(CONSTS, 0.0), (S((3, 4), MASK),)),
    setitem("mask", assign(CONSTS), (S((3, 4), (7,), MASK),)),
    setitem("bool rows", assign(CONSTS), (S((3, 4), (4,), ROW_MASK),)),
    setitem("index tensor", assign(CONSTS), (S((3, 4), (2, 4), Const([2, 0])),)),
    setitem("two index tensors", assign(CONSTS), (S((3, 4), (2,), Const([2, 0]), Const([1, 3])),)),
    setitem("list", assign([0, 2]), (S((3, 4), (4,)),)),
    # an int then an index: a view of a row, then index_put into it (CopySlices)
    setitem("int,list", assign((1, [0, 3])), (S((3, 4), (2,)),), records=("select", "index_put")),
]


def _slice_of_view(x, v):
    y = x.clone()
    z = y[1:]
    z[0, 1:3] = v
    return y


def _index_of_view(x, v, i):
    y = x.clone()
    z = y[:, 1]
    z[i] = v
    return y


THROUGH_VIEWS = [
    setitem("through a view", _slice_of_view, (S((3, 4), (2,)),), records=("copy",)),
    setitem(
        "index tensor through a view",
        _index_of_view,
        (S((3, 4), (), Const([2, 0])),),
        records=("index_put",),
    ),
]

SELECT_NARROW = [
    OpRow("narrow", lambda m, x: m.narrow(x, 1, 1, 2), MATRIX, records=("slice",)),
    method("Tensor.narrow", lambda x: x.narrow(0, -2, 2), MATRIX, records=("slice",)),
    OpRow("select", lambda m, x: m.select(x, 1, -1), MATRIX + CUBE),
    method("Tensor.select", lambda x: x.select(0, 1), (S((3,)),), records=("select",)),
]


def _on_row(fn):
    """``fn`` applied in place to row 1 of a copy of x (x has a leading dim of 2); returns the
    copy, whose grad_fn is then CopySlices."""

    def call(m, x, *rest):
        y = x.clone()
        fn(y[1], *rest)
        return y

    return call


GI = Const([[0, 1], [2, 0]])
GI_FULL = Const([[0, 1, 2, 0], [2, 2, 1, 0], [1, 0, 0, 2]])
SI = Const([[0, 1], [2, 3]])  # no index repeated within a row: scatter writes are unambiguous
ADD_I = Const([[0, 0, 1], [2, 3, 2]])  # repeats: scatter_add accumulates
RED_I = Const([0, 0, 1, 0])


def _idx(x, values):
    """An int64 index tensor of x's library (for in-place calls that close over their index)."""
    return x.new_tensor(values).long()


def _scatter_reduce(reduce: str, include_self: bool) -> OpRow:
    return OpRow(
        "scatter_reduce",
        lambda m, x, i, s: m.scatter_reduce(x, 0, i, s, reduce, include_self=include_self),
        (S((4,), RED_I, (4,)), S((3, 4), Const([[0, 1, 2, 0], [2, 1, 2, 0]]), (2, 4))),
        variant=f"{reduce},include_self={include_self}",
    )


GATHER_SCATTER = [
    OpRow("gather", lambda m, x, i: m.gather(x, 1, i), (S((3, 4), GI),)),
    method(
        "Tensor.gather",
        lambda x, i: x.gather(0, i),
        (S((3, 4), GI_FULL), S((), Const(0))),
        records=("gather",),
    ),
    OpRow("scatter", lambda m, x, i, s: m.scatter(x, 1, i, s), (S((3, 4), SI, (2, 2)),)),
    method(
        "Tensor.scatter",
        lambda x, i: x.scatter(1, i, 2.5),
        (S((3, 4), SI),),
        variant="value",
        records=("scatter",),
    ),
    OpRow(
        "scatter",
        lambda m, x, i: m.scatter(x, 0, i, value=-1.0),
        (S((3, 4), GI),),
        variant="value=",
        records=("scatter",),
    ),
    OpRow(
        "scatter", lambda m, x, i, s: m.scatter(x, 0, i, s), (S((), Const(0), ()),), variant="0-d"
    ),
    OpRow("scatter_add", lambda m, x, i, s: m.scatter_add(x, 1, i, s), (S((3, 4), ADD_I, (2, 3)),)),
    method(
        "Tensor.scatter_add",
        lambda x, i, s: x.scatter_add(0, i, s),
        (S((4,), RED_I, (4,)),),
        records=("scatter_add",),
    ),
    *[
        _scatter_reduce(r, inc)
        for r in ("sum", "prod", "mean", "amax", "amin")
        for inc in (True, False)
    ],
    OpRow(
        "index_select",
        lambda m, x, i: m.index_select(x, 0, i),
        (S((3, 4), Const([0, 2, 0])), S((), Const([0]))),
    ),
    method(
        "Tensor.index_select",
        lambda x, i: x.index_select(1, i),
        (S((3, 4), Const(1)),),
        records=("index_select",),
    ),
    OpRow(
        "index_add",
        lambda m, x, i, s: m.index_add(x, 0, i, s),
        (S((3, 4), Const([0, 2, 0]), (3, 4)),),
    ),
    method(
        "Tensor.index_add",
        lambda x, i, s: x.index_add(1, i, s, alpha=-2.5),
        (S((3, 4), Const([3, 0]), (3, 2)),),
        records=("index_add",),
    ),
    OpRow(
        "index_copy",
        lambda m, x, i, s: m.index_copy(x, 0, i, s),
        (S((3, 4), Const([2, 0]), (2, 4)),),
    ),
    OpRow("index_fill", lambda m, x, i: m.index_fill(x, 1, i, -1.5), (S((3, 4), Const([0, 2])),)),
    method(
        "Tensor.index_fill",
        lambda x, i, v: x.index_fill(0, i, v),
        (S((3, 4), Const([0, 0, 2]), ()),),
        variant="tensor value",
        records=("index_fill",),
    ),
    OpRow(
        "take",
        lambda m, x, i: m.take(x, i),
        (S((3, 4), Const([[0, 5], [11, 5]])), S((), Const([0, 0]))),
    ),
    method("Tensor.take", lambda x, i: x.take(i), (S((3, 4), Const([-1, 3])),), records=("take",)),
    OpRow("put", lambda m, x, i, s: m.put(x, i, s), (S((3, 4), Const([0, 5]), (2,)),)),
    method(
        "Tensor.put",
        lambda x, i, s: x.put(i, s, accumulate=True),
        (S((3, 4), Const([[0, 5, 0]]), (3,)),),
        records=("put",),
    ),
    OpRow(
        "take_along_dim",
        lambda m, x, i: m.take_along_dim(x, i, 1),
        (S((3, 4), Const([[0], [1], [3]])), S((3, 4), Const([[0, 3]]))),
        records=("gather",),
    ),
    method(
        "Tensor.take_along_dim",
        lambda x, i: x.take_along_dim(i),
        (S((3, 4), IDX),),
        records=("gather",),
    ),
    OpRow(
        "masked_select",
        lambda m, x, k: m.masked_select(x, k),
        (S((3, 4), MASK), S((4,), MASK), S((), Const(True))),
    ),
    method(
        "Tensor.masked_select",
        lambda x, k: x.masked_select(k),
        (S((3, 4), Const([True, False, True, True])),),
        records=("masked_select",),
    ),
    OpRow(
        "masked_scatter",
        lambda m, x, k, s: m.masked_scatter(x, k, s),
        (S((3, 4), MASK, (7,)), S((3, 4), MASK, (3, 4))),
    ),
    OpRow(
        "index_put",
        lambda m, x, i, v: m.index_put(x, (i,), v),
        (S((3, 4), Const([2, 0]), (4,)),),
        records=("index_put",),
    ),
    method(
        "Tensor.index_put",
        lambda x, i, j, v: x.index_put((i, j), v, accumulate=True),
        (S((3, 4), Const([1, 1]), Const([0, 0]), (2,)),),
        records=("index_put",),
    ),
]

INPLACE_INDEXING = [
    OpRow(
        "Tensor.scatter_",
        _on_clone(lambda y, i, s: y.scatter_(1, i, s)),
        (S((3, 4), SI, (2, 2)),),
        records=("scatter",),
    ),
    OpRow(
        "Tensor.scatter_",
        _on_row(lambda y, i: y.scatter_(1, i, 2.0)),
        (S((2, 3, 4), SI),),
        variant="value through a view",
        records=("scatter",),
    ),
    OpRow(
        "Tensor.scatter_add_",
        _on_clone(lambda y, i, s: y.scatter_add_(1, i, s)),
        (S((3, 4), ADD_I, (2, 3)),),
        records=("scatter_add",),
    ),
    OpRow(
        "Tensor.scatter_add_",
        _on_row(lambda y, i, s: y.scatter_add_(1, i, s)),
        (S((2, 3, 4), ADD_I, (2, 3)),),
        variant="through a view",
        records=("scatter_add",),
    ),
    OpRow(
        "Tensor.scatter_reduce_",
        _on_clone(lambda y, i, s: y.scatter_reduce_(0, i, s, "amax", include_self=False)),
        (S((4,), RED_I, (4,)),),
        records=("scatter_reduce",),
    ),
    OpRow(
        "Tensor.scatter_reduce_",
        _on_row(lambda y, i, s: y.scatter_reduce_(0, i, s, "prod")),
        (S((2, 4), RED_I, (4,)),),
        variant="prod through a view",
        records=("scatter_reduce",),
    ),
    OpRow(
        "Tensor.index_add_",
        _on_clone(lambda y, i, s: y.index_add_(0, i, s, alpha=2)),
        (S((3, 4), Const([0, 2, 0]), (3, 4)),),
        records=("index_add",),
    ),
    OpRow(
        "Tensor.index_copy_",
        _on_row(lambda y, i, s: y.index_copy_(1, i, s)),
        (S((2, 3, 4), Const([3, 0]), (3, 2)),),
        records=("index_copy",),
    ),
    OpRow(
        "Tensor.index_fill_",
        _on_clone(lambda y, i, v: y.index_fill_(1, i, v)),
        (S((3, 4), Const([3, 0]), ()),),
        records=("index_fill",),
    ),
    OpRow(
        "Tensor.put_",
        _on_clone(lambda y, i, s: y.put_(i, s)),
        (S((3, 4), Const([7, 1]), (2,)),),
        records=("put",),
    ),
    OpRow(
        "Tensor.masked_scatter_",
        _on_row(lambda y, k, s: y.masked_scatter_(k, s)),
        (S((2, 3, 4), MASK, (7,)),),
        records=("masked_scatter",),
    ),
    OpRow(
        "Tensor.index_put_",
        _on_clone(lambda y, i, v: y.index_put_((i,), v, accumulate=True)),
        (S((3, 4), Const([1, 1]), (4,)),),
        records=("index_put",),
    ),
]

NOT_DIFFERENTIABLE = [
    OpRow("nonzero", lambda m, x: m.nonzero(x), (S(Const([[0.0, 1.5], [2.0, 0.0]])),), orders=()),
    OpRow(
        "nonzero",
        lambda m, x: m.nonzero(x, as_tuple=True),
        (S(Const([[0.0, 1.5], [2.0, 0.0]])), S(Const(1.0))),
        variant="as_tuple",
        orders=(),
    ),
    method(
        "Tensor.nonzero",
        lambda x: (x > 0).nonzero(),
        MATRIX,
        orders=(),
        records=("nonzero",),
        vmap_error="vmap: We do not support batching operators that can output dynamic shape. "
        "Attempted to vmap over aten::nonzero.",
    ),
    op("argwhere", (S(Const([0, 3, 0, 2])),), orders=(), records=("nonzero",)),
    OpRow("unique", lambda m, x: m.unique(x), (S(Const([3.0, 1.0, 2.0, 1.0, 3.0])),), orders=()),
    OpRow(
        "unique",
        lambda m, x: m.unique(x, return_inverse=True, return_counts=True),
        (S(Const([[3.0, 1.0], [2.0, 1.0]])),),
        variant="inverse,counts",
        orders=(),
    ),
    method(
        "Tensor.unique",
        lambda x: x.unique(dim=0, return_counts=True),
        (S(Const([[1, 2], [1, 2], [0, 1]])),),
        orders=(),
        records=("unique",),
    ),
]

DIFFS = [
    op("diff", (S((5,)), S((3, 4)))),
    *[
        OpRow("diff", lambda m, *xs, kw=kw: m.diff(*xs, **kw), samples, variant=str(kw))
        for kw, samples in (
            ({"n": 2, "dim": 0}, (S((4, 3)),)),
            ({"n": 0}, (S((3,), grad_fn=False),)),  # torch: CopyBackwards
            ({"n": 5}, (S((2, 3)),)),  # more differences than elements: an empty result
        )
    ],
    OpRow("diff", lambda m, x, p, a: m.diff(x, 2, 0, prepend=p, append=a),
          (S((2, 3), (1, 3), (2, 3)), S((2, 3), (1, 3), T((1, 3), grad=False))),
          variant="prepend,append"),
    op("diff", (S(Const([True, False, False, True])), S(Const([[1, 4, 9]]))),
       variant="bool,int64", orders=()),
    method("Tensor.diff", lambda x: x.diff(dim=-2), (S((3, 2, 2)),), records=()),
]

SORTED = Const([-1.0, 0.5, 0.5, 2.0])
SEARCH_VALUES = Const([[-2.0, 0.5, 1.0], [2.0, 3.0, float("nan")]])
SEARCHSORTED = [
    op("searchsorted", (S(SORTED, SEARCH_VALUES), S(SORTED, (2, 3)), S(SORTED, ()),
                        S(Const([[1.0, 2.0], [3.0, 4.0]]),
                          Const([[1.5, 2.0, 0.0], [3.0, 5.0, 4.0]])),
                        S(Const([1, 3, 5]), Const([[0, 3, 6]]))), orders=()),
    *[OpRow("searchsorted", lambda m, s, v, kw=kw: m.searchsorted(s, v, **kw),
            (S(SORTED, SEARCH_VALUES), S(SORTED, (2, 3))), variant=str(kw), orders=())
      for kw in ({"right": True}, {"side": "right"}, {"side": "left", "out_int32": True})],
    OpRow("searchsorted", lambda m, s, o, v: m.searchsorted(s, v, sorter=o),
          (S(Const([2.0, -1.0, 0.5, 0.5]), Const([1, 2, 3, 0]), SEARCH_VALUES),),
          variant="sorter", orders=()),
    OpRow("searchsorted", lambda m, s: m.searchsorted(s, 0.5, right=True), (S(SORTED),),
          variant="number", orders=()),
    # Random boundaries made sorted, so that vmap batches them too.
    OpRow("searchsorted", lambda m, s, v: m.searchsorted(s.abs().cumsum(-1), v),
          (S((5,), (2, 3)), S((2, 4), (2, 3))), domain=Domain(-1.0, 6.0), variant="batched",
          orders=()),
]

ROWS = (
    GETITEM
    + SETITEM
    + THROUGH_VIEWS
    + SELECT_NARROW
    + GATHER_SCATTER
    + INPLACE_INDEXING
    + NOT_DIFFERENTIABLE
    + DIFFS
    + SEARCHSORTED
)
