"""swap_in_optimizer_params_and_state: run an optimizer on other params and state for a while."""

from __future__ import annotations

import contextlib
from collections import defaultdict
from collections.abc import Iterator
from typing import Any

from ..tensor import Tensor
from .optimizer import Optimizer

__all__ = ["swap_in_optimizer_params_and_state"]

_NAME = "swap_in_optimizer_params_and_state"


def _check(optimizer: Optimizer, swapin_parameters: dict, swapin_optim_state: Any) -> list:
    """Validate the swap-in state against the live optimizer; (group, saved, params) per group."""
    if not optimizer.state:
        raise RuntimeError(f"{_NAME} requires initialized optimizer state.")
    if not isinstance(swapin_optim_state, dict):
        raise RuntimeError(f"{_NAME} requires a DCP-style optimizer state_dict.")
    state = swapin_optim_state.get("state")
    if not isinstance(state, dict):
        raise RuntimeError(f"{_NAME} requires swapin_optim_state['state'] to be a dict mapping "
                           "packed parameter ids to per-param state dicts, got "
                           f"{type(state).__name__}.")
    if any(isinstance(k, Tensor) for k in state):
        raise RuntimeError(f"{_NAME} requires optimizer.state_dict()-style state keyed by "
                           "packed parameter ids.")
    if any(isinstance(k, int) and not isinstance(v, dict) for k, v in state.items()):
        raise RuntimeError(f"{_NAME} requires per-parameter optimizer state entries to be "
                           "dictionaries.")
    groups = swapin_optim_state.get("param_groups")
    if not isinstance(groups, list):
        raise RuntimeError(f"{_NAME} requires swapin_optim_state['param_groups'] to be a list "
                           f"of param-group dicts, got {type(groups).__name__}.")
    if len(groups) != len(optimizer.param_groups):
        raise RuntimeError("swapin_optim_state has a different number of parameter groups than "
                           "the live optimizer.")
    flat = list(swapin_parameters.values())
    offset, seen, plan = 0, set(), []
    for idx, (group, saved) in enumerate(zip(optimizer.param_groups, groups)):
        if not isinstance(saved, dict):
            raise RuntimeError(f"{_NAME} requires each optimizer param group to be a "
                               "dictionary.")
        ids = saved.get("params")
        if not isinstance(ids, list) or not all(isinstance(i, int) for i in ids):
            raise RuntimeError(f"{_NAME} requires optimizer.state_dict()-style "
                               "param_groups[*]['params'] entries keyed by packed parameter "
                               "ids.")
        if len(group["params"]) != len(ids):
            raise RuntimeError(f"swapin_optim_state param group {idx} has a different number "
                               "of params than the live optimizer param group.")
        saved_only = [k for k in saved if k not in group]
        live_only = [k for k in group if k not in saved]
        if saved_only or live_only:
            raise RuntimeError(f"{_NAME} requires optimizer.state_dict()-style param group "
                               "keys to exactly match the live optimizer group keys for group "
                               f"{idx}. Keys only in swap-in: {saved_only}. Keys only in live: "
                               f"{live_only}.")
        seen.update(ids)
        if offset + len(ids) > len(flat):
            raise RuntimeError(f"{_NAME} requires the explicit parameter state to match "
                               "optimizer.param_groups ordering.")
        plan.append((group, saved, flat[offset:offset + len(ids)]))
        offset += len(ids)
    extra = [k for k in state if k not in seen]
    if extra:
        raise RuntimeError(f"{_NAME} requires swapin_optim_state['state'] to be keyed only by "
                           f"packed parameter ids from param_groups[*]['params']; got extra "
                           f"keys {extra!r}.")
    return plan


@contextlib.contextmanager
def swap_in_optimizer_params_and_state(optimizer: Optimizer, swapin_parameters: dict[str, Tensor],
                                       swapin_optim_state: dict[str, Any]) -> Iterator[None]:
    """Temporarily replace an optimizer's parameters and state with the supplied params and
    optim states, then restore them on exit."""
    plan = _check(optimizer, swapin_parameters, swapin_optim_state)
    state = swapin_optim_state["state"]
    live_state = optimizer.state
    snapshots = [dict(group) for group in optimizer.param_groups]
    try:
        # Per-param dicts are copied, their tensors are not: in-place updates reach the caller.
        swapped: defaultdict[Any, dict[str, Any]] = defaultdict(dict)
        for group, saved, params in plan:
            group["params"] = params
            group.update({k: v for k, v in saved.items() if k != "params"})
            for param, pid in zip(params, saved["params"]):
                swapped[param] = dict(state.get(pid, {}))
        optimizer.state = swapped
        yield
    finally:
        for group, snapshot in zip(optimizer.param_groups, snapshots):
            group.clear()
            group.update(snapshot)
        optimizer.state = live_state
