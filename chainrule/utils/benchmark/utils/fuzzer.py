"""Fuzzer: random benchmark inputs. Parameters are drawn from a NumPy RandomState seeded by the
Fuzzer's seed (the same draws as PyTorch's Fuzzer); tensors get those sizes, strides and
layouts, with values from chainrule's generator."""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np

from ...._backend import bool_ as _bool
from ...._backend import float32
from ...._creation import manual_seed, rand, randint
from ...._dtypes import finfo, iinfo

__all__ = ["Fuzzer", "FuzzedParameter", "ParameterAlias", "FuzzedTensor"]

_DISTRIBUTIONS = ("loguniform", "uniform")


class FuzzedParameter:
    """A named parameter drawn from a distribution: 'uniform' or 'loguniform' between
    ``minval`` and ``maxval``, or a dict of values to their probabilities; ``strict``: drawn
    once and kept while constraints reject the other parameters."""

    def __init__(self, name: str, minval: int | float | None = None,
                 maxval: int | float | None = None,
                 distribution: str | dict[Any, float] | None = None, strict: bool = False) -> None:
        self._name = name
        self._minval = minval
        self._maxval = maxval
        self._distribution = self._check_distribution(distribution)
        self.strict = strict

    @property
    def name(self) -> str:
        return self._name

    def sample(self, state: np.random.RandomState):
        if self._distribution == "loguniform":
            return self._loguniform(state)
        if self._distribution == "uniform":
            return self._uniform(state)
        if isinstance(self._distribution, dict):
            index = state.choice(np.arange(len(self._distribution)),
                                 p=tuple(self._distribution.values()))
            return list(self._distribution)[index]

    def _check_distribution(self, distribution):
        if not isinstance(distribution, dict):
            if distribution not in _DISTRIBUTIONS:
                raise AssertionError(f"Unknown distribution: {distribution}")
            return distribution
        if any(p < 0 for p in distribution.values()):
            raise AssertionError("Probabilities cannot be negative")
        # PyTorch's check, as it is written: it refuses probabilities that do sum to one
        if not abs(sum(distribution.values()) - 1) > 1e-5:
            raise AssertionError("Distribution is not normalized")
        if self._minval is not None:
            raise AssertionError("When passing a custom distribution, 'minval' must be None")
        if self._maxval is not None:
            raise AssertionError("When passing a custom distribution, 'maxval' must be None")
        return distribution

    def _loguniform(self, state: np.random.RandomState) -> int:
        low = np.log2(self._minval) if self._minval is not None else None
        high = np.log2(self._maxval) if self._maxval is not None else None
        value = int(2 ** state.uniform(low=low, high=high))
        if self._minval is not None and value < self._minval:
            return self._minval
        if self._maxval is not None and value > self._maxval:
            return self._maxval
        return value

    def _uniform(self, state: np.random.RandomState):
        if isinstance(self._minval, int) and isinstance(self._maxval, int):
            return int(state.randint(low=self._minval, high=self._maxval + 1))
        return state.uniform(low=self._minval, high=self._maxval)


class ParameterAlias:
    """A parameter that takes another parameter's value."""

    def __init__(self, alias_to) -> None:
        self.alias_to = alias_to

    def __repr__(self) -> str:
        return f"ParameterAlias[alias_to: {self.alias_to}]"


def dtype_size(dtype) -> int:
    """Bytes per element of ``dtype``."""
    if dtype == _bool:
        return 1
    info = finfo(dtype) if dtype.is_floating_point or dtype.is_complex else iinfo(dtype)
    return int(info.bits / 8)


def prod(values, base: int = 1) -> int:
    """The product of ``values`` (and ``base``) as Python ints."""
    return math.prod((int(v) for v in values), start=int(base))


class FuzzedTensor:
    """A tensor whose size (and strides through ``steps``) come from parameters: entries of
    ``size`` and ``steps`` are numbers or parameter names; with probability
    ``1 - probability_contiguous`` its memory is laid out in a random dim order."""

    def __init__(self, name: str, size: tuple[str | int, ...],
                 steps: tuple[str | int, ...] | None = None, probability_contiguous: float = 0.5,
                 min_elements: int | None = None, max_elements: int | None = None,
                 max_allocation_bytes: int | None = None, dim_parameter: str | None = None,
                 roll_parameter: str | None = None, dtype=float32, cuda: bool = False,
                 tensor_constructor: Callable | None = None) -> None:
        self._name = name
        self._size = size
        self._steps = steps
        self._probability_contiguous = probability_contiguous
        self._min_elements = min_elements
        self._max_elements = max_elements
        self._max_allocation_bytes = max_allocation_bytes
        self._dim_parameter = dim_parameter
        self._dtype = dtype
        self._cuda = cuda
        self._tensor_constructor = tensor_constructor

    @property
    def name(self) -> str:
        return self._name

    @staticmethod
    def default_tensor_constructor(size, dtype, **kwargs):
        if dtype.is_floating_point or dtype.is_complex:
            return rand(tuple(size), dtype=dtype, device="cpu")
        return randint(1, 127, tuple(size), dtype=dtype, device="cpu")

    def _make_tensor(self, params: dict, state: np.random.RandomState):
        size, steps, allocation = self._get_size_and_steps(params)
        constructor = self._tensor_constructor or self.default_tensor_constructor
        raw = constructor(size=allocation, dtype=self._dtype, **params)
        if self._cuda:
            raw = raw.cuda()
        dim = len(size)
        order = np.arange(dim)
        if state.rand() > self._probability_contiguous:
            while dim > 1 and np.all(order == np.arange(dim)):
                order = state.permutation(raw.dim())
            raw = raw.permute(tuple(order)).contiguous().permute(tuple(np.argsort(order)))
        tensor = raw[tuple(slice(0, n * step, step) for n, step in zip(size, steps))]
        properties = {"numel": int(tensor.numel()), "order": order, "steps": steps,
                      "is_contiguous": tensor.is_contiguous(), "dtype": str(self._dtype)}
        return tensor, properties

    def _get_size_and_steps(self, params: dict):
        dim = params[self._dim_parameter] if self._dim_parameter is not None else len(self._size)

        def resolve(values):
            values = tuple(params.get(v, v) for v in values)[:dim]
            return values + (1,) * (dim - len(values))

        size, steps = resolve(self._size), resolve(self._steps or ())
        return size, steps, tuple(n * step for n, step in zip(size, steps))

    def satisfies_constraints(self, params: dict) -> bool:
        size, _, allocation = self._get_size_and_steps(params)
        elements = prod(size)
        if elements < 0:
            raise AssertionError("Computed number of elements is negative")
        allocation_bytes = prod(allocation, base=dtype_size(self._dtype))

        def over(left, right) -> bool:
            return left is not None and right is not None and left > right

        return not (over(elements, self._max_elements) or over(self._min_elements, elements)
                    or over(allocation_bytes, self._max_allocation_bytes))


class Fuzzer:
    """Draws parameter sets that satisfy the ``constraints`` (and the tensors' limits) and makes
    the tensors for them: ``take(n)`` yields ``(tensors, tensor_properties, params)``."""

    def __init__(self, parameters: list, tensors: list, constraints: list[Callable] | None = None,
                 seed: int | None = None) -> None:
        if seed is None:
            seed = int(np.random.RandomState().randint(0, 2 ** 32 - 1, dtype=np.int64))
        self._seed = seed
        self._parameters = self._unpack(parameters, FuzzedParameter)
        self._tensors = self._unpack(tensors, FuzzedTensor)
        self._constraints = constraints or ()
        overlap = {p.name for p in self._parameters} & {t.name for t in self._tensors}
        if overlap:
            raise ValueError(f"Duplicate names in parameters and tensors: {overlap}")
        self._rejections = 0
        self._total_generated = 0

    @staticmethod
    def _unpack(values, cls) -> tuple:
        return tuple(v for item in values for v in ([item] if isinstance(item, cls) else item))

    def take(self, n: int):
        state = np.random.RandomState(self._seed)
        manual_seed(int(state.randint(low=0, high=2 ** 63, dtype=np.int64)))
        for _ in range(n):
            params = self._generate(state)
            tensors, properties = {}, {}
            for t in self._tensors:
                tensors[t.name], properties[t.name] = t._make_tensor(params, state)
            yield tensors, properties, params

    @property
    def rejection_rate(self) -> float:
        return self._rejections / self._total_generated if self._total_generated else 0.0

    def _generate(self, state: np.random.RandomState) -> dict:
        strict: dict = {}
        for _ in range(1000):
            candidate = {}
            for p in self._parameters:
                if p.strict and p.name in strict:
                    candidate[p.name] = strict[p.name]
                else:
                    candidate[p.name] = p.sample(state)
                    if p.strict:
                        strict[p.name] = candidate[p.name]
            candidate = self._resolve_aliases(candidate)
            self._total_generated += 1
            if not all(f(candidate) for f in self._constraints) or not all(
                    t.satisfies_constraints(candidate) for t in self._tensors):
                self._rejections += 1
                continue
            return candidate
        raise ValueError("Failed to generate a set of valid parameters.")

    @staticmethod
    def _resolve_aliases(params: dict) -> dict:
        params = dict(params)
        pending = sum(isinstance(v, ParameterAlias) for v in params.values())
        while pending:
            for k in list(params):
                if isinstance(params[k], ParameterAlias):
                    params[k] = params[params[k].alias_to]
            left = sum(isinstance(v, ParameterAlias) for v in params.values())
            if left == pending:
                raise ValueError(f"ParameterAlias cycle detected\n{params}")
            pending = left
        return params
