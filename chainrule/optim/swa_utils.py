"""Stochastic weight averaging and moving averages of a model (``torch.optim.swa_utils``)."""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable, Iterable
from copy import deepcopy
from typing import Any

from .._backend import int64
from .._creation import tensor
from ..autograd.grad_mode import no_grad
from ..nn import Module
from ..nn.modules.batchnorm import _BatchNorm
from ..nn.modules.instancenorm import _InstanceNorm
from ..tensor import Tensor
from .lr_scheduler import LRScheduler, _per_group
from .optimizer import Optimizer

__all__ = ["AveragedModel", "update_bn", "SWALR", "get_ema_multi_avg_fn",
           "get_swa_multi_avg_fn", "get_ema_avg_fn", "get_swa_avg_fn"]


def _check_decay(decay: float) -> None:
    if decay < 0.0 or decay > 1.0:
        raise ValueError(f"Invalid decay value {decay} provided. Please provide a value in [0,1] "
                         "range.")


def get_ema_multi_avg_fn(decay: float = 0.999) -> Callable:
    """An in-place update of a list of averages toward the current values: an EMA with ``decay``."""
    _check_decay(decay)

    def ema_update(ema_param_list, current_param_list, _) -> None:
        with no_grad():
            if ema_param_list[0].is_floating_point() or ema_param_list[0].dtype.is_complex:
                for p_ema, p_model in zip(ema_param_list, current_param_list):
                    p_ema.lerp_(p_model, 1 - decay)
            else:
                for p_ema, p_model in zip(ema_param_list, current_param_list):
                    p_ema.copy_(p_ema * decay + p_model * (1 - decay))

    return ema_update


def get_swa_multi_avg_fn() -> Callable:
    """An in-place update of a list of running means with the current values (SWA)."""

    def swa_update(averaged_param_list, current_param_list, num_averaged) -> None:
        with no_grad():
            if averaged_param_list[0].is_floating_point() or \
                    averaged_param_list[0].dtype.is_complex:
                weight = 1 / (num_averaged + 1)
                weight = weight.item() if isinstance(weight, Tensor) else weight
                for p_avg, p_model in zip(averaged_param_list, current_param_list):
                    p_avg.lerp_(p_model, weight)
            else:
                for p_avg, p_model in zip(averaged_param_list, current_param_list):
                    p_avg.add_((p_model - p_avg) / (num_averaged + 1))

    return swa_update


def get_ema_avg_fn(decay: float = 0.999) -> Callable:
    """The new average of one parameter: an EMA with ``decay``."""
    _check_decay(decay)

    def ema_update(ema_param: Tensor, current_param: Tensor, num_averaged) -> Tensor:
        with no_grad():
            return decay * ema_param + (1 - decay) * current_param

    return ema_update


def get_swa_avg_fn() -> Callable:
    """The new running mean of one parameter after ``num_averaged`` earlier values (SWA)."""

    def swa_update(averaged_param: Tensor, current_param: Tensor, num_averaged) -> Tensor:
        with no_grad():
            return averaged_param + (current_param - averaged_param) / (num_averaged + 1)

    return swa_update


class AveragedModel(Module):
    """A copy of ``model`` whose parameters (and, with use_buffers, buffers) are averaged over
    the models passed to ``update_parameters``: SWA's equal-weight mean by default."""

    def __init__(self, model: Module, device=None, avg_fn: Callable | None = None,
                 multi_avg_fn: Callable | None = None, use_buffers: bool = False) -> None:
        super().__init__()
        if avg_fn is not None and multi_avg_fn is not None:
            raise AssertionError("Only one of avg_fn and multi_avg_fn should be provided")
        self.module = deepcopy(model)
        if device is not None:
            self.module = self.module.to(device)
        self.register_buffer("n_averaged", tensor(0, dtype=int64))
        self.avg_fn = avg_fn
        self.multi_avg_fn = multi_avg_fn
        self.use_buffers = use_buffers

    def forward(self, *args, **kwargs):
        """The averaged model's output."""
        return self.module(*args, **kwargs)

    def update_parameters(self, model: Module) -> None:
        """Average ``model``'s current parameters in (the first call copies them)."""
        if self.use_buffers:
            ours = itertools.chain(self.module.parameters(), self.module.buffers())
            theirs = itertools.chain(model.parameters(), model.buffers())
        else:
            ours, theirs = self.parameters(), model.parameters()
        averaged, current = [], []
        first = bool(self.n_averaged == 0)
        with no_grad():
            for p_averaged, p_model in zip(ours, theirs):
                averaged.append(p_averaged.detach())
                current.append(p_model.detach())
                if first:
                    p_averaged.detach().copy_(p_model.detach())
            if self.n_averaged > 0:
                if self.multi_avg_fn is not None:
                    for group in _by_dtype(averaged, current):
                        self.multi_avg_fn(*group, self.n_averaged)
                else:
                    avg_fn = self.avg_fn or get_swa_avg_fn()
                    for p_averaged, p_model in zip(averaged, current):
                        p_averaged.copy_(avg_fn(p_averaged, p_model, self.n_averaged))
            if not self.use_buffers:
                for b_swa, b_model in zip(self.module.buffers(), model.buffers(), strict=True):
                    b_swa.detach().copy_(b_model.detach())
            self.n_averaged += 1


def _by_dtype(averaged: list, current: list) -> list[tuple[list, list]]:
    """The pairs of lists grouped by dtype, as PyTorch hands them to a multi_avg_fn."""
    groups: dict[Any, tuple[list, list]] = {}
    for a, c in zip(averaged, current):
        ours, theirs = groups.setdefault(a.dtype, ([], []))
        ours.append(a)
        theirs.append(c)
    return list(groups.values())


def update_bn(loader: Iterable[Any], model: Module, device=None) -> None:
    """Recompute the BatchNorm running statistics of ``model`` with one pass over ``loader``."""
    momenta = {m: m.momentum for m in model.modules()
               if isinstance(m, _BatchNorm) and not isinstance(m, _InstanceNorm)}
    if not momenta:
        return
    for module in momenta:
        module.reset_running_stats()
    was_training = model.training
    model.train()
    for module in momenta:
        module.momentum = None  # a cumulative average over the whole pass
    with no_grad():
        for input in loader:
            if isinstance(input, (list, tuple)):
                input = input[0]
            if device is not None:
                input = input.to(device)
            model(input)
    for module, momentum in momenta.items():
        module.momentum = momentum
    model.train(was_training)


class SWALR(LRScheduler):
    """Anneal each group's lr to its swa_lr over anneal_epochs (cosine or linear), then hold it."""

    def __init__(self, optimizer: Optimizer, swa_lr: float, anneal_epochs: int = 10,
                 anneal_strategy: str = "cos", last_epoch: int = -1) -> None:
        for lr, group in zip(_per_group("swa_lr", optimizer, swa_lr), optimizer.param_groups):
            group["swa_lr"] = lr
        if anneal_strategy not in ("cos", "linear"):
            raise ValueError("anneal_strategy must be one of 'cos' or 'linear', instead got "
                             f"{anneal_strategy}")
        self._set_anneal_func(anneal_strategy)
        if not isinstance(anneal_epochs, int) or anneal_epochs < 0:
            raise ValueError(f"anneal_epochs must be equal or greater than 0, got {anneal_epochs}")
        self.anneal_epochs = anneal_epochs
        super().__init__(optimizer, last_epoch)

    @staticmethod
    def _linear_anneal(t: float) -> float:
        return t

    @staticmethod
    def _cosine_anneal(t: float) -> float:
        return (1 - math.cos(math.pi * t)) / 2

    @staticmethod
    def _get_initial_lr(lr: float, swa_lr: float, alpha: float) -> float:
        """The lr annealing started from, recovered from the lr at fraction ``alpha``."""
        if alpha == 1:
            return swa_lr
        return (lr - alpha * swa_lr) / (1 - alpha)

    def get_lr(self) -> list:
        """The lrs at this step of the annealing, from the current ones (chained form)."""
        self._warn_if_outside_step()
        step = self._step_count - 1
        if self.anneal_epochs == 0:
            step = max(1, step)
        prev_alpha = self.anneal_func(max(0, min(1, (step - 1) / max(1, self.anneal_epochs))))
        groups = self.optimizer.param_groups
        prev_lrs = [self._get_initial_lr(g["lr"], g["swa_lr"], prev_alpha) for g in groups]
        alpha = self.anneal_func(max(0, min(1, step / max(1, self.anneal_epochs))))
        return [g["swa_lr"] * alpha + lr * (1 - alpha) for g, lr in zip(groups, prev_lrs)]

    def _set_anneal_func(self, anneal_strategy: str) -> None:
        self._anneal_strategy = anneal_strategy
        self.anneal_func = self._cosine_anneal if anneal_strategy == "cos" \
            else self._linear_anneal

    def state_dict(self) -> dict[str, Any]:
        """Everything but the optimizer and the annealing function."""
        return {k: v for k, v in self.__dict__.items() if k not in ("optimizer", "anneal_func")}

    def load_state_dict(self, state_dict: dict[str, Any]) -> None:
        """Restore what ``state_dict`` saved."""
        self.__dict__.update(state_dict)
        self._set_anneal_func(self._anneal_strategy)
