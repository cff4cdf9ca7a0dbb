"""Bad input is refused as PyTorch refuses it, and nothing is changed by the attempt; IEEE
results (log(0), 0/0, overflow) are silent as in PyTorch, with NumPy's warnings never leaking.

Each row builds fresh inputs with a library (torch or chainrule) and returns the call to make and
the tensors it involves. The row's exception type is checked against torch running the same row;
chainrule must raise it with a message matching the row's pattern, and leave the tensors' values,
grads, requires_grad and versions as they were.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
import pytest
import torch

import chainrule

F32, F64, I64 = "float32", "float64", "int64"


@dataclass(frozen=True)
class Row:
    id: str
    error: type
    match: str
    build: Callable[[Any], tuple]  # lib -> (call, [tensors involved])


def _dt(t, name):
    return getattr(t, name)


def _leaf(t, *shape, dtype=F32, requires_grad=False):
    x = t.arange(math.prod(shape), dtype=_dt(t, dtype)).reshape(shape) / 7 if dtype != I64 \
        else t.arange(math.prod(shape)).reshape(shape)
    return x.requires_grad_() if requires_grad else x


def unary(name, fn, error, match, *shape, dtype=F32, requires_grad=False):
    """A row calling ``fn(t, x)`` on one fresh tensor."""
    def build(t):
        x = _leaf(t, *shape, dtype=dtype, requires_grad=requires_grad)
        return (lambda: fn(t, x)), [x]
    return Row(name, error, match, build)


def binary(name, fn, error, match, a, b, da=F32, db=F32):
    """A row calling ``fn(t, x, y)`` on two fresh tensors of shapes ``a`` and ``b``."""
    def build(t):
        x, y = _leaf(t, *a, dtype=da), _leaf(t, *b, dtype=db)
        return (lambda: fn(t, x, y)), [x, y]
    return Row(name, error, match, build)


def call(name, fn, error, match):
    """A row with no tensor inputs (creation functions)."""
    return Row(name, error, match, lambda t: ((lambda: fn(t)), []))


def setattr_row(name, attr, make_value, error, match, *shape, requires_grad=True):
    def build(t):
        x = _leaf(t, *shape, requires_grad=requires_grad)
        value = make_value(t)
        return (lambda: setattr(x, attr, value)), [x] + ([value] if _is_tensor(value) else [])
    return Row(name, error, match, build)


def _is_tensor(v):
    return isinstance(v, (torch.Tensor, chainrule.Tensor))


def _F(t):
    return t.nn.functional


ROWS = [
    # ---- Tensor attribute setters -------------------------------------------------------------
    setattr_row("grad_size", "grad", lambda t: t.zeros(3), RuntimeError,
                r"gradient of size '\[3\]' to a tensor of size '\[2, 3\]'", 2, 3),
    setattr_row("grad_size_noreq", "grad", lambda t: t.zeros(3, 2), RuntimeError,
                r"size '\[3, 2\]'.*size '\[2, 3\]'", 2, 3, requires_grad=False),
    setattr_row("grad_dtype", "grad", lambda t: t.zeros(2, 3, dtype=t.float64), RuntimeError,
                "gradient with dtype 'double' to a tensor with grad_dtype 'Float'", 2, 3),
    setattr_row("grad_int", "grad", lambda t: t.zeros(2, 3, dtype=t.int64), RuntimeError,
                "dtype 'long int'", 2, 3),
    setattr_row("grad_list", "grad", lambda t: [0.0, 1.0], TypeError,
                "Tensor or None but got grad of type list", 2),
    setattr_row("grad_float", "grad", lambda t: 1.0, TypeError,
                "Tensor or None but got grad of type float", 2),
    setattr_row("grad_ndarray", "grad", lambda t: np.zeros(2, np.float32), TypeError,
                "got grad of type ndarray", 2),
    Row("grad_self", RuntimeError, "its own grad",
        lambda t: (lambda x: ((lambda: setattr(x, "grad", x)), [x]))(_leaf(t, 2))),
    setattr_row("data_list", "data", lambda t: [1.0, 2.0], TypeError,
                "data has to be a tensor, but got list", 2),
    setattr_row("data_float", "data", lambda t: 1.0, TypeError,
                "data has to be a tensor, but got float", 2),
    unary("requires_grad_int", lambda t, x: x.requires_grad_(), RuntimeError,
          "floating point", 3, dtype=I64),
    Row("requires_grad_nonleaf", RuntimeError, "only change requires_grad flags of leaf",
        lambda t: (lambda x: (lambda y: ((lambda: setattr(y, "requires_grad", False)), [x, y]))(
            x * 2))(_leaf(t, 2, requires_grad=True))),
    unary("detach_view", lambda t, x: x[1:].detach_(), RuntimeError,
          "Can't detach views in-place", 3, requires_grad=True),
    unary("detach_view_nograd", lambda t, x: x.view(3).detach_(), RuntimeError,
          "Can't detach views in-place", 3),
    unary("detach_view_transpose", lambda t, x: x.t().detach_(), RuntimeError,
          "Can't detach views in-place", 2, 3),
    unary("numpy_requires_grad", lambda t, x: x.numpy(), RuntimeError,
          r"Can't call numpy\(\) on Tensor that requires grad", 2, requires_grad=True),
    unary("leaf_inplace", lambda t, x: x.add_(1), RuntimeError,
          "leaf Variable that requires grad is being used in an in-place", 2,
          requires_grad=True),
    unary("item_many", lambda t, x: x.item(), RuntimeError,
          "a Tensor with 2 elements cannot be converted to Scalar", 2),
    unary("bool_many", lambda t, x: bool(x), RuntimeError,
          "Boolean value of Tensor with more than one value is ambiguous", 2),
    unary("float_many", lambda t, x: float(x), ValueError,
          "only one element tensors can be converted", 2),
    unary("len_0d", lambda t, x: len(x.sum()), TypeError, "len\\(\\) of a 0-d tensor", 2),

    # ---- creation -------------------------------------------------------------------------------
    call("randn_float", lambda t: t.randn(2.5), TypeError,
         r"randn\(\): argument 'size' \(position 1\) must be tuple of ints, not float"),
    call("randn_float_2nd", lambda t: t.randn(2, 2.5), TypeError,
         r"randn\(\): argument 'size'.*float"),
    call("rand_float", lambda t: t.rand(1.0), TypeError, r"rand\(\).*not float"),
    call("zeros_float", lambda t: t.zeros(2.5), TypeError, r"zeros\(\).*not float"),
    call("ones_float_tuple", lambda t: t.ones((2, 2.0)), TypeError, r"ones\(\).*float"),
    call("empty_float", lambda t: t.empty(3.0), TypeError, r"empty\(\).*not float"),
    call("zeros_str", lambda t: t.zeros("a"), TypeError, r"zeros\(\).*not str"),
    call("zeros_none", lambda t: t.zeros(None), TypeError, r"zeros\(\).*NoneType"),
    call("zeros_bool", lambda t: t.zeros(True), TypeError, r"zeros\(\).*not bool"),
    call("full_float_size", lambda t: t.full((2.5,), 1.0), TypeError,
         r"full\(\).*tuple of ints.*float"),
    call("zeros_negative", lambda t: t.zeros(-1), RuntimeError,
         "zeros: Dimension size must be non-negative"),
    call("zeros_negative_2nd", lambda t: t.zeros(2, -1), RuntimeError,
         "zeros: Dimension size must be non-negative"),
    call("ones_negative", lambda t: t.ones(-1), RuntimeError,
         r"Trying to create tensor with negative dimension -1: \[-1\]"),
    call("empty_negative", lambda t: t.empty(2, -3), RuntimeError,
         r"negative dimension -3: \[2, -3\]"),
    call("rand_negative", lambda t: t.rand(-1), RuntimeError, "negative dimension -1"),
    call("randn_negative", lambda t: t.randn(3, -2), RuntimeError, r"negative dimension -2"),
    call("full_negative", lambda t: t.full((-1,), 1.0), RuntimeError, "negative dimension -1"),
    call("randint_negative", lambda t: t.randint(0, 5, (-1,)), RuntimeError,
         "negative dimension -1"),
    call("randint_float_size", lambda t: t.randint(0, 5, (2.5,)), TypeError, "float"),
    call("randint_bounds", lambda t: t.randint(5, 2, (2,)), RuntimeError,
         "expects 'from' to be less than 'to', but got from=5 >= to=2"),
    call("randperm_negative", lambda t: t.randperm(-1), RuntimeError, "negative dimension -1"),
    call("eye_negative", lambda t: t.eye(-1), RuntimeError, "n must be greater or equal to 0"),
    call("eye_negative_m", lambda t: t.eye(2, -1), RuntimeError,
         "m must be greater or equal to 0"),
    call("arange_wrong_sign", lambda t: t.arange(0, 5, -1), RuntimeError,
         "upper bound and lower bound inconsistent with step sign"),
    call("arange_wrong_sign_down", lambda t: t.arange(5, 0, 1), RuntimeError,
         "inconsistent with step sign"),
    call("arange_float_wrong_sign", lambda t: t.arange(0.0, 1.0, -0.5), RuntimeError,
         "inconsistent with step sign"),
    call("arange_zero_step", lambda t: t.arange(0, 5, 0), RuntimeError, "step must be nonzero"),
    call("arange_nan", lambda t: t.arange(0, float("nan")), RuntimeError,
         "unsupported range: 0 -> nan"),
    call("arange_inf", lambda t: t.arange(0, float("inf")), RuntimeError,
         "unsupported range: 0 -> inf"),
    call("linspace_negative", lambda t: t.linspace(0, 1, -1), RuntimeError,
         "number of steps must be non-negative"),
    call("ragged", lambda t: t.tensor([[1, 2], [1, 2, 3]]), ValueError,
         r"expected sequence of length 2 at dim 1 \(got 3\)"),
    call("ragged_deep", lambda t: t.tensor([[[1, 2]], [[1, 2, 3]]]), ValueError,
         r"expected sequence of length 2 at dim 2 \(got 3\)"),
    call("ragged_rows", lambda t: t.tensor([[1, 2], [3, 4], [5]]), ValueError,
         r"length 2 at dim 1 \(got 1\)"),
    call("ragged_dtype", lambda t: t.tensor([[1.0], [1.0, 2.0]], dtype=t.float64), ValueError,
         r"length 1 at dim 1 \(got 2\)"),
    call("ragged_scalar", lambda t: t.tensor([[1, 2], 3]), TypeError, "not a sequence"),
    call("tensor_none", lambda t: t.tensor([1, None]), RuntimeError,
         "Could not infer dtype of NoneType"),
    call("tensor_object", lambda t: t.tensor(object()), RuntimeError,
         "Could not infer dtype of object"),
    call("tensor_str", lambda t: t.tensor("abc"), TypeError, "invalid data type 'str'"),
    call("full_str_value", lambda t: t.full((2,), "a"), TypeError,
         "fill_value.*must be Number, not str"),
    call("normal_negative_std", lambda t: t.normal(0.0, -1.0, (2,)), RuntimeError,
         "normal expects std >= 0.0"),
    call("zeros_dtype_str", lambda t: t.zeros(2, dtype="float32"), TypeError,
         r"zeros\(\): argument 'dtype' must be torch.dtype, not str"),
    call("ones_dtype_str", lambda t: t.ones(2, dtype="float64"), TypeError,
         r"ones\(\): argument 'dtype' must be torch.dtype, not str"),
    call("tensor_dtype_str", lambda t: t.tensor([1.0], dtype="float32"), TypeError,
         r"tensor\(\): argument 'dtype' must be torch.dtype, not str"),
    call("as_tensor_dtype_str", lambda t: t.as_tensor([1.0], dtype="float32"), TypeError,
         r"as_tensor\(\): argument 'dtype' must be torch.dtype, not str"),
    call("full_dtype_str", lambda t: t.full((2,), 1.0, dtype="float32"), TypeError,
         r"full\(\): argument 'dtype' must be torch.dtype, not str"),
    call("empty_dtype_str", lambda t: t.empty(2, dtype="int64"), TypeError, "not str"),
    call("arange_dtype_str", lambda t: t.arange(3, dtype="float32"), TypeError, "dtype"),
    call("linspace_dtype_str", lambda t: t.linspace(0, 1, 3, dtype="float32"), TypeError,
         "dtype"),
    call("eye_dtype_str", lambda t: t.eye(2, dtype="float32"), TypeError, "dtype"),
    call("rand_dtype_str", lambda t: t.rand(2, dtype="float32"), TypeError, "dtype"),
    call("randn_dtype_str", lambda t: t.randn(2, dtype="float32"), TypeError, "dtype"),
    call("randint_dtype_str", lambda t: t.randint(0, 3, (2,), dtype="int64"), TypeError,
         "dtype"),
    call("randperm_dtype_str", lambda t: t.randperm(3, dtype="int64"), TypeError, "dtype"),
    unary("zeros_like_dtype_str", lambda t, x: t.zeros_like(x, dtype="float64"), TypeError,
          r"zeros_like\(\): argument 'dtype' must be torch.dtype, not str", 2),
    unary("full_like_dtype_str", lambda t, x: t.full_like(x, 1, dtype="float64"), TypeError,
          r"full_like\(\): argument 'dtype' must be torch.dtype, not str", 2),
    unary("new_zeros_dtype_str", lambda t, x: x.new_zeros(2, dtype="float64"), TypeError,
          r"new_zeros\(\): argument 'dtype' must be torch.dtype, not str", 2),
    unary("new_tensor_dtype_str", lambda t, x: x.new_tensor([1], dtype="float64"), TypeError,
          r"new_tensor\(\): argument 'dtype' must be torch.dtype, not str", 2),
    unary("to_dtype_str", lambda t, x: x.to(dtype="float64"), TypeError, "dtype", 2),
    unary("to_float_str", lambda t, x: x.to("float"), RuntimeError, "float", 2),
    unary("to_double_str", lambda t, x: x.to("double"), RuntimeError, "double", 2),
    call("full_int_size", lambda t: t.full(3, 1.0), TypeError,
         r"full\(\): argument 'size' \(position 1\) must be tuple of ints, not int"),
    unary("type_legacy_name", lambda t, x: x.type("float"), ValueError,
          "invalid type: 'float'", 2),
    call("randn_long", lambda t: t.randn(2, dtype=t.long), NotImplementedError,
         "\"normal_kernel_cpu\" not implemented for 'Long'"),
    unary("new_zeros_negative", lambda t, x: x.new_zeros(-1), RuntimeError,
          "negative dimension -1", 2),
    unary("new_ones_float", lambda t, x: x.new_ones(2.5), TypeError,
          r"new_ones\(\).*not float", 2),
    unary("multinomial_negative", lambda t, x: t.multinomial(x - 1, 1), RuntimeError,
          "probability tensor contains either `inf`, `nan` or element < 0", 3),
    unary("multinomial_too_many", lambda t, x: t.multinomial(x + 1, 4), RuntimeError,
          "cannot sample n_sample > prob_dist.size", 3),
    unary("bernoulli_p", lambda t, x: t.bernoulli(x + 1.5), RuntimeError,
          r"Expected p_in >= 0 && p_in <= 1", 2),

    # ---- indexing and assignment ----------------------------------------------------------------
    binary("setitem_shape", lambda t, x, y: x.__setitem__(0, y), RuntimeError,
           r"expanded size of the tensor \(3\) must match the existing size \(2\) at "
           r"non-singleton dimension 0.  Target sizes: \[3\].  Tensor sizes: \[2\]", (2, 3), (2,)),
    binary("setitem_all_shape", lambda t, x, y: x.__setitem__(slice(None), y), RuntimeError,
           r"Target sizes: \[2, 3\].  Tensor sizes: \[3, 3\]", (2, 3), (3, 3)),
    binary("setitem_ellipsis_shape", lambda t, x, y: x.__setitem__(Ellipsis, y), RuntimeError,
           r"expanded size of the tensor \(3\) must match the existing size \(4\)", (2, 3), (4,)),
    Row("setitem_shape_recorded", RuntimeError, r"Target sizes: \[3\].  Tensor sizes: \[2\]",
        lambda t: (lambda x, y: ((lambda: x.__setitem__(0, y)), [x, y]))(
            _leaf(t, 2, 3).clone(), _leaf(t, 2, requires_grad=True))),
    binary("setitem_advanced_shape", lambda t, x, y: x.__setitem__(
        t.tensor([0, 1]), y), RuntimeError, "shape mismatch", (2, 3), (4,)),
    unary("setitem_list", lambda t, x: x.__setitem__(0, [1.0, 2.0]), TypeError,
          "can't assign a list to a torch", 2, 3),
    unary("setitem_index", lambda t, x: x.__setitem__(5, 1.0), IndexError,
          "index 5 is out of bounds for dimension 0 with size 2", 2, 3),
    unary("getitem_index", lambda t, x: x[5], IndexError,
          "index 5 is out of bounds for dimension 0 with size 2", 2, 3),
    unary("getitem_negative", lambda t, x: x[-3], IndexError,
          "index -3 is out of bounds for dimension 0 with size 2", 2, 3),
    unary("getitem_too_many", lambda t, x: x[0, 0, 0], IndexError,
          "too many indices for tensor of dimension 2", 2, 3),
    unary("getitem_float", lambda t, x: x[1.5], IndexError,
          "only integers, slices", 2, 3),
    unary("getitem_mask_shape", lambda t, x: x[t.tensor([True, False, True])], IndexError,
          r"shape of the mask \[3\] at index 0 does not match the shape of the indexed tensor "
          r"\[2, 3\]", 2, 3),
    unary("getitem_long_oob", lambda t, x: x[t.tensor([0, 5])], IndexError,
          "index 5 is out of bounds for dimension 0 with size 2", 2, 3),
    unary("getitem_float_tensor", lambda t, x: x[t.tensor([0.0, 1.0])], IndexError,
          "tensors used as indices must be long, int, byte or bool tensors", 2, 3),
    unary("gather_oob", lambda t, x: t.gather(x, 0, t.tensor([[5]])), RuntimeError,
          "index 5 is out of bounds for dimension 0 with size 2", 2, 3),
    unary("gather_float_index", lambda t, x: t.gather(x, 0, t.tensor([[0.0]])), RuntimeError,
          r"gather\(\): Expected dtype int(32/int)?64 for index", 2, 3),
    unary("index_select_oob", lambda t, x: t.index_select(x, 0, t.tensor([2])), IndexError,
          "index out of range in self", 2, 3),
    unary("scatter_oob", lambda t, x: x.scatter(0, t.tensor([[5]]), 1.0), RuntimeError,
          "index 5 is out of bounds for dimension 0 with size 2", 2, 3),
    binary("index_add_dtype", lambda t, x, y: x.index_add(0, t.tensor([0]), y), RuntimeError,
           r"index_add_?\(\): self \(Float\) and source \(Double\) must have the same scalar "
           "type", (3,), (1,), db=F64),
    unary("masked_fill_float_mask", lambda t, x: x.masked_fill(x, 1.0), RuntimeError,
          "masked_fill_ only supports boolean masks, but got mask with dtype float", 2, 3),
    binary("masked_scatter_short", lambda t, x, y: x.masked_scatter(x >= 0, y), RuntimeError,
           "Number of elements of source < number of ones in mask", (3,), (2,)),

    unary("index_select_float_index", lambda t, x: t.index_select(x, 0, t.tensor([0.0])),
          RuntimeError, r"index_select\(\): Expected dtype int32 or int64 for index", 2, 3),
    unary("index_select_2d_index", lambda t, x: t.index_select(x, 0, t.tensor([[0]])),
          IndexError, r"index_select\(\): Index is supposed to be a vector", 2, 3),
    unary("index_select_negative", lambda t, x: t.index_select(x, 0, t.tensor([-1])),
          IndexError, "index out of range in self", 2, 3),
    unary("gather_index_ndim", lambda t, x: t.gather(x, 1, t.tensor([0, 1])), RuntimeError,
          "Index tensor must have the same number of dimensions as input tensor", 2, 3),
    unary("gather_negative", lambda t, x: t.gather(x, 1, t.tensor([[-1]])), RuntimeError,
          "index -1 is out of bounds for dimension 1 with size 3", 2, 3),
    unary("scatter_float_index", lambda t, x: x.scatter(0, t.tensor([[0.0]]), 1.0),
          RuntimeError, r"scatter\(\): Expected dtype int(32/int)?64 for index", 2, 3),
    unary("take_oob", lambda t, x: t.take(x, t.tensor([6])), IndexError,
          "out of range: tried to access index 6 on a tensor of 6 elements", 2, 3),
    unary("put_oob", lambda t, x: x.put(t.tensor([5]), t.ones(1)), IndexError,
          "out of range: tried to access index 5 on a tensor of 3 elements", 3),
    unary("index_fill_oob", lambda t, x: x.index_fill(0, t.tensor([5]), 1.0), IndexError,
          "index 5 is out of bounds for dimension 0 with size 3", 3),
    unary("index_copy_oob", lambda t, x: x.index_copy(0, t.tensor([5]), t.ones(1)), IndexError,
          r"index_copy_\(\): index 5 is out of bounds for dimension 0 with size 3", 3),
    unary("index_add_oob", lambda t, x: x.index_add(0, t.tensor([5]), t.ones(1)), IndexError,
          "index out of range in self", 3),
    unary("masked_fill_value_1d", lambda t, x: x.masked_fill(x > 0, t.ones(2)), RuntimeError,
          "masked_fill_ only supports a 0-dimensional value tensor, but got tensor with 1 "
          r"dimension\(s\)", 3),
    unary("select_oob", lambda t, x: x.select(1, 3), IndexError,
          r"select\(\): index 3 out of range for tensor of size \[2, 3\] at dimension 1", 2, 3),

    # ---- reshape, view, expand ----------------------------------------------------------------
    unary("reshape", lambda t, x: x.reshape(4, 2), RuntimeError,
          r"shape '\[4, 2\]' is invalid for input of size 6", 2, 3),
    unary("reshape_two_inferred", lambda t, x: x.reshape(-1, -1), RuntimeError,
          "only one dimension can be inferred", 2, 3),
    unary("reshape_negative", lambda t, x: x.reshape(-2, 3), RuntimeError,
          "invalid shape dimension -2", 2, 3),
    unary("reshape_inferred", lambda t, x: x.reshape(-1, 4), RuntimeError,
          r"shape '\[-1, 4\]' is invalid for input of size 6", 2, 3),
    unary("view", lambda t, x: x.view(4, 2), RuntimeError,
          r"shape '\[4, 2\]' is invalid for input of size 6", 2, 3),
    unary("view_noncontiguous", lambda t, x: x.t().view(6), RuntimeError,
          "view size is not compatible with input tensor's size and stride", 2, 3),
    unary("view_dtype_size", lambda t, x: x.view(t.float64), RuntimeError,
          "must be divisible by 2 to view Float as Double", 3),
    unary("expand", lambda t, x: x.expand(3, 3), RuntimeError,
          r"expanded size of the tensor \(3\) must match the existing size \(2\) at "
          r"non-singleton dimension 0.  Target sizes: \[3, 3\].  Tensor sizes: \[2, 3\]", 2, 3),
    unary("expand_fewer", lambda t, x: x.expand(3), RuntimeError,
          r"the number of sizes provided \(1\) must be greater or equal to the number of "
          r"dimensions in the tensor \(2\)", 2, 3),
    unary("expand_negative", lambda t, x: x.expand(-1, -2), RuntimeError,
          r"expanded size of the tensor \(-2\)", 2, 3),
    binary("expand_as", lambda t, x, y: x.expand_as(y), RuntimeError,
           "expanded size of the tensor", (2, 3), (3, 2)),
    unary("broadcast_to", lambda t, x: t.broadcast_to(x, (4, 3)), RuntimeError,
          r"expanded size of the tensor \(4\) must match the existing size \(2\)", 2, 3),
    unary("unflatten", lambda t, x: x.unflatten(0, (4, 2)), RuntimeError,
          r"unflatten: Provided sizes \[4, 2\] don't multiply up to the size of dim 0 \(6\)", 6),
    unary("permute_duplicate", lambda t, x: x.permute(0, 0), RuntimeError,
          "duplicate dims are not allowed", 2, 3),
    unary("permute_length", lambda t, x: x.permute(0), RuntimeError,
          "number of dimensions in the tensor input does not match the length of the desired "
          "ordering of dimensions", 2, 3),
    unary("transpose_dim", lambda t, x: x.transpose(0, 2), IndexError,
          r"Dimension out of range \(expected to be in range of \[-2, 1\], but got 2\)", 2, 3),
    unary("squeeze_dim", lambda t, x: x.squeeze(3), IndexError, "Dimension out of range", 2, 3),
    unary("unsqueeze_dim", lambda t, x: x.unsqueeze(4), IndexError,
          r"range of \[-3, 2\], but got 4", 2, 3),
    unary("flatten_dim", lambda t, x: x.flatten(0, 3), IndexError, "Dimension out of range",
          2, 3),
    unary("narrow", lambda t, x: x.narrow(1, 2, 3), RuntimeError,
          r"start \(2\) \+ length \(3\) exceeds dimension size \(3\)", 2, 3),
    unary("split_zero", lambda t, x: x.split(0), RuntimeError,
          "split_size can only be 0 if dimension size is 0", 2, 3),
    unary("chunk_zero", lambda t, x: x.chunk(0), RuntimeError,
          "chunk expects `chunks` to be greater than 0, got: 0", 2, 3),
    unary("repeat_few", lambda t, x: x.repeat(2), RuntimeError,
          "Number of dimensions of repeat dims can not be smaller than number of dimensions of "
          "tensor", 2, 3),
    unary("roll_shifts", lambda t, x: t.roll(x, (1, 2), (0,)), RuntimeError,
          "shifts and dimensions must align", 2, 3),
    unary("flip_duplicate", lambda t, x: t.flip(x, (0, 0)), RuntimeError,
          "dim 0 appears multiple times in the list of dims", 2, 3),
    unary("diag_3d", lambda t, x: t.diag(x), RuntimeError, "Supports 1D or 2D tensors. Got 3D",
          2, 2, 2),
    unary("trace_1d", lambda t, x: t.trace(x), RuntimeError,
          "trace: expected a matrix, but got tensor with dim 1", 3),
    unary("tril_1d", lambda t, x: t.tril(x), RuntimeError,
          "tril: input tensor must have at least 2 dimensions", 3),

    unary("squeeze_negative_dim", lambda t, x: x.squeeze(-3), IndexError,
          r"range of \[-2, 1\], but got -3", 2, 1),
    unary("unsqueeze_negative_dim", lambda t, x: x.unsqueeze(-3), IndexError,
          r"range of \[-2, 1\], but got -3", 2),
    unary("unbind_dim", lambda t, x: x.unbind(1), IndexError, r"range of \[-1, 0\], but got 1",
          2),
    unary("expand_smaller", lambda t, x: x.expand(1, 3), RuntimeError,
          r"expanded size of the tensor \(1\) must match the existing size \(2\) at "
          r"non-singleton dimension 0.  Target sizes: \[1, 3\].  Tensor sizes: \[2, 3\]", 2, 3),
    binary("view_as_sizes", lambda t, x, y: x.view_as(y), RuntimeError,
           r"shape '\[4\]' is invalid for input of size 6", (6,), (4,)),
    unary("flatten_dims_order", lambda t, x: x.flatten(1, 0), RuntimeError,
          r"flatten\(\) has invalid args: start_dim cannot come after end_dim", 2, 3),
    unary("split_sizes_sum", lambda t, x: x.split([2, 2]), RuntimeError,
          "split_with_sizes expects split_sizes to sum exactly to 5", 5),
    unary("chunk_negative", lambda t, x: x.chunk(-1), RuntimeError,
          "chunk expects `chunks` to be greater than 0, got: -1", 5),
    unary("movedim_repeated", lambda t, x: x.movedim((0, 0), (0, 1)), RuntimeError,
          r"movedim: repeated dim in `source` \(\[0, 0\]\)", 2, 3),
    unary("narrow_negative_length", lambda t, x: x.narrow(0, 0, -1), RuntimeError,
          r"narrow\(\): length must be non-negative", 5),
    unary("diag_embed_same_dims", lambda t, x: t.diag_embed(x, dim1=0, dim2=0), RuntimeError,
          "diagonal dimensions cannot be identical 0, 0", 3),
    binary("outer_2d", lambda t, x, y: t.outer(x, y), RuntimeError,
           "outer: Expected 1-D argument self, but got 2-D", (2, 2), (2,)),

    # ---- arguments PyTorch's parser refuses: sizes, ints, sequences of tensors ----------------
    unary("view_dtype_name", lambda t, x: x.view("float32"), TypeError,
          r"^view\(\) received an invalid combination of arguments - got \(str\), but expected one "
          r"of:\n \* \(torch.dtype dtype\)\n      didn't match because some of the arguments have "
          r"invalid types: \(!str!\)\n \* \(tuple of ints size\)\n      didn't match because some "
          r"of the arguments have invalid types: \(!str!\)\n$", 2, 3),
    unary("view_float_first", lambda t, x: x.view(2.0, 3), TypeError,
          r"^view\(\) received an invalid combination of arguments - got \(float, int\), but "
          r"expected one of:\n \* \(torch.dtype dtype\)\n \* \(tuple of ints size\)\n$", 2, 3),
    unary("view_float_tuple", lambda t, x: x.view((2.0, 3)), TypeError,
          r"(?s)got \(tuple\), .*invalid types: \(!tuple of \(float, int\)!\)\n \* \(tuple of ints "
          r"size\)", 2, 3),
    unary("view_float_list", lambda t, x: x.view([2.0, 3]), TypeError,
          r"(?s)got \(list\), .*invalid types: \(!list of \[float, int\]!\)", 2, 3),
    unary("view_float_second", lambda t, x: x.view(2, 3.0), TypeError,
          r"^view\(\): argument 'size' failed to unpack the object at pos 2 with error \"type must "
          r"be tuple of ints,but got float\"$", 2, 3),
    unary("reshape_float_first", lambda t, x: x.reshape(2.0, 3), TypeError,
          r"^reshape\(\) takes 1 positional argument but 2 were given$", 2, 3),
    unary("reshape_bool_first", lambda t, x: x.reshape(True, 6), TypeError,
          r"^reshape\(\) takes 1 positional argument but 2 were given$", 2, 3),
    unary("reshape_float_second", lambda t, x: x.reshape(2, 3.0), TypeError,
          r"^reshape\(\): argument 'shape' failed to unpack the object at pos 2 with error \"type "
          r"must be tuple of ints,but got float\"$", 2, 3),
    unary("reshape_float", lambda t, x: x.reshape(6.0), TypeError,
          r"^reshape\(\): argument 'shape' \(position 1\) must be tuple of ints, not float$", 2, 3),
    unary("reshape_float_tuple", lambda t, x: x.reshape((2.0, 3)), TypeError,
          r"^reshape\(\): argument 'shape' \(position 1\) must be tuple of ints, but found element "
          r"of type float at pos 0$", 2, 3),
    unary("reshape_tuple_float_second", lambda t, x: t.reshape(x, (2, 3.0)), TypeError,
          r"^reshape\(\): argument 'shape' failed to unpack the object at pos 2", 2, 3),
    unary("expand_float", lambda t, x: x.expand(2, 3.0), TypeError,
          r"^expand\(\): argument 'size' failed to unpack the object at pos 2", 2, 3),
    unary("repeat_float", lambda t, x: x.repeat(2.0, 3), TypeError,
          r"^repeat\(\) takes 1 positional argument but 2 were given$", 2, 3),
    unary("permute_float", lambda t, x: x.permute((0.0, 1)), TypeError,
          r"^permute\(\): argument 'dims' \(position 1\) must be tuple of ints, but found element "
          r"of type float at pos 0$", 2, 3),
    unary("tile_float", lambda t, x: x.tile(2, 1.0), TypeError,
          r"^tile\(\): argument 'dims' failed to unpack the object at pos 2", 2, 3),
    call("zeros_float_first", lambda t: t.zeros(2.0, 3), TypeError,
         r"^zeros\(\) takes 1 positional argument but 2 were given$"),
    call("ones_tuple_float_second", lambda t: t.ones((2, 3.0)), TypeError,
         r"^ones\(\): argument 'size' failed to unpack the object at pos 2 with error \"type must "
         r"be tuple of ints,but got float\"$"),
    unary("tril_float", lambda t, x: t.tril(x, 1.5), TypeError,
          r"^tril\(\): argument 'diagonal' \(position 2\) must be int, not float$", 2, 3),
    unary("triu_float", lambda t, x: t.triu(x, 1.5), TypeError,
          r"^triu\(\): argument 'diagonal' \(position 2\) must be int, not float$", 2, 3),
    unary("tril_bool", lambda t, x: t.tril(x, True), TypeError,
          r"^tril\(\): argument 'diagonal' \(position 2\) must be int, not bool$", 2, 3),
    unary("triu_numpy_float", lambda t, x: t.triu(x, np.float64(1)), TypeError,
          r"^triu\(\): argument 'diagonal' \(position 2\) must be int, not numpy.float64$", 2, 3),
    unary("tril_float_tensor", lambda t, x: t.tril(x, t.tensor(1.0)), TypeError,
          r"^tril\(\): argument 'diagonal' \(position 2\) must be int, not Tensor$", 2, 3),
    unary("triu_inplace_float", lambda t, x: x.triu_(1.5), TypeError,
          r"^triu_\(\): argument 'diagonal' \(position 1\) must be int, not float$", 2, 3),
    unary("tril_inplace_none", lambda t, x: x.tril_(None), TypeError,
          r"^tril_\(\): argument 'diagonal' \(position 1\) must be int, not NoneType$", 2, 3),
    unary("cat_tensor", lambda t, x: t.cat(x), TypeError,
          r"^cat\(\): argument 'tensors' \(position 1\) must be tuple of Tensors, not Tensor$",
          2, 3),
    unary("cat_tensor_dim", lambda t, x: t.cat(x, 1), TypeError,
          r"^cat\(\): argument 'tensors' \(position 1\) must be tuple of Tensors, not Tensor$",
          2, 3),
    call("cat_int", lambda t: t.cat(3), TypeError,
         r"^cat\(\): argument 'tensors' \(position 1\) must be tuple of Tensors, not int$"),
    unary("cat_number_element", lambda t, x: t.cat([x, 3]), TypeError,
          r"^expected Tensor as element 1 in argument 0, but got int$", 2, 3),
    unary("stack_tensor", lambda t, x: t.stack(x), TypeError,
          r"^stack\(\): argument 'tensors' \(position 1\) must be tuple of Tensors, not Tensor$",
          2, 3),
    unary("stack_list_element", lambda t, x: t.stack([x, [1.0]]), TypeError,
          r"^expected Tensor as element 1 in argument 0, but got list$", 2, 3),
    unary("hstack_tensor", lambda t, x: t.hstack(x), TypeError,
          r"^hstack\(\): argument 'tensors' \(position 1\) must be tuple of Tensors", 2, 3),
    unary("vstack_tensor", lambda t, x: t.vstack(x), TypeError,
          r"^vstack\(\): argument 'tensors' \(position 1\) must be tuple of Tensors", 2, 3),
    unary("dstack_tensor", lambda t, x: t.dstack(x), TypeError,
          r"^dstack\(\): argument 'tensors' \(position 1\) must be tuple of Tensors", 2, 3),
    unary("column_stack_tensor", lambda t, x: t.column_stack(x), TypeError,
          r"^column_stack\(\): argument 'tensors' \(position 1\) must be tuple of Tensors", 2, 3),
    binary("mv_length", lambda t, x, y: t.mv(x, y), RuntimeError,
           r"^size mismatch, got input \(2\), mat \(2x3\), vec \(4\)$", (2, 3), (4,)),
    binary("mv_length_and_dtype", lambda t, x, y: t.mv(x, y), RuntimeError,
           r"^size mismatch, got input \(2\), mat \(2x3\), vec \(4\)$", (2, 3), (4,), da=F64),
    unary("expand_leading_inferred", lambda t, x: x.expand(-1, 3), RuntimeError,
          r"^The expanded size of the tensor \(-1\) isn't allowed in a leading, non-existing "
          r"dimension 0$", 3),
    unary("expand_leading_inferred_1", lambda t, x: x.expand(2, -1, 3), RuntimeError,
          r"non-existing dimension 1$", 3),
    Row("linear_bias_size_3d", RuntimeError,
        r"Target sizes: \[10, 4\].  Tensor sizes: \[5\]$",
        lambda t: (lambda a, b, c: ((lambda: _F(t).linear(a, b, c)), [a, b, c]))(
            _leaf(t, 2, 5, 3), _leaf(t, 4, 3), _leaf(t, 5))),
    Row("linear_bias_size_1d", RuntimeError,
        r"Target sizes: \[1, 4\].  Tensor sizes: \[5\]$",
        lambda t: (lambda a, b, c: ((lambda: _F(t).linear(a, b, c)), [a, b, c]))(
            _leaf(t, 3), _leaf(t, 4, 3), _leaf(t, 5))),
    unary("pad_too_long", lambda t, x: _F(t).pad(x, (1, 2, 3, 4, 5, 6)), RuntimeError,
          r"^Padding length should be less than or equal to two times the input dimension but got "
          r"padding length 6 and input of dimension 2$", 2, 3),

    # ---- cat and stack ------------------------------------------------------------------------
    binary("cat_sizes", lambda t, x, y: t.cat([x, y]), RuntimeError,
           "Sizes of tensors must match except in dimension 0. Expected size 3 but got size 4 "
           "for tensor number 1 in the list", (2, 3), (2, 4)),
    binary("cat_dim", lambda t, x, y: t.cat([x, y], 2), IndexError,
           r"range of \[-2, 1\], but got 2", (2, 3), (2, 3)),
    binary("cat_ndim", lambda t, x, y: t.cat([x, y]), RuntimeError,
           "Tensors must have same number of dimensions: got 2 and 1", (2, 3), (3,)),
    binary("cat_0d", lambda t, x, y: t.cat([x.sum(), y.sum()]), RuntimeError,
           r"zero-dimensional tensor \(at position 0\) cannot be concatenated", (2,), (2,)),
    call("cat_empty", lambda t: t.cat([]), ValueError,
         "expected a non-empty list of Tensors"),
    binary("stack_sizes", lambda t, x, y: t.stack([x, y]), RuntimeError,
           r"stack expects each tensor to be equal size, but got \[2, 3\] at entry 0 and "
           r"\[2, 4\] at entry 1", (2, 3), (2, 4)),
    binary("stack_ndim", lambda t, x, y: t.stack([x, y]), RuntimeError,
           r"stack expects each tensor to be equal size, but got \[2\] at entry 0 and \[2, 1\] "
           "at entry 1", (2,), (2, 1)),
    call("stack_empty", lambda t: t.stack([]), RuntimeError,
         "stack expects a non-empty TensorList"),
    binary("stack_dim", lambda t, x, y: t.stack([x, y], 3), IndexError,
           r"range of \[-2, 1\], but got 3", (2,), (2,)),

    # ---- matmul family: shapes and dtypes -----------------------------------------------------
    binary("mm_int_float", lambda t, x, y: t.mm(x, y), RuntimeError,
           "expected m1 and m2 to have the same dtype, but got: long int != float", (2, 2),
           (2, 2), da=I64),
    binary("matmul_int_float", lambda t, x, y: x @ y, RuntimeError,
           "expected m1 and m2 to have the same dtype, but got: long int != float", (2, 2),
           (2, 2), da=I64),
    binary("matmul_float_double", lambda t, x, y: t.matmul(x, y), RuntimeError,
           "float != double", (2, 2), (2, 2), db=F64),
    binary("matmul_1d_1d", lambda t, x, y: x @ y, RuntimeError,
           "dot : expected both vectors to have same dtype, but found Long and Float", (2,),
           (2,), da=I64),
    binary("matmul_1d_2d", lambda t, x, y: x @ y, RuntimeError,
           "expected m1 and m2 to have the same dtype", (2,), (2, 3), da=I64),
    binary("matmul_2d_1d", lambda t, x, y: x @ y, RuntimeError,
           "addmv input tensors must have the same dtype, but got Double, Float, and Double",
           (2, 2), (2,), db=F64),
    binary("matmul_3d_3d", lambda t, x, y: x @ y, RuntimeError,
           "expected scalar type Double but found Float", (2, 2, 2), (2, 2, 2), da=F64),
    binary("matmul_3d_2d", lambda t, x, y: x @ y, RuntimeError,
           "expected m1 and m2 to have the same dtype, but got: float != double", (2, 2, 2),
           (2, 2), db=F64),
    binary("bmm_dtype", lambda t, x, y: t.bmm(x, y), RuntimeError,
           "expected scalar type Double but found Float", (1, 2, 2), (1, 2, 2), da=F64),
    binary("mv_dtype", lambda t, x, y: t.mv(x, y), RuntimeError,
           "addmv input tensors must have the same dtype, but got Float, Double, and Float",
           (2, 2), (2,), da=F64),
    binary("dot_dtype", lambda t, x, y: t.dot(x, y), RuntimeError,
           "dot : expected both vectors to have same dtype, but found Double and Float", (2,),
           (2,), da=F64),
    binary("inner_dtype", lambda t, x, y: t.inner(x, y), RuntimeError,
           "both inputs should have same dtype", (2,), (2,), da=F64),
    binary("tensordot_dtype", lambda t, x, y: t.tensordot(x, y), RuntimeError,
           "both inputs should have same dtype", (2, 2), (2, 2), da=F64),
    binary("einsum_dtype", lambda t, x, y: t.einsum("ij,jk->ik", x, y), RuntimeError,
           "expected scalar type Double but found Float", (2, 2), (2, 2), da=F64),
    binary("linear_dtype", lambda t, x, y: _F(t).linear(x, y), RuntimeError,
           "expected m1 and m2 to have the same dtype, but got: double != float", (2, 2),
           (2, 2), da=F64),
    Row("addmm_mat_dtypes", RuntimeError,
        "mat1 and mat2 must have the same dtype, but got Double and Float",
        lambda t: (lambda a, b, c: ((lambda: t.addmm(a, b, c)), [a, b, c]))(
            _leaf(t, 2, 2), _leaf(t, 2, 2, dtype=F64), _leaf(t, 2, 2))),
    Row("addmm_bias_dtype", RuntimeError,
        "self and mat2 must have the same dtype, but got Double and Float",
        lambda t: (lambda a, b, c: ((lambda: t.addmm(a, b, c)), [a, b, c]))(
            _leaf(t, 2, 2, dtype=F64), _leaf(t, 2, 2), _leaf(t, 2, 2))),
    Row("addmv_dtype", RuntimeError, "addmv input tensors must have the same dtype",
        lambda t: (lambda a, b, c: ((lambda: t.addmv(a, b, c)), [a, b, c]))(
            _leaf(t, 2), _leaf(t, 2, 2, dtype=F64), _leaf(t, 2))),
    Row("baddbmm_dtype", RuntimeError,
        "Input dtypes must be the same, got: input float, batch1: double, batch2: float",
        lambda t: (lambda a, b, c: ((lambda: t.baddbmm(a, b, c)), [a, b, c]))(
            _leaf(t, 1, 2, 2), _leaf(t, 1, 2, 2, dtype=F64), _leaf(t, 1, 2, 2))),
    Row("addbmm_dtype", RuntimeError, "self and mat2 must have the same dtype",
        lambda t: (lambda a, b, c: ((lambda: t.addbmm(a, b, c)), [a, b, c]))(
            _leaf(t, 2, 2, dtype=F64), _leaf(t, 1, 2, 2), _leaf(t, 1, 2, 2))),
    binary("mm_shapes", lambda t, x, y: t.mm(x, y), RuntimeError,
           r"mat1 and mat2 shapes cannot be multiplied \(2x3 and 2x3\)", (2, 3), (2, 3)),
    binary("matmul_shapes", lambda t, x, y: x @ y, RuntimeError,
           r"shapes cannot be multiplied \(2x3 and 2x3\)", (2, 3), (2, 3)),
    binary("matmul_0d", lambda t, x, y: t.matmul(x.sum(), y), RuntimeError,
           "both arguments to matmul need to be at least 1D, but they are 0D and 1D", (2,), (2,)),
    binary("bmm_2d", lambda t, x, y: t.bmm(x, y), RuntimeError, "batch1 must be a 3D tensor",
           (2, 3), (3, 2)),
    binary("bmm_batch", lambda t, x, y: t.bmm(x, y), RuntimeError,
           r"Expected size for first two dimensions of batch2 tensor to be: \[2, 3\] but got: "
           r"\[3, 3\]", (2, 2, 3), (3, 3, 2)),
    binary("dot_sizes", lambda t, x, y: t.dot(x, y), RuntimeError,
           r"inconsistent tensor size, expected tensor \[2\] and src \[3\]", (2,), (3,)),
    binary("dot_2d", lambda t, x, y: t.dot(x, y), RuntimeError,
           "1D tensors expected, but got 2D and 2D tensors", (2, 2), (2, 2)),
    binary("cross_length", lambda t, x, y: t.linalg.cross(x, y), RuntimeError,
           "inputs dimension -1 must have length 3", (2,), (2,)),
    unary("inv_nonsquare", lambda t, x: t.linalg.inv(x), RuntimeError,
          "A must be batches of square matrices, but they are 2 by 3 matrices", 2, 3),
    unary("inv_int", lambda t, x: t.linalg.inv(x), RuntimeError,
          "Expected a floating point or complex tensor as input. Got Long", 2, 2, dtype=I64),
    unary("det_nonsquare", lambda t, x: t.linalg.det(x), RuntimeError,
          "square matrices", 2, 3),

    # ---- reductions' dims ---------------------------------------------------------------------
    unary("sum_dim", lambda t, x: x.sum(2), IndexError,
          r"range of \[-2, 1\], but got 2", 2, 3),
    unary("sum_dim_negative", lambda t, x: x.sum(-3), IndexError, "but got -3", 2, 3),
    unary("sum_dim_repeated", lambda t, x: x.sum((0, 0)), RuntimeError,
          "appears multiple times in the list of dims", 2, 3),
    unary("mean_int", lambda t, x: x.mean(), RuntimeError,
          r"mean\(\): could not infer output dtype", 2, dtype=I64),
    unary("max_dim", lambda t, x: x.max(2), IndexError, "Dimension out of range", 2, 3),
    unary("argmax_dim", lambda t, x: x.argmax(5), IndexError, "but got 5", 2, 3),
    unary("softmax_dim", lambda t, x: t.softmax(x, 2), IndexError, "but got 2", 2, 3),
    unary("cumsum_dim", lambda t, x: t.cumsum(x, 2), IndexError, "but got 2", 2, 3),
    unary("prod_dim", lambda t, x: x.prod(3), IndexError, "but got 3", 2, 3),
    unary("std_int", lambda t, x: x.std(), RuntimeError,
          "std and var only support floating point and complex dtypes", 3, dtype=I64),
    unary("max_empty", lambda t, x: x.max(), RuntimeError,
          r"max\(\): Expected reduction dim to be specified for input.numel\(\) == 0", 0),
    unary("amax_empty", lambda t, x: x.amax(), RuntimeError,
          r"amax\(\): Expected reduction dim to be specified", 2, 0),
    unary("argmax_empty", lambda t, x: x.argmax(), IndexError,
          r"argmax\(\): Expected reduction dim to be specified for input.numel\(\) == 0", 0),
    unary("argmin_empty", lambda t, x: x.argmin(), IndexError,
          r"argmin\(\): Expected reduction dim to be specified", 2, 0),
    unary("min_empty_dim", lambda t, x: x.min(1), IndexError,
          r"min\(\): Expected reduction dim 1 to have non-zero size", 2, 0),
    unary("amax_empty_dim", lambda t, x: x.amax(-1), IndexError,
          r"amax\(\): Expected reduction dim 1 to have non-zero size", 2, 0),
    unary("argmax_empty_dim", lambda t, x: x.argmax(1), IndexError,
          r"argmax\(\): Expected reduction dim 1 to have non-zero size", 2, 0),
    unary("topk_negative_k", lambda t, x: x.topk(-1), RuntimeError,
          "selected index k out of range", 3),
    unary("topk_dim", lambda t, x: x.topk(1, dim=2), IndexError,
          r"range of \[-1, 0\], but got 2", 3),
    unary("sort_dim", lambda t, x: x.sort(dim=1), IndexError, r"range of \[-1, 0\], but got 1",
          2),
    unary("var_dim", lambda t, x: x.var(1), IndexError, r"range of \[-1, 0\], but got 1", 2),
    unary("softmax_long", lambda t, x: t.softmax(x, 0), NotImplementedError,
          "\"softmax_lastdim_kernel_impl\" not implemented for 'Long'", 3, dtype=I64),
    unary("log_softmax_long", lambda t, x: _F(t).log_softmax(x, 0), NotImplementedError,
          "\"log_softmax_lastdim_kernel_impl\" not implemented for 'Long'", 3, dtype=I64),
    unary("topk_k", lambda t, x: x.topk(4), RuntimeError, "selected index k out of range", 3),
    unary("kthvalue_k", lambda t, x: x.kthvalue(4), RuntimeError,
          "selected number k out of range for dimension 0", 3),

    # ---- elementwise dtype rules and in-place results -----------------------------------------
    binary("add_shapes", lambda t, x, y: x + y, RuntimeError,
           r"size of tensor a \(3\) must match the size of tensor b \(2\) at non-singleton "
           "dimension 1", (2, 3), (2,)),
    binary("add_inplace_broadcast", lambda t, x, y: x.add_(y), RuntimeError,
           r"output with shape \[3\] doesn't match the broadcast shape \[2, 3\]", (3,), (2, 3)),
    binary("add_inplace_dtype", lambda t, x, y: x.add_(y), RuntimeError,
           "result type (Float|float\\d+) can't be cast to the desired output type "
           "(Long|int64)", (3,), (3,), da=I64),
    unary("mul_inplace_bool", lambda t, x: (x > 0).mul_(2), RuntimeError,
          "can't be cast to the desired output type", 3),
    binary("copy_sizes", lambda t, x, y: x.copy_(y), RuntimeError,
           r"size of tensor a \(3\) must match the size of tensor b \(2\)", (3,), (2,)),
    unary("pow_int_negative", lambda t, x: x ** -1, RuntimeError,
          "Integers to negative integer powers are not allowed", 2, dtype=I64),
    unary("div_int_zero_floor", lambda t, x: t.div(x, t.zeros_like(x), rounding_mode="floor"),
          RuntimeError, "ZeroDivisionError", 2, dtype=I64),
    unary("div_rounding_mode", lambda t, x: t.div(x, 2, rounding_mode="bad"), RuntimeError,
          "div expected rounding_mode to be one of None, 'trunc', or 'floor'", 2),
    binary("bitwise_float", lambda t, x, y: x & y, NotImplementedError,
           "\"bitwise_and_cpu\" not implemented for 'Float'", (2,), (2,)),
    unary("lshift_float", lambda t, x: x << 1, NotImplementedError,
          "\"lshift_cpu\" not implemented for 'Float'", 2),
    unary("neg_bool", lambda t, x: -(x > 0), RuntimeError,
          "Negation, the `-` operator, on a bool tensor is not supported", 2),
    unary("sub_bool", lambda t, x: (x > 0) - (x > 1), RuntimeError,
          "Subtraction, the `-` operator, with two bool tensors is not supported", 2),
    unary("clamp_no_bounds", lambda t, x: t.clamp(x), RuntimeError,
          "At least one of 'min' or 'max' must not be None", 2),
    unary("where_float_condition", lambda t, x: t.where(x, x, 0.0), RuntimeError,
          "where expected condition to be a boolean tensor, but got a tensor with dtype Float", 3),
    unary("where_long_condition", lambda t, x: t.where(x, 1.0, 0.0), RuntimeError,
          "condition to be a boolean tensor, but got a tensor with dtype Long", 3, dtype=I64),
    binary("where_method_condition", lambda t, x, y: x.where(y, x), RuntimeError,
           "where expected condition to be a boolean tensor", (2, 3), (3,), db=F64),

    # ---- autograd entry points ------------------------------------------------------------------
    unary("backward_nonscalar", lambda t, x: (x * 2).backward(), RuntimeError,
          "grad can be implicitly created only for scalar outputs", 2, requires_grad=True),
    unary("backward_no_grad", lambda t, x: x.sum().backward(), RuntimeError,
          "element 0 of tensors does not require grad and does not have a grad_fn", 2),
    unary("backward_shape", lambda t, x: (x * 2).backward(t.ones(3)), RuntimeError,
          r"Mismatch in shape: grad_output\[0\] has a shape of torch.Size\(\[3\]\) and "
          r"output\[0\] has a shape of torch.Size\(\[2\]\)", 2, requires_grad=True),

    # ---- losses' targets ------------------------------------------------------------------------
    Row("bce_target_above", RuntimeError, "all elements of target should be between 0 and 1",
        lambda t: (lambda x, y: ((lambda: _F(t).binary_cross_entropy(x, y)), [x, y]))(
            t.full((2,), 0.5, requires_grad=True), t.tensor([0.0, 2.0]))),
    Row("bce_target_below", RuntimeError, "all elements of target should be between 0 and 1",
        lambda t: (lambda x, y: ((lambda: _F(t).binary_cross_entropy(x, y)), [x, y]))(
            t.full((2,), 0.5), t.tensor([0.0, -1e-9]))),
    Row("bce_target_nan", RuntimeError, "all elements of target should be between 0 and 1",
        lambda t: (lambda x, y: ((lambda: _F(t).binary_cross_entropy(x, y)), [x, y]))(
            t.full((2,), 0.5), t.tensor([0.0, float("nan")]))),
    Row("bce_input_above", RuntimeError, "all elements of input should be between 0 and 1",
        lambda t: (lambda x, y: ((lambda: _F(t).binary_cross_entropy(x, y)), [x, y]))(
            t.tensor([0.5, 1.5]), t.tensor([0.0, 2.0]))),
    Row("bce_input_nan", RuntimeError, "all elements of input should be between 0 and 1",
        lambda t: (lambda x, y: ((lambda: _F(t).binary_cross_entropy(x, y)), [x, y]))(
            t.tensor([0.5, float("nan")]), t.tensor([0.0, 1.0]))),
    binary("bce_sizes", lambda t, x, y: _F(t).binary_cross_entropy(x.sigmoid(), y), ValueError,
           r"Using a target size \(torch.Size\(\[3\]\)\) that is different to the input size "
           r"\(torch.Size\(\[2\]\)\)", (2,), (3,)),
    binary("bce_logits_sizes", lambda t, x, y: _F(t).binary_cross_entropy_with_logits(x, y),
           ValueError, r"Target size \(torch.Size\(\[3\]\)\) must be the same as input size",
           (2,), (3,)),
    unary("nll_target_oob", lambda t, x: _F(t).nll_loss(x, t.tensor([0, 3])), IndexError,
          "Target 3 is out of bounds", 2, 3),
    unary("nll_target_negative", lambda t, x: _F(t).nll_loss(x, t.tensor([0, -5])), IndexError,
          "Target -5 is out of bounds", 2, 3),
    unary("ce_target_oob", lambda t, x: _F(t).cross_entropy(x, t.tensor([0, 3])), IndexError,
          "Target 3 is out of bounds", 2, 3),
    unary("ce_target_dtype", lambda t, x: _F(t).cross_entropy(x, t.tensor([0.0, 1.0])),
          RuntimeError, "expected target dtype to be Long or Byte, but got Float", 2, 3),
    unary("ce_batch", lambda t, x: _F(t).cross_entropy(x, t.tensor([0, 1, 2])), ValueError,
          r"Expected input batch_size \(2\) to match target batch_size \(3\)", 2, 3),
    unary("ce_multi_target", lambda t, x: _F(t).cross_entropy(x, t.zeros(2, 2)), RuntimeError,
          "0D or 1D target tensor expected, multi-target not supported", 2, 3),
    unary("nll_1d_target_size", lambda t, x: _F(t).nll_loss(x, t.tensor([0, 1])), ValueError,
          "For 1D input, 1D target must have size 1, but got target size: 2", 3),
    unary("ce_1d_target_empty", lambda t, x: _F(t).cross_entropy(x, t.tensor([], dtype=t.long)),
          ValueError, "For 1D input, 1D target must have size 1, but got target size: 0", 3),
    unary("nll_1d_target_float", lambda t, x: _F(t).nll_loss(x, t.tensor([0.0])), RuntimeError,
          "expected target dtype to be Long or Byte, but got Float", 3),
    unary("nll_1d_target_oob", lambda t, x: _F(t).nll_loss(x, t.tensor([5])), IndexError,
          "Target 5 is out of bounds", 3),
    unary("nll_1d_target_2d", lambda t, x: _F(t).nll_loss(x, t.tensor([[0]])), RuntimeError,
          "0D or 1D target tensor expected, multi-target not supported", 3),
    unary("ce_1d_target_smoothing", lambda t, x: _F(t).cross_entropy(
        x, t.tensor([1]), label_smoothing=0.1), RuntimeError,
        r"output with shape \[\] doesn't match the broadcast shape \[1\]", 3, requires_grad=True),
    unary("nll_2d_target_0d", lambda t, x: _F(t).nll_loss(x, t.tensor(0)), ValueError,
          r"Expected input batch_size \(2\) to match target batch_size \(0\)", 2, 3),
    unary("ce_2d_target_rows", lambda t, x: _F(t).cross_entropy(x, t.tensor([[0, 1]])),
          ValueError, r"Expected input batch_size \(2\) to match target batch_size \(1\)", 2, 3),
    unary("nll_3d_target_batch", lambda t, x: _F(t).nll_loss(x, t.zeros(3, 4, dtype=t.long)),
          ValueError, r"Expected input batch_size \(2\) to match target batch_size \(3\)",
          2, 3, 4),
    unary("nll_empty_batch_target_0d", lambda t, x: _F(t).nll_loss(x, t.tensor(0)), IndexError,
          "Dimension specified as 0 but tensor has no dimensions", 0, 3),
    unary("ce_0d", lambda t, x: _F(t).cross_entropy(x.sum(), t.tensor(0)), RuntimeError,
          "Expected floating point type for target with class probabilities, got Long", 2),
    unary("ce_0d_float_target", lambda t, x: _F(t).cross_entropy(x.sum(), t.tensor(0.5)),
          IndexError, "Dimension specified as 1 but tensor has no dimensions", 2),
    unary("ce_bool_probabilities", lambda t, x: _F(t).cross_entropy(x, x > 0), RuntimeError,
          "Expected floating point type for target with class probabilities, got Bool", 2, 3),
    binary("linear_shapes", lambda t, x, y: _F(t).linear(x, y), RuntimeError,
           r"mat1 and mat2 shapes cannot be multiplied \(2x3 and 2x4\)", (2, 3), (4, 2)),
    Row("linear_bias_size", RuntimeError,
        r"The expanded size of the tensor \(4\) must match the existing size \(3\) at "
        r"non-singleton dimension 1.  Target sizes: \[2, 4\].  Tensor sizes: \[3\]",
        lambda t: (lambda a, b, c: ((lambda: _F(t).linear(a, b, c)), [a, b, c]))(
            _leaf(t, 2, 3), _leaf(t, 4, 3), _leaf(t, 3))),
    binary("conv2d_channels", lambda t, x, y: _F(t).conv2d(x, y), RuntimeError,
           r"Given groups=1, weight of size \[2, 2, 3, 3\], expected input\[1, 3, 5, 5\] to have "
           "2 channels, but got 3 channels instead", (1, 3, 5, 5), (2, 2, 3, 3)),
    binary("conv1d_channels", lambda t, x, y: _F(t).conv1d(x, y), RuntimeError,
           "expected input\\[1, 3, 5\\] to have 2 channels, but got 3 channels", (1, 3, 5),
           (2, 2, 3)),
    binary("conv2d_2d_input", lambda t, x, y: _F(t).conv2d(x, y), RuntimeError,
           r"Expected 3D \(unbatched\) or 4D \(batched\) input to conv2d, but got input of "
           r"size: \[5, 5\]", (5, 5), (2, 1, 3, 3)),
    binary("conv2d_kernel_too_big", lambda t, x, y: _F(t).conv2d(x, y), RuntimeError,
           "Kernel size can't be greater than actual input size", (1, 1, 2, 2), (1, 1, 3, 3)),
    unary("max_pool2d_too_small", lambda t, x: _F(t).max_pool2d(x, 3), RuntimeError,
          r"Given input size: \(1x2x2\). Calculated output size: \(1x0x0\). Output size is too "
          "small", 1, 1, 2, 2),
    unary("avg_pool2d_padding", lambda t, x: _F(t).avg_pool2d(x, 2, padding=2), RuntimeError,
          "pad should be at most half of effective kernel size", 1, 1, 4, 4),
    unary("layer_norm_shape", lambda t, x: _F(t).layer_norm(x, (2,)), RuntimeError,
          r"Given normalized_shape=\[2\], expected input with shape \[\*, 2\]", 2, 3),
    unary("batch_norm_running_mean", lambda t, x: _F(t).batch_norm(x, t.zeros(4), t.ones(4)),
          RuntimeError, "running_mean should contain 3 elements not 4", 2, 3),
    unary("dropout_p", lambda t, x: _F(t).dropout(x, p=1.5), ValueError,
          "dropout probability has to be between 0 and 1, but got 1.5", 3),
    unary("pad_odd_length", lambda t, x: _F(t).pad(x, (1,)), RuntimeError,
          "Padding length must be divisible by 2", 2, 3),
    binary("mse_sizes", lambda t, x, y: _F(t).mse_loss(x, y), RuntimeError,
           r"size of tensor a \(2\) must match the size of tensor b \(3\)", (2,), (3,)),
    unary("one_hot_float", lambda t, x: _F(t).one_hot(x, 3), RuntimeError,
          "one_hot is only applicable to index tensor of type LongTensor", 2),
    unary("one_hot_negative_classes", lambda t, x: _F(t).one_hot(x, -2), RuntimeError,
          "Class values must be smaller than num_classes", 2, dtype=I64),
    unary("embedding_negative", lambda t, x: _F(t).embedding(t.tensor([-1]), x), IndexError,
          "index out of range in self", 3, 2),
    unary("one_hot_oob", lambda t, x: _F(t).one_hot(x, 3), RuntimeError,
          "Class values must be smaller than num_classes", 4, dtype=I64),
    unary("one_hot_negative", lambda t, x: _F(t).one_hot(x - 1, 3), RuntimeError,
          "Class values must be non-negative", 3, dtype=I64),
    unary("embedding_oob", lambda t, x: _F(t).embedding(t.tensor([5]), x), IndexError,
          "index out of range in self", 3, 2),
    unary("embedding_float_index", lambda t, x: _F(t).embedding(t.tensor([1.0]), x),
          RuntimeError, "Expected tensor for argument #1 'indices' to have one of the following "
          "scalar types: Long, Int", 3, 2),
]


def _snapshot(tensors: list) -> list:
    out = []
    for x in tensors:
        grad = x.grad
        out.append((np.array(x.detach().numpy(), copy=True), x.requires_grad, x._version,
                    None if grad is None else np.array(grad.detach().numpy(), copy=True)))
    return out


def test_the_table_has_a_hundred_rows():
    assert len(ROWS) >= 100
    assert len({r.id for r in ROWS}) == len(ROWS)


@pytest.mark.parametrize("row", ROWS, ids=[r.id for r in ROWS])
def test_refused_like_torch(row: Row):
    call_torch, _ = row.build(torch)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        with pytest.raises(Exception) as theirs:
            call_torch()
    assert theirs.type is row.error, f"torch raises {theirs.type.__name__}: {theirs.value}"

    call_ours, tensors = row.build(chainrule)
    before = _snapshot(tensors)
    with pytest.raises(row.error, match=row.match), warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # PyTorch's warnings, as torch's above
        call_ours()
    after = _snapshot(tensors)
    for (v0, r0, ver0, g0), (v1, r1, ver1, g1) in zip(before, after):
        np.testing.assert_array_equal(v1, v0)
        assert (r1, ver1) == (r0, ver0)
        assert (g0 is None) == (g1 is None)
        if g0 is not None:
            np.testing.assert_array_equal(g1, g0)


def test_a_valid_grad_is_accepted():
    x = chainrule.zeros(2, 3, requires_grad=True)
    g = chainrule.ones(2, 3)
    x.grad = g
    assert x.grad is g
    x.grad = None
    assert x.grad is None


def test_sizes_accept_what_torch_accepts():
    for lib in (torch, chainrule):
        assert tuple(lib.zeros(np.int64(2), lib.tensor(3)).shape) == (2, 3)
        assert tuple(lib.ones(lib.Size([2, 1]) if lib is torch else (2, 1)).shape) == (2, 1)
        assert tuple(lib.zeros([]).shape) == ()
        assert tuple(lib.zeros(0, 2).shape) == (0, 2)
        assert lib.arange(5, 0, -1).tolist() == [5, 4, 3, 2, 1]
        assert lib.arange(0, 0).tolist() == []


@pytest.mark.parametrize("fn", ["nll_loss", "cross_entropy"])
@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
@pytest.mark.parametrize("target", [1, -100], ids=["class", "ignored"])
def test_a_one_element_target_of_a_1d_input_is_its_class(fn, reduction, target):
    """PyTorch takes target (1,) of input (C,) as the 0-d target: same value and shape. Its
    backward then fails (a size mismatch); chainrule's gradient is the 0-d target's."""
    def run(lib, tgt):
        x = lib.tensor([0.1, -0.7, 0.4], dtype=lib.float64, requires_grad=True)
        return x, getattr(lib.nn.functional, fn)(x, tgt, reduction=reduction)

    _, want = run(torch, torch.tensor([target]))
    x, got = run(chainrule, chainrule.tensor([target]))
    assert tuple(got.shape) == tuple(want.shape) == ()
    np.testing.assert_allclose(got.detach().numpy(), want.detach().numpy(), rtol=1e-12,
                               equal_nan=True)
    x_t, want_0d = run(torch, torch.tensor(target))
    want_0d.sum().backward()
    got.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), x_t.grad.numpy(), rtol=1e-12, equal_nan=True)
    assert repr(x.grad) == repr(x_t.grad)  # an ignored target's gradient is +0, printed "0."


# ---- PyTorch's silent IEEE results: NumPy's floating-point warnings never leak -------------------


def _bce(t, x):
    return t.nn.functional.binary_cross_entropy(x.clamp(0, 1), t.ones_like(x))


IEEE = {
    "log": lambda t, x: t.log(x),
    "div": lambda t, x: x / (x * 0),
    "rdiv": lambda t, x: 1 / x,
    "sqrt": lambda t, x: t.sqrt(x),
    "pow": lambda t, x: x ** -0.5,
    "exp_overflow": lambda t, x: t.exp(x * 1000),
    "mul_overflow": lambda t, x: (x * 1e30) * 1e30,
    "inf_minus_inf": lambda t, x: (x / 0) - (x / 0),
    "atanh": lambda t, x: t.atanh(x),
    "acosh": lambda t, x: t.acosh(x),
    "bce_saturated": _bce,
    "log_softmax_inf": lambda t, x: t.log_softmax(x / 0, 0),
    "mean_empty": lambda t, x: x[:0].mean(),
    "prod_overflow": lambda t, x: (x * 1e30).prod(),
    "norm_overflow": lambda t, x: (x * 1e30).norm(),
    "remainder_zero": lambda t, x: t.remainder(x, 0.0),
    "cast_float32": lambda t, x: t.tensor([1e300, -1e300], dtype=t.float32),
    "cast_default": lambda t, x: t.tensor([1e300]),
    "log_inplace": lambda t, x: x.clone().log_(),
    "div_inplace": lambda t, x: x.clone().div_(0),
    "sqrt_inplace": lambda t, x: x.clone().sqrt_(),
}


def _ieee_input(t, requires_grad=False):
    x = t.tensor([0.0, -1.0, 1.0, 2.0], dtype=t.float32)
    return x.requires_grad_() if requires_grad else x


@pytest.mark.parametrize("name", sorted(IEEE))
def test_ieee_results_are_silent_and_equal_torch(name):
    fn = IEEE[name]
    want = fn(torch, _ieee_input(torch))
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # any warning, NumPy's RuntimeWarning included, fails
        got = fn(chainrule, _ieee_input(chainrule))
        text = repr(got)  # printing inf and nan computes their widths: silent too
    np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-6, atol=0, equal_nan=True)
    assert text == repr(want)


@pytest.mark.parametrize("name", ["log", "div", "rdiv", "sqrt", "pow", "atanh", "acosh",
                                  "bce_saturated", "log_softmax_inf", "exp_overflow"])
def test_ieee_gradients_are_silent_and_equal_torch(name):
    fn = IEEE[name]
    x_t = _ieee_input(torch, requires_grad=True)
    fn(torch, x_t).sum().backward()
    x = _ieee_input(chainrule, requires_grad=True)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        fn(chainrule, x).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), x_t.grad.numpy(), rtol=1e-6, atol=0,
                               equal_nan=True)


def test_the_host_programs_numpy_still_warns():
    chainrule.log(chainrule.zeros(1))
    with pytest.warns(RuntimeWarning, match="divide by zero encountered in log"):
        np.log(np.zeros(1))
    assert np.geterr()["divide"] == "warn"


def test_numpy_raise_mode_does_not_reach_chainrule():
    old = np.seterr(all="raise")
    try:
        x = chainrule.tensor([0.0, 1.0], requires_grad=True)
        y = chainrule.log(x)
        y.sum().backward()
        with pytest.raises(FloatingPointError):
            np.log(np.zeros(1))
    finally:
        np.seterr(**old)
    assert y[0].item() == -math.inf and x.grad[0].item() == math.inf


def test_kernels_in_threads_are_silent():
    import threading

    errors = []

    def work():
        try:
            for _ in range(200):
                chainrule.var(chainrule.log(chainrule.zeros(3)) / chainrule.zeros(3), 0)
        except Exception as err:  # noqa: BLE001 - reported below
            errors.append(err)

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        threads = [threading.Thread(target=work) for _ in range(4)]
        for th in threads:
            th.start()
        for th in threads:
            th.join()
    assert errors == []


def test_a_kernel_calling_apply_falls_back_to_quiet():
    from chainrule._quiet import quiet_run

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        out = quiet_run(lambda: chainrule.log(chainrule.zeros(1)))  # the context is busy
    assert out.item() == -math.inf
