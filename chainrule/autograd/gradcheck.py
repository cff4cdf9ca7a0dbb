"""Finite-difference checks of first and second derivatives (PyTorch's signatures)."""

from __future__ import annotations

import warnings
from collections.abc import Callable, Sequence

from .._backend import xp

__all__ = ["gradcheck", "gradgradcheck", "GradcheckError", "get_numerical_jacobian",
           "get_analytical_jacobian", "get_numerical_jacobian_wrt_specific_input"]


class GradcheckError(RuntimeError):
    """Raised by gradcheck and gradgradcheck when the derivatives do not match."""


def _as_tuple(x) -> tuple:
    return tuple(x) if isinstance(x, (tuple, list)) else (x,)


def _differentiable(inputs: tuple) -> list[int]:
    from ..tensor import Tensor

    return [i for i, x in enumerate(inputs) if isinstance(x, Tensor) and x.requires_grad]


def _outputs(func: Callable, inputs: tuple) -> tuple:
    from ..tensor import Tensor

    return tuple(o for o in _as_tuple(func(*inputs)) if isinstance(o, Tensor))


def _numerical(func: Callable, inputs: tuple, targets: list, eps: float) -> list:
    """Central differences: jac[out][target] has shape (target numel, output numel)."""
    # Grad mode stays on: func may itself differentiate (gradgradcheck's does).
    outs = _outputs(func, inputs)
    jac = [[xp.zeros((t._data.size, o._data.size)) for t in targets] for o in outs]
    for k, target in enumerate(targets):
        data = target._data
        for j, idx in enumerate(xp.ndindex(data.shape)):
            orig = data[idx].item()
            data[idx] = orig + eps
            plus = [o._data.astype(xp.float64).ravel() for o in _outputs(func, inputs)]
            data[idx] = orig - eps
            minus = [o._data.astype(xp.float64).ravel() for o in _outputs(func, inputs)]
            data[idx] = orig
            for o in range(len(outs)):
                jac[o][k][j] = (plus[o] - minus[o]) / (2 * eps)
    return jac


def _analytical(func: Callable, inputs: tuple, wrt: list[int]) -> list:
    from ..tensor import Tensor
    from ._backward import grad as autograd_grad

    outs = _outputs(func, inputs)
    jac = [[xp.zeros((inputs[i]._data.size, o._data.size)) for i in wrt] for o in outs]
    for o, out in enumerate(outs):
        if not out.requires_grad:
            continue
        for j in range(out._data.size):
            seed = xp.zeros(out._data.size, dtype=out._data.dtype)
            seed[j] = 1
            grads = autograd_grad(out, [inputs[i] for i in wrt],
                                  Tensor._wrap(seed.reshape(out._data.shape), None, 0),
                                  retain_graph=True, allow_unused=True)
            for k, g in enumerate(grads):
                if g is not None:
                    if g._data.shape != inputs[wrt[k]]._data.shape:
                        raise GradcheckError(
                            f"gradient for input {wrt[k]} has shape {list(g._data.shape)}, "
                            f"expected {list(inputs[wrt[k]]._data.shape)}")
                    jac[o][k][:, j] = g._data.ravel()
    return jac


def _as_real(func: Callable, inputs: tuple):
    """``func`` on real pairs: complex inputs and outputs seen through ``view_as_real``.

    A complex gradient in PyTorch's convention is dL/dRe + i dL/dIm, so checking the real
    function's derivatives checks the complex rules exactly. None when nothing is complex.
    """
    from ..ops.complex import view_as_complex, view_as_real
    from ..tensor import Tensor

    def complex_tensor(x) -> bool:
        return isinstance(x, Tensor) and x._data.dtype.kind == "c"

    outputs = _outputs(func, inputs)
    if not any(complex_tensor(x) for x in inputs + outputs):
        return None
    real_inputs = tuple(
        view_as_real(x.detach()).clone().requires_grad_(x.requires_grad) if complex_tensor(x)
        else x for x in inputs)

    def real_func(*args):
        args = [view_as_complex(a) if complex_tensor(x) else a for a, x in zip(args, inputs)]
        return tuple(view_as_real(o) if complex_tensor(o) else o
                     for o in _outputs(func, tuple(args)))

    return real_func, real_inputs


def gradcheck(func: Callable, inputs, *, eps: float = 1e-6, atol: float = 1e-5,
              rtol: float = 1e-3, raise_exception: bool = True, nondet_tol: float = 0.0,
              check_undefined_grad: bool = True, check_grad_dtypes: bool = False,
              check_batched_grad: bool = False, check_batched_forward_grad: bool = False,
              check_forward_ad: bool = False, check_backward_ad: bool = True,
              fast_mode: bool = False, masked=None) -> bool:
    """Check the gradients of ``func`` at ``inputs`` against central finite differences."""
    inputs = _as_tuple(inputs)
    realified = _as_real(func, inputs) if _differentiable(inputs) else None
    if realified is not None:
        return gradcheck(*realified, eps=eps, atol=atol, rtol=rtol,
                         raise_exception=raise_exception, check_forward_ad=check_forward_ad,
                         check_backward_ad=check_backward_ad)
    wrt = _differentiable(inputs)
    if not wrt:
        raise ValueError("gradcheck expects at least one input tensor to require gradient, but "
                         "none of the them have requires_grad=True.")
    for i in wrt:
        if inputs[i]._data.dtype != xp.float64:
            warnings.warn(f"Input #{i} requires gradient and is not a double precision floating "
                          "point. This check will likely fail if all the inputs are not of "
                          "double precision floating point.", stacklevel=2)
    numerical = _numerical(func, inputs, [inputs[i] for i in wrt], eps)
    analytical = _analytical(func, inputs, wrt) if check_backward_ad else numerical
    for o, (num_row, ana_row) in enumerate(zip(numerical, analytical)):
        for k, (num, ana) in enumerate(zip(num_row, ana_row)):
            if not xp.allclose(ana, num, rtol=rtol, atol=atol):
                if not raise_exception:
                    return False
                raise GradcheckError(
                    f"Jacobian mismatch for output {o} with respect to input {wrt[k]},\n"
                    f"numerical:{_fmt(num)}\nanalytical:{_fmt(ana)}\n")
    if check_forward_ad:

        return _check_forward(func, inputs, wrt, numerical, atol, rtol, raise_exception)
    return True


def _fmt(array) -> str:
    from ..tensor import Tensor

    return repr(Tensor._wrap(array, None, 0))


def gradgradcheck(func: Callable, inputs, grad_outputs: Sequence | None = None, *,
                  eps: float = 1e-6, atol: float = 1e-5, rtol: float = 1e-3,
                  gen_non_contig_grad_outputs: bool = False, raise_exception: bool = True,
                  nondet_tol: float = 0.0, check_undefined_grad: bool = True,
                  check_grad_dtypes: bool = False, check_batched_grad: bool = False,
                  check_fwd_over_rev: bool = False, check_rev_over_rev: bool = True,
                  fast_mode: bool = False, masked: bool = False) -> bool:
    """Check second derivatives: gradcheck of the gradient of ``func`` (with grad_outputs)."""
    from ..tensor import Tensor
    from ._backward import grad as autograd_grad

    inputs = _as_tuple(inputs)
    realified = _as_real(func, inputs) if grad_outputs is None else None
    if realified is not None:
        return gradgradcheck(*realified, eps=eps, atol=atol, rtol=rtol,
                             raise_exception=raise_exception)
    wrt = _differentiable(inputs)
    outs = _outputs(func, inputs)
    if grad_outputs is None:
        rng = xp.random.default_rng(0)
        grad_outputs = tuple(
            Tensor._wrap(rng.standard_normal(o._data.shape).astype(o._data.dtype), None, 0
                         ).requires_grad_(o._data.dtype.kind == "f")
            for o in outs if o.requires_grad)
    grad_outputs = _as_tuple(grad_outputs)
    n_in = len(inputs)

    def first_derivatives(*args):
        primal, seeds = args[:n_in], args[n_in:]
        outputs = [o for o in _outputs(func, primal) if o.requires_grad]
        grads = autograd_grad(outputs, [primal[i] for i in wrt], seeds, create_graph=True,
                              allow_unused=True)
        return tuple(g for g in grads if g is not None)

    return gradcheck(first_derivatives, inputs + grad_outputs, eps=eps, atol=atol, rtol=rtol,
                     raise_exception=raise_exception)


def _check_forward(func, inputs, wrt, numerical, atol, rtol, raise_exception) -> bool:
    """gradcheck(check_forward_ad=True): JVP columns against the numerical Jacobian."""
    from .._creation import zeros_like
    from .forward_ad import dual_level, make_dual, unpack_dual

    for k, i in enumerate(wrt):
        x = inputs[i]
        for j in range(x.numel()):
            seed = zeros_like(x)
            seed._data.reshape(-1)[j] = 1
            with dual_level():
                args = list(inputs)
                args[i] = make_dual(x, seed)
                outs = [o for o in _as_tuple(func(*args)) if hasattr(o, "_data")]
                tangents = [unpack_dual(o).tangent for o in outs]
            for o, t in enumerate(tangents):
                column = numerical[o][k][j]
                got = xp.zeros_like(column) if t is None else t._data.astype(xp.float64).ravel()
                if not xp.allclose(got, column, rtol=rtol, atol=atol):
                    if not raise_exception:
                        return False
                    raise GradcheckError(
                        f"Jacobian computed with forward mode mismatch for output {o} with "
                        f"respect to input {i},\nnumerical:{column}\nanalytical:{got}\n")
    return True


_PRIVATE = ("`{}` was part of PyTorch's private API and not meant to be exposed. We are "
            "deprecating it and it will be removed in a future version of PyTorch. If you have a "
            "specific use for this or feature request for this to be a stable API, please file us "
            "an issue at https://github.com/pytorch/pytorch/issues/new")


def _jacobian(array, like):
    """A Jacobian array as a tensor in the dtype of the tensor ``like``."""
    from ..tensor import Tensor

    return Tensor._wrap(array.astype(like._data.dtype), None, 0)


def get_numerical_jacobian(fn: Callable, inputs, target=None, eps: float = 1e-3,
                           grad_out: float = 1.0) -> tuple:
    """Deprecated: the finite-difference Jacobians of ``fn(inputs)`` (its first output) with
    respect to each input (or tensor of ``target``) that requires grad."""
    from ..tensor import Tensor

    warnings.warn(_PRIVATE.format("get_numerical_jacobian"), FutureWarning, stacklevel=2)
    if grad_out != 1.0:
        raise ValueError("Expected grad_out to be 1.0. get_numerical_jacobian no longer supports "
                         "values of grad_out != 1.0.")
    inputs = _as_tuple(inputs)
    if any(o._data.dtype.kind == "c" for o in _outputs(lambda *a: fn(a), inputs)):
        raise ValueError("Expected output to be non-complex. get_numerical_jacobian no longer "
                         "supports functions that return complex outputs.")
    targets = [t for t in _as_tuple(inputs if target is None else target)
               if isinstance(t, Tensor) and t.requires_grad]
    first = _outputs(lambda *a: fn(a), inputs)[0]
    jac = _numerical(lambda *a: fn(a), inputs, targets, eps)
    return tuple(_jacobian(j, first) for j in jac[0])


def get_numerical_jacobian_wrt_specific_input(fn: Callable, input_idx: int, inputs, outputs,
                                              eps: float, input=None,
                                              is_forward_ad: bool = False) -> tuple:
    """The finite-difference Jacobian of each floating point output of ``fn(*inputs)`` (given
    as ``outputs``) with respect to ``inputs[input_idx]`` (or ``input``), shaped (input numel,
    output numel)."""
    inputs = _as_tuple(inputs)
    input = inputs[input_idx] if input is None else input
    if not input.requires_grad:
        raise AssertionError("Expected input to have requires_grad=True")
    if input._data.dtype.kind == "c":
        raise NotImplementedError("get_numerical_jacobian_wrt_specific_input: complex inputs are "
                                  "not supported by chainrule")
    jac = _numerical(fn, inputs, [input], eps)
    return tuple(_jacobian(j[0], o) for j, o in zip(jac, _outputs(fn, inputs))
                 if o._data.dtype.kind in "fc")


def get_analytical_jacobian(inputs, output, nondet_tol: float = 0.0,
                            grad_out: float = 1.0) -> tuple:
    """Deprecated: the Jacobians of ``output`` with respect to each input that requires grad,
    by backward, and whether two runs agreed, the gradients' sizes and their dtypes were right:
    ``(jacobians, reentrant, sizes_ok, types_ok)``."""
    from ..tensor import Tensor
    from ._backward import grad as autograd_grad

    warnings.warn(_PRIVATE.format("get_analytical_jacobian"), FutureWarning, stacklevel=2)
    if grad_out != 1.0:
        raise ValueError("Expected grad_out to be 1.0. get_analytical_jacobian no longer "
                         "supports values of grad_out != 1.0.")
    if output._data.dtype.kind == "c":
        raise ValueError("Expected output to be non-complex. get_analytical_jacobian no longer "
                         "supports functions that return complex outputs.")
    diff = [x for x in _as_tuple(inputs) if isinstance(x, Tensor) and x.requires_grad]
    sizes_ok = types_ok = True

    def rows():
        nonlocal sizes_ok, types_ok
        jac = [xp.zeros((x._data.size, output._data.size)) for x in diff]
        for j in range(output._data.size):
            seed = xp.zeros(output._data.size, dtype=output._data.dtype)
            seed[j] = 1
            grads = autograd_grad(output, diff, Tensor._wrap(seed.reshape(output._data.shape),
                                                             None, 0),
                                  retain_graph=True, allow_unused=True)
            for k, (x, g) in enumerate(zip(diff, grads)):
                if g is None:
                    continue
                if g._data.size != x._data.size:
                    sizes_ok = False
                    continue
                types_ok = types_ok and g._data.dtype == x._data.dtype
                jac[k][:, j] = g._data.ravel()
        return jac

    first, second = rows(), rows()
    reentrant = all(xp.abs(a - b).max(initial=0.0) <= nondet_tol for a, b in zip(first, second))
    return tuple(_jacobian(j, x) for j, x in zip(first, diff)), reentrant, sizes_ok, types_ok
