"""functional_call and stack_module_state: modules as functions of their parameters;
replace_all_batch_norm_modules_ for modules vmap runs over."""

from __future__ import annotations

import contextlib

from .. import _batching

__all__ = ["functional_call", "stack_module_state", "replace_all_batch_norm_modules_"]


def _owner(module, name: str):
    """The submodule holding ``name`` ("a.b.weight") and the attribute's last part."""
    *path, attr = name.split(".")
    for part in path:
        if not hasattr(module, part):
            raise AttributeError(f"{type(module).__name__} has no attribute `{part}`")
        module = getattr(module, part)
    return module, attr


@contextlib.contextmanager
def _swapped(module, values: dict, tie_weights: bool, strict: bool):
    """Swap the named tensors into ``module`` for the block, then back; ``values`` ends up with
    what the module held at the end (a module that reassigns a buffer updates it)."""
    known = dict(module.named_parameters(remove_duplicate=False))
    known.update(module.named_buffers(remove_duplicate=False))
    given = values
    if tie_weights:
        values = _untie(known, values)
    if strict:
        missing = sorted(k for k in known if k not in values)
        unexpected = sorted(k for k in values if k not in known)
        parts = []
        if unexpected:
            parts.append(f"Unexpected key(s): {', '.join(map(repr, unexpected))}.")
        if missing:
            parts.append(f"Missing key(s): {', '.join(map(repr, missing))}.")
        if parts:
            raise RuntimeError(f"Error(s) in reparametrizing for {type(module).__name__}:\n\t"
                               + "\n\t".join(parts))
    saved = []
    try:
        for name, value in values.items():
            owner, attr = _owner(module, name)
            store = (owner._parameters if attr in owner._parameters
                     else owner._buffers if attr in owner._buffers else owner.__dict__)
            saved.append((name, store, attr, store.get(attr, _MISSING)))
            store[attr] = value
        yield
    finally:
        final = {}
        for name, store, attr, old in reversed(saved):
            final[name] = store.get(attr)
            if old is _MISSING:
                store.pop(attr, None)
            else:
                store[attr] = old
        given.update({k: final[k] for k in given if k in final})


def _untie(known: dict, values: dict) -> dict:
    """Names that share one tensor in the module share the replacement given for any of them."""
    by_tensor: dict = {}
    for name, t in known.items():
        by_tensor.setdefault(id(t), []).append(name)
    out = dict(values)
    for names in by_tensor.values():
        given = [n for n in names if n in values]
        if len(names) < 2 or not given:
            continue
        if any(values[n] is not values[given[0]] for n in given):
            raise ValueError(f"functional_call got multiple values for keys {sorted(names)}, "
                             f"which are tied. Consider using tie_weights=False")
        for n in names:
            out[n] = values[given[0]]
    return out


_MISSING = object()


def functional_call(module, parameter_and_buffer_dicts, args=None, kwargs=None, *,
                    tie_weights: bool = True, strict: bool = False):
    """Call ``module`` with its parameters and buffers replaced by the given tensors."""
    dicts = parameter_and_buffer_dicts
    if isinstance(dicts, dict):
        values = dicts
    elif isinstance(dicts, (tuple, list)):
        if not all(isinstance(d, dict) for d in dicts):
            raise ValueError("Expected all elements of parameter_and_buffer_dicts to be "
                             "dictionaries")
        counts: dict = {}
        for d in dicts:
            for k in d:
                counts[k] = counts.get(k, 0) + 1
        repeated = [k for k, n in counts.items() if n > 1]
        if repeated:
            raise ValueError(f"{repeated} appeared in multiple dictionaries; behavior of "
                             f"functional call is ambiguous")
        values = {k: v for d in dicts for k, v in d.items()}
    else:
        raise ValueError(f"Expected parameter_and_buffer_dicts to be a dict, or a list/tuple of "
                         f"dicts, but got {type(dicts)}")
    if args is None:
        args = ()
    elif not isinstance(args, tuple):
        args = (args,)
    with _swapped(module, values, tie_weights, strict):
        return module(*args, **(kwargs or {}))


def stack_module_state(models) -> tuple[dict, dict]:
    """The parameters and buffers of same-shaped ``models``, each stacked in a new leading dim
    (parameters as new leaves that require grad, as PyTorch's)."""
    models = list(models)
    if not models:
        raise RuntimeError("stack_module_state: Expected at least one model, got 0.")
    if not (all(m.training for m in models) or not any(m.training for m in models)):
        raise RuntimeError("stack_module_state: Expected all models to have the same training/eval "
                           "mode.")
    first = type(models[0])
    if not all(type(m) is first for m in models):
        raise RuntimeError("stack_module_state: Expected all models to be of the same class.")

    def stack(tensors: list, name: str):
        flags = {t.requires_grad for t in tensors}
        if len(flags) > 1:
            raise RuntimeError(f"Expected {name} from each model to have the same .requires_grad")
        out = _batching.ops["stack_fn"]([t.detach() for t in tensors])
        return out.requires_grad_() if flags == {True} else out

    all_params = [dict(m.named_parameters()) for m in models]
    all_buffers = [dict(m.named_buffers()) for m in models]
    params = {k: stack([p[k] for p in all_params], k) for k in all_params[0]}
    buffers = {k: stack([b[k] for b in all_buffers], k) for k in all_buffers[0]}
    return params, buffers


def replace_all_batch_norm_modules_(root):
    """Make every batch norm in ``root`` use batch statistics only (no running mean and
    variance), in place; ``root``."""
    for module in root.modules():
        # nn sits above func: batch norms are known by their base class's name
        if any(kind.__name__ == "_BatchNorm" for kind in type(module).__mro__):
            module.running_mean = None
            module.running_var = None
            module.num_batches_tracked = None
            module.track_running_stats = False
    return root
