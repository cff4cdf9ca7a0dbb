"""Distributions over vectors: Dirichlet and the multivariate normals."""

from __future__ import annotations

import math
import numbers
import warnings

from .. import linalg
from .._creation import arange, full_like, ones_like, randn, tensor, zeros
from ..autograd.grad_mode import no_grad
from ..ops.elementwise import clamp, digamma, lgamma, sqrt, where
from ..ops.linalg import diag_embed
from ..ops.reduction import sum as _sum
from ..ops.shape import broadcast_tensors, cat
from ..tensor import Size
from . import constraints
from ._gamma import standard_gamma
from .continuous import xlogy
from .distribution import Distribution
from .exp_family import ExponentialFamily
from .utils import (
    broadcast_all,
    finfo,
    lazy_property,
    mvdigamma,
    mvlgamma,
    one_hot,
    vec_to_tril_matrix,
)

__all__ = ["Dirichlet", "MultivariateNormal", "LowRankMultivariateNormal", "LKJCholesky",
           "Wishart"]


def _broadcast_shape(*shapes):
    return broadcast_tensors(*(zeros(*s) for s in shapes))[0].shape


def _keep_matrix(dist, batch_shape, scale_tril, covariance_matrix, precision_matrix) -> None:
    """Keeps the one matrix given, expanded to ``batch_shape``, under its own name."""
    for name, matrix in (("scale_tril", scale_tril), ("covariance_matrix", covariance_matrix),
                         ("precision_matrix", precision_matrix)):
        if matrix is not None:
            setattr(dist, name, matrix.expand(*batch_shape, -1, -1))


def _scale_tril_of(scale_tril, covariance_matrix, precision_matrix):
    """The lower Cholesky factor of the covariance, from the one matrix given."""
    if scale_tril is not None:
        return scale_tril
    if covariance_matrix is not None:
        return linalg.cholesky(covariance_matrix)
    return linalg.cholesky(linalg.inv(precision_matrix))


class Dirichlet(ExponentialFamily):
    """Dirichlet distribution with ``concentration`` (last dim: the categories)."""

    arg_constraints = {"concentration": constraints.independent(constraints.positive, 1)}
    support = constraints.simplex
    has_rsample = True

    def __init__(self, concentration, validate_args=None) -> None:
        if concentration.dim() < 1:
            raise ValueError("`concentration` parameter must be at least one-dimensional.")
        self.concentration = concentration
        batch_shape, event_shape = concentration.shape[:-1], concentration.shape[-1:]
        super().__init__(batch_shape, event_shape, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        return self._expand_params(Dirichlet, batch_shape, _instance, ("concentration",), 1)

    def rsample(self, sample_shape=()):
        # normalised standard Gamma draws, pathwise through each (see _gamma.py)
        shape = self._extended_shape(sample_shape)
        gammas = standard_gamma(self.concentration.expand(*shape))
        info = finfo(gammas.dtype)
        return (gammas / gammas.sum(-1, keepdim=True)).clamp(min=float(info.tiny),
                                                             max=1 - float(info.eps))

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        c = self.concentration
        return (xlogy(c - 1.0, value).sum(-1) + lgamma(c.sum(-1))
                - lgamma(c).sum(-1))

    @property
    def mean(self):
        return self.concentration / self.concentration.sum(-1, True)

    @property
    def mode(self):
        concentrationm1 = (self.concentration - 1).clamp(min=0.0)
        mode = concentrationm1 / concentrationm1.sum(-1, True)
        # when every concentration is below 1 the density peaks at the largest one's corner
        below = (self.concentration < 1).all(dim=-1, keepdim=True)
        corner = one_hot(self.concentration.argmax(-1), self.concentration.shape[-1],
                         mode.dtype)
        return where(below, corner, mode)

    @property
    def variance(self):
        con0 = self.concentration.sum(-1, True)
        return (self.concentration * (con0 - self.concentration)
                / (con0.pow(2) * (con0 + 1)))

    def entropy(self):
        k = self.concentration.size(-1)
        a0 = self.concentration.sum(-1)
        return (lgamma(self.concentration).sum(-1) - lgamma(a0)
                - (k - a0) * digamma(a0)
                - ((self.concentration - 1.0) * digamma(self.concentration)).sum(-1))

    @property
    def _natural_params(self):
        return (self.concentration,)

    def _log_normalizer(self, x):
        return x.lgamma().sum(-1) - lgamma(x.sum(-1))


def _batch_mahalanobis(bL, bx):
    """x^T (L L^T)^-1 x for a lower-triangular L, batched (broadcasting L against x)."""
    # only the lower triangle is read (a triangular solve's view of L): tril() keeps the upper
    # entries' gradient zero, as PyTorch's solve_triangular
    y = (linalg.inv(bL.tril()) @ bx.unsqueeze(-1)).squeeze(-1)
    return y.pow(2).sum(-1)


class MultivariateNormal(Distribution):
    """Multivariate normal distribution, parameterized by exactly one of
    ``covariance_matrix``, ``precision_matrix`` or ``scale_tril``."""

    arg_constraints = {"loc": constraints.real_vector,
                       "covariance_matrix": constraints.positive_definite,
                       "precision_matrix": constraints.positive_definite,
                       "scale_tril": constraints.lower_cholesky}
    support = constraints.real_vector
    has_rsample = True

    def __init__(self, loc, covariance_matrix=None, precision_matrix=None, scale_tril=None,
                 validate_args=None) -> None:
        if loc.dim() < 1:
            raise ValueError("loc must be at least one-dimensional.")
        if (covariance_matrix is not None) + (scale_tril is not None) + (
                precision_matrix is not None) != 1:
            raise ValueError("Exactly one of covariance_matrix or precision_matrix or "
                             "scale_tril may be specified.")
        if scale_tril is not None:
            if scale_tril.dim() < 2:
                raise ValueError("scale_tril matrix must be at least two-dimensional, "
                                 "with optional leading batch dimensions")
            matrix = scale_tril
        elif covariance_matrix is not None:
            if covariance_matrix.dim() < 2:
                raise ValueError("covariance_matrix must be at least two-dimensional, "
                                 "with optional leading batch dimensions")
            matrix = covariance_matrix
        else:
            if precision_matrix.dim() < 2:
                raise ValueError("precision_matrix must be at least two-dimensional, "
                                 "with optional leading batch dimensions")
            matrix = precision_matrix
        batch_shape = _broadcast_shape(matrix.shape[:-2], loc.shape[:-1])
        n = loc.shape[-1]
        _keep_matrix(self, batch_shape, scale_tril, covariance_matrix, precision_matrix)
        self.loc = loc.expand(*batch_shape, -1)
        super().__init__(batch_shape, Size([n]), validate_args=validate_args)
        self._unbroadcasted_scale_tril = _scale_tril_of(scale_tril, covariance_matrix,
                                                        precision_matrix)

    def expand(self, batch_shape, _instance=None):
        new = self._expand_params(MultivariateNormal, batch_shape, _instance,
                                  ("covariance_matrix", "scale_tril", "precision_matrix"), 2)
        batch_shape = Size(batch_shape)
        new.loc = self.loc.expand(*batch_shape, *self.event_shape)
        new._unbroadcasted_scale_tril = self._unbroadcasted_scale_tril
        return new

    @lazy_property
    def scale_tril(self):
        return self._unbroadcasted_scale_tril.expand(*self._batch_shape, *self._event_shape,
                                                     *self._event_shape)

    @lazy_property
    def covariance_matrix(self):
        L = self._unbroadcasted_scale_tril
        return (L @ L.mT).expand(*self._batch_shape, *self._event_shape, *self._event_shape)

    @lazy_property
    def precision_matrix(self):
        L = self._unbroadcasted_scale_tril
        return linalg.inv(L @ L.mT).expand(*self._batch_shape, *self._event_shape,
                                           *self._event_shape)

    @property
    def mean(self):
        return self.loc

    @property
    def mode(self):
        return self.loc

    @property
    def variance(self):
        return self._unbroadcasted_scale_tril.pow(2).sum(-1).expand(*self._batch_shape,
                                                                    *self._event_shape)

    def rsample(self, sample_shape=()):
        shape = self._extended_shape(sample_shape)
        eps = randn(*shape, dtype=self.loc.dtype)
        return self.loc + (self._unbroadcasted_scale_tril @ eps.unsqueeze(-1)).squeeze(-1)

    def _half_log_det(self):
        return self._unbroadcasted_scale_tril.diagonal(dim1=-2, dim2=-1).log().sum(-1)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        diff = value - self.loc
        M = _batch_mahalanobis(self._unbroadcasted_scale_tril, diff)
        return -0.5 * (self._event_shape[0] * math.log(2 * math.pi) + M) - self._half_log_det()

    def entropy(self):
        H = 0.5 * self._event_shape[0] * (1.0 + math.log(2 * math.pi)) + self._half_log_det()
        return H if len(self._batch_shape) == 0 else H.expand(*self._batch_shape)


class LowRankMultivariateNormal(Distribution):
    """Multivariate normal with covariance ``cov_factor @ cov_factor.mT + diag(cov_diag)``."""

    arg_constraints = {"loc": constraints.real_vector,
                       "cov_factor": constraints.independent(constraints.real, 2),
                       "cov_diag": constraints.independent(constraints.positive, 1)}
    support = constraints.real_vector
    has_rsample = True

    def __init__(self, loc, cov_factor, cov_diag, validate_args=None) -> None:
        if loc.dim() < 1:
            raise ValueError("loc must be at least one-dimensional.")
        event_shape = loc.shape[-1:]
        if cov_factor.dim() < 2:
            raise ValueError("cov_factor must be at least two-dimensional, with optional "
                             "leading batch dimensions")
        if tuple(cov_factor.shape[-2:-1]) != tuple(event_shape):
            raise ValueError(f"cov_factor must be a batch of matrices with shape "
                             f"{event_shape[0]} x m")
        if tuple(cov_diag.shape[-1:]) != tuple(event_shape):
            raise ValueError(f"cov_diag must be a batch of vectors with shape {event_shape}")
        batch_shape = _broadcast_shape(loc.shape[:-1], cov_factor.shape[:-2],
                                       cov_diag.shape[:-1])
        self.loc = loc.expand(*batch_shape, -1)
        self.cov_factor = cov_factor.expand(*batch_shape, -1, -1)
        self.cov_diag = cov_diag.expand(*batch_shape, -1)
        self._unbroadcasted_cov_factor = cov_factor
        self._unbroadcasted_cov_diag = cov_diag
        super().__init__(batch_shape, event_shape, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(LowRankMultivariateNormal, _instance)
        batch_shape = Size(batch_shape)
        new.loc = self.loc.expand(*batch_shape, *self.event_shape)
        new.cov_factor = self.cov_factor.expand(*batch_shape, *self.cov_factor.shape[-2:])
        new.cov_diag = self.cov_diag.expand(*batch_shape, *self.event_shape)
        new._unbroadcasted_cov_factor = self._unbroadcasted_cov_factor
        new._unbroadcasted_cov_diag = self._unbroadcasted_cov_diag
        return self._init_expanded(new, batch_shape)

    def _covariance(self):
        W = self._unbroadcasted_cov_factor
        return W @ W.mT + diag_embed(self._unbroadcasted_cov_diag)

    @property
    def mean(self):
        return self.loc

    @property
    def mode(self):
        return self.loc

    @lazy_property
    def variance(self):
        return (self._unbroadcasted_cov_factor.pow(2).sum(-1)
                + self._unbroadcasted_cov_diag).expand(*self._batch_shape, *self._event_shape)

    @lazy_property
    def scale_tril(self):
        return linalg.cholesky(self._covariance()).expand(
            *self._batch_shape, *self._event_shape, *self._event_shape)

    @lazy_property
    def covariance_matrix(self):
        return self._covariance().expand(*self._batch_shape, *self._event_shape,
                                         *self._event_shape)

    @lazy_property
    def precision_matrix(self):
        return linalg.inv(self._covariance()).expand(
            *self._batch_shape, *self._event_shape, *self._event_shape)

    def rsample(self, sample_shape=()):
        shape = self._extended_shape(sample_shape)
        W_shape = tuple(shape[:-1]) + tuple(self.cov_factor.shape[-1:])
        eps_W = randn(*W_shape, dtype=self.loc.dtype)
        eps_D = randn(*shape, dtype=self.loc.dtype)
        return (self.loc + (self._unbroadcasted_cov_factor @ eps_W.unsqueeze(-1)).squeeze(-1)
                + self._unbroadcasted_cov_diag.sqrt() * eps_D)

    def log_prob(self, value):
        # the dense covariance: simple and exact for the small event sizes this is used with
        if self._validate_args:
            self._validate_sample(value)
        L = linalg.cholesky(self._covariance())
        diff = value - self.loc
        M = _batch_mahalanobis(L, diff)
        log_det = 2 * L.diagonal(dim1=-2, dim2=-1).log().sum(-1)
        return -0.5 * (self._event_shape[0] * math.log(2 * math.pi) + log_det + M)

    def entropy(self):
        L = linalg.cholesky(self._covariance())
        log_det = 2 * L.diagonal(dim1=-2, dim2=-1).log().sum(-1)
        H = 0.5 * (self._event_shape[0] * (1.0 + math.log(2 * math.pi)) + log_det)
        return H if len(self._batch_shape) == 0 else H.expand(*self._batch_shape)


class LKJCholesky(Distribution):
    """LKJ distribution over Cholesky factors of ``dim`` x ``dim`` correlation matrices, with
    density proportional to det(L L^T)^(concentration - 1) (Lewandowski, Kurowicka and Joe,
    "Generating random correlation matrices based on vines and extended onion method", 2009;
    sampled by the onion method)."""

    arg_constraints = {"concentration": constraints.positive}
    support = constraints.corr_cholesky

    def __init__(self, dim: int, concentration=1.0, validate_args=None) -> None:
        from .continuous import Beta

        if dim < 2:
            raise ValueError("Expected dim to be an integer greater than or equal to 2. "
                             f"Found dim={dim}.")
        self.dim = dim
        (self.concentration,) = broadcast_all(concentration)
        batch_shape = self.concentration.size()
        event_shape = Size((dim, dim))
        # the squared norm of row i's off-diagonal part is Beta(i/2, marginal - (i-1)/2)
        marginal_conc = self.concentration + 0.5 * (self.dim - 2)
        offset = arange(self.dim - 1, dtype=self.concentration.dtype)
        offset = cat([zeros(1, dtype=offset.dtype), offset])
        self._beta = Beta(offset + 0.5, marginal_conc.unsqueeze(-1) - 0.5 * offset)
        super().__init__(batch_shape, event_shape, validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(LKJCholesky, _instance)
        batch_shape = Size(batch_shape)
        new.dim = self.dim
        new.concentration = self.concentration.expand(*batch_shape)
        new._beta = self._beta.expand((*batch_shape, self.dim))
        return self._init_expanded(new, batch_shape)

    def sample(self, sample_shape=()):
        with no_grad():
            y = self._beta.sample(sample_shape).unsqueeze(-1)
            u_normal = randn(*self._extended_shape(sample_shape), dtype=y.dtype).tril(-1)
            norm = u_normal.norm(dim=-1, keepdim=True)
            # row 0 has no off-diagonal part: keep it zero instead of 0 / 0
            u_hypersphere = u_normal / where(norm == 0, ones_like(norm), norm)
            w = sqrt(y) * u_hypersphere
            tiny = float(finfo(w.dtype).tiny)
            diag_elems = clamp(1 - _sum(w**2, dim=-1), min=tiny).sqrt()
            return w + diag_embed(diag_elems)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        diag_elems = value.diagonal(dim1=-1, dim2=-2)[..., 1:]
        order = arange(2, self.dim + 1, dtype=self.concentration.dtype)
        order = 2 * (self.concentration - 1).unsqueeze(-1) + self.dim - order
        unnormalized_log_pdf = _sum(order * diag_elems.log(), dim=-1)
        dm1 = self.dim - 1
        alpha = self.concentration + 0.5 * dm1
        denominator = lgamma(alpha) * dm1
        numerator = mvlgamma(alpha - 0.5, dm1)
        pi_constant = 0.5 * dm1 * math.log(math.pi)
        return unnormalized_log_pdf - (pi_constant + numerator - denominator)


class Wishart(ExponentialFamily):
    """Wishart distribution over positive-definite matrices with ``df`` degrees of freedom and
    scale given by exactly one of ``covariance_matrix``, ``precision_matrix`` or
    ``scale_tril``."""

    support = constraints.positive_definite
    has_rsample = True
    _mean_carrier_measure = 0

    @property
    def arg_constraints(self):
        return {"covariance_matrix": constraints.positive_definite,
                "precision_matrix": constraints.positive_definite,
                "scale_tril": constraints.lower_cholesky,
                "df": constraints.greater_than(self.event_shape[-1] - 1)}

    def __init__(self, df, covariance_matrix=None, precision_matrix=None, scale_tril=None,
                 validate_args=None) -> None:
        if (covariance_matrix is not None) + (scale_tril is not None) + (
                precision_matrix is not None) != 1:
            raise AssertionError("Exactly one of covariance_matrix or precision_matrix or "
                                 "scale_tril may be specified.")
        param = next(p for p in (covariance_matrix, precision_matrix, scale_tril)
                     if p is not None)
        if param.dim() < 2:
            raise ValueError("scale_tril must be at least two-dimensional, with optional "
                             "leading batch dimensions")
        if isinstance(df, numbers.Number):
            batch_shape = Size(param.shape[:-2])
            self.df = tensor(df, dtype=param.dtype)
        else:
            batch_shape = _broadcast_shape(param.shape[:-2], df.shape)
            self.df = df.expand(*batch_shape)
        event_shape = param.shape[-2:]
        if bool(self.df.le(event_shape[-1] - 1).any()):
            raise ValueError(f"Value of df={df} expected to be greater than ndim - 1 = "
                             f"{event_shape[-1] - 1}.")
        _keep_matrix(self, batch_shape, scale_tril, covariance_matrix, precision_matrix)
        if bool(self.df.lt(event_shape[-1]).any()):
            warnings.warn("Low df values detected. Singular samples are highly likely to occur "
                          "for ndim - 1 < df < ndim.", stacklevel=2)
        super().__init__(batch_shape, event_shape, validate_args=validate_args)
        self._batch_dims = [-(x + 1) for x in range(len(self._batch_shape))]
        self._unbroadcasted_scale_tril = _scale_tril_of(scale_tril, covariance_matrix,
                                                        precision_matrix)
        self._dist_chi2 = self._chi2(self.df, batch_shape)

    def _chi2(self, df, batch_shape):
        from .continuous import Chi2

        p = self._event_shape[-1]
        return Chi2(df.unsqueeze(-1) - arange(p, dtype=df.dtype).expand(*batch_shape, p))

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(Wishart, _instance)
        batch_shape = Size(batch_shape)
        cov_shape = (*batch_shape, *self.event_shape)
        new._unbroadcasted_scale_tril = self._unbroadcasted_scale_tril.expand(*cov_shape)
        new.df = self.df.expand(*batch_shape)
        new._batch_dims = [-(x + 1) for x in range(len(batch_shape))]
        for name in ("covariance_matrix", "scale_tril", "precision_matrix"):
            if name in self.__dict__:
                setattr(new, name, getattr(self, name).expand(*cov_shape))
        self._init_expanded(new, batch_shape)
        new._dist_chi2 = new._chi2(new.df, batch_shape)
        return new

    @lazy_property
    def scale_tril(self):
        return self._unbroadcasted_scale_tril.expand(*self._batch_shape, *self._event_shape)

    @lazy_property
    def covariance_matrix(self):
        L = self._unbroadcasted_scale_tril
        return (L @ L.mT).expand(*self._batch_shape, *self._event_shape)

    @lazy_property
    def precision_matrix(self):
        L_inv = linalg.inv(self._unbroadcasted_scale_tril.tril())
        return (L_inv.mT @ L_inv).expand(*self._batch_shape, *self._event_shape)

    def _df_matrix(self):
        return self.df.reshape(*self._batch_shape, 1, 1)

    @property
    def mean(self):
        return self._df_matrix() * self.covariance_matrix

    @property
    def mode(self):
        factor = self.df - self.covariance_matrix.shape[-1] - 1
        factor = where(factor <= 0, full_like(factor, math.nan), factor)
        return factor.reshape(*self._batch_shape, 1, 1) * self.covariance_matrix

    @property
    def variance(self):
        V = self.covariance_matrix
        diag_V = V.diagonal(dim1=-2, dim2=-1)
        return self._df_matrix() * (V.pow(2) + diag_V.unsqueeze(-1) * diag_V.unsqueeze(-2))

    def _bartlett_sampling(self, sample_shape=()):
        # Bartlett decomposition: A lower triangular with sqrt(chi2(df - i)) on the diagonal and
        # standard normals below; L A (L A)^T is Wishart
        p = self._event_shape[-1]
        eps = float(finfo(self.df.dtype).eps)
        diag = self._dist_chi2.rsample(sample_shape).sqrt().clamp(min=eps)
        below = randn(*sample_shape, *self._batch_shape, p * (p - 1) // 2,
                      dtype=diag.dtype)
        noise = diag_embed(diag) + vec_to_tril_matrix(below, diag=-1)
        chol = self._unbroadcasted_scale_tril @ noise
        return chol @ chol.mT

    def rsample(self, sample_shape=(), max_try_correction=None):
        max_try_correction = 10 if max_try_correction is None else max_try_correction
        sample = self._bartlett_sampling(tuple(sample_shape))
        singular = ~self.support.check(sample)
        if bool(singular.any()):
            warnings.warn("Singular sample detected.", stacklevel=2)
            for _ in range(max_try_correction):
                if not bool(singular.any()):
                    break
                fresh = self._bartlett_sampling(tuple(sample_shape))
                sample = where(singular.unsqueeze(-1).unsqueeze(-1), fresh, sample)
                singular = ~self.support.check(sample)
        return sample

    def _half_log_det(self):
        return self._unbroadcasted_scale_tril.diagonal(dim1=-2, dim2=-1).log().sum(-1)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        nu = self.df
        p = self._event_shape[-1]
        L_inv = linalg.inv(self._unbroadcasted_scale_tril.tril())
        trace = (L_inv.mT @ L_inv @ value).diagonal(dim1=-2, dim2=-1).sum(-1)
        return (-nu * (p * math.log(2) / 2 + self._half_log_det()) - mvlgamma(nu / 2, p)
                + (nu - p - 1) / 2 * linalg.slogdet(value)[1] - trace / 2)

    def entropy(self):
        nu = self.df
        p = self._event_shape[-1]
        return ((p + 1) * (p * math.log(2) / 2 + self._half_log_det())
                + mvlgamma(nu / 2, p) - (nu - p - 1) / 2 * mvdigamma(nu / 2, p) + nu * p / 2)

    @property
    def _natural_params(self):
        p = self._event_shape[-1]
        return -self.precision_matrix / 2, (self.df - p - 1) / 2

    def _log_normalizer(self, x, y):
        p = self._event_shape[-1]
        return ((y + (p + 1) / 2) * (-linalg.slogdet(-2 * x)[1] + math.log(2) * p)
                + mvlgamma(y + (p + 1) / 2, p))
