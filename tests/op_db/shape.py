"""Shape and indexing rows: views, broadcasting, copies, indexing and index assignment."""

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
    # torch copies a transposed input (its grad_fn is then not the view's).
    method(
        "Tensor.reshape",
        lambda x: x.mT.reshape(12),
        MATRIX,
        variant="non-contiguous",
        grad_fn=False,
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
    getitem("slice,int", lambda x: x[:, -2], MATRIX, grad_fn=False),
    getitem("negative start", lambda x: x[-2:], MATRIX),
    getitem("empty", lambda x: x[5:], (S((3,)),)),
    getitem("None", lambda x: x[None], (S(()), S((3,))), grad_fn=False),
    getitem("Ellipsis,int", lambda x: x[..., 1], CUBE, grad_fn=False),
    getitem("None,int,Ellipsis,None", lambda x: x[None, 1, ..., None], CUBE, grad_fn=False),
    getitem("Ellipsis", lambda x: x[...], MATRIX, grad_fn=False),
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
    getitem(
        "0-d index tensor", lambda x, i: x[i], (S((3, 4), Const(2)),), grad_fn=False, record="index"
    ),
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
# assignment is index_put (IndexPutBackward0).
SETITEM = [
    setitem("int", assign(1), (S((3, 4), (4,)), S((3, 4), ()))),
    setitem("int=scalar", assign(1, 2.5), MATRIX),
    setitem("slices", assign((slice(None), slice(1, 3))), (S((3, 4), (2,)),)),
    setitem("step", assign(slice(None, None, 2)), (S((5,), (3,)),)),
    setitem("Ellipsis,int", assign((Ellipsis, 0)), (S((2, 3, 2), (2, 3)),)),
    setitem("None,int", assign((None, 1)), (S((3, 4), (4,)),)),
    setitem("mask=scalar", assign(CONSTS, 0.0), (S((3, 4), MASK),)),
    setitem("mask", assign(CONSTS), (S((3, 4), (7,), MASK),)),
    setitem("bool rows", assign(CONSTS), (S((3, 4), (4,), ROW_MASK),)),
    setitem("index tensor", assign(CONSTS), (S((3, 4), (2, 4), Const([2, 0])),)),
    setitem("two index tensors", assign(CONSTS), (S((3, 4), (2,), Const([2, 0]), Const([1, 3])),)),
    setitem("list", assign([0, 2]), (S((3, 4), (4,)),)),
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
    setitem("through a view", _slice_of_view, (S((3, 4), (2,)),), records=("index_put",)),
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

ROWS = VIEWS + COPIES + GETITEM + SETITEM + INPLACE_ONLY
