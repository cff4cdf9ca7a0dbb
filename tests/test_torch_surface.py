"""The non-differentiable parts of torch's remaining surface (integer and bool results,
predicates, utilities) against torch: values, dtypes and errors."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import chainrule


def _both(value, dtype=None):
    array = np.array(value, dtype=dtype)
    return chainrule.from_numpy(array.copy()), torch.from_numpy(array.copy())


def _same(ours, theirs) -> None:
    if isinstance(theirs, (tuple, list)):
        assert type(ours) in (tuple, list) or isinstance(ours, tuple)
        assert len(ours) == len(theirs)
        for a, b in zip(ours, theirs):
            _same(a, b)
        return
    if not isinstance(theirs, torch.Tensor):
        assert ours == theirs
        return
    assert str(ours.dtype) == str(theirs.dtype)
    assert tuple(ours.shape) == tuple(theirs.shape)
    # floats to rounding (bin edges and densities are computed in another order)
    np.testing.assert_allclose(np.asarray(ours.detach().numpy()), theirs.detach().numpy(),
                               rtol=1e-6, atol=0)


def _raises_alike(call, same_message: bool = True) -> None:
    """call(lib) raises the same exception type (and message) on both libraries."""
    with pytest.raises(Exception) as theirs:
        call(torch)
    with pytest.raises(type(theirs.value)) as ours:
        call(chainrule)
    assert str(ours.value) == str(theirs.value) or not same_message


INTS_A = [[12, -18, 0, 7], [5, 0, -4, 9]]
INTS_B = [[8, 27, 5, 0], [-15, 0, 6, 3]]


@pytest.mark.parametrize("name", ["gcd", "lcm"])
@pytest.mark.parametrize("dtype", ["int64", "int32", "uint8"])
def test_gcd_lcm(name, dtype):
    a, ta = _both(np.abs(INTS_A) if dtype == "uint8" else INTS_A, dtype)
    b, tb = _both(np.abs(INTS_B) if dtype == "uint8" else INTS_B, dtype)
    _same(getattr(chainrule, name)(a, b), getattr(torch, name)(ta, tb))
    _same(getattr(a.clone(), name + "_")(b), getattr(ta.clone(), name + "_")(tb))
    _raises_alike(lambda m: getattr(m, name)(m.ones(2), m.ones(2)))


def test_heaviside():
    x, tx = _both([-1.5, 0.0, 2.0, -0.0, np.inf])
    v, tv = _both([0.5, 0.25, 0.5, 0.75, 0.5])
    _same(chainrule.heaviside(x, v), torch.heaviside(tx, tv))
    _same(x.clone().heaviside_(v[:1]), tx.clone().heaviside_(tv[:1]))
    i, ti = _both([-2, 0, 3])
    _same(chainrule.heaviside(i, chainrule.tensor(7)), torch.heaviside(ti, torch.tensor(7)))
    _raises_alike(lambda m: m.heaviside(m.ones(2), m.ones(2, dtype=m.float64)))


def test_nextafter_and_signbit():
    x, tx = _both([1.0, -0.0, 0.0, 3.5], "float32")
    y, ty = _both([2.0, 1.0, -1.0, 3.5], "float64")
    _same(chainrule.nextafter(x, y), torch.nextafter(tx, ty))
    _same(chainrule.nextafter(y, y[:1]), torch.nextafter(ty, ty[:1]))
    _raises_alike(lambda m: m.nextafter(m.tensor([1]), m.tensor([2])))
    for values, dtype in (([-0.0, 0.0, -2.5, np.nan, -np.inf], "float64"),
                          ([-3, 0, 4], "int64"), ([0, 255], "uint8"), ([True, False], "bool")):
        v, tv = _both(values, dtype)
        _same(chainrule.signbit(v), torch.signbit(tv))
        _same(v.signbit(), tv.signbit())


def test_frexp_exponent_and_errors():
    x, tx = _both([0.0, 1.0, -3.0, 1e-30, 5e30, np.inf], "float32")
    _same(chainrule.frexp(x), torch.frexp(tx))
    assert repr(chainrule.frexp(x)).startswith("torch.return_types.frexp(")
    _raises_alike(lambda m: m.frexp(m.tensor([1, 2])))


def test_elementwise_dtypes_and_errors():
    i, ti = _both([1, -2, 3])
    for name in ("copysign", "ldexp", "float_power"):
        _same(getattr(chainrule, name)(i, i), getattr(torch, name)(ti, ti))
    for name in ("deg2rad", "rad2deg", "positive"):
        _same(getattr(chainrule, name)(i), getattr(torch, name)(ti))
    _raises_alike(lambda m: m.positive(m.tensor([True])))
    _raises_alike(lambda m: m.tensor([1.0]).float_power_(2))
    # (chainrule's in-place dispatcher words the cast error its own way)
    _raises_alike(lambda m: m.tensor([1, 2]).copysign_(m.tensor([1.0, -1.0])), False)
    _raises_alike(lambda m: m.tensor([1, 2]).ldexp_(m.tensor([1, 2])), False)
    _raises_alike(lambda m: m.tensor([1, 2]).deg2rad_())
    x = chainrule.tensor([1.0, 2.0])
    assert chainrule.positive(x) is x


SAMPLE = np.random.default_rng(0).standard_normal((3, 5))


@pytest.mark.parametrize("call", [
    lambda m, x: m.count_nonzero(x.gt(0), dim=0),
    lambda m, x: m.count_nonzero(x.gt(0).long(), dim=(0, 1)),
    lambda m, x: x.gt(0).count_nonzero(),
    lambda m, x: m.histc(x, bins=4),
    lambda m, x: x.histc(bins=4, min=-1, max=1),
    lambda m, x: m.histc(x[0, :1], bins=3),
    lambda m, x: m.histogram(x, bins=4),
    lambda m, x: m.histogram(x, bins=3, range=(-1.0, 1.0), density=True),
    lambda m, x: x.histogram(m.tensor([-1.0, 0.0, 0.5, 2.0], dtype=x.dtype), weight=x.abs()),
    lambda m, x: m.histogramdd(x[:, :2], bins=[2, 3]),
    lambda m, x: m.histogramdd(x[:, :2], bins=2, range=[-1.0, 1.0, 0.0, 2.0]),
    # edges as tensors, not increasing in the second coordinate (PyTorch's binary search bins)
    lambda m, x: m.histogramdd(x[:, 1:3], [m.tensor([-1.0, 0.0, 1.5], dtype=x.dtype),
                                           m.tensor([1.0, -0.5, 0.0, 2.0], dtype=x.dtype)],
                               weight=x[:, 0].abs(), density=True),
    # a single value: the range widens by 0.5 each side (histc's by 1)
    lambda m, x: m.histogram(x[0, 0], bins=2),
    lambda m, x: m.histogramdd(x[:1, :2], bins=[1, 2]),
    lambda m, x: m.bucketize(x, m.tensor([-1.0, 0.0, 1.0], dtype=x.dtype)),
    lambda m, x: m.bucketize(x, m.tensor([-1.0, 0.0, 1.0], dtype=x.dtype), right=True,
                             out_int32=True),
    lambda m, x: m.isin(x.round(), m.tensor([0.0, 1.0], dtype=x.dtype)),
    lambda m, x: m.isin(x.round(), 0.0, invert=True),
    lambda m, x: m.nanmedian(x.round(), 1).indices,
])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_counting_and_bucketing(call, dtype):
    x, tx = _both(SAMPLE, dtype)
    _same(call(chainrule, x), call(torch, tx))


def test_bincount():
    i, ti = _both([0, 1, 1, 3, 7])
    _same(chainrule.bincount(i), torch.bincount(ti))
    for wdtype in ("float32", "float64", "int64"):
        w, tw = _both([0.5, 1, 1, 2, 3], wdtype)
        _same(i.bincount(w, minlength=10), ti.bincount(tw, minlength=10))
    _raises_alike(lambda m: m.bincount(m.tensor([-1, 2])))
    _raises_alike(lambda m: m.bincount(m.tensor([[1, 2]])))


def test_statistics_errors():
    _raises_alike(lambda m: m.nanmean(m.tensor([1, 2])))
    _raises_alike(lambda m: m.histc(m.tensor([1, 2])))
    _raises_alike(lambda m: m.cov(m.ones(2, 2, 2)))
    _raises_alike(lambda m: m.nanmedian(m.ones(2, 0), 1))


@pytest.mark.parametrize("call", [
    lambda m: m.hsplit(m.ones(2, 3), 2),
    lambda m: m.hsplit(m.tensor(1.0), 2),
    lambda m: m.dsplit(m.ones(2, 3), 2),
    lambda m: m.vsplit(m.ones(3), [1]),
    lambda m: m.split_with_sizes(m.ones(5), [2, 2]),
    lambda m: m.diagonal_scatter(m.ones(2, 3), m.ones(3)),
    lambda m: m.select_scatter(m.ones(2, 3), m.ones(2), 0, 0),
    lambda m: m.ones(2, 3).unfold(1, 4, 1),
    lambda m: m.ones(2, 3).unfold(1, 2, 0),
    lambda m: m.combinations(m.ones(2, 2)),
    lambda m: m.ones(3).fill_diagonal_(1.0),
    lambda m: m.ones(2, 2, 3).fill_diagonal_(1.0),
    lambda m: m.block_diag(m.ones(1, 1, 1)),
])
def test_shape_errors(call):
    _raises_alike(call)


def test_integer_shapes():
    i, ti = _both([3, 1, 4, 1, 5])
    _same(chainrule.combinations(i, 2), torch.combinations(ti, 2))
    _same(chainrule.combinations(i, r=0), torch.combinations(ti, r=0))
    _same(chainrule.combinations(i[:2], r=3), torch.combinations(ti[:2], r=3))
    _same(chainrule.cartesian_prod(i[:2], i), torch.cartesian_prod(ti[:2], ti))
    _same(chainrule.block_diag(i, i[:2].double()), torch.block_diag(ti, ti[:2].double()))
    _same(chainrule.block_diag(), torch.block_diag())
    _same(chainrule.diagflat(i), torch.diagflat(ti))
    _same(i.unfold(0, 2, 2), ti.unfold(0, 2, 2))
    m, tm = _both(np.zeros((3, 3), dtype=np.int64))
    _same(m.fill_diagonal_(7), tm.fill_diagonal_(7))


def test_predicates():
    a, ta = _both([[1.0, 2.0], [3.0, np.nan]])
    i, ti = _both([[1, 2], [3, 0]])
    for x, y, tx, ty in ((a, a, ta, ta), (a[:1], a[:1].clone(), ta[:1], ta[:1].clone()),
                         (i, i.double(), ti, ti.double()), (i, i[:1], ti, ti[:1])):
        assert chainrule.equal(x, y) == torch.equal(tx, ty)
        assert x.equal(y) == tx.equal(ty)
        assert chainrule.is_same_size(x, y) == torch.is_same_size(tx, ty)
    for dtype in ("float32", "int64", "int8", "uint8", "bool", "complex64"):
        x, tx = _both([1], dtype)
        assert chainrule.is_signed(x) == torch.is_signed(tx) == x.is_signed()
    for value in ([0.0], [2], [[True]]):
        x, tx = _both(value)
        assert chainrule.is_nonzero(x) == torch.is_nonzero(tx) == x.__nonzero__()
    _raises_alike(lambda m: m.is_nonzero(m.ones(2)))
    _raises_alike(lambda m: m.is_nonzero(m.ones(0)))
    assert chainrule.get_device(a) == torch.get_device(ta) == a.get_device()
    assert a.is_inference() == ta.is_inference() is False
    assert chainrule.is_distributed(a) == torch.is_distributed(ta)
    assert a.is_shared() == ta.is_shared() and a.share_memory_() is a
    x, tx = _both(np.ones((3, 4)))
    for view in (lambda t: t[1:], lambda t: t[:, 2:], lambda t: t.t(), lambda t: t):
        assert view(x).storage_offset() == view(tx).storage_offset()
        assert view(x).dim_order() == view(tx).dim_order()
    assert x.is_set_to(x) and not x.is_set_to(x[1:])
    assert x.const_data_ptr() == x.data_ptr()


def test_unique_consecutive_nonzero_static_unravel_index():
    v, tv = _both([1, 1, 2, 2, 3, 1, 1, 2])
    for kwargs in ({}, {"return_inverse": True}, {"return_counts": True},
                   {"return_inverse": True, "return_counts": True}):
        _same(chainrule.unique_consecutive(v, **kwargs), torch.unique_consecutive(tv, **kwargs))
    m, tm = _both([[1, 1], [1, 1], [2, 3], [2, 3], [1, 1]])
    for dim in (0, 1):
        _same(m.unique_consecutive(return_counts=True, return_inverse=True, dim=dim),
              tm.unique_consecutive(return_counts=True, return_inverse=True, dim=dim))
    _same(chainrule.nonzero_static(m - 1, size=8), torch.nonzero_static(tm - 1, size=8))
    _same((m - 1).nonzero_static(size=2, fill_value=9),
          (tm - 1).nonzero_static(size=2, fill_value=9))
    i, ti = _both([12, 5, 0, 11])
    _same(chainrule.unravel_index(i, (3, 4)), torch.unravel_index(ti, (3, 4)))
    _same(chainrule.unravel_index(i, 6), torch.unravel_index(ti, 6))
    _raises_alike(lambda m: m.unravel_index(m.tensor([1.0]), (3, 4)))
    _raises_alike(lambda m: m.unravel_index(m.tensor([1]), (-3, 4)))
    _raises_alike(lambda m: m.nonzero_static(m.ones(2), size=-1))


def test_conversions_and_protocols():
    x, tx = _both([1.5, -2.0, 3.0])
    for name in ("byte", "char", "short", "cfloat", "cdouble"):
        _same(getattr(x.abs(), name)(), getattr(tx.abs(), name)())
    assert (2 in x[1:] + 4) == (2 in tx[1:] + 4)
    assert (3.0 in x) == (3.0 in tx) and (x[2] in x) == (tx[2] in tx)
    _raises_alike(lambda m: "a" in m.ones(2))
    _same(reversed(x), reversed(tx))
    _same(reversed(x[0]), reversed(tx[0]))
    assert complex(x[0]) == complex(tx[0]) and x[0].__long__() == tx[0].__long__()
    _same(x.__div__(2), tx.__div__(2))
    _same(x.__rdiv__(2), tx.__rdiv__(2))
    _same(x.clone().__idiv__(4), tx.clone().__idiv__(4))
    _same(x.clone().apply_(lambda v: v * 2 + 1), tx.clone().apply_(lambda v: v * 2 + 1))
    _same(x.clone().map_(x[:1], lambda a, b: a - b), tx.clone().map_(tx[:1], lambda a, b: a - b))
    _same(x.clone().map2_(x, x[:1], lambda a, b, c: a * b + c),
          tx.clone().map2_(tx, tx[:1], lambda a, b, c: a * b + c))
    _raises_alike(lambda m: m.ones(2, requires_grad=True).apply_(abs))
    _same(x.clone().resize_(2, 1), tx.clone().resize_(2, 1))
    _same(x.clone().resize_as_(x[:2]), tx.clone().resize_as_(tx[:2]))
    _raises_alike(lambda m: m.ones(2, requires_grad=True).resize_(3))
    assert x.module_load(x[:1]) is not None and x.module_load(x, assign=True) is not x


def test_keyword_names_as_pytorch():
    x, tx = _both(np.arange(12.0).reshape(3, 4))
    calls = [
        lambda m, t: t.swapaxes(axis0=0, axis1=1),
        lambda m, t: m.swapaxes(t, axis0=1, axis1=0),
        lambda m, t: t.clone().swapaxes_(axis0=0, axis1=1),
        lambda m, t: t.tensor_split(indices=[1, 3], dim=1),
        lambda m, t: m.tensor_split(t, sections=2),
        lambda m, t: t.tensor_split(tensor_indices_or_sections=m.tensor(2)),
        lambda m, t: t.view(size=(4, 3)),
        lambda m, t: t.view(dtype=m.int64),
        lambda m, t: t.split(split_size=2),
        lambda m, t: m.hsplit(t, sections=2),
        lambda m, t: t.vsplit(indices=[1]),
        lambda m, t: t.double(memory_format=getattr(m, "preserve_format", None)),
        lambda m, t: t.type(m.float64, non_blocking=True),
        lambda m, t: t.clone().eq_(other=t.t()[:3, :3].sum()),
        lambda m, t: t.clone().greater_(other=5.0),
        lambda m, t: t.clone().less_equal_(t.flip(0)),
        lambda m, t: t.clone().not_equal_(3.0),
        lambda m, t: t.clone().atan2_(other=t + 1),
        lambda m, t: t.long().bitwise_and_(other=t.long() + 1),
        lambda m, t: m.isin(t, test_element=3.0),
        lambda m, t: m.isin(element=3.0, test_elements=t),
    ]
    for call in calls:
        _same(call(chainrule, x), call(torch, tx))
    assert x.is_contiguous(memory_format=None) and not x.t().is_contiguous(memory_format=None)


def _grads(lib, call, arrays):
    """call(lib, *tensors) and the gradients of its (first) output's weighted sum."""
    tensors = [lib.from_numpy(a.copy()).requires_grad_() for a in arrays]
    out = call(lib, *tensors)
    first = out[0] if isinstance(out, tuple) else out
    weights = lib.from_numpy(np.linspace(-1.0, 2.0, first.numel()).reshape(tuple(first.shape)))
    if not first.requires_grad:
        return out, [lib.zeros_like(t) for t in tensors]
    grads = lib.autograd.grad((first * weights).sum(), tensors, allow_unused=True)
    return out, [lib.zeros_like(t) if g is None else g for g, t in zip(grads, tensors)]


def _rng_arrays(*shapes):
    rng = np.random.default_rng(7)
    return [rng.uniform(-2.0, 2.0, s) for s in shapes]


# torch.<name> for nn kernels, called with PyTorch's top-level (ATen) arguments.
NN_TOP_LEVEL = [
    (lambda m, x: m.hardshrink(x, 0.7), [(3, 4)]),
    (lambda m, x: x.hardshrink(), [(3, 4)]),
    (lambda m, x: m.threshold(x, 0.3, -1.0), [(3, 4)]),
    (lambda m, x: m.rrelu(x, 0.1, 0.3), [(3, 4)]),
    (lambda m, x: m.pixel_shuffle(x, 2), [(1, 8, 2, 3)]),
    (lambda m, x: m.pixel_unshuffle(x, 2), [(1, 2, 4, 6)]),
    (lambda m, x, w: m.rms_norm(x, [4], w, 1e-5), [(3, 4), (4,)]),
    (lambda m, x, w, b: m.instance_norm(x, w, b, None, None, True, 0.1, 1e-5, False),
     [(2, 3, 5), (3,), (3,)]),
    (lambda m, x, t: m.kl_div(x, t.abs(), 2), [(3, 4), (3, 4)]),
    (lambda m, x, t: m.kl_div(x, t, 1, log_target=True), [(3, 4), (3, 4)]),
    (lambda m, a, b: m.margin_ranking_loss(a, b, m.tensor([1.0, -1.0, 1.0], dtype=a.dtype), 0.2),
     [(3,), (3,)]),
    (lambda m, x: m.hinge_embedding_loss(x, m.tensor([1.0, -1.0, 1.0], dtype=x.dtype), 1.0, 0),
     [(3,)]),
    (lambda m, a, b: m.cosine_embedding_loss(a, b, m.tensor([1.0, -1.0], dtype=a.dtype), 0.1, 2),
     [(2, 4), (2, 4)]),
    (lambda m, a, p, n: m.triplet_margin_loss(a, p, n, 1.0, 2.0, 1e-6, True, 1),
     [(2, 4), (2, 4), (2, 4)]),
    (lambda m, x, t: m.poisson_nll_loss(x, t.abs(), True, True, 1e-8, 1), [(3, 4), (3, 4)]),
    (lambda m, x, t, w: m.binary_cross_entropy_with_logits(x, t.sigmoid(), None,
                                                           w.abs().detach(), 1),
     [(3, 4), (3, 4), (4,)]),
    (lambda m, x: m.pdist(x, 1.5), [(4, 3)]),
    (lambda m, x: m.constant_pad_nd(x, [1, 2, 0, 1], 0.5), [(2, 3)]),
    (lambda m, x, w, b: m.convolution(x, w, b, [1], [1], [1], False, [0], 1),
     [(2, 3, 5), (4, 3, 3), (4,)]),
    (lambda m, x, w: m.convolution(x, w, None, [2, 1], [1, 0], [1, 1], True, [1, 0], 1),
     [(1, 2, 3, 3), (2, 3, 2, 2)]),
    (lambda m, x: m.adaptive_max_pool1d(x, 3), [(2, 3, 7)]),
    (lambda m, x: m.max_pool1d_with_indices(x, 2), [(2, 3, 7)]),
    (lambda m, x, w, b: m.native_layer_norm(x, [4], w, b, 1e-5), [(3, 4), (4,), (4,)]),
    (lambda m, x, w, b: m.native_batch_norm(x, w, b, None, None, True, 0.1, 1e-5),
     [(4, 3, 2), (3,), (3,)]),
    (lambda m, x, w, b: m.native_group_norm(x, w, b, 2, 4, 3, 2, 1e-5),
     [(2, 4, 3), (4,), (4,)]),
    # group norm's mean and rstd are on the graph (layer and batch norm's are not; PyTorch
    # takes their gradients only together with the output's)
    (lambda m, x, w, b: (lambda out, mean, rstd: out.sum(2).reshape(2, 2, 2).sum(2) * mean + rstd)(
        *m.native_group_norm(x, w, b, 2, 4, 3, 2, 1e-5)), [(2, 4, 3), (4,), (4,)]),
    (lambda m, x: m.native_dropout(x, 0.5, False), [(3, 4)]),
    (lambda m, x: m.native_channel_shuffle(x.detach(), 2), [(1, 4, 3)]),  # no derivative
    (lambda m, x, t: m.kl_div(x, t.abs()), [(3, 4), (3, 4)]),  # the default reductions
    (lambda m, a, b: m.margin_ranking_loss(a, b, m.tensor([1.0, -1.0, 1.0], dtype=a.dtype)),
     [(3,), (3,)]),
    (lambda m, a, p, n: m.triplet_margin_loss(a, p, n), [(2, 4), (2, 4), (2, 4)]),
    (lambda m, x, t: m.binary_cross_entropy_with_logits(x, t.sigmoid()), [(3, 4), (3, 4)]),
    (lambda m, x: m.feature_dropout(x, 0.5, False), [(2, 3, 4)]),
    (lambda m, x: m.norm_except_dim(x, 2, 1), [(3, 4, 2)]),
    (lambda m, x: m.channel_shuffle(x, 2), [(1, 4, 3)]),
    (lambda m, x: m.alpha_dropout(x, 0.5, False), [(3, 4)]),
    (lambda m, x: m.feature_alpha_dropout(x, 0.5, False), [(2, 3, 4)]),
    (lambda m, x: m.frobenius_norm(x, [0, 1]), [(3, 4)]),
    (lambda m, x: m.ctc_loss(x.log_softmax(2), m.tensor([[1, 2], [3, 3]]), [6, 5], [2, 2]),
     [(6, 2, 4)]),
    (lambda m, x: m.ctc_loss(x.log_softmax(2), m.tensor([[1, 2], [3, 3]]), m.tensor([6, 5]),
                             m.tensor([2, 2]), 0, 1, True), [(6, 2, 4)]),
    (lambda m, x: m.ctc_loss(x.log_softmax(2), m.tensor([1, 2, 3]), [6, 5], [2, 1], 0, 2),
     [(6, 2, 4)]),
    (lambda m, w: m.embedding_bag(w, m.tensor([0, 2, 1, 5, 3]), m.tensor([0, 2, 2])), [(6, 3)]),
    (lambda m, w: m.embedding_bag(w, m.tensor([0, 2, 1, 5, 3]), m.tensor([0, 2, 2]), False, 1),
     [(6, 3)]),
    (lambda m, w: m.embedding_bag(w, m.tensor([0, 2, 1, 5, 3]), m.tensor([0, 2, 2]), False, 2),
     [(6, 3)]),
    (lambda m, w, p: m.embedding_bag(w, m.tensor([0, 2, 1, 5, 3]), m.tensor([0, 2, 5]), False,
                                     0, False, p, True), [(6, 3), (5,)]),
    (lambda m, w: m.embedding_bag(w, m.tensor([0, 2, 1, 5, 3]), m.tensor([0, 2, 2]), False, 1,
                                  False, None, False, 2), [(6, 3)]),
    (lambda m, w: m.embedding_bag(w, m.tensor([0, 2, 1, 5, 3]), m.tensor([0, 2, 2]), False, 2,
                                  False, None, False, 0), [(6, 3)]),
    (lambda m, w: m.embedding_bag(w, m.tensor([0, 2, 1, 5, 3]), m.tensor([0, 2, 2]), False, 0,
                                  False, None, False, 2), [(6, 3)]),
    (lambda m, w: m.embedding_bag(w.float(), m.tensor([0, 2, 1, 5, 3], dtype=m.int32),
                                  m.tensor([0, 2, 2], dtype=m.int32)), [(6, 3)]),
    (lambda m, w: m.embedding_bag(w, m.tensor([0, 2, 1, 5, 3], dtype=m.int32),
                                  m.tensor([0, 2, 2], dtype=m.int32), False, 2), [(6, 3)]),
    (lambda m, x, g: m.grid_sampler(x, g / 2, 0, 0, False), [(2, 3, 4, 5), (2, 3, 2, 2)]),
    (lambda m, x, g: m.grid_sampler_2d(x, g / 2, 2, 1, True), [(2, 3, 4, 5), (2, 3, 2, 2)]),
    (lambda m, x, g: m.grid_sampler_2d(x, g / 2, 0, 2, False), [(1, 2, 4, 5), (1, 3, 2, 2)]),
    (lambda m, x, g: m.grid_sampler_3d(x, g / 2, 0, 0, True), [(1, 2, 3, 4, 5), (1, 2, 2, 2, 3)]),
    (lambda m, t: m.affine_grid_generator(t, [2, 1, 3, 4], False), [(2, 2, 3)]),
    (lambda m, t: m.affine_grid_generator(t, [1, 1, 2, 3, 4], True), [(1, 3, 4)]),
    (lambda m, x, w, b: m.conv_tbc(x, w, b, 1), [(5, 2, 3), (3, 3, 4), (4,)]),
    (lambda m, x: m.nuclear_norm(x), [(3, 4)]),
    (lambda m, x: m.nuclear_norm(x, True), [(2, 3, 4)]),
    (lambda m, x: m.nuclear_norm(x, (0, 2)), [(2, 3, 4)]),
    (lambda m, x: m.nuclear_norm(x, [2, 1], keepdim=True), [(2, 3, 4)]),
    (lambda m, x: m.segment_reduce(x, "sum", lengths=m.tensor([2, 0, 3, 1])), [(6, 2)]),
    (lambda m, x: m.segment_reduce(x, "max", lengths=m.tensor([2, 0, 3, 1]), initial=0.5),
     [(6, 2)]),
    (lambda m, x: m.segment_reduce(x, "amin", offsets=m.tensor([0, 2, 2, 5, 6])), [(6, 2)]),
    (lambda m, x: m.segment_reduce(x, "mean", lengths=m.tensor([2, 1, 3]), initial=1.5),
     [(6, 2, 3)]),
    (lambda m, x: m.segment_reduce(x, "prod", lengths=m.tensor([[2, 0, 3, 1], [1, 1, 1, 3]]),
                                   axis=1), [(2, 6)]),
    (lambda m, x: m.segment_reduce(x, "min", lengths=m.tensor([[4, 2], [1, 5]]), axis=-2,
                                   initial=-0.5), [(2, 6, 3)]),
]


@pytest.mark.parametrize("index", range(len(NN_TOP_LEVEL)))
def test_nn_kernels_at_the_top_level(index):
    call, shapes = NN_TOP_LEVEL[index]
    arrays = _rng_arrays(*shapes)
    ours, our_grads = _grads(chainrule, call, arrays)
    theirs, their_grads = _grads(torch, call, arrays)
    _close(ours, theirs)
    _close(our_grads, their_grads)


def test_grid_sampler_dimension_errors():
    for lib in (chainrule, torch):
        x, g = lib.zeros(1, 1, 2, 2), lib.zeros(1, 2, 2, 2)
        with pytest.raises(RuntimeError, match="expected 5D input") as err:
            lib.grid_sampler_3d(x, g, 0, 0, False)
        assert "sizes [1, 1, 2, 2] and grid with sizes [1, 2, 2, 2]" in str(err.value)
        with pytest.raises(RuntimeError, match="expected 4D input"):
            lib.grid_sampler_2d(x[None], lib.zeros(1, 2, 2, 2, 3), 0, 0, False)


@pytest.mark.parametrize("call", [
    lambda m: m.binomial(m.ones(3), m.ones(2)),
    lambda m: m.binomial(m.ones(3, dtype=m.int64), m.ones(3) / 2),
    lambda m: m.binomial(m.ones(3), m.ones(3, dtype=m.int64)),
    lambda m: m.binomial(m.ones(3), m.ones(3, dtype=m.float64)),
    lambda m: m.binomial(m.ones(3, dtype=m.float16), m.ones(3, dtype=m.float16) / 2),
])
def test_binomial_errors(call):
    _raises_alike(call)


def test_binomial_values_shapes_and_dtypes():
    for lib in (chainrule, torch):
        nan = float("nan")
        out = lib.binomial(lib.tensor([4.0, -2.0, 3.0, 2.0, 5.0]),  # (torch hangs on NaN counts)
                           lib.tensor([1.0, 0.5, 0.0, nan, 2.0], dtype=lib.float32))
        np.testing.assert_array_equal(out.numpy(), [4.0, 0.0, 0.0, nan, 5.0])
        assert str(out.dtype).endswith("float32")
        out = lib.binomial(lib.ones(4, dtype=lib.float64) * 3, lib.tensor(0.5, dtype=lib.float64))
        assert tuple(out.shape) == (4,) and str(out.dtype).endswith("float64")
        with pytest.warns(UserWarning, match=r"had shape \[2, 1\], which does not match the "
                                             r"required output shape \[2, 3\]"):
            assert tuple(lib.binomial(lib.ones(2, 1) * 5, lib.ones(3) / 2).shape) == (2, 3)


def test_binomial_moments_and_generator():
    count = chainrule.full((40000,), 12.0, dtype=chainrule.float64)
    prob = chainrule.full((40000,), 0.3, dtype=chainrule.float64)
    g = chainrule.Generator().manual_seed(3)
    x = chainrule.binomial(count, prob, generator=g).numpy()
    mean, var = 12 * 0.3, 12 * 0.3 * 0.7
    assert abs(x.mean() - mean) <= 5 * np.sqrt(var / x.size)
    fourth = mean * 0.7 * (1 + 3 * (12 - 2) * 0.3 * 0.7)  # the fourth central moment
    assert abs(x.var() - var) <= 5 * np.sqrt((fourth - var**2) / x.size)
    assert set(np.unique(x)) <= set(range(13))
    again = chainrule.binomial(count, prob, generator=chainrule.Generator().manual_seed(3))
    np.testing.assert_array_equal(again.numpy(), x)
    p = chainrule.full((3,), 0.5, requires_grad=True)
    assert not chainrule.binomial(chainrule.ones(3), p).requires_grad  # no derivative


def test_nuclear_norm_errors_and_out():
    _raises_alike(lambda m: m.nuclear_norm(m.ones(2, 3, 4), (0,)))
    _raises_alike(lambda m: m.nuclear_norm(m.ones(3)))
    a = np.arange(12.0).reshape(3, 4)
    ours, theirs = chainrule.zeros(()).double(), torch.zeros(()).double()
    chainrule.nuclear_norm(chainrule.from_numpy(a), out=ours)
    torch.nuclear_norm(torch.from_numpy(a), out=theirs)
    _close(ours, theirs)


@pytest.mark.parametrize("call", [
    lambda m: m.segment_reduce(m.ones(6, 2), "sum", lengths=m.tensor([2, 2])),
    lambda m: m.segment_reduce(m.ones(6, 2), "foo", lengths=m.tensor([6])),
    lambda m: m.segment_reduce(m.ones(6, 2), "sum"),
    lambda m: m.segment_reduce(m.ones(6, 2), "sum", indices=m.tensor([6])),
])
def test_segment_reduce_errors(call):
    _raises_alike(call)


def test_binomial_under_vmap():
    counts = chainrule.tensor([20.0, 400.0], dtype=chainrule.float64)
    prob = chainrule.full((20000,), 0.25, dtype=chainrule.float64)
    chainrule.manual_seed(5)
    x = chainrule.vmap(lambda n: chainrule.binomial(n, prob), randomness="different")(counts)
    assert tuple(x.shape) == (2, 20000)
    for row, n in zip(x.numpy(), (20, 400)):  # every example draws with its own count
        assert abs(row.mean() - n * 0.25) <= 5 * np.sqrt(n * 0.25 * 0.75 / row.size)
    with pytest.raises(RuntimeError, match="same randomness with a batched tensor input"):
        chainrule.vmap(lambda n: chainrule.binomial(n, prob), randomness="same")(counts)


def _close(ours, theirs) -> None:
    if isinstance(theirs, (tuple, list)):
        assert len(ours) == len(theirs)
        for a, b in zip(ours, theirs):
            _close(a, b)
        return
    assert str(ours.dtype) == str(theirs.dtype)
    assert tuple(ours.shape) == tuple(theirs.shape)
    np.testing.assert_allclose(np.asarray(ours.detach().numpy()), theirs.detach().numpy(),
                               rtol=1e-7, atol=1e-10)


def test_gradient_dtypes_and_errors():
    i, ti = _both([[1, 4, 9, 16], [2, 3, 5, 8]])
    _close(chainrule.gradient(i), torch.gradient(ti))
    _close(chainrule.gradient(i.double(), spacing=2.0, dim=1, edge_order=2),
           torch.gradient(ti.double(), spacing=2.0, dim=1, edge_order=2))
    _raises_alike(lambda m: m.gradient(m.ones(2, 1)))
    _raises_alike(lambda m: m.gradient(m.ones(3), edge_order=3))


def test_as_strided_errors():
    _raises_alike(lambda m: m.as_strided(m.arange(6.0), (3, 3), (3, 1)))
    _raises_alike(lambda m: m.as_strided_scatter(m.arange(6.0), m.ones(3), (2, 2), (1, 2)))


@pytest.mark.parametrize("view, size, stride, offset", [
    ((slice(1, 3), slice(1, None)), (2, 3), (3, 1), 0),  # before the view's first element
    ((slice(0, 2), slice(None, 2)), (2, 2), (4, 2), 5),  # past its last element
    ((1, slice(1, None)), (2, 2), (1, 4), None),  # the view's own offset
])
def test_as_strided_of_a_view_reads_its_base(view, size, stride, offset):
    # PyTorch reads the storage under a view; the gradient reaches the view's own elements
    import torch.autograd.forward_ad as tfw

    import chainrule.autograd.forward_ad as cfw

    rng = np.random.default_rng(4)
    base, grad, tangent = rng.standard_normal((3, 4)), rng.standard_normal(size), None
    kwargs = {} if offset is None else {"storage_offset": offset}
    results = []
    for m, fw in ((chainrule, cfw), (torch, tfw)):
        x = m.from_numpy(base.copy())[view].requires_grad_()
        out = m.as_strided(x, size, stride, **kwargs)
        (g,) = m.autograd.grad(out, x, m.from_numpy(grad))
        tangent = rng.standard_normal(tuple(x.shape)) if tangent is None else tangent
        with fw.dual_level():
            dual = fw.make_dual(x.detach(), m.from_numpy(tangent))
            t = fw.unpack_dual(m.as_strided(dual, size, stride, **kwargs)).tangent
        results.append([out.detach().numpy(), g.numpy(), t.numpy()])
    for ours, theirs in zip(*results):
        np.testing.assert_allclose(ours, theirs, rtol=1e-12)
    _raises_alike(lambda m: m.as_strided(m.arange(12.0)[4:6], (3,), (5,), 4))


def test_stft_istft_against_torch():
    x, tx = _both(np.random.default_rng(0).standard_normal((2, 40)))
    w, tw = _both(np.hanning(12))
    calls = [
        lambda m, x, w: m.stft(x, 16, 5, 12, w, return_complex=True, normalized=True),
        lambda m, x, w: m.stft(x, 16, 4, 12, w, center=False, onesided=False,
                               return_complex=True),
        lambda m, x, w: x[0].stft(16, 4, 12, w, pad_mode="constant", return_complex=True),
        lambda m, x, w: m.istft(m.stft(x, 16, 4, 12, w, return_complex=True), 16, 4, 12, w),
        lambda m, x, w: m.istft(m.stft(x, 16, 4, 12, w, return_complex=True), 16, 4, 12, w,
                                length=45),
    ]
    for call in calls:
        _close(call(chainrule, x, w), call(torch, tx, tw))
    _raises_alike(lambda m: m.stft(m.ones(20), 8))
    # (PyTorch prefixes the call with all its arguments)
    _raises_alike(lambda m: m.stft(m.ones(20), 8, window=m.ones(5), return_complex=True), False)
    _raises_alike(lambda m: m.istft(m.ones(5, 3), 8))
    with pytest.warns(UserWarning, match="A window was not provided"):
        chainrule.stft(x, 8, return_complex=True)


# ---- the functional recurrent kernels: torch.lstm_cell(...), torch.lstm(...) and kin ----------

_GATES = {"rnn_tanh": 1, "rnn_relu": 1, "lstm": 4, "gru": 3}


def _rnn_arrays(mode, input_shape, hidden, layers, directions, biases, proj=0, batch=None):
    """Seeded input, initial states (layers x directions, batch, size) and flat weights in
    PyTorch's order."""
    rng = np.random.default_rng(11)
    gates, out = _GATES[mode] * hidden, proj or hidden
    arrays = [rng.uniform(-1.0, 1.0, input_shape)]
    batch = batch or (input_shape[1] if len(input_shape) == 3 else input_shape[0])
    arrays.append(rng.uniform(-1.0, 1.0, (layers * directions, batch, out)))
    if mode == "lstm":
        arrays.append(rng.uniform(-1.0, 1.0, (layers * directions, batch, hidden)))
    for layer in range(layers):
        for _ in range(directions):
            size = input_shape[-1] if layer == 0 else out * directions
            arrays += [rng.uniform(-0.6, 0.6, (gates, size)), rng.uniform(-0.6, 0.6, (gates, out))]
            if biases:
                arrays += [rng.uniform(-0.6, 0.6, (gates,)), rng.uniform(-0.6, 0.6, (gates,))]
            if proj:
                arrays.append(rng.uniform(-0.6, 0.6, (proj, hidden)))
    return arrays


def _flat_call(mode, layers, bidirectional, biases, batch_first):
    states = 2 if mode == "lstm" else 1

    def call(m, x, *rest):
        hx = tuple(rest[:states]) if mode == "lstm" else rest[0]
        return getattr(m, mode)(x, hx, list(rest[states:]), biases, layers, 0.0, False,
                                bidirectional, batch_first)
    return call


@pytest.mark.parametrize("mode", ["rnn_tanh", "rnn_relu", "lstm", "gru"])
@pytest.mark.parametrize("layers, bidirectional, biases, batch_first",
                         [(1, False, True, False), (2, True, True, False), (2, False, False, True),
                          (1, True, False, True)])
def test_flat_recurrent_kernels(mode, layers, bidirectional, biases, batch_first):
    directions = 2 if bidirectional else 1
    shape = (3, 4, 5) if batch_first else (4, 3, 5)  # 4 steps, batch 3, 5 features
    arrays = _rnn_arrays(mode, (4, 3, 5), 6, layers, directions, biases)
    if batch_first:
        arrays[0] = np.ascontiguousarray(arrays[0].transpose(1, 0, 2))
    assert arrays[0].shape == shape
    call = _flat_call(mode, layers, bidirectional, biases, batch_first)
    ours, our_grads = _grads(chainrule, call, arrays)
    theirs, their_grads = _grads(torch, call, arrays)
    assert len(theirs) == (3 if mode == "lstm" else 2)
    _close(ours, theirs)
    _close(our_grads, their_grads)
    # the final states' gradients too (the output alone does not reach all of h_n and c_n)
    _close(*(_final_state_grads(lib, call, arrays) for lib in (chainrule, torch)))


def _final_state_grads(lib, call, arrays):
    tensors = [lib.from_numpy(a.copy()).requires_grad_() for a in arrays]
    out = call(lib, *tensors)
    return lib.autograd.grad(sum((o * o).sum() for o in out[1:]), tensors)


def test_lstm_with_projections():
    arrays = _rnn_arrays("lstm", (4, 2, 3), 5, 2, 2, True, proj=2)
    call = _flat_call("lstm", 2, True, True, False)
    ours, our_grads = _grads(chainrule, call, arrays)
    theirs, their_grads = _grads(torch, call, arrays)
    _close(ours, theirs)
    _close(our_grads, their_grads)


@pytest.mark.parametrize("mode", ["rnn_tanh", "rnn_relu", "lstm", "gru"])
@pytest.mark.parametrize("bidirectional", [False, True])
def test_packed_recurrent_kernels(mode, bidirectional):
    lengths = [4, 3, 1]  # batch sorted by length, as pack_padded_sequence leaves it
    batch_sizes = [sum(n > t for n in lengths) for t in range(max(lengths))]
    directions = 2 if bidirectional else 1
    arrays = _rnn_arrays(mode, (sum(lengths), 5), 6, 2, directions, True, batch=len(lengths))
    states = 2 if mode == "lstm" else 1

    def call(m, data, *rest):
        hx = tuple(rest[:states]) if mode == "lstm" else rest[0]
        sizes = m.tensor(batch_sizes)
        return getattr(m, mode)(data, sizes, hx, list(rest[states:]), True, 2, 0.0, False,
                                bidirectional)

    ours, our_grads = _grads(chainrule, call, arrays)
    theirs, their_grads = _grads(torch, call, arrays)
    _close(ours, theirs)
    _close(our_grads, their_grads)


@pytest.mark.parametrize("mode", ["rnn_tanh", "lstm"])
def test_flat_recurrent_kernels_by_keyword_and_unbatched(mode):
    states = 2 if mode == "lstm" else 1
    arrays = _rnn_arrays(mode, (4, 3, 5), 6, 1, 2, True)
    unbatched = [arrays[0][:, 0]] + [a[:, 0] for a in arrays[1:1 + states]] + arrays[1 + states:]
    # packed: 4 rows, batch sizes 2, 1, 1 (lengths 3 and 1)
    packed = [arrays[0][:, 0][:4]] + [a[:, :2] for a in arrays[1:1 + states]] + arrays[1 + states:]

    def hx(m, rest):
        return tuple(rest[:states]) if mode == "lstm" else rest[0]

    def padded(m, x, *rest):
        return getattr(m, mode)(input=x, hx=hx(m, rest), params=list(rest[states:]),
                                has_biases=True, num_layers=1, dropout=0.0, train=False,
                                bidirectional=True, batch_first=False)

    def by_keyword(m, x, *rest):
        return getattr(m, mode)(data=x, batch_sizes=m.tensor([2, 1, 1]), hx=hx(m, rest),
                                params=list(rest[states:]), has_biases=True, num_layers=1,
                                dropout=0.0, train=False, bidirectional=True)

    cases = [(padded, arrays), (by_keyword, packed)]
    if mode != "lstm":  # torch's lstm kernel takes batched input only
        cases.append((padded, unbatched))
    for call, data in cases:
        ours, our_grads = _grads(chainrule, call, data)
        theirs, their_grads = _grads(torch, call, data)
        _close(ours, theirs)
        _close(our_grads, their_grads)


@pytest.mark.parametrize("mode", ["rnn_tanh", "rnn_relu", "lstm", "gru"])
@pytest.mark.parametrize("biases", [True, False])
@pytest.mark.parametrize("batched", [True, False])
def test_recurrent_cells(mode, biases, batched):
    arrays = _rnn_arrays(mode, (3, 4) if batched else (4,), 5, 1, 1, biases)
    arrays[1:3 if mode == "lstm" else 2] = [a[0] if batched else a[0, 0]
                                            for a in arrays[1:3 if mode == "lstm" else 2]]
    states = 2 if mode == "lstm" else 1

    def call(m, x, *rest):
        hx = tuple(rest[:states]) if mode == "lstm" else rest[0]
        return getattr(m, mode + "_cell")(x, hx, *rest[states:])

    if batched:  # torch's own top-level cells reject unbatched input
        theirs, their_grads = _grads(torch, call, arrays)
    else:
        module = {"rnn_tanh": torch.nn.RNNCell, "rnn_relu": torch.nn.RNNCell,
                  "lstm": torch.nn.LSTMCell, "gru": torch.nn.GRUCell}[mode]
        theirs = None
    ours, our_grads = _grads(chainrule, call, arrays)
    if theirs is None:
        cell = module(4, 5, bias=biases, dtype=torch.float64, **(
            {"nonlinearity": mode[4:]} if mode.startswith("rnn") else {}))
        names = ["weight_ih", "weight_hh"] + (["bias_ih", "bias_hh"] if biases else [])
        with torch.no_grad():
            for name, a in zip(names, arrays[1 + states:]):
                getattr(cell, name).copy_(torch.from_numpy(a))
        x = torch.from_numpy(arrays[0])
        hx = tuple(torch.from_numpy(a) for a in arrays[1:1 + states])
        theirs = cell(x, hx if mode == "lstm" else hx[0])
    else:
        _close(our_grads, their_grads)
    _close(ours, theirs)


def test_lstm_cell_gradcheck():
    arrays = _rnn_arrays("lstm", (2, 3), 4, 1, 1, True)
    arrays[1:3] = [a[0] for a in arrays[1:3]]
    tensors = [chainrule.from_numpy(a).requires_grad_() for a in arrays]

    def f(x, h, c, *weights):
        return chainrule.lstm_cell(x, (h, c), *weights)

    assert chainrule.autograd.gradcheck(f, tensors)
    assert chainrule.autograd.gradgradcheck(f, tensors)


def test_size_arguments_by_keyword():
    x, tx = _both(np.arange(12.0).reshape(3, 4))
    calls = [
        lambda m, t: m.permute(t, dims=(1, 0)),
        lambda m, t: m.permute(input=t, dims=[1, 0]),
        lambda m, t: t.permute(dims=(1, 0)),
        lambda m, t: t.permute(1, 0),
        lambda m, t: m.reshape(t, shape=(2, 6)),
        lambda m, t: t.reshape(shape=[-1]),
        lambda m, t: t.reshape(6, 2),
        lambda m, t: m.tile(t, dims=(2,)),
        lambda m, t: t.tile(dims=(2, 1, 1)),
        lambda m, t: t.tile(2, 1),
        lambda m, t: t.clone().copy_(other=t * 2),
        lambda m, t: t.clone().copy_(t[0] + 1, True),
    ]
    for call in calls:
        _same(call(chainrule, x), call(torch, tx))
    errors = [
        lambda m: m.ones(2, 3).permute(1, 0, dims=(1, 0)),
        lambda m: m.permute(m.ones(2, 3), (1, 0), dims=(1, 0)),
        lambda m: m.ones(2, 3).reshape(6, shape=(6,)),
        lambda m: m.reshape(m.ones(2, 3), (6,), shape=(6,)),
        lambda m: m.ones(2, 3).tile((2,), dims=(2,)),
        lambda m: m.ones(3).permute(dims=0),
        lambda m: m.ones(2, 3).reshape(shape=6),
        lambda m: m.tile(m.ones(2, 3), dims=2),
    ]
    for call in errors:
        _raises_alike(call)
    _raises_alike(lambda m: m.ones(2).copy_(src=m.ones(2)), same_message=False)  # Python's words


def test_linalg_keyword_names_as_pytorch():
    a = np.array([[2.0, 1.0, 0.5], [0.3, 3.0, 1.0], [1.0, 0.2, 4.0]])
    x, tx = _both(a)
    v, tv = _both(a[0])
    calls = [
        lambda m, t, u: m.linalg.matrix_norm(input=t, ord="nuc"),
        lambda m, t, u: m.linalg.norm(input=t, ord=1),
        lambda m, t, u: m.linalg.pinv(input=t, hermitian=False),
        lambda m, t, u: m.linalg.svdvals(A=t, driver=None),
        lambda m, t, u: m.linalg.svd(A=t, full_matrices=False, driver=None).S,
        lambda m, t, u: m.det(input=t),
        lambda m, t, u: m.inverse(input=t),
        lambda m, t, u: m.slogdet(input=t),
        lambda m, t, u: t.slogdet(),
        lambda m, t, u: m.dot(input=u, tensor=u * 2),
        lambda m, t, u: u.dot(tensor=u + 1),
    ]
    for call in calls:
        _same(call(chainrule, x, v), call(torch, tx, tv))
    assert type(chainrule.slogdet(x)).__name__ == type(torch.slogdet(tx)).__name__
    for call in [lambda m: m.linalg.svd(m.eye(2), driver="gesvd"),
                 lambda m: m.linalg.svdvals(m.eye(2), driver="gesvdj")]:
        _raises_alike(call)
    rejected = [  # the names torch's parser does not take (Python words the error differently)
        lambda m: m.linalg.matrix_norm(A=m.eye(2)),
        lambda m: m.linalg.norm(A=m.eye(2)),
        lambda m: m.linalg.pinv(A=m.eye(2)),
        lambda m: m.linalg.svdvals(input=m.eye(2)),
        lambda m: m.det(A=m.eye(2)),
        lambda m: m.inverse(A=m.eye(2)),
        lambda m: m.slogdet(A=m.eye(2)),
        lambda m: m.dot(m.ones(2), other=m.ones(2)),
    ]
    for call in rejected:
        _raises_alike(call, same_message=False)


def test_out_dtype_is_cuda_only():
    for call in [lambda m: m.bmm(m.ones(2, 2, 2), m.ones(2, 2, 2), out_dtype=m.float32),
                 lambda m: m.bmm(m.ones(2, 2, 2).double(), m.ones(2, 2, 2).double(), m.float64),
                 lambda m: m.addmm(m.ones(2, 2), m.ones(2, 2), m.ones(2, 2), m.float32, beta=2),
                 lambda m: m.baddbmm(m.ones(1, 2, 2), m.ones(1, 2, 2), m.ones(1, 2, 2),
                                     out_dtype=m.float64)]:
        _raises_alike(call, same_message=False)  # torch adds its dispatcher's key list
        with pytest.raises(NotImplementedError, match=r"^Could not run 'aten::\w+\.dtype' with "
                                                      r"arguments from the 'CPU' backend\."):
            call(chainrule)
    a, ta = _both(np.arange(8.0).reshape(2, 2, 2))
    _same(chainrule.baddbmm(a, a, a, beta=2, alpha=0.5),
          torch.baddbmm(ta, ta, ta, beta=2, alpha=0.5))
