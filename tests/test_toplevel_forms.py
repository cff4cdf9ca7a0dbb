"""torch's top-level in-place functions and constants (chainrule/_toplevel.py) against torch:
the values written into the input, the object returned, the draws of the dropout forms for a
seed, and the errors."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import chainrule
from chainrule._toplevel import _METHODS

UNIT = [0.2, 0.5, 0.7]
# name -> (input values, extra arguments as functions of the library, keyword arguments)
_ARGS = {
    "acosh_": ([1.2, 1.5, 3.0], (), {}),
    "arccosh_": ([1.2, 1.5, 3.0], (), {}),
    "clamp_": (UNIT, (0.3, 0.6), {}),
    "clip_": (UNIT, (), {"min": 0.3}),
    "clamp_min_": (UNIT, (0.3,), {}),
    "clamp_max_": (UNIT, (0.3,), {}),
    "fill_": (UNIT, (2.5,), {}),
    "gcd_": ([12, 18, 7], (lambda lib: lib.tensor([8, 27, 21]),), {}),
    "lcm_": ([12, 18, 7], (lambda lib: lib.tensor([8, 27, 21]),), {}),
    "ldexp_": (UNIT, (lambda lib: lib.tensor([1, 2, 3]),), {}),
    "xlogy_": (UNIT, (lambda lib: lib.tensor([2.0, 0.5, 4.0], dtype=lib.float64),), {}),
    "index_put_": (UNIT, (lambda lib: (lib.tensor([0, 2]),),
                          lambda lib: lib.tensor(5.0, dtype=lib.float64)), {"accumulate": True}),
    "resize_as_": (UNIT, (lambda lib: lib.zeros(3, dtype=lib.float64),), {}),
    "round_": ([0.24, 0.55, 0.71], (), {"decimals": 1}),
    "nan_to_num_": ([float("nan"), float("inf"), -1.0], (), {"posinf": 7.0}),
    "logit_": ([0.05, 0.5, 0.7], (), {"eps": 0.1}),
}


def _call(lib, name):
    values, args, kwargs = _ARGS.get(name, (UNIT, (), {}))
    dtype = lib.int64 if isinstance(values[0], int) else lib.float64
    x = lib.tensor(values, dtype=dtype)
    args = [a(lib) if callable(a) else a for a in args]
    return x, getattr(lib, name)(x, *args, **kwargs)


@pytest.mark.parametrize("name", _METHODS)
def test_inplace_function_writes_into_input_as_torch(name):
    ours, ours_out = _call(chainrule, name)
    theirs, theirs_out = _call(torch, name)
    assert ours_out is ours and theirs_out is theirs
    np.testing.assert_allclose(ours.numpy(), theirs.numpy(), rtol=1e-12, equal_nan=True)


def test_inplace_function_refuses_a_non_tensor_as_torch():
    for name, args in (("abs_", ()), ("dropout_", (0.5, True)), ("sigmoid_", ())):
        with pytest.raises(TypeError) as theirs:
            getattr(torch, name)(1, *args)
        with pytest.raises(TypeError) as ours:
            getattr(chainrule, name)(1, *args)
        assert str(ours.value) == str(theirs.value)
    with pytest.raises(TypeError):  # PyTorch lists its two overloads; chainrule names input
        chainrule.clamp_(1, 0.0, 1.0)


def test_inplace_function_on_a_leaf_that_requires_grad_raises_as_torch():
    with pytest.raises(RuntimeError, match="a leaf Variable that requires grad") as theirs:
        torch.sin_(torch.ones(2, requires_grad=True))
    with pytest.raises(RuntimeError) as ours:
        chainrule.sin_(chainrule.ones(2, requires_grad=True))
    assert str(ours.value) == str(theirs.value)


def _dropped(lib, name: str, train: bool):
    lib.manual_seed(3)
    x = lib.arange(1.0, 25.0).reshape(4, 3, 2)
    out = getattr(lib, name)(x, 0.4, train)
    return x, out


@pytest.mark.parametrize("name", ["dropout_", "feature_dropout_"])
@pytest.mark.parametrize("train", [True, False])
def test_dropout_forms_draw_torchs_mask(name, train):
    (ours, ours_out), (theirs, theirs_out) = _dropped(chainrule, name, train), _dropped(torch,
                                                                                    name, train)
    assert ours_out is ours and theirs_out is theirs
    np.testing.assert_allclose(ours.numpy(), theirs.numpy(), rtol=1e-6)


@pytest.mark.parametrize("name", ["alpha_dropout_", "feature_alpha_dropout_"])
@pytest.mark.parametrize("train", [True, False])
def test_alpha_dropout_forms_are_the_out_of_place_draws_in_place(name, train):
    # their noise is not PyTorch's (docs/differences.md, Random streams): same as chainrule's own
    x, out = _dropped(chainrule, name, train)
    chainrule.manual_seed(3)
    expected = getattr(chainrule, name[:-1])(chainrule.arange(1.0, 25.0).reshape(4, 3, 2), 0.4,
                                             train)
    assert out is x
    np.testing.assert_allclose(x.numpy(), expected.numpy(), rtol=1e-6)


def test_dropout_form_carries_the_gradient():
    x = chainrule.arange(1.0, 7.0, requires_grad=True)
    chainrule.manual_seed(0)
    y = x * 1
    chainrule.dropout_(y, 0.5, True)
    y.sum().backward()
    torch.manual_seed(0)
    t = torch.arange(1.0, 7.0, requires_grad=True)
    u = t * 1
    torch.dropout_(u, 0.5, True)
    u.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), t.grad.numpy())


@pytest.mark.parametrize("name, args", [("celu_", (0.7,)), ("selu_", ()),
                                        ("threshold_", (0.1, -3.0)), ("relu_", ()),
                                        ("rrelu_", (0.1, 0.3, False))])
def test_activation_forms_as_torch(name, args):
    values = [-1.5, -0.2, 0.05, 0.4, 2.0]
    x, t = chainrule.tensor(values), torch.tensor(values)
    assert getattr(chainrule, name)(x, *args) is x
    getattr(torch, name)(t, *args)
    np.testing.assert_allclose(x.numpy(), t.numpy(), rtol=1e-6)


def test_embedding_renorm_as_torch():
    torch.manual_seed(0)
    weight = torch.randn(5, 3) * 2
    ours = chainrule.tensor(weight.numpy().copy())
    indices = [[0, 1], [1, 4]]
    assert chainrule.embedding_renorm_(ours, chainrule.tensor(indices), 1.0, 2.0) is ours
    torch.embedding_renorm_(weight, torch.tensor(indices), 1.0, 2.0)
    np.testing.assert_allclose(ours.numpy(), weight.numpy(), rtol=1e-6)
    assert ours._version == weight._version == 1


@pytest.mark.parametrize("weight, indices", [
    ([1.0, 2.0], [0]),               # not 2-D
    ([[1.0, 2.0]], [0.0]),           # float indices
    ([[1.0, 2.0], [3.0, 4.0]], [7]),  # out of range
])
def test_embedding_renorm_refuses_as_torch(weight, indices):
    with pytest.raises(Exception) as theirs:
        torch.embedding_renorm_(torch.tensor(weight), torch.tensor(indices), 1.0, 2.0)
    with pytest.raises(type(theirs.value)) as ours:
        chainrule.embedding_renorm_(chainrule.tensor(weight), chainrule.tensor(indices), 1.0, 2.0)
    assert str(ours.value) == str(theirs.value)


def test_constants_and_aliases_are_torchs():
    for name in ("e", "pi", "inf", "newaxis"):
        assert getattr(chainrule, name) == getattr(torch, name)
    assert np.isnan(chainrule.nan)
    assert chainrule.GradScaler is chainrule.amp.GradScaler
    assert chainrule.Future is chainrule.futures.Future


def _from_file(lib, path, *args, **kwargs):
    try:
        out = lib.from_file(str(path), *args, **kwargs)
    except Exception as e:  # noqa: BLE001
        return type(e).__name__, str(e).replace(str(path), "<path>")
    return str(out.dtype), out.tolist(), out.requires_grad


@pytest.mark.parametrize("args, kwargs", [
    ((), {}),
    ((False, 4), {"dtype": "int32"}),
    ((None, 4), {}),
    ((False, 16), {"dtype": "uint8"}),
    ((False, 5), {"dtype": "int32"}),
    ((False, 2), {"dtype": "float64", "requires_grad": True}),
    ((False, 2), {"device": "meta"}),
])
def test_from_file_reads_as_torch(tmp_path, args, kwargs):
    path = tmp_path / "data.bin"
    path.write_bytes(bytes(range(16)))
    found = []
    for lib in (torch, chainrule):
        options = {k: getattr(lib, v) if k == "dtype" else v for k, v in kwargs.items()}
        found.append(_from_file(lib, path, *args, **options))
    assert found[1] == found[0]


def test_from_file_of_a_missing_file_as_torch(tmp_path):
    found = [_from_file(lib, tmp_path / "missing.bin", False, 2) for lib in (torch, chainrule)]
    assert found[1] == found[0] and found[0][0] == "RuntimeError"


def test_from_file_shared_creates_grows_and_writes_the_file(tmp_path):
    for lib in (torch, chainrule):
        path = tmp_path / f"{lib.__name__}.bin"
        x = lib.from_file(str(path), True, 3, dtype=lib.float64)
        assert path.stat().st_size == 24 and x.tolist() == [0.0, 0.0, 0.0]
        x.fill_(2.5)
        del x
        assert lib.from_file(str(path), False, 3, dtype=lib.float64).tolist() == [2.5] * 3
        private = lib.from_file(str(path), False, 3, dtype=lib.float64)
        private.fill_(1.0)  # a private mapping: the file keeps its values
        assert lib.from_file(str(path), True, 4, dtype=lib.float64).tolist() == [2.5] * 3 + [0.0]
        assert path.stat().st_size == 32
