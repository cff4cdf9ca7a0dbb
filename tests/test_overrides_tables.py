"""torch.overrides' tables for chainrule's namespaces: ignored and overridable functions are
consistent with each other and with PyTorch's lists, names resolve as PyTorch's, the testing
overrides have each function's signature; is_tensor_like and kin answer as PyTorch's."""

from __future__ import annotations

import inspect

import pytest
import torch
import torch.overrides as theirs

import chainrule as cr
import chainrule.overrides as ours


def _our_object(qualified: str):
    return ours._lookup(qualified)


def test_public_names():
    provided = set(theirs.__all__) | {"get_default_nowrap_functions"}
    assert provided == set(ours.__all__)
    for name in provided - {"has_torch_function"}:  # PyTorch's is a builtin: no signature
        assert [p for p in inspect.signature(getattr(ours, name)).parameters] == \
            [p for p in inspect.signature(getattr(theirs, name)).parameters], name


def test_ignored_functions_are_pytorchs_that_chainrule_has():
    mine = ours.get_ignored_functions()
    expected = set()
    for func in theirs.get_ignored_functions():
        name = theirs.resolve_name(func)
        obj = _our_object(name) if name else None
        if obj is not None:
            expected.add(obj)
    for name in ("torch.tensor", "torch.zeros", "torch.arange", "torch.is_tensor",
                 "torch.Tensor.new_zeros", "torch.nn.init.kaiming_uniform", "torch.fft.fftfreq"):
        assert _our_object(name) in expected, name
    assert mine == expected | ({cr.set_grad_enabled} & mine)
    assert isinstance(ours.get_ignored_functions(), set)


def test_overridable_functions_resolve_and_exclude_the_ignored():
    ignored = ours.get_ignored_functions()
    table = ours.get_overridable_functions()
    assert {cr, cr.Tensor, cr.nn.functional, cr.linalg, cr.fft, cr.special} <= set(table)
    theirs_names = {theirs.resolve_name(f) for fs in theirs.get_overridable_functions().values()
                    for f in fs}
    shared = 0
    for funcs in table.values():
        assert len(funcs) == len(set(funcs))
        for func in funcs:
            assert func not in ignored
            name = ours.resolve_name(func)
            assert name is not None and name.startswith("torch."), func
            if name.endswith(".__get__"):
                assert func == _our_object(name[:-8]).__get__
            else:
                assert _our_object(name) is func, name
            shared += name in theirs_names
    assert shared > 900  # the bulk of PyTorch's overridable API, by PyTorch's names


@pytest.mark.parametrize("pair", [
    ("add", "add"), ("functional.einsum", "einsum"), ("nn.functional.relu", None),
    ("Tensor.add", None), ("linalg.svd", None), ("fft.fft", None), ("special.erf", None),
    ("Tensor.grad.__get__", None), ("abs", "abs"), ("nn.init.normal_", None),
    ("Tensor.__add__", None)])
def test_resolve_name_like_torch(pair):
    path, top = pair

    def get(root):
        obj = root
        for part in path.split("."):
            obj = getattr(obj, part)
        return obj

    assert ours.resolve_name(get(cr)) == theirs.resolve_name(get(torch))
    assert ours.resolve_name(len) is theirs.resolve_name(len) is None


def test_testing_overrides_have_the_signatures():
    overrides = ours.get_testing_overrides()
    listed = {f for fs in ours.get_overridable_functions().values() for f in fs}
    assert set(overrides) == listed
    dummy = overrides[cr.add]
    assert inspect.signature(dummy) == inspect.signature(cr.add)
    assert dummy(cr.ones(1), 2) == -1
    with pytest.raises(TypeError):
        dummy(1, 2, 3, 4, 5, 6, 7)
    assert overrides[cr.nn.functional.relu](cr.ones(1)) == -1


class _WithTorchFunction:
    @classmethod
    def __torch_function__(cls, func, types, args=(), kwargs=None):
        return NotImplemented


@pytest.mark.parametrize("case", ["tensor", "parameter", "tensor class", "parameter class",
                                  "int", "list", "duck", "duck class"])
def test_is_tensor_like(case):
    def make(m):
        return {"tensor": m.ones(1), "parameter": m.nn.Parameter(m.ones(1)),
                "tensor class": m.Tensor, "parameter class": m.nn.Parameter, "int": 3,
                "list": [m.ones(1)], "duck": _WithTorchFunction(),
                "duck class": _WithTorchFunction}[case]

    assert ours.is_tensor_like(make(cr)) == theirs.is_tensor_like(make(torch))


@pytest.mark.parametrize("path", ["Tensor.add", "add", "Tensor.grad.__get__", "nn.functional.relu",
                                  "Tensor.__add__", "Tensor.shape.__get__"])
def test_is_tensor_method_or_property(path):
    def get(root):
        obj = root
        for part in path.split("."):
            obj = getattr(obj, part)
        return obj

    assert ours.is_tensor_method_or_property(get(cr)) == \
        theirs.is_tensor_method_or_property(get(torch))


def test_default_nowrap_functions_and_reentrant_dispatch():
    nowrap = ours.get_default_nowrap_functions()
    assert cr.Tensor.grad.__get__ in nowrap
    assert {ours.resolve_name(f) for f in nowrap} <= \
        {theirs.resolve_name(f) for f in theirs.get_default_nowrap_functions()}
    x = cr.ones(2, requires_grad=True)
    with ours.enable_reentrant_dispatch():
        y = (x * 2).sum()
    y.backward()
    assert x.grad.tolist() == [2.0, 2.0]
