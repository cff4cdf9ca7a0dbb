"""functorch (what ``import functorch`` gives under ``chainrule.as_torch``): the deprecated
functorch names over ``chainrule.func``, each with PyTorch's FutureWarning, and the stateful
helpers ``make_functional``, ``make_functional_with_buffers`` and ``combine_state_for_ensemble``
over ``functional_call``."""

from __future__ import annotations

import copy
import warnings
from collections.abc import Callable, Iterable
from typing import Any

from .. import func as _func
from .._creation import empty_like
from ..nn import Module, Parameter
from ..ops.shape import stack
from ..torch_version import __version__

__all__ = [
    "FunctionalModule", "FunctionalModuleWithBuffers", "combine_state_for_ensemble",
    "functionalize", "grad", "grad_and_value", "hessian", "jacfwd", "jacrev", "jvp",
    "make_functional", "make_functional_with_buffers", "vjp", "vmap",
]


def _deprecated(api: str, new_api: str | None = None) -> None:
    warnings.warn(
        "We've integrated functorch into PyTorch. As the final step of the integration, "
        f"`functorch.{api}` is deprecated as of PyTorch 2.0 and will be deleted in a future "
        f"version of PyTorch >= 2.3. Please use `{new_api or 'torch.func.' + api}` instead; see "
        "the PyTorch 2.0 release notes and/or the `torch.func` migration guide for more details "
        "https://pytorch.org/docs/main/func.migrating.html", FutureWarning, stacklevel=3)


# ---- the transforms -------------------------------------------------------------------------

def vmap(func: Callable, in_dims=0, out_dims=0, randomness: str = "error", *,
         chunk_size: int | None = None) -> Callable:
    """Deprecated: ``torch.vmap``."""
    _deprecated("vmap", "torch.vmap")
    return _func.vmap(func, in_dims, out_dims, randomness, chunk_size=chunk_size)


def grad(func: Callable, argnums=0, has_aux: bool = False) -> Callable:
    """Deprecated: ``torch.func.grad``."""
    _deprecated("grad")
    return _func.grad(func, argnums, has_aux)


def grad_and_value(func: Callable, argnums=0, has_aux: bool = False) -> Callable:
    """Deprecated: ``torch.func.grad_and_value``."""
    _deprecated("grad_and_value")
    return _func.grad_and_value(func, argnums, has_aux)


def vjp(func: Callable, *primals, has_aux: bool = False):
    """Deprecated: ``torch.func.vjp``."""
    _deprecated("vjp")
    return _func.vjp(func, *primals, has_aux=has_aux)


def jvp(func: Callable, primals, tangents, *, strict: bool = False, has_aux: bool = False):
    """Deprecated: ``torch.func.jvp``."""
    _deprecated("jvp")
    return _func.jvp(func, primals, tangents, strict=strict, has_aux=has_aux)


def jacrev(func: Callable, argnums=0, *, has_aux: bool = False, chunk_size: int | None = None,
           _preallocate_and_copy: bool = False) -> Callable:
    """Deprecated: ``torch.func.jacrev``."""
    _deprecated("jacrev")
    return _func.jacrev(func, argnums, has_aux=has_aux, chunk_size=chunk_size)


def jacfwd(func: Callable, argnums=0, has_aux: bool = False, *,
           randomness: str = "error") -> Callable:
    """Deprecated: ``torch.func.jacfwd``."""
    _deprecated("jacfwd")
    return _func.jacfwd(func, argnums, has_aux, randomness=randomness)


def hessian(func: Callable, argnums=0) -> Callable:
    """Deprecated: ``torch.func.hessian``."""
    _deprecated("hessian")
    return _func.hessian(func, argnums=argnums)


def functionalize(func: Callable, *, remove: str = "mutations") -> Callable:
    """Deprecated: ``torch.func.functionalize``."""
    _deprecated("functionalize")
    return _func.functionalize(func, remove=remove)


# ---- modules as functions -------------------------------------------------------------------

def _names_map(module: Module, named) -> tuple[tuple, tuple, dict[str, list[str]]]:
    """The unique tensors, their first names, and each first name's tied aliases; the tensors
    in ``module`` are replaced by meta tensors (the copy holds no values of its own)."""
    first: dict[int, str] = {}
    aliases: dict[str, list[str]] = {}
    tensors, names = [], []
    for name, t in named(remove_duplicate=False):
        key = first.setdefault(id(t), name)
        if key == name:
            tensors.append(t)
            names.append(name)
        aliases.setdefault(key, []).append(name)
    meta: dict[int, Any] = {}
    for name, t in named(remove_duplicate=False):
        if id(t) not in meta:
            blank = empty_like(t, device="meta")
            meta[id(t)] = Parameter(blank, t.requires_grad) if isinstance(t, Parameter) else blank
        *path, attr = name.split(".")
        owner = module.get_submodule(".".join(path))
        store = owner._parameters if attr in owner._parameters else owner._buffers
        store[attr] = meta[id(t)]
    return tuple(tensors), tuple(names), aliases


def _call(model: Module, names_map: dict[str, list[str]], tensors: Iterable, args, kwargs):
    given = {alias: t for aliases, t in zip(names_map.values(), tensors) for alias in aliases}
    return _func.functional_call(model, given, args, kwargs, tie_weights=False)


class FunctionalModule(Module):
    """What :func:`make_functional` returns: the model as a function of its parameters."""

    def __init__(self, stateless_model: Module, param_names: tuple[str, ...],
                 names_map: dict[str, list[str]]) -> None:
        super().__init__()
        self.stateless_model = stateless_model
        self.param_names = param_names
        self.names_map = names_map

    @staticmethod
    def _create_from(model: Module, disable_autograd_tracking: bool = False):
        copied = copy.deepcopy(model)
        params, names, names_map = _names_map(copied, copied.named_parameters)
        if disable_autograd_tracking:
            for p in params:
                p.requires_grad_(False)
        return FunctionalModule(copied, names, names_map), params

    def forward(self, params: Iterable, *args, **kwargs) -> Any:
        return _call(self.stateless_model, self.names_map, params, args, kwargs)


class FunctionalModuleWithBuffers(Module):
    """What :func:`make_functional_with_buffers` returns: the model as a function of its
    parameters and buffers."""

    def __init__(self, stateless_model: Module, param_names: tuple[str, ...],
                 buffer_names: tuple[str, ...], param_names_map: dict[str, list[str]],
                 buffer_names_map: dict[str, list[str]]) -> None:
        super().__init__()
        self.stateless_model = stateless_model
        self.param_names = param_names
        self.buffer_names = buffer_names
        self.all_names_map = {**param_names_map, **buffer_names_map}

    @staticmethod
    def _create_from(model: Module, disable_autograd_tracking: bool = False):
        copied = copy.deepcopy(model)
        params, param_names, param_map = _names_map(copied, copied.named_parameters)
        buffers, buffer_names, buffer_map = _names_map(copied, copied.named_buffers)
        if disable_autograd_tracking:
            for p in params:
                p.requires_grad_(False)
        return (FunctionalModuleWithBuffers(copied, param_names, buffer_names, param_map,
                                            buffer_map), params, buffers)

    def forward(self, params: Iterable, buffers: Iterable, *args, **kwargs) -> Any:
        return _call(self.stateless_model, self.all_names_map, (*params, *buffers), args,
                     kwargs)


def _make_functional(model: Module, disable_autograd_tracking: bool = False):
    if any(True for _ in model.buffers()):
        raise RuntimeError("make_functional(model): `model` has buffers. Please use "
                           "make_functional_with_buffers(model) instead.")
    return FunctionalModule._create_from(model, disable_autograd_tracking)


def make_functional(model: Module, disable_autograd_tracking: bool = False):
    """``(func, params)``: a copy of ``model`` as a function ``func(params, *args)`` of its
    parameters, and the parameters. Deprecated: ``torch.func.functional_call``."""
    _deprecated("make_functional", "torch.func.functional_call")
    return _make_functional(model, disable_autograd_tracking)


def make_functional_with_buffers(model: Module, disable_autograd_tracking: bool = False):
    """``(func, params, buffers)``: a copy of ``model`` as a function
    ``func(params, buffers, *args)``. Deprecated: ``torch.func.functional_call``."""
    _deprecated("make_functional_with_buffers", "torch.func.functional_call")
    return FunctionalModuleWithBuffers._create_from(model, disable_autograd_tracking)


def combine_state_for_ensemble(models: list[Module]):
    """``(func, params, buffers)`` for ``vmap`` over an ensemble of models of one class: each
    parameter and buffer stacked along a new first dim (detached).
    Deprecated: ``torch.func.stack_module_state``."""
    _deprecated("combine_state_for_ensemble", "torch.func.stack_module_state")
    if len(models) == 0:
        raise RuntimeError("combine_state_for_ensemble: Expected at least one model, got 0.")
    if not (all(m.training for m in models) or not any(m.training for m in models)):
        raise RuntimeError("combine_state_for_ensemble: Expected all models to have the same "
                           "training/eval mode.")
    if not all(type(m) is type(models[0]) for m in models):
        raise RuntimeError("combine_state_for_ensemble: Expected all models to be of the same "
                           "class.")
    funcs, params, buffers = zip(*[FunctionalModuleWithBuffers._create_from(m) for m in models])
    return (funcs[0], tuple(stack(list(s)).detach() for s in zip(*params)),
            tuple(stack(list(s)).detach() for s in zip(*buffers)))


def make_fx(*args, **kwargs):
    """Trace a function's kernel-level calls into an FX graph: not provided."""
    raise RuntimeError("functorch.make_fx traces kernel-level (aten) calls into a torch.fx graph, "
                       "which chainrule does not provide; torch.fx.symbolic_trace records the "
                       "torch-level calls of a function or module")
