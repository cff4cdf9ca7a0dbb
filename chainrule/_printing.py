"""Text rendering of tensor values, matching the layout of PyTorch's ``repr``."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np

from ._backend import get_default_dtype
from ._meta import MetaArray

_PROFILES: dict[str, dict[str, float]] = {
    "default": {"precision": 4, "threshold": 1000, "edgeitems": 3, "linewidth": 80},
    "short": {"precision": 2, "threshold": 1000, "edgeitems": 2, "linewidth": 80},
    "full": {"precision": 4, "threshold": math.inf, "edgeitems": 3, "linewidth": 80},
}

_options: dict[str, Any] = {**_PROFILES["default"], "sci_mode": None}

# Floats print in scientific notation when their magnitudes span more than _SCI_RATIO, exceed
# _SCI_LARGEST, or (unless all are integer-valued) go below _SCI_SMALLEST.
_SCI_RATIO = 1000.0
_SCI_LARGEST = 1.0e8
_SCI_SMALLEST = 1.0e-4


def set_printoptions(
    precision: int | None = None,
    threshold: float | None = None,
    edgeitems: int | None = None,
    linewidth: int | None = None,
    profile: str | None = None,
    sci_mode: bool | None = None,
) -> None:
    """Change how tensors are printed, like ``torch.set_printoptions``."""
    # Like torch: an unknown profile name is silently ignored.
    if profile in _PROFILES:
        _options.update(_PROFILES[profile])
    given = {
        "precision": precision,
        "threshold": threshold,
        "edgeitems": edgeitems,
        "linewidth": linewidth,
    }
    _options.update({name: value for name, value in given.items() if value is not None})
    # Like torch: sci_mode is always assigned, so omitting it resets it to automatic.
    _options["sci_mode"] = sci_mode


def get_printoptions() -> dict[str, Any]:
    """Return a copy of the current print options."""
    return dict(_options)


class _ElementFormatter:
    """Formats single elements, padded to one width shared by all the elements shown."""

    def __init__(self, shown: np.ndarray, precision: int, sci_mode: bool | None,
                 e8m0: bool = False) -> None:
        self.precision = precision
        self.is_float = shown.dtype.kind == "f"
        self.int_mode = True
        self.sci_mode = False
        self.width = 1
        if not self.is_float:
            self.width = max((len(str(value)) for value in shown.ravel().tolist()), default=1)
            return

        values = shown.astype(np.float64).ravel()
        # float8_e8m0fnu has no zero: PyTorch takes its smallest value 2**-127 for one and
        # counts NaN as finite (which turns off the integer and scientific layouts).
        values = values[values != 2.0**-127] if e8m0 else \
            values[np.isfinite(values) & (values != 0)]
        if values.size == 0:
            # Only zeros, nan and inf: printed as "0.", "nan", ... whatever sci_mode says.
            return

        smallest = float(np.abs(values).min())
        largest = float(np.abs(values).max())
        self.int_mode = bool(np.all(values == np.ceil(values)))
        wide_range = largest / smallest > _SCI_RATIO or largest > _SCI_LARGEST
        self.sci_mode = wide_range if self.int_mode else wide_range or smallest < _SCI_SMALLEST
        if sci_mode is not None:
            self.sci_mode = sci_mode

        if self.sci_mode:
            texts = (f"{value:.{precision}e}" for value in values.tolist())
        elif self.int_mode:
            texts = (f"{value:.0f}." for value in values.tolist())
        else:
            texts = (f"{value:.{precision}f}" for value in values.tolist())
        self.width = max(len(text) for text in texts)

    def __call__(self, value: Any) -> str:
        """Return ``value`` as text, right-aligned to the shared width."""
        if not self.is_float:
            text = str(value)
        elif self.sci_mode:
            text = f"{value:.{self.precision}e}"
        elif self.int_mode:
            text = f"{value:.0f}"
            if math.isfinite(value):
                text += "."
        else:
            text = f"{value:.{self.precision}f}"
        return text.rjust(self.width)


class _ComplexFormatter:
    """Complex elements as PyTorch prints them: the real part padded, then the signed imaginary."""

    def __init__(self, shown: np.ndarray, precision: int, sci_mode: bool | None) -> None:
        self.real = _ElementFormatter(shown.real, precision, sci_mode)
        self.imag = _ElementFormatter(shown.imag, precision, sci_mode)
        self.width = self.real.width + self.imag.width + 1

    def __call__(self, value: complex) -> str:
        imag = (self.imag(value.imag) + "j").lstrip()
        return self.real(value.real) + (imag if imag[0] in "+-" else "+" + imag)


def _shown_part(data: np.ndarray, edgeitems: int) -> np.ndarray:
    """Return the sub-array left visible once every long axis is cut to its edge items."""
    picks = []
    for size in data.shape:
        if size > 2 * edgeitems:
            picks.append(np.r_[0:edgeitems, size - edgeitems : size])
        else:
            picks.append(np.arange(size))
    return data[np.ix_(*picks)] if picks else data


def _render_vector(data: np.ndarray, indent: int, summarize: bool, fmt: _ElementFormatter) -> str:
    """Render a 1-D array, wrapping lines so they fit in the line width."""
    edgeitems = _options["edgeitems"]
    if summarize and not edgeitems:
        items = ["..."]
    elif summarize and len(data) > 2 * edgeitems:
        head = [fmt(value) for value in data[:edgeitems].tolist()]
        tail = [fmt(value) for value in data[len(data) - edgeitems :].tolist()]
        items = [*head, " ...", *tail]
    else:
        items = [fmt(value) for value in data.tolist()]

    # Every element takes its width plus ", ".
    per_line = max(1, (_options["linewidth"] - indent) // (fmt.width + 2))
    lines = [", ".join(items[start : start + per_line]) for start in range(0, len(items), per_line)]
    return "[" + (",\n" + " " * (indent + 1)).join(lines) + "]"


def _render(data: np.ndarray, indent: int, summarize: bool, fmt: _ElementFormatter) -> str:
    """Render a non-empty array whose first line starts at column ``indent``."""
    if data.ndim == 0:
        return fmt(data.item())
    if data.ndim == 1:
        return _render_vector(data, indent, summarize, fmt)

    edgeitems = _options["edgeitems"]
    size = len(data)
    if summarize and size > 2 * edgeitems:
        rows = [*range(edgeitems), None, *range(size - edgeitems, size)]
    else:
        rows = list(range(size))
    parts = [
        "..." if row is None else _render(data[row], indent + 1, summarize, fmt) for row in rows
    ]
    # Blocks of higher dimensions are set apart by one blank line per extra dimension.
    separator = "," + "\n" * (data.ndim - 1) + " " * (indent + 1)
    return "[" + separator.join(parts) + "]"


def _add_suffixes(text: str, suffixes: Sequence[str], indent: int) -> str:
    """Append ``, suffix`` items and the closing parenthesis, wrapping long lines."""
    linewidth = _options["linewidth"]
    # torch's estimate of the current line is two characters over its true length.
    line_length = len(text.rpartition("\n")[2]) + 2
    pieces = [text]
    for suffix in suffixes:
        if line_length + len(suffix) + 2 > linewidth:
            pieces.append(",\n" + " " * indent + suffix)
            line_length = indent + len(suffix)
        else:
            pieces.append(", " + suffix)
            line_length += len(suffix) + 2
    pieces.append(")")
    return "".join(pieces)


def format_tensor(
    data: np.ndarray,
    *,
    dtype_name: str,
    show_dtype: bool,
    suffixes: Sequence[str] = (),
    prefix: str = "tensor(",
) -> str:
    """Return the text PyTorch's ``repr`` gives for a tensor holding ``data``."""
    # Continuation lines line up under the text following the last line of the prefix.
    indent = len(prefix.rpartition("\n")[2])
    leading: list[str] = []
    dtype_suffix = f"dtype=torch.{dtype_name}"
    if type(data) is MetaArray:  # no values: the device, the size and any other dtype
        leading = ["device='meta'", f"size={tuple(data.shape)}"]
        if dtype_name != get_default_dtype().name:
            leading.append(dtype_suffix)
        return _add_suffixes(prefix + "...", [*leading, *suffixes], indent)
    data = np.asarray(data)

    if data.size == 0:
        body = "[]"
        if data.ndim != 1:
            leading.append(f"size={tuple(data.shape)}")
        # An empty tensor gives no values to guess an int64 or bool dtype from.
        if show_dtype or dtype_name in ("int64", "bool"):
            leading.append(dtype_suffix)
    else:
        if not _options["edgeitems"]:
            leading.append(f"size={tuple(data.shape)}")
        if show_dtype:
            leading.append(dtype_suffix)
        e8m0 = data.dtype.name == "float8_e8m0fnu"
        if data.dtype == np.float16 or data.dtype.num >= 256:  # bfloat16, float8 (ml_dtypes)
            data = data.astype(np.float32)
        summarize = data.size > _options["threshold"]
        shown = _shown_part(data, _options["edgeitems"]) if summarize else data
        if data.dtype.kind == "c":
            fmt = _ComplexFormatter(shown, _options["precision"], _options["sci_mode"])
        else:
            fmt = _ElementFormatter(shown, _options["precision"], _options["sci_mode"], e8m0)
        body = _render(data, indent, summarize, fmt)

    return _add_suffixes(prefix + body, [*leading, *suffixes], indent)
