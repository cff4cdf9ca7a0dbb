"""Every distribution against torch.distributions: values, gradients (gradcheck and torch's),
sample moments, shapes and printed forms."""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest
import torch

import chainrule
from chainrule.autograd import gradcheck, gradgradcheck

from ._cases import CASES

METHODS = ("log_prob", "cdf", "icdf", "entropy", "mean", "variance", "mode", "stddev")


def evaluate(dist, method, value):
    """dist.<method> (called with ``value`` for log_prob/cdf/icdf), or None when the
    distribution does not define it."""
    try:
        attr = getattr(dist, method)
        if method in ("log_prob", "cdf", "icdf"):
            return attr(value)
        return attr() if method == "entropy" else attr
    except NotImplementedError:
        return None


def icdf_point(case):
    """A probability to invert: torch's cdf at the case's value."""
    theirs = case.build(torch)
    try:
        return theirs.cdf(case.value_in(torch)).detach().numpy()
    except NotImplementedError:
        return None


def method_inputs(case, method, lib):
    if method == "icdf":
        q = icdf_point(case)
        return None if q is None else lib.tensor(q, dtype=lib.float64)
    return case.value_in(lib)


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.id)
def test_values_shapes_and_repr_like_torch(case):
    ours, theirs = case.build(chainrule), case.build(torch)
    assert repr(ours) == repr(theirs)
    assert tuple(ours.batch_shape) == tuple(theirs.batch_shape)
    assert tuple(ours.event_shape) == tuple(theirs.event_shape)
    assert ours.has_rsample == theirs.has_rsample
    assert ours.has_enumerate_support == theirs.has_enumerate_support
    assert repr(ours.support) == repr(theirs.support)
    for method in METHODS:
        if method in case.value_skip:
            continue
        x = method_inputs(case, method, torch)
        want = None if x is None else evaluate(theirs, method, x)
        if want is None:
            continue
        got = evaluate(ours, method, method_inputs(case, method, chainrule))
        assert got is not None, f"{case.id}.{method} is missing"
        assert tuple(got.shape) == tuple(want.shape), method
        np.testing.assert_allclose(got.detach().numpy(), want.detach().numpy(), rtol=case.rtol,
                                   atol=1e-12, err_msg=f"{case.id}.{method}")


_DIFFERENTIABLE: dict = {}


def differentiable_methods(case):
    """The methods torch defines for this case with finite, floating values."""
    if case.id not in _DIFFERENTIABLE:
        theirs, found = case.build(torch), []
        for method in METHODS:
            x = method_inputs(case, method, torch)
            out = None if x is None or method in case.grad_skip else evaluate(theirs, method, x)
            if out is not None and out.dtype.is_floating_point and method != "mode" \
                    and bool(torch.isfinite(out).all()):
                found.append(method)
        _DIFFERENTIABLE[case.id] = found
    return _DIFFERENTIABLE[case.id]


def scalar_objective(case, lib, tensors):
    """The sum of every defined method's values, as a function of the parameters (not
    validated: finite differences step off constraints like the lower-triangular one)."""
    dist = case.build(lib, **tensors, validate_args=False)
    total = 0
    for method in differentiable_methods(case):
        total = total + evaluate(dist, method, method_inputs(case, method, lib)).sum()
    return total


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.id)
def test_gradients_gradcheck_and_like_torch(case):
    assert differentiable_methods(case), case.id
    params = {k: case.params[k] for k in case.diff}
    ours = {k: chainrule.tensor(v, dtype=chainrule.float64, requires_grad=True)
            for k, v in params.items()}
    theirs = {k: torch.tensor(v, dtype=torch.float64, requires_grad=True)
              for k, v in params.items()}
    out_ours = scalar_objective(case, chainrule, ours)
    out_theirs = scalar_objective(case, torch, theirs)
    np.testing.assert_allclose(out_ours.item(), out_theirs.item(), rtol=case.rtol)
    g_ours = chainrule.autograd.grad(out_ours, list(ours.values()), allow_unused=True)
    g_theirs = torch.autograd.grad(out_theirs, list(theirs.values()), allow_unused=True)
    for name, a, b in zip(ours, g_ours, g_theirs):
        if b is None:
            continue
        if name in case.lower_only:
            # log_prob reads only the lower triangle: ours is zero above it, torch's
            # cholesky_solve backward is not (docs/differences.md)
            a, b = a.tril(), b.tril()
        np.testing.assert_allclose(a.numpy(), b.numpy(), rtol=max(1e-7, case.rtol), atol=1e-10,
                                   err_msg=f"d/d{name}")
    names = list(ours)
    assert gradcheck(lambda *xs: scalar_objective(case, chainrule, dict(zip(names, xs))),
                     tuple(ours.values()))


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.id)
def test_second_order_gradgradcheck(case):
    names = list(case.diff)
    xs = tuple(chainrule.tensor(case.params[k], dtype=chainrule.float64, requires_grad=True)
               for k in names)
    assert gradgradcheck(lambda *xs: scalar_objective(case, chainrule, dict(zip(names, xs))), xs)


N = 20_000


@pytest.mark.parametrize("case", [c for c in CASES if c.moments], ids=lambda c: c.id)
def test_sample_moments_within_five_standard_errors(case):
    chainrule.manual_seed(0)
    dist = case.build(chainrule)
    samples = dist.sample((N,))
    assert tuple(samples.shape) == (N, *dist.batch_shape, *dist.event_shape)
    x = samples.double().numpy()
    mean, var = dist.mean.detach().numpy(), dist.variance.detach().numpy()
    se_mean = np.sqrt(var / N)
    assert np.all(np.abs(x.mean(0) - mean) <= 5 * se_mean), (x.mean(0), mean)
    m4 = ((x - x.mean(0)) ** 4).mean(0)
    se_var = np.sqrt(np.maximum(m4 - x.var(0) ** 2, 1e-30) / N)
    assert np.all(np.abs(x.var(0) - var) <= 5 * se_var + 1e-12), (x.var(0), var)
    assert bool(dist.support.check(samples).all())


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.id)
def test_manual_seed_makes_sampling_reproducible(case):
    dist = case.build(chainrule)
    chainrule.manual_seed(3)
    first = dist.sample((5,))
    chainrule.manual_seed(3)
    np.testing.assert_array_equal(first.numpy(), dist.sample((5,)).numpy())
    assert first.requires_grad is False


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.id)
def test_expand_like_torch(case):
    ours, theirs = case.build(chainrule), case.build(torch)
    shape = (2, *ours.batch_shape)
    e_ours, e_theirs = ours.expand(shape), theirs.expand(torch.Size(shape))
    assert type(e_ours).__name__ == type(e_theirs).__name__
    assert tuple(e_ours.batch_shape) == tuple(e_theirs.batch_shape)
    with warnings.catch_warnings():   # torch 2.13's Wishart warns of singular samples always
        warnings.simplefilter("ignore")
        value = e_theirs.sample()
        their_shape = tuple(e_theirs.sample().shape)
    np.testing.assert_allclose(e_ours.log_prob(chainrule.tensor(value.numpy())).detach().numpy(),
                               e_theirs.log_prob(value).detach().numpy(), rtol=1e-9)
    assert tuple(e_ours.sample().shape) == their_shape


@pytest.mark.parametrize("name,params", [
    ("Bernoulli", {"probs": [0.3, 0.6]}), ("Categorical", {"probs": [[0.2, 0.8], [0.5, 0.5]]}),
    ("OneHotCategorical", {"logits": [[0.1, 0.2, 0.3]]}),
    ("Binomial", {"total_count": 3, "probs": [0.2, 0.7]})])
@pytest.mark.parametrize("expand", [True, False])
def test_enumerate_support_like_torch(name, params, expand):
    make = lambda lib, mod: getattr(mod, name)(**{k: lib.tensor(v) if isinstance(v, list) else v
                                                  for k, v in params.items()})
    ours = make(chainrule, chainrule.distributions).enumerate_support(expand)
    theirs = make(torch, torch.distributions).enumerate_support(expand)
    assert str(ours.dtype) == str(theirs.dtype)
    np.testing.assert_array_equal(ours.numpy(), theirs.numpy())


def test_kumaraswamy_mode_is_the_density_maximum():
    d = chainrule.distributions.Kumaraswamy(chainrule.tensor([2.0, 5.0], dtype=chainrule.float64),
                                            chainrule.tensor([3.0, 1.5], dtype=chainrule.float64))
    grid = chainrule.linspace(0.01, 0.99, 9801, dtype=chainrule.float64).unsqueeze(-1)
    best = grid[d.log_prob(grid).argmax(0), 0].numpy()
    np.testing.assert_allclose(d.mode.numpy(), best, atol=2e-4)


@pytest.mark.parametrize("concentration", [[-0.2, 0.1, 0.3], [0.0, 0.0, 0.2]])
def test_generalized_pareto_like_torch(concentration):
    # torch 2.13's GeneralizedPareto fails in float64 (isclose against a float32 zero): compare
    # in float32, and gradcheck ours in float64
    loc, scale = np.array([0.5, -1.0, 0.0]), np.array([1.0, 0.5, 2.0])
    value = loc + np.array([0.3, 0.7, 2.5])
    args = lambda lib, dt: [lib.tensor(v, dtype=dt) for v in (loc, scale, concentration)]
    ours = chainrule.distributions.GeneralizedPareto(*args(chainrule, chainrule.float32))
    theirs = torch.distributions.GeneralizedPareto(*args(torch, torch.float32))
    assert repr(ours) == repr(theirs)
    assert repr(ours.support) == repr(theirs.support)
    u = np.array([0.1, 0.5, 0.9])
    for method, x in (("log_prob", value), ("cdf", value), ("icdf", u), ("entropy", None),
                      ("mean", None), ("variance", None), ("mode", None)):
        got = evaluate(ours, method, None if x is None else chainrule.tensor(x,
                                                                           dtype=chainrule.float32))
        want = evaluate(theirs, method, None if x is None else torch.tensor(x,
                                                                          dtype=torch.float32))
        np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=2e-5, err_msg=method)
    xs = args(chainrule, chainrule.float64)
    for x in xs[:2] if 0.0 in concentration else xs:   # at exactly 0 the formula is its limit
        x.requires_grad_()
    v = chainrule.tensor(value, dtype=chainrule.float64)
    assert gradcheck(lambda *p: chainrule.distributions.GeneralizedPareto(*p).log_prob(v), xs)
    chainrule.manual_seed(0)
    sample = ours.sample((20_000,)).double().numpy()
    mean, var = ours.mean.double().numpy(), ours.variance.double().numpy()
    finite = np.isfinite(var)
    assert np.all(np.abs(sample.mean(0) - mean)[finite] < 5 * np.sqrt(var / 20_000)[finite])


def test_perplexity_and_sample_n():
    d = chainrule.distributions.Normal(chainrule.zeros(2), chainrule.ones(2))
    np.testing.assert_allclose(d.perplexity().numpy(), np.exp(d.entropy().numpy()))
    with pytest.warns(FutureWarning):
        assert tuple(d.sample_n(4).shape) == (4, 2)


def test_scalar_parameters_give_scalar_batch():
    D = chainrule.distributions
    for dist in (D.Normal(0.0, 1.0), D.Gamma(2.0, 1.0), D.Bernoulli(0.3), D.Poisson(2.0)):
        assert dist.batch_shape == chainrule.Size([])
        assert tuple(dist.sample((3,)).shape) == (3,)
    assert math.isclose(D.Normal(0.0, 1.0).log_prob(chainrule.tensor(0.0)).item(),
                        -0.5 * math.log(2 * math.pi), rel_tol=1e-6)


@pytest.mark.parametrize("name", ["Categorical", "OneHotCategorical"])
def test_categorical_sample_frequencies(name):
    chainrule.manual_seed(6)
    probs = np.array([[0.1, 0.0, 0.6, 0.3], [0.25, 0.25, 0.25, 0.25]])
    d = getattr(chainrule.distributions, name)(probs=chainrule.tensor(probs))
    x = d.sample((N,)).numpy()
    counts = x.sum(0) if name == "OneHotCategorical" else np.stack(
        [np.bincount(x[:, i], minlength=4) for i in range(2)])
    freq = counts / N
    assert np.all(np.abs(freq - probs) <= 5 * np.sqrt(probs * (1 - probs) / N))


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.id)
def test_float32_values_and_dtypes_like_torch(case):
    def build(lib):
        mod = chainrule.distributions if lib is chainrule else torch.distributions
        f32 = {k: (lib.tensor(v, dtype=lib.float32) if isinstance(v, np.ndarray) else v)
               for k, v in {**case.params, **case.extra}.items()}
        return getattr(mod, case.name)(**f32)

    ours, theirs = build(chainrule), build(torch)
    integral = case.value.dtype.kind in "iu"
    for method in METHODS:
        if method == "icdf" or method in case.value_skip:
            continue
        want = evaluate(theirs, method, torch.tensor(
            case.value, dtype=torch.int64 if integral else torch.float32))
        if want is None:
            continue
        got = evaluate(ours, method, chainrule.tensor(
            case.value, dtype=chainrule.int64 if integral else chainrule.float32))
        assert str(got.dtype) == str(want.dtype), method
        np.testing.assert_allclose(got.detach().numpy(), want.detach().numpy(), rtol=1e-4,
                                   atol=1e-5, err_msg=method)
