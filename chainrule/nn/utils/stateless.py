"""The deprecated nn.utils.stateless.functional_call, which is torch.func.functional_call."""

from __future__ import annotations

import warnings

__all__ = ["functional_call"]


def functional_call(module, parameters_and_buffers: dict, args=None, kwargs=None, *,
                    tie_weights: bool = True, strict: bool = False):
    """Call ``module`` with the given parameters and buffers in place of its own."""
    from ...func import functional_call as call

    warnings.warn("`torch.nn.utils.stateless.functional_call` is deprecated as of PyTorch 2.0 "
                  "and will be removed in a future version of PyTorch. Please use "
                  "`torch.func.functional_call` instead which is a drop-in replacement.",
                  FutureWarning, stacklevel=2)
    return call(module, parameters_and_buffers, args, kwargs, tie_weights=tie_weights,
                strict=strict)
