"""nn.init: the gain table and fan computations exactly, the distributions statistically."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch

import chainrule
from chainrule.nn import init

GAINS = [
    ("linear", None), ("conv1d", None), ("conv2d", None), ("conv3d", None),
    ("conv_transpose1d", None), ("conv_transpose2d", None), ("conv_transpose3d", None),
    ("sigmoid", None), ("tanh", None), ("relu", None), ("leaky_relu", None),
    ("leaky_relu", 0.2), ("leaky_relu", 1), ("selu", None),
]


@pytest.mark.parametrize("nonlinearity, param", GAINS)
def test_calculate_gain_like_torch(nonlinearity, param) -> None:
    assert init.calculate_gain(nonlinearity, param) == torch.nn.init.calculate_gain(
        nonlinearity, param)


@pytest.mark.parametrize("args", [("gelu",), ("leaky_relu", "x"), ("leaky_relu", True)])
def test_calculate_gain_errors_like_torch(args) -> None:
    with pytest.raises(ValueError) as theirs:
        torch.nn.init.calculate_gain(*args)
    with pytest.raises(ValueError) as ours:
        init.calculate_gain(*args)
    assert str(ours.value) == str(theirs.value)


@pytest.mark.parametrize("shape", [(3, 5), (4, 2, 3), (6, 3, 3, 2), (2, 3, 2, 2, 2), (7, 1)])
def test_fans_like_torch(shape) -> None:
    assert init._calculate_fan_in_and_fan_out(chainrule.empty(*shape)) == \
        torch.nn.init._calculate_fan_in_and_fan_out(torch.empty(shape))


def test_fans_need_two_dims() -> None:
    with pytest.raises(ValueError, match="fewer than 2 dimensions"):
        init.xavier_uniform_(chainrule.empty(5))


N = (400, 300)  # 120 000 draws: sample statistics within ~1% of the truth


def _values(fn, *args, shape=N, **kwargs) -> np.ndarray:
    chainrule.manual_seed(0)
    t = chainrule.empty(*shape)
    assert fn(t, *args, **kwargs) is t
    return t.numpy().astype(np.float64)


def _uniform_ok(values, low, high) -> None:
    assert values.min() >= low and values.max() <= high
    width = high - low
    assert values.min() < low + 0.01 * width and values.max() > high - 0.01 * width
    assert abs(values.mean() - (low + high) / 2) < 0.01 * width
    assert abs(values.std() - width / math.sqrt(12)) < 0.01 * width


def _normal_ok(values, mean, std) -> None:
    assert abs(values.mean() - mean) < 0.02 * std
    assert abs(values.std() / std - 1) < 0.02


def test_uniform_and_normal() -> None:
    _uniform_ok(_values(init.uniform_), 0, 1)
    _uniform_ok(_values(init.uniform_, -2, 3), -2, 3)
    _normal_ok(_values(init.normal_), 0, 1)
    _normal_ok(_values(init.normal_, 1.5, 0.2), 1.5, 0.2)


def test_xavier() -> None:
    fan_in, fan_out = N[1], N[0]
    a = 1.3 * math.sqrt(6 / (fan_in + fan_out))
    _uniform_ok(_values(init.xavier_uniform_, gain=1.3), -a, a)
    _normal_ok(_values(init.xavier_normal_, 0.7), 0, 0.7 * math.sqrt(2 / (fan_in + fan_out)))


@pytest.mark.parametrize("mode", ["fan_in", "fan_out"])
@pytest.mark.parametrize("nonlinearity, a", [("leaky_relu", 0), ("leaky_relu", math.sqrt(5)),
                                             ("relu", 0), ("tanh", 0)])
def test_kaiming(mode, nonlinearity, a) -> None:
    shape = (60, 40, 5, 5)
    fan = 40 * 25 if mode == "fan_in" else 60 * 25
    gain = torch.nn.init.calculate_gain(nonlinearity, a)
    bound = gain * math.sqrt(3 / fan)
    _uniform_ok(_values(init.kaiming_uniform_, a, mode, nonlinearity, shape=shape), -bound, bound)
    _normal_ok(_values(init.kaiming_normal_, a, mode, nonlinearity, shape=shape), 0,
               gain / math.sqrt(fan))


def test_kaiming_rejects_bad_mode_and_skips_empty_tensors() -> None:
    with pytest.raises(ValueError, match="Mode fan_avg not supported"):
        init.kaiming_uniform_(chainrule.empty(3, 3), mode="fan_avg")
    with pytest.warns(UserWarning, match="Initializing zero-element tensors is a no-op"):
        init.kaiming_normal_(chainrule.empty(0, 3))


def test_trunc_normal() -> None:
    values = _values(init.trunc_normal_, 0.5, 1.0, -1.0, 1.5)
    assert values.min() >= -1.0 and values.max() <= 1.5
    # mean of N(0.5, 1) truncated to [-1.5, 1] standard units: mu + (phi(a) - phi(b)) / Z
    phi = lambda z: math.exp(-z * z / 2) / math.sqrt(2 * math.pi)
    cdf = lambda z: 0.5 * (1 + math.erf(z / math.sqrt(2)))
    mean = 0.5 + (phi(-1.5) - phi(1.0)) / (cdf(1.0) - cdf(-1.5))
    assert abs(values.mean() - mean) < 0.01


def test_constant_zeros_ones_eye() -> None:
    assert (_values(init.constant_, 0.25, shape=(2, 3)) == 0.25).all()
    assert (_values(init.zeros_, shape=(2, 3)) == 0).all()
    assert (_values(init.ones_, shape=(2, 3)) == 1).all()
    np.testing.assert_array_equal(_values(init.eye_, shape=(2, 3)), np.eye(2, 3))
    with pytest.raises(ValueError, match="Only tensors with 2 dimensions are supported"):
        init.eye_(chainrule.empty(2, 2, 2))


@pytest.mark.parametrize("shape", [(5, 3), (3, 5), (4, 2, 3)])
def test_orthogonal(shape) -> None:
    values = _values(init.orthogonal_, 2.0, shape=shape).reshape(shape[0], -1)
    rows, cols = values.shape
    gram = values @ values.T if rows <= cols else values.T @ values
    np.testing.assert_allclose(gram, 4 * np.eye(min(rows, cols)), atol=1e-5)


@pytest.mark.parametrize("shape, groups", [((4, 4, 3), 1), ((6, 3, 3, 3), 2), ((2, 3, 1, 3, 3),
                                                                               1)])
def test_dirac_like_torch(shape, groups) -> None:
    theirs = torch.nn.init.dirac_(torch.empty(shape), groups)
    np.testing.assert_array_equal(_values(init.dirac_, groups, shape=shape), theirs.numpy())


def test_sparse() -> None:
    values = _values(init.sparse_, 0.3, 0.5, shape=(10, 2000))
    assert ((values == 0).sum(axis=0) == 3).all()
    _normal_ok(values[values != 0], 0, 0.5)


def test_init_is_seeded_in_place_and_not_recorded() -> None:
    w = chainrule.nn.Parameter(chainrule.empty(3, 4))
    chainrule.manual_seed(7)
    init.kaiming_uniform_(w, a=math.sqrt(5))
    first = w.tolist()
    chainrule.manual_seed(7)
    init.kaiming_uniform_(w, a=math.sqrt(5))
    assert w.tolist() == first
    assert w.is_leaf and w.grad_fn is None and w.requires_grad
    assert w.dtype == chainrule.float32
    double = chainrule.empty(2, 2, dtype=chainrule.float64)
    init.normal_(double)
    assert double.dtype == chainrule.float64


def test_layer_init_is_seeded() -> None:
    chainrule.manual_seed(3)
    a = chainrule.nn.Linear(4, 3).weight.tolist()
    chainrule.manual_seed(3)
    assert chainrule.nn.Linear(4, 3).weight.tolist() == a


LAYER_INITS = [
    ("Linear", (300, 200)),
    ("Bilinear", (40, 30, 50)),
    ("Conv1d", (40, 60, 5)),
    ("Conv2d", (20, 60, 3), {"groups": 2}),
    ("ConvTranspose2d", (60, 20, 3)),
    ("Embedding", (500, 64), {"padding_idx": 3}),
    ("BatchNorm2d", (50,)),
    ("LayerNorm", (50,)),
    ("GroupNorm", (5, 50)),
    ("PReLU", (50,)),
    ("RNN", (100, 120)),
    ("LSTM", (100, 60), {"proj_size": 30}),
    ("GRUCell", (100, 80)),
    ("MultiheadAttention", (96, 4), {"add_bias_kv": True, "kdim": 50}),
    ("TransformerEncoderLayer", (64, 4, 128)),
    ("TransformerDecoderLayer", (64, 4, 128)),
    ("Transformer", (64, 4, 1, 1, 128)),
    ("SyncBatchNorm", (64,)),
]


@pytest.mark.parametrize("row", LAYER_INITS, ids=lambda r: r[0])
def test_layer_initialisation_matches_torch_distribution(row) -> None:
    """Each parameter and buffer is drawn from torch's distribution: same constants exactly,
    same range and spread statistically (the draws differ: the generators differ)."""
    name, args, kwargs = (*row, {})[:3]
    chainrule.manual_seed(0)
    torch.manual_seed(0)
    ours = getattr(chainrule.nn, name)(*args, **kwargs)
    theirs = getattr(torch.nn, name)(*args, **kwargs)
    mine, want = ours.state_dict(), theirs.state_dict()
    assert list(mine) == list(want)
    for key, t in want.items():
        a, b = mine[key].numpy().astype(np.float64), t.numpy().astype(np.float64)
        assert a.shape == b.shape and str(mine[key].dtype) == str(t.dtype), key
        if np.all(b == b.flat[0]) or b.size < 100:
            np.testing.assert_array_equal(a == 0, b == 0, err_msg=key)
            if np.all(b == b.flat[0]):
                np.testing.assert_array_equal(a, b, err_msg=key)
            continue
        # two samples of n draws: differences within ~6 standard errors
        spread, n = b.std(), b.size
        assert abs(a.std() / spread - 1) < 6 / np.sqrt(n), key
        assert abs(a.mean() - b.mean()) < 6 * spread * np.sqrt(2 / n), key
        for q in (0.02, 0.25, 0.75, 0.98):
            assert abs(np.quantile(a, q) - np.quantile(b, q)) < 12 * spread / np.sqrt(n), (key, q)


DEPRECATED = [("uniform", (-1.0, 1.0), (5, 4)), ("normal", (0.0, 2.0), (5, 4)),
              ("constant", (0.5,), (5, 4)), ("eye", (), (3, 4)), ("dirac", (), (4, 2, 3)),
              ("xavier_uniform", (), (5, 4)), ("xavier_normal", (), (5, 4)),
              ("kaiming_uniform", (), (5, 4)), ("kaiming_normal", (), (5, 4)),
              ("orthogonal", (), (5, 4)), ("sparse", (0.5,), (6, 4))]


@pytest.mark.parametrize("name, args, shape", DEPRECATED, ids=[d[0] for d in DEPRECATED])
def test_deprecated_aliases_warn_and_fill_like_the_new_names(name, args, shape) -> None:
    theirs = torch.empty(shape)
    with pytest.warns(FutureWarning) as their_warning:
        getattr(torch.nn.init, name)(theirs, *args)
    ours = chainrule.empty(*shape)
    chainrule.manual_seed(3)
    with pytest.warns(FutureWarning) as our_warning:
        assert getattr(init, name)(ours, *args) is ours
    assert [str(w.message) for w in our_warning] == [str(w.message) for w in their_warning]
    assert our_warning[0].filename == __file__  # the warning points at the caller
    assert getattr(init, name).__name__ == name
    expected = chainrule.empty(*shape)
    chainrule.manual_seed(3)
    getattr(init, name + "_")(expected, *args)
    np.testing.assert_array_equal(ours.numpy(), expected.numpy())


def test_deprecated_aliases_are_those_of_torch() -> None:
    theirs = {n for n in dir(torch.nn.init) if not n.startswith("_") and not n.endswith("_")
              and callable(getattr(torch.nn.init, n)) and n != "calculate_gain"
              and getattr(torch.nn.init, n).__module__ == "torch.nn.init"}
    ours = {n for n in dir(init) if not n.startswith("_") and not n.endswith("_")
            and callable(getattr(init, n)) and n != "calculate_gain"
            and getattr(init, n).__module__ == init.__name__}
    assert ours == theirs == {d[0] for d in DEPRECATED}


INIT_CALLS = ["uniform_(t)", "normal_(t)", "constant_(t, 2.0)", "zeros_(t)", "ones_(t)",
              "eye_(t)", "xavier_uniform_(t)", "kaiming_normal_(t)", "orthogonal_(t)",
              "trunc_normal_(t)", "sparse_(t, 0.5)"]


@pytest.mark.parametrize("call", INIT_CALLS)
def test_init_counts_its_writes_in_the_version_like_torch(call) -> None:
    versions = []
    for m in (torch, chainrule):
        m.manual_seed(0)  # trunc_normal_ copies redrawn values in: its count depends on draws
        t = m.empty(3, 3)
        eval("m.nn.init." + call, {"m": m, "t": t})
        versions.append(t._version)
    assert versions[0] == versions[1]


@pytest.mark.parametrize("shape, groups", [((2, 2, 3, 3), 1), ((4, 2, 3), 2)])
def test_dirac_version_like_torch(shape, groups) -> None:
    versions = []
    for m in (torch, chainrule):
        t = m.empty(*shape)
        m.nn.init.dirac_(t, groups)
        versions.append(t._version)
    assert versions[0] == versions[1]


MODULES = ["nn.Linear(3, 2)", "nn.BatchNorm1d(3)", "nn.LayerNorm(3)", "nn.GroupNorm(2, 4)",
           "nn.MultiheadAttention(4, 2)", "nn.Embedding(4, 2, padding_idx=0)", "nn.LSTM(2, 3)"]


@pytest.mark.parametrize("module", MODULES)
def test_module_parameters_and_buffers_versions_after_construction_like_torch(module) -> None:
    def versions(m):
        made = eval("m." + module, {"m": m})
        return [p._version for p in made.parameters()] + [b._version for b in made.buffers()]

    assert versions(chainrule) == versions(torch)
