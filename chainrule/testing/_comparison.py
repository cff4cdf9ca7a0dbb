"""torch.testing.assert_close: tensors, numbers and nested containers compared as PyTorch does,
failing with PyTorch's messages."""

from __future__ import annotations

import cmath
import collections.abc
import contextlib
import warnings
from collections.abc import Callable
from typing import Any

import numpy as np

from .._backend import dtype
from .._backend import int64 as _int64
from .._creation import as_tensor, tensor
from .._dtypes import promote_types, strided
from ..autograd.grad_mode import no_grad
from ..ops.elementwise import isclose
from ..ops.reduction import max as _max
from ..tensor import Size, Tensor

__all__ = ["assert_close", "assert_allclose", "default_tolerances"]

# dtype name -> (rtol, atol); dtypes not listed compare exactly
_PRECISIONS = {
    "torch.float16": (0.001, 1e-5), "torch.bfloat16": (0.016, 1e-5),
    "torch.float32": (1.3e-6, 1e-5), "torch.float64": (1e-7, 1e-7),
    "torch.complex32": (0.001, 1e-5), "torch.complex64": (1.3e-6, 1e-5),
    "torch.complex128": (1e-7, 1e-7),
    # quantized tensors compare dequantized, with float32's tolerances
    **dict.fromkeys(("torch.quint8", "torch.quint2x4", "torch.quint4x2", "torch.qint8",
                     "torch.qint32"), (1.3e-6, 1e-5)),
}
# the dtype a Python number stands for when choosing tolerances
_NUMBER_DTYPES = {int: "torch.int64", float: "torch.float64", complex: "torch.complex128"}
_UNSIGNED_WIDE = ("torch.uint16", "torch.uint32", "torch.uint64")


class _Failure(Exception):
    """A comparison's failure: the exception type and message to raise, and the item's path."""

    def __init__(self, kind: type[Exception], msg: str, id: tuple = ()) -> None:
        super().__init__(msg)
        self.kind, self.msg, self.id = kind, msg, id

    def error(self, msg: str | Callable[[str], str] | None = None) -> Exception:
        if isinstance(msg, str):
            return self.kind(msg)
        text = self.msg
        if self.id:
            text += "\n\nThe failure occurred for item " + "".join(str([i]) for i in self.id)
        return self.kind(msg(text) if callable(msg) else text)


class _Unsupported(Exception):
    """This kind of comparison does not handle these inputs: try the next."""


def default_tolerances(*inputs, dtype_precisions: dict | None = None) -> tuple[float, float]:
    """The loosest default (rtol, atol) over the dtypes of the inputs (tensors or dtypes)."""
    names = []
    for x in inputs:
        if isinstance(x, Tensor):
            names.append(str(x.dtype))
        elif isinstance(x, dtype):
            names.append(str(x))
        else:
            raise TypeError(f"Expected a torch.Tensor or a torch.dtype, but got {type(x)} "
                            "instead.")
    table = ({str(k): v for k, v in dtype_precisions.items()} if dtype_precisions
             else _PRECISIONS)
    rtols, atols = zip(*[table.get(n, (0.0, 0.0)) for n in names])
    return max(rtols), max(atols)


def _tolerances(dtypes: list, rtol, atol, id: tuple) -> tuple[float, float]:
    if (rtol is None) != (atol is None):
        raise _Failure(ValueError, "Both 'rtol' and 'atol' must be either specified or omitted, "
                       f"but got no {'rtol' if rtol is None else 'atol'}.", id)
    if rtol is not None:
        return rtol, atol
    rtols, atols = zip(*[_PRECISIONS.get(d, (0.0, 0.0)) for d in dtypes])
    return max(rtols), max(atols)


def _diff_lines(abs_diff, abs_idx, atol, rel_diff, rel_idx, rtol) -> str:
    exact = rtol == 0 and atol == 0
    lines = []
    for kind, diff, idx, tol in (("absolute", abs_diff, abs_idx, atol),
                                 ("relative", rel_diff, rel_idx, rtol)):
        line = (f"{kind.title()} difference: {diff}" if idx is None
                else f"Greatest {kind} difference: {diff} at index {idx}")
        lines.append(line if exact else f"{line} (up to {tol} allowed)")
    return "\n".join(lines)


def _header(identifier, default: str, rtol, atol) -> str:
    if identifier is None:
        identifier = default
    elif callable(identifier):
        identifier = identifier(default)
    return f"{identifier} are not {'equal' if rtol == 0 and atol == 0 else 'close'}!\n\n"


def _scalar_message(actual, expected, rtol, atol, identifier=None) -> str:
    abs_diff = abs(actual - expected)
    rel_diff = float("inf") if expected == 0 else abs_diff / abs(expected)
    return (_header(identifier, "Scalars", rtol, atol)
            + f"Expected {expected} but got {actual}.\n"
            + _diff_lines(abs_diff, None, atol, rel_diff, None, rtol))


def _tensor_message(actual: Tensor, expected: Tensor, matches: Tensor, rtol, atol,
                    identifier=None) -> str:
    total = matches.numel()
    mismatched = total - int(matches.sum())
    extra = f"Mismatched elements: {mismatched} / {total} ({mismatched / total:.1%})\n"
    a, e, m = actual.flatten(), expected.flatten(), matches.flatten()
    if not (a.dtype.is_floating_point or a.dtype.is_complex):
        a, e = a.to(_int64), e.to(_int64)
    abs_diff = (a - e).abs()
    abs_diff[m] = 0  # only mismatches count
    rel_diff = abs_diff / e.abs()
    rel_diff[m] = 0
    (abs_max, abs_at), (rel_max, rel_at) = _max(abs_diff, 0), _max(rel_diff, 0)
    shape = tuple(matches.shape)
    return (_header(identifier, "Tensor-likes", rtol, atol) + extra
            + _diff_lines(abs_max.item(), _unravel(int(abs_at), shape), atol,
                          rel_max.item(), _unravel(int(rel_at), shape), rtol))


def _unravel(flat: int, shape: tuple) -> tuple:
    return tuple(int(i) for i in np.unravel_index(flat, shape))


# ---- one comparison per leaf ---------------------------------------------------------------

def _none_pair(actual, expected, id, **_) -> Callable[[], None]:
    if actual is not None and expected is not None:
        raise _Unsupported

    def compare():
        if not (actual is None and expected is None):
            raise _Failure(AssertionError, f"None mismatch: {actual} is not {expected}", id)
    return compare


def _bool_pair(actual, expected, id, **_) -> Callable[[], None]:
    if not all(isinstance(x, (bool, np.bool_)) for x in (actual, expected)):
        raise _Unsupported
    actual, expected = bool(actual), bool(expected)

    def compare():
        if actual is not expected:
            raise _Failure(AssertionError, f"Booleans mismatch: {actual} is not {expected}", id)
    return compare


def _number_pair(actual, expected, id, rtol=None, atol=None, equal_nan=False,
                 check_dtype=False, **_) -> Callable[[], None]:
    if not all(isinstance(x, (int, float, complex, np.number)) for x in (actual, expected)):
        raise _Unsupported
    actual, expected = (x.item() if isinstance(x, np.number) else x for x in (actual, expected))
    if type(actual) not in _NUMBER_DTYPES or type(expected) not in _NUMBER_DTYPES:
        # a bool against a number: PyTorch's comparison gives up with this error
        raise RuntimeError(
            f"Originating a NumberPair() at item {''.join(str([i]) for i in id)} with\n\n"
            f"{type(actual).__name__}(): {actual}\n\nand\n\n{type(expected).__name__}(): "
            f"{expected}\n\nresulted in the unexpected exception above. If you are a user and "
            "see this message during normal operation please file an issue at "
            "https://github.com/pytorch/pytorch/issues. If you are a developer and working on "
            "the comparison functions, please except the previous error and raise an "
            "expressive `ErrorMeta` instead.") from KeyError(type(actual))
    rtol, atol = _tolerances([_NUMBER_DTYPES[type(actual)], _NUMBER_DTYPES[type(expected)]],
                             rtol, atol, id)

    def compare():
        if check_dtype and type(actual) is not type(expected):
            raise _Failure(AssertionError, f"The (d)types do not match: {type(actual)} != "
                           f"{type(expected)}.", id)
        if actual == expected:
            return
        if equal_nan and cmath.isnan(actual) and cmath.isnan(expected):
            return
        diff = abs(actual - expected)
        if cmath.isfinite(diff) and diff <= atol + rtol * abs(expected):
            return
        raise _Failure(AssertionError, _scalar_message(actual, expected, rtol, atol), id)
    return compare


def _tensor_pair(actual, expected, id, allow_subclasses=True, rtol=None, atol=None,
                 equal_nan=False, check_device=True, check_dtype=True, check_layout=True,
                 check_stride=False, **_) -> Callable[[], None]:
    if not (isinstance(actual, type(expected)) or isinstance(expected, type(actual))):
        raise _Unsupported
    if not allow_subclasses and type(actual) is not type(expected):
        raise _Unsupported
    try:
        actual, expected = (x if isinstance(x, Tensor) else as_tensor(x)
                            for x in (actual, expected))
    except Exception:  # noqa: BLE001 - not tensor-like: the next kind of comparison
        raise _Unsupported from None
    rtol, atol = _tolerances([str(actual.dtype), str(expected.dtype)], rtol, atol, id)

    def mismatch(name, a, e):
        raise _Failure(AssertionError,
                       f"The values for attribute '{name}' do not match: {a} != {e}.", id)

    def compare():
        if actual.shape != expected.shape:
            mismatch("shape", actual.shape, expected.shape)
        layouts = getattr(actual, "layout", strided), getattr(expected, "layout", strided)
        if layouts[0] != layouts[1]:
            if check_layout:
                mismatch("layout", *layouts)
        elif check_stride and layouts[0] == strided and actual.stride() != expected.stride():
            mismatch("stride()", actual.stride(), expected.stride())
        if check_device and actual.device != expected.device:
            mismatch("device", actual.device, expected.device)
        if check_dtype and actual.dtype != expected.dtype:
            mismatch("dtype", actual.dtype, expected.dtype)
        if "meta" in (actual.device.type, expected.device.type):
            return  # no values to compare
        with no_grad():
            _compare_values(*_equalized(actual.detach(), expected.detach()), rtol, atol,
                            equal_nan, id)
    return compare


def _equalized(actual: Tensor, expected: Tensor) -> tuple[Tensor, Tensor]:
    """Both on the CPU if their devices differ, in their promoted dtype if their dtypes do."""
    if actual.device != expected.device:
        actual, expected = actual.cpu(), expected.cpu()
    if actual.dtype != expected.dtype:
        # wide unsigned integers compare as int64 (promote_types refuses them)
        a, e = (_int64 if str(d) in _UNSIGNED_WIDE else d for d in (actual.dtype, expected.dtype))
        dtype = promote_types(a, e)
        actual, expected = actual.to(dtype), expected.to(dtype)
    return actual, expected


def _compare_values(actual: Tensor, expected: Tensor, rtol, atol, equal_nan, id) -> None:
    matches = isclose(actual, expected, rtol=rtol, atol=atol, equal_nan=equal_nan)
    if bool(matches.all()):
        return
    if actual.shape == Size([]):
        msg = _scalar_message(actual.item(), expected.item(), rtol, atol)
    else:
        msg = _tensor_message(actual, expected, matches, rtol, atol)
    raise _Failure(AssertionError, msg, id)


_PAIRS = (_none_pair, _bool_pair, _number_pair, _tensor_pair)


def _comparisons(actual, expected, id: tuple, options: dict) -> list:
    """One comparison per leaf of the (possibly nested) inputs, in order."""
    seq = collections.abc.Sequence
    if (isinstance(actual, seq) and not isinstance(actual, str) and isinstance(expected, seq)
            and not isinstance(expected, str)):
        if len(actual) != len(expected):
            raise _Failure(AssertionError, "The length of the sequences mismatch: "
                           f"{len(actual)} != {len(expected)}", id)
        return [c for i in range(len(actual))
                for c in _comparisons(actual[i], expected[i], (*id, i), options)]
    mapping = collections.abc.Mapping
    if isinstance(actual, mapping) and isinstance(expected, mapping):
        keys, wanted = set(actual.keys()), set(expected.keys())
        if keys != wanted:
            raise _Failure(AssertionError, "The keys of the mappings do not match:\n"
                           f"Missing keys in the actual mapping: {sorted(wanted - keys)}\n"
                           f"Additional keys in the actual mapping: {sorted(keys - wanted)}",
                           id)
        with contextlib.suppress(Exception):
            keys = sorted(keys)
        return [c for k in keys for c in _comparisons(actual[k], expected[k], (*id, k), options)]
    for pair in _PAIRS:
        try:
            return [pair(actual, expected, id, **options)]
        except _Unsupported:
            continue
    raise _Failure(TypeError, "No comparison pair was able to handle inputs of type "
                   f"{type(actual)} and {type(expected)}.", id)


def assert_close(actual: Any, expected: Any, *, allow_subclasses: bool = True,
                 rtol: float | None = None, atol: float | None = None, equal_nan: bool = False,
                 check_device: bool = True, check_dtype: bool = True, check_layout: bool = True,
                 check_stride: bool = False,
                 msg: str | Callable[[str], str] | None = None) -> None:
    """Asserts that ``actual`` and ``expected`` are close."""
    __tracebackhide__ = True
    try:
        comparisons = _comparisons(actual, expected, (), dict(
            allow_subclasses=allow_subclasses, rtol=rtol, atol=atol, equal_nan=equal_nan,
            check_device=check_device, check_dtype=check_dtype, check_layout=check_layout,
            check_stride=check_stride))
    except _Failure as failure:
        raise failure.error() from None
    for compare in comparisons:
        try:
            compare()
        except _Failure as failure:
            raise failure.error(msg) from None


_ALLCLOSE_DEPRECATION = (
    "`torch.testing.assert_allclose()` is deprecated since 1.12 and will be removed in a future "
    "release. Please use `torch.testing.assert_close()` instead. You can find detailed upgrade "
    "instructions in https://github.com/pytorch/pytorch/issues/61844.")


def assert_allclose(actual: Any, expected: Any, rtol: float | None = None,
                    atol: float | None = None, equal_nan: bool = True, msg: str = "") -> None:
    """Deprecated: use :func:`assert_close`."""
    warnings.warn(_ALLCLOSE_DEPRECATION, FutureWarning, stacklevel=2)
    if not isinstance(actual, Tensor):
        actual = tensor(actual)
    if not isinstance(expected, Tensor):
        expected = tensor(expected, dtype=actual.dtype)
    if rtol is None and atol is None:
        rtol, atol = default_tolerances(actual, expected, dtype_precisions={
            "torch.float16": (1e-3, 1e-3), "torch.float32": (1e-4, 1e-5),
            "torch.float64": (1e-5, 1e-8)})
    assert_close(actual, expected, rtol=rtol, atol=atol, equal_nan=equal_nan,
                 check_device=True, check_dtype=False, check_stride=False, msg=msg or None)


assert_allclose.__deprecated__ = _ALLCLOSE_DEPRECATION
