"""The Tensor class and tensor creation, compared with PyTorch: factories, dtypes, dtype
inference, type promotion, conversions, metadata, printing and errors."""

import math

import numpy as np
import pytest
import torch

import chainrule as cr

BOTH = pytest.mark.parametrize("m", [torch, cr], ids=["torch", "chainrule"])


def run(scenario):
    return scenario(cr), scenario(torch)


# ---- factories ----------------------------------------------------------------------------------

FACTORIES = {
    "zeros_varargs": lambda m: m.zeros(2, 3),
    "zeros_tuple": lambda m: m.zeros((2, 3)),
    "zeros_list_int32": lambda m: m.zeros([2], dtype=m.int32),
    "zeros_empty_dims": lambda m: m.zeros(2, 0),
    "ones": lambda m: m.ones(3),
    "ones_scalar": lambda m: m.ones(()),
    "ones_bool": lambda m: m.ones(2, 2, dtype=m.bool),
    "ones_requires_grad": lambda m: m.ones(2, requires_grad=True),
    "full_int": lambda m: m.full((2, 2), 7),
    "full_float": lambda m: m.full((2,), 1.5),
    "full_bool": lambda m: m.full((2,), True),
    "full_dtype": lambda m: m.full([3], 2, dtype=m.float64),
    "arange_end": lambda m: m.arange(5),
    "arange_start_end": lambda m: m.arange(1, 4),
    "arange_float_step": lambda m: m.arange(1, 4, 0.5),
    "arange_tenths": lambda m: m.arange(0, 1, 0.1),
    "arange_float_end": lambda m: m.arange(2.5),
    "arange_negative_step": lambda m: m.arange(10, 0, -3),
    "arange_dtype": lambda m: m.arange(5, dtype=m.float64),
    "linspace": lambda m: m.linspace(0, 1, 5),
    "linspace_float64": lambda m: m.linspace(-1, 1, 4, dtype=m.float64),
    "linspace_one_step": lambda m: m.linspace(2, 3, 1),
    "eye": lambda m: m.eye(3),
    "eye_rect": lambda m: m.eye(2, 3),
    "eye_int": lambda m: m.eye(2, dtype=m.int64),
    "zeros_like_int": lambda m: m.zeros_like(m.tensor([[1, 2, 3]])),
    "ones_like_float64": lambda m: m.ones_like(m.zeros(2, dtype=m.float64)),
    "ones_like_dtype": lambda m: m.ones_like(m.zeros(2), dtype=m.int32),
    "full_like": lambda m: m.full_like(m.zeros(3), 3),
    "full_like_int_truncates": lambda m: m.full_like(m.tensor([1, 2]), 2.7),
    "zeros_like_requires_grad": lambda m: m.zeros_like(m.ones(2), requires_grad=True),
}


@pytest.mark.parametrize("name", FACTORIES)
def test_factories(name, like_torch):
    like_torch(*run(FACTORIES[name]))


SHAPED = {
    "empty": lambda m: m.empty(2, 3),
    "empty_dtype": lambda m: m.empty((4,), dtype=m.int32),
    "empty_like": lambda m: m.empty_like(m.ones(2, 1, dtype=m.float64)),
    "rand": lambda m: m.rand(2, 3),
    "rand_float64": lambda m: m.rand((5,), dtype=m.float64),
    "randn": lambda m: m.randn(4),
    "randn_like": lambda m: m.randn_like(m.ones(2, 2, dtype=m.float64)),
    "rand_like": lambda m: m.rand_like(m.ones(3)),
    "randint": lambda m: m.randint(0, 10, (3, 2)),
    "randint_high": lambda m: m.randint(5, (4,)),
    "randint_dtype": lambda m: m.randint(-3, 3, (6,), dtype=m.int32),
    "randint_like": lambda m: m.randint_like(m.ones(3), 10),
}


@pytest.mark.parametrize("name", SHAPED)
def test_factories_with_arbitrary_values(name):
    ours, theirs = run(SHAPED[name])
    assert (ours.shape, str(ours.dtype)) == (theirs.shape, str(theirs.dtype))
    assert not ours.requires_grad
    values = ours.numpy()
    if name.startswith("rand") and "randn" not in name and "int" not in name:
        assert values.min() >= 0 and values.max() < 1
    if name.startswith("randint"):
        low, high = {"randint": (0, 10), "randint_high": (0, 5), "randint_dtype": (-3, 3),
                     "randint_like": (0, 10)}[name]
        assert values.min() >= low and values.max() < high


def test_manual_seed_reproducibility():
    def draw():
        return [cr.rand(4).tolist(), cr.randn(3).tolist(), cr.randint(0, 100, (5,)).tolist()]

    cr.manual_seed(1234)
    first = draw()
    cr.manual_seed(1234)
    assert draw() == first
    assert draw() != first  # the stream moves on
    cr.manual_seed(4321)
    assert draw() != first
    gen = cr.Generator().manual_seed(7)
    a = cr.rand(3, generator=gen).tolist()
    assert cr.rand(3, generator=cr.Generator().manual_seed(7)).tolist() == a
    assert cr.initial_seed() == 4321


def test_randn_is_standard_normal():
    cr.manual_seed(0)
    sample = cr.randn(20000, dtype=cr.float64).numpy()
    assert abs(sample.mean()) < 0.05 and abs(sample.std() - 1) < 0.05


# ---- dtypes -------------------------------------------------------------------------------------

DTYPE_NAMES = ["float16", "float32", "float64", "int8", "int16", "int32", "int64", "uint8", "bool",
               "complex64", "complex128", "half", "float", "double", "short", "int", "long",
               "cfloat", "cdouble"]


@pytest.mark.parametrize("name", DTYPE_NAMES)
def test_dtype_objects(name):
    def describe(m):
        d = getattr(m, name)
        return (repr(d), str(d), d.is_floating_point, d.is_complex, d.is_signed, d.itemsize,
                d == getattr(m, str(d).split(".")[1]), m.zeros(1, dtype=d).dtype == d)

    ours, theirs = run(describe)
    assert ours == theirs


def test_default_dtype(like_torch):
    def scenario(m):
        before = m.get_default_dtype()
        m.set_default_dtype(m.float64)
        made = [m.tensor([1.5]), m.tensor(1), m.zeros(2), m.arange(0.5, 2), m.full((1,), 2.5),
                m.linspace(0, 1, 3), m.tensor([1, 2]) / 2, m.tensor([1, 2]) * 0.5,
                m.tensor([1.0, 2.0]).float(), m.rand(2).dtype, m.get_default_dtype()]
        shown = repr(m.tensor([1.0], dtype=m.float32)), repr(m.tensor([1.0]))
        m.set_default_dtype(m.float32)
        return before, made, shown, m.tensor([0.5]), m.get_default_dtype()

    like_torch(*run(scenario))


@BOTH
def test_default_dtype_must_be_floating(m):
    with pytest.raises(TypeError, match="only floating-point types are supported as the default"):
        m.set_default_dtype(m.int64)
    assert m.get_default_dtype() == m.float32


TENSOR_DATA = {
    "float": 2.5,
    "int": 3,
    "bool": True,
    "complex": 1 + 2j,
    "float_list": [1.0, 2.0],
    "int_list": [1, 2, 3],
    "bool_list": [True, False],
    "int_and_float": [1, 2.5],
    "bool_and_int": [True, 1],
    "mixed": [1, 2.0, True],
    "nested": [[1, 2], [3, 4]],
    "nested_float": [[1.5], [2.0]],
    "empty": [],
    "empty_nested": [[]],
    "tuple": (1.0, 2),
    "np_float64": np.array([1.5, 2.5]),
    "np_float32": np.array([1.5], dtype=np.float32),
    "np_int32": np.array([[1, 2]], dtype=np.int32),
    "np_int16": np.array([1], dtype=np.int16),
    "np_uint8": np.array([255], dtype=np.uint8),
    "np_bool": np.array([True]),
    "np_scalar_float64": np.float64(1.5),
    "np_scalar_int64": np.int64(7),
    "list_of_np_float32": [np.float32(1.0), np.float32(2.0)],
    "precise": [0.1, 1 / 3],
}


@pytest.mark.parametrize("name", TENSOR_DATA)
def test_tensor_dtype_inference(name, like_torch):
    like_torch(*run(lambda m: m.tensor(TENSOR_DATA[name])), rtol=0, atol=0)


@pytest.mark.parametrize("dtype", ["float64", "float32", "int32", "float16"])
def test_tensor_with_explicit_dtype_converts_the_python_values(dtype, like_torch):
    like_torch(*run(lambda m: m.tensor([0.1, 1 / 3, 2.0, -7.5], dtype=getattr(m, dtype))),
               rtol=0, atol=0)


def test_tensor_copies_its_data():
    data = np.array([1.0, 2.0])
    t = cr.tensor(data)
    data[0] = 5.0
    assert t.tolist() == [1.0, 2.0]


# ---- type promotion -----------------------------------------------------------------------------

PROMOTION_DTYPES = ["bool", "uint8", "int8", "int16", "int32", "int64", "float16", "float32",
                    "float64"]
OPERATORS = {"add": lambda a, b: a + b, "mul": lambda a, b: a * b, "div": lambda a, b: a / b}
SHAPES = {"dim_dim": ((2,), (2,)), "dim_zerodim": ((2,), ()), "zerodim_dim": ((), (2,)),
          "zerodim_zerodim": ((), ())}


def _filled(m, shape, dtype):
    return m.ones(shape, dtype=getattr(m, dtype)) * (m.tensor(True) if dtype == "bool" else 2)


@pytest.mark.parametrize("shapes", SHAPES)
@pytest.mark.parametrize("op", OPERATORS)
def test_type_promotion_between_tensors(op, shapes):
    sa, sb = SHAPES[shapes]
    wrong = []
    for da in PROMOTION_DTYPES:
        for db in PROMOTION_DTYPES:
            ours = OPERATORS[op](_filled(cr, sa, da), _filled(cr, sb, db))
            theirs = OPERATORS[op](_filled(torch, sa, da), _filled(torch, sb, db))
            if str(ours.dtype) != str(theirs.dtype) or ours.tolist() != theirs.tolist():
                wrong.append(f"{da} {op} {db}: {ours!r} != {theirs!r}")
    assert wrong == []


SCALARS = [True, 3, 2.5]
SCALAR_OPERATORS = {
    "add": lambda t, s: t + s, "radd": lambda t, s: s + t, "mul": lambda t, s: t * s,
    "sub": lambda t, s: t - s, "rsub": lambda t, s: s - t, "div": lambda t, s: t / s,
    "rdiv": lambda t, s: s / t, "pow": lambda t, s: t ** s, "eq": lambda t, s: t == s,
}


@pytest.mark.parametrize("op", SCALAR_OPERATORS)
def test_type_promotion_with_python_scalars(op):
    wrong = []
    for dtype in PROMOTION_DTYPES:
        for shape in [(2,), ()]:
            for s in SCALARS:
                results = []
                for m in (cr, torch):
                    try:
                        out = SCALAR_OPERATORS[op](_filled(m, shape, dtype), s)
                        results.append((str(out.dtype), out.tolist()))
                    except Exception as err:  # noqa: BLE001  (compare the error types)
                        results.append(type(err).__name__)
                if results[0] != results[1]:
                    wrong.append(f"{dtype}{list(shape)} {op} {s!r}: {results[0]} != {results[1]}")
    assert wrong == []


COMPLEX_PROMOTION = {
    "float64_complex64": lambda m: m.ones(2, dtype=m.float64) + m.ones(2, dtype=m.complex64),
    "complex64_float64_0d": lambda m: m.ones(2, dtype=m.complex64) * m.tensor(2.0, dtype=m.float64),
    "float32_complex128": lambda m: m.ones(2) - m.ones(2, dtype=m.complex128),
    "int_complex64": lambda m: m.tensor([1, 2]) * m.ones(2, dtype=m.complex64),
    "float64_1j": lambda m: m.ones(2, dtype=m.float64) + 1j,
    "float32_1j": lambda m: m.ones(2) * 1j,
    "int_1j": lambda m: m.tensor([1, 2]) / 1j,
    "bool_1j": lambda m: 1j + m.tensor([True]),
    "complex128_2.5": lambda m: m.ones(1, dtype=m.complex128) + 2.5,
}


@pytest.mark.parametrize("name", COMPLEX_PROMOTION)
def test_complex_type_promotion(name, like_torch):
    like_torch(*run(COMPLEX_PROMOTION[name]))


@pytest.mark.parametrize("dtype,scalar", [("uint8", -1), ("int8", 200), ("uint8", 300)])
def test_out_of_range_python_ints_wrap_like_torch(dtype, scalar, like_torch):
    like_torch(*run(lambda m: m.tensor([1, 2], dtype=getattr(m, dtype)) + scalar))


def test_promotion_examples():
    assert (cr.tensor([1, 2]) * 2.5).dtype == cr.float32
    assert (cr.tensor([1, 2], dtype=cr.int32) + cr.tensor(5)).dtype == cr.int32
    assert (cr.tensor([1.0], dtype=cr.float16) + cr.tensor(1.0, dtype=cr.float64)).dtype \
        == cr.float16
    assert (cr.tensor([1, 2], dtype=cr.int32) + cr.tensor(1.5, dtype=cr.float64)).dtype \
        == cr.float64
    assert (cr.tensor([True]) + 1).dtype == cr.int64
    assert (cr.tensor([1, 2]) / cr.tensor([2, 2])).tolist() == [0.5, 1.0]


def test_inplace_ops_keep_the_tensor_dtype(like_torch):
    def scenario(m):
        f = m.tensor([1.5, 2.5])
        f.add_(m.tensor([1.0, 2.0], dtype=m.float64))
        i = m.tensor([1, 2], dtype=m.int32)
        i.mul_(m.tensor(3))
        return f, i

    like_torch(*run(scenario))


@BOTH
def test_inplace_op_cannot_cast_float_result_into_int_tensor(m):
    with pytest.raises(RuntimeError, match="can't be cast to the desired output type"):
        m.tensor([1, 2]).add_(1.5)


# ---- NumPy interop ------------------------------------------------------------------------------


def test_from_numpy_shares_memory(like_torch):
    def scenario(m):
        array = np.arange(4.0)
        t = m.from_numpy(array)
        array[0] = 10.0
        t.add_(1)
        t[3] = -1.0
        return t, array.tolist(), m.from_numpy(np.array([1, 2], dtype=np.int32))

    like_torch(*run(scenario))


@BOTH
def test_numpy_shares_memory(m):
    t = m.zeros(3)
    a = t.numpy()
    a[1] = 4.0
    assert t.tolist() == [0.0, 4.0, 0.0]
    assert a.dtype == np.float32


@BOTH
def test_numpy_refuses_tensors_that_require_grad(m):
    message = (r"Can't call numpy\(\) on Tensor that requires grad. Use "
               r"tensor.detach\(\).numpy\(\) instead.")
    x = m.ones(2, requires_grad=True)
    with pytest.raises(RuntimeError, match=message):
        x.numpy()
    with pytest.raises(RuntimeError, match=message):
        np.asarray(x)
    with pytest.raises(RuntimeError, match=message):
        (x * 2).numpy()
    assert x.detach().numpy().tolist() == [1.0, 1.0]


@pytest.mark.filterwarnings("ignore:__array__ implementation doesn't accept a copy keyword")
def test_array_protocol(like_torch):
    def scenario(m):
        t = m.tensor([[1, 2], [3, 4]], dtype=m.int32)
        as_array = np.asarray(t)
        as_float = np.asarray(t, dtype=np.float64)
        copied = np.array(t)
        copied[0, 0] = 100
        return as_array.dtype.name, as_array.tolist(), as_float.dtype.name, t

    like_torch(*run(scenario))


# ---- metadata and conversion to Python ----------------------------------------------------------

METADATA_TENSORS = {
    "scalar": lambda m: m.tensor(2.5),
    "vector": lambda m: m.tensor([1, 2, 3]),
    "matrix": lambda m: m.tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]], dtype=m.float64),
    "batch": lambda m: m.zeros(2, 1, 3, dtype=m.bool),
    "empty": lambda m: m.zeros(0, 2),
    "grad": lambda m: m.ones(2, 2, requires_grad=True) * 3,
}


@pytest.mark.parametrize("name", METADATA_TENSORS)
def test_metadata(name):
    def describe(m):
        t = METADATA_TENSORS[name](m)
        info = [repr(t.shape), repr(t.size()), t.shape == t.size(), t.dim(), t.ndim, t.numel(),
                str(t.dtype), str(t.device), repr(t.device), t.is_floating_point(),
                t.tolist(), t.is_leaf, t.requires_grad, t.element_size()]
        if t.dim():
            info += [t.size(0), t.size(-1), len(t), t.shape[-1]]
        if t.dim() == 2:
            info += [t.T.shape, t.T.tolist()]
        if t.numel() == 1:
            info += [t.item(), type(t.item()).__name__]
        return info

    ours, theirs = run(describe)
    assert ours == theirs


CONVERSIONS = {
    "float": lambda t: t.float(),
    "double": lambda t: t.double(),
    "half": lambda t: t.half(),
    "long": lambda t: t.long(),
    "int": lambda t: t.int(),
    "bool": lambda t: t.bool(),
    "to_dtype": lambda t: t.to(torch.float64 if isinstance(t, torch.Tensor) else cr.float64),
    "to_dtype_keyword": lambda t: t.to(dtype=torch.int16 if isinstance(t, torch.Tensor)
                                       else cr.int16),
    "to_cpu": lambda t: t.to("cpu"),
    "to_other": lambda t: t.to(t.long()),
    "to_copy": lambda t: t.to(t.dtype, copy=True),
    "type": lambda t: t.type(),
}


@pytest.mark.parametrize("name", CONVERSIONS)
@pytest.mark.parametrize("values", [[1.7, -2.2, 0.0], [3, 0, -1]], ids=["floats", "ints"])
def test_conversions(name, values, like_torch):
    def scenario(m):
        t = m.tensor(values)
        out = CONVERSIONS[name](t)
        return out, out is t

    like_torch(*run(scenario))


def test_conversion_keeps_the_graph(like_torch):
    def scenario(m):
        x = m.tensor([1.5, -2.0], requires_grad=True)
        y = x.double()
        (y * y).sum().backward()
        return y, y.grad_fn.name(), x.grad, x.float() is x

    like_torch(*run(scenario))


PYTHON_CONVERSIONS = {
    "bool_zero": lambda m: bool(m.tensor([0.0])),
    "bool_two": lambda m: bool(m.tensor(2)),
    "float": lambda m: float(m.tensor([2.5])),
    "int_truncates": lambda m: int(m.tensor(-3.7)),
    "index": lambda m: [10, 20, 30][m.tensor(1)],
    "item_int": lambda m: m.tensor([[7]]).item(),
    "item_bool": lambda m: m.tensor(True).item(),
    "tolist_nested": lambda m: m.tensor([[1, 2], [3, 4]]).tolist(),
    "tolist_scalar": lambda m: m.tensor(1.5).tolist(),
    "iter_rows": lambda m: [r.tolist() for r in m.tensor([[1, 2], [3, 4]])],
    "iter_scalars": lambda m: [(r.shape, r.item()) for r in m.tensor([1.5, 2.5])],
    "len": lambda m: len(m.zeros(3, 2)),
    "format": lambda m: f"{m.tensor(2.5):.3f}",
    "in": lambda m: 2 in m.tensor([1, 2, 3]),
}


@pytest.mark.parametrize("name", PYTHON_CONVERSIONS)
def test_python_conversions(name):
    ours, theirs = run(PYTHON_CONVERSIONS[name])
    assert (ours, type(ours)) == (theirs, type(theirs))


PYTHON_CONVERSION_ERRORS = [
    ("len_0d", lambda m: len(m.tensor(1.0)), TypeError, "len\\(\\) of a 0-d tensor"),
    ("iter_0d", lambda m: iter(m.tensor(1.0)), TypeError, "iteration over a 0-d tensor"),
    ("bool_many", lambda m: bool(m.tensor([1, 2])), RuntimeError,
     "Boolean value of Tensor with more than one value is ambiguous"),
    ("float_many", lambda m: float(m.tensor([1.0, 2.0])), ValueError,
     "only one element tensors can be converted to Python scalars"),
    ("item_many", lambda m: m.tensor([1.0, 2.0]).item(), RuntimeError,
     "a Tensor with 2 elements cannot be converted to Scalar"),
    ("index_float", lambda m: [1, 2][m.tensor(1.0)], TypeError,
     "only integer tensors of a single element can be converted to an index"),
]


@BOTH
@pytest.mark.parametrize("name,fn,exc,message", PYTHON_CONVERSION_ERRORS,
                         ids=[r[0] for r in PYTHON_CONVERSION_ERRORS])
def test_python_conversion_errors(m, name, fn, exc, message):
    with pytest.raises(exc, match=message):
        fn(m)


# ---- views share storage ------------------------------------------------------------------------

VIEWS = {
    "select_1d": lambda t: t[0],
    "select_2d_element": lambda t: t.view(2, 2)[1, 0],
    "select_row": lambda t: t.view(2, 2)[1],
    "column": lambda t: t.view(2, 2)[:, 1],
    "slice": lambda t: t[1:3],
    "view": lambda t: t.view(2, 2),
    "T": lambda t: t.view(2, 2).T,
    "transpose": lambda t: t.view(1, 4).transpose(0, 1),
    "unsqueeze": lambda t: t.unsqueeze(0),
    "squeeze": lambda t: t.view(1, 4).squeeze(0),
    "detach": lambda t: t.detach(),
}


@pytest.mark.parametrize("name", VIEWS)
def test_writes_through_a_view_reach_the_base(name, like_torch):
    def scenario(m):
        base = m.tensor([1.0, 2.0, 3.0, 4.0])
        v = VIEWS[name](base)
        v.mul_(10)
        v.add_(1)
        base.sub_(0.5)  # and writes to the base show in the view
        return base, v

    like_torch(*run(scenario))


@pytest.mark.parametrize("name", [n for n in VIEWS if n != "detach"])
def test_view_made_before_an_inplace_change_of_its_base_has_the_new_history(name, like_torch):
    # Found by tests/test_random_programs.py: the view kept the grad_fn it was made with.
    def scenario(m):
        x = m.tensor([0.5, -1.0, 2.0, 1.5], dtype=m.float64, requires_grad=True)
        base = x.clone()
        v = VIEWS[name](base)
        base.sin_()
        base[1:] *= 3  # a write through another view changes it too
        return v.detach(), m.autograd.grad((v * v).sum(), x)

    like_torch(*run(scenario))


@pytest.mark.parametrize("key", ["[:, [0, 2]]", "[:, :, [1, 1, 0]]", "[[1, 0]]", "[..., [2]]"])
def test_advanced_indexing_result_is_contiguous(key, like_torch):
    # Found by tests/test_random_programs.py: NumPy lays x[:, idx] out with the indexed dim
    # outermost, so view(-1) raised and a later in-place write did not reach a flatten() of it.
    def scenario(m):
        x = m.arange(24.0, dtype=m.float64).reshape(2, 4, 3)
        y = eval("x" + key, {"x": x})
        flat = y.flatten()
        y.add_(1)
        return y.is_contiguous(), y.view(-1), flat

    like_torch(*run(scenario))


@pytest.mark.parametrize("equation", ["...ij,...kj->...ik", "bij,bkj->bki", "bij,bjk->bik"])
def test_einsum_of_two_operands_is_contiguous(equation, like_torch):
    # Found by tests/test_random_programs.py: NumPy's result was a transpose, so view(-1) raised.
    def scenario(m):
        a = m.arange(24.0, dtype=m.float64).reshape(2, 3, 4)
        b = a if equation != "bij,bjk->bik" else a.mT
        out = m.einsum(equation, a, b)
        return out.is_contiguous(), out.view(-1)

    like_torch(*run(scenario))


def test_write_through_a_view_with_a_broadcast_gradient(like_torch):
    # Found by tests/test_random_programs.py: the gradient reaching the write, broadcast along
    # dim 0 by sum(0), was copied in Fortran order, where view(-1) is no view: RuntimeError.
    def scenario(m):
        x = m.tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]], dtype=m.float64, requires_grad=True)
        y = x.clone()
        y.view(-1)[:2].mul_(2)
        w = m.tensor([1.0, 2.0, 3.0], dtype=m.float64)
        return m.autograd.grad((y.sum(0) * w).sum(), x)

    like_torch(*run(scenario))


def test_view_of_a_base_without_history_requires_grad_after_an_inplace_change(like_torch):
    def scenario(m):
        base = m.zeros(3, dtype=m.float64)
        v = base[1:]
        y = m.tensor([1.0, 2.0, 3.0], dtype=m.float64, requires_grad=True)
        base.add_(y * y)
        return v.requires_grad, m.autograd.grad(v.sum(), y)

    like_torch(*run(scenario))


# ---- printing -----------------------------------------------------------------------------------

REPRS = {
    "floats": lambda m: m.tensor([1.0, 2.0, 3.0]),
    "scalar": lambda m: m.tensor(3.5),
    "ints": lambda m: m.tensor([1, 2]),
    "bools": lambda m: m.tensor([True, False]),
    "matrix": lambda m: m.tensor([[1.5, -2.25], [3.0, 4.0]]),
    "float64": lambda m: m.tensor([0.1, 2.0], dtype=m.float64),
    "int32": lambda m: m.tensor([1, -2], dtype=m.int32),
    "float16": lambda m: m.tensor([1.5, 2.0], dtype=m.float16),
    "uint8": lambda m: m.tensor([255, 0], dtype=m.uint8),
    # complex tensors print in NumPy's format (docs/differences.md)
    "requires_grad": lambda m: m.tensor([1.0, 2.0], requires_grad=True),
    "scalar_requires_grad": lambda m: m.tensor(2.0, requires_grad=True),
    "float64_requires_grad": lambda m: m.tensor([0.5], dtype=m.float64, requires_grad=True),
    "grad_fn_mul": lambda m: m.tensor([1.0, 2.0], requires_grad=True) * 2,
    "grad_fn_sum": lambda m: m.tensor([1.0, 2.0], requires_grad=True).sum(),
    "grad_fn_pow": lambda m: m.tensor(2.0, requires_grad=True) ** 2,
    "grad_fn_float64": lambda m: m.tensor([1.0, 2.0], dtype=m.float64, requires_grad=True).exp(),
    "grad_fn_copy_slices": lambda m: _copy_slices(m),
    "detached": lambda m: (m.tensor([1.0], requires_grad=True) * 2).detach(),
    "empty": lambda m: m.zeros(0),
    "empty_int": lambda m: m.zeros(0, dtype=m.int64),
    "empty_2d": lambda m: m.zeros(2, 0),
    "summarized": lambda m: m.arange(2000.0),
    "big_matrix": lambda m: m.arange(100).view(10, 10),
    "three_d": lambda m: m.arange(12.0).view(2, 3, 2) / 7,
    "sci_mode": lambda m: m.tensor([1e-8, 1.0, 1e5]),
    "large": lambda m: m.tensor([1e10, 3.0]),
    "nonfinite": lambda m: m.tensor([math.nan, math.inf, -math.inf, 1.5]),
    "negative_zero": lambda m: m.tensor([-0.0, 0.25]),
}


def _copy_slices(m):
    y = m.tensor([1.0, 2.0], requires_grad=True) * 1
    y[0] = 5.0
    return y


@pytest.mark.parametrize("name", REPRS)
def test_repr_matches_torch(name):
    ours, theirs = run(REPRS[name])
    assert repr(ours) == repr(theirs)
    assert str(ours) == str(theirs)


def test_repr_under_float64_default():
    def scenario(m):
        m.set_default_dtype(m.float64)
        return repr(m.tensor([1.5])), repr(m.tensor([1.5], dtype=m.float32)), repr(m.zeros(1))

    ours, theirs = run(scenario)
    assert ours == theirs


# ---- errors -------------------------------------------------------------------------------------

NOT_FLOATING = "(?i)only Tensors of floating point (and complex )?dtype can require gradients"
CANNOT_REQUIRE_GRAD = {
    "tensor_int": lambda m: m.tensor([1, 2], requires_grad=True),
    "tensor_bool": lambda m: m.tensor([True], requires_grad=True),
    "zeros_int": lambda m: m.zeros(2, dtype=m.int64, requires_grad=True),
    "requires_grad_": lambda m: m.arange(3).requires_grad_(),
    "attribute": lambda m: setattr(m.tensor([1, 2], dtype=m.int32), "requires_grad", True),
}


@BOTH
@pytest.mark.parametrize("name", CANNOT_REQUIRE_GRAD)
def test_integer_tensors_cannot_require_grad(m, name):
    with pytest.raises(RuntimeError, match=NOT_FLOATING):
        CANNOT_REQUIRE_GRAD[name](m)


@BOTH
def test_requires_grad_of_non_leaf_cannot_be_turned_off(m):
    y = m.ones(2, requires_grad=True) * 2
    with pytest.raises(RuntimeError, match="you can only change requires_grad flags of leaf"):
        y.requires_grad = False
    with pytest.raises(RuntimeError, match="you can only change requires_grad flags of leaf"):
        y.requires_grad_(False)
    assert y.requires_grad_(True) is y  # asking for what it already has is fine


BROADCAST_ERRORS = [
    ("add", (2, 3), (4,), 3, 4, 1),
    ("mul", (2, 3), (3, 2), 3, 2, 1),
    ("sub", (5, 1, 3), (4, 2), 3, 2, 2),
    ("div", (4,), (2, 3), 4, 3, 1),
    ("where", (2,), (3,), 2, 3, 0),
]


@BOTH
@pytest.mark.parametrize("op,shape_a,shape_b,a,b,dim", BROADCAST_ERRORS,
                         ids=[r[0] for r in BROADCAST_ERRORS])
def test_mismatched_broadcast_shapes(m, op, shape_a, shape_b, a, b, dim):
    x, y = m.ones(shape_a), m.ones(shape_b)
    message = (f"(?i)the size of tensor a \\({a}\\) must match the size of tensor b \\({b}\\) at "
               f"non-singleton dimension {dim}")
    with pytest.raises(RuntimeError, match=message):
        if op == "where":
            m.where(x > 0, x, y)
        else:
            getattr(m, op)(x, y)


@BOTH
def test_other_shape_errors(m):
    with pytest.raises(RuntimeError, match=r"mat1 and mat2 shapes cannot be multiplied \(2x3 and "
                                           r"2x3\)"):
        m.ones(2, 3) @ m.ones(2, 3)
    with pytest.raises(RuntimeError, match=r"output with shape \[2, 3\] doesn't match the "
                                           r"broadcast shape \[2, 2, 3\]"):
        m.ones(2, 3).add_(m.ones(2, 1, 3))
    with pytest.raises(RuntimeError, match=r"shape '\[4, 2\]' is invalid for input of size 6"):
        m.ones(2, 3).view(4, 2)


@BOTH
def test_backward_on_a_tensor_that_does_not_require_grad(m):
    with pytest.raises(RuntimeError, match="element 0 of tensors does not require grad and does "
                                           "not have a grad_fn"):
        m.ones(2).sum().backward()
    with pytest.raises(RuntimeError, match="element 0 of tensors does not require grad"):
        with m.no_grad():
            y = (m.ones(2, requires_grad=True) * 2).sum()
        y.backward()


def test_data_is_a_tensor_alias_outside_the_graph(like_torch):
    def scenario(m):
        x = m.tensor([1.0, 2.0, 3.0], requires_grad=True)
        alias = x.data
        flags = (alias.requires_grad, alias.grad_fn is None, x.requires_grad)
        alias.mul_(2)  # writes through to x, unseen by autograd
        y = (x * x).sum()
        y.backward()
        x.data = m.tensor([5.0, 6.0, 7.0])
        return flags, x.grad, x.detach().clone(), x.requires_grad

    like_torch(*run(scenario))


def test_parameter_prints_like_torch():
    for lib in (cr, torch):
        p = lib.nn.Parameter(lib.tensor([1.0, 2.0]))
        assert str(p) == repr(p) == "Parameter containing:\ntensor([1., 2.], requires_grad=True)"


def test_version_is_an_int_counting_in_place_changes_as_torch():
    counts = []
    for lib in (cr, torch):
        x = lib.ones(4)
        seen = [x._version]
        x.add_(1)
        view = x[1:]
        view.mul_(2)
        seen += [x._version, view._version]
        x[0] = 5.0
        seen += [x._version, view._version, x.clone()._version, x.detach()._version]
        counts.append(seen)
    assert counts[0] == counts[1]
    assert all(isinstance(v, int) for v in counts[0])
