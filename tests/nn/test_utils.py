"""nn.utils against torch.nn.utils: gradient clipping and parameter vectors."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch

import chainrule
import chainrule.nn as nn

SHAPES = [(3, 4), (4,), (2, 2, 2)]


def _params_with_grads(scale: float):
    rng = np.random.default_rng(0)
    values = [rng.standard_normal(s).astype("float32") for s in SHAPES]
    grads = [scale * rng.standard_normal(s).astype("float32") for s in SHAPES]
    ours, theirs = [], []
    for v, g in zip(values, grads):
        p = nn.Parameter(chainrule.tensor(v))
        p.grad = chainrule.tensor(g)
        q = torch.nn.Parameter(torch.tensor(v))
        q.grad = torch.tensor(g)
        ours.append(p)
        theirs.append(q)
    # a parameter without a gradient is skipped by both
    ours.append(nn.Parameter(chainrule.ones(2)))
    theirs.append(torch.nn.Parameter(torch.ones(2)))
    return ours, theirs


@pytest.mark.parametrize("norm_type", [2.0, 1, 3.5, math.inf, "inf"])
@pytest.mark.parametrize("max_norm, scale", [(1.0, 1.0), (100.0, 1.0), (0.5, 1e-3)])
def test_clip_grad_norm_like_torch(max_norm, scale, norm_type) -> None:
    ours, theirs = _params_with_grads(scale)
    norm_type = float(norm_type)
    total_ours = nn.utils.clip_grad_norm_(ours, max_norm, norm_type)
    total_theirs = torch.nn.utils.clip_grad_norm_(theirs, max_norm, norm_type)
    assert str(total_ours.dtype) == str(total_theirs.dtype)
    assert total_ours.shape == total_theirs.shape == ()
    np.testing.assert_allclose(total_ours.numpy(), total_theirs.numpy(), rtol=1e-6)
    for p, q in zip(ours[:-1], theirs[:-1]):
        np.testing.assert_allclose(p.grad.numpy(), q.grad.numpy(), rtol=1e-6, atol=1e-8)
    assert ours[-1].grad is None


def test_clip_grad_norm_of_one_tensor_and_of_nothing() -> None:
    ours, theirs = _params_with_grads(1.0)
    a = nn.utils.clip_grad_norm_(ours[0], 0.1)
    b = torch.nn.utils.clip_grad_norm_(theirs[0], 0.1)
    np.testing.assert_allclose(a.numpy(), b.numpy(), rtol=1e-6)
    np.testing.assert_allclose(ours[0].grad.numpy(), theirs[0].grad.numpy(), rtol=1e-6)
    empty = nn.utils.clip_grad_norm_([nn.Parameter(chainrule.ones(2))], 1.0)
    assert empty.item() == torch.nn.utils.clip_grad_norm_([torch.nn.Parameter(
        torch.ones(2))], 1.0).item() == 0.0


# Scaling an inf gradient by 1/inf makes NaN; NumPy warns about it where torch is silent.
@pytest.mark.filterwarnings("ignore:invalid value encountered in multiply:RuntimeWarning")
def test_clip_grad_norm_nonfinite() -> None:
    p = nn.Parameter(chainrule.ones(2))
    p.grad = chainrule.tensor([1.0, math.inf])
    with pytest.raises(RuntimeError, match="is non-finite, so it cannot be clipped"):
        nn.utils.clip_grad_norm_([p], 1.0, error_if_nonfinite=True)
    assert math.isinf(nn.utils.clip_grad_norm_([p], 1.0).item())


@pytest.mark.parametrize("clip_value", [0.1, 0.5, 10.0])
def test_clip_grad_value_like_torch(clip_value) -> None:
    ours, theirs = _params_with_grads(1.0)
    assert nn.utils.clip_grad_value_(ours, clip_value) is None
    torch.nn.utils.clip_grad_value_(theirs, clip_value)
    for p, q in zip(ours[:-1], theirs[:-1]):
        np.testing.assert_array_equal(p.grad.numpy(), q.grad.numpy())


def test_parameters_to_vector_like_torch_and_back() -> None:
    ours, theirs = _params_with_grads(1.0)
    vec = nn.utils.parameters_to_vector(ours)
    want = torch.nn.utils.parameters_to_vector(theirs)
    np.testing.assert_array_equal(vec.detach().numpy(), want.detach().numpy())
    assert vec.requires_grad and vec.shape == (12 + 4 + 8 + 2,)
    new = chainrule.arange(26, dtype=chainrule.float32)
    nn.utils.vector_to_parameters(new, ours)
    np.testing.assert_array_equal(ours[0].detach().numpy(), np.arange(12).reshape(3, 4))
    np.testing.assert_array_equal(ours[-1].detach().numpy(), [24, 25])
    np.testing.assert_array_equal(nn.utils.parameters_to_vector(ours).detach().numpy(),
                                  new.numpy())
    with pytest.raises(TypeError, match="expected torch.Tensor"):
        nn.utils.vector_to_parameters([1.0], ours)


def test_parameters_to_vector_gradient() -> None:
    a, b = nn.Parameter(chainrule.ones(2, 2)), nn.Parameter(chainrule.ones(3))
    vec = nn.utils.parameters_to_vector([a, b])
    (vec * chainrule.arange(7, dtype=chainrule.float32)).sum().backward()
    assert a.grad.tolist() == [[0.0, 1.0], [2.0, 3.0]]
    assert b.grad.tolist() == [4.0, 5.0, 6.0]
