"""The training surface, accounted for: every public name PyTorch's training namespaces define
(nn, nn.init, nn.functional, nn.utils and its submodules, optim, lr_scheduler, swa_utils,
utils.data, distributions with constraints, transforms and kl) exists in chainrule — accepting
PyTorch's parameter names — or is listed with a reason under a "Not provided" heading of
docs/differences.md."""

from __future__ import annotations

import importlib
import inspect

import torch  # noqa: F401  (the submodules below are imported by name)
from _surface import excluded, not_provided, parameters, status

import chainrule  # noqa: F401

MODULES = ["nn", "nn.init", "nn.functional", "nn.utils", "nn.utils.rnn", "nn.utils.parametrize",
           "nn.utils.parametrizations", "nn.utils.prune", "nn.utils.stateless", "nn.parallel",
           "optim", "optim.lr_scheduler", "optim.swa_utils", "utils.data", "distributions",
           "distributions.constraints", "distributions.transforms", "distributions.kl"]
# typing and import helpers PyTorch's modules happen to expose
_NOT_API = {"Any", "Callable", "Optional", "Union", "TypeVar", "Iterable", "Iterator", "Sequence",
            "Tuple", "List", "Dict", "Literal", "TYPE_CHECKING", "Tensor", "Module", "Parameter",
            "Number", "overload", "cast", "deprecated", "partial", "wraps", "inf", "nan",
            "override", "Self", "SupportsFloat", "TypedDict", "ref", "ParamSpec",
            "BroadcastingList1", "BroadcastingList2", "BroadcastingList3", "DType",
            "boolean_dispatch", "handle_torch_function", "has_torch_function",
            "has_torch_function_unary", "has_torch_function_variadic", "ScalingType",
            "SwizzleType", "EPOCH_DEPRECATION_WARNING", "warnings", "math", "functools",
            "Enum", "Generic", "NamedTuple", "OrderedDict", "defaultdict", "namedtuple",
            "dataclass", "field", "abc", "collections", "weakref", "copy", "itertools", "numbers",
            "contextmanager", "reduce", "T_co", "T", "K", "T_dict", "T_tuple", "T_stack"}


def _public(module) -> dict[str, object]:
    names = getattr(module, "__all__", None) or [n for n in dir(module) if not n.startswith("_")]
    found = {}
    for name in names:
        value = getattr(module, name, None)
        if value is None or inspect.ismodule(value) or name in _NOT_API:
            continue
        if not (inspect.isclass(value) or callable(value)):
            continue
        found[name] = value
    return found


def _status() -> dict[str, str]:
    entries = []
    for path in MODULES:
        theirs = importlib.import_module(f"torch.{path}")
        try:
            ours = importlib.import_module(f"chainrule.{path}")
        except ImportError:
            ours = None
        for name, value in _public(theirs).items():
            entries.append((f"{path}.{name}", getattr(ours, name, None), parameters(value)))
    return status(entries)


STATUS = _status()


def test_the_reference_is_pytorchs_training_surface():
    assert len(STATUS) > 500


def test_every_name_is_there_with_pytorchs_parameters_or_listed_with_a_reason():
    listed = not_provided()
    gaps = sorted(f"{q}: {why}" for q, why in STATUS.items() if why and not excluded(q, listed))
    assert gaps == []


def test_listed_names_are_real_gaps():
    listed = not_provided()
    done = sorted(q for q, why in STATUS.items() if not why and q in listed)
    assert done == []


def test_hardtanh_deprecated_keywords_as_torch():
    import pytest
    import torch as t

    import chainrule as cr
    for kwargs in ({"min_value": -2.0}, {"max_value": 3.0}):
        with pytest.warns(FutureWarning) as expected:
            reference = t.nn.Hardtanh(**kwargs)
        with pytest.warns(FutureWarning) as got:
            module = cr.nn.Hardtanh(**kwargs)
        assert str(got[0].message) == str(expected[0].message)
        assert repr(module) == repr(reference)
    with pytest.raises(AssertionError, match=r"max_val \(0.0\) must be greater than min_val"):
        cr.nn.Hardtanh(1.0, 0.0)


def test_assert_int_or_pair_as_torch():
    import pytest

    import chainrule as cr
    cr.nn.functional.assert_int_or_pair(3, "kernel_size", "{} must be int or pair")
    cr.nn.functional.assert_int_or_pair((1, 2), "kernel_size", "{} must be int or pair")
    with pytest.raises(AssertionError, match="kernel_size must be int or pair"):
        cr.nn.functional.assert_int_or_pair((1, 2, 3), "kernel_size", "{} must be int or pair")
