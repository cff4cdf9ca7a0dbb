"""The functional API: vjp, jvp, jacobian, hessian, hvp, vhp of a function of tensors."""

from __future__ import annotations

from collections.abc import Callable

from .._creation import ones, ones_like, zeros, zeros_like
from ..ops.shape import stack

__all__ = ["vjp", "jvp", "jacobian", "hessian", "hvp", "vhp"]


def _tuple(x) -> tuple[tuple, bool]:
    return (tuple(x), True) if isinstance(x, (tuple, list)) else ((x,), False)


def _prepare(inputs: tuple, create_graph: bool) -> tuple:
    """Fresh inputs that require grad (views of the caller's, so their graph is kept if asked)."""
    out = []
    for x in inputs:
        if create_graph and x.requires_grad:
            out.append(x.view_as(x))
        else:
            out.append(x.detach().requires_grad_(x.is_floating_point()))
    return tuple(out)


def _grads(outputs, inputs, grad_outputs, create_graph: bool, strict: bool, what: str) -> tuple:
    from ._backward import grad

    needed = [(o, g) for o, g in zip(outputs, grad_outputs) if o.requires_grad]
    if not needed:
        if strict:
            raise RuntimeError(f"{what}: the output of the user-provided function does not "
                               "require gradients; with strict=True this is an error.")
        return tuple(zeros_like(x) for x in inputs)
    result = grad([o for o, _ in needed], inputs, [g for _, g in needed],
                  create_graph=create_graph, retain_graph=True, allow_unused=True)
    if strict and any(r is None for r in result):
        raise RuntimeError(f"{what}: an output is independent of an input; with strict=True "
                           "this is an error.")
    return tuple(zeros_like(x) if r is None else r for x, r in zip(inputs, result))


def _detach(values: tuple, create_graph: bool) -> tuple:
    return values if create_graph else tuple(v.detach() for v in values)


def _check_v(v, like: tuple, what: str) -> tuple:

    if v is None:
        if any(x.numel() != 1 for x in like):
            raise RuntimeError(f"{what}: the vector v can only be None if the input/output of the "
                               "user-provided function is a single Tensor with a single element.")
        return tuple(ones_like(x) for x in like)
    v, _ = _tuple(v)
    if len(v) != len(like):
        raise RuntimeError(f"{what}: v has {len(v)} tensors but there are {len(like)}")
    for i, (a, b) in enumerate(zip(v, like)):
        if a.shape != b.shape:
            raise RuntimeError(f"{what}: entry {i} of v has size {list(a.shape)} but it should "
                               f"have size {list(b.shape)}")
    return v


def vjp(func: Callable, inputs, v=None, create_graph: bool = False, strict: bool = False):
    """``(func(inputs), v^T J)``."""
    ins, many_in = _tuple(inputs)
    ins = _prepare(ins, create_graph)
    outs, many_out = _tuple(func(*ins))
    v = _check_v(v, outs, "vjp")
    result = _grads(outs, ins, v, create_graph, strict, "vjp")
    outs = _detach(outs, create_graph)
    return (outs if many_out else outs[0]), (result if many_in else result[0])


def jvp(func: Callable, inputs, v=None, create_graph: bool = False, strict: bool = False):
    """``(func(inputs), J v)``, computed in forward mode."""
    from . import forward_ad as fwad

    ins, many_in = _tuple(inputs)
    v = _check_v(v, ins, "jvp")
    with fwad.dual_level():
        duals = tuple(fwad.make_dual(x if create_graph else x.detach(), t)
                      for x, t in zip(ins, v))
        outs, many_out = _tuple(func(*duals))
        unpacked = [fwad.unpack_dual(o) for o in outs]
    primals = tuple(p for p, _ in unpacked)
    if strict and any(t is None for _, t in unpacked):
        raise RuntimeError("jvp: an output is independent of the inputs; with strict=True this "
                           "is an error.")
    tangents = tuple(zeros_like(p) if t is None else t for p, t in unpacked)
    primals, tangents = _detach(primals, create_graph), _detach(tangents, create_graph)
    return (primals if many_out else primals[0]), (tangents if many_out else tangents[0])


def jacobian(func: Callable, inputs, create_graph: bool = False, strict: bool = False,
             vectorize: bool = False, strategy: str = "reverse-mode"):
    """The Jacobian: for each output and input, a tensor of shape output.shape + input.shape."""

    if strategy not in ("reverse-mode", "forward-mode"):
        raise ValueError('Expected strategy to be either "forward-mode" or "reverse-mode".')
    ins, many_in = _tuple(inputs)
    ins = _prepare(ins, create_graph)
    outs, many_out = _tuple(func(*ins))
    table = []
    for out in outs:
        flat = out.reshape(-1)
        rows = []
        for j in range(flat.numel()):
            seed = zeros(flat.numel(), dtype=out.dtype)
            seed._data[j] = 1
            rows.append(_grads((flat,), ins, (seed,), create_graph, strict, "jacobian"))
        per_input = []
        for k, x in enumerate(ins):
            if rows:
                block = stack([r[k] for r in rows]).reshape(tuple(out.shape) + tuple(x.shape))
            else:
                block = zeros(tuple(out.shape) + tuple(x.shape), dtype=x.dtype)
            per_input.append(block)
        table.append(tuple(per_input) if many_in else per_input[0])
    return tuple(table) if many_out else table[0]


def hessian(func: Callable, inputs, create_graph: bool = False, strict: bool = False,
            vectorize: bool = False, outer_jacobian_strategy: str = "reverse-mode"):
    """The Hessian of a scalar function: shape input.shape + input.shape per pair of inputs."""
    ins, many_in = _tuple(inputs)

    def gradient(*xs):
        out = func(*xs)
        if out.numel() != 1:
            raise RuntimeError("hessian: the function given to hessian should return a single "
                               f"element Tensor, got shape {list(out.shape)}")
        return _grads((out.reshape(()),), xs, (_one(out),), True, strict, "hessian")

    result = jacobian(gradient, ins, create_graph=create_graph, strict=strict)
    # One row per gradient (one per input), each a tuple over the inputs.
    return result if many_in else result[0][0]


def _one(out):

    return ones((), dtype=out.dtype)


def vhp(func: Callable, inputs, v=None, create_graph: bool = False, strict: bool = False):
    """``(func(inputs), v^T H)`` for a scalar function."""
    ins, many_in = _tuple(inputs)
    ins = _prepare(ins, True)
    out = func(*ins)
    if out.numel() != 1:
        raise RuntimeError("vhp: the function given to vhp should return a single element "
                           f"Tensor, got shape {list(out.shape)}")
    v = _check_v(v, ins, "vhp")
    grads = _grads((out.reshape(()),), ins, (_one(out),), True, strict, "vhp")
    result = _grads(grads, ins, v, create_graph, strict, "vhp")
    result = _detach(result, create_graph)
    out = out if create_graph else out.detach()
    return out, (result if many_in else result[0])


def hvp(func: Callable, inputs, v=None, create_graph: bool = False, strict: bool = False):
    """``(func(inputs), H v)`` for a scalar function (H is symmetric: the same as vhp)."""
    return vhp(func, inputs, v, create_graph, strict)
