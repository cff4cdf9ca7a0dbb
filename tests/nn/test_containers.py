"""Sequential, ModuleList, ModuleDict, ParameterList, ParameterDict against torch."""

from __future__ import annotations

from collections import OrderedDict

import numpy as np
import pytest
import torch

import chainrule
import chainrule.nn as nn

from ._helpers import copy_weights


def _both(build):
    return build(chainrule), build(torch)


def _keys(module):
    return [(k, tuple(v.shape)) for k, v in module.state_dict().items()]


def test_sequential_forward_like_torch() -> None:
    ours, theirs = _both(lambda lib: lib.nn.Sequential(lib.nn.Linear(3, 4), lib.nn.ReLU(),
                                                       lib.nn.Linear(4, 2)))
    copy_weights(theirs, ours)
    x = np.random.default_rng(0).standard_normal((5, 3)).astype("float32")
    np.testing.assert_allclose(ours(chainrule.tensor(x)).detach().numpy(),
                               theirs(torch.tensor(x)).detach().numpy(), rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize("edit", [
    lambda lib, s: s.append(lib.nn.Tanh()),
    lambda lib, s: s.insert(1, lib.nn.Tanh()),
    lambda lib, s: s.extend([lib.nn.Tanh(), lib.nn.Sigmoid()]),
    lambda lib, s: s.__delitem__(1),
    lambda lib, s: s.__delitem__(slice(0, 2)),
    lambda lib, s: s.__setitem__(-1, lib.nn.Linear(4, 5)),
], ids=["append", "insert", "extend", "del", "del-slice", "setitem"])
def test_sequential_edits_like_torch(edit) -> None:
    build = lambda lib: lib.nn.Sequential(lib.nn.Linear(3, 4), lib.nn.ReLU(), lib.nn.Linear(4, 2))
    ours, theirs = _both(build)
    edit(chainrule, ours)
    edit(torch, theirs)
    assert repr(ours) == repr(theirs)
    assert _keys(ours) == _keys(theirs)


def test_sequential_indexing_like_torch() -> None:
    build = lambda lib: lib.nn.Sequential(OrderedDict(a=lib.nn.Linear(3, 4), b=lib.nn.ReLU(),
                                                      c=lib.nn.Linear(4, 2)))
    ours, theirs = _both(build)
    assert type(ours[-1]).__name__ == "Linear" and ours[-1] is ours.c
    assert repr(ours[1:]) == repr(theirs[1:])
    assert len(ours) == len(theirs) == 3
    assert [type(m).__name__ for m in ours] == [type(m).__name__ for m in theirs]
    for seq in (theirs, ours):
        with pytest.raises(IndexError):
            seq[3]


def test_module_list_like_torch() -> None:
    def build(lib):
        layers = lib.nn.ModuleList([lib.nn.Linear(2, 2) for _ in range(3)])
        layers.append(lib.nn.ReLU())
        layers += [lib.nn.Linear(2, 2), lib.nn.Linear(2, 2)]
        layers.insert(0, lib.nn.Tanh())
        return layers

    ours, theirs = _both(build)
    assert repr(ours) == repr(theirs)
    assert _keys(ours) == _keys(theirs)
    assert repr(ours[1:3]) == repr(theirs[1:3])
    del ours[0]
    del theirs[0]
    assert repr(ours) == repr(theirs)
    assert isinstance(ours[-1], nn.Linear)
    assert repr(nn.ModuleList()) == repr(torch.nn.ModuleList())


def test_module_list_repr_groups_only_equal_neighbours() -> None:
    build = lambda lib: lib.nn.ModuleList([lib.nn.Linear(1, 1), lib.nn.ReLU(),
                                           lib.nn.Linear(1, 1), lib.nn.Linear(1, 2),
                                           lib.nn.Linear(1, 2), lib.nn.Linear(1, 2)])
    ours, theirs = _both(build)
    assert repr(ours) == repr(theirs)
    nested = lambda lib: lib.nn.Sequential(build(lib), lib.nn.ModuleList([build(lib)] * 2))
    assert repr(nested(chainrule)) == repr(nested(torch))


def test_module_dict_like_torch() -> None:
    def build(lib):
        d = lib.nn.ModuleDict({"b": lib.nn.Linear(1, 2), "a": lib.nn.ReLU()})
        d["c"] = lib.nn.Linear(2, 3)
        d.update([("d", lib.nn.Tanh())])
        return d

    ours, theirs = _both(build)
    assert list(ours.keys()) == list(theirs.keys()) == ["b", "a", "c", "d"]
    assert repr(ours) == repr(theirs)
    assert _keys(ours) == _keys(theirs)
    assert "c" in ours and len(ours) == 4
    assert isinstance(ours.pop("a"), nn.ReLU) and "a" not in ours
    del ours["b"]
    assert list(ours) == ["c", "d"]
    assert [type(m).__name__ for m in ours.values()] == ["Linear", "Tanh"]


def test_parameter_list_like_torch() -> None:
    def build(lib):
        params = lib.nn.ParameterList([lib.nn.Parameter(lib.ones(2, 3)), lib.zeros(4)])
        params.append(lib.nn.Parameter(lib.ones(2, dtype=lib.float64)))
        return params

    ours, theirs = _both(build)
    assert repr(ours) == repr(theirs)
    assert _keys(ours) == _keys(theirs)
    assert all(isinstance(p, nn.Parameter) for p in ours)  # plain tensors become parameters
    assert ours[-1].dtype == chainrule.float64
    single = lambda lib: lib.nn.ParameterList([lib.nn.Parameter(lib.ones(3))])
    assert repr(single(chainrule)) == repr(single(torch))
    assert repr(nn.ParameterList()) == repr(torch.nn.ParameterList())


def test_parameter_dict_like_torch() -> None:
    def build(lib):
        params = lib.nn.ParameterDict({"w": lib.nn.Parameter(lib.ones(2, 3))})
        params["b"] = lib.nn.Parameter(lib.zeros(3, dtype=lib.float64))
        params.update({"c": lib.nn.Parameter(lib.ones(1))})
        return params

    ours, theirs = _both(build)
    assert repr(ours) == repr(theirs)
    assert _keys(ours) == _keys(theirs)
    assert list(ours.keys()) == ["w", "b", "c"] and "b" in ours
    del ours["b"]
    assert list(ours) == ["w", "c"]


def test_parameters_in_containers_reach_the_parent() -> None:
    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.blocks = nn.ModuleList([nn.Linear(2, 2), nn.Linear(2, 2)])
            self.gains = nn.ParameterList([nn.Parameter(chainrule.ones(2)) for _ in range(2)])

        def forward(self, x):
            for block, gain in zip(self.blocks, self.gains):
                x = block(x) * gain
            return x

    net = Net()
    assert [n for n, _ in net.named_parameters()] == [
        "blocks.0.weight", "blocks.0.bias", "blocks.1.weight", "blocks.1.bias", "gains.0",
        "gains.1"]
    net(chainrule.randn(3, 2)).sum().backward()
    assert all(p.grad is not None for p in net.parameters())
