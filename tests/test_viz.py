"""make_dot: DOT text of autograd graphs (always), rendering (when Graphviz's dot exists)."""

from __future__ import annotations

import shutil
import sys

import pytest
import torch

import chainrule
from chainrule.viz import DotGraph, make_dot

HEADER = ('digraph {\n\tgraph [size="12,12"]\n\tnode [align=left fontname=monospace fontsize=10 '
          'height=0.2 ranksep=0.1 shape=box style=filled]\n')


def small_graph(lib):
    x = lib.ones(3, requires_grad=True)
    w = lib.ones(3, requires_grad=True)
    b = lib.ones(3)
    return ((x * w).sin() * x + b).sum(), x, w


def test_dot_text_of_a_small_graph_and_svg_render(tmp_path):
    y, x, w = small_graph(chainrule)
    graph = make_dot(y, params={"x": x, "w": w})
    assert graph.source == HEADER + (
        '\tn0 [label="output\\n()" fillcolor=darkolivegreen1]\n'
        '\tn1 [label="SumBackward0" fillcolor=lightgrey]\n'
        "\tn1 -> n0\n"
        '\tn2 [label="AddBackward0" fillcolor=lightgrey]\n'
        "\tn2 -> n1\n"
        '\tn3 [label="MulBackward0" fillcolor=lightgrey]\n'
        "\tn3 -> n2\n"
        '\tn4 [label="SinBackward0" fillcolor=lightgrey]\n'
        "\tn4 -> n3\n"
        '\tn5 [label="MulBackward0" fillcolor=lightgrey]\n'
        "\tn5 -> n4\n"
        '\tn6 [label="x\\n(3,)" fillcolor=lightblue]\n'
        "\tn6 -> n5\n"
        '\tn7 [label="w\\n(3,)" fillcolor=lightblue]\n'
        "\tn7 -> n5\n"
        "\tn6 -> n3\n"
        "}\n")
    # Rendering needs Graphviz's dot program (and the graphviz package); the text above does not.
    if shutil.which("dot") and not isinstance(graph, DotGraph):
        out = graph.render(tmp_path / "graph", format="svg")
        svg = open(out, encoding="utf-8").read()
        assert "<svg" in svg and "SinBackward0" in svg and ">w<" in svg


def test_same_dot_text_as_for_the_torch_graph():
    y, x, w = small_graph(chainrule)
    ty, tx, tw = small_graph(torch)
    assert make_dot(y, params={"x": x, "w": w}).source == make_dot(
        ty, params={"x": tx, "w": tw}).source
    assert make_dot(y).source == make_dot(ty).source


def test_leaf_names_from_params_then_tensor_name_then_shape():
    a = chainrule.ones(2, 3, requires_grad=True)
    b = chainrule.ones(2, 3, requires_grad=True)
    c = chainrule.ones(2, 3, requires_grad=True)
    b.name = "bias"
    source = make_dot(a * b + c, params={"weight": a}).source
    assert '[label="weight\\n(2, 3)" fillcolor=lightblue]' in source
    assert '[label="bias\\n(2, 3)" fillcolor=lightblue]' in source
    assert '[label="(2, 3)" fillcolor=lightblue]' in source


def test_shared_nodes_are_drawn_once_with_every_edge():
    x = chainrule.ones(2, requires_grad=True)
    h = x.exp()
    source = make_dot(h * h + h).source
    assert source.count("ExpBackward0") == 1
    exp_id = source.split(' [label="ExpBackward0"')[0].rsplit("\t", 1)[1]
    assert source.count(f"\t{exp_id} -> ") == 3  # two into the Mul, one into the Add


def test_show_attrs_lists_op_parameters_and_saved_values():
    x = chainrule.ones(2, 3, requires_grad=True)
    source = make_dot(x.sin().pow(2).sum(0), show_attrs=True).source
    assert '"SumBackward1\\ndim: (0,)\\nkeepdim: False"' in source
    assert '"PowBackward0\\nexponent: 2\\ninput: (2, 3)"' in source
    assert "SumBackward1\\n" not in make_dot(x.sum(0)).source


def test_several_outputs_and_tensors_without_a_graph():
    x = chainrule.ones(2, requires_grad=True)
    y = x * 2
    source = make_dot((y, y.sum())).source
    assert source.count("darkolivegreen1") == 2 and source.count("MulBackward0") == 1
    plain = make_dot(chainrule.zeros(4)).source
    assert plain == HEADER + '\tn0 [label="output\\n(4,)" fillcolor=darkolivegreen1]\n}\n'


def test_deep_graphs_need_no_recursion():
    x = chainrule.ones(1, requires_grad=True)
    y = x
    for _ in range(3 * sys.getrecursionlimit()):
        y = y * 1.0
    source = make_dot(y).source
    assert source.count("MulBackward0") == 3 * sys.getrecursionlimit()
    assert make_dot(y).source == source  # deterministic


def test_without_graphviz_the_dot_text_is_still_there(tmp_path, monkeypatch):
    y, x, w = small_graph(chainrule)
    with_graphviz = make_dot(y, params={"x": x}).source
    monkeypatch.setitem(sys.modules, "graphviz", None)
    graph = make_dot(y, params={"x": x})
    assert isinstance(graph, DotGraph)
    assert graph.source == with_graphviz and str(graph) == with_graphviz
    assert "SinBackward0" in graph.source
    path = graph.save("g.gv", directory=tmp_path)
    assert open(path, encoding="utf-8").read() == with_graphviz
    with pytest.raises(ImportError, match=r'pip install "chainrule\[viz\]"'):
        graph.render(tmp_path / "g", format="svg")


def test_labels_are_escaped():
    x = chainrule.ones(1, requires_grad=True)
    source = make_dot(x * 2, params={'a "quoted"\\name': x}).source
    assert '[label="a \\"quoted\\"\\\\name\\n(1,)" fillcolor=lightblue]' in source
