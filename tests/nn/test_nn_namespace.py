"""Small names of torch.nn: the deprecated Container and factory_kwargs, against torch."""

from __future__ import annotations

import pytest
import torch

import chainrule
import chainrule.nn as nn


def test_container_is_deprecated_and_holds_its_keyword_modules_like_torch() -> None:
    with pytest.warns(FutureWarning) as their_warning:
        theirs = torch.nn.Container(a=torch.nn.Linear(2, 3), b=torch.nn.ReLU())
    with pytest.warns(FutureWarning) as our_warning:
        ours = nn.Container(a=nn.Linear(2, 3), b=nn.ReLU())
    assert [str(w.message) for w in our_warning] == [str(w.message) for w in their_warning]
    assert our_warning[0].filename == __file__
    assert repr(ours) == repr(theirs)
    assert list(ours.state_dict()) == list(theirs.state_dict()) == ["a.weight", "a.bias"]
    assert isinstance(ours, nn.Module)


@pytest.mark.parametrize("kwargs", [
    None, {}, {"dtype": "d"}, {"device": "cpu", "dtype": "d", "memory_format": "m"},
    {"dtype": "d", "factory_kwargs": {"device": "cpu"}}, {"factory_kwargs": {"dtype": "d"}}])
def test_factory_kwargs_like_torch(kwargs) -> None:
    assert nn.factory_kwargs(kwargs) == torch.nn.factory_kwargs(kwargs)


@pytest.mark.parametrize("kwargs", [{"foo": 1}, {"dtype": 1, "factory_kwargs": {"dtype": 2}}])
def test_factory_kwargs_errors_like_torch(kwargs) -> None:
    with pytest.raises(TypeError) as theirs:
        torch.nn.factory_kwargs(kwargs)
    with pytest.raises(TypeError) as ours:
        nn.factory_kwargs(kwargs)
    assert str(ours.value) == str(theirs.value)


def test_factory_kwargs_feed_a_factory() -> None:
    made = chainrule.empty(2, **nn.factory_kwargs({"dtype": chainrule.float64}))
    assert made.dtype == chainrule.float64
