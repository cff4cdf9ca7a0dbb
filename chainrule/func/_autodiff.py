"""grad, vjp, jvp and the Jacobians built from them.

Each call is a level. ``grad``/``vjp`` differentiate with respect to fresh tensors made for the
call (an alias of a tensor that already requires grad, a new leaf otherwise), so the tape never
mixes a nested level's perturbation with an outer one; the backward keeps its graph whenever an
outer level or a tensor from outside the call can still use it. ``jvp`` opens a forward-mode
dual level of its own; levels nest, each rule runs with the levels from its own on hidden.
Jacobians push a whole basis through one ``vjp``/``jvp`` under ``vmap``.

The checks and their messages follow torch/_functorch/eager_transforms.py.
"""

from __future__ import annotations

import functools
import threading
from collections.abc import Callable

from .. import _batching
from .._backend import xp
from .._batched import BatchedTensor, batched
from .._creation import zeros
from ..autograd import forward_ad as fwad
from ..autograd._backward import grad as autograd_grad
from ..autograd.grad_mode import enable_grad, is_grad_enabled
from ..autograd.grad_mode import state as grad_state
from ..autograd.graph import AccumulateGrad, next_seq
from ..tensor import Tensor
from ._pytree import tree_flatten, tree_unflatten, treespec_pprint
from ._vmap import vmap

__all__ = ["grad", "grad_and_value", "vjp", "jvp", "linearize", "jacrev", "jacfwd", "hessian"]


_JVP = "jvp(f, primals, tangents)"


# ---- arguments --------------------------------------------------------------------------------

def _slice_argnums(args: tuple, argnums) -> tuple:
    """The positions ``argnums`` names (wrapped, checked); PyTorch's errors for bad ones."""
    if not isinstance(argnums, (int, tuple)):
        raise RuntimeError(f"argnums must be int or Tuple[int, ...], got: {type(argnums)}")
    nums = (argnums,) if isinstance(argnums, int) else argnums
    n = len(args)
    wrapped = []
    for a in nums:
        if not isinstance(a, int):
            raise RuntimeError(f"argnum must be int, got: {type(a)}")
        if not -n <= a < n:
            raise RuntimeError(f"Got argnum={a}, but only {n} positional inputs")
        wrapped.append(a % n)
    if isinstance(argnums, tuple):
        if not wrapped:
            raise RuntimeError("argnums must be non-empty")
        if len(set(wrapped)) != len(wrapped):
            raise RuntimeError(f"argnums elements must be unique, got {tuple(wrapped)}")
    return tuple(wrapped)


def _split_aux(out, has_aux: bool, api: str):
    if not has_aux:
        return out, None
    if not (isinstance(out, tuple) and len(out) == 2):
        raise RuntimeError(f"{api}: output of function f should be a tuple: (output, aux) if "
                           f"has_aux is True")
    return out


def _check_aux(aux):
    """Auxiliary outputs must be tensors (in any pytree), as in PyTorch."""
    leaves, spec = tree_flatten(aux)
    for x in leaves:
        if not isinstance(x, Tensor):
            raise RuntimeError(f"Expected tensors, got unsupported type {type(x)}")
    return aux


def _check_outputs(flat: list, api: str) -> None:
    if not flat or (len(flat) == 1 and flat[0] is None):
        raise RuntimeError(f"{api}: Expected f to be a function that has non-empty output (got "
                           f"output = {flat})")
    for o in flat:
        if not isinstance(o, Tensor):
            raise RuntimeError(f"{api}: expected f(*primals) to return only tensors, got "
                               f"unsupported type {type(o)}")


def _error_if_complex(api: str, tree, is_input: bool) -> None:
    for i, x in enumerate(tree_flatten(tree)[0]):
        if isinstance(x, Tensor) and x.dtype.is_complex:
            kind = "inputs" if is_input else "outputs"
            raise RuntimeError(f"{api}: Expected all {kind} to be real but received complex "
                               f"tensor at flattened input idx: {i}")


# ---- the reverse level ------------------------------------------------------------------------

def _target(x):
    """A fresh tensor to differentiate with respect to: x's values and history, x's identity not."""
    if not isinstance(x, Tensor):
        raise ValueError(f"Thing passed to transform API must be Tensor, got {type(x)}")
    if x._data.dtype.kind not in "fcV":
        raise RuntimeError("only Tensors of floating point dtype can require gradients")
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
        for e in node.next_edges:
            if e is not None:
                stack.append(e[0])
    return False


def _layers(tensors) -> list:
    """The tensors and, for batched ones, the values under each vmap level."""
    out = []
    for t in tensors:
        while isinstance(t, Tensor):
            out.append(t)
            t = t._value if type(t) is BatchedTensor else None
    return out


def _strip(x):
    """Drop the graph this level made, at every vmap layer of a batched tensor."""
    if not isinstance(x, Tensor):
        return x
    if type(x) is BatchedTensor:
        value = _strip(x._value)
        if value is x._value and not x._requires_grad:
            return x
        t = batched(value, x._level)
    elif not x._requires_grad:
        return x
    else:
        t = x.detach()
    if fwad.state.level:
        fwad.copy_tangents(x, t)
    return t


def _strip_tree(tree, keep: bool):
    if keep:
        return tree
    leaves, spec = tree_flatten(tree)
    return tree_unflatten([_strip(x) for x in leaves], spec)


class _Call:
    """One grad/vjp level: fresh inputs, the function's outputs, and the backward."""

    def __init__(self, func, args: tuple, kwargs: dict, nums: tuple) -> None:
        self.start = next_seq()
        self._walked = self._outside = None  # keep_graph's last walk: the outputs, its answer
        args = list(args)
        self.targets: list = []
        for i in nums:
            leaves, spec = tree_flatten(args[i])
            new = [_target(x) for x in leaves]
            self.targets.extend(new)
            args[i] = tree_unflatten(new, spec)
        self.ours = {id(t) for t in self.targets if t.grad_fn is None}
        self.diff = tuple(args[i] for i in nums)
        self.depth = grad_state.reverse_levels
        grad_state.reverse_levels += 1
        try:
            with enable_grad():
                self.output = func(*args, **kwargs)
        finally:
            grad_state.reverse_levels -= 1

    def keep_graph(self, outputs, extra=()) -> bool:
        """Whether an outer level, or a tensor from before the call, can use the graph (also
        through the values of batched tensors: an outer vmap's inputs may require grad)."""
        if (self.depth > 0 or grad_state.reverse_levels > 0
                or any(t._requires_grad for t in _layers(extra))):
            return True
        # The graph behind the outputs does not change: walked once per list (vjp_fn asks
        # again on every call)
        if self._walked is not outputs:
            self._outside = _reaches_outside(_layers(outputs), self.ours, self.start)
            self._walked = outputs
        return self._outside

    def backward(self, outputs: list, cotangents, keep: bool, retain: bool = True) -> list:
        """Gradients for every target (zeros where an output does not reach it)."""
        pairs = [(o, c) for o, c in zip(outputs, cotangents or [None] * len(outputs))
                 if o._requires_grad]
        if not pairs:
            return [_zeros_like(t) for t in self.targets]
        outs = [p[0] for p in pairs]
        cts = None if cotangents is None else [p[1] for p in pairs]
        with enable_grad():
            grads = autograd_grad(outs, self.targets, cts, retain_graph=retain or keep,
                                  create_graph=keep, allow_unused=True)
        grads = [g if g is not None else _zeros_like(t) for g, t in zip(grads, self.targets)]
        return grads if keep else [_strip(g) for g in grads]


def _zeros_like(t):
    return zeros(*t.shape, dtype=t.dtype)


def _regroup(flat: list, diff: tuple, argnums):
    """Flat per-leaf values back into the structure of the differentiated arguments."""
    out = []
    it = iter(flat)
    for arg in diff:
        leaves, spec = tree_flatten(arg)
        out.append(tree_unflatten([next(it) for _ in leaves], spec))
    return out[0] if isinstance(argnums, int) else tuple(out)


# ---- grad -------------------------------------------------------------------------------------

def grad_and_value(func: Callable, argnums=0, has_aux: bool = False) -> Callable:
    """Like ``grad``, returning ``(gradients, value)`` (``(gradients, (value, aux))``)."""

    @functools.wraps(func)
    def wrapper(*args, **kwargs):
        api = "grad_and_value(f)(*args)"
        call = _Call(func, args, kwargs, _slice_argnums(args, argnums))
        output, aux = _split_aux(call.output, has_aux, api)
        if not isinstance(output, Tensor):
            raise RuntimeError(f"{api}: Expected f(*args) to return a Tensor, got {type(output)}")
        if output.dim() != 0:
            raise RuntimeError(f"{api}: Expected f(*args) to return a scalar Tensor, got tensor "
                               f"with {output.dim()} dims. Maybe you wanted to use the vjp or "
                               f"jacrev APIs instead?")
        keep = call.keep_graph([output])
        grads = call.backward([output], None, keep)
        output = _strip_tree(output, keep)
        result = _regroup(grads, call.diff, argnums)
        if has_aux:
            return result, (output, _strip_tree(_check_aux(aux), keep))
        return result, output

    return wrapper


def grad(func: Callable, argnums=0, has_aux: bool = False) -> Callable:
    """The gradient of a scalar ``func`` with respect to the inputs at ``argnums``."""
    both = grad_and_value(func, argnums, has_aux)

    @functools.wraps(func)
    def wrapper(*args, **kwargs):
        g, value = both(*args, **kwargs)
        return (g, value[1]) if has_aux else g

    return wrapper


# ---- vjp --------------------------------------------------------------------------------------

def vjp(func: Callable, *primals, has_aux: bool = False):
    """``(func(*primals), vjp_fn)``; ``vjp_fn(cotangents)`` gives the vector-Jacobian products
    for every primal (``(output, vjp_fn, aux)`` with ``has_aux``)."""
    return _vjp(func, primals, None, has_aux)


def _vjp(func, primals: tuple, argnums, has_aux: bool):
    """vjp with respect to the primals at ``argnums`` (all when None)."""
    nums = tuple(range(len(primals))) if argnums is None else _slice_argnums(primals, argnums)
    call = _Call(func, primals, {}, nums)
    api = "vjp(f, *primals)"
    output, aux = _split_aux(call.output, has_aux, api)
    if has_aux:
        _check_aux(aux)
    flat_out, out_spec = tree_flatten(output)
    _check_outputs(flat_out, api)
    for o in flat_out:
        if o._data.dtype.kind not in "fcV":
            raise RuntimeError(f"vjp(f, ...): All outputs of f must be floating-point or complex "
                               f"Tensors, got Tensor with dtype {o.dtype}")
    keep_out = call.keep_graph(flat_out)

    def vjp_fn(cotangents, retain_graph: bool = True, create_graph: bool | None = None):
        if create_graph is None:
            create_graph = is_grad_enabled()
        flat_ct, ct_spec = tree_flatten(cotangents)
        if ct_spec != out_spec:
            raise RuntimeError(f"Expected pytree structure of cotangents to be the same as pytree "
                               f"structure of outputs to the function. cotangents: "
                               f"{treespec_pprint(ct_spec)}, primal output: "
                               f"{treespec_pprint(out_spec)}")
        keep = create_graph and (keep_out or call.keep_graph(flat_out, flat_ct))
        grads = call.backward(flat_out, flat_ct, keep, retain_graph)
        if argnums is None:
            return tuple(_regroup(grads, call.diff, nums))
        return _regroup(grads, call.diff, argnums)

    output = _strip_tree(output, keep_out)
    if has_aux:
        return output, vjp_fn, _strip_tree(aux, keep_out)
    return output, vjp_fn


# ---- jvp --------------------------------------------------------------------------------------

def jvp(func: Callable, primals, tangents, *, strict: bool = False, has_aux: bool = False):
    """``(func(*primals), J @ tangents)`` by forward-mode AD at a dual level of its own."""
    if not isinstance(primals, tuple):
        raise RuntimeError(f"{_JVP}: Expected primals to be a tuple. E.g. it should be valid to "
                           f"call f(*primals).")
    flat_p, p_spec = tree_flatten(primals)
    flat_t, t_spec = tree_flatten(tangents)
    if p_spec != t_spec:
        raise RuntimeError(f"{_JVP}: Expected primals and tangents to have the same python "
                           f"structure. For example, if primals is a tuple of 3 tensors, tangents "
                           f"also must be. Got primals with structure {p_spec} and tangents with "
                           f"structure {t_spec}")
    for name, flat in (("primals", flat_p), ("tangents", flat_t)):
        if not flat:
            raise RuntimeError(f"{_JVP}: Expected {name} to contain at least one Tensor.")
        for x in flat:
            if not isinstance(x, Tensor):
                raise RuntimeError(f"{_JVP}: Expected {name} to only contain Tensors, got "
                                   f"{type(x)}")
    fwad.state.nesting += 1
    fwad._enter()
    try:
        duals = [fwad.make_dual(p, t) for p, t in zip(flat_p, flat_t)]
        out, aux = _split_aux(func(*tree_unflatten(duals, p_spec)), has_aux, _JVP)
        if has_aux:
            aux_leaves, aux_spec = tree_flatten(_check_aux(aux))
            aux = tree_unflatten([fwad.unpack_dual(a).primal for a in aux_leaves], aux_spec)
        flat_o, o_spec = tree_flatten(out)
        _check_outputs(flat_o, _JVP)
        primal_out, tangent_out = [], []
        for o in flat_o:
            p, t = fwad.unpack_dual(o)
            if t is None:
                if strict:
                    raise RuntimeError("jvp(f, primals, tangents, strict=True): The output of f "
                                       "is independent of the inputs. This is not allowed with "
                                       "strict=True.")
                t = _zeros_like(o)
            primal_out.append(p)
            tangent_out.append(t)
    finally:
        fwad.exit_dual_level()
        fwad.state.nesting -= 1
    result = (tree_unflatten(primal_out, o_spec), tree_unflatten(tangent_out, o_spec))
    return result + (aux,) if has_aux else result


def linearize(func: Callable, *primals):
    """``(func(*primals), jvp_fn)`` where ``jvp_fn(*tangents)`` is the JVP at ``primals``."""
    output = func(*primals)
    flat_p, p_spec = tree_flatten(primals)

    def jvp_fn(*tangents):
        flat_t, t_spec = tree_flatten(tangents)
        if t_spec != p_spec:
            raise RuntimeError(f"Expected the tangents {t_spec} to have the same argspec as the "
                               f"primals {p_spec}")
        for i, (t, p) in enumerate(zip(flat_t, flat_p)):
            for what, got, want in (("shape", t.shape, p.shape), ("device", t.device, p.device),
                                    ("dtype", t.dtype, p.dtype)):
                if got != want:
                    raise RuntimeError(f"tangent:{i} with {what} {got} in flattened pytree "
                                       f"doesn't match the {what} {want} of the corresponding "
                                       f"primal.")
        return jvp(func, primals, tangents)[1]

    return output, jvp_fn


# ---- Jacobians --------------------------------------------------------------------------------

class _Bases(threading.local):
    """Identity blocks kept between Jacobian calls, per thread: a fresh one costs a page fault
    per 4 KB (the strided ones touch every page), more than the rest of a small Jacobian's
    extra work. Reused only while unchanged (version 0); never handed to the caller
    (``_unshare``)."""

    def __init__(self) -> None:
        self.blocks: dict = {}
        self.nbytes = 0


_bases = _Bases()
_BASIS_KEPT = 16 << 20  # bytes of identity blocks kept per thread, at most


def _identity_block(rows: int, n: int, shift: int, first: int, last: int, dtype) -> Tensor:
    """A (rows, n) block of zeros with ones at (i, i + shift) for rows first <= i < last."""
    key = (rows, n, shift, first, last, dtype)
    cache = _bases.blocks
    block = cache.get(key)
    if block is not None and (block._vc is None or block._vc[0] == 0):
        return block
    block = zeros(rows, n, dtype=dtype)
    if first < last:  # row i has its 1 at column i + shift: a strided run
        block._data.reshape(-1)[first * (n + 1) + shift:(last - 1) * (n + 1) + shift + 1:
                                n + 1] = 1
    nbytes = block._data.nbytes
    if nbytes <= _BASIS_KEPT:
        if _bases.nbytes + nbytes > _BASIS_KEPT:
            cache.clear()
            _bases.nbytes = 0
        cache[key] = block
        _bases.nbytes += nbytes
    return block


def _basis(leaves: list, start: int = 0, stop: int | None = None) -> list:
    """Rows ``start:stop`` of the identity over all ``leaves``' elements, split per leaf:
    leaf k gets a tensor of shape ``(rows,) + leaf.shape``."""
    sizes = [x.numel() for x in leaves]
    stop = sum(sizes) if stop is None else stop
    out = []
    offset = 0
    for x, n in zip(leaves, sizes):
        first, last = max(start, offset) - start, min(stop, offset + n) - start  # rows with a 1
        block = _identity_block(stop - start, n, start - offset, first, last, x.dtype)
        shape = (stop - start,) + tuple(x.shape)
        out.append(block if shape == (stop - start, n) else block.reshape(shape))
        offset += n
    return out


def _unshare(tree, basis: list):
    """``tree`` with every tensor that shares memory with a kept identity block copied (the
    Jacobian of a function that passes its input through is the basis itself)."""
    leaves, spec = tree_flatten(tree)
    arrays = [b._data for b in basis]
    out = []
    changed = False
    for x in leaves:
        if isinstance(x, Tensor):
            data = _batching.physical(x)
            if any(xp.may_share_memory(data, a) for a in arrays):
                x = x.clone()
                changed = True
        out.append(x)
    return tree_unflatten(out, spec) if changed else tree


def jacrev(func: Callable, argnums=0, *, has_aux: bool = False,
           chunk_size: int | None = None) -> Callable:
    """The Jacobian of ``func`` by reverse mode: rows by a vmapped vjp (a loop if
    ``chunk_size=1``)."""
    if not (chunk_size is None or chunk_size > 0):
        raise ValueError("jacrev: `chunk_size` should be greater than 0.")

    @functools.wraps(func)
    def wrapper(*args):
        _error_if_complex("jacrev", args, is_input=True)
        res = _vjp(func, args, argnums, has_aux)
        output, vjp_fn = res[0], res[1]
        flat_out, out_spec = tree_flatten(output)
        _error_if_complex("jacrev", flat_out, is_input=False)
        total = sum(o.numel() for o in flat_out)
        diff = tuple(args[i] for i in _slice_argnums(args, argnums))
        in_leaves = tree_flatten(diff)[0]
        step = total if chunk_size is None else chunk_size
        pieces = []  # per chunk of rows: one tensor per input leaf, (rows,) + leaf.shape
        for start in range(0, total, step):
            stop = min(start + step, total)
            basis = _basis(flat_out, start, stop)
            used = basis
            if chunk_size == 1:  # a plain loop: no vmap limitations
                row = vjp_fn(tree_unflatten([b[0] for b in basis], out_spec))
                pieces.append([r.unsqueeze(0) for r in tree_flatten(row)[0]])
            else:
                pieces.append(tree_flatten(vmap(vjp_fn)(tree_unflatten(basis, out_spec)))[0])
        rows = _join(pieces)
        jac_leaves = []
        start = 0
        for o in flat_out:
            n = o.numel()
            blocks = [_block(r, start, n, tuple(o.shape) + tuple(x.shape))
                      for r, x in zip(rows, in_leaves)]
            jac_leaves.append(_regroup(blocks, diff, argnums))
            start += n
        jac = tree_unflatten(jac_leaves, out_spec)
        if len(pieces) == 1:  # (joined chunks are copies)
            jac = _unshare(jac, used)
        return (jac, res[2]) if has_aux else jac

    return wrapper


def _block(rows, start: int, n: int, shape: tuple):
    """Rows ``start:start+n`` of ``rows`` as ``shape`` (``rows`` itself when that is all of it)."""
    if start or n != rows.shape[0]:
        rows = rows.narrow(0, start, n)
    return rows if tuple(rows.shape) == shape else rows.reshape(shape)


def _join(pieces: list) -> list:
    """Per input leaf, the rows of every chunk in one tensor."""
    if len(pieces) == 1:
        return pieces[0]
    return [_batching.ops["cat_fn"](list(column), dim=0) for column in zip(*pieces)]


def jacfwd(func: Callable, argnums=0, has_aux: bool = False, *,
           randomness: str = "error") -> Callable:
    """The Jacobian of ``func`` by forward mode: all columns at once, one vmapped jvp."""

    @functools.wraps(func)
    def wrapper(*args):
        _error_if_complex("jacfwd", args, is_input=True)
        nums = _slice_argnums(args, argnums)
        diff = tuple(args[i] for i in nums)
        flat_in, in_spec = tree_flatten(diff)

        def partial(*flat):
            full = list(args)
            for i, d in zip(nums, tree_unflatten(list(flat), in_spec)):
                full[i] = d
            return func(*full)

        def push(*tangents):
            res = jvp(partial, tuple(flat_in), tuple(tangents), has_aux=has_aux)
            _error_if_complex("jacfwd", res[0], is_input=False)
            return (res[1], res[2]) if has_aux else res[1]

        basis = _basis(flat_in)
        out = vmap(push, randomness=randomness)(*basis)
        tangents, aux = out if has_aux else (out, None)
        if has_aux:  # the same for every column: take the first
            leaves, spec = tree_flatten(aux)
            aux = tree_unflatten([a[0] for a in leaves], spec)
        flat_t, out_spec = tree_flatten(tangents)
        jac_leaves = []
        for t in flat_t:
            out_shape = tuple(t.shape[1:])
            blocks = []
            start = 0
            for x in flat_in:
                n = x.numel()
                piece = t.narrow(0, start, n).movedim(0, -1)
                blocks.append(piece.reshape(out_shape + tuple(x.shape)))
                start += n
            jac_leaves.append(_regroup(blocks, diff, argnums))
        jac = _unshare(tree_unflatten(jac_leaves, out_spec), basis)
        return (jac, aux) if has_aux else jac

    return wrapper


def hessian(func: Callable, argnums=0) -> Callable:
    """The Hessian of a scalar ``func``: ``jacfwd(jacrev(func))``."""
    return jacfwd(jacrev(func, argnums), argnums)
