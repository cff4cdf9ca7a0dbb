"""PyTorch's legacy forms against PyTorch itself: the typed tensor classes (torch.FloatTensor),
the legacy constructor torch.Tensor(...) and x.new(...), the new_* methods, Tensor.to and
Tensor.type in all their forms, cpu/cuda and the device predicates, subclass construction."""

import warnings

import numpy as np
import pytest
import torch

import chainrule as cr

# Sizes give uninitialized memory in PyTorch: for those only dtype and shape are compared.
SHAPE_ONLY = object()


def plain(value):
    """A value both libraries can be compared on: a tensor as its class name, dtype, shape,
    requires_grad and values."""
    if isinstance(value, (torch.Tensor, cr.Tensor)):
        values = value.tolist() if value.device.type == "cpu" else None
        return (type(value).__name__, str(value.dtype), tuple(value.shape), value.requires_grad,
                str(value.device), values)
    if isinstance(value, tuple) and value and value[0] is SHAPE_ONLY:
        return tuple((str(t.dtype), tuple(t.shape), str(t.device)) for t in value[1:])
    if isinstance(value, (tuple, list)):
        return type(value)(plain(v) for v in value)
    if isinstance(value, (torch.dtype, cr.dtype, torch.device, cr.device)):
        return str(value)
    if isinstance(value, type):
        return repr(value)
    return value


def outcome(scenario, m):
    """The scenario's value on library ``m``, or its exception's type and message; with the
    warnings it gave (category and message)."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            result = plain(scenario(m))
        except Exception as e:  # noqa: BLE001  (the exception is what is compared)
            result = (type(e).__name__, str(e))
    return result, [(w.category.__name__, str(w.message).split(" (Triggered internally")[0])
                    for w in caught]


def same(scenario):
    ours, theirs = outcome(scenario, cr), outcome(scenario, torch)
    assert ours == theirs


def shape_only(*tensors):
    return (SHAPE_ONLY, *tensors)


# ---- the typed classes ------------------------------------------------------------------------

TYPED = ["FloatTensor", "DoubleTensor", "HalfTensor", "ByteTensor", "CharTensor",
         "ShortTensor", "IntTensor", "LongTensor", "BoolTensor"]


@pytest.mark.parametrize("name", TYPED)
def test_typed_class_makes_its_dtype(name):
    same(lambda m: shape_only(getattr(m, name)(2, 3), getattr(m, name)(m.Size([4])),
                              getattr(m, name)()))
    same(lambda m: getattr(m, name)([[1, 0], [1, 1]]))
    same(lambda m: (getattr(m, name).dtype, getattr(m, name).is_cuda, getattr(m, name).is_sparse,
                    getattr(m, name)))


@pytest.mark.parametrize("name", TYPED)
def test_isinstance_of_a_typed_class_asks_the_dtype(name):
    def scenario(m):
        cls = getattr(m, name)
        tensors = [m.zeros(2, dtype=d) for d in (m.float32, m.float64, m.float16, m.uint8,
                                                 m.int8, m.int16, m.int32, m.int64, m.bool)]
        tensors.append(m.nn.Parameter(m.zeros(2)))
        tensors.append(m.zeros(2, device="meta"))
        return ([isinstance(t, cls) for t in tensors], isinstance(1.0, cls),
                issubclass(cls, m.Tensor), issubclass(m.Tensor, cls), issubclass(cls, cls),
                isinstance(m.zeros(2, dtype=cls.dtype), getattr(m.cuda, name)))

    same(scenario)


TYPED_SCENARIOS = {
    "data": lambda m: m.LongTensor([1, 2]),
    "float_data_truncates": lambda m: m.LongTensor([1.7, -2.5]),
    "nested": lambda m: m.FloatTensor([[1, 2], [3, 4]]),
    "numpy": lambda m: m.DoubleTensor(np.arange(3)),
    "bool_data": lambda m: m.BoolTensor([1, 0, 2]),
    "same_dtype_tensor_aliases": lambda m: m.FloatTensor(m.ones(2)),
    "other_dtype_tensor": lambda m: m.FloatTensor(m.ones(2, dtype=m.float64)),
    "int_tensor_into_int": lambda m: m.IntTensor(m.arange(2)),
    "overflow": lambda m: m.ByteTensor([-1, 300]),
    "int32_overflow": lambda m: m.IntTensor([2**40]),
    "str_into_long": lambda m: m.LongTensor(["a"]),
    "none_into_long": lambda m: m.LongTensor([None]),
    "complex_into_long": lambda m: m.LongTensor([1j]),
    "device_cpu": lambda m: shape_only(m.LongTensor(2, device="cpu")),
    "device_meta": lambda m: m.FloatTensor(2, device="meta"),
    "device_cuda": lambda m: m.FloatTensor([1.0], device="cuda"),
    "cuda_class": lambda m: m.cuda.FloatTensor(2),
    "cuda_class_empty": lambda m: m.cuda.LongTensor(),
    "attribute_is_tensors": lambda m: m.FloatTensor.add(m.zeros(2), 1),
}


@pytest.mark.parametrize("name", TYPED_SCENARIOS)
def test_typed_class_scenarios(name):
    same(TYPED_SCENARIOS[name])


def test_set_default_tensor_type_takes_the_classes():
    def scenario(m):
        m.set_default_tensor_type(m.DoubleTensor)
        try:
            return m.get_default_dtype(), m.tensor([1.5]).dtype, m.Tensor([1]).dtype
        finally:
            m.set_default_tensor_type(m.FloatTensor)

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # its deprecation warning, given once per process
        same(scenario)


@pytest.mark.parametrize("kind", [lambda m: m.cuda.FloatTensor, lambda m: "torch.cuda.HalfTensor",
                                  lambda m: m.LongTensor, lambda m: m.float64])
def test_set_default_tensor_type_refuses_what_pytorch_refuses(kind):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        same(lambda m: m.set_default_tensor_type(kind(m)))


# ---- the legacy constructor -------------------------------------------------------------------

CONSTRUCTOR = {
    "sizes": lambda m: shape_only(m.Tensor(2, 3), m.Tensor(2, 3, 4), m.Tensor(0)),
    "a_size": lambda m: shape_only(m.Tensor(m.Size([2, 3])), m.Tensor(np.int64(3))),
    "size_keyword": lambda m: shape_only(m.Tensor(size=(2, 3))),
    "nothing": lambda m: m.Tensor(),
    "list": lambda m: m.Tensor([1, 2]),
    "tuple_is_data": lambda m: m.Tensor((2, 3)),
    "nested": lambda m: m.Tensor([[1, 2], [3, 4]]),
    "bools": lambda m: m.Tensor([True, False]),
    "range": lambda m: m.Tensor(range(3)),
    "empty_rows": lambda m: m.Tensor([[], []]),
    "data_keyword": lambda m: m.Tensor(data=[1]),
    "numpy": lambda m: m.Tensor(np.arange(3)),
    "numpy_0d": lambda m: m.Tensor(np.array(3.0)),
    "zero_d_tensor": lambda m: m.Tensor(m.tensor(3.0)),
    "int_tensor_keeps_dtype": lambda m: m.Tensor(m.arange(3)),
    "tensors_in_a_list": lambda m: m.Tensor([m.tensor(1.0), m.tensor(2.0)]),
    "large_float": lambda m: m.Tensor([1e300]),
    "device_cpu": lambda m: m.Tensor([1, 2], device="cpu"),
    "device_object": lambda m: shape_only(m.Tensor(2, device=m.device("cpu"))),
    "device_meta": lambda m: m.Tensor(2, device="meta"),
    "device_cuda": lambda m: m.Tensor(2, device="cuda"),
    "device_int": lambda m: m.Tensor(2, device=0),
    "tensor_and_device": lambda m: m.Tensor(m.zeros(2), device="cpu"),
    "str": lambda m: m.Tensor("a"),
    "bytes": lambda m: m.Tensor(b"ab"),
    "float": lambda m: m.Tensor(2.5),
    "bool": lambda m: m.Tensor(True),
    "none": lambda m: m.Tensor(None),
    "numpy_float": lambda m: m.Tensor(np.float64(2.0)),
    "dict": lambda m: m.Tensor({1: 2}),
    "iterator": lambda m: m.Tensor(iter([1])),
    "negative": lambda m: m.Tensor(-1),
    "size_then_str": lambda m: m.Tensor(2, "a"),
    "size_then_float": lambda m: m.Tensor(2, 3.0),
    "size_then_tensor": lambda m: m.Tensor(2, m.zeros(1)),
    "str_in_list": lambda m: m.Tensor([1, 2, "a"]),
    "none_in_list": lambda m: m.Tensor([1, None]),
    "complex_in_list": lambda m: m.Tensor([1j]),
    "ragged": lambda m: m.Tensor([[1, 2], [3]]),
    "ragged_inner": lambda m: m.Tensor([[1], [2, 3]]),
    "mixed_depth": lambda m: m.Tensor([[1, 2], 3]),
    "two_tensors": lambda m: m.Tensor(m.zeros(2), m.zeros(2)),
    "two_lists": lambda m: m.Tensor([2], [3]),
    "list_and_int": lambda m: m.Tensor([1], 2),
    "tuple_and_list": lambda m: m.Tensor((2,), [3]),
    "three_lists": lambda m: m.Tensor([1], [2], [3]),
    "dtype_keyword": lambda m: m.Tensor([1], dtype=m.float64),
    "requires_grad_keyword": lambda m: m.Tensor([1.0], requires_grad=True),
    "unknown_keyword": lambda m: m.Tensor(x=1),
    "sizes_and_size": lambda m: m.Tensor(2, 3, size=(1,)),
}


@pytest.mark.parametrize("name", CONSTRUCTOR)
def test_legacy_constructor(name):
    same(CONSTRUCTOR[name])


def test_legacy_constructor_follows_the_default_dtype():
    def scenario(m):
        m.set_default_dtype(m.float64)
        return m.Tensor([1]), shape_only(m.Tensor(2)), m.FloatTensor([1])

    same(scenario)


def test_legacy_constructor_ignores_the_default_device():
    def scenario(m):
        with m.device("meta"):
            return m.Tensor([1.0]), shape_only(m.Tensor(2))

    same(scenario)


def test_a_tensor_is_aliased():
    def scenario(m):
        a = m.zeros(3, requires_grad=True)
        b = m.Tensor(a)
        alias = (b is a, b.data_ptr() == a.data_ptr(), b.grad_fn.name(), b.is_leaf, b._base is a)
        (b * 2).sum().backward()
        c = m.Tensor(a.detach())
        c[0] = 5.0
        return alias, a.grad, a.detach(), c._version == a._version

    same(scenario)


def test_numpy_data_of_the_dtype_is_shared():
    def scenario(m):
        array = np.array([1.0, 2.0], dtype=np.float32)
        t = m.Tensor(array)
        array[0] = 9.0
        return t, m.DoubleTensor(np.array([1.0])).dtype

    same(scenario)


def test_subclasses_construct_as_pytorch():
    def scenario(m):
        class Sub(m.Tensor):
            pass

        class Parameterish(m.nn.Parameter):
            pass

        x = m.ones(2, requires_grad=True)
        made = [Sub([1.0, 2.0]), Sub(2, 3), Sub(), x.as_subclass(Sub),
                m.Tensor._make_subclass(Sub, x * 2, True), m.Tensor._make_subclass(Sub, x),
                Parameterish(m.zeros(2)), m.nn.Parameter(m.zeros(2), requires_grad=False)]
        base = m.zeros(2)
        shared = m.Tensor._make_subclass(Sub, base)
        shared.add_(1)
        return ([(type(t).__name__, tuple(t.shape), t.requires_grad, t.is_leaf) for t in made],
                made[3].grad_fn.name(), made[3]._base is x, base, base._version)

    same(scenario)


SUBCLASS_ERRORS = {
    "make_subclass_of_int": lambda m: m.Tensor._make_subclass(int, m.zeros(1)),
    "make_subclass_of_list": lambda m: m.Tensor._make_subclass(type("S", (m.Tensor,), {}), [1]),
    "make_subclass_int_grad": lambda m: m.Tensor._make_subclass(
        type("S", (m.Tensor,), {}), m.ones(2, dtype=m.int64), True),
    "as_subclass_of_int": lambda m: m.zeros(1).as_subclass(int),
}


@pytest.mark.parametrize("name", SUBCLASS_ERRORS)
def test_subclass_construction_errors(name):
    same(SUBCLASS_ERRORS[name])


# ---- new and new_* ----------------------------------------------------------------------------

def _double(m):
    return m.zeros(2, dtype=m.float64)


NEW = {
    "new_nothing": lambda m: _double(m).new(),
    "new_sizes": lambda m: shape_only(_double(m).new(2, 3), _double(m).new(m.Size([2]))),
    "new_data": lambda m: _double(m).new([1, 2]),
    "new_tuple_is_data": lambda m: _double(m).new((2, 3)),
    "new_numpy": lambda m: _double(m).new(np.arange(2)),
    "new_same_dtype_tensor": lambda m: _double(m).new(m.ones(2, dtype=m.float64)),
    "new_other_dtype_tensor": lambda m: _double(m).new(m.zeros(2)),
    "new_device": lambda m: shape_only(_double(m).new(2, device="cpu")),
    "new_meta_device": lambda m: _double(m).new(2, device="meta"),
    "new_on_meta": lambda m: shape_only(m.zeros(2, device="meta").new(2),
                                        m.zeros(2, device="meta").new([1.0])),
    "new_on_meta_to_cpu": lambda m: m.zeros(2, device="meta").new(2, device="cpu"),
    "new_dtype_keyword": lambda m: _double(m).new(2, dtype=m.float32),
    "new_float": lambda m: _double(m).new(2.5),
    "new_of_parameter": lambda m: shape_only(m.nn.Parameter(m.zeros(2)).new(2)),
    "empty": lambda m: shape_only(_double(m).new_empty(2, 3), _double(m).new_empty((2, 3)),
                                  _double(m).new_empty([2])),
    "empty_dtype": lambda m: shape_only(_double(m).new_empty(2, dtype=m.int32)),
    "empty_meta": lambda m: shape_only(_double(m).new_empty(2, device="meta")),
    "empty_requires_grad": lambda m: _double(m).new_empty(2, requires_grad=True).requires_grad,
    "empty_layout": lambda m: shape_only(_double(m).new_empty(2, layout=m.strided)),
    "empty_pin": lambda m: _double(m).new_empty(2, pin_memory=True),
    "empty_cuda": lambda m: _double(m).new_empty(2, device="cuda"),
    "empty_strided": lambda m: (_double(m).new_empty_strided((2, 3), (3, 1)).stride(),
                                _double(m).new_empty_strided((2, 3), (1, 2)).stride(),
                                _double(m).new_empty_strided((2, 3), (1, 2)).dtype),
    "empty_strided_meta": lambda m: (
        _double(m).new_empty_strided((2, 3), (1, 2), device="meta").stride()),
    "empty_strided_negative": lambda m: _double(m).new_empty_strided((2,), (-1,)),
    "empty_strided_ranks": lambda m: _double(m).new_empty_strided((2, 3), (1,)),
    "zeros_device": lambda m: _double(m).new_zeros(2, device="cpu"),
    "zeros_meta": lambda m: shape_only(_double(m).new_zeros(2, device="meta")),
    "zeros_size_keyword": lambda m: _double(m).new_zeros(size=(2,)),
    "zeros_negative": lambda m: _double(m).new_zeros(-1),
    "zeros_float": lambda m: _double(m).new_zeros(2.0),
    "zeros_str_dtype": lambda m: _double(m).new_zeros(2, dtype="float32"),
    "zeros_on_meta": lambda m: shape_only(m.zeros(1, device="meta").new_zeros(3)),
    "ones_int_requires_grad": lambda m: _double(m).new_ones(2, dtype=m.int64, requires_grad=True),
    "ones_requires_grad": lambda m: _double(m).new_ones((2, 1), requires_grad=True),
    "full": lambda m: _double(m).new_full((2,), 3, device="cpu", requires_grad=True),
    "full_list": lambda m: _double(m).new_full([2], 3),
    "full_int_size": lambda m: _double(m).new_full(2, 3),
    "full_dtype": lambda m: _double(m).new_full((2,), 7, dtype=m.int32),
    "full_str_value": lambda m: _double(m).new_full((2,), "a"),
    "tensor_device": lambda m: _double(m).new_tensor([1], device="cpu"),
    "tensor_pin_memory": lambda m: _double(m).new_tensor([1], pin_memory=False),
    "tensor_of_a_tensor": lambda m: _double(m).new_tensor(m.ones(2, requires_grad=True)),
    "torch_tensor_of_a_tensor": lambda m: m.tensor(m.ones(2), dtype=m.float64),
}


@pytest.mark.parametrize("name", NEW)
def test_new(name):
    same(NEW[name])


# ---- to, type, cpu, cuda ----------------------------------------------------------------------

def _float(m):
    return m.zeros(2)


TO = {
    "dtype": lambda m: _float(m).to(m.float64),
    "dtype_non_blocking": lambda m: _float(m).to(m.float64, True),
    "dtype_non_blocking_copy": lambda m: _float(m).to(m.float64, True, True),
    "same_dtype_is_self": lambda m: (lambda x: (x.to(m.float32) is x,
                                                x.to(m.float32, copy=True) is x))(_float(m)),
    "device_and_dtype": lambda m: _float(m).to("cpu", m.float64),
    "device_dtype_flags": lambda m: _float(m).to("cpu", m.float64, True, True),
    "other": lambda m: _float(m).to(m.zeros(1, dtype=m.int32)),
    "other_flags": lambda m: _float(m).to(m.zeros(1, dtype=m.int32), True, True),
    "other_copy": lambda m: (lambda x: x.to(x, copy=True) is x)(_float(m)),
    "nothing": lambda m: (lambda x: x.to() is x)(_float(m)),
    "device_keyword": lambda m: (lambda x: x.to(device="cpu") is x)(_float(m)),
    "device_object": lambda m: (lambda x: x.to(m.device("cpu")) is x)(_float(m)),
    "dtype_keyword": lambda m: _float(m).to(dtype=m.int32),
    "none": lambda m: (lambda x: x.to(None) is x)(_float(m)),
    "none_and_dtype": lambda m: _float(m).to(None, m.float64),
    "python_types": lambda m: [_float(m).to(t).dtype for t in (float, int, bool, complex)],
    "python_type_keyword": lambda m: _float(m).to(dtype=float),
    "copy_positional": lambda m: (lambda x: x.to(None, None, False, True) is x)(_float(m)),
    "meta": lambda m: shape_only(_float(m).to("meta"), _float(m).to(device="meta",
                                                                    dtype=m.float64)),
    "cuda": lambda m: _float(m).to("cuda"),
    "cuda_index": lambda m: _float(m).to("cuda:0"),
    "int_device": lambda m: _float(m).to(1),
    "junk_device": lambda m: _float(m).to("junk"),
    "contiguous_format": lambda m: (lambda x: x.to(memory_format=m.contiguous_format) is x)(
        _float(m)),
    "preserve_format": lambda m: _float(m).to(m.float64, memory_format=m.preserve_format),
    "channels_last_rank": lambda m: _float(m).to(memory_format=m.channels_last),
    "channels_last_3d_rank": lambda m: _float(m).to(memory_format=m.channels_last_3d),
    "channels_last": lambda m: (lambda x: (x.stride(), x.is_contiguous(), x))(
        m.arange(24.0).reshape(1, 2, 3, 4).to(memory_format=m.channels_last)),
    "keeps_the_graph": lambda m: (lambda x: (x.to(m.float64).grad_fn.name(),
                                             x.to(m.int64).requires_grad))(
        m.zeros(2, requires_grad=True)),
    "other_then_dtype": lambda m: _float(m).to(_float(m), m.float64),
    "dtype_then_device": lambda m: _float(m).to(m.float64, "cpu"),
    "two_dtypes": lambda m: _float(m).to(m.float64, m.float64),
    "int_non_blocking": lambda m: _float(m).to(m.float64, non_blocking=1),
    "int_copy": lambda m: _float(m).to(m.float64, copy=1),
    "duplicate_dtype": lambda m: _float(m).to(m.device("cpu"), m.float64, dtype=m.float64),
    "other_and_dtype_keyword": lambda m: _float(m).to(_float(m), dtype=m.int32),
    "unknown_keyword": lambda m: _float(m).to(foo=1),
    "other_keyword": lambda m: _float(m).to(other=_float(m)),
    "list": lambda m: _float(m).to([1]),
    "layout": lambda m: _float(m).to(m.strided),
    "too_many": lambda m: _float(m).to(m.float64, False, False, m.preserve_format),
}


@pytest.mark.parametrize("name", TO)
def test_to(name):
    same(TO[name])


TYPE = {
    "names": lambda m: [m.zeros(1, dtype=d).type() for d in (
        m.float32, m.float64, m.float16, m.uint8, m.int8, m.int16, m.int32, m.int64, m.bool,
        m.complex64, m.complex128)],
    "meta_name": lambda m: m.zeros(1, device="meta").type(),
    "parameter_name": lambda m: m.nn.Parameter(m.zeros(1)).type(),
    "class": lambda m: _float(m).type(m.DoubleTensor),
    "class_name": lambda m: _float(m).type("torch.DoubleTensor"),
    "complex_name": lambda m: _float(m).type("torch.ComplexFloatTensor"),
    "same_class_is_self": lambda m: (lambda x: x.type(m.FloatTensor) is x)(_float(m)),
    "dtype": lambda m: _float(m).type(m.float64),
    "dtype_keyword": lambda m: _float(m).type(dtype=m.float64),
    "non_blocking": lambda m: _float(m).type(m.float64, True),
    "tensor_class": lambda m: m.zeros(1, dtype=m.int64).type(m.Tensor),
    "async_keyword": lambda m: _float(m).type(m.float64, **{"async": True}),
    "unknown_keyword": lambda m: _float(m).type(m.float64, foo=1),
    "dtype_name": lambda m: _float(m).type("torch.float64"),
    "short_name": lambda m: _float(m).type("FloatTensor"),
    "python_type": lambda m: _float(m).type(int),
    "number": lambda m: _float(m).type(1.5),
    "cuda_class": lambda m: _float(m).type(m.cuda.FloatTensor),
    "cuda_name": lambda m: _float(m).type("torch.cuda.FloatTensor"),
}


@pytest.mark.parametrize("name", TYPE)
def test_type(name):
    if name == "async_keyword":
        for m in (torch, cr):
            m.set_warn_always(True)
        try:
            same(TYPE[name])
        finally:
            for m in (torch, cr):
                m.set_warn_always(False)
        return
    same(TYPE[name])


DEVICES = {
    "cpu_is_self": lambda m: (lambda x: (x.cpu() is x, x.cpu(memory_format=m.contiguous_format)
                                         is x))(_float(m)),
    "cuda": lambda m: _float(m).cuda(),
    "cuda_index": lambda m: _float(m).cuda(0),
    "cuda_negative": lambda m: _float(m).cuda(-1),
    "cuda_string": lambda m: _float(m).cuda("cuda:1"),
    "cuda_keyword": lambda m: _float(m).cuda(device="cuda"),
    "cuda_non_blocking": lambda m: _float(m).cuda(non_blocking=True),
    "cuda_cpu_device": lambda m: _float(m).cuda(m.device("cpu")),
    "cuda_meta_string": lambda m: _float(m).cuda("meta"),
    "cuda_float": lambda m: _float(m).cuda(1.5),
    "cuda_of_meta": lambda m: m.zeros(1, device="meta").cuda(),
    "predicates": lambda m: [(t.is_cuda, t.is_cpu, t.is_meta, t.get_device(), t.is_sparse,
                              t.is_quantized, t.is_mkldnn, t.is_xpu, t.is_mps, t.is_nested)
                             for t in (_float(m), m.zeros(1, device="meta"))],
    "pin_memory": lambda m: _float(m).pin_memory(),
    "pin_memory_cpu": lambda m: _float(m).pin_memory("cpu"),
    "pin_memory_cuda": lambda m: _float(m).pin_memory("cuda"),
    "pin_memory_none": lambda m: _float(m).pin_memory(None),
    "is_pinned": lambda m: (_float(m).is_pinned(), _float(m).is_pinned("cuda")),
    "base": lambda m: (lambda a: (a._base, a[1:]._base is a, a.view(2)._base is a,
                                  a[1:][0:]._base is a, a.detach()._base, a._is_view(),
                                  a[1:]._is_view()))(_float(m)),
}


@pytest.mark.parametrize("name", DEVICES)
def test_devices(name):
    same(DEVICES[name])


@pytest.mark.parametrize("m", [torch, cr], ids=["torch", "chainrule"])
def test_cpu_takes_memory_format_by_keyword_only(m):
    with pytest.raises(TypeError):
        m.zeros(2).cpu(m.contiguous_format)
