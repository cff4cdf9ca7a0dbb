"""vmap: a batching level. Inputs enter as BatchedTensors; every op batches as it runs.

The checks and their messages follow torch/_functorch/vmap.py, so misuse reads as in PyTorch.
"""

from __future__ import annotations

import functools
from collections.abc import Callable

from .. import _batching
from .._batched import BatchedTensor, batched
from .._batched import state as vmap_state
from .._batching import VMAP
from .._creation import default_generator
from .._modes import pop, push
from ..autograd.forward_ad import state as forward_state
from ..tensor import Tensor
from ._pytree import broadcast_prefix, tree_flatten, tree_map, tree_unflatten

__all__ = ["vmap"]


def _name(func) -> str:
    if hasattr(func, "__name__"):
        return func.__name__
    if isinstance(func, functools.partial):
        return f"functools.partial({_name(func.func)}, ...)"
    return repr(func)


def _check_randomness(randomness) -> None:
    if randomness not in ("error", "different", "same"):
        raise RuntimeError(f"Only allowed values for randomness are 'error', 'different', or "
                           f"'same'. Got {randomness}")


def vmap(func: Callable, in_dims=0, out_dims=0, randomness: str = "error", *,
         chunk_size: int | None = None) -> Callable:
    """Vectorize ``func`` over a dim of its inputs: ``vmap(f)(x)`` stacks ``f(x[i])``."""
    _check_randomness(randomness)
    if not (chunk_size is None or chunk_size > 0):
        raise ValueError(f"vmap: chunk_size should be None or greater than 0. (got {chunk_size})")

    def wrapped(*args, **kwargs):
        _check_out_dims(out_dims, func)
        size, dims, flat, spec = _batched_inputs(in_dims, args, func)
        if chunk_size is None:
            return _run(func, size, dims, flat, spec, out_dims, randomness, kwargs)
        return _chunked(func, size, dims, flat, spec, out_dims, randomness, kwargs, chunk_size)

    return functools.wraps(func)(wrapped)


def _check_out_dims(out_dims, func) -> None:
    def check(d):
        if not (d is None or isinstance(d, int)):
            raise ValueError(f"vmap({_name(func)}, ..., out_dims={out_dims}): `out_dims` must be "
                             f"an int, None or a python collection of ints representing where in "
                             f"the outputs the vmapped dimension should appear.")

    if not isinstance(out_dims, int):
        tree_map(check, out_dims)


def _batched_inputs(in_dims, args: tuple, func) -> tuple[int, list, list, object]:
    """The batch size, each flat input's dim (non-negative) or None, the flat inputs, their
    structure."""
    where = f"vmap({_name(func)}, in_dims={in_dims}, ...)(<inputs>)"
    if not isinstance(in_dims, (int, tuple)):
        raise ValueError(f"{where}: expected `in_dims` to be int or a (potentially nested) tuple "
                         f"matching the structure of inputs, got: {type(in_dims)}.")
    if not args:
        raise ValueError(f"vmap({_name(func)})(<inputs>): got no inputs. Maybe you forgot to add "
                         f"inputs, or you are trying to vmap over a function with no inputs. The "
                         f"latter is unsupported.")
    flat, spec = tree_flatten(args)
    dims = broadcast_prefix(in_dims, spec)
    if dims is None:
        raise ValueError(f"{where}: in_dims is not compatible with the structure of `inputs`. "
                         f"in_dims has structure {tree_flatten(in_dims)[1]} but inputs has "
                         f"structure {spec}.")
    for i, (x, d) in enumerate(zip(flat, dims)):
        if not (d is None or isinstance(d, int)):
            raise ValueError(f"{where}: Got in_dim={d} for an input but in_dim must be either an "
                             f"integer dimension or None.")
        if d is None:
            continue
        if not isinstance(x, Tensor):
            raise ValueError(f"{where}: Got in_dim={d} for an input but the input is of type "
                             f"{type(x)}. We cannot vmap over non-Tensor arguments, please use "
                             f"None as the respective in_dim")
        n = x.dim()
        if not -n <= d < n:
            raise ValueError(f"{where}: Got in_dim={d} for some input, but that input is a Tensor "
                             f"of dimensionality {n} so expected in_dim to satisfy -{n} <= in_dim "
                             f"< {n}.")
        dims[i] = d % n
    return _batch_size(flat, dims), dims, flat, spec


def _batch_size(flat: list, dims: list) -> int:
    sizes = [x.shape[d] for x, d in zip(flat, dims) if d is not None]
    if not sizes:
        raise ValueError("vmap: Expected at least one Tensor to vmap over")
    if any(s != sizes[0] for s in sizes):
        raise ValueError(f"vmap: Expected all tensors to have the same size in the mapped "
                         f"dimension, got sizes {sizes} for the mapped dimension")
    return sizes[0]


def _run(func, size: int, dims: list, flat: list, spec, out_dims, randomness: str, kwargs):
    level = vmap_state.level + 1
    inputs = [x if d is None else batched(x.movedim(d, 0) if d else x, level)
              for x, d in zip(flat, dims)]
    vmap_state.level = level
    vmap_state.sizes = vmap_state.sizes + [size]
    vmap_state.randomness = vmap_state.randomness + [randomness]
    vmap_state.fw_base = vmap_state.fw_base + [forward_state.level]
    push(VMAP)
    try:
        out = func(*tree_unflatten(inputs, spec), **kwargs)
    finally:
        pop(VMAP)
        vmap_state.level = level - 1
        vmap_state.sizes = vmap_state.sizes[:-1]
        vmap_state.randomness = vmap_state.randomness[:-1]
        vmap_state.fw_base = vmap_state.fw_base[:-1]
    return _unwrap_outputs(func, out, out_dims, level, size)


def _out_dims_of(func, out, out_dims) -> tuple[list, list, object]:
    flat, spec = tree_flatten(out)
    if isinstance(out, Tensor):
        if isinstance(out_dims, tuple) and len(out_dims) == 1:
            out_dims = out_dims[0]
        dims = [out_dims] if out_dims is None or isinstance(out_dims, int) else None
    else:
        dims = broadcast_prefix(out_dims, spec)
    if dims is None:
        raise ValueError(f"vmap({_name(func)}, ..., out_dims={out_dims})(<inputs>): out_dims is "
                         f"not compatible with the structure of `outputs`. out_dims has structure "
                         f"{tree_flatten(out_dims)[1]} but outputs has structure {spec}.")
    return flat, dims, spec


def _unwrap_outputs(func, out, out_dims, level: int, size: int):
    flat, dims, spec = _out_dims_of(func, out, out_dims)
    name = _name(func)
    result = []
    for x, d in zip(flat, dims):
        is_batched = type(x) is BatchedTensor and x._level == level
        if d is None:
            if is_batched:
                raise ValueError(f"vmap({name}, ...): `{name}` can not return a BatchedTensor "
                                 f"when out_dim is None")
            result.append(x)
            continue
        if not isinstance(x, Tensor):
            raise ValueError(f"vmap({name}, ...): `{name}` must only return Tensors, got type "
                             f"{type(x)}. Did you mean to set out_dims= to None for output?")
        # An output that does not depend on the batch is the same for every example.
        value = x._value if is_batched else x.unsqueeze(0).expand((size,) + tuple(x.shape))
        n = value.dim()
        if not -n <= d < n:
            raise IndexError(f"Dimension out of range (expected to be in range of [{-n}, {n - 1}]"
                             f", but got {d})")
        result.append(value.movedim(0, d) if d % n else value)
    return tree_unflatten(result, spec)


def _chunked(func, size: int, dims: list, flat: list, spec, out_dims, randomness: str, kwargs,
             chunk_size: int):
    """vmap over chunks of the batch, joined; with randomness='same' every chunk draws the same
    values, as one vmap would."""
    state = default_generator.get_state() if randomness == "same" else None
    pieces = []
    for start in range(0, size, chunk_size):
        stop = min(start + chunk_size, size)
        chunk = [x if d is None else x.narrow(d, start, stop - start) for x, d in zip(flat, dims)]
        if state is not None:
            default_generator.set_state(state)
        pieces.append(_run(func, stop - start, dims, chunk, spec, out_dims, randomness, kwargs))
    columns = zip(*(tree_flatten(p)[0] for p in pieces))
    flat_out, odims, out_spec = _out_dims_of(func, pieces[0], out_dims)
    cat = _batching.ops["cat_fn"]
    joined = [column[0] if d is None else cat(list(column), dim=d)
              for column, d in zip(columns, odims)]
    return tree_unflatten(joined, out_spec)
