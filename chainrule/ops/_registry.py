"""The op registry: one record per op with its forward, its derivative rules and its name.

A VJP rule is a function whose parameter names say what it reads: ``g`` (the output's gradient;
``grads`` for ops with several outputs), ``out`` (the primal result), the op's input names,
``<input>_shape`` and its keyword parameters. Only what the rules of inputs that require grad read
is saved.

The JVP rule (forward mode) is one of the shortcuts
- ``"elementwise"``: the tangent is the sum over inputs of the VJP rule applied to the input's
  tangent (right when each VJP rule multiplies ``g`` elementwise),
- ``"linear"``: the op itself applied to the tangents (ops linear in their differentiable inputs),
- ``"multilinear"``: the sum over inputs of the op with one input replaced by its tangent,
or a function reading ``t_<input>`` (tangents, None when absent), the inputs, ``out`` and params.

The batching rule (vmap) is ``"elementwise"`` (the default for elementwise records), a rule
from ``_batching`` (``batch_dims(...)``) or a function ``rule(op, args, batched, size, params)``;
without one, vmap runs the op per example and warns.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable

from .._threads import split_ops
from ..autograd.graph import node_class

__all__ = ["Op", "defop", "REGISTRY", "ZERO", "not_implemented", "NAMESPACES"]

REGISTRY: dict[str, Op] = {}
NAMESPACES: dict = {}  # torch.ops.<name>: operator namespaces, made by chainrule.library


def ZERO(g):
    """Marker rule: differentiable, with derivative zero everywhere (floor, sign, round)."""
    return g.new_zeros(g.shape)


def not_implemented(what: str) -> Callable:
    """A rule that raises NotImplementedError (a RuntimeError, as PyTorch's) naming the missing
    derivative."""

    def not_implemented_rule():
        raise NotImplementedError(f"the derivative for '{what}' is not implemented")

    return not_implemented_rule


class Op:
    """An op record: forward on raw arrays, one VJP rule per input, and how to record it."""

    __slots__ = (
        "name",
        "forward",
        "split",
        "inputs",
        "vjp",
        "rule_args",
        "reads",
        "jvp",
        "backward_name",
        "promote",
        "float_out",
        "casts",
        "differentiable",
        "view",
        "n_outputs",
        "uses_shapes",
        "jvp_args",
        "batch",
        "holomorphic",
        "sized_by_values",
        "save_plans",
        "node_class",
    )

    def __init__(
        self,
        name: str,
        forward: Callable,
        inputs: tuple[str, ...],
        vjp: tuple,
        *,
        jvp: Callable | None = None,
        backward_name: str | None = None,
        promote: bool = False,
        float_out: bool = False,
        differentiable: bool = True,
        view: bool = False,
        n_outputs: int = 1,
        batch=None,
        holomorphic: bool = True,
        sized_by_values: bool = False,
    ) -> None:
        if len(vjp) != len(inputs):
            raise ValueError(f"op {name}: {len(inputs)} inputs but {len(vjp)} VJP rules")
        self.name = name
        self.save_plans: dict = {}  # recording: which inputs need gradients -> what to save
        self.forward = forward
        self.split = None  # elementwise ops: kernel of large calls (threads, buffer cache)
        self.inputs = inputs
        self.vjp = vjp
        self.rule_args = tuple(() if rule is None else _param_names(rule) for rule in vjp)
        # For each input: which inputs (by position, or "out") its rule reads.
        self.reads = tuple(
            tuple(inputs.index(a) if a in inputs else a for a in args if a in inputs or a == "out")
            for args in self.rule_args
        )
        if jvp is not None and not isinstance(jvp, str) and not callable(jvp):
            raise ValueError(
                f"op {name}: jvp must be a rule, 'elementwise', 'linear' or 'multilinear'"
            )
        self.jvp = jvp
        self.jvp_args = _param_names(jvp) if callable(jvp) else ()
        self.backward_name = backward_name or _camel(name) + "Backward0"
        self.promote = promote
        self.float_out = float_out
        self.casts = promote or float_out
        self.uses_shapes = any(a.endswith("_shape") for args in self.rule_args for a in args)
        self.differentiable = differentiable
        self.view = view
        self.n_outputs = n_outputs
        if batch is None and jvp == "elementwise" and not _has_dims(forward):
            batch = "elementwise"
        self.batch = batch
        split_ops(self)
        # False: the rules already follow the complex convention (real(), conj(), abs(), ...).
        self.holomorphic = holomorphic
        # True: the results' shapes depend on the input values (the meta device refuses it)
        self.sized_by_values = sized_by_values
        self.node_class = node_class(self)  # grad_fn's class, e.g. AddBackward0

    def __repr__(self) -> str:
        return f"Op({self.name})"


def _param_names(fn: Callable) -> tuple[str, ...]:
    """A rule's parameter names (from its code object: inspect.signature is slow at import)."""
    code = getattr(fn, "__code__", None)
    if code is None or code.co_flags & (inspect.CO_VARARGS | inspect.CO_VARKEYWORDS):
        return tuple(inspect.signature(fn).parameters)
    return code.co_varnames[:code.co_argcount + code.co_kwonlyargcount]


def _has_dims(forward: Callable) -> bool:
    try:
        names = _param_names(forward)
    except (TypeError, ValueError):  # a NumPy ufunc: elementwise
        return False
    return any(n in ("dim", "dims", "axis", "shape") for n in names)


def _camel(name: str) -> str:
    return "".join(part.capitalize() for part in name.split("_"))


def defop(
    name: str,
    forward: Callable,
    inputs: tuple[str, ...] = ("input",),
    vjp: tuple = (None,),
    **kwargs,
) -> Op:
    """Register an op and return its record."""
    if name in REGISTRY:
        raise ValueError(f"op {name!r} is registered twice")
    op = Op(name, forward, inputs, vjp, **kwargs)
    REGISTRY[name] = op
    return op
