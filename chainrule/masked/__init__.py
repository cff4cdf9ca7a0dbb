"""torch.masked: reductions and normalizations over the elements a mask selects, and
MaskedTensor."""

from . import _ops
from ._ops import (  # noqa: F401  (the private helpers PyTorch's torch.masked also has)
    _canonical_dim,
    _combine_input_and_mask,
    _input_mask,
    _output_mask,
    _reduction_identity,
    _where,
    amax,
    amin,
    argmax,
    argmin,
    cumprod,
    cumsum,
    log_softmax,
    logaddexp,
    logsumexp,
    mean,
    median,
    norm,
    normalize,
    prod,
    softmax,
    softmin,
    std,
    sum,
    var,
)
from .maskedtensor import MaskedTensor, as_masked_tensor, is_masked_tensor, masked_tensor

__all__ = ["amax", "amin", "argmax", "argmin", "as_masked_tensor", "cumprod", "cumsum",
           "is_masked_tensor", "log_softmax", "logaddexp", "logsumexp", "masked_tensor",
           "MaskedTensor", "mean", "median", "norm", "normalize", "prod", "softmax", "softmin",
           "std", "sum", "var"]
