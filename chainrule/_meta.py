"""The meta device's memory: arrays with a shape, a dtype and strides, and no data.

A ``MetaArray`` speaks NumPy's protocols (``__array_ufunc__``, ``__array_function__``), so an
op's forward, written on NumPy arrays, runs on it unchanged and computes only its result's
shape, dtype and strides — the op records are the shape rules, there is no second table of ops:

- ufuncs broadcast and resolve their dtypes on empty stand-ins (NumPy's own promotion);
- views (transpose, basic indexing, reshape without a copy, broadcast_to, ...) are made on a
  fake array of the same strides over one element of memory, which a view never reads;
- the NumPy functions below with a rule (matmul, einsum, concatenate, reductions, linalg, ...)
  say their result's shape; any other function runs on zero-stride stand-ins of the meta inputs
  (one element of memory each) and keeps the shape and dtype of what it returns;
- reading a value (``item``, ``bool``, a mask, ``np.asarray``, a write into a real array)
  raises ``NeedsValues``: ``dispatch.apply`` (and ``_tooling.kernel``) then run the kernel on
  stand-ins (``on_standins``), unless the op's results' shapes depend on the values
  (``Op.sized_by_values``: nonzero, unique, ...), which refuses as PyTorch's meta device.

This module is also the meta device's namespace for the factories (``zeros``, ``full``, ...).
"""

from __future__ import annotations

import string

from ._backend import xp

__all__ = ["MetaArray", "is_meta", "array_of", "as_strided", "NeedsValues"]

_as_strided = xp.lib.stride_tricks.as_strided
_ndarray = xp.ndarray


class _Flags:
    __slots__ = ("c_contiguous", "f_contiguous")
    writeable = True
    aligned = True
    owndata = True

    def __init__(self, c: bool, f: bool) -> None:
        self.c_contiguous, self.f_contiguous = c, f

    def __getitem__(self, key: str) -> bool:
        return {"C_CONTIGUOUS": self.c_contiguous, "F_CONTIGUOUS": self.f_contiguous,
                "WRITEABLE": True, "ALIGNED": True, "OWNDATA": True}[key.upper()]


class _Ctypes:
    data = 0  # a meta tensor's data_ptr() is 0, as PyTorch's


class NeedsValues(RuntimeError):
    """A kernel asked a meta array for values (``dispatch.apply`` then runs it on stand-ins)."""


def _nodata(what: str):
    return NeedsValues(f"{what}: the meta device holds no data (a meta tensor has a shape, a "
                       "dtype and strides only); move real tensors to the CPU to read values")


_ITEM = "Tensor.item() cannot be called on meta tensors"


class MetaArray:
    """An array of the meta device: shape, dtype and strides only."""

    __slots__ = ("shape", "dtype", "strides", "offset", "base")
    __hash__ = None  # as ndarray
    __array_priority__ = 2000  # NumPy defers to it, as to a Tensor

    def __init__(self, shape, dtype, strides=None, offset: int = 0, base=None) -> None:
        self.shape = tuple(int(s) for s in shape)
        self.dtype = xp.dtype(dtype)
        self.strides = (_contiguous(self.shape, self.dtype.itemsize) if strides is None
                        else tuple(strides))
        self.offset = offset  # of the first element in its storage, in elements
        self.base = base  # the array whose storage a view shares (None: its own), as NumPy's

    # ---- what an ndarray answers without data ------------------------------------------------
    @property
    def ndim(self) -> int:
        return len(self.shape)

    @property
    def size(self) -> int:
        n = 1
        for s in self.shape:
            n *= s
        return n

    @property
    def itemsize(self) -> int:
        return self.dtype.itemsize

    @property
    def nbytes(self) -> int:
        return self.size * self.dtype.itemsize

    @property
    def flags(self) -> _Flags:
        return _Flags(self.strides == _contiguous(self.shape, self.itemsize) or self.size <= 1,
                      self.strides == _contiguous_f(self.shape, self.itemsize) or self.size <= 1)

    ctypes = _Ctypes()

    def __len__(self) -> int:
        if not self.shape:
            raise TypeError("len() of unsized object")
        return self.shape[0]

    def __repr__(self) -> str:
        return f"MetaArray(shape={self.shape}, dtype={self.dtype})"

    # ---- values: none ------------------------------------------------------------------------
    def __array__(self, dtype=None, copy=None):
        raise _nodata("reading a meta array's values")

    @property
    def __array_interface__(self):
        raise _nodata("reading a meta array's memory")

    def item(self, *args):
        raise NeedsValues(_ITEM)

    def __bool__(self) -> bool:
        raise NeedsValues(_ITEM)

    __float__ = __int__ = __index__ = __complex__ = item

    def tolist(self):
        raise NotImplementedError("Cannot copy out of meta tensor; no data!")

    def tobytes(self, *args, **kwargs):
        raise NotImplementedError("Cannot copy out of meta tensor; no data!")

    def __iter__(self):
        if not self.shape:
            raise TypeError("iteration over a 0-d array")
        return (self[i] for i in range(self.shape[0]))

    # ---- NumPy's protocols -------------------------------------------------------------------
    def __array_ufunc__(self, ufunc, method, *inputs, out=None, **kwargs):
        return _ufunc(ufunc, method, inputs, out, kwargs)

    def __array_function__(self, func, types, args, kwargs):
        rule = RULES.get(func)
        if rule is not None:
            return rule(*args, **kwargs)
        if func in DATA_DEPENDENT:
            raise NeedsValues(f"{func.__name__}: the shape of its result depends on the data, "
                              "which meta tensors do not have")
        return _fallback(func, args, kwargs)

    # ---- views and conversions ---------------------------------------------------------------
    def __getitem__(self, index):
        return _index(self, index)

    def __setitem__(self, index, value) -> None:
        try:
            target = _index(self, index)
        except NeedsValues:  # a mask: how many elements it selects is a value
            return
        _check_broadcast(_shape_of(value), target.shape, "setitem")

    def astype(self, dtype, order="K", casting="unsafe", subok=True, copy=True):
        dtype = xp.dtype(dtype)
        if not copy and dtype == self.dtype:
            return self
        return MetaArray(self.shape, dtype)

    def copy(self, order="C"):
        return MetaArray(self.shape, self.dtype)

    def view(self, dtype=None, type=None):  # noqa: A002
        if dtype is None or xp.dtype(dtype) == self.dtype:
            return _view(self, lambda a: a)
        return _view(self, lambda a: a.view(dtype))

    def reshape(self, *shape, order="C", copy=None):
        shape = shape[0] if len(shape) == 1 and not isinstance(shape[0], int) else shape
        return _reshape(self, shape)

    def transpose(self, *axes):
        axes = axes[0] if len(axes) == 1 and not isinstance(axes[0], int) else axes
        return _view(self, lambda a: a.transpose(*axes) if axes else a.transpose())

    @property
    def T(self):  # noqa: N802
        return self.transpose()

    @property
    def mT(self):  # noqa: N802
        return xp.swapaxes(self, -1, -2)

    @property
    def real(self):
        return _view(self, lambda a: a.real)

    @real.setter
    def real(self, value) -> None:
        _check_broadcast(_shape_of(value), self.shape, "real")

    @property
    def imag(self):
        if self.dtype.kind != "c":
            return MetaArray(self.shape, self.dtype)
        return _view(self, lambda a: a.imag)

    @imag.setter
    def imag(self, value) -> None:
        _check_broadcast(_shape_of(value), self.shape, "imag")

    def fill(self, value) -> None:
        pass

    def ravel(self, order="C"):
        return _reshape(self, (-1,))

    def flatten(self, order="C"):
        return MetaArray((self.size,), self.dtype)

    def __copy__(self):
        return self.copy()

    def __deepcopy__(self, memo):
        return self.copy()


def _numpy_method(name: str):
    fn = getattr(xp, name)

    def method(self, *args, **kwargs):
        return fn(self, *args, **kwargs)
    method.__name__ = name
    return method


for _name in ("sum", "prod", "mean", "std", "var", "max", "min", "any", "all", "argmax",
              "argmin", "cumsum", "cumprod", "clip", "round", "repeat", "take", "squeeze",
              "swapaxes", "diagonal", "trace", "argsort", "searchsorted", "nonzero", "conj",
              "conjugate", "dot", "ptp", "compress", "put", "choose", "partition",
              "argpartition"):
    setattr(MetaArray, _name, _numpy_method(_name))


def _sort(self, axis=-1, kind=None, order=None) -> None:
    pass  # in place, and a meta array has no values to order


MetaArray.sort = _sort


def _operator(ufunc, reflected: bool = False):
    if reflected:
        return lambda self, other: ufunc(other, self)
    return lambda self, other: ufunc(self, other)


def _inplace(ufunc):
    def method(self, other):
        return ufunc(self, other, out=self)
    return method


for _dunder, _uf in (("add", xp.add), ("sub", xp.subtract), ("mul", xp.multiply),
                     ("truediv", xp.true_divide), ("floordiv", xp.floor_divide),
                     ("mod", xp.remainder), ("pow", xp.power), ("matmul", xp.matmul),
                     ("and", xp.bitwise_and), ("or", xp.bitwise_or), ("xor", xp.bitwise_xor),
                     ("lshift", xp.left_shift), ("rshift", xp.right_shift)):
    setattr(MetaArray, f"__{_dunder}__", _operator(_uf))
    setattr(MetaArray, f"__r{_dunder}__", _operator(_uf, reflected=True))
    setattr(MetaArray, f"__i{_dunder}__", _inplace(_uf))
for _dunder, _uf in (("lt", xp.less), ("le", xp.less_equal), ("gt", xp.greater),
                     ("ge", xp.greater_equal), ("eq", xp.equal), ("ne", xp.not_equal)):
    setattr(MetaArray, f"__{_dunder}__", _operator(_uf))
MetaArray.__neg__ = lambda self: xp.negative(self)
MetaArray.__pos__ = lambda self: xp.positive(self)
MetaArray.__abs__ = lambda self: xp.absolute(self)
MetaArray.__invert__ = lambda self: xp.invert(self)
MetaArray.__divmod__ = lambda self, other: xp.divmod(self, other)


def is_meta(a) -> bool:
    """True if ``a`` is an array of the meta device."""
    return type(a) is MetaArray


def array_of(a):
    """``a`` as an array of its own device: NumPy's asarray, but a meta array stays one."""
    return a if type(a) is MetaArray else xp.asarray(a)


# ---- strides -----------------------------------------------------------------------------------

def _contiguous(shape: tuple, itemsize: int) -> tuple:
    strides, step = [], itemsize
    for s in reversed(shape):
        strides.append(step)
        step *= max(s, 1)
    return tuple(reversed(strides))


def _contiguous_f(shape: tuple, itemsize: int) -> tuple:
    strides, step = [], itemsize
    for s in shape:
        strides.append(step)
        step *= max(s, 1)
    return tuple(strides)


def _fake(a: MetaArray):
    """An ndarray with ``a``'s shape and strides over one element: only for views, which never
    read memory."""
    return _as_strided(xp.zeros(1, a.dtype), a.shape, a.strides, writeable=False)


def standin(a: MetaArray, flip: bool = False):
    """An ndarray with ``a``'s shape whose every element is one value (zero strides): 1 for
    floating dtypes (no zero divisor, no fast path refused for a zero), 0 for integers and bools
    (a valid index, a false mask); ``flip`` swaps the two."""
    fill = (a.dtype.kind in "fc") != flip
    return _as_strided(xp.full(1, fill, a.dtype), a.shape, (0,) * len(a.shape))


def _view(a: MetaArray, make):
    f = _fake(a)
    v = make(f)
    moved = v.__array_interface__["data"][0] - f.__array_interface__["data"][0]
    return MetaArray(v.shape, v.dtype, v.strides, a.offset + moved // max(v.itemsize, 1),
                     a if a.base is None else a.base)


def as_strided(x, shape, strides, writeable: bool = True):
    """NumPy's ``as_strided`` for arrays of either device (a view, reading nothing)."""
    if type(x) is MetaArray:
        return MetaArray(shape, x.dtype, strides, x.offset, x if x.base is None else x.base)
    return _as_strided(x, shape=shape, strides=strides, writeable=writeable)


def _reshape(a: MetaArray, shape):
    shape = (shape,) if isinstance(shape, int) else tuple(shape)
    if a.size and -1 in shape:  # NumPy's error for a size that does not fit, without data
        known = 1
        for s in shape:
            known *= s if s != -1 else 1
        if known == 0 or a.size % known:
            raise ValueError(f"cannot reshape array of size {a.size} into shape {shape}")
    try:
        return _view(a, lambda f: _reshape_view(f, shape))
    except _NeedsCopy:
        out = xp.empty(0, a.dtype)  # the copy's shape: as NumPy resolves -1 and checks sizes
        return MetaArray(_as_strided(out, a.shape, (0,) * a.ndim).reshape(shape).shape, a.dtype)


class _NeedsCopy(Exception):
    pass


def _reshape_view(f, shape):
    try:
        return xp.reshape(f, shape, copy=False)
    except TypeError:  # NumPy < 2.1: no copy=; setting .shape refuses to copy
        v = f.view()
        try:
            v.shape = shape
        except AttributeError:
            raise _NeedsCopy from None
        return v
    except ValueError as err:
        if "copy" in str(err):
            raise _NeedsCopy from None
        raise


def _index(a: MetaArray, index):
    items = index if isinstance(index, tuple) else (index,)
    basic = all(i is None or i is Ellipsis or isinstance(i, (int, slice, xp.integer))
                and not isinstance(i, bool) for i in items)
    if basic:
        return _view(a, lambda f: f[index])
    for i in items:
        if getattr(i, "dtype", None) is not None and i.dtype == bool or isinstance(i, bool):
            if not isinstance(i, bool) and (type(i) is MetaArray or i.ndim):
                raise NeedsValues("indexing with a boolean mask: the shape of the result depends "
                                  "on the data, which meta tensors do not have")
    out = standin(a)[_standins(index)]
    return MetaArray(out.shape, out.dtype)


# ---- ufuncs ------------------------------------------------------------------------------------

def _shape_of(x) -> tuple:
    if isinstance(x, (MetaArray, _ndarray)):
        return x.shape
    if isinstance(x, (list, tuple)):
        return xp.shape(x)
    return ()


def _probe(x):
    """A stand-in with ``x``'s dtype and no elements (Python scalars stay: they are weak)."""
    if isinstance(x, (MetaArray, _ndarray, xp.generic)):
        return xp.empty(0, x.dtype)
    if isinstance(x, (list, tuple)):
        return xp.empty(0, xp.asarray(x).dtype)
    return x


def _check_broadcast(shape: tuple, target: tuple, what: str) -> None:
    if xp.broadcast_shapes(shape, target) != tuple(target):
        raise ValueError(f"could not broadcast input array from shape {shape} into shape "
                         f"{tuple(target)} ({what})")


def _ufunc(ufunc, method: str, inputs: tuple, out, kwargs: dict):
    kwargs.pop("where", None)
    if method != "__call__":
        kwargs.pop("casting", None)
    if method == "at":
        return _write(inputs[0])
    if method == "__call__":
        if ufunc.signature is not None:
            return _finish_out(_gufunc(ufunc, inputs, kwargs), out)
        shape = xp.broadcast_shapes(*(_shape_of(x) for x in inputs))
        probe = ufunc(*(_probe(x) for x in inputs), **kwargs)
    elif method in ("reduce", "accumulate", "reduceat"):
        if method == "reduceat":
            return _fallback(getattr(ufunc, method), inputs, dict(kwargs, out=out))
        a = inputs[0]
        axis = kwargs.pop("axis", 0)
        keepdims = kwargs.pop("keepdims", False)
        kwargs.pop("initial", None)
        probe = getattr(ufunc, method)(xp.zeros(1, _probe(a).dtype), axis=0, **kwargs)
        probe = xp.asarray(probe)
        shape = a.shape if method == "accumulate" else _reduced(a.shape, axis, keepdims)
    elif method == "outer":
        shape = _shape_of(inputs[0]) + _shape_of(inputs[1])
        probe = ufunc(*(_probe(x) for x in inputs), **kwargs)
    else:
        return _fallback(getattr(ufunc, method), inputs, dict(kwargs, out=out))
    if isinstance(probe, tuple):
        result = tuple(MetaArray(shape, p.dtype) for p in probe)
    else:
        result = MetaArray(shape, probe.dtype)
    return _finish_out(result, out)


def _finish_out(result, out):
    if out is None:
        return result
    outs = out if isinstance(out, tuple) else (out,)
    results = result if isinstance(result, tuple) else (result,)
    for o, r in zip(outs, results):
        if type(o) is not MetaArray:
            raise _nodata("writing meta values into a real array")
        if r.shape != tuple(o.shape):
            raise ValueError(f"non-broadcastable output operand with shape {tuple(o.shape)} "
                             f"doesn't match the broadcast shape {r.shape}")
    return out if isinstance(out, tuple) and len(out) > 1 else outs[0]


def _reduced(shape: tuple, axis, keepdims: bool) -> tuple:
    ndim = len(shape)
    if axis is None:
        axes = set(range(ndim))
    else:
        axes = {a % ndim if ndim else 0 for a in (axis if isinstance(axis, tuple) else (axis,))}
        for a in (axis if isinstance(axis, tuple) else (axis,)):
            if not -max(ndim, 1) <= a < max(ndim, 1):
                raise xp.exceptions.AxisError(a, ndim)
    if keepdims:
        return tuple(1 if i in axes else s for i, s in enumerate(shape))
    return tuple(s for i, s in enumerate(shape) if i not in axes)


def _gufunc(ufunc, inputs: tuple, kwargs: dict):
    if ufunc is xp.matmul:
        a, b = inputs
        shape = _matmul_shape(_shape_of(a), _shape_of(b))
        probe = ufunc(*(xp.empty((1, 1), _probe(x).dtype) for x in inputs), **kwargs)
        return MetaArray(shape, probe.dtype)
    return _fallback(ufunc, inputs, kwargs)


def _matmul_shape(a: tuple, b: tuple) -> tuple:
    if not a or not b:
        raise ValueError("matmul: Input operand does not have enough dimensions")
    a2 = (1,) + a if len(a) == 1 else a
    b2 = b + (1,) if len(b) == 1 else b
    if a2[-1] != b2[-2]:
        raise ValueError(f"matmul: Input operand 1 has a mismatch in its core dimension 0, with "
                         f"gufunc signature (n?,k),(k,m?)->(n?,m?) (size {b2[-2]} is different "
                         f"from {a2[-1]})")
    batch = xp.broadcast_shapes(a2[:-2], b2[:-2])
    return batch + (a2[-2],) * (len(a) > 1) + (b2[-1],) * (len(b) > 1)


# ---- NumPy functions ---------------------------------------------------------------------------

def _standins(x, flip: bool = False):
    if type(x) is MetaArray:
        return standin(x, flip)
    if isinstance(x, (list, tuple)) and any(type(e) is MetaArray for e in _flat(x)):
        return type(x)(_standins(e, flip) for e in x)
    if isinstance(x, dict):
        return {k: _standins(v, flip) for k, v in x.items()}
    return x


def _flat(x):
    for e in x:
        if isinstance(e, (list, tuple)):
            yield from _flat(e)
        else:
            yield e


def _to_meta(r):
    if isinstance(r, (_ndarray, xp.generic)):
        return MetaArray(r.shape, r.dtype)
    if isinstance(r, tuple) and hasattr(r, "_fields"):  # NumPy's named results (eigh, svd, ...)
        return type(r)(*(_to_meta(e) for e in r))
    if isinstance(r, (list, tuple)):
        return type(r)(_to_meta(e) for e in r)
    return r


def _fallback(func, args, kwargs):
    """Run ``func`` on zero-stride stand-ins (one element of memory per meta input) and keep
    the shape and dtype of its results."""
    out = kwargs.pop("out", None)
    with xp.errstate(all="ignore"):
        result = func(*_standins(args), **_standins(kwargs))
    return _finish_out(_to_meta(result), out)


def _meta_inputs(*arrays) -> list:
    return [a if type(a) is MetaArray else MetaArray(_shape_of(a), _probe(a).dtype)
            for a in arrays]


def _axis(axis: int, ndim: int) -> int:
    if not -ndim <= axis < ndim:
        raise xp.exceptions.AxisError(axis, ndim)
    return axis % ndim


def _result_dtype(*arrays):
    return xp.result_type(*(_probe(a) for a in arrays))


def _reduction(func, keeps_dtype: bool = False):
    def rule(a, axis=None, dtype=None, out=None, keepdims=False, **kwargs):
        if func in (xp.argmax, xp.argmin):
            shape = _reduced(_shape_of(a), axis, keepdims)
            return _finish_out(MetaArray(shape, xp.intp), out)
        probe = xp.asarray(func(xp.zeros(1, _probe(a).dtype), **({"dtype": dtype} if dtype
                                                                  else {})))
        return _finish_out(MetaArray(_reduced(_shape_of(a), axis, keepdims), probe.dtype), out)
    return rule


def _like(a, dtype=None, order="K", subok=True, shape=None, **kwargs):
    shape = _shape_of(a) if shape is None else _shape(shape)
    return MetaArray(shape, _probe(a).dtype if dtype is None else dtype)


def _full_like(a, fill_value, dtype=None, order="K", subok=True, shape=None, **kwargs):
    return _like(a, dtype, shape=shape)


def _concatenate(arrays, axis=0, out=None, dtype=None, casting="same_kind"):
    shapes = [_shape_of(a) for a in arrays]
    if axis is None:
        shape = (sum(int(xp.prod(s)) for s in shapes),)
    else:
        ndim = len(shapes[0])
        if ndim == 0:
            raise ValueError("zero-dimensional arrays cannot be concatenated")
        ax = _axis(axis, ndim)
        for s in shapes[1:]:
            if len(s) != ndim or any(x != y for i, (x, y) in enumerate(zip(s, shapes[0]))
                                     if i != ax):
                raise ValueError("all the input array dimensions except for the concatenation "
                                 f"axis must match exactly, but along a dimension the arrays "
                                 f"have shapes {shapes[0]} and {s}")
        shape = shapes[0][:ax] + (sum(s[ax] for s in shapes),) + shapes[0][ax + 1:]
    dt = xp.dtype(dtype) if dtype is not None else _result_dtype(*arrays)
    return _finish_out(MetaArray(shape, dt), out)


def _stack(arrays, axis=0, out=None, dtype=None, casting="same_kind"):
    shapes = {_shape_of(a) for a in arrays}
    if len(shapes) != 1:
        raise ValueError("all input arrays must have the same shape")
    (shape,) = shapes
    ax = _axis(axis, len(shape) + 1)
    dt = xp.dtype(dtype) if dtype is not None else _result_dtype(*arrays)
    return _finish_out(MetaArray(shape[:ax] + (len(arrays),) + shape[ax:], dt), out)


def _where(condition, *xy):
    if not xy:
        raise NotImplementedError("where(condition): the shape of its result depends on the "
                                  "data, which meta tensors do not have")
    shape = xp.broadcast_shapes(*(_shape_of(a) for a in (condition, *xy)))
    return MetaArray(shape, _result_dtype(*xy))


def _einsum(subscripts, *operands, out=None, dtype=None, optimize=False, **kwargs):
    if not isinstance(subscripts, str):
        return _fallback(xp.einsum, (subscripts, *operands), dict(kwargs, out=out, dtype=dtype))
    spec = subscripts.replace(" ", "")
    ins, arrow, res = spec.partition("->")
    terms = ins.split(",")
    sizes: dict = {}
    batch: tuple = ()
    for term, x in zip(terms, operands):
        shape = _shape_of(x)
        if "..." in term:
            head, _, tail = term.partition("...")
            n_ell = len(shape) - len(head) - len(tail)
            batch = xp.broadcast_shapes(batch, shape[len(head):len(head) + n_ell])
            letters = list(head) + [None] * n_ell + list(tail)
        else:
            letters = list(term)
        if len(letters) != len(shape):
            raise ValueError(f"einstein sum subscripts string contains too many subscripts for "
                             f"operand {terms.index(term)}")
        for letter, size in zip(letters, shape):
            if letter is None:
                continue
            if sizes.get(letter, 1) != size and size != 1 and letter in sizes:
                raise ValueError(f"operands could not be broadcast together with remapped "
                                 f"shapes (dimension '{letter}': {sizes[letter]} and {size})")
            sizes[letter] = max(sizes.get(letter, size), size) if size != 1 else \
                sizes.get(letter, 1)
    if not arrow:
        counts = {c: ins.count(c) for c in set(ins) if c in string.ascii_letters}
        res = ("..." if "..." in ins else "") + "".join(sorted(c for c, n in counts.items()
                                                              if n == 1))
    head, ell, tail = res.partition("...")
    shape = tuple(sizes[c] for c in head) + (batch if ell else ()) + tuple(sizes[c] for c in tail)
    dt = xp.dtype(dtype) if dtype is not None else _result_dtype(*operands)
    return _finish_out(MetaArray(shape, dt), out)


def _tensordot(a, b, axes=2):
    sa, sb = _shape_of(a), _shape_of(b)
    if isinstance(axes, int):
        ax_a = list(range(len(sa) - axes, len(sa)))
        ax_b = list(range(axes))
    else:
        ax_a, ax_b = ([x] if isinstance(x, int) else list(x) for x in axes)
    ax_a = [x % len(sa) for x in ax_a]
    ax_b = [x % len(sb) for x in ax_b]
    if [sa[i] for i in ax_a] != [sb[i] for i in ax_b]:
        raise ValueError("shape-mismatch for sum")
    shape = tuple(s for i, s in enumerate(sa) if i not in ax_a) + tuple(
        s for i, s in enumerate(sb) if i not in ax_b)
    return MetaArray(shape, _result_dtype(a, b))


def _dot(a, b, out=None):
    sa, sb = _shape_of(a), _shape_of(b)
    if not sa or not sb:
        shape = sa or sb
    elif len(sb) == 1:
        if sa[-1] != sb[0]:
            raise ValueError(f"shapes {sa} and {sb} not aligned")
        shape = sa[:-1]
    else:
        if sa[-1] != sb[-2]:
            raise ValueError(f"shapes {sa} and {sb} not aligned")
        shape = sa[:-1] + sb[:-2] + sb[-1:]
    return _finish_out(MetaArray(shape, _result_dtype(a, b)), out)


def _broadcast_to(array, shape, subok=False):
    shape = (shape,) if isinstance(shape, int) else tuple(shape)
    return _view(_meta_inputs(array)[0], lambda f: xp.broadcast_to(f, shape))


def _broadcast_arrays(*args, subok=False):
    shape = xp.broadcast_shapes(*(_shape_of(a) for a in args))
    return tuple(_broadcast_to(a, shape) for a in _meta_inputs(*args))


def _view_rule(func):
    def rule(a, *args, **kwargs):
        return _view(_meta_inputs(a)[0], lambda f: func(f, *args, **kwargs))
    return rule


def _same_shape(dtype_of=None):
    def rule(a, *args, out=None, **kwargs):
        shape = _shape_of(a)
        if kwargs.get("axis", 0) is None and "axis" in kwargs:
            shape = (int(xp.prod(shape)),)
        dt = dtype_of(a) if dtype_of else _probe(a).dtype
        return _finish_out(MetaArray(shape, dt), out)
    return rule


def _copyto(dst, src, casting="same_kind", where=True):
    _write(dst)
    _check_broadcast(_shape_of(src), _shape_of(dst), "copyto")


def _linalg_same(a, *args, **kwargs):
    return MetaArray(_shape_of(a), _result_dtype(a, xp.float64) if _probe(a).dtype.kind in "iub"
                     else _probe(a).dtype)


def _solve(a, b):
    sa, sb = _shape_of(a), _shape_of(b)
    dt = _result_dtype(a, b)
    if len(sb) == 1:
        return MetaArray(xp.broadcast_shapes(sa[:-2], ()) + (sa[-1],), dt)
    return MetaArray(xp.broadcast_shapes(sa[:-2], sb[:-2]) + sb[-2:], dt)


def _pad(array, pad_width, mode="constant", **kwargs):
    shape = _shape_of(array)
    widths = xp.broadcast_to(xp.asarray(pad_width, dtype=xp.int64), (len(shape), 2))
    return MetaArray(tuple(int(s + lo + hi) for s, (lo, hi) in zip(shape, widths)),
                     _probe(array).dtype)


def _repeat(a, repeats, axis=None):
    if not isinstance(repeats, (int, xp.integer)) and _shape_of(repeats) != () and \
            type(repeats) is MetaArray:
        raise NotImplementedError("repeat with tensor repeats: the shape of its result depends "
                                  "on the data, which meta tensors do not have")
    return _fallback(xp.repeat, (a, repeats), {"axis": axis})


def _shares_memory(a, b, max_work=None) -> bool:
    """Meta arrays share memory when they are views of one storage (no values to compare)."""
    if type(a) is not MetaArray or type(b) is not MetaArray:
        return False
    return (a if a.base is None else a.base) is (b if b.base is None else b.base)


def _write(target, *args, **kwargs) -> None:
    """An in-place write (put_along_axis, np.add.at, copyto, ...): nothing to do on a meta
    target; a real target would be left without the meta values, so the kernel must run on
    stand-ins instead."""
    if type(target) is not MetaArray:
        raise _nodata("writing meta values into a real array")


def _made_like(factory):
    """``np.zeros(shape, like=meta)`` and kin (NEP 35): a meta array of the factory's result."""
    def rule(*args, like=None, **kwargs):
        return _to_meta(factory(*_standins(args), **kwargs)) if factory is not xp.zeros else \
            MetaArray(_shape(args[0]), kwargs.get("dtype", args[1] if len(args) > 1 else float))
    return rule


def _asarray(a, dtype=None, order=None, *, like=None, **kwargs):
    if type(a) is MetaArray:
        return a if dtype is None or xp.dtype(dtype) == a.dtype else a.astype(dtype)
    return asarray(a, dtype)


RULES: dict = {
    xp.concatenate: _concatenate,
    xp.stack: _stack,
    xp.where: _where,
    xp.einsum: _einsum,
    xp.tensordot: _tensordot,
    xp.dot: _dot,
    xp.matmul: lambda a, b, **kw: _ufunc(xp.matmul, "__call__", (a, b), kw.pop("out", None), kw),
    xp.broadcast_to: _broadcast_to,
    xp.broadcast_arrays: _broadcast_arrays,
    xp.copyto: _copyto,
    xp.pad: _pad,
    xp.repeat: _repeat,
    xp.zeros_like: _like,
    xp.ones_like: _like,
    xp.empty_like: _like,
    xp.full_like: _full_like,
    xp.reshape: lambda a, shape=None, order="C", **kw: _reshape(_meta_inputs(a)[0], shape),
    xp.ravel: lambda a, order="C": _reshape(_meta_inputs(a)[0], (-1,)),
    xp.may_share_memory: _shares_memory,
    xp.shares_memory: _shares_memory,
    xp.put_along_axis: _write,
    xp.put: _write,
    xp.place: _write,
    xp.putmask: _write,
    xp.fill_diagonal: _write,
    xp.zeros: _made_like(xp.zeros),
    xp.empty: _made_like(xp.zeros),
    xp.ones: _made_like(xp.zeros),
    xp.full: lambda shape, fill_value, dtype=None, **kw: full(shape, fill_value, dtype),
    xp.arange: _made_like(xp.arange),
    xp.eye: _made_like(xp.eye),
    xp.identity: _made_like(xp.identity),
    xp.asarray: _asarray,
    xp.array: lambda a, dtype=None, *args, **kw: _asarray(a, dtype).copy(),
    xp.ascontiguousarray: lambda a, dtype=None, **kw: _asarray(a, dtype).copy(),
    xp.linalg.inv: _linalg_same,
    xp.linalg.cholesky: _linalg_same,
    xp.linalg.solve: _solve,
    xp.sort: _same_shape(),
    xp.argsort: _same_shape(lambda a: xp.dtype(xp.intp)),
    xp.cumsum: _same_shape(),
    xp.cumprod: _same_shape(),
    xp.tril: _same_shape(),
    xp.triu: _same_shape(),
    xp.flip: _view_rule(xp.flip),
}
for _f in (xp.transpose, xp.swapaxes, xp.moveaxis, xp.expand_dims, xp.squeeze, xp.diagonal,
           xp.rot90, xp.fliplr, xp.flipud, xp.atleast_1d, xp.atleast_2d, xp.atleast_3d,
           xp.real, xp.imag):
    RULES[_f] = _view_rule(_f)
for _f in (xp.sum, xp.prod, xp.mean, xp.max, xp.min, xp.amax, xp.amin, xp.any, xp.all,
           xp.argmax, xp.argmin, xp.nansum, xp.nanmean, xp.nanmax, xp.nanmin):
    RULES[_f] = _reduction(_f)
for _f in (xp.std, xp.var, xp.nanstd, xp.nanvar):
    RULES[_f] = _reduction(_f)
for _f in (xp.clip, xp.round, xp.around, xp.nan_to_num, xp.copy, xp.asfortranarray):
    RULES[_f] = _same_shape()

DATA_DEPENDENT = {xp.nonzero, xp.argwhere, xp.flatnonzero, xp.unique, xp.unique_values,
                  xp.unique_counts, xp.unique_inverse, xp.unique_all, xp.compress, xp.extract,
                  xp.bincount, xp.array_equal, xp.array_equiv, xp.allclose, xp.trim_zeros,
                  xp.intersect1d, xp.union1d, xp.setdiff1d, xp.setxor1d}


# ---- ops whose kernels read values -------------------------------------------------------------

def on_standins(op, arrays: list, params: dict):
    """``op``'s results for meta inputs whose kernel needs values: its kernel run on zero-stride
    stand-ins (one element of memory per input), keeping the results' shapes and dtypes; an op
    whose results' shapes depend on the values refuses, as on PyTorch's meta device."""
    if op.sized_by_values:
        raise NotImplementedError(
            f"{op.name}: the shape of its result depends on the data, which meta tensors do not "
            "have (PyTorch's meta device refuses it too)")
    return call_on_standins(op.forward, arrays, params)


def call_on_standins(fn, args, kwargs: dict):
    """``fn``'s results, as meta arrays, from a run on zero-stride stand-ins of its meta
    arguments (array code outside an op, such as the indices of pooling windows)."""
    with xp.errstate(all="ignore"):
        try:
            out = fn(*_standins(args), **_standins(kwargs))
        except Exception:  # a check the stand-ins' values fail: the other values
            out = fn(*_standins(args, True), **_standins(kwargs, True))
    return _to_meta(out)


# ---- the factories' namespace ------------------------------------------------------------------

def _shape(shape) -> tuple:
    return (shape,) if isinstance(shape, int) else tuple(shape)


def zeros(shape, dtype=float) -> MetaArray:
    return MetaArray(_shape(shape), dtype)


ones = empty = zeros


def full(shape, fill_value, dtype=None) -> MetaArray:
    return MetaArray(_shape(shape), xp.asarray(fill_value).dtype if dtype is None else dtype)


def arange(*args, dtype=None) -> MetaArray:
    return MetaArray((len(range(*args)) if all(isinstance(a, int) for a in args)
                      else xp.arange(*args).size,), xp.arange(0, dtype=dtype).dtype)


def linspace(start, end, steps, dtype=None) -> MetaArray:
    return MetaArray((steps,), dtype)


def eye(n, m=None, dtype=float) -> MetaArray:
    return MetaArray((n, n if m is None else m), dtype)


def asarray(a, dtype=None) -> MetaArray:
    """``a``'s metadata on the meta device (the values stay behind)."""
    dt = _probe(a).dtype if dtype is None else xp.dtype(dtype)
    return MetaArray(_shape_of(a), dt)
