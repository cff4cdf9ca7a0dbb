"""Shared fixtures: PyTorch as the oracle, and global state restored after every test."""

import os

# chainrule.compile's fused back end (chainrule._fuse) replaces replays with kernels in the
# background: the suite compares replays with eager bit for bit, so it is off but where a test
# turns it on (tests/test_compile_fuse.py).
os.environ["CHAINRULE_FUSE"] = "0"

import numpy as np  # noqa: E402
import pytest
import torch

import chainrule


def assert_like_torch(ours, theirs, rtol=1e-10, atol=1e-12, path="result"):
    """Tensors (nested in tuples, lists, dicts) equal to torch's: type, dtype, shape,
    requires_grad and values; anything else compares with ==."""
    if isinstance(theirs, torch.Tensor):
        assert isinstance(ours, chainrule.Tensor), f"{path}: expected a Tensor, got {ours!r}"
        assert str(ours.dtype) == str(theirs.dtype), f"{path}: {ours.dtype} != {theirs.dtype}"
        assert tuple(ours.shape) == tuple(theirs.shape), f"{path}: {ours.shape} != {theirs.shape}"
        assert ours.requires_grad == theirs.requires_grad, f"{path}: requires_grad differs"
        want = theirs.detach().numpy()
        got = np.asarray(ours.detach().numpy())
        if want.dtype.kind in "fc":
            np.testing.assert_allclose(got, want, rtol=rtol, atol=atol, err_msg=path)
        else:
            np.testing.assert_array_equal(got, want, err_msg=path)
    elif isinstance(theirs, (tuple, list)):
        assert isinstance(ours, (tuple, list)), f"{path}: expected a sequence, got {ours!r}"
        assert len(ours) == len(theirs), f"{path}: length {len(ours)} != {len(theirs)}"
        for i, (o, t) in enumerate(zip(ours, theirs)):
            assert_like_torch(o, t, rtol, atol, f"{path}[{i}]")
    elif isinstance(theirs, dict):
        assert isinstance(ours, dict) and ours.keys() == theirs.keys(), f"{path}: keys differ"
        for k in theirs:
            assert_like_torch(ours[k], theirs[k], rtol, atol, f"{path}[{k!r}]")
    elif isinstance(theirs, torch.dtype):
        assert str(ours) == str(theirs), f"{path}: {ours!r} != {theirs!r}"
    else:
        assert ours == theirs, f"{path}: {ours!r} != {theirs!r}"


@pytest.fixture
def like_torch():
    """``like_torch(ours, theirs)`` asserts chainrule's results equal torch's."""
    return assert_like_torch


@pytest.fixture(autouse=True)
def restore_global_state():
    """A failing test must not leave grad mode or the default dtype changed for the next."""
    saved = [(lib, lib.get_default_dtype(), lib.is_grad_enabled()) for lib in (torch, chainrule)]
    yield
    for lib, dtype, enabled in saved:
        lib.set_default_dtype(dtype)
        lib.set_grad_enabled(enabled)
