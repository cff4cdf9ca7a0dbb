"""nn.Module: parameters, buffers, submodules, modes, hooks and state dicts."""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable, Iterator, Mapping
from typing import NamedTuple

from .._creation import as_tensor
from .._tooling import hooks as _hooks
from ..autograd.grad_mode import no_grad
from ..autograd.graph import RemovableHandle, add_hook
from ..tensor import Tensor
from .parameter import Buffer, Parameter, UninitializedBuffer, is_lazy

__all__ = ["Module", "factory_kwargs"]


class _IncompatibleKeys(NamedTuple):
    missing_keys: list
    unexpected_keys: list

    def __repr__(self) -> str:
        if not self.missing_keys and not self.unexpected_keys:
            return "<All keys matched successfully>"
        return (f"_IncompatibleKeys(missing_keys={self.missing_keys}, "
                f"unexpected_keys={self.unexpected_keys})")


class Module:
    """Base class for all neural network modules."""

    training: bool
    _version = 1

    def __init__(self, *args, **kwargs) -> None:
        if args or kwargs:
            raise TypeError(f"{type(self).__name__}.__init__() got unexpected arguments")
        object.__setattr__(self, "training", True)
        object.__setattr__(self, "_parameters", OrderedDict())
        object.__setattr__(self, "_buffers", OrderedDict())
        object.__setattr__(self, "_non_persistent_buffers_set", set())
        object.__setattr__(self, "_modules", OrderedDict())
        object.__setattr__(self, "_forward_pre_hooks", OrderedDict())
        object.__setattr__(self, "_forward_pre_hooks_with_kwargs", set())
        object.__setattr__(self, "_forward_hooks", OrderedDict())

    def forward(self, *args, **kwargs):
        raise NotImplementedError(f'Module [{type(self).__name__}] is missing the required '
                                  '"forward" function')

    def __call__(self, *args, **kwargs):
        compiled = self.__dict__.get("_compiled_call")
        if compiled is not None:
            return compiled(*args, **kwargs)
        return self._call_impl(*args, **kwargs)

    def _call_impl(self, *args, **kwargs):
        if _hooks.capture is not None:  # chainrule.compile guards the training flag
            _hooks.capture.module(self)
        for key, hook in tuple(self._forward_pre_hooks.items()):
            if key in self._forward_pre_hooks_with_kwargs:
                result = hook(self, args, kwargs)
                if result is not None:
                    if not (isinstance(result, tuple) and len(result) == 2):
                        raise RuntimeError("forward pre-hook must return None or a tuple of "
                                           f"(new_args, new_kwargs), but got {result}.")
                    args, kwargs = result
                continue
            result = hook(self, args)
            if result is not None:
                args = result if isinstance(result, tuple) else (result,)
        out = self.forward(*args, **kwargs)
        for hook in tuple(self._forward_hooks.values()):
            result = hook(self, args, out)
            if result is not None:
                out = result
        return out

    # ---- registration -------------------------------------------------------------------------

    def __setattr__(self, name: str, value) -> None:
        params = self.__dict__.get("_parameters")
        if isinstance(value, Parameter):
            if params is None:
                raise AttributeError("cannot assign parameters before Module.__init__() call")
            self._remove_name(name, keep=self._parameters)
            self.register_parameter(name, value)
        elif params is not None and name in params:
            if value is not None:
                raise TypeError(f"cannot assign '{_typename(value)}' as parameter '{name}' "
                                "(torch.nn.Parameter or None expected)")
            params[name] = None
        elif isinstance(value, Module):
            if params is None:
                raise AttributeError("cannot assign module before Module.__init__() call")
            self._remove_name(name, keep=self._modules)
            self._modules[name] = value
        elif self.__dict__.get("_modules") is not None and name in self._modules:
            if value is not None:
                raise TypeError(f"cannot assign '{_typename(value)}' as child module "
                                f"'{name}' (torch.nn.Module or None expected)")
            self._modules[name] = None
        elif isinstance(value, (Buffer, UninitializedBuffer)):
            self._remove_name(name, keep=self._buffers)
            self.register_buffer(name, value, persistent=value.persistent)
        elif self.__dict__.get("_buffers") is not None and name in self._buffers:
            if value is not None and not isinstance(value, Tensor):
                raise TypeError(f"cannot assign '{_typename(value)}' as buffer '{name}' "
                                "(torch.Tensor or None expected)")
            self._buffers[name] = value
        else:
            object.__setattr__(self, name, value)

    def _remove_name(self, name: str, keep: dict) -> None:
        """Forget ``name`` everywhere but in ``keep`` (where it keeps its place, as PyTorch)."""
        for store in (self.__dict__, self._parameters, self._buffers, self._modules):
            if store is not keep:
                store.pop(name, None)
        self._non_persistent_buffers_set.discard(name)

    def __getattr__(self, name: str):
        d = self.__dict__
        for store in ("_parameters", "_buffers", "_modules"):
            if store in d and name in d[store]:
                return d[store][name]
        raise AttributeError(f"'{type(self).__name__}' object has no attribute '{name}'")

    def __delattr__(self, name: str) -> None:
        for store in (self._parameters, self._buffers, self._modules):
            if name in store:
                del store[name]
                self._non_persistent_buffers_set.discard(name)
                return
        object.__delattr__(self, name)

    def register_parameter(self, name: str, param: Parameter | None) -> None:
        """Add a parameter (or None) under ``name``."""
        if "_parameters" not in self.__dict__:
            raise AttributeError("cannot assign parameter before Module.__init__() call")
        _check_name(self, name, "parameter", self._parameters)
        if param is not None and not isinstance(param, Parameter):
            raise TypeError(f"cannot assign '{_typename(param)}' object to parameter "
                            f"'{name}' (torch.nn.Parameter or None required)")
        if param is not None and param.grad_fn is not None:
            raise ValueError(f"Cannot assign non-leaf Tensor to parameter '{name}'. Model "
                             "parameters must be created explicitly.")
        self._parameters[name] = param

    def register_buffer(self, name: str, tensor: Tensor | None, persistent: bool = True) -> None:
        """Add a buffer: state that is not a parameter (in the state dict if persistent)."""
        if "_buffers" not in self.__dict__:
            raise AttributeError("cannot assign buffer before Module.__init__() call")
        _check_name(self, name, "buffer", self._buffers)
        if tensor is not None and not isinstance(tensor, Tensor):
            raise TypeError(f"cannot assign '{_typename(tensor)}' object to buffer '{name}' "
                            "(torch Tensor or None required)")
        self._buffers[name] = tensor
        if persistent:
            self._non_persistent_buffers_set.discard(name)
        else:
            self._non_persistent_buffers_set.add(name)

    def add_module(self, name: str, module: Module | None) -> None:
        """Add a child module under ``name``."""
        if module is not None and not isinstance(module, Module):
            raise TypeError(f"{type(module).__name__} is not a Module subclass")
        _check_name(self, name, "module", self._modules)
        self._modules[name] = module

    register_module = add_module

    # ---- traversal ----------------------------------------------------------------------------

    def named_modules(self, memo: set | None = None, prefix: str = "",
                      remove_duplicate: bool = True) -> Iterator[tuple[str, Module]]:
        """All modules in the tree (this one first), with dotted names."""
        memo = set() if memo is None else memo
        stack = [(prefix, self)]
        while stack:
            name, module = stack.pop()
            if remove_duplicate:
                if id(module) in memo:
                    continue
                memo.add(id(module))
            yield name, module
            children = [(f"{name}.{n}" if name else n, m)
                        for n, m in module._modules.items() if m is not None]
            stack.extend(reversed(children))

    def modules(self) -> Iterator[Module]:
        for _, m in self.named_modules():
            yield m

    def named_children(self) -> Iterator[tuple[str, Module]]:
        seen = set()
        for name, m in self._modules.items():
            if m is not None and id(m) not in seen:
                seen.add(id(m))
                yield name, m

    def children(self) -> Iterator[Module]:
        for _, m in self.named_children():
            yield m

    def _named_members(self, store: str, prefix: str, recurse: bool, remove_duplicate: bool):
        seen = set()
        modules = self.named_modules(prefix=prefix, remove_duplicate=remove_duplicate) \
            if recurse else [(prefix, self)]
        for mod_name, module in modules:
            for name, value in getattr(module, store).items():
                if value is None or (remove_duplicate and id(value) in seen):
                    continue
                seen.add(id(value))
                yield (f"{mod_name}.{name}" if mod_name else name), value

    def named_parameters(self, prefix: str = "", recurse: bool = True,
                         remove_duplicate: bool = True) -> Iterator[tuple[str, Parameter]]:
        """Parameters with dotted names."""
        yield from self._named_members("_parameters", prefix, recurse, remove_duplicate)

    def parameters(self, recurse: bool = True) -> Iterator[Parameter]:
        """All parameters (each once)."""
        for _, p in self.named_parameters(recurse=recurse):
            yield p

    def named_buffers(self, prefix: str = "", recurse: bool = True,
                      remove_duplicate: bool = True) -> Iterator[tuple[str, Tensor]]:
        yield from self._named_members("_buffers", prefix, recurse, remove_duplicate)

    def buffers(self, recurse: bool = True) -> Iterator[Tensor]:
        for _, b in self.named_buffers(recurse=recurse):
            yield b

    def get_submodule(self, target: str) -> Module:
        """The submodule at a dotted path."""
        module = self
        for part in target.split(".") if target else ():
            if part not in module._modules:
                raise AttributeError(f"{type(module).__name__} has no attribute `{part}`")
            module = module._modules[part]
        return module

    def get_parameter(self, target: str) -> Parameter:
        path, _, name = target.rpartition(".")
        module = self.get_submodule(path)
        if name not in module._parameters:
            raise AttributeError(f"{type(module).__name__} has no parameter `{name}`")
        return module._parameters[name]

    # ---- modes and bulk changes -----------------------------------------------------------------

    def compile(self, *args, **kwargs) -> None:
        """Compile this module's forward with ``chainrule.compile`` (in place; the state_dict
        keys stay as they are)."""
        from .._compile import compile as compile_fn

        self.__dict__["_compiled_call"] = compile_fn(self._call_impl, *args, **kwargs)

    def train(self, mode: bool = True) -> Module:
        """Set training mode (affects dropout and batch norm) on this module and its children."""
        if not isinstance(mode, bool):
            raise ValueError("training mode is expected to be boolean")
        for m in self.modules():
            object.__setattr__(m, "training", mode)
        return self

    def eval(self) -> Module:
        """Set evaluation mode."""
        return self.train(False)

    def requires_grad_(self, requires_grad: bool = True) -> Module:
        for p in self.parameters():
            p.requires_grad_(requires_grad)
        return self

    def zero_grad(self, set_to_none: bool = True) -> None:
        """Reset the gradients of all parameters (to None by default)."""
        for p in self.parameters():
            if p.grad is not None:
                if set_to_none:
                    p.grad = None
                else:
                    p.grad = p.grad.detach()
                    p.grad.zero_()

    def apply(self, fn: Callable[[Module], None]) -> Module:
        """Call ``fn`` on every submodule (children first) and on this module."""
        for m in self.children():
            m.apply(fn)
        fn(self)
        return self

    def _apply_to_tensors(self, convert: Callable[[Tensor], Tensor]) -> Module:
        with no_grad():
            for m in self.modules():
                for p in m._parameters.values():
                    if p is not None and is_lazy(p):  # only the placeholder's dtype changes
                        p._data = convert(p.data)._data
                    elif p is not None:
                        p._data = convert(p)._data
                        if p.grad is not None:
                            p.grad._data = convert(p.grad)._data
                for name, b in m._buffers.items():
                    if b is not None and is_lazy(b):
                        b._data = convert(b.data)._data
                    elif b is not None:
                        m._buffers[name] = convert(b)
        return self

    def to(self, *args, **kwargs) -> Module:
        """Convert floating point parameters and buffers to a dtype (device must be the CPU)."""
        dtype = kwargs.get("dtype")
        for a in args:
            if not isinstance(a, (str, Tensor)) and str(a) != "cpu":
                dtype = a
            elif isinstance(a, Tensor):
                dtype = a.dtype
            elif isinstance(a, str) and a != "cpu":
                raise RuntimeError(f"to: device '{a}' is not available: chainrule runs on the CPU")
        if dtype is None:
            return self
        return self._apply_to_tensors(lambda t: t.to(dtype) if t.is_floating_point() else t)

    def float(self) -> Module:
        from .. import float32

        return self.to(float32)

    def double(self) -> Module:
        from .. import float64

        return self.to(float64)

    def half(self) -> Module:
        from .. import float16

        return self.to(float16)

    def cpu(self) -> Module:
        return self

    def type(self, dst_type) -> Module:
        return self.to(dst_type)

    # ---- hooks --------------------------------------------------------------------------------

    def register_forward_pre_hook(self, hook: Callable, *,
                                  with_kwargs: bool = False) -> RemovableHandle:
        """Call ``hook(module, args)`` before forward; a returned value replaces the args.

        With ``with_kwargs`` it is ``hook(module, args, kwargs)`` returning (args, kwargs)."""
        handle = add_hook(self._forward_pre_hooks, hook)
        if with_kwargs:
            self._forward_pre_hooks_with_kwargs.add(handle.id)
        return handle

    def register_forward_hook(self, hook: Callable) -> RemovableHandle:
        """Call ``hook(module, args, output)`` after forward; a returned value replaces it."""
        return add_hook(self._forward_hooks, hook)

    # ---- state dicts --------------------------------------------------------------------------

    def state_dict(self, *, destination: dict | None = None, prefix: str = "",
                   keep_vars: bool = False) -> dict:
        """Parameters and persistent buffers by dotted name (detached unless keep_vars)."""
        out = OrderedDict() if destination is None else destination
        # As PyTorch: a module reachable by two names is saved under both.
        modules = self.named_modules(prefix=prefix.rstrip("."), remove_duplicate=False)
        for name, module in modules:
            base = f"{name}." if name else ""
            for key, p in module._parameters.items():
                if p is not None:
                    out[base + key] = p if keep_vars or is_lazy(p) else p.detach()
            for key, b in module._buffers.items():
                if b is not None and key not in module._non_persistent_buffers_set:
                    out[base + key] = b if keep_vars or is_lazy(b) else b.detach()
        return out

    def load_state_dict(self, state_dict: dict, strict: bool = True,
                        assign: bool = False) -> _IncompatibleKeys:
        """Copy values from ``state_dict`` into parameters and buffers (same shapes).

        With ``strict`` every key must match; otherwise the missing and unexpected keys are
        returned. Shape mismatches are errors either way. ``assign`` replaces the tensors
        instead of copying into them (parameters stay Parameters)."""
        if not isinstance(state_dict, Mapping):
            raise TypeError(f"Expected state_dict to be dict-like, got {type(state_dict)}.")
        own = self.state_dict(keep_vars=True)
        with no_grad():  # a lazy module takes its shapes from the checkpoint
            for key, target in own.items():
                if is_lazy(target) and key in state_dict and not is_lazy(state_dict[key]):
                    target.materialize(state_dict[key].shape)
        optional = {f"{name}.{key}" if name else key
                    for name, module in self.named_modules(remove_duplicate=False)
                    for key in module._optional_state_keys}
        missing = [k for k in own if k not in state_dict and k not in optional]
        unexpected = [k for k in state_dict if k not in own]
        errors = []
        if strict and missing:
            errors.append("Missing key(s) in state_dict: "
                          + ", ".join(f'"{k}"' for k in missing) + ". ")
        if strict and unexpected:
            errors.append("Unexpected key(s) in state_dict: "
                          + ", ".join(f'"{k}"' for k in unexpected) + ". ")
        for key, target in own.items():
            if key not in state_dict or is_lazy(target):
                continue
            value = state_dict[key]
            value_shape = tuple(value.shape) if hasattr(value, "shape") else ()
            if value_shape != tuple(target.shape):
                errors.append(f"size mismatch for {key}: copying a param with shape "
                              f"{_size(value_shape)} from checkpoint, the shape in current "
                              f"model is {_size(tuple(target.shape))}.")
        if errors:
            raise RuntimeError(f"Error(s) in loading state_dict for {type(self).__name__}:\n\t"
                               + "\n\t".join(errors))
        with no_grad():
            for key, target in own.items():
                if key not in state_dict or is_lazy(target):
                    continue
                value = state_dict[key]
                if assign:
                    self._assign(key, value)
                else:
                    target.copy_(as_tensor(value))
        return _IncompatibleKeys(missing, unexpected)

    _optional_state_keys: tuple = ()  # state a checkpoint may lack (older PyTorch versions)

    def _assign(self, key: str, value: Tensor) -> None:
        path, _, name = key.rpartition(".")
        module = self.get_submodule(path)
        if name in module._parameters:
            old = module._parameters[name]
            # the checkpoint's tensor, but the module's requires_grad (as PyTorch)
            module._parameters[name] = Parameter(value, requires_grad=old.requires_grad)
        else:
            module._buffers[name] = value

    # ---- printing -----------------------------------------------------------------------------

    def extra_repr(self) -> str:
        """Extra information for this module's repr (override in subclasses)."""
        return ""

    def _get_name(self) -> str:
        return type(self).__name__

    def __repr__(self) -> str:
        lines = []
        extra = self.extra_repr()
        if extra:
            lines = extra.split("\n")
        for name, module in self._modules.items():
            child = repr(module).replace("\n", "\n  ")
            lines.append(f"({name}): {child}")
        head = self._get_name() + "("
        if not lines:
            return head + ")"
        if len(lines) == 1 and not self._modules:
            return head + lines[0] + ")"
        return head + "\n  " + "\n  ".join(lines) + "\n)"

    def __dir__(self):
        keys = list(super().__dir__()) + list(self._parameters) + list(self._buffers) + list(
            self._modules)
        return sorted(k for k in set(keys) if not k[:1].isdigit())


def factory_kwargs(kwargs: dict | None) -> dict:
    """The ``device``/``dtype``/``memory_format`` keyword arguments for a factory function, from
    ``kwargs`` and its optional ``factory_kwargs`` dict; other keys are a TypeError."""
    if kwargs is None:
        return {}
    simple = {"device", "dtype", "memory_format"}
    unexpected = kwargs.keys() - simple - {"factory_kwargs"}
    if unexpected:
        raise TypeError(f"unexpected kwargs {unexpected}")
    out = dict(kwargs.get("factory_kwargs", {}))
    for key in simple & kwargs.keys():
        if key in out:
            raise TypeError(f"{key} specified twice, in **kwargs and in factory_kwargs")
        out[key] = kwargs[key]
    return out


def _typename(value) -> str:
    """PyTorch's name for a value's type in error messages (torch.FloatTensor for tensors)."""
    return value.type() if isinstance(value, Tensor) else type(value).__name__


def _size(shape: tuple) -> str:
    return f"torch.Size({list(shape)})"


def _check_name(module: Module, name: str, what: str, store: dict) -> None:
    if not isinstance(name, str):
        raise TypeError(f"{what} name should be a string. Got {type(name).__name__}")
    if "." in name:
        raise KeyError(f'{what} name can\'t contain "."')
    if name == "":
        raise KeyError(f'{what} name can\'t be empty string ""')
    if hasattr(module, name) and name not in store:
        raise KeyError(f"attribute '{name}' already exists")
