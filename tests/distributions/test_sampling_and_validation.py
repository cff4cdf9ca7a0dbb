"""Pathwise (rsample) gradients, the implicit Gamma gradient, and argument validation with
PyTorch's errors."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import chainrule
import chainrule.distributions as D
from chainrule.autograd import gradcheck
from chainrule.distributions._gamma import gammainc, standard_gamma_grad

N = 20_000


def leaf(*values):
    return [chainrule.tensor(v, dtype=chainrule.float64, requires_grad=True) for v in values]


def test_normal_rsample_pathwise_identities():
    chainrule.manual_seed(0)
    loc, scale = leaf([0.5, -1.0], [1.0, 2.0])
    x = D.Normal(loc, scale).rsample((N,))
    g_loc, g_scale = chainrule.autograd.grad(x.mean(0).sum(), [loc, scale], retain_graph=True)
    np.testing.assert_allclose(g_loc.numpy(), [1.0, 1.0])          # d/dloc E[x] = 1
    eps = ((x - loc) / scale).detach().numpy()
    np.testing.assert_allclose(g_scale.numpy(), eps.mean(0), rtol=1e-10)  # d/dscale = eps
    (g2,) = chainrule.autograd.grad(x.pow(2).mean(0).sum(), [scale])
    # d/dscale E[x^2] = 2 scale, within Monte Carlo error
    assert np.all(np.abs(g2.numpy() - 2 * scale.detach().numpy()) < 0.1 * scale.detach().numpy())


@pytest.mark.parametrize("make,mean_grad", [
    # d/dparam of E[x], exact, against the pathwise estimate from 20,000 draws
    (lambda p: D.Exponential(p[0]), lambda p: [-1 / p[0] ** 2]),
    (lambda p: D.Laplace(p[0], p[1]), lambda p: [1.0, 0.0]),
    (lambda p: D.Uniform(p[0], p[1]), lambda p: [0.5, 0.5]),
    (lambda p: D.LogNormal(p[0], p[1]),
     lambda p: [np.exp(p[0] + p[1] ** 2 / 2), p[1] * np.exp(p[0] + p[1] ** 2 / 2)]),
    (lambda p: D.Gamma(p[0], p[1]), lambda p: [1 / p[1], -p[0] / p[1] ** 2]),
    (lambda p: D.Beta(p[0], p[1]), lambda p: [p[1] / (p[0] + p[1]) ** 2,
                                              -p[0] / (p[0] + p[1]) ** 2]),
    (lambda p: D.Chi2(p[0]), lambda p: [1.0]),
    (lambda p: D.StudentT(p[0] + 4, p[1]), lambda p: [0.0, 1.0]),
    (lambda p: D.HalfNormal(p[0]), lambda p: [np.sqrt(2 / np.pi)]),
], ids=["Exponential", "Laplace", "Uniform", "LogNormal", "Gamma", "Beta", "Chi2", "StudentT",
        "HalfNormal"])
def test_rsample_gradient_of_the_mean(make, mean_grad):
    chainrule.manual_seed(1)
    params = leaf(0.7, 1.6)
    x = make(params).rsample((N,))
    grads = chainrule.autograd.grad(x.mean(), params, allow_unused=True)
    want = mean_grad([p.item() for p in params])
    for g, w in zip(grads, want):
        got = 0.0 if g is None else g.item()
        assert abs(got - w) < 0.05 * max(1.0, abs(w)), (got, w)


def test_dirichlet_rsample_gradient_of_the_mean():
    chainrule.manual_seed(2)
    (c,) = leaf([1.5, 0.7, 2.0])
    x = D.Dirichlet(c).rsample((N,))
    (g,) = chainrule.autograd.grad(x[:, 0].mean(), [c])
    a = c.detach().numpy()
    want = (np.eye(3)[0] * a.sum() - a[0]) / a.sum() ** 2   # d/dc of c_0 / sum(c)
    np.testing.assert_allclose(g.numpy(), want, atol=0.03)


def test_standard_gamma_grad_matches_torch():
    torch.manual_seed(0)
    alpha = torch.tensor([0.05, 0.3, 1.0, 2.5, 8.0, 30.0, 49.0, 80.0, 500.0],
                         dtype=torch.float64).repeat_interleave(200)
    x = torch._standard_gamma(alpha)
    want = torch._standard_gamma_grad(alpha, x).numpy()
    got = standard_gamma_grad(alpha.numpy(), x.numpy())
    # torch's is itself an approximation (Jankowiak and Obermeyer 2018, ~1e-3)
    np.testing.assert_allclose(got, want, rtol=5e-3, atol=1e-6)


def test_gamma_cdf_gradients():
    a, x = leaf([0.6, 2.0, 7.0], [0.3, 2.5, 5.0])
    assert gradcheck(gammainc, (a, x), atol=1e-5)
    (gx,) = chainrule.autograd.grad(gammainc(a, x).sum(), [x])
    tx = torch.tensor(x.detach().numpy(), requires_grad=True)
    (want,) = torch.autograd.grad(torch.special.gammainc(torch.tensor(a.detach().numpy()),
                                                         tx).sum(), [tx])
    np.testing.assert_allclose(gx.numpy(), want.numpy(), rtol=1e-9)


def test_sample_has_no_history_and_rsample_does():
    (loc,) = leaf(0.0)
    d = D.Normal(loc, 1.0)
    assert not d.sample().requires_grad
    assert d.rsample().requires_grad
    with pytest.raises(NotImplementedError):
        D.Poisson(1.0).rsample()


def _message(make):
    try:
        make()
    except ValueError as error:
        return str(error)
    return None


ERRORS = [
    lambda m, t: m.Normal(t([0.0, 1.0]), t([1.0, -1.0])),
    lambda m, t: m.Normal(0.0, 1.0).log_prob(t([0.0, float("nan")])),
    lambda m, t: m.Bernoulli(probs=0.5, logits=0.0),
    lambda m, t: m.Uniform(t(2.0), t(1.0)),
    lambda m, t: m.Categorical(probs=t([0.5, -0.1])),
    lambda m, t: m.Exponential(t([1.0])).log_prob(t([-1.0])),
    lambda m, t: m.Normal(t([0.0, 0.0]), t([1.0, 1.0])).log_prob(t([0.0, 0.0, 0.0])),
    lambda m, t: m.Geometric(probs=t([0.0, 0.5])),
    lambda m, t: m.Poisson(t([1.0])).log_prob(t([1.5])),
    lambda m, t: m.MultivariateNormal(t([0.0, 0.0])),
    lambda m, t: m.Dirichlet(t(1.0)),
    lambda m, t: m.Categorical(probs=t(1.0)),
    lambda m, t: m.Gamma(t([1.0, 0.0]), t([1.0, 1.0])),
    lambda m, t: m.Beta(t([1.0]), t([-2.0])),
    lambda m, t: m.Binomial(t([3.0]), t([1.5])),
    lambda m, t: m.MultivariateNormal(t([0.0, 0.0]), scale_tril=t([[1.0, 1.0], [0.0, 1.0]])),
]


@pytest.fixture
def torch_validates():
    """torch's default validation on for the test: torch.compile turns it off for the rest of
    its process (torch._dynamo's patch), and another test file may have compiled before this."""
    saved = torch.distributions.Distribution._validate_args
    torch.distributions.Distribution.set_default_validate_args(True)
    yield
    torch.distributions.Distribution.set_default_validate_args(saved)


@pytest.mark.parametrize("make", ERRORS, ids=[str(i) for i in range(len(ERRORS))])
def test_validation_errors_like_torch(make, torch_validates):
    want = _message(lambda: make(torch.distributions, torch.tensor))
    assert want is not None
    assert _message(lambda: make(D, chainrule.tensor)) == want


def test_validate_args_switches():
    assert D.Normal(0.0, -1.0, validate_args=False).scale.item() == -1.0
    D.Normal(0.0, 1.0, validate_args=False).log_prob(chainrule.tensor(float("nan")))
    D.Distribution.set_default_validate_args(False)
    try:
        D.Normal(0.0, -1.0)
    finally:
        D.Distribution.set_default_validate_args(True)
    with pytest.raises(ValueError):
        D.Normal(0.0, -1.0)
    with pytest.raises(ValueError):
        D.Distribution.set_default_validate_args("yes")


def test_relaxed_and_straight_through_samples():
    chainrule.manual_seed(4)
    (logits,) = leaf([0.2, -0.5, 1.0])
    probs = chainrule.softmax(logits, -1)
    relaxed = D.RelaxedOneHotCategorical(chainrule.tensor(0.5, dtype=chainrule.float64),
                                         logits=logits)
    x = relaxed.rsample((N,))
    assert tuple(x.shape) == (N, 3)
    np.testing.assert_allclose(x.sum(-1).detach().numpy(), 1.0, rtol=1e-12)
    # Gumbel-softmax: the argmax of a relaxed sample is Categorical(probs) distributed
    freq = np.bincount(x.detach().numpy().argmax(-1), minlength=3) / N
    p = probs.detach().numpy()
    assert np.all(np.abs(freq - p) < 5 * np.sqrt(p * (1 - p) / N))
    (g,) = chainrule.autograd.grad(x[:, 0].mean(), [logits])
    assert g[0].item() > 0 and g[1].item() < 0
    st = D.OneHotCategoricalStraightThrough(logits=logits)
    y = st.rsample((5,))
    assert set(np.unique(y.detach().numpy())) <= {0.0, 1.0}
    (g,) = chainrule.autograd.grad((y * chainrule.tensor([1.0, 0.0, 0.0],
                                                         dtype=chainrule.float64)).sum(),
                                   [logits])
    # the straight-through gradient is that of 5 * probs[0]
    (want,) = chainrule.autograd.grad(5 * probs[0], [logits])
    np.testing.assert_allclose(g.numpy(), want.numpy(), rtol=1e-12)
    rb = D.RelaxedBernoulli(chainrule.tensor(0.3, dtype=chainrule.float64),
                            probs=chainrule.tensor([0.2, 0.7], dtype=chainrule.float64))
    z = rb.rsample((N,)).numpy()
    assert np.all((z > 0) & (z < 1))
    np.testing.assert_allclose((z > 0.5).mean(0), [0.2, 0.7], atol=0.02)


def test_independent_and_transformed_rsample_are_pathwise():
    chainrule.manual_seed(5)
    loc, scale = leaf([0.1, 0.4], [0.5, 0.3])
    d = D.Independent(D.LogNormal(loc, scale), 1)
    x = d.rsample((N,))
    grads = chainrule.autograd.grad(x.mean(0).sum(), [loc, scale])
    mean_x = np.exp(loc.detach().numpy() + scale.detach().numpy() ** 2 / 2)
    np.testing.assert_allclose(grads[0].numpy(), mean_x, rtol=0.05)
    np.testing.assert_allclose(grads[1].numpy(), scale.detach().numpy() * mean_x, rtol=0.1)


def test_standard_gamma_grad_is_the_implicit_derivative():
    # dx/dalpha = -(dP/dalpha) / (dP/dx) at fixed P(alpha, x): the series against central
    # differences of the incomplete gamma function, independent of torch
    from chainrule.distributions._gamma import regularized_gamma_p

    alpha = np.repeat([0.3, 2.0, 20.0, 45.0], 3)
    x = alpha * np.tile([0.4, 1.0, 1.6], 4)   # away from the far tails, where P is ~0 or ~1
    h = 1e-6 * alpha
    dp_dalpha = (regularized_gamma_p(alpha + h, x) - regularized_gamma_p(alpha - h, x)) / (2 * h)
    log_density = ((alpha - 1) * np.log(x) - x
                   - chainrule.lgamma(chainrule.tensor(alpha)).numpy())
    want = -dp_dalpha / np.exp(log_density)
    np.testing.assert_allclose(standard_gamma_grad(alpha, x), want, rtol=1e-5)
