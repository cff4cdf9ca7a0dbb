"""``backward`` and ``grad``: the gradient API around the engine."""

from __future__ import annotations

from .._backend import from_np
from .._batched import state as vmap_state
from .._creation import empty, ones_like, zeros_like
from ..tensor import Tensor
from . import engine, forward_ad
from .grad_mode import state as grad_state
from .graph import GradientEdge, edge_meta

__all__ = ["backward", "grad"]


def _tensors(x) -> tuple:
    if isinstance(x, Tensor | GradientEdge):
        return (x,)
    return tuple(x)


def _edge(x) -> tuple:
    """(node, output_nr) of a tensor or a GradientEdge."""
    return (x[0], x[1]) if type(x) is GradientEdge else x._edge()


def _root_grads(outputs: tuple, grads, create_graph: bool) -> list:
    if grads is None:
        grads = (None,) * len(outputs)
    else:
        grads = _tensors(grads) if isinstance(grads, Tensor) else tuple(grads)
    if len(grads) != len(outputs):
        raise RuntimeError(f"grad can be implicitly created only for scalar outputs: got "
                           f"{len(grads)} gradients for {len(outputs)} outputs")
    result = []
    for i, (out, g) in enumerate(zip(outputs, grads)):
        if type(out) is GradientEdge:
            out = _edge_output(out, g)
        elif not out.requires_grad:
            raise RuntimeError(f"element {i} of tensors does not require grad and does not have "
                               "a grad_fn")
        if g is None:
            if out._data.size != 1:
                raise RuntimeError(f"grad can be implicitly created only for scalar outputs (got "
                                   f"an output of shape {list(out._data.shape)}); pass gradient= "
                                   "with the output's shape")
            if out._data.dtype.kind == "c":
                raise RuntimeError("grad can be implicitly created only for real scalar outputs")
            g = ones_like(out)
        elif not isinstance(g, Tensor):
            raise TypeError(f"gradients must be tensors or None, got {type(g).__name__}")
        elif g._data.shape != out._data.shape:
            raise RuntimeError(f"Mismatch in shape: grad_output[{i}] has a shape of "
                               f"{g.shape} and output[{i}] has a shape of {out.shape}.")
        result.append(g if create_graph else _detach(g))
    return result


def _edge_output(edge: GradientEdge, g):
    """A stand-in for the output at ``edge`` with its shape and dtype, for the checks above."""
    meta = edge_meta(edge)
    if meta is None:
        if g is None:
            raise RuntimeError("grad can be implicitly created only for scalar outputs: pass "
                               "grad_outputs for a GradientEdge not made by get_gradient_edge")
        return g
    return empty(meta[0], dtype=from_np(meta[1]))


_detach = forward_ad.detach_keeping_tangents


def backward(tensors, grad_tensors=None, retain_graph: bool | None = None,
             create_graph: bool = False, grad_variables=None, inputs=None) -> None:
    """Accumulate the gradients of ``tensors`` into the ``.grad`` of the graph's leaves."""
    if vmap_state.level or grad_state.reverse_levels or forward_ad.state.nesting:
        raise RuntimeError("backward() called inside a functorch transform. This is not "
                           "supported, please use functorch.grad or functorch.vjp instead or call "
                           "backward() outside of functorch transforms.")
    outputs = _tensors(tensors)
    grads = _root_grads(outputs, grad_tensors if grad_tensors is not None else grad_variables,
                        create_graph)
    retain = create_graph if retain_graph is None else retain_graph
    targets = None
    if inputs is not None:
        inputs = _tensors(inputs)
        if not inputs:
            raise RuntimeError("backward: 'inputs' argument to backward() cannot be empty.")
        targets = [_target(t) for t in inputs]
    captured = engine.execute([_edge(o) for o in outputs], grads, targets, retain,
                              create_graph, accumulate=True)
    if inputs is not None:
        for t, g in zip(inputs, captured):
            if type(t) is not GradientEdge and t.grad_fn is not None and g is not None:
                t.grad = g if t.grad is None else t.grad + g


def _target(t) -> tuple:
    if type(t) is GradientEdge:
        return (t[0], t[1])
    if not t.requires_grad:
        raise RuntimeError("One of the differentiated Tensors does not require grad")
    return t._edge()


def grad(outputs, inputs, grad_outputs=None, retain_graph: bool | None = None,
         create_graph: bool = False, only_inputs: bool = True, allow_unused: bool | None = None,
         is_grads_batched: bool = False, materialize_grads: bool = False) -> tuple:
    """The gradients of ``outputs`` with respect to ``inputs`` (no ``.grad`` is changed)."""
    if is_grads_batched:
        # The first dim of every grad_output is a batch: one backward under vmap, not a loop.
        from ..func._vmap import vmap

        def one(*seeds):
            return grad(outputs, inputs, seeds, retain_graph=True, create_graph=create_graph,
                        allow_unused=allow_unused, materialize_grads=materialize_grads)

        return vmap(one)(*_tensors(grad_outputs))
    outs = _tensors(outputs)
    ins = _tensors(inputs)
    if allow_unused is None:
        allow_unused = materialize_grads
    if materialize_grads and not allow_unused:
        raise ValueError("Expected allow_unused to be True or not passed when materialize_grads "
                         "is True, but got False.")
    if materialize_grads and any(type(t) is GradientEdge for t in ins):
        raise RuntimeError("materialize_grads cannot be used when the given input is a "
                           "GradientEdge")
    grads = _root_grads(outs, grad_outputs, create_graph)
    retain = create_graph if retain_graph is None else retain_graph
    captured = engine.execute([_edge(o) for o in outs], grads, [_target(t) for t in ins], retain,
                              create_graph, accumulate=False)
    result = []
    for i, (t, g) in enumerate(zip(ins, captured)):
        if g is None:
            if materialize_grads:
                g = zeros_like(t)
            elif not allow_unused:
                raise RuntimeError(f"One of the differentiated Tensors appears to not have been "
                                   f"used in the graph (input {i}). Set allow_unused=True if this "
                                   "is the desired behavior.")
        elif not create_graph:
            g = _detach(g)
        result.append(g)
    return tuple(result)




def _tensor_backward(self, gradient, retain_graph, create_graph, inputs) -> None:
    backward(self, gradient, retain_graph, create_graph, inputs=inputs)


Tensor._backward = _tensor_backward
