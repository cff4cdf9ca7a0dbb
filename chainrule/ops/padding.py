"""Padding: constant padding is a record (its adjoint is cropping, padding by the negated
amounts); reflect, replicate and circular padding join border slices (indexing to crop)."""

from __future__ import annotations

from .._backend import xp
from .._dispatch import apply
from ..tensor import Tensor
from ._nnutil import with_batch
from ._registry import defop
from .shape import cat


def _constant_pad(input, pad, value):
    """Pad (or crop, for negative amounts) the last len(pad) // 2 dims; pad is torch's order."""
    nd = len(pad) // 2
    pairs = [(pad[2 * i], pad[2 * i + 1]) for i in range(nd)][::-1]
    lead = input.ndim - nd
    shape = input.shape[:lead] + tuple(
        n + lo + hi for n, (lo, hi) in zip(input.shape[lead:], pairs))
    out = xp.full(shape, value, dtype=input.dtype)
    src = (slice(None),) * lead + tuple(
        slice(max(-lo, 0), n - max(-hi, 0)) for n, (lo, hi) in zip(input.shape[lead:], pairs))
    dst = (slice(None),) * lead + tuple(
        slice(max(lo, 0), m - max(hi, 0)) for m, (lo, hi) in zip(shape[lead:], pairs))
    out[dst] = input[src]
    return out


CONSTANT_PAD = defop(
    "constant_pad_nd",
    _constant_pad,
    ("input",),
    # The adjoint of padding is cropping: padding by the negated amounts.
    (lambda g, pad: apply(CONSTANT_PAD, g, pad=tuple(-p for p in pad), value=0),),
    jvp=lambda t_input, pad: apply(CONSTANT_PAD, t_input, pad=pad, value=0),
    batch=with_batch,  # the padded dims are trailing ones
)


def pad(input, pad, mode: str = "constant", value=None) -> Tensor:
    """Pad the last len(pad) // 2 dims; pad lists (before, after) from the last dim backwards."""
    pad = tuple(int(p) for p in pad)
    if len(pad) % 2:
        raise RuntimeError("Padding length must be divisible by 2")
    if len(pad) // 2 > input.ndim:
        raise RuntimeError("Padding length should be less than or equal to two times the input "
                           f"dimension but got padding length {len(pad)} and input of dimension "
                           f"{input.ndim}")
    if mode == "constant":
        return apply(CONSTANT_PAD, input, pad=pad, value=0 if value is None else value)
    if mode not in ("reflect", "replicate", "circular"):
        raise NotImplementedError(f"Unrecognised padding mode {mode}")
    if value is not None and value != 0:
        raise NotImplementedError(f"Padding mode \"{mode}\" doesn't take in value argument")
    nd = len(pad) // 2
    if nd not in (1, 2, 3) or input.ndim not in (nd + 1, nd + 2):
        raise NotImplementedError(
            f"Padding size {len(pad)} is not supported for {input.ndim}D input tensor.\n"
            "Supported combinations for non-constant padding:\n"
            "  - 2D or 3D input: padding size = 2 (pads last dimension)\n"
            "  - 3D or 4D input: padding size = 4 (pads last 2 dimensions)\n"
            "  - 4D or 5D input: padding size = 6 (pads last 3 dimensions)")
    out = input
    for i in range(nd):
        axis = input.ndim - 1 - i
        lo, hi = pad[2 * i], pad[2 * i + 1]
        n = input.shape[axis]
        if mode == "reflect" and (lo >= n or hi >= n):
            raise RuntimeError(f"Argument #4: Padding size should be less than the "
                               f"corresponding input dimension, but got: padding ({lo}, {hi}) "
                               f"at dimension {axis} of input {list(input.shape)}")
        if mode == "circular" and (lo > n or hi > n):
            raise RuntimeError("Padding value causes wrapping around more than once.")
        kept = n - max(-lo, 0) - max(-hi, 0)
        if kept > 0 and (mode != "circular" or max(lo, hi) <= kept):
            out = cat(_borders(out, axis, lo, hi, mode), axis)  # slices: no gather
            continue
        positions = xp.arange(-lo, n + hi)
        if mode == "reflect":
            index = xp.abs(positions)
            index = xp.where(index >= n, 2 * (n - 1) - index, index)
        elif mode == "replicate":
            index = xp.clip(positions, 0, n - 1)
        else:
            index = positions % n
        out = out[(slice(None),) * axis + (index,)]
    return out


def _borders(x, axis: int, lo: int, hi: int, mode: str) -> list:
    """x along ``axis`` cropped by negative amounts, with its ``lo`` and ``hi`` border slices:
    reflected (the edge not repeated) or the edge replicated from x, or wrapped around what the
    cropping left (PyTorch's circular padding)."""
    n = x.shape[axis]
    body = x.narrow(axis, max(-lo, 0), n - max(-lo, 0) - max(-hi, 0))
    lo, hi = max(lo, 0), max(hi, 0)
    if mode == "circular":
        x, n = body, body.shape[axis]
    if mode == "reflect":
        before, after = x.narrow(axis, 1, lo).flip(axis), x.narrow(axis, n - 1 - hi, hi).flip(axis)
    elif mode == "replicate":
        shape = list(x.shape)
        before = x.narrow(axis, 0, 1).expand(*shape[:axis], lo, *shape[axis + 1:])
        after = x.narrow(axis, n - 1, 1).expand(*shape[:axis], hi, *shape[axis + 1:])
    else:
        before, after = x.narrow(axis, n - lo, lo), x.narrow(axis, 0, hi)
    return [part for part in (before, body, after) if part.shape[axis]]


FUNCTIONS: dict = {}
METHODS: dict = {}
