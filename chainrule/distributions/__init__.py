"""Probability distributions with reparameterized sampling, as ``torch.distributions``.

Built on chainrule's public API: every log_prob, entropy and KL is differentiable in every
parameter (to any order), ``rsample`` is pathwise, and sampling uses chainrule's default
generator, so ``manual_seed`` makes it reproducible.
"""

from . import constraints, transforms
from .constraint_registry import biject_to, transform_to
from .continuous import (
    Beta,
    Cauchy,
    Chi2,
    ContinuousBernoulli,
    Exponential,
    FisherSnedecor,
    Gamma,
    GeneralizedPareto,
    Laplace,
    Normal,
    StudentT,
    Uniform,
    VonMises,
)
from .discrete import (
    Bernoulli,
    Binomial,
    Categorical,
    Geometric,
    Multinomial,
    NegativeBinomial,
    OneHotCategorical,
    OneHotCategoricalStraightThrough,
    Poisson,
)
from .distribution import (
    Distribution,
)
from .exp_family import ExponentialFamily
from .kl import (
    kl_divergence,
    register_kl,
)
from .multivariate import (
    Dirichlet,
    LKJCholesky,
    LowRankMultivariateNormal,
    MultivariateNormal,
    Wishart,
)
from .transforms import (
    AbsTransform,
    AffineTransform,
    CatTransform,
    ComposeTransform,
    CorrCholeskyTransform,
    CumulativeDistributionTransform,
    ExpTransform,
    IndependentTransform,
    LowerCholeskyTransform,
    PositiveDefiniteTransform,
    PowerTransform,
    ReshapeTransform,
    SigmoidTransform,
    SoftmaxTransform,
    SoftplusTransform,
    StackTransform,
    StickBreakingTransform,
    TanhTransform,
    Transform,
    identity_transform,
)
from .wrappers import (
    ExpRelaxedCategorical,
    Gumbel,
    HalfCauchy,
    HalfNormal,
    Independent,
    InverseGamma,
    Kumaraswamy,
    LogisticNormal,
    LogitRelaxedBernoulli,
    LogNormal,
    MixtureSameFamily,
    Pareto,
    RelaxedBernoulli,
    RelaxedOneHotCategorical,
    TransformedDistribution,
    Weibull,
)

__all__ = ["AbsTransform", "AffineTransform", "Bernoulli", "Beta", "Binomial", "CatTransform",
           "Categorical", "Cauchy", "Chi2", "ComposeTransform", "ContinuousBernoulli",
           "CorrCholeskyTransform", "CumulativeDistributionTransform", "Dirichlet",
           "Distribution", "ExpTransform", "Exponential", "ExponentialFamily", "FisherSnedecor",
           "Gamma",
           "GeneralizedPareto", "Geometric", "Gumbel", "HalfCauchy", "HalfNormal",
           "Independent", "IndependentTransform", "InverseGamma", "Kumaraswamy",
           "LKJCholesky", "Laplace", "LogNormal", "LogisticNormal",
           "LowRankMultivariateNormal", "LowerCholeskyTransform", "MixtureSameFamily",
           "Multinomial", "MultivariateNormal", "NegativeBinomial", "Normal",
           "OneHotCategorical", "OneHotCategoricalStraightThrough", "Pareto", "Poisson",
           "PositiveDefiniteTransform", "PowerTransform", "RelaxedBernoulli",
           "RelaxedOneHotCategorical", "ReshapeTransform", "SigmoidTransform",
           "SoftmaxTransform", "SoftplusTransform", "StackTransform",
           "StickBreakingTransform", "StudentT", "TanhTransform", "Transform",
           "TransformedDistribution", "Uniform", "VonMises", "Weibull", "Wishart",
           "biject_to", "identity_transform", "kl_divergence", "register_kl",
           "transform_to"]


def _alias_torch_module_paths() -> None:
    """``chainrule.distributions.normal`` ... as PyTorch's one-module-per-distribution paths:
    each an alias module over the classes defined in the grouped modules here."""
    import sys
    import types

    paths = {
        "bernoulli": ["Bernoulli"], "beta": ["Beta"], "binomial": ["Binomial"],
        "categorical": ["Categorical"], "cauchy": ["Cauchy"], "chi2": ["Chi2"],
        "continuous_bernoulli": ["ContinuousBernoulli"], "dirichlet": ["Dirichlet"],
        "exponential": ["Exponential"], "fishersnedecor": ["FisherSnedecor"],
        "gamma": ["Gamma"], "generalized_pareto": ["GeneralizedPareto"],
        "geometric": ["Geometric"], "gumbel": ["Gumbel"], "half_cauchy": ["HalfCauchy"],
        "half_normal": ["HalfNormal"], "independent": ["Independent"],
        "inverse_gamma": ["InverseGamma"], "kumaraswamy": ["Kumaraswamy"],
        "laplace": ["Laplace"], "lkj_cholesky": ["LKJCholesky"], "log_normal": ["LogNormal"],
        "logistic_normal": ["LogisticNormal"],
        "lowrank_multivariate_normal": ["LowRankMultivariateNormal"],
        "mixture_same_family": ["MixtureSameFamily"], "multinomial": ["Multinomial"],
        "multivariate_normal": ["MultivariateNormal"],
        "negative_binomial": ["NegativeBinomial"], "normal": ["Normal"],
        "one_hot_categorical": ["OneHotCategorical", "OneHotCategoricalStraightThrough"],
        "pareto": ["Pareto"], "poisson": ["Poisson"],
        "relaxed_bernoulli": ["LogitRelaxedBernoulli", "RelaxedBernoulli"],
        "relaxed_categorical": ["ExpRelaxedCategorical", "RelaxedOneHotCategorical"],
        "studentT": ["StudentT"], "transformed_distribution": ["TransformedDistribution"],
        "uniform": ["Uniform"], "von_mises": ["VonMises"], "weibull": ["Weibull"],
        "wishart": ["Wishart"],
    }
    here = sys.modules[__name__]
    for path, names in paths.items():
        module = types.ModuleType(f"{__name__}.{path}", f"PyTorch's path to {', '.join(names)}.")
        module.__all__ = names
        for name in names:
            setattr(module, name, getattr(here, name))
        sys.modules[module.__name__] = module
        setattr(here, path, module)


_alias_torch_module_paths()
