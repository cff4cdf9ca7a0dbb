"""PyTorch's CPU random streams, bit for bit: the Mersenne Twister behind ``torch.Generator`` and
the fixed transformations ATen's CPU kernels apply to its words.

PyTorch's engine is the reference mt19937 (seeded with ``init_genrand`` on the seed's low 32 bits,
tempered as the reference tempers), which NumPy's ``MT19937`` bit generator equals word for
word, so the words come from NumPy in bulk. A 64-bit draw is two words, the first the high half.
A float32 uniform keeps the low 24 bits of one word, a float64 uniform the low 53 bits of a 64-bit
draw. Each sampler below names the ATen kernel it reproduces; all are vectorised except where the
number of words depends on the values (randperm's swaps, poisson's rejections), which loop.

PyTorch's kernels are built with FMA contraction (GCC fuses ``a * b + c``), so several transforms
round once where the C source reads as two roundings: ``fma32``/``fma64`` do the same.
"""

from __future__ import annotations

import math
import struct

from ._backend import np_finfo, xp

__all__ = ["Engine", "STATE_SIZE", "InvalidState", "uniform", "normal", "integers", "bits",
           "bernoulli", "exponential", "geometric", "cauchy", "log_normal", "randperm",
           "multinomial", "poisson", "fma32", "fma64"]

_N = 624  # words of mt19937 state
_F32, _F64, _U64 = xp.float32, xp.float64, xp.uint64


# ---- the engine and its state --------------------------------------------------------------


def _seeded_key(seed: int):
    """mt19937's state after ``init_genrand(seed & 0xffffffff)`` (the reference seeding)."""
    key = [seed & 0xFFFFFFFF]
    for i in range(1, _N):
        x = key[-1]
        key.append((1812433253 * (x ^ (x >> 30)) + i) & 0xFFFFFFFF)
    return xp.array(key, dtype=xp.uint32)


class InvalidState(ValueError):
    """A state that PyTorch's CPU generator would refuse (its message in ``args[0]``)."""


# PyTorch's CPUGeneratorImplState: the legacy THGeneratorState (seed, left, seeded, next, the 624
# state words as uint64, three doubles of which only normal_y is used, normal_is_valid), padded
# to 8 bytes, then the cached float normal and its flag, padded: 5056 bytes.
_HEAD = struct.Struct("<QiiQ")
_TAIL = struct.Struct("<dddi4xf?3x")
STATE_SIZE = _HEAD.size + 8 * _N + _TAIL.size


class Engine:
    """An mt19937 stream with the rest of PyTorch's CPU generator state: the seed, and the
    second value of the last Box-Muller pair, cached for the next draw (double and float)."""

    __slots__ = ("bits", "numpy", "seed", "normal", "normal_float")

    def __init__(self, seed: int) -> None:
        self.bits = xp.random.MT19937()
        self.numpy = xp.random.Generator(self.bits)  # its full-range integers are raw words
        self.reseed(seed)

    def reseed(self, seed: int) -> None:
        self.seed = seed
        self.normal = self.normal_float = None
        self._set(_seeded_key(seed), _N)

    def _set(self, key, pos: int) -> None:
        self.bits.state = {"bit_generator": "MT19937", "state": {"key": key, "pos": pos}}

    def position(self) -> tuple:
        """Everything a draw can change, comparable with ==."""
        state = self.bits.state["state"]
        return state["pos"], state["key"].tobytes(), self.normal, self.normal_float

    def words(self, n: int):
        """The next ``n`` 32-bit outputs (uint32)."""
        return self.numpy.integers(0, 2**32, size=n, dtype=xp.uint32)

    def words64(self, n: int):
        """The next ``n`` 64-bit outputs: two words each, the first the high half (NumPy's
        MT19937 makes its 64-bit integers the same way)."""
        return self.numpy.integers(0, 2**64, size=n, dtype=_U64)

    def uniform32(self, n: int):
        """float32 uniforms on [0, 1): a word's low 24 bits times 2**-24."""
        return (self.words(n) & xp.uint32(0xFFFFFF)).astype(_F32) * _F32(2.0**-24)

    def uniform64(self, n: int):
        """float64 uniforms on [0, 1): a 64-bit draw's low 53 bits times 2**-53."""
        return (self.words64(n) & _U64(2**53 - 1)).astype(_F64) * 2.0**-53

    def state_bytes(self) -> bytes:
        """The state in PyTorch's layout (``torch.Generator.get_state``)."""
        state = self.bits.state["state"]
        key, pos = state["key"], state["pos"]
        if pos == _N:  # nothing left before the next twist: just seeded, or all words read
            fresh = key[1] == (1812433253 * (int(key[0]) ^ (int(key[0]) >> 30)) + 1) % 2**32
            nxt = 0 if fresh else _N
        else:
            nxt = pos
        head = _HEAD.pack(self.seed, _N + 1 - pos, 1, nxt)
        tail = _TAIL.pack(0.0, self.normal or 0.0, 0.0, self.normal is not None,
                          self.normal_float or 0.0, self.normal_float is not None)
        return head + key.astype("<u8").tobytes() + tail

    def load(self, data: bytes) -> None:
        """Set the state from PyTorch's layout, checking it as PyTorch does."""
        if len(data) != STATE_SIZE:
            raise InvalidState(f"Expected a CPUGeneratorImplState of size {STATE_SIZE} but found "
                               f"the input RNG state size to be {len(data)}")
        seed, left, seeded, nxt = _HEAD.unpack_from(data)
        _, normal, _, normal_valid, normal_float, float_valid = _TAIL.unpack_from(
            data, _HEAD.size + 8 * _N)
        if not (seeded and 0 < left <= _N and nxt <= _N):
            raise InvalidState("Invalid mt19937 state")
        key = xp.frombuffer(data, dtype="<u8", count=_N, offset=_HEAD.size).astype(xp.uint32)
        # PyTorch reads left - 1 more words before it twists: NumPy's position says the same.
        self._set(key, _N + 1 - left)
        self.seed = seed
        self.normal = normal if normal_valid else None
        self.normal_float = normal_float if float_valid else None


# ---- fused multiply-add, rounded once ----------------------------------------------------------


def fma32(a, b, c):
    """float32 ``a * b + c`` with one rounding. The product is exact in float64; the float64 sum
    is rounded again to float32, which is wrong only when it lands on a float32 halfway point
    while the exact sum does not: those are nudged toward the exact sum."""
    s = xp.multiply(a, b, dtype=_F64)
    s += c
    out = s.astype(_F32)
    tie = (s.view(_U64) & _U64(0x1FFFFFFF)) == _U64(0x10000000)
    if tie.any():
        tie = xp.flatnonzero(tie)
        t = s.reshape(-1)[tie]
        p = _gather(a, tie) * _gather(b, tie)
        err = (p - (t - (t - p))) + (_gather(c, tie) - (t - p))  # p + c == t + err exactly
        inexact = err != 0  # an exact halfway point is rounded to even, as it should be
        flat = out.reshape(-1)
        flat[tie[inexact]] = xp.nextafter(t[inexact], xp.copysign(xp.inf, err[inexact]))
    return out


def _gather(x, where):
    """The float64 values of ``x`` (a number or an array of the result's shape) at flat
    positions."""
    x = xp.asarray(x, dtype=_F64)
    return x if x.ndim == 0 else x.reshape(-1)[where]


def _split(a):
    """Veltkamp's split of a double into two halves of 26 bits."""
    t = 134217729.0 * a
    hi = t - (t - a)
    return hi, a - hi


def fma64(a, b, c):
    """float64 ``a * b + c`` with one rounding: the exact product and sum as pairs of doubles,
    their small parts added rounding to odd, then one round to nearest (Boldo and Melquiond,
    "Emulation of FMA and correctly rounded sums", IEEE Trans. Computers 57(4), 2008)."""
    a, b, c = (xp.asarray(v, dtype=_F64) for v in (a, b, c))
    uh = a * b
    ah, al = _split(a)
    bh, bl = _split(b)
    ul = ((ah * bh - uh) + ah * bl + al * bh) + al * bl  # a * b == uh + ul
    th = c + uh
    z = th - c
    tl = (c - (th - z)) + (uh - z)  # c + uh == th + tl
    v = tl + ul
    z = v - tl
    err = (tl - (v - z)) + (ul - z)
    even = (xp.asarray(v).view(_U64) & _U64(1)) == 0
    v = xp.where((err != 0) & even, xp.nextafter(v, xp.copysign(xp.inf, err)), v)  # to odd
    return th + v


# ---- uniform, normal --------------------------------------------------------------------------


def _opmath(dtype):
    """The precision PyTorch computes a dtype's samples in (float for half)."""
    return xp.dtype(_F64) if xp.dtype(dtype) == _F64 else xp.dtype(_F32)


def uniform(engine: Engine, n: int, dtype, low: float = 0.0, high: float = 1.0):
    """uniform_kernel: ``x * (to - from) + from`` fused, in float32 (float for half) or float64,
    a result that rounds up to ``to`` replaced by ``from``."""
    if _opmath(dtype) == _F64:
        x = engine.uniform64(n)
        v = x if (low, high) == (0.0, 1.0) else fma64(x, high - low, low)
    else:
        x = engine.uniform32(n)
        lo, hi = _F32(low), _F32(high)
        v = x if (low, high) == (0.0, 1.0) else fma32(x, hi - lo, lo)
    if (low, high) == (0.0, 1.0) and xp.dtype(dtype) == v.dtype:
        return v  # below 1 already
    v = v.astype(dtype, copy=False)
    top = xp.asarray(high).astype(dtype)
    return xp.where(v == top, xp.asarray(low).astype(dtype), v)


def _box_muller(engine: Engine, n: int):
    """``n`` standard normals of normal_distribution<double>: each pair of uniforms (u1, u2)
    gives r cos(2 pi u1), then r sin(2 pi u1) (r = sqrt(-2 log1p(-u2))), the second kept in the
    generator for the next draw."""
    out = xp.empty(n)
    start = 0
    if engine.normal is not None and n:
        out[0], engine.normal, start = engine.normal, None, 1
    pairs = (n - start + 1) // 2
    u = engine.uniform64(2 * pairs).reshape(pairs, 2)
    r = xp.sqrt(-2.0 * xp.log1p(-u[:, 1]))
    theta = 2.0 * math.pi * u[:, 0]
    both = xp.stack([r * xp.cos(theta), r * xp.sin(theta)], axis=1).reshape(-1)
    out[start:] = both[:n - start]
    if (n - start) % 2:
        engine.normal = float(both[-1])
    return out


# avx_mathfun.h (Pommier's sse_mathfun in AVX, Cephes polynomials), as PyTorch's AVX2 kernels run
# it: every product that feeds a sum is fused.
_LOG_P = [_F32(c) for c in (7.0376836292e-2, -1.1514610310e-1, 1.1676998740e-1, -1.2420140846e-1,
                            1.4249322787e-1, -1.6668057665e-1, 2.0000714765e-1, -2.4999993993e-1,
                            3.3333331174e-1)]
_SIN_P = [_F32(c) for c in (-1.9515295891e-4, 8.3321608736e-3, -1.6666654611e-1)]
_COS_P = [_F32(c) for c in (2.443315711809948e-5, -1.388731625493765e-3, 4.166664568298827e-2)]
_DP = [_F32(c) for c in (-0.78515625, -2.4187564849853515625e-4, -3.77489497744594108e-8)]


def _log_avx2(x):
    """log256_ps for x in [2**-24, 1]."""
    bits = x.view(xp.int32)
    e = ((bits >> 23) - 126).astype(_F32)
    m = ((bits & ~0x7F800000) | 0x3F000000).view(_F32)  # the mantissa in [0.5, 1)
    small = m < _F32(0.707106781186547524)
    e -= small
    m = (m - _F32(1)) + xp.where(small, m, _F32(0))
    z = m * m
    y = xp.full_like(m, _LOG_P[0])
    for p in _LOG_P[1:]:
        y = fma32(y, m, p)
    y = fma32(y * m, z, e * _F32(-2.12194440e-4))
    y = y - z * _F32(0.5)
    return (m + y) + e * _F32(0.693359375)  # e (|e| < 2**5) times 355/512 is exact: one rounding


def _sincos_avx2(x):
    """sincos256_ps for x in [0, 2 pi]: (sin x, cos x)."""
    j = (x * _F32(1.27323954473516)).astype(xp.int32)  # by pi/4, truncated
    j = (j + 1) & ~1
    y = j.astype(_F32)
    # x - j pi/4 in three parts (Cody and Waite); j < 2**4 times the first two is exact, so
    # their fused forms round once as float32 sums do.
    x = x + y * _DP[0]
    x = x + y * _DP[1]
    x = fma32(y, _DP[2], x)
    z = x * x
    c = fma32(fma32(_COS_P[0], z, _COS_P[1]), z, _COS_P[2])
    c = fma32(c * z, z, -(z * _F32(0.5))) + _F32(1)
    s = fma32(fma32(_SIN_P[0], z, _SIN_P[1]), z, _SIN_P[2])
    s = fma32(s * z, x, x)
    swap = (j & 2) != 0
    sin, cos = xp.where(swap, c, s), xp.where(swap, s, c)
    sin_sign = ((j & 4) << 29).astype(xp.uint32)
    cos_sign = ((~(j - 2) & 4) << 29).astype(xp.uint32)
    return (sin.view(xp.uint32) ^ sin_sign).view(_F32), (cos.view(xp.uint32) ^ cos_sign).view(_F32)


def _scaled(x, mean: float, std: float, fma):
    """``fma(x, std, mean)``; for N(0, 1) that is ``x + 0`` (which turns -0 into +0)."""
    return x + x.dtype.type(0) if (mean, std) == (0.0, 1.0) else fma(x, std, mean)


def _fill16(u, mean: float, std: float):
    """NormalFill16 on rows of 16 uniforms: the first 8 give the radii, the last 8 the angles;
    the cosines fill the first half, the sines the second."""
    u1, u2 = 1 - u[:, :8], u[:, 8:]
    if u.dtype == _F64:
        radius = xp.sqrt(-2 * xp.log(u1))
        theta = 2.0 * math.pi * u2
        both = xp.concatenate([radius * xp.cos(theta), radius * xp.sin(theta)], axis=1)
        return _scaled(both, mean, std, fma64)
    radius = xp.sqrt(_F32(-2) * _log_avx2(u1))
    sin, cos = _sincos_avx2(_F32(2 * math.pi) * u2)
    both = xp.concatenate([radius * cos, radius * sin], axis=1)
    return _scaled(both, _F32(mean), _F32(std), fma32)


_ROWS = 4096  # rows of 16 transformed at a time: the temporaries stay in the cache


def normal(engine: Engine, n: int, dtype, mean: float = 0.0, std: float = 1.0,
           contiguous: bool = True):
    """normal_kernel. At least 16 contiguous elements: all uniforms first, Box-Muller on blocks
    of 16, and a partial last block recomputed from 16 new uniforms over the last 16 elements
    (float32 as PyTorch's AVX2 kernel computes it). Otherwise one element at a time from
    normal_distribution<double>, ``value * std + mean`` fused, then cast."""
    if n >= 16 and contiguous:
        draw = engine.uniform32 if _opmath(dtype) == _F32 else engine.uniform64
        full = n // 16 * 16
        # Half is computed 16 at a time in float, so the partial block is not drawn twice.
        u = draw(full if xp.dtype(dtype).itemsize == 2 else n)  # half and bfloat16
        out = xp.empty(n, dtype=u.dtype)
        rows, blocks = u[:full].reshape(-1, 16), out[:full].reshape(-1, 16)
        for start in range(0, len(rows), _ROWS):
            blocks[start:start + _ROWS] = _fill16(rows[start:start + _ROWS], mean, std)
        if n % 16:
            out[n - 16:] = _fill16(draw(16).reshape(1, 16), mean, std).reshape(-1)
        return out.astype(dtype, copy=False)
    return _scaled(_box_muller(engine, n), mean, std, fma64).astype(dtype)


# ---- integers -------------------------------------------------------------------------------


def integers(engine: Engine, n: int, dtype, low: int, span: int | None):
    """random_from_to_kernel: ``word % span + low`` (a 64-bit draw when span >= 2**28); span None
    is the full 64-bit range."""
    if span is None:
        return engine.words64(n).view(xp.int64).astype(dtype)
    if span < 2**28:
        v = (engine.words(n) % xp.uint32(span)).astype(xp.int64)
        v += low
    else:
        v = (engine.words64(n) % _U64(span) + _U64(low % 2**64)).view(xp.int64)
    return v.astype(dtype, copy=False)


def bits(engine: Engine, n: int, dtype):
    """random_kernel (``random_()`` without bounds): a word modulo the dtype's range: [0, max]
    for integers, [0, 2**mantissa] for floats; bool is the low bit."""
    dt = xp.dtype(dtype)
    if dt == xp.bool_:
        return (engine.words(n) & _U64(1)).astype(dt)
    if dt.kind in "fV":  # V: bfloat16
        digits = np_finfo(dt).nmant + 1
        w = engine.words64(n) if dt == _F64 else engine.words(n)
        return (w % _U64(2**digits + 1)).astype(dt)
    w = engine.words64(n) if dt == xp.int64 else engine.words(n)
    return (w % _U64(int(xp.iinfo(dt).max) + 1)).astype(dt)


def randperm(engine: Engine, n: int):
    """randperm_cpu: Fisher-Yates from the front, swapping i with i + word % (n - i); for n of
    2**32 / 20 or more, the inside-out variant with 64-bit draws."""
    if n < (2**32 - 1) // 20:
        w = engine.words(max(n - 1, 0))
        swaps = (w % xp.arange(n, 1, -1, dtype=_U64) + xp.arange(n - 1, dtype=_U64)).tolist()
        order = list(range(n))
        for i, j in enumerate(swaps):
            order[i], order[j] = order[j], order[i]
        return xp.array(order, dtype=xp.int64)
    w = engine.words64(n)
    picks = (w % xp.arange(1, n + 1, dtype=_U64)).astype(xp.int64).tolist()
    order = [0] * n
    for i, z in enumerate(picks):
        order[i] = order[z]
        order[z] = i
    return xp.array(order, dtype=xp.int64)


# ---- samplers from double uniforms ------------------------------------------------------------


def bernoulli(engine: Engine, n: int, dtype, p: float):
    """bernoulli_(p) for a number p: 1 where a float64 uniform is below p, that is where the
    53 bits drawn are below p * 2**53 (exact: p is a binary fraction)."""
    return ((engine.words64(n) & _U64(2**53 - 1)) < _U64(math.ceil(p * 2**53))).astype(dtype)


def exponential(engine: Engine, n: int, dtype, lambd: float):
    """exponential_kernel: ``-1 / lambda * log1p(-u)`` in double, then cast."""
    return ((-1.0 / lambd) * xp.log1p(-engine.uniform64(n))).astype(dtype)


def geometric(engine: Engine, n: int, dtype, p: float):
    """geometric_kernel: ``ceil(log(u) / log1p(-p))`` in double, then cast."""
    with xp.errstate(divide="ignore"):
        return xp.ceil(xp.log(engine.uniform64(n)) / math.log1p(-p)).astype(dtype)


def cauchy(engine: Engine, n: int, dtype, median: float, sigma: float):
    """cauchy_kernel: ``median + sigma * tan(pi * (u - 0.5))`` (fused) in double, then cast."""
    return fma64(sigma, xp.tan(math.pi * (engine.uniform64(n) - 0.5)), median).astype(dtype)


def log_normal(engine: Engine, n: int, dtype, mean: float, std: float):
    """log_normal_kernel: ``exp`` of normal_distribution<double>(mean, std), then cast."""
    return xp.exp(fma64(_box_muller(engine, n), std, mean)).astype(dtype)


def multinomial(engine: Engine, rows, num_samples: int):
    """multinomial_with_replacement: per row, the cumulative sums (in the weights' dtype, one
    after another, divided by the total, the last set to 1) searched for the first at or above
    each float64 uniform; uniforms row by row."""
    cdf = xp.cumsum(rows, axis=1, dtype=rows.dtype)
    cdf /= cdf[:, -1:]
    cdf[:, -1] = 1
    u = engine.uniform64(rows.shape[0] * num_samples).reshape(rows.shape[0], num_samples)
    return xp.stack([xp.searchsorted(c.astype(_F64), v, side="left") for c, v in zip(cdf, u)])


class _Uniforms:
    """float64 uniforms one at a time for samplers that loop, drawn in bulk: at the end the
    engine is put back and moves by exactly the words used."""

    def __init__(self, engine: Engine) -> None:
        self.engine = engine
        self.start = engine.bits.state
        self.values: list = []
        self.used = 0

    def __call__(self) -> float:
        if self.used == len(self.values):
            self.values += self.engine.uniform64(max(64, len(self.values))).tolist()
        self.used += 1
        return self.values[self.used - 1]

    def close(self) -> None:
        self.engine.bits.state = self.start
        self.engine.words(2 * self.used)


def _poisson_one(lam: float, uniform) -> int:
    """sample_poisson: Hoermann's transformed rejection for rates of 10 or more, otherwise the
    product of uniforms against exp(-rate)."""
    if lam >= 10:
        slam, loglam = math.sqrt(lam), math.log(lam)
        b = 0.931 + 2.53 * slam
        a = -0.059 + 0.02483 * b
        invalpha = 1.1239 + 1.1328 / (b - 3.4)
        vr = 0.9277 - 3.6224 / (b - 2)
        while True:
            u = uniform() - 0.5
            v = uniform()
            us = 0.5 - abs(u)
            k = math.floor((2 * a / us + b) * u + lam + 0.43)
            if us >= 0.07 and v <= vr:
                return k
            if k < 0 or (us < 0.013 and v > us):
                continue
            if (math.log(v) + math.log(invalpha) - math.log(a / (us * us) + b)
                    <= -lam + k * loglam - math.lgamma(k + 1)):
                return k
    if lam == 0:
        return 0
    limit, count, prod = math.exp(-lam), 0, 1.0
    while True:
        prod *= uniform()
        if prod <= limit:
            return count
        count += 1


def poisson(engine: Engine, rates) -> list:
    """_s_poisson_cpu: one sample per rate (float64 values), in order."""
    uniform = _Uniforms(engine)
    try:
        return [_poisson_one(lam, uniform) for lam in rates.tolist()]
    finally:
        uniform.close()
