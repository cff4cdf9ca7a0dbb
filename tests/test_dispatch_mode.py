"""TorchDispatchMode: a mode sees the kernel calls of forward and backward, named as PyTorch's
aten operators; nested modes, func(*args) going on to the modes below, the aten names real."""

from __future__ import annotations

import numpy as np
import pytest
import torch as ref
from torch.utils._python_dispatch import TorchDispatchMode as RefMode

import chainrule as torch
from chainrule.library._ops import ATEN_NAMES
from chainrule.ops import REGISTRY
from chainrule.utils._python_dispatch import TorchDispatchMode, aten_call


def _logger(base):
    class Log(base):
        def __init__(self, tag: str = "", calls: list | None = None) -> None:
            super().__init__()
            self.calls = [] if calls is None else calls
            self.tag = tag

        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            self.calls.append(self.tag + str(func))
            return func(*args, **(kwargs or {}))

    return Log


def _mlp(lib):
    lib.manual_seed(0)
    return lib.nn.Sequential(lib.nn.Linear(4, 3), lib.nn.ReLU(), lib.nn.Linear(3, 2))


def _counted(calls: list, names: set) -> list:
    return [c for c in calls if c in names]


def test_matmul_family_calls_match_torch_in_order():
    names = {"aten.addmm.default", "aten.mm.default", "aten.bmm.default",
             "aten.convolution.default", "aten.convolution_backward.default"}
    seen = []
    for lib, base in ((ref, RefMode), (torch, TorchDispatchMode)):
        x = lib.tensor(np.ones((5, 4), np.float32))
        model = _mlp(lib)
        conv = lib.nn.Conv2d(2, 3, 3)
        with _logger(base)() as log:
            model(x).sum().backward()
            conv(lib.ones(1, 2, 5, 5)).sum().backward()
            (lib.ones(2, 3, 4, requires_grad=True) @ lib.ones(2, 4, 5)).sum().backward()
        seen.append(_counted(log.calls, names))
    assert seen[0] == seen[1]


def test_results_are_the_ops_results():
    model = _mlp(torch)
    x = torch.ones(5, 4)
    with _logger(TorchDispatchMode)():
        y = model(x)
        y.sum().backward()
    grads = [p.grad.clone() for p in model.parameters()]
    model.zero_grad()
    assert torch.equal(model(x), y)
    model(x).sum().backward()
    assert all(torch.equal(p.grad, g) for p, g in zip(model.parameters(), grads))


def test_nested_modes_see_each_call_innermost_first():
    calls: list = []
    Log = _logger(TorchDispatchMode)
    a, b = torch.ones(2, 2), torch.ones(2, 2)
    with Log("outer:", calls), Log("inner:", calls):
        a.mm(b)
    assert calls == ["inner:aten.mm.default", "outer:aten.mm.default"]


def test_a_mode_can_replace_results():
    class Zeros(TorchDispatchMode):
        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            out = func(*args, **(kwargs or {}))
            return out * 0 if func is torch.ops.aten.mm.default else out

    with Zeros():
        y = torch.ones(2, 2).mm(torch.ones(2, 2))
    assert y.tolist() == [[0.0, 0.0], [0.0, 0.0]]


def test_func_objects_are_torchs_names():
    func = torch.ops.aten.add.Tensor
    assert func is torch.ops.aten.add.Tensor and str(func) == "aten.add.Tensor"
    assert func.overloadpacket is torch.ops.aten.add and func.name() == "aten::add"
    assert repr(torch.ops.aten.mm) == repr(ref.ops.aten.mm)


def test_every_aten_name_is_torchs():
    """Each record's aten name exists in torch (or the record is named chainrule.<name>)."""
    missing = []
    for name in sorted(ATEN_NAMES):
        packet = getattr(ref.ops.aten, name, None)
        if packet is None:
            missing.append(name)
    assert missing == []
    t = torch.ones(2, 2)
    for name, op in REGISTRY.items():
        if op.name in ("linear", "matmul", "vm", "convolution", "einsum"):
            continue
        func, _, _ = aten_call(op, (t,) * len(op.inputs), {})
        if func.namespace == "aten":
            packet = getattr(ref.ops.aten, func.overloadpacket._name)
            assert func._overloadname in packet.overloads(), (name, str(func))


def test_ops_a_handler_calls_are_seen_by_the_modes_below_it():
    logs = []
    for lib, base in ((ref, RefMode), (torch, TorchDispatchMode)):
        calls: list = []
        Log = _logger(base)

        class Adding(base):
            def __init__(self, calls: list, mm) -> None:
                super().__init__()
                self.calls, self.mm = calls, mm

            def __torch_dispatch__(self, func, types, args=(), kwargs=None):
                self.calls.append("adding:" + str(func))
                out = func(*args, **(kwargs or {}))
                return out.add(1.0) if func is self.mm else out

        with Log("outer:", calls), Adding(calls, lib.ops.aten.mm.default):
            y = lib.ones(2, 2).mm(lib.ones(2, 2))
        logs.append(calls)
        assert y.tolist() == [[3.0, 3.0], [3.0, 3.0]]
    assert [c for c in logs[1] if "ones" not in c and "fill" not in c] == \
        [c for c in logs[0] if "ones" not in c and "fill" not in c]


def test_custom_ops_are_seen_as_their_own_operator():
    seen = []
    for lib, base in ((ref, RefMode), (torch, TorchDispatchMode)):
        def double(x):
            return x * 2
        double.__annotations__ = {"x": lib.Tensor, "return": lib.Tensor}
        op = lib.library.custom_op("crdispatch::double", mutates_args=())(double)
        with _logger(base)() as log:
            y = op(lib.ones(3))
        assert y.tolist() == [2.0, 2.0, 2.0]
        seen.append([c for c in log.calls if c.startswith("crdispatch")])
    assert seen[0] == seen[1] == ["crdispatch.double.default"]


def test_inplace_writes_nothing_records_are_seen_with_aten_inplace_names():
    """An in-place op on a tensor that needs no gradient (an optimizer's update, an index
    assignment) reaches the modes as aten's in-place operator, and its write still happens."""
    seen, values = [], []
    for lib, base in ((ref, RefMode), (torch, TorchDispatchMode)):
        x = lib.ones(3)
        with _logger(base)() as log:
            x.add_(1)
            x.mul_(lib.full((3,), 2.0))
            x.sub_(lib.ones(3), alpha=0.5)
            x[0] = 7.0
        seen.append([c for c in log.calls if c.endswith(("_.Tensor", "_.default"))])
        values.append(x.tolist())
    assert seen[0] == seen[1] == ["aten.add_.Tensor", "aten.mul_.Tensor", "aten.sub_.Tensor",
                                  "aten.copy_.default"]
    assert values[0] == values[1] == [7.0, 3.5, 3.5]


def test_a_handler_may_change_an_inplace_calls_arguments():
    class Double(TorchDispatchMode):
        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            if str(func) == "aten.add_.Tensor":
                args = (args[0], args[1] * 2)
            return func(*args, **(kwargs or {}))

    x = torch.ones(2)
    with Double():
        out = x.add_(torch.ones(2))
    assert out is x and x.tolist() == [3.0, 3.0]


def test_scalar_overloads_and_inplace_overloads_are_torchs():
    seen = []
    for lib, base in ((ref, RefMode), (torch, TorchDispatchMode)):
        x, y = lib.ones(3), lib.full((3,), 2.0)
        with _logger(base)() as log:
            x.fill_(5)
            x.pow_(2)
            x.pow_(y)
            _ = (x > 1, x.eq(y), x.le(2.5))
            x.masked_fill_(y > 1, 0.0)
        seen.append([c for c in log.calls if "lift_fresh" not in c])
    assert seen[0] == seen[1]


# ---- whole logs against torch's: name, overload and arguments as PyTorch passes them ----------

def _shown(a, lib):
    if isinstance(a, lib.Tensor):
        return ("T", tuple(a.shape), str(a.dtype).rpartition(".")[2])
    if isinstance(a, (list, tuple)):
        return [_shown(x, lib) for x in a]
    if isinstance(a, (lib.dtype, lib.device, lib.memory_format, lib.layout)):
        return str(a)
    if isinstance(a, lib.Generator):
        return "generator"
    return a


def _full_log(lib, base, program) -> list:
    class Log(base):
        def __init__(self) -> None:
            super().__init__()
            self.calls: list = []

        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            kwargs = kwargs or {}
            self.calls.append((str(func), _shown(args, lib),
                               {k: _shown(v, lib) for k, v in kwargs.items()}))
            return func(*args, **kwargs)

    with Log() as log:
        program(lib)
    return log.calls


def _logs(program) -> tuple[list, list]:
    return _full_log(ref, RefMode, program), _full_log(torch, TorchDispatchMode, program)


def _factories(lib):
    g = lib.Generator().manual_seed(1)
    lib.ones(2, 3), lib.ones((2,), dtype=lib.float64), lib.ones(size=(1, 2), requires_grad=True)
    lib.zeros(2, dtype=lib.int32, device="cpu"), lib.empty(3), lib.ones([])
    lib.empty(1, 2, 3, 4, memory_format=lib.channels_last), lib.ones(2, layout=lib.strided)
    lib.full((2,), 1.5), lib.full((2,), 1), lib.full((2,), 2, dtype=lib.float32)
    lib.rand(2), lib.randn(2, 2, dtype=lib.float64), lib.rand(2, generator=g)
    lib.arange(5), lib.arange(5.0), lib.arange(1, 5), lib.arange(0, 1, 0.25)
    lib.eye(3), lib.eye(2, 3), lib.linspace(0, 1, 5), lib.logspace(0, 1, 3)
    lib.logspace(0, 1, 3, base=2), lib.scalar_tensor(2.0)
    lib.randint(5, (3,)), lib.randint(0, 5, (3,), dtype=lib.int32), lib.randperm(4)
    lib.randperm(4, generator=g), lib.ones(2, out=lib.empty(2))
    x = lib.ones(2, 3)
    lib.empty_like(x), lib.zeros_like(x, dtype=lib.int64), lib.ones_like(x, requires_grad=True)
    lib.full_like(x, 3), lib.rand_like(x), lib.randn_like(x), lib.randint_like(x, 5)
    lib.randint_like(x, 1, 5), lib.zeros_like(x, memory_format=lib.contiguous_format)
    lib.tensor([1.0, 2.0]), lib.tensor(3, dtype=lib.float64, requires_grad=True)
    lib.as_tensor([1, 2]), lib.as_tensor(np.ones(2)), lib.as_tensor(x), lib.from_numpy(np.ones(2))


def test_factories_are_seen_as_torchs_aten_calls():
    theirs, ours = _logs(_factories)
    assert ours == theirs
    assert ("aten.empty.memory_format", [[3]], {"device": "cpu", "pin_memory": False}) in ours


def test_a_handler_may_change_a_factorys_arguments():
    class Bigger(TorchDispatchMode):
        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            if func is torch.ops.aten.ones.default:
                args = ([3],)
            return func(*args, **(kwargs or {}))

    with Bigger():
        x = torch.ones(2, requires_grad=True)
        y = torch.zeros(2)
    assert x.tolist() == [1.0, 1.0, 1.0] and x.requires_grad
    assert y.tolist() == [0.0, 0.0]


def _fills(lib):
    x = lib.ones(3)
    x.zero_(), x.fill_(2.0), x.fill_(lib.tensor(1.0))
    x.uniform_(), x.normal_(), x.uniform_(-1, 1), x.uniform_(0, 2), x.normal_(0, 2)
    x.normal_(mean=1.0), x.uniform_(generator=lib.Generator())
    x.bernoulli_(0.5), x.bernoulli_(0.25), x.bernoulli_(lib.full((3,), 0.5))
    x.random_(), x.random_(10), x.random_(0, 10), x.exponential_(), x.exponential_(2)
    x.geometric_(0.5), x.log_normal_(), x.log_normal_(0.0), x.cauchy_(), x.cauchy_(1.0, 2.0)
    lib.manual_seed(0)
    lib.nn.Linear(3, 2)  # empty, then kaiming_uniform_'s uniform_


def test_zero_and_random_fills_are_seen_as_torchs_aten_calls():
    theirs, ours = _logs(_fills)
    assert ours == theirs
    assert ("aten.zero_.default", [("T", (3,), "float32")], {}) in ours


def test_random_fills_under_a_mode_draw_torchs_numbers():
    values = []
    for lib, base in ((ref, RefMode), (torch, TorchDispatchMode)):
        lib.manual_seed(3)
        x = lib.empty(4)
        with _logger(base)():
            x.uniform_(-1, 1)
            y = x.clone().normal_(0, 2)
        values.append((x.tolist(), y.tolist()))
    np.testing.assert_allclose(values[1], values[0], rtol=1e-6)


SGD_CONFIGS = [{"lr": 0.1}, {"lr": 0.1, "foreach": False},
               {"lr": 0.1, "momentum": 0.9, "weight_decay": 0.01, "foreach": False},
               {"lr": 0.1, "momentum": 0.9, "dampening": 0.5},
               {"lr": 0.1, "momentum": 0.9, "nesterov": True, "weight_decay": 0.1},
               {"lr": 0.05, "weight_decay": 0.1, "maximize": True}]


@pytest.mark.parametrize("config", SGD_CONFIGS, ids=str)
def test_sgd_steps_are_seen_as_torchs_single_tensor_update(config):
    """torch's SGD on CPU (foreach False or left to its default) updates each parameter with
    add_(grad, alpha=-lr); its step's record_function markers are left out of the compare."""
    logs = []
    for lib, base in ((ref, RefMode), (torch, TorchDispatchMode)):
        lib.manual_seed(0)
        model = lib.nn.Linear(3, 2)
        opt = lib.optim.SGD(model.parameters(), **config)
        calls = []
        for _ in range(2):
            model(lib.ones(4, 3)).sum().backward()
            calls += _full_log(lib, base, lambda lib, opt=opt: opt.step())
            opt.zero_grad()
        logs.append([c for c in calls if not c[0].startswith("profiler.")])
    assert logs[1] == logs[0]
    assert ("aten.add_.Tensor", [("T", (2, 3), "float32"), ("T", (2, 3), "float32")],
            {"alpha": -config["lr"]}) in logs[1]


def test_add_and_sub_with_alpha_are_one_call():
    def program(lib):
        x, y = lib.ones(3), lib.full((3,), 2.0)
        lib.add(x, y, alpha=2), lib.sub(x, 2, alpha=3), x.add_(y, alpha=0.5), x.sub_(y, alpha=1)
        x.add(y, alpha=-1), x.detach()
        a = lib.ones(3, requires_grad=True)
        lib.add(y, a, alpha=2).sum().backward()

    theirs, ours = _logs(program)
    keep = ("aten.add", "aten.sub", "aten.detach")
    assert [c for c in ours if c[0].startswith(keep)] == \
        [c for c in theirs if c[0].startswith(keep)]


OUT_CALLS = [
    "lib.add(x, y, out=c)", "lib.add(x, y, alpha=2, out=c)", "lib.add(x, 2, out=c)",
    "lib.mul(x, y, out=c)", "lib.multiply(x, y, out=c)", "lib.subtract(x, y, out=c)",
    "lib.div(x, y, rounding_mode='floor', out=c)", "lib.exp(x, out=c)", "lib.neg(x, out=c)",
    "lib.sum(m, 1, out=c)", "lib.sum(m, dim=1, keepdim=True, out=c31)", "lib.mean(m, 1, out=c)",
    "lib.prod(m, 1, out=c)", "lib.amax(m, 1, out=c)", "lib.cumsum(x, 0, out=c)",
    "lib.eq(x, y, out=b)", "lib.eq(x, 1, out=b)", "lib.gt(x, 0.5, out=b)",
    "lib.greater(x, y, out=b)", "lib.pow(x, 2, out=c)", "lib.pow(x, y, out=c)",
    "lib.pow(2, x, out=c)", "lib.where(b, x, y, out=c)", "lib.clamp(x, 0, 1, out=c)",
    "lib.fmod(x, 2, out=c)", "lib.remainder(x, y, out=c)", "lib.lerp(x, y, 0.5, out=c)",
    "lib.round(x, decimals=1, out=c)", "lib.mm(m, m, out=m2)", "lib.matmul(m, m, out=m2)",
    "lib.addmm(m, m, m, out=m2)", "lib.mv(m, x, out=c)", "lib.cat([x, y], out=c6)",
    "lib.gather(m, 1, idx, out=c31)", "lib.argmax(m, 1, out=i)", "lib.max(m, 1, out=(c, i))",
    "lib.min(m, 1, out=(c, i))", "lib.sort(x, out=(c, i))", "lib.topk(x, 2, out=(c2, i2))",
]


@pytest.mark.parametrize("call", OUT_CALLS)
def test_out_calls_are_seen_as_torchs_out_overloads(call):
    logs, results = [], []
    for lib, base in ((ref, RefMode), (torch, TorchDispatchMode)):
        env = dict(lib=lib, x=lib.ones(3), y=lib.full((3,), 2.0), m=lib.ones(3, 3) * 2,
                   c=lib.zeros(3), c31=lib.zeros(3, 1), c2=lib.zeros(2), c6=lib.zeros(6),
                   b=lib.zeros(3, dtype=lib.bool), i=lib.zeros(3, dtype=lib.int64),
                   i2=lib.zeros(2, dtype=lib.int64), m2=lib.zeros(3, 3),
                   idx=lib.zeros(3, 1, dtype=lib.int64))
        logs.append(_full_log(lib, base, lambda lib, env=env: exec(call, env)))
        results.append([env[k].tolist() for k in ("c", "c31", "m2", "b", "c6")])
    assert logs[1] == logs[0]
    assert logs[1][-1][0].endswith(("out", "_out", "out_mode", "values", "dim_max", "dim_min"))
    for ours, theirs in zip(*results):
        np.testing.assert_allclose(ours, theirs, rtol=1e-6)
