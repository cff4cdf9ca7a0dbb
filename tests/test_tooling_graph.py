"""Graph introspection against torch: ``autograd.graph.Node`` as every grad_fn's type, metadata,
node hooks (order, replaced gradients, errors), register_multi_grad_hook and increment_version."""

import numpy as np
import pytest
from _tooling_helpers import leaf, outcome, rounded, run

X = [0.5, -1.3, 2.0]
Y = [1.5, 0.7, -0.4]


def double(m):
    class Double(m.autograd.Function):
        @staticmethod
        def forward(ctx, a):
            return a * 2

        @staticmethod
        def backward(ctx, g):
            return g * 2

    return Double


def test_every_grad_fn_is_a_node():
    def scenario(m):
        Node = m.autograd.graph.Node
        x = leaf(m, X)
        y = x * 3
        acc = y.grad_fn.next_functions[0][0]
        custom = double(m).apply(x).grad_fn
        return ([isinstance(n, Node) for n in (y.grad_fn, acc, custom)], isinstance(x, Node),
                [n.name() for n in (y.grad_fn, acc, custom)], acc.variable is x,
                custom.next_functions[0][0] is acc)

    assert run(scenario)[0] == [True, True, True]


def test_metadata_is_one_dict_per_node():
    def scenario(m):
        x = leaf(m, X)
        y = x * 3
        acc = y.grad_fn.next_functions[0][0]
        custom = double(m).apply(x).grad_fn
        for i, node in enumerate((y.grad_fn, acc, custom)):
            node.metadata["note"] = i
        return ([n.metadata for n in (y.grad_fn, acc, custom)],
                y.grad_fn.metadata is y.grad_fn.metadata, (x * 3).grad_fn.metadata)

    assert run(scenario)[0] == [{"note": 0}, {"note": 1}, {"note": 2}]


def test_hook_order_and_arguments():
    def scenario(m):
        log = []
        x, y = leaf(m, X), leaf(m, Y)
        z = x * y
        acc = z.grad_fn.next_functions[0][0]
        acc.register_hook(lambda gi, go: log.append(("acc post", len(gi), rounded(go[0]))))
        acc.register_prehook(lambda go: log.append(("acc pre", rounded(go[0]))))
        x.register_hook(lambda g: log.append(("x hook", rounded(g))))
        z.grad_fn.register_prehook(lambda go: log.append(("mul pre", rounded(go[0]))))
        z.grad_fn.register_hook(lambda gi, go: log.append(
            ("mul post", type(gi).__name__, [rounded(g) for g in gi], rounded(go[0]))))
        z.register_hook(lambda g: log.append(("z hook", rounded(g))))
        custom = double(m).apply(z)
        custom.grad_fn.register_hook(lambda gi, go: log.append(("custom post", rounded(gi[0]))))
        custom.sum().backward()
        return log

    log = run(scenario)
    assert [entry[0] for entry in log] == ["custom post", "z hook", "mul pre", "mul post",
                                           "x hook", "acc pre", "acc post"]


@pytest.mark.parametrize("kind", ["prehook", "posthook"])
def test_hooks_replace_gradients(kind):
    def scenario(m):
        x = leaf(m, X)
        w = x * 3  # MulBackward0 with a number: grad_inputs is (g, None)
        handle = (w.grad_fn.register_prehook(lambda go: (go[0] * 10,)) if kind == "prehook"
                  else w.grad_fn.register_hook(lambda gi, go: (gi[0] * 10, gi[1])))
        w.sum().backward(retain_graph=True)
        first = rounded(x.grad)
        handle.remove()
        x.grad = None
        w.sum().backward()
        return first, rounded(x.grad)

    assert run(scenario) == ([30.0] * 3, [3.0] * 3)


@pytest.mark.parametrize("case", ["prehook count", "posthook count", "posthook tensor",
                                  "prehook list"])
def test_hook_result_errors(case):
    def scenario(m):
        x = leaf(m, X)
        w = x * 3

        def named_hook(*args):
            return {"prehook count": (args[0][0], args[0][0]),
                    "posthook count": (args[0][0],),
                    "posthook tensor": args[0][0] if len(args) == 2 else None,
                    "prehook list": [args[0][0]]}[case]

        if case.startswith("prehook"):
            w.grad_fn.register_prehook(named_hook)
        else:
            w.grad_fn.register_hook(named_hook)
        return outcome(lambda: w.sum().backward())

    run(scenario)


# ---- register_multi_grad_hook ----------------------------------------------------------------


def test_multi_grad_hook_all():
    def scenario(m):
        a = m.tensor(np.linspace(0.1, 0.6, 6).reshape(2, 3), requires_grad=True)
        b = m.tensor(np.linspace(-0.5, 0.5, 6).reshape(2, 3), requires_grad=True)
        c, d = a * b, a * b
        calls = []
        handle = m.autograd.graph.register_multi_grad_hook(
            (a, b, c, d), lambda grads: calls.append([g is not None for g in grads]))
        c.sum().backward(retain_graph=True)
        c.sum().backward(inputs=(a,), retain_graph=True)
        m.autograd.grad(c.sum(), (c,), retain_graph=True)
        (c + d).sum().backward(retain_graph=True)
        handle.remove()
        c.sum().backward(retain_graph=True)
        return calls, isinstance(handle, m.utils.hooks.RemovableHandle
                                 if hasattr(m.utils, "hooks") else m.autograd.graph.RemovableHandle)

    calls, is_handle = run(scenario)
    assert calls == [[True, True, True, False], [True, False, True, False],
                     [False, False, True, False], [True, True, True, True]]
    assert is_handle


def test_multi_grad_hook_all_passes_the_gradients_after_the_last():
    def scenario(m):
        log = []
        x, y = leaf(m, X), leaf(m, Y)
        z = x * y
        m.autograd.graph.register_multi_grad_hook(
            (x, z), lambda grads: log.append(("multi", [rounded(g) for g in grads])))
        x.register_hook(lambda g: log.append("x hook"))
        z.register_hook(lambda g: log.append("z hook"))
        z.sum().backward()
        return log

    log = run(scenario)
    assert [e if isinstance(e, str) else e[0] for e in log] == ["z hook", "multi", "x hook"]


def test_multi_grad_hook_any_and_errors():
    def scenario(m):
        graph = m.autograd.graph
        a = m.tensor(np.linspace(0.1, 0.6, 6).reshape(2, 3), requires_grad=True)
        b = m.tensor(np.linspace(-0.5, 0.5, 6).reshape(2, 3), requires_grad=True)
        c = a * b
        calls = []
        handle = graph.register_multi_grad_hook((a, b, c, m.ones(2, 3)),
                                                lambda g: calls.append(rounded(g)), mode="any")
        c.sum().backward(retain_graph=True)
        c.sum().backward(retain_graph=True)
        handle.remove()
        c.sum().backward()
        errors = [outcome(lambda: graph.register_multi_grad_hook((a,), print, mode="some")),
                  outcome(lambda: graph.register_multi_grad_hook((a, m.ones(2)), print))]
        return calls, errors

    calls, errors = run(scenario)
    assert len(calls) == 2
    assert [e[0] for e in errors] == ["ValueError", "AssertionError"]


# ---- increment_version -----------------------------------------------------------------------


def test_increment_version():
    def scenario(m):
        a = leaf(m, X).clone()
        b = a.sin()
        m.autograd.graph.increment_version(a)
        error = outcome(lambda: b.sum().backward())
        c = a.cos()
        m.autograd.graph.increment_version([a, a])
        return (error[0], "is at version 1; expected version 0" in error[1],
                outcome(lambda: c.sum().backward())[0],
                outcome(lambda: m.autograd.graph.increment_version(3)))

    assert run(scenario)[0] == "RuntimeError"
