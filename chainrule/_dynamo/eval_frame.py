"""torch._dynamo.eval_frame: OptimizedModule, what compiling a module gives."""

from __future__ import annotations

from ..nn import Module

__all__ = ["OptimizedModule"]


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
