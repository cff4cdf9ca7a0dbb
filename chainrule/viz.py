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

__all__ = ["make_dot", "to_svg", "DotGraph"]

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
    own = False  # a chainrule op node: its own fields, not the same values again as _saved_*
    for field in ("params", "saved"):
        values = getattr(fn, field, None)
        if isinstance(values, Mapping):
            items.update(values)
            own = True
    for attr in () if own else dir(fn):
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


def _walk(tensor, params, show_attrs: bool, max_attr_chars: int) -> list[tuple]:
    """The graph in walk order: ``("node", id, label, color)`` and ``("edge", from, to)``,
    edges running from inputs to their consumers."""
    outputs = tuple(tensor) if isinstance(tensor, (tuple, list)) else (tensor,)
    names = {id(t): name for name, t in dict(params or {}).items()}
    items: list[tuple] = []
    ids: dict[int, str] = {}
    alive = []  # hold every visited object so that no id() is reused during the walk

    def add(obj, label: str, color: str) -> str:
        node_id = ids[id(obj)] = f"n{len(ids)}"
        alive.append(obj)
        items.append(("node", node_id, label, color))
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
            items.append(("edge", ids[id(fn)], consumer))
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
        items.append(("edge", fn_id, consumer))
        inputs = [f for f, _ in getattr(fn, "next_functions", ()) if f is not None]
        stack.extend((f, fn_id) for f in reversed(inputs))
    return items


def make_dot(tensor, params=None, show_attrs: bool = False, max_attr_chars: int = 50):
    """The autograd graph behind ``tensor`` (or a sequence of tensors) as a ``graphviz.Digraph``,
    or a ``DotGraph`` with the same ``.source`` when the graphviz package is not installed.

    ``params`` maps names to tensors (``dict(model.named_parameters())``) to label the leaves;
    otherwise a leaf shows its ``.name`` if it has one. ``show_attrs`` adds each op's parameters.
    """
    body = list(_HEADER)
    for kind, *rest in _walk(tensor, params, show_attrs, max_attr_chars):
        if kind == "node":
            body.append(f"\t{rest[0]} [label={_quote(rest[1])} fillcolor={rest[2]}]\n")
        else:
            body.append(f"\t{rest[0]} -> {rest[1]}\n")
    return _digraph(body)


_SVG_COLORS = {_OUTPUT: "#caff70", _LEAF: "#add8e6", _OP: "#d3d3d3"}


def to_svg(tensor, params=None, show_attrs: bool = False, max_attr_chars: int = 50) -> str:
    """The graph as SVG text: drawn by Graphviz's dot when it is installed, else laid out here
    (layers by distance from the output, inputs above their consumers), so no binary is needed."""
    import shutil
    import subprocess

    if shutil.which("dot"):
        source = make_dot(tensor, params, show_attrs, max_attr_chars).source
        run = subprocess.run(["dot", "-Tsvg"], input=source, capture_output=True, text=True,
                             check=False)
        if run.returncode == 0:
            return run.stdout
    items = _walk(tensor, params, show_attrs, max_attr_chars)
    return _layout_svg([i[1:] for i in items if i[0] == "node"],
                       [i[1:] for i in items if i[0] == "edge"])


def _layout_svg(nodes: list, edges: list) -> str:
    from html import escape

    consumers: dict[str, list[str]] = {}
    for a, b in edges:
        consumers.setdefault(a, []).append(b)
    depth: dict[str, int] = {}
    for node_id, _, _ in nodes:  # the walk lists every consumer before its inputs
        depth[node_id] = max((depth.get(c, 0) + 1 for c in consumers.get(node_id, ())),
                             default=0)
    layers: dict[int, list] = {}
    for node in nodes:
        layers.setdefault(depth[node[0]], []).append(node)
    char_w, line_h, pad, gap_x, gap_y = 7.0, 14.0, 8.0, 16.0, 40.0
    sizes = {i: (max(len(t) for t in label.split("\n")) * char_w + 2 * pad,
                 len(label.split("\n")) * line_h + pad) for i, label, _ in nodes}
    top = max(layers)
    row_h = max(h for _, h in sizes.values()) + gap_y
    width = max(sum(sizes[n[0]][0] + gap_x for n in row) for row in layers.values()) + gap_x
    pos = {}
    for d, row in layers.items():
        row_w = sum(sizes[n[0]][0] + gap_x for n in row) - gap_x
        x = (width - row_w) / 2
        for node_id, _, _ in row:
            w, h = sizes[node_id]
            pos[node_id] = (x, (top - d) * row_h + gap_x, w, h)
            x += w + gap_x
    height = (top + 1) * row_h + gap_x
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{width:.0f}" height="{height:.0f}" '
           f'viewBox="0 0 {width:.0f} {height:.0f}" font-family="monospace" font-size="11">',
           '<defs><marker id="arrow" viewBox="0 0 10 10" refX="10" refY="5" markerWidth="6" '
           'markerHeight="6" orient="auto"><path d="M0,0 L10,5 L0,10 z"/></marker></defs>']
    for a, b in edges:
        xa, ya, wa, ha = pos[a]
        xb, yb, wb, _ = pos[b]
        out.append(f'<line x1="{xa + wa / 2:.1f}" y1="{ya + ha:.1f}" x2="{xb + wb / 2:.1f}" '
                   f'y2="{yb:.1f}" stroke="black" marker-end="url(#arrow)"/>')
    for node_id, label, color in nodes:
        x, y, w, h = pos[node_id]
        out.append(f'<rect x="{x:.1f}" y="{y:.1f}" width="{w:.1f}" height="{h:.1f}" '
                   f'fill="{_SVG_COLORS.get(color, "#ffffff")}" stroke="black"/>')
        for k, text in enumerate(label.split("\n")):
            out.append(f'<text x="{x + pad:.1f}" y="{y + pad / 2 + (k + 0.8) * line_h:.1f}">'
                       f"{escape(text)}</text>")
    out.append("</svg>")
    return "\n".join(out) + "\n"


def _digraph(body: list[str]):
    try:
        import graphviz
    except ImportError:
        return DotGraph(body)
    return graphviz.Digraph(body=body)
