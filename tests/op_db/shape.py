"""Shape and indexing rows: views, broadcasting, copies, joins and splits, indexing and index
assignment, gather/scatter and their in-place forms."""

from __future__ import annotations

from ._spec import Const, OpRow, S, T, method, op

MATRIX = (S((3, 4)),)
CUBE = (S((2, 3, 2)),)

VIEWS = [
    method("Tensor.view", lambda x: x.view(2, 6), MATRIX, records=("view",)),
    method("Tensor.view", lambda x: x.view(-1), MATRIX + CUBE, variant="-1", records=("view",)),
    method(
        "Tensor.view", lambda x: x.view((1, 1)), (S(()),), variant="0-d to 2-d", records=("view",)
    ),
    method("Tensor.view", lambda x: x.view(()), (S((1,)),), variant="to 0-d", records=("view",)),
    method("Tensor.view", lambda x: x.view(3, 4), MATRIX, variant="same shape", records=("view",)),
    method(
        "Tensor.view_as",
        lambda x, y: x.view_as(y),
        (S((3, 4), T((2, 6), grad=False)),),
        records=("view",),
    ),
    OpRow("reshape", lambda m, x: m.reshape(x, (4, 3)), MATRIX, records=("view",)),
    method(
        "Tensor.reshape_as", lambda x, y: x.reshape_as(y), (S((3, 4), (6, 2)),), records=("view",)
    ),
    method("Tensor.reshape", lambda x: x.reshape(2, -1, 3), MATRIX, records=("view",)),
    # torch copies a transposed input: UnsafeViewBackward0.
    method(
        "Tensor.reshape",
        lambda x: x.mT.reshape(12),
        MATRIX,
        variant="non-contiguous",
        records=("view", "transpose"),
    ),
    op("flatten", (S(()), S((3,)), S((2, 3, 2))), records=("view",)),
    OpRow("flatten", lambda m, x: m.flatten(x, 1), CUBE, variant="start_dim=1", records=("view",)),
    OpRow("flatten", lambda m, x: m.flatten(x, 0, -2), CUBE, variant="0,-2", records=("view",)),
    OpRow("transpose", lambda m, x: m.transpose(x, 0, 1), MATRIX),
    OpRow("transpose", lambda m, x: m.transpose(x, -1, 0), CUBE, variant="-1,0"),
    OpRow("transpose", lambda m, x: m.transpose(x, 0, -1), (S(()),), variant="0-d"),
    OpRow("swapaxes", lambda m, x: m.swapaxes(x, 0, 2), CUBE, records=("transpose",)),
    OpRow("swapdims", lambda m, x: m.swapdims(x, 1, 0), MATRIX, records=("transpose",)),
    method("Tensor.T", lambda x: x.T, MATRIX, records=("permute",)),
    method("Tensor.mT", lambda x: x.mT, MATRIX + CUBE, records=("transpose",)),
    OpRow("permute", lambda m, x: m.permute(x, (2, 0, 1)), CUBE),
    method("Tensor.permute", lambda x: x.permute(1, 0), MATRIX, records=("permute",)),
    method(
        "Tensor.permute", lambda x: x.permute(()), (S(()),), variant="0-d", records=("permute",)
    ),
    method("Tensor.expand", lambda x: x.expand(3, 4), (S((3, 1)), S(())), records=("expand",)),
    method(
        "Tensor.expand", lambda x: x.expand(2, -1), (S((3,)),), variant="-1", records=("expand",)
    ),
    method(
        "Tensor.expand",
        lambda x: x.expand(2, 1, 3),
        (S((1, 3)),),
        variant="new dims",
        records=("expand",),
    ),
    # torch's sum_to_size is a composite of sum: its grad_fn is SumBackward1.
    method(
        "Tensor.sum_to_size",
        lambda x: x.sum_to_size(1, 4),
        MATRIX,
        grad_fn=False,
        records=("sum_to_size",),
    ),
    method(
        "Tensor.sum_to_size",
        lambda x: x.sum_to_size((3, 1)),
        CUBE,
        variant="drop dims",
        grad_fn=False,
        records=("sum_to_size",),
    ),
    OpRow("unsqueeze", lambda m, x: m.unsqueeze(x, 0), (S(()), S((3, 4)))),
    OpRow("unsqueeze", lambda m, x: m.unsqueeze(x, -1), (S((3,)), S((3, 4))), variant="-1"),
    op("squeeze", (S((3, 1)), S((1,)), S((1, 3, 1)), S((3,)))),
    OpRow("squeeze", lambda m, x: m.squeeze(x, 1), (S((3, 1)), S((3, 2))), variant="dim"),
    OpRow(
        "squeeze", lambda m, x: m.squeeze(x, (0, 2)), (S((1, 3, 1)), S((1, 3, 2))), variant="dims"
    ),
]

COPIES = [
    op("clone", (S(()), S((3, 4)))),
    method("Tensor.double", lambda x: x.double(), MATRIX, records=("to_copy",)),
    # float64 -> float32 rounds: finite differences need a wider step.
    method(
        "Tensor.float",
        lambda x: x.float(),
        MATRIX,
        records=("to_copy",),
        gradcheck_kwargs={"eps": 1e-3, "atol": 1e-4},
    ),
    OpRow("Tensor.to", lambda m, x: x.to(m.float64), (S(()), S((3, 4))), records=("to_copy",)),
    OpRow(
        "Tensor.to",
        lambda m, x: x.to(dtype=m.int64),
        (S(Const([[1.5, -2.5, 3.0]])),),
        variant="int64",
        orders=(),
        records=("to_copy",),
    ),
]

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
    getitem("bool mask from input", lambda x: x[x > 0], MATRIX, record="index"),
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


def _fill_column(x):
    y = x.clone()
    y[:, 0].fill_(1.5)
    return y


def _copy_row(x, s):
    y = x.clone()
    y[1].copy_(s)
    return y


def _on_clone(fn):
    return lambda m, x, *rest: fn(x.clone(), *rest)


INPLACE_ONLY = [
    setitem("through a view", _slice_of_view, (S((3, 4), (2,)),), records=("copy",)),
    setitem(
        "index tensor through a view",
        _index_of_view,
        (S((3, 4), (), Const([2, 0])),),
        records=("index_put",),
    ),
    OpRow("Tensor.fill_", _on_clone(lambda y: y.fill_(2.5)), (S(()), S((3, 4))), records=("fill",)),
    OpRow(
        "Tensor.fill_",
        _on_clone(lambda y, v: y.fill_(v)),
        (S((3, 4), ()),),
        variant="tensor value",
        records=("fill",),
    ),
    method("Tensor.fill_", _fill_column, MATRIX, variant="through a view", records=("fill",)),
    OpRow("Tensor.zero_", _on_clone(lambda y: y.zero_()), MATRIX, records=("fill",)),
    OpRow(
        "Tensor.copy_",
        _on_clone(lambda y, s: y.copy_(s)),
        (S((3, 4), (3, 4)), S((3, 4), (4,)), S((3, 4), T((), grad=False))),
        records=("copy",),
    ),
    method(
        "Tensor.copy_", _copy_row, (S((3, 4), (4,)),), variant="through a view", records=("copy",)
    ),
]


def _on_row(fn):
    """``fn`` applied in place to row 1 of a copy of x (x has a leading dim of 2); returns the
    copy, whose grad_fn is then CopySlices."""

    def call(m, x, *rest):
        y = x.clone()
        fn(y[1], *rest)
        return y

    return call


MORE_VIEWS = [
    OpRow("unflatten", lambda m, x: m.unflatten(x, 1, (2, 2)), MATRIX, records=("view",)),
    op("ravel", (S(()), S((3, 4))), records=("view",)),
    method("Tensor.ravel", lambda x: x.mT.ravel(), MATRIX, records=("view", "clone", "transpose")),
    # view(dtype) shares the storage outside the graph, as in torch
    method("Tensor.view", lambda x: x.view(x.dtype), MATRIX, variant="own dtype", orders=()),
    OpRow(
        "Tensor.view",
        lambda m, x: x.detach().view(m.int32 if x.dtype == m.float32 else m.int64),
        MATRIX,
        variant="bits as int",
        orders=(),
        records=(),
    ),
    method(
        "Tensor.unflatten",
        lambda x: x.unflatten(-1, (-1, 2)),
        CUBE,
        variant="-1",
        records=("view",),
    ),
    op("t", (S(()), S((3,)), S((3, 4)))),
    method("Tensor.t", lambda x: x.t(), MATRIX, records=("t",)),
    OpRow("movedim", lambda m, x: m.movedim(x, 0, -1), CUBE, records=("permute",)),
    OpRow(
        "movedim",
        lambda m, x: m.movedim(x, (0, 1), (2, 0)),
        CUBE,
        variant="tuples",
        records=("permute",),
    ),
    OpRow("moveaxis", lambda m, x: m.moveaxis(x, -1, 0), CUBE, records=("permute",)),
    method(
        "Tensor.expand_as",
        lambda x, y: x.expand_as(y),
        (S((3, 1), T((2, 3, 4), grad=False)),),
        records=("expand",),
    ),
    OpRow(
        "broadcast_to",
        lambda m, x: m.broadcast_to(x, (2, 3, 4)),
        (S((4,)), S(())),
        records=("expand",),
    ),
    OpRow(
        "broadcast_tensors",
        lambda m, *xs: m.broadcast_tensors(*xs),
        (S((3, 1), (4,)), S((2, 1, 1), (3, 4), T((3, 4), grad=False))),
        records=("expand",),
    ),
    method(
        "Tensor.contiguous", lambda x: x.mT.contiguous(), MATRIX, records=("clone", "transpose")
    ),
    method("Tensor.contiguous", lambda x: x.contiguous(), MATRIX, variant="already", records=()),
    method("Tensor.unsqueeze_", lambda x: (x * 1).unsqueeze_(1), MATRIX, records=("unsqueeze",)),
    method("Tensor.squeeze_", lambda x: (x * 1).squeeze_(), (S((1, 3, 1)),), records=("squeeze",)),
    method(
        "Tensor.squeeze_",
        lambda x: (x * 1).squeeze_(0),
        (S((1, 3)),),
        variant="dim",
        records=("squeeze",),
    ),
    method(
        "Tensor.squeeze_",
        lambda x: (x * 1).squeeze_((0, 2)),
        (S((1, 3, 1)),),
        variant="dims",
        records=("squeeze",),
    ),
    method("Tensor.t_", lambda x: (x * 1).t_(), MATRIX, records=("t",)),
    method("Tensor.transpose_", lambda x: (x * 1).transpose_(0, 2), CUBE, records=("transpose",)),
    method("Tensor.swapaxes_", lambda x: (x * 1).swapaxes_(0, 1), MATRIX, records=("transpose",)),
    method("Tensor.swapdims_", lambda x: (x * 1).swapdims_(1, 0), MATRIX, records=("transpose",)),
]


def _t_then_scale(x):
    """t_ on a view, then an in-place op through it: the base's history is rebased."""
    y = x.clone()
    z = y[1:]
    z.t_()
    z.mul_(2)
    return y


REARRANGE = [
    OpRow("flip", lambda m, x: m.flip(x, (0, 2)), CUBE),
    method("Tensor.flip", lambda x: x.flip(1), MATRIX, variant="int", records=("flip",)),
    OpRow("flip", lambda m, x: m.flip(x, (0,)), (S(()),), variant="0-d"),
    op("fliplr", MATRIX, records=("flip",)),
    op("flipud", (S((3,)),) + MATRIX, records=("flip",)),
    OpRow("roll", lambda m, x: m.roll(x, 1), MATRIX + (S(()),)),
    OpRow("roll", lambda m, x: m.roll(x, (1, -1), (0, 1)), MATRIX, variant="dims"),
    method("Tensor.roll", lambda x: x.roll(2, 1), MATRIX, records=("roll",)),
    op("rot90", MATRIX),
    OpRow("rot90", lambda m, x: m.rot90(x, 2), MATRIX, variant="k=2"),
    OpRow("rot90", lambda m, x: m.rot90(x, -1, (2, 0)), CUBE, variant="k=-1,dims"),
    method("Tensor.repeat", lambda x: x.repeat(2, 1, 3), MATRIX + (S(()),), records=("repeat",)),
    method(
        "Tensor.repeat",
        lambda x: x.repeat(2, 1),
        (S((3,)),),
        variant="new dims",
        records=("repeat",),
    ),
    OpRow("tile", lambda m, x: m.tile(x, (2,)), MATRIX, records=("repeat",)),
    method("Tensor.tile", lambda x: x.tile(2, 1, 1), MATRIX, records=("repeat",)),
    OpRow(
        "repeat_interleave",
        lambda m, x: m.repeat_interleave(x, 2),
        MATRIX + (S(()),),
        records=("view", "expand", "clone"),
    ),
    OpRow(
        "repeat_interleave",
        lambda m, x: m.repeat_interleave(x, 3, dim=1),
        MATRIX,
        variant="dim",
        records=("view", "expand", "clone"),
    ),
    OpRow(
        "repeat_interleave",
        lambda m, x, r: m.repeat_interleave(x, r, dim=0),
        (S((3, 4), Const([1, 0, 2])),),
        variant="tensor repeats",
        records=("index_select",),
    ),
    method(
        "Tensor.repeat_interleave",
        lambda x, r: x.repeat_interleave(r),
        (S((3,), Const([2])),),
        records=("index_select",),
    ),
    OpRow(
        "repeat_interleave",
        lambda m, r: m.repeat_interleave(r),
        (S(Const([1, 0, 3])),),
        variant="counts",
        orders=(),
    ),
]


def _cat2(m, x, y):
    return m.cat([x, y])


JOINS = [
    OpRow("cat", _cat2, (S((2, 3), (1, 3)), S((2,), (3,)))),
    OpRow("cat", lambda m, x, y: m.cat((x, y), dim=-1), (S((3, 1), (3, 2)),), variant="dim=-1"),
    OpRow("cat", lambda m, x: m.cat([x]), (S((2, 3)),), variant="one tensor"),
    OpRow(
        "cat",
        lambda m, x, y, z: m.cat([x, y, z], 1),
        (S((2, 1), (2, 2), (2, 0)),),
        variant="three, one empty",
    ),
    # dtypes promote across the inputs; legacy empty (0,) tensors are skipped
    OpRow(
        "cat",
        _cat2,
        (S((2, 3), Const([[1, 2, 3]])), S((2, 3), Const([]))),
        variant="int64 and empty",
    ),
    OpRow("concat", lambda m, x, y: m.concat([x, y]), (S((2, 3), (1, 3)),), records=("cat",)),
    OpRow(
        "concatenate",
        lambda m, x, y: m.concatenate([x, y], axis=1),
        (S((2, 3), (2, 1)),),
        records=("cat",),
    ),
    OpRow("stack", lambda m, x, y: m.stack([x, y]), (S((2, 3), (2, 3)), S((), ()))),
    OpRow("stack", lambda m, x, y: m.stack((x, y), -1), (S((2, 3), (2, 3)),), variant="dim=-1"),
    OpRow("stack", lambda m, x: m.stack([x]), (S((3,)),), variant="one tensor"),
    OpRow("stack", lambda m, x, y: m.stack([x, y]), (S((2,), Const([1, 2])),), variant="int64"),
    OpRow(
        "hstack",
        lambda m, x, y: m.hstack([x, y]),
        (S((2, 3), (2, 1)), S((2,), (3,)), S((), (2,))),
        records=("cat",),
    ),
    OpRow(
        "vstack", lambda m, x, y: m.vstack([x, y]), (S((3,), (2, 3)), S((), ())), records=("cat",)
    ),
    OpRow("row_stack", lambda m, x, y: m.row_stack([x, y]), (S((3,), (3,)),), records=("cat",)),
    OpRow(
        "column_stack",
        lambda m, x, y, z: m.column_stack([x, y, z]),
        (S((3,), (3, 2), (3,)),),
        records=("cat",),
    ),
    OpRow(
        "dstack",
        lambda m, x, y: m.dstack([x, y]),
        (S((3,), (3,)), S((2, 3), (2, 3))),
        records=("cat",),
    ),
    OpRow(
        "atleast_1d",
        lambda m, x: m.atleast_1d(x),
        (S(()), S((3,))),
        records=("view",),
        grad_fn=False,
    ),
    OpRow(
        "atleast_2d",
        lambda m, x, y: m.atleast_2d(x, y),
        (S((), (3,)),),
        records=("view",),
        grad_fn=False,
    ),
    OpRow(
        "atleast_3d",
        lambda m, x, y: m.atleast_3d([x, y]),
        (S((3,), (2, 3)),),
        records=("view", "unsqueeze"),
        grad_fn=False,
    ),
]

# split, chunk and unbind return views with one multi-output node (SplitBackward0, ...)
SPLITS = [
    OpRow("split", lambda m, x: m.split(x, 2), MATRIX + (S((2,)),)),
    OpRow("split", lambda m, x: m.split(x, [1, 3], 1), MATRIX, variant="sizes"),
    OpRow("split", lambda m, x: m.split(x, 5), MATRIX, variant="one piece"),
    method(
        "Tensor.split",
        lambda x: x.split(1)[2] * 2,
        MATRIX,
        variant="one piece used",
        records=("split",),
    ),
    OpRow("chunk", lambda m, x: m.chunk(x, 2), MATRIX, records=("split",)),
    method("Tensor.chunk", lambda x: x.chunk(3, 1), MATRIX, records=("split",)),
    OpRow("tensor_split", lambda m, x: m.tensor_split(x, 2), MATRIX, records=("slice",)),
    method(
        "Tensor.tensor_split", lambda x: x.tensor_split([1, 3], dim=1), MATRIX, records=("slice",)
    ),
    OpRow("unbind", lambda m, x: m.unbind(x, 1), MATRIX + (S((2, 3)),)),
    method("Tensor.unbind", lambda x: x.unbind()[1], MATRIX, records=("unbind",)),
    method(
        "Tensor.unbind",
        lambda x: x.unbind(),
        (S((1, 3)),),
        variant="one piece",
        records=("unbind",),
    ),
    OpRow("narrow", lambda m, x: m.narrow(x, 1, 1, 2), MATRIX, records=("slice",)),
    method("Tensor.narrow", lambda x: x.narrow(0, -2, 2), MATRIX, records=("slice",)),
    OpRow("select", lambda m, x: m.select(x, 1, -1), MATRIX + CUBE),
    method("Tensor.select", lambda x: x.select(0, 1), (S((3,)),), records=("select",)),
    method("Tensor.t_", _t_then_scale, MATRIX, variant="through a view", records=("t", "mul")),
]

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
    method("Tensor.nonzero", lambda x: (x > 0).nonzero(), MATRIX, orders=(), records=("nonzero",)),
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

ROWS = (
    VIEWS
    + MORE_VIEWS
    + COPIES
    + REARRANGE
    + JOINS
    + SPLITS
    + GETITEM
    + SETITEM
    + INPLACE_ONLY
    + GATHER_SCATTER
    + INPLACE_INDEXING
    + NOT_DIFFERENTIABLE
)
