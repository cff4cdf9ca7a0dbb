"""Shape rows: views, broadcasting, copies, rearranging copies, joins and splits, and in-place
writes (fill_, zero_, copy_, directly and through views)."""

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


INPLACE_WRITES = [
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
    *[
        OpRow(
            "meshgrid",
            lambda m, *xs, ix=ix: m.meshgrid(*xs, indexing=ix),
            (S((3,), (4,)), S((2,), (), (3,)), S((3,)), S((2,), (3,), T((2,), grad=False))),
            variant=ix,
        )
        for ix in ("ij", "xy")
    ],
    OpRow("meshgrid", lambda m, x, y: m.meshgrid([x, y], indexing="xy"), (S((3,), (2,)),),
          variant="list"),
    method(
        "Tensor.type_as",
        lambda x, y: x.type_as(y),
        (S((3, 4), Const([1.0], "float64")), S((), Const([1.0], "float64"))),
        grad_fn=False,
        records=(),
    ),
    method("Tensor.type_as", lambda x, y: x.type_as(y), (S((3,), Const([1])),), variant="int64",
           orders=(), records=()),
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
    OpRow("flip", lambda m, x: m.flip(x, dims=[-1, 0]), CUBE, variant="dims=", records=("flip",)),
    method("Tensor.flip", lambda x: x.flip(dims=(1,)), MATRIX, variant="dims=",
           records=("flip",)),
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
    method("Tensor.t_", _t_then_scale, MATRIX, variant="through a view", records=("t", "mul")),
]

ROWS = VIEWS + MORE_VIEWS + COPIES + REARRANGE + JOINS + SPLITS + INPLACE_WRITES
