"""kl_divergence against torch for every registered pair, with gradients; register_kl's
dispatch."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import chainrule
import chainrule.distributions as D
from chainrule.autograd import gradcheck, gradgradcheck

from ._cases import normal, positive, simplex, spd, tril, unit


def _p(name, **params):
    return name, params


# (p, q): each a distribution name and float64 parameters
PAIRS = [
    (_p("Normal", loc=normal(3), scale=positive(3)), _p("Normal", loc=normal(3),
                                                        scale=positive(3))),
    (_p("Bernoulli", probs=unit(3)), _p("Bernoulli", probs=unit(3))),
    (_p("Categorical", probs=simplex(2, 4)), _p("Categorical", logits=normal(2, 4))),
    (_p("OneHotCategorical", probs=simplex(2, 4)), _p("OneHotCategorical",
                                                      probs=simplex(2, 4))),
    (_p("Uniform", low=-positive(3), high=positive(3)), _p("Uniform", low=-positive(3) - 2,
                                                           high=positive(3) + 2)),
    (_p("Uniform", low=-positive(3), high=positive(3)), _p("Uniform", low=normal(3),
                                                           high=normal(3) + 3)),
    (_p("Exponential", rate=positive(3)), _p("Exponential", rate=positive(3))),
    (_p("Laplace", loc=normal(3), scale=positive(3)), _p("Laplace", loc=normal(3),
                                                         scale=positive(3))),
    (_p("Cauchy", loc=normal(3), scale=positive(3)), _p("Cauchy", loc=normal(3),
                                                        scale=positive(3))),
    (_p("Gamma", concentration=positive(3), rate=positive(3)),
     _p("Gamma", concentration=positive(3), rate=positive(3))),
    (_p("Beta", concentration1=positive(3), concentration0=positive(3)),
     _p("Beta", concentration1=positive(3), concentration0=positive(3))),
    (_p("Dirichlet", concentration=positive(2, 3)), _p("Dirichlet",
                                                       concentration=positive(2, 3))),
    (_p("Poisson", rate=positive(3)), _p("Poisson", rate=positive(3))),
    (_p("Binomial", total_count=5, probs=unit(3)), _p("Binomial", total_count=5,
                                                      probs=unit(3))),
    (_p("Geometric", probs=unit(3)), _p("Geometric", probs=unit(3))),
    (_p("Gumbel", loc=normal(3), scale=positive(3)), _p("Gumbel", loc=normal(3),
                                                        scale=positive(3))),
    (_p("HalfNormal", scale=positive(3)), _p("HalfNormal", scale=positive(3))),
    (_p("LogNormal", loc=normal(3), scale=positive(3)), _p("LogNormal", loc=normal(3),
                                                           scale=positive(3))),
    (_p("MultivariateNormal", loc=normal(2, 3), scale_tril=tril(3)),
     _p("MultivariateNormal", loc=normal(3), covariance_matrix=spd(3))),
    (_p("LowRankMultivariateNormal", loc=normal(3), cov_factor=normal(3, 2),
        cov_diag=positive(3)),
     _p("MultivariateNormal", loc=normal(3), scale_tril=tril(3))),
    (_p("Pareto", scale=positive(3), alpha=positive(3)), _p("Pareto", scale=positive(3) * 0.2,
                                                            alpha=positive(3))),
    (_p("Pareto", scale=positive(3), alpha=positive(3)), _p("Pareto", scale=positive(3) + 2,
                                                            alpha=positive(3))),
    (_p("ContinuousBernoulli", probs=unit(3)), _p("ContinuousBernoulli", logits=normal(3))),
    (_p("Bernoulli", probs=unit(3)), _p("Poisson", rate=positive(3))),
    (_p("Beta", concentration1=positive(3), concentration0=positive(3)),
     _p("Uniform", low=-positive(3), high=1 + positive(3))),
    (_p("Exponential", rate=positive(3)), _p("Gamma", concentration=positive(3),
                                             rate=positive(3))),
    (_p("Exponential", rate=positive(3)), _p("Normal", loc=normal(3), scale=positive(3))),
    (_p("Gamma", concentration=positive(3), rate=positive(3)), _p("Exponential",
                                                                  rate=positive(3))),
    (_p("Gamma", concentration=positive(3), rate=positive(3)), _p("Normal", loc=normal(3),
                                                                  scale=positive(3))),
    (_p("Laplace", loc=normal(3), scale=positive(3)), _p("Normal", loc=normal(3),
                                                         scale=positive(3))),
    (_p("Normal", loc=normal(3), scale=positive(3)), _p("Gumbel", loc=normal(3),
                                                        scale=positive(3))),
    (_p("Normal", loc=normal(3), scale=positive(3)), _p("Laplace", loc=normal(3),
                                                        scale=positive(3))),
    (_p("Uniform", low=positive(3), high=positive(3) + 2), _p("Exponential",
                                                              rate=positive(3))),
    (_p("Uniform", low=positive(3), high=positive(3) + 2),
     _p("Gamma", concentration=positive(3), rate=positive(3))),
    (_p("Uniform", low=normal(3), high=normal(3) + 3), _p("Gumbel", loc=normal(3),
                                                          scale=positive(3))),
    (_p("Uniform", low=normal(3), high=normal(3) + 3), _p("Normal", loc=normal(3),
                                                          scale=positive(3))),
    (_p("Normal", loc=normal(3), scale=positive(3)), _p("Gamma", concentration=positive(3),
                                                        rate=positive(3))),
    (_p("Gamma", concentration=positive(3), rate=positive(3)),
     _p("Beta", concentration1=positive(3), concentration0=positive(3))),
]


def build(lib, spec, requires_grad=False):
    name, params = spec
    mod = D if lib is chainrule else torch.distributions
    leaves = {k: lib.tensor(v, dtype=lib.float64, requires_grad=requires_grad)
              for k, v in params.items() if isinstance(v, np.ndarray)}
    args = {k: leaves.get(k, v) for k, v in params.items()}
    return getattr(mod, name)(**args), leaves


def pair_id(pair):
    return f"{pair[0][0]}-{pair[1][0]}"


@pytest.mark.parametrize("pair", PAIRS, ids=[f"{i}-{pair_id(p)}" for i, p in enumerate(PAIRS)])
def test_kl_values_and_gradients_like_torch(pair):
    (p, p_leaves), (q, q_leaves) = build(chainrule, pair[0], True), build(chainrule, pair[1], True)
    (tp, tp_leaves), (tq, tq_leaves) = build(torch, pair[0], True), build(torch, pair[1], True)
    ours, theirs = D.kl_divergence(p, q), torch.distributions.kl_divergence(tp, tq)
    assert tuple(ours.shape) == tuple(theirs.shape)
    np.testing.assert_allclose(ours.detach().numpy(), theirs.detach().numpy(), rtol=1e-9)
    if not bool(torch.isfinite(theirs).all()):
        return
    leaves = list(p_leaves.values()) + list(q_leaves.values())
    t_leaves = list(tp_leaves.values()) + list(tq_leaves.values())
    got = chainrule.autograd.grad(ours.sum(), leaves, allow_unused=True)
    want = torch.autograd.grad(theirs.sum(), t_leaves, allow_unused=True)
    for g, w in zip(got, want):
        if w is not None:
            np.testing.assert_allclose(g.numpy(), w.numpy(), rtol=1e-7, atol=1e-10)


@pytest.mark.parametrize("pair", [p for p in PAIRS if pair_id(p) in (
    "Normal-Normal", "Gamma-Gamma", "Beta-Beta", "Dirichlet-Dirichlet",
    "MultivariateNormal-MultivariateNormal", "Categorical-Categorical", "Uniform-Normal")],
    ids=pair_id)
def test_kl_gradcheck(pair):
    names = [("p", k) for k, v in pair[0][1].items() if isinstance(v, np.ndarray)]
    names += [("q", k) for k, v in pair[1][1].items() if isinstance(v, np.ndarray)]
    values = tuple(chainrule.tensor((pair[0] if side == "p" else pair[1])[1][k],
                                    dtype=chainrule.float64, requires_grad=True)
                   for side, k in names)

    def kl(*xs):
        specs = {"p": dict(pair[0][1]), "q": dict(pair[1][1])}
        for (side, k), x in zip(names, xs):
            # cholesky's gradient is the symmetric one (as PyTorch's): perturb symmetrically
            specs[side][k] = (x + x.mT) / 2 if k == "covariance_matrix" else x
        make = lambda side: getattr(D, pair[0 if side == "p" else 1][0])(**specs[side],
                                                                         validate_args=False)
        return D.kl_divergence(make("p"), make("q"))

    assert gradcheck(kl, values)
    assert gradgradcheck(kl, values)


def test_independent_and_transformed_kl():
    loc, scale = normal(2, 3), positive(2, 3)
    for lib, mod in ((chainrule, D), (torch, torch.distributions)):
        p = mod.Independent(mod.Normal(lib.tensor(loc), lib.tensor(scale)), 1)
        q = mod.Independent(mod.Normal(lib.tensor(loc * 0.5), lib.tensor(scale + 1)), 1)
        if lib is chainrule:
            ours = D.kl_divergence(p, q)
        else:
            theirs = mod.kl_divergence(p, q)
    assert tuple(ours.shape) == (2,)
    np.testing.assert_allclose(ours.numpy(), theirs.numpy(), rtol=1e-6)


def test_register_kl_dispatches_to_the_most_specific_pair():
    class MyNormal(D.Normal):
        pass

    class MyOtherNormal(MyNormal):
        pass

    p = MyOtherNormal(chainrule.tensor(0.0), chainrule.tensor(1.0))
    q = D.Normal(chainrule.tensor(1.0), chainrule.tensor(2.0))
    assert D.kl_divergence(p, q).item() == pytest.approx(
        D.kl_divergence(D.Normal(0.0, 1.0), D.Normal(1.0, 2.0)).item())

    @D.register_kl(MyNormal, D.Normal)
    def _kl(p, q):
        return chainrule.tensor(42.0)

    assert D.kl_divergence(p, q).item() == 42.0
    assert D.kl_divergence(q, p).item() != 42.0


def test_kl_errors_like_torch():
    with pytest.raises(NotImplementedError, match="No KL\\(p \\|\\| q\\) is implemented for p "
                                                  "type Cauchy and q type Poisson"):
        D.kl_divergence(D.Cauchy(0.0, 1.0), D.Poisson(1.0))
    with pytest.raises(NotImplementedError, match="The cross KL-divergence between different "
                                                  "exponential families"):
        D.kl_divergence(D.Poisson(1.0), D.Normal(0.0, 1.0))
    with pytest.raises(TypeError, match="Expected type_p to be a Distribution subclass"):
        D.register_kl(int, D.Normal)


def test_kl_of_samples_agrees_with_monte_carlo():
    # E_p[log p - log q] from 20,000 draws of p, within 5 standard errors
    chainrule.manual_seed(0)
    p, q = D.Gamma(chainrule.tensor(2.0), chainrule.tensor(1.5)), D.Gamma(
        chainrule.tensor(3.0), chainrule.tensor(1.0))
    x = p.sample((20_000,))
    diff = (p.log_prob(x) - q.log_prob(x)).numpy()
    assert abs(diff.mean() - D.kl_divergence(p, q).item()) < 5 * diff.std() / np.sqrt(len(diff))




@pytest.mark.parametrize("name,params", [
    ("Normal", {"loc": normal(3), "scale": positive(3)}),
    ("Exponential", {"rate": positive(3)}),
    ("Gamma", {"concentration": positive(3), "rate": positive(3)}),
    ("Beta", {"concentration1": positive(3), "concentration0": positive(3)}),
    ("Dirichlet", {"concentration": positive(2, 3)}),
    ("Bernoulli", {"probs": unit(3)}),
    ("ContinuousBernoulli", {"probs": np.array([0.2, 0.4995, 0.8])}),
    ("Poisson", {"rate": positive(3)}),
])
def test_exponential_family_bregman_entropy_and_kl(name, params):
    make = lambda scale=1.0: getattr(D, name)(**{k: chainrule.tensor(v * scale)
                                                 for k, v in params.items()})
    p, q = make(), make(0.9)
    assert isinstance(p, D.ExponentialFamily)
    from chainrule.distributions.kl import _kl_expfamily_expfamily

    np.testing.assert_allclose(_kl_expfamily_expfamily(p, q).detach().numpy(),
                               D.kl_divergence(p, q).detach().numpy(), rtol=1e-6, atol=1e-7)
    if name in ("Poisson", "Beta", "Dirichlet"):   # no closed E[k(x)], as in PyTorch
        with pytest.raises(NotImplementedError):
            D.ExponentialFamily.entropy(p)
        return
    np.testing.assert_allclose(D.ExponentialFamily.entropy(p).detach().numpy(),
                               p.entropy().detach().numpy(), rtol=1e-6, atol=1e-7)


# one instance of every distribution appearing in torch's KL registry, for the sweep below
DEFAULTS = {
    "Bernoulli": {"probs": unit(2)}, "Beta": {"concentration1": positive(2),
                                              "concentration0": positive(2)},
    "Binomial": {"total_count": 4, "probs": unit(2)}, "Categorical": {"probs": simplex(2, 3)},
    "Cauchy": {"loc": normal(2), "scale": positive(2)},
    "ContinuousBernoulli": {"probs": unit(2)}, "Dirichlet": {"concentration": positive(2, 3)},
    "Exponential": {"rate": positive(2)}, "Gamma": {"concentration": positive(2),
                                                    "rate": positive(2)},
    "Geometric": {"probs": unit(2)}, "Gumbel": {"loc": normal(2), "scale": positive(2)},
    "HalfNormal": {"scale": positive(2)}, "Laplace": {"loc": normal(2), "scale": positive(2)},
    "LowRankMultivariateNormal": {"loc": normal(2, 3), "cov_factor": normal(3, 1),
                                  "cov_diag": positive(3)},
    "MultivariateNormal": {"loc": normal(2, 3), "scale_tril": tril(3)},
    "Normal": {"loc": normal(2), "scale": positive(2)},
    "OneHotCategorical": {"probs": simplex(2, 3)},
    "Pareto": {"scale": positive(2, low=0.1, high=0.5), "alpha": positive(2, low=2.5, high=4)},
    "Poisson": {"rate": positive(2)},
    "Uniform": {"low": np.array([0.1, -1.0]), "high": np.array([0.8, 3.0])},
}


def _registered_pairs():
    pairs = []
    for type_p, type_q in torch.distributions.kl._KL_REGISTRY:
        names = (type_p.__name__, type_q.__name__)
        if all(n in DEFAULTS for n in names):
            pairs.append(names)
    return sorted(set(pairs))


@pytest.mark.parametrize("names", _registered_pairs(), ids="-".join)
def test_every_registered_pair_like_torch(names):
    specs = [(n, DEFAULTS[n]) for n in names]
    (p, _), (q, _) = build(chainrule, specs[0]), build(chainrule, specs[1])
    (tp, _), (tq, _) = build(torch, specs[0]), build(torch, specs[1])
    try:
        want = torch.distributions.kl_divergence(tp, tq)
    except (NotImplementedError, ValueError, RuntimeError) as error:
        with pytest.raises(type(error)):
            D.kl_divergence(p, q)
        return
    got = D.kl_divergence(p, q)
    assert tuple(got.shape) == tuple(want.shape)
    np.testing.assert_allclose(got.detach().numpy(), want.detach().numpy(), rtol=1e-8, atol=1e-12)
