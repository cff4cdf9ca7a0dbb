"""The reverse walk: nodes run newest first, no recursion, no knowledge of particular ops.

Every edge points from a node to an older one (an op's inputs exist before it does), so running
the pending nodes in decreasing sequence number runs each node after all of its consumers: its
gradient buffer is complete, with no dependency counting.
"""

from __future__ import annotations

from heapq import heappop, heappush
from sys import getrefcount

from .._backend import xp
from .._modes import stack
from .._quiet import enter, leave
from .forward_ad import state as forward_state
from .grad_mode import state
from .graph import AccumulateGrad, GraphTask, call_post_hooks, graph_tasks, run_tensor_hooks

__all__ = ["execute"]


def _reach(root_nodes: list, target_nodes: set) -> set:
    """The nodes on some path from a root to a target (for autograd.grad's pruning)."""
    order: list = []  # children before parents
    visited = set()
    for root in root_nodes:
        if root in visited:
            continue
        visited.add(root)
        todo = [(root, iter(root.next_edges))]
        while todo:
            node, edges = todo[-1]
            for edge in edges:
                if edge is not None and edge[0] not in visited:
                    visited.add(edge[0])
                    todo.append((edge[0], iter(edge[0].next_edges)))
                    break
            else:
                todo.pop()
                order.append(node)
    reach = set()
    for node in order:
        if node in target_nodes or any(e is not None and e[0] in reach for e in node.next_edges):
            reach.add(node)
    return reach


def _add_into(buffer, grad) -> bool:
    """Add ``grad`` into ``buffer`` in place if nothing else can see the buffer's array."""
    data = buffer._data
    modes = stack.modes
    if type(grad) is not type(buffer) or (
            modes is not None and stack.dual is not None and forward_state.level):
        return False  # a BatchedTensor's values are not in its _data; a tangent would go stale
    # 3 references: the buffer list, this frame and getrefcount's argument; the same for the
    # array: the tensor's slot, this frame and the argument (a view of it would hold one more).
    if (getrefcount(buffer) > 3 or getrefcount(data) > 3 or data.base is not None
            or data.shape != grad._data.shape or data.dtype != grad._data.dtype
            or not data.flags.writeable):
        return False
    if modes is not None and stack.capture is not None:  # chainrule.compile records the sum
        stack.capture.call(xp.add, (data, grad._data), {"out": data}, out=data)
    else:
        data += grad._data
    return True


def _owner(tensor) -> int:
    data = tensor._data
    return id(data.base if data.base is not None else data)


def execute(roots: list, root_grads: list, targets: list | None, retain_graph: bool,
            create_graph: bool, accumulate: bool) -> list | None:
    """Backpropagate ``root_grads`` from the ``roots`` edges.

    With ``accumulate`` leaves add into ``.grad`` (only the ``targets`` if given); otherwise the
    gradients reaching each target edge are returned, and no ``.grad`` changes.
    """
    root_nodes = list(dict.fromkeys(node for node, _ in roots))
    capture = targets is not None
    if capture:
        target_index: dict = {}
        for i, edge in enumerate(targets):
            target_index.setdefault(edge, []).append(i)
        reach = _reach(root_nodes, {node for node, _ in targets})
        captured = [None] * len(targets)
    else:
        reach = captured = None
    prune = reach is not None

    buffers: dict = {}
    pending: list = []
    for (node, nr), grad in zip(roots, root_grads):
        buf = buffers.get(node)
        if buf is None:
            buffers[node] = buf = [None] * node.n_outputs
            heappush(pending, (-node.seq, node))
        buf[nr] = grad if buf[nr] is None else buf[nr] + grad
    # Gradient arrays the caller still holds must never become a leaf's .grad buffer.
    stored = {_owner(g) for g in root_grads}
    prev_enabled = state.enabled
    state.enabled = create_graph
    graph_tasks.stack.append(GraphTask(root_nodes, reach))  # for hooks asking about this backward
    quiet = enter()  # the rules' and the buffers' kernels: PyTorch's silent IEEE results
    try:
        while pending:
            node = heappop(pending)[1]
            grads = buffers.pop(node)
            if node._pre_hooks is not None:  # tensor hooks or retain_grad
                grads = run_tensor_hooks(node, grads)
                stored.update(_owner(g) for g in grads if g is not None)
            if capture:
                for nr, grad in enumerate(grads):
                    for i in target_index.get((node, nr), ()):
                        captured[i] = grad
            if type(node) is AccumulateGrad:
                if accumulate and grads[0] is not None:
                    key = _owner(grads[0])
                    if stack.node is not None:
                        stack.node(node, node.accumulate, grads[0], create_graph,
                                        key not in stored)
                    else:
                        node.accumulate(grads[0], create_graph, key not in stored)
                    stored.add(key)
                    if node._hooks:
                        call_post_hooks(node, (), grads)
                continue
            if prune and not any(e is not None and e[0] in reach for e in node.next_edges):
                continue
            if stack.node is not None:  # the profiler, anomaly mode, a gradient report
                outs = stack.node(node, node.apply, grads)
            else:
                outs = node.apply(grads)
            if node._hooks:
                outs = call_post_hooks(node, outs, grads)
            if not retain_graph:
                node.release()
            for edge, grad in zip(node.next_edges, outs):
                if edge is None or grad is None:
                    continue
                child, nr = edge
                if prune and child not in reach:
                    continue
                buf = buffers.get(child)
                if buf is None:
                    buffers[child] = buf = [None] * child.n_outputs
                    heappush(pending, (-child.seq, child))
                if buf[nr] is None:
                    buf[nr] = grad
                elif create_graph or not _add_into(buf[nr], grad):
                    buf[nr] = buf[nr] + grad
    finally:
        leave(quiet)
        state.enabled = prev_enabled
        graph_tasks.stack.pop()
    return captured
