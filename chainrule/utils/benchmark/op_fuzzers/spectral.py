"""SpectralOpFuzzer: one tensor ``x`` of 1 to 3 dims for FFTs, sizes from 16 to 16K, regular
numbers (products of 2, 3 and 5, the sizes FFTs are fastest for) with
``probability_regular``."""

from __future__ import annotations

import math

from ...._backend import float64
from ..utils.fuzzer import FuzzedParameter, FuzzedTensor, Fuzzer
from ._dims import STEPS, dim_sizes

__all__ = ["SpectralOpFuzzer"]

MIN_DIM_SIZE = 16
MAX_DIM_SIZE = 16 * 1024


def power_range(upper_bound, base):
    """The powers of ``base`` up to ``upper_bound`` (as many as the float log says)."""
    return (base ** i for i in range(int(math.log(upper_bound, base)) + 1))


# The regular numbers above MIN_DIM_SIZE up to MAX_DIM_SIZE, ascending.
REGULAR_SIZES = sorted(
    two * three * five
    for two in power_range(MAX_DIM_SIZE, 2)
    for three in power_range(MAX_DIM_SIZE // two, 3)
    for five in power_range(MAX_DIM_SIZE // (two * three), 5)
    if two * three * five > MIN_DIM_SIZE)


class SpectralOpFuzzer(Fuzzer):
    """Inputs for benchmarking a spectral op: the tensor ``x``."""

    def __init__(self, *, seed: int, dtype=float64, cuda: bool = False,
                 probability_regular: float = 1.0) -> None:
        super().__init__(
            parameters=[
                FuzzedParameter("ndim", distribution={1: 0.3, 2: 0.4, 3: 0.3}, strict=True),
                *dim_sizes(MIN_DIM_SIZE, MAX_DIM_SIZE, "regular", REGULAR_SIZES,
                           (1 - probability_regular, probability_regular), special_first=True),
                [FuzzedParameter(f"step_{i}", distribution=STEPS) for i in range(3)],
            ],
            tensors=[FuzzedTensor("x", size=("k0", "k1", "k2"),
                                  steps=("step_0", "step_1", "step_2"),
                                  probability_contiguous=0.75, min_elements=4 * 1024,
                                  max_elements=32 * 1024 ** 2,
                                  max_allocation_bytes=2 * 1024 ** 3, dim_parameter="ndim",
                                  dtype=dtype, cuda=cuda)],
            seed=seed)
