"""torch.jit without TorchScript: script/trace give back what they were handed, the decorators
mark functions, and warnings, errors and typed isinstance are PyTorch's."""

from __future__ import annotations

import typing
import warnings

import pytest
import torch

import chainrule
import chainrule.jit


def _run(lib, fn):
    """fn(lib)'s result (or exception type and message) and the warnings it gave."""
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        try:
            out = fn(lib)
        except Exception as e:  # noqa: BLE001 - the outcome is what is compared
            out = (type(e).__name__, str(e))
    return out, [(x.category.__name__, str(x.message)) for x in w]


def _double(x):
    return x * 2


class _Interface:
    def one(self, x: int) -> int:
        pass


T = typing
LIKE_TORCH = {
    "script function": lambda L: L.jit.script(_double)(L.ones(2)).tolist(),
    "script optimize": lambda L: L.jit.script(_double, optimize=True)(L.ones(1)).tolist(),
    "trace function": lambda L: L.jit.trace(_double, L.ones(2))(L.ones(3)).tolist(),
    "trace no check": lambda L: L.jit.trace(_double, (L.ones(2),), check_trace=False) is not None,
    "trace module": lambda L: L.jit.trace(L.nn.Identity(), L.ones(2))(L.ones(2)).tolist(),
    "trace module no check": lambda L: L.jit.trace(L.nn.Identity(), L.ones(2),
                                                   check_trace=False)(L.ones(1)).tolist(),
    "trace_module": lambda L: L.jit.trace_module(L.nn.Identity(), {"forward": L.ones(2)})(
        L.ones(1)).tolist(),
    "trace_module no check": lambda L: L.jit.trace_module(
        L.nn.Identity(), {"forward": L.ones(2)}, check_trace=False)(L.ones(1)).tolist(),
    "trace without inputs": lambda L: L.jit.trace(_double),
    "trace not callable": lambda L: L.jit.trace(3, L.ones(1)),
    "trace_module not a dict": lambda L: L.jit.trace_module(L.nn.Identity(), L.ones(2)),
    "trace_module not a module": lambda L: L.jit.trace_module(3, {}),
    "freeze": lambda L: L.jit.freeze(L.jit.script(L.nn.Identity()).eval())(L.ones(1)).tolist(),
    "freeze in training": lambda L: L.jit.freeze(L.jit.script(L.nn.Identity())),
    "freeze not a module": lambda L: L.jit.freeze(3),
    "optimize_for_inference": lambda L: L.jit.optimize_for_inference(
        L.jit.script(L.nn.Identity()))(L.ones(3)).tolist(),
    "optimize_for_inference not a module": lambda L: L.jit.optimize_for_inference(3),
    "fork and wait": lambda L: L.jit.wait(L.jit.fork(lambda a, b=1: a + b, 2, b=3)),
    "fork raising": lambda L: L.jit.fork(lambda: 1 / 0),
    "interface": lambda L: L.jit.interface(_Interface) is _Interface,
    "interface of a function": lambda L: L.jit.interface(_double),
    "ignore": lambda L: L.jit.ignore(_double)(2),
    "ignore(drop=True)": lambda L: L.jit.ignore(drop=True)(lambda: 5)(),
    "ignore(drop_on_export=True)": lambda L: L.jit.ignore(drop_on_export=True)(lambda: 5)(),
    "ignore(3)": lambda L: L.jit.ignore(3),
    "unused": lambda L: L.jit.unused(_double)(4),
    "export": lambda L: L.jit.export(_double)(4),
    "modifier": lambda L: L.jit.ignore(lambda: 0)._torchscript_modifier,
    "unused property": lambda L: isinstance(L.jit.unused(property(lambda s: 1)), property),
    "annotate": lambda L: L.jit.annotate(T.List[int], []),
    "set_fusion_strategy": lambda L: (L.jit.set_fusion_strategy([("STATIC", 3)]),
                                      L.jit.set_fusion_strategy([("STATIC", 2),
                                                                 ("DYNAMIC", 10)])),
    "set_fusion_strategy bad": lambda L: L.jit.set_fusion_strategy([("X", 3)]),
    "onednn fusion": lambda L: (L.jit.onednn_fusion_enabled(), L.jit.enable_onednn_fusion(True),
                                L.jit.onednn_fusion_enabled(), L.jit.enable_onednn_fusion(False)),
    "strict_fusion": lambda L: L.jit.strict_fusion().__enter__(),
    "fuser": lambda L: L.jit.fuser("fuser1").__enter__(),
    "fuser bad": lambda L: L.jit.fuser("bad").__enter__(),
    "optimized_execution": lambda L: L.jit.optimized_execution(False).__enter__(),
    "set_module": lambda L: L.jit.set_module(_double, 3),
    "load missing": lambda L: L.jit.load("/nonexistent/model.pt"),
    "is_scripting": lambda L: (L.jit.is_scripting(), L.jit.is_tracing()),
    "Error": lambda L: (L.jit.Error.__name__, issubclass(L.jit.Error, RuntimeError),
                        issubclass(L.jit.Error, Exception)),
    "warnings": lambda L: [issubclass(c, Warning) for c in (L.jit.ScriptWarning,
                                                             L.jit.TracerWarning)],
    "ScriptFunction()": lambda L: L.jit.ScriptFunction(),
    "_unwrap_optional": lambda L: L.jit._unwrap_optional(3),
    "Final": lambda L: L.jit.Final is typing.Final,
    "Iterator": lambda L: L.jit.Iterator,
    "ScriptModule is a Module": lambda L: issubclass(L.jit.ScriptModule, L.nn.Module),
}


@pytest.mark.parametrize("name", LIKE_TORCH)
def test_like_torch(name):
    theirs = _run(torch, LIKE_TORCH[name])
    ours = _run(chainrule, LIKE_TORCH[name])
    assert ours == theirs


ISINSTANCE = [
    ([1, 2], T.List[int]), ([1, "a"], list[int]), ([], list[int]), ({"a": 1}, T.Dict[str, int]),
    ({"a": 1}, dict[str, str]), ({}, dict[str, int]), (None, T.Optional[int]), (3, T.Optional[int]),
    ("a", T.Optional[int]), ((1, "a"), T.Tuple[int, str]), ((1, "a"), tuple[int, int]),
    ((1,), tuple[int, int]), (3, int | str), (3, (int, str)), (3.0, T.Union[int, str]),
    ([[1], [2]], list[list[int]]), ([[1], ["x"]], list[list[int]]),
    ("abc", T.Union[list[int], str]), ({1: [1]}, dict[int, list[int]]),
    (3, T.Optional[list[int]]), (None, list[int]), ([1], list),
    ({}, T.Dict), ((), T.Tuple), (None, T.Optional), (1, [int]),
]


@pytest.mark.parametrize(("obj", "target"), ISINSTANCE)
def test_isinstance_like_torch(obj, target):
    theirs = _run(torch, lambda L: L.jit.isinstance(obj, target))
    assert _run(chainrule, lambda L: L.jit.isinstance(obj, target)) == theirs


def test_isinstance_with_tensors():
    t = chainrule.ones(2)
    assert chainrule.jit.isinstance({"a": t}, dict[str, chainrule.Tensor])
    assert not chainrule.jit.isinstance({"a": 1}, dict[str, chainrule.Tensor])
    assert chainrule.jit.isinstance([t, None], list[T.Optional[chainrule.Tensor]])


def test_script_and_trace_give_back_the_same_objects():
    model = chainrule.nn.Sequential(chainrule.nn.Linear(3, 2), chainrule.nn.ReLU())
    x = chainrule.randn(4, 3)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        scripted = chainrule.jit.script(model)
        traced = chainrule.jit.trace(model, x)
        fn = chainrule.jit.script(_double)
    assert scripted is model and traced is model and fn is _double
    assert scripted.state_dict().keys() == model.state_dict().keys()
    assert chainrule.equal(traced(x), model(x))
    y = traced(x).sum()
    y.backward()
    assert model[0].weight.grad is not None


def test_script_module_subclass_runs_as_a_module():
    with pytest.warns(DeprecationWarning, match="script_method"):
        class Scaled(chainrule.jit.ScriptModule):
            def __init__(self) -> None:
                super().__init__()
                self.scale = chainrule.jit.Attribute(2.0, float)

            @chainrule.jit.script_method
            def forward(self, x):
                return x * self.scale

    m = Scaled()
    assert isinstance(m, chainrule.nn.Module)
    assert m(chainrule.ones(2)).tolist() == [2.0, 2.0]


def test_overload_declarations():
    @chainrule.jit._overload
    def f(x: int) -> int: ...

    @chainrule.jit._overload
    def f(x: float) -> float:  # noqa: F811 - overloads redefine the name
        pass

    def f(x):  # noqa: F811
        return x

    assert f(3) == 3
    with pytest.raises(RuntimeError, match="Only `pass` statement or `...` can be the body"):
        @chainrule.jit._overload
        def g(x: int) -> int:
            return x

    class A:
        @chainrule.jit._overload_method
        def m(self, x: int) -> int: ...

        def m(self, x):  # noqa: F811
            return x + 1

    assert A().m(1) == 2


def test_save_and_load_name_the_alternative(tmp_path):
    model = chainrule.nn.Linear(2, 2)
    with pytest.warns(DeprecationWarning, match="torch.jit.save"):
        with pytest.raises(RuntimeError, match=r"model\.state_dict\(\)"):
            chainrule.jit.save(model, tmp_path / "m.pt")
    path = tmp_path / "w.pt"
    path.write_bytes(b"PK")
    with pytest.warns(DeprecationWarning, match="torch.jit.load"):
        with pytest.raises(RuntimeError, match="cannot read a TorchScript archive"):
            chainrule.jit.load(path)
