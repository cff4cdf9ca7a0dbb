"""``torch.fx.subgraph_rewriter``: replace every occurrence of a pattern in a GraphModule."""

from __future__ import annotations

import copy
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, NamedTuple

from ..nn import Module
from ._symbolic_trace import symbolic_trace
from .graph import Graph
from .graph_module import GraphModule
from .node import Node
from .passes.utils.matcher_utils import InternalMatch, SubgraphMatcher

__all__ = ["Match", "replace_pattern", "replace_pattern_with_filters", "ReplacedPatterns"]


class Match(NamedTuple):
    """One replaced occurrence: the node matched to the pattern's anchor, and pattern node ->
    graph node."""

    anchor: Node
    nodes_map: dict[Node, Node]


@dataclass
class ReplacedPatterns:
    """One replaced occurrence, with the nodes the replacement inserted."""

    anchor: Node
    nodes_map: dict[Node, Node]
    replacements: list[Node]


def replace_pattern(gm: GraphModule, pattern: Callable | GraphModule,
                    replacement: Callable | GraphModule) -> list[Match]:
    """Matches all possible non-overlapping sets of operators and their data dependencies
    (``pattern``) in the Graph of a GraphModule (``gm``), then replaces each of these matched
    subgraphs with another subgraph (``replacement``)."""
    replaced = _replace_pattern(gm, pattern, replacement)
    return [Match(anchor=m.anchor, nodes_map=m.nodes_map) for m in replaced]


def replace_pattern_with_filters(
        gm: GraphModule, pattern: Callable | Graph | GraphModule,
        replacement: Callable | Graph | GraphModule | None = None,
        match_filters: list[Callable[[InternalMatch, Graph, Graph], bool]] | None = None,
        ignore_literals: bool = False,
        replacement_callback: Callable[[InternalMatch, Graph, Graph], Graph] | None = None,
        node_name_match: str = "") -> list[ReplacedPatterns]:
    """See replace_pattern; ``match_filters`` decide which matches are replaced."""
    return _replace_pattern(gm, pattern, replacement, match_filters, ignore_literals,
                            replacement_callback, node_name_match)


def _graph_of(value: Any) -> Graph:
    if isinstance(value, GraphModule):
        return value.graph
    if isinstance(value, Graph):
        return value
    return symbolic_trace(value).graph


def _replace_pattern(gm: GraphModule, pattern: Any, replacement: Any = None,
                     match_filters: list[Callable] | None = None, ignore_literals: bool = False,
                     replacement_callback: Callable | None = None,
                     node_name_match: str = "") -> list[ReplacedPatterns]:
    original = gm.graph
    pattern_graph = _graph_of(pattern)
    matcher = SubgraphMatcher(pattern_graph, match_output=False, match_placeholder=False,
                              remove_overlapping_matches=True, ignore_literals=ignore_literals)
    matches = [m for m in matcher.match(original, node_name_match=node_name_match)
               if all(f(m, original, pattern_graph) for f in match_filters or ())]
    if replacement is not None:
        common_replacement = _graph_of(replacement)
    elif replacement_callback is None:
        raise AssertionError("Must provide either a replacement GraphModule or a replacement "
                             "callback")
    # a value an earlier replacement rewrote, for matches that read it
    changed: dict[Node, Node] = {}
    results = []
    for match in matches:
        graph = (replacement_callback(match, original, pattern_graph)
                 if replacement_callback is not None else common_replacement)
        placeholders = [n for n in graph.nodes if n.op == "placeholder"]
        if len(match.placeholder_nodes) != len(placeholders):
            raise AssertionError(f"Placeholder count mismatch: {len(match.placeholder_nodes)} "
                                 f"vs {len(placeholders)}")
        val_map: dict[Node, Any] = {}
        for rn, gn in zip(placeholders, match.placeholder_nodes):
            if isinstance(gn, Node):
                val_map[rn] = changed.get(gn, gn)
                if val_map[rn] is not gn:
                    match.placeholder_nodes[match.placeholder_nodes.index(gn)] = val_map[rn]
                    for key, value in match.nodes_map.items():
                        if value is gn:
                            match.nodes_map[key] = val_map[rn]
                            break
            else:
                val_map[rn] = gn
        # the replacement goes before the first user of the match's results
        users = {u for n in match.returning_nodes for u in n.users}
        insert_point = next((n for n in original.nodes if n in users), None)
        if insert_point is None:
            following = None
            for n in reversed(original.nodes):
                if n in match.returning_nodes:
                    insert_point = following
                    break
                following = n
        if insert_point is None:
            raise AssertionError("The insert point can't be None")
        with original.inserting_before(insert_point):
            copied = original.graph_copy(graph, val_map)
        if isinstance(copied, Node):
            copied = (copied,)
        inserted = [v for v in val_map.values() if v not in match.placeholder_nodes]
        if len(match.returning_nodes) != len(copied):
            raise AssertionError(f"Returning nodes count mismatch: {len(match.returning_nodes)} "
                                 f"vs {len(copied)}")
        for gn, new in zip(match.returning_nodes, copied):
            gn.replace_all_uses_with(new)
            changed[gn] = new
        for node in reversed(pattern_graph.nodes):
            if node.op not in ("placeholder", "output"):
                original.erase_node(match.nodes_map[node])
        results.append(ReplacedPatterns(anchor=match.anchors[0], nodes_map=match.nodes_map,
                                        replacements=inserted))
    gm.recompile()
    if isinstance(replacement, Module):
        _replace_attributes(gm, replacement)
    return results


def _replace_attributes(gm: GraphModule, replacement: Module) -> None:
    """Copy the submodules and attributes the replacement's nodes name into ``gm``."""
    gm.delete_all_unused_submodules()

    def try_get(module: Module, target: str) -> Any:
        path, _, name = target.rpartition(".")
        try:
            owner = module.get_submodule(path)
        except AttributeError:
            return None
        return getattr(owner, name, None)

    for node in gm.graph.nodes:
        if node.op in ("call_module", "get_attr") and try_get(gm, node.target) is None:
            value = try_get(replacement, node.target)
            if value is None:
                raise RuntimeError("Attempted to create a \"", node.op, "\" node during "
                                   "subgraph rewriting with target ", node.target, ", but "
                                   "the referenced attribute does not exist in the replacement "
                                   "GraphModule")
            new = copy.deepcopy(value)
            if isinstance(value, Module):
                gm.add_submodule(node.target, new)
            else:
                setattr(gm, node.target, new)
