"""Distributions over vectors: Dirichlet and the multivariate normals."""

from __future__ import annotations

import math

import chainrule as torch

from . import constraints
from ._gamma import standard_gamma
from .continuous import xlogy
from .distribution import Distribution
from .exp_family import ExponentialFamily
from .utils import finfo, lazy_property, one_hot

__all__ = ["Dirichlet", "MultivariateNormal", "LowRankMultivariateNormal"]


def _broadcast_shape(*shapes):
    return torch.broadcast_tensors(*(torch.zeros(*s) for s in shapes))[0].shape


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
        return (xlogy(c - 1.0, value).sum(-1) + torch.lgamma(c.sum(-1))
                - torch.lgamma(c).sum(-1))

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
        return torch.where(below, corner, mode)

    @property
    def variance(self):
        con0 = self.concentration.sum(-1, True)
        return (self.concentration * (con0 - self.concentration)
                / (con0.pow(2) * (con0 + 1)))

    def entropy(self):
        k = self.concentration.size(-1)
        a0 = self.concentration.sum(-1)
        return (torch.lgamma(self.concentration).sum(-1) - torch.lgamma(a0)
                - (k - a0) * torch.digamma(a0)
                - ((self.concentration - 1.0) * torch.digamma(self.concentration)).sum(-1))

    @property
    def _natural_params(self):
        return (self.concentration,)

    def _log_normalizer(self, x):
        return x.lgamma().sum(-1) - torch.lgamma(x.sum(-1))


def _batch_mahalanobis(bL, bx):
    """x^T (L L^T)^-1 x for a lower-triangular L, batched (broadcasting L against x)."""
    # only the lower triangle is read (a triangular solve's view of L): tril() keeps the upper
    # entries' gradient zero, as PyTorch's solve_triangular
    y = (torch.linalg.inv(bL.tril()) @ bx.unsqueeze(-1)).squeeze(-1)
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
        if scale_tril is not None:
            self.scale_tril = scale_tril.expand(*batch_shape, -1, -1)
        elif covariance_matrix is not None:
            self.covariance_matrix = covariance_matrix.expand(*batch_shape, -1, -1)
        else:
            self.precision_matrix = precision_matrix.expand(*batch_shape, -1, -1)
        self.loc = loc.expand(*batch_shape, -1)
        super().__init__(batch_shape, torch.Size([n]), validate_args=validate_args)
        if scale_tril is not None:
            self._unbroadcasted_scale_tril = scale_tril
        elif covariance_matrix is not None:
            self._unbroadcasted_scale_tril = torch.linalg.cholesky(covariance_matrix)
        else:
            self._unbroadcasted_scale_tril = torch.linalg.cholesky(
                torch.linalg.inv(precision_matrix))

    def expand(self, batch_shape, _instance=None):
        new = self._expand_params(MultivariateNormal, batch_shape, _instance,
                                  ("covariance_matrix", "scale_tril", "precision_matrix"), 2)
        batch_shape = torch.Size(batch_shape)
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
        return torch.linalg.inv(L @ L.mT).expand(*self._batch_shape, *self._event_shape,
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
        eps = torch.randn(*shape, dtype=self.loc.dtype)
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
        batch_shape = torch.Size(batch_shape)
        new.loc = self.loc.expand(*batch_shape, *self.event_shape)
        new.cov_factor = self.cov_factor.expand(*batch_shape, *self.cov_factor.shape[-2:])
        new.cov_diag = self.cov_diag.expand(*batch_shape, *self.event_shape)
        new._unbroadcasted_cov_factor = self._unbroadcasted_cov_factor
        new._unbroadcasted_cov_diag = self._unbroadcasted_cov_diag
        Distribution.__init__(new, batch_shape, self.event_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    def _covariance(self):
        W = self._unbroadcasted_cov_factor
        return W @ W.mT + torch.diag_embed(self._unbroadcasted_cov_diag)

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
        return torch.linalg.cholesky(self._covariance()).expand(
            *self._batch_shape, *self._event_shape, *self._event_shape)

    @lazy_property
    def covariance_matrix(self):
        return self._covariance().expand(*self._batch_shape, *self._event_shape,
                                         *self._event_shape)

    @lazy_property
    def precision_matrix(self):
        return torch.linalg.inv(self._covariance()).expand(
            *self._batch_shape, *self._event_shape, *self._event_shape)

    def rsample(self, sample_shape=()):
        shape = self._extended_shape(sample_shape)
        W_shape = tuple(shape[:-1]) + tuple(self.cov_factor.shape[-1:])
        eps_W = torch.randn(*W_shape, dtype=self.loc.dtype)
        eps_D = torch.randn(*shape, dtype=self.loc.dtype)
        return (self.loc + (self._unbroadcasted_cov_factor @ eps_W.unsqueeze(-1)).squeeze(-1)
                + self._unbroadcasted_cov_diag.sqrt() * eps_D)

    def log_prob(self, value):
        # the dense covariance: simple and exact for the small event sizes this is used with
        if self._validate_args:
            self._validate_sample(value)
        L = torch.linalg.cholesky(self._covariance())
        diff = value - self.loc
        M = _batch_mahalanobis(L, diff)
        log_det = 2 * L.diagonal(dim1=-2, dim2=-1).log().sum(-1)
        return -0.5 * (self._event_shape[0] * math.log(2 * math.pi) + log_det + M)

    def entropy(self):
        L = torch.linalg.cholesky(self._covariance())
        log_det = 2 * L.diagonal(dim1=-2, dim2=-1).log().sum(-1)
        H = 0.5 * (self._event_shape[0] * (1.0 + math.log(2 * math.pi)) + log_det)
        return H if len(self._batch_shape) == 0 else H.expand(*self._batch_shape)
