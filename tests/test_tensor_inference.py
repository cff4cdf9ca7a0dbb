"""torch.tensor(list) with NumPy scalars inside: each element's own dtype, promoted as torch."""

import numpy as np
import pytest
import torch

import chainrule as cr

CASES = [
    [np.float64(1.0)], [np.float32(1), 2.0], [np.complex128(1j)], [1.0, np.float64(2)],
    [np.int32(1)], [np.float16(1), np.float32(2)], [np.int32(1), 5], [[np.float64(1)], [2.0]],
    [np.int64(3), np.float16(2)], [np.uint8(1), np.int8(2)], [True, np.int8(2)],
    [np.float32(1), 1j], [np.float64(1), np.complex64(1j)], [np.bool_(True), 2.5],
]


@pytest.mark.parametrize("default", ["float32", "float64"])
@pytest.mark.parametrize("values", CASES, ids=[str(i) for i in range(len(CASES))])
def test_dtype_and_values_as_torch(values, default):
    cr.set_default_dtype(getattr(cr, default))
    torch.set_default_dtype(getattr(torch, default))
    try:
        got, expected = cr.tensor(values), torch.tensor(values)
    finally:
        cr.set_default_dtype(cr.float32)
        torch.set_default_dtype(torch.float32)
    assert str(got.dtype) == str(expected.dtype)
    np.testing.assert_array_equal(got.numpy(), expected.numpy())
