"""NumPy's protocols on tensors: ufuncs and array functions run chainrule ops; DLPack exchange."""

import numpy as np
import pytest
import torch

import chainrule as cr

RNG = np.random.default_rng(0)


def _pair(*shape, low=-1.0, high=1.0):
    a = RNG.uniform(low, high, shape)
    return cr.tensor(a, requires_grad=True), torch.tensor(a, requires_grad=True)


def _check_grad(out_c, out_t, leaves_c, leaves_t):
    assert isinstance(out_c, cr.Tensor)
    np.testing.assert_allclose(out_c.detach().numpy(), out_t.detach().numpy(), rtol=1e-12,
                               atol=1e-12)
    weights = RNG.normal(size=tuple(out_t.shape))
    (out_c * cr.tensor(weights)).sum().backward()
    (out_t * torch.tensor(weights)).sum().backward()
    for c, t in zip(leaves_c, leaves_t):
        np.testing.assert_allclose(c.grad.numpy(), t.grad.numpy(), rtol=1e-10, atol=1e-12)


UNARY = [  # (ufunc, torch function, input range)
    (np.sin, torch.sin, (-2, 2)), (np.cos, torch.cos, (-2, 2)), (np.tan, torch.tan, (-1, 1)),
    (np.exp, torch.exp, (-2, 2)), (np.expm1, torch.expm1, (-2, 2)),
    (np.log, torch.log, (0.5, 2)), (np.log2, torch.log2, (0.5, 2)),
    (np.log10, torch.log10, (0.5, 2)), (np.log1p, torch.log1p, (0.5, 2)),
    (np.sqrt, torch.sqrt, (0.5, 2)), (np.tanh, torch.tanh, (-2, 2)),
    (np.sinh, torch.sinh, (-2, 2)), (np.cosh, torch.cosh, (-2, 2)),
    (np.arcsin, torch.asin, (-0.9, 0.9)), (np.arccos, torch.acos, (-0.9, 0.9)),
    (np.arctan, torch.atan, (-2, 2)), (np.arcsinh, torch.asinh, (-2, 2)),
    (np.arccosh, torch.acosh, (1.5, 3)), (np.arctanh, torch.atanh, (-0.9, 0.9)),
    (np.negative, torch.neg, (-2, 2)), (np.absolute, torch.abs, (0.5, 2)),
    (np.square, torch.square, (-2, 2)), (np.reciprocal, torch.reciprocal, (0.5, 2)),
]


@pytest.mark.parametrize("ufunc,tfn,domain", UNARY, ids=[u[0].__name__ for u in UNARY])
def test_unary_ufunc_is_the_differentiable_op(ufunc, tfn, domain):
    c, t = _pair(3, 4, low=domain[0], high=domain[1])
    _check_grad(ufunc(c), tfn(t), [c], [t])


BINARY = [
    (np.add, torch.add), (np.subtract, torch.sub), (np.multiply, torch.mul),
    (np.divide, torch.div), (np.true_divide, torch.div), (np.power, torch.pow),
    (np.maximum, torch.maximum), (np.minimum, torch.minimum), (np.arctan2, torch.atan2),
    (np.logaddexp, torch.logaddexp), (np.hypot, torch.hypot),
]


@pytest.mark.parametrize("ufunc,tfn", BINARY, ids=[b[0].__name__ for b in BINARY])
def test_binary_ufunc_broadcasts_and_differentiates(ufunc, tfn):
    a_c, a_t = _pair(3, 4, low=0.5, high=2)
    b_c, b_t = _pair(4, low=0.5, high=2)
    _check_grad(ufunc(a_c, b_c), tfn(a_t, b_t), [a_c, b_c], [a_t, b_t])


def test_ndarray_operand_on_either_side_gives_a_tensor():
    c, t = _pair(3)
    arr = RNG.normal(size=3)
    out_c = arr * c + np.float64(2.0)
    out_t = torch.tensor(arr) * t + 2.0
    _check_grad(out_c, out_t, [c], [t])
    assert isinstance(np.add(arr, cr.ones(3)), cr.Tensor)


def test_matmul_and_comparisons():
    a_c, a_t = _pair(2, 3)
    b_c, b_t = _pair(3, 4)
    _check_grad(np.matmul(a_c, b_c), torch.matmul(a_t, b_t), [a_c, b_c], [a_t, b_t])
    _check_grad(a_c.detach().numpy() @ b_c, a_t.detach() @ b_t, [b_c], [b_t])
    mask = np.greater(a_c, 0)
    assert isinstance(mask, cr.Tensor) and mask.dtype == cr.bool
    np.testing.assert_array_equal(mask.numpy(), (a_t > 0).numpy())


def test_reduce_and_accumulate():
    c, t = _pair(3, 4)
    _check_grad(np.add.reduce(c, axis=1), t.sum(1), [c], [t])
    _check_grad(np.multiply.reduce(c), t.prod(0), [c], [t])
    _check_grad(np.add.accumulate(c, axis=1), t.cumsum(1), [c], [t])
    _check_grad(np.maximum.reduce(c, axis=0, keepdims=True), t.amax(0, keepdim=True), [c], [t])


REDUCTIONS = [
    (lambda x: np.sum(x), lambda x: x.sum()),
    (lambda x: np.sum(x, axis=0), lambda x: x.sum(0)),
    (lambda x: np.sum(x, axis=(0, 2), keepdims=True), lambda x: x.sum((0, 2), keepdim=True)),
    (lambda x: np.mean(x, axis=-1), lambda x: x.mean(-1)),
    (lambda x: np.prod(x, axis=1), lambda x: x.prod(1)),
    (lambda x: np.max(x, axis=1), lambda x: x.amax(1)),
    (lambda x: np.min(x), lambda x: x.amin()),
    (lambda x: np.amax(x, axis=2, keepdims=True), lambda x: x.amax(2, keepdim=True)),
    (lambda x: np.std(x, axis=0), lambda x: x.std(0, correction=0)),
    (lambda x: np.var(x, axis=1, ddof=1), lambda x: x.var(1)),
    (lambda x: np.cumsum(x, axis=1), lambda x: x.cumsum(1)),
    (lambda x: np.cumsum(x), lambda x: x.reshape(-1).cumsum(0)),
    (lambda x: np.cumprod(x, axis=2), lambda x: x.cumprod(2)),
    (lambda x: np.trace(x[0]), lambda x: x[0].trace()),
]


@pytest.mark.parametrize("np_fn,t_fn", REDUCTIONS, ids=[str(i) for i in range(len(REDUCTIONS))])
def test_reductions(np_fn, t_fn):
    c, t = _pair(2, 3, 4, low=0.5, high=1.5)
    _check_grad(np_fn(c), t_fn(t), [c], [t])


SHAPES = [
    (lambda x: np.transpose(x), lambda x: x.permute(2, 1, 0)),
    (lambda x: np.transpose(x, (1, 0, 2)), lambda x: x.permute(1, 0, 2)),
    (lambda x: np.reshape(x, (6, 4)), lambda x: x.reshape(6, 4)),
    (lambda x: np.reshape(x, -1), lambda x: x.reshape(-1)),
    (lambda x: np.ravel(x), lambda x: x.reshape(-1)),
    (lambda x: np.expand_dims(x, 1), lambda x: x.unsqueeze(1)),
    (lambda x: np.squeeze(np.expand_dims(x, 0)), lambda x: x),
    (lambda x: np.swapaxes(x, 0, 2), lambda x: x.transpose(0, 2)),
    (lambda x: np.moveaxis(x, 0, -1), lambda x: x.movedim(0, -1)),
    (lambda x: np.clip(x, 0.8, 1.2), lambda x: x.clamp(0.8, 1.2)),
    (lambda x: np.flip(x, 1), lambda x: x.flip(1)),
    (lambda x: np.flip(x), lambda x: x.flip((0, 1, 2))),
    (lambda x: np.roll(x, 1, axis=2), lambda x: x.roll(1, 2)),
    (lambda x: np.tile(x, (1, 2, 1)), lambda x: x.tile((1, 2, 1))),
    (lambda x: np.broadcast_to(x[:, :1], (2, 3, 4)), lambda x: x[:, :1].expand(2, 3, 4)),
    (lambda x: np.tril(x), lambda x: x.tril()),
    (lambda x: np.triu(x, 1), lambda x: x.triu(1)),
    (lambda x: np.diagonal(x, 0, 1, 2), lambda x: x.diagonal(0, 1, 2)),
    (lambda x: np.concatenate([x, x * 2], axis=1), lambda x: torch.cat([x, x * 2], 1)),
    (lambda x: np.stack([x, x], axis=-1), lambda x: torch.stack([x, x], -1)),
    (lambda x: np.where(x > 1, x, x * x), lambda x: torch.where(x > 1, x, x * x)),
    (lambda x: np.sort(x, axis=1), lambda x: x.sort(1)[0]),
    (lambda x: np.einsum("ijk,ikl->ijl", x, np.swapaxes(x, 1, 2)),
     lambda x: torch.einsum("ijk,ikl->ijl", x, x.transpose(1, 2))),
    (lambda x: np.tensordot(x, x, axes=([1, 2], [1, 2])),
     lambda x: torch.tensordot(x, x, dims=([1, 2], [1, 2]))),
    (lambda x: np.dot(x[0], x[1].T), lambda x: x[0] @ x[1].T),
    (lambda x: np.outer(x[0, 0], x[1, 1]), lambda x: torch.outer(x[0, 0], x[1, 1])),
    (lambda x: np.kron(x[0], x[1]), lambda x: torch.kron(x[0], x[1])),
    (lambda x: np.round(x, 1), lambda x: x.round(decimals=1)),
    (lambda x: np.copy(x), lambda x: x.clone()),
]


@pytest.mark.parametrize("np_fn,t_fn", SHAPES, ids=[str(i) for i in range(len(SHAPES))])
def test_array_functions(np_fn, t_fn):
    c, t = _pair(2, 3, 4, low=0.5, high=1.5)
    _check_grad(np_fn(c), t_fn(t), [c], [t])


def test_linalg_functions():
    a = RNG.normal(size=(3, 3)) + 3 * np.eye(3)
    c, t = cr.tensor(a, requires_grad=True), torch.tensor(a, requires_grad=True)
    _check_grad(np.linalg.inv(c), torch.linalg.inv(t), [c], [t])
    c.grad = t.grad = None
    _check_grad(np.linalg.det(c), torch.linalg.det(t), [c], [t])
    c.grad = t.grad = None
    _check_grad(np.linalg.norm(c), torch.linalg.norm(t), [c], [t])
    c.grad = t.grad = None
    b = RNG.normal(size=(3, 2))
    _check_grad(np.linalg.solve(c, b), torch.linalg.solve(t, torch.tensor(b)), [c], [t])


def test_argmax_argsort_give_index_tensors():
    c, t = _pair(3, 4)
    np.testing.assert_array_equal(np.argmax(c, axis=1).numpy(), t.argmax(1).numpy())
    np.testing.assert_array_equal(np.argmin(c).numpy(), t.argmin().numpy())
    np.testing.assert_array_equal(np.argsort(c, axis=0).numpy(), t.argsort(0).numpy())


def test_gradcheck_through_numpy_calls():
    x = cr.tensor(RNG.uniform(0.5, 1.5, (2, 3)), requires_grad=True)
    assert cr.autograd.gradcheck(lambda v: np.sum(np.sin(v) * np.exp(v), axis=0), (x,))
    assert cr.autograd.gradgradcheck(lambda v: np.tanh(np.matmul(v, np.transpose(v))), (x,))


def test_out_writes_into_a_tensor():
    x = cr.tensor([0.5, 1.0])
    out = cr.zeros(2)
    result = np.exp(x, out=out)
    assert result is out
    np.testing.assert_allclose(out.numpy(), np.exp([0.5, 1.0]).astype(np.float32))
    out = cr.zeros(2)
    assert np.sum(cr.ones(3, 2), axis=0, out=out) is out
    np.testing.assert_array_equal(out.numpy(), [3.0, 3.0])


def test_dtype_keyword_casts_the_result():
    out = np.sqrt(cr.tensor([4.0, 9.0]), dtype=np.float64)
    assert out.dtype == cr.float64
    np.testing.assert_array_equal(out.numpy(), [2.0, 3.0])


def test_function_without_an_op_runs_in_numpy_without_grad():
    a = RNG.normal(size=(3, 4))
    result = np.median(cr.tensor(a), axis=1)
    assert isinstance(result, np.ndarray)
    np.testing.assert_array_equal(result, np.median(a, axis=1))
    np.testing.assert_array_equal(np.percentile(cr.tensor(a), 30), np.percentile(a, 30))


def test_function_without_an_op_refuses_a_tensor_that_requires_grad():
    x = cr.tensor([1.0, 2.0], requires_grad=True)
    with pytest.raises(RuntimeError, match=r"numpy.median\(\) has no chainrule op.*detach"):
        np.median(x)
    with pytest.raises(RuntimeError, match=r"numpy.spacing has no chainrule op"):
        np.spacing(cr.tensor([6.0], requires_grad=True))


def test_host_numpy_is_untouched():
    a = RNG.normal(size=3)
    assert type(np.sin(a)) is np.ndarray
    assert type(np.sum(a)) is np.float64


# ---- DLPack -----------------------------------------------------------------------------------


def test_dlpack_from_torch_shares_memory():
    src = torch.arange(6.0).reshape(2, 3)
    c = cr.from_dlpack(src)
    assert c.shape == (2, 3) and c.dtype == cr.float32
    src[0, 0] = 100.0
    assert c[0, 0].item() == 100.0


def test_dlpack_to_torch_and_numpy_shares_memory():
    c = cr.arange(4, dtype=cr.float64)
    t = torch.from_dlpack(c)
    a = np.from_dlpack(c)
    c.add_(1)
    np.testing.assert_array_equal(t.numpy(), [1.0, 2.0, 3.0, 4.0])
    np.testing.assert_array_equal(a, [1.0, 2.0, 3.0, 4.0])
    assert tuple(c.__dlpack_device__()) == tuple(torch.ones(1).__dlpack_device__())


@pytest.mark.parametrize("dtype", ["float32", "float64", "int64", "int32", "uint8", "bool"])
def test_dlpack_round_trip_dtypes(dtype):
    a = np.arange(6).reshape(3, 2).astype(dtype)
    c = cr.utils.dlpack.from_dlpack(a)
    assert str(c.dtype) == str(torch.from_numpy(a).dtype)
    np.testing.assert_array_equal(np.from_dlpack(c), a)


def test_dlpack_refuses_a_tensor_that_requires_grad_as_torch():
    c = cr.ones(2, requires_grad=True)
    t = torch.ones(2, requires_grad=True)
    with pytest.raises(BufferError) as expected:
        t.__dlpack__()
    with pytest.raises(BufferError, match=str(expected.value)):
        c.__dlpack__()
    assert cr.from_dlpack(c.detach()).shape == (2,)
