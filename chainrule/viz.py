"""Draw an autograd graph: ``make_dot(loss, params=dict(model.named_parameters()))``.

Ops are grey boxes named by their ``grad_fn`` (``MulBackward0``), leaf tensors blue boxes with
their name and shape, the outputs green boxes; edges follow the data from inputs to outputs. The
DOT text is built here and always available as ``.source``; the ``graphviz`` Python package
(``pip install "chainrule[viz]"``) and its ``dot`` program are needed only to render it.
Any graph with PyTorch's node interface (``name()``, ``next_functions``, ``AccumulateGrad``'s
``variable``) can be drawn, including PyTorch's own.
"""

from __future__ import annotations

import os
from collections.abc import Mapping

__all__ = ["make_dot", "DotGraph"]

_INSTALL_HINT = ('rendering needs the graphviz Python package: pip install "chainrule[viz]" '
                 "(and Graphviz's dot program); the DOT text is in .source")
_HEADER = ('\tgraph [size="12,12"]\n',
           "\tnode [align=left fontname=monospace fontsize=10 height=0.2 ranksep=0.1 shape=box "
           "style=filled]\n")
_OUTPUT, _LEAF, _OP = "darkolivegreen1", "lightblue", "lightgrey"


class DotGraph:
    """The DOT text of a graph when the graphviz package is missing: ``.source`` and ``save()``
    work; ``render()``, ``pipe()`` and ``view()`` raise ImportError."""

    def __init__(self, body: list[str]) -> None:
        self.body = body

    @property
    def source(self) -> str:
        return "digraph {\n" + "".join(self.body) + "}\n"

    def __str__(self) -> str:
        return self.source

    def save(self, filename: str = "graph.gv", directory: str | None = None) -> str:
        """Write the DOT text to a file; returns its path."""
        path = os.path.join(directory, filename) if directory else filename
        with open(path, "w", encoding="utf-8") as f:
            f.write(self.source)
        return path

    def render(self, *args, **kwargs):
        raise ImportError(_INSTALL_HINT)

    def pipe(self, *args, **kwargs):
        raise ImportError(_INSTALL_HINT)

    def view(self, *args, **kwargs):
        raise ImportError(_INSTALL_HINT)


def _quote(text: str) -> str:
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n") + '"'


def _shape(tensor) -> str:
    return str(tuple(tensor.shape))


def _node_name(fn) -> str:
    name = getattr(fn, "name", None)
    return name() if callable(name) else type(fn).__name__


def _describe(value) -> str:
    """A saved value as text: tensors (and chainrule's saved-tensor records) by their shape."""
    for candidate in (value, getattr(value, "tensor", None), getattr(value, "array", None)):
        if candidate is not None and hasattr(candidate, "shape") and hasattr(candidate, "dtype"):
            return str(tuple(candidate.shape))
    return str(value)


def _attrs(fn, max_chars: int) -> list[str]:
    """An op's attribute lines: chainrule's op parameters and saved values (until a backward
    pass frees them), or PyTorch's ``_saved_*`` attributes."""
    items = {}
    for field in ("params", "saved"):
        values = getattr(fn, field, None)
        if isinstance(values, Mapping):
            items.update(values)
    for attr in dir(fn):
        if attr.startswith("_saved_"):
            try:
                items[attr[len("_saved_"):]] = getattr(fn, attr)
            except RuntimeError:  # freed by a backward pass
                continue
    lines = []
    for key in sorted(items, key=str):
        text = _describe(items[key])
        if len(text) > max_chars:
            text = text[:max_chars - 3] + "..."
        lines.append(f"{key}: {text}")
    return lines


def make_dot(tensor, params=None, show_attrs: bool = False, max_attr_chars: int = 50):
    """The autograd graph behind ``tensor`` (or a sequence of tensors) as a ``graphviz.Digraph``,
    or a ``DotGraph`` with the same ``.source`` when the graphviz package is not installed.

    ``params`` maps names to tensors (``dict(model.named_parameters())``) to label the leaves;
    otherwise a leaf shows its ``.name`` if it has one. ``show_attrs`` adds each op's parameters.
    """
    outputs = tuple(tensor) if isinstance(tensor, (tuple, list)) else (tensor,)
    names = {id(t): name for name, t in dict(params or {}).items()}
    body = list(_HEADER)
    ids: dict[int, str] = {}
    alive = []  # hold every visited object so that no id() is reused during the walk

    def add(obj, label: str, color: str) -> str:
        node_id = ids[id(obj)] = f"n{len(ids)}"
        alive.append(obj)
        body.append(f"\t{node_id} [label={_quote(label)} fillcolor={color}]\n")
        return node_id

    def leaf_label(t) -> str:
        name = names.get(id(t)) or getattr(t, "name", None)
        return f"{name}\n{_shape(t)}" if name else _shape(t)

    stack = []
    for out in outputs:
        if id(out) in ids:
            continue
        label = names.get(id(out)) or getattr(out, "name", None) or "output"
        out_id = add(out, f"{label}\n{_shape(out)}", _OUTPUT)
        if out.grad_fn is not None:
            stack.append((out.grad_fn, out_id))
    while stack:  # depth first, inputs in next_functions order
        fn, consumer = stack.pop()
        if id(fn) in ids:
            body.append(f"\t{ids[id(fn)]} -> {consumer}\n")
            continue
        variable = getattr(fn, "variable", None)
        leaf = variable() if callable(variable) else variable
        if leaf is not None:
            fn_id = add(fn, leaf_label(leaf), _LEAF)
        else:
            label = _node_name(fn)
            if show_attrs:
                label = "\n".join([label, *_attrs(fn, max_attr_chars)])
            fn_id = add(fn, label, _OP)
        body.append(f"\t{fn_id} -> {consumer}\n")
        inputs = [f for f, _ in getattr(fn, "next_functions", ()) if f is not None]
        stack.extend((f, fn_id) for f in reversed(inputs))
    return _digraph(body)


def _digraph(body: list[str]):
    try:
        import graphviz
    except ImportError:
        return DotGraph(body)
    return graphviz.Digraph(body=body)
