"""Lazy modules: parameters whose shapes are inferred from the first input (LazyModuleMixin)."""

from __future__ import annotations

import itertools
from typing import Protocol

from ...autograd.grad_mode import no_grad
from ..parameter import is_lazy

__all__ = ["LazyModuleMixin"]


class _LazyProtocol(Protocol):
    """What LazyModuleMixin needs of the Module it is mixed into."""

    def _register_load_state_dict_pre_hook(self, hook): ...

    def register_forward_pre_hook(self, hook, *, prepend=False, with_kwargs=False): ...

    def _lazy_load_hook(self, state_dict, prefix, local_metadata, strict, missing_keys,
                        unexpected_keys, error_msgs): ...

    def _get_name(self): ...

    def _infer_parameters(self, module, input): ...

    @property
    def _parameters(self): ...

    @property
    def _buffers(self): ...

    @property
    def _non_persistent_buffers_set(self): ...

    @property
    def _load_hook(self): ...

    @property
    def _initialize_hook(self): ...


class LazyModuleMixin:
    """A module whose parameters are UninitializedParameters until its first forward, which
    calls ``initialize_parameters(input)`` and then turns the module into ``cls_to_become``."""

    cls_to_become: type | None = None

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self._load_hook = self._register_load_state_dict_pre_hook(self._lazy_load_hook)
        self._initialize_hook = self.register_forward_pre_hook(self._infer_parameters,
                                                               with_kwargs=True)

    def _save_to_state_dict(self, destination, prefix: str, keep_vars: bool) -> None:
        # uninitialized tensors are saved as they are (they cannot be detached)
        for name, param in self._parameters.items():
            if param is not None:
                destination[prefix + name] = param if keep_vars or is_lazy(param) \
                    else param.detach()
        for name, buf in self._buffers.items():
            if buf is not None and name not in self._non_persistent_buffers_set:
                destination[prefix + name] = buf if keep_vars or is_lazy(buf) else buf.detach()

    def _lazy_load_hook(self, state_dict, prefix, local_metadata, strict, missing_keys,
                        unexpected_keys, error_msgs) -> None:
        """Materialize each uninitialized tensor to the shape of its value in ``state_dict``."""
        for name, tensor in itertools.chain(self._parameters.items(), self._buffers.items()):
            key = prefix + name
            if key in state_dict and tensor is not None and is_lazy(tensor) \
                    and not is_lazy(state_dict[key]):
                with no_grad():
                    tensor.materialize(state_dict[key].shape)

    def initialize_parameters(self, *args, **kwargs) -> None:
        """Materialize the parameters from the first input's shape (subclasses say how)."""
        raise NotImplementedError(
            f"initialize_parameters is not implemented for {type(self).__name__}")

    def has_uninitialized_params(self) -> bool:
        """Whether any parameter or buffer is still uninitialized."""
        return any(is_lazy(t) for t in (*self._parameters.values(), *self._buffers.values()))

    def _infer_parameters(self, module, args: tuple, kwargs: dict | None = None) -> None:
        module.initialize_parameters(*args, **(kwargs or {}))
        if module.has_uninitialized_params():
            raise RuntimeError(f"module {self._get_name()} has not been fully initialized")
        module._initialize_hook.remove()
        module._load_hook.remove()
        del module._initialize_hook
        del module._load_hook
        if module.cls_to_become is not None:
            module.__class__ = module.cls_to_become

    def _replicate_for_data_parallel(self):
        raise RuntimeError("Modules with uninitialized parameters can't be used with "
                           "`DataParallel`. Run a dummy forward pass to correctly initialize "
                           "the modules")
