"""rearrange: einops' pattern language for transposes, reshapes, squeezes and stacks, as
torch.func.rearrange (functorch.einops) reads it.

A pattern ``"b (h w) c -> b h w c"`` names the tensor's dims on the left, grouping those a dim
is split into, and the result's on the right; ``...`` stands for the dims no name covers. Each
name is an elementary dim; the tensor is reshaped to the left's elementary dims, permuted to the
right's order and reshaped to the right's groups. A ``1`` (or ``()``) on the right adds a dim
of size one. PyTorch binds a ``1`` (or ``()``) on the left to whatever size the dim has and
sums it away, and so does chainrule.
"""

from __future__ import annotations

import functools
import keyword
import math
import warnings

from .. import _batching
from ..tensor import Tensor

__all__ = ["rearrange"]

_ELLIPSIS = "\u2026"  # "..." once parsed: one character, so a name can never spell it


class DimensionBindError(Exception):
    """A dim's size cannot be bound: sizes that do not multiply to the dim's, or two unknown."""


class _Side:
    """One side of a pattern: its groups in order (a list of names per group, ``[]`` for a
    size-one axis, the ellipsis as the string itself) and the names it uses."""

    def __init__(self, text: str) -> None:
        self.groups: list = []
        self.names: set = set()
        self.has_ellipsis = False
        self.ellipsis_in_group = False
        self.other_numbers = False  # an anonymous axis of a size other than one
        if "." in text:
            if "..." not in text:
                raise ValueError("Expression may contain dots only inside ellipsis (...)")
            if text.count("...") != 1 or text.count(".") != 3:
                raise ValueError("Expression may contain dots only inside ellipsis (...); only "
                                 "one ellipsis for tensor ")
            text = text.replace("...", _ELLIPSIS)
            self.has_ellipsis = True
        group: list | None = None
        word = ""
        for char in text + " ":
            if char.isalnum() or char in ("_", _ELLIPSIS):
                word += char
                continue
            if char not in "() ":
                raise ValueError(f"Unknown character '{char}'")
            if word:
                self._add(word, group)
                word = ""
            if char == "(":
                if group is not None:
                    raise ValueError("Axis composition is one-level (brackets inside brackets "
                                     "not allowed)")
                group = []
            elif char == ")":
                if group is None:
                    raise ValueError("Brackets are not balanced")
                self.groups.append(group)
                group = None
        if group is not None:
            raise ValueError(f"Imbalanced parentheses in expression: '{text}'")

    def _add(self, word: str, group: list | None) -> None:
        if word in self.names:
            raise ValueError(f"Indexing expression contains duplicate dimension '{word}'")
        if word == _ELLIPSIS:
            self.names.add(word)
            (self.groups if group is None else group).append(word)
            self.ellipsis_in_group = group is not None
            return
        if word.isdecimal():
            if int(word) == 1:
                if group is None:
                    self.groups.append([])  # inside a group a 1 changes nothing
                return
            if int(word) < 1:
                raise ValueError(f"Anonymous axis should have positive length, not {int(word)}")
            self.other_numbers = True
            word = f"{word}-axis@{len(self.groups)}"  # anonymous: equal to no other
        else:
            _check_name(word)
        self.names.add(word)
        if group is None:
            self.groups.append([word])
        else:
            group.append(word)


def _check_name(name: str) -> None:
    if not name.isidentifier():
        raise ValueError(f"Invalid axis identifier: {name}\nnot a valid python identifier")
    if name[0] == "_" or name[-1] == "_":
        raise ValueError(f"Invalid axis identifier: {name}\naxis name should should not start "
                         "or end with underscore")
    if keyword.iskeyword(name):
        warnings.warn(f"It is discouraged to use axes names that are keywords: {name}",
                      RuntimeWarning, stacklevel=5)
    if name == "axis":
        warnings.warn("It is discouraged to use 'axis' as an axis name and will raise an error "
                      "in future", FutureWarning, stacklevel=5)


def _parse(pattern: str, axes_lengths: dict) -> tuple[_Side, _Side]:
    if pattern.count("->") != 1:
        raise ValueError("Pattern must contain a single '->' separator")
    if _ELLIPSIS in axes_lengths:
        raise ValueError(f"'{_ELLIPSIS}' is not an allowed axis identifier")
    left_text, right_text = pattern.split("->")
    left, right = _Side(left_text), _Side(right_text)
    if right.has_ellipsis and not left.has_ellipsis:
        raise ValueError(f"Ellipsis found in right side, but not left side of a pattern "
                         f"{pattern}")
    if left.has_ellipsis and left.ellipsis_in_group:
        raise ValueError(f"Ellipsis is parenthesis in the left side is not allowed: {pattern}")
    for length in axes_lengths.values():
        if type(length) is not int:
            raise TypeError(f"rearrange axis lengths must be integers, got: {type(length)}")
    if left.other_numbers or right.other_numbers:
        raise ValueError("rearrange only supports unnamed axes of size 1")
    if left.names ^ right.names:
        raise ValueError(f"Identifiers only on one side of rearrange expression (should be on "
                         f"both): {left.names ^ right.names}")
    if axes_lengths.keys() - left.names:
        raise ValueError(f"Identifiers not found in rearrange expression: "
                         f"{axes_lengths.keys() - left.names}")
    return left, right


@functools.lru_cache(256)
def _plan(ndim: int, pattern: str, lengths: tuple) -> tuple | None:
    """What rearranging an ``ndim``-dim tensor by ``pattern`` takes: the left's elementary
    dims (their PyTorch names d0, d1, ... and known sizes), the dims to sum away, the right's
    order and groups; None for the identity of a 0-dim tensor."""
    axes_lengths = dict(lengths)
    left, right = _parse(pattern, axes_lengths)
    if left.has_ellipsis:
        covered = sum(1 for g in left.groups if g != _ELLIPSIS)
        named = len(left.names) - 1 + sum(1 for g in left.groups if g == [])
        if named > ndim:
            raise ValueError(f"Number of dimensions in pattern ({named}) must be less than or "
                             f"equal to the number of dimensions in the tensor ({ndim})")
        extra = ndim - covered
    else:
        if len(left.groups) != ndim:
            raise ValueError(f"Number of dimensions in pattern ({len(left.groups)}) must be equal "
                             f"to the number of dimensions in the tensor ({ndim})")
        extra = 0
    # The elementary dims, numbered as PyTorch names its first-class dims.
    packs, index, summed = [], {}, []
    for group in left.groups:
        if group == _ELLIPSIS:
            for _ in range(extra):
                packs.append([len(index)])
                index[(_ELLIPSIS, len(packs))] = len(index)
            continue
        if not group:
            summed.append(len(index))
            index[("1", len(packs))] = len(index)
            packs.append([len(index) - 1])
            continue
        pack = []
        for name in group:
            index[name] = len(index)
            pack.append(index[name])
        packs.append(pack)
    if not index:
        return None
    ellipsis = [i for key, i in index.items() if isinstance(key, tuple) and key[0] == _ELLIPSIS]
    known = {index[name]: size for name, size in axes_lengths.items()}
    order, shape = [], []
    for group in right.groups:
        if group == _ELLIPSIS:  # its dims stay dims
            order += ellipsis
            shape += [[i] for i in ellipsis]
            continue
        ids = []
        for name in group:
            ids += ellipsis if name == _ELLIPSIS else [index[name]]
        order += ids
        shape.append(ids)
    return packs, known, summed, order, shape


def _bind(packs: list, known: dict, sizes: tuple) -> list:
    """The size of every elementary dim, from the tensor's dims and the given lengths."""
    out = dict(known)
    for pack, size in zip(packs, sizes):
        unknown = [i for i in pack if out.get(i, -1) < 0]
        if len(unknown) > 1:
            raise DimensionBindError(f"cannot infer the sizes of two dimensions at once "
                                     f"d{unknown[0]} and d{unknown[1]}")
        product = math.prod(out[i] for i in pack if i not in unknown)
        if unknown:
            if size % product:
                shown = tuple("?" if i in unknown else out[i] for i in pack)
                raise DimensionBindError(f"inferred dimension does not evenly fit into larger "
                                         f"dimension: {size} vs {shown}")
            out[unknown[0]] = size // product
        elif product != size:
            names = ", ".join(f"d{i}" for i in pack) + ("," if len(pack) == 1 else "")
            raise DimensionBindError(f"Dimension sizes to do not match ({size} != {product}) "
                                     f"when matching dimension pack ({names})")
    return [out[i] for i in range(len(out))]


def rearrange(tensor: Tensor | list | tuple, pattern: str, **axes_lengths: int) -> Tensor:
    """A native implementation of ``einops.rearrange`` for tensors (a sequence of tensors is
    stacked first)."""
    if not isinstance(tensor, Tensor):
        tensor = _batching.ops["stack_fn"](list(tensor))
    plan = _plan(tensor.ndim, pattern, tuple(axes_lengths.items()))
    if plan is None:
        return tensor
    packs, known, summed, order, groups = plan
    sizes = _bind(packs, known, tuple(tensor.shape))
    out = tensor.reshape(sizes)
    if summed:
        out = out.sum(dim=summed)
        kept = [i for i in range(len(sizes)) if i not in summed]
        order = [kept.index(i) for i in order]
        sizes = [sizes[i] for i in kept]
        groups = [[kept.index(i) for i in g] for g in groups]
    out = out.permute(order)
    return out.reshape([math.prod(sizes[i] for i in g) for g in groups])
