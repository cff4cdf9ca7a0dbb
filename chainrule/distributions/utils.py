"""Helpers shared by the distributions: broadcasting parameters, probs <-> logits, lazy
properties and the random draws that chainrule's generator makes."""

from __future__ import annotations

import numbers
from functools import update_wrapper

from .._backend import get_default_dtype, xp
from .._creation import _random, _rng, arange, eye, full, tensor, zeros, zeros_like
from ..autograd.grad_mode import enable_grad
from ..ops.activation import softmax
from ..ops.elementwise import digamma, lgamma, log, log1p, sigmoid
from ..ops.reduction import logsumexp
from ..ops.shape import broadcast_tensors, cat, stack
from ..tensor import Tensor

__all__ = ["broadcast_all", "clamp_probs", "lazy_property", "logits_to_probs",
           "probs_to_logits", "tril_matrix_to_vec", "vec_to_tril_matrix", "euler_constant"]

euler_constant = 0.57721566490153286060  # Euler-Mascheroni constant


def finfo(dtype):
    """NumPy's finfo of a chainrule floating dtype (eps, tiny, max)."""
    return xp.finfo(dtype.np)


def broadcast_all(*values):
    """Tensors and numbers broadcast to one shape; numbers become tensors of the first tensor's
    dtype (the default dtype when all are numbers)."""
    if not all(isinstance(v, (Tensor, numbers.Number)) for v in values):
        raise ValueError("Input arguments must all be instances of numbers.Number, "
                         "torch.Tensor or objects implementing __torch_function__.")
    if not all(isinstance(v, Tensor) for v in values):
        dtype = get_default_dtype()
        for v in values:
            if isinstance(v, Tensor):
                dtype = v.dtype
                break
        values = tuple(v if isinstance(v, Tensor) else tensor(v, dtype=dtype)
                       for v in values)
    return broadcast_tensors(*values)


def clamp_probs(probs):
    """probs clamped to [eps, 1 - eps] of their dtype."""
    eps = float(finfo(probs.dtype).eps)
    return probs.clamp(min=eps, max=1 - eps)


def logits_to_probs(logits, is_binary: bool = False):
    """Probabilities from logits: sigmoid when binary, softmax over the last dim otherwise."""
    if is_binary:
        return sigmoid(logits)
    return softmax(logits, dim=-1)


def probs_to_logits(probs, is_binary: bool = False):
    """Logits from probabilities (clamped away from 0 and 1)."""
    ps_clamped = clamp_probs(probs)
    if is_binary:
        return log(ps_clamped) - log1p(-ps_clamped)
    return log(ps_clamped)


class lazy_property:
    """A property computed on first access and then cached on the instance (with grad on)."""

    def __init__(self, wrapped) -> None:
        self.wrapped = wrapped
        update_wrapper(self, wrapped)

    def __get__(self, instance, obj_type=None):
        if instance is None:
            return _lazy_property_and_property(self.wrapped)
        with enable_grad():
            value = self.wrapped(instance)
        setattr(instance, self.wrapped.__name__, value)
        return value


class _lazy_property_and_property(lazy_property, property):
    def __init__(self, wrapped) -> None:
        property.__init__(self, wrapped)


def tril_matrix_to_vec(mat, diag: int = 0):
    """The lower-triangular entries of ``mat`` (from ``diag``) as a vector, row by row."""
    n = mat.shape[-1]
    rows, cols = xp.tril_indices(n, k=diag)
    return mat[..., tensor(rows), tensor(cols)]


def vec_to_tril_matrix(vec, diag: int = 0):
    """The inverse of ``tril_matrix_to_vec``."""
    n = (-(1 + 2 * diag) + ((1 + 2 * diag) ** 2 + 8 * vec.shape[-1] + 4 * abs(diag) * (diag + 1))
         ** 0.5) / 2
    eps = float(finfo(vec.dtype).eps)
    if round(n) - n > eps:
        raise ValueError(f"The size of last dimension is {vec.shape[-1]} which cannot be "
                         "expressed as the lower triangular part of a square D x D matrix.")
    n = round(n)
    rows, cols = xp.tril_indices(n, k=diag)
    flat = zeros(*vec.shape[:-1], n * n, dtype=vec.dtype)
    index = tensor(rows * n + cols).expand(*vec.shape[:-1], len(rows))
    return flat.scatter(-1, index, vec).reshape(*vec.shape[:-1], n, n)


# --- draws from chainrule's generator (so manual_seed makes them reproducible) --------------

def draw(method: str, shape, dtype, *params):
    """NumPy's ``Generator.<method>(*params)`` on the default generator's stream (PyTorch's
    mt19937; the values are NumPy's sampler's, not PyTorch's), as a tensor of ``shape`` and
    ``dtype``; array parameters broadcast against ``shape``."""
    rng = _rng(None)
    arrays = [p.detach().numpy().astype(xp.float64) if isinstance(p, Tensor) else p
              for p in params]

    def sample(full_shape):
        args = [xp.broadcast_to(a, full_shape) if isinstance(a, xp.ndarray) else a
                for a in arrays]
        return getattr(rng, method)(*args, size=full_shape)

    return _random(sample, tuple(shape), dtype.np, False)


# --- small functions of nn.functional, written here so distributions does not import nn ----

def softplus(x):
    """log(1 + exp(x)), stable, with gradient sigmoid(x) everywhere."""
    return logsumexp(stack([x, zeros_like(x)], -1), -1)


def logsigmoid(x):
    """log(sigmoid(x))."""
    return -softplus(-x)


def bce_with_logits(logits, target):
    """Elementwise binary cross-entropy of ``target`` under Bernoulli(logits=logits)."""
    return softplus(logits) - logits * target


def one_hot(index, num_classes: int, dtype):
    """One-hot vectors (last dim) for integer ``index``."""
    return eye(num_classes, dtype=dtype)[index]


def pad_last(x, before: int, after: int, value: float):
    """``x`` padded in its last dim with ``value``."""
    parts = []
    if before:
        parts.append(full((*x.shape[:-1], before), value, dtype=x.dtype))
    parts.append(x)
    if after:
        parts.append(full((*x.shape[:-1], after), value, dtype=x.dtype))
    return cat(parts, -1)


def mvlgamma(x, p: int):
    """The multivariate log-gamma function: p(p-1)/4 log(pi) + sum_j lgamma(x - j/2)."""
    import math

    offsets = arange(p, dtype=x.dtype) / 2
    return p * (p - 1) / 4 * math.log(math.pi) + lgamma(x.unsqueeze(-1) - offsets).sum(-1)


def mvdigamma(x, p: int):
    """The derivative of ``mvlgamma`` in x: sum_j digamma(x - j/2)."""
    return digamma(x.unsqueeze(-1) - arange(p, dtype=x.dtype) / 2).sum(-1)
