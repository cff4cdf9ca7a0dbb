"""nn.utils against torch.nn.utils: gradient clipping and parameter vectors."""

from __future__ import annotations

import inspect
import math

import numpy as np
import pytest
import torch

import chainrule
import chainrule.nn as nn

SHAPES = [(3, 4), (4,), (2, 2, 2)]


def _params_with_grads(scale: float):
    rng = np.random.default_rng(0)
    values = [rng.standard_normal(s).astype("float32") for s in SHAPES]
    grads = [scale * rng.standard_normal(s).astype("float32") for s in SHAPES]
    ours, theirs = [], []
    for v, g in zip(values, grads):
        p = nn.Parameter(chainrule.tensor(v))
        p.grad = chainrule.tensor(g)
        q = torch.nn.Parameter(torch.tensor(v))
        q.grad = torch.tensor(g)
        ours.append(p)
        theirs.append(q)
    # a parameter without a gradient is skipped by both
    ours.append(nn.Parameter(chainrule.ones(2)))
    theirs.append(torch.nn.Parameter(torch.ones(2)))
    return ours, theirs


@pytest.mark.parametrize("norm_type", [2.0, 1, 3.5, math.inf, "inf"])
@pytest.mark.parametrize("max_norm, scale", [(1.0, 1.0), (100.0, 1.0), (0.5, 1e-3)])
def test_clip_grad_norm_like_torch(max_norm, scale, norm_type) -> None:
    ours, theirs = _params_with_grads(scale)
    norm_type = float(norm_type)
    total_ours = nn.utils.clip_grad_norm_(ours, max_norm, norm_type)
    total_theirs = torch.nn.utils.clip_grad_norm_(theirs, max_norm, norm_type)
    assert str(total_ours.dtype) == str(total_theirs.dtype)
    assert total_ours.shape == total_theirs.shape == ()
    np.testing.assert_allclose(total_ours.numpy(), total_theirs.numpy(), rtol=1e-6)
    for p, q in zip(ours[:-1], theirs[:-1]):
        np.testing.assert_allclose(p.grad.numpy(), q.grad.numpy(), rtol=1e-6, atol=1e-8)
    assert ours[-1].grad is None


def test_clip_grad_norm_of_one_tensor_and_of_nothing() -> None:
    ours, theirs = _params_with_grads(1.0)
    a = nn.utils.clip_grad_norm_(ours[0], 0.1)
    b = torch.nn.utils.clip_grad_norm_(theirs[0], 0.1)
    np.testing.assert_allclose(a.numpy(), b.numpy(), rtol=1e-6)
    np.testing.assert_allclose(ours[0].grad.numpy(), theirs[0].grad.numpy(), rtol=1e-6)
    empty = nn.utils.clip_grad_norm_([nn.Parameter(chainrule.ones(2))], 1.0)
    assert empty.item() == torch.nn.utils.clip_grad_norm_([torch.nn.Parameter(
        torch.ones(2))], 1.0).item() == 0.0


# Scaling an inf gradient by 1/inf makes NaN; NumPy warns about it where torch is silent.
@pytest.mark.filterwarnings("ignore:invalid value encountered in multiply:RuntimeWarning")
def test_clip_grad_norm_nonfinite() -> None:
    p = nn.Parameter(chainrule.ones(2))
    p.grad = chainrule.tensor([1.0, math.inf])
    with pytest.raises(RuntimeError, match="is non-finite, so it cannot be clipped"):
        nn.utils.clip_grad_norm_([p], 1.0, error_if_nonfinite=True)
    assert math.isinf(nn.utils.clip_grad_norm_([p], 1.0).item())


@pytest.mark.parametrize("clip_value", [0.1, 0.5, 10.0])
def test_clip_grad_value_like_torch(clip_value) -> None:
    ours, theirs = _params_with_grads(1.0)
    assert nn.utils.clip_grad_value_(ours, clip_value) is None
    torch.nn.utils.clip_grad_value_(theirs, clip_value)
    for p, q in zip(ours[:-1], theirs[:-1]):
        np.testing.assert_array_equal(p.grad.numpy(), q.grad.numpy())


def test_parameters_to_vector_like_torch_and_back() -> None:
    ours, theirs = _params_with_grads(1.0)
    vec = nn.utils.parameters_to_vector(ours)
    want = torch.nn.utils.parameters_to_vector(theirs)
    np.testing.assert_array_equal(vec.detach().numpy(), want.detach().numpy())
    assert vec.requires_grad and vec.shape == (12 + 4 + 8 + 2,)
    new = chainrule.arange(26, dtype=chainrule.float32)
    nn.utils.vector_to_parameters(new, ours)
    np.testing.assert_array_equal(ours[0].detach().numpy(), np.arange(12).reshape(3, 4))
    np.testing.assert_array_equal(ours[-1].detach().numpy(), [24, 25])
    np.testing.assert_array_equal(nn.utils.parameters_to_vector(ours).detach().numpy(),
                                  new.numpy())
    with pytest.raises(TypeError, match="expected torch.Tensor"):
        nn.utils.vector_to_parameters([1.0], ours)


def test_parameters_to_vector_gradient() -> None:
    a, b = nn.Parameter(chainrule.ones(2, 2)), nn.Parameter(chainrule.ones(3))
    vec = nn.utils.parameters_to_vector([a, b])
    (vec * chainrule.arange(7, dtype=chainrule.float32)).sum().backward()
    assert a.grad.tolist() == [[0.0, 1.0], [2.0, 3.0]]
    assert b.grad.tolist() == [4.0, 5.0, 6.0]


# ---- total norms and clipping by a given norm ---------------------------------------------------


@pytest.mark.parametrize("norm_type", [2.0, 1.0, 3.0, math.inf])
def test_get_total_norm_and_clip_grads_with_norm_like_torch(norm_type) -> None:
    ours, theirs = _params_with_grads(1.0)
    total = nn.utils.get_total_norm([p.grad for p in ours[:-1]], norm_type)
    want = torch.nn.utils.get_total_norm([q.grad for q in theirs[:-1]], norm_type)
    assert str(total.dtype) == str(want.dtype) and total.shape == want.shape
    np.testing.assert_allclose(total.numpy(), want.numpy(), rtol=1e-6)
    assert nn.utils.clip_grads_with_norm_(ours, 0.5, total) is None
    torch.nn.utils.clip_grads_with_norm_(theirs, 0.5, want)
    for p, q in zip(ours[:-1], theirs[:-1]):
        np.testing.assert_allclose(p.grad.numpy(), q.grad.numpy(), rtol=1e-6)
    one = chainrule.tensor([3.0, 4.0])
    assert nn.utils.get_total_norm(one).item() == torch.nn.utils.get_total_norm(
        torch.tensor([3.0, 4.0])).item() == 5.0
    mixed = nn.utils.get_total_norm([chainrule.ones(3), chainrule.ones(2, dtype=chainrule.float64)])
    want = torch.nn.utils.get_total_norm([torch.ones(3), torch.ones(2, dtype=torch.float64)])
    assert str(mixed.dtype) == str(want.dtype)
    np.testing.assert_allclose(mixed.numpy(), want.numpy(), rtol=1e-7)
    empty = nn.utils.get_total_norm([])
    assert repr(empty) == repr(torch.nn.utils.get_total_norm([]))


def test_clip_grad_norm_spreads_a_nan_norm_like_torch() -> None:
    p = nn.Parameter(chainrule.ones(2))
    p.grad = chainrule.tensor([1.0, math.nan])
    q = torch.nn.Parameter(torch.ones(2))
    q.grad = torch.tensor([1.0, math.nan])
    assert math.isnan(nn.utils.clip_grad_norm_([p], 1.0).item())
    torch.nn.utils.clip_grad_norm_([q], 1.0)
    np.testing.assert_array_equal(p.grad.numpy(), q.grad.numpy())  # all NaN in both


def test_clip_grad_norm_without_underscore_is_deprecated() -> None:
    ours, theirs = _params_with_grads(1.0)
    with pytest.warns(FutureWarning, match="`torch.nn.utils.clip_grad_norm` is now deprecated "
                                           "in favor of `torch.nn.utils.clip_grad_norm_`."):
        total = nn.utils.clip_grad_norm(ours, 1.0)
    with pytest.warns(FutureWarning):
        want = torch.nn.utils.clip_grad_norm(theirs, 1.0)
    np.testing.assert_allclose(total.numpy(), want.numpy(), rtol=1e-6)


# ---- fusion, memory formats, skip_init, stateless -----------------------------------------------


def _bn_pair(name: str, channels: int):
    """A batch norm and its torch twin with non-trivial running statistics and affine terms."""
    from ._helpers import twin

    ours, theirs = twin(name, channels)
    rng = np.random.default_rng(3)
    state = {"running_mean": rng.standard_normal(channels),
             "running_var": rng.uniform(0.5, 2.0, channels),
             "weight": rng.standard_normal(channels), "bias": rng.standard_normal(channels)}
    theirs.double().load_state_dict({k: torch.tensor(v) for k, v in state.items()}, strict=False)
    ours.double().load_state_dict({k: chainrule.tensor(v) for k, v in state.items()},
                                  strict=False)
    return ours.eval(), theirs.eval()


@pytest.mark.parametrize("conv, transpose", [("Conv2d", False), ("ConvTranspose2d", True),
                                             ("Conv1d", False)])
def test_fuse_conv_bn_eval_like_torch(conv, transpose) -> None:
    from ._helpers import twin

    ours, theirs = twin(conv, 2, 3, 3)
    ours.double().eval()
    theirs.double().eval()
    bn, tbn = _bn_pair("BatchNorm2d" if conv.endswith("2d") else "BatchNorm1d", 3)
    fused = nn.utils.fuse_conv_bn_eval(ours, bn, transpose)
    tfused = torch.nn.utils.fuse_conv_bn_eval(theirs, tbn, transpose)
    assert fused is not ours and type(fused) is type(ours)
    for name in ("weight", "bias"):
        assert isinstance(getattr(fused, name), nn.Parameter)
        np.testing.assert_allclose(getattr(fused, name).detach().numpy(),
                                   getattr(tfused, name).detach().numpy(), rtol=1e-12)
    x = np.random.default_rng(0).standard_normal((2, 2) + (5,) * (2 if "2d" in conv else 1))
    np.testing.assert_allclose(fused(chainrule.tensor(x)).detach().numpy(),
                               bn(ours(chainrule.tensor(x))).detach().numpy(), rtol=1e-10)


def test_fuse_weights_without_bias_and_linear_like_torch() -> None:
    from ._helpers import twin

    rng = np.random.default_rng(0)
    w, rm, rv = rng.standard_normal((3, 2, 2)), rng.standard_normal(3), rng.uniform(1, 2, 3)
    ours = nn.utils.fuse_conv_bn_weights(chainrule.tensor(w), None, chainrule.tensor(rm),
                                         chainrule.tensor(rv), 1e-5, None, None)
    theirs = torch.nn.utils.fuse_conv_bn_weights(torch.tensor(w), None, torch.tensor(rm),
                                                 torch.tensor(rv), 1e-5, None, None)
    for a, b in zip(ours, theirs):
        assert a.requires_grad == b.requires_grad
        np.testing.assert_allclose(a.detach().numpy(), b.detach().numpy(), rtol=1e-12)
    linear, tlinear = twin("Linear", 4, 3)
    linear.double().eval()
    tlinear.double().eval()
    bn, tbn = _bn_pair("BatchNorm1d", 3)
    fused = nn.utils.fuse_linear_bn_eval(linear, bn)
    tfused = torch.nn.utils.fuse_linear_bn_eval(tlinear, tbn)
    for name in ("weight", "bias"):
        np.testing.assert_allclose(getattr(fused, name).detach().numpy(),
                                   getattr(tfused, name).detach().numpy(), rtol=1e-12)
    with pytest.raises(AssertionError, match="Fusion only for eval!"):
        nn.utils.fuse_linear_bn_eval(linear.train(), bn)
    with pytest.raises(AssertionError, match="linear.out_features == bn.num_features"):
        nn.utils.fuse_linear_bn_eval(nn.Linear(4, 2).eval(), bn)


def test_memory_format_conversion_returns_the_module() -> None:
    model = nn.Sequential(nn.Conv2d(2, 3, 3), nn.ReLU())
    before = model[0].weight.detach().numpy().copy()
    assert nn.utils.convert_conv2d_weight_memory_format(model, "channels_last") is model
    assert nn.utils.convert_conv3d_weight_memory_format(model, "channels_last") is model
    np.testing.assert_array_equal(model[0].weight.detach().numpy(), before)


def test_skip_init() -> None:
    layer = nn.utils.skip_init(nn.Linear, 3, 4, bias=False)
    assert repr(layer) == repr(torch.nn.utils.skip_init(torch.nn.Linear, 3, 4, bias=False))
    assert tuple(layer.weight.shape) == (4, 3) and layer.weight.requires_grad

    class NoDevice(nn.Module):
        pass

    with pytest.raises(RuntimeError, match="Expected a Module; got <class 'int'>"):
        nn.utils.skip_init(int)
    with pytest.raises(RuntimeError, match="Module must support a 'device' arg to skip "
                                           "initialization"):
        nn.utils.skip_init(NoDevice)


def test_stateless_functional_call_is_func_functional_call_with_a_warning() -> None:
    layer = nn.Linear(2, 1)
    weight = chainrule.tensor([[2.0, 3.0]], requires_grad=True)
    with pytest.warns(FutureWarning, match="`torch.nn.utils.stateless.functional_call` is "
                                           "deprecated as of PyTorch 2.0"):
        out = nn.utils.stateless.functional_call(layer, {"weight": weight,
                                                         "bias": chainrule.zeros(1)},
                                                 (chainrule.tensor([1.0, 1.0]),))
    assert out.item() == 5.0
    out.backward()
    assert weight.grad.tolist() == [[1.0, 1.0]]
    assert layer.weight is not weight


# ---- every public name is there -----------------------------------------------------------------

def _home(value) -> str:
    """The module a value was defined in (a module's own name for a module)."""
    return value.__name__ if inspect.ismodule(value) else getattr(value, "__module__", "") or ""


# torch's names chainrule leaves out, each with the reason in docs/differences.md
NOT_HERE = {"_named_member_accessor", "NamedMemberAccessor", "ConvT", "LinearT", "T_module"}


@pytest.mark.parametrize("sub", ["", "clip_grad", "convert_parameters", "fusion", "init",
                                 "memory_format", "parametrizations", "parametrize", "prune",
                                 "rnn", "stateless", "weight_norm", "spectral_norm"])
def test_every_public_name_of_torch_nn_utils(sub) -> None:
    import importlib

    name = "nn.utils" + (f".{sub}" if sub else "")
    theirs = importlib.import_module(f"torch.{name}")
    ours = importlib.import_module(f"chainrule.{name}")
    own = {n for n in dir(theirs) if not n.startswith("_") and _home(getattr(theirs, n)).startswith(
        "torch.nn.utils")} | ({"_named_member_accessor"} & set(dir(theirs)))
    missing = sorted(n for n in own if not hasattr(ours, n) and n not in NOT_HERE)
    assert not missing
    if hasattr(theirs, "__all__"):
        assert sorted(n for n in theirs.__all__ if n not in NOT_HERE) == sorted(
            n for n in ours.__all__ if hasattr(theirs, n))
