"""``torch.fx.passes``: passes over fx graphs (shape propagation, the subgraph matcher)."""

from . import shape_prop, utils

__all__ = ["shape_prop", "utils"]
