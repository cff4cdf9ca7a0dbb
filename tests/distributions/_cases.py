"""The distributions under test: one row per distribution (its parameters, a value in its
support), built the same way in chainrule and in torch."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import torch

import chainrule
import chainrule.distributions as D

R = np.random.RandomState(0)


def normal(*shape):
    return R.standard_normal(shape)


def positive(*shape, low=0.5, high=2.0):
    return R.uniform(low, high, shape)


def unit(*shape):
    return R.uniform(0.1, 0.9, shape)


def simplex(*shape):
    p = R.uniform(0.2, 1.0, shape)
    return p / p.sum(-1, keepdims=True)


def spd(n):
    a = R.standard_normal((n, n))
    return a @ a.T + n * np.eye(n)


def tril(n):
    return np.linalg.cholesky(spd(n))


@dataclass
class Case:
    name: str
    params: dict          # name -> float64 array (differentiable) or Python number
    value: np.ndarray     # a point in the support, batch-shaped
    extra: dict = field(default_factory=dict)   # non-differentiable arguments
    diff: tuple | None = None   # parameters to differentiate (default: every array)
    id: str = ""
    moments: bool = True   # check sample moments (mean and variance finite)
    grad_skip: tuple = ()  # methods left out of the gradient comparison (torch has none)
    rtol: float = 1e-9
    value_skip: tuple = ()  # methods whose values differ from torch's on purpose
    lower_only: tuple = ()  # matrix parameters whose gradients are compared below the diagonal

    def __post_init__(self):
        self.id = self.id or self.name
        if self.diff is None:
            self.diff = tuple(k for k, v in self.params.items() if isinstance(v, np.ndarray))

    def build(self, lib, **override):
        """The distribution in ``lib`` (chainrule or torch) with float64 parameters."""
        mod = D if lib is chainrule else torch.distributions
        args = {k: (lib.tensor(v, dtype=lib.float64) if isinstance(v, np.ndarray) else v)
                for k, v in self.params.items()}
        args.update(override)
        extra = {k: (lib.tensor(v, dtype=lib.float64) if isinstance(v, np.ndarray) else v)
                 for k, v in self.extra.items()}
        return getattr(mod, self.name)(**args, **extra)

    def value_in(self, lib):
        dtype = lib.int64 if self.value.dtype.kind in "iu" else lib.float64
        return lib.tensor(self.value, dtype=dtype)


CASES = [
    Case("Normal", {"loc": normal(3), "scale": positive(3)}, normal(3)),
    Case("Normal", {"loc": normal(2, 3), "scale": positive(3)}, normal(4, 1, 3),
         id="Normal-broadcast"),
    Case("Bernoulli", {"probs": unit(3)}, np.array([0.0, 1.0, 1.0])),
    Case("Bernoulli", {"logits": normal(3)}, np.array([1.0, 0.0, 1.0]), id="Bernoulli-logits"),
    Case("Categorical", {"probs": simplex(2, 4)}, np.array([0, 3]), moments=False),
    Case("Categorical", {"logits": normal(2, 4)}, np.array([[1, 2], [3, 0]]),
         id="Categorical-logits", moments=False),
    Case("OneHotCategorical", {"probs": simplex(2, 4)}, np.eye(4)[[1, 3]]),
    Case("Uniform", {"low": normal(3) - 2, "high": normal(3) + 2}, np.array([-0.5, 0.2, 0.7])),
    Case("Exponential", {"rate": positive(3)}, positive(3)),
    Case("Laplace", {"loc": normal(3), "scale": positive(3)}, normal(3)),
    Case("Cauchy", {"loc": normal(3), "scale": positive(3)}, normal(3), moments=False),
    Case("LogNormal", {"loc": normal(3) * 0.3, "scale": positive(3, high=0.8)}, positive(3)),
    Case("Gamma", {"concentration": positive(3, high=4.0), "rate": positive(3)}, positive(3),
         grad_skip=("cdf",)),
    Case("Beta", {"concentration1": positive(3, high=3.0),
                  "concentration0": positive(3, high=3.0)}, unit(3)),
    Case("Dirichlet", {"concentration": positive(2, 3, high=3.0)}, simplex(2, 3)),
    Case("Chi2", {"df": positive(3, low=1.0, high=5.0)}, positive(3), grad_skip=("cdf",)),
    Case("StudentT", {"df": positive(3, low=4.5, high=8.0), "loc": normal(3),
                      "scale": positive(3)}, normal(3)),
    Case("Poisson", {"rate": positive(3, high=5.0)}, np.array([0.0, 2.0, 5.0])),
    Case("Binomial", {"probs": unit(3)}, np.array([0.0, 3.0, 10.0]),
         extra={"total_count": 10}),
    Case("Binomial", {"logits": normal(3)}, np.array([1.0, 2.0, 4.0]),
         extra={"total_count": 4}, id="Binomial-logits"),
    Case("Geometric", {"probs": unit(3)}, np.array([0.0, 2.0, 5.0])),
    Case("MultivariateNormal", {"loc": normal(2, 3), "scale_tril": tril(3)}, normal(2, 3)),
    Case("MultivariateNormal", {"loc": normal(3), "covariance_matrix": spd(3)}, normal(2, 3),
         id="MultivariateNormal-cov", diff=("loc",)),
    Case("MultivariateNormal", {"loc": normal(3), "precision_matrix": spd(3)}, normal(3),
         id="MultivariateNormal-prec", diff=("loc",)),
    Case("LowRankMultivariateNormal", {"loc": normal(3), "cov_factor": normal(3, 2),
                                       "cov_diag": positive(3)}, normal(2, 3)),
    Case("Gumbel", {"loc": normal(3), "scale": positive(3)}, normal(3)),
    Case("HalfNormal", {"scale": positive(3)}, positive(3)),
    Case("HalfCauchy", {"scale": positive(3)}, positive(3), moments=False),
    Case("RelaxedBernoulli", {"probs": unit(3)}, unit(3), extra={"temperature": np.array(0.7)},
         moments=False),
    Case("RelaxedOneHotCategorical", {"probs": simplex(2, 3)}, simplex(2, 3),
         extra={"temperature": np.array(0.7)}, moments=False),
    Case("Pareto", {"scale": positive(3), "alpha": positive(3, low=4.5, high=6.0)},
         positive(3, low=2.0, high=3.0)),
    Case("Weibull", {"scale": positive(3), "concentration": positive(3, low=1.0, high=3.0)},
         positive(3)),
    Case("Kumaraswamy", {"concentration1": positive(3, low=1.0, high=3.0),
                         "concentration0": positive(3, low=1.0, high=3.0)}, unit(3),
         value_skip=("mode",)),  # torch 2.13's mode formula is wrong
    Case("InverseGamma", {"concentration": positive(3, low=4.5, high=6.0),
                          "rate": positive(3)}, positive(3), grad_skip=("cdf",)),
    Case("LogisticNormal", {"loc": normal(2, 3), "scale": positive(2, 3)}, simplex(2, 4),
         moments=False),
    Case("FisherSnedecor", {"df1": positive(3, low=3.0, high=6.0),
                            "df2": positive(3, low=9.0, high=12.0)}, positive(3)),
    Case("ContinuousBernoulli", {"probs": np.array([0.2, 0.4995, 0.8])}, unit(3)),
    Case("ContinuousBernoulli", {"logits": normal(3)}, unit(3), id="ContinuousBernoulli-logits"),
    Case("Multinomial", {"probs": simplex(2, 3)}, np.array([[1.0, 2.0, 1.0], [0.0, 0.0, 4.0]]),
         extra={"total_count": 4}, rtol=1e-7),  # torch's entropy takes lgamma(n+1) in float32
    Case("NegativeBinomial", {"total_count": positive(3, low=2.0, high=5.0), "probs": unit(3)},
         np.array([0.0, 3.0, 7.0])),
    Case("NegativeBinomial", {"logits": normal(3)}, np.array([1.0, 0.0, 2.0]),
         extra={"total_count": 3.0}, id="NegativeBinomial-logits"),
    Case("LKJCholesky", {"concentration": np.array([0.7, 2.0])}, np.stack(
        [np.linalg.cholesky(np.corrcoef(R.standard_normal((3, 6)))) for _ in range(2)]),
        extra={"dim": 3}, moments=False),
    Case("Wishart", {"df": np.array([4.0, 6.5]), "scale_tril": tril(3)},
         np.stack([spd(3), spd(3)]), rtol=1e-8, lower_only=("scale_tril",)),
    Case("Wishart", {"df": np.array([5.0]), "covariance_matrix": spd(3)}, spd(3),
         id="Wishart-cov", diff=("df",)),
    Case("VonMises", {"loc": normal(3), "concentration": np.array([0.5, 3.0, 8.0])},
         normal(3), moments=False),
]
