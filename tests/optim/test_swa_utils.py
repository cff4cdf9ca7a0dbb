"""optim.swa_utils against torch's: AveragedModel, the averaging functions, SWALR, update_bn."""

from __future__ import annotations

import copy
import warnings

import numpy as np
import pytest
import torch

import chainrule
from chainrule import nn, optim

LIBS = {"chainrule": chainrule, "torch": torch}
_rng = np.random.default_rng(3)
X = [_rng.standard_normal((8, 3)) for _ in range(5)]


def copy_weights(theirs: torch.nn.Module, ours: nn.Module) -> None:
    result = ours.load_state_dict({k: chainrule.tensor(v.numpy())
                                   for k, v in theirs.state_dict().items()})
    assert not result.missing_keys and not result.unexpected_keys


def models(seed: int = 0):
    """The same float64 model (Linear, BatchNorm1d, Linear) in both libraries."""
    torch.manual_seed(seed)
    theirs = torch.nn.Sequential(torch.nn.Linear(3, 4), torch.nn.BatchNorm1d(4),
                                 torch.nn.Linear(4, 2)).double()
    ours = nn.Sequential(nn.Linear(3, 4), nn.BatchNorm1d(4), nn.Linear(4, 2)).double()
    copy_weights(theirs, ours)
    return {"chainrule": ours, "torch": theirs}


def train_step(lib, model, opt, x) -> None:
    opt.zero_grad()
    (model(lib.tensor(x)) ** 2).mean().backward()
    opt.step()


def state(model) -> dict[str, np.ndarray]:
    return {k: np.asarray(v.detach().numpy(), dtype=np.float64)
            for k, v in model.state_dict().items()}


def assert_states_close(ours: dict, theirs: dict) -> None:
    assert list(ours) == list(theirs)
    for key in ours:
        np.testing.assert_allclose(ours[key], theirs[key], rtol=1e-12, atol=1e-14, err_msg=key)


AVERAGING = {
    "swa": {},
    "swa-buffers": {"use_buffers": True},
    "avg_fn-ema": {"avg_fn": "get_ema_avg_fn(0.9)"},
    "avg_fn-swa": {"avg_fn": "get_swa_avg_fn()", "use_buffers": True},
    "multi-ema": {"multi_avg_fn": "get_ema_multi_avg_fn(0.8)"},
    "multi-ema-buffers": {"multi_avg_fn": "get_ema_multi_avg_fn(0.8)", "use_buffers": True},
    "multi-swa": {"multi_avg_fn": "get_swa_multi_avg_fn()"},
}


def build_kwargs(lib, spec: dict) -> dict:
    swa_utils = lib.optim.swa_utils
    return {k: eval(v, {}, vars(swa_utils)) if isinstance(v, str) else v  # noqa: S307
            for k, v in spec.items()}


@pytest.mark.parametrize("spec", AVERAGING.values(), ids=AVERAGING)
def test_averaged_model_equals_torchs(spec):
    results = {}
    for name, model in models().items():
        lib = LIBS[name]
        averaged = lib.optim.swa_utils.AveragedModel(model, **build_kwargs(lib, spec))
        opt = lib.optim.SGD(model.parameters(), lr=0.1)
        for x in X:
            train_step(lib, model, opt, x)
            averaged.update_parameters(model)
        out = averaged(lib.tensor(X[0])).detach().numpy()
        results[name] = (state(averaged), out, int(averaged.n_averaged))
    assert_states_close(results["chainrule"][0], results["torch"][0])
    np.testing.assert_allclose(results["chainrule"][1], results["torch"][1], rtol=1e-12)
    assert results["chainrule"][2] == results["torch"][2] == len(X)


def test_averaged_model_refuses_two_averaging_functions():
    errors = []
    for name, model in models().items():
        swa_utils = LIBS[name].optim.swa_utils
        with pytest.raises(AssertionError) as info:
            swa_utils.AveragedModel(model, avg_fn=swa_utils.get_swa_avg_fn(),
                                    multi_avg_fn=swa_utils.get_swa_multi_avg_fn())
        errors.append(str(info.value))
    assert errors[0] == errors[1]


def test_averaged_model_is_a_copy_with_a_long_counter():
    model = models()["chainrule"]
    averaged = optim.swa_utils.AveragedModel(model)
    assert averaged.module is not model and isinstance(averaged, nn.Module)
    assert averaged.n_averaged.dtype == chainrule.int64 and averaged.n_averaged.item() == 0
    assert list(averaged.state_dict()) == list(
        torch.optim.swa_utils.AveragedModel(models()["torch"]).state_dict())


@pytest.mark.parametrize("decay", [-0.1, 1.5])
@pytest.mark.parametrize("name", ["get_ema_avg_fn", "get_ema_multi_avg_fn"])
def test_invalid_decay_raises_like_torch(name, decay):
    errors = []
    for lib in LIBS.values():
        with pytest.raises(ValueError) as info:
            getattr(lib.optim.swa_utils, name)(decay)
        errors.append(str(info.value))
    assert errors[0] == errors[1]


@pytest.mark.parametrize("name", ["get_ema_avg_fn", "get_swa_avg_fn"])
def test_averaging_functions_equal_torchs(name):
    values = [_rng.standard_normal(5) for _ in range(2)]
    outs = []
    for lib in LIBS.values():
        fn = getattr(lib.optim.swa_utils, name)()
        outs.append(fn(*(lib.tensor(v) for v in values), lib.tensor(3)).numpy())
    np.testing.assert_allclose(outs[0], outs[1], rtol=1e-14)


@pytest.mark.parametrize("name", ["get_ema_multi_avg_fn", "get_swa_multi_avg_fn"])
@pytest.mark.parametrize("n", [2, "tensor"])
def test_multi_averaging_functions_equal_torchs(name, n):
    values = [[_rng.standard_normal(4), _rng.standard_normal((2, 2))] for _ in range(2)]
    outs = []
    for lib in LIBS.values():
        averaged, current = ([lib.tensor(v) for v in vs] for vs in values)
        getattr(lib.optim.swa_utils, name)()(averaged, current,
                                            lib.tensor(2) if n == "tensor" else n)
        outs.append([a.numpy() for a in averaged])
    for a, b in zip(*outs):
        np.testing.assert_allclose(a, b, rtol=1e-14)


# ---- update_bn -------------------------------------------------------------------------------


@pytest.mark.parametrize("pairs", [False, True])
def test_update_bn_equals_torchs(pairs):
    results = {}
    for name, model in models().items():
        lib = LIBS[name]
        bn = model[1]
        bn.running_mean.fill_(5.0)
        model.eval()
        loader = [(lib.tensor(x), lib.tensor(0)) if pairs else lib.tensor(x) for x in X]
        lib.optim.swa_utils.update_bn(loader, model)
        results[name] = (state(model), model.training, bn.momentum)
    assert_states_close(results["chainrule"][0], results["torch"][0])
    assert results["chainrule"][1:] == results["torch"][1:] == (False, 0.1)


def test_update_bn_without_batchnorm_does_nothing():
    model = nn.Linear(3, 2)
    before = copy.deepcopy(model.state_dict())
    optim.swa_utils.update_bn([chainrule.ones(2, 3)], model)
    assert all((model.state_dict()[k] == v).all() for k, v in before.items())


# ---- SWALR ----------------------------------------------------------------------------------

SWALR = {
    "cos": {"swa_lr": 0.05},
    "linear": {"swa_lr": 0.5, "anneal_epochs": 4, "anneal_strategy": "linear"},
    "per-group": {"swa_lr": [0.01, 0.3], "anneal_epochs": 3},
    "no-anneal": {"swa_lr": 0.02, "anneal_epochs": 0},
}


def swalr_lrs(name: str, kwargs: dict, after: int = 0):
    lib = LIBS[name]
    params = [{"params": [lib.zeros(2, requires_grad=True)], "lr": 0.1 * (i + 1)}
              for i in range(2)]
    opt = lib.optim.SGD(params, momentum=0.9)
    base = lib.optim.lr_scheduler.CosineAnnealingLR(opt, T_max=10)
    lrs = []
    for _ in range(after):
        opt.step()
        base.step()
    scheduler = lib.optim.swa_utils.SWALR(opt, **kwargs)
    lrs.append(scheduler.get_last_lr())
    for _ in range(15):
        opt.step()
        scheduler.step()
        lrs.append(scheduler.get_last_lr())
        assert lrs[-1] == [g["lr"] for g in opt.param_groups]
    return lrs, scheduler


@pytest.mark.parametrize("after", [0, 4])
@pytest.mark.parametrize("kwargs", SWALR.values(), ids=SWALR)
def test_swalr_equals_torchs(kwargs, after):
    ours, theirs = swalr_lrs("chainrule", kwargs, after), swalr_lrs("torch", kwargs, after)
    assert ours[0] == theirs[0]
    assert ours[1].state_dict() == theirs[1].state_dict()


def test_swalr_state_dict_round_trip_and_warning():
    lrs, scheduler = swalr_lrs("chainrule", SWALR["linear"])
    saved = copy.deepcopy(scheduler.state_dict())
    assert "anneal_func" not in saved and "optimizer" not in saved
    _, other = swalr_lrs("chainrule", {"swa_lr": 0.5})
    other.load_state_dict(saved)
    assert other.anneal_func(0.5) == 0.5  # linear again
    with pytest.warns(UserWarning, match="get_last_lr"):
        other.get_lr()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        other.get_last_lr()


SWALR_INVALID = [
    {"swa_lr": 0.1, "anneal_strategy": "exp"},
    {"swa_lr": 0.1, "anneal_epochs": -1},
    {"swa_lr": 0.1, "anneal_epochs": 2.5},
    {"swa_lr": [0.1, 0.2, 0.3]},
]


@pytest.mark.parametrize("kwargs", SWALR_INVALID, ids=[str(k) for k in SWALR_INVALID])
def test_swalr_invalid_arguments_raise_like_torch(kwargs):
    errors = []
    for lib in LIBS.values():
        opt = lib.optim.SGD([lib.zeros(2, requires_grad=True)])
        with pytest.raises(ValueError) as info:
            lib.optim.swa_utils.SWALR(opt, **kwargs)
        errors.append(str(info.value))
    assert errors[0] == errors[1]


def test_public_names_equal_torchs():
    assert sorted(optim.swa_utils.__all__) == sorted(torch.optim.swa_utils.__all__)
    assert sorted(optim.__all__) == sorted(torch.optim.__all__)
