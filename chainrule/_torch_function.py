"""``__torch_function__``: the top level of the mode stack, where user code sees public calls.

The public functions (``chainrule.X``, ``nn.functional.X``, ``linalg``, ``fft``, ``special``)
are wrapped once when the package loads (``overrides`` installs them); Tensor's methods are
wrapped the first time something can need it (a Tensor subclass with a ``__torch_function__``
of its own is defined, or a ``TorchFunctionMode`` is entered), so plain tensors' methods, which
chainrule's own code calls everywhere, stay as they are. A wrapper with only plain arguments
(tensors, numbers, ...) and no function mode on the stack calls the function: that check is a
slot read and one set lookup per argument. Otherwise it dispatches as PyTorch's
``handle_torch_function``: the innermost ``TorchFunctionMode`` (popped while it runs), then each
overloaded argument's ``__torch_function__`` (subclasses before their bases, then left to right)
with ``(func, types, args, kwargs)``, ``func`` being the public function the user called.

Function modes are per thread, as PyTorch's; the stack's ``function`` seam is set while some
thread has one (``_modes``), so the other threads pay nothing but the check.
"""

from __future__ import annotations

import functools
import sys
import threading
import types as _types
import warnings
from collections.abc import Callable

from ._modes import Mode, pop, push, stack
from .tensor import Size, Tensor

__all__ = ["TorchFunctionMode", "BaseTorchFunctionMode", "handle_torch_function",
           "has_torch_function", "has_torch_function_unary", "has_torch_function_variadic",
           "DisableTorchFunction", "DisableTorchFunctionSubclass", "wrap_public",
           "redispatch_function", "enable_methods", "dispatch_foreign"]


class _Local(threading.local):
    modes: list = []  # this thread's TorchFunctionModes, innermost last
    subclass_off = 0  # DisableTorchFunctionSubclass depth
    all_off = 0  # DisableTorchFunction depth
    skip = False  # redispatch_function: the next dispatch is skipped


_local = _Local()


class _FunctionModes(Mode):
    """TorchFunctionModes on the stack while some thread has one entered."""

    order = 100
    name = "torch function"


FUNCTION_MODES = _FunctionModes()
FUNCTION_MODES.seams["function"] = True

# Types whose instances never dispatch (no __torch_function__ of their own, or the disabled
# one): a wrapper skips them with one set lookup. Learned as they are seen.
_inert: set = {Tensor, int, float, bool, complex, str, type(None), slice, type(Ellipsis), Size}


def _disabled_torch_function_impl(func, types, args=(), kwargs=None):
    """The ``__torch_function__`` of tensor types that take no part in dispatch (Parameter):
    run the function with subclass dispatch off."""
    with DisableTorchFunctionSubclass():
        return func(*args, **(kwargs or {}))


def _is_disabled(tf) -> bool:
    return tf is _disabled_torch_function_impl


def _is_torchs_own(t: type) -> bool:
    """PyTorch's own tensors (a real torch.Tensor handed to from_dlpack) are data here."""
    return t.__module__ in ("torch", "torch.nn.parameter") and t.__name__ in (
        "Tensor", "Parameter", "Buffer") and not issubclass(t, Tensor)


def _overloaded(relevant) -> list:
    """The arguments whose ``__torch_function__`` runs, in PyTorch's order (NEP-18: a subclass
    before its base, otherwise left to right, one per type)."""
    found: list = []
    seen: set = set()
    for arg in relevant:
        t = type(arg)
        if t in _inert or t in seen:
            continue
        tf = getattr(t, "__torch_function__", None)
        if t is Tensor or tf is None or _is_disabled(tf) or _is_torchs_own(t):
            if t is not tuple and t is not list and t is not dict:
                _inert.add(t)
            continue
        seen.add(t)
        _insert(found, arg)
    return found


def _insert(found: list, arg) -> None:
    """Put ``arg`` before the first argument whose type its type subclasses, else last."""
    t = type(arg)
    for i, old in enumerate(found):
        if issubclass(t, type(old)):
            found.insert(i, arg)
            return
    found.append(arg)


def _flatten(args: tuple, kwargs: dict) -> list:
    """Arguments that can carry tensors: each argument and the items of a list or tuple."""
    out = []
    for a in (*args, *kwargs.values()) if kwargs else args:
        if type(a) is tuple or type(a) is list:
            out.extend(a)
        else:
            out.append(a)
    return out


def _modes_on() -> bool:
    return stack.function is not None and bool(_local.modes) and not _local.all_off


def _relevant_args(relevant) -> list:
    if _local.all_off or _local.subclass_off:
        return []
    return _overloaded(relevant)


def has_torch_function(relevant_args) -> bool:
    """Whether an element of ``relevant_args`` has a ``__torch_function__`` (exact Tensors and
    Parameters have none that dispatches) or a function mode is active."""
    if _local.skip:  # redispatch_function: this call runs as it is
        _local.skip = False
        return False
    return bool(_relevant_args(relevant_args)) or _modes_on()


def has_torch_function_unary(arg) -> bool:
    """``has_torch_function((arg,))``."""
    return has_torch_function((arg,))


def has_torch_function_variadic(*args) -> bool:
    """``has_torch_function(args)``."""
    return has_torch_function(args)


def _dispatch(public_api: Callable, overloaded: list, args: tuple, kwargs: dict):
    types = tuple(map(type, overloaded))
    if _modes_on():
        mode = _pop_mode()
        try:
            result = mode.__torch_function__(public_api, types, args, kwargs)
        finally:
            _push_mode(mode)
        if result is not NotImplemented:
            return result
    for arg in overloaded:
        method = arg.__torch_function__
        if getattr(method, "__self__", None) is arg and not _is_disabled(method):
            warnings.warn("Defining your `__torch_function__ as a plain method is deprecated and "
                          "will be an error in future, please define it as a classmethod.",
                          DeprecationWarning, stacklevel=3)
        result = method(public_api, types, args, kwargs)
        if result is not NotImplemented:
            return result
    cpp = getattr(public_api, "_torch_function_cpp", None)
    if cpp is not None:  # what PyTorch's C++ bindings say
        lines = [f"  - mode object {_local.modes[-1]}"] if _modes_on() else []
        lines += [f"  - tensor subclass {type(arg)}" for arg in overloaded]
        raise TypeError(f"Multiple dispatch failed for '{cpp}'; all __torch_function__ handlers "
                        "returned NotImplemented:\n\n" + "\n".join(lines)
                        + "\n\nFor more information, try re-running with "
                        "TORCH_LOGS=not_implemented")
    module = getattr(public_api, "_torch_function_module", None) or public_api.__module__
    msg = (f"no implementation found for '{module}.{public_api.__name__}' on types that "
           f"implement __torch_function__: {[type(arg) for arg in overloaded]}")
    if _modes_on():
        msg += f" nor in mode {_local.modes[-1]}"
    raise TypeError(msg)


def handle_torch_function(public_api: Callable, relevant_args, *args, **kwargs):
    """Call ``public_api(*args, **kwargs)`` through the active function modes and the
    ``__torch_function__`` of ``relevant_args`` (PyTorch's rules and error)."""
    return _dispatch(public_api, _relevant_args(relevant_args), args, kwargs)


def _handle(public: Callable, fn: Callable, args: tuple, kwargs: dict, with_tensors: bool):
    """A wrapper's slow path: dispatch if something needs it, else call ``fn``."""
    local = _local
    if local.all_off:
        return fn(*args, **kwargs)
    if local.skip:  # redispatch_function: this one call runs as it is
        local.skip = False
        return fn(*args, **kwargs)
    relevant = _flatten(args, kwargs)
    overloaded = _relevant_args(relevant)
    if overloaded or _modes_on():
        if with_tensors and not local.subclass_off:
            overloaded = _python_overloaded(relevant)
        report = getattr(public, "_torch_function_reports", None)
        return _dispatch(report() if report is not None else public, overloaded, args, kwargs)
    return fn(*args, **kwargs)


def _python_overloaded(relevant) -> list:
    """PyTorch's Python-level functions (nn.functional, torch.functional) also count exact
    tensors among the overloaded arguments (their ``types`` then name Tensor)."""
    found: list = []
    for arg in relevant:
        t = type(arg)
        if t is Tensor or (t not in _inert and t is not tuple and t is not list):
            tf = getattr(t, "__torch_function__", None)
            if tf is None or _is_disabled(tf) or _is_torchs_own(t) or any(
                    type(f) is t for f in found):
                continue
            _insert(found, arg)
    return found


def _plain(a) -> bool:
    t = type(a)
    if t in _inert:
        return True
    if t is tuple or t is list:
        for b in a:
            if type(b) not in _inert:
                return False
        return True
    return False


def wrap_public(fn: Callable, with_tensors: bool = False) -> Callable:
    """``fn`` as a public function that takes part in ``__torch_function__`` (``with_tensors``:
    as PyTorch's Python-level functions, whose ``types`` include exact tensors)."""

    inert, modes = _inert, stack  # closure cells: faster to read than globals

    def public(*args, **kwargs):
        if modes.function is None:
            for a in args:
                if type(a) not in inert and not _plain(a):
                    break
            else:
                if not kwargs:
                    return fn(*args)
                for a in kwargs.values():
                    if type(a) not in inert and not _plain(a):
                        break
                else:
                    return fn(*args, **kwargs)
        return _handle(public, fn, args, kwargs, with_tensors)

    functools.update_wrapper(public, fn)
    public._torch_function_wrapped = fn
    _public_of.setdefault(id(fn), public)
    return public


_public_of: dict = {}  # id of a function -> its first public wrapper (a method shares it)


_python_warnings = warnings
_WRAPPER_CODE = wrap_public(len).__code__  # every wrapper runs this code object


class _Warnings(_types.ModuleType):
    """``warnings`` for chainrule's modules: a ``stacklevel`` counts the caller's frames without
    the public wrappers', so a warning still points at the user's line."""

    def __getattr__(self, name: str):
        return getattr(_python_warnings, name)

    def __setattr__(self, name: str, value) -> None:  # warnings.showwarning = ... and the like
        setattr(_python_warnings, name, value)

    @staticmethod
    def warn(message, category=None, stacklevel: int = 1, source=None) -> None:
        frame, extra = sys._getframe(1), 1
        for _ in range(stacklevel - 1):
            frame = frame.f_back
            while frame is not None and frame.f_code is _WRAPPER_CODE:
                frame, extra = frame.f_back, extra + 1
            if frame is None:
                break
        _python_warnings.warn(message, category, stacklevel + extra, source)


def patch_warnings() -> None:
    """Give chainrule's loaded modules the ``warnings`` that skips the wrappers' frames."""
    shim = _Warnings("warnings")
    for name, module in list(sys.modules.items()):
        if (name == "chainrule" or name.startswith("chainrule.")) and \
                getattr(module, "warnings", None) is _python_warnings:
            module.warnings = shim


def redispatch_function(func: Callable, types, args, kwargs):
    """Call ``func`` skipping one level of ``__torch_function__`` dispatch (the calls it makes
    dispatch as usual)."""
    _local.skip = True
    try:
        return func(*args, **(kwargs or {}))
    finally:
        _local.skip = False


# ---- Tensor's methods ---------------------------------------------------------------------

# Tensor attributes outside dispatch: construction and internals, what PyTorch ignores.
_NOT_METHODS = frozenset(
    "__new__ __init__ __init_subclass__ __getattribute__ __getattr__ __setattr__ __delattr__ "
    "__dir__ __class__ __reduce__ __reduce_ex__ __getstate__ __setstate__ __sizeof__ __del__ "
    "__copy__ __subclasshook__ __class_getitem__ __torch_function__ __torch_dispatch__ "
    "__hash__ __iter__ __delitem__ __array__ __array_wrap__ __array_ufunc__ __array_function__ "
    "__dlpack__ __dlpack_device__ __index__ __deepcopy__ as_subclass new new_empty "
    "new_empty_strided new_full new_ones new_tensor new_zeros stride unflatten".split())
_methods_on = False


# Operators whose __torch_function__ call names another method, as PyTorch's (x * 2 is mul).
_REPORTS = {"__add__": "add", "__radd__": "add", "__iadd__": "add_", "__sub__": "sub",
            "__isub__": "sub_", "__mul__": "mul", "__rmul__": "mul", "__imul__": "mul_",
            "__truediv__": "div", "__itruediv__": "div_", "__lt__": "lt", "__le__": "le",
            "__gt__": "gt", "__ge__": "ge", "__neg__": "neg", "__matmul__": "matmul",
            "__pow__": "pow", "__abs__": "abs", "__rtruediv__": "__rdiv__",
            "nelement": "numel"}
_methods_on = False
on_methods_wrapped: list = []  # callbacks (overrides' tables are rebuilt)


def enable_methods() -> None:
    """Wrap Tensor's methods (once): from now on they take part in dispatch too."""
    global _methods_on
    if _methods_on:
        return
    _methods_on = True
    wrapped: dict = {}
    for name, value in list(vars(Tensor).items()):
        if name in _NOT_METHODS or (name.startswith("_") and not name.startswith("__")):
            continue
        if not isinstance(value, (_types.FunctionType, _types.BuiltinFunctionType,
                                  functools.partial)) or hasattr(value, "_torch_function_wrapped"):
            continue
        public = wrapped.get((id(value), name))
        if public is None:
            # one object as torch.X and Tensor.X (chainrule binds some so) keeps one wrapper
            shared = _public_of.get(id(value))
            public = shared if shared is not None and shared.__name__ == name \
                and name not in _REPORTS else _wrap_method(value, name)
            wrapped[id(value), name] = public
        setattr(Tensor, name, public)
    for callback in on_methods_wrapped:
        callback()


# Methods whose ``types`` name Tensor even for exact tensors (PyTorch handles them by hand).
_SELF_TYPED = frozenset(
    "item tolist dim numel nelement element_size __len__ __repr__ __format__ data_ptr detach "
    "is_floating_point __bool__ __float__ __int__ __index__ abs storage untyped_storage "
    "zero_".split())


def _wrap_method(fn: Callable, name: str) -> Callable:
    public = wrap_public(fn, name in _SELF_TYPED)
    public.__name__ = name
    public.__qualname__ = f"Tensor.{name}"
    public._torch_function_cpp = f"torch.Tensor.{name}"
    if name in _REPORTS:
        target = _REPORTS[name]
        public._torch_function_reports = lambda: getattr(Tensor, target, public)
    return public


def _convert(ret, cls):
    if cls is Tensor:
        return ret
    if isinstance(ret, Tensor) and not isinstance(ret, cls):
        ret = ret.as_subclass(cls)
    if isinstance(ret, (tuple, list)):
        ret = type(ret)(_convert(r, cls) for r in ret)  # namedtuples too
    return ret


def _tensor_torch_function(cls, func, types, args=(), kwargs=None):
    """Run ``func`` with subclass dispatch off and return its tensors as instances of ``cls``
    (the default for Tensor subclasses; call it through ``super().__torch_function__``)."""
    if kwargs is None:
        kwargs = {}
    if not all(issubclass(cls, t) for t in types):
        return NotImplemented
    with DisableTorchFunctionSubclass():
        return _convert(func(*args, **kwargs), cls)


def _init_subclass(cls, **kwargs) -> None:
    super(Tensor, cls).__init_subclass__(**kwargs)
    if cls.__module__.startswith("chainrule.") and "__torch_function__" not in vars(cls):
        # chainrule's own subclasses (Parameter, BatchedTensor, ...) keep plain dispatch
        cls.__torch_function__ = staticmethod(_disabled_torch_function_impl)
    if not _is_disabled(getattr(cls, "__torch_function__", None)):
        enable_methods()


Tensor.__torch_function__ = classmethod(_tensor_torch_function)
Tensor.__init_subclass__ = classmethod(_init_subclass)


def dispatch_foreign(name: str, args: tuple):
    """A Tensor dunder given a non-Tensor with ``__torch_function__``: dispatch it as PyTorch
    (NotImplemented when nothing takes it, so Python tries the reflected operator)."""
    public = getattr(Tensor, _REPORTS.get(name, name))
    overloaded = _relevant_args(args)
    if not overloaded and not _modes_on():
        return NotImplemented
    try:
        return _dispatch(public, overloaded, args, {})
    except TypeError as err:
        if str(err).startswith("no implementation found"):
            return NotImplemented
        raise


# ---- function modes -------------------------------------------------------------------------


def _push_mode(mode) -> None:
    _local.modes = _local.modes + [mode]
    push(FUNCTION_MODES)


def _pop_mode():
    if not _local.modes:
        raise RuntimeError("Trying to pop from an empty mode stack")
    mode = _local.modes[-1]
    _local.modes = _local.modes[:-1]
    pop(FUNCTION_MODES)
    return mode


class TorchFunctionMode:
    """Overrides every ``__torch_function__``-overridable function inside a ``with`` block:
    calls go to ``__torch_function__(func, types, args, kwargs)``; calls made inside it go to
    the next mode on the stack."""

    inner: TorchFunctionMode

    def __init__(self) -> None:
        pass

    def __torch_function__(self, func, types, args=(), kwargs=None):
        raise NotImplementedError

    def __enter__(self):
        enable_methods()
        _push_mode(self)
        return self

    def __exit__(self, exc_type, exc_val, exc_tb) -> None:
        _pop_mode()

    @classmethod
    def push(cls, *args, **kwargs):
        warnings.warn("`Mode.push()` is no longer necessary and can be replaced with just "
                      "`with Mode()`", stacklevel=2)
        return cls(*args, **kwargs)


class BaseTorchFunctionMode(TorchFunctionMode):
    """A function mode that runs each function as it is."""

    def __torch_function__(self, func, types, args=(), kwargs=None):
        return func(*args, **(kwargs or {}))


def _get_current_function_mode():
    return _local.modes[-1] if _local.modes else None


def _get_current_function_mode_stack() -> list:
    return list(_local.modes)


def _len_torch_function_stack() -> int:
    return len(_local.modes)


class DisableTorchFunctionSubclass:
    """Context manager: Tensor subclasses' ``__torch_function__`` is not called inside it
    (function modes still are)."""

    def __enter__(self) -> None:
        _local.subclass_off += 1

    def __exit__(self, *exc) -> None:
        _local.subclass_off -= 1


class DisableTorchFunction:
    """Context manager: no ``__torch_function__`` (subclass or mode) is called inside it."""

    def __enter__(self) -> None:
        _local.all_off += 1

    def __exit__(self, *exc) -> None:
        _local.all_off -= 1


def _is_torch_function_enabled() -> bool:
    return not _local.all_off and not _local.subclass_off


def _is_torch_function_mode_enabled() -> bool:
    return bool(_local.modes) and not _local.all_off
