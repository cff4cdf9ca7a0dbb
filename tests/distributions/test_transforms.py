"""Transforms, constraints, biject_to / transform_to, TransformedDistribution, Independent and
MixtureSameFamily against torch."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import chainrule
import chainrule.distributions as D
from chainrule.autograd import gradcheck
from chainrule.distributions import constraints

from ._cases import normal, positive, unit


def both(make):
    """make(lib, module) for chainrule and torch."""
    return make(chainrule, D), make(torch, torch.distributions)


LOC, SCALE = normal(3), positive(3)

TRANSFORMS = [
    ("ExpTransform", lambda lib, m: m.ExpTransform(), normal(2, 3)),
    ("AffineTransform", lambda lib, m: m.AffineTransform(lib.tensor(LOC), lib.tensor(SCALE)),
     normal(2, 3)),
    ("AffineTransform-number", lambda lib, m: m.AffineTransform(1.5, -2.0), normal(2, 3)),
    ("AffineTransform-event", lambda lib, m: m.AffineTransform(
        lib.tensor(LOC), lib.tensor(SCALE), event_dim=1), normal(2, 3)),
    ("SigmoidTransform", lambda lib, m: m.SigmoidTransform(), normal(2, 3)),
    ("TanhTransform", lambda lib, m: m.TanhTransform(), normal(2, 3)),
    ("SoftplusTransform", lambda lib, m: m.SoftplusTransform(), normal(2, 3)),
    ("PowerTransform", lambda lib, m: m.PowerTransform(lib.tensor(2.5)), positive(2, 3)),
    ("StickBreakingTransform", lambda lib, m: m.StickBreakingTransform(), normal(2, 3)),
    ("ComposeTransform", lambda lib, m: m.ComposeTransform(
        [m.ExpTransform(), m.AffineTransform(1.0, lib.tensor(SCALE))]), normal(2, 3)),
    ("IndependentTransform", lambda lib, m: m.IndependentTransform(m.ExpTransform(), 1),
     normal(2, 3)),
    ("ReshapeTransform", lambda lib, m: m.ReshapeTransform((3,), (3, 1)), normal(2, 3)),
    ("AbsTransform", lambda lib, m: m.AbsTransform(), normal(2, 3)),
    ("SoftmaxTransform", lambda lib, m: m.SoftmaxTransform(), normal(2, 3)),
    ("LowerCholeskyTransform", lambda lib, m: m.LowerCholeskyTransform(), normal(2, 3, 3)),
    ("PositiveDefiniteTransform", lambda lib, m: m.PositiveDefiniteTransform(), normal(2, 3, 3)),
    ("CorrCholeskyTransform", lambda lib, m: m.CorrCholeskyTransform(), normal(2, 6)),
    ("CatTransform", lambda lib, m: m.CatTransform([m.ExpTransform(), m.SigmoidTransform()],
                                                   dim=1, lengths=[1, 2]), normal(2, 3)),
    ("CatTransform-event", lambda lib, m: m.CatTransform(
        [m.IndependentTransform(m.ExpTransform(), 1), m.SigmoidTransform()], dim=0,
        lengths=[1, 1]), normal(2, 3)),
    ("StackTransform", lambda lib, m: m.StackTransform(
        [m.ExpTransform(), m.TanhTransform(), m.AffineTransform(1.0, 2.0)], dim=-1),
     normal(2, 3)),
]


@pytest.mark.parametrize("name,make,x", TRANSFORMS, ids=[t[0] for t in TRANSFORMS])
def test_transform_like_torch(name, make, x):
    ours, theirs = make(chainrule, D), make(torch, torch.distributions.transforms)
    if not name.startswith(("CatTransform", "StackTransform")):   # torch: the object's address
        assert repr(ours) == repr(theirs)
        assert repr(ours.domain) == repr(theirs.domain)
        assert repr(ours.codomain) == repr(theirs.codomain)
    assert ours.bijective == theirs.bijective
    xo, xt = chainrule.tensor(x, requires_grad=True), torch.tensor(x, requires_grad=True)
    yo, yt = ours(xo), theirs(xt)
    np.testing.assert_allclose(yo.detach().numpy(), yt.detach().numpy(), rtol=1e-10)
    np.testing.assert_allclose(ours.inv(yo).detach().numpy(), theirs.inv(yt).detach().numpy(),
                               rtol=1e-8, atol=1e-12)
    assert tuple(ours.forward_shape(x.shape)) == tuple(theirs.forward_shape(x.shape))
    assert tuple(ours.inverse_shape(yt.shape)) == tuple(theirs.inverse_shape(yt.shape))
    try:
        want = theirs.log_abs_det_jacobian(xt, yt)
    except NotImplementedError:
        with pytest.raises(NotImplementedError):
            ours.log_abs_det_jacobian(xo, yo)
        return
    got = ours.log_abs_det_jacobian(xo, yo)
    assert tuple(got.shape) == tuple(want.shape)
    np.testing.assert_allclose(got.detach().numpy(), want.detach().numpy(), rtol=1e-9,
                               atol=1e-12)
    (g,) = chainrule.autograd.grad(got.sum() + yo.sum(), xo)
    (w,) = torch.autograd.grad(want.sum() + yt.sum(), xt)
    np.testing.assert_allclose(g.numpy(), w.numpy(), rtol=1e-8, atol=1e-12)
    assert gradcheck(lambda v: ours.log_abs_det_jacobian(v, ours(v)), (xo,))


def test_transform_cache_and_inverse_identity():
    t = D.ExpTransform(cache_size=1)
    x = chainrule.randn(3)
    y = t(x)
    assert t.inv(y) is x
    assert t.inv.inv is t
    assert D.ExpTransform() == D.ExpTransform()
    assert D.AffineTransform(1.0, 2.0) == D.AffineTransform(1.0, 2.0)
    assert D.AffineTransform(1.0, 2.0) != D.AffineTransform(1.0, 3.0)
    with pytest.raises(ValueError, match="cache_size must be 0 or 1"):
        D.ExpTransform(cache_size=2)


CONSTRAINTS = [
    ("real", lambda c: c.real), ("positive", lambda c: c.positive),
    ("nonnegative", lambda c: c.nonnegative), ("unit_interval", lambda c: c.unit_interval),
    ("interval", lambda c: c.interval(-2.0, 3.0)),
    ("greater_than", lambda c: c.greater_than(1.5)),
    ("greater_than_eq", lambda c: c.greater_than_eq(1.5)),
    ("less_than", lambda c: c.less_than(-1.0)),
    ("half_open_interval", lambda c: c.half_open_interval(0.0, 2.0)),
    ("simplex", lambda c: c.simplex), ("real_vector", lambda c: c.real_vector),
    ("independent", lambda c: c.independent(c.positive, 1)),
    ("lower_cholesky", lambda c: c.lower_cholesky),
    ("positive_definite", lambda c: c.positive_definite),
    ("corr_cholesky", lambda c: c.corr_cholesky),
    ("cat", lambda c: c.cat([c.positive, c.unit_interval], dim=-1, lengths=[1, 2])),
    ("stack", lambda c: c.stack([c.real, c.positive, c.interval(-1.0, 2.0)], dim=-1)),
]


@pytest.mark.parametrize("name,make", CONSTRAINTS, ids=[c[0] for c in CONSTRAINTS])
def test_biject_to_and_transform_to_like_torch(name, make):
    shape = {"lower_cholesky": (2, 3, 3), "positive_definite": (2, 3, 3),
             "corr_cholesky": (2, 6)}.get(name, (2, 3))
    x = normal(*shape)
    for registry in ("biject_to", "transform_to"):
        try:
            theirs = getattr(torch.distributions, registry)(make(torch.distributions.constraints))
        except NotImplementedError:
            continue
        ours = getattr(D, registry)(make(constraints))
        if name not in ("cat", "stack"):   # torch prints those with the object's address
            assert repr(ours) == repr(theirs)
        yo, yt = ours(chainrule.tensor(x)), theirs(torch.tensor(x))
        np.testing.assert_allclose(yo.numpy(), yt.numpy(), rtol=1e-10)
        assert bool(make(constraints).check(yo).all())
        try:
            want = theirs.log_abs_det_jacobian(torch.tensor(x), yt)
        except NotImplementedError:
            continue
        got = ours.log_abs_det_jacobian(chainrule.tensor(x), yo)
        np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-9, atol=1e-12)


CHECKS = [
    ("positive", lambda c: c.positive, [-1.0, 0.0, 2.0]),
    ("nonnegative", lambda c: c.nonnegative, [-1.0, 0.0, 2.0]),
    ("unit_interval", lambda c: c.unit_interval, [-0.1, 0.0, 0.5, 1.0, 1.2]),
    ("boolean", lambda c: c.boolean, [0.0, 1.0, 0.5]),
    ("nonnegative_integer", lambda c: c.nonnegative_integer, [-1.0, 0.0, 2.5, 3.0]),
    ("positive_integer", lambda c: c.positive_integer, [0.0, 1.0, 2.0]),
    ("integer_interval", lambda c: c.integer_interval(0, 3), [-1.0, 0.0, 3.0, 4.0]),
    ("real", lambda c: c.real, [0.0, float("nan"), float("inf")]),
    ("simplex", lambda c: c.simplex, [[0.2, 0.8], [0.5, 0.6]]),
    ("one_hot", lambda c: c.one_hot, [[0.0, 1.0], [1.0, 1.0]]),
    ("lower_triangular", lambda c: c.lower_triangular,
     [[[1.0, 0.0], [2.0, 3.0]], [[1.0, 2.0], [0.0, 1.0]]]),
    ("lower_cholesky", lambda c: c.lower_cholesky,
     [[[1.0, 0.0], [2.0, 3.0]], [[-1.0, 0.0], [0.0, 1.0]]]),
    ("positive_definite", lambda c: c.positive_definite,
     [[[2.0, 1.0], [1.0, 2.0]], [[1.0, 2.0], [2.0, 1.0]]]),
    ("square", lambda c: c.square, [[[1.0, 2.0], [3.0, 4.0]]]),
    ("independent", lambda c: c.independent(c.positive, 1), [[1.0, 2.0], [1.0, -2.0]]),
]


@pytest.mark.parametrize("name,make,values", CHECKS, ids=[c[0] for c in CHECKS])
def test_constraint_check_and_repr_like_torch(name, make, values):
    ours, theirs = make(constraints), make(torch.distributions.constraints)
    assert repr(ours) == repr(theirs)
    assert ours.is_discrete == theirs.is_discrete
    assert ours.event_dim == theirs.event_dim
    got = ours.check(chainrule.tensor(values)).numpy()
    want = theirs.check(torch.tensor(values)).numpy()
    np.testing.assert_array_equal(got, want)


def test_dependent_constraints():
    assert constraints.is_dependent(constraints.dependent)
    assert not constraints.is_dependent(constraints.real)
    with pytest.raises(ValueError, match="Cannot determine validity of dependent constraint"):
        constraints.dependent.check(chainrule.tensor(1.0))
    u = D.Uniform(chainrule.tensor(0.0), chainrule.tensor(2.0))
    tu = torch.distributions.Uniform(torch.tensor(0.0), torch.tensor(2.0))
    assert repr(u.support) == repr(tu.support)


def test_biject_to_raises_for_unregistered_constraints():
    with pytest.raises(NotImplementedError, match="Cannot transform _Boolean constraints"):
        D.biject_to(constraints.boolean)


def test_transformed_distribution_like_torch():
    loc, scale, a, b = normal(3), positive(3), normal(3), positive(3)

    def make(lib, m):
        base = m.Normal(lib.tensor(loc), lib.tensor(scale))
        return m.TransformedDistribution(base, [m.AffineTransform(lib.tensor(a), lib.tensor(b)),
                                                m.SigmoidTransform()])

    ours, theirs = both(make)
    x = unit(2, 3)
    for method in ("log_prob", "cdf", "icdf"):
        np.testing.assert_allclose(getattr(ours, method)(chainrule.tensor(x)).numpy(),
                                   getattr(theirs, method)(torch.tensor(x)).numpy(), rtol=1e-9)
    assert repr(ours.support) == repr(theirs.support)
    assert ours.has_rsample and tuple(ours.rsample((4,)).shape) == (4, 3)
    # a decreasing transform flips the CDF
    dec = D.TransformedDistribution(D.Exponential(chainrule.tensor(1.0)),
                                    D.AffineTransform(0.0, -1.0))
    assert dec.cdf(chainrule.tensor(-1.0)).item() == pytest.approx(np.exp(-1.0))
    with pytest.raises(ValueError, match="transforms must be a Transform or list"):
        D.TransformedDistribution(D.Normal(0.0, 1.0), "exp")


def test_independent_and_mixture_like_torch():
    loc, scale, logits = normal(2, 3), positive(2, 3), normal(2)

    def make(lib, m):
        comp = m.Independent(m.Normal(lib.tensor(loc), lib.tensor(scale)), 1)
        return comp, m.MixtureSameFamily(m.Categorical(logits=lib.tensor(logits)), comp)

    (ind, mix), (tind, tmix) = both(make)
    assert repr(ind) == repr(tind)
    assert repr(mix) == repr(tmix)
    assert tuple(mix.batch_shape) == () and tuple(mix.event_shape) == (3,)
    x = normal(4, 3)
    for o, t, v in ((ind, tind, x[:, None]), (mix, tmix, x)):
        np.testing.assert_allclose(o.log_prob(chainrule.tensor(v)).numpy(),
                                   t.log_prob(torch.tensor(v)).numpy(), rtol=1e-9)
        np.testing.assert_allclose(o.mean.numpy(), t.mean.numpy(), rtol=1e-9)
        np.testing.assert_allclose(o.variance.numpy(), t.variance.numpy(), rtol=1e-9)
    np.testing.assert_allclose(ind.entropy().numpy(), tind.entropy().numpy(), rtol=1e-9)
    chainrule.manual_seed(0)
    samples = mix.sample((20_000,))
    assert tuple(samples.shape) == (20_000, 3)
    se = np.sqrt(mix.variance.numpy() / 20_000)
    assert np.all(np.abs(samples.numpy().mean(0) - mix.mean.numpy()) < 5 * se)
    with pytest.raises(ValueError, match="Expected reinterpreted_batch_ndims <= "):
        D.Independent(D.Normal(chainrule.zeros(3), chainrule.ones(3)), 2)
