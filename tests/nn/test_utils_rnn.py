"""nn.utils.rnn against torch.nn.utils.rnn: packing, padding, and recurrent layers on packed
sequences (outputs, final states and every gradient through the packing)."""

from __future__ import annotations

import numpy as np
import pytest
import torch
import torch.nn.utils.rnn as trnn

import chainrule
import chainrule.nn as nn
import chainrule.nn.utils.rnn as crnn

from ._helpers import twin

RTOL, ATOL = 1e-10, 1e-12


def _pair(shape, seed=0):
    array = np.random.default_rng(seed).standard_normal(shape)
    return (chainrule.tensor(array, requires_grad=True), torch.tensor(array, requires_grad=True))


def _close(ours, theirs) -> None:
    assert tuple(ours.shape) == tuple(theirs.shape)
    assert str(ours.dtype) == str(theirs.dtype)
    np.testing.assert_allclose(ours.detach().numpy(), theirs.detach().numpy(), rtol=RTOL,
                               atol=ATOL)


def _same_packed(ours, theirs) -> None:
    assert isinstance(ours, crnn.PackedSequence)
    _close(ours.data, theirs.data)
    assert ours.batch_sizes.tolist() == theirs.batch_sizes.tolist()
    assert str(ours.batch_sizes.dtype) == str(theirs.batch_sizes.dtype)
    for a, b in ((ours.sorted_indices, theirs.sorted_indices),
                 (ours.unsorted_indices, theirs.unsorted_indices)):
        assert (a is None) == (b is None)
        if a is not None:
            assert a.tolist() == b.tolist()


def _backward_both(ours, theirs, seed=1) -> None:
    """Weight the outputs randomly, sum and run backward in both libraries."""
    w = np.random.default_rng(seed).standard_normal(tuple(theirs.shape))
    (ours * chainrule.tensor(w)).sum().backward()
    (theirs * torch.tensor(w)).sum().backward()


LENGTHS = [([4, 3, 3, 1], True), ([2, 4, 1, 4, 3], False), ([3], True), ([1, 2, 2, 1], False)]


@pytest.mark.parametrize("batch_first", [False, True])
@pytest.mark.parametrize("lengths, enforce_sorted", LENGTHS)
def test_pack_padded_then_pad_packed_like_torch(lengths, enforce_sorted, batch_first) -> None:
    shape = (len(lengths), 4, 2) if batch_first else (4, len(lengths), 2)
    x, tx = _pair(shape)
    packed = crnn.pack_padded_sequence(x, lengths, batch_first, enforce_sorted)
    tpacked = trnn.pack_padded_sequence(tx, lengths, batch_first, enforce_sorted)
    _same_packed(packed, tpacked)
    # printed without grad_fn: torch packs in one op (PackPaddedSequenceBackward0), we in cat
    assert repr(crnn.pack_padded_sequence(x.detach(), lengths, batch_first, enforce_sorted)) == (
        repr(trnn.pack_padded_sequence(tx.detach(), lengths, batch_first, enforce_sorted)))
    for total in (None, 6):
        padded, lens = crnn.pad_packed_sequence(packed, batch_first, -1.5, total)
        tpadded, tlens = trnn.pad_packed_sequence(tpacked, batch_first, -1.5, total)
        _close(padded, tpadded)
        assert lens.tolist() == tlens.tolist() and str(lens.dtype) == str(tlens.dtype)
    _backward_both(padded, tpadded)
    _close(x.grad, tx.grad)


def test_packing_and_padding_gradcheck() -> None:
    def roundtrip(x):
        packed = crnn.pack_padded_sequence(x, [2, 3, 1], enforce_sorted=False)
        return crnn.pad_packed_sequence(packed, padding_value=0.5, total_length=4)[0] * 2

    x = chainrule.tensor(np.random.default_rng(0).standard_normal((3, 3, 2)), requires_grad=True)
    assert chainrule.autograd.gradcheck(roundtrip, (x,))
    assert chainrule.autograd.gradgradcheck(roundtrip, (x,))


def test_lengths_as_a_tensor_and_packed_sequence_fields() -> None:
    x, tx = _pair((3, 2))
    packed = crnn.pack_padded_sequence(x, chainrule.tensor([3, 1]), enforce_sorted=False)
    tpacked = trnn.pack_padded_sequence(tx, torch.tensor([3, 1]), enforce_sorted=False)
    _same_packed(packed, tpacked)
    assert packed._fields == tpacked._fields
    data, batch_sizes, sorted_indices, unsorted_indices = packed
    assert data is packed.data and batch_sizes is packed.batch_sizes
    made = crnn.PackedSequence(chainrule.ones(3), chainrule.tensor([2, 1]),
                               chainrule.tensor([1, 0]))
    want = trnn.PackedSequence(torch.ones(3), torch.tensor([2, 1]), torch.tensor([1, 0]))
    assert repr(made) == repr(want)
    assert repr(crnn.PackedSequence((chainrule.ones(3), chainrule.tensor([2, 1])))) == repr(
        trnn.PackedSequence((torch.ones(3), torch.tensor([2, 1]))))


def test_packed_sequence_conversions() -> None:
    packed = crnn.pack_sequence([chainrule.ones(3), chainrule.ones(2)])
    assert packed.to(chainrule.float32) is packed and packed.cpu() is packed
    assert packed.double().data.dtype == chainrule.float64
    assert packed.to(dtype=chainrule.float64).batch_sizes is packed.batch_sizes
    assert packed.long().data.dtype == chainrule.int64
    assert packed.int().data.dtype == chainrule.int32
    assert packed.half().data.dtype == chainrule.float16
    assert not packed.is_cuda and not packed.is_pinned()
    with pytest.raises(AssertionError, match="Torch not compiled with CUDA enabled"):
        packed.cuda()


@pytest.mark.parametrize("batch_first", [False, True])
@pytest.mark.parametrize("padding_side", ["right", "left"])
def test_pad_sequence_like_torch(batch_first, padding_side) -> None:
    pairs = [_pair((n, 2), seed=n) for n in (2, 4, 1)]
    out = crnn.pad_sequence([p[0] for p in pairs], batch_first, 7.0, padding_side)
    want = trnn.pad_sequence([p[1] for p in pairs], batch_first, 7.0, padding_side)
    _close(out, want)
    _backward_both(out, want)
    for a, b in pairs:
        _close(a.grad, b.grad)
    stacked, tstacked = _pair((3, 2))
    _close(crnn.pad_sequence(stacked), trnn.pad_sequence(tstacked))
    with pytest.raises(RuntimeError, match="Expected padding_side to be one of left or right, "
                                           "but got middle."):
        crnn.pad_sequence([stacked], padding_side="middle")
    with pytest.raises(RuntimeError, match="received an empty list of sequences"):
        crnn.pad_sequence([])
    for shapes in (((2, 2), (3,)), ((2, 2), (3, 3)), ((2, 1, 3), (1, 2, 3))):
        with pytest.raises(RuntimeError) as error:
            trnn.pad_sequence([torch.ones(s) for s in shapes])
        with pytest.raises(RuntimeError, match="^" + _escape(str(error.value)) + "$"):
            crnn.pad_sequence([chainrule.ones(s) for s in shapes])
    # a trailing size of 1 broadcasts, as in torch
    _close(crnn.pad_sequence([chainrule.ones(2, 3, dtype=chainrule.float64),
                              chainrule.ones(1, 1, dtype=chainrule.float64)]),
           trnn.pad_sequence([torch.ones(2, 3, dtype=torch.float64),
                              torch.ones(1, 1, dtype=torch.float64)]))


@pytest.mark.parametrize("enforce_sorted", [True, False])
def test_pack_sequence_and_unpack_like_torch(enforce_sorted) -> None:
    lengths = [4, 2, 2, 1] if enforce_sorted else [2, 4, 1, 2]
    pairs = [_pair((n, 3), seed=i) for i, n in enumerate(lengths)]
    packed = crnn.pack_sequence([p[0] for p in pairs], enforce_sorted)
    tpacked = trnn.pack_sequence([p[1] for p in pairs], enforce_sorted)
    _same_packed(packed, tpacked)
    for a, b in zip(crnn.unpack_sequence(packed), trnn.unpack_sequence(tpacked)):
        _close(a, b)
    padded, tpadded = _pair((4, len(lengths), 3))
    cut = crnn.unpad_sequence(padded, chainrule.tensor(lengths))
    # torch transposes its argument in place here; chainrule leaves it as it was
    tcut = trnn.unpad_sequence(tpadded.detach().clone(), torch.tensor(lengths))
    assert tuple(padded.shape) == (4, len(lengths), 3)
    for a, b in zip(cut, tcut):
        _close(a, b)
    cut = crnn.unpad_sequence(padded.transpose(0, 1), chainrule.tensor(lengths), True)
    for a, b in zip(cut, tcut):
        _close(a, b)


def test_invert_permutation() -> None:
    assert crnn.invert_permutation(None) is None
    perm = [3, 0, 2, 1]
    assert crnn.invert_permutation(chainrule.tensor(perm)).tolist() == trnn.invert_permutation(
        torch.tensor(perm)).tolist()


def test_packing_errors_like_torch() -> None:
    x, tx = _pair((4, 3, 1))
    for lengths, enforce in (([2, 4, 1], True), ([4, 0, 1], False), ([4, 3], True)):
        with pytest.raises(RuntimeError) as theirs:
            trnn.pack_padded_sequence(tx, lengths, enforce_sorted=enforce)
        with pytest.raises(RuntimeError, match="^" + _escape(str(theirs.value)) + "$"):
            crnn.pack_padded_sequence(x, lengths, enforce_sorted=enforce)
    with pytest.raises(RuntimeError, match="should be a 1D CPU int64 tensor, but got 2D cpu Long"):
        crnn.pack_padded_sequence(x, chainrule.tensor([[4, 3, 1]]))
    with pytest.raises(RuntimeError, match="lengths to be at most the padded length 4"):
        crnn.pack_padded_sequence(x, [5, 4, 1])  # torch reads past the input here
    packed = crnn.pack_padded_sequence(x, [4, 2, 1])
    with pytest.raises(ValueError, match="total_length=2 and max sequence length being 4"):
        crnn.pad_packed_sequence(packed, total_length=2)


def _escape(text: str) -> str:
    import re

    return re.escape(text)


# ---- recurrent layers on packed input -----------------------------------------------------------

RECURRENT = [
    ("RNN", {}),
    ("RNN", {"nonlinearity": "relu", "num_layers": 2}),
    ("LSTM", {}),
    ("LSTM", {"num_layers": 2, "bidirectional": True}),
    ("LSTM", {"proj_size": 2, "bidirectional": True}),
    ("GRU", {"bidirectional": True}),
    ("GRU", {"num_layers": 2, "bias": False, "batch_first": True}),
]


@pytest.mark.parametrize("with_state", [False, True])
@pytest.mark.parametrize("enforce_sorted", [True, False])
@pytest.mark.parametrize("name, kwargs", RECURRENT, ids=lambda v: str(v))
def test_recurrent_layers_on_packed_sequences_like_torch(name, kwargs, enforce_sorted,
                                                         with_state) -> None:
    torch.manual_seed(0)
    ours, theirs = twin(name, 3, 4, **kwargs)
    ours.double()
    theirs.double()
    lengths = [5, 3, 3, 1] if enforce_sorted else [3, 5, 1, 3]
    batch_first = kwargs.get("batch_first", False)
    x, tx = _pair((4, 5, 3) if batch_first else (5, 4, 3))
    packed = crnn.pack_padded_sequence(x, lengths, batch_first, enforce_sorted)
    tpacked = trnn.pack_padded_sequence(tx, lengths, batch_first, enforce_sorted)
    directions = 2 if kwargs.get("bidirectional") else 1
    layers = kwargs.get("num_layers", 1) * directions
    states = ()
    if with_state:
        h = _pair((layers, 4, kwargs.get("proj_size") or 4), seed=2)
        states = (h,) if name != "LSTM" else (h, _pair((layers, 4, 4), seed=3))
        hx = states[0][0] if name != "LSTM" else (states[0][0], states[1][0])
        thx = states[0][1] if name != "LSTM" else (states[0][1], states[1][1])
        out, final = ours(packed, hx)
        tout, tfinal = theirs(tpacked, thx)
    else:
        out, final = ours(packed)
        tout, tfinal = theirs(tpacked)
    _same_packed(out, tout)
    finals = final if name == "LSTM" else (final,)
    tfinals = tfinal if name == "LSTM" else (tfinal,)
    for a, b in zip(finals, tfinals):
        _close(a, b)
    padded, _ = crnn.pad_packed_sequence(out, batch_first)
    tpadded, _ = trnn.pad_packed_sequence(tout, batch_first)
    _close(padded, tpadded)
    loss = (padded * 1.5).sum() + sum((f * f).sum() for f in finals)
    tloss = (tpadded * 1.5).sum() + sum((f * f).sum() for f in tfinals)
    loss.backward()
    tloss.backward()
    _close(x.grad, tx.grad)
    for a, b in states:
        _close(a.grad, b.grad)
    tparams = dict(theirs.named_parameters())
    for pname, p in ours.named_parameters():
        _close(p.grad, tparams[pname].grad)


def test_packed_state_shape_error_like_torch() -> None:
    ours, theirs = twin("GRU", 3, 4)
    packed = crnn.pack_sequence([chainrule.ones(3, 3), chainrule.ones(2, 3)])
    tpacked = trnn.pack_sequence([torch.ones(3, 3), torch.ones(2, 3)])
    for shape in ((1, 4), (1, 3, 4)):
        with pytest.raises(RuntimeError) as theirs_error:
            theirs(tpacked, torch.zeros(shape))
        with pytest.raises(RuntimeError, match=_escape(str(theirs_error.value))):
            ours(packed, chainrule.zeros(shape))


def test_rnn_base_classes_like_torch() -> None:
    base = nn.RNNBase("LSTM", 3, 4)
    tbase = torch.nn.RNNBase("LSTM", 3, 4)
    assert repr(base) == repr(tbase)
    assert [n for n, _ in base.named_parameters()] == [n for n, _ in tbase.named_parameters()]
    with pytest.raises(NotImplementedError, match='missing the required "forward" function'):
        base(chainrule.ones(2, 1, 3))
    with pytest.raises(ValueError, match="Unrecognized RNN mode: FOO"):
        nn.RNNBase("FOO", 3, 4)
    cell = nn.RNNCellBase(3, 4, False, 2)
    tcell = torch.nn.RNNCellBase(3, 4, False, 2)
    assert repr(cell) == repr(tcell)
    assert {n: tuple(p.shape) for n, p in cell.named_parameters()} == {
        n: tuple(p.shape) for n, p in tcell.named_parameters()}
    assert isinstance(nn.LSTM(3, 4), nn.RNNBase)
    assert isinstance(nn.GRUCell(3, 4), nn.RNNCellBase)


def test_rnn_base_checks_like_torch() -> None:
    ours, theirs = twin("LSTM", 3, 4, proj_size=2, bidirectional=True)
    x, tx = chainrule.ones(5, 2, 3), torch.ones(5, 2, 3)
    assert ours.get_expected_hidden_size(x, None) == theirs.get_expected_hidden_size(tx, None)
    assert ours.get_expected_cell_size(x, None) == theirs.get_expected_cell_size(tx, None)
    sizes, tsizes = chainrule.tensor([2, 1]), torch.tensor([2, 1])
    assert ours.get_expected_hidden_size(x[0], sizes) == theirs.get_expected_hidden_size(
        tx[0], tsizes)
    calls = [("check_input", (x[0], None), (tx[0], None)),
             ("check_input", (x.double(), None), (tx.double(), None)),
             ("check_input", (x, sizes), (tx, tsizes)),
             ("check_input", (chainrule.ones(5, 2, 2), None), (torch.ones(5, 2, 2), None)),
             ("check_forward_args", (x, (chainrule.ones(4, 2, 2), chainrule.ones(4, 2, 2)), None),
              (tx, (torch.ones(4, 2, 2), torch.ones(4, 2, 2)), None)),
             ("check_forward_args", (x, (chainrule.ones(4, 2, 4), chainrule.ones(4, 2, 4)), None),
              (tx, (torch.ones(4, 2, 4), torch.ones(4, 2, 4)), None))]
    for name, args, targs in calls:
        with pytest.raises((RuntimeError, ValueError)) as error:
            getattr(theirs, name)(*targs)
        with pytest.raises(error.type, match="^" + _escape(str(error.value)) + "$"):
            getattr(ours, name)(*args)
    gru, tgru = twin("GRU", 3, 4)
    with pytest.raises(ValueError) as error:
        tgru(torch.ones(5, 2, 3, dtype=torch.float64))
    with pytest.raises(ValueError, match="^" + _escape(str(error.value)) + "$"):
        gru(chainrule.ones(5, 2, 3, dtype=chainrule.float64))
    perm = [2, 0, 1]
    h = np.arange(6.0).reshape(1, 3, 2)
    _close(gru.permute_hidden(chainrule.tensor(h), chainrule.tensor(perm)),
           tgru.permute_hidden(torch.tensor(h), torch.tensor(perm)))
    pair = ours.permute_hidden((chainrule.tensor(h),) * 2, chainrule.tensor(perm))
    tpair = theirs.permute_hidden((torch.tensor(h),) * 2, torch.tensor(perm))
    for a, b in zip(pair, tpair):
        _close(a, b)
    assert gru.permute_hidden(h, None) is h
