"""The public surface: every name torch.distributions (and its constraints and transforms)
exports exists here, with PyTorch's parameter names."""

from __future__ import annotations

import inspect

import pytest
import torch

import chainrule
import chainrule.distributions as D


def _public(module):
    return sorted(getattr(module, "__all__", []))


@pytest.mark.parametrize("ours,theirs", [
    (D, torch.distributions), (D.constraints, torch.distributions.constraints),
    (D.transforms, torch.distributions.transforms)], ids=["distributions", "constraints",
                                                          "transforms"])
def test_every_public_name_is_there(ours, theirs):
    missing = [n for n in _public(theirs) if not hasattr(ours, n)]
    assert not missing


def _parameters(obj):
    target = obj.__init__ if inspect.isclass(obj) else obj
    return [p for p in inspect.signature(target).parameters if p not in ("self", "args",
                                                                          "kwargs")]


@pytest.mark.parametrize("name", [n for n in _public(torch.distributions)
                                  if callable(getattr(torch.distributions, n))])
def test_parameter_names_like_torch(name):
    theirs = getattr(torch.distributions, name)
    if not (inspect.isclass(theirs) or inspect.isfunction(theirs)):
        return
    assert _parameters(getattr(D, name)) == _parameters(theirs)


def test_methods_like_torch():
    for name in ("sample", "rsample", "log_prob", "cdf", "icdf", "entropy", "expand",
                 "enumerate_support", "perplexity", "sample_n"):
        want = [p for p in inspect.signature(getattr(torch.distributions.Distribution,
                                                     name)).parameters]
        got = [p for p in inspect.signature(getattr(D.Distribution, name)).parameters]
        assert got == want, name


def test_float32_by_default():
    d = D.Normal(0.0, 1.0)
    assert d.loc.dtype == chainrule.float32
    assert d.sample((2,)).dtype == chainrule.float32
    assert d.log_prob(chainrule.zeros(2)).dtype == chainrule.float32
    assert D.Gamma(chainrule.tensor(2.0), 1.0).rsample().dtype == chainrule.float32
    assert D.Categorical(logits=chainrule.zeros(3)).sample().dtype == chainrule.int64


def test_torch_module_paths():
    import importlib
    import pkgutil

    for info in pkgutil.iter_modules(torch.distributions.__path__):
        theirs = importlib.import_module(f"torch.distributions.{info.name}")
        ours = importlib.import_module(f"chainrule.distributions.{info.name}")
        missing = [n for n in getattr(theirs, "__all__", []) if not hasattr(ours, n)]
        assert not missing, info.name
    from chainrule.distributions.normal import Normal

    assert Normal is D.Normal
