"""PyTorch's argument parser's words: for a call none of a function's signatures takes, and
for a call that takes a deprecated one."""

from __future__ import annotations

import warnings

__all__ = ["type_name", "invalid_combination", "warn_deprecated"]

# chainrule's classes that PyTorch's parser names with the ``torch.`` prefix
_TORCH_CLASSES = frozenset({"dtype", "device", "layout", "memory_format", "Size", "Generator"})


def type_name(value, *, elements: bool = False) -> str:
    """A value's type as PyTorch's parser prints it: ``Tensor``, ``torch.dtype``, ``int``; with
    ``elements``, a list or tuple also lists its elements' types (``list of [int, str]``)."""
    cls = type(value)
    if cls.__name__ in _TORCH_CLASSES and cls.__module__.startswith(("torch", "chainrule")):
        return f"torch.{cls.__name__}"
    if cls.__module__ == "numpy":
        return f"numpy.{cls.__name__}"
    if elements and isinstance(value, (list, tuple)):
        inner = [type_name(v) for v in value]
        if isinstance(value, list):
            return f"{cls.__name__} of [{', '.join(inner)}]"
        return f"{cls.__name__} of ({', '.join(inner)}{',' if len(inner) == 1 else ''})"
    return cls.__name__


def invalid_combination(name: str, args: tuple, kwargs: dict, signatures: tuple[str, ...]) -> str:
    """The message of the TypeError PyTorch raises when no signature of ``name`` takes
    ``args`` and ``kwargs``: what was given, each signature, and for those taking as many
    arguments, why they did not match."""
    got = ", ".join([type_name(a) for a in args]
                    + [f"{k}={type_name(v)}" for k, v in kwargs.items()])
    if kwargs and not args:
        got += ", "  # PyTorch's own form: "got (x=int, )"
    lines = [f"{name}() received an invalid combination of arguments - got ({got}), but expected "
             "one of:"]
    count = len(args) + len(kwargs)
    for signature in signatures:
        lines.append(f" * ({signature})")
        parts = [p for p in signature.split(", ") if p]
        if len(parts) != count:
            continue
        # PyTorch's check reads a parameter's name as its last word, so a keyword whose
        # parameter has a default never matches ("device = None" is named "None").
        names = [p.rsplit(" ", 1)[-1] for p in parts[len(parts) - len(kwargs):]] if kwargs else []
        wrong = [k for k in kwargs if k not in names]
        if wrong:
            lines.append("      didn't match because some of the keywords were incorrect: "
                         + ", ".join(wrong))
        else:
            marked = ", ".join(f"!{type_name(a, elements=True)}!" for a in args)
            lines.append(f"      didn't match because some of the arguments have invalid types: "
                         f"({marked})")
    return "\n".join(lines) + "\n"


_warned = [False]  # PyTorch warns once per process about all deprecated signatures together


def warn_deprecated(name: str, old: str, new: tuple[str, ...], *,
                    always: bool = False, stacklevel: int = 3) -> None:
    """PyTorch's UserWarning for a call that took deprecated signature ``old`` of ``name``,
    naming the ``new`` ones: the first time in the process, or each time with ``always``."""
    if _warned[0] and not always:
        return
    _warned[0] = True
    message = (f"This overload of {name} is deprecated:\n\t{name}({old})\nConsider using one "
               "of the following signatures instead:" + "".join(f"\n\t{name}({s})" for s in new))
    warnings.warn(message, UserWarning, stacklevel=stacklevel)
