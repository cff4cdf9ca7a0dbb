"""grad, vjp, jvp and the Jacobians built from them.

Each call is a level. ``grad``/``vjp`` differentiate with respect to fresh tensors made for the
call (an alias of a tensor that already requires grad, a new leaf otherwise), so the tape never
mixes a nested level's perturbation with an outer one; the backward keeps its graph whenever an
outer level or a tensor from outside the call can still use it. ``jvp`` opens a forward-mode
dual level of its own; levels nest, each rule runs with the levels from its own on hidden.
Jacobians push a whole basis through one ``vjp``/``jvp`` under ``vmap``.
"""

from __future__ import annotations

import functools
from collections.abc import Callable

from .._batched import BatchedTensor, batched
from .._creation import zeros
from ..autograd import forward_ad as fwad
from ..autograd._backward import grad as autograd_grad
from ..autograd.grad_mode import enable_grad
from ..autograd.graph import AccumulateGrad, next_seq
from ..tensor import Tensor
from ._pytree import tree_flatten, tree_unflatten
from ._vmap import vmap

__all__ = ["grad", "grad_and_value", "vjp", "jvp", "linearize", "jacrev", "jacfwd", "hessian"]


class _Levels:
    reverse = 0  # grad/vjp calls in progress: their backward must keep its graph


levels = _Levels()


# ---- shared pieces ----------------------------------------------------------------------------

def _target(x):
    """A fresh tensor to differentiate with respect to: x's values and history, x's identity not."""
    if not isinstance(x, Tensor):
        raise RuntimeError(f"Expected the argument to differentiate to be a Tensor, got {type(x)}")
    if x._requires_grad:
        return x.view_as(x)
    if type(x) is BatchedTensor:
        t = batched(x._value, x._level)
    else:
        t = x.detach()
    if fwad.state.level:
        fwad.copy_tangents(x, t)  # an outer jvp still sees through this level
    return t.requires_grad_()


def _reaches_outside(tensors, ours: set, start: int) -> bool:
    """Whether the graph behind ``tensors`` reaches a node or leaf from before this call."""
    seen = set()
    stack = [t.grad_fn for t in tensors if isinstance(t, Tensor) and t.grad_fn is not None]
    for t in tensors:
        if isinstance(t, Tensor) and t.grad_fn is None and t._requires_grad and id(t) not in ours:
            return True
    while stack:
        node = stack.pop()
        if node is None or id(node) in seen:
            continue
        seen.add(id(node))
        if type(node) is AccumulateGrad:
            if id(node.variable) not in ours:
                return True
            continue
        if node.seq < start:
            return True
        stack.extend(e[0] for e in node.next_edges if e is not None)
    return False


def _strip(x):
    """Drop the graph this level made (for a batched tensor, only the wrapper's)."""
    if not isinstance(x, Tensor) or not x._requires_grad:
        return x
    t = batched(x._value, x._level) if type(x) is BatchedTensor else x.detach()
    if fwad.state.level:
        fwad.copy_tangents(x, t)
    return t


def _argnums(args: tuple, argnums, where: str) -> tuple:
    if isinstance(argnums, int):
        nums = (argnums,)
    elif isinstance(argnums, tuple) and argnums and all(isinstance(a, int) for a in argnums):
        nums = argnums
    else:
        raise RuntimeError(f"{where}: Expected argnums to be int or Tuple[int, ...], got: "
                           f"{argnums}")
    n = len(args)
    for a in nums:
        if not -n <= a < n:
            raise RuntimeError(f"Got argnums={a}, but only {n} positional inputs")
    if len({a % n for a in nums}) != len(nums):
        raise RuntimeError(f"{where}: argnums must be unique, got {argnums}")
    return tuple(a % n for a in nums)


def _split_aux(out, has_aux: bool, where: str):
    if not has_aux:
        return out, None
    if not (isinstance(out, tuple) and len(out) == 2):
        raise RuntimeError(f"{where}: output of function f should be a tuple: (output, aux) if "
                           f"has_aux is True")
    return out


class _Call:
    """One grad/vjp level: fresh inputs, the function's outputs, and the backward."""

    def __init__(self, func, args: tuple, kwargs: dict, nums: tuple) -> None:
        self.start = next_seq()
        args = list(args)
        self.targets = []
        for i in nums:
            args[i] = _tree_map_targets(args[i], self.targets)
        self.ours = {id(t) for t in self.targets if t.grad_fn is None}
        self.diff = tuple(args[i] for i in nums)
        self.depth = levels.reverse
        levels.reverse += 1
        try:
            with enable_grad():
                self.output = func(*args, **kwargs)
        finally:
            levels.reverse -= 1

    def keep_graph(self, outputs, extra=()) -> bool:
        return (self.depth > 0 or levels.reverse > 0
                or any(isinstance(t, Tensor) and t._requires_grad for t in extra)
                or _reaches_outside(outputs, self.ours, self.start))

    def backward(self, outputs: list, cotangents, keep: bool) -> list:
        with enable_grad():
            grads = autograd_grad(outputs, self.targets, cotangents, retain_graph=True,
                                  create_graph=keep, allow_unused=True)
        return [g if g is not None else _zeros_like(t) for g, t in zip(grads, self.targets)]


def _tree_map_targets(tree, targets: list):
    leaves, spec = tree_flatten(tree)
    new = [_target(x) for x in leaves]
    targets.extend(new)
    return tree_unflatten(new, spec)


def _zeros_like(t):
    z = zeros(*t.shape, dtype=t.dtype)
    return z


# ---- grad -------------------------------------------------------------------------------------

def grad_and_value(func: Callable, argnums=0, has_aux: bool = False) -> Callable:
    """Like ``grad``, returning ``(gradients, value)`` (``(gradients, (value, aux))``)."""

    @functools.wraps(func)
    def wrapper(*args, **kwargs):
        where = "grad_and_value(f)(*args)"
        nums = _argnums(args, argnums, where)
        call = _Call(func, args, kwargs, nums)
        output, aux = _split_aux(call.output, has_aux, where)
        if not isinstance(output, Tensor):
            raise RuntimeError(f"{where}: Expected f(*args) to return a Tensor, got "
                               f"{type(output)}")
        if output.dim() != 0:
            raise RuntimeError(f"{where}: Expected f(*args) to return a scalar Tensor, got tensor "
                               f"with {output.dim()} dims. Maybe you wanted to use the vjp or "
                               f"jacrev APIs instead?")
        keep = call.keep_graph([output])
        if not output._requires_grad:
            grads = [_zeros_like(t) for t in call.targets]
        else:
            grads = call.backward([output], None, keep)
        if not keep:
            output = _strip(output)
            grads = [_strip(g) for g in grads]
            aux = _strip_tree(aux)
        result = _regroup(grads, call.diff, argnums)
        value = (output, aux) if has_aux else output
        return result, value

    return wrapper


def grad(func: Callable, argnums=0, has_aux: bool = False) -> Callable:
    """The gradient of a scalar ``func`` with respect to the inputs at ``argnums``."""
    both = grad_and_value(func, argnums, has_aux)

    @functools.wraps(func)
    def wrapper(*args, **kwargs):
        g, value = both(*args, **kwargs)
        return (g, value[1]) if has_aux else g

    return wrapper


def _strip_tree(tree):
    if tree is None:
        return None
    leaves, spec = tree_flatten(tree)
    return tree_unflatten([_strip(x) for x in leaves], spec)


def _regroup(flat: list, diff: tuple, argnums):
    """Flat gradients back into the structure of the differentiated arguments."""
    out = []
    it = iter(flat)
    for arg in diff:
        leaves, spec = tree_flatten(arg)
        out.append(tree_unflatten([next(it) for _ in leaves], spec))
    return out[0] if isinstance(argnums, int) else tuple(out)


# ---- vjp --------------------------------------------------------------------------------------

def vjp(func: Callable, *primals, has_aux: bool = False):
    """``(func(*primals), vjp_fn)``; ``vjp_fn(cotangents)`` gives the vector-Jacobian products
    for every primal (``(output, vjp_fn, aux)`` with ``has_aux``)."""
    call = _Call(func, primals, {}, tuple(range(len(primals))))
    output, aux = _split_aux(call.output, has_aux, "vjp(f, *primals)")
    flat_out, out_spec = tree_flatten(output)
    for o in flat_out:
        if not isinstance(o, Tensor):
            raise RuntimeError(f"vjp(f, *primals): Expected f to be a function that has "
                               f"non-empty output with only Tensor outputs, got {type(o)}")
    keep_out = call.keep_graph(flat_out)

    def vjp_fn(*cotangents, retain_graph: bool = True, create_graph: bool | None = None):
        tree = cotangents[0] if len(cotangents) == 1 else cotangents
        flat_ct, ct_spec = tree_flatten(tree)
        if ct_spec != out_spec and not (len(flat_ct) == len(flat_out) == 1):
            raise RuntimeError(f"Expected pytree structure of cotangents to be the same as pytree "
                               f"structure of outputs to the function. cotangents: {ct_spec}, "
                               f"primal output: {out_spec}")
        for c, o in zip(flat_ct, flat_out):
            if tuple(c.shape) != tuple(o.shape):
                raise RuntimeError(f"Mismatch in shape: grad_output[0] has a shape of "
                                   f"{tuple(c.shape)} and output[0] has a shape of "
                                   f"{tuple(o.shape)}.")
        keep = keep_out or call.keep_graph(flat_out, flat_ct)
        pairs = [(o, c) for o, c in zip(flat_out, flat_ct) if o._requires_grad]
        if pairs:
            grads = call.backward([p[0] for p in pairs], [p[1] for p in pairs], keep)
        else:
            grads = [_zeros_like(t) for t in call.targets]
        if not keep:
            grads = [_strip(g) for g in grads]
        return tuple(_regroup(grads, call.diff, tuple(range(len(primals)))))

    if not keep_out:
        output = tree_unflatten([_strip(o) for o in flat_out], out_spec)
        aux = _strip_tree(aux)
    return (output, vjp_fn, aux) if has_aux else (output, vjp_fn)


# ---- jvp --------------------------------------------------------------------------------------

def jvp(func: Callable, primals, tangents, *, strict: bool = False, has_aux: bool = False):
    """``(func(*primals), J @ tangents)`` by forward-mode AD at a dual level of its own."""
    for name, value in (("primals", primals), ("tangents", tangents)):
        if not isinstance(value, (tuple, list)):
            raise RuntimeError(f"jvp(f, primals, tangents): Expected {name} to be a tuple. E.g. "
                               f"it should be valid to call f(*{name}).")
    flat_p, p_spec = tree_flatten(tuple(primals))
    flat_t, t_spec = tree_flatten(tuple(tangents))
    if p_spec != t_spec:
        raise RuntimeError(f"jvp(f, primals, tangents): Expected primals and tangents to have the "
                           f"same python structure. For example, if primals is a tuple of 3 "
                           f"tensors, tangents also must be. Got primals with structure {p_spec} "
                           f"and tangents with structure {t_spec}")
    for p, t in zip(flat_p, flat_t):
        if not isinstance(p, Tensor) or not isinstance(t, Tensor):
            raise RuntimeError("jvp(f, primals, tangents): Expected primals and tangents to only "
                               "contain Tensors")
        if tuple(p.shape) != tuple(t.shape):
            raise RuntimeError(f"jvp(f, primals, tangents): Expected primals and tangents to have "
                               f"the same shape, got {tuple(p.shape)} and {tuple(t.shape)}")
    fwad.state.nesting += 1
    fwad._enter()
    try:
        duals = [fwad.make_dual(p, t) for p, t in zip(flat_p, flat_t)]
        out = func(*tree_unflatten(duals, p_spec))
        out, aux = _split_aux(out, has_aux, "jvp(f, primals, tangents)")
        flat_o, o_spec = tree_flatten(out)
        primal_out, tangent_out = [], []
        for o in flat_o:
            if not isinstance(o, Tensor):
                raise RuntimeError(f"jvp(f, primals, tangents): Expected f(*primals) to return "
                                   f"only tensors, got unsupported type {type(o)}")
            p, t = fwad.unpack_dual(o)
            primal_out.append(p)
            tangent_out.append(t if t is not None else _zeros_like(o))
        if has_aux:
            aux_leaves, aux_spec = tree_flatten(aux)
            aux = tree_unflatten([fwad.unpack_dual(a).primal if isinstance(a, Tensor) else a
                                  for a in aux_leaves], aux_spec)
    finally:
        fwad.exit_dual_level()
        fwad.state.nesting -= 1
    result = (tree_unflatten(primal_out, o_spec), tree_unflatten(tangent_out, o_spec))
    return result + (aux,) if has_aux else result


def linearize(func: Callable, *primals):
    """``(func(*primals), jvp_fn)`` where ``jvp_fn(*tangents)`` is the JVP at ``primals``."""
    output = func(*primals)

    def jvp_fn(*tangents):
        return jvp(func, primals, tangents)[1]

    out_leaves, spec = tree_flatten(output)
    return tree_unflatten([_strip(o) for o in out_leaves], spec), jvp_fn


# ---- Jacobians --------------------------------------------------------------------------------

def _basis(leaves: list) -> list:
    """Rows of the identity over all ``leaves``' elements, split per leaf:
    leaf k gets a tensor of shape ``(total,) + leaf.shape``."""
    sizes = [x.numel() for x in leaves]
    total = sum(sizes)
    out = []
    start = 0
    for x, n in zip(leaves, sizes):
        block = zeros(total, n, dtype=x.dtype)
        block._data[start:start + n] = _eye(n, block._data.dtype)
        out.append(block.reshape((total,) + tuple(x.shape)))
        start += n
    return out


def _eye(n: int, dtype):
    from .._backend import xp

    return xp.eye(n, dtype=dtype)


def jacrev(func: Callable, argnums=0, *, has_aux: bool = False,
           chunk_size: int | None = None) -> Callable:
    """The Jacobian of ``func`` by reverse mode: all rows at once, one vmapped vjp."""

    @functools.wraps(func)
    def wrapper(*args):
        nums = _argnums(args, argnums, "jacrev")

        def partial(*diff):
            full = list(args)
            for i, d in zip(nums, diff):
                full[i] = d
            return func(*full)

        diff = tuple(args[i] for i in nums)
        res = vjp(partial, *diff, has_aux=has_aux)
        output, vjp_fn = res[0], res[1]
        flat_out, out_spec = tree_flatten(output)
        basis = _basis(flat_out)
        cotangents = tree_unflatten(basis, out_spec)
        rows = vmap(vjp_fn, chunk_size=chunk_size)(cotangents)  # per diff arg, (total,)+arg
        flat_rows = [tree_flatten(r)[0] for r in rows]
        in_leaves = [leaf for a in diff for leaf in tree_flatten(a)[0]]
        rows_flat = [leaf for r in flat_rows for leaf in r]
        jac_leaves = []
        start = 0
        for o in flat_out:
            n = o.numel()
            per_input = [r.narrow(0, start, n) if len(flat_out) > 1 else r for r in rows_flat]
            blocks = [p.reshape(tuple(o.shape) + tuple(x.shape))
                      for p, x in zip(per_input, in_leaves)]
            jac_leaves.append(_regroup(blocks, diff, argnums))
            start += n
        jac = tree_unflatten(jac_leaves, out_spec)
        return (jac, res[2]) if has_aux else jac

    return wrapper


def jacfwd(func: Callable, argnums=0, has_aux: bool = False, *,
           randomness: str = "error") -> Callable:
    """The Jacobian of ``func`` by forward mode: all columns at once, one vmapped jvp."""

    @functools.wraps(func)
    def wrapper(*args):
        nums = _argnums(args, argnums, "jacfwd")
        diff = tuple(args[i] for i in nums)
        flat_in, in_spec = tree_flatten(diff)

        def partial(*flat):
            full = list(args)
            for i, d in zip(nums, tree_unflatten(list(flat), in_spec)):
                full[i] = d
            return func(*full)

        def push(*tangents):
            res = jvp(partial, tuple(flat_in), tuple(tangents), has_aux=has_aux)
            return (res[1], res[2]) if has_aux else res[1]

        basis = _basis(flat_in)
        out = vmap(push, out_dims=(0, None) if has_aux else 0,
                   randomness=randomness)(*basis)
        tangents, aux = out if has_aux else (out, None)
        flat_t, out_spec = tree_flatten(tangents)
        jac_leaves = []
        for t in flat_t:
            out_shape = tuple(t.shape[1:])
            blocks = []
            start = 0
            for x in flat_in:
                n = x.numel()
                piece = t.narrow(0, start, n) if len(flat_in) > 1 else t
                piece = piece.reshape((n, -1)).t().reshape(out_shape + tuple(x.shape))
                blocks.append(piece)
                start += n
            jac_leaves.append(_regroup(blocks, diff, argnums))
        jac = tree_unflatten(jac_leaves, out_spec)
        return (jac, aux) if has_aux else jac

    return wrapper


def hessian(func: Callable, argnums=0) -> Callable:
    """The Hessian of a scalar ``func``: ``jacfwd(jacrev(func))``."""
    return jacfwd(jacrev(func, argnums), argnums)

