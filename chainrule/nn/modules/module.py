"""nn.Module: parameters, buffers, submodules, modes, hooks and state dicts; the global module
hooks (``register_module_*``)."""

from __future__ import annotations

import functools
import itertools
import warnings
import weakref
from collections import OrderedDict
from collections.abc import Callable, Iterator, Mapping
from typing import Any, NamedTuple, TypeVar

from ... import _creation
from ..._backend import dtype as _dtype_cls
from ..._device import as_device
from ..._device import device as _device_cls
from ..._dtypes import memory_format as _memory_format_cls
from ..._modes import stack as _stack
from ...autograd.grad_mode import no_grad
from ...autograd.graph import RemovableHandle
from ...tensor import Tensor
from ..parameter import Buffer, Parameter, UninitializedBuffer, is_lazy

__all__ = ["register_module_forward_pre_hook", "register_module_forward_hook",
           "register_module_full_backward_pre_hook", "register_module_backward_hook",
           "register_module_full_backward_hook", "register_module_buffer_registration_hook",
           "register_module_module_registration_hook",
           "register_module_parameter_registration_hook", "Module"]

T = TypeVar("T", bound="Module")
_EXTRA_STATE_KEY_SUFFIX = "_extra_state"


class _IncompatibleKeys(NamedTuple("IncompatibleKeys", [("missing_keys", list),
                                                       ("unexpected_keys", list)])):
    """What ``load_state_dict`` did not match: keys the module has and the checkpoint lacks,
    and the reverse."""

    __slots__ = ()

    def __repr__(self) -> str:
        if not self.missing_keys and not self.unexpected_keys:
            return "<All keys matched successfully>"
        return super().__repr__()

    __str__ = __repr__


def _addindent(s_: str, numSpaces: int) -> str:  # noqa: N803  (PyTorch's name)
    """``s_`` with every non-blank line but the first indented by ``numSpaces`` spaces."""
    first, newline, rest = s_.partition("\n")
    if not newline:
        return s_
    pad = " " * numSpaces
    return first + "\n" + "\n".join(pad + line if line.strip() else ""
                                     for line in rest.split("\n"))


class _WrappedHook:
    """A hook called with its module first (held weakly) when ``module`` is given."""

    def __init__(self, hook: Callable, module: Module | None = None) -> None:
        self.hook = hook
        functools.update_wrapper(self, hook)
        self.with_module = module is not None
        if module is not None:
            self.module = weakref.ref(module)

    def __call__(self, *args, **kwargs):
        if not self.with_module:
            return self.hook(*args, **kwargs)
        module = self.module()
        if module is None:
            raise RuntimeError("You are trying to call the hook of a dead Module!")
        return self.hook(module, *args, **kwargs)

    def __getstate__(self) -> dict:
        state = {"hook": self.hook, "with_module": self.with_module}
        if self.with_module:
            state["module"] = self.module()
        return state

    def __setstate__(self, state: dict) -> None:
        self.hook, self.with_module = state["hook"], state["with_module"]
        if self.with_module:
            if state["module"] is None:
                raise RuntimeError("You are trying to revive the hook of a dead Module!")
            self.module = weakref.ref(state["module"])


# ---- global hooks: every module's, for debugging and profiling --------------------------------

_global_buffer_registration_hooks: dict = OrderedDict()
_global_module_registration_hooks: dict = OrderedDict()
_global_parameter_registration_hooks: dict = OrderedDict()
_global_backward_pre_hooks: dict = OrderedDict()
_global_backward_hooks: dict = OrderedDict()
_global_is_full_backward_hook: bool | None = None
_global_forward_pre_hooks: dict = OrderedDict()
_global_forward_hooks: dict = OrderedDict()
_global_forward_hooks_always_called: dict = OrderedDict()
_global_forward_hooks_with_kwargs: dict = OrderedDict()


def _has_any_global_hook() -> bool:
    return bool(_global_backward_pre_hooks or _global_backward_hooks or _global_forward_hooks
                or _global_forward_pre_hooks or _global_forward_hooks_always_called
                or _global_forward_hooks_with_kwargs)


def _add(hooks: dict, hook: Callable, extra=None) -> RemovableHandle:
    handle = RemovableHandle(hooks, extra_dict=extra)
    hooks[handle.id] = hook
    return handle


def register_module_buffer_registration_hook(hook: Callable[..., None]) -> RemovableHandle:
    """Call ``hook(module, name, buffer)`` whenever any module registers a buffer; a returned
    value replaces the buffer."""
    return _add(_global_buffer_registration_hooks, hook)


def register_module_module_registration_hook(hook: Callable[..., None]) -> RemovableHandle:
    """Call ``hook(module, name, submodule)`` whenever any module registers a submodule; a
    returned value replaces the submodule."""
    return _add(_global_module_registration_hooks, hook)


def register_module_parameter_registration_hook(hook: Callable[..., None]) -> RemovableHandle:
    """Call ``hook(module, name, param)`` whenever any module registers a parameter; a returned
    value replaces the parameter."""
    return _add(_global_parameter_registration_hooks, hook)


def register_module_forward_pre_hook(hook: Callable[..., None]) -> RemovableHandle:
    """A forward pre-hook of every module, run before the module's own."""
    return _add(_global_forward_pre_hooks, hook)


def register_module_forward_hook(hook: Callable[..., None], *, with_kwargs: bool = False,
                                 always_call: bool = False) -> RemovableHandle:
    """A forward hook of every module, run before the module's own."""
    handle = _add(_global_forward_hooks, hook, _global_forward_hooks_always_called)
    if with_kwargs:
        _global_forward_hooks_with_kwargs[handle.id] = True
    if always_call:
        _global_forward_hooks_always_called[handle.id] = True
    return handle


def _set_global_full_backward(full: bool) -> None:
    global _global_is_full_backward_hook
    if _global_is_full_backward_hook is (not full):
        raise RuntimeError("Cannot use both regular backward hooks and full backward hooks as a "
                           "global Module hook. Please use only one of them.")
    _global_is_full_backward_hook = full


def register_module_backward_hook(hook: Callable) -> RemovableHandle:
    """A (deprecated, non-full) backward hook of every module."""
    _set_global_full_backward(False)
    return _add(_global_backward_hooks, hook)


def register_module_full_backward_pre_hook(hook: Callable) -> RemovableHandle:
    """A backward pre-hook of every module, run before the module's own."""
    return _add(_global_backward_pre_hooks, hook)


def register_module_full_backward_hook(hook: Callable) -> RemovableHandle:
    """A full backward hook of every module, run before the module's own."""
    _set_global_full_backward(True)
    return _add(_global_backward_hooks, hook)


def _forward_unimplemented(self, *input: Any) -> None:
    """Define the computation performed at every call (subclasses override it)."""
    raise NotImplementedError(f'Module [{type(self).__name__}] is missing the required '
                              '"forward" function')


_HOOK_DICTS = ("_backward_pre_hooks", "_backward_hooks", "_forward_hooks",
               "_forward_hooks_with_kwargs", "_forward_hooks_always_called",
               "_forward_pre_hooks", "_forward_pre_hooks_with_kwargs", "_state_dict_hooks",
               "_state_dict_pre_hooks", "_load_state_dict_pre_hooks",
               "_load_state_dict_post_hooks")


class Module:
    """Base class for all neural network modules."""

    dump_patches: bool = False
    _version: int = 1
    training: bool
    call_super_init: bool = False
    _compiled_call_impl: Callable | None = None
    forward: Callable[..., Any] = _forward_unimplemented

    def __init__(self, *args, **kwargs) -> None:
        if not self.call_super_init and kwargs:
            raise TypeError(f"{type(self).__name__}.__init__() got an unexpected keyword "
                            f"argument '{next(iter(kwargs))}'")
        if not self.call_super_init and args:
            raise TypeError(f"{type(self).__name__}.__init__() takes 1 positional argument but "
                            f"{len(args) + 1} were given")
        setattr_ = object.__setattr__
        setattr_(self, "training", True)
        setattr_(self, "_parameters", {})
        setattr_(self, "_buffers", {})
        setattr_(self, "_non_persistent_buffers_set", set())
        setattr_(self, "_is_full_backward_hook", None)
        for name in _HOOK_DICTS:
            setattr_(self, name, OrderedDict())
        setattr_(self, "_modules", {})
        if self.call_super_init:
            super().__init__(*args, **kwargs)

    # ---- calling ------------------------------------------------------------------------------

    def _wrapped_call_impl(self, *args, **kwargs):
        if self._compiled_call_impl is not None:
            return self._compiled_call_impl(*args, **kwargs)
        return self._call_impl(*args, **kwargs)

    __call__ = _wrapped_call_impl

    def _call_impl(self, *args, **kwargs):
        if _stack.capture is not None:  # chainrule.compile guards the training flag
            _stack.capture.module(self)
        if not (self._forward_pre_hooks or self._forward_hooks or self._backward_hooks
                or self._backward_pre_hooks or _global_forward_pre_hooks
                or _global_forward_hooks or _global_backward_hooks
                or _global_backward_pre_hooks):
            return self.forward(*args, **kwargs)
        return self._call_with_hooks(args, kwargs)

    def _call_with_hooks(self, args: tuple, kwargs: dict):
        """A call with hooks: forward pre-hooks, the backward hooks' identity nodes around
        forward, forward hooks; on an exception the ``always_call`` forward hooks still run."""
        result = None
        called = set()
        try:
            full_hooks, non_full_hooks = self._get_backward_hooks()
            pre_hooks = self._get_backward_pre_hooks()
            for hook_id, hook in (*_global_forward_pre_hooks.items(),
                                  *self._forward_pre_hooks.items()):
                if hook_id in self._forward_pre_hooks_with_kwargs:
                    new = hook(self, args, kwargs)
                    if new is not None:
                        if not (isinstance(new, tuple) and len(new) == 2):
                            raise RuntimeError("forward pre-hook must return None or a tuple of "
                                               f"(new_args, new_kwargs), but got {new}.")
                        args, kwargs = new
                else:
                    new = hook(self, args)
                    if new is not None:
                        args = new if isinstance(new, tuple) else (new,)
            bw_hook = None
            if full_hooks or pre_hooks:
                from ...utils.hooks import BackwardHook

                bw_hook = BackwardHook(self, full_hooks, pre_hooks)
                args = bw_hook.setup_input_hook(args)
            result = self.forward(*args, **kwargs)
            for hook_id, hook in (*_global_forward_hooks.items(), *self._forward_hooks.items()):
                if hook_id in self._forward_hooks_always_called \
                        or hook_id in _global_forward_hooks_always_called:
                    called.add(hook_id)
                if hook_id in self._forward_hooks_with_kwargs \
                        or hook_id in _global_forward_hooks_with_kwargs:
                    new = hook(self, args, kwargs, result)
                else:
                    new = hook(self, args, result)
                if new is not None:
                    result = new
            if bw_hook is not None:
                if not isinstance(result, (Tensor, tuple)):
                    warnings.warn("For backward hooks to be called, module output should be a "
                                  "Tensor or a tuple of Tensors but received "
                                  f"{type(result)}", stacklevel=2)
                result = bw_hook.setup_output_hook(result)
            if non_full_hooks:
                self._attach_non_full_backward_hooks(non_full_hooks, args, result)
            return result
        except Exception:
            for hooks, always, is_global in (
                    (_global_forward_hooks, _global_forward_hooks_always_called, True),
                    (self._forward_hooks, self._forward_hooks_always_called, False)):
                for hook_id, hook in hooks.items():
                    if hook_id not in always or hook_id in called:
                        continue
                    try:
                        if not is_global and hook_id in self._forward_hooks_with_kwargs:
                            new = hook(self, args, kwargs, result)
                        else:
                            new = hook(self, args, result)
                        if new is not None:
                            result = new
                    except Exception as e:
                        where = "global module" if is_global else "module"
                        warnings.warn(f"{where} forward hook with ``always_call=True`` raised an "
                                      "exception that was silenced as another error was raised "
                                      f"in forward: {e}", stacklevel=2)
            raise

    def _attach_non_full_backward_hooks(self, hooks: list, args: tuple, result) -> None:
        """The deprecated backward hooks: on the grad_fn of the first output tensor."""
        var = result
        while not isinstance(var, Tensor):
            var = next(v for v in var.values() if isinstance(v, Tensor)) \
                if isinstance(var, dict) else var[0]
        grad_fn = var.grad_fn
        if grad_fn is not None:
            for hook in hooks:
                grad_fn.register_hook(_WrappedHook(hook, self))
            self._maybe_warn_non_full_backward_hook(args, result, grad_fn)

    def _slow_forward(self, *input, **kwargs):
        return self.forward(*input, **kwargs)

    # ---- registration -------------------------------------------------------------------------

    def register_buffer(self, name: str, tensor: Tensor | None, persistent: bool = True) -> None:
        """Add a buffer: state that is not a parameter (in the state dict if persistent)."""
        if "_buffers" not in self.__dict__:
            raise AttributeError("cannot assign buffer before Module.__init__() call")
        _check_name(self, name, "buffer", self._buffers)
        if tensor is not None and not isinstance(tensor, Tensor):
            raise TypeError(f"cannot assign '{_typename(tensor)}' object to buffer '{name}' "
                            "(torch Tensor or None required)")
        for hook in _global_buffer_registration_hooks.values():
            output = hook(self, name, tensor)
            if output is not None:
                tensor = output
        self._buffers[name] = tensor
        if persistent:
            self._non_persistent_buffers_set.discard(name)
        else:
            self._non_persistent_buffers_set.add(name)

    def register_parameter(self, name: str, param: Parameter | None) -> None:
        """Add a parameter (or None) under ``name``."""
        if "_parameters" not in self.__dict__:
            raise AttributeError("cannot assign parameter before Module.__init__() call")
        _check_name(self, name, "parameter", self._parameters)
        if param is None:
            self._parameters[name] = None
            return
        if not isinstance(param, Parameter):
            raise TypeError(f"cannot assign '{_typename(param)}' object to parameter "
                            f"'{name}' (torch.nn.Parameter or None required)")
        if param.grad_fn is not None:
            raise ValueError(f"Cannot assign non-leaf Tensor to parameter '{name}'. Model "
                             f"parameters must be created explicitly. To express '{name}' as a "
                             "function of another Tensor, compute the value in the forward() "
                             "method.")
        for hook in _global_parameter_registration_hooks.values():
            output = hook(self, name, param)
            if output is not None:
                param = output
        self._parameters[name] = param

    def add_module(self, name: str, module: Module | None) -> None:
        """Add a child module under ``name``."""
        if module is not None and not isinstance(module, Module):
            raise TypeError(f"{_typename(module)} is not a Module subclass")
        if not isinstance(name, str):
            raise TypeError(f"module name should be a string. Got {_typename(name)}")
        if hasattr(self, name) and name not in self._modules:
            raise KeyError(f"attribute '{name}' already exists")
        if "." in name:
            raise KeyError(f'module name can\'t contain ".", got: {name}')
        if name == "":
            raise KeyError('module name can\'t be empty string ""')
        self._modules[name] = _registered_module(self, name, module)

    def register_module(self, name: str, module: Module | None) -> None:
        """Alias for ``add_module``."""
        self.add_module(name, module)

    def __setattr__(self, name: str, value) -> None:
        params = self.__dict__.get("_parameters")
        if isinstance(value, Parameter):
            if params is None:
                raise AttributeError("cannot assign parameters before Module.__init__() call")
            self._forget(name, self.__dict__, self._buffers, self._modules)
            self.register_parameter(name, value)
            return
        if params is not None and name in params:
            if value is not None:
                raise TypeError(f"cannot assign '{_typename(value)}' as parameter '{name}' "
                                "(torch.nn.Parameter or None expected)")
            self.register_parameter(name, value)
            return
        modules = self.__dict__.get("_modules")
        if isinstance(value, Module):
            if modules is None:
                raise AttributeError("cannot assign module before Module.__init__() call")
            self._forget(name, self.__dict__, self._parameters, self._buffers)
            modules[name] = _registered_module(self, name, value)
            return
        if modules is not None and name in modules:
            if value is not None:
                raise TypeError(f"cannot assign '{_typename(value)}' as child module '{name}' "
                                "(torch.nn.Module or None expected)")
            modules[name] = _registered_module(self, name, value)
            return
        buffers = self.__dict__.get("_buffers")
        if isinstance(value, (Buffer, UninitializedBuffer)) or \
                (buffers is not None and name in buffers):
            if value is not None and not isinstance(value, Tensor):
                raise TypeError(f"cannot assign '{_typename(value)}' as buffer '{name}' "
                                "(torch.nn.Buffer, torch.Tensor or None expected)")
            if isinstance(value, (Buffer, UninitializedBuffer)):
                persistent = value.persistent
            else:
                persistent = name not in self._non_persistent_buffers_set
            self.register_buffer(name, value, persistent)
            return
        object.__setattr__(self, name, value)

    def _forget(self, name: str, *stores) -> None:
        for store in stores:
            store.pop(name, None)
        self._non_persistent_buffers_set.discard(name)

    def __getattr__(self, name: str):
        d = self.__dict__
        for store in ("_parameters", "_buffers", "_modules"):
            if store in d and name in d[store]:
                return d[store][name]
        raise AttributeError(f"'{type(self).__name__}' object has no attribute '{name}'")

    def __delattr__(self, name: str) -> None:
        if name in self._parameters:
            del self._parameters[name]
        elif name in self._buffers:
            del self._buffers[name]
            self._non_persistent_buffers_set.discard(name)
        elif name in self._modules:
            del self._modules[name]
        else:
            object.__delattr__(self, name)

    def __getstate__(self) -> dict:
        state = self.__dict__.copy()
        state.pop("_compiled_call_impl", None)
        return state

    def __setstate__(self, state: dict) -> None:
        self.__dict__.update(state)
        # modules pickled by older versions lack some of the hook dicts
        for name in _HOOK_DICTS:
            self.__dict__.setdefault(name, OrderedDict())
        self.__dict__.setdefault("_non_persistent_buffers_set", set())
        self.__dict__.setdefault("_is_full_backward_hook", None)

    # ---- traversal ----------------------------------------------------------------------------

    def get_submodule(self, target: str) -> Module:
        """The submodule at a dotted path ("" is this module)."""
        module = self
        for item in target.split(".") if target else ():
            if not hasattr(module, item):
                raise AttributeError(f"{module._get_name()} has no attribute `{item}`")
            module = getattr(module, item)
            if not isinstance(module, Module):
                raise AttributeError(f"`{item}` is not an nn.Module")
        return module

    def set_submodule(self, target: str, module: Module, strict: bool = False) -> None:
        """Put ``module`` at a dotted path; with ``strict``, only where a submodule exists."""
        if target == "":
            raise ValueError("Cannot set the submodule without a target name!")
        if not isinstance(module, Module):
            raise ValueError(f"`module` is not an nn.Module, found {type(module)}")
        path, _, name = target.rpartition(".")
        parent = self.get_submodule(path)
        if strict and not hasattr(parent, name):
            raise AttributeError(f"{parent._get_name()} has no attribute `{name}`")
        if hasattr(parent, name) and not isinstance(getattr(parent, name), Module):
            raise AttributeError(f"`{name}` is not an nn.Module")
        setattr(parent, name, module)

    def get_parameter(self, target: str) -> Parameter:
        """The parameter at a dotted path."""
        path, _, name = target.rpartition(".")
        module = self.get_submodule(path)
        if not hasattr(module, name):
            raise AttributeError(f"{module._get_name()} has no attribute `{name}`")
        param = getattr(module, name)
        if not isinstance(param, Parameter):
            raise AttributeError(f"`{name}` is not an nn.Parameter")
        return param

    def get_buffer(self, target: str) -> Tensor:
        """The buffer at a dotted path."""
        path, _, name = target.rpartition(".")
        module = self.get_submodule(path)
        if not hasattr(module, name):
            raise AttributeError(f"{module._get_name()} has no attribute `{name}`")
        buffer = getattr(module, name)
        if name not in module._buffers:
            raise AttributeError(f"`{name}` is not a buffer")
        return buffer

    def get_extra_state(self) -> Any:
        """The extra state to save in the state dict (subclasses that have some override it)."""
        raise RuntimeError("Reached a code path in Module.get_extra_state() that should never be "
                           "called. Please file an issue at https://github.com/pytorch/pytorch/"
                           "issues/new?template=bug-report.yml to report this bug.")

    def set_extra_state(self, state: Any) -> None:
        """Restore the extra state ``get_extra_state`` returned (subclasses override it)."""
        raise RuntimeError("Reached a code path in Module.set_extra_state() that should never be "
                           "called. Please file an issue at https://github.com/pytorch/pytorch/"
                           "issues/new?template=bug-report.yml to report this bug.")

    def named_modules(self, memo: set | None = None, prefix: str = "",
                      remove_duplicate: bool = True) -> Iterator[tuple[str, Module]]:
        """All modules in the tree (this one first, then depth first), with dotted names."""
        memo = set() if memo is None else memo
        stack = [(prefix, self)]
        while stack:
            name, module = stack.pop()
            if module in memo:
                continue
            if remove_duplicate:
                memo.add(module)
            yield name, module
            children = [(f"{name}.{n}" if name else n, m)
                        for n, m in module._modules.items() if m is not None]
            stack.extend(reversed(children))

    def modules(self, remove_duplicate: bool = True) -> Iterator[Module]:
        """All modules in the tree, this one first."""
        for _, module in self.named_modules(remove_duplicate=remove_duplicate):
            yield module

    def named_children(self) -> Iterator[tuple[str, Module]]:
        """The direct submodules with their names (each once)."""
        memo = set()
        for name, module in self._modules.items():
            if module is not None and module not in memo:
                memo.add(module)
                yield name, module

    def children(self) -> Iterator[Module]:
        """The direct submodules (each once)."""
        for _, module in self.named_children():
            yield module

    def _named_members(self, get_members_fn: Callable, prefix: str = "", recurse: bool = True,
                       remove_duplicate: bool = True):
        """Each member ``get_members_fn(module)`` gives, over this module (and its tree)."""
        memo = set()
        modules = self.named_modules(prefix=prefix, remove_duplicate=remove_duplicate) \
            if recurse else [(prefix, self)]
        for module_prefix, module in modules:
            for name, value in get_members_fn(module):
                if value is None or value in memo:
                    continue
                if remove_duplicate:
                    memo.add(value)
                yield (f"{module_prefix}.{name}" if module_prefix else name), value

    def parameters(self, recurse: bool = True) -> Iterator[Parameter]:
        """All parameters (each once)."""
        for _, param in self.named_parameters(recurse=recurse):
            yield param

    def named_parameters(self, prefix: str = "", recurse: bool = True,
                         remove_duplicate: bool = True) -> Iterator[tuple[str, Parameter]]:
        """Parameters with dotted names."""
        yield from self._named_members(_parameters_of, prefix, recurse, remove_duplicate)

    def buffers(self, recurse: bool = True) -> Iterator[Tensor]:
        """All buffers (each once)."""
        for _, buf in self.named_buffers(recurse=recurse):
            yield buf

    def named_buffers(self, prefix: str = "", recurse: bool = True,
                      remove_duplicate: bool = True) -> Iterator[tuple[str, Tensor]]:
        """Buffers with dotted names."""
        yield from self._named_members(_buffers_of, prefix, recurse, remove_duplicate)

    # ---- modes --------------------------------------------------------------------------------

    def train(self: T, mode: bool = True) -> T:
        """Set training mode (affects dropout and batch norm) on this module and its children."""
        if not isinstance(mode, bool):
            raise ValueError("training mode is expected to be boolean")
        self.training = mode
        for module in self.children():
            module.train(mode)
        return self

    def eval(self: T) -> T:
        """Set evaluation mode."""
        return self.train(False)

    def requires_grad_(self: T, requires_grad: bool = True) -> T:
        """Set ``requires_grad`` of every parameter."""
        for p in self.parameters():
            p.requires_grad_(requires_grad)
        return self

    def zero_grad(self, set_to_none: bool = True) -> None:
        """Reset the gradients of all parameters (to None by default)."""
        if getattr(self, "_is_replica", False):
            warnings.warn("Calling .zero_grad() from a module created with nn.DataParallel() has "
                          "no effect. The parameters are copied (in a differentiable manner) "
                          "from the original module. This means they are not leaf nodes in "
                          "autograd and so don't accumulate gradients. If you need gradients in "
                          "your forward method, consider using autograd.grad instead.",
                          stacklevel=2)
        for p in self.parameters():
            if p.grad is None:
                continue
            if set_to_none:
                p.grad = None
            else:
                if p.grad.grad_fn is not None:
                    p.grad.detach_()
                else:
                    p.grad.requires_grad_(False)
                p.grad.zero_()

    def compile(self, *args, **kwargs) -> None:
        """Compile this module's forward with ``chainrule.compile`` (in place; the state_dict
        keys stay as they are)."""
        from ..._compile import compile as compile_fn

        self._compiled_call_impl = compile_fn(self._call_impl, *args, **kwargs)

    # ---- converting parameters and buffers ----------------------------------------------------

    def apply(self: T, fn: Callable[[Module], None]) -> T:
        """Call ``fn`` on every submodule (children first) and on this module."""
        for module in self.children():
            module.apply(fn)
        fn(self)
        return self

    def _apply(self, fn: Callable[[Tensor], Tensor], recurse: bool = True):
        """Replace every parameter, gradient and buffer ``t`` by ``fn(t)``: in place (the same
        Parameter object) when the device type stays, as new Parameters otherwise."""
        if recurse:
            for module in self.children():
                module._apply(fn)
        for key, param in self._parameters.items():
            if param is None:
                continue
            if is_lazy(param):  # only the placeholder's dtype or device changes
                with no_grad():
                    param._replace_placeholder(fn(param.data))
                continue
            with no_grad():
                applied = fn(param)
            grad = param.grad
            if _same_kind(param, applied):
                param.data = applied
                out = param
            else:
                out = Parameter(applied, param.requires_grad)
                self._parameters[key] = out
            if grad is not None:
                with no_grad():
                    grad_applied = fn(grad)
                if _same_kind(grad, grad_applied) and out is param:
                    out.grad.data = grad_applied
                else:
                    out.grad = grad_applied.requires_grad_(grad.requires_grad)
        for key, buf in self._buffers.items():
            if buf is None:
                continue
            if is_lazy(buf):
                buf._replace_placeholder(fn(buf.data))
            else:
                self._buffers[key] = fn(buf)
        return self

    def to(self, *args, **kwargs):
        """Move and/or cast the parameters and buffers: ``to(device=None, dtype=None,
        non_blocking=False)``, ``to(dtype)``, ``to(tensor)`` or ``to(memory_format=...)``;
        integer tensors keep their dtype."""
        device, dtype, non_blocking, memory_format = _parse_to(args, kwargs)
        if dtype is not None:
            if not (dtype.is_floating_point or dtype.is_complex):
                raise TypeError("nn.Module.to only accepts floating point or complex dtypes, but "
                                f"got desired dtype={dtype}")
            if dtype.is_complex:
                warnings.warn("Complex modules are a new feature under active development whose "
                              "design may change, and some modules might not work as expected "
                              "when using complex tensors as parameters or buffers. Please file "
                              "an issue at https://github.com/pytorch/pytorch/issues/new?template"
                              "=bug-report.yml if a complex module does not work as expected.",
                              stacklevel=2)

        def convert(t: Tensor) -> Tensor:
            options = {}
            if device is not None:
                options["device"] = device
            if dtype is not None and (t.is_floating_point() or t.is_complex()):
                options["dtype"] = dtype
            if non_blocking:
                options["non_blocking"] = True
            if memory_format is not None and t.dim() in (4, 5):
                options["memory_format"] = memory_format
            try:
                return t.to(**options) if options else t
            except NotImplementedError as e:
                if str(e) == "Cannot copy out of meta tensor; no data!":
                    raise NotImplementedError(
                        f"{e} Please use torch.nn.Module.to_empty() instead of "
                        "torch.nn.Module.to() when moving module from meta to a different "
                        "device.") from None
                raise

        return self._apply(convert)

    def to_empty(self: T, *, device, recurse: bool = True) -> T:
        """Move the parameters and buffers to ``device`` without copying their values (new,
        uninitialized storage): how a module built on the meta device gets real memory."""
        return self._apply(lambda t: _creation.empty_like(t, device=device), recurse=recurse)

    def cpu(self: T) -> T:
        """Move the parameters and buffers to the CPU."""
        return self._apply(lambda t: t.cpu())

    def cuda(self: T, device=None) -> T:
        """Move the parameters and buffers to a CUDA device (PyTorch's CPU build: an error)."""
        return self._apply(lambda t: t.cuda(device))

    def ipu(self: T, device=None) -> T:
        """Move the parameters and buffers to an IPU (not available: an error)."""
        return self._apply(lambda t: t.to(_on("ipu", device)))

    def xpu(self: T, device=None) -> T:
        """Move the parameters and buffers to an XPU (not available: an error)."""
        return self._apply(lambda t: t.to(_on("xpu", device)))

    def mtia(self: T, device=None) -> T:
        """Move the parameters and buffers to an MTIA device (not available: an error)."""
        return self._apply(lambda t: t.to(_on("mtia", device)))

    def type(self: T, dst_type) -> T:
        """Cast all parameters and buffers to ``dst_type``."""
        return self._apply(lambda t: t.type(dst_type))

    def float(self: T) -> T:
        """Cast floating point parameters and buffers to float32."""
        return self._apply(lambda t: t.float() if t.is_floating_point() else t)

    def double(self: T) -> T:
        """Cast floating point parameters and buffers to float64."""
        return self._apply(lambda t: t.double() if t.is_floating_point() else t)

    def half(self: T) -> T:
        """Cast floating point parameters and buffers to float16."""
        return self._apply(lambda t: t.half() if t.is_floating_point() else t)

    def bfloat16(self: T) -> T:
        """Cast floating point parameters and buffers to bfloat16."""
        return self._apply(lambda t: t.bfloat16() if t.is_floating_point() else t)

    def share_memory(self: T) -> T:
        """Move the parameters and buffers to shared memory."""
        return self._apply(lambda t: t.share_memory_())

    # ---- hooks --------------------------------------------------------------------------------

    def register_forward_pre_hook(self, hook: Callable, *, prepend: bool = False,
                                  with_kwargs: bool = False) -> RemovableHandle:
        """Call ``hook(module, args)`` before forward; a returned value replaces the args.

        With ``with_kwargs`` it is ``hook(module, args, kwargs)`` returning (args, kwargs)."""
        handle = _add(self._forward_pre_hooks, hook, self._forward_pre_hooks_with_kwargs)
        if with_kwargs:
            self._forward_pre_hooks_with_kwargs[handle.id] = True
        if prepend:
            self._forward_pre_hooks.move_to_end(handle.id, last=False)
        return handle

    def register_forward_hook(self, hook: Callable, *, prepend: bool = False,
                              with_kwargs: bool = False,
                              always_call: bool = False) -> RemovableHandle:
        """Call ``hook(module, args, output)`` after forward; a returned value replaces it.

        With ``with_kwargs`` it is ``hook(module, args, kwargs, output)``; ``always_call`` runs
        it even when forward raises."""
        handle = _add(self._forward_hooks, hook,
                      [self._forward_hooks_with_kwargs, self._forward_hooks_always_called])
        if with_kwargs:
            self._forward_hooks_with_kwargs[handle.id] = True
        if always_call:
            self._forward_hooks_always_called[handle.id] = True
        if prepend:
            self._forward_hooks.move_to_end(handle.id, last=False)
        return handle

    def register_full_backward_pre_hook(self, hook: Callable,
                                        prepend: bool = False) -> RemovableHandle:
        """Call ``hook(module, grad_output)`` when the gradients of the module's outputs are
        known; a returned tuple replaces grad_output."""
        handle = _add(self._backward_pre_hooks, hook)
        if prepend:
            self._backward_pre_hooks.move_to_end(handle.id, last=False)
        return handle

    def register_backward_hook(self, hook: Callable) -> RemovableHandle:
        """The deprecated backward hook: on the grad_fn of the module's first output tensor,
        ``hook(module, grad_input, grad_output)`` of that node only."""
        if self._is_full_backward_hook is True:
            raise RuntimeError("Cannot use both regular backward hooks and full backward hooks on "
                               "a single Module. Please use only one of them.")
        self._is_full_backward_hook = False
        return _add(self._backward_hooks, hook)

    def register_full_backward_hook(self, hook: Callable,
                                    prepend: bool = False) -> RemovableHandle:
        """Call ``hook(module, grad_input, grad_output)`` with the gradients of the module's
        tensor inputs and outputs; a returned tuple replaces grad_input."""
        if self._is_full_backward_hook is False:
            raise RuntimeError("Cannot use both regular backward hooks and full backward hooks on "
                               "a single Module. Please use only one of them.")
        self._is_full_backward_hook = True
        handle = _add(self._backward_hooks, hook)
        if prepend:
            self._backward_hooks.move_to_end(handle.id, last=False)
        return handle

    def _get_backward_hooks(self) -> tuple[list, list]:
        """The full and the non-full backward hooks to run on a call, global ones first."""
        full, non_full = [], []
        for is_full, hooks in ((_global_is_full_backward_hook, _global_backward_hooks),
                               (self._is_full_backward_hook, self._backward_hooks)):
            if is_full is True:
                full += hooks.values()
            elif is_full is False:
                non_full += hooks.values()
        return full, non_full

    def _get_backward_pre_hooks(self) -> list:
        return [*_global_backward_pre_hooks.values(), *self._backward_pre_hooks.values()]

    def _maybe_warn_non_full_backward_hook(self, inputs, result, grad_fn) -> None:
        if not isinstance(result, Tensor):
            if not (isinstance(result, tuple) and all(isinstance(r, Tensor) for r in result)):
                warnings.warn("Using non-full backward hooks on a Module that does not return a "
                              "single Tensor or a tuple of Tensors is deprecated and will be "
                              "removed in future versions. This hook will be missing some of "
                              "the grad_output. Please use register_full_backward_hook to get "
                              "the documented behavior.", FutureWarning, stacklevel=2)
                return
        else:
            result = (result,)
        if not isinstance(inputs, Tensor):
            if not (isinstance(inputs, tuple) and all(isinstance(i, Tensor) for i in inputs)):
                warnings.warn("Using non-full backward hooks on a Module that does not take as "
                              "input a single Tensor or a tuple of Tensors is deprecated and "
                              "will be removed in future versions. This hook will be missing "
                              "some of the grad_input. Please use register_full_backward_hook "
                              "to get the documented behavior.", FutureWarning, stacklevel=2)
                return
        else:
            inputs = (inputs,)
        out_grad_fns = {r.grad_fn for r in result if r.grad_fn is not None}
        if not out_grad_fns or (len(out_grad_fns) == 1 and grad_fn not in out_grad_fns):
            warnings.warn("Using a non-full backward hook when outputs are nested in python data "
                          "structure is deprecated and will be removed in future versions. This "
                          "hook will be missing some grad_output.", FutureWarning, stacklevel=2)
        elif len(out_grad_fns) > 1:
            warnings.warn("Using a non-full backward hook when outputs are generated by different "
                          "autograd Nodes is deprecated and will be removed in future versions. "
                          "This hook will be missing some grad_output. Please use "
                          "register_full_backward_hook to get the documented behavior.",
                          FutureWarning, stacklevel=2)
        else:
            input_grad_fns = {i.grad_fn for i in inputs if i.grad_fn is not None}
            if input_grad_fns != {edge[0] for edge in grad_fn.next_functions}:
                warnings.warn("Using a non-full backward hook when the forward contains multiple "
                              "autograd Nodes is deprecated and will be removed in future "
                              "versions. This hook will be missing some grad_input. Please use "
                              "register_full_backward_hook to get the documented behavior.",
                              FutureWarning, stacklevel=2)

    # ---- state dicts --------------------------------------------------------------------------

    T_destination = TypeVar("T_destination", bound=dict)

    def _register_state_dict_hook(self, hook: Callable) -> RemovableHandle:
        """A state_dict post-hook ``hook(module, state_dict, prefix, local_metadata)`` that may
        return a new state dict."""
        if getattr(hook, "_from_public_api", False):
            raise RuntimeError("Cannot register the same function as the state dict post hook "
                               "that was previously registered via register_state_dict_post_hook")
        return _add(self._state_dict_hooks, hook)

    def register_state_dict_post_hook(self, hook: Callable) -> RemovableHandle:
        """Call ``hook(module, state_dict, prefix, local_metadata)`` after this module's
        entries are in the state dict (it changes it in place and returns None)."""
        hook._from_public_api = True
        return _add(self._state_dict_hooks, hook)

    def register_state_dict_pre_hook(self, hook: Callable) -> RemovableHandle:
        """Call ``hook(module, prefix, keep_vars)`` before this module's ``state_dict``."""
        return _add(self._state_dict_pre_hooks, hook)

    def _save_to_state_dict(self, destination: dict, prefix: str, keep_vars: bool) -> None:
        """Put this module's own parameters and persistent buffers (and extra state) in
        ``destination`` (not its submodules')."""
        for name, param in self._parameters.items():
            if param is not None:
                destination[prefix + name] = param if keep_vars else param.detach()
        for name, buf in self._buffers.items():
            if buf is not None and name not in self._non_persistent_buffers_set:
                destination[prefix + name] = buf if keep_vars else buf.detach()
        if type(self).get_extra_state is not Module.get_extra_state:
            destination[prefix + _EXTRA_STATE_KEY_SUFFIX] = self.get_extra_state()

    def state_dict(self, *args, destination=None, prefix: str = "", keep_vars: bool = False):
        """Parameters and persistent buffers by dotted name (detached unless keep_vars), with
        each module's ``_version`` in ``state_dict._metadata``."""
        if args:
            warnings.warn("Positional args are being deprecated, use kwargs instead. Refer to "
                          "https://pytorch.org/docs/main/generated/torch.nn.Module.html#torch.nn."
                          "Module.state_dict for details.", FutureWarning, stacklevel=2)
            if destination is None:
                destination = args[0]
            if len(args) > 1 and prefix == "":
                prefix = args[1]
            if len(args) > 2 and keep_vars is False:
                keep_vars = args[2]
        if destination is None:
            destination = OrderedDict()
            destination._metadata = OrderedDict()
        local_metadata = {"version": self._version}
        if hasattr(destination, "_metadata"):
            destination._metadata[prefix[:-1]] = local_metadata
        for hook in self._state_dict_pre_hooks.values():
            hook(self, prefix, keep_vars)
        self._save_to_state_dict(destination, prefix, keep_vars)
        for name, module in self._modules.items():
            if module is not None:
                module.state_dict(destination=destination, prefix=f"{prefix}{name}.",
                                  keep_vars=keep_vars)
        for hook in self._state_dict_hooks.values():
            result = hook(self, destination, prefix, local_metadata)
            if getattr(hook, "_from_public_api", False):
                if result is not None:
                    raise RuntimeError("state_dict post-hook must return None")
            elif result is not None:
                destination = result
        return destination

    def _register_load_state_dict_pre_hook(self, hook: Callable,
                                           with_module: bool = False) -> RemovableHandle:
        """``hook(state_dict, prefix, local_metadata, strict, missing_keys, unexpected_keys,
        error_msgs)`` before this module loads (with the module first if ``with_module``)."""
        return _add(self._load_state_dict_pre_hooks,
                    _WrappedHook(hook, self if with_module else None))

    def register_load_state_dict_pre_hook(self, hook: Callable) -> RemovableHandle:
        """Call ``hook(module, state_dict, prefix, local_metadata, strict, missing_keys,
        unexpected_keys, error_msgs)`` before this module loads its entries."""
        return self._register_load_state_dict_pre_hook(hook, with_module=True)

    def register_load_state_dict_post_hook(self, hook: Callable) -> RemovableHandle:
        """Call ``hook(module, incompatible_keys)`` after ``load_state_dict`` loaded this
        module; it may change the key lists in place."""
        return _add(self._load_state_dict_post_hooks, hook)

    def _load_from_state_dict(self, state_dict: dict, prefix: str, local_metadata: dict,
                              strict: bool, missing_keys: list, unexpected_keys: list,
                              error_msgs: list) -> None:
        """Load this module's own parameters and buffers (not its submodules') from
        ``state_dict``, noting missing and unexpected keys and errors in the lists."""
        for hook in self._load_state_dict_pre_hooks.values():
            hook(state_dict, prefix, local_metadata, strict, missing_keys, unexpected_keys,
                 error_msgs)
        local_state = {name: value for name, value in itertools.chain(
            self._parameters.items(),
            ((n, b) for n, b in self._buffers.items()
             if n not in self._non_persistent_buffers_set)) if value is not None}
        assign = local_metadata.get("assign_to_params_buffers", False)
        for name, param in local_state.items():
            key = prefix + name
            if key not in state_dict:
                if strict:
                    missing_keys.append(key)
                continue
            value = state_dict[key]
            if not isinstance(value, Tensor):
                if not hasattr(value, "__torch_function__"):
                    error_msgs.append(f'While copying the parameter named "{key}", expected '
                                      "torch.Tensor or Tensor-like object from checkpoint but "
                                      f"received {type(value)}")
                    continue
                value = _creation.as_tensor(value.detach())  # another library's tensor
            lazy = is_lazy(param)
            if lazy and is_lazy(value) and not assign:
                continue  # two placeholders: PyTorch copies one empty tensor into another
            if not lazy and param.dim() == 0 and value.dim() == 1:
                value = value[0]  # checkpoints of PyTorch 0.3 saved scalars as 1-element vectors
            if not lazy and value.shape != param.shape:
                error_msgs.append(f"size mismatch for {key}: copying a param with shape "
                                  f"{value.shape} from checkpoint, the shape in current model is "
                                  f"{param.shape}.")
                continue
            if param.device.type == "meta" and value.device.type != "meta" and not assign:
                warnings.warn(f"for {key}: copying from a non-meta parameter in the checkpoint to "
                              "a meta parameter in the current model, which is a no-op. (Did "
                              "you mean to pass `assign=True` to assign items in the state "
                              "dictionary to their corresponding key in the module instead of "
                              "copying them in place?)", stacklevel=2)
            try:
                with no_grad():
                    if assign:
                        if isinstance(param, Parameter):
                            if isinstance(value, Parameter):
                                value.requires_grad_(param.requires_grad)
                            else:
                                value = Parameter(value, requires_grad=param.requires_grad)
                        setattr(self, name, value)
                    else:
                        param.copy_(value)
            except Exception as ex:
                error_msgs.append(f'While copying the parameter named "{key}", whose dimensions '
                                  f"in the model are {param.size()} and whose dimensions in the "
                                  f"checkpoint are {value.size()}, an exception occurred : "
                                  f"{ex.args}.")
        extra_key = prefix + _EXTRA_STATE_KEY_SUFFIX
        if type(self).set_extra_state is not Module.set_extra_state:
            if extra_key in state_dict:
                self.set_extra_state(state_dict[extra_key])
            elif strict:
                missing_keys.append(extra_key)
        elif strict and extra_key in state_dict:
            unexpected_keys.append(extra_key)
        if strict:
            for key in state_dict:
                if not key.startswith(prefix) or key == extra_key:
                    continue
                head, dot, _ = key[len(prefix):].partition(".")
                if (dot and head not in self._modules) or (not dot and head not in local_state):
                    unexpected_keys.append(key)

    def load_state_dict(self, state_dict: Mapping[str, Any], strict: bool = True,
                        assign: bool = False) -> _IncompatibleKeys:
        """Copy values from ``state_dict`` into parameters and buffers (same shapes), calling
        each module's ``_load_from_state_dict``.

        With ``strict`` every key must match; otherwise the missing and unexpected keys are
        returned. ``assign`` makes the given tensors the module's (parameters stay Parameters,
        with the module's requires_grad) instead of copying into them."""
        if not isinstance(state_dict, Mapping):
            raise TypeError(f"Expected state_dict to be dict-like, got {type(state_dict)}.")
        missing_keys: list = []
        unexpected_keys: list = []
        error_msgs: list = []
        metadata = getattr(state_dict, "_metadata", None)
        state_dict = OrderedDict(state_dict)
        if metadata is not None:
            state_dict._metadata = metadata

        def load(module: Module, local_state_dict: dict, prefix: str = "") -> None:
            local_metadata = {} if metadata is None else metadata.get(prefix[:-1], {})
            if assign:
                local_metadata["assign_to_params_buffers"] = assign
            module._load_from_state_dict(local_state_dict, prefix, local_metadata, True,
                                         missing_keys, unexpected_keys, error_msgs)
            for name, child in module._modules.items():
                if child is not None:
                    child_prefix = f"{prefix}{name}."
                    load(child, {k: v for k, v in local_state_dict.items()
                                 if k.startswith(child_prefix)}, child_prefix)
            incompatible = _IncompatibleKeys(missing_keys, unexpected_keys)
            for hook in module._load_state_dict_post_hooks.values():
                if hook(module, incompatible) is not None:
                    raise AssertionError(
                        "Hooks registered with ``register_load_state_dict_post_hook`` are not "
                        "expected to return new values, if incompatible_keys need to be "
                        "modified, it should be done inplace.")

        load(self, state_dict)
        if strict:
            if unexpected_keys:
                error_msgs.insert(0, "Unexpected key(s) in state_dict: "
                                  + ", ".join(f'"{k}"' for k in unexpected_keys) + ". ")
            if missing_keys:
                error_msgs.insert(0, "Missing key(s) in state_dict: "
                                  + ", ".join(f'"{k}"' for k in missing_keys) + ". ")
        if error_msgs:
            raise RuntimeError(f"Error(s) in loading state_dict for {type(self).__name__}:\n\t"
                               + "\n\t".join(error_msgs))
        return _IncompatibleKeys(missing_keys, unexpected_keys)

    # ---- printing -----------------------------------------------------------------------------

    def extra_repr(self) -> str:
        """Extra information for this module's repr (override in subclasses)."""
        return ""

    def _get_name(self) -> str:
        return type(self).__name__

    def __repr__(self) -> str:
        extra = self.extra_repr()
        extra_lines = extra.split("\n") if extra else []
        child_lines = [f"({name}): {_addindent(repr(module), 2)}"
                       for name, module in self._modules.items()]
        lines = extra_lines + child_lines
        head = self._get_name() + "("
        if not lines:
            return head + ")"
        if len(extra_lines) == 1 and not child_lines:
            return head + extra_lines[0] + ")"
        return head + "\n  " + "\n  ".join(lines) + "\n)"

    def __dir__(self) -> list:
        keys = [*dir(type(self)), *self.__dict__, *self._parameters, *self._modules,
                *self._buffers]
        return sorted(k for k in set(keys) if not k[:1].isdigit())

    def _replicate_for_data_parallel(self):
        replica = self.__new__(type(self))
        replica.__dict__ = self.__dict__.copy()
        # replicas have no parameters of their own: DataParallel sets them as plain tensors
        replica._parameters = {}
        replica._buffers = replica._buffers.copy()
        replica._modules = replica._modules.copy()
        replica._is_replica = True
        return replica


def _parameters_of(module: Module):
    return module._parameters.items()


def _buffers_of(module: Module):
    return module._buffers.items()


def _registered_module(owner: Module, name: str, module: Module | None) -> Module | None:
    for hook in _global_module_registration_hooks.values():
        output = hook(owner, name, module)
        if output is not None:
            module = output
    return module


def _on(kind: str, device) -> _device_cls:
    """The device ``Module.<kind>(device)`` moves to: an index, a device, or the current one."""
    if device is None:
        return as_device(kind)
    return as_device(f"{kind}:{device}" if isinstance(device, int) else device)


def _same_kind(tensor: Tensor, applied: Tensor) -> bool:
    """Whether ``applied`` can become ``tensor``'s data in place (same device type)."""
    return tensor.device.type == applied.device.type


_TO_SIGNATURES = (
    "to() received an invalid combination of arguments - got ({}), but expected one of:\n"
    " * (torch.device device = None, torch.dtype dtype = None, bool non_blocking = False, "
    "bool copy = False, *, torch.memory_format memory_format = None)\n"
    " * (torch.dtype dtype, bool non_blocking = False, bool copy = False, *, "
    "torch.memory_format memory_format = None)\n"
    " * (Tensor tensor, bool non_blocking = False, bool copy = False, *, "
    "torch.memory_format memory_format = None)\n")


def _type_name(value) -> str:
    if isinstance(value, _dtype_cls):
        return "torch.dtype"
    if isinstance(value, _device_cls):
        return "torch.device"
    if isinstance(value, _memory_format_cls):
        return "torch.memory_format"
    return "Tensor" if isinstance(value, Tensor) else type(value).__name__


def _parse_to(args: tuple, kwargs: dict) -> tuple:
    """(device, dtype, non_blocking, memory_format) from the arguments of ``Module.to``, in
    PyTorch's three forms: (device, dtype, non_blocking, copy), (dtype, non_blocking, copy) and
    (tensor, non_blocking, copy), memory_format keyword-only."""
    if len(args) > 4:
        raise TypeError(f"to() takes from 0 to 4 positional arguments but {len(args)} were given")

    def invalid() -> TypeError:
        got = ", ".join([_type_name(a) for a in args]
                        + [f"{k}={_type_name(v)}" for k, v in kwargs.items()])
        return TypeError(_TO_SIGNATURES.format(got + (", " if kwargs and not args else "")))

    names = {"device", "dtype", "non_blocking", "copy", "memory_format", "tensor"}
    if kwargs.keys() - names:
        raise invalid()
    first = args[0] if args else None
    if isinstance(first, Tensor) or "tensor" in kwargs:
        form = ("tensor", "non_blocking", "copy")
    elif isinstance(first, _dtype_cls):
        form = ("dtype", "non_blocking", "copy")
    else:
        form = ("device", "dtype", "non_blocking", "copy")
    if len(args) > len(form):
        raise invalid()
    given = dict(zip(form, args))
    if given.keys() & kwargs.keys() or kwargs.keys() - set(form) - {"memory_format"}:
        raise invalid()
    given.update(kwargs)
    device, dtype = given.get("device"), given.get("dtype")
    if "tensor" in given:
        tensor = given["tensor"]
        if not isinstance(tensor, Tensor):
            raise invalid()
        device, dtype = tensor.device, tensor.dtype
    if dtype is not None and not isinstance(dtype, _dtype_cls):
        raise invalid()
    if device is not None:
        if isinstance(device, bool) or not isinstance(device, (str, int, _device_cls)):
            raise invalid()
        if isinstance(device, int):
            raise RuntimeError("Cannot access accelerator device when none is available.")
        device = as_device(device)
    if any(not isinstance(given.get(k, False), bool) for k in ("non_blocking", "copy")):
        raise invalid()
    memory_format = given.get("memory_format")
    if memory_format is not None and not isinstance(memory_format, _memory_format_cls):
        raise invalid()
    return device, dtype, bool(given.get("non_blocking", False)), memory_format


def _typename(value) -> str:
    """PyTorch's name for a value's type in error messages (torch.FloatTensor for tensors)."""
    return value.type() if isinstance(value, Tensor) else type(value).__name__


def _check_name(module: Module, name: str, what: str, store: dict) -> None:
    if not isinstance(name, str):
        raise TypeError(f"{what} name should be a string. Got {_typename(name)}")
    if "." in name:
        raise KeyError(f'{what} name can\'t contain "."')
    if name == "":
        raise KeyError(f'{what} name can\'t be empty string ""')
    if hasattr(module, name) and name not in store:
        raise KeyError(f"attribute '{name}' already exists")
