"""Random programs for the differential tester (tests/test_random_programs.py).

A program is a few input tensors and a list of Python statements over them (``v3 = v1 @ v2.mT``,
``v4[1:] = v0``, ``v5.add_(v2)``), written once and run as code by chainrule and by torch, so a
failure prints the program itself. Statements are drawn from a table of op generators:
elementwise unary/binary ops with broadcasting, reductions, views and other shape ops, indexing,
matmul, a few ``nn.functional`` ops, in-place ops (``add_``, ``mul_``, ``v[...] = w``,
``index_put_``, under ``no_grad`` too) on clones and their views, and ``no_grad`` statements.
Each candidate statement is run by torch as it is drawn: one that torch rejects, or whose values
leave [-1e4, 1e4], is not kept, so programs are valid, finite and away from overflow. Where an op
has a restricted domain, the statement maps its argument into it (``torch.log(v1.square() +
0.5)``), as tests/op_db keeps inputs in each op's domain; an argument a rounding error away from
a kink (relu at 0, a near-tie of a max, a near-zero norm) is not used, since the two libraries'
rounding could land on different sides of it.

Not generated yet: ``Tensor.unfold`` and ``logcumsumexp`` (both are in chainrule now; adding them
to the statement list would change every seed's program).
"""

from __future__ import annotations

import itertools
import warnings
from dataclasses import dataclass, field

import numpy as np
import torch
from hypothesis import strategies as st

__all__ = ["Program", "programs", "run", "LIMIT"]

LIMIT = 1e4  # the largest magnitude a kept statement may produce
MAX_INPUTS = 4


@dataclass
class Program:
    """Inputs (name, values) and statements; ``outputs`` are the values no later statement
    reads (the program's results)."""

    inputs: list[tuple[str, np.ndarray]]
    lines: list[str]
    outputs: list[str]
    seed: int

    def source(self, check: str = "") -> str:
        """The program as a torch script (what a failure prints)."""
        head = [f"{n} = torch.tensor({a.tolist()!r}, dtype=torch.float64)" for n, a in self.inputs]
        tail = [f"outputs = [{', '.join(self.outputs)}]"]
        return "\n".join(head + self.lines + tail + ([f"# check: {check}"] if check else []))


def run(program: Program, lib, inputs: list) -> tuple[dict, list]:
    """Run the statements with ``lib`` as ``torch`` on the given input tensors; returns the
    namespace and the output tensors."""
    ns = {"torch": lib, "F": lib.nn.functional}
    ns.update(zip((n for n, _ in program.inputs), inputs))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for line in program.lines:
            exec(_compiled(line), ns)
    return ns, [ns[n] for n in program.outputs]


_CODE: dict[str, object] = {}


def _compiled(line: str):
    code = _CODE.get(line)
    if code is None:
        code = _CODE[line] = compile(line, line, "exec")
    return code


# ---- building a program -------------------------------------------------------------------------


@dataclass
class _Value:
    shape: tuple[int, ...]
    storage: int  # torch's storage pointer: values sharing it alias (views)
    writable: bool  # may be the target of an in-place op


@dataclass
class _Builder:
    draw: object
    rng: np.random.Generator
    ns: dict = field(default_factory=lambda: {"torch": torch, "F": torch.nn.functional})
    values: dict = field(default_factory=dict)
    inputs: list = field(default_factory=list)
    lines: list = field(default_factory=list)
    read: set = field(default_factory=set)
    frozen: set = field(default_factory=set)  # storages some op read (and may have saved)
    clones: set = field(default_factory=set)  # storages made by .clone(): in-place targets
    counter: itertools.count = field(default_factory=itertools.count)

    # -- choosing --
    def choice(self, options):
        return options[self.integer(0, len(options) - 1)]

    def flip(self) -> bool:
        return bool(self.integer(0, 1))

    def integer(self, low: int, high: int) -> int:
        return self.draw(st.integers(low, high))

    def value(self, pred=None) -> str | None:
        """A value, the newest one half of the time (so programs are deep as well as wide)."""
        names = [n for n, v in self.values.items() if pred is None or pred(v)]
        if not names:
            return None
        return names[-1] if self.flip() else self.choice(names)

    def shape(self, name: str) -> tuple[int, ...]:
        return self.values[name].shape

    def new_input(self, shape: tuple[int, ...]) -> str | None:
        if len(self.inputs) >= MAX_INPUTS:
            return None
        name = f"x{len(self.inputs)}"
        array = self.rng.uniform(-2, 2, shape)
        self.inputs.append((name, array))
        t = torch.tensor(array)
        self.ns[name] = t
        self.values[name] = _Value(shape, t.untyped_storage().data_ptr(), False)
        return name

    def operand(self, shape: tuple[int, ...], exclude: int | None = None) -> str | None:
        """A value broadcastable to ``shape`` (an existing one or a new input)."""
        fits = [
            n for n, v in self.values.items()
            if _broadcasts(v.shape, shape) and v.storage != exclude
        ]
        if fits and (len(self.inputs) >= MAX_INPUTS or self.flip()):
            return self.choice(fits)
        drop = self.integer(0, len(shape))
        small = tuple(1 if self.flip() else d for d in shape[drop:])
        return self.new_input(small)

    # -- adding a statement --
    def add(self, expr: str, reads: tuple[str, ...], kind: str = "op") -> bool:
        """``vN = expr`` (kind "op", "view", "multiview" or "clone"); False if torch refuses."""
        name = f"v{next(self.counter)}"
        line = f"{name} = {expr}"
        out = self._try(line, name)
        if out is None:
            return False
        source = self.values[reads[0]].storage
        storage = out.untyped_storage().data_ptr()
        aliased = kind in ("view", "multiview") and storage == source
        for r in reads if not aliased else reads[1:]:
            self.frozen.add(self.values[r].storage)
        if kind == "multiview":  # in-place writes to views of a split are errors: freeze
            self.frozen.add(storage)
        writable = aliased and self.values[reads[0]].writable and kind == "view"
        writable = writable and not any(s == 0 for s in out.stride()[:-1] or (1,))
        if kind == "clone":
            self.clones.add(storage)
            writable = True
        self.values[name] = _Value(tuple(out.shape), storage, writable)
        self.read.update(reads)
        self.lines.append(line)
        return True

    def add_inplace(self, line: str, target: str, reads: tuple[str, ...]) -> bool:
        """An in-place statement on ``target``; False if torch refuses (or the values grow)."""
        if self._try(line, target, inplace=True) is None:
            return False
        for r in reads:
            self.frozen.add(self.values[r].storage)
        self.read.update(reads)
        self.lines.append(line)
        return True

    def _try(self, line: str, name: str, inplace: bool = False):
        snapshot = {}
        if inplace:  # the storages (views follow), to undo a statement that is not kept
            snapshot = {
                n: v.clone() for n, v in self.ns.items()
                if isinstance(v, torch.Tensor) and v._base is None
            }
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                exec(line, self.ns)
            out = self.ns[name]
            ok = (
                isinstance(out, torch.Tensor)
                and out.dtype == torch.float64
                and 0 < out.numel() <= 64
                and bool(out.isfinite().all())
                and float(out.abs().max()) <= LIMIT
            )
        except Exception:  # torch rejects it: not a valid statement here
            ok = False
        if not ok:
            for n, v in snapshot.items():
                self.ns[n].copy_(v)
            if not inplace:
                self.ns.pop(name, None)
            return None
        return out

    def near(self, expr: str, points=(0.0,), tol: float = 1e-6) -> bool:
        """Whether an element of ``expr`` (code over the values) is within ``tol`` of a kink
        point without being on it: rounding could put the two libraries on different sides."""
        x = eval(expr, self.ns)
        return any(bool(((x - p).abs() < tol).logical_and(x != p).any()) for p in points)

    def targets(self) -> list[str]:
        return [
            n for n, v in self.values.items()
            if v.writable and v.storage in self.clones and v.storage not in self.frozen
        ]


def _broadcasts(small: tuple[int, ...], big: tuple[int, ...]) -> bool:
    if len(small) > len(big):
        return False
    return all(s in (1, b) for s, b in zip(small[::-1], big[::-1]))


def _dim(b: _Builder, name: str) -> int | None:
    n = len(b.shape(name))
    return b.integer(-n, n - 1) if n else None


def _index(b: _Builder, size: int, unique: bool) -> str:
    """A LongTensor literal of indices into a dim of ``size``."""
    if unique:
        k = b.integer(1, size)
        idx = b.draw(st.permutations(range(size)))[:k]
    else:
        idx = b.draw(st.lists(st.integers(0, size - 1), min_size=1, max_size=4))
    return f"torch.tensor({list(idx)})"


def _mask(b: _Builder, shape: tuple[int, ...]) -> str:
    bits = b.rng.random(shape) < 0.5
    return f"torch.tensor({bits.tolist()})"


# ---- the op table: each generator adds one statement or returns False -------------------------

UNARY = (
    "-{a}", "torch.sin({a})", "{a}.cos()", "torch.tanh({a})", "torch.sigmoid({a})",
    "torch.exp({a})", "{a}.expm1()", "torch.log({a}.square() + 0.5)",
    "torch.sqrt({a} * {a} + 0.25)",
    "torch.rsqrt({a}.square() + 0.5)", "torch.reciprocal({a}.square() + 0.5)", "{a} ** 2",
    "{a}.pow(3)", "torch.abs({a})", "torch.relu({a})", "F.gelu({a})", "F.silu({a})",
    "F.elu({a})", "F.softplus({a})", "F.leaky_relu({a}, 0.1)", "torch.atan({a})",
    "torch.asinh({a})", "torch.erf({a})", "torch.clamp({a}, -0.5, 0.5)", "{a}.clamp(min=0.1)",
    "torch.log1p({a}.abs())", "torch.floor({a})", "{a} * 2.5", "1.5 - {a}", "{a} / 3",
    "torch.where({a} > 0, {a}, {a}.sin())", "{a}.masked_fill({a} < 0, 0.5)",
    "torch.sinh({a}.tanh())", "F.logsigmoid({a})", "torch.nan_to_num({a})",
)

BINARY = (
    "{a} + {b}", "{a} - {b}", "{a} * {b}", "{a} / ({b}.square() + 0.5)", "torch.maximum({a}, {b})",
    "torch.minimum({a}, {b})", "torch.add({a}, {b}, alpha=2)", "torch.lerp({a}, {b}, 0.3)",
    "({a}.square() + 0.5) ** {b}", "torch.where({a} > {b}, {a}, {b})",
    "torch.atan2({a}, {b}.square() + 0.5)", "torch.hypot({a}, {b}.square() + 0.5)",
    "torch.addcmul({a}, {a}, {b}, value=0.5)", "{b} * {a} + {a}",
)


# Where the unary ops above are not smooth (their argument must not be a rounding error away).
KINKS = {
    "torch.abs({a})": (0.0,), "torch.relu({a})": (0.0,), "F.elu({a})": (0.0,),
    "F.leaky_relu({a}, 0.1)": (0.0,), "torch.clamp({a}, -0.5, 0.5)": (-0.5, 0.5),
    "{a}.clamp(min=0.1)": (0.1,), "torch.log1p({a}.abs())": (0.0,),
    "torch.where({a} > 0, {a}, {a}.sin())": (0.0,), "{a}.masked_fill({a} < 0, 0.5)": (0.0,),
}


def _unary(b: _Builder) -> bool:
    a = b.value()
    expr = b.choice(UNARY)
    if b.near(a, KINKS.get(expr, ())) or "floor" in expr and b.near(f"{a} - {a}.round()"):
        return False
    return b.add(expr.format(a=a), (a,))


def _binary(b: _Builder) -> bool:
    a = b.value()
    other = b.operand(b.shape(a))
    if other is None:
        return False
    expr = b.choice(BINARY)
    if b.flip() and "{b} * {a}" not in expr:  # the operands the other way round
        a, other = other, a
    if ("max" in expr or "min" in expr or ">" in expr) and b.near(f"{a} - {other}"):
        return False  # a near-tie
    return b.add(expr.format(a=a, b=other), (a, other))


def _reduction(b: _Builder) -> bool:
    a = b.value()
    d = _dim(b, a)
    keep = b.flip()
    full = ["{a}.sum()", "{a}.mean()", "{a}.amax()", "torch.prod({a})", "{a}.norm()",
            "torch.logsumexp({a}.flatten(), 0)"]
    along = [
        "{a}.sum({d}, keepdim={k})", "{a}.mean({d}, {k})", "torch.prod({a}, {d}, keepdim={k})",
        "{a}.amax({d}, keepdim={k})", "{a}.max({d}).values", "{a}.min({d}, keepdim={k})[0]",
        "torch.logsumexp({a}, {d}, keepdim={k})", "{a}.var({d}, keepdim={k})",
        "{a}.std({d})", "torch.cumsum({a}, {d})", "{a}.cumprod({d})", "torch.softmax({a}, {d})",
        "F.log_softmax({a}, dim={d})", "{a}.norm(dim={d})", "{a}.sum(({d},), keepdim={k})",
        "{a}.sort({d}).values", "torch.topk({a}, 1, {d}).values", "{a}.median({d}).values",
        "torch.cummax({a}, {d}).values", "{a}.kthvalue(1, {d}, keepdim={k}).values",
        "torch.linalg.vector_norm({a}, 3, {d})",
    ]
    expr = b.choice(full if d is None else full + along)
    if ("var" in expr or "std" in expr) and b.shape(a)[d] < 2:
        return False  # one element: no variance (nan), as an op_db domain would avoid
    # Near-ties of a maximum, and (near) zeros of a norm or standard deviation: kinks.
    if "amax()" in expr:
        if b.near(f"{a}.flatten().sort().values.diff()"):
            return False
    elif any(s in expr for s in ("max(", "min(", "sort", "topk", "median", "kthvalue")):
        if b.near(f"{a}.sort({d}).values.diff(dim={d})"):
            return False
    if "norm" in expr or "std" in expr:
        call = "norm()" if "norm()" in expr else "norm(dim={d})" if "norm" in expr else "std({d})"
        call = call.replace("norm", "abs().amax") if "vector_norm" in expr else call
        if float(eval(f"{a}.{call.format(d=d)}", b.ns).min()) < 1e-3:
            return False
    return b.add(expr.format(a=a, d=d, k=keep), (a,))


def _view(b: _Builder) -> bool:
    a = b.value()
    shape = b.shape(a)
    n = len(shape)
    exprs = ["{a}[None]", "{a}.unsqueeze({u})", "{a}.view(-1)", "{a}.reshape(-1)",
             "{a}.view_as({a})", "{a}[...]"]
    d, e = _dim(b, a), _dim(b, a)
    if n:
        exprs += [
            "{a}[{i}]", "{a}[{i}:]", "{a}[:{j}]", "{a}[..., {i}]", "{a}[:, ::2]" if n > 1 else
            "{a}[::2]", "{a}.select({d}, {i})", "{a}.narrow({d}, {i}, 1)", "{a}.squeeze()",
            "{a}.squeeze({d})", "{a}.flatten()", "{a}.movedim({d}, 0)",
            "{a}.expand(2, *{a}.shape)", "{a}.unbind({d})[{i}]",
            "{a}.split(1, {d})[{i}]", "{a}.chunk(2, {d})[0]", "{a}.tensor_split(2, {d})[0]",
            "{a}.unflatten({d}, ({s}, 1))", "{a}.detach()",
        ]
    if n >= 2:
        perm = b.draw(st.permutations(range(n)))
        exprs += ["{a}.transpose({d}, {e})", "{a}.mT", "{a}.permute({p})", "{a}.diagonal()",
                  "{a}[1:, :1]", "{a}.reshape({r})", "{a}.view({r})", "{a}.diagonal(1, 0, -1)"]
    if n == 2:
        exprs += ["{a}.t()", "{a}.T"]
    else:
        perm = ()
    expr = b.choice(exprs)
    fmt = dict(a=a, u=b.integer(-n - 1, n), d=d, e=e, p=tuple(perm),
               i=b.integer(0, shape[d] - 1) if n else 0, j=b.integer(1, 3),
               s=shape[d] if n else 1,
               r=(shape[0] * shape[1], *shape[2:]) if n >= 2 else ())
    multi = ("unbind", "split", "chunk", "detach")  # no in-place writes through these
    kind = "multiview" if any(s in expr for s in multi) else "view"
    return b.add(expr.format(**fmt), (a,), kind)


def _shape_op(b: _Builder) -> bool:
    a = b.value()
    shape = b.shape(a)
    n = len(shape)
    if not n:
        return b.add(f"{a}.reshape(1).repeat(3)", (a,))
    d = _dim(b, a)
    expr = b.choice([
        "torch.flip({a}, ({d},))", "{a}.roll(1, {d})", "{a}.repeat({reps})", "{a}.contiguous()",
        "torch.tril({a})" if n >= 2 else "{a}.flip(0)", "{a}.triu(1)" if n >= 2 else "{a} + 0",
        "torch.cat([{a}, {b}], {d})", "torch.stack([{a}, {b}], {d})",
        "{a}.repeat_interleave(2, {d})", "torch.diag_embed({a})", "F.pad({a}, (1, 2))",
        "torch.rot90({a}, 1, (0, 1))" if n >= 2 else "{a}.roll(-1, 0)",
        "torch.cumsum({a}, {d}).flip({d})", "{a}.narrow({d}, 0, 1).clone()",
    ])
    reads = (a,)
    other = None
    if "{b}" in expr:
        same = [m for m, v in b.values.items() if v.shape == shape]
        other = b.choice(same) if same and b.flip() else b.new_input(shape)
        if other is None:
            return False
        reads = (a, other)
    reps = tuple(b.integer(1, 2) for _ in range(n))
    return b.add(expr.format(a=a, b=other, d=d, reps=reps), reads)


def _indexing(b: _Builder) -> bool:
    a = b.value(lambda v: len(v.shape) >= 1)
    if a is None:
        return False
    shape = b.shape(a)
    d = b.integer(0, len(shape) - 1)
    idx = _index(b, shape[d], unique=False)
    uidx = _index(b, shape[d], unique=True)
    mask = _mask(b, shape)
    lead = ":, " * d
    expr = b.choice([
        f"{a}[{lead}{idx}]", f"{a}.index_select({d}, {idx})", f"{a}[{_mask(b, shape)}]",
        f"{a}.masked_fill({_mask(b, shape)}, 0.25)", f"torch.take({a}, {idx})",
        f"torch.where({_mask(b, shape)}, {a}, -{a})",
        f"torch.gather({a}, {d}, {_gather_index(b, shape, d)})",
        f"{a}.scatter_add({d}, {_gather_index(b, shape, d)}, {a}.cos())",
        f"{a}.index_add({d}, {uidx}, {a}.index_select({d}, {uidx}).sin())",
        f"{a}.index_copy({d}, {uidx}, {a}.index_select({d}, {uidx}) * 2)",
        f"{a}.index_fill({d}, {idx}, -0.5)", f"{a}.masked_scatter({mask}, {a}.flip(0) * 3)",
        f"{a}.index_put(({idx},), {a}[{idx}].exp(), accumulate=True)",
    ])
    return b.add(expr, (a,))


def _gather_index(b: _Builder, shape: tuple[int, ...], d: int) -> str:
    index = b.rng.integers(0, shape[d], shape)
    return f"torch.tensor({index.tolist()})"


def _matmul(b: _Builder) -> bool:
    a = b.value(lambda v: len(v.shape) >= 1)
    if a is None:
        return False
    shape = b.shape(a)
    k = shape[-1]
    kind = b.choice(["matmul", "self", "linear", "mv"])
    if kind == "self":
        exprs = [f"{a} @ {a}.mT", f"{a}.mT @ {a}", f"torch.einsum('...ij,...kj->...ik', {a}, {a})"]
        if len(shape) == 3:
            exprs += [f"torch.bmm({a}, {a}.mT)", f"torch.baddbmm({a} @ {a}.mT, {a}, {a}.mT)"]
        if len(shape) == 2:
            exprs += [f"torch.addmm({a}, {a}, {a}.mT @ {a})", f"torch.trace({a} @ {a}.mT)"]
        if len(shape) < 2:
            exprs = [f"torch.dot({a}, {a})", f"torch.einsum('...i,...i->...', {a}, {a})",
                     f"torch.outer({a}, {a})"]
        expr = b.choice(exprs)
        return b.add(expr, (a,))
    m = b.integer(1, 3)
    want = {"matmul": (k, m) if b.flip() else (k,), "linear": (m, k), "mv": (k,)}
    fits = [n for n, v in b.values.items() if v.shape == want[kind]]
    other = b.choice(fits) if fits and b.flip() else b.new_input(want[kind])
    if other is None:
        return False
    if kind == "linear":
        return b.add(f"F.linear({a}, {other})", (a, other))
    if kind == "mv":
        if len(shape) != 2:
            return False
        return b.add(f"torch.mv({a}, {other})", (a, other))
    return b.add(f"torch.matmul({a}, {other})" if b.flip() else f"{a} @ {other}",
                 (a, other))


def _nn(b: _Builder) -> bool:
    a = b.value(lambda v: len(v.shape) >= 1)
    if a is None:
        return False
    shape = b.shape(a)
    expr = b.choice([
        f"F.layer_norm({a}, ({shape[-1]},))", f"F.normalize({a}, dim=-1)",
        f"F.softmax({a}, dim=-1)", f"F.mse_loss({a}, {a}.tanh())",
        f"F.hardtanh({a}, -0.5, 0.5)", f"F.mse_loss({a}, {a}.flip(-1), reduction='sum')",
        f"F.softmin({a}, -1)", f"F.glu({a}, -1)", f"F.avg_pool1d({a}, 2)" if len(shape) in (2, 3)
        else f"F.tanhshrink({a})", f"F.cross_entropy({a}, target)"
        if len(shape) == 2 else f"F.log_softmax({a}, 0)",
        f"F.conv1d({a}, weight)" if len(shape) == 3 else f"F.softsign({a})",
        f"F.huber_loss({a}, {a}.sin(), reduction='sum')", f"F.mish({a})",
    ])
    if "target" in expr:
        expr = expr.replace("target", _target(b, shape))
    if "weight" in expr:
        weight = _weight(b, shape)
        if weight is None:
            return False
        expr = expr.replace("weight", weight)
    if "huber" in expr and b.near(f"{a} - {a}.sin()", (-1.0, 1.0)):
        return False
    if "layer_norm" in expr and (shape[-1] < 2 or float(b.ns[a].std(-1).min()) < 1e-3):
        return False  # (nearly) constant rows: their gradient is eps-dominated
    if "normalize" in expr and float(b.ns[a].norm(dim=-1).min()) < 1e-3:
        return False  # (nearly) zero rows: the norm's kink
    if "hardtanh" in expr and b.near(a, (-0.5, 0.5)):
        return False
    return b.add(expr, (a,))


def _target(b: _Builder, shape: tuple[int, ...]) -> str:
    return f"torch.tensor({b.rng.integers(0, shape[1], shape[0]).tolist()})"


def _weight(b: _Builder, shape: tuple[int, ...]) -> str | None:
    """A new input: a conv1d weight of 2 output channels and kernel 1 or 2 for ``shape``."""
    return b.new_input((2, shape[1], min(shape[2], 1 + b.integer(0, 1))))


def _no_grad(b: _Builder) -> bool:
    a = b.value()
    expr = b.choice(["{a} * 2", "{a}.sin()", "{a}[..., :1].clone()"])
    name = f"v{next(b.counter)}"
    line = f"with torch.no_grad(): {name} = {expr.format(a=a)}"
    if b._try(line, name) is None:
        return False
    out = b.ns[name]
    b.values[name] = _Value(tuple(out.shape), out.untyped_storage().data_ptr(), False)
    b.read.add(a)
    b.frozen.add(b.values[a].storage)
    b.lines.append(line)
    return True


def _clone(b: _Builder) -> bool:
    a = b.value()
    return b.add(f"{a}.clone()", (a,), "clone")


def _inplace(b: _Builder) -> bool:
    targets = b.targets()
    if not targets:
        return _clone(b)
    t = b.choice(targets)
    shape = b.shape(t)
    n = len(shape)
    kind = b.choice(["add_", "mul_", "sub_", "iadd", "setitem", "setitem_all", "index_put",
                     "accumulate", "unary_", "copy_", "masked_fill_", "slice_op"])
    own = b.values[t].storage
    if kind in ("add_", "mul_", "sub_", "iadd", "copy_", "setitem_all"):
        other = b.operand(shape, exclude=own)
        if other is None:
            return False
        line = {
            "add_": b.choice([f"{t}.add_({other})", f"{t}.addcmul_({other}, {other}, value=2)",
                              f"{t}.lerp_({other}, 0.25)"]),
            "mul_": f"{t}.mul_({other})",
            "sub_": f"{t}.sub_({other}, alpha=0.5)", "iadd": f"{t} += {other}",
            "copy_": f"{t}.copy_({other})",
            "setitem_all": f"{t}[{', '.join([':'] * n) or '...'}] = {other}",
        }[kind]
        return b.add_inplace(line, t, (other,))
    if kind == "unary_":
        line = b.choice([f"{t}.sin_()", f"{t}.mul_(2)", f"{t}.clamp_(-1, 1)", f"{t}.zero_()",
                         f"{t}.tanh_()", f"{t}.add_(1.5)", f"{t}.exp_()", f"{t}.neg_()",
                         f"{t}.sigmoid_()", f"{t}.pow_(2)", f"{t}.fill_(0.25)", f"{t}.relu_()",
                         f"{t}.abs_()", f"{t}.div_({t}.detach().square() + 1)",
                         f"with torch.no_grad(): {t}.mul_(2)", f"{t}.data.add_(0.5)"])
        if ("clamp" in line and b.near(t, (-1.0, 1.0))
                or ("relu" in line or "abs" in line) and b.near(t)):
            return False
        return b.add_inplace(line, t, ())
    if not n:
        return False
    d = b.integer(0, n - 1)
    lead = ":, " * d
    if kind == "masked_fill_":
        line = b.choice([f"{t}.masked_fill_({_mask(b, shape)}, -0.5)",
                         f"{t}[{_mask(b, shape)}] = 0.5",
                         f"{t}.index_fill_({d}, torch.tensor([0]), 1.5)"])
        return b.add_inplace(line, t, ())
    if kind == "slice_op":
        i = b.integer(0, shape[d] - 1)
        line = b.choice([f"{t}[{lead}{i}] *= 2", f"{t}[{lead}{i}:] += 1",
                         f"{t}[{lead}{i}].mul_(3)"])
        return b.add_inplace(line, t, ())
    if kind == "setitem":
        i = b.integer(0, shape[d] - 1)
        key = b.choice([f"{lead}{i}", f"{lead}{i}:", f"{lead}:{i + 1}"])
        target_shape = tuple(b.ns[t][eval(f"np.s_[{key}]")].shape)
        other = b.operand(target_shape, exclude=own)
        if other is None:
            return False
        return b.add_inplace(f"{t}[{key}] = {other}", t, (other,))
    idx = _index(b, shape[d], unique=kind == "index_put")
    count = len(eval(idx.replace("torch.tensor", "")))
    value_shape = shape[:d] + (count,) + shape[d + 1 :]
    other = b.operand(value_shape, exclude=own)
    if other is None:
        return False
    if kind == "index_put" and d == 0:
        line = b.choice([f"{t}[{idx}] = {other}", f"{t}.index_put_(({idx},), {other})"])
    elif kind == "index_put":
        line = f"{t}[{lead}{idx}] = {other}"
    else:
        if d:
            return False
        line = f"{t}.index_put_(({idx},), {other}, accumulate=True)"
    return b.add_inplace(line, t, (other,))


OPS = (
    ("unary", _unary, 4), ("binary", _binary, 4), ("reduction", _reduction, 2),
    ("view", _view, 3), ("shape", _shape_op, 1), ("indexing", _indexing, 1),
    ("matmul", _matmul, 1), ("nn", _nn, 1), ("clone", _clone, 1), ("inplace", _inplace, 3),
    ("no_grad", _no_grad, 1),
)
_WEIGHTED = tuple(name for name, _, w in OPS for _ in range(w))
_BY_NAME = {name: fn for name, fn, _ in OPS}


@st.composite
def programs(draw, min_ops: int = 3, max_ops: int = 25) -> Program:
    """A random program of ``min_ops`` to ``max_ops`` statements."""
    seed = draw(st.integers(0, 2**32 - 1))
    return build(draw, np.random.default_rng(seed), seed, min_ops, max_ops)


def build(draw, rng: np.random.Generator, seed, min_ops: int, max_ops: int, max_ndim: int = 3,
          max_size: int = 4) -> Program:
    """The program ``draw`` (hypothesis' or a stand-in) and ``rng`` choose: one or two inputs
    of up to ``max_ndim`` dims of sizes up to ``max_size``, then the statements."""
    b = _Builder(draw, rng)
    for _ in range(draw(st.integers(1, 2))):
        ndim = draw(st.integers(0, max_ndim))
        b.new_input(tuple(draw(st.integers(1, max_size)) for _ in range(ndim)))
    target = draw(st.integers(min_ops, max_ops))
    attempts = 0
    while len(b.lines) < target and attempts < 4 * max_ops:
        attempts += 1
        _BY_NAME[b.choice(_WEIGHTED)](b)
    outputs = [n for n in b.values if n not in b.read and n.startswith("v")]
    return Program(b.inputs, b.lines, outputs or [next(reversed(b.values))], seed)
