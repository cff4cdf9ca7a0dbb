"""bfloat16 and float8 in the kernels: what PyTorch's CPU kernels compute for them.

PyTorch computes an op on bfloat16 in float32 and rounds the result once: its reduced-precision
kernels load bfloat16, compute in float and store bfloat16, and sums and matrix products
accumulate in float. ``forward_for`` gives ``apply`` the same around an op's NumPy forward: the
bfloat16 inputs widened to float32 (exactly), the forward run, its float32 results rounded back.
Ops that only move values (views, copies, indexing, joins) run on the bfloat16 arrays as they are,
and so do products, which PyTorch rounds at each step.

The float8 dtypes are storage types in PyTorch: it converts and moves their values, and computes
a few ops (``x * y``, ``x @ y``, ``abs``, ``==``); everything else raises its NotImplementedError,
here as there.
"""

from __future__ import annotations

from ._backend import SCALAR_NAMES, astype, from_np, xp

__all__ = ["forward_for"]

_ndarray = xp.ndarray
_F32 = xp.dtype(xp.float32)

# Ops that only move values: they run on the low-precision arrays themselves.
MOVES = frozenset((
    "clone", "to_copy", "to_device", "copy", "fill", "view_scatter", "cat", "stack", "split",
    "unbind", "repeat", "roll", "flip", "rot90", "diagonal_copy", "diag_embed", "tril", "triu",
    "constant_pad_nd", "select", "slice", "index", "index_put", "index_select", "masked_select",
    "masked_fill", "masked_scatter", "gather", "scatter", "take", "put", "where", "embedding",
    "index_copy", "index_fill", "select_along_dim",
))
# PyTorch multiplies bfloat16 in bfloat16, rounding each step (one after another up to a few
# dozen elements; longer products it splits into vector lanes).
STEP_ROUNDED = frozenset(("prod", "prod_dim"))
# PyTorch multiplies and divides by a Python number in float32 as it is; the other ops first
# round it to the tensor's dtype (a wrapped number cast to the common dtype).
EXACT_SCALARS = frozenset(("mul", "div", "floor_divide"))
# What PyTorch computes on float8 tensors (besides views); ``mul`` only of two tensors with dims.
FLOAT8_COMPUTES = frozenset((
    "clone", "to_copy", "to_device", "copy", "fill", "view_scatter", "cat", "stack", "split",
    "unbind", "repeat", "roll", "diagonal_copy", "diag_embed", "constant_pad_nd", "select", "slice",
    "flip",
    "index", "index_put", "index_select", "masked_select", "where", "embedding",
    "select_along_dim", "mul", "abs", "eq", "ne", "isnan", "mm", "matmul", "linear",
))
# PyTorch's kernel names in its float8 refusals ('"add_stub" not implemented for ...').
_KERNELS = {
    "add": "add_stub", "sub": "add_stub", "rsub": "add_stub", "neg": "neg_cpu",
    "mul": "mul_cpu_reduced_float", "div": "div_cpu", "pow": "pow", "lt": "lt_cpu",
    "le": "le_cpu", "gt": "gt_cpu", "ge": "ge_cpu",
    "sum": "sum_cpu", "sum_dim": "sum_cpu", "mean": "sum_cpu", "mean_dim": "sum_cpu",
    "max": "max_all", "min": "min_all", "flip": "flip_cpu", "rot90": "flip_cpu",
    "sort": "sorting_kernel_method_name", "sort_stable": "sorting_kernel_method_name",
    "nonzero": "nonzero_count_cpu", "isinf": "isinf", "isfinite": "isfinite",
    "gather": "scatter_gather_tensor_cpu", "scatter": "scatter_gather_tensor_cpu",
    "scatter_add": "scatter_gather_tensor_cpu", "index_add": "scatter_gather_tensor_cpu",
    "tril": "tril", "triu": "triu", "take": "take_cpu", "put": "take_put_cpu", "sign": "sign_cpu",
    "relu": "clamp_min_scalar_cpu", "sigmoid": "sigmoid_cpu_reduced_float", "bmm": "bmm",
    "dot": "dot", "mv": "addmv_impl_cpu", "unique": "unique", "masked_fill": "masked_fill",
    "masked_scatter": "masked_scatter", "index_fill": "index_fill_cpu",
    "index_copy": "index_copy_cpu", "abs": "abs_cpu", "mm": "addmm_impl_cpu_",
    "matmul": "addmm_impl_cpu_", "linear": "addmm_impl_cpu_",
}

_widened: dict = {}  # (op name, dtype) -> the op's forward in float32


def forward_for(op, arrays: list, params: dict, dtype):
    """The forward ``apply`` runs for ``op`` on ``arrays`` whose first array has the
    low-precision NumPy ``dtype``; raises PyTorch's error for what it refuses on float8."""
    if dtype.itemsize == 1:
        _check_float8(op, arrays, params, dtype)
    if op.view or op.name in MOVES or op.name in STEP_ROUNDED:
        return op.forward
    forward = _widened.get((op.name, dtype))
    if forward is None:
        forward = _widened[op.name, dtype] = _in_float32(op.forward, dtype,
                                                         op.name not in EXACT_SCALARS)
    return forward


def _check_float8(op, arrays: list, params: dict, dtype) -> None:
    name = op.name
    refused = not op.view and name not in FLOAT8_COMPUTES or (
        name in ("abs", "mm", "matmul", "linear") and dtype.name == "float8_e8m0fnu") or (
        name == "mul" and any(type(a) is not _ndarray or a.ndim == 0 for a in arrays))
    if name == "flip" and arrays[0].ndim:  # PyTorch's flip kernel: when the innermost dim flips
        strides = [abs(s) for s in arrays[0].strides]
        refused = strides.index(min(strides)) in params["dims"] or \
            arrays[0].ndim - 1 in params["dims"]
    if refused:
        raise NotImplementedError(f'"{_KERNELS.get(name, name)}" not implemented for '
                                  f"'{SCALAR_NAMES[from_np(dtype).name]}'")


def _in_float32(forward, dtype, round_scalars: bool):
    """``forward`` on float32 copies of its ``dtype`` inputs, float32 results back in ``dtype``
    (unless the call asked for a result dtype); Python numbers rounded to ``dtype`` first if
    ``round_scalars``."""

    def widen(a):
        if type(a) is _ndarray:
            return a.astype(_F32) if a.dtype == dtype else a
        if round_scalars and (type(a) is float or type(a) is int and not -256 <= a <= 256):
            # a Python number operand is first cast to the tensor's dtype, as PyTorch's
            # wrapped numbers are
            return float(astype(xp.asarray(a, xp.float64), dtype).astype(_F32))
        if type(a) in (list, tuple):
            return type(a)(widen(x) for x in a)
        return a

    def narrow(out):
        if isinstance(out, (_ndarray, xp.generic)) and out.dtype == _F32:
            return astype(out, dtype)
        return out

    def in_float32(*args, **params):
        out = forward(*[widen(a) for a in args], **params)
        if params.get("dtype") is not None:
            return out
        return tuple(narrow(o) for o in out) if type(out) is tuple else narrow(out)

    in_float32.__name__ = in_float32.__qualname__ = (
        f"{getattr(forward, '__name__', 'forward')}_in_float32")
    return in_float32

