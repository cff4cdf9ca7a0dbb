"""Run a chainrule module and its torch twin on the same weights and inputs and compare."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np
import torch

import chainrule
import chainrule.nn as nn

TOLERANCES = {"float32": (2e-4, 2e-5), "float64": (1e-9, 1e-11)}


def to_ours(value):
    """chainrule tensors for torch tensors (nested in tuples and lists), other values kept."""
    if isinstance(value, torch.Tensor):
        return chainrule.tensor(value.detach().numpy())
    if isinstance(value, (tuple, list)):
        return type(value)(to_ours(v) for v in value)
    return value


def twin(name: str, *args, **kwargs) -> tuple[nn.Module, torch.nn.Module]:
    """The chainrule module nn.<name>(*args, **kwargs) and torch's, holding torch's weights."""
    theirs = getattr(torch.nn, name)(*args, **kwargs)
    ours = getattr(nn, name)(*(to_ours(a) for a in args),
                             **{k: to_ours(v) for k, v in kwargs.items()})
    copy_weights(theirs, ours)
    return ours, theirs


def copy_weights(theirs: torch.nn.Module, ours: nn.Module) -> None:
    state = {k: to_ours(v) for k, v in theirs.state_dict().items()}
    result = ours.load_state_dict(state)
    assert not result.missing_keys and not result.unexpected_keys


class data:
    """An input made by ``fn(rng)`` and used as it is (indices, masks, targets)."""

    requires_grad = False

    def __init__(self, fn: Callable) -> None:
        self.fn = fn


class grad(data):
    """An input made by ``fn(rng)`` that requires grad (floats in a restricted domain)."""

    requires_grad = True


@dataclass
class Case:
    """One layer configuration: constructor arguments, inputs and forward keyword arguments.

    ``inputs`` holds shapes (standard normal floats that require grad), ``data``/``grad``
    wrappers, None, or a tuple of those (a tuple argument such as LSTM's (h0, c0))."""

    name: str
    args: tuple = ()
    kwargs: dict = field(default_factory=dict)
    inputs: list = field(default_factory=list)
    forward_kwargs: dict = field(default_factory=dict)
    train: bool = True
    rtol64: float | None = None  # a looser float64 tolerance where torch itself rounds
    id: str = ""

    def __post_init__(self) -> None:
        self.id = self.id or f"{self.name}{self.args}{self.kwargs or ''}"


def _make(spec, rng, dtype: str) -> tuple:
    """(chainrule value, torch value) for one input spec."""
    if spec is None:
        return None, None
    if isinstance(spec, data):
        array = np.asarray(spec.fn(rng))
        if array.dtype.kind == "f":
            array = array.astype(dtype)
        ours, theirs = chainrule.tensor(array), torch.tensor(array)
        if spec.requires_grad:
            ours.requires_grad_(True)
            theirs.requires_grad_(True)
        return ours, theirs
    if isinstance(spec, list):
        pairs = [_make(s, rng, dtype) for s in spec]
        return tuple(p[0] for p in pairs), tuple(p[1] for p in pairs)
    array = rng.standard_normal(spec).astype(dtype)
    return (chainrule.tensor(array, requires_grad=True),
            torch.tensor(array, requires_grad=True))


def _flat(value) -> list:
    if isinstance(value, (tuple, list)):
        return [x for v in value for x in _flat(v)]
    return [value]


def run_twins(case: Case, dtype: str, check_grads: bool = True, pair=None) -> None:
    """Forward and backward through both modules; outputs and every gradient must agree.

    ``pair`` is a prebuilt (ours, theirs); by default the twins are built from the case."""
    rtol, atol = TOLERANCES[dtype]
    if dtype == "float64" and case.rtol64:
        rtol, atol = case.rtol64, case.rtol64
    torch.manual_seed(0)
    ours, theirs = pair or twin(case.name, *case.args, **case.kwargs)
    if dtype == "float64":
        ours.double()
        theirs.double()
    ours.train(case.train)
    theirs.train(case.train)
    rng = np.random.default_rng(0)
    made = [_make(spec, rng, dtype) for spec in case.inputs]
    c_in, t_in = [m[0] for m in made], [m[1] for m in made]
    kw = {k: _make(v, rng, dtype) if isinstance(v, data) else (v, v)
          for k, v in case.forward_kwargs.items()}
    t_out = theirs(*t_in, **{k: v[1] for k, v in kw.items()})
    c_out = ours(*c_in, **{k: v[0] for k, v in kw.items()})
    t_flat, c_flat = _flat(t_out), _flat(c_out)
    assert len(t_flat) == len(c_flat), f"{len(c_flat)} outputs, torch has {len(t_flat)}"
    for i, (t, c) in enumerate(zip(t_flat, c_flat)):
        if t is None:
            assert c is None, f"output {i}"
            continue
        assert tuple(c.shape) == tuple(t.shape), f"output {i}: {c.shape} != {t.shape}"
        assert str(c.dtype) == str(t.dtype), f"output {i}: {c.dtype} != {t.dtype}"
        np.testing.assert_allclose(c.detach().numpy(), t.detach().numpy(), rtol=rtol, atol=atol,
                                   err_msg=f"output {i}")
    if not check_grads:
        return
    weights = np.random.default_rng(1)
    t_loss, c_loss = 0, 0
    for t, c in zip(t_flat, c_flat):
        if t is None or not t.requires_grad:
            continue
        w = weights.standard_normal(tuple(t.shape)).astype(dtype)
        t_loss = t_loss + (t * torch.tensor(w)).sum()
        c_loss = c_loss + (c * chainrule.tensor(w)).sum()
    if isinstance(t_loss, int):
        return
    t_loss.backward()
    c_loss.backward()
    for i, (t, c) in enumerate(zip(_flat(t_in), _flat(c_in))):
        if t is not None and t.requires_grad:
            assert_grad(c.grad, t.grad, rtol, atol, f"input {i}")
    t_params = dict(theirs.named_parameters())
    for name, p in ours.named_parameters():
        assert_grad(p.grad, t_params[name].grad, rtol, atol, name)


def assert_grad(ours, theirs, rtol: float, atol: float, what: str) -> None:
    if theirs is None:
        assert ours is None or not np.any(ours.numpy()), f"{what}: torch has no gradient"
        return
    assert ours is not None, f"{what}: no gradient"
    np.testing.assert_allclose(ours.numpy(), theirs.numpy(), rtol=rtol, atol=atol,
                               err_msg=f"gradient of {what}")
