"""chainrule.compile's fused back end (optional: numba, the ``fuse`` extra).

A built program's runs of elementwise kernel lines over arrays of one shape (0-d and size-1
operands and Python numbers broadcast), with full sums and means of their values, become one
numba kernel each: a loop over the elements in which the run's intermediates are scalars; the
values read after the run (outputs, saved for backward, ``.grad``) are written to new arrays.
Lines it cannot translate stay Python lines around the kernel calls.

Nothing of it runs on the calling thread: a worker thread translates the program, a subprocess
compiles the kernels into numba's on-disk cache (``cache_dir()``; a later process with the same
program only loads them), and the worker loads them; replays run unfused meanwhile. Once loaded,
the program's replays alternate between the unfused and the fused function for ``ROUNDS`` calls
each and keep the fused one only if clearly faster (``_Chooser``, ``MARGIN``).
"""

from __future__ import annotations

import ast
import builtins
import hashlib
import importlib.util
import math
import os
import statistics
import subprocess
import sys
import threading
import weakref
from time import perf_counter

from . import _compile
from ._backend import xp
from ._threads import ufunc_of
from .ops.elementwise import RELU, RELU_BACKWARD, SIGMOID_BACKWARD, TANH_BACKWARD
from .ops.reduction import MEAN, SUM
from .ops.shape import EXPAND

__all__ = ["enabled", "wait", "cache_dir"]

# On unless CHAINRULE_FUSE=0 (also torch.compiler.config.fuse); without numba, nothing happens.
enabled: bool = os.environ.get("CHAINRULE_FUSE", "1") != "0"
MIN_OPS = 3  # kernel lines a run needs to become a kernel
# Arrays of this many bytes or more are not fused: NumPy's SIMD loops tie or win there (W6's
# 4M float32 exp/sin/cos: 78-88 ms a step fused, 74-84 unfused), and the unfused program frees
# them after their last use (eager's memory peak).
_BIG = _compile._BIG
ROUNDS = 5  # timed replays of each kind before the choice
MARGIN = 0.9  # the fused replay's median must be below this times the unfused one's
_force: bool | None = None  # tests: choose the fused replay (True) or not (False) unmeasured
counts = {"programs": 0, "kernels": 0, "compiled": 0, "loaded": 0, "failed": 0}
errors: list[str] = []  # why the last programs could not be fused

_FLOATS = ("float32", "float64")
_OPERATORS = {"add": "({0} + {1})", "subtract": "({0} - {1})", "multiply": "({0} * {1})",
              "divide": "({0} / {1})", "negative": "(-{0})", "power": "({0} ** {1})",
              "absolute": "abs({0})", "square": "({0} * {0})", "greater": "({0} > {1})",
              "greater_equal": "({0} >= {1})", "less": "({0} < {1})", "less_equal": "({0} <= {1})",
              "equal": "({0} == {1})", "not_equal": "({0} != {1})"}
_MATH = ("exp", "exp2", "expm1", "log", "log2", "log10", "log1p", "sqrt", "sin", "cos", "tan",
         "arcsin", "arccos", "arctan", "sinh", "cosh", "tanh", "arcsinh", "arccosh", "arctanh",
         "maximum", "minimum", "reciprocal", "floor", "ceil", "trunc")
# Op kernels that are not ufuncs, as scalar code ({one}, {zero}: constants of the dtype); their
# operands and result have one float dtype.
_HELPERS = {
    TANH_BACKWARD.forward: "({0} * ({one} - {1} * {1}))",
    SIGMOID_BACKWARD.forward: "({0} * ({1} * ({one} - {1})))",
    RELU_BACKWARD.forward: "({0} if {1} > {zero} else {zero})",
    RELU.forward: "np.maximum({0}, {zero})",
}
_REDUCTIONS = {SUM.forward: "sum", MEAN.forward: "mean"}


def cache_dir() -> str:
    """Where compiled kernels are kept: $CHAINRULE_CACHE_DIR, else chainrule/fused in the
    user's cache directory ($XDG_CACHE_HOME or ~/.cache)."""
    root = os.environ.get("CHAINRULE_CACHE_DIR")
    if not root:
        base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
        root = os.path.join(base, "chainrule")
    return os.path.join(root, "fused")


# ---- translation ------------------------------------------------------------------------------


class _Cell:
    """An array of the run: its current scalar variable, dtype and where it comes from."""

    __slots__ = ("var", "dtype", "kind", "source")

    def __init__(self, var: str, dtype, kind: str, source: str = "") -> None:
        self.var, self.dtype, self.kind, self.source = var, dtype, kind, source
        # kind: "made" (computed in the loop), "input" (read per element), "scalar" (a size-1
        # input read once), "view" (a size-1 input broadcast: ``source`` makes it again after
        # the run), "sum" / "mean" (an accumulator: known only after the loop)


class _Run:
    """Consecutive kernel lines over one shape, becoming one loop."""

    def __init__(self, shape: tuple) -> None:
        self.shape = shape
        self.cells: dict[str, _Cell] = {}  # name in the program -> its cell (aliases share)
        self.inputs: list[tuple[str, _Cell]] = []  # (expression, cell)
        self.pre: list[str] = []
        self.body: list[str] = []
        self.names: list[str] = []  # names the run defines, in order
        self.dels: list[str] = []
        self.lines: list[str] = []  # the lines taken, kept as they are if the run is short
        self.ops = 0
        self.n = 0  # variables made

    def new(self, prefix: str) -> str:
        self.n += 1
        return f"{prefix}{self.n}"


def _find(table: dict, f):
    try:
        return table.get(f)
    except TypeError:  # an unhashable kernel object: none of these
        return None


def _literal(value) -> str:
    if type(value) is bool:
        return repr(value)
    value = float(value)
    if math.isfinite(value):
        return repr(value)
    return "np.nan" if value != value else ("np.inf" if value > 0 else "-np.inf")


def _cast(expr: str, have, want) -> str:
    if have == want:
        return expr
    if want == xp.bool_:
        return f"bool({expr})"
    return f"np.{want}({expr})"


def _scalar(value) -> bool:
    return type(value) in (int, float, bool) or (
        isinstance(value, xp.generic) and value.dtype.name in (*_FLOATS, "bool"))


class _Translator:
    """Rewrites one function's lines, runs replaced by kernel calls (sources in ``kernels``)."""

    def __init__(self, meta: dict, ns: dict, kernels: list) -> None:
        self.meta, self.ns, self.kernels = meta, ns, kernels

    def lines(self, lines: list) -> list:
        self.last: dict[str, int] = {}
        for i, line in enumerate(lines):
            for word in _compile._WORD.findall(line):
                self.last[word] = i
        out: list = []
        run: _Run | None = None
        for i, line in enumerate(lines):
            if run is not None and self._take(run, line):
                run.lines.append(line)
                continue
            if run is not None:
                out += self._close(run, i)
            run = self._start(line)
            if run is None:
                out.append(line)
        if run is not None:
            out += self._close(run, len(lines))
        return out

    def _start(self, line: str) -> _Run | None:
        target = line.partition(" = ")[0]
        m = self.meta.get(target)
        if m is None or not line.startswith("s") or m[1].itemsize * math.prod(m[0]) >= _BIG:
            return None
        run = _Run(m[0])
        if not self._take(run, line):
            return None
        run.lines.append(line)
        return run

    # -- one line -------------------------------------------------------------------------------

    def _take(self, run: _Run, line: str) -> bool:
        """Add ``line`` to ``run`` if it can be computed in the loop."""
        if line.startswith("del "):
            for name in line[4:].split(", "):
                if name not in run.names:
                    run.dels.append(name)
            return True
        try:
            node = ast.parse(line).body[0]
        except SyntaxError:
            return False
        if type(node) is ast.Assign and len(node.targets) == 1 and type(
                node.targets[0]) is ast.Name:
            return self._assign(run, node.targets[0].id, node.value)
        if type(node) is ast.Expr and type(node.value) is ast.Call:  # f(a, b, out=a)
            call = node.value
            out = [k.value for k in call.keywords if k.arg == "out"]
            if len(call.keywords) != 1 or not out or type(out[0]) is not ast.Name:
                return False
            cell = run.cells.get(out[0].id)
            if cell is None or cell.kind != "made":
                return False
            made = self._call(run, call.func, call.args, cell.dtype)
            if made is None:
                return False
            cell.var = made
            return True
        return False

    def _assign(self, run: _Run, target: str, value) -> bool:
        m = self.meta.get(target)
        if m is None or m[1].name not in (*_FLOATS, "bool"):
            return False
        if type(value) is ast.Call and type(value.func) is ast.Name and (
                value.func.id == "asarray" and len(value.args) == 1):
            value = value.args[0]
        if type(value) is not ast.Call:  # sX = sY: another name of the same array
            cell = self._operand(run, value)
            if type(cell) is not _Cell or (cell.kind in ("made", "input", "view")
                                           and m[0] != run.shape):
                return False
            run.cells[target] = cell
            run.names.append(target)
            return True
        if type(value.func) is not ast.Name or any(
                k.arg not in ("out", "shape") for k in value.keywords):
            return False
        f = self.ns.get(value.func.id)
        kind = _find(_REDUCTIONS, f)
        if kind is not None:
            if m[0] != () or len(value.args) != 1 or value.keywords:
                return False
            cell = self._operand(run, value.args[0])
            if type(cell) is not _Cell or cell.kind not in ("made", "input", "view") or (
                    cell.dtype != m[1] or m[1].name not in _FLOATS):
                return False
            acc = _Cell(run.new("acc"), m[1], kind)
            run.pre.append(f"{acc.var} = 0.0")
            run.body.append(f"{acc.var} += {cell.var}")
        elif f is EXPAND.forward:  # a size-1 array broadcast: its one value
            if m[0] != run.shape or len(value.args) != 1:
                return False
            source = self._operand(run, value.args[0])
            if type(source) is not _Cell or source.kind != "scalar" or source.dtype != m[1]:
                return False
            acc = _Cell(source.var, m[1], "view", ast.unparse(value))  # made again after
        else:
            if m[0] != run.shape or any(k.arg == "shape" for k in value.keywords):
                return False
            var = self._call(run, value.func, value.args, m[1])
            if var is None:
                return False
            acc = _Cell(var, m[1], "made")
        run.cells[target] = acc
        run.names.append(target)
        run.ops += 1
        return True

    def _call(self, run: _Run, func, args: list, dtype) -> str | None:
        """The scalar variable of ``func(*args)``, of ``dtype``, computed in the loop (None: not
        here)."""
        f = self.ns.get(func.id) if type(func) is ast.Name else None
        if f is None:
            return None
        operands = [self._operand(run, a) for a in args]
        if any(o is None or (type(o) is _Cell and o.kind in ("sum", "mean")) for o in operands):
            return None
        u = ufunc_of(f)
        if u is not None:
            name = u.__name__
            if u.nout != 1 or u.nin != len(args) or (name not in _OPERATORS and name not in _MATH):
                return None
            try:
                loop = u.resolve_dtypes(tuple(o.dtype if type(o) is _Cell else (
                    o.dtype if isinstance(o, xp.generic) else type(o)) for o in operands)
                    + (None,))
            except (TypeError, ValueError):
                return None
            if loop[-1] != dtype:
                return None
            parts = [self._as(o, want) for o, want in zip(operands, loop)]
            expr = (_OPERATORS[name] if name in _OPERATORS else f"np.{name}("
                    + ", ".join(f"{{{i}}}" for i in range(len(parts))) + ")").format(*parts)
        else:
            template = _find(_HELPERS, f)
            if template is None or dtype.name not in _FLOATS or any(
                    type(o) is _Cell and o.dtype != dtype for o in operands):
                return None
            parts = [self._as(o, dtype) for o in operands]
            expr = template.format(*parts, one=f"np.{dtype}(1.0)", zero=f"np.{dtype}(0.0)")
        var = run.new("v")
        run.body.append(f"{var} = {_cast(expr, None, dtype)}" if dtype.name in _FLOATS
                        else f"{var} = {expr}")
        return var

    def _as(self, operand, dtype) -> str:
        if type(operand) is _Cell:
            return _cast(operand.var, operand.dtype, dtype)
        return f"np.{dtype}({_literal(operand)})" if dtype != xp.bool_ else repr(bool(operand))

    def _operand(self, run: _Run, node):
        """A cell of the run, a Python or NumPy number, or None (not usable in the loop)."""
        if type(node) is ast.Constant:
            return node.value if type(node.value) in (int, float, bool) else None
        if type(node) is ast.UnaryOp and type(node.op) is ast.USub and type(
                node.operand) is ast.Constant and type(node.operand.value) in (int, float):
            return -node.operand.value
        text = ast.unparse(node)
        cell = run.cells.get(text)
        if cell is not None:
            return cell
        if type(node) is ast.Name and text not in self.meta and _scalar(self.ns.get(text)):
            return self.ns[text]
        m = self.meta.get(text)
        if m is None or m[1].name not in (*_FLOATS, "bool"):
            return None
        if m[0] == run.shape:
            kind = "input"
        elif math.prod(m[0]) == 1:
            kind = "scalar"
        else:
            return None
        cell = run.cells[text] = _Cell(run.new("x"), m[1], kind, text)
        param = f"i{len(run.inputs)}"
        run.inputs.append((text, cell))
        if kind == "input":
            run.body.insert(0, f"{cell.var} = {param}[j]")
        else:
            run.pre.insert(0, f"{cell.var} = {param}[()]")
        return cell

    # -- the end of a run -----------------------------------------------------------------------

    def _close(self, run: _Run, end: int) -> list:
        """The lines replacing ``run`` (ending before line ``end``)."""
        if run.ops < MIN_OPS:
            return run.lines
        k = len(self.kernels)
        shape, n = run.shape, math.prod(run.shape)
        flat = len(shape) != 1
        outputs: list[tuple[str, _Cell]] = []
        after: list[str] = []
        written: dict[int, str] = {}
        for name in run.names:
            if self.last.get(name, -1) < end:
                continue  # not read after the run
            cell = run.cells[name]
            if id(cell) in written:
                after.append(f"{name} = {written[id(cell)]}")
            elif cell.kind in ("input", "scalar", "view"):  # the array as the run found it
                after.append(f"{name} = {cell.source}")
            else:
                written[id(cell)] = name
                outputs.append((name, cell))
        if not outputs:
            return run.lines
        params = ["n"] + [f"i{i}" for i in range(len(run.inputs))] + [
            f"o{i}" for i in range(len(outputs))]
        types = ["T.intp"]
        args = [str(n)]
        for text, cell in run.inputs:
            nd = 1 if cell.kind == "input" else 0
            types.append(f"A(T.{_numba_name(cell.dtype)}, {nd}, True)")
            m = self.meta[text]
            args.append(text if len(m[0]) == nd else f"{text}.reshape({'-1' if nd else '()'})")
        lines = []
        tail = []
        for i, (name, cell) in enumerate(outputs):
            reduced = cell.kind in ("sum", "mean")
            nd = 0 if reduced else 1
            types.append(f"A(T.{_numba_name(cell.dtype)}, {nd}, False)")
            lines.append(f"{name} = empty({() if reduced else shape!r}, {_numpy_name(cell.dtype)})")
            args.append(f"{name}.reshape(-1)" if flat and not reduced else name)
            if reduced:
                total = cell.var if cell.kind == "sum" else f"{cell.var} / n"
                tail.append(f"o{i}[()] = np.{cell.dtype}({total})")
            else:
                run.body.append(f"o{i}[j] = {cell.var}")
        body = [f"def _fused{k}({', '.join(params)}):"] + [f"    {s}" for s in run.pre]
        body += ["    for j in range(n):"] + [f"        {s}" for s in run.body]
        body += [f"    {s}" for s in tail]
        body.append(f"fused{k} = njit(T.void({', '.join(types)}), cache=True, "
                    f"error_model='numpy')(_fused{k})")
        self.kernels.append("\n".join(body))
        lines.append(f"fused{k}({', '.join(args)})")
        dels = [d for d in run.dels if d not in run.names]
        return lines + after + ([f"del {', '.join(dels)}"] if dels else [])


def _numba_name(dtype) -> str:
    return "boolean" if dtype == xp.bool_ else dtype.name


def _numpy_name(dtype) -> str:
    return "bool_" if dtype == xp.bool_ else dtype.name


_HEADER = ("# chainrule.compile's fused kernels (generated)\n"
           "import numpy as np\nfrom numba import njit\nfrom numba.core import types as T\n\n\n"
           "def A(dtype, ndim, readonly):\n"
           "    return T.Array(dtype, ndim, 'A', readonly=readonly)\n")


def translate(program, capture) -> tuple[str, str] | None:
    """The fused source of ``program`` (its ``replay`` and ``backward``) and the numba module
    of its kernels, or None when no run is worth a kernel."""
    kernels: list[str] = []
    parts = []
    for head, raw in zip(("def replay(A):", "def backward(S, G):"), program.raw):
        if raw is None:
            continue
        lines, _ = _compile._free_dead(raw, capture)
        lines = _Translator(capture.meta, program.ns, kernels).lines(lines)
        lines = _compile._nest(lines, [_compile._RESULT.findall(line) for line in lines])
        parts.append(head + "\n" + "".join(f"    {line}\n" for line in lines))
    if not kernels:
        return None
    return "\n\n".join(parts), _HEADER + "".join(f"\n\n{k}\n" for k in kernels)


# ---- compiling and loading ------------------------------------------------------------------

# What the compiling subprocess runs: import the kernels' module (numba compiles at import and
# writes its cache beside the file). The same import in this process then only loads.
_LOADER = ("import importlib.util, sys\n"
           "spec = importlib.util.spec_from_file_location(sys.argv[2], sys.argv[1])\n"
           "module = importlib.util.module_from_spec(spec)\n"
           "sys.modules[spec.name] = module\n"
           "spec.loader.exec_module(module)\n")


def _write(path: str, text: str) -> None:
    tmp = f"{path}.{os.getpid()}.{threading.get_ident()}.tmp"
    with open(tmp, "w") as f:
        f.write(text)
    os.replace(tmp, path)


def _load(source: str):
    """The kernels' module, compiled by a subprocess unless numba's cache has it."""
    name = "chainrule_fused_" + hashlib.sha256(source.encode()).hexdigest()[:24]
    module = sys.modules.get(name)
    if module is not None:
        return module
    folder = cache_dir()
    os.makedirs(folder, exist_ok=True)
    path = os.path.join(folder, name + ".py")
    if not os.path.exists(path):  # never rewritten: numba's cache is keyed by its mtime
        _write(path, source)
    done = path[:-3] + ".ok"
    if not os.path.exists(done):
        counts["compiled"] += 1
        result = subprocess.run([sys.executable, "-c", _LOADER, path, name],
                                capture_output=True, text=True, timeout=900)
        if result.returncode:
            raise RuntimeError(f"compiling {path} failed:\n{result.stderr[-2000:]}")
        _write(done, "")
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    try:
        spec.loader.exec_module(module)
    except BaseException:
        del sys.modules[name]
        raise
    counts["loaded"] += 1
    return module


def cache_misses(module) -> int:
    """Kernels of ``module`` that this process compiled (0: all came from the cache)."""
    return sum(sum(f.stats.cache_misses.values()) for name, f in vars(module).items()
               if name.startswith("fused"))


# ---- the worker thread and the choice ---------------------------------------------------------

_queue: list = []
_busy = [0]
_cond = threading.Condition()
_thread: list = [None]
_available: list = [None]


def available() -> bool:
    """Whether numba can be imported (looked up once, not imported)."""
    if _available[0] is None:
        try:
            _available[0] = importlib.util.find_spec("numba") is not None
        except (ImportError, ValueError):
            _available[0] = False
    return _available[0]


def submit(program, capture) -> None:
    """Fuse ``program`` in the background (``_compile.on_build``)."""
    if not enabled or not available():
        return
    with _cond:
        _queue.append((weakref.ref(program), capture))
        _busy[0] += 1
        if _thread[0] is None or not _thread[0].is_alive():
            _thread[0] = threading.Thread(target=_work, name="chainrule-fuse", daemon=True)
            _thread[0].start()


def wait(timeout: float | None = None) -> bool:
    """Block until every program handed to the back end is fused or given up; False on
    timeout."""
    with _cond:
        return _cond.wait_for(lambda: _busy[0] == 0, timeout)


def _work() -> None:
    while True:
        with _cond:
            if not _queue:
                _thread[0] = None
                return
            ref, capture = _queue.pop(0)
        try:
            program = ref()
            if program is not None:
                _prepare(program, capture)
        except Exception as exc:  # noqa: BLE001 - the program stays unfused, and says why
            counts["failed"] += 1
            errors.append(f"{type(exc).__name__}: {exc}")
            del errors[:-8]
        finally:
            with _cond:
                _busy[0] -= 1
                _cond.notify_all()


def _prepare(program, capture) -> None:
    plan = translate(program, capture)
    counts["programs"] += 1
    if plan is None:
        return
    source, kernels = plan
    module = _load(kernels)
    program.kernels = kernels  # the module's source
    ns = dict(program.ns)
    ns.update({k: v for k, v in vars(module).items() if k.startswith("fused")})
    ns.update(empty=xp.empty, float32=xp.float32, float64=xp.float64, bool_=xp.bool_)
    # (builtins' compile, not _compile._code: its cache is the calling thread's)
    exec(builtins.compile(source, "<chainrule.compile fused>", "exec"), ns)  # noqa: S102
    counts["kernels"] += kernels.count("= njit(")
    shown = source + "\n\n" + kernels[len(_HEADER):].strip() + "\n"
    chooser = _Chooser(program, program.replay, ns["replay"], shown)
    if _force is not None:
        chooser.choose(_force)
    else:
        program.replay = chooser


class _Chooser:
    """A program's replay while the fused and unfused functions are timed, in turns."""

    def __init__(self, program, unfused, fused, source: str) -> None:
        self.program, self.unfused, self.fused, self.source = program, unfused, fused, source
        self.times: tuple[list, list] = ([], [])

    def __call__(self, A):
        side = len(self.times[1]) < len(self.times[0])  # unfused first, then in turns
        start = perf_counter()
        try:
            return (self.fused if side else self.unfused)(A)
        finally:
            self.times[side].append(perf_counter() - start)
            if len(self.times[1]) == ROUNDS:  # fused only if clearly faster: never slower
                self.choose(statistics.median(self.times[1])
                            < MARGIN * statistics.median(self.times[0]))

    def choose(self, fused: bool) -> None:
        program = self.program
        program.fused = fused
        if fused:
            program.replay = self.fused
            program.source = self.source
        else:
            program.replay = self.unfused


def _after_fork() -> None:
    """A forked child has no worker thread, and a lock the parent's held would never open."""
    global _cond
    _cond = threading.Condition()
    _queue.clear()
    _busy[0] = 0
    _thread[0] = None


os.register_at_fork(after_in_child=_after_fork)
_compile.on_build = submit
