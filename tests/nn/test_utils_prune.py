"""nn.utils.prune against torch.nn.utils.prune: masks (exactly where they are deterministic,
by structure where random), weight_orig/weight_mask naming, hooks, gradients and removal."""

from __future__ import annotations

import re

import numpy as np
import pytest
import torch
import torch.nn.utils.prune as TP

import chainrule
import chainrule.nn as nn
import chainrule.nn.utils.prune as CP

from ._helpers import twin


def _pair(name: str = "Linear", *args):
    torch.manual_seed(0)
    ours, theirs = twin(name, *(args or (5, 4)))
    return ours.double(), theirs.double()


def _same(ours, theirs, what: str = "") -> None:
    assert tuple(ours.shape) == tuple(theirs.shape), what
    np.testing.assert_allclose(ours.detach().numpy(), theirs.detach().numpy(), rtol=1e-12,
                               atol=1e-14, err_msg=what)


def _forward_backward(ours, theirs, in_shape=(3, 5)) -> None:
    x = np.random.default_rng(0).standard_normal(in_shape)
    out, tout = ours(chainrule.tensor(x)), theirs(torch.tensor(x))
    _same(out, tout, "output")
    (out * out).sum().backward()
    (tout * tout).sum().backward()
    tparams = dict(theirs.named_parameters())
    assert [n for n, _ in ours.named_parameters()] == list(tparams)
    for name, p in ours.named_parameters():
        _same(p.grad, tparams[name].grad, f"gradient of {name}")


DETERMINISTIC = [
    ("identity", ()),
    ("l1_unstructured", (0.3,)),
    ("l1_unstructured", (7,)),
    ("l1_unstructured", (0,)),
    ("ln_structured", (0.5, 2, 0)),
    ("ln_structured", (2, 1, 1)),
    ("ln_structured", (1, float("inf"), -1)),
    ("ln_structured", (0.0, 2, 0)),
]


@pytest.mark.parametrize("fn, args", DETERMINISTIC, ids=str)
def test_deterministic_pruning_like_torch(fn, args) -> None:
    ours, theirs = _pair()
    assert getattr(CP, fn)(ours, "weight", *args) is ours
    getattr(TP, fn)(theirs, "weight", *args)
    assert list(ours.state_dict()) == list(theirs.state_dict()) == ["bias", "weight_orig",
                                                                    "weight_mask"]
    assert isinstance(ours.weight_orig, nn.Parameter) and "weight" not in ours._parameters
    _same(ours.weight_mask, theirs.weight_mask, "mask")
    _same(ours.weight, theirs.weight)
    assert CP.is_pruned(ours) and not CP.is_pruned(nn.Linear(2, 2))
    _forward_backward(ours, theirs)
    # the hook recomputes weight from weight_orig before every forward
    with chainrule.no_grad():
        ours.weight_orig.mul_(2.0)
    with torch.no_grad():
        theirs.weight_orig.mul_(2.0)
    _same(ours(chainrule.ones(1, 5, dtype=chainrule.float64)),
          theirs(torch.ones(1, 5, dtype=torch.float64)))
    assert CP.remove(ours, "weight") is ours
    TP.remove(theirs, "weight")
    assert list(ours.state_dict()) == list(theirs.state_dict()) == ["bias", "weight"]
    assert isinstance(ours.weight, nn.Parameter) and not ours._forward_pre_hooks
    _same(ours.weight, theirs.weight)


def test_iterative_pruning_builds_a_container_like_torch() -> None:
    ours, theirs = _pair()
    steps = [("l1_unstructured", (0.2,)), ("ln_structured", (1, 2, 0)),
             ("ln_structured", (2, 1, 1)), ("l1_unstructured", (3,)),
             ("custom_from_mask", (np.arange(20).reshape(4, 5) % 3 != 0,))]
    for fn, args in steps:
        ours_args = [chainrule.tensor(a) if isinstance(a, np.ndarray) else a for a in args]
        theirs_args = [torch.tensor(a) if isinstance(a, np.ndarray) else a for a in args]
        getattr(CP, fn)(ours, "weight", *ours_args)
        getattr(TP, fn)(theirs, "weight", *theirs_args)
        _same(ours.weight_mask, theirs.weight_mask, f"mask after {fn}")
    (hook,) = ours._forward_pre_hooks.values()
    assert isinstance(hook, CP.PruningContainer) and len(hook) == len(steps)
    assert [type(m).__name__ for m in hook] == [type(m).__name__ for m in
                                                next(iter(theirs._forward_pre_hooks.values()))]
    _forward_backward(ours, theirs)
    CP.remove(ours, "weight")
    TP.remove(theirs, "weight")
    _same(ours.weight, theirs.weight)


def test_importance_scores_and_prune_method_like_torch() -> None:
    ours, theirs = _pair()
    scores = np.random.default_rng(1).standard_normal((4, 5))
    CP.l1_unstructured(ours, "weight", 0.4, importance_scores=chainrule.tensor(scores))
    TP.l1_unstructured(theirs, "weight", 0.4, importance_scores=torch.tensor(scores))
    _same(ours.weight_mask, theirs.weight_mask)
    CP.ln_structured(ours, "weight", 1, 2, 0, importance_scores=chainrule.tensor(scores))
    TP.ln_structured(theirs, "weight", 1, 2, 0, importance_scores=torch.tensor(scores))
    _same(ours.weight_mask, theirs.weight_mask)
    values = [3.0, -1.0, 2.0, 0.5]
    _same(CP.L1Unstructured(2).prune(chainrule.tensor(values)),
          TP.L1Unstructured(2).prune(torch.tensor(values)))


def test_global_unstructured_like_torch() -> None:
    pairs = [_pair("Linear", 5, 4), _pair("Linear", 4, 3)]
    CP.l1_unstructured(pairs[0][0], "weight", 2)
    TP.l1_unstructured(pairs[0][1], "weight", 2)
    CP.global_unstructured([(o, "weight") for o, _ in pairs] + [(pairs[1][0], "bias")],
                           CP.L1Unstructured, amount=0.5)
    TP.global_unstructured([(t, "weight") for _, t in pairs] + [(pairs[1][1], "bias")],
                           TP.L1Unstructured, amount=0.5)
    for ours, theirs in pairs:
        assert list(ours.state_dict()) == list(theirs.state_dict())
        for name in ("weight_mask", "bias_mask"):
            if hasattr(theirs, name):
                _same(getattr(ours, name), getattr(theirs, name), name)
    with pytest.raises(TypeError, match="global_unstructured\\(\\): parameters is not an "
                                        "Iterable"):
        CP.global_unstructured(3, CP.L1Unstructured, amount=1)
    with pytest.raises(TypeError, match='Only "unstructured" PRUNING_TYPE supported'):
        CP.global_unstructured([(pairs[0][0], "weight")], CP.RandomStructured, amount=1, dim=0)


def test_random_unstructured_masks_by_structure() -> None:
    chainrule.manual_seed(0)
    layer = CP.random_unstructured(nn.Linear(6, 5), "weight", 0.4)
    assert list(layer.state_dict()) == ["bias", "weight_orig", "weight_mask"]
    mask = layer.weight_mask.numpy()
    assert set(np.unique(mask)) == {0.0, 1.0} and (mask == 0).sum() == round(0.4 * 30)
    np.testing.assert_array_equal(layer.weight.detach().numpy(),
                                  layer.weight_orig.detach().numpy() * mask)
    CP.random_unstructured(layer, "weight", 6)  # six more among the 18 left
    again = layer.weight_mask.numpy()
    assert (again == 0).sum() == 18 and np.all(again[mask == 0] == 0)
    chainrule.manual_seed(0)
    same = CP.random_unstructured(nn.Linear(6, 5), "weight", 0.4)
    np.testing.assert_array_equal(same.weight_mask.numpy(), mask)  # seeded


def test_random_structured_masks_by_structure() -> None:
    chainrule.manual_seed(1)
    layer = CP.random_structured(nn.Conv2d(3, 6, 2), "weight", 2, 0)
    mask = layer.weight_mask.numpy()
    per_channel = mask.reshape(6, -1)
    assert sorted(per_channel.min(1) == per_channel.max(1)) == [True] * 6  # whole channels
    assert (per_channel[:, 0] == 0).sum() == 2
    CP.random_structured(layer, "weight", 0.5, 1)  # half of the input channels that remain
    inputs = layer.weight_mask.numpy().transpose(1, 0, 2, 3).reshape(3, -1)
    assert (inputs.max(1) == 0).sum() == 2  # round(0.5 * 3)
    assert np.all(layer.weight_mask.numpy()[per_channel[:, 0] == 0] == 0)


def test_pruned_tensor_keeps_gradients_through_the_mask() -> None:
    layer = CP.l1_unstructured(nn.Linear(4, 3).double(), "weight", 5)
    layer(chainrule.ones(2, 4, dtype=chainrule.float64)).sum().backward()
    mask = layer.weight_mask.numpy()
    np.testing.assert_array_equal(layer.weight_orig.grad.numpy(), 2 * mask)


def _exact(message: str) -> str:
    return "^" + re.escape(message) + "$"


def test_errors_like_torch() -> None:
    cases = [("l1_unstructured", ("weight", -1)), ("l1_unstructured", ("weight", 1.5)),
             ("l1_unstructured", ("weight", "x")), ("l1_unstructured", ("weight", 30)),
             ("ln_structured", ("bias", 1, 2, 0)), ("ln_structured", ("weight", 1, 2, 2)),
             ("remove", ("weight",))]
    for fn, args in cases:
        ours, theirs = _pair()
        with pytest.raises((ValueError, TypeError, IndexError)) as error:
            getattr(TP, fn)(theirs, *args)
        with pytest.raises(error.type, match=_exact(str(error.value))):
            getattr(CP, fn)(ours, *args)
        # a failed pruning leaves the parameter as it was (moved to the end, as in torch)
        assert list(ours.state_dict()) == list(theirs.state_dict())
        assert not ours._forward_pre_hooks
    with pytest.raises(TypeError, match=_exact("<class 'int'> is not a BasePruningMethod "
                                               "subclass")):
        CP.PruningContainer().add_pruning_method(3)
    method = CP.Identity()
    method._tensor_name = "bias"
    container = CP.PruningContainer(method)
    other = CP.Identity()
    other._tensor_name = "weight"
    with pytest.raises(ValueError, match="Can only add pruning methods acting on the parameter "
                                         "named 'bias' to PruningContainer"):
        container.add_pruning_method(other)
