"""Graph nodes as graph tools read them: each op's nodes are a class named as PyTorch's, every
one a torch.autograd.graph.Node; AccumulateGrad holds its leaf as PyTorch's does; gradient
edges, mutation of saved tensors and in-place changes of views made under no_grad."""

import gc
import re
import weakref

import numpy as np
import pytest
import torch

import chainrule as cr

BOTH = pytest.mark.parametrize("m", [torch, cr], ids=["torch", "chainrule"])


def leaf(m, *shape, seed=0):
    rng = np.random.default_rng(seed)
    return m.tensor(rng.standard_normal(shape or (3,)), requires_grad=True)


def walk(fn) -> list:
    """Every node reachable from ``fn``, breadth first in next_functions order."""
    seen, order, queue = set(), [], [fn]
    while queue:
        node = queue.pop(0)
        if node is None or id(node) in seen:
            continue
        seen.add(id(node))
        order.append(node)
        queue.extend(child for child, _ in node.next_functions)
    return order


def described(node) -> tuple:
    """What tools read of a node: its class name, its class printed, its repr, its name()."""
    return (type(node).__name__, str(type(node)),
            re.sub(r"0x[0-9a-f]+", "ADDR", repr(node)), node.name())


GRAPHS = {
    "arithmetic": lambda m, x, y: (x * y + x / 2 - y.exp()).sum(),
    "matmul": lambda m, x, y: (x.reshape(3, 1) @ y.reshape(1, 3)).tanh().mean(),
    "views": lambda m, x, y: (x[1:].unsqueeze(0).expand(2, 2) * y[:2]).sum(),
    "join": lambda m, x, y: m.cat([x, y]).pow(2).amax(),
}


@pytest.mark.parametrize("name", GRAPHS)
def test_every_node_is_named_and_printed_as_pytorchs(name):
    def graph(m):
        return [described(n) for n in walk(GRAPHS[name](m, leaf(m), leaf(m, seed=1)).grad_fn)]

    ours, theirs = graph(cr), graph(torch)
    assert ours == theirs
    assert {d[0] for d in ours} >= {"AccumulateGrad"}


def test_nodes_with_qualified_names():
    def nodes(m):
        x = leaf(m)
        z = x * 1
        z[0] = 0.0  # an in-place write into a view: CopySlices
        c = m.zeros(3, dtype=m.float64)
        c.copy_(x)
        return described(z.grad_fn), described(c.grad_fn)

    assert nodes(cr) == nodes(torch)


@BOTH
def test_nodes_are_graph_nodes_and_one_class_per_op(m):
    x, y = leaf(m), leaf(m, seed=1)
    nodes = walk((x * y + x * 2).sum().grad_fn)
    assert all(isinstance(n, m.autograd.graph.Node) for n in nodes)
    assert all(issubclass(type(n), m.autograd.graph.Node) for n in nodes)
    assert type((x * y).grad_fn) is type((x * 2).grad_fn)
    assert type((x * y).grad_fn) is not type((x + y).grad_fn)


def test_custom_function_and_compiled_nodes_print_as_pytorchs():
    def scenario(m):
        class Square(m.autograd.Function):
            @staticmethod
            def forward(ctx, a):
                ctx.save_for_backward(a)
                return a * a

            @staticmethod
            def backward(ctx, g):
                (a,) = ctx.saved_tensors
                return 2 * a * g

        fn = Square.apply(leaf(m)).grad_fn
        return described(fn), isinstance(fn, m.autograd.graph.Node), fn.next_functions[0][0].name()

    assert scenario(cr) == scenario(torch)

    def f(x):
        return (x * 2).sin()

    ours = cr.compile(f)
    for _ in range(3):  # the third call replays
        out = ours(leaf(cr))
    theirs = torch.compile(f, backend="aot_eager")(leaf(torch))
    assert described(out.grad_fn) == described(theirs.grad_fn)
    assert isinstance(out.grad_fn, cr.autograd.graph.Node)


@BOTH
def test_accumulate_grad_keeps_a_leaf_made_inside_a_function(m):
    gc.collect()
    gc.disable()
    try:
        def make():
            w = m.ones(3, requires_grad=True)
            return (w * 2).sum()

        out = make()
        acc = out.grad_fn.next_functions[0][0].next_functions[0][0]
        assert type(acc).__name__ == "AccumulateGrad"
        w = acc.variable
        assert w.requires_grad and w.is_leaf and w.tolist() == [1.0, 1.0, 1.0]
        ref = weakref.ref(w)
        del w, acc
        assert ref() is not None  # the graph holds its AccumulateGrad, which holds the leaf
        out.backward()
        assert ref().grad.tolist() == [2.0, 2.0, 2.0]
        del out
        assert ref() is None  # no cycle: freed without a collection
    finally:
        gc.enable()


@BOTH
def test_a_leafs_hooks_outlive_its_accumulate_grad(m):
    x = leaf(m)
    calls = []
    x.register_hook(lambda g: calls.append(("hook", g.tolist())))
    x.register_post_accumulate_grad_hook(lambda t: calls.append(("post", t.grad.tolist())))
    acc = (x * 2).grad_fn.next_functions[0][0]
    acc.metadata["note"] = 1
    del acc
    gc.collect()
    (x * 3).sum().backward()
    again = (x * 1).grad_fn.next_functions[0][0]
    assert again.metadata == {}  # a new node: the old one died with its graph
    assert calls == [("hook", [3.0] * 3), ("post", [3.0] * 3)]
    assert again.variable is x


# ---- gradient edges --------------------------------------------------------------------------


def test_gradient_edges_as_inputs_and_outputs():
    def scenario(m):
        get = m.autograd.graph.get_gradient_edge
        x = leaf(m)
        h = x * 3
        y = (h ** 2).sum()
        edge = get(h)
        out = [type(edge).__name__, isinstance(edge, tuple), edge.output_nr,
               edge.node is h.grad_fn, edge.ownership_token]
        grads = m.autograd.grad(y, [x, edge], retain_graph=True)
        out.append([g.tolist() for g in grads])
        out.append(m.autograd.grad(get(y), get(x), retain_graph=True)[0].tolist())
        out.append(m.autograd.grad(get(h), x, grad_outputs=m.ones(3, dtype=m.float64),
                                   retain_graph=True)[0].tolist())
        for bad in (lambda: get(m.ones(2)),
                    lambda: m.autograd.grad(get(h), x, retain_graph=True),
                    lambda: m.autograd.grad(y, get(leaf(m)), retain_graph=True,
                                            materialize_grads=True)):
            with pytest.raises(RuntimeError) as info:
                bad()
            out.append(str(info.value).split(" (got")[0])
        y2 = (x * 2).sum()
        y2.backward(inputs=get(x))
        out.append(x.grad.tolist())
        return out

    ours, theirs = scenario(cr), scenario(torch)
    assert ours == theirs


# ---- mutation of saved tensors -----------------------------------------------------------------


def test_allow_mutation_on_saved_tensors():
    def scenario(m):
        graph = m.autograd.graph
        results = []
        with graph.allow_mutation_on_saved_tensors() as ctx:
            a = leaf(m, 2, 3)
            b = a.clone()
            out = (b ** 2).sum()
            b.sin_()
            out.backward()
            results += [a.grad.tolist(), b.tolist(), type(ctx).__name__]
            with pytest.raises(RuntimeError) as info:
                with graph.allow_mutation_on_saved_tensors():
                    pass
            results.append(str(info.value))
        with graph.allow_mutation_on_saved_tensors():
            out = (leaf(m).clone() ** 2).sum()
        with pytest.raises(AssertionError) as info:
            out.backward()
        results.append(str(info.value))
        return results

    ours, theirs = scenario(cr), scenario(torch)
    assert ours == theirs


def test_region_activation_memory_budget_and_cuda_switches():
    def scenario(m):
        graph = m.autograd.graph
        out = []
        for budget in (0.5, 2, True):
            try:
                with graph.region_activation_memory_budget(budget):
                    pass
            except (RuntimeError, ValueError, TypeError) as e:
                out.append((type(e).__name__, str(e)))
        out.append(graph.set_warn_on_accumulate_grad_stream_mismatch(False))
        out.append(graph.set_override_stale_capture_stream(False))
        return out

    assert scenario(cr) == scenario(torch)


# ---- in-place changes of views made under no_grad ------------------------------------------------


def _inplace_errors(m):
    def error(fn):
        try:
            fn()
        except RuntimeError as e:
            return str(e)
        return None

    def no_grad_view(base, make=lambda t: t[:2]):
        with m.no_grad():
            return make(base)

    out = []
    a = leaf(m).clone()
    v = no_grad_view(a)
    out.append(error(lambda: v.mul_(2)))
    out.append(error(lambda: a.mul_(2)))  # the base itself may change ...
    out.append(error(lambda: v * 2))  # ... but the view made under no_grad is then unusable
    out.append(error(lambda: no_grad_view(leaf(m)).mul_(2)))  # of a leaf
    out.append(error(lambda: no_grad_view(leaf(m).clone(), lambda t: t.unbind(0)[0]).mul_(2)))
    plain = m.ones(3)[:2]
    plain.requires_grad_()
    out.append(error(lambda: plain.mul_(2)))
    w = leaf(m).clone()
    with m.no_grad():
        u = w[:2]
        u.mul_(2)  # both under no_grad: allowed
    out.append((u.requires_grad, w.tolist()))
    return out


def test_inplace_on_a_view_made_under_no_grad_raises_as_pytorch():
    ours, theirs = _inplace_errors(cr), _inplace_errors(torch)
    assert ours == theirs
    assert ours[0].startswith("A view was created in no_grad mode and is being modified")

