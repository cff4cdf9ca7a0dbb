"""The autograd graph: Node (a tensor's grad_fn), AccumulateGrad and saved values."""

from __future__ import annotations

import contextlib
import functools
import itertools
import threading
import types
import weakref
from collections.abc import Callable
from typing import NamedTuple

from .._backend import xp
from .._batched import BatchedTensor, batched
from .._dtypes import channels_last, contiguous_format
from .._modes import Mode, pop, push
from .._modes import stack as mode_stack
from .._shapes import non_overlapping_and_dense
from .._tooling import describe_location, notes_of
from ..tensor import Tensor, is_inference_counter, type_desc
from ._gradient_report import GradientReport, GradientStep, gradient_report
from .forward_ad import set_tangent
from .forward_ad import state as forward_state
from .grad_mode import state as grad_state

__all__ = ["Node", "AccumulateGrad", "RemovableHandle", "saved_tensors_hooks", "save_on_cpu",
           "disable_saved_tensors_hooks", "register_multi_grad_hook", "increment_version",
           "allow_mutation_on_saved_tensors", "GradientEdge", "get_gradient_edge",
           "region_activation_memory_budget", "set_warn_on_accumulate_grad_stream_mismatch",
           "set_override_stale_capture_stream", "gradient_report", "GradientReport",
           "GradientStep"]

FREED_MESSAGE = (
    "Trying to backward through the graph a second time (or directly access saved tensors after "
    "they have already been freed). Saved intermediate values of the graph are freed when you call "
    ".backward() or autograd.grad(). Specify retain_graph=True if you need to backward through the "
    "graph a second time or if you need to access saved tensors after calling backward."
)


def _ref(d: dict) -> Callable[[], dict | None]:
    """A weak reference to ``d`` where Python allows one (an OrderedDict), else a strong one."""
    try:
        return weakref.ref(d)
    except TypeError:  # a plain dict: the handle keeps it, as it keeps nothing else alive
        return functools.partial(_same, d)


def _same(d: dict) -> dict:
    return d


class RemovableHandle:
    """A handle which removes a hook: ``remove()`` deletes its ``id`` from ``hooks_dict`` (and
    from every ``extra_dict``); also a context manager that removes the hook on exit."""

    id: int
    next_id: int = 0

    def __init__(self, hooks_dict, *, extra_dict=None) -> None:
        self.hooks_dict_ref = _ref(hooks_dict)
        self.id = RemovableHandle.next_id
        RemovableHandle.next_id += 1
        extras = [extra_dict] if isinstance(extra_dict, dict) else extra_dict or []
        self.extra_dict_ref = tuple(_ref(d) for d in extras)

    def remove(self) -> None:
        for ref in (self.hooks_dict_ref, *self.extra_dict_ref):
            hooks = ref()
            if hooks is not None:
                hooks.pop(self.id, None)

    def __getstate__(self):
        return (self.hooks_dict_ref(), self.id, tuple(ref() for ref in self.extra_dict_ref))

    def __setstate__(self, state) -> None:
        hooks = state[0]
        self.hooks_dict_ref = _ref({} if hooks is None else hooks)
        self.id = state[1]
        RemovableHandle.next_id = max(RemovableHandle.next_id, self.id + 1)
        extras = state[2] if len(state) > 2 and state[2] is not None else ()
        self.extra_dict_ref = tuple(_ref(d) for d in extras if d is not None)

    def __enter__(self) -> RemovableHandle:
        return self

    def __exit__(self, type, value, tb) -> None:
        self.remove()


# Creation order of nodes: the engine runs ready nodes newest first.
next_seq = itertools.count().__next__


def add_hook(hooks: dict, fn: Callable) -> RemovableHandle:
    handle = RemovableHandle(hooks)
    hooks[handle.id] = fn
    return handle


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


_INFERENCE_SAVED = (
    "Inference tensors cannot be saved for backward. Please do not use Tensors created in "
    "inference mode in computation tracked by autograd. To work around this, you can make a "
    "clone to get a normal tensor and use it in autograd, or use `torch.no_grad()` instead of "
    "`torch.inference_mode()`.")


class SavedInput:
    """An input tensor saved for backward, with the version it had then (``save_input``)."""

    __slots__ = ("tensor", "version", "notes")

    def unpack(self, node: Node):
        t = self.tensor
        counter = t._vc
        if counter[0] != self.version:
            gf = t.grad_fn
            notes = self.notes if self.notes is not None else [n for n in counter[2:] if n]
            raise RuntimeError(modified_message(t._type_desc(), gf.name()[:-9] if gf else None,
                                                counter[0], self.version, notes, node))
        return t


class SavedOutput:
    """An op's output saved for backward: its array and version, not the tensor (no cycle);
    made by ``save_output``."""

    __slots__ = ("array", "counter", "version", "output_nr", "tangent", "level", "notes")

    def unpack(self, node: Node):
        if self.counter[0] != self.version:
            notes = self.notes if self.notes is not None else [n for n in self.counter[2:] if n]
            raise RuntimeError(modified_message(
                type_desc(self.array), node.name()[:-9], self.counter[0], self.version,
                notes, node))
        if self.level:
            out = batched(self.array, self.level)
            out.grad_fn, out._output_nr, out._requires_grad = node, self.output_nr, True
        else:
            out = Tensor._wrap(self.array, node, self.output_nr)
        if self.tangent is not None and mode_stack.dual is not None:  # forward mode
            top = forward_state.level
            for level, tangent in self.tangent.items():
                if level <= top:
                    set_tangent(out, tangent, level)
        return out


def save_input(tensor) -> SavedInput:
    """``tensor`` saved for backward as an input (a class without ``__init__`` and a function
    filling its slots: half the cost of a constructor call)."""
    s = SavedInput()
    s.tensor = tensor
    counter = tensor._vc
    # Where bump_version notes which in-place op changed the tensor and where (see
    # chainrule._tooling): a new tensor's counter has a place for it; an older one's saved
    # values share a notes list.
    if counter is None:
        tensor._vc = [0, None, None]
        s.version = 0
        s.notes = None
    else:
        if type(counter) is not list:  # an inference tensor's (tensor.INFERENCE or kin)
            raise RuntimeError(_INFERENCE_SAVED)
        s.version = counter[0]
        notes = counter[1] if len(counter) > 1 else None
        if notes is None or notes:  # else share it: nothing noted yet (constants, weights)
            notes = notes_of(counter)
        s.notes = notes
    return s


def save_output(tensor) -> SavedOutput:
    """An op's output ``tensor`` saved for backward (see ``save_input``)."""
    s = SavedOutput()
    counter = tensor._vc
    if counter is None:  # see save_input
        tensor._vc = counter = [0, None, None]
        s.notes = None
    else:
        s.notes = notes_of(counter)
    if type(tensor) is BatchedTensor:  # its batched value and vmap level, not the placeholder
        s.array = tensor._value
        s.level = tensor._level
    else:
        s.array = tensor._data
        s.level = 0
    s.counter = counter
    s.version = counter[0]
    s.output_nr = tensor._output_nr
    # The tensor's own dict, not a copy: leaving a dual level empties it for both (a copy would
    # keep the tangent, whose graph saves this output: a cycle, and a stale tangent).
    extra = tensor._extra
    s.tangent = (extra.get("tangent") or None) if extra else None
    return s


class Node:
    """The type of every grad_fn: a recorded op, a custom Function's backward, AccumulateGrad.

    ``name()``, ``next_functions``, ``metadata`` (a dict kept with the node for hooks and tools)
    and hooks are common to all; a recorded op's saved values read as ``_saved_<name>``. Each
    kind of node is a class named as PyTorch's (``AddBackward0``, ``AccumulateGrad``), which
    graph tools read as ``type(fn).__name__``.
    """

    __slots__ = ("seq", "_pre_hooks", "_retain", "_hooks", "_metadata", "__weakref__")

    next_edges: tuple = ()

    def name(self) -> str:
        raise NotImplementedError

    def _sequence_nr(self) -> int:
        """The node's creation order (the engine runs newer nodes first)."""
        return self.seq

    @property
    def next_functions(self) -> tuple:
        """(node, output_nr) per input; (None, 0) where it needs no gradient."""
        return tuple(e if e is not None else (None, 0) for e in self.next_edges)

    @property
    def metadata(self) -> dict:
        """A dict that stays with this node (hooks and tools keep notes in it)."""
        try:
            return self._metadata
        except AttributeError:
            self._metadata = {}
            return self._metadata

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
        if self._pre_hooks is None:  # the engine looks at _pre_hooks only, for both
            self._pre_hooks = {}
        if self._retain is None:
            self._retain = {}
        self._retain[output_nr] = weakref.ref(tensor)

    def _lookup_saved(self, key: str, raw: bool):
        raise AttributeError(f"'{type(self).__name__}' object has no attribute "
                             f"'{'_raw_saved_' if raw else '_saved_'}{key}'")

    def __dir__(self) -> list:
        # The op's _saved_* properties include the record's own names and parameters this
        # node may lack: list PyTorch's names of what it saved.
        own = [n for n in object.__dir__(self) if not n.startswith(("_saved_", "_raw_saved_"))]
        return sorted(set(own) | set(self._torch_saved_names()))

    def _torch_saved_names(self) -> list:
        return []


# PyTorch's names for saved inputs where its argument names differ from the record's; else the
# first input ``input`` is PyTorch's ``self`` and the output its ``result``.
TORCH_SAVED_NAMES = {"mm": {"mat2": "other"}, "bmm": {"mat2": "other"}, "mv": {"vec": "other"},
                     "dot": {"tensor": "other"}, "matmul": {"mat2": "other"},
                     "linear": {"mat1": "input"}, "embedding": {"indices": "input"},
                     **{name: {"input": "input"}  # the nn kernels name it ``input``
                        for name in ("convolution", "batch_norm", "group_norm", "layer_norm")}}


class OpNode(Node):
    """A recorded op: its rules, what they read, and the edges to its inputs' nodes.

    Each op's nodes are instances of its own subclass (``node_class``), which holds the record
    as ``op`` and, after the first backward through one, the op's generated ``apply``.
    """

    __slots__ = ("params", "saved", "next_edges", "meta")

    op = None  # the record: each op's subclass sets it
    n_outputs = 1

    # No __init__: the recorders fill the slots (a constructor call costs twice as much).

    @classmethod
    def record(cls, inputs: tuple, params: dict, results: tuple) -> None:
        """Record a node of this op for ``inputs`` (some require grad) and make it the
        ``grad_fn`` of ``results``. The first call replaces this with the op's own recorder."""
        cls.record = staticmethod(_recorder(cls))
        cls.record(inputs, params, results)

    def name(self) -> str:
        return self.op.backward_name

    @property
    def next_functions(self) -> tuple:
        """(node, output_nr) per differentiable input; (None, 0) where it needs no gradient."""
        return tuple(e if e is not None else (None, 0)
                     for e, rule in zip(self.next_edges, self.op.vjp) if rule is not None)

    def _record_name(self, key: str) -> str:
        op = self.op
        name = TORCH_SAVED_NAMES.get(op.name, {}).get(key, key)
        if name == "self" and op.inputs[0] == "input":
            return "input"
        if name == "result" and op.n_outputs == 1:
            return "out"
        return name

    def _lookup_saved(self, key: str, raw: bool):
        """``_saved_<key>``: a saved tensor (unpacked), an input's sizes or a parameter."""
        op = self.op
        reads = {a for args in op.rule_args for a in args}
        if key.endswith("_sym_sizes") and not raw:
            name = self._record_name(key[:-10])
            if name + "_shape" in reads:
                meta = self.meta[op.inputs.index(name)]
                return tuple(meta[0]) if meta is not None else None
        name, index = self._record_name(key), None
        if name.startswith("result") and name[6:].isdigit() and int(name[6:]) < op.n_outputs:
            name, index = "out", int(name[6:])
        if name in reads and (name == "out" or name in op.inputs):
            handle = SavedTensor(self, name, index)
            if not raw:
                return handle.unpack()
            if not _is_number(handle._get()):  # a number (x * 2's 2) has no SavedTensor
                return handle
        if not raw and name in reads and self.params and name in self.params:
            return self.params[name]
        return super()._lookup_saved(key, raw)

    def _torch_saved_names(self) -> list:
        op = self.op
        tensors, sizes, params = _saved_names_of(op)
        params = [p for p in params if p in (self.params or ())]
        torch_name = _torch_names_of(op)
        numbers = {torch_name.get(n, n) for n, v in (self.saved or {}).items() if _is_number(v)}
        return ([f"_saved_{n}" for n in tensors + sizes + params]
                + [f"_raw_saved_{n}" for n in tensors if n not in numbers])


    def apply(self, grads: list) -> list:
        """The gradients for each input edge, given the gradients of the outputs."""
        cls = type(self)  # the first backward through this op: its apply replaces this one
        cls.apply = _specialise(cls.op)
        return cls.apply(self, grads)

    def _apply_generic(self, grads: list) -> list:
        saved = self.saved
        if saved is None:
            raise RuntimeError(FREED_MESSAGE)
        op = self.op
        env = self.params.copy() if self.params else {}
        for name, value in saved.items():
            kind = type(value)
            if kind is SavedInput or kind is SavedOutput or kind is SavedPacked:
                value = value.unpack(self)
            elif kind is tuple and value and type(value[0]) in (SavedOutput, SavedPacked):
                value = tuple(v.unpack(self) for v in value)
            env[name] = value
        if op.uses_shapes:
            for name, meta in zip(op.inputs, self.meta):
                if meta is not None:
                    env[name + "_shape"] = meta[0]
        # Complex gradients (PyTorch's convention, conjugate Wirtinger): a holomorphic op's rule,
        # written with f'(z), gives grad_z = conj(rule(conj(grad_out))).
        if op.n_outputs == 1:
            g = grads[0]
            conj = op.holomorphic and g._data.dtype.kind == "c"
            env["g"] = g.conj() if conj else g
        else:
            conj = op.holomorphic and any(g is not None and g._data.dtype.kind == "c"
                                          for g in grads)
            env["grads"] = [g if g is None else g.conj() for g in grads] if conj else grads
        out = []
        for edge, rule, args, meta in zip(self.next_edges, op.vjp, op.rule_args, self.meta):
            if edge is None or rule is None:
                out.append(None)
                continue
            grad = rule(*[env[a] for a in args])
            if grad is not None:
                if conj:
                    grad = grad.conj()
                grad = _fit_complex(grad, meta)
            out.append(grad)
        return out

    def release(self) -> None:
        if self.saved:
            self.saved = None



def _torch_names_of(op) -> dict:
    """The record's input names -> PyTorch's names for them."""
    torch_name = {ours: theirs for theirs, ours in TORCH_SAVED_NAMES.get(op.name, {}).items()}
    if op.inputs[0] == "input":
        torch_name.setdefault("input", "self")
    return torch_name


def _saved_names_of(op) -> tuple[list, list, list]:
    """PyTorch's names of what ``op``'s rules read: tensors, input sizes, parameters."""
    reads = {a for args in op.rule_args for a in args}
    torch_name = _torch_names_of(op)
    tensors = [torch_name.get(n, n) for n in op.inputs if n in reads]
    if "out" in reads:
        tensors += ["result"] if op.n_outputs == 1 else [f"result{i}" for i in range(op.n_outputs)]
    sizes = [torch_name.get(n, n) + "_sym_sizes" for n in op.inputs if n + "_shape" in reads]
    params = sorted(a for a in reads if a not in op.inputs and a not in ("g", "grads", "out")
                    and not a.endswith("_shape"))
    return tensors, sizes, params


def _own_copy(fn: Callable) -> Callable:
    """``fn`` with a code object of its own. Python specialises each attribute read and write
    in a code object for the one class it sees there; a method that every op's class shares
    would see them all and lose that (a third of the time of making a node)."""
    return types.FunctionType(fn.__code__.replace(), fn.__globals__, fn.__name__,
                              fn.__defaults__, fn.__closure__)


def node_class(op) -> type:
    """The class of ``op``'s nodes, named as PyTorch's (``AddBackward0``, ``CopySlices``), with a
    ``_saved_<name>`` (and ``_raw_saved_<name>``) property for each name the op saves, PyTorch's
    and the record's own: properties, not ``__getattr__``, which would slow down every attribute
    read on every node. Made once per record, when it is created."""
    namespace = {"__slots__": (), "__module__": "builtins", "__doc__": None,  # as PyTorch's
                 "op": op, "n_outputs": op.n_outputs, "release": _own_copy(OpNode.release)}
    tensors, sizes, params = _saved_names_of(op)
    own = [n for n in op.inputs if n not in tensors]
    for raw, names in ((False, tensors + sizes + params + own), (True, tensors + own)):
        for key in names:
            namespace[("_raw_saved_" if raw else "_saved_") + key] = property(
                lambda node, key=key, raw=raw: node._lookup_saved(key, raw))
    return type(op.backward_name.rpartition("::")[2], (OpNode,), namespace)


def _unpack(value, node):
    """A saved value as the rules read it."""
    kind = type(value)
    if kind is SavedInput or kind is SavedOutput or kind is SavedPacked:
        return value.unpack(node)
    if kind is tuple and value and type(value[0]) in (SavedOutput, SavedPacked):
        return tuple(v.unpack(node) for v in value)
    return value


def _specialise(op) -> Callable:
    """``OpNode.apply`` for one op as straight-line code: each needed rule called with its
    arguments read from the saved values, parameters and the output gradient directly (no
    argument dictionary). Multi-output ops keep the general path."""
    if op.n_outputs != 1:
        return OpNode._apply_generic
    lines = ["def apply(self, grads):",
             "    saved = self.saved",
             "    if saved is None:",
             "        raise RuntimeError(FREED_MESSAGE)",
             "    params, edges, metas = self.params, self.next_edges, self.meta",
             "    rules = self.op.vjp",  # read per call: tools may wrap an op's rules
             "    g = grads[0]"]
    if op.holomorphic:
        lines += ["    conj = g._data.dtype.kind == 'c'",
                  "    if conj:",
                  "        g = g.conj()"]
    out = []
    for i, (rule, args) in enumerate(zip(op.vjp, op.rule_args)):
        if rule is None:
            out.append("None")
            continue
        values = []
        for a in args:
            if a == "g":
                values.append("g")
            elif a in op.inputs or a == "out":
                values.append(f"_unpack(saved[{a!r}], self)")
            elif a.endswith("_shape") and a[:-6] in op.inputs:
                values.append(f"metas[{op.inputs.index(a[:-6])}][0]")
            else:
                values.append(f"params[{a!r}]")
        lines += [f"    r{i} = None",
                  f"    if edges[{i}] is not None:",
                  f"        r{i} = rules[{i}]({', '.join(values)})",
                  f"        if r{i} is not None:"]
        if op.holomorphic:
            lines += ["            if conj:",
                      f"                r{i} = r{i}.conj()"]
        lines += [f"            m = metas[{i}]",
                  f"            d = r{i}._data",
                  "            if d.shape != m[0] or d.dtype != m[1]:",
                  f"                r{i} = _fit_complex(r{i}, m)"]
        out.append(f"r{i}")
    lines.append(f"    return [{', '.join(out)}]")
    ns = {"FREED_MESSAGE": FREED_MESSAGE, "_unpack": _unpack, "_fit_complex": _fit_complex}
    # Named inside the package, as the recorder: user_frames() skips its frame as chainrule's.
    exec(compile("\n".join(lines), f"{__file__}<{op.backward_name}.apply>", "exec"),  # noqa: S102
         ns)
    return ns["apply"]


def save_plan(op, mask: int) -> tuple[tuple, bool]:
    """What a node of ``op`` saves when the inputs in ``mask`` need gradients: (input name,
    position) for each input a needed rule reads, and whether one reads the output."""
    inputs, out = [], False
    for i, reads in enumerate(op.reads):
        if mask >> i & 1:
            for r in reads:
                if r == "out":
                    out = True
                elif all(r != j for _, j in inputs):
                    inputs.append((op.inputs[r], r))
    return tuple(inputs), out


def record_any(op, inputs: tuple, params: dict, results: tuple) -> None:
    """``OpNode.record`` for any op and inputs (the recorders' general path)."""
    edges = []
    meta = []
    mask = 0  # bit i: input i needs a gradient
    bit = 1
    for x in inputs:
        if isinstance(x, Tensor) and x._requires_grad:
            fn = x.grad_fn
            edges.append((fn, x._output_nr) if fn is not None else (accumulator_of(x), 0))
            data = x._data
            meta.append((data.shape, data.dtype))
            mask |= bit
        else:
            edges.append(None)
            meta.append(None)
        bit <<= 1
    node = op.node_class()
    node.seq = next_seq()
    node.params = params
    node.next_edges = tuple(edges)
    node.meta = tuple(meta)
    node._pre_hooks = node._retain = node._hooks = None
    node.saved = saved = {}
    modes = mode_stack.modes
    if modes is not None and mode_stack.traced is not None:  # anomaly mode: the traceback
        mode_stack.traced(node)
    plan = op.save_plans.get(mask)
    if plan is None:
        plan = op.save_plans[mask] = save_plan(op, mask)
    for name, i in plan[0]:
        x = inputs[i]
        saved[name] = save_input(x) if isinstance(x, Tensor) else x
    for nr, result in enumerate(results):
        if result._data.dtype.kind in "fcV":  # "V": bfloat16 and float8
            result._requires_grad = True
            result.grad_fn = node
            result._output_nr = nr
    if plan[1]:
        saved["out"] = (save_output(results[0]) if len(results) == 1
                        else tuple(save_output(r) for r in results))
    if modes is not None and mode_stack.saved is not None:  # saved_tensors_hooks: the pack
        mode_stack.saved(node, results)  # hook's results are stored instead


def _recorder(cls) -> Callable:
    """``OpNode.record`` for one op as straight-line code, as ``_specialise`` makes its
    ``apply``: each input checked, the node built slot by slot (no ``__init__`` call) and what
    the needed rules read saved, per mask of the inputs that require grad; the same steps in
    the same order as ``record_any``. Multi-output ops (and ops of more than 8 inputs) keep the
    general path."""
    op = cls.op
    n = len(op.inputs)
    if op.n_outputs != 1 or n > 8:
        return functools.partial(record_any, op)
    xs = [f"x{i}" for i in range(n)]

    def tup(prefix: str) -> str:
        return ", ".join(f"{prefix}{i}" for i in range(n)) + ("," if n == 1 else "")

    lines = ["def record(inputs, params, results):",
             f"    if len(inputs) != {n}:",
             "        return record_any(op, inputs, params, results)",
             f"    {tup('x')} = inputs",
             "    mask = 0"]
    for i, x in enumerate(xs):
        lines += [f"    if isinstance({x}, Tensor) and {x}._requires_grad:",
                  f"        fn = {x}.grad_fn",
                  f"        e{i} = (fn, {x}._output_nr) if fn is not None else "
                  f"(accumulator_of({x}), 0)",
                  f"        d = {x}._data",
                  f"        m{i} = (d.shape, d.dtype)",
                  f"        mask |= {1 << i}",
                  "    else:",
                  f"        e{i} = m{i} = None"]
    lines += ["    node = cls()",
              "    node.seq = next_seq()",
              "    node.params = params",
              f"    node.next_edges = ({tup('e')})",
              f"    node.meta = ({tup('m')})",
              "    node._pre_hooks = node._retain = node._hooks = None",
              "    modes = stack.modes",
              "    node.saved = saved = {}",
              "    if modes is not None and stack.traced is not None:",
              "        stack.traced(node)"]
    # What each mask saves, in save_plan's order: one test per name (of the inputs whose rules
    # read it), and a branch of its own for a mask whose order differs from the full mask's.
    full = [name for name, _ in save_plan(op, (1 << n) - 1)[0]]
    plans = {mask: save_plan(op, mask) for mask in range(1, 1 << n)}
    apart = {mask: names for mask, (saves, _) in plans.items()
             if (names := [name for name, _ in saves]) != [f for f in full if f in names]}

    def saves(names, indent: str, tested: bool) -> list:
        out = []
        for name in names:
            i = op.inputs.index(name)
            bits = sum(1 << j for j, reads in enumerate(op.reads) if i in reads)
            test = tested and bits != (1 << n) - 1
            pad = indent + "    " * test
            if test:
                out.append(f"{indent}if mask & {bits}:")
            out.append(f"{pad}saved[{name!r}] = save_input(x{i}) if isinstance(x{i}, Tensor) "
                       f"else x{i}")
        return out

    if apart:
        for k, (mask, names) in enumerate(apart.items()):
            lines.append(f"    {'el' if k else ''}if mask == {mask}:")
            lines += saves(names, "        ", False) or ["        pass"]
        lines.append("    else:")
        lines += saves(full, "        ", True) or ["        pass"]
    else:
        lines += saves(full, "    ", True)
    lines += ["    result = results[0]",
              "    if result._data.dtype.kind in 'fcV':",
              "        result._requires_grad = True",
              "        result.grad_fn = node",
              "        result._output_nr = 0"]
    if any(out for _, out in plans.values()):
        out_bits = sum(1 << j for j, reads in enumerate(op.reads) if "out" in reads)
        if out_bits == (1 << n) - 1:
            lines.append("    saved['out'] = save_output(result)")
        else:
            lines += [f"    if mask & {out_bits}:",
                      "        saved['out'] = save_output(result)"]
    lines += ["    if modes is not None and stack.saved is not None:",
              "        stack.saved(node, results)"]
    ns = {"op": op, "cls": cls, "Tensor": Tensor, "accumulator_of": accumulator_of,
          "next_seq": next_seq, "stack": mode_stack, "save_input": save_input,
          "save_output": save_output, "record_any": record_any}
    # Named inside the package: user_location() and warnings skip its frame as chainrule's.
    name = f"{__file__}<{op.backward_name}.record>"
    exec(compile("\n".join(lines), name, "exec"), ns)  # noqa: S102
    return ns["record"]


def _fit_complex(grad, meta):
    """A rule's gradient in its input's shape and dtype (a real input takes the real part)."""
    shape, dtype = meta
    data = grad._data
    if data.shape != shape:
        grad = grad.sum_to_size(shape)
    if data.dtype != dtype:
        if data.dtype.kind == "c" and dtype.kind != "c":
            grad = grad.real  # a real input's share of a complex gradient
        grad = grad.to(dtype)
    return grad


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


class AccumulateGrad(Node):
    """The node at a leaf tensor: accumulates the incoming gradient into ``.grad``.

    As in PyTorch, it holds its leaf and the leaf holds it weakly: it lives while a graph
    reaches it, and keeps the leaf alive as long (``variable`` reads it); the leaf's hooks are
    kept by the leaf, for every AccumulateGrad it gets.
    """

    __slots__ = ("_variable", "_post_hooks")
    __module__ = "builtins"  # PyTorch's C++ node classes print as <class 'AccumulateGrad'>

    next_functions: tuple = ()
    next_edges: tuple = ()
    n_outputs = 1

    def __init__(self, tensor) -> None:
        self.seq = 0xFFFFFFFFFFFFFFFF  # PyTorch's: the engine runs it as soon as it is ready
        self._variable = tensor
        extra = tensor._extra
        hooks = extra.get("leaf_hooks") if extra else None
        self._pre_hooks: dict | None = {0: hooks} if hooks else None
        self._retain = None
        self._hooks: dict | None = None
        self._post_hooks: dict | None = extra.get("post_accumulate_hooks") if extra else None

    @property
    def variable(self):
        """The leaf tensor this node accumulates into."""
        return self._variable

    def name(self) -> str:
        return "torch::autograd::AccumulateGrad"

    def _add_tensor_hook(self, output_nr: int, fn: Callable) -> RemovableHandle:
        if output_nr == -1:  # a hook of this node (register_prehook): it goes with the node
            return super()._add_tensor_hook(output_nr, fn)
        hooks = self._variable._extra_dict().setdefault("leaf_hooks", {})
        if self._pre_hooks is None:
            self._pre_hooks = {}
        self._pre_hooks[0] = hooks
        return add_hook(hooks, fn)

    def register_post_accumulate_grad_hook(self, fn: Callable) -> RemovableHandle:
        self._post_hooks = self._variable._extra_dict().setdefault("post_accumulate_hooks", {})
        return add_hook(self._post_hooks, fn)

    def accumulate(self, grad, create_graph: bool, owned: bool) -> None:
        """Add ``grad`` into the leaf's ``.grad`` (in place when the buffer is ours)."""
        tensor = self._variable
        if grad is None:
            return
        with _accumulating:  # backwards in other threads may reach this leaf (PyTorch locks)
            old = tensor.grad
            if old is None:
                # A broadcast view (sum's gradient) is read-only: the leaf needs its own buffer.
                owned = owned and grad._data.flags.writeable
                laid_out = _laid_out_as(grad, tensor)
                if laid_out is not None:
                    tensor.grad = laid_out if create_graph else laid_out.detach()
                else:
                    tensor.grad = grad if create_graph else grad.detach() if owned else \
                        grad.clone()
            elif create_graph or old.requires_grad or type(grad) is BatchedTensor \
                    or type(old) is BatchedTensor:
                tensor.grad = old + grad
            elif mode_stack.capture is not None:
                mode_stack.capture.grad_used.add(mode_stack.capture.tensor_name(tensor))
                mode_stack.capture.call(xp.add, (old._data, grad._data), {"out": old._data},
                                        out=old._data)
            else:
                old._data += grad._data
        if self._post_hooks:
            for hook in tuple(self._post_hooks.values()):
                result = hook(tensor)
                if result is not None and result is not tensor:  # PyTorch lets it through
                    if not isinstance(result, Tensor):
                        raise TypeError(f"expected Variable, but hook returned "
                                        f"'{type(result).__name__}'")
                    raise RuntimeError("Tensor post accumulate grad hooks should return None.")

    def release(self) -> None:
        pass


_accumulating = threading.RLock()


def _laid_out_as(grad, leaf):
    """``grad`` laid out as PyTorch's gradient layout contract has a leaf's new .grad (the
    leaf's strides when its memory is dense, else row-major), or None when it already is."""
    data = leaf._data
    if (grad._data.flags.c_contiguous and data.flags.c_contiguous) or type(grad) is BatchedTensor:
        return None
    strides = leaf.stride()
    if not non_overlapping_and_dense(data.shape, strides):
        return None if grad._data.flags.c_contiguous else grad.clone(
            memory_format=contiguous_format)
    if all(n == 1 or a == b for n, a, b in zip(data.shape, grad.stride(), strides)):
        return None
    if data.flags.c_contiguous:
        return grad.clone(memory_format=contiguous_format)
    if leaf.is_contiguous(memory_format=channels_last):
        return grad.clone(memory_format=channels_last)
    return grad.new_empty_strided(data.shape, strides).copy_(grad)


def accumulator_of(tensor) -> AccumulateGrad:
    """The leaf's AccumulateGrad node: the one its graphs reach, or a new one."""
    extra = tensor._extra
    if extra is None:
        extra = tensor._extra = {}
    acc = extra.get("acc")  # a weak reference; the node itself for a saved leaf unpacked
    if acc is not None and type(acc) is not AccumulateGrad:
        acc = acc()
    if acc is None:
        acc = AccumulateGrad(tensor)
        extra["acc"] = weakref.ref(acc)
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
                grads = list(_hook_result(fn, new, len(grads)))
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


def call_post_hooks(node, grad_inputs, grad_outputs: list) -> tuple:
    grad_inputs = tuple(grad_inputs)
    if node._hooks:
        for fn in tuple(node._hooks.values()):
            new = fn(grad_inputs, tuple(grad_outputs))
            if new is not None:
                grad_inputs = _hook_result(fn, new, len(grad_inputs))
    return grad_inputs


def _hook_result(fn: Callable, new, expected: int) -> tuple:
    """The gradients a node hook returned, checked as PyTorch checks them."""
    if type(new) is not tuple:
        raise TypeError(f"expected tuple, but hook returned '{type(new).__name__}'")
    if len(new) != expected:
        raise RuntimeError(f"hook '{getattr(fn, '__name__', fn)}' has returned an incorrect "
                           f"number of values (got {len(new)}, but expected {expected})")
    return new


# ---- saved-tensor hooks ---------------------------------------------------------------------


class _SavedHooks(threading.local):
    stack: tuple = ()  # (pack_hook, unpack_hook) pairs, innermost last
    disabled: str | None = None  # disable_saved_tensors_hooks' message


saved_hooks = _SavedHooks()


class _SavedTensorsHooks(Mode):
    """saved_tensors_hooks on the stack while some thread is inside one: a node's saved values
    go through the innermost pack hook (the ``saved`` seam)."""

    order = 40
    name = "saved tensor hooks"


SAVED_HOOKS = _SavedTensorsHooks()


class SavedPacked:
    """A saved tensor as a pack hook returned it, and what unpacking needs to rebuild it."""

    __slots__ = ("packed", "unpack_hook", "grad_fn", "output_nr", "leaf", "is_output", "tangent")

    def unpack(self, node):
        value = self.unpack_hook(self.packed)
        if not isinstance(value, Tensor):
            raise TypeError("Output of saved tensor unpack_hook expected to be a Tensor but got "
                            f"result of type {type(value).__name__}")
        # A new tensor on the returned values, in the saved tensor's place in the graph.
        if type(value) is BatchedTensor:
            out = batched(value._value, value._level)
        else:
            out = Tensor._wrap(value._data, None, 0)
        if value._vc is None:
            value._vc = [0]
        out._vc = value._vc
        grad_fn = node if self.is_output else self.grad_fn
        if grad_fn is not None:
            out.grad_fn, out._output_nr, out._requires_grad = grad_fn, self.output_nr, True
        elif self.leaf is not None:  # a leaf: its gradient still goes to the original's .grad
            out._requires_grad = True
            out._extra_dict()["acc"] = self.leaf
        if self.tangent is not None and mode_stack.dual is not None:  # forward mode
            top = forward_state.level
            for level, tangent in self.tangent.items():
                if level <= top:
                    set_tangent(out, tangent, level)
        return out


def _pack(tensor, pack_hook: Callable, unpack_hook: Callable, is_output: bool,
          shown=None) -> SavedPacked:
    """Save ``tensor`` as ``pack_hook(tensor)`` (or of ``shown``, a view of it for the hook),
    with what unpacking needs to put it back in its place in the graph."""
    counter = tensor._vc
    if is_inference_counter(counter):
        raise RuntimeError(_INFERENCE_SAVED)
    version = counter[0] if counter else 0
    prev, grad_state.enabled = grad_state.enabled, False  # PyTorch runs pack hooks without grad
    try:
        packed = pack_hook(tensor if shown is None else shown)
    finally:
        grad_state.enabled = prev
    counter = tensor._vc
    if (counter[0] if counter else 0) != version:
        raise RuntimeError(
            "A saved tensor pack hook is modifying its input in place. Tensors provided as input "
            "to pack hook cannot be modified by in-place operations as this can lead to "
            "unexpected side-effects. Please open an issue if you need to perform in-place "
            "operations on the input to a pack hook.")
    s = SavedPacked()
    s.packed, s.unpack_hook = packed, unpack_hook
    s.is_output = is_output and tensor.grad_fn is not None
    s.grad_fn = None if is_output else tensor.grad_fn  # an output's node is the one unpacking
    s.output_nr = tensor._output_nr
    s.leaf = (accumulator_of(tensor)
              if tensor.grad_fn is None and tensor._requires_grad and not is_output else None)
    tangents = tensor._extra.get("tangent") if tensor._extra else None
    s.tangent = tangents or None  # shared, as SavedOutput's
    return s


def pack_tensor(tensor, is_output: bool) -> SavedPacked:
    """Save ``tensor`` through the innermost pack hook (saved_tensors_hooks is active)."""
    return _pack(tensor, *saved_hooks.stack[-1], is_output)


def pack_saved(node: OpNode, results: tuple) -> None:
    """Pass what ``node`` just saved through the innermost pack hook, in the order the rules
    read the inputs (as PyTorch's generated code saves them), then the outputs."""
    pack_hook, unpack_hook = saved_hooks.stack[-1]
    saved = node.saved
    for name, value in saved.items():
        if type(value) is SavedInput:
            saved[name] = _pack(value.tensor, pack_hook, unpack_hook, False)
    out = saved.get("out")
    if type(out) is tuple:
        saved["out"] = tuple(_pack(r, pack_hook, unpack_hook, True) for r in results)
    elif out is not None:
        saved["out"] = _pack(results[0], pack_hook, unpack_hook, True)


def _pack_recorded(node, results: tuple) -> None:
    if saved_hooks.stack:  # this thread is inside saved_tensors_hooks
        pack_saved(node, results)


SAVED_HOOKS.seams["saved"] = _pack_recorded
_FREED = object()


def _is_number(value) -> bool:
    """A saved value that is not a tensor (a Python number an op took)."""
    return value is not None and value is not _FREED and not hasattr(value, "unpack")


class SavedTensor:
    """One value a node saved (``grad_fn._raw_saved_<name>``): ``unpack()`` reads it,
    ``register_hooks(pack, unpack)`` packs it now and unpacks it through ``unpack`` later."""

    __slots__ = ("_node", "_key", "_index", "_value")

    def __init__(self, node, key, index: int | None = None) -> None:
        self._node, self._key, self._index, self._value = node, key, index, None

    def _get(self):
        node = self._node
        if node is None:
            return self._value
        saved = node.saved if isinstance(node, OpNode) else node._saved
        if saved is None:
            return _FREED
        value = saved.get(self._key) if type(saved) is dict else saved[self._key]
        return value[self._index] if self._index is not None and value is not None else value

    def _set(self, value) -> None:
        node = self._node
        if node is None:
            self._value = value
            return
        saved = node.saved if isinstance(node, OpNode) else node._saved
        if self._index is not None:
            values = list(saved[self._key])
            values[self._index] = value
            value = tuple(values)
        saved[self._key] = value

    def unpack(self):
        value = self._get()
        if value is _FREED:
            raise RuntimeError(FREED_MESSAGE)
        if type(value) in (SavedInput, SavedOutput, SavedPacked):
            return value.unpack(self._node)
        return value

    @property
    def data(self):
        """What is stored: the pack hook's result if hooks are set, else the tensor."""
        value = self._get()
        return value.packed if type(value) is SavedPacked else self.unpack()

    @property
    def unpack_hook(self) -> Callable | None:
        value = self._get()
        return value.unpack_hook if type(value) is SavedPacked else None

    def register_hooks(self, pack_hook: Callable, unpack_hook: Callable) -> None:
        """Pack this saved tensor with ``pack_hook`` now; backward reads ``unpack_hook(packed)``."""
        if not callable(pack_hook) or not callable(unpack_hook):
            raise TypeError("register_hooks(): incompatible function arguments: expected two "
                            f"callables, got {type(pack_hook).__name__} and "
                            f"{type(unpack_hook).__name__}")
        value = self._get()
        if value is _FREED:
            raise RuntimeError(
                "Calling register_hooks on a saved tensor after it has been freed. Saved "
                "intermediate values of the graph are freed when you call .backward() or "
                "autograd.grad(). Specify retain_graph=True if you need to backward through the "
                "graph a second time or if you need to access saved variables after calling "
                "backward.")
        if type(value) is SavedPacked:
            raise RuntimeError("Calling register_hooks on a saved tensor whose hooks have already "
                               "been set. Hint: only one pair of hooks is allowed at a time.")
        # The hook sees the saved values without their history, as in PyTorch.
        if type(value) is SavedInput:
            tensor = value.tensor
            self._set(_pack(tensor, pack_hook, unpack_hook, False, tensor.detach()))
        elif type(value) is SavedOutput:
            tensor = value.unpack(self._node)
            self._set(_pack(tensor, pack_hook, unpack_hook, True, tensor.detach()))
        else:
            raise RuntimeError("Calling register_hooks on a saved tensor with value None is "
                               "forbidden")


def _make_saved_tensor(tensor, is_output: bool = False) -> SavedTensor:
    """Save ``tensor`` as an op would (through the active pack hook), outside any node."""
    handle = SavedTensor(None, None)
    if mode_stack.saved is not None and saved_hooks.stack:
        handle._value = pack_tensor(tensor, is_output)
    else:
        handle._value = save_output(tensor) if is_output else save_input(tensor)
    return handle


class saved_tensors_hooks:
    """Context manager: tensors saved for backward inside it are stored as ``pack_hook(tensor)``
    and read back as ``unpack_hook(packed)``. Nested contexts: the innermost pair applies."""

    def __init__(self, pack_hook: Callable, unpack_hook: Callable) -> None:
        self.pack_hook = pack_hook
        self.unpack_hook = unpack_hook

    def __enter__(self) -> None:
        if saved_hooks.disabled is not None:
            raise RuntimeError(saved_hooks.disabled)
        saved_hooks.stack = saved_hooks.stack + ((self.pack_hook, self.unpack_hook),)
        push(SAVED_HOOKS)

    def __exit__(self, *exc) -> None:
        saved_hooks.stack = saved_hooks.stack[:-1]
        pop(SAVED_HOOKS)


class save_on_cpu(saved_tensors_hooks):
    """Save tensors for backward on the CPU. chainrule's tensors always are: the hooks keep each
    saved tensor as it is (no copy), so this only marks the code as portable to PyTorch."""

    def __init__(self, pin_memory: bool = False, device_type: str = "cuda") -> None:
        def pack_to_cpu(tensor):
            return (tensor.device, tensor.detach())

        def unpack_from_cpu(packed):
            return packed[1]

        super().__init__(pack_to_cpu, unpack_from_cpu)


@contextlib.contextmanager
def disable_saved_tensors_hooks(error_message: str):
    """Context manager: using saved_tensors_hooks inside it raises RuntimeError(error_message)."""
    prev = saved_hooks.disabled
    try:
        saved_hooks.disabled = error_message
        if saved_hooks.stack:
            raise RuntimeError(error_message)
        yield
    finally:
        saved_hooks.disabled = prev


# ---- the running backward, multi-grad hooks, versions -----------------------------------------


class GraphTask:
    """One running backward (the engine pushes it on ``graph_tasks.stack``), for hooks that ask."""

    __slots__ = ("id", "roots", "reach", "_reachable", "hook_state", "callbacks")
    _ids = itertools.count(1).__next__

    def __init__(self, roots: list, reach: set | None) -> None:
        self.id = GraphTask._ids()
        self.roots = roots
        self.reach = reach  # autograd.grad / backward(inputs=): the nodes that lead to a target
        self._reachable: set | None = None
        self.hook_state: dict = {}
        self.callbacks: list = []  # queue_callback's, run when this backward has finished

    def will_execute(self, node) -> bool:
        """Whether this backward runs ``node``."""
        if self.reach is not None:
            return node in self.reach
        if self._reachable is None:
            seen = set(self.roots)
            stack = list(self.roots)
            while stack:
                for edge in stack.pop().next_edges:
                    if edge is not None and edge[0] not in seen:
                        seen.add(edge[0])
                        stack.append(edge[0])
            self._reachable = seen
        return node in self._reachable


class _GraphTasks(threading.local):
    """The backwards running in this thread, innermost last (each thread runs its own)."""

    def __init__(self) -> None:
        self.stack: list = []


graph_tasks = _GraphTasks()


def _current_graph_task_id() -> int:
    """The running backward's id (-1 outside backward)."""
    tasks = graph_tasks.stack
    return tasks[-1].id if tasks else -1


def _is_checkpoint_valid() -> bool:
    """False inside autograd.grad() or backward(inputs=...) (the reentrant checkpoint's limit)."""
    tasks = graph_tasks.stack
    return not tasks or tasks[-1].reach is None


class _MultiHandle(RemovableHandle):
    __slots__ = ("handles",)

    def __init__(self, handles: tuple) -> None:
        self.handles = handles

    def remove(self) -> None:
        for handle in self.handles:
            handle.remove()


def _grad_fn_or_acc(tensor) -> Node:
    node = tensor.grad_fn if tensor.grad_fn is not None or not tensor.requires_grad \
        else accumulator_of(tensor)
    if node is None:
        raise AssertionError("Expected gradient function to be set")
    return node


def register_multi_grad_hook(tensors, fn: Callable, *, mode: str = "all") -> RemovableHandle:
    """Call ``fn`` once per backward: with mode "all", after the gradients of all ``tensors``
    that this backward computes (a list, None for the others); with "any", with the first one."""
    supported_modes = ("all", "any")
    if mode not in supported_modes:
        raise ValueError(f"Expects mode to be one of {supported_modes} but got {mode}")
    tensors = tuple(tensors)
    key = object()  # this registration's slot in each backward's hook_state

    def current_task() -> GraphTask:
        if not graph_tasks.stack:
            raise AssertionError("expected this hook to be called inside a backward call")
        return graph_tasks.stack[-1]

    if mode == "all":
        nodes = [_grad_fn_or_acc(t) for t in tensors]

        def inner_hook(idx: int) -> Callable:
            def hook(grad) -> None:
                task = current_task()
                state = task.hook_state.get(key)
                if state is None:  # the first of this backward: how many will come
                    expected = sum(task.will_execute(node) for node in nodes)
                    state = task.hook_state[key] = [0, expected, [None] * len(tensors)]
                state[0] += 1
                state[2][idx] = grad
                if state[0] == state[1]:
                    fn(state[2])

            return hook

        handles = tuple(t.register_hook(inner_hook(i)) for i, t in enumerate(tensors))
    else:

        @functools.wraps(fn)
        def wrapped_fn(grad) -> None:
            state = current_task().hook_state
            if key not in state:
                state[key] = True
                fn(grad)

        handles = tuple(t.register_hook(wrapped_fn) for t in tensors if t.requires_grad)
    return _MultiHandle(handles)


def increment_version(tensor) -> None:
    """Count an in-place change autograd cannot see (of a tensor or each of an iterable), so
    that backward through a node that saved it raises."""
    tensors = (tensor,) if isinstance(tensor, Tensor) else tensor
    try:
        tensors = tuple(tensors)
    except TypeError:
        tensors = None
    if tensors is None or not all(isinstance(t, Tensor) for t in tensors):
        raise RuntimeError("increment_version expect a Iterable[Tensor] as input")
    for t in tensors:
        if t._vc is None:
            t._vc = [1]
        else:
            t._vc[0] += 1


# ---- gradient edges, mutation of saved tensors, switches of other backends ---------------------


class GradientEdge(NamedTuple):
    """Where a tensor's gradient is computed in the graph: a node and its output number
    (``get_gradient_edge``); ``autograd.grad`` takes it for an input or an output."""

    node: Node
    output_nr: int
    ownership_token: Node | None = None


# The shape and dtype of the outputs get_gradient_edge was asked for (nodes do not keep their
# outputs'), for autograd.grad's implicit and checked output gradients.
_edge_meta: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def get_gradient_edge(tensor: Tensor) -> GradientEdge:
    """The gradient edge of ``tensor``: ``autograd.grad(loss, get_gradient_edge(x))`` is
    ``autograd.grad(loss, x)``."""
    if not tensor.requires_grad:
        raise RuntimeError("It is not possible to get the gradient edge for a Tensor that does "
                           "not require gradients")
    node, output_nr = tensor._edge()
    _edge_meta.setdefault(node, {})[output_nr] = (tensor._data.shape, tensor._data.dtype)
    return GradientEdge(node, output_nr)


def edge_meta(edge: GradientEdge) -> tuple | None:
    """(shape, NumPy dtype) of the output at ``edge``, if known."""
    return _edge_meta.get(edge[0], {}).get(edge[1])


class _AllowMutationOnSavedContext:
    """The state of one ``allow_mutation_on_saved_tensors`` block: the saved values."""

    def __init__(self) -> None:
        self.original: dict = {}

    def clear(self) -> None:
        self.original.clear()


_mutation_allowed = [False]


@contextlib.contextmanager
def allow_mutation_on_saved_tensors():
    """Context manager: tensors saved for backward inside it may be changed in place afterwards;
    backward (inside the same block) reads the values they had when saved. chainrule copies
    each saved tensor when it is saved (PyTorch copies on the first change)."""
    ctx = _AllowMutationOnSavedContext()

    def pack_hook(tensor):
        key = object()
        ctx.original[key] = tensor.detach().clone()
        return key

    def unpack_hook(key):
        if not _mutation_allowed[0] or key not in ctx.original:
            raise AssertionError("Trying to backward outside of the "
                                 "'allow_mutation_on_saved_tensors' contextin which the graph was "
                                 "originally recorded.")
        return ctx.original[key]

    with saved_tensors_hooks(pack_hook, unpack_hook):
        try:
            if _mutation_allowed[0]:
                raise RuntimeError("allow_mutation_on_saved_tensors contexts cannot be nested")
            _mutation_allowed[0] = True
            yield ctx
        finally:
            ctx.clear()
            _mutation_allowed[0] = False


def region_activation_memory_budget(budget: float):
    """Context manager for torch.compile's partitioner: the share of a compiled region's
    activations to keep. chainrule.compile keeps what eager keeps, so under it the budget has
    no effect; outside a compiled function it raises, as PyTorch does."""
    name = "torch.autograd.graph.region_activation_memory_budget"
    if isinstance(budget, bool) or not isinstance(budget, int | float):
        raise TypeError(f"{name}: expects a float, got {type(budget).__name__}")
    if not 0.0 <= budget <= 1.0:
        raise ValueError(f"{name}: must be in [0, 1], got {budget}")
    if mode_stack.capture is None:
        raise RuntimeError(f"{name} can only be used inside a torch.compile region; it has no "
                           "effect in eager mode.")
    return contextlib.nullcontext()


def set_warn_on_accumulate_grad_stream_mismatch(enabled: bool) -> None:
    """Whether to warn when a gradient reaches a leaf on another CUDA stream: chainrule has no
    streams, so nothing can mismatch."""


def set_override_stale_capture_stream(enabled: bool) -> None:
    """Whether CUDA graph capture may replace a stale stream: chainrule has no CUDA graphs."""
