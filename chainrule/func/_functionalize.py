"""functionalize: a function without in-place ops and views, as torch.func has it.

PyTorch rewrites the program (in-place and out= ops into out-of-place ones, and views into
copies with ``remove='mutations_and_views'``) and writes the final values of mutated inputs
back into them. Run eagerly that computes what the function computes; what differs is
aliasing, which chainrule reproduces: an output aliasing an input the function mutated is a
new tensor, and with ``remove='mutations_and_views'`` no output is a view of an input or of
another output (an input returned unchanged stays itself).
"""

from __future__ import annotations

import functools
from collections.abc import Callable

from .._backend import xp
from .._batched import BatchedTensor
from .._dispatch import apply
from .._meta import MetaArray
from ..tensor import Tensor
from ._pytree import tree_flatten, tree_map

__all__ = ["functionalize"]

_REMOVE = ("mutations", "mutations_and_views")


def functionalize(func: Callable, *, remove: str = "mutations") -> Callable:
    """``func`` with its mutations (and views, with ``remove='mutations_and_views'``) removed;
    mutations of its inputs are applied back to them."""
    if remove not in _REMOVE:
        raise RuntimeError(
            "functionalize(f, remove='mutations'): received invalid argument for "
            f"remove={remove}. Valid options are:\n     remove='mutations': all inplace and out= "
            "operators will be removed from the program, and replaced with their out-of-place "
            "equivalents.\n     remove='mutations_and_views': In addition to the above, all "
            "aliasing operators {view} will be replaced with their non-aliasing counterparts, "
            "{view}_copy.\n")

    @functools.wraps(func)
    def functionalized(*args, **kwargs):
        inputs = [t for t in tree_flatten((args, kwargs))[0] if isinstance(t, Tensor)]
        before = [_version(t) for t in inputs]
        out = func(*args, **kwargs)
        mutated = [_memory(t) for t, v in zip(inputs, before) if _version(t) != v]
        kept = [t for t, v in zip(inputs, before) if _version(t) == v]
        if remove == "mutations":
            return tree_map(functools.partial(_rebased, mutated, {}), out)
        taken = [_memory(t) for t in inputs]
        return tree_map(functools.partial(_copied, kept, taken), out)

    return functionalized


def _rebased(mutated: list, copies: dict, value):
    """An output aliasing an input that ``func`` mutated, rebuilt on a copy of its base (one
    per base: outputs that alias each other still do, as in PyTorch's result)."""
    if not isinstance(value, Tensor) or not any(_shares(_memory(value), m) for m in mutated):
        return value
    view = value._extra.get("view") if value._extra else None
    base, steps = view if view else (value, ())
    copy = copies.get(id(base))
    if copy is None:
        copy = copies[id(base)] = base.clone()
    for op, params in steps:
        copy = apply(op, copy, **params)
    return copy


def _copied(kept: list, taken: list, value):
    """An output as a copy when it aliases an input or an earlier output (no views remain),
    unless it is an input ``func`` left unchanged."""
    if not isinstance(value, Tensor) or any(value is t for t in kept):
        return value
    memory = _memory(value)
    if any(_shares(memory, other) for other in taken):
        value = value.clone()
        memory = _memory(value)
    taken.append(memory)
    return value


def _version(t: Tensor) -> int:
    return t._vc[0] if t._vc is not None else 0


def _memory(t: Tensor):
    """The array holding ``t``'s values (a batched tensor's whole batch)."""
    while type(t) is BatchedTensor:
        t = t._value
    return t._data


def _shares(a, b) -> bool:
    if type(a) is MetaArray or type(b) is MetaArray:
        return a is b  # meta tensors have no memory to share
    return xp.may_share_memory(a, b)
