"""The Module API against torch.nn.Module: registration, traversal, modes, hooks, state dicts."""

from __future__ import annotations

import copy
from collections import OrderedDict

import numpy as np
import pytest
import torch

import chainrule
import chainrule.nn as nn

from ._helpers import copy_weights, to_ours


def _model(lib):
    """A small tree: a custom module holding a Sequential, a ModuleDict, a shared layer and
    a parameter, a persistent buffer and a non-persistent one."""
    tnn = lib.nn

    class Net(tnn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.features = tnn.Sequential(tnn.Conv2d(2, 3, 3), tnn.BatchNorm2d(3), tnn.ReLU())
            self.head = tnn.ModuleDict({"fc": tnn.Linear(3, 4), "act": tnn.Tanh()})
            self.shared = self.head["fc"]
            self.scale = tnn.Parameter(lib.ones(4))
            self.register_buffer("steps", lib.zeros(1))
            self.register_buffer("cache", lib.zeros(2), persistent=False)
            self.register_parameter("unused", None)

        def forward(self, x):
            x = self.features(x).mean((2, 3))
            return self.head["act"](self.head["fc"](x)) * self.scale

    return Net()


@pytest.fixture
def nets():
    theirs = _model(torch)
    ours = _model(chainrule)
    copy_weights(theirs, ours)
    return ours, theirs


def _names(items):
    return [(name, tuple(value.shape)) for name, value in items]


def test_named_parameters_and_buffers_like_torch(nets) -> None:
    ours, theirs = nets
    assert _names(ours.named_parameters()) == _names(theirs.named_parameters())
    assert _names(ours.named_buffers()) == _names(theirs.named_buffers())
    assert _names(ours.named_parameters(prefix="net")) == _names(
        theirs.named_parameters(prefix="net"))
    assert _names(ours.named_parameters(recurse=False)) == [("scale", (4,))]
    assert _names(ours.named_parameters(remove_duplicate=False)) == _names(
        theirs.named_parameters(remove_duplicate=False))
    assert len(list(ours.parameters())) == len(list(theirs.parameters())) == 7
    assert len(list(ours.buffers())) == len(list(theirs.buffers()))


def test_modules_and_children_like_torch(nets) -> None:
    ours, theirs = nets
    name = lambda items: [(n, type(m).__name__) for n, m in items]
    assert name(ours.named_modules()) == name(theirs.named_modules())
    assert name(ours.named_modules(remove_duplicate=False)) == name(
        theirs.named_modules(remove_duplicate=False))
    assert name(ours.named_children()) == name(theirs.named_children())
    assert [type(m).__name__ for m in ours.children()] == [
        type(m).__name__ for m in theirs.children()]
    assert [type(m).__name__ for m in ours.modules()] == [
        type(m).__name__ for m in theirs.modules()]
    assert ours.get_submodule("features.1") is ours.features[1]
    assert ours.get_parameter("head.fc.bias") is ours.head["fc"].bias
    with pytest.raises(AttributeError, match="Linear has no attribute `nope`"):
        ours.get_submodule("head.fc.nope")


def test_state_dict_like_torch(nets) -> None:
    ours, theirs = nets
    mine, want = ours.state_dict(), theirs.state_dict()
    assert list(mine) == list(want)
    assert "cache" not in mine and "unused" not in mine
    for key in want:
        assert str(mine[key].dtype) == str(want[key].dtype), key
        np.testing.assert_array_equal(mine[key].numpy(), want[key].numpy())
        assert not mine[key].requires_grad
    kept = ours.state_dict(keep_vars=True)
    assert kept["scale"] is ours.scale
    assert list(ours.state_dict(prefix="model.")) == list(theirs.state_dict(prefix="model."))


def test_state_dict_round_trip_and_copies_values(nets) -> None:
    ours, _ = nets
    other = _model(chainrule)
    assert repr(other.load_state_dict(ours.state_dict())) == "<All keys matched successfully>"
    for (key, a), b in zip(ours.state_dict().items(), other.state_dict().values()):
        np.testing.assert_array_equal(a.numpy(), b.numpy(), err_msg=key)
    # values are copied, not shared
    with chainrule.no_grad():
        other.scale.mul_(2)
    assert ours.scale.tolist() == [1.0] * 4
    assert other.scale.requires_grad and isinstance(other.scale, nn.Parameter)


def _error(fn) -> tuple:
    try:
        fn()
    except Exception as e:  # noqa: BLE001 - the test compares the exception itself
        return type(e).__name__, str(e)
    return None, None


@pytest.mark.parametrize("edit", [
    lambda sd: sd.pop("head.fc.bias"),
    lambda sd: sd.update({"extra": 1, "features.9.weight": 2}),
    lambda sd: (sd.pop("scale"), sd.update({"extra": 1})),
    lambda sd: sd.update({"head.fc.weight": np.ones((4, 4), "float32")}),
    lambda sd: sd.update({"head.fc.weight": np.ones((4, 4), "float32"), "extra": 1}),
    lambda sd: sd.pop("features.1.num_batches_tracked"),  # optional, as in PyTorch
], ids=["missing", "unexpected", "both", "size-mismatch", "size-and-unexpected",
        "num_batches_tracked"])
@pytest.mark.parametrize("strict", [True, False])
def test_load_state_dict_errors_like_torch(nets, edit, strict) -> None:
    ours, theirs = nets
    t_state = OrderedDict(theirs.state_dict())
    edit(t_state)
    t_state = OrderedDict((k, torch.tensor(v) if isinstance(v, np.ndarray) else v if isinstance(
        v, torch.Tensor) else torch.tensor(float(v))) for k, v in t_state.items())
    c_state = OrderedDict((k, to_ours(v)) for k, v in t_state.items())
    t_err = _error(lambda: theirs.load_state_dict(t_state, strict=strict))
    c_err = _error(lambda: ours.load_state_dict(c_state, strict=strict))
    assert c_err == t_err
    if t_err[0] is None:
        assert repr(ours.load_state_dict(c_state, strict=strict)) == repr(
            theirs.load_state_dict(t_state, strict=strict))


def test_load_state_dict_assign() -> None:
    layer = nn.Linear(2, 3)
    weight = chainrule.ones(3, 2)
    layer.load_state_dict({"weight": weight, "bias": chainrule.zeros(3)}, assign=True)
    assert isinstance(layer.weight, nn.Parameter) and layer.weight.requires_grad
    assert layer.weight.tolist() == weight.tolist()


def test_load_state_dict_rejects_non_mappings() -> None:
    with pytest.raises(TypeError, match="Expected state_dict to be dict-like"):
        nn.Linear(2, 2).load_state_dict([1, 2])


def test_train_eval_flags(nets) -> None:
    ours, theirs = nets
    assert ours.training and all(m.training for m in ours.modules())
    assert ours.eval() is ours
    assert not any(m.training for m in ours.modules())
    ours.features.train()
    assert ours.features[1].training and not ours.head.training and not ours.training
    with pytest.raises(ValueError, match="training mode is expected to be boolean"):
        ours.train("yes")


def test_zero_grad_and_requires_grad_(nets) -> None:
    ours, _ = nets
    ours(chainrule.randn(2, 2, 5, 5)).sum().backward()
    assert all(p.grad is not None for p in ours.parameters())
    ours.zero_grad(set_to_none=False)
    assert all(p.grad is not None and not p.grad.numpy().any() for p in ours.parameters())
    ours.zero_grad()
    assert all(p.grad is None for p in ours.parameters())
    assert ours.requires_grad_(False) is ours
    assert not any(p.requires_grad for p in ours.parameters())
    ours.head.requires_grad_()
    assert [n for n, p in ours.named_parameters() if p.requires_grad] == [
        "head.fc.weight", "head.fc.bias"]


def test_apply_visits_children_first_like_torch(nets) -> None:
    ours, theirs = nets
    seen_ours, seen_theirs = [], []
    assert ours.apply(lambda m: seen_ours.append(type(m).__name__)) is ours
    theirs.apply(lambda m: seen_theirs.append(type(m).__name__))
    assert seen_ours == seen_theirs


def test_apply_for_initialisation() -> None:
    model = nn.Sequential(nn.Linear(3, 3), nn.ReLU(), nn.Linear(3, 2))

    def init_weights(m):
        if isinstance(m, nn.Linear):
            nn.init.constant_(m.weight, 0.5)
            nn.init.zeros_(m.bias)

    model.apply(init_weights)
    assert model[2].weight.tolist() == [[0.5] * 3] * 2
    assert model[0].bias.tolist() == [0.0] * 3


def test_to_float64_like_torch(nets) -> None:
    ours, theirs = nets
    ours(chainrule.randn(2, 2, 5, 5)).sum().backward()
    assert ours.to(chainrule.float64) is ours
    theirs.to(torch.float64)
    for (name, a), b in zip(ours.state_dict().items(), theirs.state_dict().values()):
        assert str(a.dtype) == str(b.dtype), name
    assert str(ours.cache.dtype) == "torch.float64"
    assert all(p.grad.dtype == chainrule.float64 for p in ours.parameters())
    assert isinstance(ours.scale, nn.Parameter) and ours.scale.requires_grad
    out = ours(chainrule.randn(2, 2, 5, 5, dtype=chainrule.float64))
    assert out.dtype == chainrule.float64
    ours.float()
    assert ours.scale.dtype == chainrule.float32
    assert ours.features[1].num_batches_tracked.dtype == chainrule.int64


def test_forward_hooks() -> None:
    layer = nn.Linear(2, 2)
    calls = []
    pre = layer.register_forward_pre_hook(lambda m, args: (args[0] * 0,))
    post = layer.register_forward_hook(lambda m, args, out: calls.append(out.shape) or out + 1)
    out = layer(chainrule.randn(3, 2))
    np.testing.assert_allclose(out.detach().numpy(),
                               np.broadcast_to(layer.bias.detach().numpy() + 1, (3, 2)))
    assert calls == [chainrule.Size([3, 2])]
    pre.remove()
    post.remove()
    x = chainrule.randn(3, 2)
    np.testing.assert_allclose(layer(x).detach().numpy(),
                               (x @ layer.weight.T + layer.bias).detach().numpy())
    assert calls == [chainrule.Size([3, 2])]


def test_hooks_run_in_registration_order() -> None:
    seen = []
    layer = nn.Identity()
    layer.register_forward_hook(lambda m, a, o: seen.append(1))
    layer.register_forward_hook(lambda m, a, o: seen.append(2))
    layer.register_forward_pre_hook(lambda m, a: seen.append(0))
    layer(chainrule.zeros(1))
    assert seen == [0, 1, 2]


@pytest.mark.parametrize("action", [
    lambda lib, m: setattr(m, "weight", lib.ones(2)),
    lambda lib, m: m.register_parameter("a.b", None),
    lambda lib, m: m.register_parameter("", None),
    lambda lib, m: m.register_buffer("weight", lib.ones(1)),
    lambda lib, m: m.register_parameter("forward", None),
    lambda lib, m: m.register_buffer("buf", 3),
    lambda lib, m: m.register_parameter("p", lib.ones(2)),
    lambda lib, m: m.add_module("x", 3),
    lambda lib, m: lib.nn.Sequential(m).__setattr__("0", lib.ones(1)),
    lambda lib, m: lib.nn.Module()(1),
    lambda lib, m: m.missing_attribute,
    lambda lib, m: m.register_parameter("q", lib.nn.Parameter(lib.ones(2)) * 2),
], ids=["tensor-as-param", "dotted", "empty", "buffer-over-param", "existing-attr",
        "buffer-not-tensor", "param-not-parameter", "not-a-module", "tensor-as-module",
        "no-forward", "getattr", "non-leaf"])
def test_registration_errors_like_torch(action) -> None:
    theirs = _error(lambda: action(torch, torch.nn.Linear(2, 3)))
    ours = _error(lambda: action(chainrule, nn.Linear(2, 3)))
    assert ours == theirs


def test_assignment_registers_and_deletes() -> None:
    m = nn.Module()
    m.w = nn.Parameter(chainrule.ones(2))
    m.sub = nn.Linear(2, 2)
    m.buf = nn.Buffer(chainrule.zeros(3))
    m.tmp = nn.Buffer(chainrule.zeros(1), persistent=False)
    assert list(m.state_dict()) == ["w", "buf", "sub.weight", "sub.bias"]
    assert {"w", "sub", "buf"} <= set(dir(m))
    m.w = None
    assert "w" not in m.state_dict()
    del m.sub
    assert list(m.state_dict()) == ["buf"]
    with pytest.raises(AttributeError):
        m.sub  # noqa: B018


def test_repr_like_torch(nets) -> None:
    ours, theirs = nets
    assert repr(ours) == repr(theirs)
    for build in (
        lambda lib: lib.nn.Sequential(OrderedDict(conv=lib.nn.Conv1d(1, 2, 3),
                                                  act=lib.nn.ReLU())),
        lambda lib: lib.nn.Sequential(),
        lambda lib: lib.nn.Sequential(lib.nn.Sequential(lib.nn.Linear(1, 2)), lib.nn.Identity()),
    ):
        assert repr(build(chainrule)) == repr(build(torch))


def test_parameter_repr_like_torch() -> None:
    data = np.array([[1.0, -2.5], [3.0, 4.0]], dtype="float32")
    for requires_grad in (True, False):
        for dtype in ("float32", "float64"):
            ours = nn.Parameter(chainrule.tensor(data.astype(dtype)), requires_grad)
            theirs = torch.nn.Parameter(torch.tensor(data.astype(dtype)), requires_grad)
            assert repr(ours) == repr(theirs)


def test_parameter_is_a_leaf_sharing_data() -> None:
    t = chainrule.zeros(3)
    p = nn.Parameter(t)
    assert p.is_leaf and p.requires_grad and p.grad_fn is None
    assert isinstance(p, chainrule.Tensor)
    with chainrule.no_grad():
        p.add_(1)
    assert t.tolist() == [1.0, 1.0, 1.0]


def test_deepcopy_is_independent(nets) -> None:
    ours, _ = nets
    clone = copy.deepcopy(ours)
    assert clone.shared is clone.head["fc"]
    with chainrule.no_grad():
        clone.scale.add_(1)
    assert ours.scale.tolist() == [1.0] * 4
    assert list(clone.state_dict()) == list(ours.state_dict())


def test_module_with_keyword_arguments() -> None:
    class Affine(nn.Module):
        def __init__(self):
            super().__init__()
            self.a = nn.Parameter(chainrule.tensor(2.0))

        def forward(self, x, *, shift=0.0):
            return self.a * x + shift

    assert Affine()(chainrule.tensor(3.0), shift=1.0).item() == 7.0


def test_module_init_rejects_arguments() -> None:
    with pytest.raises(TypeError):
        nn.Module(3)
