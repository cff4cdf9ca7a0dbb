"""gradient_report: every node of a backward pass, in the engine's order, with its gradients'
norms, checked against norms taken with hooks (and the leaves against PyTorch's gradients)."""

import numpy as np
import pytest
import torch

import chainrule as cr
from chainrule import _modes
from chainrule.autograd.graph import GradientReport, gradient_report


def mlp(m, seed=0):
    rng = np.random.default_rng(seed)
    model = m.nn.Sequential(m.nn.Linear(3, 4), m.nn.Tanh(), m.nn.Linear(4, 2))
    with m.no_grad():
        for p in model.parameters():
            p.copy_(m.tensor(rng.standard_normal(tuple(p.shape)), dtype=p.dtype))
    x = m.tensor(rng.standard_normal((5, 3)), dtype=m.float32)
    return model, x


def norm(g) -> float:
    return float(np.linalg.norm(g.detach().numpy().ravel()))


def test_norms_equal_the_hooks_and_torch():
    model, x = mlp(cr)
    h = model[0](x)
    a = model[1](h)
    out = model[2](a)
    loss = (out * out).mean()
    seen = {}
    for t in (h, a, out):
        t.register_hook(lambda g, t=t: seen.__setitem__(t.grad_fn, norm(g)))
    report = gradient_report(loss, names=model)
    steps = {s.node: s for s in report}
    assert len(steps) == len(report)
    for node, value in seen.items():
        assert steps[node].grad_norms[0] == pytest.approx(value, rel=1e-6)
    assert report[0].name == "MeanBackward0" and report[0].grad_norms == (1.0,)
    assert [s.step for s in report] == list(range(1, len(report) + 1))
    # Each node runs after every node that sends it a gradient.
    order = {s.node: s.step for s in report}
    for s in report:
        for edge in getattr(s.node, "next_edges", ()):
            if edge is not None and edge[0] in order:
                assert order[edge[0]] > s.step
    # Each gradient a node sends arrives, summed, at the node it points to.
    for s in report:
        for edge, sent in zip(getattr(s.node, "next_edges", ()), s.input_grad_norms):
            if edge is not None and sent is not None and edge[0] in steps:
                fan_in = sum(1 for r in report for e in getattr(r.node, "next_edges", ())
                             if e is not None and e[0] is edge[0])
                if fan_in == 1:
                    assert steps[edge[0]].grad_norms[edge[1]] == pytest.approx(sent, rel=1e-6)

    tmodel, tx = mlp(torch)
    tout = tmodel(tx)
    (tout * tout).mean().backward()
    leaves = {s.name: s.grad_norms[0] for s in report if s.name.startswith("AccumulateGrad")}
    assert set(leaves) == {f"AccumulateGrad ({name})" for name, _ in tmodel.named_parameters()}
    for name, p in tmodel.named_parameters():
        assert leaves[f"AccumulateGrad ({name})"] == pytest.approx(norm(p.grad), rel=1e-5)
        assert norm(dict(model.named_parameters())[name].grad) == pytest.approx(norm(p.grad),
                                                                                rel=1e-5)
    assert _modes.stack.node is None


def test_table_and_shapes():
    x = cr.tensor(np.array([[1.0, 2.0], [3.0, 4.0]]), requires_grad=True)
    y = (x * 3).sum()
    report = gradient_report(y, names={"x": x})
    assert isinstance(report, GradientReport)
    assert [(s.name, s.shapes, s.grad_norms) for s in report] == [
        ("SumBackward0", ((),), (1.0,)),
        ("MulBackward0", ((2, 2),), (2.0,)),
        ("AccumulateGrad (x)", ((2, 2),), (6.0,)),
    ]
    assert report[1].input_grad_norms == (6.0, None)
    lines = str(report).split("\n")
    assert lines[0].split() == ["step", "node", "output", "shape", "grad", "norm", "input",
                                "grad", "norms"]
    assert lines[2].split() == ["1", "SumBackward0", "[]", "1", "2"]
    assert lines[3].split() == ["2", "MulBackward0", "[2,", "2]", "2", "6,", "-"]
    assert lines[4].split() == ["3", "AccumulateGrad", "(x)", "[2,", "2]", "6"]
    np.testing.assert_allclose(x.grad.numpy(), np.full((2, 2), 3.0))


def test_plot():
    matplotlib = pytest.importorskip("matplotlib")
    matplotlib.use("Agg")
    x = cr.tensor(np.array([1.0, 2.0]), requires_grad=True)
    report = gradient_report((x.exp() * 2).sum())
    ax = report.plot()
    assert ax.get_yscale() == "log"
    assert [t.get_text() for t in ax.get_xticklabels()] == [s.name for s in report]
    assert list(ax.lines[0].get_ydata()) == pytest.approx([s.grad_norms[0] for s in report])
