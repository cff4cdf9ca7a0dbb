"""functorch.experimental: chunk_vmap, replace_all_batch_norm_modules_, and torch.func's
functionalize, hessian, jacfwd and jvp (without functorch's deprecation warnings)."""

from __future__ import annotations

import math
from collections.abc import Callable

from ...func import hessian, jacfwd, jvp, vmap
from ...func._vmap import _batched_inputs, _check_randomness
from ...nn import Module
from ...nn.modules.batchnorm import _BatchNorm
from .. import _functionalize as functionalize

__all__ = ["chunk_vmap", "functionalize", "hessian", "jacfwd", "jvp",
           "replace_all_batch_norm_modules_"]


def chunk_vmap(func: Callable, in_dims=0, out_dims=0, randomness: str = "error",
               chunks: int = 2) -> Callable:
    """``vmap`` run on ``chunks`` pieces of the batch in turn, the results joined."""
    _check_randomness(randomness)
    if chunks == 1:
        return vmap(func, in_dims=in_dims, out_dims=out_dims, randomness=randomness)

    def chunked(*args, **kwargs):
        size = _batched_inputs(in_dims, args, func)[0]
        return vmap(func, in_dims, out_dims, randomness,
                    chunk_size=max(1, math.ceil(size / chunks)))(*args, **kwargs)
    return chunked


def replace_all_batch_norm_modules_(root: Module) -> Module:
    """Stop every BatchNorm in ``root`` tracking running statistics (in place): their
    running_mean, running_var and num_batches_tracked become None."""
    for module in root.modules():
        if isinstance(module, _BatchNorm) and module.track_running_stats:
            module.running_mean = None
            module.running_var = None
            module.num_batches_tracked = None
            module.track_running_stats = False
    return root
