"""torch's top-level utilities outside the op registry (dtype information and promotion,
remaining factories, windows, process switches), each compared with PyTorch."""

import warnings

import numpy as np
import pytest
import torch
from conftest import assert_like_torch

import chainrule

LIBS = (torch, chainrule)


def _t(lib, data, dtype=None):
    return lib.tensor(data, dtype=None if dtype is None else getattr(lib, dtype))


def same(case, rtol=1e-10, atol=1e-12):
    """case(lib) gives torch's result with torch and the same with chainrule."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        theirs, ours = case(torch), case(chainrule)
    assert_like_torch(ours, theirs, rtol, atol)
    return ours, theirs


def same_error(case, match_message=True):
    """case(lib) raises the same exception type (and message) with torch and chainrule."""
    errors = []
    for lib in LIBS:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            with pytest.raises(Exception) as info:
                case(lib)
        errors.append(info.value)
    assert type(errors[1]) is type(errors[0]), errors
    if match_message:
        assert str(errors[1]) == str(errors[0])


@pytest.fixture(autouse=True)
def restore_switches():
    saved = [(lib, lib.get_autocast_dtype("cpu"), lib.get_autocast_dtype("cuda")) for lib in LIBS]
    yield
    for lib, cpu_dtype, cuda_dtype in saved:
        lib.use_deterministic_algorithms(False)
        lib.set_warn_always(False)
        for device in ("cpu", "cuda"):
            lib.set_autocast_enabled(device, False)
        lib.set_autocast_dtype("cpu", cpu_dtype)
        lib.set_autocast_dtype("cuda", cuda_dtype)
        lib.set_autocast_cache_enabled(True)


def chainrule_or(lib, torch_name, chainrule_name):
    return getattr(lib, torch_name if lib is torch else chainrule_name)


# dtype information and promotion

FLOATS = ("float16", "float32", "float64", "complex64", "complex128")
INTS = ("uint8", "int8", "int16", "int32", "int64")
ALL = FLOATS + INTS + ("bool",)


@pytest.mark.parametrize("name", FLOATS)
def test_finfo(name):
    ours, theirs = chainrule.finfo(getattr(chainrule, name)), torch.finfo(getattr(torch, name))
    for attr in ("bits", "eps", "max", "min", "tiny", "smallest_normal", "resolution", "dtype"):
        assert getattr(ours, attr) == getattr(theirs, attr), attr
        assert type(getattr(ours, attr)) is type(getattr(theirs, attr)), attr
    assert repr(ours) == repr(theirs) and str(ours) == str(theirs)


def test_finfo_default_follows_the_default_dtype():
    assert repr(chainrule.finfo()) == repr(torch.finfo())
    for lib in LIBS:
        lib.set_default_dtype(lib.float64)
    assert repr(chainrule.finfo()) == repr(torch.finfo())
    assert chainrule.finfo(chainrule.float32) == chainrule.finfo(chainrule.float32)
    assert chainrule.finfo(chainrule.float32) != chainrule.finfo(chainrule.float64)


@pytest.mark.parametrize("name", INTS)
def test_iinfo(name):
    ours, theirs = chainrule.iinfo(getattr(chainrule, name)), torch.iinfo(getattr(torch, name))
    for attr in ("bits", "max", "min", "dtype"):
        assert getattr(ours, attr) == getattr(theirs, attr), attr
        assert type(getattr(ours, attr)) is type(getattr(theirs, attr)), attr
    assert repr(ours) == repr(theirs)


@pytest.mark.parametrize("case", [
    lambda lib: lib.finfo(lib.int32), lambda lib: lib.finfo(lib.bool),
    lambda lib: lib.finfo("float32"), lambda lib: lib.iinfo(lib.float32),
    lambda lib: lib.iinfo(lib.bool), lambda lib: lib.iinfo(lib.complex64),
    lambda lib: lib.iinfo(3)])
def test_info_errors(case):
    same_error(case)


@pytest.mark.parametrize("a", ALL)
def test_promote_types_and_can_cast_every_pair(a):
    for b in ALL:
        assert str(chainrule.promote_types(getattr(chainrule, a), getattr(chainrule, b))) == \
            str(torch.promote_types(getattr(torch, a), getattr(torch, b))), (a, b)
        assert chainrule.can_cast(getattr(chainrule, a), getattr(chainrule, b)) == \
            torch.can_cast(getattr(torch, a), getattr(torch, b)), (a, b)


@pytest.mark.parametrize("case", [
    lambda lib: lib.promote_types(lib.float32, "float64"),
    lambda lib: lib.promote_types(1, lib.float32),
    lambda lib: lib.can_cast(lib.float32, None)])
def test_promotion_errors(case):
    same_error(case)


@pytest.mark.parametrize("case", [
    lambda lib: (_t(lib, [1, 2]), 1.0), lambda lib: (2, 1.0), lambda lib: (True, 2),
    lambda lib: (_t(lib, 1.0), _t(lib, [1], "int32")),
    lambda lib: (_t(lib, [1.0], "float16"), _t(lib, 1.0, "float64")),
    lambda lib: (_t(lib, [1], "uint8"), _t(lib, [1], "int8")),
    lambda lib: (_t(lib, [1], "int32"), 1j), lambda lib: (_t(lib, [1.0]), 1j),
    lambda lib: (_t(lib, [1.0], "float64"), _t(lib, 1j, "complex64")),
    lambda lib: (_t(lib, [True]), 5)])
def test_result_type(case):
    same(lambda lib: lib.result_type(*case(lib)))


def test_result_type_follows_the_default_dtype():
    for lib in LIBS:
        lib.set_default_dtype(lib.float64)
    same(lambda lib: [lib.result_type(2, 1.0), lib.result_type(_t(lib, [1]), 1j)])


def test_result_type_rejects_non_numbers():
    same_error(lambda lib: lib.result_type(_t(lib, [1]), "a"), match_message=False)


@pytest.mark.parametrize("shapes", [((2, 1), (3,)), (2, (3, 2)), (), ((),), ((1, 0), (4, 1)),
                                    ((5, 1, 3), (2, 1), [1])])
def test_broadcast_shapes(shapes):
    same(lambda lib: lib.broadcast_shapes(*shapes))
    assert type(chainrule.broadcast_shapes(*shapes)) is chainrule.Size


@pytest.mark.parametrize("shapes", [((2, 1), (3, 4)), ((2, -1),), ((3,), (2, 4))])
def test_broadcast_shapes_errors(shapes):
    same_error(lambda lib: lib.broadcast_shapes(*shapes))


def test_layout_and_memory_format():
    for name in ("strided", "contiguous_format", "channels_last", "channels_last_3d",
                 "preserve_format"):
        assert repr(getattr(chainrule, name)) == repr(getattr(torch, name))
    assert isinstance(chainrule.strided, chainrule.layout)
    assert isinstance(chainrule.channels_last, chainrule.memory_format)


def test_typename_and_is_storage():
    for dtype in ALL:
        same(lambda lib, dtype=dtype: lib.typename(lib.zeros(2, dtype=getattr(lib, dtype))))
    same(lambda lib: [lib.typename(3), lib.typename(int), lib.typename("a")])
    assert chainrule.typename(chainrule.nn.Linear(1, 1)).endswith(".Linear")
    same(lambda lib: [lib.is_storage(lib.ones(2)), lib.is_storage(3)])


# factories

@pytest.mark.parametrize("case", [
    lambda lib: lib.logspace(0, 2, 3), lambda lib: lib.logspace(-3, 3, 7, base=2),
    lambda lib: lib.logspace(0, 2, 3, base=2, dtype=lib.int64),
    lambda lib: lib.logspace(0.5, -1.5, 5, dtype=lib.float64), lambda lib: lib.logspace(1, 2, 0),
    lambda lib: lib.logspace(1, 2, 1, dtype=lib.float64),
    lambda lib: lib.logspace(0, 1, 3, requires_grad=True)])
def test_logspace(case):
    same(case, rtol=1e-6)


def test_logspace_out():
    same(lambda lib: (lambda out: (lib.logspace(0, 1, 4, out=out, dtype=lib.float64), out))(
        lib.zeros(1, dtype=lib.float64)))


@pytest.mark.parametrize("case", [
    lambda lib: lib.logspace(0, 2, -1), lambda lib: lib.logspace(0, 2, 3, dtype="float32")])
def test_logspace_errors(case):
    same_error(case, match_message=False)


@pytest.mark.parametrize("fn", ["tril_indices", "triu_indices"])
@pytest.mark.parametrize("args", [(3, 3), (3, 4, 1), (4, 3, -1), (0, 3), (3, 3, 5), (3, 3, -5),
                                  (5, 2, 1)])
def test_triangle_indices(fn, args):
    same(lambda lib: getattr(lib, fn)(*args))
    same(lambda lib: getattr(lib, fn)(*args, dtype=lib.int32))


@pytest.mark.parametrize("fn", ["tril_indices", "triu_indices"])
@pytest.mark.parametrize("case", [
    lambda lib, f: f(-1, 3), lambda lib, f: f(3, -2), lambda lib, f: f(3, 3, dtype=lib.float32),
    lambda lib, f: f(3, 3, dtype=lib.bool), lambda lib, f: f(3.0, 3)])
def test_triangle_indices_errors(fn, case):
    same_error(lambda lib: case(lib, getattr(lib, fn)))


@pytest.mark.parametrize("case", [
    lambda lib: lib.scalar_tensor(3), lambda lib: lib.scalar_tensor(True),
    lambda lib: lib.scalar_tensor(2.5, dtype=lib.float64),
    lambda lib: lib.scalar_tensor(7, dtype=lib.int64),
    lambda lib: lib.scalar_tensor(1 + 2j, dtype=lib.complex64),
    lambda lib: lib.scalar_tensor(1.5, requires_grad=True)])
def test_scalar_tensor(case):
    same(case)


@pytest.mark.parametrize("case", [
    lambda lib: lib.scalar_tensor(1 + 2j), lambda lib: lib.scalar_tensor("a"),
    lambda lib: lib.scalar_tensor(1 + 2j, dtype=lib.float64)])
def test_scalar_tensor_errors(case):
    same_error(case)


@pytest.mark.parametrize("case", [
    lambda lib: lib.range(1, 4), lambda lib: lib.range(0, 1, 0.25, dtype=lib.float64),
    lambda lib: lib.range(1, 4, dtype=lib.int64), lambda lib: lib.range(4, 1, -1),
    lambda lib: lib.range(0, 1, 0.3), lambda lib: lib.range(2, 2),
    lambda lib: lib.range(-1.5, 2.5, 0.5, dtype=lib.float64)])
def test_range(case):
    same(case, rtol=1e-6)


def test_range_warns_as_torch():
    for lib in LIBS:
        with pytest.warns(UserWarning, match="torch.range is deprecated"):
            lib.range(0, 3)


@pytest.mark.parametrize("case", [lambda lib: lib.range(4, 1), lambda lib: lib.range(1, 4, 0),
                                  lambda lib: lib.range(1, 4, -1), lambda lib: lib.range(5)])
def test_range_errors(case):
    same_error(case)


@pytest.mark.parametrize("dtype", ["int32", "int64", "float32", "float64", "uint8", "int16"])
def test_frombuffer_shares_memory(dtype):
    data = np.arange(6, dtype=getattr(np, dtype)).tobytes()
    same(lambda lib: lib.frombuffer(bytearray(data), dtype=getattr(lib, dtype)))
    size = np.dtype(dtype).itemsize
    same(lambda lib: lib.frombuffer(bytearray(data), dtype=getattr(lib, dtype), count=2,
                                    offset=size))
    buffer = bytearray(data)
    t = chainrule.frombuffer(buffer, dtype=getattr(chainrule, dtype))
    t[0] = 5
    assert np.frombuffer(buffer, dtype=dtype)[0] == 5


@pytest.mark.parametrize("case", [
    lambda lib: lib.frombuffer(bytearray(7), dtype=lib.int32),
    lambda lib: lib.frombuffer(bytearray(0), dtype=lib.int32),
    lambda lib: lib.frombuffer(bytearray(8), dtype=lib.int32, offset=8),
    lambda lib: lib.frombuffer(bytearray(8), dtype=lib.int32, count=3)])
def test_frombuffer_errors(case):
    same_error(case)


@pytest.mark.parametrize("size, stride", [((2, 3), (1, 2)), ((2, 3), (3, 1)), ((4,), (2,)),
                                          ((2, 0, 3), (0, 3, 1)), ((), ())])
def test_empty_strided(size, stride):
    ours, theirs = (lib.empty_strided(size, stride, dtype=lib.float64) for lib in LIBS)
    assert ours.shape == theirs.shape and ours.stride() == theirs.stride()
    assert str(ours.dtype) == str(theirs.dtype)


@pytest.mark.parametrize("size, order", [((2, 3, 4), (0, 2, 1)), ((2, 3, 4), (2, 1, 0)),
                                         ((5,), (0,)), ((2, 3, 4, 5), (0, 2, 3, 1))])
def test_empty_permuted(size, order):
    ours, theirs = (lib.empty_permuted(size, order) for lib in LIBS)
    assert ours.shape == theirs.shape and ours.stride() == theirs.stride()
    assert str(ours.dtype) == str(theirs.dtype)


@pytest.mark.parametrize("case", [
    lambda lib: lib.empty_strided((2, 3), (1,)), lambda lib: lib.empty_permuted((2, 3, 4), (0, 1)),
    lambda lib: lib.empty_permuted((2, 3), (0, 0)), lambda lib: lib.empty_strided(3, (1,)),
    lambda lib: lib.empty_permuted(3, (0,))])
def test_empty_strided_permuted_errors(case):
    same_error(case)


def test_asarray():
    same(lambda lib: lib.asarray([1, 2]))
    same(lambda lib: lib.asarray([1.0, 2.0], dtype=lib.float64))
    same(lambda lib: lib.asarray(3.5))
    same(lambda lib: lib.asarray(np.array([1, 2], dtype=np.int32)))
    same(lambda lib: lib.asarray(lib.ones(2), requires_grad=True))
    x = chainrule.ones(3)
    assert chainrule.asarray(x) is x
    assert chainrule.asarray(x, copy=True) is not x
    array = np.zeros(3)
    chainrule.asarray(array)[0] = 4
    assert array[0] == 4
    chainrule.asarray(array, copy=True)[1] = 4
    assert array[1] == 0
    same(lambda lib: lib.asarray(lib.ones(2), dtype=lib.float64))
    same_error(lambda lib: lib.asarray(lib.ones(2), dtype=lib.float64, copy=False))


@pytest.mark.parametrize("case", [
    lambda lib: lib.vander(_t(lib, [1, 2, 3])),
    lambda lib: lib.vander(_t(lib, [1.0, 2.0, 3.0]), N=2, increasing=True),
    lambda lib: lib.vander(_t(lib, [1.5, -2.0], "float64"), N=4),
    lambda lib: lib.vander(_t(lib, [True, False])),
    lambda lib: lib.vander(_t(lib, [1, 2], "int32")),
    lambda lib: lib.vander(_t(lib, [1.0, 2.0]), N=0),
    lambda lib: lib.vander(_t(lib, [1, 2]), N=1),
    lambda lib: lib.vander(_t(lib, [1j, 2.0]), 3, True)])
def test_vander(case):
    same(case)


@pytest.mark.parametrize("case", [
    lambda lib: lib.vander(lib.ones(2, 2)), lambda lib: lib.vander(_t(lib, [1.0, 2.0]), N=-1),
    lambda lib: lib.vander([1.0, 2.0])])
def test_vander_errors(case):
    same_error(case)


@pytest.mark.parametrize("case", [
    lambda lib: lib.fill(lib.ones(2), 3), lambda lib: lib.fill(lib.ones(2, dtype=lib.int64), 3.7),
    lambda lib: lib.fill(lib.ones(2, 3), _t(lib, 5.0, "float64")),
    lambda lib: lib.fill(lib.zeros(2, dtype=lib.bool), 1)])
def test_fill(case):
    same(case)


def test_fill_gradient_flows_to_the_value():
    for lib in LIBS:
        value = lib.tensor(2.0, requires_grad=True)
        lib.fill(lib.ones(2, 3), value).sum().backward()
        assert value.grad.item() == 6.0


@pytest.mark.parametrize("case", [lambda lib: lib.fill(lib.ones(2), _t(lib, [5.0])),
                                  lambda lib: lib.fill(lib.ones(2), "a")])
def test_fill_errors(case):
    same_error(case, match_message=False)


# windows

WINDOWS = [
    lambda lib, n, p, d: lib.bartlett_window(n, p, dtype=d),
    lambda lib, n, p, d: lib.blackman_window(n, p, dtype=d),
    lambda lib, n, p, d: lib.hamming_window(n, p, dtype=d),
    lambda lib, n, p, d: lib.hamming_window(n, p, 0.5, 0.4, dtype=d),
    lambda lib, n, p, d: lib.hann_window(n, periodic=p, dtype=d),
    lambda lib, n, p, d: lib.kaiser_window(n, p, dtype=d),
    lambda lib, n, p, d: lib.kaiser_window(n, periodic=p, beta=3.5, dtype=d),
]


@pytest.mark.parametrize("window", WINDOWS)
@pytest.mark.parametrize("n", [0, 1, 2, 5, 8, 31, 64])
@pytest.mark.parametrize("periodic", [True, False])
def test_windows(window, n, periodic):
    # float32: within one float32 rounding (NumPy's and PyTorch's float32 cos may differ by one
    # ulp; the Kaiser window is computed in float64 and rounded once, PyTorch's in float32)
    same(lambda lib: window(lib, n, periodic, lib.float64), rtol=0, atol=2e-15)
    same(lambda lib: window(lib, n, periodic, lib.float32), rtol=1e-6, atol=2.5e-7)
    same(lambda lib: window(lib, n, periodic, None), rtol=1e-6, atol=2.5e-7)


@pytest.mark.parametrize("n", [2, 3, 10, 33])
def test_windows_are_pytorchs_bits_where_no_float32_cos_is_involved(n):
    same(lambda lib: [lib.bartlett_window(n, dtype=lib.float32),
                      lib.bartlett_window(n, False, dtype=lib.float64),
                      lib.hann_window(n, dtype=lib.float64),
                      lib.hamming_window(n, False, dtype=lib.float64),
                      lib.blackman_window(n, dtype=lib.float64)], rtol=0, atol=0)


def test_windows_default_arguments_and_requires_grad():
    for name in ("bartlett_window", "blackman_window", "hamming_window", "hann_window",
                 "kaiser_window"):
        same(lambda lib, name=name: getattr(lib, name)(6), rtol=1e-6, atol=1e-7)
        same(lambda lib, name=name: getattr(lib, name)(6, requires_grad=True,
                                                     dtype=lib.float64))


@pytest.mark.parametrize("name", ["bartlett_window", "blackman_window", "hamming_window",
                                  "hann_window", "kaiser_window"])
def test_window_errors(name):
    same_error(lambda lib: getattr(lib, name)(-1))
    same_error(lambda lib: getattr(lib, name)(2.0))
    same_error(lambda lib: getattr(lib, name)(4, dtype=lib.int64), match_message=False)


# switches

def test_interop_threads():
    for lib in LIBS:
        lib.set_num_interop_threads(3)
        assert lib.get_num_interop_threads() == 3
        assert lib.init_num_threads() is None
    same_error(lambda lib: lib.set_num_interop_threads(0))
    same_error(lambda lib: lib.set_num_interop_threads(1.5))


def test_warn_always():
    same(lambda lib: lib.is_warn_always_enabled())
    same(lambda lib: [lib.set_warn_always(True), lib.is_warn_always_enabled()])
    same_error(lambda lib: lib.set_warn_always(1))


@pytest.mark.parametrize("mode", [0, 1, 2, "default", "warn", "error"])
def test_deterministic_debug_mode_is_use_deterministic_algorithms(mode):
    same(lambda lib: [lib.set_deterministic_debug_mode(mode), lib.get_deterministic_debug_mode(),
                      lib.are_deterministic_algorithms_enabled(),
                      lib.is_deterministic_algorithms_warn_only_enabled()])
    same(lambda lib: [lib.use_deterministic_algorithms(True, warn_only=True),
                      lib.get_deterministic_debug_mode()])


@pytest.mark.parametrize("mode", ["x", 3, -1, 1.0])
def test_deterministic_debug_mode_errors(mode):
    same_error(lambda lib: lib.set_deterministic_debug_mode(mode))


def test_flush_denormal():
    # chainrule cannot change the CPU's float mode: it answers False (PyTorch: False where the
    # CPU lacks support); the errors are PyTorch's.
    assert chainrule.set_flush_denormal(True) is False
    assert chainrule.set_flush_denormal(False) is False
    same_error(lambda lib: lib.set_flush_denormal(1))


def test_build_flags_describe_chainrule():
    assert chainrule.has_lapack is True and chainrule.has_spectral is True
    assert chainrule.has_mkl is False and chainrule.has_openmp is False
    assert type(torch.has_lapack) is type(chainrule.has_lapack)


@pytest.mark.parametrize("name, dtype", [("torch.DoubleTensor", "float64"),
                                         ("torch.FloatTensor", "float32"),
                                         ("torch.HalfTensor", "float16")])
def test_set_default_tensor_type(name, dtype):
    for lib in LIBS:
        lib.set_warn_always(True)  # PyTorch warns once per process otherwise
        with pytest.warns(UserWarning, match="set_default_tensor_type\\(\\) is deprecated"):
            lib.set_default_tensor_type(name)
        assert str(lib.get_default_dtype()) == f"torch.{dtype}"
    with pytest.warns(UserWarning):
        torch.set_default_tensor_type(torch.DoubleTensor)
        chainrule.set_default_tensor_type(type("DoubleTensor", (), {}))
    assert str(chainrule.get_default_dtype()) == str(torch.get_default_dtype())


def test_set_default_tensor_type_errors():
    same_error(lambda lib: lib.set_default_tensor_type("torch.LongTensor"))
    same_error(lambda lib: lib.set_default_tensor_type(3))


def test_autocast_switches():
    same(lambda lib: [lib.is_autocast_enabled(), lib.is_autocast_enabled("cpu"),
                      lib.is_autocast_cache_enabled(), lib.get_autocast_dtype("cuda")])
    same(lambda lib: [lib.set_autocast_enabled(True), lib.is_autocast_enabled("cuda"),
                      lib.is_autocast_enabled("cpu")])
    same(lambda lib: [lib.set_autocast_enabled("cpu", True), lib.is_autocast_enabled("cpu"),
                      lib.is_autocast_cpu_enabled(), lib.set_autocast_cpu_enabled(False),
                      lib.is_autocast_enabled("cpu")])
    same(lambda lib: [lib.set_autocast_dtype("cpu", lib.float64), lib.get_autocast_dtype("cpu"),
                      lib.get_autocast_cpu_dtype(), lib.set_autocast_cpu_dtype(lib.float16),
                      lib.get_autocast_dtype("cpu")])
    same(lambda lib: [lib.set_autocast_cache_enabled(False), lib.is_autocast_cache_enabled(),
                      lib.clear_autocast_cache()])
    same(lambda lib: [lib.autocast_increment_nesting(), lib.autocast_increment_nesting(),
                      lib.autocast_decrement_nesting(), lib.autocast_decrement_nesting()])


def test_autocast_deprecations_warn_as_torch():
    for lib in LIBS:
        lib.set_warn_always(True)
        with pytest.warns(DeprecationWarning, match="is_autocast_cpu_enabled\\(\\) is deprecated"):
            lib.is_autocast_cpu_enabled()


@pytest.mark.parametrize("case", [
    lambda lib: lib.set_autocast_enabled("cpu", 1), lambda lib: lib.is_autocast_enabled(3),
    lambda lib: lib.get_autocast_dtype(3), lambda lib: lib.set_autocast_cpu_enabled(1),
    lambda lib: lib.set_autocast_cpu_dtype(3), lambda lib: lib.set_autocast_cache_enabled(1),
    lambda lib: lib.autocast(3)])
def test_autocast_errors(case):
    same_error(case)


def test_autocast_region_records_and_restores():
    def region(lib):
        seen = []
        with lib.autocast("cpu", dtype=lib.float64, cache_enabled=False):
            seen += [lib.is_autocast_enabled("cpu"), lib.get_autocast_dtype("cpu"),
                     lib.is_autocast_cache_enabled()]
            with lib.autocast("cpu", enabled=False):
                seen.append(lib.is_autocast_enabled("cpu"))
            seen.append(lib.is_autocast_enabled("cpu"))
        seen += [lib.is_autocast_enabled("cpu"), lib.is_autocast_cache_enabled()]

        @lib.autocast("cpu", dtype=lib.float16)
        def inside():
            return lib.is_autocast_enabled("cpu"), (lib.ones(2) * 2).dtype
        return seen + list(inside()) + [lib.is_autocast_enabled("cpu")]
    same(region)


@pytest.mark.parametrize("name,args", [("zeros", (2, 3)), ("ones", (4,)), ("empty", (2,)),
                                       ("eye", (3,)), ("arange", (5,)),
                                       ("linspace", (0.0, 1.0, 5))])
def test_factories_take_out_layout_and_pin_memory(name, args):
    """PyTorch's keyword-only out=, layout= and pin_memory= on the factories: out= takes the
    result (resized, in out's dtype), only the strided layout exists, pinned memory needs an
    accelerator (PyTorch's CPU build raises the same)."""
    out = chainrule.empty(7, dtype=chainrule.float64)
    ref = torch.empty(7, dtype=torch.float64)
    with warnings.catch_warnings(record=True) as ours:
        warnings.simplefilter("always")
        got = getattr(chainrule, name)(*args, out=out)
    with warnings.catch_warnings(record=True) as theirs:
        warnings.simplefilter("always")
        want = getattr(torch, name)(*args, out=ref)
    assert [str(w.message).split(" (Triggered")[0] for w in ours] == [
        str(w.message).split(" (Triggered")[0] for w in theirs]  # arange warns on a resize
    assert got is out and got.dtype == chainrule.float64 and list(got.shape) == list(want.shape)
    if name != "empty":
        np.testing.assert_array_equal(got.numpy(), want.numpy())
    assert getattr(chainrule, name)(*args, layout=chainrule.strided).shape == want.shape
    with pytest.raises(RuntimeError, match="pin_memory=True requires"):
        getattr(chainrule, name)(*args, pin_memory=True)
    with pytest.raises(RuntimeError, match="pin_memory=True requires"):
        getattr(torch, name)(*args, pin_memory=True)
