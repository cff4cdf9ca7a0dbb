"""The reverse walk: a node runs as soon as its inputs are complete, with no knowledge of ops.

One walk counts the edges into each node below the roots; a node whose count reaches zero is
ready. Ready nodes run newest first (largest sequence number; an AccumulateGrad's is the largest,
so a leaf's ``.grad`` and its post-accumulate-grad hooks are done the moment its gradient is
final), as PyTorch's CPU queue orders them. No recursion.
"""

from __future__ import annotations

from heapq import heappop, heappush
from sys import getrefcount

from .._backend import xp
from .._modes import stack
from .._quiet import enter, leave
from .._threads import GRAIN, cached, kernel
from .forward_ad import state as forward_state
from .grad_mode import state
from .graph import AccumulateGrad, GraphTask, call_post_hooks, graph_tasks, run_tensor_hooks

__all__ = ["execute", "queue_callback"]

_ADD = kernel(xp.add).plain  # large sums split across the intra-op threads
_ACC = -(1 << 64) + 1  # AccumulateGrad's sequence number is the largest: it runs once ready


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


def _dependencies(root_nodes: list) -> dict:
    """How many edges of the graph below the roots lead into each node (one walk)."""
    deps: dict = {}
    todo = list(root_nodes)
    roots = set(todo)  # walked already: a root below another root is not walked again
    pop, push = todo.pop, todo.append
    while todo:
        for edge in pop().next_edges:
            if edge is not None:
                child = edge[0]
                if child in deps:
                    deps[child] += 1
                else:
                    deps[child] = 1
                    if child not in roots:
                        push(child)
    return deps


class _Rest:
    """Edges of a node that returned no gradient for them."""

    __slots__ = ("next_edges",)

    def __init__(self, edges: tuple) -> None:
        self.next_edges = edges


class _Tie:
    """A ready AccumulateGrad in the heap: equal to every other, as in PyTorch's queue."""

    __slots__ = ("node",)

    def __init__(self, node) -> None:
        self.node = node

    def __lt__(self, other) -> bool:
        return False


def _pass_over(node, deps: dict, buffers: dict, ready: list) -> None:
    """A node no gradient reached does not run; its children stop waiting for it."""
    todo = [node]
    while todo:
        for edge in todo.pop().next_edges:
            if edge is None or edge[0] not in deps:
                continue
            child = edge[0]
            n = deps[child] - 1
            deps[child] = n  # (a count reaching zero is left so: nothing else decrements it)
            if n:
                continue
            if child in buffers:
                heappush(ready, (_ACC, _Tie(child)) if type(child) is AccumulateGrad
                         else (-child.seq, child))
            else:
                todo.append(child)


def _add_into(buffer, grad, outs) -> bool:
    """Add ``grad`` into ``buffer`` in place if nothing else can see the buffer's array."""
    data = buffer._data
    modes = stack.modes
    if type(grad) is not type(buffer) or (
            modes is not None and stack.dual is not None and forward_state.level):
        return False  # a BatchedTensor's values are not in its _data; a tangent would go stale
    # 3 references: the buffer list, this frame and getrefcount's argument; the same for the
    # array: the tensor's slot, this frame and the argument (a view of it would hold one more),
    # and the buffer cache's if the array is one of its (_threads.buffer).
    refs = getrefcount(buffer)
    if refs > 3 and getrefcount(outs) == 4:
        # The running node's outputs (``outs``: execute's variable, its iterator, this frame
        # and the argument; nothing else holds them) may hold the buffer too: x * x's two
        # gradients meet at x.
        for out in outs:
            if out is buffer:
                refs -= 1
        out = None
    if (refs > 3 or getrefcount(data) > 3 + (id(data) in cached)
            or data.base is not None
            or data.shape != grad._data.shape or data.dtype != grad._data.dtype
            or not data.flags.writeable):
        return False
    if modes is not None and stack.capture is not None:  # chainrule.compile records the sum
        stack.capture.call(xp.add, (data, grad._data), {"out": data}, out=data)
    elif data.size > GRAIN:
        _ADD(data, grad._data, out=data)
    else:
        data += grad._data
    return True


def _unshared(grad) -> bool:
    """Whether only the running AccumulateGrad's buffer holds ``grad`` and its array: a node
    still waiting may hold the same gradient, and the leaf's hooks may change ``.grad``."""
    # Each counts the one holder expected (the buffer list; the tensor's slot; the view's
    # .base), a local here and getrefcount's argument; and the buffer cache's.
    data = grad._data
    base = data.base
    return getrefcount(grad) <= 3 and getrefcount(data) <= 3 + (id(data) in cached) and (
        base is None or getrefcount(base) <= 3 + (id(base) in cached))


def _owner(tensor) -> int:
    data = tensor._data
    return id(data.base if data.base is not None else data)


def queue_callback(callback) -> None:
    """Run ``callback()`` when the running backward has finished (before it returns)."""
    tasks = graph_tasks.stack
    if not tasks:
        raise RuntimeError("Final callbacks can only be installed during backward pass.")
    tasks[-1].callbacks.append(callback)


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

    deps = _dependencies(root_nodes)
    buffers: dict = {}
    for (node, nr), grad in zip(roots, root_grads):
        buf = buffers.get(node)
        if buf is None:
            buffers[node] = buf = [None] * node.n_outputs
        buf[nr] = grad if buf[nr] is None else buf[nr] + grad
    ready: list = []
    for node in root_nodes:
        if node not in deps:  # a root below another root waits for it
            heappush(ready, (_ACC, _Tie(node)) if type(node) is AccumulateGrad
                     else (-node.seq, node))
    # Gradient arrays the caller still holds must never become a leaf's .grad buffer.
    stored = {_owner(g) for g in root_grads}
    prev_enabled = state.enabled
    state.enabled = create_graph
    task = GraphTask(root_nodes, reach)
    graph_tasks.stack.append(task)  # for hooks asking about this backward
    quiet = enter()  # the rules' and the buffers' kernels: PyTorch's silent IEEE results
    try:
        while ready:
            node = heappop(ready)[1]
            if type(node) is _Tie:
                node = node.node
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
                    owned = key not in stored and _unshared(grads[0])
                    if stack.node is not None:
                        stack.node(node, node.accumulate, grads[0], create_graph, owned)
                    else:
                        node.accumulate(grads[0], create_graph, owned)
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
                if edge is None:
                    continue
                child, nr = edge
                if prune and child not in reach:
                    continue
                if grad is not None:
                    buf = buffers.get(child)
                    if buf is None:
                        buffers[child] = buf = [None] * child.n_outputs
                    if buf[nr] is None:
                        buf[nr] = grad
                    elif create_graph or not _add_into(buf[nr], grad, outs):
                        buf[nr] = buf[nr] + grad
                n = deps[child] - 1
                if n:
                    deps[child] = n
                elif grad is not None or child in buffers:
                    heappush(ready, (_ACC, _Tie(child)) if type(child) is AccumulateGrad
                             else (-child.seq, child))
                else:
                    _pass_over(child, deps, buffers, ready)
            if len(outs) < len(node.next_edges):  # edges with no gradient returned at all
                _pass_over(_Rest(node.next_edges[len(outs):]), deps, buffers, ready)
            outs = grad = None  # the gradients are the buffers' alone (see _unshared)
        callbacks = task.callbacks
        while callbacks:  # queue_callback: the end of this backward
            callbacks.pop(0)()
    finally:
        leave(quiet)
        state.enabled = prev_enabled
        graph_tasks.stack.pop()
    return captured
