"""Lazy modules and uninitialized parameters against torch: reprs and state dicts before the
first forward, the inferred shapes and the class they become, then values and gradients."""

from __future__ import annotations

import copy
import pickle

import numpy as np
import pytest
import torch

import chainrule
import chainrule.nn as nn
from chainrule.nn.modules.lazy import LazyModuleMixin
from chainrule.nn.parameter import UninitializedBuffer, UninitializedParameter, is_lazy

from ._helpers import Case, copy_weights, run_twins, to_ours

LAZY = [
    ("LazyLinear", (4,), {}, (2, 3)),
    ("LazyLinear", (4,), {"bias": False}, (2, 5, 3)),
    ("LazyLinear", (1,), {}, (3,)),
    ("LazyConv1d", (4, 3), {}, (2, 3, 7)),
    ("LazyConv1d", (4, 3), {"padding_mode": "reflect", "padding": 1}, (3, 7)),
    ("LazyConv2d", (4, 3), {"groups": 2, "padding": 1, "stride": 2}, (2, 4, 5, 5)),
    ("LazyConv2d", (2, 3), {"bias": False, "dilation": 2}, (3, 7, 7)),
    ("LazyConv3d", (2, 2), {"bias": False}, (1, 3, 4, 4, 4)),
    ("LazyConvTranspose1d", (4, 3), {"stride": 2, "output_padding": 1}, (2, 3, 5)),
    ("LazyConvTranspose2d", (4, 3), {"groups": 2, "bias": False}, (2, 4, 3, 3)),
    ("LazyConvTranspose3d", (2, 2), {"dilation": 2}, (3, 3, 3, 3)),
    ("LazyBatchNorm1d", (), {}, (4, 3)),
    ("LazyBatchNorm1d", (), {"affine": False, "momentum": None}, (4, 3, 5)),
    ("LazyBatchNorm2d", (), {"track_running_stats": False}, (3, 2, 4, 4)),
    ("LazyBatchNorm3d", (), {"bias": False, "eps": 1e-3}, (2, 3, 2, 3, 2)),
    ("LazyInstanceNorm1d", (), {}, (2, 3, 6)),
    ("LazyInstanceNorm2d", (), {"affine": False, "track_running_stats": False}, (2, 3, 4, 4)),
    ("LazyInstanceNorm3d", (), {"bias": False}, (2, 3, 2, 3, 2)),
]
IDS = [f"{name}{args}{kwargs or ''}{shape}" for name, args, kwargs, shape in LAZY]


def _lazy_pair(name, args, kwargs):
    return getattr(nn, name)(*args, **kwargs), getattr(torch.nn, name)(*args, **kwargs)


def _state(module) -> list:
    return [(k, repr(v) if is_lazy(v) or isinstance(v, torch.nn.parameter.UninitializedTensorMixin)
             else tuple(v.shape)) for k, v in module.state_dict().items()]


@pytest.mark.parametrize("name, args, kwargs, shape", LAZY, ids=IDS)
def test_lazy_module_before_its_first_forward_like_torch(name, args, kwargs, shape) -> None:
    ours, theirs = _lazy_pair(name, args, kwargs)
    assert repr(ours) == repr(theirs)
    assert _state(ours) == _state(theirs)
    assert ours.has_uninitialized_params() == theirs.has_uninitialized_params()
    assert [(k, repr(v)) for k, v in ours.named_parameters()] == [
        (k, repr(v)) for k, v in theirs.named_parameters()]
    assert isinstance(ours, LazyModuleMixin)


@pytest.mark.parametrize("name, args, kwargs, shape", LAZY, ids=IDS)
@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_lazy_module_infers_shapes_and_becomes_the_regular_one(name, args, kwargs, shape,
                                                               dtype) -> None:
    ours, theirs = _lazy_pair(name, args, kwargs)
    x = np.random.default_rng(0).standard_normal(shape)
    theirs(torch.tensor(x, dtype=torch.float32))
    ours(chainrule.tensor(x, dtype=chainrule.float32))
    assert type(ours).__name__ == type(theirs).__name__ == name[4:]
    assert type(ours) is getattr(nn, name[4:])
    assert not hasattr(ours, "has_uninitialized_params")
    assert not ours._forward_pre_hooks
    assert repr(ours) == repr(theirs)
    assert _state(ours) == _state(theirs)
    assert all(type(p) is nn.Parameter for p in ours.parameters())
    assert all(type(b) is chainrule.Tensor for b in ours.buffers())
    copy_weights(theirs, ours)
    run_twins(Case(name[4:], inputs=[shape]), dtype, pair=(ours, theirs))


def test_lazy_linear_draws_as_linear() -> None:
    chainrule.manual_seed(0)
    lazy = nn.LazyLinear(200)
    lazy(chainrule.randn(2, 50))
    bound = 1 / np.sqrt(50)
    w = lazy.weight.detach().numpy()
    assert np.abs(w).max() <= bound and np.abs(w).max() > 0.95 * bound
    assert np.abs(lazy.bias.detach().numpy()).max() <= bound


def test_lazy_batch_norm_starts_at_the_usual_running_stats() -> None:
    bn = nn.LazyBatchNorm2d()
    bn.eval()
    x = chainrule.randn(2, 3, 4, 4, dtype=chainrule.float64)
    out = bn(x)
    np.testing.assert_array_equal(bn.running_mean.numpy(), np.zeros(3))
    np.testing.assert_array_equal(bn.running_var.numpy(), np.ones(3))
    np.testing.assert_array_equal(bn.weight.detach().numpy(), np.ones(3))
    np.testing.assert_allclose(out.detach().numpy(), x.numpy() / np.sqrt(1 + 1e-5))


def test_load_state_dict_materializes_a_lazy_module_like_torch() -> None:
    source = torch.nn.Linear(3, 4)
    ours, theirs = nn.LazyLinear(4), torch.nn.LazyLinear(4)
    assert repr(ours.load_state_dict(to_ours(source.state_dict()))) == repr(
        theirs.load_state_dict(source.state_dict()))
    # still the lazy class, in_features still 0 until the first forward
    assert type(ours).__name__ == type(theirs).__name__ == "LazyLinear"
    assert repr(ours) == repr(theirs)
    assert type(ours.weight) is nn.Parameter
    np.testing.assert_array_equal(ours.weight.detach().numpy(), source.weight.detach().numpy())
    with pytest.raises(AssertionError) as their_error:
        theirs(torch.randn(2, 5))
    with pytest.raises(AssertionError) as our_error:
        ours(chainrule.randn(2, 5))
    assert str(our_error.value) == str(their_error.value)
    x = np.random.default_rng(0).standard_normal((2, 3)).astype(np.float32)
    np.testing.assert_allclose(ours(chainrule.tensor(x)).detach().numpy(),
                               theirs(torch.tensor(x)).detach().numpy(), rtol=1e-6)
    assert repr(ours) == repr(theirs) == "Linear(in_features=3, out_features=4, bias=True)"


def test_load_lazy_state_dicts_like_torch() -> None:
    ours, theirs = nn.LazyBatchNorm1d(), torch.nn.LazyBatchNorm1d()
    # lazy into lazy: nothing to copy, still uninitialized
    assert repr(ours.load_state_dict(nn.LazyBatchNorm1d().state_dict())) == repr(
        theirs.load_state_dict(torch.nn.LazyBatchNorm1d().state_dict()))
    assert ours.has_uninitialized_params() and theirs.has_uninitialized_params()
    # lazy into an initialized module: the shape cannot be read
    with pytest.raises(RuntimeError) as their_error:
        torch.nn.Linear(3, 4).load_state_dict(torch.nn.LazyLinear(4).state_dict())
    with pytest.raises(RuntimeError) as our_error:
        nn.Linear(3, 4).load_state_dict(nn.LazyLinear(4).state_dict())
    assert str(our_error.value) == str(their_error.value)
    # an initialized batch norm into a lazy one: buffers materialized and copied
    source = torch.nn.BatchNorm1d(3)
    source(torch.randn(5, 3))
    ours = nn.LazyBatchNorm1d()
    ours.load_state_dict(to_ours(source.state_dict()))
    assert not ours.has_uninitialized_params()
    np.testing.assert_array_equal(ours.running_var.numpy(), source.running_var.numpy())
    assert int(ours.num_batches_tracked) == 1


def test_uninitialized_parameter_like_torch() -> None:
    ours, theirs = UninitializedParameter(), torch.nn.parameter.UninitializedParameter()
    assert repr(ours) == repr(theirs) == str(ours) == "<UninitializedParameter>"
    assert ours.size() == theirs.size() and str(ours.dtype) == str(theirs.dtype)
    assert ours.requires_grad and ours.is_floating_point() and isinstance(ours, nn.Parameter)
    assert is_lazy(ours) and not is_lazy(nn.Parameter(chainrule.zeros(2)))
    with pytest.raises(RuntimeError) as their_error:
        theirs.shape  # noqa: B018
    with pytest.raises(RuntimeError) as our_error:
        ours.shape  # noqa: B018
    assert str(our_error.value) == str(their_error.value)
    for use in (lambda p: p + 1, lambda p: chainrule.ones(2) * p, lambda p: p.sum(),
                lambda p: nn.functional.linear(chainrule.ones(2, 3), p)):
        with pytest.raises(ValueError, match="Attempted to use an uninitialized parameter in"):
            use(ours)
    assert repr(copy.deepcopy(ours)) == "<UninitializedParameter>"
    assert pickle.loads(pickle.dumps(UninitializedParameter(False))).requires_grad is False
    frozen = UninitializedParameter(requires_grad=False, dtype=chainrule.float64)
    frozen.materialize((2, 3))
    assert type(frozen) is nn.Parameter and frozen.shape == (2, 3)
    assert frozen.dtype == chainrule.float64 and not frozen.requires_grad
    ours.materialize([4], dtype=chainrule.float64)
    assert type(ours) is nn.Parameter and ours.dtype == chainrule.float64 and ours.requires_grad


def test_uninitialized_buffer_like_torch() -> None:
    ours, theirs = UninitializedBuffer(persistent=False), torch.nn.parameter.UninitializedBuffer(
        persistent=False)
    assert repr(ours) == repr(theirs) == "<UninitializedBuffer>"
    assert ours.persistent is theirs.persistent is False
    assert ours.requires_grad is theirs.requires_grad is False
    mine, torch_module = nn.Module(), torch.nn.Module()
    mine.x, torch_module.x = ours, theirs
    assert list(mine._buffers) == list(torch_module._buffers) == ["x"]
    assert mine._non_persistent_buffers_set == torch_module._non_persistent_buffers_set == {"x"}
    assert not mine.state_dict()
    ours.materialize((3,))
    assert type(ours) is chainrule.Tensor and ours.shape == (3,)


def test_lazy_modules_take_a_dtype_and_follow_module_conversions_like_torch() -> None:
    assert nn.LazyLinear(4, dtype=chainrule.float64).weight.dtype == chainrule.float64
    ours, theirs = nn.LazyConv1d(2, 3), torch.nn.LazyConv1d(2, 3)
    ours.double()
    theirs.double()
    assert str(ours.weight.dtype) == str(theirs.weight.dtype) == "torch.float64"
    assert repr(ours.weight) == "<UninitializedParameter>"
    ours(chainrule.randn(1, 2, 5, dtype=chainrule.float64))
    assert ours.weight.dtype == ours.bias.dtype == chainrule.float64
    bn = nn.LazyBatchNorm1d().double()
    bn(chainrule.randn(4, 3, dtype=chainrule.float64))
    assert bn.running_mean.dtype == chainrule.float64


def test_deepcopied_lazy_module_initializes_on_its_own() -> None:
    lazy = nn.LazyLinear(4)
    twin = copy.deepcopy(lazy)
    twin(chainrule.randn(2, 3))
    assert type(twin) is nn.Linear and type(lazy) is nn.LazyLinear
    assert lazy.has_uninitialized_params()


@pytest.mark.parametrize("name, args, shape", [
    ("LazyConv2d", (4, 3), (3, 4)), ("LazyConv1d", (4, 3), (1, 2, 3, 5)),
    ("LazyConv2d", (4, 3, 1, 0, 1, 2), (1, 3, 5, 5)),
    ("LazyConvTranspose3d", (4, 3), (2, 3))])
def test_lazy_conv_errors_like_torch(name, args, shape) -> None:
    ours, theirs = _lazy_pair(name, args, {})
    with pytest.raises(Exception) as their_error:
        theirs(torch.randn(*shape))
    with pytest.raises(their_error.type) as our_error:
        ours(chainrule.randn(*shape))
    assert str(our_error.value) == str(their_error.value)


def test_optimizers_accept_uninitialized_parameters_like_torch() -> None:
    lazy = nn.LazyLinear(3)
    for optimizer in (chainrule.optim.SGD(lazy.parameters(), lr=0.1),
                      chainrule.optim.Adam(lazy.parameters(), lr=0.1)):
        optimizer.step()  # no gradients yet, nothing to update
    lazy(chainrule.randn(2, 5)).sum().backward()
    assert lazy.weight.grad.shape == (3, 5)


def test_a_lazy_module_must_initialize_everything() -> None:
    class Half(LazyModuleMixin, nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.a = UninitializedParameter()
            self.b = UninitializedParameter()

        def initialize_parameters(self, input) -> None:
            self.a.materialize(input.shape)

        def forward(self, input):
            return input

    with pytest.raises(RuntimeError, match="^module Half has not been fully initialized$"):
        Half()(chainrule.ones(2))

    class Bare(LazyModuleMixin, nn.Module):
        pass

    with pytest.raises(NotImplementedError,
                       match="^initialize_parameters is not implemented for Bare$"):
        Bare()(chainrule.ones(2))


def test_lazy_modules_initialize_from_keyword_inputs_like_torch() -> None:
    ours, theirs = nn.LazyLinear(2), torch.nn.LazyLinear(2)
    ours(input=chainrule.randn(4, 3))
    theirs(input=torch.randn(4, 3))
    assert repr(ours) == repr(theirs)
    ours, theirs = nn.LazyConvTranspose1d(2, 3, stride=2), torch.nn.LazyConvTranspose1d(
        2, 3, stride=2)
    out = ours(chainrule.randn(1, 4, 5), output_size=[12])
    assert out.shape == theirs(torch.randn(1, 4, 5), output_size=[12]).shape == (1, 2, 12)
    assert repr(ours) == repr(theirs)


def test_forward_pre_hooks_with_kwargs_like_torch() -> None:
    seen = []

    def hook(module, args, kwargs):
        seen.append((len(args), sorted(kwargs)))
        return (), {"input": kwargs["input"] * 0}

    ours, theirs = nn.Linear(3, 2), torch.nn.Linear(3, 2)
    ours.register_forward_pre_hook(hook, with_kwargs=True)
    theirs.register_forward_pre_hook(hook, with_kwargs=True)
    out = ours(input=chainrule.ones(3))
    theirs(input=torch.ones(3))
    assert seen == [(0, ["input"])] * 2
    np.testing.assert_array_equal(out.detach().numpy(), ours.bias.detach().numpy())
    for module in (ours, theirs):
        module.register_forward_pre_hook(lambda m, a, k: 1, with_kwargs=True)
    with pytest.raises(RuntimeError) as their_error:
        theirs(input=torch.ones(3))
    with pytest.raises(RuntimeError) as our_error:
        ours(input=chainrule.ones(3))
    assert str(our_error.value) == str(their_error.value)


def test_an_optimizer_built_before_the_first_forward_trains_the_materialized_weights() -> None:
    ours = nn.Sequential(nn.LazyLinear(4), nn.ReLU(), nn.LazyLinear(2))
    theirs = torch.nn.Sequential(torch.nn.LazyLinear(4), torch.nn.ReLU(), torch.nn.LazyLinear(2))
    assert repr(ours) == repr(theirs)
    params = list(ours.parameters())
    optimizer = chainrule.optim.SGD(params, lr=0.1)
    x = chainrule.randn(5, 3)
    ours(x)
    theirs(torch.randn(5, 3))
    assert repr(ours) == repr(theirs)
    assert [p is q for p, q in zip(params, ours.parameters())] == [True] * 4
    before = ours[2].weight.detach().numpy().copy()
    optimizer.zero_grad()
    ours(x).sum().backward()
    optimizer.step()
    grad = ours[2].weight.grad.numpy()
    assert grad.any()
    np.testing.assert_allclose(ours[2].weight.detach().numpy(), before - 0.1 * grad)


@pytest.mark.parametrize("use", [lambda m: m.requires_grad_(False),
                                 lambda m: sum(p.numel() for p in m.parameters())])
def test_uninitialized_parameters_refuse_what_torch_refuses(use) -> None:
    with pytest.raises(ValueError):
        use(torch.nn.LazyLinear(3))
    with pytest.raises(ValueError, match="Attempted to use an uninitialized parameter"):
        use(nn.LazyLinear(3))


def test_uninitialized_parameters_allow_what_torch_allows() -> None:
    ours, theirs = UninitializedParameter(), torch.nn.parameter.UninitializedParameter()
    ours.requires_grad = theirs.requires_grad = False
    assert ours.requires_grad is theirs.requires_grad is False
    assert ours.ndim == theirs.ndim and str(ours.device) == str(theirs.device)
    assert (ours.grad, ours.grad_fn, ours.is_leaf) == (theirs.grad, theirs.grad_fn, theirs.is_leaf)
