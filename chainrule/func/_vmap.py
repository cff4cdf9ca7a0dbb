"""vmap: a batching level. Inputs enter as BatchedTensors; every op batches as it runs."""

from __future__ import annotations

import functools
from collections.abc import Callable

from .. import _batching
from .._batched import BatchedTensor, batched
from .._batched import state as vmap_state
from ..autograd.forward_ad import state as forward_state
from ..tensor import Tensor
from ._pytree import broadcast_prefix, tree_flatten, tree_unflatten

__all__ = ["vmap"]

_RANDOMNESS = ("error", "different", "same")


def _name(func) -> str:
    return getattr(func, "__name__", type(func).__name__)


def vmap(func: Callable, in_dims=0, out_dims=0, randomness: str = "error", *,
         chunk_size: int | None = None) -> Callable:
    """Vectorize ``func`` over a dim of its inputs: ``vmap(f)(x)`` stacks ``f(x[i])``."""
    if randomness not in _RANDOMNESS:
        raise RuntimeError(f"Only allowed values for randomness are 'error', 'different', or "
                           f"'same'. Got {randomness}")
    if chunk_size is not None and (not isinstance(chunk_size, int) or chunk_size <= 0):
        raise ValueError(f"vmap: chunk_size should be None or greater than 0. (got {chunk_size})")

    @functools.wraps(func)
    def wrapped(*args, **kwargs):
        where = f"vmap({_name(func)}, in_dims={in_dims}, ...)(<inputs>)"
        flat, spec = tree_flatten(args)
        dims = broadcast_prefix(in_dims if isinstance(in_dims, tuple) else (in_dims,) * len(args)
                                if isinstance(in_dims, int) or in_dims is None else in_dims, args)
        if not isinstance(in_dims, (int, tuple)) and in_dims is not None:
            raise ValueError(f"vmap({_name(func)}, in_dims={in_dims}, ...): expected `in_dims` to "
                             f"be int or a (potentially nested) tuple matching the structure of "
                             f"inputs, got: {type(in_dims)}.")
        if dims is None:
            raise ValueError(
                f"{where}: in_dims is not compatible with the structure of `inputs`. in_dims has "
                f"structure {tree_flatten(in_dims)[1]} but inputs has structure {spec}.")
        size = _batch_size(flat, dims, where)
        if chunk_size is None or chunk_size >= size:
            return _run(func, flat, dims, spec, size, out_dims, randomness, kwargs)
        return _chunked(func, flat, dims, spec, size, out_dims, randomness, kwargs, chunk_size)

    return wrapped


def _batch_size(flat: list, dims: list, where: str) -> int:
    sizes = []
    for x, d in zip(flat, dims):
        if d is None:
            continue
        if not isinstance(d, int):
            raise ValueError(f"{where}: in_dims must be int or None, got {type(d)}")
        if not isinstance(x, Tensor):
            raise ValueError(f"{where}: Got in_dim={d} for an input but the input is of type "
                             f"{type(x)}. We cannot vmap over non-Tensor arguments, please use "
                             f"None as the respective in_dim")
        n = x.dim()
        if not -n <= d < n:
            raise ValueError(f"{where}: Got in_dim={d} for some input, but that input is a Tensor "
                             f"of dimensionality {n} so expected in_dim to satisfy -{n} <= in_dim "
                             f"< {n}.")
        sizes.append(x.shape[d])
    if not sizes:
        raise ValueError(f"{where}: at least one input must be a Tensor batched over a dim "
                         f"(in_dims all None)")
    if any(s != sizes[0] for s in sizes):
        raise ValueError(f"vmap: Expected all tensors to have the same size in the mapped "
                         f"dimension, got sizes {sizes} for the mapped dimension")
    return sizes[0]


def _run(func, flat, dims, spec, size, out_dims, randomness, kwargs):
    level = vmap_state.level + 1
    inputs = [x if d is None else batched(x.movedim(d, 0) if d % x.dim() else x, level)
              for x, d in zip(flat, dims)]
    vmap_state.level = level
    vmap_state.sizes = vmap_state.sizes + [size]
    vmap_state.randomness = vmap_state.randomness + [randomness]
    vmap_state.fw_base = vmap_state.fw_base + [forward_state.level]
    try:
        out = func(*tree_unflatten(inputs, spec), **kwargs)
    finally:
        vmap_state.level = level - 1
        vmap_state.sizes = vmap_state.sizes[:-1]
        vmap_state.randomness = vmap_state.randomness[:-1]
        vmap_state.fw_base = vmap_state.fw_base[:-1]
    return _unwrap_outputs(func, out, out_dims, level, size)


def _unwrap_outputs(func, out, out_dims, level: int, size: int):
    flat, spec = tree_flatten(out)
    dims = broadcast_prefix(out_dims, out)
    if dims is None:
        raise ValueError(f"vmap({_name(func)}, ..., out_dims={out_dims})(<inputs>): out_dims is "
                         f"not compatible with the structure of `outputs`. out_dims has structure "
                         f"{tree_flatten(out_dims)[1]} but outputs has structure {spec}.")
    result = []
    for x, d in zip(flat, dims):
        if not isinstance(x, Tensor):
            if d is None:
                result.append(x)
                continue
            raise ValueError(f"vmap({_name(func)}, ...): `{_name(func)}` must only return "
                             f"Tensors, got type {type(x)}. Did you mean to set out_dims= to None "
                             f"for output?")
        is_batched = type(x) is BatchedTensor and x._level == level
        if d is None:
            if is_batched:
                raise ValueError(f"vmap({_name(func)}, ...): `{_name(func)}` can not return a "
                                 f"BatchedTensor when out_dim is None")
            result.append(x)
            continue
        if is_batched:
            value = x._value
        else:  # the same for every example: broadcast it
            value = x.unsqueeze(0).expand((size,) + tuple(x.shape))
        n = value.dim()
        if not -n <= d < n:
            raise IndexError(f"Dimension out of range (expected to be in range of [{-n}, {n - 1}]"
                             f", but got {d})")
        result.append(value.movedim(0, d) if d % n else value)
    return tree_unflatten(result, spec)


def _chunked(func, flat, dims, spec, size, out_dims, randomness, kwargs, chunk_size):
    cat = _batching.ops["cat_fn"]
    pieces = []
    for start in range(0, size, chunk_size):
        stop = min(start + chunk_size, size)
        chunk = [x if d is None else x.narrow(d, start, stop - start) for x, d in zip(flat, dims)]
        pieces.append(_run(func, chunk, dims, spec, stop - start, out_dims, randomness, kwargs))
    outs = [tree_flatten(p)[0] for p in pieces]
    out_spec = tree_flatten(pieces[0])[1]
    odims = broadcast_prefix(out_dims, pieces[0])
    joined = [column[0] if d is None else cat(list(column), dim=d)
              for column, d in zip(zip(*outs), odims)]
    return tree_unflatten(joined, out_spec)
