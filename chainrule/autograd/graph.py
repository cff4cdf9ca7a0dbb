"""The autograd graph: Node (a tensor's grad_fn), AccumulateGrad and saved values."""

from __future__ import annotations

import itertools
import weakref
from collections.abc import Callable

from .._batched import BatchedTensor, batched
from .._tooling import describe_location, notes_of
from ..tensor import Tensor, type_desc
from ._gradient_report import GradientReport, GradientStep, gradient_report
from .forward_ad import set_tangent
from .forward_ad import state as forward_state

__all__ = ["Node", "AccumulateGrad", "RemovableHandle", "gradient_report", "GradientReport",
           "GradientStep"]

FREED_MESSAGE = (
    "Trying to backward through the graph a second time (or directly access saved tensors after "
    "they have already been freed). Saved intermediate values of the graph are freed when you call "
    ".backward() or autograd.grad(). Specify retain_graph=True if you need to backward through the "
    "graph a second time or if you need to access saved tensors after calling backward."
)


class RemovableHandle:
    """The handle a hook registration returns; ``remove()`` unregisters the hook."""

    __slots__ = ("_hooks", "_key")

    def __init__(self, hooks: dict, key: int) -> None:
        self._hooks = hooks
        self._key = key

    def remove(self) -> None:
        self._hooks.pop(self._key, None)

    def __enter__(self) -> RemovableHandle:
        return self

    def __exit__(self, *exc) -> None:
        self.remove()


_next_hook_key = [0]
# Creation order of nodes: the engine runs pending nodes newest first.
next_seq = itertools.count().__next__


def add_hook(hooks: dict, fn: Callable) -> RemovableHandle:
    _next_hook_key[0] += 1
    hooks[_next_hook_key[0]] = fn
    return RemovableHandle(hooks, _next_hook_key[0])


def modified_message(tensor_desc: str, node_name: str | None, version: int, expected: int,
                     notes: list | None = None, saver=None) -> str:
    origin = f", which is output 0 of {node_name}," if node_name else ""
    head = (
        "one of the variables needed for gradient computation has been modified by an inplace "
        f"operation: [{tensor_desc}]{origin} is at version {version}; expected version {expected} "
        "instead. "
    )
    if not notes:
        return head + ("Hint: the backtrace further above shows the operation that failed to "
                       "compute its gradient; clone() the tensor before modifying it in place.")
    # Beyond PyTorch: bump_version noted the first in-place op after the save, and its caller.
    op, where = notes[0]
    instead = (f", or use the out-of-place {op[:-1]}"
               if op.endswith("_") and op != "copy_" else "")
    saved = f"saved for {saver.name()} and then " if saver is not None else ""
    return head + (f"It was {saved}modified by {op} at {describe_location(where)}. Hint: "
                   f"clone() the tensor before modifying it in place{instead}.")


class SavedInput:
    """An input tensor saved for backward, with the version it had then."""

    __slots__ = ("tensor", "version", "notes")

    def __init__(self, tensor) -> None:
        self.tensor = tensor
        counter = tensor._version
        # The counter's notes slot, shared by the saved values: bump_version writes there which
        # in-place op changed the tensor, and where (see chainrule._tooling).
        if counter is None:
            self.notes = notes = []
            tensor._version = [0, notes]
            self.version = 0
        else:
            self.version = counter[0]
            # Shared while nothing is noted in it (inline: the common case for constants).
            self.notes = counter[1] if len(counter) > 1 and not counter[1] else notes_of(counter)

    def unpack(self, node: Node):
        t = self.tensor
        counter = t._version
        if counter[0] != self.version:
            gf = t.grad_fn
            raise RuntimeError(modified_message(t._type_desc(), gf.name()[:-9] if gf else None,
                                                counter[0], self.version, self.notes, node))
        return t


class SavedOutput:
    """An op's output saved for backward: its array and version, not the tensor (no cycle)."""

    __slots__ = ("array", "counter", "version", "output_nr", "tangent", "level", "notes")

    def __init__(self, tensor) -> None:
        if tensor._version is None:
            self.notes = notes = []  # see SavedInput
            tensor._version = [0, notes]
        else:
            self.notes = notes_of(tensor._version)
        batched_value = type(tensor) is BatchedTensor
        # A batched output keeps its batched value and vmap level instead of the placeholder.
        self.array = tensor._value if batched_value else tensor._data
        self.level = tensor._level if batched_value else 0
        self.counter = tensor._version
        self.version = self.counter[0]
        self.output_nr = tensor._output_nr
        tangents = tensor._extra.get("tangent") if tensor._extra else None
        self.tangent = dict(tangents) if tangents else None

    def unpack(self, node: Node):
        if self.counter[0] != self.version:
            raise RuntimeError(modified_message(
                type_desc(self.array), node.name()[:-9], self.counter[0], self.version,
                self.notes, node))
        if self.level:
            out = batched(self.array, self.level)
            out.grad_fn, out._output_nr, out._requires_grad = node, self.output_nr, True
        else:
            out = Tensor._wrap(self.array, node, self.output_nr)
        if self.tangent is not None and forward_state.level:
            for level, tangent in self.tangent.items():
                if level <= forward_state.level:
                    set_tangent(out, tangent, level)
        return out


class Node:
    """A recorded op: its rules, what they read, and the edges to its inputs' nodes."""

    __slots__ = ("op", "params", "saved", "next_edges", "meta", "seq", "_pre_hooks", "_retain",
                 "_hooks", "__weakref__")

    def __init__(self, op, params: dict, next_edges: tuple, meta: tuple) -> None:
        self.seq = next_seq()
        self.op = op
        self.params = params
        self.saved: dict | None = {}
        self.next_edges = next_edges
        self.meta = meta
        self._pre_hooks: dict | None = None
        self._retain: dict | None = None
        self._hooks: dict | None = None

    def name(self) -> str:
        return self.op.backward_name

    @property
    def n_outputs(self) -> int:
        return self.op.n_outputs

    def __repr__(self) -> str:
        return f"<{self.name().rpartition('::')[2]} object at {id(self):#x}>"

    @property
    def next_functions(self) -> tuple:
        """(node, output_nr) per differentiable input; (None, 0) where it needs no gradient."""
        rules = self.op.vjp if isinstance(self, Node) else (True,) * len(self.next_edges)
        return tuple(e if e is not None else (None, 0)
                     for e, rule in zip(self.next_edges, rules) if rule is not None)

    @property
    def metadata(self) -> dict:
        return {}

    def register_hook(self, fn: Callable) -> RemovableHandle:
        """Run ``fn(grad_inputs, grad_outputs)`` after this node has computed its gradients."""
        if self._hooks is None:
            self._hooks = {}
        return add_hook(self._hooks, fn)

    def register_prehook(self, fn: Callable) -> RemovableHandle:
        """Run ``fn(grad_outputs)`` before this node runs; a returned tuple replaces them."""
        return self._add_tensor_hook(-1, fn)

    def _add_tensor_hook(self, output_nr: int, fn: Callable) -> RemovableHandle:
        if self._pre_hooks is None:
            self._pre_hooks = {}
        return add_hook(self._pre_hooks.setdefault(output_nr, {}), fn)

    def _retain_grad(self, tensor, output_nr: int) -> None:
        if self._retain is None:
            self._retain = {}
        self._retain[output_nr] = weakref.ref(tensor)

    def apply(self, grads: list) -> list:
        """The gradients for each input edge, given the gradients of the outputs."""
        saved = self.saved
        if saved is None:
            raise RuntimeError(FREED_MESSAGE)
        op = self.op
        env = self.params.copy() if self.params else {}
        for name, value in saved.items():
            kind = type(value)
            if kind is SavedInput or kind is SavedOutput:
                value = value.unpack(self)
            elif kind is tuple and value and type(value[0]) is SavedOutput:
                value = tuple(v.unpack(self) for v in value)
            env[name] = value
        if op.uses_shapes:
            for name, meta in zip(op.inputs, self.meta):
                if meta is not None:
                    env[name + "_shape"] = meta[0]
        env["g" if op.n_outputs == 1 else "grads"] = grads[0] if op.n_outputs == 1 else grads
        out = []
        for edge, rule, args, meta in zip(self.next_edges, op.vjp, op.rule_args, self.meta):
            if edge is None or rule is None:
                out.append(None)
                continue
            grad = rule(*[env[a] for a in args])
            if grad is not None:
                data = grad._data
                if data.shape != meta[0]:
                    grad = grad.sum_to_size(meta[0])
                if data.dtype != meta[1]:
                    grad = grad.to(meta[1])
            out.append(grad)
        return out

    def release(self) -> None:
        if self.saved:
            self.saved = None


def _fit(grad, meta):
    """Reduce a gradient in the output's broadcast shape to the input's shape and dtype."""
    if grad is None:
        return None
    shape, dtype = meta
    data = grad._data
    if data.shape != shape:
        grad = grad.sum_to_size(shape)
    if data.dtype != dtype:
        grad = grad.to(dtype)
    return grad


class AccumulateGrad:
    """The node at a leaf tensor: accumulates the incoming gradient into ``.grad``."""

    __slots__ = ("_variable", "seq", "_pre_hooks", "_retain", "_post_hooks", "__weakref__")

    next_functions: tuple = ()
    next_edges: tuple = ()
    n_outputs = 1

    def __init__(self, tensor) -> None:
        self.seq = next_seq()
        self._variable = weakref.ref(tensor)
        self._pre_hooks: dict | None = None
        self._retain = None
        self._post_hooks: dict | None = None

    @property
    def variable(self):
        """The leaf tensor this node accumulates into."""
        return self._variable()

    def name(self) -> str:
        return "torch::autograd::AccumulateGrad"

    def __repr__(self) -> str:
        return f"<AccumulateGrad object at {id(self):#x}>"

    _add_tensor_hook = Node._add_tensor_hook

    def register_post_accumulate_grad_hook(self, fn: Callable) -> RemovableHandle:
        if self._post_hooks is None:
            self._post_hooks = {}
        return add_hook(self._post_hooks, fn)

    def accumulate(self, grad, create_graph: bool, owned: bool) -> None:
        """Add ``grad`` into the leaf's ``.grad`` (in place when the buffer is ours)."""
        tensor = self._variable()
        if tensor is None or grad is None:
            return
        old = tensor.grad
        if old is None:
            tensor.grad = grad if create_graph else grad.detach() if owned else grad.clone()
        elif create_graph or old.requires_grad or type(grad) is BatchedTensor \
                or type(old) is BatchedTensor:
            tensor.grad = old + grad
        else:
            old._data += grad._data
        if self._post_hooks:
            for hook in tuple(self._post_hooks.values()):
                hook(tensor)

    def release(self) -> None:
        pass


def accumulator_of(tensor) -> AccumulateGrad:
    """The leaf's AccumulateGrad node (one per leaf, kept by the leaf)."""
    extra = tensor._extra
    if extra is None:
        extra = tensor._extra = {}
    acc = extra.get("acc")
    if acc is None:
        acc = extra["acc"] = AccumulateGrad(tensor)
    return acc


Tensor._accumulator = accumulator_of


def run_tensor_hooks(node, grads: list) -> list:
    """Apply the tensor hooks and retain_grad of a node's outputs to their incoming gradients."""
    hooks = node._pre_hooks
    if hooks:
        grads = list(grads)
        for nr, fns in hooks.items():
            if nr == -1:
                continue
            for fn in tuple(fns.values()):
                if grads[nr] is not None:
                    new = fn(grads[nr])
                    if new is not None:
                        grads[nr] = new
        for fn in tuple(hooks.get(-1, {}).values()):
            new = fn(tuple(grads))
            if new is not None:
                grads = list(new)
    if node._retain:
        for nr, ref in node._retain.items():
            tensor = ref()
            if tensor is not None and grads[nr] is not None:
                g = grads[nr]
                if tensor.grad is None:
                    tensor.grad = g.detach().clone() if not g.requires_grad else g.clone()
                else:
                    tensor.grad = tensor.grad + g
    return grads


def call_post_hooks(node, grad_inputs: tuple, grad_outputs: list) -> tuple:
    if node._hooks:
        for fn in tuple(node._hooks.values()):
            new = fn(grad_inputs, tuple(grad_outputs))
            if new is not None:
                grad_inputs = tuple(new)
    return grad_inputs

