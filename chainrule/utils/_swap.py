"""``torch.utils.swap_tensors``: two tensor objects exchange everything they hold.

A chainrule tensor keeps its values and autograd state in slots, so swapping the class, the
``__dict__`` and every slot swaps the tensors completely (values, shape, dtype, version
counter, grad, grad_fn, hooks). What else refers to a tensor object is chainrule's own
bookkeeping, fixed up here or refused as PyTorch refuses it: PyTorch counts the references to
a tensor's storage-and-metadata object (its "use count"), and chainrule counts what plays that
part: the leaf's AccumulateGrad, the live views of the tensor, and the graph nodes that saved
it for backward. A tensor retaining its grad is refused too (PyTorch's retain_grad hook holds it
weakly); unlike PyTorch, a refused swap leaves both tensors as they were.
"""

from __future__ import annotations

import copyreg
import gc
import weakref

from ..autograd.graph import SavedInput, get_gradient_edge

__all__ = ["swap_tensors"]

_POISONED = (
    "Trying to execute AccumulateGrad node that was poisoned by swap_tensors this can happen "
    "when you try to run backward on a tensor that was swapped. For a module m with "
    "`torch.__future__.set_swap_module_params_on_conversion(True)` you should not change the "
    "device or dtype of the module (e.g. `m.cpu()` or `m.half()`) between running forward and "
    "backward. To resolve this, please only change the device/dtype before running forward (or "
    "after both forward and backward).")


def _view_ref(t):
    """The weak reference by which the root of a view lists it (None if ``t`` is no view)."""
    view = t._extra.get("view") if t._extra else None
    if view is None or not view[0]._extra:
        return None
    return view[0]._extra.get("views", {}).get(id(t))


def _retain_ref(t):
    """The weak reference by which ``t``'s node retains its gradient, if it does."""
    retain = getattr(t.grad_fn, "_retain", None) if t.grad_fn is not None else None
    return retain.get(t._output_nr) if retain else None


def _accumulator(t):
    """The leaf's live AccumulateGrad node, if any."""
    acc = t._extra.get("acc") if t._extra else None
    if acc is not None and isinstance(acc, weakref.ref):
        acc = acc()
    return acc


def _use_count(t) -> int:
    """PyTorch's count of references to the tensor's contents: the tensor, its
    AccumulateGrad, each live view of it and each graph node that saved it."""
    count = 1 + (_accumulator(t) is not None)
    views = t._extra.get("views") if t._extra else None
    if views:
        count += sum(ref() is not None for ref in views.values())
    if t._vc is not None and len(t._vc) > 1:  # saved for backward once: look for the savers
        count += sum(type(r) is SavedInput for r in gc.get_referrers(t))
    return count


def _poison(grad_outputs):
    raise RuntimeError(_POISONED)


def _check_use_count(t, name: str) -> None:
    count = _use_count(t)
    if count <= 1:
        return
    if count == 2 and t.is_leaf:
        node = get_gradient_edge(t).node  # makes the AccumulateGrad if there was none
        if _use_count(t) == 2:
            node.register_prehook(_poison)
            return
    raise RuntimeError(f"Expected use_count of {name} to be 1 or 2 with an AccumulateGrad node "
                       f"but got {count} make sure you are not holding references to the "
                       "tensor in other places.")


def swap_tensors(t1, t2) -> None:
    """This function swaps the content of the two Tensor objects: t1 gets t2's and t2 gets
    t1's, each keeping its identity."""
    internal = {id(r) for t in (t1, t2) for r in (_view_ref(t), _retain_ref(t)) if r is not None}
    for t, name in ((t1, "t1"), (t2, "t2")):
        if any(id(r) not in internal for r in weakref.getweakrefs(t)):
            raise RuntimeError(f"Cannot swap {name} because it has weakref associated with it")
    slots = set(copyreg._slotnames(t1.__class__))
    if slots != set(copyreg._slotnames(t2.__class__)):
        raise RuntimeError("Cannot swap t1 and t2 if they have different slots")
    _check_use_count(t1, "t1")
    _check_use_count(t2, "t2")
    for t, name in ((t1, "t1"), (t2, "t2")):
        if _retain_ref(t) is not None:  # PyTorch's retain_grad hook holds the contents weakly
            raise RuntimeError(f"Expected no weakrefs to {name}'s Tensor object but got  1")
    # The bookkeeping that names the objects follows the contents to their new object.
    view_entries = [(t._extra["view"][0]._extra["views"], id(t), other)
                    for t, other in ((t1, t2), (t2, t1)) if _view_ref(t) is not None]
    accumulators = [(acc, other) for t, other in ((t1, t2), (t2, t1))
                    if (acc := _accumulator(t)) is not None]

    t1.__class__, t2.__class__ = t2.__class__, t1.__class__
    t1.__dict__, t2.__dict__ = t2.__dict__, t1.__dict__
    for slot in slots:
        has1, has2 = hasattr(t1, slot), hasattr(t2, slot)
        v1, v2 = getattr(t1, slot, None), getattr(t2, slot, None)
        for t, has, value in ((t1, has2, v2), (t2, has1, v1)):
            if has:
                setattr(t, slot, value)
            elif hasattr(t, slot):
                delattr(t, slot)

    for views, old_id, _ in view_entries:
        views.pop(old_id, None)
    for views, _, now in view_entries:
        views[id(now)] = weakref.ref(now)
    for acc, now in accumulators:
        acc._variable = now
