"""``torch.fx``: capture a Module or function as a Graph by symbolic tracing, transform the
graph, and run it again as a GraphModule (generated Python code)."""

from . import (  # noqa: F401  (torch.fx's submodules are its attributes)
    config,
    graph,
    graph_module,
    immutable_collections,
    interpreter,
    node,
    passes,
    proxy,
    subgraph_rewriter,
)
from ._symbolic_trace import PH, Tracer, symbolic_trace, wrap  # noqa: F401
from .annotate import annotate  # noqa: F401
from .graph import CodeGen, Graph  # noqa: F401
from .graph_module import GraphModule
from .interpreter import Interpreter, Transformer
from .node import Node, has_side_effect, map_arg
from .proxy import Proxy
from .subgraph_rewriter import replace_pattern

__all__ = ["symbolic_trace", "Tracer", "wrap", "Graph", "GraphModule", "Interpreter",
           "Transformer", "Node", "Proxy", "replace_pattern", "has_side_effect", "map_arg"]
