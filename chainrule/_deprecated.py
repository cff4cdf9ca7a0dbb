"""The deprecated overloads PyTorch still takes, with its warning: a scalar before the tensors,
as in ``p.add_(2, other)``, ``torch.addcmul(input, 0.5, t1, t2)`` or
``torch.addmm(beta, input, alpha, mat1, mat2)``.

Each public function and Tensor method that has such an overload is wrapped once, at import, in
a function with its own parameters and room for the extra positional ones: the normal call is one
more Python call and a check; a deprecated call warns (once per process, as PyTorch, or every
time after ``set_warn_always(True)``) and is rewritten into the normal one.
"""

from __future__ import annotations

import functools

from . import ops  # noqa: F401  (binds the Tensor methods wrapped here)
from ._arguments import invalid_combination, warn_deprecated
from ._backend import xp
from ._settings import is_warn_always_enabled
from .tensor import Tensor

__all__ = ["wrap_functions", "addmv_"]


def _is_number(value) -> bool:
    """A Number in PyTorch's parser: a Python or NumPy scalar, or a 0-d tensor."""
    return isinstance(value, (int, float, complex, xp.number, xp.bool_)) or (
        isinstance(value, Tensor) and value.dim() == 0)


def _warn(name: str, old: str, new: tuple[str, ...]) -> None:
    warn_deprecated(name, old, new, always=is_warn_always_enabled(), stacklevel=4)


_ONE = 1  # the scalars' default: given explicitly with a deprecated form, PyTorch refuses


def _too_many(name: str, takes: int, given: int) -> TypeError:
    return TypeError(f"{name}() takes {takes} positional arguments but {given} were given")


# ---- add(input, alpha, other), sub: the scalar before the other operand ----------------------

def _alpha_first(name: str, fn, method: bool):
    what = "Number alpha, Tensor other"
    instead = "Tensor other, *, Number alpha = 1"
    if not method:
        what = f"Tensor input, {what}, *, Tensor out = None"
        instead = "Tensor input, Tensor other, *, Number alpha = 1, Tensor out = None"

        def function(input, other, *args, alpha=1, out=None):
            if args:
                if len(args) != 1 or not _is_number(other) or alpha is not _ONE:
                    raise _too_many(name, 2, 2 + len(args))
                _warn(name, what, (instead,))
                other, alpha = args[0], other
            return fn(input, other, alpha=alpha, out=out)

        return functools.wraps(fn)(function)

    def method_(self, other, *args, alpha=1):
        if args:
            if len(args) != 1 or not _is_number(other) or alpha is not _ONE:
                raise _too_many(name, 1, 1 + len(args))
            _warn(name, what, (instead,))
            other, alpha = args[0], other
        return fn(self, other, alpha=alpha)

    return functools.wraps(fn)(method_)


# ---- addcmul(input, value, tensor1, tensor2), addcdiv ----------------------------------------

def _value_first(name: str, fn, method: bool):
    what = "Number value, Tensor tensor1, Tensor tensor2"
    instead = "Tensor tensor1, Tensor tensor2, *, Number value = 1"
    if not method:
        what = f"Tensor input, {what}, *, Tensor out = None"
        instead = ("Tensor input, Tensor tensor1, Tensor tensor2, *, Number value = 1, "
                   "Tensor out = None")

        def function(input, tensor1, tensor2, *args, value=1, out=None):
            if args:
                if len(args) != 1 or not _is_number(tensor1) or value is not _ONE:
                    raise _too_many(name, 3, 3 + len(args))
                _warn(name, what, (instead,))
                tensor1, tensor2, value = tensor2, args[0], tensor1
            return fn(input, tensor1, tensor2, value=value, out=out)

        return functools.wraps(fn)(function)

    def method_(self, tensor1, tensor2, *args, value=1):
        if args:
            if len(args) != 1 or not _is_number(tensor1) or value is not _ONE:
                raise _too_many(name, 2, 2 + len(args))
            _warn(name, what, (instead,))
            tensor1, tensor2, value = tensor2, args[0], tensor1
        return fn(self, tensor1, tensor2, value=value)

    return functools.wraps(fn)(method_)


# ---- addmm(beta, input, alpha, mat1, mat2), addmm(beta, input, mat1, mat2) and kin ------------

# the names of the two matrix operands, and whether the function has an ``out_dtype`` form
_BETA_FIRST = {"addmm": ("mat1", "mat2", True), "baddbmm": ("batch1", "batch2", True),
               "addbmm": ("batch1", "batch2", False), "addmv": ("mat", "vec", False),
               "addr": ("vec1", "vec2", False)}
_SCALARS = "*, Number beta = 1, Number alpha = 1"


def _beta_first(name: str, fn, method: bool):
    one, two, dtype_form = _BETA_FIRST[name.rstrip("_")]
    operands = f"Tensor {one}, Tensor {two}"
    if method:
        forms = (f"Number beta, Number alpha, {operands}", f"Number beta, {operands}")
        instead = (f"{operands}, {_SCALARS}",)

        def method_(self, *args, **kwargs):
            if (not kwargs and len(args) in (3, 4) and _is_number(args[0])
                    and (len(args) == 3 or _is_number(args[1])) and isinstance(args[-1], Tensor)):
                _warn(name, forms[len(args) == 3], instead)
                return fn(self, *args[-2:], beta=args[0], alpha=1 if len(args) == 3 else args[1])
            return fn(self, *args, **kwargs)

        return functools.wraps(fn)(method_)

    out = "" if name.endswith("_") else ", *, Tensor out = None"
    forms = (f"Number beta, Tensor input, Number alpha, {operands}{out}",
             f"Number beta, Tensor input, {operands}{out}")
    out = "" if name.endswith("_") else ", Tensor out = None"
    instead = (f"Tensor input, {operands}, {_SCALARS}{out}",)
    if dtype_form:
        instead += (f"Tensor input, {operands}, torch.dtype out_dtype, {_SCALARS}{out}",)

    def function(*args, **kwargs):
        if (len(args) in (4, 5) and kwargs.keys() <= {"out"} and _is_number(args[0])
                and isinstance(args[1], Tensor) and (len(args) == 4 or _is_number(args[2]))
                and all(isinstance(a, Tensor) for a in args[-2:])):
            _warn(name, forms[len(args) == 4], instead)
            return fn(args[1], *args[-2:], beta=args[0], alpha=1 if len(args) == 4 else args[2],
                      **kwargs)
        if args and _is_number(args[0]) and not isinstance(args[0], Tensor):
            raise TypeError(invalid_combination(name, args, kwargs, instead))
        return fn(*args, **kwargs)

    return functools.wraps(fn)(function)


# ---- x.type(dtype, async=...) ----------------------------------------------------------------

def _async_keyword(fn):
    old = "object dtype = None, bool async = False, *, torch.memory_format memory_format = None"
    instead = ("object dtype = None, bool non_blocking = False, *, torch.memory_format "
               "memory_format = None",)

    def type(self, dtype=None, non_blocking: bool = False, **kwargs):  # noqa: A001
        if "async" in kwargs:
            _warn("type", old, instead)
            non_blocking = kwargs.pop("async")
        return fn(self, dtype, non_blocking, **kwargs)

    return functools.wraps(fn)(type)


Tensor.type = _async_keyword(Tensor.type)


# ---- where the wrappers go -------------------------------------------------------------------

_FORMS = {"add": _alpha_first, "sub": _alpha_first, "addcmul": _value_first,
          "addcdiv": _value_first, **{n: _beta_first for n in _BETA_FIRST}}


def addmv_(input, mat, vec, *, beta=1, alpha=1) -> Tensor:
    """input = beta * input + alpha * (mat @ vec), in place."""
    return input.addmv_(mat, vec, beta=beta, alpha=alpha)


def wrap_functions(namespace: dict) -> dict:
    """The torch-level functions of ``namespace`` that have deprecated overloads, wrapped."""
    wrapped = {name: form(name, namespace[name], False) for name, form in _FORMS.items()
               if name in namespace}
    wrapped["addmv_"] = _beta_first("addmv_", addmv_, False)
    return wrapped


for _name, _form in _FORMS.items():
    for _method in (_name, _name + "_"):
        setattr(Tensor, _method, _form(_method, getattr(Tensor, _method), True))
