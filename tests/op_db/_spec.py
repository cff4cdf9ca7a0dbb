"""The shape of an op_db row: what to call, on which inputs, and what to check.

A row names one public op the way users call it and carries the same call for chainrule and for
torch. Its samples list the arguments: a shape is a random float tensor that requires grad (drawn
from the row's domain, in the dtype under test); ``T`` sets a per-argument domain or turns grad
off; ``Const`` is a fixed tensor (an index, a mask, an integer operand) passed identically to both.
"""

from __future__ import annotations

import zlib
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import partial

import numpy as np
import torch

import chainrule

__all__ = [
    "Domain",
    "REAL",
    "POSITIVE",
    "NONZERO",
    "away",
    "T",
    "Const",
    "S",
    "OpRow",
    "op",
    "method",
]


@dataclass(frozen=True)
class Domain:
    """Where random float inputs are drawn: uniform in [low, high], at least ``gap`` from each
    point of ``avoid`` (kinks, poles), so finite differences are smooth."""

    low: float = -2.0
    high: float = 2.0
    avoid: tuple[float, ...] = ()
    gap: float = 0.1

    def sample(self, rng: np.random.Generator, shape: tuple[int, ...]) -> np.ndarray:
        x = rng.uniform(self.low, self.high, shape)
        for a in self.avoid:
            d = x - a
            x = np.where(np.abs(d) < self.gap, a + np.where(d >= 0, 1, -1) * (self.gap + abs(d)), x)
        return x


REAL = Domain()
POSITIVE = Domain(0.5, 2.5)
NONZERO = Domain(avoid=(0.0,), gap=0.3)


def away(*points: float, low: float = -2.0, high: float = 2.0) -> Domain:
    """Real values kept 0.1 away from ``points``."""
    return Domain(low, high, avoid=points)


@dataclass(frozen=True)
class T:
    """A float tensor argument: its shape, domain (None: the row's) and whether it needs grad."""

    shape: tuple[int, ...]
    domain: Domain | None = None
    grad: bool = True


@dataclass(frozen=True)
class Const:
    """A fixed tensor argument (index, mask, integer operand); float values follow the dtype
    under test."""

    value: object
    dtype: str | None = None

    def array(self, float_dtype: str) -> np.ndarray:
        a = np.asarray(self.value, dtype=self.dtype)
        return a.astype(float_dtype) if a.dtype.kind == "f" and self.dtype is None else a


class S:
    """One sample: the arguments (a bare shape is ``T(shape)``), and whether its grad_fn name is
    comparable with torch's (None: as the row says)."""

    __slots__ = ("args", "grad_fn")

    def __init__(self, *args, grad_fn: bool | None = None) -> None:
        self.args = tuple(T(a) if isinstance(a, tuple) else a for a in args)
        self.grad_fn = grad_fn

    def __repr__(self) -> str:
        return "-".join(_arg_id(a) for a in self.args)

    def arrays(self, seed: str, dtype: str, domain) -> list:
        """The argument values as NumPy arrays (same numbers for both libraries)."""
        rng = np.random.default_rng(zlib.crc32(seed.encode()))
        out = []
        for i, a in enumerate(self.args):
            if isinstance(a, T):
                d = a.domain or (domain[i] if isinstance(domain, tuple) else domain)
                out.append(d.sample(rng, a.shape).astype(dtype))
            else:
                out.append(a.array(dtype))
        return out

    def tensors(self, lib, arrays: list) -> list:
        """Wrap ``arrays`` as ``lib`` tensors; T arguments require grad (as leaves)."""
        out = []
        for a, value in zip(self.args, arrays):
            t = lib.from_numpy(np.array(value))
            out.append(t.requires_grad_() if isinstance(a, T) and a.grad else t)
        return out


def _arg_id(a) -> str:
    if isinstance(a, T):
        return "x".join(map(str, a.shape)) or "scalar"
    value = np.asarray(a.value)
    return f"{value.dtype.name}{list(value.shape)}"


def _inplace_call(name: str) -> Callable:
    def call(target, *rest):
        return getattr(target, name)(*rest)

    call.__name__ = name
    return call


@dataclass
class OpRow:
    """One public op as users call it (``variant`` tells several rows of one name apart).

    call(m, *args): the op on module m, chainrule or torch (``op``/``ref``: bound to each).
    samples: the arguments to try (see ``S``). domain: where float arguments are drawn, or one
    domain per argument. orders: derivative orders checked by finite differences in float64
    (1 gradcheck, 2 gradgradcheck, 3 gradgradcheck of the first derivatives; () for ops
    without gradient); torch comparisons go to the second order when 2 is listed. dtypes: the
    float dtypes compared with torch. grad_fn: whether the output's grad_fn name is torch's
    (a sample can override). kinks: values put into the first argument for an extra torch
    comparison (gradient conventions at non-smooth points). inplace: in-place variants, method
    names (called ``target.name(*other_args)``) or name -> callable(target, *other_args).
    records: the registry records the row runs (default: its name, if registered).
    gradcheck_kwargs: eps/atol/rtol for the finite-difference checks. vmap_error: the start of
    the error torch.func.vmap raises for the row with its float arguments batched (e.g. running
    statistics, unbatched, updated in place); tests/ops/test_vmap_ops.py expects it.
    """

    name: str
    call: Callable
    samples: tuple[S, ...]
    domain: Domain | tuple[Domain, ...] = REAL
    orders: tuple[int, ...] = (1, 2)
    dtypes: tuple[str, ...] = ("float32", "float64")
    variant: str = ""
    grad_fn: bool = True
    kinks: tuple[float, ...] = ()
    inplace: dict = field(default_factory=dict)
    records: tuple[str, ...] | None = None
    gradcheck_kwargs: dict = field(default_factory=dict)
    vmap_error: str = ""

    def __post_init__(self) -> None:
        self.samples = tuple(s if isinstance(s, S) else S(*s) for s in self.samples)
        if not isinstance(self.inplace, dict):
            self.inplace = {n: _inplace_call(n) for n in self.inplace}
        if self.records is None:
            self.records = (self.name,) if self.name in chainrule.ops.REGISTRY else ()
        if isinstance(self.records, str):
            raise TypeError(f"{self.id}: records must be a tuple of names")

    @property
    def id(self) -> str:
        return f"{self.name}[{self.variant}]" if self.variant else self.name

    @property
    def op(self) -> Callable:
        return partial(self.call, chainrule)

    @property
    def ref(self) -> Callable:
        return partial(self.call, torch)

    def grad_fn_comparable(self, sample: S) -> bool:
        return self.grad_fn if sample.grad_fn is None else sample.grad_fn

    def seed(self, index: int) -> str:
        return f"{self.id}/{index}"


def _by_name(name: str, m, *args):
    return getattr(m, name)(*args)


def op(name: str, samples, **kwargs) -> OpRow:
    """A row for ``m.<name>(*args)``: the same function name on chainrule and on torch."""
    return OpRow(name, partial(_by_name, name), samples, **kwargs)


def method(name: str, fn: Callable, samples, **kwargs) -> OpRow:
    """A row for a Tensor method or operator: ``fn(*args)`` works on either library's tensors."""
    return OpRow(name, lambda m, *args: fn(*args), samples, **kwargs)
