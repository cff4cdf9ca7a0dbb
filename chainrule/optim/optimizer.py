"""Optimizer: parameter groups, per-parameter state, zero_grad and state_dict, as in PyTorch.

Subclasses implement ``step`` under ``@_step`` and keep each parameter's buffers in
``self.state[p]``; updates use only chainrule's public tensor API.
"""

from __future__ import annotations

import copy
import functools
import itertools
import warnings
from collections import OrderedDict, defaultdict
from collections.abc import Callable, Hashable, Iterable
from typing import Any, TypeAlias

from .._backend import float32
from .._creation import tensor, zeros_like
from .._modes import stack as _stack
from ..autograd.grad_mode import enable_grad, no_grad
from ..autograd.graph import RemovableHandle
from ..ops.elementwise import where
from ..tensor import Tensor

__all__ = ["Optimizer", "register_optimizer_step_pre_hook", "register_optimizer_step_post_hook"]

ParamsT: TypeAlias = Iterable[Tensor] | Iterable[dict[str, Any]] | Iterable[tuple[str, Tensor]]
StateDict: TypeAlias = dict[str, Any]
OptimizerPreHook: TypeAlias = Callable[..., tuple[tuple, dict] | None]
OptimizerPostHook: TypeAlias = Callable[..., None]
GlobalOptimizerPreHook: TypeAlias = OptimizerPreHook
GlobalOptimizerPostHook: TypeAlias = OptimizerPostHook

_global_optimizer_pre_hooks: dict[int, Callable] = OrderedDict()
_global_optimizer_post_hooks: dict[int, Callable] = OrderedDict()


class _RequiredParameter:
    """The default of an optimizer argument that has none (``required``)."""

    def __repr__(self) -> str:
        return "<required parameter>"


required = _RequiredParameter()


def register_optimizer_step_pre_hook(hook: Callable) -> RemovableHandle:
    """Call ``hook(optimizer, args, kwargs)`` before every optimizer's step; a returned
    ``(args, kwargs)`` replaces the step's arguments."""
    handle = RemovableHandle(_global_optimizer_pre_hooks)
    _global_optimizer_pre_hooks[handle.id] = hook
    return handle


def register_optimizer_step_post_hook(hook: Callable) -> RemovableHandle:
    """Call ``hook(optimizer, args, kwargs)`` after every optimizer's step."""
    handle = RemovableHandle(_global_optimizer_post_hooks)
    _global_optimizer_post_hooks[handle.id] = hook
    return handle


def _typename(obj) -> str:
    return obj.type() if isinstance(obj, Tensor) else type(obj).__name__


def _step(step: Callable) -> Callable:
    """Run an optimizer's ``step`` without recording, and note that it ran (for LR schedulers)."""

    @functools.wraps(step)
    def wrapper(self, *args, **kwargs):
        if _stack.capture is not None:  # chainrule.compile: a scheduler's new lr recaptures
            for group in self.param_groups:
                _stack.capture.watch(group)
        with no_grad():
            return step(self, *args, **kwargs)

    return wrapper


def _evaluate(closure: Callable | None):
    """The closure's loss, computed with gradients on (None without a closure)."""
    if closure is None:
        return None
    with enable_grad():
        return closure()


def _check_flags(differentiable: bool, foreach: bool | None = None,
                 fused: bool | None = None) -> None:
    """Validate the implementation switches; foreach, fused and capturable change nothing here."""
    if fused and foreach:
        raise RuntimeError("`fused` and `foreach` cannot be `True` together.")
    if differentiable:
        raise NotImplementedError("differentiable=True is not supported: chainrule's optimizers "
                                  "update parameters in place under no_grad")


def _check_adam_family(lr: float, betas: tuple[float, float], eps: float,
                       weight_decay: float) -> None:
    """The argument checks Adam, AdamW, Adamax, NAdam and RAdam share."""
    _check_nonnegative(("Invalid learning rate", lr), ("Invalid epsilon value", eps))
    for i, beta in enumerate(betas):
        if not 0.0 <= beta < 1.0:
            raise ValueError(f"Invalid beta parameter at index {i}: {beta}")
    _check_nonnegative(("Invalid weight_decay value", weight_decay))


def _check_nonnegative(*checks: tuple[str, float]) -> None:
    """ValueError ``'<message>: <value>'`` for the first value that is not >= 0 (NaN included)."""
    for message, value in checks:
        if not 0.0 <= value:
            raise ValueError(f"{message}: {value}")


class Optimizer:
    """Base class: holds ``param_groups`` (dicts of params and options) and ``state``."""

    def __init__(self, params: ParamsT, defaults: dict[str, Any]) -> None:
        self.defaults = defaults
        for name in _HOOK_DICTS:
            setattr(self, name, OrderedDict())
        self._patch_step_function()
        self.state: defaultdict[Any, dict[str, Any]] = defaultdict(dict)
        self.param_groups: list[dict[str, Any]] = []
        if isinstance(params, Tensor):
            raise TypeError("params argument given to the optimizer should be an iterable of "
                            f"Tensors or dicts, but got {_typename(params)}")
        param_groups = list(params)
        if not param_groups:
            raise ValueError("optimizer got an empty parameter list")
        if not isinstance(param_groups[0], dict):
            param_groups = [{"params": param_groups}]
        for group in param_groups:
            self.add_param_group(group)

    def add_param_group(self, param_group: dict[str, Any]) -> None:
        """Add a group of parameters with its own options (missing ones take the defaults)."""
        if not isinstance(param_group, dict):
            raise TypeError(f"param_group must be a dict, but got {type(param_group)}")
        params = param_group["params"]
        if isinstance(params, Tensor):
            params = [params]
        elif isinstance(params, set):
            raise TypeError("optimizer parameters need to be organized in ordered collections, "
                            "but the ordering of tensors in sets will change between runs. "
                            "Please use a list instead.")
        tensors, names = [], []
        for param in params:
            if isinstance(param, tuple) and len(param) == 2 and isinstance(param[0], str):
                names.append(param[0])  # from named_parameters()
                param = param[1]
            if not isinstance(param, Tensor):
                raise TypeError("optimizer can only optimize Tensors, but one of the params is "
                                f"{_typename(param)}")
            if not self.defaults.get("differentiable") and not (param.is_leaf
                                                                 or param.retains_grad):
                raise ValueError("can't optimize a non-leaf Tensor")
            tensors.append(param)
        if names:
            if len(names) != len(tensors):
                raise ValueError("all optimizer params should be with/without names. Some param "
                                 "names are missing")
            param_group["param_names"] = names
        named = "param_names" in param_group
        if self.param_groups and named != ("param_names" in self.param_groups[0]):
            raise ValueError("all optimizer param groups should be with/without names. cannot "
                             f"add param group {'with' if named else 'without'} names to the "
                             "optimizer")
        if len({id(p) for p in tensors}) != len(tensors):
            warnings.warn("optimizer contains a parameter group with duplicate parameters; in "
                          "future, this will cause an error; see "
                          "github.com/pytorch/pytorch/issues/40967 for more information",
                          stacklevel=3)
        param_group["params"] = tensors
        for name, default in self.defaults.items():
            if default is required and name not in param_group:
                raise ValueError("parameter group didn't specify a value of required "
                                 f"optimization parameter {name}")
            param_group.setdefault(name, default)

        seen = {id(p) for group in self.param_groups for p in group["params"]}
        if any(id(p) in seen for p in tensors):
            raise ValueError("some parameters appear in more than one parameter group")
        self.param_groups.append(param_group)

    def zero_grad(self, set_to_none: bool = True) -> None:
        """Reset the gradients of all parameters: to None, or to zeros in place."""
        for group in self.param_groups:
            for p in group["params"]:
                grad = p.grad
                if grad is None:
                    continue
                if set_to_none:
                    p.grad = None
                else:
                    if grad.grad_fn is not None:
                        grad.detach_()
                    else:
                        grad.requires_grad_(False)
                    grad.zero_()

    def step(self, closure: Callable | None = None):
        """Update the parameters once; ``closure`` re-evaluates the loss if the method needs it."""
        raise NotImplementedError

    # ---- hooks ---------------------------------------------------------------------------

    @staticmethod
    def profile_hook_step(func: Callable) -> Callable:
        """``func`` (a ``step``) wrapped to run the global and this optimizer's step hooks."""

        @functools.wraps(func)
        def wrapper(*args, **kwargs):
            self = args[0]
            for pre_hook in itertools.chain(_global_optimizer_pre_hooks.values(),
                                            self._optimizer_step_pre_hooks.values()):
                result = pre_hook(self, args, kwargs)
                if result is not None:
                    if not (isinstance(result, tuple) and len(result) == 2):
                        raise RuntimeError(f"{func} must return None or a tuple of (new_args, "
                                           f"new_kwargs), but got {result}.")
                    args, kwargs = result
            out = func(*args, **kwargs)
            self._optimizer_step_code()
            for post_hook in itertools.chain(self._optimizer_step_post_hooks.values(),
                                             _global_optimizer_post_hooks.values()):
                post_hook(self, args, kwargs)
            return out

        return wrapper

    def _patch_step_function(self) -> None:
        """Wrap the class's ``step`` (once) so that the step hooks run around it."""
        self._zero_grad_profile_name = f"Optimizer.zero_grad#{type(self).__name__}.zero_grad"
        if not getattr(type(self).step, "hooked", None):
            type(self).step = self.profile_hook_step(type(self).step)
            type(self).step.hooked = True

    def _optimizer_step_code(self) -> None:
        """Called after every step (PyTorch's profiler attaches here); does nothing."""

    def register_step_pre_hook(self, hook: OptimizerPreHook) -> RemovableHandle:
        """Call ``hook(optimizer, args, kwargs)`` before each step; a returned
        ``(args, kwargs)`` replaces the step's arguments."""
        return _add(self._optimizer_step_pre_hooks, hook)

    def register_step_post_hook(self, hook: OptimizerPostHook) -> RemovableHandle:
        """Call ``hook(optimizer, args, kwargs)`` after each step."""
        return _add(self._optimizer_step_post_hooks, hook)

    def register_state_dict_pre_hook(self, hook: Callable, prepend: bool = False
                                     ) -> RemovableHandle:
        """Call ``hook(optimizer)`` before ``state_dict``."""
        return _add(self._optimizer_state_dict_pre_hooks, hook, prepend)

    def register_state_dict_post_hook(self, hook: Callable, prepend: bool = False
                                      ) -> RemovableHandle:
        """Call ``hook(optimizer, state_dict)`` after ``state_dict``; a returned dict replaces
        it."""
        return _add(self._optimizer_state_dict_post_hooks, hook, prepend)

    def register_load_state_dict_pre_hook(self, hook: Callable, prepend: bool = False
                                          ) -> RemovableHandle:
        """Call ``hook(optimizer, state_dict)`` (a shallow copy) before ``load_state_dict``; a
        returned dict is loaded instead."""
        return _add(self._optimizer_load_state_dict_pre_hooks, hook, prepend)

    def register_load_state_dict_post_hook(self, hook: Callable, prepend: bool = False
                                           ) -> RemovableHandle:
        """Call ``hook(optimizer)`` after ``load_state_dict``."""
        return _add(self._optimizer_load_state_dict_post_hooks, hook, prepend)

    # ---- state_dict ------------------------------------------------------------------------

    def state_dict(self) -> StateDict:
        """``{'state': {index: buffers}, 'param_groups': [options + 'params': indices]}``."""
        for pre_hook in self._optimizer_state_dict_pre_hooks.values():
            pre_hook(self)
        index_of: dict[int, int] = {}
        groups, start = [], 0
        for group in self.param_groups:
            packed = {k: v for k, v in group.items() if k != "params"}
            for i, p in enumerate(group["params"], start):
                index_of.setdefault(id(p), i)
            packed["params"] = [index_of[id(p)] for p in group["params"]]
            start += len(packed["params"])
            groups.append(packed)
        state = {index_of[id(p)] if isinstance(p, Tensor) else p: s for p, s in self.state.items()}
        state_dict = {"state": state, "param_groups": groups}
        for post_hook in self._optimizer_state_dict_post_hooks.values():
            result = post_hook(self, state_dict)
            if result is not None:
                state_dict = result
        return state_dict

    @staticmethod
    def _process_value_according_to_param_policy(param: Tensor, value: Tensor, param_id: int,
                                                  param_groups: list[dict[Any, Any]],
                                                  key: Hashable = None) -> Tensor:
        """A loaded state tensor as the optimizer keeps it: 'step' as saved (float32 for
        capturable or fused groups), the rest in the parameter's dtype (not copied if it
        already is)."""
        if param_groups is None:
            raise AssertionError("Expected param_groups to be set")
        group = next((g for g in param_groups if param_id in g["params"]), {})
        if key == "step":
            if group.get("capturable", False) or group.get("fused", False):
                return value.to(dtype=float32, device=param.device)
            return value
        if param.is_floating_point():
            return value.to(dtype=param.dtype, device=param.device)
        return value.to(device=param.device)

    def load_state_dict(self, state_dict: StateDict) -> None:
        """Restore the buffers and group options saved by ``state_dict`` onto these params
        (tensors already in the parameter's dtype are taken as they are, not copied)."""
        state_dict = state_dict.copy()
        for pre_hook in self._optimizer_load_state_dict_pre_hooks.values():
            result = pre_hook(self, state_dict)
            if result is not None:
                state_dict = result
        saved_groups = copy.deepcopy(state_dict["param_groups"])
        if len(saved_groups) != len(self.param_groups):
            raise ValueError("loaded state dict has a different number of parameter groups")
        if any(len(g["params"]) != len(s["params"])
               for g, s in zip(self.param_groups, saved_groups)):
            raise ValueError("loaded state dict contains a parameter group that doesn't match "
                             "the size of optimizer's group")
        param_of = {i: p for g, s in zip(self.param_groups, saved_groups)
                    for i, p in zip(s["params"], g["params"])}
        state: defaultdict[Any, dict[str, Any]] = defaultdict(dict)
        for key, value in state_dict["state"].items():
            if key in param_of:
                state[param_of[key]] = _cast_state(param_of[key], value, key,
                                                   state_dict["param_groups"])
            else:
                state[key] = value
        for group, saved in zip(self.param_groups, saved_groups):
            saved["params"] = group["params"]
            if "param_names" in group and "param_names" not in saved:
                saved["param_names"] = group["param_names"]
        self.__setstate__({"state": state, "param_groups": saved_groups})
        for post_hook in self._optimizer_load_state_dict_post_hooks.values():
            post_hook(self)

    def __getstate__(self) -> dict[str, Any]:
        return {"defaults": self.defaults, "state": self.state, "param_groups": self.param_groups}

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)
        for name in _HOOK_DICTS:  # not pickled
            self.__dict__.setdefault(name, OrderedDict())
        self._patch_step_function()
        self.defaults.setdefault("differentiable", False)
        for group in self.param_groups:  # options added after the state was saved
            for name, default in self.defaults.items():
                group.setdefault(name, default)

    def __repr__(self) -> str:
        lines = [f"{type(self).__name__} ("]
        for i, group in enumerate(self.param_groups):
            if i:
                lines.append("")
            lines.append(f"Parameter Group {i}")
            lines += [f"    {k}: {group[k]}" for k in sorted(group) if k != "params"]
        return "\n".join(lines) + "\n)"


class _GroupwiseOptimizer(Optimizer):
    """An optimizer whose ``step`` updates each parameter group on its own: subclasses give the
    update of one group as ``_update(group)``."""

    @_step
    def step(self, closure: Callable | None = None):
        """One update of every parameter that has a gradient; returns the closure's loss."""
        loss = _evaluate(closure)
        for group in self.param_groups:
            self._update(group)
        return loss

    def _update(self, group: dict) -> None:
        raise NotImplementedError


def _init_group(optimizer: Optimizer, group: dict, *buffers: str, scalars: dict | None = None,
                init: Callable | None = None) -> tuple[list, list, list]:
    """The parameters of ``group`` that have a gradient, their gradients and their states: on
    first use a state gets a float32 ``step``, the ``scalars`` as tensors, the ``buffers`` as
    zeros and whatever ``init(param, grad, state)`` adds, in PyTorch's key order."""
    params, grads, states = [], [], []
    for p in group["params"]:
        grad = p.grad
        if grad is None:
            continue
        state = optimizer.state[p]
        if not state:
            state["step"] = tensor(0.0)
            for name, value in (scalars or {}).items():
                state[name] = tensor(value)
            for name in buffers:
                state[name] = zeros_like(p)
            if init is not None:
                init(p, grad, state)
        params.append(p)
        grads.append(grad)
        states.append(state)
    return params, grads, states


def _count(step_t: Tensor):
    """Count a step on its tensor; the step number for the update rule. While chainrule.compile
    captures it stays a (float64) tensor: the scalars made from it are then kernels that a
    replay computes again, not constants of one step."""
    step_t.add_(1)
    return step_t.double() if _stack.capture is not None else step_t.item()


def _check_functional(state_steps: list | None = None, grad_scale=None, found_inf=None,
                      foreach: bool | None = None, fused: bool | None = None,
                      differentiable: bool = False) -> None:
    """The checks the functional forms (``adam``, ``sgd``, ...) make of their arguments."""
    if state_steps is not None and not all(isinstance(t, Tensor) for t in state_steps):
        raise RuntimeError("API has changed, `state_steps` argument must contain a list of "
                           "singleton tensors")
    _check_flags(differentiable, foreach, fused)
    if not fused and (grad_scale is not None or found_inf is not None):
        raise AssertionError("Expected grad_scale and found_inf to be None")


def _decay(p: Tensor, grad: Tensor, lr: float, weight_decay: float,
           decoupled: bool = False) -> Tensor:
    """Weight decay: shrink the parameter (decoupled, AdamW-style) or add it to the gradient."""
    if weight_decay == 0:
        return grad
    if decoupled:
        p.mul_(1 - lr * weight_decay)
        return grad
    return grad + p * weight_decay


def _update_moments(exp_avg: Tensor, exp_avg_sq: Tensor, grad: Tensor, beta1: float,
                    beta2: float) -> None:
    """Adam's moving averages of the gradient and of its square, in place."""
    _lerp_(exp_avg, grad, 1 - beta1)
    exp_avg_sq.mul_(beta2)
    _addcmul_(exp_avg_sq, grad, grad, 1 - beta2)


def _cast_state(param: Tensor, value, param_id, param_groups: list, key=None):
    """A saved state value as the optimizer keeps it: its tensors through
    ``_process_value_according_to_param_policy``, containers rebuilt, the rest as is."""
    if isinstance(value, Tensor):
        return Optimizer._process_value_according_to_param_policy(param, value, param_id,
                                                                  param_groups, key)
    if isinstance(value, dict):
        return {k: _cast_state(param, v, param_id, param_groups, k) for k, v in value.items()}
    if isinstance(value, Iterable) and not isinstance(value, (str, bytes)):
        return type(value)(_cast_state(param, v, param_id, param_groups) for v in value)
    return value


_HOOK_DICTS = ("_optimizer_step_pre_hooks", "_optimizer_step_post_hooks",
               "_optimizer_state_dict_pre_hooks", "_optimizer_state_dict_post_hooks",
               "_optimizer_load_state_dict_pre_hooks", "_optimizer_load_state_dict_post_hooks")


def _add(hooks: OrderedDict, hook: Callable, prepend: bool = False) -> RemovableHandle:
    handle = RemovableHandle(hooks)
    hooks[handle.id] = hook
    if prepend:
        hooks.move_to_end(handle.id, last=False)
    return handle


# ---- ops the update rules need that chainrule does not have yet, composed from public ones ----


def _lerp_(buf: Tensor, end: Tensor, weight: float) -> None:
    """``buf.lerp_(end, weight)``, in the form PyTorch's kernel uses for each half of weight."""
    if weight < 0.5:
        buf.add_((end - buf) * weight)
    else:
        buf.copy_(end - (end - buf) * (1 - weight))


def _addcmul_(buf: Tensor, tensor1: Tensor, tensor2: Tensor, value: float = 1) -> None:
    """``buf.addcmul_(tensor1, tensor2, value=value)``: buf += value * tensor1 * tensor2."""
    buf.add_(tensor1 * value * tensor2 if value != 1 else tensor1 * tensor2)


def _addcdiv_(buf: Tensor, tensor1: Tensor, tensor2: Tensor, value: float = 1) -> None:
    """``buf.addcdiv_(tensor1, tensor2, value=value)``: buf += value * tensor1 / tensor2."""
    buf.add_(tensor1 * value / tensor2 if isinstance(value, Tensor) or value != 1
             else tensor1 / tensor2)


def _maximum_(buf: Tensor, other: Tensor) -> None:
    """``torch.maximum(buf, other, out=buf)`` (NaN propagates from either side)."""
    buf.copy_(where((buf >= other) | (buf != buf), buf, other))


def _abs_max(x: Tensor) -> Tensor:
    """``x.abs().max()`` as a 0-d tensor: halves folded with where() (NaN propagates)."""
    x = x.abs().reshape(-1)
    while x.numel() > 1:
        half = x.numel() // 2
        a, b = x[:half], x[half:2 * half]
        folded = where((a >= b) | (a != a), a, b)
        if x.numel() % 2:
            last = x[2 * half:]
            head = folded[:1]
            folded[:1] = where((head >= last) | (head != head), head, last)
        x = folded
    return x.reshape(())
