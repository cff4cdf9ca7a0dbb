"""chainrule.optim.lr_scheduler against torch's: lr sequences, state_dict, warnings, errors."""

from __future__ import annotations

import copy
import math
import warnings

import pytest
import torch

import chainrule
from chainrule import optim

LIBS = {"chainrule": (chainrule, optim), "torch": (torch, torch.optim)}
STEPS = 30


def make_optimizer(lib_name: str, name: str = "SGD", groups: int = 1, **kwargs):
    """An optimizer over small parameters, ``groups`` param groups with lrs 0.1, 0.2, ..."""
    lib, lib_optim = LIBS[lib_name]
    param_groups = [{"params": [lib.zeros(2, requires_grad=True)], "lr": 0.1 * (i + 1)}
                    for i in range(groups)]
    return getattr(lib_optim, name)(param_groups, **kwargs)


def per_epoch(epoch: int) -> float:
    return 0.95**epoch


def warm_then_flat(epoch: int) -> float:
    return min(1.0, (epoch + 1) / 5)


# Each row builds schedulers from (lr_scheduler module, optimizer); several are chained.
SCHEDULERS = {
    "StepLR": lambda L, o: [L.StepLR(o, step_size=3, gamma=0.5)],
    "MultiStepLR": lambda L, o: [L.MultiStepLR(o, milestones=[3, 7, 7, 15], gamma=0.5)],
    "ExponentialLR": lambda L, o: [L.ExponentialLR(o, gamma=0.9)],
    "CosineAnnealingLR": lambda L, o: [L.CosineAnnealingLR(o, T_max=10)],
    "CosineAnnealingLR-eta_min": lambda L, o: [L.CosineAnnealingLR(o, T_max=7, eta_min=0.01)],
    "LambdaLR": lambda L, o: [L.LambdaLR(o, per_epoch)],
    "LambdaLR-per-group": lambda L, o: [L.LambdaLR(o, [per_epoch, warm_then_flat])],
    "LinearLR": lambda L, o: [L.LinearLR(o)],
    "LinearLR-decay": lambda L, o: [L.LinearLR(o, start_factor=0.5, end_factor=0.1,
                                               total_iters=10)],
    "OneCycleLR": lambda L, o: [L.OneCycleLR(o, max_lr=1.0, total_steps=STEPS)],
    "OneCycleLR-linear": lambda L, o: [L.OneCycleLR(o, max_lr=1.0, total_steps=STEPS,
                                                    anneal_strategy="linear")],
    "OneCycleLR-three-phase": lambda L, o: [L.OneCycleLR(
        o, max_lr=[0.5, 1.0], epochs=3, steps_per_epoch=10, pct_start=0.25, div_factor=10.0,
        final_div_factor=100.0, three_phase=True, base_momentum=[0.8, 0.85])],
    "OneCycleLR-no-momentum": lambda L, o: [L.OneCycleLR(o, max_lr=0.5, total_steps=STEPS + 5,
                                                         cycle_momentum=False)],
    "SequentialLR": lambda L, o: [L.SequentialLR(
        o, [L.LinearLR(o, start_factor=0.1, total_iters=5), L.CosineAnnealingLR(o, T_max=20)],
        milestones=[5])],
    "SequentialLR-three": lambda L, o: [L.SequentialLR(
        o, [L.ExponentialLR(o, 0.9), L.StepLR(o, 3), L.MultiStepLR(o, [2, 4], gamma=0.5)],
        milestones=[4, 10])],
    "chained-Exponential-Step": lambda L, o: [L.ExponentialLR(o, gamma=0.9),
                                              L.StepLR(o, step_size=4, gamma=0.5)],
    "chained-Linear-Cosine": lambda L, o: [L.LinearLR(o, total_iters=4),
                                           L.CosineAnnealingLR(o, T_max=12)],
}
OPTIMIZERS = {
    "SGD": dict(name="SGD", groups=2, momentum=0.9),
    "Adam": dict(name="Adam", groups=2),
}


def record(lib_name: str, build, optimizer: dict, steps: int = STEPS) -> list:
    """Each group's lr (and momentum or beta1) after construction and after each step."""
    opt = make_optimizer(lib_name, **optimizer)
    schedulers = build(LIBS[lib_name][1].lr_scheduler, opt)

    def snapshot():
        return [(g["lr"], g.get("momentum"), g.get("betas")) for g in opt.param_groups]

    seen = [snapshot()]
    for _ in range(steps):
        opt.step()
        for scheduler in schedulers:
            scheduler.step()
        seen.append(snapshot())
        assert schedulers[-1].get_last_lr() == [g["lr"] for g in opt.param_groups]
    return seen


@pytest.mark.parametrize("optimizer", OPTIMIZERS.values(), ids=OPTIMIZERS)
@pytest.mark.parametrize("build", SCHEDULERS.values(), ids=SCHEDULERS)
def test_lr_sequence_equals_torchs(build, optimizer):
    assert record("chainrule", build, optimizer) == record("torch", build, optimizer)


METRICS = [1.0, 0.9, 0.8, 0.8, 0.81, 0.8, 0.79, 0.795, 0.8, 0.8, 0.7, 0.7, 0.71, 0.7, 0.7,
           0.69999, 0.6, 0.6, 0.6, 0.6, 0.6, 0.5, 0.55, 0.6, 0.6, 0.6, 0.6, 0.6, 0.6, 0.6]
PLATEAU = [
    {},
    {"patience": 2},
    {"patience": 1, "factor": 0.5, "cooldown": 2},
    {"patience": 1, "threshold": 0.05, "threshold_mode": "abs", "min_lr": 0.02},
    {"mode": "max", "patience": 2, "factor": 0.5, "min_lr": [0.05, 0.0]},
    {"mode": "max", "threshold_mode": "abs", "patience": 0, "eps": 0.01},
]


def plateau_lrs(lib_name: str, kwargs: dict) -> list:
    opt = make_optimizer(lib_name, groups=2)
    scheduler = LIBS[lib_name][1].lr_scheduler.ReduceLROnPlateau(opt, **kwargs)
    lrs = []
    for metric in METRICS:
        opt.step()
        scheduler.step(metric)
        lrs.append(scheduler.get_last_lr())
    return lrs


@pytest.mark.parametrize("kwargs", PLATEAU, ids=[str(k) for k in PLATEAU])
def test_reduce_lr_on_plateau_equals_torchs(kwargs):
    assert plateau_lrs("chainrule", kwargs) == plateau_lrs("torch", kwargs)


# ---- state_dict ----------------------------------------------------------------------------


@pytest.mark.parametrize("build", SCHEDULERS.values(), ids=SCHEDULERS)
def test_state_dict_round_trip(build):
    optimizer = OPTIMIZERS["SGD"]
    whole = record("chainrule", build, optimizer)

    opt = make_optimizer("chainrule", **optimizer)
    schedulers = build(optim.lr_scheduler, opt)
    for _ in range(10):
        opt.step()
        for scheduler in schedulers:
            scheduler.step()
    saved = copy.deepcopy([opt.state_dict()] + [s.state_dict() for s in schedulers])

    # A fresh optimizer and schedulers (built as at the start), then the saved state loaded.
    opt = make_optimizer("chainrule", **optimizer)
    schedulers = build(optim.lr_scheduler, opt)
    opt.load_state_dict(saved[0])
    for scheduler, state in zip(schedulers, saved[1:]):
        scheduler.load_state_dict(state)
    resumed = []
    for _ in range(STEPS - 10):
        opt.step()
        for scheduler in schedulers:
            scheduler.step()
        resumed.append([(g["lr"], g.get("momentum"), g.get("betas")) for g in opt.param_groups])
    assert resumed == whole[11:]


@pytest.mark.parametrize("build", SCHEDULERS.values(), ids=SCHEDULERS)
def test_state_dict_keys_equal_torchs(build):
    def keys(lib_name):
        opt = make_optimizer(lib_name, **OPTIMIZERS["SGD"])
        states = [s.state_dict() for s in build(LIBS[lib_name][1].lr_scheduler, opt)]
        return [(sorted(s), sorted(s.get("_schedulers", [{}])[0])) for s in states]

    assert keys("chainrule") == keys("torch")


def test_reduce_lr_on_plateau_state_dict():
    def run(lib_name, metrics):
        opt = make_optimizer(lib_name, groups=2)
        scheduler = LIBS[lib_name][1].lr_scheduler.ReduceLROnPlateau(opt, patience=1)
        for metric in metrics:
            scheduler.step(metric)
        return opt, scheduler

    _, ours = run("chainrule", METRICS[:8])
    _, theirs = run("torch", METRICS[:8])
    assert ours.state_dict() == theirs.state_dict()
    opt, resumed = run("chainrule", [])
    resumed.load_state_dict(copy.deepcopy(ours.state_dict()))
    opt.load_state_dict(run("chainrule", METRICS[:8])[0].state_dict())
    for metric in METRICS[8:]:
        ours.step(metric)
        resumed.step(metric)
        assert resumed.get_last_lr() == ours.get_last_lr()


def test_lambda_lr_state_dict_keeps_callable_objects():
    class Halve:
        def __init__(self):
            self.factor = 0.5

        def __call__(self, epoch):
            return self.factor**epoch

    opt = make_optimizer("chainrule")
    fn = Halve()
    scheduler = optim.lr_scheduler.LambdaLR(opt, fn)
    fn.factor = 0.25
    state = scheduler.state_dict()
    assert state["lr_lambdas"] == [{"factor": 0.25}]
    other = Halve()
    optim.lr_scheduler.LambdaLR(make_optimizer("chainrule"), other).load_state_dict(state)
    assert other.factor == 0.25
    assert optim.lr_scheduler.LambdaLR(opt, per_epoch).state_dict()["lr_lambdas"] == [None]


# ---- resuming, epochs, warnings, errors --------------------------------------------------------

RESUMABLE = {
    "StepLR": lambda L, o, e: L.StepLR(o, 3, last_epoch=e),
    "MultiStepLR": lambda L, o, e: L.MultiStepLR(o, [2, 3, 6], last_epoch=e),
    "ExponentialLR": lambda L, o, e: L.ExponentialLR(o, 0.9, last_epoch=e),
    "CosineAnnealingLR": lambda L, o, e: L.CosineAnnealingLR(o, 4, last_epoch=e),
    "LinearLR": lambda L, o, e: L.LinearLR(o, last_epoch=e),
    "LambdaLR": lambda L, o, e: L.LambdaLR(o, per_epoch, last_epoch=e),
}


@pytest.mark.parametrize("last_epoch", [0, 2, 5])
@pytest.mark.parametrize("build", RESUMABLE.values(), ids=RESUMABLE)
def test_resuming_from_last_epoch_equals_torchs(build, last_epoch):
    def run(lib_name):
        opt = make_optimizer(lib_name)
        opt.param_groups[0]["initial_lr"] = 0.5
        scheduler = build(LIBS[lib_name][1].lr_scheduler, opt, last_epoch)
        lrs = [opt.param_groups[0]["lr"]]
        for _ in range(8):
            opt.step()
            scheduler.step()
            lrs.append(opt.param_groups[0]["lr"])
        return lrs

    assert run("chainrule") == run("torch")


@pytest.mark.parametrize("build", RESUMABLE.values(), ids=RESUMABLE)
def test_step_with_epoch_uses_the_closed_form_and_warns(build):
    def run(lib_name):
        opt = make_optimizer(lib_name)
        scheduler = build(LIBS[lib_name][1].lr_scheduler, opt, -1)
        opt.step()
        lrs = []
        for epoch in (4, 2, 7):
            with pytest.warns(UserWarning, match="epoch parameter"):
                scheduler.step(epoch)
            lrs.append(scheduler.get_last_lr())
        return lrs

    ours, theirs = run("chainrule"), run("torch")
    assert all(math.isclose(a[0], b[0], rel_tol=1e-15) for a, b in zip(ours, theirs))


def test_resuming_needs_initial_lr():
    opt = make_optimizer("chainrule")
    with pytest.raises(KeyError, match="param 'initial_lr' is not specified in param_groups"):
        optim.lr_scheduler.StepLR(opt, 3, last_epoch=4)


def test_warnings_like_torchs():
    for lib_name in LIBS:
        opt = make_optimizer(lib_name)
        scheduler = LIBS[lib_name][1].lr_scheduler.StepLR(opt, 2)
        with pytest.warns(UserWarning, match="before `optimizer.step\\(\\)`"):
            scheduler.step()
        with pytest.warns(UserWarning, match="please use `get_last_lr\\(\\)`"):
            scheduler.get_lr()
        opt = make_optimizer(lib_name)
        scheduler = LIBS[lib_name][1].lr_scheduler.StepLR(opt, 2)
        opt.step()
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            scheduler.step()


INVALID = {
    "not an optimizer": lambda L, o: L.StepLR(object(), 3),
    "lambdas": lambda L, o: L.LambdaLR(o, [per_epoch, per_epoch]),
    "start_factor": lambda L, o: L.LinearLR(o, start_factor=0),
    "end_factor": lambda L, o: L.LinearLR(o, end_factor=2),
    "no total": lambda L, o: L.OneCycleLR(o, 1.0),
    "total 0": lambda L, o: L.OneCycleLR(o, 1.0, total_steps=0),
    "total float": lambda L, o: L.OneCycleLR(o, 1.0, total_steps=1.5),
    "epochs": lambda L, o: L.OneCycleLR(o, 1.0, epochs=0, steps_per_epoch=3),
    "steps_per_epoch": lambda L, o: L.OneCycleLR(o, 1.0, epochs=2, steps_per_epoch=0),
    "pct_start": lambda L, o: L.OneCycleLR(o, 1.0, total_steps=10, pct_start=1.5),
    "anneal": lambda L, o: L.OneCycleLR(o, 1.0, total_steps=10, anneal_strategy="x"),
    "max_lr list": lambda L, o: L.OneCycleLR(o, [1.0, 2.0], total_steps=10),
    "no momentum": lambda L, o: L.OneCycleLR(_new_optimizer(L, "Adagrad"), 1.0, total_steps=10),
    "factor": lambda L, o: L.ReduceLROnPlateau(o, factor=1.0),
    "mode": lambda L, o: L.ReduceLROnPlateau(o, mode="x"),
    "threshold_mode": lambda L, o: L.ReduceLROnPlateau(o, threshold_mode="x"),
    "min_lrs": lambda L, o: L.ReduceLROnPlateau(o, min_lr=[0, 1]),
    "no schedulers": lambda L, o: L.SequentialLR(o, [], []),
    "milestones": lambda L, o: L.SequentialLR(o, [L.StepLR(o, 2)], [1]),
    "plateau in sequence": lambda L, o: L.SequentialLR(
        o, [L.StepLR(o, 2), L.ReduceLROnPlateau(o)], [1]),
    "two optimizers": lambda L, o: L.SequentialLR(
        o, [L.StepLR(o, 2), L.StepLR(_new_optimizer(L, "SGD"), 2)], [1]),
}


def _new_optimizer(L, name: str):
    """Another optimizer from the library the scheduler module ``L`` belongs to."""
    return make_optimizer("torch" if L is torch.optim.lr_scheduler else "chainrule", name)


@pytest.mark.parametrize("build", INVALID.values(), ids=INVALID)
def test_invalid_arguments_raise_like_torch(build):
    def error(lib_name):
        with pytest.raises(Exception) as info:
            build(LIBS[lib_name][1].lr_scheduler, make_optimizer(lib_name))
        return type(info.value), str(info.value)

    assert error("chainrule") == error("torch")


def test_one_cycle_raises_past_its_total_steps():
    def error(lib_name):
        opt = make_optimizer(lib_name, momentum=0.9)
        scheduler = LIBS[lib_name][1].lr_scheduler.OneCycleLR(opt, 1.0, total_steps=3)
        with pytest.raises(ValueError) as info:
            for _ in range(5):
                opt.step()
                scheduler.step()
        return str(info.value)

    assert error("chainrule") == error("torch") == (
        "Tried to step 4 times. The specified number of total steps is 3")
