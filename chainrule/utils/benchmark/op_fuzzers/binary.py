"""BinaryOpFuzzer: ``x`` as UnaryOpFuzzer's, and ``y`` of x's sizes except that each dim is
one a fifth of the time (broadcasting). As in PyTorch, ``y`` takes x's steps."""

from __future__ import annotations

from ...._backend import float32
from ..utils.fuzzer import FuzzedParameter, FuzzedTensor, Fuzzer, ParameterAlias
from ._dims import STEPS, dim_sizes
from .unary import _MAX_DIM_SIZE, _MIN_DIM_SIZE, _POW_TWO_SIZES


class BinaryOpFuzzer(Fuzzer):
    """Inputs for benchmarking a binary op: tensors ``x`` and ``y`` and a ``random_value``."""

    def __init__(self, seed, dtype=float32, cuda=False) -> None:
        super().__init__(
            parameters=[
                FuzzedParameter("dim", distribution={1: 0.3, 2: 0.4, 3: 0.3}, strict=True),
                *dim_sizes(_MIN_DIM_SIZE, _MAX_DIM_SIZE, "pow2", list(_POW_TWO_SIZES),
                           (0.8, 0.2), special_first=False),
                [FuzzedParameter(f"y_k{i}", distribution={ParameterAlias(f"k{i}"): 0.8, 1: 0.2},
                                 strict=True) for i in range(3)],
                [FuzzedParameter(f"{name}_step_{i}", distribution=STEPS)
                 for i in range(3) for name in ("x", "y")],
                FuzzedParameter("random_value", minval=0, maxval=2 ** 32 - 1,
                                distribution="uniform"),
            ],
            tensors=[
                FuzzedTensor("x", size=("k0", "k1", "k2"),
                             steps=("x_step_0", "x_step_1", "x_step_2"),
                             probability_contiguous=0.75, min_elements=4 * 1024,
                             max_elements=32 * 1024 ** 2, max_allocation_bytes=2 * 1024 ** 3,
                             dim_parameter="dim", dtype=dtype, cuda=cuda),
                FuzzedTensor("y", size=("y_k0", "y_k1", "y_k2"),
                             steps=("x_step_0", "x_step_1", "x_step_2"),
                             probability_contiguous=0.75, max_allocation_bytes=2 * 1024 ** 3,
                             dim_parameter="dim", dtype=dtype, cuda=cuda),
            ],
            seed=seed)
