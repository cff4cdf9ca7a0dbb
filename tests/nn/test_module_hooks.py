"""nn.Module's hooks against torch: forward (pre-)hooks with prepend/with_kwargs/always_call,
full and deprecated backward hooks, the global module hooks and the registration hooks.

Each scenario is one function of the library (``torch`` or ``chainrule``) that returns what it
saw; the two runs must agree."""

from __future__ import annotations

import warnings

import pytest
import torch

import chainrule


def _both(scenario):
    return scenario(torch), scenario(chainrule)


def _values(grads) -> tuple:
    return tuple(None if g is None else g.detach().numpy().tolist() for g in grads)


def _net(lib):
    class Net(lib.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.lin = lib.nn.Linear(3, 2)

        def forward(self, x, scale=1.0):
            return self.lin(x) * scale

    net = Net()
    with lib.no_grad():
        net.lin.weight.copy_(lib.tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]))
        net.lin.bias.copy_(lib.tensor([0.5, -0.5]))
    return net


def test_forward_hooks_order_prepend_kwargs_and_replacement() -> None:
    def scenario(lib):
        log = []
        net = _net(lib)
        hooks = [
            net.register_forward_pre_hook(lambda m, args: log.append(("pre", len(args)))),
            net.register_forward_pre_hook(lambda m, args: log.append(("first",)), prepend=True),
            net.register_forward_pre_hook(lambda m, args, kw: (args, {**kw, "scale": 2.0}),
                                          with_kwargs=True),
            net.register_forward_hook(lambda m, args, kw, out: log.append(("kw", sorted(kw))),
                                      with_kwargs=True),
            net.register_forward_hook(lambda m, args, out: out + 1),
            net.register_forward_hook(lambda m, args, out: log.append(("last",)), prepend=False),
            lib.nn.modules.module.register_module_forward_pre_hook(
                lambda m, args: log.append(("global pre", type(m).__name__))),
            lib.nn.modules.module.register_module_forward_hook(
                lambda m, args, out: log.append(("global", type(m).__name__))),
        ]
        y = net(lib.tensor([[1.0, 0.0, -1.0]]))
        log.append(("y", y.detach().numpy().tolist()))
        for h in hooks:
            h.remove()
        log.append(("after remove", net(lib.tensor([[1.0, 0.0, -1.0]])).detach().numpy().tolist()))
        return log

    ours, theirs = _both(scenario)
    assert ours == theirs


def test_forward_pre_hook_return_values() -> None:
    def scenario(lib):
        out = []
        single = lib.nn.Identity()
        single.register_forward_pre_hook(lambda m, args: 5)  # a single value becomes (5,)
        out.append(single(1))
        bad = lib.nn.Identity()
        bad.register_forward_pre_hook(lambda m, args, kw: 5, with_kwargs=True)
        with pytest.raises(RuntimeError) as e:
            bad(1)
        out.append(str(e.value))
        return out

    ours, theirs = _both(scenario)
    assert ours == theirs


def test_always_call_forward_hooks_run_when_forward_raises() -> None:
    def scenario(lib):
        log = []

        class Bad(lib.nn.Module):
            def forward(self, x):
                raise ValueError("boom")

        bad = Bad()
        bad.register_forward_hook(lambda m, args, out: log.append(("always", out)),
                                  always_call=True)
        bad.register_forward_hook(lambda m, args, out: log.append(("not run", out)))
        bad.register_forward_hook(lambda m, args, out: 1 / 0, always_call=True)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            with pytest.raises(ValueError, match="boom"):
                bad(1)
        log.append([str(w.message) for w in caught])
        return log

    ours, theirs = _both(scenario)
    assert ours == theirs


def test_full_backward_hooks_see_and_replace_gradients() -> None:
    def scenario(lib):
        log = []
        net = _net(lib)
        net.register_full_backward_hook(
            lambda m, gi, go: log.append(("hook", _values(gi), _values(go))))
        net.register_full_backward_pre_hook(lambda m, go: (go[0] * 10,))
        net.register_full_backward_pre_hook(lambda m, go: log.append(("pre", _values(go))),
                                            prepend=True)
        net.register_full_backward_hook(lambda m, gi, go: (gi[0] + 1,))
        x = lib.tensor([[1.0, 0.0, -1.0]], requires_grad=True)
        y = net(x, scale=3.0)
        log.append(y.grad_fn.name())
        (y * lib.tensor([[1.0, 2.0]])).sum().backward()
        log.append(("x.grad", x.grad.numpy().tolist()))
        log.append(("weight.grad", net.lin.weight.grad.numpy().tolist()))
        return log

    ours, theirs = _both(scenario)
    assert ours == theirs


def test_full_backward_hook_with_non_tensor_inputs_and_several_outputs() -> None:
    def scenario(lib):
        log = []

        class Two(lib.nn.Module):
            def forward(self, a, k, b):
                return a * k, b.sum() * 2

        two = Two()
        two.register_full_backward_hook(lambda m, gi, go: log.append((_values(gi), _values(go))))
        a = lib.tensor([1.0, 2.0], requires_grad=True)
        b = lib.tensor([3.0, 4.0], requires_grad=True)
        u, v = two(a, 3, b)
        (u.sum() + v).backward()
        log.append((a.grad.numpy().tolist(), b.grad.numpy().tolist()))
        return log

    ours, theirs = _both(scenario)
    assert ours == theirs


def test_backward_hook_errors() -> None:
    def scenario(lib):
        out = []
        lin = lib.nn.Linear(2, 2)
        lin.register_full_backward_hook(lambda m, gi, go: (gi[0], gi[0]))
        with pytest.raises(RuntimeError) as e:
            lin(lib.ones(1, 2, requires_grad=True)).sum().backward()
        out.append(str(e.value))
        pre = lib.nn.Linear(2, 2)
        pre.register_full_backward_pre_hook(lambda m, go: (go[0], go[0]))
        with pytest.raises(RuntimeError) as e:
            pre(lib.ones(1, 2, requires_grad=True)).sum().backward()
        out.append(str(e.value))
        for first, second in (("register_backward_hook", "register_full_backward_hook"),
                              ("register_full_backward_hook", "register_backward_hook")):
            m = lib.nn.ReLU()
            getattr(m, first)(lambda *a: None)
            with pytest.raises(RuntimeError) as e:
                getattr(m, second)(lambda *a: None)
            out.append(str(e.value))
        return out

    ours, theirs = _both(scenario)
    assert ours == theirs


def test_full_backward_hook_when_no_input_requires_grad() -> None:
    def scenario(lib):
        log = []
        lin = lib.nn.Linear(2, 2)
        lin.register_full_backward_hook(lambda m, gi, go: log.append((gi, len(go))))
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            lin(lib.ones(1, 2)).sum().backward()
        log.append([str(w.message)[:80] for w in caught])
        return log

    ours, theirs = _both(scenario)
    assert ours == theirs


def test_deprecated_backward_hook_sees_the_last_node_only() -> None:
    def scenario(lib):
        log = []

        class Mul(lib.nn.Module):
            def forward(self, a, b):
                return a * b

        mul = Mul()
        mul.register_backward_hook(lambda m, gi, go: log.append((_values(gi), _values(go))))
        a = lib.tensor([1.0, 2.0], requires_grad=True)
        b = lib.tensor([3.0, 4.0], requires_grad=True)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            out = mul(a, b)
        (out * lib.tensor([1.0, -1.0])).sum().backward()
        log.append([(w.category.__name__, str(w.message)) for w in caught])

        class Nested(lib.nn.Module):  # output not a tensor or tuple of tensors: a FutureWarning
            def forward(self, a):
                return {"out": a * 2}

        nested = Nested()
        nested.register_backward_hook(lambda m, gi, go: None)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            nested(a)
        log.append([(w.category.__name__, str(w.message)) for w in caught])
        return log

    ours, theirs = _both(scenario)
    assert ours == theirs


def test_global_backward_hooks() -> None:
    def scenario(lib):
        log = []
        module = lib.nn.modules.module
        full = module.register_module_full_backward_hook(
            lambda m, gi, go: log.append(("global", type(m).__name__, _values(go))))
        pre = module.register_module_full_backward_pre_hook(
            lambda m, go: log.append(("global pre", type(m).__name__)))
        with pytest.raises(RuntimeError) as e:
            module.register_module_backward_hook(lambda *a: None)
        log.append(str(e.value))
        net = lib.nn.Sequential(lib.nn.Linear(2, 2), lib.nn.Tanh())
        net(lib.ones(1, 2, requires_grad=True)).sum().backward()
        full.remove()
        pre.remove()
        net(lib.ones(1, 2, requires_grad=True)).sum().backward()
        # with none left the global flag stays "full": a non-full one is still refused
        with pytest.raises(RuntimeError):
            module.register_module_backward_hook(lambda *a: None)
        return [entry if isinstance(entry, str) else (entry[0], entry[1]) for entry in log]

    ours, theirs = _both(scenario)
    assert ours == theirs


def test_registration_hooks_see_and_replace_what_is_registered() -> None:
    def scenario(lib):
        log = []
        module = lib.nn.modules.module
        hooks = [
            module.register_module_parameter_registration_hook(
                lambda m, name, p: log.append(("param", type(m).__name__, name))),
            module.register_module_buffer_registration_hook(
                lambda m, name, b: log.append(("buffer", type(m).__name__, name))),
            module.register_module_module_registration_hook(
                lambda m, name, sub: log.append(("module", type(m).__name__, name))),
            module.register_module_buffer_registration_hook(
                lambda m, name, b: None if b is None else b + 10),
        ]
        bn = lib.nn.BatchNorm1d(2)
        lib.nn.Sequential(lib.nn.Linear(1, 1), lib.nn.ReLU())
        log.append(("running_var", bn.running_var.numpy().tolist()))
        for h in hooks:
            h.remove()
        lib.nn.Linear(1, 1)
        return log

    ours, theirs = _both(scenario)
    assert ours == theirs


def test_hook_handles_are_removable_once_and_in_with_blocks() -> None:
    def scenario(lib):
        log = []
        relu = lib.nn.ReLU()
        with relu.register_forward_hook(lambda m, args, out: log.append("inside")):
            relu(lib.ones(1))
        relu(lib.ones(1))
        handle = relu.register_forward_pre_hook(lambda m, args: log.append("pre"),
                                                with_kwargs=False)
        handle.remove()
        handle.remove()
        relu(lib.ones(1))
        log.append((len(relu._forward_hooks), len(relu._forward_pre_hooks),
                    len(relu._forward_pre_hooks_with_kwargs)))
        return log

    ours, theirs = _both(scenario)
    assert ours == theirs


def test_no_hooks_means_no_wrapping() -> None:
    x = chainrule.ones(1, 2, requires_grad=True)
    lin = chainrule.nn.Linear(2, 2)
    assert lin(x).grad_fn.name() != "BackwardHookFunctionBackward"
    handle = lin.register_full_backward_hook(lambda *a: None)
    assert lin(x).grad_fn.name() == "BackwardHookFunctionBackward"
    handle.remove()
    assert lin(x).grad_fn.name() != "BackwardHookFunctionBackward"
