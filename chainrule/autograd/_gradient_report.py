"""``gradient_report(loss)``: a backward pass, node by node, with the size of every gradient.

It runs ``loss.backward()`` with a wrapper in the engine's tool slot (``chainrule._tooling``)
that notes, for every node in the order the engine runs it, the gradient arriving at the node's
outputs and the gradients it sends to its inputs. Printing the report gives a table; ``plot()``
draws the norms step by step (matplotlib, imported only then). Where gradients vanish or explode
shows as the step where the norms collapse or blow up.
"""

from __future__ import annotations

import threading
from collections.abc import Iterable, Mapping
from typing import NamedTuple

from .. import _tooling
from .._backend import xp
from .._batched import BatchedTensor

__all__ = ["gradient_report", "GradientReport", "GradientStep"]


class GradientStep(NamedTuple):
    """One node of the backward pass: what arrived at its outputs and what it sent on."""

    step: int
    name: str  # the node's name, e.g. "MulBackward0"; "AccumulateGrad (fc.weight)" for a leaf
    shapes: tuple  # the shape of each output (of the gradient arriving there); None if none came
    grad_norms: tuple  # the 2-norm of the gradient arriving at each output (None: no gradient)
    input_grad_norms: tuple  # the 2-norm of the gradient sent to each input (None: none sent)
    node: object  # the grad_fn (or AccumulateGrad) itself


def _norm(g) -> float | None:
    if g is None:
        return None
    while type(g) is BatchedTensor:
        g = g._value
    return float(xp.linalg.norm(g._data.ravel()))


def _fmt(values: tuple) -> str:
    return ", ".join("-" if v is None else f"{v:.4g}" for v in values)


class GradientReport:
    """The steps of one backward pass; ``print(report)`` shows them as a table."""

    def __init__(self, steps: list[GradientStep]) -> None:
        self.steps = steps

    def __len__(self) -> int:
        return len(self.steps)

    def __iter__(self):
        return iter(self.steps)

    def __getitem__(self, i):
        return self.steps[i]

    def __str__(self) -> str:
        header = ("step", "node", "output shape", "grad norm", "input grad norms")
        rows = [(str(s.step), s.name,
                 ", ".join("-" if shape is None else str(list(shape)) for shape in s.shapes),
                 _fmt(s.grad_norms), _fmt(s.input_grad_norms)) for s in self.steps]
        widths = [max(len(r[i]) for r in rows + [header]) for i in range(len(header))]
        align = (">", "<", "<", ">", "<")

        def line(row) -> str:
            return "  ".join(f"{v:{a}{w}}" for v, a, w in zip(row, align, widths)).rstrip()

        rule = "  ".join("-" * w for w in widths)
        return "\n".join([line(header), rule] + [line(r) for r in rows])

    def __repr__(self) -> str:
        return f"<GradientReport: {len(self.steps)} steps>\n{self}"

    def plot(self, ax=None, log: bool = True):
        """Draw the gradient norm arriving at each step (needs matplotlib); returns the axes."""
        try:
            import matplotlib.pyplot as plt
        except ImportError:
            raise ImportError("GradientReport.plot needs matplotlib: pip install matplotlib "
                              "(or chainrule[plot])") from None
        if ax is None:
            ax = plt.subplots(figsize=(max(6.0, 0.35 * len(self.steps)), 4))[1]
        x = [s.step for s in self.steps]
        y = [max((v for v in s.grad_norms if v is not None), default=float("nan"))
             for s in self.steps]
        ax.plot(x, y, marker="o")
        if log and all(v > 0 for v in y if v == v):
            ax.set_yscale("log")
        ax.set_xticks(x)
        ax.set_xticklabels([s.name for s in self.steps], rotation=90, fontsize=8)
        ax.set_xlabel("backward step (node)")
        ax.set_ylabel("gradient norm at the node's output")
        return ax


def _labels(names) -> dict:
    if names is None:
        return {}
    if hasattr(names, "named_parameters"):
        names = names.named_parameters()
    pairs = names.items() if isinstance(names, Mapping) else names
    return {id(t): name for name, t in pairs}


def gradient_report(loss, gradient=None, *, retain_graph: bool | None = None,
                    create_graph: bool = False, inputs=None,
                    names: Mapping | Iterable | None = None) -> GradientReport:
    """Run ``loss.backward(...)`` and report every node the engine ran, in order, with the
    shapes and norms of its gradients. ``names`` (a module, ``model.named_parameters()`` or a
    dict of name to tensor) labels the leaves."""
    labels = _labels(names)
    steps: list[GradientStep] = []
    thread = threading.get_ident()

    def watch(node, call, *args):
        result = call(*args)
        if threading.get_ident() != thread:
            return result
        if type(args[0]) is list:  # a node's apply(grads)
            grads, sent = args[0], tuple(result)
            name = node.name()
        else:  # an AccumulateGrad's accumulate(grad, ...)
            grads, sent = [args[0]], ()
            label = labels.get(id(node.variable))
            name = "AccumulateGrad" + (f" ({label})" if label else "")
        steps.append(GradientStep(
            len(steps) + 1, name,
            tuple(None if g is None else tuple(g.shape) for g in grads),
            tuple(_norm(g) for g in grads), tuple(_norm(g) for g in sent), node))
        return result

    _tooling.add_node_wrapper(watch)
    try:
        loss.backward(gradient, retain_graph=retain_graph, create_graph=create_graph,
                      inputs=inputs)
    finally:
        _tooling.remove_node_wrapper(watch)
    return GradientReport(steps)
