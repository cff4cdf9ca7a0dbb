"""torch.fx on chainrule against PyTorch's: each scenario runs on both libraries and compares the
graphs (op, name, target name, argument structure), the generated code, the printed forms and
the values the GraphModules compute."""

from __future__ import annotations

import copy
import math
import operator
import pickle
import subprocess
import sys

import numpy as np
import pytest
import torch as ref

import chainrule as torch

LIBS = (torch, ref)


def helper(x, k):
    return x * k


torch.fx.wrap("helper")
ref.fx.wrap("helper")


def _name(target) -> str:
    return target if isinstance(target, str) else target.__name__


def _structure(a):
    """An argument with nodes as ("node", name), tensors and dtypes as text."""
    if isinstance(a, (torch.fx.Node, ref.fx.Node)):
        return ("node", a.name)
    if isinstance(a, (list, tuple)):
        return (type(a).__name__.replace("immutable_", ""), [_structure(x) for x in a])
    if isinstance(a, dict):
        return ("dict", [(k, _structure(v)) for k, v in a.items()])
    if isinstance(a, slice):
        return ("slice", _structure(a.start), _structure(a.stop), _structure(a.step))
    if isinstance(a, (torch.dtype, ref.dtype)):
        return ("dtype", str(a))
    return repr(a)


def nodes(graph) -> list[tuple]:
    return [(n.op, n.name, _name(n.target), _structure(n.args), _structure(n.kwargs),
             sorted(u.name for u in n.users)) for n in graph.nodes]


def _numpy(value):
    if isinstance(value, (torch.Tensor, ref.Tensor)):
        return value.detach().numpy()
    if isinstance(value, dict):
        return {k: _numpy(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_numpy(v) for v in value]
    return value


def assert_same_values(ours, theirs, rtol=1e-5, atol=1e-6):
    ours, theirs = _numpy(ours), _numpy(theirs)
    if isinstance(ours, dict):
        assert list(ours) == list(theirs)
        for k in ours:
            assert_same_values(ours[k], theirs[k], rtol, atol)
    elif isinstance(ours, list):
        assert len(ours) == len(theirs)
        for a, b in zip(ours, theirs):
            assert_same_values(a, b, rtol, atol)
    elif isinstance(ours, np.ndarray):
        assert ours.shape == theirs.shape and ours.dtype == theirs.dtype
        np.testing.assert_allclose(ours, theirs, rtol=rtol, atol=atol)
    else:
        assert ours == theirs


def share_weights(ours, theirs) -> None:
    """Give the PyTorch module chainrule's parameters and buffers."""
    state = {k: ref.tensor(v.detach().numpy().copy()) for k, v in ours.state_dict().items()}
    theirs.load_state_dict(state)


# ---- the scenarios, written once for either library --------------------------------------------

def make_model(lib):
    nn = lib.nn

    class Block(nn.Module):
        def __init__(self):
            super().__init__()
            self.lin = nn.Linear(4, 3)
            self.p = nn.Parameter(lib.ones(3))
            self.seq = nn.Sequential(nn.ReLU(), nn.Linear(3, 3))
            self.register_buffer("buf", lib.arange(3.0))

        def forward(self, x, y=2):
            a = self.lin(x) + self.p
            b = a.relu() * y
            c = b.sigmoid().sum(dim=-1, keepdim=True)
            d = a.view(-1, 3)[:, 0:2]
            e = b - self.buf
            n = x.shape[0]
            return {"c": c, "d": d, "e": self.seq(e[:, :3]), "n": n,
                    "t": (a, -b, abs(b), 2 ** b, b @ a.T, a.to(lib.float64))}

    lib.manual_seed(0)
    return Block()


def fn(x, y, scale=0.5):
    h = (x + y) * scale
    h = h.tanh() - y / 2
    first, second = h.chunk(2, dim=0)
    z = first.exp() + second.clamp(min=-1.0, max=1.0)
    w = z.reshape(-1).softmax(dim=0)[None]
    return z.mean(), w, (z > 0).float(), math.sqrt(x.size(0)) * z, helper(z, 3)


def _traced_pair(make, *args, **kwargs):
    ours = make(torch)
    theirs = make(ref)
    share_weights(ours, theirs)
    return ours, theirs, torch.fx.symbolic_trace(ours, *args), ref.fx.symbolic_trace(theirs,
                                                                                      *args)


def _inputs(shape=(2, 4), seed=0):
    data = np.random.default_rng(seed).standard_normal(shape).astype(np.float32)
    return torch.tensor(data), ref.tensor(data)


# ---- tracing ----------------------------------------------------------------------------------

def test_module_graph_code_and_values_match_torch():
    ours, theirs, gm, gm_ref = _traced_pair(make_model)
    assert nodes(gm.graph) == nodes(gm_ref.graph)
    assert gm.code == gm_ref.code
    assert str(gm.graph) == str(gm_ref.graph)
    assert [n.format_node() for n in gm.graph.nodes] == \
        [n.format_node() for n in gm_ref.graph.nodes]
    assert str(gm) == str(gm_ref)
    assert type(gm).__name__ == type(gm_ref).__name__ == "Block"
    assert isinstance(gm, torch.fx.GraphModule) and isinstance(gm, torch.nn.Module)
    x, x_ref = _inputs()
    assert_same_values(gm(x), gm_ref(x_ref))
    assert_same_values(gm(x), ours(x))
    assert_same_values(gm(x, 3), theirs(x_ref, 3))
    # the GraphModule holds what the nodes name: plain Modules along the paths
    assert [n for n, _ in gm.named_modules()] == [n for n, _ in gm_ref.named_modules()]
    assert sorted(gm.state_dict()) == sorted(gm_ref.state_dict())


def test_function_graph_code_and_values_match_torch():
    gm = torch.fx.symbolic_trace(fn)
    gm_ref = ref.fx.symbolic_trace(fn)
    assert nodes(gm.graph) == nodes(gm_ref.graph)
    # the wrap line, the math and wrapped calls included
    assert gm.code == gm_ref.code
    assert type(gm).__name__ == "fn"
    helper_node = next(n for n in gm.graph.nodes if n.name == "helper")
    assert helper_node.target is helper and helper_node.meta["is_wrapped"]
    sqrt_node = next(n for n in gm.graph.nodes if n.name == "sqrt")
    assert sqrt_node.target is math.sqrt
    x, x_ref = _inputs((4, 3))
    y, y_ref = _inputs((4, 3), seed=1)
    assert_same_values(gm(x, y), gm_ref(x_ref, y_ref))
    assert_same_values(gm(x, y), fn(x, y))
    assert_same_values(gm(x, y, 2.0), gm_ref(x_ref, y_ref, 2.0))


def test_readable_and_printed_forms_match_torch(capsys):
    _, _, gm, gm_ref = _traced_pair(make_model)
    assert gm.print_readable(print_output=False) == gm_ref.print_readable(print_output=False)
    gm.print_readable()
    ours = capsys.readouterr().out
    gm_ref.print_readable()
    assert ours == capsys.readouterr().out


def test_print_tabular_is_torchs(capsys):
    gm, gm_ref = torch.fx.symbolic_trace(fn), ref.fx.symbolic_trace(fn)
    try:
        import tabulate  # noqa: F401  (neither library depends on it)
    except ImportError:
        # PyTorch prints how to install it and raises the ImportError
        with pytest.raises(ImportError) as ours:
            gm.graph.print_tabular()
        out = capsys.readouterr().out
        with pytest.raises(ImportError) as theirs:
            gm_ref.graph.print_tabular()
        assert out == capsys.readouterr().out
        assert type(ours.value) is type(theirs.value)
    else:
        gm.graph.print_tabular()
        out = capsys.readouterr().out
        gm_ref.graph.print_tabular()
        assert out == capsys.readouterr().out


def test_tensor_constants_become_attributes():
    consts = {"chainrule": torch.full((3,), 2.0), "torch": ref.full((3,), 2.0)}

    def f_ref(x):
        return x * consts["torch"] + 1

    def f_ours(x):
        return x * consts["chainrule"] + 1

    gm, gm_ref = torch.fx.symbolic_trace(f_ours), ref.fx.symbolic_trace(f_ref)
    assert nodes(gm.graph) == nodes(gm_ref.graph)
    assert gm.code.replace("f_ours", "f") == gm_ref.code.replace("f_ref", "f")
    assert gm._tensor_constant0 is consts["chainrule"]
    x, x_ref = _inputs((2, 3))
    assert_same_values(gm(x), gm_ref(x_ref))
    assert_same_values(gm(x), f_ours(x))


def test_custom_tracer_leaf_modules_and_concrete_args():
    def make(lib):
        class Inner(lib.nn.Module):
            def forward(self, x):
                return x.relu() + 1

        class Outer(lib.nn.Module):
            def __init__(self):
                super().__init__()
                self.inner = Inner()
                self.lin = lib.nn.Linear(3, 3)

            def forward(self, x, flag=True):
                x = self.inner(x)
                return self.lin(x) if flag else x

        lib.manual_seed(0)
        return Outer()

    class Leaves(torch.fx.Tracer):
        def is_leaf_module(self, m, qualname):
            return qualname == "inner" or super().is_leaf_module(m, qualname)

    class LeavesRef(ref.fx.Tracer):
        def is_leaf_module(self, m, qualname):
            return qualname == "inner" or super().is_leaf_module(m, qualname)

    ours, theirs = make(torch), make(ref)
    share_weights(ours, theirs)
    graph = Leaves().trace(ours, concrete_args={"flag": True})
    graph_ref = LeavesRef().trace(theirs, concrete_args={"flag": True})
    assert nodes(graph) == nodes(graph_ref)
    assert [n.op for n in graph.nodes][:2] == ["placeholder", "placeholder"]
    assert graph.find_nodes(op="call_module")[0].target == "inner"
    gm = torch.fx.GraphModule(ours, graph)
    gm_ref = ref.fx.GraphModule(theirs, graph_ref)
    x, x_ref = _inputs((2, 3))
    assert_same_values(gm(x, True), gm_ref(x_ref, True))
    with pytest.raises(AssertionError, match="flag has been specialized to have value True"):
        gm(x, False)
    # the default tracer traces through Inner
    assert [n.op for n in torch.fx.symbolic_trace(ours, {"flag": False}).graph.nodes] == \
        [n.op for n in ref.fx.symbolic_trace(theirs, {"flag": False}).graph.nodes]


def test_trace_errors_are_torchs():
    def branch(x):
        if x.sum() > 0:
            return x
        return -x

    def loop(x):
        return [v for v in x]

    def length(x):
        return len(x)

    for f in (branch, loop, length):
        with pytest.raises(Exception) as theirs:
            ref.fx.symbolic_trace(f)
        with pytest.raises(Exception) as ours:
            torch.fx.symbolic_trace(f)
        assert type(ours.value).__name__ == type(theirs.value).__name__
        assert str(ours.value) == str(theirs.value)
    with pytest.raises(torch.fx.proxy.TraceError,
                       match="symbolically traced variables cannot be used as inputs to "
                             "control flow"):
        torch.fx.symbolic_trace(branch)
    assert issubclass(torch.fx.proxy.TraceError, ValueError)


def test_import_torch_fx_through_the_alias():
    code = ("import chainrule.as_torch; chainrule.as_torch.install()\n"
            "import torch.fx, torch.fx.passes.shape_prop\n"
            "from torch.fx import symbolic_trace, GraphModule\n"
            "import chainrule\n"
            "assert torch.fx is chainrule.fx\n"
            "gm = symbolic_trace(torch.nn.Sequential(torch.nn.Linear(2, 2), torch.nn.ReLU()))\n"
            "assert isinstance(gm, GraphModule)\n"
            "print(gm.code)\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True).stdout
    expected = ref.fx.symbolic_trace(ref.nn.Sequential(ref.nn.Linear(2, 2),
                                                       ref.nn.ReLU())).code
    assert out == expected + "\n"


# ---- Interpreter and Transformer -------------------------------------------------------------

def test_interpreter_runs_the_graph():
    _, _, gm, gm_ref = _traced_pair(make_model)
    x, x_ref = _inputs()
    assert_same_values(torch.fx.Interpreter(gm).run(x), ref.fx.Interpreter(gm_ref).run(x_ref))
    assert_same_values(torch.fx.Interpreter(gm).run(x), gm(x))

    def swapping(base):
        class Swap(base):
            def call_method(self, target, args, kwargs):
                if target == "sigmoid":
                    target = "tanh"
                return super().call_method(target, args, kwargs)

            def call_function(self, target, args, kwargs):
                if target is operator.mul:
                    target = operator.add
                return super().call_function(target, args, kwargs)
        return Swap

    ours = swapping(torch.fx.Interpreter)(gm).run(x)
    theirs = swapping(ref.fx.Interpreter)(gm_ref).run(x_ref)
    assert_same_values(ours, theirs)
    # a missing argument, and the node named in the error
    with pytest.raises(RuntimeError) as e:
        torch.fx.Interpreter(gm).run()
    with pytest.raises(RuntimeError) as e_ref:
        ref.fx.Interpreter(gm_ref).run()
    assert str(e.value).splitlines()[0] == str(e_ref.value).splitlines()[0]


def test_transformer_rewrites_the_graph():
    def swapping(base):
        class Swap(base):
            def call_method(self, target, args, kwargs):
                if target == "tanh":
                    target = "sigmoid"
                return super().call_method(target, args, kwargs)

            def call_function(self, target, args, kwargs):
                if target is operator.add:
                    target = operator.sub
                return super().call_function(target, args, kwargs)
        return Swap

    gm = torch.fx.symbolic_trace(fn)
    gm_ref = ref.fx.symbolic_trace(fn)
    new = swapping(torch.fx.Transformer)(gm).transform()
    new_ref = swapping(ref.fx.Transformer)(gm_ref).transform()
    assert nodes(new.graph) == nodes(new_ref.graph)
    assert new.code == new_ref.code
    assert type(new).__name__ == type(new_ref).__name__ == "GraphModule"
    x, x_ref = _inputs((4, 3))
    y, y_ref = _inputs((4, 3), seed=1)
    assert_same_values(new(x, y), new_ref(x_ref, y_ref))
    # the identity transform keeps the graph
    same = torch.fx.Transformer(gm).transform()
    assert nodes(same.graph) == nodes(ref.fx.Transformer(gm_ref).transform().graph)


# ---- rewriting --------------------------------------------------------------------------------

def pattern(x, y):
    return (x + y).relu()


def replacement(x, y):
    return (x * y).sigmoid()


def chain(a, b, c):
    t = (a + b).relu()
    u = (t + c).relu()
    v = (u + 1).relu()
    return u + t + v


def test_replace_pattern_matches_torch():
    gm = torch.fx.symbolic_trace(chain)
    gm_ref = ref.fx.symbolic_trace(chain)
    matches = torch.fx.replace_pattern(gm, pattern, replacement)
    matches_ref = ref.fx.replace_pattern(gm_ref, pattern, replacement)
    assert len(matches) == len(matches_ref) == 3
    assert [(m.anchor.name, {k.name: getattr(v, "name", v) for k, v in m.nodes_map.items()})
            for m in matches] == \
        [(m.anchor.name, {k.name: getattr(v, "name", v) for k, v in m.nodes_map.items()})
         for m in matches_ref]
    assert nodes(gm.graph) == nodes(gm_ref.graph)
    assert gm.code == gm_ref.code
    a, a_ref = _inputs((3,))
    b, b_ref = _inputs((3,), seed=1)
    c, c_ref = _inputs((3,), seed=2)
    assert_same_values(gm(a, b, c), gm_ref(a_ref, b_ref, c_ref))
    assert torch.fx.subgraph_rewriter.replace_pattern is torch.fx.replace_pattern


def test_replace_pattern_needs_self_contained_matches():
    def leaky(a, b):
        s = a + b
        return s.relu() + s  # the add is read outside the pattern: no match

    def literal(a, b):
        return (a + 2).relu() + (a + b).relu()

    for f in (leaky, literal):
        gm, gm_ref = torch.fx.symbolic_trace(f), ref.fx.symbolic_trace(f)
        count = len(torch.fx.replace_pattern(gm, pattern, replacement))
        assert count == len(ref.fx.replace_pattern(gm_ref, pattern, replacement))
        assert nodes(gm.graph) == nodes(gm_ref.graph)
        assert gm.code == gm_ref.code
    filtered = torch.fx.subgraph_rewriter.replace_pattern_with_filters(
        torch.fx.symbolic_trace(chain), pattern, replacement,
        match_filters=[lambda m, g, p: m.anchors[0].name != "relu"])
    filtered_ref = ref.fx.subgraph_rewriter.replace_pattern_with_filters(
        ref.fx.symbolic_trace(chain), pattern, replacement,
        match_filters=[lambda m, g, p: m.anchors[0].name != "relu"])
    assert [[n.name for n in r.replacements] for r in filtered] == \
        [[n.name for n in r.replacements] for r in filtered_ref]


# ---- graph editing ----------------------------------------------------------------------------

def _edit(lib):
    gm = lib.fx.symbolic_trace(chain)
    graph = gm.graph
    a, b, c = list(graph.nodes)[:3]
    add = graph.find_nodes(op="call_function", target=operator.add)[0]
    with graph.inserting_after(c):
        first = graph.call_function(operator.neg, (c,))
    with graph.inserting_after(first):
        second = graph.call_method("abs", (first,))
    with graph.inserting_before(add):
        graph.create_node("call_method", "sum", (a,), {}, name="total")
    # inserting_after(n) puts each new node right after n: the later one comes first
    with graph.inserting_after(second):
        graph.call_method("exp", (second,))
        graph.call_method("cos", (second,))
    order = [n.name for n in graph.nodes]
    relu = next(iter(add.users))
    replaced = add.replace_all_uses_with(second)
    log = [order, [n.name for n in replaced], relu.args[0].name]
    relu.replace_input_with(second, add)
    relu.update_arg(0, first)
    log.append(sorted(u.name for u in first.users))
    log.append(graph.eliminate_dead_code())
    graph.lint()
    gm.recompile()
    return gm, log


def test_graph_editing_matches_torch():
    gm, log = _edit(torch)
    gm_ref, log_ref = _edit(ref)
    assert log == log_ref
    assert nodes(gm.graph) == nodes(gm_ref.graph)
    assert gm.code == gm_ref.code
    a, a_ref = _inputs((3,))
    b, b_ref = _inputs((3,), seed=1)
    c, c_ref = _inputs((3,), seed=2)
    assert_same_values(gm(a, b, c), gm_ref(a_ref, b_ref, c_ref))


def test_lint_and_erase_errors_are_torchs():
    def broken(lib):
        graph = lib.fx.symbolic_trace(chain).graph
        nodes_ = list(graph.nodes)
        with graph.inserting_before(nodes_[0]):
            graph.call_function(operator.neg, (nodes_[3],))
        return graph

    for check in (lambda g: g.lint(),
                  lambda g: g.erase_node(g.find_nodes(op="placeholder")[0])):
        with pytest.raises(RuntimeError) as ours:
            check(broken(torch))
        with pytest.raises(RuntimeError) as theirs:
            check(broken(ref))
        assert str(ours.value) == str(theirs.value)


def test_graph_built_by_hand():
    def build(lib):
        graph = lib.fx.Graph()
        x = graph.placeholder("x")
        w = graph.get_attr("weight")
        y = graph.call_function(operator.matmul, (x, w))
        z = graph.call_method("clamp", (y,), {"min": 0.0})
        s = graph.call_module("act", (z,))
        graph.output((s, graph.call_function(getattr, (s, "shape"))))
        root = {"weight": lib.nn.Parameter(lib.ones(3, 2)), "act": lib.nn.Tanh()}
        return lib.fx.GraphModule(root, graph, "Built")

    gm, gm_ref = build(torch), build(ref)
    assert nodes(gm.graph) == nodes(gm_ref.graph)
    assert gm.code == gm_ref.code
    assert str(gm) == str(gm_ref)
    x, x_ref = _inputs((4, 3))
    assert_same_values(gm(x), gm_ref(x_ref))
    with pytest.raises(RuntimeError, match="referenced target act but that target was not"):
        torch.fx.GraphModule({"weight": torch.ones(3, 2)}, gm.graph)


def test_node_arguments_are_immutable():
    gm, gm_ref = torch.fx.symbolic_trace(fn), ref.fx.symbolic_trace(fn)
    clamp = next(n for n in gm.graph.nodes if n.name == "clamp")
    clamp_ref = next(n for n in gm_ref.graph.nodes if n.name == "clamp")
    with pytest.raises(TypeError) as ours:
        clamp.kwargs["min"] = 0
    with pytest.raises(TypeError) as theirs:
        clamp_ref.kwargs["min"] = 0
    assert str(ours.value) == str(theirs.value)


# ---- copies -----------------------------------------------------------------------------------

def test_pickle_and_deepcopy_keep_the_graph():
    ours, theirs, gm, gm_ref = _traced_pair(make_model)
    x, x_ref = _inputs()
    for copied, copied_ref in ((pickle.loads(pickle.dumps(gm)),
                                pickle.loads(pickle.dumps(gm_ref))),
                               (copy.deepcopy(gm), copy.deepcopy(gm_ref))):
        assert type(copied).__name__ == type(copied_ref).__name__
        assert nodes(copied.graph) == nodes(gm.graph)
        assert copied.code == gm.code
        assert_same_values(copied(x), gm(x))
        assert copied.lin.weight is not gm.lin.weight
    assert copy.copy(gm).lin is gm.lin
    # recompile after editing the graph changes forward
    for n in gm.graph.nodes:
        if n.op == "call_method" and n.target == "sigmoid":
            n.target = "tanh"
    for n in gm_ref.graph.nodes:
        if n.op == "call_method" and n.target == "sigmoid":
            n.target = "tanh"
    gm.recompile()
    gm_ref.recompile()
    assert gm.code == gm_ref.code
    assert_same_values(gm(x), gm_ref(x_ref))


# ---- shape propagation ------------------------------------------------------------------------

def _tensor_meta(graph):
    def describe(meta):
        if hasattr(meta, "shape"):
            return (tuple(meta.shape), str(meta.dtype), meta.requires_grad, tuple(meta.stride),
                    str(meta.memory_format), meta.is_quantized)
        if isinstance(meta, (list, tuple)):
            return [describe(m) for m in meta]
        if isinstance(meta, dict):
            return {k: describe(v) for k, v in meta.items()}
        return meta

    return [(n.name, describe(n.meta.get("tensor_meta")), n.meta.get("type").__name__)
            for n in graph.nodes]


def test_shape_prop_matches_torch():
    from chainrule.fx.passes.shape_prop import ShapeProp, TensorMetadata

    _, _, gm, gm_ref = _traced_pair(make_model)
    x, x_ref = _inputs()
    ShapeProp(gm).propagate(x)
    ref.fx.passes.shape_prop.ShapeProp(gm_ref).propagate(x_ref)
    assert _tensor_meta(gm.graph) == _tensor_meta(gm_ref.graph)
    assert isinstance(gm.graph.find_nodes(op="placeholder")[0].meta["tensor_meta"],
                      TensorMetadata)
    # the readable code carries the shapes
    assert gm.print_readable(False) == gm_ref.print_readable(False)


def test_shape_prop_on_the_meta_device():
    from chainrule.fx.passes.shape_prop import ShapeProp

    _, _, gm, gm_ref = _traced_pair(make_model)
    gm.to("meta")
    gm_ref.to("meta")
    ShapeProp(gm).propagate(torch.empty(5, 4, device="meta"))
    ref.fx.passes.shape_prop.ShapeProp(gm_ref).propagate(ref.empty(5, 4, device="meta"))
    assert _tensor_meta(gm.graph) == _tensor_meta(gm_ref.graph)
    out = gm(torch.empty(5, 4, device="meta"))
    assert out["e"].device.type == "meta" and tuple(out["e"].shape) == (5, 3)


def test_torch_function_protocol_records_calls():
    """Proxy.__torch_function__ as dispatch calls it: a function of the torch namespace is a
    call_function node, a Tensor method a call_method node."""
    def record(lib):
        graph = lib.fx.Graph()
        tracer = lib.fx.proxy.GraphAppendingTracer(graph)
        x = lib.fx.Proxy(graph.placeholder("x"), tracer)
        y = lib.fx.Proxy(graph.placeholder("y"), tracer)
        tf = lib.fx.Proxy.__torch_function__
        r = tf(lib.relu, (lib.fx.Proxy,), (x,), {})
        c = tf(lib.cat, (lib.fx.Proxy,), ([r, y],), {"dim": 0})
        s = tf(lib.Tensor.add, (lib.fx.Proxy,), (c, c), {"alpha": 2})
        m = tf(lib.nn.functional.softmax, (lib.fx.Proxy,), (s,), {"dim": -1})
        graph.output(m.node)
        return graph

    graph, graph_ref = record(torch), record(ref)
    assert nodes(graph) == nodes(graph_ref)
    gm = torch.fx.GraphModule(torch.nn.Module(), graph)
    gm_ref = ref.fx.GraphModule(ref.nn.Module(), graph_ref)
    # the code names chainrule's functions by their public paths, as PyTorch's
    assert gm.code == gm_ref.code
    x, x_ref = _inputs((3,))
    y, y_ref = _inputs((3,), seed=1)
    assert_same_values(gm(x, y), gm_ref(x_ref, y_ref))


def test_varargs_and_keyword_only_parameters():
    def f(x, *args, k=2, **kw):
        return x + args * k, kw

    gm, gm_ref = torch.fx.symbolic_trace(f), ref.fx.symbolic_trace(f)
    assert nodes(gm.graph) == nodes(gm_ref.graph)
    assert gm.code == gm_ref.code

    def module(lib):
        class Scaled(lib.nn.Module):
            def forward(self, x, *, scale=3):
                return x * scale

        return Scaled()

    gm, gm_ref = torch.fx.symbolic_trace(module(torch)), ref.fx.symbolic_trace(module(ref))
    assert nodes(gm.graph) == nodes(gm_ref.graph)
    assert gm.code == gm_ref.code
    x, x_ref = _inputs((3,))
    assert_same_values(gm(x, 2.0), gm_ref(x_ref, 2.0))


def make_resnet(lib):
    nn = lib.nn

    class BasicBlock(nn.Module):
        def __init__(self, cin, cout, stride):
            super().__init__()
            self.conv1 = nn.Conv2d(cin, cout, 3, stride, 1, bias=False)
            self.bn1 = nn.BatchNorm2d(cout)
            self.relu = nn.ReLU(inplace=True)
            self.conv2 = nn.Conv2d(cout, cout, 3, 1, 1, bias=False)
            self.bn2 = nn.BatchNorm2d(cout)
            self.downsample = None
            if stride != 1 or cin != cout:
                self.downsample = nn.Sequential(nn.Conv2d(cin, cout, 1, stride, bias=False),
                                                nn.BatchNorm2d(cout))

        def forward(self, x):
            identity = x
            out = self.relu(self.bn1(self.conv1(x)))
            out = self.bn2(self.conv2(out))
            if self.downsample is not None:
                identity = self.downsample(x)
            out += identity
            return self.relu(out)

    class ResNet(nn.Module):
        def __init__(self):
            super().__init__()
            self.conv1 = nn.Conv2d(3, 4, 3, 1, 1, bias=False)
            self.bn1 = nn.BatchNorm2d(4)
            self.relu = nn.ReLU(inplace=True)
            self.maxpool = nn.MaxPool2d(2)
            self.layer1 = nn.Sequential(BasicBlock(4, 4, 1), BasicBlock(4, 4, 1))
            self.layer2 = nn.Sequential(BasicBlock(4, 8, 2))
            self.avgpool = nn.AdaptiveAvgPool2d((1, 1))
            self.fc = nn.Linear(8, 5)

        def forward(self, x):
            x = self.maxpool(self.relu(self.bn1(self.conv1(x))))
            x = self.layer2(self.layer1(x))
            return self.fc(self.avgpool(x).flatten(1))

    lib.manual_seed(0)
    return ResNet().eval()


def _module_path_tracer(lib):
    class ModulePathTracer(lib.fx.Tracer):
        """Records the module each node was traced in (a custom Tracer overriding
        call_module and create_proxy)."""

        def __init__(self):
            super().__init__()
            self.current = ""
            self.origin = {}

        def call_module(self, m, forward, args, kwargs):
            old = self.current
            try:
                self.current = self.path_of_module(m)
                return super().call_module(m, forward, args, kwargs)
            finally:
                self.current = old

        def create_proxy(self, kind, target, args, kwargs, name=None, type_expr=None):
            proxy = super().create_proxy(kind, target, args, kwargs, name, type_expr)
            self.origin[proxy.node.name] = self.current
            return proxy

    return ModulePathTracer()


def test_resnet_traced_with_a_module_path_tracer():
    ours, theirs = make_resnet(torch), make_resnet(ref)
    share_weights(ours, theirs)
    tracer, tracer_ref = _module_path_tracer(torch), _module_path_tracer(ref)
    graph, graph_ref = tracer.trace(ours), tracer_ref.trace(theirs)
    assert nodes(graph) == nodes(graph_ref)
    assert tracer.origin == tracer_ref.origin
    assert tracer.origin["add"] == "layer1.0" and tracer.origin["layer2_0_downsample_0"] == \
        "layer2.0.downsample.0"
    gm = torch.fx.GraphModule(ours, graph, "ResNet")
    gm_ref = ref.fx.GraphModule(theirs, graph_ref, "ResNet")
    assert gm.code == gm_ref.code
    assert str(gm) == str(gm_ref)
    meta = {n.name: n.meta.get("nn_module_stack") for n in graph.nodes}
    meta_ref = {n.name: n.meta.get("nn_module_stack") for n in graph_ref.nodes}
    assert {k: None if v is None else list(v) for k, v in meta.items()} == \
        {k: None if v is None else list(v) for k, v in meta_ref.items()}
    x, x_ref = _inputs((2, 3, 8, 8))
    assert_same_values(gm(x), gm_ref(x_ref), rtol=1e-4, atol=1e-5)
    assert_same_values(gm(x), ours(x), rtol=1e-6, atol=1e-6)
    # feature extraction: the graph cut after layer1, outputs of two stages
    cut = copy.deepcopy(gm)
    stages = [n for n in cut.graph.nodes if n.name in ("maxpool", "layer1_1_relu_1")]
    output = next(n for n in cut.graph.nodes if n.op == "output")
    output.args = (dict(zip(("stem", "layer1"), stages)),)
    cut.graph.eliminate_dead_code()
    cut.delete_all_unused_submodules()
    cut.recompile()
    cut_ref = copy.deepcopy(gm_ref)
    stages_ref = [n for n in cut_ref.graph.nodes if n.name in ("maxpool", "layer1_1_relu_1")]
    output_ref = next(n for n in cut_ref.graph.nodes if n.op == "output")
    output_ref.args = (dict(zip(("stem", "layer1"), stages_ref)),)
    cut_ref.graph.eliminate_dead_code()
    cut_ref.delete_all_unused_submodules()
    cut_ref.recompile()
    assert cut.code == cut_ref.code
    assert [n for n, _ in cut.named_modules()] == [n for n, _ in cut_ref.named_modules()]
    assert_same_values(cut(x), cut_ref(x_ref), rtol=1e-4, atol=1e-5)


def test_annotations_are_printed_as_torchs():
    from typing import Optional

    def module(lib):
        class Annotated(lib.nn.Module):
            def forward(self, x: lib.Tensor, k: int = 2,
                        m: Optional[lib.Tensor] = None,  # noqa: UP045  (typing's form)
                        n: lib.Tensor | None = None,
                        sizes: list[int] = None) -> lib.Tensor:  # noqa: RUF013
                return x * k

        return Annotated()

    gm, gm_ref = torch.fx.symbolic_trace(module(torch)), ref.fx.symbolic_trace(module(ref))
    assert gm.code == gm_ref.code
    assert str(gm.graph) == str(gm_ref.graph)
    x, x_ref = _inputs((3,))
    assert_same_values(gm(x), gm_ref(x_ref))


# ---- functions of the torch namespace (through __torch_function__) ---------------------------

def make_functional_net(lib):
    F = lib.nn.functional

    class Net(lib.nn.Module):
        def __init__(self):
            super().__init__()
            self.lin = lib.nn.Linear(4, 4)

        def forward(self, x):
            a = lib.relu(self.lin(x))
            b = F.relu(a, inplace=False) + lib.softmax(a, dim=-1)
            c = lib.cat([a, b], dim=1)
            d = F.gelu(b, approximate="tanh")
            return lib.sum(c, dim=0), lib.flatten(c), d, lib.stack((d, d)).mean(0)

    lib.manual_seed(0)
    return Net()


def test_torch_functions_are_traced():
    ours, theirs, gm, gm_ref = _traced_pair(make_functional_net)
    assert nodes(gm.graph) == nodes(gm_ref.graph)
    # PyTorch's F.gelu is its C function torch._C._nn.gelu; chainrule's is F.gelu
    assert gm.code.replace("torch.nn.functional.gelu", "torch._C._nn.gelu") == gm_ref.code
    x, x_ref = _inputs()
    assert_same_values(gm(x), gm_ref(x_ref))
    assert_same_values(gm(x), ours(x))
    targets = {n.name: n.target for n in gm.graph.nodes}
    assert targets["relu"] is torch.relu and targets["cat"] is torch.cat
    assert targets["relu_1"] is torch.nn.functional.relu


def test_tracing_through_a_torch_nn_module():
    def make(lib):
        class Model(lib.nn.Module):
            def __init__(self):
                super().__init__()
                self.relu = lib.nn.ReLU()

            def forward(self, x):
                return self.relu(x)

        return Model()

    def tracer(lib):
        class LowerRelu(lib.fx.Tracer):
            def is_leaf_module(self, m, qualname):
                return not isinstance(m, lib.nn.ReLU) and super().is_leaf_module(m, qualname)

        return LowerRelu()

    graph, graph_ref = tracer(torch).trace(make(torch)), tracer(ref).trace(make(ref))
    assert nodes(graph) == nodes(graph_ref)
    assert str(graph) == str(graph_ref)


def test_modules_that_apply_a_functional_trace_to_its_call():
    """Pooling and dropout modules call F's public function, so tracing through them records it."""

    def make(lib):
        return lib.nn.Sequential(lib.nn.MaxPool2d(2), lib.nn.AdaptiveAvgPool2d(1),
                                 lib.nn.Dropout(0.5), lib.nn.Flatten(2),
                                 lib.nn.AvgPool1d(1)).eval()

    def trace(lib):
        class Through(lib.fx.Tracer):
            def is_leaf_module(self, m, qualname):
                return False

        model = make(lib)
        return model, lib.fx.GraphModule(model, Through().trace(model))

    (model, traced), (_, traced_ref) = trace(torch), trace(ref)
    kinds = [(n.op, _name(n.target)) for n in traced.graph.nodes]
    assert kinds == [(n.op, _name(n.target)) for n in traced_ref.graph.nodes]
    assert ("call_function", "dropout") in kinds
    x = torch.randn(2, 3, 8, 8)
    assert torch.equal(traced(x), model(x))


def test_replace_pattern_of_torch_functions():
    def pattern(x, y):
        return torch_of(x).relu(x + y)

    def replacement(x, y):
        return torch_of(x).sigmoid(x * y)

    def g(a, b, c):
        t = torch_of(a).relu(a + b)
        u = torch_of(a).relu(t + c)
        return torch_of(a).cat([u, t])

    gm, gm_ref = torch.fx.symbolic_trace(g), ref.fx.symbolic_trace(g)
    assert nodes(gm.graph) == nodes(gm_ref.graph)
    matches = torch.fx.replace_pattern(gm, pattern, replacement)
    matches_ref = ref.fx.replace_pattern(gm_ref, pattern, replacement)
    assert len(matches) == len(matches_ref) == 2
    assert nodes(gm.graph) == nodes(gm_ref.graph)
    assert gm.code == gm_ref.code
    a, a_ref = _inputs((3,))
    b, b_ref = _inputs((3,), seed=1)
    c, c_ref = _inputs((3,), seed=2)
    assert_same_values(gm(a, b, c), gm_ref(a_ref, b_ref, c_ref))


def torch_of(x):
    """The library a traced value belongs to (its Proxy's module), for functions traced on
    both."""
    return torch if type(x).__module__.startswith("chainrule") else ref


def test_shape_prop_of_torch_functions_on_the_meta_device():
    from chainrule.fx.passes.shape_prop import ShapeProp

    _, _, gm, gm_ref = _traced_pair(make_functional_net)
    gm.to("meta")
    gm_ref.to("meta")
    ShapeProp(gm).propagate(torch.empty(3, 4, device="meta"))
    ref.fx.passes.shape_prop.ShapeProp(gm_ref).propagate(ref.empty(3, 4, device="meta"))
    assert _tensor_meta(gm.graph) == _tensor_meta(gm_ref.graph)


def test_aliases_name_their_nodes_as_torchs():
    def f(x):
        lib = torch_of(x)
        a = lib.arctan(x) + lib.clip(x, -1.0, 1.0)
        return lib.concat([lib.multiply(a, 2), lib.negative(a)]), lib.greater(a, 0)

    gm, gm_ref = torch.fx.symbolic_trace(f), ref.fx.symbolic_trace(f)
    assert [(n.op, n.name) for n in gm.graph.nodes] == \
        [(n.op, n.name) for n in gm_ref.graph.nodes]
    assert gm.code == gm_ref.code
    x, x_ref = _inputs((3,))
    assert_same_values(gm(x), gm_ref(x_ref))


def index_third(t, x):
    a = x + 1
    b = t[3]
    return a * b


def test_an_error_in_a_generated_line_is_shown_in_the_code(capsys):
    shown = []
    for lib in LIBS:
        gm = lib.fx.symbolic_trace(index_third)
        with pytest.raises(IndexError, match="tuple index out of range") as e:
            gm((1, 2), lib.ones(2))
        assert e.value.__traceback__ is not None  # pytest's frame; the generated ones are gone
        err = capsys.readouterr().err
        shown.append(err[err.index("Call using an FX-traced Module"):])
        assert f"from {index_third.__code__.co_filename}:" in err  # the code's key names it
    assert shown[0] == shown[1]
    assert "    b = t[3]" not in shown[0] and "getitem = t[3];  t = None" in shown[0]
