"""``out=``: one mechanism for every function PyTorch gives an ``out`` keyword.

The op functions do not know about ``out``. For each name PyTorch documents with ``out=`` (the
lists below, taken from PyTorch's signatures), the public function is wrapped once, at import, in
a function with the same parameters plus ``out=None``: called without ``out`` it is one extra
call; with ``out`` it checks what PyTorch checks (no autograd through ``out``, castable dtype),
resizes as PyTorch does (silently when ``out`` is empty, with PyTorch's deprecation warning
otherwise), writes the result into ``out`` in place and returns ``out``. Tensor methods and
operators are never wrapped.
"""

from __future__ import annotations

import inspect
import warnings

from .. import return_types
from .._backend import as_dtype, xp
from .._modes import seen, stack
from ..autograd.grad_mode import state as grad_state
from ..tensor import Tensor

__all__ = ["TORCH", "LINALG", "FFT", "with_out", "write_out"]

TORCH = frozenset("""
    abs absolute acos acosh add addbmm addcdiv addcmul addmm addmv addr all amax amin
    aminmax angle any arccos arccosh arcsin arcsinh arctan arctan2 arctanh argmax argmin argsort
    asin asinh atan atan2 atanh baddbmm bernoulli bitwise_and bitwise_left_shift bitwise_not
    bitwise_or bitwise_right_shift bitwise_xor bmm bucketize cat ceil chain_matmul cholesky
    cholesky_inverse cholesky_solve clamp clamp_max clamp_min clip column_stack complex
    concat concatenate conj_physical copysign cos cosh cross cummax cummin cumprod cumsum
    deg2rad diag digamma div divide dot dsmm dstack eq erf erfc erfinv exp exp2 expm1 fix
    float_power floor floor_divide fmax fmin fmod frac frexp gather gcd ge geqrf ger greater
    greater_equal gt heaviside histc histogram hstack hypot i0 igamma igammac index_add
    index_copy index_reduce index_select inner inverse isin isneginf isposinf kron kthvalue
    lcm ldexp le lerp less less_equal lgamma log log10 log1p log2 logaddexp logaddexp2
    logcumsumexp logical_and logical_not logical_or logical_xor logit logsumexp lt lu lu_solve
    lu_unpack masked_select matmul matrix_power max maximum mean median min minimum mode
    mm msort mul multinomial multiply mv mvlgamma nan_to_num nanmean nanmedian nanquantile nansum
    narrow_copy ne neg negative nextafter nonzero norm not_equal nuclear_norm ormqr outer
    polar polygamma pow prod qr quantile rad2deg reciprocal remainder renorm round row_stack
    rsqrt saddmm scatter searchsorted sgn sigmoid sign signbit sin sinc sinh sort sqrt
    square squeeze_copy stack std sub subtract sum svd take_along_dim tan tanh tensordot
    topk triangular_solve tril triu true_divide trunc var vdot view_copy vstack where xlogy
""".split())
LINALG = frozenset("""
    cholesky cholesky_ex cond cross det eig eigh eigvals eigvalsh householder_product inv
    inv_ex ldl_factor ldl_factor_ex ldl_solve lu lu_factor lu_factor_ex lu_solve matmul matrix_norm
    matrix_power matrix_rank multi_dot norm pinv qr slogdet solve solve_ex solve_triangular
    svd svdvals tensorinv tensorsolve vecdot vector_norm
""".split())
FFT = frozenset("""
    fft fft2 fftn hfft hfft2 hfftn ifft ifft2 ifftn ihfft ihfft2 ihfftn irfft irfft2 irfftn
    rfft rfft2 rfftn
""".split())
# These refuse any other dtype for ``out`` (the matrix-product kernels); the rest take a dtype the
# result can be cast to.
_SAME_DTYPE = frozenset("matmul mm bmm mv dot vdot addmm addmv addbmm baddbmm addr".split())
_KIND_ORDER = "biifc"  # bool < int (unsigned too) < float < complex, as PyTorch's canCast
# These compute in ``out``'s dtype when given one (the means only in a floating one), and their
# ``dtype``, if given too, must be ``out``'s.
_DTYPE_FROM_OUT = frozenset("sum nansum prod cumsum cumprod mean nanmean".split())


def _can_cast(source, target) -> bool:
    return _KIND_ORDER.index(target.kind) >= _KIND_ORDER.index(source.kind.replace("u", "i"))


def _torch_name(dtype) -> str:
    from .elementwise import _KERNEL_NAMES
    return _KERNEL_NAMES.get(dtype.name, dtype.name)


def _write_one(name: str, result: Tensor, out) -> Tensor:
    if not isinstance(out, Tensor):
        raise TypeError(f"{name}(): argument 'out' must be Tensor, not {type(out).__name__}")
    data = result._data
    if name in _SAME_DTYPE and out._data.dtype != data.dtype:
        from .elementwise import _C_NAMES
        raise RuntimeError(f"Expected out tensor to have dtype {_C_NAMES.get(data.dtype.name)}, "
                           f"but got {_C_NAMES.get(out._data.dtype.name)} instead")
    if name in FFT and data.dtype.kind == "c" and out._data.dtype.kind != "c":
        raise RuntimeError(f"{name} expects a complex output tensor, but got "
                           f"{_torch_name(out._data.dtype)}")
    if out._data.dtype != data.dtype and not _can_cast(data.dtype, out._data.dtype):
        raise RuntimeError(f"result type {_torch_name(data.dtype)} can't be cast to the desired "
                           f"output type {_torch_name(out._data.dtype)}")
    if out._data.shape != data.shape:
        if out._data.size:
            warnings.warn(
                f"An output with one or more elements was resized since it had shape "
                f"{list(out._data.shape)}, which does not match the required output shape "
                f"{list(data.shape)}. This behavior is deprecated, and in a future PyTorch "
                f"release outputs will not be resized unless they have zero elements. You can "
                f"explicitly reuse an out tensor t by resizing it, inplace, to zero elements "
                f"with t.resize_(0).", UserWarning, stacklevel=4)
        out._data = data.astype(out._data.dtype, copy=True)
        from .._dispatch import bump_version
        bump_version(out)
        return out
    from .._dispatch import bump_version
    xp.copyto(out._data, data, casting="unsafe")
    bump_version(out)
    return out


def _out_dtype(name: str, input, dtype, out):
    """The ``dtype`` a function of ``_DTYPE_FROM_OUT`` computes in, given ``out``."""
    if not isinstance(out, Tensor):
        return dtype  # write_out refuses it
    _refuse_grad(name, (input, out))
    if dtype is not None and as_dtype(dtype).np != out._data.dtype:
        from .elementwise import _C_NAMES
        if name.startswith("nan"):
            raise RuntimeError(f"nansum: provided dtype must match dtype of result. Got "
                               f"{_torch_name(out.dtype)} and {_torch_name(as_dtype(dtype))}.")
        raise RuntimeError(f"Expected out tensor to have dtype "
                           f"{_C_NAMES[as_dtype(dtype).name]}, but got "
                           f"{_C_NAMES[out.dtype.name]} instead")
    kind = out._data.dtype.kind
    if name.startswith("nan") and isinstance(input, Tensor):
        if name == "nanmean" and input._data.dtype.kind in "biu":
            raise RuntimeError("nanmean(): integral types and 'Bool' are not supported for "
                               "nanmean, even for empty tensors.")
        if input._data.dtype.kind in "fV" and kind not in "fV":  # NaN-skipping: floats only
            from .elementwise import _unsupported
            raise _unsupported("nansum_cpu", out.dtype)
    if name.endswith("mean") and kind not in "fcV":
        return dtype  # the mean is a float: writing it into ``out`` is refused
    return out.dtype


def _refuse_grad(name: str, tensors: tuple) -> None:
    if grad_state.enabled and any(isinstance(t, Tensor) and t.requires_grad for t in tensors):
        raise RuntimeError(f"{name}(): functions with out=... arguments don't support automatic "
                           f"differentiation, but one of the arguments requires grad.")


def write_out(name: str, result, out):
    """Write ``result`` (a tensor or a tuple of them) into ``out`` as PyTorch does; return out."""
    results = result if isinstance(result, tuple) else (result,)
    outs = tuple(out) if isinstance(out, (tuple, list)) else (out,)
    if len(outs) != len(results):
        raise TypeError(f"{name}(): argument 'out' must be tuple of {len(results)} Tensors")
    _refuse_grad(name, results + outs)
    written = tuple(_write_one(name, r, o) for r, o in zip(results, outs))
    if not isinstance(result, tuple):
        return written[0]
    if return_types.is_pytree_node(type(result)):
        return return_types.out_type(type(result))(written)  # max -> return_types.max_out
    return written


def with_out(name: str, fn):
    """``fn`` with an ``out=None`` keyword (``fn`` itself when it already has one)."""
    try:
        signature = inspect.signature(fn)
    except (TypeError, ValueError):
        return fn
    params = signature.parameters
    if "out" in params or any(p.kind is p.VAR_KEYWORD for p in params.values()):
        return fn
    head, call, kw_only = [], [], False
    positional_only = [p.name for p in params.values() if p.kind is p.POSITIONAL_ONLY]
    for p in params.values():
        if p.kind is p.VAR_POSITIONAL:
            head.append(f"*{p.name}")
            call.append(f"*{p.name}")
            kw_only = True
            continue
        if p.kind is p.KEYWORD_ONLY and not kw_only:
            head.append("*")
            kw_only = True
        default = "" if p.default is p.empty else f"=_defaults[{p.name!r}]"
        head.append(f"{p.name}{default}")
        call.append(p.name if p.kind is p.POSITIONAL_ONLY else f"{p.name}={p.name}")
        if positional_only and p.name == positional_only[-1]:
            head.append("/")
    if not kw_only:
        head.append("*")
    head.append("out=None")
    from_out = ("    if out is not None:\n"
                f"        dtype = _out_dtype({name!r}, input, dtype, out)\n"
                if name in _DTYPE_FROM_OUT and "dtype" in params else "")
    names = [p.name for p in params.values()]
    # The out= path is a function of its own: its lambda would make every parameter of the
    # wrapper a cell, which the call without out= would pay for.
    source = (f"def {fn.__name__}({', '.join(head)}):\n"
              f"    if out is None:\n"
              f"        return _fn({', '.join(call)})\n"
              f"    return _with_out({', '.join(call + ['out=out'])})\n"
              f"def _with_out({', '.join(head)}):\n"
              f"    given = ({', '.join(names)},)\n{from_out}"
              f"    if _stack.modes is not None and _stack.dispatch is not None:\n"
              f"        return _seen_out({name!r}, _params, given, out,\n"
              f"                         lambda: _write_out({name!r}, _fn({', '.join(call)}), "
              f"out))\n"
              f"    return _write_out({name!r}, _fn({', '.join(call)}), out)\n")
    namespace = {"_fn": fn, "_write_out": write_out, "_out_dtype": _out_dtype,
                 "_defaults": {p.name: p.default for p in params.values()
                               if p.default is not p.empty},
                 "_stack": stack, "_seen_out": _seen_out, "_params": tuple(params.values())}
    exec(source, namespace)  # noqa: S102  (a wrapper with fn's own parameters, built once)
    wrapper = namespace[fn.__name__]
    wrapper.__doc__ = fn.__doc__
    wrapper.__module__ = fn.__module__
    wrapper.__qualname__ = fn.__qualname__

    return wrapper


# ---- what dispatch modes see of an out= call: aten's out= overload, PyTorch's arguments --------

_ALIASES = {"multiply": "mul", "divide": "div", "true_divide": "div", "subtract": "sub",
            "greater": "gt", "greater_equal": "ge", "less": "lt", "less_equal": "le",
            "not_equal": "ne", "absolute": "abs", "negative": "neg", "clip": "clamp",
            "concat": "cat", "concatenate": "cat", "arccos": "acos", "arcsin": "asin",
            "arctan": "atan", "arctan2": "atan2", "arccosh": "acosh", "arcsinh": "asinh",
            "arctanh": "atanh", "fix": "trunc"}
# (overload with a tensor second argument, with a number): the binary ops named by that
_BY_OTHER = dict.fromkeys(("eq", "ne", "lt", "le", "gt", "ge", "fmod", "remainder",
                           "bitwise_and", "bitwise_or", "bitwise_xor", "copysign", "lerp"),
                          ("Tensor_out", "Scalar_out"))
_BY_OTHER.update(dict.fromkeys(("add", "sub", "mul", "div", "floor_divide"), ("out", "out")))
_WITH_DIM = {"sum": "IntList_out", "prod": "int_out", "std": "correction_out",
             "var": "correction_out"}
_DIM_LIST = frozenset(("sum", "mean", "amax", "amin", "std", "var", "nansum", "logsumexp"))
_VALUES = frozenset(("sort", "topk", "kthvalue", "mode", "msort"))


def _seen_out(name: str, params: tuple, values: tuple, out, run):
    """``name(..., out=out)`` as dispatch modes see it: one call of aten's out= overload, its
    arguments as PyTorch passes them (trailing defaults left out, a dim as a list where aten
    takes a list), ``out`` as its keyword; ``run()`` writes the result."""
    aten = _ALIASES.get(name, name)
    args, kwargs = [], {}
    given = {}
    for p, v in zip(params, values):
        if p.kind is p.VAR_POSITIONAL:
            args.extend(v)
            continue
        if p.default is not p.empty and (v is p.default or not isinstance(v, Tensor)
                                         and type(v) is type(p.default) and v == p.default):
            continue
        if p.name == "dim" and aten in _DIM_LIST and isinstance(v, int):
            v = [v]
        given[p.name] = v
        if p.kind is p.KEYWORD_ONLY:
            kwargs[p.name] = v
        else:
            while len(args) < [q.name for q in params].index(p.name):
                q = params[len(args)]
                args.append(q.default)  # a default before a given positional: passed
            args.append(v)
    overload = "out"
    if aten == "matmul" and all(isinstance(a, Tensor) and a.ndim == 2 for a in args[:2]):
        aten = "mm"  # as PyTorch's matmul of two matrices
    if aten == "div" and "rounding_mode" in given:
        overload = "out_mode"
    elif aten in _BY_OTHER and len(args) > 1:
        overload = _BY_OTHER[aten][0 if isinstance(args[-1 if aten == "lerp" else 1], Tensor)
                                   else 1]
    elif aten == "pow":
        overload = ("Scalar_out" if not isinstance(args[0], Tensor) else
                    "Tensor_Tensor_out" if isinstance(args[1], Tensor) else "Tensor_Scalar_out")
    elif aten == "where":
        overload = "self_out"
    elif aten in _WITH_DIM and "dim" in given:
        overload = _WITH_DIM[aten]
    elif aten == "round" and "decimals" in given:
        overload = "decimals_out"
    if aten in _VALUES and isinstance(out, (tuple, list)) and len(out) == 2:
        overload, kwargs["values"], kwargs["indices"] = "values", out[0], out[1]
    elif aten in ("max", "min") and "dim" in given and isinstance(out, (tuple, list)):
        overload = f"dim_{aten}"  # max.dim_max(..., max=, max_values=), min's likewise
        kwargs[aten], kwargs[f"{aten}_values" if aten == "max" else "min_indices"] = out
    else:
        kwargs["out"] = out
    return seen(aten, overload, tuple(args), kwargs, None, run)
