"""RNN, LSTM, GRU and their cells against torch: outputs, final states, every gradient."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
import torch

import chainrule
import chainrule.nn as nn

from ._helpers import Case, run_twins, twin

T, N, IN, H = 5, 2, 3, 4

# (constructor kwargs, batched, with initial state)
CONFIGS = [
    ({}, True, False),
    ({}, True, True),
    ({}, False, False),
    ({}, False, True),
    ({"num_layers": 2}, True, True),
    ({"batch_first": True}, True, True),
    ({"bidirectional": True}, True, True),
    ({"num_layers": 2, "bidirectional": True, "batch_first": True}, True, True),
    ({"num_layers": 2, "bidirectional": True}, False, False),
    ({"bias": False}, True, False),
    ({"num_layers": 3, "dropout": 0.5}, True, False),  # dropout: compared in eval mode
]


def _state(name: str, kwargs: dict, batched: bool) -> list | tuple:
    layers = kwargs.get("num_layers", 1) * (2 if kwargs.get("bidirectional") else 1)
    out = kwargs.get("proj_size") or H
    h = (layers, N, out) if batched else (layers, out)
    if name != "LSTM":
        return h
    c = (layers, N, H) if batched else (layers, H)
    return [h, c]


def _cases(name: str) -> list:
    cases = []
    configs = CONFIGS + ([({"proj_size": 2}, True, True), ({"proj_size": 3, "num_layers": 2,
                                                            "bidirectional": True}, False, True)]
                         if name == "LSTM" else [])
    if name == "RNN":
        configs += [({"nonlinearity": "relu"}, True, True),
                    ({"nonlinearity": "relu", "num_layers": 2, "bidirectional": True}, True,
                     False)]
    for kwargs, batched, with_state in configs:
        shape = ((N, T, IN) if kwargs.get("batch_first") else (T, N, IN)) if batched else (T, IN)
        inputs = [shape] + ([_state(name, kwargs, batched)] if with_state else [])
        cases.append(Case(name, (IN, H), kwargs, inputs, train="dropout" not in kwargs,
                          id=f"{name}-{kwargs}-{'batched' if batched else 'unbatched'}"
                          f"{'-h0' if with_state else ''}"))
    return cases


RECURRENT = _cases("RNN") + _cases("LSTM") + _cases("GRU")

CELLS = [
    Case(name, (IN, H), kwargs, inputs)
    for name in ("RNNCell", "LSTMCell", "GRUCell")
    for kwargs in ({}, {"bias": False})
    for inputs in ([(N, IN)], [(IN,)],
                   [(N, IN), [(N, H), (N, H)] if name == "LSTMCell" else (N, H)],
                   [(IN,), [(H,), (H,)] if name == "LSTMCell" else (H,)])
] + [Case("RNNCell", (IN, H), {"nonlinearity": "relu"}, [(N, IN), (N, H)])]


@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize("case", RECURRENT + CELLS, ids=lambda c: c.id)
def test_recurrent_like_torch(case: Case, dtype: str) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # dropout with one layer warns in both
        run_twins(case, dtype)


@pytest.mark.parametrize("case", RECURRENT + CELLS, ids=lambda c: c.id)
def test_recurrent_names_and_repr_like_torch(case: Case) -> None:
    ours, theirs = twin(case.name, *case.args, **case.kwargs)
    assert repr(ours) == repr(theirs)
    assert [(n, tuple(p.shape)) for n, p in ours.named_parameters()] == [
        (n, tuple(p.shape)) for n, p in theirs.named_parameters()]


def test_all_weights_like_torch() -> None:
    ours, theirs = twin("LSTM", IN, H, num_layers=2, bidirectional=True, proj_size=2)
    assert [[tuple(p.shape) for p in group] for group in ours.all_weights] == [
        [tuple(p.shape) for p in group] for group in theirs.all_weights]


@pytest.mark.parametrize("name", ["RNN", "LSTM", "GRU", "RNNCell", "LSTMCell", "GRUCell"])
def test_init_is_uniform_within_one_over_sqrt_hidden(name) -> None:
    chainrule.manual_seed(0)
    hidden = 64
    layer = getattr(nn, name)(8, hidden)
    bound = 1 / np.sqrt(hidden)
    values = np.concatenate([p.detach().numpy().ravel() for p in layer.parameters()])
    assert values.min() >= -bound and values.max() <= bound
    assert values.min() < -0.9 * bound and values.max() > 0.9 * bound
    assert abs(values.mean()) < 0.05 * bound
    assert abs(values.std() - bound / np.sqrt(3)) < 0.05 * bound


def test_dropout_between_layers_in_training() -> None:
    chainrule.manual_seed(0)
    gru = nn.GRU(IN, H, num_layers=2, dropout=0.5)
    x = chainrule.randn(T, N, IN)
    a, _ = gru(x)
    b, _ = gru(x)
    assert not np.allclose(a.detach().numpy(), b.detach().numpy())
    gru.eval()
    a, _ = gru(x)
    b, _ = gru(x)
    np.testing.assert_array_equal(a.detach().numpy(), b.detach().numpy())


def test_lstm_output_is_last_hidden_state() -> None:
    lstm = nn.LSTM(IN, H, bidirectional=True, batch_first=True)
    out, (h, c) = lstm(chainrule.randn(N, T, IN))
    np.testing.assert_allclose(out[:, -1, :H].detach().numpy(), h[0].detach().numpy())
    np.testing.assert_allclose(out[:, 0, H:].detach().numpy(), h[1].detach().numpy())


def test_recurrent_state_dict_loads_into_torch() -> None:
    ours = nn.GRU(IN, H, num_layers=2, bidirectional=True)
    theirs = torch.nn.GRU(IN, H, num_layers=2, bidirectional=True)
    theirs.load_state_dict({k: torch.tensor(v.numpy()) for k, v in ours.state_dict().items()})
    x = np.random.default_rng(0).standard_normal((T, N, IN)).astype("float32")
    np.testing.assert_allclose(ours(chainrule.tensor(x))[0].detach().numpy(),
                               theirs(torch.tensor(x))[0].detach().numpy(), rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("build, call, error, message", [
    (lambda lib: lib.nn.RNN(3, 4), lambda lib, m: m(lib.zeros(2, 5, 7)), RuntimeError,
     "input.size(-1) must be equal to input_size. Expected 3, got 7"),
    (lambda lib: lib.nn.RNN(3, 4), lambda lib, m: m(lib.zeros(5, 2, 3), lib.zeros(1, 3, 4)),
     RuntimeError, "Expected hidden size (1, 2, 4), got [1, 3, 4]"),
    (lambda lib: lib.nn.GRU(3, 4), lambda lib, m: m(lib.zeros(5, 2, 3), lib.zeros(2, 4)),
     RuntimeError, "For batched 3-D input, hx should also be 3-D but got 2-D tensor"),
    (lambda lib: lib.nn.RNN(3, 4), lambda lib, m: m(lib.zeros(5)), ValueError, "2D or 3D"),
    (lambda lib: lib.nn.RNN(3, 4, nonlinearity="gelu"), None, ValueError,
     "Unknown nonlinearity 'gelu'"),
    (lambda lib: lib.nn.LSTM(3, 4, proj_size=4), None, ValueError,
     "proj_size has to be smaller than hidden_size"),
    (lambda lib: lib.nn.LSTM(3, 4, dropout=2), None, ValueError,
     "dropout should be a number in range [0, 1]"),
    (lambda lib: lib.nn.LSTM(3, 0), None, ValueError, "hidden_size must be greater than zero"),
    (lambda lib: lib.nn.GRUCell(3, 4), lambda lib, m: m(lib.zeros(2, 2, 3)), ValueError,
     "GRUCell: Expected input to be 1D or 2D, got 3D instead"),
])
def test_recurrent_errors_like_torch(build, call, error, message) -> None:
    for lib in (torch, chainrule):
        with pytest.raises(error) as info:
            module = build(lib)
            call(lib, module)
        assert message in str(info.value), (lib.__name__, str(info.value))


def test_dropout_with_one_layer_warns() -> None:
    with pytest.warns(UserWarning, match="non-zero dropout expects num_layers greater than 1"):
        nn.LSTM(3, 4, dropout=0.2)
