"""Random sampling (torch.normal, poisson, bernoulli, multinomial, the in-place samplers and the
random factories) against torch: shapes, dtypes, errors and gradients; values against the
distributions' moments (tests/test_random_streams.py checks that they are torch's, bit for bit)."""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest
import torch

import chainrule

LIBS = {"chainrule": chainrule, "torch": torch}
N = 200_000
Z = 5  # standard errors allowed


def outcome(fn):
    """What ``fn()`` gives: (shape, dtype, requires_grad) of the result, or the error."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            r = fn()
    except Exception as e:  # noqa: BLE001  (the type is part of the outcome)
        return type(e).__name__, str(e)
    return tuple(r.shape), str(r.dtype), r.requires_grad


def both(make) -> tuple:
    return outcome(lambda: make(chainrule)), outcome(lambda: make(torch))


CALLS = {
    "normal t,t": lambda L: L.normal(L.zeros(2, 3), L.ones(2, 3)),
    "normal t,t broadcast": lambda L: L.normal(L.zeros(2, 1), L.ones(3)),
    "normal t,t mismatch": lambda L: L.normal(L.zeros(2, 3), L.ones(6)),
    "normal t,float": lambda L: L.normal(L.zeros(2, 3), 2.0),
    "normal t": lambda L: L.normal(L.zeros(2, 3, dtype=L.float64)),
    "normal float,t": lambda L: L.normal(1.0, L.ones(4, dtype=L.float64)),
    "normal float,float,size": lambda L: L.normal(1.0, 2.0, (2, 2)),
    "normal size kw dtype": lambda L: L.normal(1.0, 2.0, size=(2, 2), dtype=L.float64),
    "normal requires_grad": lambda L: L.normal(0.0, 1.0, (3,), requires_grad=True),
    "normal no size": lambda L: L.normal(1.0, 2.0),
    "normal std<0": lambda L: L.normal(L.zeros(2), -1.0),
    "normal std<0 t": lambda L: L.normal(L.zeros(2), -L.ones(2)),
    "normal std<0 floats": lambda L: L.normal(0.0, -1.5, (2,)),
    "normal long": lambda L: L.normal(L.ones(3, dtype=L.long), 1.0),
    "normal grad": lambda L: L.normal(L.zeros(2, requires_grad=True), L.ones(2)),
    "normal promotes": lambda L: L.normal(L.zeros(2, dtype=L.float64), L.ones(2)),
    "poisson": lambda L: L.poisson(L.ones(2, 3) * 3),
    "poisson grad": lambda L: L.poisson(L.ones(2, requires_grad=True)),
    "poisson negative": lambda L: L.poisson(-L.ones(2)),
    "poisson long": lambda L: L.poisson(L.ones(3, dtype=L.long)),
    "bernoulli": lambda L: L.bernoulli(L.full((2, 3), 0.3)),
    "bernoulli p": lambda L: L.bernoulli(L.ones(2, 3, dtype=L.float64), 0.3),
    "bernoulli out of range": lambda L: L.bernoulli(L.full((2,), 1.5)),
    "bernoulli grad": lambda L: L.bernoulli(L.full((2,), 0.5, requires_grad=True)),
    "bernoulli long": lambda L: L.bernoulli(L.ones(3, dtype=L.long)),
    "Tensor.bernoulli": lambda L: L.full((2,), 0.5).bernoulli(),
    "bernoulli_ bad p": lambda L: L.ones(2).bernoulli_(1.5),
    "bernoulli_ tensor p": lambda L: L.ones(2, 3).bernoulli_(L.full((3,), 0.2)),
    "bernoulli_ long": lambda L: L.ones(3, dtype=L.long).bernoulli_(0.5),
    "multinomial 1d": lambda L: L.multinomial(L.ones(5), 3),
    "multinomial 2d": lambda L: L.multinomial(L.ones(2, 5), 7, True),
    "Tensor.multinomial": lambda L: L.ones(2, 5, dtype=L.float64).multinomial(2),
    "multinomial too many": lambda L: L.multinomial(L.ones(5), 6),
    "multinomial zero samples": lambda L: L.multinomial(L.ones(5), 0),
    "multinomial negative": lambda L: L.multinomial(L.tensor([1.0, -1.0]), 1),
    "multinomial nan": lambda L: L.multinomial(L.tensor([1.0, float("nan")]), 1),
    "multinomial inf": lambda L: L.multinomial(L.tensor([1.0, float("inf")]), 1),
    "multinomial zeros": lambda L: L.multinomial(L.zeros(3), 1),
    "multinomial negative, replacement": lambda L: L.multinomial(L.tensor([[1.0, 2.0],
                                                                           [3.0, -1.0]]), 2, True),
    "multinomial nan, replacement": lambda L: L.multinomial(L.tensor([1.0, float("nan")]), 2, True),
    "multinomial inf, replacement": lambda L: L.multinomial(L.tensor([float("inf"), -1.0]), 2,
                                                            True),
    "multinomial zeros, replacement": lambda L: L.multinomial(L.zeros(3), 2, True),
    "multinomial one, replacement": lambda L: L.multinomial(L.tensor([1.0, -1.0]), 1, True),
    "multinomial zero row": lambda L: L.multinomial(L.tensor([[1.0, 1.0], [0.0, 0.0]]), 1),
    "multinomial 3d": lambda L: L.multinomial(L.ones(2, 2, 2), 1),
    "multinomial 0d": lambda L: L.multinomial(L.tensor(1.0), 1),
    "multinomial long": lambda L: L.multinomial(L.ones(3, dtype=L.long), 1),
    "multinomial empty": lambda L: L.multinomial(L.ones(0), 1),
    "uniform_": lambda L: L.ones(2, 3, dtype=L.float64).uniform_(-1, 2),
    "uniform_ from/to": lambda L: L.ones(2).uniform_(**{"from": -1, "to": 2}),
    "uniform_ reversed": lambda L: L.ones(2).uniform_(1, 0),
    "uniform_ long": lambda L: L.ones(3, dtype=L.long).uniform_(),
    "normal_ bad": lambda L: L.ones(2).normal_(0, -1),
    "normal_ long": lambda L: L.ones(3, dtype=L.long).normal_(),
    "exponential_ zero": lambda L: L.ones(2).exponential_(0),
    "exponential_ negative": lambda L: L.ones(2).exponential_(-1.5),
    "exponential_ long": lambda L: L.ones(3, dtype=L.long).exponential_(),
    "geometric_ 1.5": lambda L: L.ones(2).geometric_(1.5),
    "geometric_ 1": lambda L: L.ones(2).geometric_(1),
    "geometric_ 0": lambda L: L.ones(2).geometric_(0),
    "geometric_ long": lambda L: L.ones(3, dtype=L.long).geometric_(0.5),
    "cauchy_ long": lambda L: L.ones(3, dtype=L.long).cauchy_(),
    "cauchy_ int": lambda L: L.ones(3, dtype=L.int32).cauchy_(),
    "cauchy_ negative": lambda L: L.ones(2).cauchy_(0, -1),
    "log_normal_ bad": lambda L: L.ones(2).log_normal_(1, 0),
    "log_normal_ long": lambda L: L.ones(3, dtype=L.long).log_normal_(),
    "random_ reversed": lambda L: L.ones(2).random_(5, 3),
    "random_ to 0": lambda L: L.ones(2).random_(0),
    "random_ bool": lambda L: L.ones(2, dtype=L.bool).random_(),
    "random_ uint8 too big": lambda L: L.ones(2, dtype=L.uint8).random_(0, 300),
    "random_ int16": lambda L: L.ones(2, dtype=L.int16).random_(-5, 5),
    "random_ half out of range": lambda L: L.ones(2, dtype=L.half).random_(-(2**20), 5),
    "in-place on a leaf": lambda L: L.ones(2, requires_grad=True).uniform_(),
    "rand long": lambda L: L.rand(2, dtype=L.long),
    "randn long": lambda L: L.randn(2, dtype=L.long),
    "rand_like long": lambda L: L.rand_like(L.ones(3, dtype=L.long)),
    "randn_like long": lambda L: L.randn_like(L.ones(3, dtype=L.long)),
    "randn_like": lambda L: L.randn_like(L.ones(3, dtype=L.float64), requires_grad=True),
    "randint_like": lambda L: L.randint_like(L.ones(3), 5),
    "randint_like low high": lambda L: L.randint_like(L.ones(3), 2, 5, dtype=L.int32),
    "randint_like requires_grad": lambda L: L.randint_like(L.ones(2), 3, requires_grad=True),
    "randint reversed": lambda L: L.randint(5, 3, (2,)),
    "randperm dtype": lambda L: L.randperm(4, dtype=L.float64),
    "randperm negative": lambda L: L.randperm(-1),
}


@pytest.mark.parametrize("make", CALLS.values(), ids=CALLS)
def test_shapes_dtypes_and_errors_match_torch(make):
    ours, theirs = both(make)
    assert ours == theirs


def test_random_warns_like_torch_outside_a_floats_exact_integers():
    for dtype in ("float32", "float64"):
        messages = []
        for L in LIBS.values():
            with pytest.warns(UserWarning) as caught:
                L.ones(2, dtype=getattr(L, dtype)).random_(-(2**60), 2**60)
            messages.append([str(w.message).split(" (Triggered")[0] for w in caught])
        assert messages[0] == messages[1]


# ---- moments ---------------------------------------------------------------------------------


def assert_moments(x, mean: float, var: float, fourth: float | None = None) -> None:
    """The sample mean and variance within Z standard errors of the distribution's."""
    x = np.asarray(x, dtype=np.float64).reshape(-1)
    n = x.size
    assert abs(x.mean() - mean) <= Z * math.sqrt(var / n), (x.mean(), mean)
    if fourth is not None:  # the fourth central moment gives the variance's standard error
        assert abs(x.var() - var) <= Z * math.sqrt((fourth - var**2) / n), (x.var(), var)


def draw(fn):
    chainrule.manual_seed(0)
    return fn().numpy()


def test_uniform_():
    a, b = -1.0, 3.0
    x = draw(lambda: chainrule.empty(N, dtype=chainrule.float64).uniform_(a, b))
    assert x.min() >= a and x.max() < b
    assert_moments(x, (a + b) / 2, (b - a) ** 2 / 12, (b - a) ** 4 / 80)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_normal_forms(dtype):
    dt = getattr(chainrule, dtype)
    mean, std = 1.5, 2.0
    forms = [
        lambda: chainrule.empty(N, dtype=dt).normal_(mean, std),
        lambda: chainrule.normal(mean, std, (N,), dtype=dt),
        lambda: chainrule.normal(chainrule.full((N,), mean, dtype=dt), std),
        lambda: chainrule.normal(mean, chainrule.full((N,), std, dtype=dt)),
        lambda: chainrule.normal(chainrule.full((N,), mean, dtype=dt),
                                 chainrule.full((N,), std, dtype=dt)),
    ]
    for form in forms:
        x = draw(form)
        assert x.dtype == np.dtype(dtype)
        assert_moments(x, mean, std**2, 3 * std**4)


def test_normal_uses_each_elements_parameters():
    mean = chainrule.tensor([[-10.0], [10.0]], dtype=chainrule.float64)
    std = chainrule.tensor([0.5, 2.0, 4.0], dtype=chainrule.float64)
    chainrule.manual_seed(1)
    x = np.stack([chainrule.normal(mean, std).numpy() for _ in range(20_000)])
    for i, m in enumerate([-10.0, 10.0]):
        for j, s in enumerate([0.5, 2.0, 4.0]):
            assert_moments(x[:, i, j], m, s**2, 3 * s**4)


def test_log_normal_():
    mu, sigma = 0.2, 0.5
    x = draw(lambda: chainrule.empty(N, dtype=chainrule.float64).log_normal_(mu, sigma))
    m = math.exp(mu + sigma**2 / 2)
    v = (math.exp(sigma**2) - 1) * math.exp(2 * mu + sigma**2)
    assert x.min() > 0
    assert_moments(x, m, v)
    assert_moments(np.log(x), mu, sigma**2, 3 * sigma**4)


def test_exponential_():
    lambd = 2.5
    x = draw(lambda: chainrule.empty(N, dtype=chainrule.float64).exponential_(lambd))
    assert x.min() >= 0
    assert_moments(x, 1 / lambd, 1 / lambd**2, 9 / lambd**4)


@pytest.mark.parametrize("dtype", ["float32", "int64"])
def test_geometric_(dtype):
    p = 0.3
    x = draw(lambda: chainrule.empty(N, dtype=getattr(chainrule, dtype)).geometric_(p))
    assert x.min() == 1 and np.all(x == np.round(x))
    assert_moments(x, 1 / p, (1 - p) / p**2)


def test_cauchy_quartiles():
    median, sigma = 1.0, 2.0
    x = draw(lambda: chainrule.empty(N, dtype=chainrule.float64).cauchy_(median, sigma))
    for q, point in ((0.25, median - sigma), (0.5, median), (0.75, median + sigma)):
        assert_moments(x <= point, q, q * (1 - q))


def test_random_():
    x = draw(lambda: chainrule.empty(N, dtype=chainrule.float64).random_(-3, 7))
    assert set(np.unique(x)) == set(range(-3, 7))
    assert_moments(x, 1.5, (10**2 - 1) / 12)
    x = draw(lambda: chainrule.empty(N, dtype=chainrule.int64).random_(5))
    assert set(np.unique(x)) == set(range(5))
    x = draw(lambda: chainrule.empty(N).random_())
    assert x.min() >= 0 and x.max() <= 2**24 and np.all(x == np.round(x))
    assert_moments(x, 2**23, (2**24 + 1) ** 2 / 12)
    x = draw(lambda: chainrule.empty(N, dtype=chainrule.uint8).random_())
    assert set(np.unique(x)) == set(range(256))
    x = draw(lambda: chainrule.empty(N, dtype=chainrule.bool).random_())
    assert_moments(x, 0.5, 0.25)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_poisson(dtype):
    rates = chainrule.tensor([0.0, 0.5, 4.0, 30.0], dtype=getattr(chainrule, dtype))
    x = draw(lambda: chainrule.poisson(rates.expand(N // 4, 4).contiguous()))
    assert x.dtype == np.dtype(dtype)
    for j, rate in enumerate([0.0, 0.5, 4.0, 30.0]):
        assert_moments(x[:, j], rate, max(rate, 1e-12))


def test_bernoulli_forms():
    probs = chainrule.tensor([0.0, 0.1, 0.5, 0.9, 1.0], dtype=chainrule.float64)
    x = draw(lambda: chainrule.bernoulli(probs.expand(N // 5, 5).contiguous()))
    for j, p in enumerate([0.0, 0.1, 0.5, 0.9, 1.0]):
        assert_moments(x[:, j], p, max(p * (1 - p), 1e-12))
    assert_moments(draw(lambda: chainrule.bernoulli(chainrule.zeros(N), 0.3)), 0.3, 0.21)
    assert_moments(draw(lambda: chainrule.ones(N, dtype=chainrule.long).bernoulli_(0.7)),
                   0.7, 0.21)
    x = draw(lambda: chainrule.zeros(N // 5, 5).bernoulli_(probs))
    for j, p in enumerate([0.0, 0.1, 0.5, 0.9, 1.0]):
        assert_moments(x[:, j], p, max(p * (1 - p), 1e-12))


def test_rand_randn_randint_randperm():
    assert_moments(draw(lambda: chainrule.rand(N)), 0.5, 1 / 12, 1 / 80)
    assert_moments(draw(lambda: chainrule.randn(N, dtype=chainrule.float64)), 0.0, 1.0, 3.0)
    like = chainrule.empty(N, dtype=chainrule.float64)
    assert_moments(draw(lambda: chainrule.rand_like(like)), 0.5, 1 / 12, 1 / 80)
    assert_moments(draw(lambda: chainrule.randn_like(like)), 0.0, 1.0, 3.0)
    x = draw(lambda: chainrule.randint_like(like, 2, 6))
    assert set(np.unique(x)) == {2, 3, 4, 5}
    assert_moments(x, 3.5, (4**2 - 1) / 12)
    chainrule.manual_seed(0)
    perms = np.stack([chainrule.randperm(4).numpy() for _ in range(20_000)])
    assert all(sorted(p) == [0, 1, 2, 3] for p in perms[:100])
    for position in range(4):  # every value equally likely in every position
        assert_moments(perms[:, position] == 2, 0.25, 0.25 * 0.75)


# ---- multinomial -----------------------------------------------------------------------------

WEIGHTS = [0.0, 1.0, 2.0, 3.0, 4.0]


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_multinomial_with_replacement_frequencies(dtype):
    w = chainrule.tensor([WEIGHTS, WEIGHTS[::-1]], dtype=getattr(chainrule, dtype))
    x = draw(lambda: chainrule.multinomial(w, N // 2, replacement=True))
    assert x.shape == (2, N // 2) and x.dtype == np.int64
    for row, weights in zip(x, [WEIGHTS, WEIGHTS[::-1]]):
        for k, wk in enumerate(weights):
            p = wk / sum(weights)
            assert_moments(row == k, p, max(p * (1 - p), 1e-12))


def test_multinomial_without_replacement():
    w = chainrule.tensor(WEIGHTS, dtype=chainrule.float64)
    chainrule.manual_seed(0)
    draws = np.stack([chainrule.multinomial(w, 3).numpy() for _ in range(20_000)])
    assert all(len(set(d)) == 3 and 0 not in d for d in draws)
    # The first draw follows the weights; the second the weights of what is left.
    total = sum(WEIGHTS)
    for k, wk in enumerate(WEIGHTS):
        assert_moments(draws[:, 0] == k, wk / total, wk / total * (1 - wk / total) + 1e-12)
    p_second_4 = sum(WEIGHTS[j] / total * 4 / (total - WEIGHTS[j]) for j in (1, 2, 3))
    assert_moments(draws[:, 1] == 4, p_second_4, p_second_4 * (1 - p_second_4))
    everything = chainrule.multinomial(chainrule.ones(2, 6), 6).numpy()
    assert all(sorted(row) == list(range(6)) for row in everything)


def test_multinomial_out_and_generator():
    out = chainrule.zeros(3, dtype=chainrule.long)
    g = chainrule.Generator().manual_seed(5)
    result = chainrule.multinomial(chainrule.ones(4), 2, generator=g, out=out)
    assert result is out and out.shape == (2,)
    again = chainrule.multinomial(chainrule.ones(4), 2,
                                  generator=chainrule.Generator().manual_seed(5))
    assert out.tolist() == again.tolist()


# ---- reproducibility, generators, out= -------------------------------------------------------

SAMPLERS = {
    "normal": lambda g: chainrule.normal(chainrule.zeros(5), 2.0, generator=g),
    "normal floats": lambda g: chainrule.normal(0.0, 1.0, (5,), generator=g),
    "poisson": lambda g: chainrule.poisson(chainrule.full((5,), 3.0), generator=g),
    "bernoulli": lambda g: chainrule.bernoulli(chainrule.full((5,), 0.5), generator=g),
    "multinomial": lambda g: chainrule.multinomial(chainrule.ones(5), 5, True, generator=g),
    "uniform_": lambda g: chainrule.empty(5).uniform_(generator=g),
    "normal_": lambda g: chainrule.empty(5).normal_(generator=g),
    "exponential_": lambda g: chainrule.empty(5).exponential_(generator=g),
    "geometric_": lambda g: chainrule.empty(5).geometric_(0.2, generator=g),
    "cauchy_": lambda g: chainrule.empty(5).cauchy_(generator=g),
    "log_normal_": lambda g: chainrule.empty(5).log_normal_(generator=g),
    "random_": lambda g: chainrule.empty(5).random_(100, generator=g),
    "bernoulli_": lambda g: chainrule.empty(5).bernoulli_(generator=g),
    "randint_like": lambda g: chainrule.randint_like(chainrule.empty(5), 100, generator=g),
}


@pytest.mark.parametrize("sample", SAMPLERS.values(), ids=SAMPLERS)
def test_seeded_and_generator_draws_repeat(sample):
    chainrule.manual_seed(3)
    first = sample(None).tolist()
    chainrule.manual_seed(3)
    assert sample(None).tolist() == first
    a = sample(chainrule.Generator().manual_seed(9)).tolist()
    chainrule.manual_seed(3)
    b = sample(chainrule.Generator().manual_seed(9)).tolist()
    assert a == b
    assert sample(None).tolist() == first  # the generator left the default stream alone


OUTS = {
    "normal t,float": lambda L, out: L.normal(L.zeros(3, dtype=L.float64), 1.0, out=out),
    "normal float,t": lambda L, out: L.normal(1.0, L.ones(3, dtype=L.float64), out=out),
    "normal t,t": lambda L, out: L.normal(L.zeros(3), L.ones(3), out=out),
    "normal floats": lambda L, out: L.normal(2.0, 0.0, (3,), out=out),
    "bernoulli": lambda L, out: L.bernoulli(L.ones(3), out=out),
    "multinomial": lambda L, out: L.multinomial(L.ones(4), 3, out=out),
}


@pytest.mark.parametrize("shape", [(3,), (2,), (0,)])
@pytest.mark.parametrize("dtype", ["float64", "long"])
@pytest.mark.parametrize("sample", OUTS.values(), ids=OUTS)
def test_out_argument_like_torch(sample, dtype, shape):
    """Each kernel's own handling of out=: written, resized (silently or with a warning),
    refused when its shape or dtype does not fit."""
    results = []
    for L in LIBS.values():
        out = L.zeros(shape, dtype=getattr(L, dtype))
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            result = outcome(lambda: sample(L, out))  # noqa: B023
        results.append((result, [str(w.message).split(" (Triggered")[0] for w in caught]))
    assert results[0] == results[1]


def test_out_argument_returns_out_filled():
    out = chainrule.zeros(2)
    assert chainrule.normal(2.0, 0.0, (4,), out=out) is out and out.tolist() == [2.0] * 4
    assert chainrule.bernoulli(chainrule.ones(4), out=out) is out and out.tolist() == [1.0] * 4
    errors = both(lambda L: L.normal(L.zeros(2, requires_grad=True), 1.0, out=L.zeros(2)))
    assert errors[0] == errors[1] and errors[0][0] == "RuntimeError"


# ---- gradients -------------------------------------------------------------------------------


GRADIENTS = {
    "normal t,t": lambda L, x: L.normal(x, x.detach()[:1] + x),
    "normal t,float": lambda L, x: L.normal(x, 2.0),
    "normal float,t": lambda L, x: L.normal(0.0, x),
    "poisson": lambda L, x: L.poisson(x),
    "bernoulli": lambda L, x: L.bernoulli(x),
}


@pytest.mark.parametrize("sample", GRADIENTS.values(), ids=GRADIENTS)
def test_samplers_have_torchs_zero_gradient(sample):
    grads = []
    for L in LIBS.values():
        x = L.tensor([[0.5], [0.25]], dtype=L.float64, requires_grad=True)
        out = sample(L, x)
        assert out.requires_grad
        (out * 2).sum().backward()
        grads.append(x.grad.tolist())
    assert grads[0] == grads[1] == [[0.0], [0.0]]


def test_infinite_parameters_with_grad_give_torchs_values():
    values = []
    for L in LIBS.values():
        mean = L.tensor([float("inf"), -float("inf"), 1.0], requires_grad=True)
        out = L.normal(mean, 0.0)
        rates = L.tensor([0.0, 2.0], requires_grad=True)
        values.append((out.tolist(), L.poisson(rates * 0).tolist()))
    assert values[0] == values[1]


def test_in_place_samplers_give_the_old_value_a_zero_gradient_like_torch():
    grads = []
    for L in LIBS.values():
        x = L.ones(3, dtype=L.float64, requires_grad=True)
        y = x * 2
        y[1:].uniform_()
        (y * 3).sum().backward()
        grads.append(x.grad.tolist())
    assert grads[0] == grads[1] == [6.0, 0.0, 0.0]


def test_in_place_samplers_write_through_views_and_bump_the_version():
    base = chainrule.zeros(4, 3)
    version = base._version
    column = base[:, 1]
    assert column.exponential_() is column
    assert base._version > version
    assert (base[:, 0] == 0).all() and (base[:, 1] > 0).all()


# ---- vmap ------------------------------------------------------------------------------------

VMAPPED = {
    "normal t,float": lambda L, x: L.normal(x, 1.0),
    "normal t,t": lambda L, x: L.normal(x, x),
    "normal floats": lambda L, x: L.normal(0.0, 1.0, (4,), dtype=L.float64) + x,
    "bernoulli": lambda L, x: L.bernoulli(x),
    "bernoulli_": lambda L, x: x.clone().bernoulli_(0.5),
    "bernoulli_ t": lambda L, x: x.clone().bernoulli_(x),
    "uniform_": lambda L, x: x.clone().uniform_(),
    "normal_": lambda L, x: x.clone().normal_(),
    "exponential_": lambda L, x: x.clone().exponential_(),
    "cauchy_": lambda L, x: x.clone().cauchy_(),
    "log_normal_": lambda L, x: x.clone().log_normal_(),
    "random_": lambda L, x: x.clone().random_(1000),
    "geometric_": lambda L, x: x.clone().geometric_(0.1),
    "poisson": lambda L, x: L.poisson(x * 100),
    "multinomial": lambda L, x: L.multinomial(x, 2),
    "multinomial rows": lambda L, x: L.multinomial(x.reshape(2, 2), 2, True),
    "rand_like": lambda L, x: L.rand_like(x),
    "randint_like": lambda L, x: L.randint_like(x, 1000),
}
VMAP = {"chainrule": chainrule.vmap, "torch": torch.func.vmap}


@pytest.mark.parametrize("sample", VMAPPED.values(), ids=VMAPPED)
def test_vmap_randomness_modes_like_torch(sample):
    """'error' refuses, 'different' draws per example, 'same' shares one draw (or refuses
    batched parameters), as torch.func.vmap."""
    seen = []
    for name, L in LIBS.items():
        xs = L.full((3, 4), 0.5, dtype=L.float64)
        row = []
        for mode in ("error", "different", "same"):
            try:
                y = VMAP[name](lambda x: sample(L, x), randomness=mode)(xs).numpy()  # noqa: B023
                assert np.isfinite(y).all()
                row.append((y.shape, "same" if all((y[0] == y[i]).all() for i in range(3))
                            else "different"))
            except RuntimeError as e:
                row.append(str(e))
        seen.append(row)
    assert seen[0] == seen[1]


def test_vmapped_parameters_are_each_examples():
    rates = chainrule.tensor([[1.0], [50.0]], dtype=chainrule.float64).expand(2, N // 2)
    chainrule.manual_seed(0)
    x = chainrule.vmap(chainrule.poisson, randomness="different")(rates.contiguous()).numpy()
    assert_moments(x[0], 1.0, 1.0)
    assert_moments(x[1], 50.0, 50.0)
    means = chainrule.tensor([[-3.0], [3.0]], dtype=chainrule.float64).expand(2, N // 2)
    x = chainrule.vmap(lambda m: chainrule.normal(m, 0.5),
                       randomness="different")(means.contiguous()).numpy()
    assert_moments(x[0], -3.0, 0.25, 3 * 0.25**2)
    assert_moments(x[1], 3.0, 0.25, 3 * 0.25**2)


def test_rng_state_round_trip_repeats_float32_and_float64_draws():
    chainrule.manual_seed(5)
    chainrule.rand(1)  # a float32 draw keeps half of a 64-bit output for the next one
    state = chainrule.get_rng_state()
    a = (chainrule.rand(3), chainrule.randn(2, dtype=chainrule.float64), chainrule.rand(5))
    chainrule.set_rng_state(state)
    b = (chainrule.rand(3), chainrule.randn(2, dtype=chainrule.float64), chainrule.rand(5))
    assert all(chainrule.equal(x, y) for x, y in zip(a, b))
    messages = []
    for L in LIBS.values():
        with pytest.raises(TypeError) as caught:
            L.set_rng_state([1, 2])
        messages.append(str(caught.value))
    assert messages[0] == messages[1]
