"""UnaryOpFuzzer: one tensor ``x`` of 1 to 3 dims, sizes from 16 to 16M (powers of two one time
in five), sometimes strided and sometimes not contiguous, 4K to 32M elements."""

from __future__ import annotations

import math

from ...._backend import float32
from ..utils.fuzzer import FuzzedParameter, FuzzedTensor, Fuzzer, ParameterAlias  # noqa: F401
from ._dims import STEPS, dim_sizes

_MIN_DIM_SIZE = 16
_MAX_DIM_SIZE = 16 * 1024 ** 2
_POW_TWO_SIZES = tuple(2 ** i for i in range(int(math.log2(_MIN_DIM_SIZE)),
                                             int(math.log2(_MAX_DIM_SIZE)) + 1))


class UnaryOpFuzzer(Fuzzer):
    """Inputs for benchmarking a unary op: the tensor ``x`` and a ``random_value`` to seed
    what the benchmark draws itself."""

    def __init__(self, seed, dtype=float32, cuda=False) -> None:
        super().__init__(
            parameters=[
                FuzzedParameter("dim", distribution={1: 0.3, 2: 0.4, 3: 0.3}, strict=True),
                *dim_sizes(_MIN_DIM_SIZE, _MAX_DIM_SIZE, "pow2", list(_POW_TWO_SIZES),
                           (0.8, 0.2), special_first=False),
                [FuzzedParameter(f"x_step_{i}", distribution=STEPS) for i in range(3)],
                FuzzedParameter("random_value", minval=0, maxval=2 ** 32 - 1,
                                distribution="uniform"),
            ],
            tensors=[FuzzedTensor("x", size=("k0", "k1", "k2"),
                                  steps=("x_step_0", "x_step_1", "x_step_2"),
                                  probability_contiguous=0.75, min_elements=4 * 1024,
                                  max_elements=32 * 1024 ** 2,
                                  max_allocation_bytes=2 * 1024 ** 3, dim_parameter="dim",
                                  dtype=dtype, cuda=cuda)],
            seed=seed)
