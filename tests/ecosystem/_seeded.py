"""A pytest plugin for a library's suite: each test starts from ``torch.manual_seed(0)``.

A test that compares float32 results drawn from an unseeded generator against a fixed tolerance
passes or fails by chance, on torch as on chainrule (einops' compile test sums 68,880 float32
products and allows 1e-5 relative: both libraries' sums miss it for some draws). Seeded, each
test has one outcome, and it is the same on both, since chainrule draws PyTorch's numbers."""

import pytest


@pytest.fixture(autouse=True)
def _seeded():
    import torch

    torch.manual_seed(0)
