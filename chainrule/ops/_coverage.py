"""Render the op coverage table (docs/ops.md) from the registry.

Regenerate with ``python -m chainrule.ops._coverage > docs/ops.md``.
"""

from __future__ import annotations

import sys

from .._batching import rule_kind
from . import FAMILIES
from ._registry import REGISTRY, ZERO, Op

__all__ = ["render"]

HEADER = """# Op coverage

Generated from the op registry by `python -m chainrule.ops._coverage > docs/ops.md`; do not edit.
One row per registered op record. *VJP rules* lists the inputs that have a reverse-mode rule
(`zero`: differentiable with derivative zero; `none`: not differentiable in that input). *JVP*
is the forward-mode rule (`—`: none yet). *vmap* is the batching rule: `elementwise` (the batch
lined up in front, broadcasting), `dims` (dim parameters shifted past the batch), `leading dims`
(the batch as one more leading dim of an op that batches over them), `rule` (a rule of the op's
own) or `fallback` (no rule: vmap runs the op per example and warns).
"""


def _family(op: Op) -> str:
    for module in FAMILIES:
        if any(value is op for value in vars(module).values()):
            return module.__name__.rsplit(".", 1)[-1]
    return "?"


def _rule(name: str, rule) -> str:
    if rule is None:
        return f"{name}: none"
    if rule is ZERO:
        return f"{name}: zero"
    if rule.__qualname__.startswith("not_implemented"):
        return f"{name}: not implemented"
    return name


def _jvp(op: Op) -> str:
    if op.jvp is None:
        return "—"
    return op.jvp if isinstance(op.jvp, str) else "rule"


def render() -> str:
    """The markdown table, one line per op record, in registration order."""
    lines = [
        HEADER,
        "| op | family | backward name | inputs | VJP rules | JVP | vmap |",
        "| --- | --- | --- | --- | --- | --- | --- |",
    ]
    for op in REGISTRY.values():
        rules = (
            "not differentiable"
            if not op.differentiable
            else ", ".join(_rule(n, r) for n, r in zip(op.inputs, op.vjp))
        )
        lines.append(
            f"| `{op.name}` | {_family(op)} | `{op.backward_name}` | "
            f"{len(op.inputs)} ({', '.join(op.inputs)}) | {rules} | {_jvp(op)} | {rule_kind(op)} |"
        )
    with_jvp = sum(op.jvp is not None for op in REGISTRY.values())
    batched = sum(rule_kind(op) != "fallback" for op in REGISTRY.values())
    lines += ["", f"{len(REGISTRY)} ops, {with_jvp} with a JVP rule, {batched} with a batching "
              f"rule."]
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    sys.stdout.write(render())
