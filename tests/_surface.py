"""Shared by the surface tests (test_parity, test_training_surface): what PyTorch has, whether
chainrule has it with PyTorch's parameter names, and the reasons listed for what it does not."""

from __future__ import annotations

import inspect
import re
from collections.abc import Iterable
from pathlib import Path

DIFFERENCES = Path(__file__).resolve().parent.parent / "docs" / "differences.md"


def not_provided() -> set[str]:
    """Names listed under a "Not provided" heading of docs/differences.md: qualified
    (``Tensor.q_scale``) or bare (``q_scale``: every namespace that has it)."""
    listed: set[str] = set()
    for section in re.split(r"\n## ", DIFFERENCES.read_text()):
        title, _, body = section.partition("\n")
        if title.lower().startswith("not provided"):
            listed.update(re.findall(r"`([\w.]+)`", body))
    return listed


def excluded(qual: str, listed: set[str]) -> bool:
    return qual in listed or qual.rpartition(".")[2] in listed


def listing(path: str, listed: set[str], module: bool = False) -> str | None:
    """The entry that lists torch's name or (``module``) module at ``path`` (``utils.data``,
    ``cuda.nvtx.range``; '' is torch), or None. A name is listed as itself, written with or
    without ``torch.`` (a top-level name also bare); a module only as ``torch.distributed.rpc``;
    either by a module it is in, written so (a subtree)."""
    if not module and path in listed:
        return path
    parts = path.split(".")
    for end in range(len(parts), 0, -1):
        entry = "torch." + ".".join(parts[:end])
        if entry in listed:
            return entry
    return None


def parameters(fn) -> set[str] | None:
    """The parameter names of a function, or of a class's constructor (None: unknown)."""
    try:
        target = fn.__init__ if inspect.isclass(fn) else fn
        params = inspect.signature(target).parameters.values()
    except (TypeError, ValueError):
        return None
    if any(p.kind is p.VAR_KEYWORD for p in params):
        return None  # takes any keyword
    return {p.name for p in params
            if p.kind is not p.VAR_POSITIONAL and p.name not in ("self", "cls")}


def status(entries: Iterable[tuple[str, object, set[str] | None]]) -> dict[str, str]:
    """Qualified name -> what is wrong ('' when chainrule's callable takes every reference
    parameter name), from (name, chainrule's callable or None, PyTorch's parameter names)."""
    result = {}
    for qual, ours, reference in entries:
        if ours is None:
            result[qual] = "missing"
            continue
        got = parameters(ours)
        missing = sorted(reference - got) if reference is not None and got is not None else []
        result[qual] = f"does not accept {', '.join(missing)}" if missing else ""
    return result
