"""Sampling at arbitrary points: affine_grid (the sampling grid of a batch of affine maps) and
grid_sample (the input read at grid points: bilinear, nearest or bicubic, with zeros, border or
reflection padding).

Both are compositions: the corner indices are the floors of the coordinates, without gradient;
the interpolation weights are differentiable functions of the coordinates, and the reads are
gathers, so every order of derivative comes from the ops they use.
"""

from __future__ import annotations

import itertools
import math
import warnings

from .._backend import xp
from ..tensor import Tensor
from ._nnutil import const
from .elementwise import where

GRID_SAMPLE_INTERPOLATION_MODES = {"bilinear": 0, "nearest": 1, "bicubic": 2}
GRID_SAMPLE_PADDING_MODES = {"zeros": 0, "border": 1, "reflection": 2}

_ALIGN_WARNING = ("Default grid_sample and affine_grid behavior has changed to align_corners=False "
                  "since 1.3.0. Please specify align_corners=True if the old behavior is desired. "
                  "See the documentation of grid_sample for details.")


def _align(align_corners) -> bool:
    if align_corners is None:
        warnings.warn(_ALIGN_WARNING, stacklevel=3)
        return False
    return bool(align_corners)


def _base_coordinates(n: int, align_corners: bool):
    """The n normalised coordinates of a dim's pixels (centres, or corners if aligned)."""
    if n <= 1:
        return xp.zeros(n)
    steps = xp.linspace(-1.0, 1.0, n)
    return steps if align_corners else steps * (n - 1) / n


def affine_grid(theta: Tensor, size, align_corners=None) -> Tensor:
    """The (N, *spatial, nd) grid of points theta maps the output pixels to."""
    align_corners = _align(align_corners)
    if theta._data.dtype.kind not in "fV":
        raise ValueError(f"Expected theta to have floating point type, but got {theta.dtype}")
    size = tuple(int(s) for s in size)
    if len(size) not in (4, 5):
        raise NotImplementedError("affine_grid only supports 4D and 5D sizes, for 2D and 3D "
                                  f"affine transforms, respectively. Got size {size}.")
    nd = len(size) - 2
    if theta.ndim != 3 or tuple(theta.shape[1:]) != (nd, nd + 1):
        raise ValueError(f"Expected a batch of {nd}D affine matrices of shape Nx{nd}x{nd + 1} for "
                         f"size {size}. Got {theta.shape!r}.")
    spatial = size[2:]
    if align_corners and min(spatial) == 1:
        warnings.warn("Since version 1.3.0, affine_grid behavior has changed for unit-size grids "
                      "when align_corners=True. This is not an intended use case of affine_grid. "
                      "See the documentation of affine_grid for details.", stacklevel=2)
    if min(size) <= 0:
        raise ValueError(f"Expected non-zero, positive output size. Got {size}")
    if theta.shape[0] != size[0]:
        raise RuntimeError("Expected size for first two dimensions of batch2 tensor to be: "
                           f"[{size[0]}, {nd + 1}] but got: [{theta.shape[0]}, {nd + 1}].")
    # Columns x (the last dim), y, z, then 1.
    axes = [_base_coordinates(n, align_corners) for n in spatial]
    mesh = xp.meshgrid(*axes, indexing="ij")
    base = xp.stack([m.reshape(-1) for m in reversed(mesh)] + [xp.ones(math.prod(spatial))], -1)
    grid = const(base.astype(theta._data.dtype)) @ theta.transpose(1, 2)
    return grid.reshape((size[0],) + spatial + (nd,))


# ---- grid_sample --------------------------------------------------------------------------------


def _unnormalize(coord: Tensor, n: int, align_corners: bool) -> Tensor:
    if align_corners:
        return (coord + 1) * ((n - 1) / 2)
    return ((coord + 1) * n - 1) / 2


def _reflect(coord: Tensor, twice_low: int, twice_high: int) -> Tensor:
    """coord reflected at the bounds [twice_low / 2, twice_high / 2] until it is inside."""
    if twice_low == twice_high:
        return coord * 0
    low = twice_low / 2
    span = (twice_high - twice_low) / 2
    distance = (coord - low).abs()
    extra = distance.fmod(span)
    flips = (distance.detach() / span).floor()
    even = flips.fmod(2) == 0
    return where(even, extra + low, span - extra + low)


def _pad_coordinate(coord: Tensor, n: int, padding_mode: str, align_corners: bool) -> Tensor:
    if padding_mode == "border":
        return coord.clamp(0, n - 1)
    if padding_mode == "reflection":
        if align_corners:
            coord = _reflect(coord, 0, 2 * (n - 1))
        else:
            coord = _reflect(coord, -1, 2 * n - 1)
        return coord.clamp(0, n - 1)
    return coord


def _read(flat: Tensor, positions, spatial) -> Tensor:
    """flat (N, C, P) read at integer positions (one (N, *out) tensor per spatial dim, last dim
    first); zero where a position is outside the input."""
    n, c = flat.shape[:2]
    inside = None
    index = None
    for k, size in enumerate(spatial):  # positions[0] is x, the last dim
        pos = positions[len(spatial) - 1 - k]
        ok = (pos >= 0) & (pos < size)
        inside = ok if inside is None else inside & ok
        safe = pos.clamp(0, size - 1)
        index = safe if index is None else index * size + safe
    out_shape = tuple(index.shape[1:])
    gathered = flat.gather(2, index.reshape(n, 1, -1).expand(n, c, math.prod(out_shape)))
    values = gathered.reshape((n, c) + out_shape)
    return values * inside.unsqueeze(1).to(flat.dtype)


def _cubic_weights(t: Tensor, a: float = -0.75):
    """The four cubic-convolution weights (Keys 1981, a = -0.75) of the taps at offsets -1, 0,
    1 and 2 from the floor, at fractional position t."""

    def near(x):
        return ((a + 2) * x - (a + 3)) * x * x + 1

    def far(x):
        return ((a * x - 5 * a) * x + 8 * a) * x - 4 * a

    return far(t + 1), near(t), near(1 - t), far(2 - t)


def grid_sample(input: Tensor, grid: Tensor, mode: str = "bilinear", padding_mode: str = "zeros",
                align_corners=None) -> Tensor:
    """input (N, C, *spatial) read at the normalised points of grid (N, *out, nd)."""
    if mode not in GRID_SAMPLE_INTERPOLATION_MODES:
        raise ValueError("nn.functional.grid_sample(): expected mode to be 'bilinear', 'nearest' "
                         f"or 'bicubic', but got: '{mode}'")
    if padding_mode not in GRID_SAMPLE_PADDING_MODES:
        raise ValueError("nn.functional.grid_sample(): expected padding_mode to be 'zeros', "
                         f"'border', or 'reflection', but got: '{padding_mode}'")
    align_corners = _align(align_corners)
    nd = input.ndim - 2
    if input.ndim not in (4, 5) or grid.ndim != input.ndim:
        raise RuntimeError("grid_sampler(): expected 4D or 5D input and grid with same number of "
                           f"dimensions, but got input with sizes {list(input.shape)} and grid "
                           f"with sizes {list(grid.shape)}")
    if grid.shape[0] != input.shape[0]:
        raise RuntimeError("grid_sampler(): expected grid and input to have same batch size, but "
                           f"got input with sizes {list(input.shape)} and grid with sizes "
                           f"{list(grid.shape)}")
    if grid.shape[-1] != nd:
        raise RuntimeError(f"grid_sampler(): expected grid to have size {nd} in last dimension, "
                           f"but got grid with sizes {list(grid.shape)}")
    if mode == "bicubic" and nd != 2:
        raise RuntimeError("grid_sampler(): bicubic interpolation only supports 4D input")
    spatial = tuple(input.shape[2:])
    flat = input.reshape(input.shape[0], input.shape[1], -1)
    # Coordinate i reads spatial dim -1 - i (x is the last dim).
    sizes = spatial[::-1]
    coords = [_unnormalize(grid[..., i], sizes[i], align_corners) for i in range(nd)]
    if mode == "bicubic":
        return _bicubic(flat, coords, spatial, padding_mode, align_corners)
    coords = [_pad_coordinate(c, n, padding_mode, align_corners) for c, n in zip(coords, sizes)]
    if mode == "nearest":
        rounded = [c.round() for c in coords]
        out = _read(flat, [r.detach().long() for r in rounded], spatial)
        # The grid stays in the graph with PyTorch's zero gradient (round's).
        return where(const(xp.ones((), dtype=bool)), out, rounded[0].unsqueeze(1))
    lows = [c.detach().floor() for c in coords]
    fractions = [c - low for c, low in zip(coords, lows)]
    lows = [low.long() for low in lows]
    total = None
    for corner in itertools.product((0, 1), repeat=nd):
        weight = None
        for f, bit in zip(fractions, corner):
            w = f if bit else 1 - f
            weight = w if weight is None else weight * w
        term = _read(flat, [low + bit for low, bit in zip(lows, corner)], spatial)
        term = term * weight.unsqueeze(1)
        total = term if total is None else total + term
    return total


def _bicubic(flat, coords, spatial, padding_mode, align_corners):
    x, y = coords
    x0, y0 = x.detach().floor(), y.detach().floor()
    wx, wy = _cubic_weights(x - x0), _cubic_weights(y - y0)
    height, width = spatial
    total = None
    for j in range(4):
        row = None
        for i in range(4):
            # Padding applies to each tap's integer coordinate (PyTorch's bounded reads).
            tx = _pad_coordinate(x0 + (i - 1), width, padding_mode, align_corners)
            ty = _pad_coordinate(y0 + (j - 1), height, padding_mode, align_corners)
            value = _read(flat, [tx.long(), ty.long()], spatial) * wx[i].unsqueeze(1)
            row = value if row is None else row + value
        row = row * wy[j].unsqueeze(1)
        total = row if total is None else total + row
    return total
