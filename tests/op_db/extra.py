"""Rows for chainrule/ops/extra.py: torch's remaining math, statistics and shape functions,
mostly compositions of other ops (``grad_fn=False``: their last op is not PyTorch's fused one)."""

from __future__ import annotations

from ._spec import NONZERO, POSITIVE, Const, Domain, OpRow, S, T, method, op

UNARY = (S(()), S((5,)), S((3, 4)))
BINARY = (S((), ()), S((3, 4), (3, 4)), S((3, 1), (1, 4)), S((2, 3), ()))
# Non-negative: PyTorch 2.13 takes 2 ** other in integers in the gradient (0 for other < 0).
INT_EXPONENT = Const([[1, 0, 3]])

ELEMENTWISE = [
    op("copysign", (S((3, 4), T((3, 4), NONZERO, grad=False)), S((3, 1), (1, 4)),
                    S((), (2, 3))),
       domain=NONZERO, inplace=("copysign_",)),
    OpRow("copysign", lambda m, x: m.copysign(x, -1.5), UNARY, domain=NONZERO,
          variant="scalar other", grad_fn=False,
          inplace={"copysign_": lambda x: x.copysign_(-1.5)}),
    op("deg2rad", UNARY, grad_fn=False, inplace=("deg2rad_",)),
    op("rad2deg", UNARY, grad_fn=False, inplace=("rad2deg_",)),
    op("ldexp", (S((2, 3), INT_EXPONENT), S((), Const(2))), grad_fn=False, inplace=("ldexp_",)),
    OpRow("frexp", lambda m, x: m.frexp(x).mantissa, UNARY, domain=NONZERO, grad_fn=False,
          records=("frexp_exponent",)),
    OpRow("float_power", lambda m, x, y: m.float_power(x, y), BINARY, domain=POSITIVE,
          grad_fn=False),
    OpRow("float_power", lambda m, x: m.float_power(x, 2.5), UNARY, domain=POSITIVE,
          variant="scalar exponent", grad_fn=False),
    OpRow("float_power", lambda m, x: m.float_power(1.5, x), UNARY, variant="scalar base",
          grad_fn=False),
    method("Tensor.float_power_", lambda x, y: (x * 1).double().float_power_(y),
           (S((3, 4), (3, 4)),), domain=POSITIVE, grad_fn=False),
    op("positive", UNARY, grad_fn=False),
]

NAN_MASK = Const([[True, False, False, True], [False, False, False, False],
                  [True, True, True, True]])  # the last row all NaN


def _nans(m, x, mask):
    return m.where(mask, float("nan"), x)


REDUCTIONS = [
    OpRow("nansum", lambda m, x, mask: m.nansum(_nans(m, x, mask), 1), (S((3, 4), NAN_MASK),),
          grad_fn=False),
    OpRow("nansum", lambda m, x: m.nansum(x, (0, 1), keepdim=True), (S((3, 4)),),
          variant="dims", grad_fn=False),
    OpRow("nanmean", lambda m, x, mask: m.nanmean(_nans(m, x, mask)), (S((3, 4), NAN_MASK),),
          grad_fn=False),
    OpRow("nanmean", lambda m, x: m.nanmean(x, 0), (S((3, 4)),), variant="dim", grad_fn=False),
    OpRow("nanmedian", lambda m, x, mask: m.nanmedian(_nans(m, x, mask)),
          (S((3, 4), NAN_MASK),), grad_fn=False, orders=(1,)),
    OpRow("nanmedian", lambda m, x, mask: m.nanmedian(_nans(m, x, mask)[:2], 1).values,
          (S((3, 4), NAN_MASK),), variant="dim", grad_fn=False, orders=(1,)),
    OpRow("nanmedian", lambda m, x: m.nanmedian(x, 0, keepdim=True).values, (S((3, 4)), S(())),
          variant="keepdim", grad_fn=False, orders=(1,)),
    OpRow("nanquantile", lambda m, x, mask: m.nanquantile(_nans(m, x, mask)[:2], 0.3, dim=1),
          (S((3, 4), NAN_MASK),), grad_fn=False),
    OpRow("nanquantile",
          lambda m, x: m.nanquantile(x, m.tensor([0.25, 0.5, 1.0], dtype=x.dtype), 0,
                                     keepdim=True),
          (S((4, 3)),), variant="q tensor", grad_fn=False),
    OpRow("nanquantile", lambda m, x: m.nanquantile(x, 0.4, interpolation="midpoint"),
          (S((3, 4)),), variant="midpoint", grad_fn=False),
    OpRow("logcumsumexp", lambda m, x: m.logcumsumexp(x, 1), (S((3, 4)),)),
    OpRow("logcumsumexp", lambda m, x: m.logcumsumexp(x, 0), (S(()), S((5,))), variant="dim 0"),
    # exp of the smaller values underflows against the larger ones
    OpRow("logcumsumexp", lambda m, x: m.logcumsumexp(x, -1), (S((2, 6)),),
          domain=Domain(-400.0, 400.0), variant="wide range", dtypes=("float64",)),
    OpRow("logcumsumexp", lambda m, x, y: m.view_as_real(m.logcumsumexp(m.complex(x, y), 1)),
          (S((3, 4), (3, 4)),), variant="complex", grad_fn=False),
    OpRow("aminmax", lambda m, x: m.aminmax(x, dim=1), (S((3, 4)),), grad_fn=False),
    OpRow("aminmax", lambda m, x: m.aminmax(x, keepdim=True), (S((3, 4)),), variant="all",
          grad_fn=False),
    op("msort", (S((4, 3)), S((5,))), grad_fn=False),
    op("cov", (S((3, 5)), S((5,))), grad_fn=False),
    OpRow("cov", lambda m, x, w: m.cov(x, correction=0, aweights=w),
          (S((3, 5), T((5,), POSITIVE)),), variant="aweights", grad_fn=False),
    OpRow("cov", lambda m, x, f, w: m.cov(x, fweights=f, aweights=w),
          (S((2, 4), Const([1, 3, 2, 1]), T((4,), POSITIVE)),), variant="fweights",
          grad_fn=False),
    op("corrcoef", (S((3, 5)),), grad_fn=False),
    OpRow("gradient", lambda m, x: m.gradient(x), (S((3, 4)), S((5,))), grad_fn=False),
    OpRow("gradient", lambda m, x: m.gradient(x, spacing=[0.5, 2.0], edge_order=2),
          (S((3, 4)),), variant="edge_order=2", grad_fn=False),
    OpRow("gradient",
          lambda m, f, x: m.gradient(f, spacing=[x.detach().abs().cumsum(0)], dim=1,
                                     edge_order=2),
          (S((3, 4), T((4,), POSITIVE, grad=False)),), variant="coordinates", grad_fn=False),
    op("trapezoid", (S((3, 4)), S((3, 4), (4,))), grad_fn=False),
    OpRow("trapezoid", lambda m, y, x: m.trapezoid(y, x, dim=0), (S((3, 4), (3, 4)),),
          variant="x like y", grad_fn=False),
    OpRow("trapezoid", lambda m, y: m.trapezoid(y, dx=0.5, dim=0), (S((3, 4)),),
          variant="dx", grad_fn=False),
    OpRow("trapz", lambda m, y, x: m.trapz(y, x), (S((3, 4), (4,)),), grad_fn=False),
    op("cumulative_trapezoid", (S((3, 4)), S((3, 4), (4,))), grad_fn=False),
]

INTS_A = Const([[12, -18, 0, 7], [5, 0, -4, 9]])
INTS_B = Const([[8, 27, 5, 0], [-15, 0, 6, 3]])
STEPS = Const([[-1.5, 0.0, 2.0], [-0.0, 3.0, 0.0]])
VALUES = Const([0.5, 0.25, 0.75])
COUNTS = Const([0, 1, 1, 3, 7])

# No gradient (integer or bool results, or none in PyTorch); values also in test_torch_surface.
# nextafter's derivative (the step held constant, as PyTorch's) has a row of its own.
NO_GRAD = [
    op("gcd", (S(INTS_A, INTS_B),), orders=(), inplace=("gcd_",)),
    op("lcm", (S(INTS_A, INTS_B),), orders=(), inplace=("lcm_",)),
    op("heaviside", (S(STEPS, VALUES),), orders=(), inplace=("heaviside_",)),
    op("nextafter", (S(STEPS, VALUES),), orders=(), inplace=("nextafter_",)),
    op("nextafter", (S((2, 3), (3,)),), variant="derivative"),
    op("signbit", (S(STEPS), S(INTS_A), S((3, 4))), orders=()),
    op("count_nonzero", (S(INTS_A), S(STEPS)), orders=()),
    # (PyTorch gives histograms of a tensor that requires grad a grad_fn that raises; chainrule's
    # do not require grad: see docs/differences.md)
    OpRow("histc", lambda m, x: m.histc(x, bins=4), (S(T((3, 5), grad=False)),), orders=()),
    OpRow("histogram", lambda m, x: m.histogram(x, 3, range=(-1.0, 1.0)),
          (S(T((3, 5), grad=False)),), orders=()),
    OpRow("histogram", lambda m, x, w: m.histogram(x, 3, weight=w),
          (S(T((3, 5), grad=False), T((3, 5), grad=False)),), variant="weight", orders=(),
          records=("histogram_weighted",)),
    OpRow("histogramdd", lambda m, x: m.histogramdd(x, [2, 3]).hist, (S(T((5, 2), grad=False)),),
          orders=(), vmap_error="Batching rule not implemented for aten::histogramdd"),
    op("bincount", (S(COUNTS),), orders=()),
    OpRow("bincount", lambda m, x, w: m.bincount(x, w, minlength=9),
          (S(COUNTS, T((5,), grad=False)),), variant="weights", orders=(),
          records=("bincount_weighted",)),
    OpRow("bucketize", lambda m, x: m.bucketize(x, m.tensor([-1.0, 0.0, 1.0], dtype=x.dtype)),
          (S((3, 4)),), orders=()),
    op("isin", (S(INTS_A, INTS_B),), orders=()),
]

INDEX = Const([0, 2, 0, 1])
WINDOW = Const([0.2, 0.6, 1.0, 1.0, 0.6, 0.2])


def _stft(m, x, w, **kwargs):
    return m.view_as_real(m.stft(x, 8, 2, 6, w, return_complex=True, **kwargs))


def _istft(m, x, w, **kwargs):
    spectrum = m.stft(x, 8, 2, 6, w, return_complex=True, **kwargs)
    return m.istft(spectrum, 8, 2, 6, w, **kwargs)



def _copy(name: str, samples, call=None, **kwargs) -> OpRow:
    return OpRow(name, call or (lambda m, *a: getattr(m, name)(*a)), samples, grad_fn=False,
                 **kwargs)


SHAPES = [
    OpRow("as_strided", lambda m, x: m.as_strided(x, (2, 2), (1, 2), 1), (S((6,)),),
          grad_fn=False),
    method("Tensor.as_strided", lambda x: x[1:].as_strided((3, 2), (1, 1)), (S((3, 4)),),
           grad_fn=False),
    OpRow("as_strided_scatter",
          lambda m, x, y: m.as_strided_scatter(x, y, (2, 2), (1, 2), 1),
          (S(T((6,), grad=False), (2, 2)),), grad_fn=False),
    # (PyTorch 2.13's gradient for input is the complement of the right one: it passes the
    # gradient where src was written and zero elsewhere; finite differences agree with chainrule)
    _copy("as_strided_copy", (S((3, 4)),), lambda m, x: m.as_strided_copy(x, (2, 3), (4, 1))),
    OpRow("stft", _stft, (S((20,), WINDOW), S((2, 16), WINDOW)), grad_fn=False),
    OpRow("stft", lambda m, x, w: _stft(m, x, w, center=False, onesided=False, normalized=True),
          (S((2, 16), WINDOW),), variant="two-sided", grad_fn=False),
    OpRow("istft", _istft, (S((20,), WINDOW), S((2, 16), WINDOW)), grad_fn=False),
    OpRow("istft", lambda m, x, w: _istft(m, x, w, normalized=True, onesided=False),
          (S((2, 16), WINDOW),), variant="two-sided", grad_fn=False),
    # a spectrum that is not Hermitian: a real result reads its first n_fft // 2 + 1 bins
    OpRow("istft", lambda m, x, y: m.istft(m.complex(x, y), 8, 2, window=m.ones(8, dtype=x.dtype),
                                           onesided=False),
          (S((8, 5), (8, 5)),), variant="complex spectrum", grad_fn=False),
    OpRow("diagflat", lambda m, x: m.diagflat(x, 1), (S((3,)), S((2, 2))), grad_fn=False),
    OpRow("block_diag", lambda m, a, b, c: m.block_diag(a, b, c), (S((), (3,), (2, 2)),),
          grad_fn=False),
    OpRow("cartesian_prod", lambda m, a, b: m.cartesian_prod(a, b), (S((2,), (3,)),),
          grad_fn=False),
    OpRow("combinations", lambda m, x: m.combinations(x, 3, with_replacement=True), (S((4,)),),
          grad_fn=False),
    op("combinations", (S((4,)),), grad_fn=False, variant="r=2"),
    op("diagonal_scatter", (S((3, 5), (3,)),), grad_fn=False),
    OpRow("diagonal_scatter", lambda m, x, y: m.diagonal_scatter(x, y, -1, 1, 0),
          (S((3, 4), (3,)),), variant="offset", grad_fn=False),
    OpRow("select_scatter", lambda m, x, y: m.select_scatter(x, y, 1, -1), (S((3, 4), (3,)),),
          grad_fn=False),
    OpRow("slice_scatter", lambda m, x, y: m.slice_scatter(x, y, 1, 1, 5, 2),
          (S((3, 5), (3, 2)),), grad_fn=False),
    OpRow("slice_scatter", lambda m, x, y: m.slice_scatter(x, y), (S((3, 2), (3, 2)),),
          variant="whole", grad_fn=False),
    OpRow("hsplit", lambda m, x: m.hsplit(x, [1, 3]), (S((3, 5)), S((4,))), grad_fn=False),
    OpRow("vsplit", lambda m, x: m.vsplit(x, 3), (S((3, 5)),), grad_fn=False),
    OpRow("dsplit", lambda m, x: m.dsplit(x, 2), (S((2, 1, 4)),), grad_fn=False),
    OpRow("split_with_sizes", lambda m, x: m.split_with_sizes(x, [2, 3], 1), (S((3, 5)),),
          grad_fn=False),
    OpRow("unsafe_split_with_sizes", lambda m, x: m.unsafe_split_with_sizes(x, [1, 2]),
          (S((3, 5)),), grad_fn=False),
    OpRow("unsafe_split", lambda m, x: m.unsafe_split(x, 2, 1), (S((3, 5)),), grad_fn=False),
    OpRow("unsafe_chunk", lambda m, x: m.unsafe_chunk(x, 2), (S((3, 5)),), grad_fn=False),
    method("Tensor.unfold", lambda x: x.unfold(1, 2, 2), (S((3, 5)),), grad_fn=False),
    method("Tensor.unfold", lambda x: x.unfold(0, 1, 1), (S(()),), variant="0-d",
           grad_fn=False),
    OpRow("index_reduce", lambda m, x, i, y: m.index_reduce(x, 0, i, y, "prod"),
          (S((3, 5), INDEX, (4, 5)),), grad_fn=False),
    method("Tensor.index_reduce_", lambda x, i, y: (x * 1).index_reduce_(0, i, y, "amin"),
           (S((3, 5), INDEX, (4, 5)),), grad_fn=False),
    OpRow("index_reduce", lambda m, x, i, y: m.index_reduce(x, 0, i, y, "mean",
                                                            include_self=False),
          (S((3, 5), INDEX, (4, 5)),), variant="mean", grad_fn=False),
    OpRow("index_reduce", lambda m, x, i, y: m.index_reduce(x, 1, i, y, "amax"),
          (S((2, 3), INDEX, (2, 4)),), variant="amax", grad_fn=False),
    OpRow("renorm", lambda m, x: m.renorm(x, 2, 0, 1.5), (S((3, 5)),), grad_fn=False,
          inplace={"renorm_": lambda x: x.renorm_(2, 0, 1.5)}),
    OpRow("renorm", lambda m, x: m.renorm(x, 1, 1, 1.0), (S((3, 4)),), variant="p=1",
          grad_fn=False),
    method("Tensor.fill_diagonal_", lambda x: (x * 1).fill_diagonal_(2.5), (S((4, 3)),),
           grad_fn=False),
    method("Tensor.fill_diagonal_", lambda x: (x * 1).fill_diagonal_(2.5, wrap=True),
           (S((7, 3)), S((2, 2, 2))), variant="wrap", grad_fn=False),
    _copy("alias_copy", (S((3, 4)),)),
    # (PyTorch's detach_copy of a tensor that requires grad has a grad_fn that raises; chainrule's
    # is detached: docs/differences.md)
    _copy("detach_copy", (S(T((3, 4), grad=False)),), orders=()),
    _copy("detach", (S((3, 4)),), orders=()),
    _copy("expand_copy", (S((1, 4)),), lambda m, x: m.expand_copy(x, (2, 3, 4))),
    _copy("narrow_copy", (S((3, 4)),), lambda m, x: m.narrow_copy(x, 1, 1, 2)),
    method("Tensor.narrow_copy", lambda x: x.narrow_copy(0, 1, 2), (S((3, 4)),), grad_fn=False),
    _copy("permute_copy", (S((2, 3, 4)),), lambda m, x: m.permute_copy(x, (2, 0, 1))),
    _copy("select_copy", (S((3, 4)),), lambda m, x: m.select_copy(x, 1, 2)),
    _copy("slice_copy", (S((3, 5)),), lambda m, x: m.slice_copy(x, 1, 1, None, 2)),
    _copy("split_copy", (S((3, 5)),), lambda m, x: m.split_copy(x, 2, 1)),
    _copy("split_with_sizes_copy", (S((3, 5)),),
          lambda m, x: m.split_with_sizes_copy(x, [1, 2])),
    _copy("squeeze_copy", (S((3, 1, 4)),), lambda m, x: m.squeeze_copy(x, 1)),
    _copy("t_copy", (S((3, 4)),)),
    _copy("transpose_copy", (S((2, 3, 4)),), lambda m, x: m.transpose_copy(x, 0, 2)),
    _copy("unbind_copy", (S((3, 4)),), lambda m, x: m.unbind_copy(x, 1)),
    _copy("unfold_copy", (S((3, 5)),), lambda m, x: m.unfold_copy(x, 1, 2, 1)),
    _copy("unsqueeze_copy", (S((3, 4)),), lambda m, x: m.unsqueeze_copy(x, 1)),
    _copy("view_copy", (S((3, 4)),), lambda m, x: m.view_copy(x, (4, 3))),
    _copy("view_as_real_copy", (S((3, 4)),), lambda m, x: m.view_as_real_copy(
        m.complex(x, x * 2))),
    _copy("view_as_complex_copy", (S(T((3, 2), grad=False)),), orders=()),
]



FLOATS = Const([[1.5, -2.0, 0.0, 3.0], [0.5, 1.0, -1.0, 2.0], [4.0, 0.25, -3.0, 1.0]])


def _value(name: str, call, samples=None, **kwargs) -> OpRow:
    """A row for a predicate or utility (on fixed values: Python results do not batch): its
    result wrapped as a tensor."""
    return OpRow(name, call, samples or (S(FLOATS),), orders=(), grad_fn=False, **kwargs)


RUNS = Const([1, 1, 2, 2, 3, 1, 1, 2])
UTILITIES = [
    _value("equal", lambda m, x: m.tensor(m.equal(x, x[:1]))),
    _value("is_same_size", lambda m, x: m.tensor(m.is_same_size(x, x[:1]))),
    _value("is_nonzero", lambda m, x: m.tensor(m.is_nonzero(x[:1, :1]))),
    _value("is_signed", lambda m, x: m.tensor(m.is_signed(x))),
    _value("is_inference", lambda m, x: m.tensor(m.is_inference(x))),
    _value("get_device", lambda m, x: m.tensor(m.get_device(x))),
    _value("is_distributed", lambda m, x: m.tensor(m.is_distributed(x))),
    _value("unique_consecutive", lambda m, x: m.unique_consecutive(x, return_inverse=True,
                                                                   return_counts=True),
           (S(RUNS),)),
    _value("nonzero_static", lambda m, x: m.nonzero_static(x - 1, size=6), (S(RUNS),)),
    _value("unravel_index", lambda m, x: m.unravel_index(x, (2, 3)), (S(RUNS),)),
    _value("Tensor.storage_offset", lambda m, x: m.tensor(x[1:].storage_offset())),
    _value("Tensor.is_set_to", lambda m, x: m.tensor(x.is_set_to(x))),
    _value("Tensor.dim_order", lambda m, x: m.tensor(x.t().dim_order())),
    _value("Tensor.is_shared", lambda m, x: m.tensor(x.is_shared())),
    _value("Tensor.share_memory_", lambda m, x: x.share_memory_()),
    _value("Tensor.module_load", lambda m, x: x.module_load(x * 2)),
    _value("Tensor.const_data_ptr", lambda m, x: m.tensor(x.const_data_ptr() == x.data_ptr())),
    *[_value(f"Tensor.{n}", lambda m, x, n=n: getattr(x, n)())
      for n in ("byte", "char", "short", "cfloat", "cdouble")],
    _value("Tensor.__contains__", lambda m, x: m.tensor(x[0, 0] in x)),
    _value("Tensor.__reversed__", lambda m, x: reversed(x)),
    _value("Tensor.__complex__", lambda m, x: m.tensor(complex(x[0, 0]))),
    _value("Tensor.__long__", lambda m, x: m.tensor(x[0, 0].__long__())),
    _value("Tensor.__nonzero__", lambda m, x: m.tensor(x[0, 0].__nonzero__())),
    _value("Tensor.apply_", lambda m, x: x.clone().apply_(lambda v: v * 2)),
    _value("Tensor.map_", lambda m, x: x.clone().map_(x[:1], lambda a, b: a - b)),
    _value("Tensor.map2_", lambda m, x: x.clone().map2_(x, x, lambda a, b, c: a * b + c)),
    _value("Tensor.resize_", lambda m, x: x.clone().resize_(2, 3)),
    _value("Tensor.resize_as_", lambda m, x: x.clone().resize_as_(x[:1])),
    _value("Tensor.resize", lambda m, x: x.resize(4, 3)),
    _value("Tensor.resize_as", lambda m, x: x.resize_as(x.t())),
    # __div__ and friends are Python 2's names for / (differentiable like it)
    method("Tensor.__div__", lambda x, y: x.__div__(y), (S((3, 4), (4,)),), records=("div",)),
    method("Tensor.__rdiv__", lambda x: x.__rdiv__(2.0), (S((3, 4), ),), domain=NONZERO,
           grad_fn=False),
    method("Tensor.__idiv__", lambda x, y: (x * 1).__idiv__(y), (S((3, 4), (4,)),),
           domain=NONZERO, records=("div",)),
]

# In-place comparisons under their long names (written into the target's dtype).
COMPARE = (S((3, 4), (3, 4)), S((3, 4), ()))
UTILITIES += [
    op(name, COMPARE, orders=(), variant="in place", records=(record,), inplace=(name + "_",),
       grad_fn=False)
    for name, record in (("greater", "gt"), ("less", "lt"), ("greater_equal", "ge"),
                         ("less_equal", "le"), ("not_equal", "ne"))
]

ROWS: list[OpRow] = ELEMENTWISE + REDUCTIONS + NO_GRAD + SHAPES + UTILITIES
