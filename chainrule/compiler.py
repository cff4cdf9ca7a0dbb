"""torch.compiler: the compile entry point and the questions code asks about it."""

from __future__ import annotations

from collections.abc import Callable

from . import _compile
from ._compile import is_compiling, reset
from .nn.module import Module

__all__ = ["compile", "is_compiling", "is_dynamo_compiling", "reset", "disable",
           "OptimizedModule"]


class OptimizedModule(Module):
    """What ``compile(module)`` returns: a module whose forward is the compiled call of
    ``_orig_mod`` (state_dict keys begin with ``_orig_mod.``, as PyTorch's)."""

    def __init__(self, mod: Module, compiled) -> None:
        super().__init__()
        self._orig_mod = mod
        self.__dict__["_compiled_forward"] = compiled

    def forward(self, *args, **kwargs):
        return self._compiled_forward(*args, **kwargs)

    def __getattr__(self, name: str):
        try:
            return super().__getattr__(name)
        except AttributeError:
            return getattr(self._modules["_orig_mod"], name)


def compile(model=None, **kwargs):
    """``chainrule.compile``: optimize a function or module by capture and replay."""
    if model is None:
        return lambda m: compile(m, **kwargs)
    compiled = _compile.compile(model, **kwargs)
    if isinstance(model, Module) and compiled is not model:
        return OptimizedModule(model, compiled)
    return compiled


compile.__signature__ = __import__("inspect").signature(_compile.compile)


def is_dynamo_compiling() -> bool:
    """True while chainrule.compile captures a call (chainrule has no dynamo: the same)."""
    return is_compiling()


def disable(fn: Callable | None = None, recursive: bool = True, *, reason: str | None = None):
    """``fn`` unchanged: chainrule's capture records kernels, so there is nothing to skip."""
    if fn is None:
        return lambda f: f
    return fn
