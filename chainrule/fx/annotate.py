"""``torch.fx.annotate``: give a traced value a type (printed in the generated code)."""

from __future__ import annotations

from typing import Any

from .proxy import Proxy

__all__ = ["annotate"]


def annotate(val: Any, type: Any) -> Any:  # noqa: A002  (PyTorch's parameter name)
    """Annotate a traced value with a type; an untraced value is returned as it is."""
    if isinstance(val, Proxy):
        if val.node.type:
            raise RuntimeError(f"Tried to annotate a value that already had a type on it! "
                               f"Existing type is {val.node.type} and new type is {type}. "
                               "This could happen if you tried to annotate a function "
                               "parameter value (in which case you should use the type slot "
                               "on the function signature) or you called annotate on the same "
                               "value twice")
        val.node.type = type
    return val
