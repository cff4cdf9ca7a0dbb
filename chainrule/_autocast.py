"""Autocast on the CPU: the ops PyTorch's CPU autocast lists run in the precision it says.

PyTorch 2.13's CPU lists, found by running each op inside ``torch.autocast("cpu")`` on float32
and on bfloat16 inputs (the lists are the same for float16):

- lower precision (the autocast dtype, bfloat16 by default): the matrix products (mm, matmul,
  bmm, baddbmm, addmm, addbmm, linalg.vecdot, and the compositions PyTorch builds on them:
  einsum and tensordot when they contract, inner of matrices, multi_dot, chain_matmul), linear,
  the convolutions and transposed convolutions, conv_tbc, prelu, scaled_dot_product_attention,
  rnn_tanh_cell and rnn_relu_cell;
- float32: the losses, the 3-d and fractional poolings, max_unpool, reflection and replication
  padding, grid_sample, cdist, trace, prod, quantile, polar, view_as_complex, stft, the FFTs and
  the factorizations and solvers of linalg that PyTorch computes in float32;
- promote (to the widest floating dtype among the inputs): cat, stack, index_copy.

Each listed function is wrapped once when the package loads (``install``); with autocast off a
call costs one read of ``state.cpu``, and no other function pays anything. Inside, the wrapped
function runs with autocast off, as PyTorch's autocast kernels run the op below the autocast key.
The whole autocast state lives in ``state`` (per thread, as PyTorch's).
"""

from __future__ import annotations

import functools
import threading

from ._backend import bfloat16, float32, float64
from .tensor import Tensor

__all__ = ["state", "install"]


class _State(threading.local):
    def __init__(self) -> None:
        self.cpu = False  # autocast on for the CPU: read by every wrapped function
        self.cpu_dtype = bfloat16
        self.other = {}  # device type -> [enabled, dtype] for the devices chainrule only records
        self.cache_enabled = True
        self.nesting = 0
        self.cache = {}  # id(weight) -> (weight, its cast): leaves cast in the outermost region


state = _State()


def _eligible(t: Tensor) -> bool:
    """What autocast casts: floating tensors on the CPU other than float64."""
    return t._data.dtype.kind in "fV" and t.dtype is not float64 and t.device.type == "cpu"


def _cast(value, dtype):
    if isinstance(value, Tensor):
        if value.dtype is dtype or not _eligible(value):
            return value
        if (dtype is state.cpu_dtype and value.dtype is float32 and value.requires_grad
                and value.grad_fn is None and not value._is_view() and state.cache_enabled):
            cached = state.cache.get(id(value))
            if cached is None or cached[0] is not value:
                cached = state.cache[id(value)] = (value, value.to(dtype))
            return cached[1]
        return value.to(dtype)
    if type(value) in (list, tuple):
        return type(value)(_cast(v, dtype) for v in value)
    return value


def _tensors(args):
    for a in args:
        if isinstance(a, Tensor):
            yield a
        elif type(a) in (list, tuple):
            yield from _tensors(a)


def _widest(args, kwargs):
    """The promote policy's dtype: float32 if any eligible input is, else their one dtype."""
    dtypes = {t.dtype for t in _tensors((*args, *kwargs.values())) if _eligible(t)}
    if float32 in dtypes or not dtypes:
        return float32
    if len(dtypes) > 1:
        raise RuntimeError("Unexpected floating ScalarType in at::autocast::prioritize")
    return dtypes.pop()


def _run(fn, dtype, args, kwargs):
    """fn on the inputs cast to dtype, with autocast off inside."""
    args = tuple(_cast(a, dtype) for a in args)
    kwargs = {k: _cast(v, dtype) for k, v in kwargs.items()}
    state.cpu = False
    try:
        return fn(*args, **kwargs)
    finally:
        state.cpu = True


def _wrap(fn, policy):
    """fn under the CPU autocast policy 'lower', 'fp32', 'promote', or a function of the call's
    arguments giving one of them (or None: run as it is)."""

    @functools.wraps(fn)
    def autocast_wrapper(*args, **kwargs):
        if not state.cpu or kwargs.get("out") is not None:  # out= variants are not autocast
            return fn(*args, **kwargs)
        which = policy if type(policy) is str else policy(*args, **kwargs)
        if which == "lower":
            return _run(fn, state.cpu_dtype, args, kwargs)
        if which == "fp32":
            return _run(fn, float32, args, kwargs)
        if which == "promote":
            return _run(fn, _widest(args, kwargs), args, kwargs)
        return fn(*args, **kwargs)  # a composition PyTorch does not cast as a whole

    return autocast_wrapper


def _wrap_operator(fn):
    """A (self, other) method under the lower-precision policy, without packing arguments."""

    @functools.wraps(fn)
    def autocast_operator(self, other):
        if not state.cpu:
            return fn(self, other)
        return _run(fn, state.cpu_dtype, (self, other), {})

    return autocast_operator


# ---- policies that depend on the arguments ----------------------------------------------------


def _einsum(*args, **kwargs):
    """PyTorch contracts through bmm (and so in the lower precision) only when two operands share
    an index that the output sums over."""
    equation = args[0] if args and isinstance(args[0], str) else None
    if equation is None:  # the sublist form: contraction decided the same way, on numbers
        operands = [tuple(a) for a in args[1::2]]
        out = tuple(args[-1]) if len(args) % 2 else None
    else:
        lhs, _, rhs = equation.replace(" ", "").partition("->")
        operands = [tuple(term.replace("...", "")) for term in lhs.split(",")]
        out = tuple(rhs.replace("...", "")) if "->" in equation else None
    if len(operands) < 2:
        return None
    if out is None:  # implicit output: the indices that appear once
        flat = [i for term in operands for i in term]
        out = tuple(i for i in flat if flat.count(i) == 1)
    shared = set.intersection(*(set(term) for term in operands[:2]))
    return "lower" if shared - set(out) else None


def _tensordot(a, b, dims=2, **kwargs):
    """All dims contracted is a dot product in PyTorch (not cast); otherwise mm."""
    if isinstance(dims, int):
        return None if dims == a.ndim == b.ndim else "lower"
    first = dims[0] if isinstance(dims[0], (list, tuple)) else [dims[0]]
    return None if len(first) == a.ndim == b.ndim else "lower"


def _inner(input, other, **kwargs):
    """inner of two vectors is a dot product (not cast); of matrices a matrix product."""
    return None if input.ndim <= 1 and other.ndim <= 1 else "lower"


def _pad(input, pad, mode="constant", value=None):
    """Reflection and replication padding are float32 ops; constant and circular padding are
    not autocast."""
    return "fp32" if mode in ("reflect", "replicate") else None


# ---- the lists -------------------------------------------------------------------------------

_LOWER = ("mm", "matmul", "bmm", "baddbmm", "addmm", "addbmm", "conv1d", "conv2d", "conv3d",
          "conv_transpose1d", "conv_transpose2d", "conv_transpose3d", "conv_tbc", "prelu",
          "chain_matmul", "rnn_tanh_cell", "rnn_relu_cell")
_FP32 = ("polar", "prod", "quantile", "nanquantile", "stft", "istft", "cdist", "trace",
         "view_as_complex", "cholesky", "cholesky_inverse", "cholesky_solve", "inverse", "lu_solve",
         "orgqr", "ormqr", "pinverse", "geqrf", "qr", "svd", "triangular_solve", "lu",
         "max_pool3d", "binary_cross_entropy_with_logits", "kl_div", "cosine_embedding_loss",
         "hinge_embedding_loss", "poisson_nll_loss", "margin_ranking_loss",
         "triplet_margin_loss", "ctc_loss", "grid_sampler")
_PROMOTE = ("cat", "stack", "concat", "concatenate", "index_copy")

POLICIES = {
    "torch": {**dict.fromkeys(_LOWER, "lower"), **dict.fromkeys(_FP32, "fp32"),
              **dict.fromkeys(_PROMOTE, "promote"), "einsum": _einsum,
              "tensordot": _tensordot, "inner": _inner},
    "linalg": {**dict.fromkeys(("matmul", "multi_dot", "vecdot"), "lower"),
               **dict.fromkeys(("cholesky", "cholesky_ex", "cond", "eig", "eigh", "eigvals",
                                "eigvalsh", "householder_product", "inv", "inv_ex", "lstsq",
                                "matrix_rank", "qr", "solve", "svd", "svdvals", "tensorinv",
                                "tensorsolve"), "fp32")},
    "fft": dict.fromkeys(("fft", "ifft", "fft2", "ifft2", "fftn", "ifftn", "rfft", "irfft",
                          "rfft2", "irfft2", "rfftn", "irfftn", "hfft", "ihfft", "hfft2",
                          "ihfft2", "hfftn", "ihfftn"), "fp32"),
    "nn.functional": {
        **dict.fromkeys(("linear", "conv1d", "conv2d", "conv3d", "conv_transpose1d",
                         "conv_transpose2d", "conv_transpose3d", "prelu",
                         "scaled_dot_product_attention"), "lower"),
        **dict.fromkeys(("avg_pool3d", "max_pool3d", "adaptive_avg_pool3d",
                         "adaptive_max_pool3d", "fractional_max_pool2d", "fractional_max_pool3d",
                         "max_unpool2d", "max_unpool3d", "grid_sample", "binary_cross_entropy",
                         "binary_cross_entropy_with_logits", "mse_loss", "l1_loss",
                         "smooth_l1_loss", "huber_loss", "nll_loss", "cross_entropy", "kl_div",
                         "soft_margin_loss", "margin_ranking_loss", "hinge_embedding_loss",
                         "poisson_nll_loss", "cosine_embedding_loss", "triplet_margin_loss",
                         "multi_margin_loss", "multilabel_margin_loss", "ctc_loss"), "fp32"),
        "pad": _pad},
    "Tensor": {**dict.fromkeys(("mm", "matmul", "__matmul__", "__rmatmul__", "bmm", "baddbmm",
                                "addmm", "addbmm", "prelu"), "lower"),
               **dict.fromkeys(("prod", "trace", "inverse", "cholesky", "cholesky_inverse",
                                "cholesky_solve", "pinverse", "qr", "svd", "stft", "istft",
                                "quantile", "nanquantile", "lu_solve", "orgqr", "ormqr", "geqrf",
                                "triangular_solve", "lu"), "fp32"),
               "index_copy": "promote", "inner": _inner},
}


# Methods always called with (self, other): their wrapper takes exactly those (no packing).
_BINARY_METHODS = frozenset(("mm", "matmul", "__matmul__", "__rmatmul__"))


def install(namespaces: dict) -> None:
    """Wrap the listed functions of each namespace (a module's dict, or Tensor's class) where
    they exist; an object listed under two names or namespaces gets one wrapper."""
    wrappers = {}
    for key, policies in POLICIES.items():
        target = namespaces[key]
        scope = target if isinstance(target, dict) else vars(target)
        for name, policy in policies.items():
            fn = scope.get(name)
            if fn is None:
                continue
            binary = key == "Tensor" and name in _BINARY_METHODS
            wrapper = wrappers.get((id(fn), binary))
            if wrapper is None:
                wrap = _wrap_operator(fn) if binary else _wrap(fn, policy)
                wrapper = wrappers[id(fn), binary] = (fn, wrap)
            if isinstance(target, dict):
                target[name] = wrapper[1]
            else:
                setattr(target, name, wrapper[1])
    # The same objects under other names (torch.functional.einsum is torch.einsum, ...).
    for target in namespaces.values():
        if isinstance(target, dict):
            for name, value in list(target.items()):
                found = wrappers.get((id(value), False))
                if found is not None and found[0] is value:
                    target[name] = found[1]
