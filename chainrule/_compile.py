"""``chainrule.compile``: run a function eagerly while recording the NumPy kernels it runs, then
replay them as one generated straight-line function of arrays.

Capture is a mode of the stack (``_modes``; its seam ``capture``) that every kernel passes:
``apply`` and ``apply_inplace`` report each op's forward with the arrays it read and made, the
engine its in-place gradient sums, AccumulateGrad and the ``.grad`` setter the gradients they
store, the random factories their draws. A :class:`Capture` names every array: ``a<i>`` for the
function's tensor arguments, ``e<i>`` for arrays that existed before the call (parameters, their
``.grad``, optimizer state), ``c<i>`` for constants, ``s<i>`` for kernel results. Anything it
cannot replay faithfully (``.item()``, ``bool(tensor)``, ``.numpy()``, a result that escapes
into Python state, an output that needs a graph) marks the capture as not replayable, with the
reason.

A capture becomes a :class:`Program` (Python source, printable with ``print(fn.code)``) only
when two consecutive captures agree: same kernels, same constants, same arrays. Guards (shapes,
dtypes and requires_grad of arguments and external tensors, grad mode, the default dtype,
modules' training flags, Python arguments) pick the program on later calls; a failed guard
captures again, up to ``recompile_limit`` programs, then the function runs eagerly with a
warning.
"""

from __future__ import annotations

import builtins
import functools
import gc
import math
import re
import sys
import threading
import types
import warnings
import weakref
from collections.abc import Callable
from time import perf_counter
from typing import Any

from ._backend import get_default_dtype, xp
from ._batched import BatchedTensor
from ._modes import Mode, pop, push, set_seam, stack
from ._quiet import enter, leave
from ._threads import cached as _buffers
from ._threads import ufunc_of
from .autograd.grad_mode import state as grad_state
from .autograd.graph import (
    FREED_MESSAGE,
    AccumulateGrad,
    Node,
    OpNode,
    SavedInput,
    SavedOutput,
    accumulator_of,
    next_seq,
)
from .tensor import Tensor

__all__ = ["compile", "CompiledFunction", "reset", "is_compiling"]

_ndarray = xp.ndarray
_wrap = Tensor._wrap
_INLINE = (int, bool, str, type(None))


class _Break(Exception):
    pass


class _Capturing(Mode):
    """chainrule.compile's capture on the stack: its seam holds the running ``Capture``."""

    order = 60
    name = "compile capture"


CAPTURE = _Capturing()


class Capture:
    """The record of one eager call: kernels, the arrays they read and wrote, and effects."""

    def __init__(self, arg_tensors: list, read: frozenset | None = None) -> None:
        self.thread = threading.get_ident()
        # The externals whose value need not be copied before a write: those the reference
        # capture (the one this one must agree with) reads from their tensors at replay (a
        # program made from this capture reads them so too); without a reference, all (this
        # capture can only become the next one's reference). A value not copied that ends up a
        # constant is lost: this capture then agrees with none (see Program.difference).
        self.read = read
        self.uncopied: set = set()
        self.lost = False
        self.lines: list[str] = []
        self.names: dict[int, str] = {}  # id(array) -> its name in the program
        # Arrays are not kept alive (the capture's memory is eager's): a name is dropped when its
        # array dies, so a new array with the same id gets a name of its own.
        self.refs: dict[str, weakref.ref] = {}
        self.meta: dict[str, tuple] = {}  # name -> shape, dtype, owns memory, contiguous, root
        self.held: list = []
        self.grad_used: set = set()  # tensors whose .grad the call reads or sets: guarded
        self.graph_refs: dict[int, int] = {}  # id(tensor) -> saves of it behind the outputs
        self.temps: set = set()  # names of tensors made during the call (not compared)
        self.expands: set = set()  # results of expand (broadcast views)
        self.watched: list = []  # (dict, key, value) guarded by value
        self.ns: dict[str, Any] = {}  # the program's globals: kernels, constants, tensors
        self.fns: dict[int, str] = {}
        self.function = None  # the compiled function (its closure and globals are guarded)
        self.externals: list = []  # [name, array, owner tensor or None, snapshot, written]
        # id(the array owning the memory) -> externals over it whose value is not yet copied:
        # an external's value at first use is copied only before a kernel writes into its
        # memory (parameters, the most of them, are never copied: a capture's memory is eager's)
        self.unkept: dict[int, list] = {}
        self.grads: dict[int, str] = {}  # id(a leaf's .grad array) -> the leaf's name
        self.seen: dict[int, tuple] = {}  # id(tensor) -> (tensor, name, grad was None at first)
        self.generators: dict[int, tuple] = {}
        self.modules: dict[int, tuple] = {}
        self.broken: str | None = None
        self.live: list | None = None  # outputs whose graph the program's backward replays
        self.backward: tuple | None = None  # (lines, output names, boundary edges)
        self.seq0 = next_seq()  # nodes older than this were made before the call
        self.streams: dict = {}  # id(generator) -> its state after the last recorded kernel
        self.stray = False  # a generator advanced outside a recorded kernel
        self.n = 0
        self._ones_of: dict[int, tuple] = {}  # id(lines) -> (lines, _ones(lines))
        self._dead = self._on_dead  # one bound method for every weak reference's callback
        for i, t in enumerate(arg_tensors):
            self._name(t._data, f"a{i}")

    # ---- naming -------------------------------------------------------------------------

    def _name(self, array, name: str) -> str:
        key = id(array)
        names = self.names
        earlier = names.get(key)
        meta = self.meta
        if earlier is not None and earlier in meta:  # a kernel returned an array it read:
            meta[earlier] = meta[earlier][:2] + (False,) + meta[earlier][3:]
        names[key] = name
        ref = self.refs[name] = _Ref(array, self._dead)
        ref.key, ref.name = key, name
        base = root = array.base
        if base is not None:  # (getattr's default on None would cost an AttributeError)
            while getattr(root, "base", None) is not None:  # a buffer (mmap, bytes) ends it
                root = root.base
        flags = array.flags
        meta[name] = (array.shape, array.dtype, base is None and earlier is None,
                      flags.c_contiguous and flags.writeable,
                      None if root is None else names.get(id(root)))
        return name

    def _on_dead(self, ref) -> None:
        if self.names.get(ref.key) == ref.name:
            del self.names[ref.key]

    def _new(self, prefix: str) -> str:
        self.n += 1
        return f"{prefix}{self.n}"

    def tensor_name(self, t: Tensor) -> str:
        """A global naming a tensor that lives outside the call (guarded, read at replay)."""
        entry = self.seen.get(id(t))
        if entry is None:
            name = self._new("T")
            self.ns[name] = t
            grad = getattr(t, "_grad", None)  # a BatchedTensor has none
            entry = self.seen[id(t)] = (t, name, grad is None)
            if grad is not None and id(grad._data) not in self.names:
                self.grads[id(grad._data)] = name
                self.held.append(grad._data)  # its id must not be reused during the capture
        return entry[1]

    def ref(self, x, owner=None, as_object: bool = False) -> str:
        """The expression for ``x`` in the program (an array, a tensor or a Python value);
        ``as_object``: the object itself, whatever its type."""
        if as_object:
            name = self._new("k")
            self.ns[name] = x
            return name
        if type(x) is _ndarray:
            name = self.names.get(id(x))
            if name is not None:
                return name
            return self._external(x, owner)
        if isinstance(x, Tensor):
            return self.ref(x._data, x)
        kind = type(x)
        if kind in _INLINE or (kind is float and x == x and abs(x) != float("inf")):
            return repr(x)
        if kind is tuple or kind is list:
            inner = ", ".join(self.ref(v) for v in x)
            if kind is tuple:
                return f"({inner}{',' if len(x) == 1 else ''})"
            return f"[{inner}]"
        if kind is dict:
            return "{" + ", ".join(f"{self.ref(k)}: {self.ref(v)}" for k, v in x.items()) + "}"
        name = self._new("k")
        self.ns[name] = x
        return name

    def _external(self, array, owner) -> str:
        grad_of = self.grads.get(id(array))
        if grad_of is not None:
            self.grad_used.add(grad_of)
            return self._name(array, f"{grad_of}._grad._data")
        if isinstance(owner, Tensor) and owner._requires_grad and owner.grad_fn is None:
            self.tensor_name(owner)  # a leaf: its .grad state is guarded
        name = self._name(array, self._new("e"))
        entry = [name, array, owner, None, False]
        self.externals.append(entry)
        self.unkept.setdefault(id(_root(array)), []).append(entry)
        return name

    def _keep(self, array) -> None:
        """A kernel may write into ``array``: copy the values of the externals sharing its
        memory first (their values at first use are the program's)."""
        if self.unkept:
            read = self.read
            for entry in self.unkept.pop(id(_root(array)), ()):
                if read is None or entry[0] in read:
                    self.uncopied.add(entry[0])
                else:
                    entry[3] = entry[1].copy()

    def fn(self, f) -> str:
        name = self.fns.get(id(f))
        if name is None:
            name = self.fns[id(f)] = self._new("f")
            self.ns[name] = f
        return name

    def call_text(self, f, args, kwargs) -> str:
        parts = [self.ref(a) for a in args]
        parts += [f"{k}={self.ref(v)}" for k, v in kwargs.items()]
        return f"{self.fn(f)}({', '.join(parts)})"

    # ---- what the seams report ------------------------------------------------------------

    def mine(self) -> bool:
        return threading.get_ident() == self.thread and self.broken is None

    def _advanced(self) -> bool:
        """Whether a generator's stream moved since the last call (and note where it is)."""
        moved = False
        for key, (gen, _) in self.generators.items():
            state = gen._position()
            if self.streams.get(key) != state:
                moved = True
                self.streams[key] = state
        return moved

    def before_op(self) -> None:
        """``apply`` is about to run a forward: draws since the last kernel were Python's."""
        if self.generators and threading.get_ident() == self.thread and self._advanced():
            self.stray = True

    def op(self, record, arrays: list, params: dict, out, inputs: tuple):
        """``apply`` ran ``out = record.forward(*arrays, **params)``; returns ``out`` as
        arrays."""
        f = record.forward
        if (type(out) is _ndarray and not self.generators and self.broken is None
                and len(inputs) == len(arrays)
                and threading.get_ident() == self.thread):  # the common case, shortest
            names = self.names
            parts = []
            for x, a in zip(inputs, arrays):
                if type(a) is _ndarray:
                    name = names.get(id(a))
                    parts.append(name if name is not None else self._external(
                        a, x if isinstance(x, Tensor) else None))
                else:
                    parts.append(self.ref(a))
            if params:
                parts += [f"{k}={self.ref(v)}" for k, v in params.items()]
            fname = self.fns.get(id(f))
            if fname is None:
                fname = self.fn(f)
            self.n += 1
            name = f"s{self.n}"
            self.lines.append(f"{name} = {fname}({', '.join(parts)}){_PURE}")
            key = id(out)
            if key in names and key in _buffers and all(a is not out for a in arrays):
                del names[key]  # a buffer the cache hands out again: its earlier name is dead
            if key in names or out.base is not None:  # the general case of naming
                self._name(out, name)
            else:  # _name for a new array owning its memory
                names[key] = name
                ref = self.refs[name] = _Ref(out, self._dead)
                ref.key, ref.name = key, name
                flags = out.flags
                self.meta[name] = (out.shape, out.dtype, True,
                                   flags.c_contiguous and flags.writeable, None)
            if record.name == "expand":
                self.expands.add(name)
            return out
        single = type(out) is not tuple
        outs = [out] if single else list(out)
        arrays_out = [o if type(o) is _ndarray else xp.asarray(o) for o in outs]
        if not self.mine():
            return arrays_out[0] if single else tuple(arrays_out)
        drew = bool(self.generators) and self._advanced()  # replay must draw again: keep it
        for x, a in zip(inputs, arrays):
            if isinstance(x, Tensor) and type(a) is _ndarray and id(a) not in self.names:
                self.ref(a, x)
        text = self.call_text(f, arrays, params)
        names = [self._new("s") for _ in arrays_out]
        pure = "" if drew else _PURE
        if single:
            conv = type(out) is not _ndarray
            self.lines.append(f"{names[0]} = {'asarray(' + text + ')' if conv else text}{pure}")
        else:
            tmp = self._new("t")
            self.lines.append(f"{tmp} = {text}{pure}")
            for i, (name, o) in enumerate(zip(names, outs)):
                conv = type(o) is not _ndarray
                self.lines.append(f"{name} = {'asarray(' if conv else ''}{tmp}[{i}]"
                                  f"{')' if conv else ''}{_PURE}")
        for name, a in zip(names, arrays_out):
            if id(a) in _buffers and id(a) in self.names and all(b is not a for b in arrays):
                del self.names[id(a)]  # a buffer the cache hands out again (as above)
            self._name(a, name)
        if record.name == "expand":
            self.expands.add(names[0])
        return arrays_out[0] if single else tuple(arrays_out)

    def promoted(self, before: list, after: list) -> None:
        """``apply`` cast some inputs to the result dtype."""
        if not self.mine():
            return
        for b, a in zip(before, after):
            if type(a) is _ndarray and a is not b and id(a) not in self.names:
                if type(b) is _ndarray:
                    self._name(a, name := self._new("s"))
                    self.lines.append(f"{name} = {self.ref(b)}.astype({self.ref(a.dtype)})"
                                      + _PURE)
                # else: a Python int made an array of the result dtype: a constant

    def call(self, f, args: tuple, kwargs: dict, out=None):
        """Run and record a kernel outside ``apply``; ``out``: the array it writes into."""
        if not self.mine():
            return f(*args, **kwargs)
        if out is not None:  # named (and a new array's value kept) before the write
            self.written(out)
            self._keep(out)
            text = self.call_text(f, args, kwargs)
            f(*args, **kwargs)
            self.lines.append(text)
            return out
        for a in args:
            self.ref(a)
        if self.unkept:  # the kernel may write into its arguments (a draw into a tensor)
            for a in _arrays_in((args, kwargs)):
                self._keep(a)
        if self.generators and self._advanced():
            self.stray = True
        result = f(*args, **kwargs)
        if self.generators:
            self._advanced()
        if type(result) is tuple:  # several arrays
            tmp = self._new("t")
            self.lines.append(f"{tmp} = {self.call_text(f, args, kwargs)}")
            arrays = []
            for i, r in enumerate(result):
                conv = type(r) is not _ndarray
                arrays.append(xp.asarray(r) if conv else r)
                self._name(arrays[-1], name := self._new("s"))
                self.lines.append(f"{name} = {'asarray(' if conv else ''}{tmp}[{i}]"
                                  f"{')' if conv else ''}")
            return tuple(arrays)
        if type(result) is not _ndarray:
            result = xp.asarray(result)
            text = f"asarray({self.call_text(f, args, kwargs)})"
        else:
            text = self.call_text(f, args, kwargs)
        self._name(result, name := self._new("s"))
        self.lines.append(f"{name} = {text}")
        return result

    def written(self, array) -> str:
        """A kernel writes into ``array`` (and so into any array it is a view of)."""
        name = self.ref(array)
        while array is not None:
            for entry in self.externals:
                if entry[1] is array:
                    entry[4] = True
            array = array.base
        return name

    def effect(self, f, *args) -> None:
        """Run ``f(*args)`` for its effect on Python state (a reseed, a generator's state set
        from an array) and replay it too."""
        f(*args)
        if self.mine():
            refs = ", ".join(self.ref(a, as_object=type(a) is not _ndarray) for a in args)
            self.lines.append(f"{self.fn(f)}({refs})")
            if self.generators:
                self._advanced()

    def before_write(self, target, *arrays) -> None:
        """Name ``target``, about to be written in place, and the arrays written into it (the
        values of the externals sharing the target's memory are kept first)."""
        if self.mine():
            for a in (target, *arrays):
                if type(a) is _ndarray:
                    self.ref(a)
            if type(target) is _ndarray:
                self._keep(target)

    def inplace(self, f, arrays: list, target) -> None:
        """``apply_inplace`` ran ``f(*arrays, out=target)`` (``before_write`` named them)."""
        if not self.mine():
            return
        self.written(target)
        self.lines.append(f"{self.fn(f)}({', '.join(self.ref(a) for a in arrays)}, "
                          f"out={self.ref(target)})")

    def write(self, target, array) -> None:
        """``target[...] = array`` (``before_write`` named them)."""
        if not self.mine():
            return
        self.written(target)
        self.lines.append(f"{self.ref(target)}[...] = {self.ref(array)}")

    def set_grad(self, tensor: Tensor, value) -> None:
        """``tensor.grad = value``."""
        if not self.mine() or type(tensor) is BatchedTensor:  # a vmap wrapper's is its own
            return
        if value is not None and value._requires_grad:
            self.graph_break("a .grad that requires grad (backward with create_graph=True)")
            return
        name = self.tensor_name(tensor)
        self.grad_used.add(name)
        if value is None:
            self.lines.append(f"{name}._grad = None")
        else:
            self.lines.append(f"{name}._grad = wrap({self.ref(value._data)}, None, 0)")
            self.grads[id(value._data)] = name
            self.held.append(value._data)  # its id must not be reused during the capture

    def draw(self, generator) -> None:
        """A sampler is about to draw from a generator's stream."""
        if threading.get_ident() != self.thread or id(generator) in self.generators:
            return
        self.generators[id(generator)] = (generator, generator._rng)
        self.streams[id(generator)] = generator._position()

    def module(self, module) -> None:
        """A module's forward ran: its training flag is guarded."""
        if threading.get_ident() == self.thread:
            self.modules[id(module)] = (module, module.training)

    def watch(self, values: dict) -> None:
        """Guard the Python numbers in ``values`` (an optimizer's param group: lr, betas...)."""
        if threading.get_ident() != self.thread:
            return
        for key, value in values.items():
            if type(value) in (int, float, bool) or (type(value) is tuple and all(
                    type(v) in (int, float, bool) for v in value)):
                self.watched.append((values, key, value))

    def graph_break(self, what: str) -> None:
        if threading.get_ident() == self.thread and self.broken is None:
            self.broken = what

    # ---- the end of the capture -----------------------------------------------------------

    def finish(self, result, arg_tensors: list) -> Program | None:
        """The program for this capture, or None (``self.broken`` says why)."""
        if self.broken is None and (self.stray or (self.generators and self._advanced())):
            self.broken = "random numbers drawn outside a recorded kernel"
        if self.broken is not None:
            return None
        try:
            out_text = self._outputs(result, {id(t): i for i, t in enumerate(arg_tensors)})
            self._check_escapes(result)
        except _Break as why:
            self.broken = str(why)
            return None
        head = [f"a{i} = A[{i}]._data" for i in range(len(arg_tensors))]
        read: list = []  # externals read from their tensors at replay
        for name, array, owner, snapshot, written in self.externals:
            # Held outside this capture (the entry, the loop's variable, getrefcount's argument;
            # the graph behind the outputs and the guards' own references do not count).
            if owner is not None and sys.getrefcount(owner) - 3 - self.graph_refs.get(
                    id(owner), 0) - (2 if id(owner) in self.seen else 0) > 0:
                if owner._data is not array:
                    self.broken = "a tensor's data was replaced during the call"
                    return None
                tname = self.tensor_name(owner)
                head.append(f"{name} = {tname}._data")
                read.append(name)
                continue
            if owner is not None and id(owner) in self.seen:  # a leaf made during the call
                tname = self.seen.pop(id(owner))[1]
                self.grad_used.discard(tname)
                self.temps.add(tname)
            # Beyond the entry, the loop's variable, getrefcount's argument and its owner:
            if sys.getrefcount(array) - 3 - (owner is not None and owner._data is array) > 0:
                self.ns[name + "_"] = array  # an array that outlives the call
                head.append(f"{name} = {name}_")
            else:  # a temporary made during the call: its value at first use (nothing wrote
                # into its memory if it was not copied)
                self.ns[name + "_"] = array if snapshot is None else snapshot
                if name in self.uncopied:
                    self.lost = True
                head.append(f"{name} = {name}_.copy()" if written else f"{name} = {name}_")
        if self.backward is None:
            raw = (head + self.lines + [f"return {out_text}"], None)
        else:
            raw = self._with_backward(head, out_text)
        guards = self._guards(arg_tensors)
        self.ns.update(asarray=xp.asarray, wrap=_wrap, freed=_freed)
        self.externals = self.held = None  # the arrays are the program's constants or not used
        self.unkept = {}
        program = Program(raw, self.ns, guards, self.temps, self)
        program.read, program.lost = frozenset(read), self.lost
        return program

    def source(self, raw: tuple) -> str:
        """The program's Python source: ``raw`` (the forward's lines and the backward's or None)
        simplified (see ``_free_dead``)."""
        forward, backward = raw
        text = "def replay(A):\n" + "".join(
            f"    {line}\n" for line in _nest(*_free_dead(forward, self)))
        if backward is not None:
            text += "\n\ndef backward(S, G):\n" + "".join(
                f"    {line}\n" for line in _nest(*_free_dead(backward, self)))
        return text

    def capture_backward(self, result, arg_tensors: list) -> None:
        """Outputs with a live graph: record the backward from them to the edges where the
        call's graph begins (leaves' AccumulateGrad, tensor arguments' nodes), with the output
        gradients as the program's inputs ``G``."""
        from .autograd import engine

        live = [t for t in _tensors(result) if (t.grad_fn is not None and not _spent(t.grad_fn))
                or (t._requires_grad and t.grad_fn is None and id(t) not in self.seen
                    and all(t is not a for a in arg_tensors))]
        if not live or self.broken is not None:
            return
        if any(t.grad_fn is None for t in live):
            self.broken = "an output is a new leaf that requires grad"
            return
        def outside(node) -> bool:  # where the call's graph begins
            return type(node) is AccumulateGrad or node.seq < self.seq0

        boundary: list = []
        for node in _walk([t.grad_fn for t in live], lambda n: [
                e[0] for e in n.next_edges if e is not None and not outside(e[0])]
                if isinstance(n, OpNode) else ()):
            if not isinstance(node, OpNode):
                self.broken = f"an output's graph holds {node.name()} (only ops replay)"
                return
            if node.saved is None:  # eager's backward through it raises; so does the fallback
                self.broken = ("an output's graph was freed by a backward inside the call "
                               "(retain_graph=False)")
                return
            boundary.extend(e for e in node.next_edges
                            if e is not None and outside(e[0]) and e not in boundary)
        sources = []
        for child, nr in boundary:
            if type(child) is AccumulateGrad:
                leaf = child.variable
                index = next((i for i, a in enumerate(arg_tensors) if a is leaf), None)
                sources.append(("acc", f"A[{index}]") if index is not None
                               else ("acc", self.tensor_name(leaf)))
                continue
            index = next((i for i, a in enumerate(arg_tensors)
                          if a.grad_fn is child and a._output_nr == nr), None)
            if index is None:
                self.broken = "an output's graph reaches a graph made before the call"
                return
            sources.append(("arg", f"A[{index}]"))
        split = len(self.lines)
        seeds = []
        for i, t in enumerate(live):
            g = xp.ones_like(t._data)
            self._name(g, f"G[{i}]")
            seeds.append(_wrap(g, None, 0))
        grads = engine.execute([(t.grad_fn, t._output_nr) for t in live], seeds, boundary,
                               True, False, False)
        lines = self.lines[split:]
        del self.lines[split:]
        outs = [self.ref(g._data) if g is not None else "None" for g in grads]
        self.live = live
        self.backward = (lines, outs, sources)

    def _with_backward(self, head: list, out_text: str) -> tuple[list, list]:
        """Lines of ``replay(A)`` returning the outputs, whose live ones get a CompiledNode
        running ``backward(S, G)`` on the forward arrays ``S`` it reads, and of ``backward``."""
        lines, outs, sources = self.backward
        back_body = lines + [f"return ({', '.join(outs)},)"]
        word = re.compile(r"\b([saet]\d+)\b")
        made = {m for line in lines for m in word.findall(line.split(" = ")[0])}
        needed = sorted({m for line in back_body for m in word.findall(line)} - made)
        live = ", ".join(self.ref(t._data) for t in self.live)
        edges = ", ".join(f"({kind!r}, {src})" for kind, src in sources)
        fwd = head + self.lines + [
            f"live = make_live(({live},), backward, ({', '.join(needed)}{',' if needed else ''}),"
            f" ({edges},))",
            f"return {out_text}"]
        unpack = [f"{', '.join(needed)}, = S"] if needed else []
        self.ns["make_live"] = _make_live
        return fwd, unpack + back_body

    def _times_one(self, lines: list) -> tuple[list, set]:
        """``sX = multiply(ones, B)``, as backward starts from a gradient of ones: when the
        shapes and dtypes agree the product is B, bit for bit, so sX names B's array (one pass
        fewer), unless either is written later or sX leaves the program. Returns the lines and
        the names that must not be written into."""
        ones = set(self._ones(lines))
        if not ones:
            return lines, set()
        meta = self.meta
        ones.update(n for n, m in meta.items() if m[4] in ones)  # views of a ones array
        frozen: set = set()
        out = list(lines)
        mentions = _any_of(ones)
        for i, line in enumerate(lines):
            m = mentions(line) and _CALL.match(line.removesuffix(_PURE))
            if not m or ufunc_of(self.ns.get(m.group(2))) is not xp.multiply:
                continue
            args = m.group(3).split(", ")
            if len(args) != 2 or not (args[0] in ones or args[1] in ones):
                continue
            target, other = m.group(1), args[1] if args[0] in ones else args[0]
            if (other in meta and target in meta and meta[other][:2] == meta[target][:2]
                    and not _escapes_or_written(lines[i + 1:], (target, other))):
                out[i] = f"{target} = {other}{_PURE}"
                frozen.update((target, other))
        return out, frozen

    def _ones(self, lines: list) -> frozenset:
        """The constants ``lines`` read (``eX = eX_``) that are arrays of ones."""
        known = self._ones_of.get(id(lines))
        if known is not None and known[0] is lines:
            return known[1]
        ones = set()
        for line in lines:
            m = line[0] == "e" and _CONST.match(line)
            if m:
                value = self.ns.get(m.group(2))
                if type(value) is _ndarray and value.size and bool((value == 1).all()):
                    ones.add(m.group(1))
        ones = frozenset(ones)
        self._ones_of[id(lines)] = (lines, ones)
        return ones

    def structure(self, raw: tuple) -> _Structure:
        """What ``source(raw)`` reads, as a key: recordings with the same key have the same
        source (the lines, the arrays' shapes and layouts, the broadcast views, which kernels
        are or split (which ufunc), which constants are ones)."""
        forward, backward = raw
        kernels = tuple((k, ufunc_of(v)) for k, v in self.ns.items()
                        if k[0] == "f" and k[1:].isdigit())
        return _Structure(
            (forward, backward, self.meta, self.expands, kernels, self._ones(forward),
             None if backward is None else self._ones(backward)),
            (len(forward), forward[-1], None if backward is None else len(backward),
             len(self.meta), kernels))

    def _fold_operands(self, lines: list) -> list:
        """Operands an elementwise kernel takes as they are, bit for bit: a bool array cast to
        a float to multiply by (``multiply`` casts it the same way), a broadcast view whose
        shape the product keeps anyway (NumPy broadcasts). The cast or view goes if unused."""
        meta = self.meta
        source: dict[str, str] = {}  # name -> the operand that can stand for it
        for line in lines:
            m = _ASTYPE.match(line)
            if m and m.group(2) in meta and meta[m.group(2)][1].kind == "b":
                source[m.group(1)] = m.group(2)
            target = line.split(" = ", 1)[0]
            if target in self.expands:  # sX = fN(source, shape=...)
                source[target] = line.split("(", 1)[1].split(",", 1)[0]
        if not source:
            return lines
        out = []
        mentions = _any_of(source)
        for line in lines:
            m = mentions(line) and _CALL.match(line.removesuffix(_PURE))
            f = m and ufunc_of(self.ns.get(m.group(2)))
            if m and f is not None and m.group(1) in meta:
                args = m.group(3).split(", ")
                shape = meta[m.group(1)][0]
                new = list(args)
                for i, a in enumerate(args):
                    s = source.get(a)
                    if s is None or s not in meta:
                        continue
                    if a in self.expands:  # another operand must still give the shape
                        if not any(meta.get(b, ((),))[0] == shape for j, b in enumerate(new)
                                   if j != i):
                            continue
                    elif f is not xp.multiply:
                        continue
                    new[i] = s
                if new != args:
                    line = f"{m.group(1)} = {m.group(2)}({', '.join(new)})" + (
                        _PURE if line.endswith(_PURE) else "")
            out.append(line)
        return out

    def _reuse(self, lines: list, last: dict, big: set, frozen: set = frozenset()) -> list:
        """``sX = ufunc(.., sY, ..)`` where sY dies there, is sX's shape and dtype, owns its
        memory and shares it with no live array: ``out=sY`` (no new buffer, no page faults)."""
        meta = self.meta
        # The forward arrays a backward reads stay as they are: it may run again (retain_graph).
        kept = {n for line in lines if line.endswith("= S") for n in _WORD.findall(line)}
        views: dict[str, list] = {}  # name of an array owning its memory -> views into it
        for name, m in meta.items():
            if m[4] is not None:
                views.setdefault(m[4], []).append(name)
        out = list(lines)
        for i, line in enumerate(lines):
            m = _CALL.match(line)
            if m and m.group(1) in big and ufunc_of(self.ns.get(m.group(2))) is not None:
                target = meta.get(m.group(1))
                for arg in m.group(3).split(", "):
                    a = meta.get(arg)
                    if (arg[0] == "s" and last.get(arg) == i and arg not in kept
                            and arg not in frozen
                            and target is not None and a is not None and a[2] and a[3]
                            and a[:2] == target[:2]
                            and all(last.get(v, -1) <= i for v in views.get(arg, ()))):
                        out[i] = f"{line[:-1]}, out={arg})"
                        break
        return out

    def _outputs(self, result, arg_index: dict) -> str:
        if isinstance(result, Tensor):
            if id(result) in arg_index:
                return f"A[{arg_index[id(result)]}]"
            if id(result) in self.seen:
                return self.seen[id(result)][1]
            node = result.grad_fn
            if node is not None and _spent(node):
                # Its backward already ran and freed the graph: the replayed output gets the
                # same spent node (a second backward raises PyTorch's error, as eager does).
                return (f"freed({self.ref(result._data)}, {self.ref(node)}, "
                        f"{result._output_nr})")
            if node is not None or result._requires_grad:
                if self.live is None:
                    raise _Break("an output requires grad and its graph could not be captured")
                index = next(i for i, t in enumerate(self.live) if t is result)
                return f"live[{index}]"
            return f"wrap({self.ref(result._data)}, None, 0)"
        if type(result) in (tuple, list):
            inner = ", ".join(self._outputs(r, arg_index) for r in result)
            if type(result) is tuple:
                return f"({inner}{',' if len(result) == 1 else ''})"
            return f"[{inner}]"
        if type(result) is dict:
            return "{" + ", ".join(f"{self.ref(k)}: {self._outputs(v, arg_index)}"
                                   for k, v in result.items()) + "}"
        if isinstance(result, _ndarray):
            raise _Break("the function returns a NumPy array")
        return self.ref(result)

    def _check_escapes(self, result) -> None:
        """A kernel result still held after the call, other than by the outputs and the
        ``.grad`` slots, went into Python state the program would not update."""
        alive = {id(a): a for a in (r() for name, r in self.refs.items() if name[0] == "s")
                 if a is not None}
        allowed: dict[int, int] = {}  # id(array) -> references known to be harmless
        for view in alive.values():
            if view.base is not None:
                allowed[id(view.base)] = allowed.get(id(view.base), 0) + 1
        holders: dict[int, Any] = {}  # the outputs, and what the graphs behind them save
        for t in _tensors(result):
            holders[id(t)] = t
            for node in _walk([t.grad_fn], _inputs):
                for value in (getattr(node, "params", None) or {}).values():
                    for v in value if type(value) in (tuple, list) else (value,):
                        if isinstance(v, Tensor):  # a tensor argument kept with the node
                            self.graph_refs[id(v)] = self.graph_refs.get(id(v), 0) + 1
                for value in (getattr(node, "saved", None) or {}).values():
                    for v in value if type(value) is tuple else (value,):
                        if type(v) is SavedInput:
                            holders[id(v.tensor)] = v.tensor
                            self.graph_refs[id(v.tensor)] = (
                                self.graph_refs.get(id(v.tensor), 0) + 1)
                        elif type(v) is SavedOutput:
                            holders[id(v)] = v
                        elif type(v) is _ndarray:  # an array operand saved as it is
                            allowed[id(v)] = allowed.get(id(v), 0) + 1
        for h in list(holders.values()):  # a view holds its base tensor
            while isinstance(h, Tensor) and h._extra and "view" in h._extra:
                h = h._extra["view"][0]
                holders[id(h)] = h
                self.graph_refs[id(h)] = self.graph_refs.get(id(h), 0) + 1
        for h in holders.values():
            key = id(h.array if type(h) is SavedOutput else h._data)
            allowed[key] = allowed.get(key, 0) + 1
        h = view = None  # no stray references while counting
        for t, _, _ in self.seen.values():
            if t._grad is not None:
                allowed[id(t._grad._data)] = allowed.get(id(t._grad._data), 0) + 1
        for a in self.held:  # the capture's own references
            allowed[id(a)] = allowed.get(id(a), 0) + 1
        for key in alive:  # the buffer cache's (kernels ran with it: _dispatch._kernel)
            if key in _buffers:
                allowed[key] = allowed.get(key, 0) + 1
        a = None
        del alive
        if _held(self.refs, allowed):
            gc.collect()  # reference cycles (a caught exception's frames) may hold some
            if _held(self.refs, allowed):
                raise _Break("a result made during the call is kept in Python state (e.g. an "
                             "optimizer's new buffers): captured again next call")

    def _guards(self, arg_tensors: list) -> list:
        # The grad mode, the default dtype and the arguments' shapes, dtypes and requires_grad
        # are in the key that picks the programs to try (_flatten_args): not checked again.
        checks = []
        for t, name, grad_none in self.seen.values():
            a = t._data
            checks.append(f"{name}._data.shape == {a.shape!r} and {name}._data.dtype == "
                          f"{self.ref(a.dtype)} and {name}._requires_grad is "
                          f"{t._requires_grad}")
            if name in self.grad_used:
                checks.append(f"{name}._grad is None" if grad_none else
                              f"{name}._grad is not None and {name}._grad._data.shape == "
                              f"{a.shape!r}")
        for gen, rng in self.generators.values():
            checks.append(f"{self.ref(gen)}._rng is {self.ref(rng)}")
        for module, training in self.modules.values():
            checks.append(f"{self.ref(module)}.training is {training}")
        for values, key, value in self.watched:
            checks.append(f"{self.ref(values, as_object=True)}[{key!r}] == {value!r}")
        checks += self._name_guards()
        return checks

    def _name_guards(self) -> list:
        """The objects the function's own code reads from its closure and globals, by identity:
        a name bound to another tensor, module or number later is a new recording."""
        fn = getattr(self.function, "__func__", self.function)  # a bound method's function
        code = getattr(fn, "__code__", None)
        if code is None:
            return []
        checks = []
        for cell in getattr(fn, "__closure__", None) or ():
            try:
                value = cell.cell_contents
            except ValueError:  # not yet bound
                continue
            checks.append(f"{self.ref(cell, as_object=True)}.cell_contents is "
                          f"{self.ref(value, as_object=True)}")
        names = fn.__globals__
        for name in code.co_names:
            if name in names and not isinstance(names[name], types.ModuleType):
                checks.append(f"{self.ref(names, as_object=True)}.get({name!r}) is "
                              f"{self.ref(names[name], as_object=True)}")
        return checks


class _Structure:
    """A key of ``_CODES``: a recording's structure, hashed by a summary (the lines are not
    hashed: a capture that finds no equal pays next to nothing), compared whole."""

    __slots__ = ("parts", "summary")

    def __init__(self, parts: tuple, summary: tuple) -> None:
        self.parts, self.summary = parts, summary  # parts: never changed after the capture

    def __hash__(self) -> int:
        return hash(self.summary)

    def __eq__(self, other) -> bool:
        return type(other) is _Structure and (
            self.summary == other.summary and self.parts == other.parts)


class _Ref(weakref.ref):
    """A capture's weak reference to an array: the name it had, dropped when it dies."""

    __slots__ = ("key", "name")


class CompiledNode(Node):
    """The grad_fn of a replayed output whose graph lives on: runs the captured backward."""

    __slots__ = ("_backward", "_saved", "next_edges", "n_outputs", "_shapes")

    def __init__(self, backward, saved: tuple, edges: tuple, shapes: list) -> None:
        self.seq = next_seq()
        self._backward, self._saved, self.next_edges = backward, saved, edges
        self.n_outputs, self._shapes = len(shapes), shapes
        self._pre_hooks = self._retain = self._hooks = None

    def name(self) -> str:
        return "CompiledFunctionBackward"

    def apply(self, grads: list) -> list:
        if self._saved is None:
            raise RuntimeError(FREED_MESSAGE)
        if grad_state.enabled:
            raise RuntimeError("chainrule.compile: a compiled function's backward is not "
                               "differentiable (create_graph=True); call the function eagerly "
                               "for higher-order gradients, or take them inside it")
        arrays = [g._data if g is not None else xp.zeros(shape, dtype)
                  for g, (shape, dtype) in zip(grads, self._shapes)]
        return [None if a is None else _wrap(a, None, 0)
                for a in self._backward(self._saved, arrays)]

    def release(self) -> None:
        self._saved = None


# Graph tools read the node's class: torch.compile's is this custom Function backward.
CompiledNode.__name__ = CompiledNode.__qualname__ = "CompiledFunctionBackward"
CompiledNode.__module__ = "torch.autograd.function"


def _make_live(arrays: tuple, backward, saved: tuple, sources: tuple) -> list:
    edges = []
    for kind, t in sources:
        if kind == "acc" or t.grad_fn is None:
            edges.append((accumulator_of(t), 0) if t._requires_grad else None)
        else:
            edges.append((t.grad_fn, t._output_nr))
    node = CompiledNode(backward, saved, tuple(edges), [(a.shape, a.dtype) for a in arrays])
    live = []
    for nr, a in enumerate(arrays):
        t = _wrap(a, node, nr)
        t._requires_grad = True
        live.append(t)
    return live


def _root(array):
    """The object owning ``array``'s memory (an array, or a buffer ending the chain)."""
    while array.base is not None:
        array = array.base
        if type(array) is not _ndarray and getattr(array, "base", None) is None:
            break
    return array


def _arrays_in(values):
    """The arrays in ``values`` (nested tuples, lists and dicts)."""
    kind = type(values)
    if kind is _ndarray:
        yield values
    elif kind in (tuple, list):
        for v in values:
            yield from _arrays_in(v)
    elif kind is dict:
        for v in values.values():
            yield from _arrays_in(v)


def _walk(roots, children):
    """Each node reachable from ``roots`` once, depth first, going on to ``children(node)``."""
    stack, seen = list(roots), set()
    while stack:
        node = stack.pop()
        if node is None or id(node) in seen:
            continue
        seen.add(id(node))
        yield node
        stack.extend(children(node))


def _inputs(node) -> list:
    return [e[0] for e in node.next_edges if e is not None]


def _spent(node) -> bool:
    """Whether backward through ``node`` can only fail as it would after eager's backward:
    every path to a leaf meets a node whose saved values were freed."""
    return all(isinstance(n, OpNode) for n in _walk(
        [node], lambda n: _inputs(n) if isinstance(n, OpNode) and n.saved is not None else ()))


def _freed(array, node, output_nr: int) -> Tensor:
    t = _wrap(array, node, output_nr)
    t._requires_grad = True
    return t


def _tensors(result):
    if isinstance(result, Tensor):
        yield result
    elif type(result) in (tuple, list):
        for r in result:
            yield from _tensors(r)
    elif type(result) is dict:
        for r in result.values():
            yield from _tensors(r)


_PURE = "  # pure"  # marks a kernel line without effects: dropped when its result is unused
_WORD = re.compile(r"\b([a-zA-Z_]\w*)\b")


def _any_of(names) -> Callable:
    """A test of whether a line mentions one of ``names`` as a whole word (a quick filter
    before parsing; no regex is compiled per program: that costs more than the filtering)."""
    if not all(n.isidentifier() for n in names):
        search = re.compile(r"\b(?:" + "|".join(map(re.escape, names)) + r")(?!\w)").search
        return lambda line: search(line) is not None
    words = frozenset(names)
    findall = _WORD.findall
    if len(words) > 8:
        return lambda line: not words.isdisjoint(findall(line))
    listed = tuple(words)

    def mentions(line: str) -> bool:
        for name in listed:  # a substring first: most lines mention none
            if name in line:
                return not words.isdisjoint(findall(line))
        return False

    return mentions


def _drop_unused(lines: list) -> tuple[list, list]:
    """Drop pure kernel lines whose results nothing reads (a loss value no one returns);
    returns the lines kept and the kernel results each mentions (``_RESULT``, in order)."""
    used: set = set()
    kept = []
    found = []
    findall = _RESULT.findall
    for line in reversed(lines):
        names = findall(line)
        if line.endswith(_PURE):  # "sX = expr": sX is the first name found
            if names[0] not in used:
                continue
            line = line[:-len(_PURE)]
            used.update(names[1:])
        else:
            used.update(names)
        kept.append(line)
        found.append(names)
    return kept[::-1], found[::-1]


_CALL = re.compile(r"^(s\d+) = (f\d+)\(([\w.]+(?:, [\w.]+)*)\)$")


def _held(refs: dict, allowed: dict) -> bool:
    """Whether a kernel result has more references than ``allowed`` says are harmless."""
    alive = {}  # one entry per array (a kernel may return its input: two names, one array)
    for name, r in refs.items():
        a = r()
        if name[0] == "s" and a is not None:
            alive[id(a)] = a
    a = None
    # The dict, the generator's variable and getrefcount's argument.
    return any(sys.getrefcount(a) - 3 > allowed.get(id(a), 0) for a in alive.values())


_CONST = re.compile(r"^(e\d+) = (e\d+_)$")
_ASTYPE = re.compile(r"^(s\d+) = (s\d+)\.astype\((k\d+)\)  # pure$")


def _escapes_or_written(lines: list, names: tuple) -> bool:
    """Whether a later line writes into one of ``names`` or hands it out of the program."""
    for line in lines:
        for name in names:
            if name not in line:
                continue
            if (f"out={name})" in line or line.startswith(f"{name}[") or "wrap(" in line
                    or "freed(" in line or "make_live(" in line or line.startswith("return")
                    or "._grad = " in line) and name in _WORD.findall(line):
                return True
    return False


_BIG = 1 << 16  # bytes: smaller arrays are neither freed early nor written over (not worth a line)
# A kernel result's name, sX or tX, as a whole word (the letter first: the regex engine skips
# to it; the lookbehind asks for no word character before it).
_RESULT = re.compile(r"[st](?<!\w[st])\d+\b")


def _free_dead(lines: list, capture: Capture) -> tuple[list, list]:
    """Drop unused pure kernels; let an elementwise kernel write into a large input that dies
    there; insert ``del`` after the last use of each large kernel result (eager's memory peak
    at most). Returns the lines and the kernel results each mentions."""
    lines, frozen = capture._times_one(lines)
    lines = capture._fold_operands(lines)
    lines, found = _drop_unused(lines)
    meta = capture.meta
    big = {n for n, m in meta.items() if m[1].itemsize * math.prod(m[0]) >= _BIG}
    last: dict[str, int] = {}
    for i, names in enumerate(found):
        for name in names:
            last[name] = i
    if big:
        reused = capture._reuse(lines, last, big, frozen)
        found = [f if new is old else _RESULT.findall(new)
                 for f, new, old in zip(found, reused, lines)]
        lines = reused
    dies: dict[int, list] = {}
    for name, i in last.items():
        if name in big or name[0] == "t":
            dies.setdefault(i, []).append(name)
    out = []
    out_found = []
    for i, line in enumerate(lines):
        out.append(line)
        out_found.append(found[i])
        if i in dies and not line.startswith("return"):
            out.append("del " + ", ".join(sorted(dies[i])))
            out_found.append(dies[i])
    return out, out_found


_NEST_MAX = 8  # calls nested in one line at most


def _nest(lines: list, found: list) -> list:
    """A result read once, by the next line, is computed inside it: ``s2 = f(s1)`` and
    ``s3 = g(s2, e1)`` become ``s3 = g(f(s1), e1)`` (the same calls in the same order, fewer
    lines for Python to compile and fewer local variables to store). Only where nothing is
    called in that line before the result is read, so the order of the calls stays."""
    uses: dict[str, int] = {}  # found: the kernel results each line mentions
    for names in found:
        for name in names:
            uses[name] = uses.get(name, 0) + 1
    out: list = []
    depth: dict[str, int] = {}
    for line in lines:
        if out:
            name, sep, expr = out[-1].partition(" = ")
            if (sep and uses.get(name) == 2 and name[0] == "s" and name[1:].isdigit()
                    and depth.get(name, 1) < _NEST_MAX and not line.startswith(("del ", name))):
                at = _only_use(line, name)
                if at >= 0 and ")" not in line[:at]:
                    out[-1] = line[:at] + expr + line[at + len(name):]
                    target = out[-1].partition(" = ")[0]
                    depth[target] = depth.get(name, 1) + 1
                    continue
        out.append(line)
    return out


def _only_use(line: str, name: str) -> int:
    """Where ``name`` is in ``line`` as a whole word, if it is there once (else -1)."""
    found = -1
    at = line.find(name)
    while at >= 0:
        end = at + len(name)
        if (at == 0 or not (line[at - 1].isalnum() or line[at - 1] in "_.")) and (
                end == len(line) or not (line[end].isalnum() or line[end] == "_")):
            if found >= 0:
                return -1
            found = at
        at = line.find(name, end)
    return found


class Program:
    """One replayable capture: its recorded lines, its guards and what to compare; built (the
    lines simplified into Python source and compiled) only when the next capture agrees."""

    def __init__(self, raw: tuple, ns: dict, guards: list, temps: set = frozenset(),
                 capture: Capture | None = None) -> None:
        self.raw = raw  # the forward's lines and the backward's (or None), as recorded
        self.source = ""
        self.temps = temps  # names of tensors made during the call: not compared
        self.guard_source = ("def guard(A):\n    return (" + "\n            and ".join(guards)
                             + ")\n") if guards else ""
        self.ns = ns
        self._capture = capture  # what simplifying the lines reads (arrays' shapes and layouts)
        self.read: frozenset = frozenset()  # externals read from their tensors at replay
        self.lost = False  # a constant's value at first use was not kept (see Capture.read)

    def build(self) -> Program:
        """Write and make the Python functions (only for the capture that becomes the
        program)."""
        capture, self._capture = self._capture, None
        # Recordings of the same structure (a capture again after a guard failed, another
        # compiled function of the same code) have the same source: written once.
        self.source = _cached(capture.structure(self.raw), lambda: capture.source(self.raw))
        capture._ones_of = {}
        exec(_code(self.source, "<chainrule.compile>"), self.ns)  # noqa: S102
        if self.guard_source:
            exec(_code(self.guard_source, "<chainrule.compile guard>"), self.ns)  # noqa: S102
        self.replay = self.ns["replay"]
        self.guard = self.ns.get("guard", _unguarded)
        if on_build is not None:
            on_build(self, capture)
        return self

    def difference(self, other: Program) -> str | None:
        """What differs between two captures (None: the same computation, so it does not
        depend on values the guards do not see, and both simplify to the same source)."""
        if self.lost or other.lost:
            return "a constant's value, written in place (not kept)"
        if self.raw != other.raw:
            return "the kernels"
        if self.guard_source != other.guard_source:
            return "the guards"
        mine, theirs = self._capture, other._capture
        if (mine.meta != theirs.meta or mine.expands != theirs.expands) and (
                mine.source(self.raw) != theirs.source(other.raw)):  # shapes set by values
            return "the kernels"
        mine, theirs = self.ns, other.ns
        for key, value in mine.items():
            if key in ("replay", "guard", "backward") or key.startswith("__") or key in self.temps:
                continue
            if not _same(value, theirs.get(key)):
                return f"{key} ({type(value).__name__})"
        return None


# The fused back end (chainrule._fuse sets it): called with each program built and its capture;
# it may later replace the program's ``replay`` (and ``source``) and set ``fused``.
on_build: Callable | None = None


def _unguarded(tensors: list) -> bool:
    return True


# Generated source -> its code object, and a recording's structure (Capture.structure) -> its
# source: recordings of the same structure are written and compiled once.
_CODES: dict = {}
_CODES_MAX = 256


def _cached(key, make: Callable):
    """``_CODES[key]``, made by ``make()`` when missing (the oldest forgotten beyond a bound)."""
    value = _CODES.get(key)
    if value is None:
        if len(_CODES) >= _CODES_MAX:
            del _CODES[next(iter(_CODES))]
        value = _CODES[key] = make()
    return value


def _code(source: str, filename: str):
    """``compile(source)``, once per distinct source."""
    return _cached(source, lambda: builtins.compile(source, filename, "exec"))


def _same(a, b) -> bool:
    if type(a) is not type(b):
        return False
    if type(a) is _ndarray:
        return a.shape == b.shape and a.dtype == b.dtype and a.tobytes() == b.tobytes()
    if type(a) in (tuple, list):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b))
    if type(a) is dict:
        return a.keys() == b.keys() and all(_same(a[k], b[k]) for k in a)
    if type(a) in (int, float, bool, str, complex):
        return a == b or (a != a and b != b)  # NaN is NaN
    if isinstance(a, Tensor | _ndarray):
        return a is b
    if type(a) is types.FunctionType:  # a kernel made per call (a closure): same code and cells
        return a is b or (a.__code__ is b.__code__ and _same(
            tuple(c.cell_contents for c in a.__closure__ or ()),
            tuple(c.cell_contents for c in b.__closure__ or ())))
    if isinstance(a, OpNode):  # a spent node of an output: the same op is the same
        return a.op is b.op
    try:
        return a is b or bool(a == b)
    except Exception:  # noqa: BLE001 - no equality: only the same object is the same
        return False


class _Entry:
    __slots__ = ("last", "program", "captures")

    def __init__(self) -> None:
        self.last: Program | None = None
        self.program: Program | None = None
        self.captures = 0


_warned: set = set()


def _warn_once(fn, why: str) -> None:
    key = (getattr(fn, "__qualname__", repr(fn)), why)
    if key not in _warned:
        _warned.add(key)
        warnings.warn(f"chainrule.compile: {getattr(fn, '__qualname__', fn)} runs eagerly: "
                      f"{why}", RuntimeWarning, stacklevel=3)


_capturing = threading.Lock()
_MAX_CAPTURES = 4  # per guard set: captures that may disagree before giving up
_live: weakref.WeakSet = weakref.WeakSet()  # every compiled function, for reset()
_stance = "default"  # torch.compiler.set_stance: how compiled functions behave
_STANCES = ("default", "force_eager", "eager_on_recompile", "fail_on_recompile",
            "eager_then_compile", "aot_eager_then_compile")


class CompiledFunction:
    """``fn`` captured on its first calls and replayed on later calls that pass the guards."""

    def __init__(self, fn: Callable, recompile_limit: int = 8, dynamic: bool = True) -> None:
        functools.update_wrapper(self, fn)
        self._fn = fn
        self._fullgraph = False
        self._limit = recompile_limit
        self._dynamic = dynamic
        self._forget()
        _live.add(self)

    def _forget(self) -> None:
        """No programs and no captures: the next calls capture again."""
        self._programs: list[Program] = []
        self._by_key: dict = {}  # the non-tensor arguments, shapes and modes -> programs
        self._pending: dict = {}  # key -> _Entry while captures are being compared
        self._eager_reason: str | None = None
        self._why: str | None = None  # why the last capture did not become a program
        self._timing: dict = {}  # key -> [fastest capture, replays, replay seconds]
        self._captures = 0

    def __get__(self, obj, objtype=None):
        return self if obj is None else functools.partial(self, obj)

    @property
    def code(self) -> str:
        """The Python source of the programs captured so far."""
        return "\n".join(p.source for p in self._programs)

    def __call__(self, *args, **kwargs):
        if stack.capture is not None or self._eager_reason is not None:
            return self._fn(*args, **kwargs)  # inside another capture: part of it
        if _stance != "default":
            if _stance not in _STANCES:
                raise RuntimeError(f"invalid torch.compile stance '{_stance}'")
            if _stance == "force_eager":
                return self._fn(*args, **kwargs)
        tensors, key = _flatten_args(args, kwargs)
        for program in self._by_key.get(key, ()):
            try:
                ok = program.guard(tensors)
            except AttributeError:
                ok = False
            if ok:
                start = perf_counter()
                token = enter()
                try:
                    return program.replay(tensors)
                finally:
                    leave(token)
                    timing = self._timing[key]
                    timing[1] += 1
                    timing[2] += perf_counter() - start
        start = perf_counter()
        try:
            return self._capture(tensors, key, args, kwargs)
        finally:
            timing = self._timing.setdefault(key, [float("inf"), 0, 0.0])
            timing[0] = min(timing[0], perf_counter() - start)

    def _give_up(self, why: str) -> None:
        """The function runs eagerly from now on: one warning (fullgraph=True: an error)."""
        if self._fullgraph:
            raise RuntimeError(f"chainrule.compile(fullgraph=True): {why}")
        _warn_once(self._fn, why)

    @property
    def stats(self) -> dict:
        """Programs, captured and replayed calls, and for the most replayed guard set the
        fastest captured (eager) call and the mean replayed one, in seconds; ``fused``: the
        programs that replay fused kernels, if any."""
        replays = sum(t[1] for t in self._timing.values())
        out = {"programs": len(self._programs), "replays": replays,
               "captures": self._captures}
        if replays:
            best, count, seconds = max(self._timing.values(), key=lambda t: t[1])
            out.update(eager_seconds=best, replay_seconds=seconds / count)
        fused = sum(getattr(p, "fused", False) for p in self._programs)
        if fused:
            out["fused"] = fused  # programs that replay fused kernels (chainrule._fuse)
        return out

    def _capture(self, tensors: list, key, args, kwargs):
        # One capture at a time in the process (the slot is global; other threads' ops are
        # not recorded); a compiled function called meanwhile runs eagerly.
        with _capturing:
            if stack.capture is not None:
                return self._fn(*args, **kwargs)
            return self._record(tensors, key, args, kwargs)

    def _recompiles(self, key) -> int:
        """Recompilations with ``key`` added, counted as PyTorch counts them: one per guard set;
        with dynamic shapes, guard sets that differ only in tensor sizes (same ranks) count twice
        at most (PyTorch's static graph, then its dynamic one)."""
        if not self._dynamic:
            return len(self._pending) + len(self._programs) + 1
        ranks: dict = {}
        for k in (*self._pending, *self._by_key, key):
            ranks.setdefault(_sizes_erased(k), set()).add(k)
        return sum(min(len(keys), 2) for keys in ranks.values())

    def _record(self, tensors: list, key, args, kwargs):
        entry = self._pending.get(key)
        if entry is None:
            if _stance == "eager_on_recompile":
                return self._fn(*args, **kwargs)
            if _stance == "fail_on_recompile":
                code = getattr(self._fn, "__code__", None)
                raise RuntimeError(
                    "Detected recompile when torch.compile stance is 'fail_on_recompile'. "
                    + (f"filename: '{code.co_filename}', function name: '{code.co_name}', "
                       f"line number: {code.co_firstlineno}" if code else f"function: {self._fn}"))
            if self._recompiles(key) > self._limit:
                self._eager_reason = (f"recompile_limit ({self._limit}) reached; the guards "
                                      "keep failing")
                self._give_up(self._eager_reason)
                return self._fn(*args, **kwargs)
            entry = self._pending[key] = _Entry()
        cap = Capture(tensors, None if entry.last is None else entry.last.read)
        cap.function = self._fn
        self._captures += 1
        set_seam(CAPTURE, "capture", cap)
        push(CAPTURE)
        try:
            result = self._fn(*args, **kwargs)
            cap.capture_backward(result, tensors)
        finally:
            pop(CAPTURE)
            set_seam(CAPTURE, "capture", None)
        entry.captures += 1
        program = cap.finish(result, tensors)
        self._why = cap.broken
        if program is None:
            entry.last = None
            if not cap.broken.endswith("next call") or entry.captures >= _MAX_CAPTURES:
                self._pending.pop(key, None)
                self._eager_reason = cap.broken
                self._give_up(cap.broken)
            return result
        differs = "no earlier capture" if entry.last is None else program.difference(entry.last)
        self._why = differs and f"captures differ in {differs}"
        if differs is None:
            program.build()
            self._programs.append(program)
            self._by_key.setdefault(key, []).append(program)
            del self._pending[key]
        elif entry.captures >= _MAX_CAPTURES:
            self._pending.pop(key, None)
            self._eager_reason = (f"captures of consecutive calls differ in {differs} (the "
                                  "function depends on values the guards do not see)")
            self._give_up(self._eager_reason)
        else:
            entry.last = program
        return result


def _flatten_args(args: tuple, kwargs: dict) -> tuple[list, Any]:
    """The tensor arguments in order, and a hashable key of everything else."""
    tensors: list = []
    storage: dict[int, int] = {}  # id(the array owning a tensor's memory) -> first tensor's index

    def key_of(x):
        if isinstance(x, Tensor):
            a = x._data
            owner = id(a if a.base is None else a.base)
            first = storage.setdefault(owner, len(tensors))  # arguments sharing memory
            tensors.append(x)
            return ("T", a.shape, a.dtype, x._requires_grad, first)
        if type(x) in (tuple, list):
            return (type(x).__name__,) + tuple(key_of(v) for v in x)
        if type(x) is dict:
            return ("dict",) + tuple((k, key_of(v)) for k, v in x.items())
        if type(x) in (int, float, bool, str, type(None), complex):
            return (type(x).__name__, x)
        return ("id", id(x))

    key = key_of(args) + (("kw",) + tuple((k, key_of(v)) for k, v in kwargs.items()),)
    key += (grad_state.enabled, get_default_dtype())
    return tensors, key


def _sizes_erased(key):
    """A guard key with each tensor's shape replaced by its rank."""
    if type(key) is not tuple:
        return key
    if len(key) == 5 and key[0] == "T":
        return ("T", len(key[1])) + key[2:]
    return tuple(_sizes_erased(k) for k in key)


def is_compiling() -> bool:
    """True while chainrule.compile captures a call."""
    return stack.capture is not None


def reset() -> None:
    """Forget every compiled function's programs and captures, and the warnings given."""
    _warned.clear()
    for compiled in list(_live):
        compiled._forget()


def set_stance(stance: str) -> str:
    """Set how compiled functions behave ('force_eager': eagerly; 'eager_on_recompile' and
    'fail_on_recompile': eagerly, or raise, where a new guard set would be captured); returns
    the previous stance."""
    global _stance
    prior, _stance = _stance, stance
    return prior


def compile(model: Callable | None = None, *, fullgraph: bool = False,
            dynamic: bool | None = None, backend: str | Callable | None = None,
            mode: str | None = None, options: dict | None = None, name: str | None = None,
            disable: bool = False, recompile_limit: int | None = None,
            isolate_recompiles: bool = False, shapes_spec: Any = None):
    """Optimize ``model`` (a function or module) by capturing the kernels it runs and replaying
    them; ``backend``, ``mode``, ``options``, ``dynamic`` are accepted and not needed."""
    if model is None:
        return functools.partial(compile, fullgraph=fullgraph, dynamic=dynamic,
                                 backend=backend, mode=mode, options=options, name=name,
                                 disable=disable, recompile_limit=recompile_limit)
    if disable:
        return model
    if not callable(model):
        raise RuntimeError("compile: the model to compile must be callable, got "
                           f"{type(model).__name__}")
    limit = 8 if recompile_limit is None else recompile_limit
    compiled = CompiledFunction(model, limit, dynamic is not False)
    compiled._fullgraph = fullgraph
    return compiled
