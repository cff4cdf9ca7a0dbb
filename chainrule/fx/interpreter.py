"""``torch.fx.interpreter``: run a GraphModule node by node (Interpreter), or rebuild it into
a new graph while running it on Proxies (Transformer)."""

from __future__ import annotations

import inspect
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from ..nn import Module
from ._symbolic_trace import Tracer
from .graph import Graph
from .graph_module import GraphModule
from .node import Node, map_aggregate, map_arg
from .proxy import Proxy

__all__ = ["Interpreter", "Transformer"]


class Interpreter:
    """Executes a GraphModule one node at a time; override a method per op kind (``call_function``,
    ``call_module``, ...) to change what a kind of node does."""

    def __init__(self, module: Module, garbage_collect_values: bool = True,
                 graph: Graph | None = None) -> None:
        self.module = module
        self.submodules = dict(self.module.named_modules())
        self.graph = graph if graph is not None else self.module.graph
        self.env: dict[Node, Any] = {}
        self.name = "Interpreter"
        self.garbage_collect_values = garbage_collect_values
        self.extra_traceback = True
        if garbage_collect_values:
            # values are freed after their last use, as the generated code deletes them
            last_use: dict[Node, Node] = {}
            self.user_to_last_uses: dict[Node, list[Node]] = {}
            for node in reversed(self.graph.nodes):
                for used in node._input_nodes:
                    if used not in last_use:
                        last_use[used] = node
                        self.user_to_last_uses.setdefault(node, []).append(used)

    def run(self, *args: Any, initial_env: dict[Node, Any] | None = None,
            enable_io_processing: bool = True) -> Any:
        """Run `module` via interpretation and return the result."""
        self.env = initial_env if initial_env is not None else {}
        if enable_io_processing:
            args = self.graph.process_inputs(*args)
        self.args_iter: Iterator[Any] = iter(args)
        for node in self.graph.nodes:
            if node in self.env:
                continue  # supplied by initial_env
            try:
                self.env[node] = self.run_node(node)
            except Exception as e:
                if self.extra_traceback:
                    msg = f"While executing {node.format_node()}"
                    msg = f"{e.args[0]}\n\n{msg}" if e.args else str(msg)
                    msg += f"\nOriginal traceback:\n{node.stack_trace}"
                    e.args = (msg,) + e.args[1:]
                raise
            if self.garbage_collect_values:
                for dead in self.user_to_last_uses.get(node, []):
                    del self.env[dead]
            if node.op == "output":
                output = self.env[node]
                return self.graph.process_outputs(output) if enable_io_processing else output
        return None

    def boxed_run(self, args_list: list[Any]) -> Any:
        """Run `module` via interpretation and return the result; clears args_list."""
        args_iter = iter(args_list)
        env = {}
        for n in self.graph.nodes:
            if n.op == "placeholder":
                env[n] = next(args_iter)
        args_list.clear()
        return self.run(initial_env=env)

    @contextmanager
    def _set_current_node(self, node: Node) -> Iterator[None]:
        yield

    def run_node(self, n: Node) -> Any:
        """Run a specific node ``n`` and return the result."""
        with self._set_current_node(n):
            args, kwargs = self.fetch_args_kwargs_from_env(n)
            return getattr(self, n.op)(n.target, args, kwargs)

    # ---- one method per op kind ---------------------------------------------------------------

    def placeholder(self, target: str, args: tuple, kwargs: dict) -> Any:
        """Execute a ``placeholder`` node: the next positional argument (or the default)."""
        if target.startswith("*"):
            return list(self.args_iter)
        try:
            return next(self.args_iter)
        except StopIteration as si:
            if args:
                return args[0]
            raise RuntimeError(f"Expected positional argument for parameter {target}, but one "
                               "was not passed in!") from si

    def get_attr(self, target: str, args: tuple, kwargs: dict) -> Any:
        """Execute a ``get_attr`` node: fetch the attribute from ``self.module``."""
        return self.fetch_attr(target)

    def call_function(self, target: Any, args: tuple, kwargs: dict) -> Any:
        """Execute a ``call_function`` node and return the result."""
        return target(*args, **kwargs)

    def call_method(self, target: str, args: tuple, kwargs: dict) -> Any:
        """Execute a ``call_method`` node and return the result."""
        self_obj, *args_tail = args
        return getattr(self_obj, target)(*args_tail, **kwargs)

    def call_module(self, target: str, args: tuple, kwargs: dict) -> Any:
        """Execute a ``call_module`` node and return the result."""
        submod = self.fetch_attr(target)
        return submod(*args, **kwargs)

    def output(self, target: str, args: tuple, kwargs: dict) -> Any:
        """Execute an ``output`` node: the value the graph returns."""
        return args[0]

    # ---- helpers ------------------------------------------------------------------------------

    def fetch_attr(self, target: str) -> Any:
        """Fetch an attribute from the ``Module`` hierarchy of ``self.module``."""
        atoms = target.split(".")
        attr = self.module
        for i, atom in enumerate(atoms):
            if not hasattr(attr, atom):
                raise RuntimeError(f"Node referenced nonexistent target {'.'.join(atoms[:i + 1])}")
            attr = getattr(attr, atom)
        return attr

    def fetch_args_kwargs_from_env(self, n: Node) -> tuple[tuple, dict]:
        """Fetch the concrete values of ``args`` and ``kwargs`` of node ``n`` from the current
        execution environment."""
        args = self.map_nodes_to_values(n.args, n)
        kwargs = self.map_nodes_to_values(n.kwargs, n)
        return args, kwargs

    def map_nodes_to_values(self, args: Any, n: Node) -> Any:
        """Recursively descend through ``args`` and look up the concrete value for each
        ``Node`` in the current execution environment."""
        def load_arg(n_arg: Node) -> Any:
            if n_arg not in self.env:
                raise RuntimeError(f"Node {n} referenced nonexistent value {n_arg}! Run "
                                   "Graph.lint() to diagnose such issues")
            return self.env[n_arg]

        return map_arg(args, load_arg)


class _TransformerTracer(Tracer):
    def __init__(self, graph: Graph) -> None:
        super().__init__()
        self.graph = graph
        self.tensor_attrs: dict[Any, str] = {}

    def is_leaf_module(self, _: Module, __: str) -> bool:
        return True


class Transformer(Interpreter):
    """An Interpreter that runs the graph on Proxies, so its result is a new GraphModule;
    override the op-kind methods to rewrite nodes."""

    def __init__(self, module: GraphModule) -> None:
        super().__init__(module)
        self.new_graph = Graph()
        self.new_graph.set_codegen(module.graph._codegen)
        self.tracer = _TransformerTracer(self.new_graph)
        self.tracer.root = module

    def placeholder(self, target: str, args: tuple, kwargs: dict) -> Proxy:
        """Execute a ``placeholder`` node: a placeholder of the new graph."""
        default = next(iter(args)) if args else inspect.Signature.empty
        return Proxy(self.new_graph.placeholder(target, default_value=default), self.tracer)

    def get_attr(self, target: str, args: tuple, kwargs: dict) -> Proxy:
        """Execute a ``get_attr`` node: a ``get_attr`` node of the new graph."""
        return self.tracer.create_proxy("get_attr", target, args, kwargs)

    def call_module(self, target: str, args: tuple, kwargs: dict) -> Any:
        """Execute a ``call_module`` node: one node of the new graph (modules are leaves)."""
        submod = self.fetch_attr(target)
        return self.tracer.call_module(submod, submod.forward, args, kwargs)

    def call_function(self, target: Any, args: tuple, kwargs: dict) -> Any:
        """Execute a ``call_function`` node: one node of the new graph."""
        return self.tracer.create_proxy("call_function", target, args, kwargs)

    def transform(self) -> GraphModule:
        """Transform ``self.module`` and return the transformed ``GraphModule``."""
        result = super().run(enable_io_processing=False)
        if result is not None:
            def strip_proxy(a: Any) -> Any:
                return a.node if isinstance(a, Proxy) else a

            self.new_graph.output(map_aggregate(result, strip_proxy))
        return GraphModule(self.module, self.new_graph)
