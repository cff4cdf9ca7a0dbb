"""torch.Size arithmetic: concatenation, repetition and slices stay Sizes, as in PyTorch."""

import pytest
import torch

import chainrule as cr

CASES = [
    lambda m: m.Size([1, 2]) + m.Size([3]),
    lambda m: m.Size([1, 2]) + (4,),
    lambda m: (4,) + m.Size([1, 2]),
    lambda m: m.Size([1, 2]) * 2,
    lambda m: 2 * m.Size([1, 2]),
    lambda m: m.Size([1, 2, 3])[1:],
    lambda m: m.Size([1, 2, 3])[::-1],
    lambda m: m.Size([1, 2, 3])[1],
    lambda m: m.ones(2, 3).shape[-1:],
    lambda m: m.ones(2, 3).shape + (1,),
    lambda m: m.Size([]),
]


@pytest.mark.parametrize("case", CASES, ids=[str(i) for i in range(len(CASES))])
def test_like_torch(case):
    got, expected = case(cr), case(torch)
    assert type(got).__name__ == type(expected).__name__
    assert repr(got) == repr(expected)
    assert got == expected
