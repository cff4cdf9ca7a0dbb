"""The intra-op thread pool: large elementwise ops and reductions split across threads.

NumPy's ufunc loops run on one core but release the GIL, so a large op cut into pieces runs on
several threads at once. ``set_num_threads(n)`` sizes the pool as PyTorch's intra-op pool (the
calling thread does one piece; ``n - 1`` workers, started on the first split); the default is
PyTorch's: ``MKL_NUM_THREADS`` or ``OMP_NUM_THREADS`` if set, else the number of physical cores
(and never more than that).

Elementwise: ``kernel(ufunc)`` is the ufunc cut along one dim of the output, each piece written
straight into its slice of one result, so the values are one call's, bit for bit. An op record
whose forward is a ufunc has ``split``: None while one thread runs (dispatch's one check), its
kernel while several do, which dispatch calls when an operand has more than ``GRAIN`` elements.
Reductions (sum, mean): ``reduction(f, kind)`` wraps the forward itself, so eager and
chainrule.compile's replay run the same code; it cuts along a kept dim (the same values) or a
reduced one (partial results added in order: the rounding depends on the number of threads, as
PyTorch's does, never on timing). Pieces: ``min(threads, ceil(size / GRAIN))``.
"""

from __future__ import annotations

import math
import os
import threading
from sys import getrefcount

from ._backend import xp
from ._quiet import enter

__all__ = ["GRAIN", "set_num_threads", "get_num_threads", "kernel", "reduction", "rows",
           "split_ops", "kernel_for", "ufunc_of"]

GRAIN = 131072  # elements per piece, at least (docs/performance.md: Threads)
# Ufuncs of about one cycle an element (arithmetic, comparisons) gain little from a second
# thread against the handoff, and lose most when the other core is busy: 8x the grain.
CHEAP_GRAIN = 1 << 20
_CHEAP = frozenset((
    "add", "subtract", "multiply", "true_divide", "negative", "positive", "absolute", "square",
    "sqrt", "reciprocal", "maximum", "minimum", "fmax", "fmin", "copysign", "sign", "signbit",
    "greater", "greater_equal", "less", "less_equal", "equal", "not_equal", "logical_and",
    "logical_or", "logical_xor", "logical_not", "bitwise_and", "bitwise_or", "bitwise_xor",
    "invert", "left_shift", "right_shift", "isnan", "isinf", "isfinite", "floor", "ceil",
    "trunc", "rint", "conjugate"))
# Outputs of at least BUFFER_MIN bytes come from a cache of buffers kept for reuse (fresh pages
# cost a fault each: 12 ms of a 16 MB result's 14 ms here); it holds BUFFER_CACHE bytes at most.
BUFFER_MIN = 1 << 20
BUFFER_CACHE = 256 << 20

_ndarray = xp.ndarray
_ufunc = xp.ufunc


def _env_threads(var: str) -> int:
    """A positive thread count from the environment variable ``var``, else 0 (not set, or not a
    positive integer: ignored, as PyTorch ignores it)."""
    try:
        n = int(os.environ.get(var, "0").strip())
    except ValueError:
        return 0
    return max(n, 0)


def physical_cores() -> int:
    """The number of physical cores (hyperthreads of one core count once), else the CPUs."""
    cores = set()
    try:
        base = "/sys/devices/system/cpu"
        for name in os.listdir(base):
            if name.startswith("cpu") and name[3:].isdigit():
                with open(f"{base}/{name}/topology/core_cpus_list" if os.path.exists(
                        f"{base}/{name}/topology/core_cpus_list")
                        else f"{base}/{name}/topology/thread_siblings_list") as f:
                    cores.add(f.read().strip())
    except OSError:
        cores = set()
    return len(cores) or os.cpu_count() or 1


def default_threads() -> int:
    """PyTorch's default intra-op thread count: MKL_NUM_THREADS, else OMP_NUM_THREADS, else the
    physical cores; never more than the physical cores."""
    cores = physical_cores()
    asked = _env_threads("MKL_NUM_THREADS") or _env_threads("OMP_NUM_THREADS")
    return min(asked, cores) if asked else cores


class _Worker:
    """One pool thread: runs the task it is handed, then signals it is done."""

    __slots__ = ("go", "done", "task", "error", "thread")

    def __init__(self, index: int) -> None:
        self.go = threading.Lock()
        self.go.acquire()
        self.done = threading.Lock()
        self.done.acquire()
        self.task = None
        self.error = None
        self.thread = threading.Thread(target=self._loop, name=f"chainrule-intraop-{index}",
                                       daemon=True)
        self.thread.start()

    def _loop(self) -> None:
        enter()  # NumPy's quiet error state, as on chainrule's calling threads
        go, done = self.go, self.done
        while True:
            go.acquire()
            task = self.task
            self.task = None
            if task is None:
                return
            try:
                task[0](*task[1], **task[2])
            except BaseException as exc:  # noqa: BLE001 - raised again by the caller
                self.error = exc
            task = None  # nothing of the op stays alive here (chainrule.compile checks)
            done.release()

    def hand(self, task) -> None:
        self.task = task
        self.go.release()

    def wait(self):
        self.done.acquire()
        error, self.error = self.error, None
        return error


class _Pool:
    """``threads - 1`` workers; the calling thread runs the first piece."""

    def __init__(self, threads: int) -> None:
        self.threads = threads
        self.lock = threading.Lock()
        self.workers: list[_Worker] = []

    def run(self, tasks: list) -> None:
        """Run each ``(f, args, kwargs)``; all are done when this returns."""
        if not self.lock.acquire(blocking=False):
            # Another thread is using the pool: the same pieces, one after another here, so
            # the result is the same.
            for f, args, kwargs in tasks:
                f(*args, **kwargs)
            return
        try:
            while len(self.workers) < len(tasks) - 1:
                self.workers.append(_Worker(len(self.workers)))
            used = self.workers[:len(tasks) - 1]
            for worker, task in zip(used, tasks[1:]):
                worker.hand(task)
            error = None
            try:
                f, args, kwargs = tasks[0]
                f(*args, **kwargs)
            except BaseException as exc:  # noqa: BLE001 - after the workers finish
                error = exc
            for worker in used:
                failed = worker.wait()
                error = error or failed
        except BaseException:
            # Interrupted (Ctrl-C in a wait) while pieces may still run: the pool stays theirs
            # (locked) and the next split starts a new one.
            if _pool[0] is self:
                _pool[0] = None
            raise
        self.lock.release()
        if error is not None:
            raise error

    def close(self) -> None:
        with self.lock:
            for worker in self.workers:
                worker.hand(None)
            self.workers = []


_threads = [default_threads()]
_pool: list = [None]
# The buffer cache: (shape, dtype) -> the arrays it handed out, free again once it is their
# only holder; the ids of those arrays (code that counts an array's references to see whether
# anything else holds it counts one more for these); their bytes in all.
_buffers: dict = {}
cached: set = set()
_buffer_bytes = [0]
_buffer_lock = threading.Lock()


def _reset_after_fork() -> None:
    global _buffer_lock
    _pool[0] = None  # the child has none of the parent's workers
    _buffer_lock = threading.Lock()  # another thread may have held it at the fork


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_reset_after_fork)


def get_num_threads() -> int:
    """The number of threads large ops are split across."""
    return _threads[0]


def set_num_threads(num: int) -> None:
    """Split large ops across ``num`` threads (the calling one and ``num - 1`` workers)."""
    _threads[0] = num
    pool = _pool[0]
    if pool is not None and pool.threads != num:
        _pool[0] = None
        pool.close()


def split_ops(op) -> None:
    """Give an elementwise op record a split kernel: a ufunc's (threads and the buffer cache),
    or one that runs an elementwise Python forward on pieces (threads)."""
    f = op.forward
    if type(f) is _ufunc:
        if f.signature is None:  # not matmul's kind
            op.split = kernel(f)
    elif (op.batch == "elementwise" and op.n_outputs == 1 and not op.view
          and not op.name.endswith("_") and op.name not in _COPIES):
        op.split = pieces(f)


# Copies (their layout is part of what they do; a split copy gains nothing).
_COPIES = frozenset({"clone", "to_copy", "to_device"})


def kernel_for(op, arrays: list):
    """The kernel an elementwise op runs on ``arrays`` under dispatch modes: split where one is
    large, never from the buffer cache, else the forward itself (chainrule.compile's capture
    records ``op.split`` for large calls, with the cache, and the ufunc for the others: a
    replay pays nothing more)."""
    if _threads[0] > 1:
        for a in arrays:
            if type(a) is _ndarray and a.size > GRAIN:
                return op.split.plain
    return op.forward


def ufunc_of(f):
    """The ufunc ``f`` is or splits (None for other kernels)."""
    return f if type(f) is _ufunc else f.ufunc if type(f) is kernel else None


def _run(tasks: list) -> None:
    pool = _pool[0]
    if pool is None:
        pool = _pool[0] = _Pool(_threads[0])
    pool.run(tasks)


def _pieces(size: int, grain: int = GRAIN) -> int:
    """How many pieces an op of ``size`` elements is cut into (1: not split)."""
    threads = _threads[0]
    if threads == 1 or size <= grain:
        return 1
    return min(threads, -(-size // grain))


def _bounds(length: int, pieces: int) -> list[tuple[int, int]]:
    return [(length * i // pieces, length * (i + 1) // pieces) for i in range(pieces)]


def _axis(shape: tuple, pieces: int) -> int:
    """The dim an op is cut along: the first at least ``pieces`` long (-1: none)."""
    for d, n in enumerate(shape):
        if n >= pieces:
            return d
    return -1


class kernel:
    """An elementwise ufunc that splits large calls across the pool (``out=`` as the ufunc)."""

    __slots__ = ("ufunc", "__name__", "__qualname__", "cache", "plain", "cheap")

    def __init__(self, ufunc, cache: bool = True) -> None:
        self.ufunc = ufunc
        self.__name__ = self.__qualname__ = ufunc.__name__
        self.cache = cache  # large results from the buffer cache
        self.cheap = ufunc.__name__ in _CHEAP  # split above CHEAP_GRAIN, not GRAIN
        self.plain = kernel(ufunc, False) if cache else self  # the same without the cache

    def __repr__(self) -> str:
        return f"<split {self.ufunc.__name__}>"

    def __call__(self, *args, **kwargs):
        f = self.ufunc
        size = 0
        for a in args:
            if type(a) is _ndarray and a.size > size:
                size = a.size
        if size <= GRAIN:
            return f(*args, **kwargs)
        grain = CHEAP_GRAIN if self.cheap else GRAIN
        if _threads[0] == 1 or size <= grain:
            if kwargs or f.nout != 1 or not self.cache:
                return f(*args, **kwargs)
            shape = _c_ordered([a for a in args if type(a) is _ndarray])
            if shape is None:
                return f(*args)
            return f(*args, out=_output(f, args, shape, {}, True))
        return _split_elementwise(f, args, kwargs, self.cache, grain)


class pieces:
    """An elementwise op's Python forward (several NumPy calls: relu, sigmoid, gelu, where...)
    run on pieces across the pool, each written into its slice of one result: the values are
    one call's, bit for bit. Only where one call's result would be C-ordered and the forward
    keeps the broadcast shape."""

    __slots__ = ("forward", "__name__", "__qualname__", "plain")

    def __init__(self, forward) -> None:
        self.forward = forward
        self.__name__ = self.__qualname__ = getattr(forward, "__name__", "forward")
        self.plain = self  # (no buffer cache to leave out)

    def __repr__(self) -> str:
        return f"<split {self.__name__}>"

    def __call__(self, *args, **kwargs):
        f = self.forward
        if _threads[0] == 1:
            return f(*args, **kwargs)
        arrays = [a for a in args if type(a) is _ndarray]
        if not arrays or max(a.size for a in arrays) <= GRAIN:
            return f(*args, **kwargs)
        shape = _c_ordered(arrays)
        count = 1 if shape is None else _pieces(math.prod(shape))
        axis = _axis(shape, count) if count > 1 else -1
        if axis < 0:
            return f(*args, **kwargs)
        # The result's dtype from one row of the first piece (shape kept, else not split).
        row = f(*_piece(args, axis, len(shape), 0, 1), **kwargs)
        if type(row) is not _ndarray or row.shape != shape[:axis] + (1,) + shape[axis + 1:]:
            return f(*args, **kwargs)
        out = xp.empty(shape, row.dtype)
        lead = (slice(None),) * axis
        _run([(_fill, (f, out[lead + (slice(lo, hi),)], _piece(args, axis, len(shape), lo, hi),
                       kwargs), {}) for lo, hi in _bounds(shape[axis], count)])
        return out


def rows(f):
    """``f(input, dim)`` that computes each slice along ``dim`` alone and keeps the input's shape
    (softmax, log_softmax), cut along another dim across the pool when the input is large: the
    values are one call's, bit for bit."""

    def split(input, dim):
        if _threads[0] == 1 or type(input) is not _ndarray or input.size <= GRAIN \
                or not input.flags.c_contiguous:
            return f(input, dim)
        count = _pieces(input.size)
        reduced = dim % input.ndim
        axis = next((d for d, n in enumerate(input.shape) if d != reduced and n >= count), -1)
        if axis < 0:
            return f(input, dim)
        lead = (slice(None),) * axis
        row = f(input[lead + (slice(0, 1),)], dim)  # the result's dtype
        out = xp.empty(input.shape, row.dtype)
        _run([(_fill, (f, out[lead + (slice(lo, hi),)], [input[lead + (slice(lo, hi),)], dim],
                       {}), {}) for lo, hi in _bounds(input.shape[axis], count)])
        return out

    split.__name__ = split.__qualname__ = getattr(f, "__name__", "rows")
    split.__wrapped__ = f
    return split


def _piece(args: tuple, axis: int, ndim: int, lo: int, hi: int) -> list:
    """``args`` with each array cut to ``lo:hi`` along the broadcast shape's dim ``axis``."""
    piece = []
    for a in args:
        if type(a) is _ndarray:
            d = axis - (ndim - a.ndim)  # the same dim of a broadcast operand
            if d >= 0 and a.shape[d] != 1:
                a = a[(slice(None),) * d + (slice(lo, hi),)]
        piece.append(a)
    return piece


def _fill(f, out, args: list, kwargs: dict) -> None:
    out[...] = f(*args, **kwargs)


def _c_ordered(arrays: list):
    """The broadcast shape of ``arrays`` if one call's result is C-ordered (an operand of that
    shape is C-contiguous, the others C-contiguous or broadcast), else None."""
    shape = arrays[0].shape
    for a in arrays:
        if a.shape != shape:
            shape = xp.broadcast_shapes(*[a.shape for a in arrays])
            break
    c_ordered = False
    for a in arrays:
        if a.shape == shape and a.flags.c_contiguous:
            c_ordered = True
        elif not (a.flags.c_contiguous or 0 in a.strides):
            return None
    return shape if c_ordered else None


def _output(f, args: tuple, shape: tuple, kwargs: dict, cache: bool):
    """A C-ordered array for the result of ``f(*args, **kwargs)`` (of ``shape``)."""
    sample = [a[(0,) * a.ndim] if type(a) is _ndarray else a for a in args]
    dtype = f(*sample, **kwargs).dtype
    if not cache or dtype.itemsize * math.prod(shape) < BUFFER_MIN or dtype.hasobject:
        return xp.empty(shape, dtype)
    return buffer(shape, dtype)


def buffer(shape: tuple, dtype):
    """An uninitialised C-ordered array from the buffer cache: one it handed out before that
    nothing holds any more (no view, no tensor, no saved value), else a new one it keeps."""
    key = (shape, dtype)
    with _buffer_lock:
        held = _buffers.get(key)
        if held is not None:
            for a in held:
                # Free: the cache's list, ``a`` and getrefcount's argument hold it; and as it was
                # handed out (its owner may have changed its shape, flags or dtype in place).
                if getrefcount(a) == 3 and a.shape == shape and a.dtype == dtype \
                        and a.flags.writeable and a.flags.c_contiguous:
                    return a
        out = xp.empty(shape, dtype)
        nbytes = out.nbytes
        if _buffer_bytes[0] + nbytes > BUFFER_CACHE:
            _drop_free()
            if _buffer_bytes[0] + nbytes > BUFFER_CACHE:
                return out  # full of arrays still in use: this one is not kept
        _buffers.setdefault(key, []).append(out)
        cached.add(id(out))
        _buffer_bytes[0] += nbytes
        return out


def _drop_free() -> None:
    """Let go of the cached arrays nothing else holds (under the lock)."""
    for key in list(_buffers):
        held = _buffers[key]
        kept = []
        for a in held:
            if getrefcount(a) > 3:  # the list, ``a``, getrefcount's argument
                kept.append(a)
            else:
                _buffer_bytes[0] -= a.nbytes
                cached.discard(id(a))
        a = None
        if kept:
            _buffers[key] = kept
        else:
            del _buffers[key]


def empty_cache() -> None:
    """Release the cached buffers nothing holds any more."""
    with _buffer_lock:
        _drop_free()


def _split_elementwise(f, args: tuple, kwargs: dict, cache: bool, grain: int):
    arrays = [a for a in args if type(a) is _ndarray]
    shape = _c_ordered(arrays)
    # Only where one call's result is C-ordered (what the pieces write) and no output overlaps
    # an input it does not coincide with (a piece would read what another already wrote).
    if shape is None or f.nout != 1:
        return f(*args, **kwargs)
    pieces = _pieces(math.prod(shape), grain)
    axis = _axis(shape, pieces)
    out = kwargs.get("out")
    if type(out) is tuple:
        out = out[0] if len(out) == 1 else None
    ndim = len(shape)
    if pieces < 2 or axis < 0 or (
            out is not None and (type(out) is not _ndarray or out.shape != shape
                                 or not out.flags.c_contiguous or any(
                                     a is not out and xp.may_share_memory(a, out)
                                     for a in arrays))):
        return f(*args, **kwargs)
    if out is None:
        out = _output(f, args, shape, kwargs, cache)
        rest = kwargs
    else:
        rest = {k: v for k, v in kwargs.items() if k != "out"}
    lead = (slice(None),) * axis
    _run([(f, _piece(args, axis, ndim, lo, hi), {**rest, "out": out[lead + (slice(lo, hi),)]})
          for lo, hi in _bounds(shape[axis], pieces)])
    return out


def reduction(f, kind: str):
    """``f(input)`` or ``f(input, dim, keepdim)``, a sum or mean (``kind``), split across the
    pool when the input is large."""

    def split(input, dim=None, keepdim=False):
        pieces = 1 if type(input) is not _ndarray else _pieces(input.size)
        if pieces < 2 or (kind == "mean" and (input.dtype.kind not in "fc"
                                              or input.dtype.itemsize < 4)):
            return f(input) if dim is None else f(input, dim, keepdim)
        return _split_reduction(f, kind, input, dim, keepdim, pieces)

    split.__name__ = split.__qualname__ = getattr(f, "__name__", kind)
    split.__wrapped__ = f
    return split


def _sum(x, dims: tuple):
    return xp.sum(x, axis=dims, keepdims=True, dtype=x.dtype)


def _mean(x, dims: tuple):
    return xp.mean(x, axis=dims, keepdims=True)


def _split_reduction(f, kind: str, x, dim, keepdim: bool, pieces: int):
    ndim = x.ndim
    dims = tuple(range(ndim)) if dim is None else tuple(d % ndim for d in (
        (dim,) if isinstance(dim, int) else dim))
    axis = _axis(x.shape, pieces)
    if axis < 0:
        return f(x) if dim is None else f(x, dim, keepdim)
    lead = (slice(None),) * axis
    chunks = [x[lead + (slice(lo, hi),)] for lo, hi in _bounds(x.shape[axis], pieces)]
    parts: list = [None] * pieces
    across = axis in dims  # pieces of a reduced dim give partial sums; of a kept one, results
    total = _sum if across or kind == "sum" else _mean

    def piece(i, chunk):
        parts[i] = xp.asarray(total(chunk, dims))

    _run([(piece, (i, c), {}) for i, c in enumerate(chunks)])
    if across:  # added in order: the rounding depends on the number of pieces only
        result = parts[0]
        for p in parts[1:]:
            result = result + p
        if kind == "mean":
            result = xp.true_divide(result, math.prod(x.shape[d] for d in dims))
    else:
        result = xp.concatenate(parts, axis=axis)
    if not keepdim:
        result = result.reshape([n for d, n in enumerate(result.shape) if d not in dims])
    return result
