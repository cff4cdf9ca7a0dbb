"""``torch.utils.flop_counter``: FLOPs of the matrix products, convolutions and attention a
program runs, forward and backward, per module (a dispatch mode, as PyTorch's)."""

from __future__ import annotations

import math
import warnings
from collections import defaultdict
from collections.abc import Callable
from typing import Any

from ..library._ops import OpOverload, OpOverloadPacket, namespace
from ..tensor import Tensor
from ._python_dispatch import TorchDispatchMode
from .module_tracker import ModuleTracker

__all__ = ["FlopCounterMode", "register_flop_formula"]

aten = namespace("aten")
flop_registry: dict[Any, Callable] = {}


def _shape(x):
    return tuple(x.shape) if isinstance(x, Tensor) or hasattr(x, "shape") else x


def _shapes(value):
    if isinstance(value, (tuple, list)):
        return type(value)(_shapes(v) for v in value)
    return _shape(value)


def _with_shapes(formula: Callable) -> Callable:
    """The formula called with the shapes of its tensor arguments (and of the output)."""
    def counted(*args, out_val=None, **kwargs):
        return formula(*_shapes(args), out_shape=_shapes(out_val), **kwargs)

    return counted


def register_flop_formula(targets, get_raw: bool = False) -> Callable:
    """Register a FLOP formula (of argument shapes, or of the arguments with ``get_raw``) for
    the operator ``targets`` (an OpOverloadPacket, or a list of them)."""
    def register(formula: Callable) -> Callable:
        wrapped = formula if get_raw else _with_shapes(formula)
        for target in targets if isinstance(targets, (list, tuple)) else (targets,):
            if not isinstance(target, OpOverloadPacket):
                raise ValueError(f"register_flop_formula(targets): expected each target to be "
                                 f"OpOverloadPacket (i.e. torch.ops.mylib.foo), got {target} "
                                 f"which is of type {type(target)}")
            if target in flop_registry:
                raise RuntimeError(f"duplicate registrations for {target}")
            flop_registry[target] = wrapped
        return formula

    return register


# Counts as PyTorch's: a multiply-add is 2 FLOPs; bias additions are not counted.

@register_flop_formula(aten.mm)
def mm_flop(a_shape, b_shape, *args, out_shape=None, **kwargs) -> int:
    """FLOPs of (m, k) @ (k, n)."""
    m, k = a_shape
    _, n = b_shape
    return 2 * m * n * k


@register_flop_formula(aten.addmm)
def addmm_flop(self_shape, a_shape, b_shape, out_shape=None, **kwargs) -> int:
    """FLOPs of addmm: its product's."""
    return mm_flop(a_shape, b_shape)


@register_flop_formula(aten.bmm)
def bmm_flop(a_shape, b_shape, out_shape=None, **kwargs) -> int:
    """FLOPs of (b, m, k) @ (b, k, n)."""
    b, m, k = a_shape
    _, _, n = b_shape
    return 2 * b * m * n * k


@register_flop_formula(aten.baddbmm)
def baddbmm_flop(self_shape, a_shape, b_shape, out_shape=None, **kwargs) -> int:
    """FLOPs of baddbmm: its product's."""
    return bmm_flop(a_shape, b_shape)


def conv_flop_count(x_shape, w_shape, out_shape, transposed: bool = False) -> int:
    """FLOPs of a convolution: each point of the output (of the input, when transposed) takes a
    product over the kernel for every pair of input and output channels."""
    batch = x_shape[0]
    points = (x_shape if transposed else out_shape)[2:]
    c_out, c_in, *kernel = w_shape
    return 2 * math.prod(points) * math.prod(kernel) * batch * c_out * c_in


@register_flop_formula(aten.convolution)
def conv_flop(x_shape, w_shape, _bias, _stride, _padding, _dilation, transposed, *args,
              out_shape=None, **kwargs) -> int:
    """FLOPs of a convolution."""
    return conv_flop_count(x_shape, w_shape, out_shape, transposed=transposed)


def _t(shape) -> list:
    return [shape[1], shape[0]] + list(shape[2:])


@register_flop_formula(aten.convolution_backward)
def conv_backward_flop(grad_out_shape, x_shape, w_shape, _bias, _stride, _padding, _dilation,
                       transposed, _output_padding, _groups, output_mask, out_shape,
                       **kwargs) -> int:
    """FLOPs of a convolution's backward: the input's gradient is a convolution transposed the
    other way, the weight's a convolution of the input with the output's gradient."""
    flops = 0
    if output_mask[0]:
        flops += conv_flop_count(grad_out_shape, w_shape, out_shape[0], not transposed)
    if output_mask[1]:
        first, second = (grad_out_shape, x_shape) if transposed else (x_shape, grad_out_shape)
        flops += conv_flop_count(_t(first), _t(second), _t(out_shape[1]), transposed=False)
    return flops


def sdpa_flop_count(query_shape, key_shape, value_shape) -> int:
    """FLOPs of attention: the scores q k^T and their product with v."""
    b, h, s_q, d_q = query_shape
    s_k = key_shape[-2]
    d_v = value_shape[-1]
    return bmm_flop((b * h, s_q, d_q), (b * h, d_q, s_k)) + \
        bmm_flop((b * h, s_q, s_k), (b * h, s_k, d_v))


def sdpa_backward_flop_count(grad_out_shape, query_shape, key_shape, value_shape) -> int:
    """FLOPs of attention's backward: the scores again, and the gradients of both products."""
    b, h, s_q, d_q = query_shape
    s_k = key_shape[-2]
    d_v = value_shape[-1]
    bh = b * h
    return (bmm_flop((bh, s_q, d_q), (bh, d_q, s_k)) + bmm_flop((bh, s_q, d_v), (bh, d_v, s_k))
            + bmm_flop((bh, s_k, s_q), (bh, s_q, d_v)) + bmm_flop((bh, s_q, s_k), (bh, s_k, d_q))
            + bmm_flop((bh, d_q, s_q), (bh, s_q, s_k)))


def einsum_bmm_shapes(equation: str, a_shape, b_shape):
    """The shapes of the bmm PyTorch's einsum runs for two operands ((b, m, k), (b, k, n)), or
    None when nothing is summed over both (a product, no bmm). Subscripts of one operand only
    that the output drops are summed before the bmm."""
    lhs, out = equation.replace(" ", "").split("->")
    left, right = lhs.split(",")
    if "." in equation:  # '...': the leading dims, lettered
        left, right, out = _ellipsis(left, a_shape), _ellipsis(right, b_shape), \
            _ellipsis(out, None, max(len(a_shape) - len(left) + 3, len(b_shape) - len(right) + 3))
    sizes = dict(zip(left, a_shape))
    sizes.update(zip(right, b_shape))
    both = [c for c in dict.fromkeys(left) if c in right]
    summed = [c for c in both if c not in out]
    if not summed:
        return None
    batch = math.prod(sizes[c] for c in both if c in out)
    k = math.prod(sizes[c] for c in summed)
    m = math.prod(sizes[c] for c in dict.fromkeys(left) if c not in right and c in out)
    n = math.prod(sizes[c] for c in dict.fromkeys(right) if c not in left and c in out)
    return (batch, m, k), (batch, k, n)


def _ellipsis(term: str, shape, ndim: int | None = None) -> str:
    if "..." not in term:
        return term
    count = (len(shape) - len(term) + 3) if shape is not None else ndim
    letters = "".join(chr(0x3b1 + i) for i in range(count))  # Greek: not the user's letters
    return term.replace("...", letters[len(letters) - count:] if count else "")


@register_flop_formula(aten.einsum)
def einsum_flop(equation: str, shapes, out_shape=None, **kwargs) -> int:
    """FLOPs of an einsum of two operands: the bmm PyTorch's einsum runs (counted as
    ``aten.bmm``, as PyTorch's einsum decomposes)."""
    if len(shapes) != 2:
        return 0
    found = einsum_bmm_shapes(equation, *shapes)
    return 0 if found is None else bmm_flop(*found)


_COUNTED_AS = {aten.einsum: aten.bmm}  # operators PyTorch decomposes before counting


def get_suffix_str(number: int) -> str:
    """The unit the table shows a total in: "", K, M, B or T (a number with more digits than a
    unit's three keeps the smaller unit: 1001M, not 1.001B)."""
    return ["", "K", "M", "B", "T"][max(0, min(4, (len(str(number)) - 2) // 3))]


def convert_num_with_suffix(number: int, suffix: str) -> str:
    """``number`` in the unit ``suffix``, with three decimals."""
    index = ["", "K", "M", "B", "T"].index(suffix)
    return f"{number / 1000 ** index:.3f}" + suffix


def convert_to_percent_str(num: int, denom: int) -> str:
    """``num / denom`` as a percentage with two decimals ("0%" when denom is 0)."""
    return "0%" if denom == 0 else f"{num / denom:.2%}"


def _number(text: str):
    try:
        return float(text)
    except ValueError:
        return None


def _table(rows: list, headers: list) -> str:
    """The rows as a plain-text table: the first column left-aligned, the others right-aligned,
    a column of numbers written in their shortest form (tabulate's "simple" format, which
    PyTorch's table uses)."""
    columns = []
    for i, header in enumerate(headers):
        cells = [str(row[i]) for row in rows]
        if all(_number(c) is not None for c in cells):
            cells = [f"{_number(c):g}" for c in cells]
        width = max([len(header) + 2] + [len(c) for c in cells])
        columns.append((header, cells, width))
    out = []
    pad = [(str.ljust if i == 0 else str.rjust) for i in range(len(headers))]
    out.append("  ".join(pad[i](h, w) for i, (h, _, w) in enumerate(columns)))
    out.append("  ".join("-" * w for _, _, w in columns))
    for r in range(len(rows)):
        out.append("  ".join(pad[i](cells[r], w) for i, (_, cells, w) in enumerate(columns)))
    return "\n".join(out)


class FlopCounterMode:
    """Counts the FLOPs run inside it, per operator and per module (by its fully qualified
    name, and "Global"); prints the table on exit when ``display``."""

    def __init__(self, mods=None, depth: int = 2, display: bool = True,
                 custom_mapping: dict | None = None) -> None:
        self.flop_counts: dict[str, dict[Any, int]] = defaultdict(lambda: defaultdict(int))
        self.depth = depth
        self.display = display
        self.mode: _FlopCounterMode | None = None
        if mods is not None:
            warnings.warn("mods argument is not needed anymore, you can stop passing it",
                          stacklevel=2)
        self.flop_registry = dict(flop_registry)
        for key, formula in (custom_mapping or {}).items():
            self.flop_registry[key] = formula if getattr(formula, "_get_raw", False) \
                else _with_shapes(formula)
        self.mod_tracker = ModuleTracker()

    def get_total_flops(self) -> int:
        """All FLOPs counted."""
        return sum(self.flop_counts["Global"].values())

    def get_flop_counts(self) -> dict[str, dict[Any, int]]:
        """The FLOPs per module name, then per operator."""
        return {k: dict(v) for k, v in self.flop_counts.items()}

    def get_table(self, depth: int | None = None) -> str:
        """The counts as PyTorch prints them: modules to ``depth`` levels, operators under
        each, in the unit of the total."""
        depth = self.depth if depth is None else depth
        depth = 999999 if depth is None else depth
        total = self.get_total_flops()
        suffix = get_suffix_str(total)
        subsumed = False

        def rows_of(name: str, indent: int) -> list:
            nonlocal subsumed
            flops = sum(self.flop_counts[name].values())
            subsumed |= flops >= total
            pad = " " * indent
            rows = [[pad + name, convert_num_with_suffix(flops, suffix),
                     convert_to_percent_str(flops, total)]]
            for op, count in self.flop_counts[name].items():
                rows.append([pad + " - " + str(op), convert_num_with_suffix(count, suffix),
                             convert_to_percent_str(count, total)])
            return rows

        rows = []
        for name in sorted(self.flop_counts):
            if name == "Global":
                continue
            level = name.count(".") + 1
            if level <= depth:
                rows.extend(rows_of(name, level - 1))
        # "Global" only when some FLOPs ran outside every module
        if "Global" in self.flop_counts and not subsumed:
            for row in rows:
                row[0] = " " + row[0]
            rows = rows_of("Global", 0) + rows
        if not rows:
            rows = [["Global", "0", "0%"]]
        return _table(rows, ["Module", "FLOP", "% Total"])

    def __enter__(self):
        self.flop_counts.clear()
        self.mod_tracker.__enter__()
        self.mode = _FlopCounterMode(self)
        self.mode.__enter__()
        return self

    def __exit__(self, *args):
        result = self.mode.__exit__(*args)
        self.mode = None
        self.mod_tracker.__exit__()
        if self.display:
            print(self.get_table(self.depth))
        return result

    def _count_flops(self, packet, out, args, kwargs):
        formula = self.flop_registry.get(packet)
        if formula is not None:
            flops = formula(*args, **kwargs, out_val=out)
            if packet in _COUNTED_AS:
                if not flops:
                    return out
                packet = _COUNTED_AS[packet]
            for parent in set(self.mod_tracker.parents):
                self.flop_counts[parent][packet] += flops
        return out


class _FlopCounterMode(TorchDispatchMode):
    def __init__(self, counter: FlopCounterMode) -> None:
        super().__init__()
        self.counter = counter

    def __torch_dispatch__(self, func: OpOverload, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        out = func(*args, **kwargs)
        return self.counter._count_flops(func._overloadpacket, out, args, kwargs)
