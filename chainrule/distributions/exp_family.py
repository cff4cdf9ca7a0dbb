"""ExponentialFamily: distributions with density exp(<t(x), theta> - F(theta) + k(x)), whose
entropy and same-family KL follow from the log normalizer F by autograd."""

from __future__ import annotations

from .. import autograd
from .distribution import Distribution

__all__ = ["ExponentialFamily"]


class ExponentialFamily(Distribution):
    """Base class of exponential-family distributions: subclasses give ``_natural_params``
    (theta), ``_log_normalizer(*theta)`` (F) and ``_mean_carrier_measure`` (E[k(x)])."""

    @property
    def _natural_params(self):
        raise NotImplementedError

    def _log_normalizer(self, *natural_params):
        raise NotImplementedError

    @property
    def _mean_carrier_measure(self):
        raise NotImplementedError

    def entropy(self):
        """H = F(theta) - <theta, grad F(theta)> - E[k(x)]: the Bregman divergence of F
        (Nielsen and Nock, "Entropies and cross-entropies of exponential families", 2010)."""
        result = -self._mean_carrier_measure
        nparams = [p.detach().requires_grad_() for p in self._natural_params]
        lg_normal = self._log_normalizer(*nparams)
        gradients = autograd.grad(lg_normal.sum(), nparams, create_graph=True)
        result = result + lg_normal
        for nparam, grad in zip(nparams, gradients):
            result = result - (nparam * grad).reshape(*self._batch_shape, -1).sum(-1)
        return result
