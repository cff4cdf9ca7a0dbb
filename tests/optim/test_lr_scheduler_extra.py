"""ConstantLR, PolynomialLR, MultiplicativeLR, CosineAnnealingWarmRestarts, CyclicLR and
ChainedScheduler against torch's: lr (and momentum) sequences, state_dict, warnings, errors."""

from __future__ import annotations

import copy
import math
import warnings

import pytest
import torch

from chainrule import optim

from .test_lr_scheduler import LIBS, OPTIMIZERS, make_optimizer, per_epoch

STEPS = 40


class Shrink:
    """A callable object: its attributes go into the state_dict."""

    def __init__(self) -> None:
        self.rate = 0.97

    def __call__(self, epoch) -> float:
        return self.rate


SCHEDULERS = {
    "ConstantLR": lambda L, o: [L.ConstantLR(o)],
    "ConstantLR-factor": lambda L, o: [L.ConstantLR(o, factor=0.5, total_iters=7)],
    "ConstantLR-zero-iters": lambda L, o: [L.ConstantLR(o, factor=0.25, total_iters=0)],
    "PolynomialLR": lambda L, o: [L.PolynomialLR(o)],
    "PolynomialLR-power": lambda L, o: [L.PolynomialLR(o, total_iters=12, power=2.5)],
    "MultiplicativeLR": lambda L, o: [L.MultiplicativeLR(o, lambda epoch: 0.95)],
    "MultiplicativeLR-per-group": lambda L, o: [L.MultiplicativeLR(o, [per_epoch, Shrink()])],
    "CosineAnnealingWarmRestarts": lambda L, o: [L.CosineAnnealingWarmRestarts(o, T_0=5)],
    "CosineAnnealingWarmRestarts-mult": lambda L, o: [L.CosineAnnealingWarmRestarts(
        o, T_0=3, T_mult=2, eta_min=0.01)],
    "CyclicLR": lambda L, o: [L.CyclicLR(o, 0.01, 0.1, step_size_up=4)],
    "CyclicLR-triangular2": lambda L, o: [L.CyclicLR(
        o, [0.01, 0.02], [0.1, 0.3], step_size_up=3, step_size_down=5, mode="triangular2",
        base_momentum=[0.7, 0.75], max_momentum=0.95)],
    "CyclicLR-exp_range": lambda L, o: [L.CyclicLR(o, 0.01, 0.1, step_size_up=5,
                                                   mode="exp_range", gamma=0.97)],
    "CyclicLR-scale_fn": lambda L, o: [L.CyclicLR(o, 0.01, 0.1, step_size_up=3,
                                                  scale_fn=per_epoch, scale_mode="iterations")],
    "CyclicLR-no-momentum": lambda L, o: [L.CyclicLR(o, 0.01, 0.1, step_size_up=2,
                                                     cycle_momentum=False)],
    "ChainedScheduler": lambda L, o: [L.ChainedScheduler(
        [L.ConstantLR(o, factor=0.1, total_iters=2), L.ExponentialLR(o, gamma=0.9)])],
    "ChainedScheduler-optimizer": lambda L, o: [L.ChainedScheduler(
        [L.PolynomialLR(o, total_iters=30), L.MultiplicativeLR(o, per_epoch),
         L.StepLR(o, 5)], optimizer=o)],
    "SequentialLR-Constant-Cosine": lambda L, o: [L.SequentialLR(
        o, [L.ConstantLR(o, 0.5, 3), L.CosineAnnealingWarmRestarts(o, 4)], milestones=[6])],
}


def record(lib_name: str, build, optimizer: dict, steps: int = STEPS):
    """Each group's lr (and momentum or beta1) after construction and each step, the last
    lrs and the warnings, and the schedulers."""
    opt = make_optimizer(lib_name, **optimizer)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        schedulers = build(LIBS[lib_name][1].lr_scheduler, opt)

        def snapshot():
            return [(g["lr"], g.get("momentum"), g.get("betas")) for g in opt.param_groups]

        seen = [snapshot()]
        for _ in range(steps):
            opt.step()
            for scheduler in schedulers:
                scheduler.step()
            seen.append(snapshot())
            seen.append(schedulers[-1].get_last_lr())
    return seen, [str(w.message) for w in caught], schedulers


@pytest.mark.parametrize("optimizer", OPTIMIZERS.values(), ids=OPTIMIZERS)
@pytest.mark.parametrize("build", SCHEDULERS.values(), ids=SCHEDULERS)
def test_lr_sequence_and_warnings_equal_torchs(build, optimizer):
    ours, theirs = record("chainrule", build, optimizer), record("torch", build, optimizer)
    assert ours[:2] == theirs[:2]


def _plain(state):
    """A state_dict with the schedulers' functions (which differ per library) left out."""
    return {k: [_plain(s) for s in v] if k == "_schedulers" else v
            for k, v in state.items() if k not in ("lr_lambdas",)}


@pytest.mark.parametrize("build", SCHEDULERS.values(), ids=SCHEDULERS)
def test_state_dict_equals_torchs(build):
    ours = [s.state_dict() for s in record("chainrule", build, OPTIMIZERS["SGD"], 13)[2]]
    theirs = [s.state_dict() for s in record("torch", build, OPTIMIZERS["SGD"], 13)[2]]
    assert [_plain(s) for s in ours] == [_plain(s) for s in theirs]
    assert [s.get("lr_lambdas") for s in ours] == [s.get("lr_lambdas") for s in theirs]


@pytest.mark.parametrize("build", SCHEDULERS.values(), ids=SCHEDULERS)
def test_state_dict_round_trip(build):
    optimizer = OPTIMIZERS["Adam"]
    seen = record("chainrule", build, optimizer)[0]
    whole = seen[:1] + seen[1::2]
    opt = make_optimizer("chainrule", **optimizer)
    schedulers = build(optim.lr_scheduler, opt)
    for _ in range(10):
        opt.step()
        for scheduler in schedulers:
            scheduler.step()
    saved = copy.deepcopy([opt.state_dict()] + [s.state_dict() for s in schedulers])
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


def test_callable_objects_keep_their_state():
    def run(lib_name):
        opt = make_optimizer(lib_name, groups=2)
        fn = Shrink()
        L = LIBS[lib_name][1].lr_scheduler
        scheduler = L.MultiplicativeLR(opt, [per_epoch, fn])
        fn.rate = 0.5
        cyclic = L.CyclicLR(make_optimizer(lib_name, momentum=0.9), 0.1, 1.0, scale_fn=fn)
        other = Shrink()
        L.MultiplicativeLR(make_optimizer(lib_name, groups=2), [per_epoch, other]
                           ).load_state_dict(scheduler.state_dict())
        return scheduler.state_dict()["lr_lambdas"], cyclic.state_dict()["_scale_fn_custom"], \
            other.rate

    assert run("chainrule") == run("torch") == ([None, {"rate": 0.5}], {"rate": 0.5}, 0.5)


WARM_EPOCHS = [0, 1, 2.5, 3, 4.75, 9, 10, 20, 21.5, 44]


@pytest.mark.parametrize("T_mult", [1, 2, 3])
def test_warm_restarts_step_to_any_epoch(T_mult):
    def run(lib_name):
        opt = make_optimizer(lib_name)
        scheduler = LIBS[lib_name][1].lr_scheduler.CosineAnnealingWarmRestarts(
            opt, T_0=3, T_mult=T_mult, eta_min=0.001)
        lrs = []
        with warnings.catch_warnings():
            warnings.simplefilter("error")  # PyTorch warns of nothing here
            for epoch in WARM_EPOCHS:
                scheduler.step(epoch)
                lrs.append((scheduler.get_last_lr(), scheduler.T_cur, scheduler.T_i,
                            scheduler.last_epoch))
        return lrs

    for ours, theirs in zip(run("chainrule"), run("torch"), strict=True):
        assert math.isclose(ours[0][0], theirs[0][0], rel_tol=1e-12)
        assert math.isclose(ours[1], theirs[1], rel_tol=1e-12) and ours[2:] == theirs[2:]


@pytest.mark.parametrize("name", ["ConstantLR", "PolynomialLR", "CyclicLR"])
def test_step_with_epoch_warns_like_torch(name):
    def run(lib_name):
        opt = make_optimizer(lib_name, momentum=0.9)
        L = LIBS[lib_name][1].lr_scheduler
        scheduler = (L.CyclicLR(opt, 0.01, 0.1, 3) if name == "CyclicLR"
                     else getattr(L, name)(opt))
        opt.step()
        lrs = []
        for epoch in (4, 2, 7):
            with pytest.warns(UserWarning, match="epoch parameter"):
                scheduler.step(epoch)
            lrs.append(scheduler.get_last_lr())
        return lrs

    assert run("chainrule") == run("torch")


def test_chained_scheduler_warns_once_per_scheduler_before_optimizer_step():
    def run(lib_name):
        opt = make_optimizer(lib_name)
        L = LIBS[lib_name][1].lr_scheduler
        chained = L.ChainedScheduler([L.StepLR(opt, 2), L.ExponentialLR(opt, 0.9)])
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            chained.step()
        with pytest.raises(TypeError):
            chained.step(3)
        return [str(w.message) for w in caught]

    ours = run("chainrule")
    assert ours == run("torch") and len(ours) == 2


INVALID = {
    "constant factor": lambda L, o: L.ConstantLR(o, factor=1.5),
    "constant factor negative": lambda L, o: L.ConstantLR(o, factor=-0.1),
    "multiplicative count": lambda L, o: L.MultiplicativeLR(o, [per_epoch, per_epoch]),
    "multiplicative not callable": lambda L, o: L.MultiplicativeLR(o, 0.9),
    "T_0": lambda L, o: L.CosineAnnealingWarmRestarts(o, T_0=0),
    "T_0 float": lambda L, o: L.CosineAnnealingWarmRestarts(o, T_0=2.0),
    "T_mult": lambda L, o: L.CosineAnnealingWarmRestarts(o, T_0=2, T_mult=0),
    "eta_min": lambda L, o: L.CosineAnnealingWarmRestarts(o, T_0=2, eta_min="0"),
    "negative epoch": lambda L, o: L.CosineAnnealingWarmRestarts(o, T_0=2).step(-1),
    "cyclic not an optimizer": lambda L, o: L.CyclicLR(object(), 0.1, 1.0),
    "cyclic mode": lambda L, o: L.CyclicLR(o, 0.1, 1.0, mode="x"),
    "cyclic base_lr list": lambda L, o: L.CyclicLR(o, [0.1, 0.2], 1.0),
    "cyclic no momentum": lambda L, o: L.CyclicLR(_adagrad(L), 0.1, 1.0),
    "chained none": lambda L, o: L.ChainedScheduler([]),
    "chained plateau": lambda L, o: L.ChainedScheduler([L.StepLR(o, 2),
                                                        L.ReduceLROnPlateau(o)]),
    "chained no optimizer": lambda L, o: L.ChainedScheduler([L.StepLR(o, 2), object()]),
}


def _adagrad(L):
    return make_optimizer("torch" if L is torch.optim.lr_scheduler else "chainrule", "Adagrad")


@pytest.mark.parametrize("build", INVALID.values(), ids=INVALID)
def test_invalid_arguments_raise_like_torch(build):
    def error(lib_name):
        with pytest.raises(Exception) as info:  # noqa: PT011  (compared below)
            build(LIBS[lib_name][1].lr_scheduler, make_optimizer(lib_name, momentum=0.9))
        return type(info.value), str(info.value)

    assert error("chainrule") == error("torch")


def test_chained_scheduler_needs_one_optimizer():
    def error(lib_name):
        L = LIBS[lib_name][1].lr_scheduler
        first, second = make_optimizer(lib_name), make_optimizer(lib_name)
        with pytest.raises(ValueError) as info:
            L.ChainedScheduler([L.StepLR(first, 2), L.StepLR(second, 2)])
        return str(info.value).split(" has ")[0]

    assert error("chainrule") == error("torch")
