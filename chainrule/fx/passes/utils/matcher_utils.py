"""``torch.fx.passes.utils.matcher_utils``: find the places a pattern graph occurs in a graph."""

from __future__ import annotations

import copy
from collections import defaultdict
from dataclasses import dataclass, field
from typing import Any

from ...graph import Graph
from ...node import Node

__all__ = ["SubgraphMatcher", "InternalMatch"]


@dataclass
class InternalMatch:
    """One occurrence of a pattern: pattern node -> graph node, and the graph's nodes that
    stand for the pattern's inputs and outputs."""

    anchors: list[Node]
    nodes_map: dict[Node, Node] = field(default_factory=dict)
    placeholder_nodes: list[Node] = field(default_factory=list)
    returning_nodes: list[Node] = field(default_factory=list)
    name_node_map: dict[str, Node] = field(default_factory=dict)

    def __copy__(self) -> InternalMatch:
        return InternalMatch(anchors=self.anchors, nodes_map=self.nodes_map.copy(),
                             placeholder_nodes=self.placeholder_nodes.copy(),
                             returning_nodes=self.returning_nodes.copy())


def _forms_cycle(nodes: list[Node]) -> bool:
    """True if fusing ``nodes`` into one would make a cycle: a path leaves them and comes
    back."""
    inside = set(nodes)
    stack = [user for n in nodes for user in n.users if user not in inside]
    seen: set[Node] = set()
    while stack:
        node = stack.pop()
        if node in inside:
            return True
        if node in seen:
            continue
        seen.add(node)
        stack.extend(node.users)
    return False


class SubgraphMatcher:
    """Matches a pattern graph against a graph, walking back from the pattern's outputs;
    pattern placeholders match any value."""

    def __init__(self, pattern: Graph, match_output: bool = False,
                 match_placeholder: bool = False, remove_overlapping_matches: bool = True,
                 ignore_literals: bool = False) -> None:
        self.pattern = pattern
        self.match_output = match_output
        self.match_placeholder = match_placeholder
        self.remove_overlapping_matches = remove_overlapping_matches
        self.ignore_literals = ignore_literals
        if len(pattern.nodes) == 0:
            raise ValueError("SubgraphMatcher cannot be initialized with an empty pattern")
        for node in pattern.nodes:
            if node.op != "output" and not node.is_impure() and not node.users:
                raise AssertionError("SubgraphMatcher cannot be initialized with an pattern "
                                     "with dead code")
        self.pattern_placeholder_nodes = [n for n in pattern.nodes if n.op == "placeholder"]
        output_node = next(iter(reversed(pattern.nodes)))
        self.pattern_returning_nodes: list[Node] = output_node.all_input_nodes
        if match_output:
            self.pattern_anchors = [output_node]
        else:
            self.pattern_anchors = [n for n in output_node.all_input_nodes if len(n.users) == 1]

    def _nodes_are_equal(self, pn: Node, gn: Node, node_name_match: str = "") -> bool:
        if not self.match_placeholder and pn.op == "placeholder":
            return True
        if node_name_match and node_name_match in gn.name:
            return True
        if pn.op != gn.op:
            return False
        if pn.op in ("placeholder", "output"):
            return True
        if pn.op == "get_attr":
            return self._match_attributes(pn, gn)
        return pn.target == gn.target

    @staticmethod
    def _match_attributes(pn: Node, gn: Node) -> bool:
        def fetch(module: Any, target: str) -> Any:
            for atom in target.split("."):
                module = getattr(module, atom)
            return module

        pv = fetch(pn.graph.owning_module, pn.target)
        gv = fetch(gn.graph.owning_module, gn.target)
        return type(pv) is type(gv)

    def _is_contained(self, nodes_map: dict[Node, Node]) -> bool:
        lookup = {gn: pn for pn, gn in nodes_map.items() if pn.op != "placeholder"}
        for gn, pn in lookup.items():
            if pn in self.pattern_returning_nodes:
                continue
            if any(user not in lookup for user in gn.users):
                return False
        return True

    def _remove_overlapping_matches(self, matches: list[InternalMatch]) -> list[InternalMatch]:
        kept: list[InternalMatch] = []
        taken: set[Node] = set()
        for match in matches:
            compute = [gn for pn, gn in match.nodes_map.items()
                       if pn.op not in ("placeholder", "output")]
            if any(gn in taken for gn in compute):
                continue
            kept.append(match)
            taken.update(compute)
        return kept

    def _match_literals(self, pn: Any, gn: Any, match: InternalMatch) -> bool:
        if isinstance(pn, Node):
            if pn.op != "placeholder":
                return False
            if pn in match.nodes_map:
                return match.nodes_map[pn] == gn
            match.nodes_map[pn] = gn
            return True
        if isinstance(gn, Node):
            return False
        return type(gn) is type(pn) and gn == pn

    def _match_nodes(self, pn: Node, gn: Node, match: InternalMatch,
                     node_name_match: str = "") -> bool:
        if pn in match.nodes_map:
            return match.nodes_map[pn] is gn
        if gn in match.nodes_map.values():
            return False
        if not self._nodes_are_equal(pn, gn, node_name_match):
            return False
        match.nodes_map[pn] = gn
        if pn.op == "placeholder":
            return True

        def match_args(args1: Any, args2: Any) -> bool:
            if len(args1) != len(args2):
                return False
            for a1, a2 in zip(args1, args2):
                if isinstance(a1, Node) and isinstance(a2, Node):
                    matched = self._match_nodes(a1, a2, match)
                elif isinstance(a1, (list, tuple)) and isinstance(a2, (list, tuple)):
                    matched = match_args(a1, a2)
                else:
                    matched = self._match_literals(a1, a2, match) or self.ignore_literals
                if not matched:
                    return False
            return True

        if len(pn.args) != len(gn.args) or list(pn.kwargs) != list(gn.kwargs):
            return False
        return match_args([*pn.args, *pn.kwargs.values()], [*gn.args, *gn.kwargs.values()])

    def match(self, graph: Graph, node_name_match: str = "") -> list[InternalMatch]:
        """The self-contained occurrences of the pattern in ``graph`` (only their placeholders'
        and returned nodes' values are used outside them), the first of overlapping ones."""
        candidates: dict[Node, list[Node]] = defaultdict(list)
        for anchor in self.pattern_anchors:
            for node in graph.nodes:
                if self._nodes_are_equal(anchor, node, node_name_match):
                    candidates[anchor].append(node)
        candidate_list = list(candidates.items())
        matches: list[InternalMatch] = []

        def backtrack(index: int, match: InternalMatch) -> None:
            if index == len(candidate_list):
                match.placeholder_nodes = [match.nodes_map[pn]
                                           for pn in self.pattern_placeholder_nodes]
                match.returning_nodes = [match.nodes_map[pn]
                                         for pn in self.pattern_returning_nodes]
                matches.append(match)
                return
            anchor, nodes = candidate_list[index]
            saved = copy.copy(match)
            for node in nodes:
                if self._match_nodes(anchor, node, match, node_name_match):
                    backtrack(index + 1, match)
                match = copy.copy(saved)

        if candidate_list:
            backtrack(0, InternalMatch(anchors=self.pattern_anchors))
        matches = [m for m in matches if self._is_contained(m.nodes_map)]
        matches = [m for m in matches if not _forms_cycle(
            [gn for pn, gn in m.nodes_map.items() if pn.op not in ("placeholder", "output")])]
        if self.remove_overlapping_matches:
            matches = self._remove_overlapping_matches(matches)
        return matches
