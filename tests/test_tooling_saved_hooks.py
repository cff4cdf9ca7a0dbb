"""Saved-tensor hooks and the values a node saved: every scenario runs on chainrule and on torch,
and the logs (which hook saw which tensor, in which order), values and errors must agree."""

import numpy as np
import pytest
import torch
from _tooling_helpers import leaf, outcome, run

import chainrule as cr

X = [0.5, -1.3, 2.0]
Y = [1.5, 0.7, -0.4]


def describe(t):
    """A tensor as the logs record it: where it comes from, and its values."""
    source = t.grad_fn.name() if t.grad_fn is not None else "leaf"
    return source, t.requires_grad, np.round(t.detach().numpy(), 6).tolist()


def logging_hooks(log, tag=""):
    def pack(t):
        log.append(("pack" + tag, describe(t)))
        return t.detach()

    def unpack(p):
        log.append(("unpack" + tag, describe(p)))
        return p

    return pack, unpack


# ---- saved_tensors_hooks --------------------------------------------------------------------


def test_pack_at_save_unpack_at_backward_in_order():
    def scenario(m):
        log = []
        x, y = leaf(m, X), leaf(m, Y)
        with m.autograd.graph.saved_tensors_hooks(*logging_hooks(log)):
            z = (x * y).exp()  # mul saves x and y, exp its result
            log.append("forward done")
        z.sum().backward()
        log.append(np.round(x.grad.numpy(), 6).tolist())
        return log

    log = run(scenario)
    assert [entry[0] for entry in log[:3]] == ["pack", "pack", "pack"]
    assert log[2][1][0] == "ExpBackward0"


def test_nested_contexts_innermost_wins_and_hooks_stay_with_their_values():
    def scenario(m):
        log = []
        x, y = leaf(m, X), leaf(m, Y)
        with m.autograd.graph.saved_tensors_hooks(*logging_hooks(log, " outer")):
            a = x * y
            with m.autograd.graph.saved_tensors_hooks(*logging_hooks(log, " inner")):
                b = a.sin()
            c = b.cos()
        d = c.tanh()  # no hooks: nothing logged
        d.sum().backward()
        return [entry[0] for entry in log]

    assert run(scenario) == ["pack outer", "pack outer", "pack inner", "pack outer",
                             "unpack outer", "unpack inner", "unpack outer", "unpack outer"]


def test_hooks_that_transform_give_the_plain_gradients():
    def scenario(m):
        x, y = leaf(m, X), leaf(m, Y)
        with m.autograd.graph.saved_tensors_hooks(lambda t: (t.detach() * 2, "note"),
                                                  lambda p: p[0] / 2):
            z = (x * y).sigmoid() / y
        gx, gy = m.autograd.grad(z.sum(), (x, y), create_graph=True)
        (gxx,) = m.autograd.grad(gx.sum(), x)  # second order through unpacked values
        return [np.round(g.detach().numpy(), 8).tolist() for g in (gx, gy, gxx)]

    run(scenario)


def test_no_pack_without_recording_and_no_grad_inside_the_hooks():
    def scenario(m):
        log = []

        def pack(t):
            log.append(("pack", m.is_grad_enabled()))
            return t * 3  # records nothing: pack hooks run without grad

        def unpack(p):
            log.append(("unpack", m.is_grad_enabled()))
            return p / 3

        x = leaf(m, X)
        with m.autograd.graph.saved_tensors_hooks(pack, unpack):
            with m.no_grad():
                x.exp()
            m.tensor([1.0, 2.0]).exp()
            y = x.exp()
        y.sum().backward()
        return log, np.round(x.grad.numpy(), 6).tolist()

    assert run(scenario)[0] == [("pack", False), ("unpack", False)]


def test_custom_function_save_for_backward_goes_through_the_hooks():
    def scenario(m):
        log = []

        class Scale(m.autograd.Function):
            @staticmethod
            def forward(ctx, a, b):
                out = a * b
                ctx.save_for_backward(a, out)
                log.append("forward")
                return out

            @staticmethod
            def backward(ctx, g):
                a, out = ctx.saved_tensors
                log.append(("backward", out.grad_fn is not None, out.requires_grad))
                return g * out / a, g * a

        x, y = leaf(m, X), leaf(m, Y)
        with m.autograd.graph.saved_tensors_hooks(*logging_hooks(log)):
            o = Scale.apply(x, y)
            log.append("apply done")
        o.sum().backward()
        return log, np.round(y.grad.numpy(), 6).tolist()

    log, _ = run(scenario)
    assert [e if isinstance(e, str) else e[0] for e in log] == [
        "forward", "pack", "pack", "apply done", "unpack", "unpack", "backward"]


@pytest.mark.parametrize("case", ["non-tensor unpack", "in-place pack"])
def test_hook_errors(case):
    def scenario(m):
        x = leaf(m, X).clone()
        if case == "non-tensor unpack":
            with m.autograd.graph.saved_tensors_hooks(lambda t: t, lambda p: 3):
                y = x.sin()
            return outcome(lambda: y.sum().backward())
        with m.autograd.graph.saved_tensors_hooks(lambda t: t.add_(0), lambda p: p):
            return outcome(lambda: x.sin())

    assert run(scenario)[0] in ("TypeError", "RuntimeError")


def test_disable_saved_tensors_hooks():
    def scenario(m):
        graph = m.autograd.graph
        hooks = graph.saved_tensors_hooks(lambda t: t, lambda t: t)
        results = []

        def push_inside(message):
            with graph.disable_saved_tensors_hooks(message):
                with hooks:
                    pass

        results.append(outcome(lambda: push_inside("no hooks here")))

        def nested():
            with graph.disable_saved_tensors_hooks("outer message"):
                with graph.disable_saved_tensors_hooks("inner message"):
                    pass
                with hooks:  # the outer message is back
                    pass

        results.append(outcome(nested))

        def disable_while_active():
            with hooks:
                with graph.disable_saved_tensors_hooks("hooks are active"):
                    pass

        results.append(outcome(disable_while_active))
        with hooks:  # everything restored
            x = leaf(m, X)
            results.append(describe(x.exp()))
        return results

    results = run(scenario)
    assert results[:3] == [("RuntimeError", "no hooks here"), ("RuntimeError", "outer message"),
                           ("RuntimeError", "hooks are active")]


def test_save_on_cpu_keeps_values_and_gradients():
    def scenario(m):
        x, y = leaf(m, X), leaf(m, Y)
        with m.autograd.graph.save_on_cpu(pin_memory=False):
            z = (x * y).exp() * x
        z.sum().backward()
        return np.round(x.grad.numpy(), 8).tolist(), np.round(y.grad.numpy(), 8).tolist()

    run(scenario)


# ---- grad_fn._saved_<name> and _raw_saved_<name> ---------------------------------------------

A = [[0.5, -1.0, 2.0], [1.5, 0.25, -0.75], [0.3, 0.9, -1.1]]
OPS = {
    "mul": lambda m, x, y, a: x * y,
    "div": lambda m, x, y, a: x / y,
    "pow": lambda m, x, y, a: x ** 2,
    "pow_tensor": lambda m, x, y, a: x.abs() ** y,
    "exp": lambda m, x, y, a: x.exp(),
    "tanh": lambda m, x, y, a: x.tanh(),
    "sigmoid": lambda m, x, y, a: x.sigmoid(),
    "relu": lambda m, x, y, a: x.relu(),
    "log": lambda m, x, y, a: y.abs().log(),
    "sin": lambda m, x, y, a: x.sin(),
    "sqrt": lambda m, x, y, a: y.abs().sqrt(),
    "matmul_mv": lambda m, x, y, a: a @ x,
    "bmm": lambda m, x, y, a: m.bmm(a[None], a[None]),
    "dot": lambda m, x, y, a: m.dot(x, y),
    "sum": lambda m, x, y, a: x.sum(),
    "sum_dim": lambda m, x, y, a: a.sum(0),
    "view": lambda m, x, y, a: a.view(9),
    "softmax": lambda m, x, y, a: x.softmax(0),
    "log_softmax": lambda m, x, y, a: x.log_softmax(0),
    "clamp": lambda m, x, y, a: x.clamp(0, 1),
    "var": lambda m, x, y, a: a.var(0),
    "max": lambda m, x, y, a: x.max(),
}


@pytest.mark.parametrize("name", sorted(OPS))
def test_saved_attributes_named_and_valued_as_torch(name):
    def scenario(m):
        x, y, a = leaf(m, X), leaf(m, Y), leaf(m, A)
        fn = OPS[name](m, x, y, a).grad_fn
        names = sorted(n for n in dir(fn) if n.startswith("_saved_") or n.startswith("_raw_saved_"))
        values = {}
        for n in names:
            if n.startswith("_saved_"):
                v = getattr(fn, n)
                values[n] = describe(v) if hasattr(v, "grad_fn") else v
        return fn.name(), names, values

    run(scenario)


def test_saved_attributes_where_chainrule_differs():
    """mm saves no sizes or strides (its rules read none); a Python number reads as the number
    (PyTorch: a 0-d tensor for tensor arguments, so also a _raw_saved_ one)."""
    x, a = leaf(cr, X), leaf(cr, A)
    mm = cr.mm(a, a).grad_fn
    assert mm._saved_self is a and mm._saved_mat2 is a
    assert [n for n in dir(mm) if n.startswith(("_saved_", "_raw_saved_"))] == [
        "_raw_saved_mat2", "_raw_saved_self", "_saved_mat2", "_saved_self"]
    scaled = (x * 2).grad_fn
    assert scaled._saved_other == 2 and scaled._saved_self is None
    assert "_raw_saved_other" not in dir(scaled)
    assert float(torch.tensor(X, requires_grad=True).mul(2).grad_fn._saved_other) == 2


def test_saved_values_identity_and_freeing():
    def scenario(m):
        x, y = leaf(m, X), leaf(m, Y)
        z = x * y
        e = z.exp()
        c = x * m.tensor(Y, dtype=m.float64)  # other does not require grad: self is not saved
        facts = [z.grad_fn._saved_self is x, e.grad_fn._saved_result is e,
                 e.grad_fn._saved_result.grad_fn is e.grad_fn, c.grad_fn._saved_self]
        e.sum().backward()
        facts.append(outcome(lambda: e.grad_fn._saved_result))
        facts.append(outcome(lambda: z.grad_fn._saved_other))
        facts.append(outcome(lambda: e.grad_fn._saved_nothing)[0])  # names the class: OpNode
        facts.append(outcome(lambda: z.grad_fn._saved_dim))  # another op's name
        return facts

    facts = run(scenario)
    assert facts[:4] == [True, False, True, None]
    assert facts[4][0] == "RuntimeError" and "a second time" in facts[4][1]
    assert facts[6:] == ["AttributeError", ("AttributeError", "'MulBackward0' object has no "
                                            "attribute '_saved_dim'")]


def test_raw_saved_tensor_register_hooks():
    def scenario(m):
        log = []
        x, y = leaf(m, X), leaf(m, Y)
        z = x * y
        raw = z.grad_fn._raw_saved_self
        facts = [describe(raw.unpack()), raw.unpack_hook]
        raw.register_hooks(*logging_hooks(log))
        facts.append(describe(raw.data))
        facts.append(outcome(lambda: raw.register_hooks(*logging_hooks(log))))
        facts.append(describe(z.grad_fn._saved_self))
        z.sum().backward()
        facts.append(outcome(lambda: z.grad_fn._raw_saved_other.register_hooks(
            *logging_hooks(log))))
        c = x * m.tensor(Y, dtype=m.float64)
        facts.append(outcome(lambda: c.grad_fn._raw_saved_self.register_hooks(
            *logging_hooks(log))))
        facts.append(np.round(y.grad.numpy(), 6).tolist())
        return log, facts

    log, facts = run(scenario)
    assert [entry[0] for entry in log] == ["pack", "unpack", "unpack"]
    assert [f[0] for f in facts[3::3]] == ["RuntimeError", "RuntimeError"]


def test_custom_function_raw_saved_tensors():
    def scenario(m):
        log = []

        class Square(m.autograd.Function):
            @staticmethod
            def forward(ctx, a):
                ctx.save_for_backward(a)
                return a * a

            @staticmethod
            def backward(ctx, g):
                (a,) = ctx.saved_tensors
                return 2 * a * g

        x = leaf(m, X)
        o = Square.apply(x)
        (raw,) = o.grad_fn._raw_saved_tensors
        raw.register_hooks(*logging_hooks(log))
        o.sum().backward()
        return log, np.round(x.grad.numpy(), 6).tolist()

    run(scenario)
