"""``torch.accelerator.graphs``: capture of accelerator graphs; there is no accelerator."""

from __future__ import annotations

from .memory import _unavailable

__all__ = ["Graph"]


class Graph:
    """An accelerator graph capture: constructing one raises, there is no accelerator."""

    def __init__(self, keep_graph: bool = False, *, pool: tuple[int, int] | None = None,
                 capture_error_mode: str = "default") -> None:
        _unavailable()
