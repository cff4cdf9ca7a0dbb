"""``torch.utils.hooks``: the handle every hook registration returns, and the machinery of
nn.Module's full backward hooks."""

from __future__ import annotations

import warnings
from collections.abc import Callable

from .. import autograd
from ..autograd.grad_mode import is_grad_enabled
from ..autograd.graph import RemovableHandle
from ..tensor import Tensor

__all__ = ["RemovableHandle", "unserializable_hook", "warn_if_has_hooks", "BackwardHook"]


def unserializable_hook(f: Callable) -> Callable:
    """Mark a function as a hook that is not serialized (no warning when its tensor is saved)."""
    f.__torch_unserializable__ = True
    return f


def _tensor_hooks(tensor) -> dict:
    """The hooks ``tensor.register_hook`` put on this tensor's node slot."""
    hooks = getattr(tensor, "_backward_hooks", None)
    if hooks is not None or not tensor.requires_grad:
        return hooks or {}
    node = tensor.grad_fn if tensor.grad_fn is not None else tensor._accumulator()
    return (node._pre_hooks or {}).get(tensor._output_nr, {})


def warn_if_has_hooks(tensor) -> None:
    """Warn about each backward hook of ``tensor`` not marked ``unserializable_hook``."""
    for hook in _tensor_hooks(tensor).values():
        if not hasattr(hook, "__torch_unserializable__"):
            warnings.warn(f"backward hook {hook!r} on tensor will not be serialized.  If this "
                          "is expected, you can decorate the function with "
                          "@torch.utils.hooks.unserializable_hook to suppress this warning",
                          stacklevel=2)


class BackwardHookFunction(autograd.Function):
    """Identity on its tensors: its node is where a module's gradients are caught."""

    @staticmethod
    def forward(ctx, *args):
        ctx.mark_non_differentiable(*[arg for arg in args if not arg.requires_grad])
        return args

    @staticmethod
    def backward(ctx, *args):
        return args


class BackwardHook:
    """nn.Module's full backward hooks: the module's tensor inputs and outputs pass through an
    identity node each, whose hooks see grad_output (pre-hooks may replace it) and then
    grad_input (hooks may replace it), as ``hook(module, grad_input, grad_output)``."""

    def __init__(self, module, user_hooks: list, user_pre_hooks: list) -> None:
        self.user_hooks = user_hooks
        self.user_pre_hooks = user_pre_hooks
        self.module = module
        self.grad_outputs = None
        self.n_outputs = -1
        self.output_tensors_index = None
        self.n_inputs = -1
        self.input_tensors_index = None

    @staticmethod
    def _pack_with_none(indices, values, size: int) -> tuple:
        res = [None] * size
        for idx, val in zip(indices, values, strict=True):
            res[idx] = val
        return tuple(res)

    @staticmethod
    def _unpack_none(indices, values) -> tuple:
        return tuple(values[idx] for idx in indices)

    def _set_user_hook(self, grad_fn) -> None:
        def hook(grad_input, _):
            if self.grad_outputs is None:
                return None  # the gradient reached the input without passing the output
            res = self._pack_with_none(self.input_tensors_index, grad_input, self.n_inputs)
            for user_hook in self.user_hooks:
                out = user_hook(self.module, res, self.grad_outputs)
                if out is None:
                    continue
                if len(out) != len(res):
                    raise RuntimeError("Backward hook returned an invalid number of grad_input, "
                                       f"got {len(out)}, but expected {len(res)}")
                res = out
            self.grad_outputs = None
            return self._unpack_none(self.input_tensors_index, res)

        grad_fn.register_hook(hook)

    def _apply_on_tensors(self, fn: Callable, args: tuple):
        indices = [i for i, arg in enumerate(args) if isinstance(arg, Tensor)]
        tensors = [args[i] for i in indices]
        if not (any(t.requires_grad for t in tensors) and is_grad_enabled()):
            return args, None
        new_tensors = BackwardHookFunction.apply(*tensors)
        if len(new_tensors) == 0:
            raise RuntimeError("Cannot set Module backward hook for a Module with no input "
                               "Tensors.")
        grad_fns = [t.grad_fn for t in new_tensors if t.grad_fn is not None
                    and t.grad_fn.name() == "BackwardHookFunctionBackward"]
        if not grad_fns:
            raise RuntimeError("Error while setting up backward hooks. Please open an issue with "
                               "a code sample to reproduce this.")
        fn(grad_fns[0])
        arg_list = list(args)
        for idx, val in zip(indices, new_tensors, strict=True):
            arg_list[idx] = val
        return (tuple(arg_list) if type(args) is tuple else type(args)(*arg_list)), indices

    def setup_input_hook(self, args: tuple):
        """Route the module's tensor inputs through the node whose hook calls the user hooks."""
        res, indices = self._apply_on_tensors(self._set_user_hook, args)
        self.n_inputs = len(args)
        self.input_tensors_index = indices
        return res

    def setup_output_hook(self, args):
        """Route the module's tensor outputs through the node that catches grad_output."""
        def fn(grad_fn) -> None:
            def hook(_, grad_output):
                self.grad_outputs = self._pack_with_none(self.output_tensors_index, grad_output,
                                                         self.n_outputs)
                expected = len(self.grad_outputs)
                for pre_hook in self.user_pre_hooks:
                    replaced = pre_hook(self.module, self.grad_outputs)
                    if replaced is None:
                        continue
                    if len(replaced) != expected:
                        raise RuntimeError("Backward pre hook returned an invalid number of "
                                           f"grad_output, got {len(replaced)}, but expected "
                                           f"{expected}")
                    self.grad_outputs = replaced
                grad_outputs = self.grad_outputs
                if self.input_tensors_index is None:  # no input requires grad: call them now
                    warnings.warn("Full backward hook is firing when gradients are computed with "
                                  "respect to module outputs since no inputs require gradients. "
                                  "See https://docs.pytorch.org/docs/main/generated/torch.nn."
                                  "Module.html#torch.nn.Module.register_full_backward_hook for "
                                  "more details.", stacklevel=5)
                    grad_inputs = self._pack_with_none([], [], self.n_inputs)
                    for user_hook in self.user_hooks:
                        res = user_hook(self.module, grad_inputs, self.grad_outputs)
                        if res is not None and not (isinstance(res, tuple)
                                                    and all(r is None for r in res)):
                            raise RuntimeError("Backward hook for Modules where no input "
                                               "requires gradient should always return None "
                                               "or None for all gradients.")
                    self.grad_outputs = None
                if grad_outputs is not None:
                    return tuple(grad_outputs[i] for i in self.output_tensors_index)
                return None

            grad_fn.register_hook(hook)

        is_tuple = isinstance(args, tuple)
        res, indices = self._apply_on_tensors(fn, args if is_tuple else (args,))
        self.n_outputs = len(args) if is_tuple else 1
        self.output_tensors_index = indices
        return res if is_tuple else res[0]
