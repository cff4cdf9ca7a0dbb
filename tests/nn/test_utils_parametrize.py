"""nn.utils.parametrize and nn.utils.parametrizations against torch: the class swap, names,
state dict keys, values and gradients, caching, removal, and the hook-based weight_norm and
spectral_norm."""

from __future__ import annotations

import re

import numpy as np
import pytest
import torch
import torch.nn.utils.parametrizations as TP
import torch.nn.utils.parametrize as TZ

import chainrule
import chainrule.nn as nn
import chainrule.nn.utils.parametrizations as CP
import chainrule.nn.utils.parametrize as CZ

from ._helpers import twin

RTOL, ATOL = 1e-10, 1e-12


def _close(ours, theirs, what: str = "") -> None:
    assert tuple(ours.shape) == tuple(theirs.shape), what
    np.testing.assert_allclose(ours.detach().numpy(), theirs.detach().numpy(), rtol=RTOL,
                               atol=ATOL, err_msg=what)


def _pair(name: str, *args, **kwargs):
    torch.manual_seed(0)
    ours, theirs = twin(name, *args, **kwargs)
    return ours.double(), theirs.double()


def _sync(ours, theirs) -> None:
    """Load torch's state (originals and parametrization buffers) into ours; same keys."""
    state = theirs.state_dict()
    assert list(ours.state_dict()) == list(state)
    ours.load_state_dict({k: chainrule.tensor(v.numpy()) for k, v in state.items()})


def _forward_backward(ours, theirs, in_shape, seed=0) -> None:
    """Same input through both; compare outputs and the gradients of every parameter."""
    x = np.random.default_rng(seed).standard_normal(in_shape)
    out, tout = ours(chainrule.tensor(x)), theirs(torch.tensor(x))
    _close(out, tout, "output")
    w = np.random.default_rng(seed + 1).standard_normal(tuple(tout.shape))
    (out * chainrule.tensor(w)).sum().backward()
    (tout * torch.tensor(w)).sum().backward()
    tparams = dict(theirs.named_parameters())
    assert [n for n, _ in ours.named_parameters()] == list(tparams)
    for name, p in ours.named_parameters():
        _close(p.grad, tparams[name].grad, f"gradient of {name}")


# ---- parametrize --------------------------------------------------------------------------------


class Symmetric(nn.Module):
    def forward(self, X):
        return X.triu() + X.triu(1).mT

    def right_inverse(self, A):
        return A.triu()


class TSymmetric(torch.nn.Module):
    def forward(self, X):
        return X.triu() + X.triu(1).mT

    def right_inverse(self, A):
        return A.triu()


class Scale(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.factor = nn.Parameter(chainrule.tensor(2.0, dtype=chainrule.float64))

    def forward(self, X):
        return X * self.factor


class TScale(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.factor = torch.nn.Parameter(torch.tensor(2.0, dtype=torch.float64))

    def forward(self, X):
        return X * self.factor


class Sum(nn.Module):  # two originals: weight = A + B
    def forward(self, A, B):
        return A + B

    def right_inverse(self, X):
        return X, chainrule.zeros_like(X)


class TSum(torch.nn.Module):
    def forward(self, A, B):
        return A + B

    def right_inverse(self, X):
        return X, torch.zeros_like(X)


def test_register_parametrization_like_torch() -> None:
    ours, theirs = _pair("Linear", 3, 3)
    assert CZ.register_parametrization(ours, "weight", Symmetric()) is ours
    TZ.register_parametrization(theirs, "weight", TSymmetric())
    assert type(ours).__name__ == type(theirs).__name__ == "ParametrizedLinear"
    assert isinstance(ours, nn.Linear) and CZ.type_before_parametrizations(ours) is nn.Linear
    assert repr(ours) == repr(theirs).replace("TSymmetric", "Symmetric")
    assert repr(nn.Linear(3, 3)) == repr(torch.nn.Linear(3, 3))  # the class itself untouched
    assert list(ours.state_dict()) == list(theirs.state_dict()) == [
        "bias", "parametrizations.weight.original"]
    assert CZ.is_parametrized(ours) and CZ.is_parametrized(ours, "weight")
    assert not CZ.is_parametrized(ours, "bias") and not CZ.is_parametrized(nn.Linear(2, 2))
    _close(ours.weight, theirs.weight)
    _close(ours.weight, ours.weight.mT)
    _forward_backward(ours, theirs, (2, 3))
    # chaining a second parametrization (with its own parameter)
    CZ.register_parametrization(ours, "weight", Scale())
    TZ.register_parametrization(theirs, "weight", TScale())
    assert list(ours.state_dict()) == list(theirs.state_dict())
    ours.zero_grad()
    theirs.zero_grad()
    _forward_backward(ours, theirs, (2, 3))


def test_assignment_runs_right_inverse_like_torch() -> None:
    ours, theirs = _pair("Linear", 3, 3)
    CZ.register_parametrization(ours, "weight", Symmetric())
    TZ.register_parametrization(theirs, "weight", TSymmetric())
    original = ours.parametrizations.weight.original
    value = np.random.default_rng(0).standard_normal((3, 3))
    ours.weight = chainrule.tensor(value)
    theirs.weight = torch.tensor(value)
    assert ours.parametrizations.weight.original is original  # kept, so optimizers still see it
    _close(ours.parametrizations.weight.original, theirs.parametrizations.weight.original)
    _close(ours.weight, theirs.weight)
    CZ.register_parametrization(ours, "bias", Scale())
    with pytest.raises(RuntimeError, match="^parametrization Scale does not implement "
                                           "right_inverse.$"):
        ours.bias = chainrule.ones(3)


def test_multiple_originals_like_torch() -> None:
    ours, theirs = _pair("Linear", 3, 2)
    CZ.register_parametrization(ours, "weight", Sum())
    TZ.register_parametrization(theirs, "weight", TSum())
    assert list(ours.state_dict()) == list(theirs.state_dict()) == [
        "bias", "parametrizations.weight.original0", "parametrizations.weight.original1"]
    assert isinstance(ours.parametrizations.weight.original1, nn.Parameter)
    _forward_backward(ours, theirs, (4, 3))
    CZ.remove_parametrizations(ours, "weight")
    TZ.remove_parametrizations(theirs, "weight")
    assert list(ours.state_dict()) == list(theirs.state_dict()) == ["bias", "weight"]
    assert isinstance(ours.weight, nn.Parameter) and ours.weight.requires_grad
    _close(ours.weight, theirs.weight)


@pytest.mark.parametrize("leave_parametrized", [True, False])
def test_remove_parametrizations_like_torch(leave_parametrized) -> None:
    ours, theirs = _pair("Linear", 3, 3)
    CZ.register_parametrization(ours, "weight", Symmetric())
    TZ.register_parametrization(theirs, "weight", TSymmetric())
    CZ.register_parametrization(ours, "bias", Scale())
    TZ.register_parametrization(theirs, "bias", TScale())
    original = ours.parametrizations.weight.original
    assert CZ.remove_parametrizations(ours, "weight", leave_parametrized) is ours
    TZ.remove_parametrizations(theirs, "weight", leave_parametrized)
    assert ours.weight is original
    assert type(ours).__name__ == "ParametrizedLinear"  # bias is still parametrized
    CZ.remove_parametrizations(ours, "bias", leave_parametrized)
    TZ.remove_parametrizations(theirs, "bias", leave_parametrized)
    assert type(ours) is nn.Linear and not hasattr(ours, "parametrizations")
    assert list(ours.state_dict()) == list(theirs.state_dict()) == ["weight", "bias"]
    _close(ours.weight, theirs.weight)
    _close(ours.bias, theirs.bias)
    with pytest.raises(ValueError, match="does not have a parametrization on weight"):
        CZ.remove_parametrizations(ours, "weight")


def test_cached_computes_once() -> None:
    layer = CZ.register_parametrization(nn.Linear(3, 3), "weight", Symmetric())
    assert layer.weight is not layer.weight
    with CZ.cached():
        first = layer.weight
        assert layer.weight is first
        with CZ.cached():
            assert layer.weight is first
        assert layer.weight is first
    assert layer.weight is not first


def test_state_dict_round_trip_and_training_mode() -> None:
    ours, theirs = _pair("Linear", 3, 3)
    CZ.register_parametrization(ours, "weight", Symmetric())
    TZ.register_parametrization(theirs, "weight", TSymmetric())
    _sync(ours, theirs)
    _close(ours.weight, theirs.weight)
    ours.eval()
    assert not ours.parametrizations.weight[0].training
    layer = nn.Linear(2, 2).eval()
    CZ.register_parametrization(layer, "weight", Symmetric())
    assert not layer.parametrizations.weight[0].training  # follows the module it joins


def test_transfer_parametrizations_and_params_like_torch() -> None:
    ours, theirs = _pair("Linear", 3, 3)
    CZ.register_parametrization(ours, "weight", Symmetric())
    TZ.register_parametrization(theirs, "weight", TSymmetric())
    to, tto = _pair("Linear", 3, 3)
    assert CZ.transfer_parametrizations_and_params(ours, to) is to
    TZ.transfer_parametrizations_and_params(theirs, tto)
    assert list(to.state_dict()) == list(tto.state_dict())
    _close(to.weight, tto.weight)
    _close(to.weight, ours.weight)
    assert to.parametrizations.weight.original is not ours.parametrizations.weight.original
    plain = nn.Linear(3, 3)
    assert CZ.transfer_parametrizations_and_params(plain, to) is to
    # a name the target lacks is created from the source's value
    bare = nn.Module()
    CZ.transfer_parametrizations_and_params(ours, bare, "weight")
    _close(bare.weight, ours.weight)


def _escape(message: str) -> str:
    return "^" + re.escape(message) + "$"


class _Fn(nn.Module):
    def __init__(self, fn) -> None:
        super().__init__()
        self.fn = fn

    def forward(self, X):
        return self.fn(X)


class _TFn(torch.nn.Module):
    def __init__(self, fn) -> None:
        super().__init__()
        self.fn = fn

    def forward(self, X):
        return self.fn(X)


BAD = [lambda X: X[0], lambda X: X.float(), lambda X: 3]


@pytest.mark.parametrize("bad", range(len(BAD)))
@pytest.mark.parametrize("second", [False, True])
def test_consistency_errors_like_torch(bad, second) -> None:
    ours, theirs = _pair("Linear", 3, 3)
    if second:
        CZ.register_parametrization(ours, "weight", _Fn(lambda X: X * 2))
        TZ.register_parametrization(theirs, "weight", _TFn(lambda X: X * 2))
    with pytest.raises(ValueError) as error:
        TZ.register_parametrization(theirs, "weight", _TFn(BAD[bad]))
    with pytest.raises(ValueError, match=_escape(str(error.value))):
        CZ.register_parametrization(ours, "weight", _Fn(BAD[bad]))
    # unsafe skips the checks (the first registration only: a second one already is a tensor)
    if not second:
        layer = CZ.register_parametrization(nn.Linear(3, 3), "weight", _Fn(BAD[bad]),
                                            unsafe=True)
        assert CZ.is_parametrized(layer, "weight")


def test_name_and_sequence_errors_like_torch() -> None:
    ours, theirs = _pair("Linear", 3, 3)
    with pytest.raises(ValueError, match=_escape(
            "Module 'Linear(in_features=3, out_features=3, bias=True)' does not have a "
            "parameter, a buffer, or a parametrized element with name 'foo'")):
        CZ.register_parametrization(ours, "foo", Symmetric())
    CZ.register_parametrization(ours, "weight", Sum())
    with pytest.raises(ValueError, match=re.escape("Cannot leave unparametrized "
                                                   "(`leave_parametrized=False`)")):
        CZ.remove_parametrizations(ours, "weight", leave_parametrized=False)
    ours.parametrizations.weight[0].right_inverse = lambda X: (X,)
    with pytest.raises(ValueError, match="must return a sequence of tensors of length 2. Got a "
                                         "sequence of length 1."):
        ours.weight = chainrule.ones(3, 3)


def test_parametrized_buffer() -> None:
    ours, theirs = _pair("BatchNorm1d", 3)
    CZ.register_parametrization(ours, "running_var", _Fn(lambda X: X * 3))
    TZ.register_parametrization(theirs, "running_var", _TFn(lambda X: X * 3))
    assert list(ours.state_dict()) == list(theirs.state_dict())
    assert "original" in dict(ours.parametrizations.running_var.named_buffers())
    _close(ours.running_var, theirs.running_var)


# ---- parametrizations ---------------------------------------------------------------------------

ORTHOGONAL = [(shape, omap, trivial)
              for shape in ((4, 4), (3, 5), (5, 3))
              for omap in ("matrix_exp", "cayley", "householder")
              for trivial in (True, False)]


@pytest.mark.parametrize("shape, omap, trivial", ORTHOGONAL)
def test_orthogonal_like_torch(shape, omap, trivial) -> None:
    ours, theirs = _pair("Linear", shape[1], shape[0])
    CP.orthogonal(ours, orthogonal_map=omap, use_trivialization=trivial)
    TP.orthogonal(theirs, orthogonal_map=omap, use_trivialization=trivial)
    assert list(ours.state_dict()) == list(theirs.state_dict())
    q = ours.weight.detach().numpy()
    small = min(shape)
    gram = q @ q.T if shape[0] < shape[1] else q.T @ q
    np.testing.assert_allclose(gram, np.eye(small), atol=1e-12)
    _close(ours.weight, theirs.weight)  # the random completion of a wide/tall base is unused
    _sync(ours, theirs)
    _forward_backward(ours, theirs, (2, shape[1]))


def test_orthogonal_assignment_and_errors_like_torch() -> None:
    ours, theirs = _pair("Linear", 4, 4)
    CP.orthogonal(ours)
    TP.orthogonal(theirs)
    value = np.random.default_rng(5).standard_normal((4, 4))
    ours.weight = chainrule.tensor(value)  # not orthogonal: its QR factor is used
    theirs.weight = torch.tensor(value)
    _close(ours.weight, theirs.weight)
    for kwargs in ({"orthogonal_map": "foo"}, {"name": "bias"}, {"name": "foo"}):
        with pytest.raises(ValueError) as error:
            TP.orthogonal(torch.nn.Linear(2, 2), **kwargs)
        with pytest.raises(ValueError, match=_escape(str(error.value))):
            CP.orthogonal(nn.Linear(2, 2), **kwargs)
    layer = CP.orthogonal(nn.Linear(3, 3), orthogonal_map="cayley", use_trivialization=False)
    with pytest.raises(NotImplementedError, match="not possible to assign to the matrix "
                                                  "exponential or the Cayley"):
        layer.weight = chainrule.eye(3)


def test_orthogonal_gradients_gradcheck() -> None:
    for omap in ("matrix_exp", "cayley", "householder"):
        layer = CP.orthogonal(nn.Linear(3, 3).double(), orthogonal_map=omap,
                              use_trivialization=False)
        x = chainrule.tensor(np.random.default_rng(0).standard_normal((3, 3)) * 0.3,
                             requires_grad=True)
        assert chainrule.autograd.gradcheck(layer.parametrizations.weight[0], (x,))
        if omap == "householder":  # the one composed here: its second derivatives too
            assert chainrule.autograd.gradgradcheck(layer.parametrizations.weight[0], (x,))
    tall = CP.orthogonal(nn.Linear(2, 4).double(), orthogonal_map="householder")
    x = chainrule.tensor(np.random.default_rng(1).standard_normal((4, 2)) * 0.3,
                         requires_grad=True)
    assert chainrule.autograd.gradcheck(tall.parametrizations.weight[0], (x,))


@pytest.mark.parametrize("name, args, dim", [("Linear", (3, 4), 0), ("Linear", (3, 4), None),
                                             ("Linear", (3, 4), 1), ("Conv1d", (2, 3, 2), 1),
                                             ("Conv2d", (2, 3, 2), -1)])
def test_weight_norm_like_torch(name, args, dim) -> None:
    ours, theirs = _pair(name, *args)
    CP.weight_norm(ours, dim=dim)
    TP.weight_norm(theirs, dim=dim)
    assert list(ours.state_dict()) == list(theirs.state_dict())
    _close(ours.parametrizations.weight.original0, theirs.parametrizations.weight.original0)
    _close(ours.weight, theirs.weight)
    in_shape = (2, 3) if name == "Linear" else (2, 2) + (5,) * (2 if "2d" in name else 1)
    _forward_backward(ours, theirs, in_shape)
    CZ.remove_parametrizations(ours, "weight")
    TZ.remove_parametrizations(theirs, "weight")
    assert list(ours.state_dict()) == list(theirs.state_dict())
    _close(ours.weight, theirs.weight)


@pytest.mark.parametrize("name, args, kwargs", [
    ("Linear", (3, 4), {}), ("Linear", (3, 4), {"n_power_iterations": 3}),
    ("Conv2d", (2, 3, 2), {}), ("ConvTranspose2d", (2, 3, 2), {}),
    ("Conv1d", (2, 3, 2), {"dim": -1})])
def test_spectral_norm_like_torch(name, args, kwargs) -> None:
    ours, theirs = _pair(name, *args)
    CP.spectral_norm(ours, **kwargs)
    TP.spectral_norm(theirs, **kwargs)
    _sync(ours, theirs)  # the power iteration starts from random vectors: start from torch's
    in_shape = (2, 3) if name == "Linear" else (2, 2) + (5,) * (2 if "2d" in name else 1)
    for training in (True, False):
        ours.train(training)
        theirs.train(training)
        ours.zero_grad()
        theirs.zero_grad()
        _forward_backward(ours, theirs, in_shape)
        _close(ours.parametrizations.weight[0]._u, theirs.parametrizations.weight[0]._u)
    w = ours.weight.detach().numpy()
    dim = 1 if name.startswith("ConvT") else kwargs.get("dim", 0) % w.ndim
    sigma = np.linalg.svd(np.moveaxis(w, dim, 0).reshape(w.shape[dim], -1), compute_uv=False)[0]
    assert abs(sigma - 1) < 0.2  # normalized up to the power iteration's accuracy


def test_spectral_norm_of_a_vector_and_errors_like_torch() -> None:
    ours, theirs = _pair("Linear", 3, 4)
    CP.spectral_norm(ours, "bias")
    TP.spectral_norm(theirs, "bias")
    _close(ours.bias, theirs.bias)
    assert list(ours.state_dict()) == list(theirs.state_dict())
    for kwargs in ({"n_power_iterations": 0}, {"dim": 3}, {"name": "foo"}):
        with pytest.raises((ValueError, IndexError)) as error:
            TP.spectral_norm(torch.nn.Linear(2, 2), **kwargs)
        with pytest.raises(error.type, match=_escape(str(error.value))):
            CP.spectral_norm(nn.Linear(2, 2), **kwargs)


# ---- the hook-based weight_norm and spectral_norm -----------------------------------------------


@pytest.mark.parametrize("dim", [0, 1, None])
def test_old_weight_norm_like_torch(dim) -> None:
    ours, theirs = _pair("Linear", 3, 4)
    with pytest.warns(FutureWarning, match=re.escape(
            "`torch.nn.utils.weight_norm` is deprecated in favor of "
            "`torch.nn.utils.parametrizations.weight_norm`.")):
        assert nn.utils.weight_norm(ours, dim=dim) is ours
    with pytest.warns(FutureWarning):
        torch.nn.utils.weight_norm(theirs, dim=dim)
    assert list(ours.state_dict()) == list(theirs.state_dict()) == ["bias", "weight_g",
                                                                    "weight_v"]
    _close(ours.weight_g, theirs.weight_g)
    _forward_backward(ours, theirs, (2, 3))
    with pytest.raises(RuntimeError, match="Cannot register two weight_norm hooks on the same "
                                           "parameter weight"), pytest.warns(FutureWarning):
        nn.utils.weight_norm(ours, dim=dim)
    assert nn.utils.remove_weight_norm(ours) is ours
    torch.nn.utils.remove_weight_norm(theirs)
    assert list(ours.state_dict()) == list(theirs.state_dict())
    assert isinstance(ours.weight, nn.Parameter) and not ours._forward_pre_hooks
    _close(ours.weight, theirs.weight)
    with pytest.raises(ValueError, match=re.escape("weight_norm of 'weight' not found in "
                                                   "Linear(in_features=3")):
        nn.utils.remove_weight_norm(ours)


@pytest.mark.parametrize("name, args", [("Linear", (3, 4)), ("ConvTranspose1d", (2, 3, 2))])
def test_old_spectral_norm_like_torch(name, args) -> None:
    ours, theirs = _pair(name, *args)
    assert nn.utils.spectral_norm(ours, n_power_iterations=2) is ours
    torch.nn.utils.spectral_norm(theirs, n_power_iterations=2)
    assert list(ours.state_dict()) == list(theirs.state_dict()) == [
        "bias", "weight_orig", "weight_u", "weight_v"]
    _sync(ours, theirs)
    in_shape = (2, 3) if name == "Linear" else (2, 2, 5)
    for training in (True, False):
        ours.train(training)
        theirs.train(training)
        ours.zero_grad()
        theirs.zero_grad()
        _forward_backward(ours, theirs, in_shape)
        _close(ours.weight_u, theirs.weight_u)
        _close(ours.weight, theirs.weight)
    with pytest.raises(RuntimeError, match="Cannot register two spectral_norm hooks"):
        nn.utils.spectral_norm(ours)
    nn.utils.remove_spectral_norm(ours)
    torch.nn.utils.remove_spectral_norm(theirs)
    assert list(ours.state_dict()) == list(theirs.state_dict())
    _close(ours.weight, theirs.weight)
    with pytest.raises(ValueError, match="spectral_norm of 'weight' not found in"):
        nn.utils.remove_spectral_norm(ours)


def test_orthogonal_of_a_complex_weight_raises() -> None:
    layer = nn.Linear(2, 2)
    layer.weight = nn.Parameter(chainrule.zeros(2, 2, dtype=chainrule.complex128))
    with pytest.raises(NotImplementedError, match="real weights only"):
        CP.orthogonal(layer)
