"""torch.quasirandom: SobolEngine, the Sobol low-discrepancy sequence (optionally scrambled).

Points follow PyTorch's engine bit for bit: Joe and Kuo's direction numbers (new-joe-kuo-6.21201,
read from the copy SciPy ships) extended by Bratley and Fox's recurrence (ACM TOMS 14(1), 1988,
Algorithm 659), points in Gray-code order (point k+1 is point k XOR the direction number at the
lowest zero bit of k), and Owen-style scrambling by random lower triangular bit matrices and a
random digital shift drawn from torch's generator.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path

from ._backend import float32, float64, get_default_dtype, xp
from ._creation import Generator, from_numpy, randint
from .ops.elementwise import _unsupported
from .ops.shape import cat
from .tensor import Tensor

__all__ = ["SobolEngine"]

_DIRECTIONS: dict = {}


def _direction_numbers():
    """Joe and Kuo's primitive polynomials and initial direction numbers, one row per
    dimension, from SciPy's ``stats/_sobol_direction_numbers.npz`` (read without importing
    SciPy)."""
    if not _DIRECTIONS:
        spec = importlib.util.find_spec("scipy")
        path = None
        if spec is not None and spec.submodule_search_locations:
            path = (Path(spec.submodule_search_locations[0]) / "stats"
                    / "_sobol_direction_numbers.npz")
        if path is None or not path.exists():
            raise ImportError("SobolEngine needs the Sobol direction numbers SciPy ships: "
                              "pip install 'chainrule[special]'")
        with xp.load(path) as data:
            _DIRECTIONS.update(poly=data["poly"], vinit=data["vinit"])
    return _DIRECTIONS["poly"], _DIRECTIONS["vinit"]


def _lowest_zero_bit(k):
    """For each k, the position of its lowest zero bit (the number of trailing ones)."""
    return xp.log2(~k & (k + 1)).astype(xp.int64)  # log2 of a power of two is exact


def _gray(k: int) -> int:
    return k ^ (k >> 1)


def _initial_state(dimension: int, maxbit: int):
    """The direction numbers v[d, j] as maxbit-bit integers (column j scaled by
    2^(maxbit - 1 - j))."""
    poly, vinit = _direction_numbers()
    poly = poly[:dimension]
    degree = xp.floor(xp.log2(poly)).astype(xp.int64)  # the polynomials' degrees
    v = xp.zeros((dimension, maxbit), dtype=xp.int64)
    v[:, :vinit.shape[1]] = xp.where(xp.arange(vinit.shape[1]) < degree[:, None],
                                     vinit[:dimension], 0)
    v[0] = 1
    rows = xp.arange(1, dimension)
    degree, poly = degree[1:], poly[1:]
    # Bratley and Fox's recurrence past the initial numbers: v_j = v_{j-deg} ^ (v_{j-deg} << deg)
    # ^ XOR over the polynomial's inner coefficients a_k of (v_{j-k} << k)
    for j in range(1, maxbit):
        beyond = j >= degree
        new = v[rows, xp.maximum(j - degree, 0)]
        for k in range(1, min(j, int(degree.max(initial=0))) + 1):
            coefficient = (poly >> xp.maximum(degree - k, 0)) & 1 & (k <= degree)
            new ^= xp.where(coefficient == 1, v[rows, j - k] << k, 0)
        v[rows, j] = xp.where(beyond, new, v[rows, j])
    return v << xp.arange(maxbit - 1, -1, -1, dtype=xp.int64)


def _scrambled_state(v, ltm):
    """The direction numbers v (dimension x maxbit) multiplied over GF(2) by each dimension's
    lower triangular bit matrix ltm (dimension x maxbit x maxbit, diagonal taken as ones):
    output bit p (from the top) of v[d, j] is the parity of row p of the matrix AND v[d, j]."""
    maxbit = v.shape[1]
    rows = ltm.astype(xp.int64, copy=True)
    rows[:, xp.arange(maxbit), xp.arange(maxbit)] = 1
    rows = rows @ (1 << xp.arange(maxbit - 1, -1, -1, dtype=xp.int64))  # row p as an integer
    bits = xp.arange(maxbit, dtype=xp.int64)
    v_bits = (v[:, :, None] >> bits) & 1  # (d, j, k): bit k of v[d, j]
    row_bits = (rows[:, :, None] >> bits) & 1  # (d, p, k): bit k of row p
    parity = xp.einsum("djk,dpk->djp", v_bits, row_bits) & 1
    return parity @ (1 << xp.arange(maxbit - 1, -1, -1, dtype=xp.int64))


class SobolEngine:
    """A generator of Sobol sequence points in [0, 1)^dimension, optionally scrambled."""

    MAXBIT = 30
    MAXDIM = 21201

    def __init__(self, dimension: int, scramble: bool = False, seed: int | None = None) -> None:
        if dimension > self.MAXDIM or dimension < 1:
            raise ValueError(f"Supported range of dimensionality for SobolEngine is "
                             f"[1, {self.MAXDIM}]")
        self.seed = seed
        self.scramble = scramble
        self.dimension = dimension
        state = _initial_state(dimension, self.MAXBIT)
        if scramble:
            generator = None if seed is None else Generator().manual_seed(seed)
            shift_bits = randint(2, (dimension, self.MAXBIT), generator=generator)
            shift = shift_bits._data @ (1 << xp.arange(self.MAXBIT, dtype=xp.int64))
            ltm = randint(2, (dimension, self.MAXBIT, self.MAXBIT), generator=generator)
            state = _scrambled_state(state, xp.tril(ltm._data))
        else:
            shift = xp.zeros(dimension, dtype=xp.int64)
        self.sobolstate = from_numpy(state)
        self.shift = from_numpy(shift)
        self.quasi = self.shift.clone()
        # in the default dtype of the engine's creation, as PyTorch's (a float64 draw's first
        # point of a scrambled engine keeps its float32 rounding)
        self._first_point = (self.quasi / 2**self.MAXBIT).reshape(1, -1)
        self.num_generated = 0

    def _points(self, n: int, index: int, dtype) -> Tensor:
        """The n points after the current one (the (index+1)-th generated), as dtype; advances
        quasi."""
        if dtype not in (float32, float64):
            raise _unsupported("_sobol_engine_draw", dtype.np)
        if n < 0:
            raise RuntimeError(f"Trying to create tensor with negative dimension {n}: "
                               f"[{n}, {self.dimension}]")
        steps = self.sobolstate._data[:, _lowest_zero_bit(xp.arange(index, index + n,
                                                                    dtype=xp.int64))]
        points = xp.bitwise_xor.accumulate(steps, axis=1) ^ self.quasi._data[:, None]
        if n:
            self.quasi = from_numpy(points[:, -1].copy())
        scale = dtype.np.type(1.0 / (1 << self.MAXBIT))
        return from_numpy(xp.ascontiguousarray(points.T).astype(dtype.np) * scale)

    def draw(self, n: int = 1, out: Tensor | None = None, dtype=None) -> Tensor:
        """The next n points of the sequence, an (n, dimension) tensor."""
        if dtype is None:
            dtype = get_default_dtype()
        if self.num_generated == 0:
            first = self._first_point.to(dtype)
            result = first if n == 1 else cat((first, self._points(n - 1, 0, dtype)), dim=-2)
        else:
            result = self._points(n, self.num_generated - 1, dtype)
        self.num_generated += n
        if out is not None:
            out.resize_as_(result).copy_(result)
            return out
        return result

    def draw_base2(self, m: int, out: Tensor | None = None, dtype=None) -> Tensor:
        """The next 2^m points, keeping the total a power of two (the sequence's balance)."""
        n = 2**m
        total_n = self.num_generated + n
        if total_n & (total_n - 1) != 0:
            raise ValueError(f"The balance properties of Sobol' points require n to be a power "
                             f"of 2. {self.num_generated} points have been previously "
                             f"generated, then: n={self.num_generated}+2**{m}={total_n}. If you "
                             f"still want to do this, please use 'SobolEngine.draw()' instead.")
        return self.draw(n=n, out=out, dtype=dtype)

    def reset(self) -> SobolEngine:
        """Go back to the sequence's first point."""
        self.quasi.copy_(self.shift)
        self.num_generated = 0
        return self

    def fast_forward(self, n: int) -> SobolEngine:
        """Skip the next n points."""
        index = self.num_generated - 1 if self.num_generated else 0
        skip = n if self.num_generated else n - 1
        if skip > 0:
            # Stepping from point a to point b XORs the direction numbers at the bits where
            # the Gray codes of a and b differ.
            flips = _gray(index) ^ _gray(index + skip)
            bits = [j for j in range(self.MAXBIT) if flips >> j & 1]
            step = xp.bitwise_xor.reduce(self.sobolstate._data[:, bits], axis=1)
            self.quasi.copy_(from_numpy(step ^ self.quasi._data))
        self.num_generated += n
        return self

    def __repr__(self) -> str:
        settings = [f"dimension={self.dimension}"]
        if self.scramble:
            settings.append("scramble=True")
        if self.seed is not None:
            settings.append(f"seed={self.seed}")
        return f"{type(self).__name__}({', '.join(settings)})"

