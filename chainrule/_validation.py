"""Checks at the boundary: bad input refused in PyTorch's words before anything changes.

Every check is a function here, called where input enters: the creation functions (sizes, nested
data, ranges), the Tensor attribute setters (``.grad``, ``.data``), indexed assignment and the
public op functions whose records cannot say it themselves (the matmul family's dtypes, the
losses' targets). Ops that already refuse (shapes that don't broadcast, dims out of range) keep
their errors. Nothing here runs inside ``apply``: the hot path pays nothing.
"""

from __future__ import annotations

import math
from operator import index

from ._backend import as_dtype, xp

__all__ = ["size", "int_sizes", "int_argument", "tensor_sequence", "check_grad", "nested_data",
           "same_dtype", "arange_steps", "check_expand", "unit_interval", "dtype_name",
           "dtype_argument", "bool_condition"]

# PyTorch's C++ names for dtypes in some messages ("long int != float").
_CPP = {"float64": "double", "float32": "float", "float16": "c10::Half", "int64": "long int",
        "int32": "int", "int16": "short int", "int8": "signed char", "uint8": "unsigned char",
        "bool": "bool", "complex64": "c10::complex<float>", "complex128": "c10::complex<double>"}
# ... and its scalar type names in others ("Long and Float").
_SCALAR = {"float64": "Double", "float32": "Float", "float16": "Half", "int64": "Long",
           "int32": "Int", "int16": "Short", "int8": "Char", "uint8": "Byte", "bool": "Bool",
           "complex64": "ComplexFloat", "complex128": "ComplexDouble"}


def dtype_name(np_dtype, style: str = "scalar") -> str:
    """A dtype as PyTorch names it in messages: ``"scalar"`` (Float) or ``"cpp"`` (float)."""
    name = as_dtype(np_dtype).name
    return (_CPP if style == "cpp" else _SCALAR).get(name, name)


def size(name: str, args: tuple, *, negative: str | None = None) -> tuple[int, ...]:
    """A factory's ``*size`` (``f(2, 3)``, ``f((2, 3))``, ``f([2, 3])``) as a tuple of ints.

    Floats, bools and other non-integers are a TypeError and negative sizes a RuntimeError, as
    in PyTorch; ``negative`` replaces the negative-size message (``zeros`` has its own).
    """
    out = int_sizes(name, args)
    for s in out:
        if s < 0:
            raise RuntimeError(negative or f"Trying to create tensor with negative dimension {s}: "
                               f"{list(out)}")
    return out


def int_sizes(name: str, args: tuple, arg: str = "size", position: int = 1,
              overloads: tuple[str, ...] = ()) -> tuple[int, ...]:
    """``f(2, 3)``, ``f((2, 3))`` or ``f([2, 3])`` as a tuple of ints (-1 and other negatives
    pass), refusing floats, bools and other non-integers in the words of PyTorch's argument
    parser; ``overloads`` lists the signatures it names when ``f`` has several (``view``)."""
    sizes = args[0] if len(args) == 1 and isinstance(args[0], (tuple, list)) else args
    for s in sizes:  # plain ints (every reshape and view, a Size too): nothing to convert
        if type(s) is not int:
            break
    else:
        return tuple(sizes)
    packed = len(args) == 1 and not _is_int(args[0]) and hasattr(args[0], "__iter__") \
        and not hasattr(args[0], "shape") and not isinstance(args[0], str)
    items = tuple(args[0]) if packed else args
    for pos, s in enumerate(items):
        if type(s) is not int and not _is_int(s):
            kind = _kind(s)
            if pos:
                raise TypeError(f"{name}(): argument '{arg}' failed to unpack the object at pos "
                                f"{pos + 1} with error \"type must be tuple of ints,but got "
                                f"{kind}\"")
            if overloads:
                raise TypeError(_no_overload(name, args, packed, overloads))
            if packed:
                raise TypeError(f"{name}(): argument '{arg}' (position {position}) must be tuple "
                                f"of ints, but found element of type {kind} at pos 0")
            if len(items) == 1:
                raise TypeError(f"{name}(): argument '{arg}' (position {position}) must be tuple "
                                f"of ints, not {kind}")
            raise TypeError(f"{name}() takes 1 positional argument but {len(items)} were given")
    return tuple(s if type(s) is int else index(s) for s in items)


def _no_overload(name: str, args: tuple, packed: bool, overloads: tuple[str, ...]) -> str:
    """PyTorch's "invalid combination of arguments" listing for a size no overload takes."""
    got = ", ".join(_kind(a) for a in args)
    lines = [f"{name}() received an invalid combination of arguments - got ({got}), but expected "
             "one of:"]
    if len(args) == 1:
        what = got
        if packed:
            inner = ", ".join(_kind(a) for a in args[0])
            what = f"{got} of [{inner}]" if isinstance(args[0], list) else f"{got} of ({inner})"
        for o in overloads:
            lines += [f" * {o}", "      didn't match because some of the arguments have invalid "
                      f"types: (!{what}!)"]
    else:
        lines += [f" * {o}" for o in overloads]
    return "\n".join(lines) + "\n"


def int_argument(name: str, arg: str, value, position: int) -> int:
    """An ``int`` parameter (``tril``'s ``diagonal``): an int, NumPy integer or 0-d integer
    tensor; floats, bools and the rest are PyTorch's TypeError."""
    if type(value) is int:
        return value
    if not _is_int(value):
        raise TypeError(f"{name}(): argument '{arg}' (position {position}) must be int, not "
                        f"{_kind(value)}")
    return index(value)


def tensor_sequence(name: str, tensors, tensor_type: type) -> list:
    """``cat``'s ``tensors``: a sequence of tensors (a tensor itself is not one, for PyTorch)."""
    if isinstance(tensors, tensor_type) or not hasattr(tensors, "__iter__"):
        raise TypeError(f"{name}(): argument 'tensors' (position 1) must be tuple of Tensors, "
                        f"not {_kind(tensors)}")
    tensors = list(tensors)
    for i, t in enumerate(tensors):
        if not isinstance(t, tensor_type):
            raise TypeError(f"expected Tensor as element {i} in argument 0, but got {_kind(t)}")
    return tensors


def _kind(value) -> str:
    """A value's type as PyTorch's argument parser names it (``float``, ``numpy.float64``)."""
    cls = type(value)
    return f"numpy.{cls.__name__}" if cls.__module__ == "numpy" else cls.__name__


def _is_int(s) -> bool:
    if isinstance(s, bool) or isinstance(s, xp.bool_):
        return False
    if isinstance(s, (int, xp.integer)):
        return True
    shape = getattr(s, "shape", None)  # a 0-d integer tensor or array stands for its value
    return shape == () and hasattr(s, "__index__") and getattr(s, "dtype", None) is not None \
        and str(s.dtype).split(".")[-1].startswith(("int", "uint"))


def check_grad(tensor, grad, tensor_type: type) -> None:
    """``tensor.grad = grad``: None, or a ``tensor_type`` of the same size and dtype (not
    ``tensor`` itself)."""
    if grad is None:
        return
    if not isinstance(grad, tensor_type):
        raise TypeError(f"assigned grad expected to be a Tensor or None but got grad of type "
                        f"{type(grad).__name__}")
    if grad is tensor:
        raise RuntimeError("can't assign Variable as its own grad")
    have, want = grad._data, tensor._data
    if have.dtype != want.dtype:
        raise RuntimeError(
            f"attempting to assign a gradient with dtype '{dtype_name(have.dtype, 'cpp')}' to a "
            f"tensor with grad_dtype '{dtype_name(want.dtype)}'. The gradient must match the "
            "tensor's grad_dtype (defaults to the tensor's dtype).")
    if have.shape != want.shape:
        raise RuntimeError(
            f"attempting to assign a gradient of size '{list(have.shape)}' to a tensor of size "
            f"'{list(want.shape)}'. Please ensure that the gradient and the tensor are the same "
            "size")


def nested_data(data) -> None:
    """Nested lists NumPy could not make an array of: PyTorch's error for the first ragged
    sequence or element it cannot take."""
    _walk(data, 0, [])
    for item in _leaves(data):
        if isinstance(item, str):
            raise TypeError("new(): invalid data type 'str'")
        if not isinstance(item, (int, float, complex, xp.number, xp.bool_)) \
                and not hasattr(item, "__array__"):
            raise RuntimeError(f"Could not infer dtype of {type(item).__name__}")


def _leaves(data):
    if isinstance(data, (list, tuple)):
        for d in data:
            yield from _leaves(d)
    else:
        yield data


def _walk(data, dim: int, lengths: list) -> None:
    if not isinstance(data, (list, tuple)):
        return
    if dim == len(lengths):
        lengths.append(len(data))
    elif lengths[dim] != len(data):
        raise ValueError(f"expected sequence of length {lengths[dim]} at dim {dim} "
                         f"(got {len(data)})")
    deeper = [isinstance(d, (list, tuple)) for d in data]
    if any(deeper) and not all(deeper):
        raise TypeError("not a sequence")
    for d in data:
        _walk(d, dim + 1, lengths)


def same_dtype(message: str, *arrays) -> None:
    """The matmul family multiplies tensors of one dtype; otherwise ``message`` formatted with
    the dtypes' names (``{0}``, ``{1}``, ... as scalar names; ``{c0}``... as C++ names)."""
    first = arrays[0].dtype
    if all(a.dtype == first for a in arrays[1:]):
        return
    names = [dtype_name(a.dtype) for a in arrays]
    cpp = {f"c{i}": dtype_name(a.dtype, "cpp") for i, a in enumerate(arrays)}
    raise RuntimeError(message.format(*names, **cpp))


def arange_steps(start, end, step) -> None:
    """``arange(start, end, step)``: a finite range whose step points from start to end."""
    for v in (start, end):
        if isinstance(v, float) and not math.isfinite(v):
            raise RuntimeError(f"unsupported range: {_num(start)} -> {_num(end)}")
    if step == 0:
        raise RuntimeError("step must be nonzero")
    if (step > 0 and end < start) or (step < 0 and end > start):
        raise RuntimeError("upper bound and lower bound inconsistent with step sign")


def _num(v) -> str:
    return str(int(v)) if isinstance(v, float) and v.is_integer() else str(v)


def check_expand(target: tuple, shape: tuple) -> None:
    """A value of ``shape`` written into a region of ``target`` size must broadcast to it."""
    if len(shape) > len(target):
        lead = shape[:len(shape) - len(target)]
        if all(s == 1 for s in lead):
            shape = shape[len(lead):]
        else:
            raise RuntimeError(f"expand(torch.FloatTensor{{{list(shape)}}}, size={list(target)}): "
                               f"the number of sizes provided ({len(target)}) must be greater or "
                               f"equal to the number of dimensions in the tensor ({len(shape)})")
    offset = len(target) - len(shape)
    for i, s in enumerate(shape):
        if s != 1 and s != target[offset + i]:
            raise RuntimeError(
                f"The expanded size of the tensor ({target[offset + i]}) must match the existing "
                f"size ({s}) at non-singleton dimension {offset + i}.  Target sizes: "
                f"{list(target)}.  Tensor sizes: {list(shape)}")


def unit_interval(what: str, array) -> None:
    """Every element in [0, 1] (NaN is not), as binary cross entropy requires of ``what``."""
    if array.size and not bool(xp.all((array >= 0) & (array <= 1))):
        raise RuntimeError(f"all elements of {what} should be between 0 and 1")


def dtype_argument(name: str, dtype) -> None:
    """A ``dtype=`` argument is a dtype: PyTorch refuses a name such as ``"float32"``."""
    if isinstance(dtype, str):
        raise TypeError(f"{name}(): argument 'dtype' must be torch.dtype, not str")


def bool_condition(condition) -> None:
    """``where``'s condition is a bool tensor (uint8, deprecated, is still taken)."""
    data = getattr(condition, "_data", None)
    if data is not None and data.dtype.kind != "b" and data.dtype != xp.uint8:
        raise RuntimeError("where expected condition to be a boolean tensor, but got a tensor "
                           f"with dtype {dtype_name(data.dtype)}")
