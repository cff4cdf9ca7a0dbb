"""FlopCounterMode: the same models on torch and chainrule give the same FLOP counts, per module
and operator, and the same printed table."""

from __future__ import annotations

import contextlib
import io
import sys
import types

import numpy as np
import pytest
import torch as ref
from torch.utils.flop_counter import FlopCounterMode as RefCounter

import chainrule as torch
from chainrule.utils import flop_counter
from chainrule.utils.flop_counter import FlopCounterMode


def _mlp(lib):
    class MLP(lib.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.fc1 = lib.nn.Linear(8, 16)
            self.act = lib.nn.ReLU()
            self.fc2 = lib.nn.Linear(16, 4)
            self.block = lib.nn.Sequential(lib.nn.Linear(4, 4, bias=False), lib.nn.Linear(4, 3))

        def forward(self, x):
            return self.block(self.fc2(self.act(self.fc1(x))))

    return MLP()


def _conv(lib):
    return lib.nn.Sequential(lib.nn.Conv2d(3, 6, 3, padding=1), lib.nn.ReLU(),
                             lib.nn.Conv2d(6, 4, 3, stride=2, groups=2), lib.nn.Flatten(),
                             lib.nn.Linear(4 * 3 * 3, 10))


def _transposed(lib):
    return lib.nn.Sequential(lib.nn.ConvTranspose1d(2, 3, 3, stride=2), lib.nn.Tanh())


def _input(shape, lib, grad=False):
    return lib.tensor(np.random.default_rng(0).standard_normal(shape).astype(np.float32),
                      requires_grad=grad)


def _attention(lib):
    q, k, v = (_input(s, lib, True) for s in ((2, 3, 5, 4), (2, 3, 6, 4), (2, 3, 6, 7)))
    lib.nn.functional.scaled_dot_product_attention(q, k, v).sum().backward()


def _products(lib):
    a, b = _input((3, 4), lib, True), _input((4, 5), lib, True)
    out = lib.addmm(_input((5,), lib), a, b).sum() + lib.mm(a, b).sum()
    out = out + lib.baddbmm(_input((2, 3, 5), lib), _input((2, 3, 4), lib, True),
                            _input((2, 4, 5), lib)).sum()
    out = out + lib.bmm(_input((2, 3, 4), lib), _input((2, 4, 5), lib, True)).sum()
    out = out + (_input((2, 1, 3, 4), lib) @ _input((5, 4, 2), lib)).sum()
    out = out + (_input((3,), lib) @ _input((3, 4), lib)).sum()
    out = out + (_input((4, 3), lib) @ _input((3,), lib)).sum()
    out.backward()


def _matrix_by_batch(lib):
    (_input((2, 3), lib, True) @ _input((4, 3, 2), lib)).sum().backward()


def _einsums(lib):
    out = lib.einsum("bij,bjk->bik", _input((2, 3, 4), lib, True), _input((2, 4, 5), lib)).sum()
    out = out + lib.einsum("bhqd,bhkd->bhqk", _input((2, 3, 5, 4), lib, True),
                           _input((2, 3, 6, 4), lib, True)).sum()
    out = out + lib.einsum("i,i->", _input((3,), lib), _input((3,), lib)).sum()
    out = out + lib.einsum("ij,ij->ij", _input((3, 4), lib, True), _input((3, 4), lib)).sum()
    out = out + lib.einsum("aij,bjk->abik", _input((2, 3, 4), lib), _input((6, 4, 5), lib,
                                                                           True)).sum()
    out = out + lib.einsum("...ij,...jk->...ik", _input((2, 3, 4), lib, True),
                           _input((2, 4, 5), lib)).sum()
    out.backward()


CASES = {
    "mlp": lambda lib: _mlp(lib)(_input((5, 8), lib)).sum().backward(),
    "mlp_3d": lambda lib: _mlp(lib)(_input((2, 5, 8), lib)).sum().backward(),
    "mlp_forward_no_grad": lambda lib: _mlp(lib)(_input((5, 8), lib)).detach(),
    "conv": lambda lib: _conv(lib)(_input((2, 3, 8, 8), lib)).sum().backward(),
    "conv_input_grad": lambda lib: _conv(lib)(_input((2, 3, 8, 8), lib, True)).sum().backward(),
    "conv_transpose": lambda lib: _transposed(lib)(_input((2, 2, 5), lib, True)).sum().backward(),
    "attention": _attention,
    "products": _products,
    "einsum": _einsums,
}


def _counts(counter) -> dict:
    return {module: {str(op): n for op, n in ops.items()}
            for module, ops in counter.get_flop_counts().items()}


@pytest.mark.parametrize("case", list(CASES))
def test_counts_match_torch(case):
    with RefCounter(display=False) as expected:
        CASES[case](ref)
    with FlopCounterMode(display=False) as counted:
        CASES[case](torch)
    assert _counts(counted) == _counts(expected)
    assert counted.get_total_flops() == expected.get_total_flops()


def test_matrix_by_batch_total_matches_torch():
    """PyTorch folds (m, k) @ (b, k, n) into one mm, and its backward is mm's; chainrule's
    backward rule multiplies the batches (bmm): the same FLOPs under another operator."""
    with RefCounter(display=False) as expected:
        _matrix_by_batch(ref)
    with FlopCounterMode(display=False) as counted:
        _matrix_by_batch(torch)
    assert counted.get_total_flops() == expected.get_total_flops() == 192
    assert _counts(counted) == {"Global": {"aten.mm": 96, "aten.bmm": 96}}
    assert _counts(expected) == {"Global": {"aten.mm": 192}}


@contextlib.contextmanager
def _tabulate_for_torch():
    """PyTorch's table needs tabulate; where it is not installed, torch gets chainrule's
    formatter as a stand-in (the rows, their order, indentation and units are still torch's)."""
    try:
        import tabulate  # noqa: F401

        yield True
    except ImportError:
        stand_in = types.ModuleType("tabulate")
        stand_in.PRESERVE_WHITESPACE = True
        stand_in.tabulate = lambda values, headers, colalign: flop_counter._table(values,
                                                                               headers)
        sys.modules["tabulate"] = stand_in
        try:
            yield False
        finally:
            del sys.modules["tabulate"]


def _same_table(ours: str, theirs: str, exact: bool) -> None:
    if exact:
        assert ours == theirs
    else:  # tabulate 0.10 drops the indentation PyTorch asks for: compare the cells
        def cells(text: str) -> list:
            return [["-"] if set(line) <= {"-", " "} else line.split()
                    for line in text.splitlines()]

        assert cells(ours) == cells(theirs)


@pytest.mark.parametrize("case,depth", [("mlp", 2), ("mlp", 3), ("mlp", 1), ("conv", 2),
                                        ("attention", 2), ("mlp_3d", None)])
def test_printed_table_matches_torch(case, depth):
    with _tabulate_for_torch() as real:
        printed = []
        for lib, counter in ((ref, RefCounter), (torch, FlopCounterMode)):
            out = io.StringIO()
            with contextlib.redirect_stdout(out):
                with counter(depth=depth, display=True):
                    CASES[case](lib)
            printed.append(out.getvalue())
        _same_table(printed[1], printed[0], exact=not real)


def test_table_layout():
    text = flop_counter._table([["Global", "5320.000", "100.00%"], [" - aten.mm", "120.000",
                                                                    "2.26%"]],
                               ["Module", "FLOP", "% Total"])
    assert text.splitlines() == ["Module        FLOP    % Total",
                                 "----------  ------  ---------",
                                 "Global        5320    100.00%",
                                 " - aten.mm     120      2.26%"]


def test_custom_mapping_and_register_flop_formula():
    def relu_flops(x_shape, out_shape=None, **kwargs):
        return int(np.prod(x_shape))

    with FlopCounterMode(display=False, custom_mapping={torch.ops.aten.relu: relu_flops}) as c:
        torch.relu(_input((3, 4), torch))
    assert _counts(c) == {"Global": {"aten.relu": 12}}
    with pytest.raises(RuntimeError, match="duplicate registrations"):
        flop_counter.register_flop_formula(torch.ops.aten.mm)(relu_flops)
    with pytest.raises(ValueError, match="expected each target to be OpOverloadPacket"):
        flop_counter.register_flop_formula("mm")(relu_flops)


def test_nothing_counted_prints_global_zero():
    for counter in (RefCounter, FlopCounterMode):
        with counter(display=False) as c:
            pass
        assert c.get_total_flops() == 0
    with _tabulate_for_torch() as real:
        _same_table(c.get_table(), RefCounter(display=False).get_table(), exact=not real)


TRANSFORMED = {
    "vmap_mm": lambda lib: lib.func.vmap(lib.mm, in_dims=(0, None))(lib.ones(4, 3, 5),
                                                                    lib.ones(5, 2)),
    "grad": lambda lib: lib.func.grad(lambda w: (lib.ones(3, 5) @ w).sum())(lib.ones(5, 2)),
    "vmap_grad": lambda lib: lib.func.vmap(lib.func.grad(lambda w: (lib.ones(3, 5) @ w).sum()))(
        lib.ones(4, 5, 2)),
    "jacrev": lambda lib: lib.func.jacrev(lambda w: lib.ones(3, 5) @ w)(lib.ones(5, 2)),
}


@pytest.mark.parametrize("case", list(TRANSFORMED))
def test_counts_under_transforms_total_torchs(case):
    """Under torch.func transforms the kernels are the batching rules' (PyTorch's batched mm is
    a bmm where chainrule's rule folds the batch into one mm): the totals agree."""
    with RefCounter(display=False) as expected:
        TRANSFORMED[case](ref)
    with FlopCounterMode(display=False) as counted:
        TRANSFORMED[case](torch)
    assert counted.get_total_flops() == expected.get_total_flops() > 0
