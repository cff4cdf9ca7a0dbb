"""functorch.experimental: chunk_vmap, replace_all_batch_norm_modules_, and torch.func's
functionalize, hessian, jacfwd and jvp (without functorch's deprecation warnings)."""

from __future__ import annotations

import math
from collections.abc import Callable

from ...func import functionalize, hessian, jacfwd, jvp, replace_all_batch_norm_modules_, vmap
from ...func._vmap import _batched_inputs, _check_randomness

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
