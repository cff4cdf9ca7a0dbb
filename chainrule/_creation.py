"""Tensor creation: tensor, factories, the *_like forms and the seeded random generator."""

from __future__ import annotations

import math

from ._backend import as_dtype, get_default_dtype, xp
from ._batched import BatchedTensor, batched
from ._batched import state as vmap_state
from ._shapes import size_tuple
from .tensor import Tensor

__all__ = ["tensor", "as_tensor", "from_numpy", "zeros", "ones", "full", "empty", "arange",
           "linspace", "eye", "rand", "randn", "randint", "randperm", "manual_seed", "seed",
           "initial_seed", "Generator", "zeros_like", "ones_like", "full_like", "empty_like",
           "rand_like", "randn_like", "randint_like", "default_generator"]

_DEFAULT_SEED = 67280421310721


def _check_device(device) -> None:
    if device is not None and str(device) != "cpu" and getattr(device, "type", "") != "cpu":
        raise RuntimeError(f"device '{device}' is not available: chainrule runs on the CPU only")


def _finish(array, requires_grad: bool) -> Tensor:
    t = Tensor._wrap(array, None, 0)
    if requires_grad:
        t.requires_grad_(True)
    return t


def _infer(data):
    """A NumPy array for Python data, with PyTorch's dtype inference."""
    if isinstance(data, Tensor):
        return data._data
    if isinstance(data, xp.ndarray) or isinstance(data, xp.generic):
        return xp.asarray(data)
    if isinstance(data, (list, tuple)) and any(isinstance(d, Tensor) for d in _flat(data)):
        data = [d._data if isinstance(d, Tensor) else d for d in data] if not any(
            isinstance(d, (list, tuple)) for d in data) else [_infer(d) for d in data]
    array = xp.asarray(data)
    if array.dtype.kind == "f":
        return array.astype(get_default_dtype().np, copy=False)
    if array.dtype.kind in "iu":
        return array.astype(xp.int64, copy=False)
    if array.dtype.kind == "c":
        return array.astype(xp.complex128 if get_default_dtype().np == xp.float64
                            else xp.complex64, copy=False)
    if array.dtype.kind == "b":
        return array
    raise TypeError(f"tensor: could not infer dtype of {type(data).__name__}; pass numbers, "
                    "nested lists of numbers or a NumPy array")


def _flat(data):
    for d in data:
        if isinstance(d, (list, tuple)):
            yield from _flat(d)
        else:
            yield d


def tensor(data, *, dtype=None, device=None, requires_grad: bool = False,
           pin_memory: bool = False) -> Tensor:
    """A new tensor holding a copy of ``data``."""
    _check_device(device)
    if dtype is not None and not isinstance(data, (Tensor, xp.ndarray)):
        array = xp.array(data, dtype=as_dtype(dtype).np)  # no detour through float32
    else:
        array = _infer(data)
        array = array.astype(as_dtype(dtype).np) if dtype is not None else array.copy()
    return _finish(array, requires_grad)


def _new_tensor(self, data, *, dtype=None, requires_grad: bool = False) -> Tensor:
    """A new tensor from ``data``, with this tensor's dtype unless ``dtype`` is given."""
    return tensor(data, dtype=dtype or self.dtype, requires_grad=requires_grad)


Tensor.new_tensor = _new_tensor


def as_tensor(data, dtype=None, device=None) -> Tensor:
    """``data`` as a tensor, sharing memory when it already is one or a NumPy array."""
    _check_device(device)
    if isinstance(data, Tensor):
        return data if dtype is None else data.to(dtype)
    if isinstance(data, xp.ndarray):
        return Tensor._wrap(data if dtype is None else data.astype(as_dtype(dtype).np,
                                                                   copy=False), None, 0)
    return tensor(data, dtype=dtype)


def from_numpy(array) -> Tensor:
    """A tensor sharing memory with a NumPy array."""
    if not isinstance(array, xp.ndarray):
        raise TypeError(f"expected np.ndarray (got {type(array).__name__})")
    as_dtype(array.dtype)
    return Tensor._wrap(array, None, 0)


def _dtype(dtype, default=None):
    return as_dtype(dtype).np if dtype is not None else (default or get_default_dtype().np)


def zeros(*size, dtype=None, device=None, requires_grad: bool = False) -> Tensor:
    """A tensor of zeros."""
    _check_device(device)
    return _finish(xp.zeros(size_tuple(size), dtype=_dtype(dtype)), requires_grad)


def ones(*size, dtype=None, device=None, requires_grad: bool = False) -> Tensor:
    """A tensor of ones."""
    _check_device(device)
    return _finish(xp.ones(size_tuple(size), dtype=_dtype(dtype)), requires_grad)


def empty(*size, dtype=None, device=None, requires_grad: bool = False) -> Tensor:
    """An uninitialised tensor (zeros here)."""
    return zeros(*size, dtype=dtype, device=device, requires_grad=requires_grad)


def _fill_dtype(value):
    if isinstance(value, bool):
        return xp.dtype(xp.bool_)
    if isinstance(value, int):
        return xp.dtype(xp.int64)
    return get_default_dtype().np


def full(size, fill_value, *, dtype=None, device=None, requires_grad: bool = False) -> Tensor:
    """A tensor filled with ``fill_value``."""
    _check_device(device)
    if isinstance(fill_value, Tensor):
        fill_value = fill_value.item()
    array = xp.full(size_tuple((size,)), fill_value, dtype=_dtype(dtype, _fill_dtype(fill_value)))
    return _finish(array, requires_grad)


def arange(start, end=None, step=1, *, dtype=None, device=None,
           requires_grad: bool = False) -> Tensor:
    """Values from start to end (exclusive) in steps."""
    _check_device(device)
    if end is None:
        start, end = 0, start
    values = [v.item() if isinstance(v, Tensor) else v for v in (start, end, step)]
    if step == 0:
        raise RuntimeError("arange: step must be nonzero")
    integral = all(isinstance(v, int) for v in values)
    dt = _dtype(dtype, xp.dtype(xp.int64) if integral else get_default_dtype().np)
    if dt.kind == "f":
        # As PyTorch: start + i * step in double precision, rounded once to dt.
        n = max(0, math.ceil((values[1] - values[0]) / values[2]))
        array = (values[0] + xp.arange(n, dtype=xp.float64) * values[2]).astype(dt)
    else:
        array = xp.arange(*values, dtype=dt)
    return _finish(array, requires_grad)


def linspace(start, end, steps: int, *, dtype=None, device=None,
             requires_grad: bool = False) -> Tensor:
    """``steps`` evenly spaced values from start to end (inclusive)."""
    _check_device(device)
    return _finish(xp.linspace(start, end, steps, dtype=_dtype(dtype)), requires_grad)


def eye(n: int, m: int | None = None, *, dtype=None, device=None,
        requires_grad: bool = False) -> Tensor:
    """A 2-D tensor with ones on the diagonal."""
    _check_device(device)
    return _finish(xp.eye(n, m, dtype=_dtype(dtype)), requires_grad)


class Generator:
    """A seeded random number generator (``manual_seed`` makes it reproducible)."""

    def __init__(self, device="cpu") -> None:
        self._seed = _DEFAULT_SEED
        self._rng = xp.random.default_rng(self._seed)

    def manual_seed(self, seed: int) -> Generator:
        self._seed = int(seed)
        self._rng = xp.random.default_rng(self._seed)
        return self

    def seed(self) -> int:
        return self.manual_seed(int(xp.random.SeedSequence().entropy % 2**63))._seed

    def initial_seed(self) -> int:
        return self._seed

    def get_state(self) -> Tensor:
        return _state_tensor(self._rng)

    def set_state(self, state: Tensor) -> Generator:
        _load_state(self._rng, state)
        return self


def _state_tensor(rng) -> Tensor:
    s = rng.bit_generator.state["state"]
    words = [(s["state"] >> (64 * i)) & (2**64 - 1) for i in (1, 0)]
    words += [(s["inc"] >> (64 * i)) & (2**64 - 1) for i in (1, 0)]
    return Tensor._wrap(xp.array(words, dtype=xp.uint64).view(xp.uint8), None, 0)


def _load_state(rng, state: Tensor) -> None:
    words = [int(w) for w in state._data.view(xp.uint64)]
    full_state = rng.bit_generator.state
    full_state["state"] = {"state": (words[0] << 64) | words[1], "inc": (words[2] << 64) | words[3]}
    rng.bit_generator.state = full_state


default_generator = Generator()


def manual_seed(seed: int) -> Generator:
    """Seed the default generator; returns it."""
    return default_generator.manual_seed(seed)


def seed() -> int:
    """Seed the default generator non-deterministically; returns the seed."""
    return default_generator.seed()


def initial_seed() -> int:
    """The default generator's seed."""
    return default_generator.initial_seed()


def _rng(generator):
    if vmap_state.level and "error" in vmap_state.randomness:
        raise RuntimeError("vmap: called random operation while in randomness error mode. Please "
                           "either use the 'same' or 'different' randomness flags on vmap or "
                           "perform the randomness operation out of vmap")
    return (generator or default_generator)._rng


def _random(draw, shape: tuple, dtype, requires_grad: bool) -> Tensor:
    """``draw(shape)`` as a tensor; under ``vmap(randomness='different')`` every example gets
    draws of its own (a batched tensor), under 'same' all share one."""
    levels = [i + 1 for i, mode in enumerate(vmap_state.randomness) if mode == "different"] \
        if vmap_state.level else []
    sizes = tuple(vmap_state.sizes[i - 1] for i in levels)
    array = draw(sizes + shape)
    out = _finish(array.astype(dtype, copy=False), requires_grad and not levels)
    for level in levels:
        out = batched(out, level)
    if levels and requires_grad:
        out.requires_grad_()
    return out


def rand(*size, generator=None, dtype=None, device=None, requires_grad: bool = False) -> Tensor:
    """Uniform samples on [0, 1)."""
    _check_device(device)
    dt = _dtype(dtype)
    rng = _rng(generator)
    return _random(lambda s: rng.random(s, dtype=xp.float64 if dt == xp.float16 else dt),
                   size_tuple(size), dt, requires_grad)


def randn(*size, generator=None, dtype=None, device=None, requires_grad: bool = False) -> Tensor:
    """Standard normal samples."""
    _check_device(device)
    dt = _dtype(dtype)
    rng = _rng(generator)
    return _random(lambda s: rng.standard_normal(s, dtype=xp.float64 if dt == xp.float16 else dt),
                   size_tuple(size), dt, requires_grad)


def randint(*args, size=None, generator=None, dtype=None, device=None,
            requires_grad: bool = False) -> Tensor:
    """Random integers in [low, high): ``randint(high, size)`` or ``randint(low, high, size)``."""
    _check_device(device)
    if size is None:
        *bounds, size = args
    else:
        bounds = list(args)
    low, high = (0, bounds[0]) if len(bounds) == 1 else bounds
    rng = _rng(generator)
    return _random(lambda s: rng.integers(low, high, s), size_tuple((size,)),
                   _dtype(dtype, xp.dtype(xp.int64)), requires_grad)


def randperm(n: int, *, generator=None, dtype=None, device=None) -> Tensor:
    """A random permutation of 0..n-1."""
    _check_device(device)
    return _finish(_rng(generator).permutation(n).astype(_dtype(dtype, xp.dtype(xp.int64))),
                   False)


def _like(factory):
    def like(input, *, dtype=None, device=None, requires_grad: bool = False, **kwargs):
        if type(input) is BatchedTensor and factory not in (rand, randn):
            return _batched_like(like, input, dtype, requires_grad, **kwargs)
        return factory(*input.shape, dtype=dtype or input.dtype, requires_grad=requires_grad,
                       **kwargs)

    like.__name__ = factory.__name__ + "_like"
    like.__doc__ = f"{factory.__name__} with the shape (and by default dtype) of ``input``."
    return like


zeros_like = _like(zeros)
ones_like = _like(ones)
empty_like = _like(empty)
rand_like = _like(rand)
randn_like = _like(randn)


def full_like(input, fill_value, *, dtype=None, device=None,
              requires_grad: bool = False) -> Tensor:
    """A tensor like ``input`` filled with ``fill_value``."""
    if type(input) is BatchedTensor:
        return _batched_like(full_like, input, dtype, requires_grad, fill_value=fill_value)
    return full(input.shape, fill_value, dtype=dtype or input.dtype, requires_grad=requires_grad)


def _batched_like(like, input, dtype, requires_grad: bool, **kwargs) -> Tensor:
    """Under vmap, a tensor made like a batched one is batched too (PyTorch's rule), so writing
    an example's values into it works."""
    out = batched(like(input._value, dtype=dtype or input.dtype, **kwargs), input._level)
    return out.requires_grad_() if requires_grad else out


def randint_like(input, low=0, high=None, *, dtype=None, device=None) -> Tensor:
    """Random integers with the shape of ``input``."""
    if high is None:
        low, high = 0, low
    return randint(low, high, input.shape, dtype=dtype or input.dtype)
