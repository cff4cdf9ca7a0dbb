"""Tensor creation: tensor, factories, the *_like forms and the seeded random generator."""

from __future__ import annotations

import functools
import inspect
import math
import os
import warnings

from . import _random as _sample
from ._backend import SCALAR_NAMES, as_dtype, astype, get_default_dtype, np_finfo, xp
from ._batched import BatchedTensor, batched
from ._batched import state as vmap_state
from ._device import as_device, device, get_default_device, memory_of
from ._modes import seen, stack
from ._quiet import quiet
from ._shapes import _kept_order, size_tuple
from ._tooling import kernel
from ._validation import arange_steps, dtype_argument, nested_data
from ._validation import size as check_size
from .tensor import Tensor

__all__ = ["tensor", "as_tensor", "from_numpy", "zeros", "ones", "full", "empty", "arange",
           "linspace", "eye", "rand", "randn", "randint", "randperm", "manual_seed", "seed",
           "initial_seed", "Generator", "zeros_like", "ones_like", "full_like", "empty_like",
           "rand_like", "randn_like", "randint_like", "default_generator", "normal", "poisson",
           "bernoulli", "multinomial", "binomial", "get_rng_state", "set_rng_state"]

_DEFAULT_SEED = 67280421310721  # a new torch.Generator's seed


def _check_device(device, what: str = "empty") -> None:
    """Refuse a device other than the CPU (the factories that allocate on any device call
    ``memory_of`` themselves)."""
    if memory_of(device, what) is not xp:
        raise NotImplementedError(f"{what}: not available on the {device} device in chainrule")


def _finish(array, requires_grad: bool) -> Tensor:
    t = Tensor._wrap(array, None, 0)
    if requires_grad:
        t.requires_grad_(True)
    return t


def _factory(*extra: str, describe=None):
    """Give a factory PyTorch's keyword-only ``out``, ``layout`` and ``pin_memory`` (and the
    ``extra`` ones: ``memory_format``, accepted as NumPy's layout stands): only the strided
    layout exists here; ``out=`` takes the result (in out's dtype unless ``dtype`` is given).
    Dispatch modes see the call as ``describe`` names it (see ``_seen``)."""
    def decorate(fn):
        name = fn.__name__
        params = list(inspect.signature(fn).parameters.values())
        sized = params[0].kind is inspect.Parameter.VAR_POSITIONAL and params[0].name == "size"

        @functools.wraps(fn)
        def factory(*args, out=None, layout=None, pin_memory: bool = False, _seen_by=None,
                    **kwargs):
            if stack.modes is not None and describe is not None and _seen_by is None and \
                    stack.dispatch is not None:  # the call again, as the modes' kernel
                return _dispatched(describe, factory, args, dict(
                    kwargs, out=out, layout=layout, pin_memory=pin_memory), _seen_by=True)
            for key in extra:
                kwargs.pop(key, None)
            if sized and "size" in kwargs:  # f(size=(2, 3)), as PyTorch's parser allows
                args = _size_keyword(name, args, kwargs.pop("size"))
            if layout is not None and str(layout) != "torch.strided":
                raise RuntimeError(f"{name}(): only the strided layout is provided (got "
                                   f"{layout}); sparse tensors do not exist in chainrule")
            if pin_memory:
                raise RuntimeError("pin_memory=True requires a CUDA or other accelerator "
                                   "backend; no pinned memory allocator is available on this "
                                   "system.")
            if out is not None and kwargs.get("dtype") is None:
                kwargs["dtype"] = out.dtype
            result = fn(*args, **kwargs)
            if name == "arange" and out is not None and out.numel() != result.numel():
                warnings.warn(
                    f"The number of elements in the out tensor of shape {list(out.shape)} is "
                    f"{out.numel()} which does not match the computed number of elements "
                    f"{result.numel()}. Note that this may occur as a result of rounding error. "
                    f"The out tensor will be resized to a tensor of shape "
                    f"({result.numel()},).", UserWarning, stacklevel=2)
            return _write_out(result, out, name)

        added = [inspect.Parameter(p, inspect.Parameter.KEYWORD_ONLY, default=d)
                 for p, d in (("out", None), ("layout", None), ("pin_memory", False),
                              *((key, None) for key in extra))]
        factory.__signature__ = inspect.Signature(params + added)
        return factory

    return decorate


# ---- what dispatch modes see of a factory (aten's operator, arguments as PyTorch passes them) --

def _seen(describe):
    """Dispatch modes see a factory's call as one aten operator: ``describe(*args, **kwargs)``
    is its (name, overload, args, kwargs) as PyTorch passes them. Without a dispatch mode the
    factory pays one check (``_factory``'s factories make it themselves, with no extra call)."""
    def decorate(fn):
        @functools.wraps(fn)
        def factory(*args, **kwargs):
            if stack.modes is None or stack.dispatch is None:
                return fn(*args, **kwargs)
            return _dispatched(describe, fn, args, kwargs)

        return factory

    return decorate


def _dispatched(describe, fn, args: tuple, kwargs: dict, **inner):
    """``fn(*args, **kwargs, **inner)`` as the kernel of the aten call ``describe`` names."""
    try:
        name, overload, aten_args, aten_kwargs = describe(*args, **kwargs)
    except Exception:  # noqa: BLE001  (bad arguments: the factory raises PyTorch's error)
        return fn(*args, **kwargs, **inner)
    # requires_grad is autograd's, above the modes: set on what they return
    requires_grad = kwargs.pop("requires_grad", False)
    out = seen(name, overload, aten_args, aten_kwargs, fn,
               lambda: fn(*args, **kwargs, **inner))
    return out.requires_grad_(True) if requires_grad else out


def _options(dtype=None, layout=None, device=None, pin_memory: bool = False,
             requires_grad: bool = False, *, like: bool = False) -> dict:
    """A factory's tensor options as aten takes them: dtype and layout when given, the device
    (the default one unless ``like``), pin_memory."""
    kwargs = {}
    if dtype is not None:
        kwargs["dtype"] = dtype
    if layout is not None:
        kwargs["layout"] = layout
    if device is not None or not like:
        kwargs["device"] = get_default_device() if device is None else as_device(device)
    kwargs["pin_memory"] = pin_memory
    return kwargs


def _sized(name: str, overload: str = "default"):
    """``ones(*size, ...)`` and kin: ``aten.<name>.<overload>(size, ...)``; with a generator
    the ``generator`` overload, with ``out`` the ``out`` one."""
    def describe(*size, generator=None, out=None, memory_format=None, **options):
        if "size" in options:
            size = (options.pop("size"),)
        shape = list(check_size(name, size))
        if out is not None:
            return name, "out", (shape,), {"out": out}
        kwargs = {} if generator is None else {"generator": generator}
        kwargs.update(_options(**options))
        if memory_format is not None:
            kwargs["memory_format"] = memory_format
        return name, overload if generator is None else "generator", (shape,), kwargs

    return describe


def _positional(name: str, overloads: tuple, defaults: tuple = ()):
    """A factory of positional numbers (``arange(end)``, ``arange(start, end)``, ``eye(n, m)``,
    ``linspace``): the overload named by how many were given."""
    def describe(*args, out=None, **options):
        args = tuple(args) + tuple(options.pop(k) for k in defaults if k in options)
        if out is not None:
            return name, "out", args, {"out": out}
        return name, overloads[len(args) - 1], args, _options(**options)

    return describe


def _described_like(name: str, extra: int = 0, overloads: tuple = ("default",)):
    """``zeros_like(input, ...)`` and kin: ``aten.<name>(input, ...)`` with the options given."""
    def describe(input, *args, memory_format=None, generator=None, **options):
        if not isinstance(input, Tensor):
            raise TypeError(name)
        kwargs = {} if generator is None else {"generator": generator}
        kwargs.update(_options(**options, like=True))
        if memory_format is not None:
            kwargs["memory_format"] = memory_format
        return name, overloads[len(args) - extra], (input, *args), kwargs

    return describe


def _lift_fresh(t: Tensor) -> Tensor:
    """``aten.lift_fresh``: a tensor just made from data, handed on as it is."""
    return t


def _lifted(t: Tensor) -> Tensor:
    """A tensor made from Python or NumPy data, as dispatch modes see it: ``aten.lift_fresh``."""
    if stack.modes is None or stack.dispatch is None:
        return t
    return seen("lift_fresh", "default", (t,), {}, _lift_fresh, lambda: t)


def _size_keyword(name: str, args: tuple, size) -> tuple:
    """The positional form of ``size=``: a sequence of ints, and no positional size besides."""
    if args:
        raise TypeError(f"{name}() got multiple values for argument 'size'")
    if not isinstance(size, (tuple, list)):
        raise TypeError(f"{name}(): argument 'size' must be tuple of ints, not "
                        f"{type(size).__name__}")
    return (tuple(size),)


def _infer(data):
    """A NumPy array for Python data, with PyTorch's dtype inference."""
    if isinstance(data, Tensor):
        return data._data
    if isinstance(data, xp.ndarray) or isinstance(data, xp.generic):
        return xp.asarray(data)
    if isinstance(data, (list, tuple)) and any(isinstance(d, Tensor) for d in _flat(data)):
        data = [d._data if isinstance(d, Tensor) else d for d in data] if not any(
            isinstance(d, (list, tuple)) for d in data) else [_infer(d) for d in data]
    try:
        array = xp.asarray(data)
    except ValueError:  # ragged: PyTorch's message, not NumPy's "inhomogeneous shape"
        nested_data(data)
        raise
    if array.dtype.kind in "OUS":
        nested_data(data)
    if isinstance(data, (list, tuple)) and array.dtype.kind in "iufc" and any(
            isinstance(d, xp.generic) for d in _flat(data)):
        return array.astype(_element_dtype(data), copy=False)
    if array.dtype.kind == "f":
        return astype(array, get_default_dtype().np)
    if array.dtype.kind in "iu":
        return array.astype(xp.int64, copy=False)
    if array.dtype.kind == "c":
        return array.astype(xp.complex128 if get_default_dtype().np == xp.float64
                            else xp.complex64, copy=False)
    if array.dtype.kind == "b":
        return array
    raise TypeError(f"tensor: could not infer dtype of {type(data).__name__}; pass numbers, "
                    "nested lists of numbers or a NumPy array")


_CATEGORY = {"b": 0, "i": 1, "u": 1, "f": 2, "c": 3}


def _element_dtype(data):
    """PyTorch's dtype for a list holding NumPy scalars: each element's own dtype (a Python
    number's is the default one of its kind), promoted pairwise as torch.promote_types."""
    default = get_default_dtype().np
    result = None
    for d in _flat(data):
        if isinstance(d, xp.generic):
            dtype = d.dtype
        elif isinstance(d, bool):
            dtype = xp.dtype(xp.bool_)
        elif isinstance(d, int):
            dtype = xp.dtype(xp.int64)
        elif isinstance(d, float):
            dtype = default
        else:
            dtype = xp.dtype(xp.complex128 if default == xp.float64 else xp.complex64)
        if result is None:
            result = dtype
            continue
        a, b = _CATEGORY[result.kind], _CATEGORY[dtype.kind]
        if a == b or {a, b} == {2, 3}:
            result = xp.promote_types(result, dtype)
        elif b > a:
            result = dtype
    return result


def _flat(data):
    for d in data:
        if isinstance(d, (list, tuple)):
            yield from _flat(d)
        else:
            yield d


def tensor(data, *, dtype=None, device=None, requires_grad: bool = False,
           pin_memory: bool = False) -> Tensor:
    """A new tensor holding a copy of ``data``."""
    mem = memory_of(device, "tensor")
    if isinstance(data, Tensor):
        _copy_construct_warning("torch.tensor")
    if dtype is not None:
        dtype_argument("tensor", dtype)
    with quiet():  # 1e300 as float32 is inf, as in PyTorch, without NumPy's overflow warning
        if dtype is not None and not isinstance(data, (Tensor, xp.ndarray)):
            try:
                np_dtype = as_dtype(dtype).np
                # no detour through float32, except to bfloat16 and float8, as PyTorch
                array = (xp.array(data, dtype=np_dtype) if np_dtype.num < 256
                         else astype(xp.array(data, dtype=xp.float64), np_dtype))
            except (ValueError, TypeError):
                nested_data(data)
                raise
        else:
            array = _infer(data)
            array = astype(array, as_dtype(dtype).np) if dtype is not None else array.copy()
    t = _lifted(Tensor._wrap(array if mem is xp else mem.asarray(array), None, 0))
    return t.requires_grad_(True) if requires_grad else t


def new_tensor(self, data, *, dtype=None, device=None, requires_grad: bool = False) -> Tensor:
    """A new tensor from ``data``, with this tensor's dtype and device unless given."""
    if dtype is not None:
        dtype_argument("new_tensor", dtype)
    if isinstance(data, Tensor):
        _copy_construct_warning("tensor.new_tensor")
        data = data._data  # the values, without torch.tensor's own warning
    return tensor(data, dtype=dtype or self.dtype, device=self.device if device is None else
                  device, requires_grad=requires_grad)


def _copy_construct_warning(how: str) -> None:
    warnings.warn("To copy construct from a tensor, it is recommended to use "
                  "sourceTensor.detach().clone() or "
                  "sourceTensor.detach().clone().requires_grad_(True), rather than "
                  f"{how}(sourceTensor).", UserWarning, stacklevel=3)


Tensor.new_tensor = new_tensor


def as_tensor(data, dtype=None, device=None) -> Tensor:
    """``data`` as a tensor, sharing memory when it already is one or a NumPy array."""
    if device is not None and as_device(device) != (data.device if isinstance(data, Tensor)
                                                    else get_default_device()):
        return tensor(data, dtype=dtype, device=device)  # on another device: a copy
    if dtype is not None:
        dtype_argument("as_tensor", dtype)
    if isinstance(data, Tensor):
        return data if dtype is None else data.to(dtype)
    if isinstance(data, xp.ndarray):
        return _lifted(Tensor._wrap(data if dtype is None else data.astype(as_dtype(dtype).np,
                                                                           copy=False), None, 0))
    return tensor(data, dtype=dtype)


def from_numpy(array) -> Tensor:
    """A tensor sharing memory with a NumPy array."""
    if not isinstance(array, xp.ndarray):
        raise TypeError(f"expected np.ndarray (got {type(array).__name__})")
    as_dtype(array.dtype)
    return _lifted(Tensor._wrap(array, None, 0))


def _dtype(name: str, dtype, default=None):
    """The NumPy dtype for factory ``name``'s ``dtype`` argument (None: ``default``)."""
    if dtype is None:
        return default or get_default_dtype().np
    dtype_argument(name, dtype)
    return as_dtype(dtype).np


@_factory(describe=_sized("zeros"))
def zeros(*size, dtype=None, device=None, requires_grad: bool = False) -> Tensor:
    """A tensor of zeros."""
    mem = memory_of(device, "zeros")
    shape = check_size("zeros", size, negative="zeros: Dimension size must be non-negative.")
    return _finish(mem.zeros(shape, dtype=_dtype("zeros", dtype)), requires_grad)


@_factory(describe=_sized("ones"))
def ones(*size, dtype=None, device=None, requires_grad: bool = False) -> Tensor:
    """A tensor of ones."""
    mem = memory_of(device, "ones")
    return _finish(mem.ones(check_size("ones", size), dtype=_dtype("ones", dtype)), requires_grad)


@_factory(describe=_sized("empty", "memory_format"))
def empty(*size, dtype=None, device=None, requires_grad: bool = False,
          memory_format=None) -> Tensor:
    """An uninitialised tensor (zeros here)."""
    shape = check_size("empty", size)
    mem = memory_of(device)
    order = None if memory_format is None else _format_order(memory_format, len(shape))
    if order is None or mem is not xp:
        return _finish(mem.zeros(shape, dtype=_dtype("empty", dtype)), requires_grad)
    array = xp.zeros([shape[d] for d in order], dtype=_dtype("empty", dtype))
    return _finish(array.transpose(_inverse(order)), requires_grad)


def _format_order(memory_format, rank: int) -> tuple | None:
    """The axis order (outermost first) of a memory format: None for contiguous_format, the
    channels last for channels_last (rank 4) and channels_last_3d (rank 5)."""
    name = str(memory_format).rpartition(".")[2]
    if name == "contiguous_format":
        return None
    if name == "preserve_format":
        raise RuntimeError("unsupported memory format Preserve")
    want = 4 if name == "channels_last" else 5
    if rank != want:
        raise RuntimeError(f"required rank {want} tensor to use {name} format")
    return (0, *range(2, want), 1)


def _inverse(order: tuple) -> tuple:
    return tuple(sorted(range(len(order)), key=order.__getitem__))


def _describe_full(size, fill_value, *, out=None, **options):
    shape = list(check_size("full", (size,)))
    if out is not None:
        return "full", "out", (shape, fill_value), {"out": out}
    return "full", "default", (shape, fill_value), _options(**options)


def _describe_randint(*args, size=None, generator=None, out=None, **options):
    if size is None:
        *bounds, size = args
    else:
        bounds = list(args)
    overload = ("default", "low")[len(bounds) - 1]
    if generator is not None:
        overload = "generator" if overload == "default" else "low_generator"
    shape = list(check_size("randint", (size,)))
    if out is not None:
        return "randint", "out" if len(bounds) == 1 else "low_out", (*bounds, shape), {"out": out}
    kwargs = {} if generator is None else {"generator": generator}
    kwargs.update(_options(**options))
    return "randint", overload, (*bounds, shape), kwargs


def _describe_randperm(n, *, generator=None, out=None, **options):
    if out is not None:
        return "randperm", "out", (n,), {"out": out}
    kwargs = {} if generator is None else {"generator": generator}
    kwargs.update(_options(**options))
    return "randperm", "default" if generator is None else "generator", (n,), kwargs


def _fill_dtype(value):
    if isinstance(value, bool):
        return xp.dtype(xp.bool_)
    if isinstance(value, int):
        return xp.dtype(xp.int64)
    return get_default_dtype().np


@_factory(describe=_describe_full)
def full(size, fill_value, *, dtype=None, device=None, requires_grad: bool = False) -> Tensor:
    """A tensor filled with ``fill_value``."""
    mem = memory_of(device, "full")
    if isinstance(fill_value, Tensor):
        fill_value = fill_value.item()
    if not isinstance(fill_value, (int, float, complex, xp.number, xp.bool_)):
        raise TypeError(f"full(): argument 'fill_value' (position 2) must be Number, not "
                        f"{type(fill_value).__name__}")
    if isinstance(size, Tensor) or not hasattr(size, "__iter__"):
        raise TypeError(f"full(): argument 'size' (position 1) must be tuple of ints, not "
                        f"{type(size).__name__}")
    dt = _dtype("full", dtype, _fill_dtype(fill_value))
    if dt.num >= 256:  # bfloat16, float8: PyTorch's conversion of the value
        fill_value = astype(xp.asarray(fill_value, dtype=xp.float64), dt)
    array = mem.full(check_size("full", (size,)), fill_value, dtype=dt)
    return _finish(array, requires_grad)


@_factory(describe=_positional("arange", ("default", "start", "start_step"), ("end", "step")))
def arange(start, end=None, step=1, *, dtype=None, device=None,
           requires_grad: bool = False) -> Tensor:
    """Values from start to end (exclusive) in steps."""
    mem = memory_of(device, "arange")
    if end is None:
        start, end = 0, start
    values = [v.item() if isinstance(v, Tensor) else v for v in (start, end, step)]
    arange_steps(*values)
    integral = all(isinstance(v, int) for v in values)
    dt = _dtype("arange", dtype, xp.dtype(xp.int64) if integral else get_default_dtype().np)
    _no_float8(dt, "arange_cpu")
    if dt.kind in "fV":
        # As PyTorch: start + i * step in double precision, rounded once to dt (bfloat16:
        # through float).
        n = max(0, math.ceil((values[1] - values[0]) / values[2]))
        array = astype(values[0] + mem.arange(n, dtype=xp.float64) * values[2], dt)
    else:
        array = mem.arange(*values, dtype=dt)
    return _finish(array, requires_grad)


@_factory(describe=_positional("linspace", ("", "", "default"), ("steps",)))
def linspace(start, end, steps: int, *, dtype=None, device=None,
             requires_grad: bool = False) -> Tensor:
    """``steps`` evenly spaced values from start to end (inclusive)."""
    mem = memory_of(device, "linspace")
    if steps < 0:
        raise RuntimeError("number of steps must be non-negative")
    _no_float8(_dtype("linspace", dtype), "linspace_cpu")
    return _finish(mem.linspace(start, end, steps, dtype=_dtype("linspace", dtype)), requires_grad)


@_factory(describe=_positional("eye", ("default", "m"), ("m",)))
def eye(n: int, m: int | None = None, *, dtype=None, device=None,
        requires_grad: bool = False) -> Tensor:
    """A 2-D tensor with ones on the diagonal."""
    mem = memory_of(device, "eye")
    for name, k in (("n", n), ("m", m)):
        if k is not None and k < 0:
            raise RuntimeError(f"{name} must be greater or equal to 0, got {k}")
    return _finish(mem.eye(n, m, dtype=_dtype("eye", dtype)), requires_grad)


class Generator:
    """A random number generator: PyTorch's CPU generator (a Mersenne Twister, mt19937), so the
    same seed gives PyTorch's draws."""

    def __init__(self, device="cpu") -> None:
        self._device = _generator_device(device)
        self._engine = _sample.Engine(_DEFAULT_SEED)
        # NumPy's samplers on the same stream, for the distributions PyTorch's kernels are not
        # reproduced for.
        self._rng = self._engine.numpy

    @property
    def device(self) -> device:
        return self._device

    def manual_seed(self, seed) -> Generator:
        """Seed the generator (an integer in [-2**63, 2**64); a negative one is read as its
        unsigned 64-bit pattern); returns it."""
        seed = _seed_value(seed)
        if stack.capture is not None:  # inside a compiled function: replayed too
            stack.capture.effect(_reseed, self, seed)
        else:
            _reseed(self, seed)
        return self

    def seed(self) -> int:
        """Seed from the operating system's randomness; returns the seed."""
        value = _fresh_seed()
        self.manual_seed(value)
        return value

    def initial_seed(self) -> int:
        """The seed the generator was last seeded with."""
        return self._engine.seed

    def get_state(self) -> Tensor:
        """The state as a uint8 tensor, in PyTorch's layout (5056 bytes)."""
        capture = stack.capture
        data = _state_of(self) if capture is None else capture.call(_state_of, (self,), {})
        return Tensor._wrap(data, None, 0)

    def set_state(self, new_state: Tensor) -> Generator:
        """Restore a state from ``get_state`` (this generator's, another's or PyTorch's)."""
        if not isinstance(new_state, Tensor):
            raise TypeError(f"expected a torch.ByteTensor, but got {type(new_state).__name__}")
        data = new_state._data
        if data.dtype != xp.uint8:
            raise TypeError("RNG state must be a torch.ByteTensor")
        if not data.flags.c_contiguous:
            raise RuntimeError("RNG state must be contiguous")
        try:
            if stack.capture is not None:  # inside a compiled function: replayed too
                stack.capture.effect(_load_state, self, data)
            else:
                _load_state(self, data)
        except _sample.InvalidState as e:
            raise RuntimeError(e.args[0]) from None
        return self

    def clone_state(self) -> Generator:
        """A new generator in the same state."""
        twin = Generator(self._device)
        twin._engine.load(self._engine.state_bytes())
        return twin

    def graphsafe_get_state(self) -> Generator:
        """CUDA graphs' state: refused, as by PyTorch's CPU generator."""
        raise NotImplementedError("graphsafe_get_state is not supported in this Generator")

    def graphsafe_set_state(self, state: Generator) -> Generator:
        """CUDA graphs' state: refused, as by PyTorch's CPU generator."""
        raise NotImplementedError("graphsafe_set_state is not supported in this Generator")

    def get_offset(self) -> int:
        """Philox's offset: refused, as by PyTorch's CPU generator (a Mersenne Twister)."""
        raise RuntimeError("CPU Generator does not use offset")

    def set_offset(self, offset: int) -> Generator:
        """Philox's offset: refused, as by PyTorch's CPU generator (a Mersenne Twister)."""
        raise RuntimeError("CPU Generator does not use offset")

    def __reduce__(self):
        return Generator, (str(self._device),), (self.initial_seed(), None, self.get_state())

    def __setstate__(self, state) -> None:
        seed, _, rng_state = state
        self.manual_seed(seed)
        self.set_state(rng_state)

    def _position(self) -> tuple:
        """Where the stream is (for chainrule.compile's guards), comparable with ==."""
        return self._engine.position()


def _generator_device(device_) -> device:
    where = device("cpu" if device_ is None else device_)
    if where.type == "cpu":
        return where
    if where.type == "cuda":
        raise RuntimeError(
            "Cannot get CUDA generator without ATen_cuda library. PyTorch splits its backend into "
            "two shared libraries: a CPU library and a CUDA library; this error has occurred "
            "because you are trying to use some CUDA functionality, but the CUDA library has not "
            "been loaded by the dynamic linker for some reason.  The CUDA library MUST be loaded, "
            "EVEN IF you don't directly use any symbols from the CUDA library! One common culprit "
            "is a lack of -Wl,--no-as-needed in your link arguments; many dynamic linkers will "
            "delete dynamic library dependencies if you don't depend on any of their symbols.  "
            "You can check if this has occurred by using ldd on your binary to see if there is a "
            "dependency on *_cuda.so library.")
    raise RuntimeError(f"{where.type.upper()} device type not an accelerator.")


def _seed_value(seed) -> int:
    """A seed as PyTorch's Generator.manual_seed reads it: a Python int in [-2**63, 2**64),
    negative ones as their unsigned 64-bit pattern."""
    if isinstance(seed, xp.integer):
        raise TypeError("an integer is required")
    if type(seed) is bool or not isinstance(seed, int):
        kind = type(seed)
        name = "Tensor" if isinstance(seed, Tensor) else kind.__name__ if \
            kind.__module__ == "builtins" else f"{kind.__module__}.{kind.__name__}"
        raise RuntimeError(f"manual_seed expected a long, but got {name}")
    if not -(2**63) <= seed < 2**64:
        raise ValueError("Overflow when unpacking long long")
    return seed % 2**64


def _fresh_seed() -> int:
    """64 bits from the operating system, as PyTorch seeds a generator non-deterministically."""
    return int.from_bytes(os.urandom(8), "little")


def _state_of(generator: Generator):
    return xp.frombuffer(generator._engine.state_bytes(), dtype=xp.uint8).copy()


def _load_state(generator: Generator, data) -> None:
    generator._engine.load(data.tobytes())


def _reseed(generator: Generator, seed: int) -> None:
    # In place: code holding the stream (a compiled function's draws) follows.
    generator._engine.reseed(seed)


default_generator = Generator()
default_generator.manual_seed(_fresh_seed())  # PyTorch's default generator starts unseeded


def manual_seed(seed) -> Generator:
    """Seed the default generator; returns it."""
    return default_generator.manual_seed(int(seed))


def seed() -> int:
    """Seed the default generator non-deterministically; returns the seed."""
    return default_generator.seed()


def initial_seed() -> int:
    """The default generator's seed."""
    return default_generator.initial_seed()


def get_rng_state() -> Tensor:
    """The default generator's state, as a uint8 tensor (``set_rng_state`` restores it)."""
    return default_generator.get_state()


def set_rng_state(new_state: Tensor) -> None:
    """Restore the default generator's state from ``get_rng_state()``."""
    default_generator.set_state(new_state)


def _generator(generator) -> Generator:
    """The generator a sampler draws from (the default one unless given); vmap's 'error'
    randomness refuses, and a capture notes the stream."""
    if vmap_state.level and "error" in vmap_state.randomness:
        raise RuntimeError("vmap: called random operation while in randomness error mode. Please "
                           "either use the 'same' or 'different' randomness flags on vmap or "
                           "perform the randomness operation out of vmap")
    generator = generator or default_generator
    if stack.capture is not None:
        stack.capture.draw(generator)
    return generator


def _rng(generator):
    """NumPy's samplers on a generator's stream (for samplers drawn as NumPy draws them)."""
    return _generator(generator)._rng


def _sampler(generator, sample, *args):
    """A draw for ``_random``: ``sample(engine, n, *args)`` from the generator's engine, in the
    shape asked (a closure: chainrule.compile sees the draws of two calls as the same kernel)."""
    engine = _generator(generator)._engine

    def draw(shape: tuple):
        return _draw(engine, sample, args, shape)

    return draw


def _draw(engine, sample, args: tuple, shape: tuple):
    if args and xp.dtype(args[0]).kind == "c":  # complex: the real and imaginary parts
        real = xp.float32 if xp.dtype(args[0]) == xp.complex64 else xp.float64
        values = sample(engine, 2 * math.prod(shape), real, *args[1:])
        return values.view(args[0]).reshape(shape)
    return sample(engine, math.prod(shape), *args).reshape(shape)


def _in_order(draw, order: tuple, shape: tuple):
    """``draw`` filled in the axis ``order`` (outermost first) and seen in the given one."""
    values = draw(tuple(shape[d] for d in order))
    return values.transpose(tuple(sorted(range(len(order)), key=order.__getitem__)))


def _layout(array, dense_only: bool = False) -> tuple:
    """How PyTorch's kernels walk a tensor's memory: its axes from the largest stride to the
    smallest (None: as they are) and whether it is contiguous. ``dense_only``: the layout
    ``empty_like`` keeps (a permutation of a contiguous one), else contiguous."""
    if not isinstance(array, xp.ndarray) or array.flags.c_contiguous:
        return None, True
    order = tuple(sorted(range(array.ndim), key=lambda d: -abs(array.strides[d])))
    if dense_only:
        step = array.itemsize
        for d in reversed(order):
            if array.shape[d] != 1 and abs(array.strides[d]) != step:
                return None, True
            step *= array.shape[d]
    return (None if order == tuple(range(array.ndim)) else order), False


def _random(draw, shape: tuple, dtype, requires_grad: bool, order: tuple | None = None,
            examples: bool = True) -> Tensor:
    """``draw(shape)`` as a tensor, drawn in the axis ``order`` given (the memory order of a
    tensor being filled); under ``vmap(randomness='different')`` every example gets draws of its
    own (a batched tensor), under 'same' all share one (``examples=False``: a sampler drawing
    for a whole batch at once)."""
    levels = [i + 1 for i, mode in enumerate(vmap_state.randomness) if mode == "different"] \
        if vmap_state.level and examples else []
    sizes = tuple(vmap_state.sizes[i - 1] for i in levels)
    if order is not None:
        unordered, k = draw, len(sizes)
        axes = tuple(range(k)) + tuple(k + d for d in order)

        def draw(shape: tuple):
            return _in_order(unordered, axes, shape)
    array = kernel(draw, sizes + shape)
    if array.dtype != dtype:
        array = kernel(xp.ndarray.astype, array, dtype)
    out = _finish(array, requires_grad and not levels)
    for level in levels:
        out = batched(out, level)
    if levels and requires_grad:
        out.requires_grad_()
    return out


_TYPE_NAMES = SCALAR_NAMES


def _no_float8(dt, kernel: str) -> None:
    """PyTorch computes no sequence in a float8 dtype (NumPy's one-byte ml_dtypes)."""
    if dt.num >= 256 and dt.itemsize == 1:
        raise NotImplementedError(f'"{kernel}" not implemented for \'{_TYPE_NAMES[dt.name]}\'')


def _require_float(dt, kernel: str, complex_ok: bool = False) -> None:
    """PyTorch's error for a floating-point sampler asked for another dtype."""
    dt = xp.dtype(dt)
    # "V" is bfloat16 or float8; PyTorch samples no float8 (its only one-byte floats)
    if (dt.kind not in "fV" or dt.itemsize == 1) and not (complex_ok and dt.kind == "c"):
        name = _TYPE_NAMES.get(dt.name, dt.name)
        raise NotImplementedError(f'"{kernel}" not implemented for \'{name}\'')


def _normal_std(dt, std: float) -> float:
    """A complex normal's parts each have half the variance."""
    return std / math.sqrt(2) if xp.dtype(dt).kind == "c" else std


@_factory(describe=_sized("rand"))
def rand(*size, generator=None, dtype=None, device=None, requires_grad: bool = False) -> Tensor:
    """Uniform samples on [0, 1)."""
    mem = memory_of(device, "rand")
    dt = _dtype("rand", dtype)
    _require_float(dt, "check_uniform_bounds", complex_ok=True)
    shape = check_size("rand", size)
    if mem is not xp:  # meta: a shape, nothing drawn
        return _finish(mem.zeros(shape, dtype=dt), requires_grad)
    return _random(_sampler(generator, _sample.uniform, dt), shape, dt, requires_grad)


@_factory(describe=_sized("randn"))
def randn(*size, generator=None, dtype=None, device=None, requires_grad: bool = False) -> Tensor:
    """Standard normal samples."""
    mem = memory_of(device, "randn")
    dt = _dtype("randn", dtype)
    _require_float(dt, "normal_kernel_cpu", complex_ok=True)
    shape = check_size("randn", size)
    if mem is not xp:
        return _finish(mem.zeros(shape, dtype=dt), requires_grad)
    draw = _sampler(generator, _sample.normal, dt, 0.0, _normal_std(dt, 1.0))
    return _random(draw, shape, dt, requires_grad)


@_seen(_describe_randint)
def randint(*args, size=None, generator=None, dtype=None, device=None,
            requires_grad: bool = False) -> Tensor:
    """Random integers in [low, high): ``randint(high, size)`` or ``randint(low, high, size)``."""
    mem = memory_of(device, "randint")
    if size is None:
        *bounds, size = args
    else:
        bounds = list(args)
    low, high = (0, bounds[0]) if len(bounds) == 1 else bounds
    if low >= high:
        raise RuntimeError(f"random_ expects 'from' to be less than 'to', but got from={low} >= "
                           f"to={high}")
    dt = _dtype("randint", dtype, xp.dtype(xp.int64))
    shape = check_size("randint", (size,))
    if mem is not xp:
        return _finish(mem.zeros(shape, dtype=dt), requires_grad)
    low, high = _float_bounds(dt, low, high)
    _random_bounds(dt, low, high - 1)
    draw = _sampler(generator, _sample.integers, dt, low, high - low)
    return _random(draw, shape, dt, requires_grad)


@_factory(describe=_describe_randperm)
def randperm(n: int, *, generator=None, dtype=None, device=None,
             requires_grad: bool = False) -> Tensor:
    """A random permutation of 0..n-1."""
    mem = memory_of(device, "randperm")
    if n < 0:
        raise RuntimeError(f"Trying to create tensor with negative dimension {n}: [{n}]")
    dt = _dtype("randperm", dtype, xp.dtype(xp.int64))
    if mem is not xp:
        return _finish(mem.zeros((n,), dtype=dt), requires_grad)
    engine = _generator(generator)._engine
    return _finish(kernel(_permutation, engine, n, dt), requires_grad)


def _permutation(engine, n: int, dtype):
    return _sample.randperm(engine, n).astype(dtype)


def _float_bounds(dt, low: int, high: int | None = None) -> tuple:
    """random_'s [low, high) for a floating dtype moved inward to integers the dtype holds, so
    that no draw rounds to ``high`` (PyTorch's update_from and update_to)."""
    if xp.dtype(dt).kind not in "fV":
        return low, high
    digits = np_finfo(xp.dtype(dt)).nmant + 1
    up = _cast_int(low + 1, dt)
    if up < low:
        low = up + (1 << ((abs(low + 1).bit_length() - 1) - digits + 1))
    if high is None:
        return low, high
    down = _cast_int(high - 1, dt)
    if down >= high:
        high = down - (1 << ((abs(high - 1).bit_length() - 1) - digits + 1))
    if low >= high:
        raise RuntimeError(f"random_ expects 'from' casted to dtype to be less than 'to' casted "
                           f"to dtype, but got from={low} >= to={high}")
    return low, high


def _cast_int(value: int, dt) -> int:
    """An int64 converted to a float dtype and back, as C++ rounds it (half through float)."""
    digits = ([24, 11] if xp.dtype(dt) == xp.float16 else [24, 8] if xp.dtype(dt).kind == "V"
              else [xp.finfo(dt).nmant + 1])
    for bits in digits:
        shift = abs(value).bit_length() - bits
        if shift > 0:
            q, r = divmod(abs(value), 1 << shift)
            if r > 1 << (shift - 1) or (r == 1 << (shift - 1) and q & 1):
                q += 1
            value = (q << shift) * (1 if value > 0 else -1)
    return value


def _like(factory):
    def like(input, *, dtype=None, layout=None, device=None, requires_grad: bool = False,
             memory_format=None, _seen_by=None, **kwargs):
        if stack.modes is not None and _seen_by is None and stack.dispatch is not None:
            return _dispatched(_described_like(like.__name__), like, (input,), dict(
                kwargs, dtype=dtype, layout=layout, device=device, requires_grad=requires_grad,
                memory_format=memory_format), _seen_by=True)
        if dtype is not None:
            dtype_argument(like.__name__, dtype)
        if type(input) is BatchedTensor and factory not in (rand, randn):
            return _batched_like(like, input, dtype, requires_grad, **kwargs)
        order, contiguous = _like_layout(input, memory_format)
        if order is not None and device is not None and memory_of(device) is not xp:
            order = None
        if factory in (rand, randn) and order is not None:
            return _drawn_like(factory, input, dtype, requires_grad, contiguous, order,
                               **kwargs)
        return _laid_out(factory, order, input.shape, requires_grad, dtype=dtype or input.dtype,
                         layout=layout, device=input.device if device is None else device,
                         **kwargs)

    like.__name__ = factory.__name__ + "_like"
    like.__doc__ = f"{factory.__name__} with the shape (and by default dtype) of ``input``."
    return like


def _like_layout(input, memory_format) -> tuple:
    """The axis order (outermost first; None: as they are) and contiguity of a ``*_like``
    result: ``preserve_format`` keeps a dense input's layout, as PyTorch's."""
    name = "preserve_format" if memory_format is None else str(memory_format).rpartition(".")[2]
    if name == "preserve_format":
        order = None if type(input) is BatchedTensor else _like_order(input._data)
        return order, order is None
    order = _format_order(memory_format, input.dim())
    return order, order is None


def _like_order(array) -> tuple | None:
    """The axis order (outermost first) of a ``*_like`` result kept from a strided input, as
    PyTorch infers it (``_shapes._kept_order``); None when that is the given order."""
    if not isinstance(array, xp.ndarray) or array.flags.c_contiguous:
        return None
    strides = tuple(s // array.itemsize for s in array.strides)
    order = tuple(reversed(_kept_order(array.shape, strides)))
    return None if order == tuple(range(array.ndim)) else order


def _laid_out(factory, order, shape, requires_grad: bool, **kwargs) -> Tensor:
    """``factory(*shape, **kwargs)`` with its memory in the axis ``order`` given."""
    if order is None:
        return factory(tuple(shape), requires_grad=requires_grad, **kwargs)
    made = factory(tuple(shape[d] for d in order), **kwargs)
    return _finish(made._data.transpose(_inverse(order)), requires_grad)


def _drawn_like(factory, input, dtype, requires_grad: bool, contiguous: bool, order: tuple,
                generator=None) -> Tensor:
    """rand_like or randn_like of a tensor laid out in another axis order: the new tensor keeps
    that layout, as ``empty_like`` does, so the draws fill it in its memory order."""
    dt = input._data.dtype if dtype is None else as_dtype(dtype).np
    _require_float(dt, "check_uniform_bounds" if factory is rand else "normal_kernel_cpu",
                   complex_ok=True)
    if factory is rand:
        draw = _sampler(generator, _sample.uniform, dt)
    else:
        draw = _sampler(generator, _sample.normal, dt, 0.0, _normal_std(dt, 1.0), contiguous)
    return _random(draw, tuple(input.shape), dt, requires_grad, order)


zeros_like = _like(zeros)
ones_like = _like(ones)
empty_like = _like(empty)
rand_like = _like(rand)
randn_like = _like(randn)


@_seen(_described_like("full_like", 1))
def full_like(input, fill_value, *, dtype=None, layout=None, device=None,
              requires_grad: bool = False, memory_format=None) -> Tensor:
    """A tensor like ``input`` filled with ``fill_value``."""
    if dtype is not None:
        dtype_argument("full_like", dtype)
    if type(input) is BatchedTensor:
        return _batched_like(full_like, input, dtype, requires_grad, fill_value=fill_value)
    order = _like_layout(input, memory_format)[0] if device is None else None
    return _laid_out(lambda size, **kw: full(size, fill_value, **kw), order, input.shape,
                     requires_grad, dtype=dtype or input.dtype, layout=layout,
                     device=input.device if device is None else device)


def _batched_like(like, input, dtype, requires_grad: bool, **kwargs) -> Tensor:
    """Under vmap, a tensor made like a batched one is batched too (PyTorch's rule), so writing
    an example's values into it works."""
    out = batched(like(input._value, dtype=dtype or input.dtype, **kwargs), input._level)
    return out.requires_grad_() if requires_grad else out


@_seen(_described_like("randint_like", 1, ("default", "low_dtype")))
def randint_like(input, low=0, high=None, *, generator=None, dtype=None, layout=None,
                 device=None, requires_grad: bool = False, memory_format=None) -> Tensor:
    """Random integers in [low, high) with the shape (and by default dtype) of ``input``."""
    if dtype is not None:
        dtype_argument("randint_like", dtype)
    if layout is not None and str(layout) != "torch.strided":
        raise RuntimeError(f"randint_like(): only the strided layout is provided (got {layout}); "
                           "sparse tensors do not exist in chainrule")
    if high is None:
        low, high = 0, low
    order = _like_layout(input, memory_format)[0] if device is None else None
    return _laid_out(lambda size, **kw: randint(low, high, size, **kw), order, input.shape,
                     requires_grad, generator=generator, dtype=dtype or input.dtype,
                     device=input.device if device is None else device)


# ---- sampling from distributions ------------------------------------------------------------
# Values are PyTorch's for the same seed (chainrule._random reproduces its CPU kernels); binomial
# draws through NumPy's sampler on the same stream.


def _g(x) -> str:
    """A number as PyTorch's messages print it (C++'s default: 6 significant digits)."""
    return f"{x:g}"


def _array(values, dt) -> Tensor:
    return Tensor._wrap(xp.asarray(values).astype(dt, copy=False), None, 0)


def _batched_parameters(generator, *inputs) -> bool:
    """Whether a sampler's tensor parameters are batched (inside vmap); PyTorch's errors for
    the randomness modes that cannot take them."""
    _rng(generator)
    if not any(type(x) is BatchedTensor for x in inputs):
        return False
    if vmap_state.randomness[-1] == "same":
        raise RuntimeError("Vmap does not currently support same randomness with a batched "
                           "tensor input. Please file an issue with functorch")
    return True


def _sampled(sample: Tensor, *inputs) -> Tensor:
    """The sample, differentiable with zero gradient when an input requires grad (PyTorch's
    derivative of normal, poisson and bernoulli)."""
    for x in inputs:
        if isinstance(x, Tensor) and x.requires_grad:
            sample = sample + x.clamp(-1, 1) * 0  # clamped: an infinite parameter stays finite
    return sample


_RESIZED = ("An output with one or more elements was resized since it had shape {}, which does "
            "not match the required output shape {}. This behavior is deprecated, and in a "
            "future PyTorch release outputs will not be resized unless they have zero elements. "
            "You can explicitly reuse an out tensor t by resizing it, inplace, to zero elements "
            "with t.resize_(0).")


def _write_out(result: Tensor, out: Tensor | None, name: str, *inputs,
               resize: str = "silently") -> Tensor:
    """``result`` written into ``out`` when out= is given. A shape that differs is resized
    ``silently``, with PyTorch's ``warning``, or is an ``error``, as each PyTorch kernel does."""
    if out is None:
        return result
    # Grad mode is read through an op: the grad_mode module sits above this layer.
    grad_enabled = (_finish(xp.zeros(()), True) + 0).requires_grad
    if grad_enabled and any(isinstance(x, Tensor) and x.requires_grad
                                 for x in (*inputs, out)):
        raise RuntimeError(f"{name}(): functions with out=... arguments don't support automatic "
                           "differentiation, but one of the arguments requires grad.")
    if resize == "error" and out.shape != result.shape:
        _broadcast([result.shape, out.shape])
        raise RuntimeError(f"output with shape {list(out.shape)} doesn't match the broadcast "
                           f"shape {list(result.shape)}")
    out_type = _TYPE_NAMES.get(out._data.dtype.name, out._data.dtype.name)
    if name == "normal":
        _require_float(out._data.dtype, "normal_kernel_cpu")
    if name == "multinomial" and out_type != "Long":
        raise RuntimeError(f"multinomial expects Long tensor out, got: {out_type}")
    if out.shape != result.shape:
        if resize == "warning" and out.numel():
            warnings.warn(_RESIZED.format(list(out.shape), list(result.shape)), UserWarning,
                          stacklevel=3)
        out._data = xp.empty(result.shape, dtype=out._data.dtype)
    return out.copy_(result.detach())


def _broadcast(shapes) -> tuple:
    try:
        return tuple(xp.broadcast_shapes(*shapes))
    except ValueError:
        ndim = max(len(s) for s in shapes)
        a, b = ((1,) * (ndim - len(s)) + tuple(s) for s in shapes[:2])
        dim = next(i for i in range(ndim) if a[i] != b[i] and 1 not in (a[i], b[i]))
        raise RuntimeError(f"The size of tensor a ({a[dim]}) must match the size of tensor b "
                           f"({b[dim]}) at non-singleton dimension {dim}") from None


_NORMAL_OVERLOADS = (
    "normal() received an invalid combination of arguments - got ({}), but expected one of:\n"
    " * (Tensor mean, Tensor std, *, torch.Generator generator = None, Tensor out = None)\n"
    " * (Tensor mean, float std = 1, *, torch.Generator generator = None, Tensor out = None)\n"
    " * (float mean, Tensor std, *, torch.Generator generator = None, Tensor out = None)\n"
    " * (float mean, float std, tuple of ints size, *, torch.Generator generator = None, "
    "Tensor out = None, torch.dtype dtype = None, torch.layout layout = None, torch.device "
    "device = None, bool pin_memory = False, bool requires_grad = False)\n")


def normal(mean, std=1.0, size=None, *, generator=None, out=None, dtype=None, layout=None,
           device=None, pin_memory: bool = False, requires_grad: bool = False) -> Tensor:
    """Normal samples with the given mean and std: tensors (broadcast together; the gradient
    is zero, as PyTorch's), or numbers with a ``size``."""
    mem = memory_of(device, "normal")
    tensors = [x for x in (mean, std) if isinstance(x, Tensor)]
    if not tensors:
        if size is None:
            raise TypeError(_NORMAL_OVERLOADS.format(
                ", ".join(type(x).__name__ for x in (mean, std))))
        if std < 0:
            raise RuntimeError(f"normal expects std >= 0.0, but found std {_g(std)}")
        dt = _dtype("normal", dtype)
        _require_float(dt, "normal_kernel_cpu")
        shape = size_tuple((size,))
        if mem is not xp:
            return _finish(mem.zeros(shape, dtype=dt), requires_grad)
        draw = _sampler(generator, _sample.normal, dt, float(mean), float(std))
        return _write_out(_random(draw, shape, dt, requires_grad), out, "normal")
    for x in tensors:
        _require_float(x._data.dtype, "normal_kernel_cpu")
    if isinstance(std, Tensor):
        if (std._data < 0).any():
            raise RuntimeError("normal expects all elements of std >= 0.0")
    elif std < 0:
        raise RuntimeError(f"normal expects std >= 0.0, but found std {_g(std)}")
    _batched_parameters(generator, *tensors)
    dt = (mean if isinstance(mean, Tensor) else std)._data.dtype
    shape = _broadcast([x.shape for x in tensors])
    # As PyTorch: N(0, std) for a number std, else N(0, 1) scaled in place, then the mean added
    # in place (in the result's dtype). Ops on detached values, so that it runs under vmap
    # (per-example noise with randomness="different").
    mean_, std_ = (x.detach() if isinstance(x, Tensor) else x for x in (mean, std))
    spread = 1.0 if isinstance(std, Tensor) else float(std)
    sample = _random(_sampler(generator, _sample.normal, dt, 0.0, spread), shape, dt, False)
    if isinstance(std, Tensor):
        sample = (sample * std_).to(sample.dtype)
    sample = _sampled((sample + mean_).to(sample.dtype), mean, std)
    resize = "warning" if isinstance(std, Tensor) else "error"
    return _write_out(sample, out, "normal", mean, std, resize=resize)


def poisson(input: Tensor, generator=None) -> Tensor:
    """Poisson samples with the rates in ``input`` (same shape and dtype)."""
    _require_float(input._data.dtype, "poisson_cpu")
    if _batched_parameters(generator, input):  # draw for the whole batch at once
        return _sampled(batched(poisson(input._value.detach(), generator), input._level), input)
    rates = input.detach()._data
    if (rates < 0).any():
        raise RuntimeError("invalid Poisson rate, expected rate to be non-negative")
    draws = kernel(_poisson, _generator(generator)._engine, rates)
    return _sampled(_finish(draws, False), input)


def _poisson(engine, rates):
    values = _sample.poisson(engine, rates.astype(xp.float64).reshape(-1))
    return xp.array(values, dtype=rates.dtype).reshape(rates.shape)


def binomial(count: Tensor, prob: Tensor, generator=None) -> Tensor:
    """Binomial samples: successes in ``count`` trials (rounded down) of probability ``prob``
    (broadcast together; no derivative, as PyTorch's, so the sample does not require grad)."""
    for what, x in (("count", count), ("prob", prob)):
        if x._data.dtype.kind != "f":
            raise ValueError(f"binomial only supports floating-point dtypes for {what}, got: "
                             f"{_TYPE_NAMES[x._data.dtype.name]}")
    if count._data.dtype == xp.float16:
        raise NotImplementedError("\"binomial_cpu\" not implemented for 'Half'")
    if prob._data.dtype != count._data.dtype:
        raise RuntimeError(f"Found dtype {_TYPE_NAMES[prob._data.dtype.name]} but expected "
                           f"{_TYPE_NAMES[count._data.dtype.name]}")
    shape = _broadcast([count.shape, prob.shape])
    if count.numel() and tuple(count.shape) != shape:
        warnings.warn(_RESIZED.format(list(count.shape), list(shape)), UserWarning, stacklevel=2)
    if _batched_parameters(generator, count, prob):  # draw for the whole batch at once
        level = max(x._level for x in (count, prob) if type(x) is BatchedTensor)
        physical = []
        for x in (count, prob):
            lead = (1,) * (len(shape) - x.dim())
            if type(x) is BatchedTensor and x._level == level:
                physical.append(x._value.reshape((x._value.shape[0],) + lead + tuple(x.shape)))
            else:
                physical.append(x.reshape((1,) + lead + tuple(x.shape)))
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # warned above, on the logical shapes
            return batched(binomial(*physical, generator), level)
    n = xp.broadcast_to(count.detach()._data.astype(xp.float64), shape)
    p = xp.broadcast_to(prob.detach()._data.astype(xp.float64), shape)
    valid = (n == n) & (p == p)
    trials = xp.where(valid, xp.floor(xp.clip(xp.nan_to_num(n), 0, None)), 0).astype(xp.int64)
    draws = _rng(generator).binomial(trials, xp.where(valid, xp.clip(p, 0.0, 1.0), 0.0))
    return _array(xp.where(valid, draws, xp.nan), count._data.dtype)


_P_IN_ERROR = ("Expected p_in >= 0 && p_in <= 1 to be true, but got false.  (Could this error "
               "message be improved?  If so, please report an enhancement request to PyTorch.)")


def bernoulli(input: Tensor, p: float | None = None, *, generator=None, out=None) -> Tensor:
    """0/1 samples, 1 with the probability in ``input`` (or with probability ``p``)."""
    if p is not None:
        sample = bernoulli_(input.detach().contiguous().clone(), p, generator=generator)
        return _sampled(sample, input)
    _require_float(input._data.dtype, "bernoulli_tensor_cpu_p_")
    _batched_parameters(generator, input)
    _check_probabilities(input)
    sample = (_uniforms_for(input, generator, tuple(input.shape)) < input.detach())
    return _write_out(_sampled(sample.to(input.dtype), input), out, "bernoulli", input)


def _bernoulli_draws(shape: tuple, p: float, dtype, order: tuple | None = None) -> Tensor:
    """``bernoulli_(p)`` of a new tensor from the default generator, filled in ``order`` (the
    noise of dropout)."""
    return _random(_sampler(None, _sample.bernoulli, dtype, p), shape, dtype, False, order)


def _uniforms_for(p: Tensor, generator, shape: tuple, order: tuple | None = None) -> Tensor:
    """The uniforms PyTorch compares probabilities ``p`` with: float64 for float64 p, else
    float32."""
    dt = xp.dtype(xp.float64 if p._data.dtype == xp.float64 else xp.float32)
    return _random(_sampler(generator, _sample.uniform, dt), shape, dt, False, order)


def _check_probabilities(p: Tensor) -> None:
    if type(p) is BatchedTensor:  # its values are not at hand; PyTorch checks them
        return
    probs = p.detach()._data
    if ((probs < 0) | (probs > 1) | (probs != probs)).any():
        raise RuntimeError(_P_IN_ERROR)


def multinomial(input: Tensor, num_samples: int, replacement: bool = False, *, generator=None,
                out=None) -> Tensor:
    """Category indices drawn from each row of ``input`` (non-negative weights), with or
    without replacement."""
    if _batched_parameters(generator, input):  # the batch's rows sampled at once
        value = input._value.detach()
        flat = _multinomial(value.reshape(-1, value.shape[-1]), num_samples, replacement,
                            generator, examples=False)
        picks = batched(flat.reshape(*value.shape[:-1], num_samples), input._level)
        return _write_out(picks, out, "multinomial")
    return _write_out(_multinomial(input, num_samples, replacement, generator), out,
                      "multinomial")


def _multinomial(input: Tensor, num_samples: int, replacement: bool, generator,
                 examples: bool = True) -> Tensor:
    weights = input.detach()._data
    if weights.ndim not in (1, 2):
        raise RuntimeError("prob_dist must be 1 or 2 dim")
    if weights.dtype.kind != "f":
        raise RuntimeError("multinomial only supports floating-point dtypes for input, got: "
                           f"{_TYPE_NAMES.get(weights.dtype.name, weights.dtype.name)}")
    if num_samples <= 0:
        raise RuntimeError("cannot sample n_sample <= 0 samples")
    categories = weights.shape[-1]
    if not replacement and num_samples > categories:
        raise RuntimeError("cannot sample n_sample > prob_dist.size(-1) samples without "
                           "replacement")
    if categories > 2**24:
        raise RuntimeError("number of categories cannot exceed 2^24")
    rows = weights.reshape(-1, categories).astype(xp.float64)
    if replacement and num_samples > 1:
        # PyTorch's kernel for this case checks entry by entry, with its own messages.
        for value in rows.reshape(-1):
            if not value >= 0:
                raise RuntimeError("invalid multinomial distribution (encountering probability "
                                   "entry < 0)")
            if not math.isfinite(value):
                raise RuntimeError("invalid multinomial distribution (encountering probability "
                                   "entry = infinity or NaN)")
    if not xp.isfinite(rows).all() or (rows < 0).any():
        raise RuntimeError("probability tensor contains either `inf`, `nan` or element < 0")
    if (rows.sum(axis=1) <= 0).any():
        raise RuntimeError("invalid multinomial distribution (sum of probabilities <= 0)")
    if replacement and num_samples > 1:
        return _finish(kernel(_categories, _generator(generator)._engine, weights, num_samples),
                       False)
    # Without replacement, or one sample: as PyTorch, the largest of w / E with E ~ Exp(1) drawn
    # like the weights (the exponential race, equal to drawing one by one and renormalising).
    order, _ = _layout(weights, dense_only=True)
    race = _random(_sampler(generator, _sample.exponential, weights.dtype, 1.0),
                   weights.shape, weights.dtype, False, order, examples)
    keys = input.detach() / race
    return keys.argmax(-1, keepdim=True) if num_samples == 1 else keys.topk(num_samples)[1]


def _categories(engine, weights, num_samples: int):
    rows = weights.reshape(-1, weights.shape[-1])
    picks = _sample.multinomial(engine, rows, num_samples)
    return picks.reshape(weights.shape[:-1] + (num_samples,)).astype(xp.int64)


# ---- in-place sampling methods (Tensor.uniform_, normal_, ...) ------------------------------


def _fill(self: Tensor, generator, sample, *args) -> Tensor:
    """Write ``sample``'s draws (``sample(engine, n, dtype, *args)``) into ``self`` in the order
    PyTorch's kernel walks its memory, through copy_, which checks leaves, bumps the version,
    writes through views and gives the old value a zero gradient, as PyTorch's samplers do
    (under vmap, draws follow the randomness mode). A meta tensor draws nothing, as PyTorch's."""
    if self.device.type == "meta":
        return self
    dt = self._data.dtype
    order, contiguous = (None, True) if type(self) is BatchedTensor else _layout(self._data)
    if sample is _sample.normal:
        args += (contiguous,)
    draw = _sampler(generator, sample, dt, *args)
    return self.copy_(_random(draw, tuple(self.shape), dt, False, order))


def _bounds(args: tuple, kwargs: dict, defaults: tuple) -> tuple:
    """PyTorch's ``from``/``to`` parameters (``from`` is a Python keyword)."""
    values = list(args) + list(defaults[len(args):])
    for i, name in enumerate(("from", "to")):
        if name in kwargs:
            values[i] = kwargs.pop(name)
    if kwargs:
        raise TypeError(f"got an unexpected keyword argument '{next(iter(kwargs))}'")
    return tuple(values)


def _uniform_(self: Tensor, *args, generator=None, **kwargs) -> Tensor:
    """Fill with U(from, to) samples."""
    low, high = _bounds(args, kwargs, (0.0, 1.0))
    dt = self._data.dtype
    _require_float(dt, "check_uniform_bounds", complex_ok=True)
    real = xp.dtype(xp.float32 if dt == xp.complex64 else xp.float64) if dt.kind == "c" else dt
    top = float(np_finfo(real).max)
    for what, value in (("from", low), ("to", high)):
        if not -top <= value <= top:
            raise RuntimeError(f"{what} is out of bounds for {_C_TYPES[real.name]}")
    if low > high:
        raise RuntimeError(f"uniform_ expects to return a [from, to) range, but found "
                           f"from={_g(low)} > to={_g(high)}")
    if high - low > top:
        raise RuntimeError(f"uniform_ expects to-from <= std::numeric_limits<"
                           f"{_TYPE_NAMES[real.name]}>::max(), but found to={_g(high)} and "
                           f"from={_g(low)} which result in to-from to exceed the limit")
    return _fill(self, generator, _sample.uniform, float(low), float(high))


def _normal_(self: Tensor, mean: float = 0.0, std: float = 1.0, *, generator=None) -> Tensor:
    """Fill with N(mean, std²) samples."""
    _require_float(self._data.dtype, "normal_kernel_cpu", complex_ok=True)
    if std < 0:
        raise RuntimeError(f"normal expects std >= 0.0, but found std {_g(std)}")
    std = _normal_std(self._data.dtype, float(std))
    return _fill(self, generator, _sample.normal, float(mean), std)


def _continuous(self: Tensor, name: str, ctype: bool = False) -> None:
    dt = self._data.dtype
    if dt.kind not in "fV":
        c_names = {"int64": "long int", "int32": "int", "int16": "short int", "int8": "signed char",
                   "uint8": "unsigned char", "bool": "bool"}
        shown = c_names.get(dt.name, dt.name) if ctype else _TYPE_NAMES.get(dt.name, dt.name)
        raise RuntimeError(f"{name} distribution is a continuous probability distribution. "
                           f"dtype must be a floating point but you specified {shown}")


def _exponential_(self: Tensor, lambd: float = 1.0, *, generator=None) -> Tensor:
    """Fill with Exponential(lambd) samples."""
    _continuous(self, "Exponential")
    if not lambd > 0:
        raise RuntimeError(f"exponential_ expects lambda > 0.0, but found lambda={_g(lambd)}")
    return _fill(self, generator, _sample.exponential, float(lambd))


def _geometric_(self: Tensor, p: float, *, generator=None) -> Tensor:
    """Fill with the number of Bernoulli(p) trials up to the first success (1, 2, ...)."""
    if not 0 < p < 1:
        raise RuntimeError(f"geometric_ expects p to be in (0, 1), but got p={_g(p)}")
    return _fill(self, generator, _sample.geometric, float(p))


def _cauchy_(self: Tensor, median: float = 0.0, sigma: float = 1.0, *, generator=None) -> Tensor:
    """Fill with Cauchy(median, sigma) samples."""
    _continuous(self, "Cauchy", ctype=True)
    if not sigma > 0:
        raise RuntimeError(f"cauchy_ expects sigma > 0.0, but found sigma={_g(sigma)}")
    return _fill(self, generator, _sample.cauchy, float(median), float(sigma))


def _log_normal_(self: Tensor, mean: float = 1.0, std: float = 2.0, *, generator=None) -> Tensor:
    """Fill with samples whose logarithm is N(mean, std²)."""
    _require_float(self._data.dtype, "log_normal_cpu")
    if not std > 0:
        raise RuntimeError(f"log_normal_ expects std > 0.0, but found std={_g(std)}")
    return _fill(self, generator, _sample.log_normal, float(mean), float(std))


def _random_(self: Tensor, *args, generator=None, **kwargs) -> Tensor:
    """Fill with integers uniform on [from, to): random_(to), random_(from, to), or, with no
    bounds, on [0, 2**mantissa] (floats) or the dtype's non-negative range (integers)."""
    dt = self._data.dtype
    if not args and not kwargs:
        return _fill(self, generator, _sample.bits)
    if len(args) == 1 and "to" not in kwargs and "from" not in kwargs:
        args = (0, args[0])
    low, high = _bounds(args, kwargs, (0, None))
    if low >= (high if high is not None else low + 1):
        raise RuntimeError(f"random_ expects 'from' to be less than 'to', but got from={low} >= "
                           f"to={high}")
    if high is None:  # [from, the dtype's largest]
        if low == -(2**63):  # all 64 bits
            _full_range_dtype(dt)
            return _fill(self, generator, _sample.integers, low, None)
        if dt.kind in "fV":
            top = min(2 ** (np_finfo(dt).nmant + 1), 2**63 - 1)
            low = _float_bounds(dt, low)[0]
            if low >= top:
                raise RuntimeError(f"random_ expects 'from' casted to dtype to be less than or "
                                   f"equal to 'to_inc' casted to dtype, but got from={low} > "
                                   f"to_inc={top}")
        else:
            top = 1 if dt.kind == "b" else int(xp.iinfo(dt).max)
        high = top + 1
    else:
        low, high = _float_bounds(dt, low, high)
    _random_bounds(dt, low, high - 1)
    return _fill(self, generator, _sample.integers, low, high - low)


_C_TYPES = {"bool": "bool", "uint8": "unsigned char", "int8": "signed char", "int16": "short int",
            "int32": "int", "int64": "long int", "float16": "c10::Half",
            "bfloat16": "c10::BFloat16", "float32": "float", "float64": "double"}


def _random_bounds(dt, low: int, to_inc: int) -> None:
    """PyTorch's check of random_'s range [low, to_inc] against the dtype: outside the dtype's
    values is an error, beyond the integers a float holds exactly a warning."""
    name = _C_TYPES.get(dt.name, dt.name)
    if dt.kind in "fV":
        top = float(np_finfo(dt).max)
        lowest, highest = -top, top
    elif dt.kind == "b":
        lowest, highest = 0, 1
    else:
        lowest, highest = int(xp.iinfo(dt).min), int(xp.iinfo(dt).max)
    for what, value in (("from", low), ("to - 1", to_inc)):
        if not lowest <= value <= highest:
            raise RuntimeError(f"{what} is out of bounds for {name}")
    if dt.kind in "fV":
        digits = np_finfo(dt).nmant + 1
        for what, value in (("from", low), ("to - 1", to_inc)):
            if not -(2**digits) <= value <= 2**digits:
                warnings.warn(f"{what} is out of bounds [-(2^{digits}), 2^{digits}]. Due to "
                              f"precision limitations {name} can support discrete uniform "
                              "distribution only within this range. This warning will become an "
                              "error in version 1.7 release, please fix the code in advance",
                              UserWarning, stacklevel=3)


def _full_range_dtype(dt) -> None:
    """The dtypes PyTorch draws all 64 bits into (random_ from the smallest int64, no end)."""
    if dt.kind == "b" or dt == xp.float16:
        raise NotImplementedError('"random_full_64_bits_range_kernel_cpu" not implemented for '
                                  f"'{_TYPE_NAMES[dt.name]}'")
    if dt.kind in "iu" and dt != xp.int64:
        raise RuntimeError("random_full_64_bits_range_kernel_cpu handles only int64, double, "
                           "float and bfloat16")


def bernoulli_(self: Tensor, p=0.5, *, generator=None) -> Tensor:
    """Fill with 0/1 samples, 1 with probability ``p`` (a number or a broadcastable tensor)."""
    if self.device.type == "meta":  # draws nothing and checks no value, as PyTorch's
        return self
    if not isinstance(p, Tensor):
        if not 0 <= p <= 1:
            raise RuntimeError(f"bernoulli_ expects p to be in [0, 1], but got p={_g(p)}")
        return _fill(self, generator, _sample.bernoulli, float(p))
    _batched_parameters(generator, p)
    _check_probabilities(p)
    order = None if type(self) is BatchedTensor else _layout(self._data)[0]
    return self.copy_(_uniforms_for(p, generator, tuple(self.shape), order) < p.detach())


def _bernoulli_method(self: Tensor, p=None, *, generator=None) -> Tensor:
    """``torch.bernoulli(self)``, or 0/1 samples shaped like self with probability ``p``."""
    return bernoulli(self, p, generator=generator)


def _described_fill(name: str, *params: tuple):
    """A random fill ``self.<name>(...)`` as aten's ``<name>.default(self, ...)``: its float
    parameters (``params``: name and default) converted, the trailing defaults left out."""
    def describe(self, *args, generator=None, **kwargs):
        values = [float(args[i]) if i < len(args) else float(kwargs.pop(key, default))
                  for i, (key, default) in enumerate(params)]
        if kwargs or len(args) > len(params) or not isinstance(self, Tensor):
            raise TypeError(name)
        while values and values[-1] == params[len(values) - 1][1]:
            values.pop()
        return name, "default", (self, *values), {} if generator is None else {
            "generator": generator}

    return describe


def _describe_random_(self, *args, generator=None, **kwargs):
    if kwargs or len(args) > 2 or not isinstance(self, Tensor):
        raise TypeError("random_")
    overload = ("default", "to", "from")[len(args)]
    return "random_", overload, (self, *args), {} if generator is None else {
        "generator": generator}


def _describe_bernoulli_(self, p=0.5, *, generator=None):
    if not isinstance(self, Tensor):
        raise TypeError("bernoulli_")
    kwargs = {} if generator is None else {"generator": generator}
    if isinstance(p, Tensor):
        return "bernoulli_", "Tensor", (self, p), kwargs
    return "bernoulli_", "float", (self,) if p == 0.5 else (self, float(p)), kwargs


# Each is one aten call for dispatch modes (uniform_.default ...), not the copy_ it writes with.
Tensor.uniform_ = _seen(_described_fill("uniform_", ("from", 0.0), ("to", 1.0)))(_uniform_)
Tensor.normal_ = _seen(_described_fill("normal_", ("mean", 0.0), ("std", 1.0)))(_normal_)
Tensor.exponential_ = _seen(_described_fill("exponential_", ("lambd", 1.0)))(_exponential_)
Tensor.geometric_ = _seen(_described_fill("geometric_", ("p", None)))(_geometric_)
Tensor.cauchy_ = _seen(_described_fill("cauchy_", ("median", 0.0), ("sigma", 1.0)))(_cauchy_)
Tensor.log_normal_ = _seen(_described_fill("log_normal_", ("mean", 1.0), ("std", 2.0)))(
    _log_normal_)
Tensor.random_ = _seen(_describe_random_)(_random_)
Tensor.bernoulli_ = _seen(_describe_bernoulli_)(bernoulli_)
Tensor.bernoulli = _bernoulli_method
Tensor.multinomial = multinomial
