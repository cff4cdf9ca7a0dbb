"""ASGD, Rprop, Adafactor, Muon, SparseAdam and swap_in_optimizer_params_and_state against torch."""

from __future__ import annotations

import copy

import numpy as np
import pytest
import torch

import chainrule
from chainrule import optim

from .test_optimizers import (
    INIT,
    LIBS,
    Run,
    assert_trajectories_close,
    config_id,
    least_squares,
    make_params,
    raised,
    values,
)

INIT64 = [v.astype(np.float64) for v in INIT]
_rng = np.random.default_rng(1)
X = _rng.standard_normal((6, 5))
MATRICES = [_rng.standard_normal((5, 3)) * 0.5, _rng.standard_normal((3, 4)) * 0.5]


def two_layer(lib, params):
    """A loss of two weight matrices only (what Muon takes)."""
    w1, w2 = params
    return (lib.tanh(lib.tensor(X) @ w1) @ w2).sin().sum()


CONFIGS = [
    ("ASGD", {}),
    ("ASGD", {"lr": 0.05, "lambd": 0.01, "alpha": 0.5, "t0": 3}),
    ("ASGD", {"lr": 0.05, "t0": 2, "weight_decay": 0.1, "maximize": True}),
    ("Rprop", {}),
    ("Rprop", {"lr": 0.05, "etas": (0.3, 1.5), "step_sizes": (1e-3, 0.2)}),
    ("Rprop", {"lr": 0.02, "maximize": True}),
    ("Adafactor", {}),
    ("Adafactor", {"lr": 0.05, "beta2_decay": -0.5, "eps": (1e-20, 1e-2), "d": 1.5}),
    ("Adafactor", {"lr": 0.05, "weight_decay": 0.1, "maximize": True}),
]
MUON_CONFIGS = [
    ("Muon", {"lr": 0.02}),
    ("Muon", {"lr": 0.02, "momentum": 0.8, "nesterov": False, "weight_decay": 0.0}),
    ("Muon", {"lr": 0.01, "adjust_lr_fn": "match_rms_adamw", "ns_steps": 3}),
    ("Muon", {"lr": 0.01, "adjust_lr_fn": "original", "ns_coefficients": (2.0, -1.5, 0.5),
              "eps": 1e-5}),
]


@pytest.mark.parametrize("config", CONFIGS, ids=config_id)
def test_trajectory_matches_torch_float64(config):
    ours = Run("chainrule", config, init=INIT64)
    theirs = Run("torch", config, init=INIT64)
    assert_trajectories_close(ours.steps(25), theirs.steps(25), rtol=1e-10, atol=1e-12)
    np.testing.assert_array_equal(ours.params[3].detach().numpy(), INIT64[3])


@pytest.mark.parametrize("config", CONFIGS, ids=config_id)
def test_trajectory_matches_torch_float32(config):
    ours, theirs = Run("chainrule", config), Run("torch", config)
    assert_trajectories_close(ours.steps(10), theirs.steps(10), rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("foreach", [True, False])
@pytest.mark.parametrize("config", CONFIGS, ids=config_id)
def test_foreach_is_accepted(config, foreach):
    """foreach changes only how torch groups its kernels (and so its rounding), not the rule."""
    name, kwargs = config
    plain = Run("chainrule", config, init=INIT64).steps(10)
    ours = Run("chainrule", (name, {**kwargs, "foreach": foreach}), init=INIT64)
    theirs = Run("torch", (name, {**kwargs, "foreach": foreach}), init=INIT64)
    assert_trajectories_close(ours.steps(10), plain, rtol=0, atol=0)
    assert_trajectories_close(plain, theirs.steps(10), rtol=1e-6, atol=1e-8)


class _NoBFloat16(torch.Tensor):
    """A gradient whose ``.bfloat16()`` keeps float64, so torch's Muon iterates in float64."""

    def bfloat16(self):
        return self.as_subclass(torch.Tensor).clone()


@pytest.fixture
def muon_in_float64(monkeypatch):
    orthogonalize = torch.optim._muon._zeropower_via_newtonschulz
    monkeypatch.setattr(torch.optim._muon, "_zeropower_via_newtonschulz",
                        lambda grad, *args: orthogonalize(grad.as_subclass(_NoBFloat16), *args))


@pytest.mark.parametrize("config", MUON_CONFIGS, ids=config_id)
def test_muon_matches_torchs_algorithm_in_float64(config, muon_in_float64):
    ours = Run("chainrule", config, two_layer, MATRICES)
    theirs = Run("torch", config, two_layer, MATRICES)
    assert_trajectories_close(ours.steps(15), theirs.steps(15), rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("config", MUON_CONFIGS, ids=config_id)
def test_muon_matches_torch_within_bfloat16(config):
    """torch orthogonalises in bfloat16 (8 bits of mantissa); chainrule in the param's dtype."""
    ours = Run("chainrule", config, two_layer, MATRICES)
    theirs = Run("torch", config, two_layer, MATRICES)
    for a, b in zip(ours.steps(3), theirs.steps(3)):
        for x, y, x0 in zip(a, b, MATRICES):
            assert np.linalg.norm((x - x0) - (y - x0)) < 0.2 * np.linalg.norm(y - x0)


@pytest.mark.parametrize("config", CONFIGS + MUON_CONFIGS, ids=config_id)
def test_state_dict_structure_and_values_equal_torchs(config, like_torch):
    problem = (two_layer, MATRICES) if config[0] == "Muon" else (least_squares, INIT64)
    ours, theirs = Run("chainrule", config, *problem), Run("torch", config, *problem)
    ours.steps(3)
    theirs.steps(3)
    if config[0] == "Muon":  # bfloat16 in torch: compare structure only
        def structure(sd):
            return {"param_groups": sd["param_groups"],
                    "state": {k: {n: (str(t.dtype), tuple(t.shape)) for n, t in s.items()}
                              for k, s in sd["state"].items()}}
        assert structure(ours.opt.state_dict()) == structure(theirs.opt.state_dict())
    else:
        like_torch(ours.opt.state_dict(), theirs.opt.state_dict(), rtol=1e-10, atol=1e-12)
    assert [list(s) for s in ours.opt.state.values()] == [
        list(s) for s in theirs.opt.state.values()]


@pytest.mark.parametrize("config", CONFIGS + MUON_CONFIGS, ids=config_id)
def test_state_dict_round_trip_resumes_like_torch(config, muon_in_float64):
    """Loading casts floating state to the params' dtype (ASGD's eta and mu too), as torch."""
    problem = (two_layer, MATRICES) if config[0] == "Muon" else (least_squares, INIT64)
    resumed = {}
    for name in LIBS:
        first = Run(name, config, *problem)
        first.steps(6)
        saved = copy.deepcopy(first.opt.state_dict())
        resumed[name] = Run(name, (config[0], {}), problem[0], values(first.params))
        resumed[name].opt.load_state_dict(saved)
        assert resumed[name].opt.param_groups[0]["lr"] == first.opt.param_groups[0]["lr"]
    dtypes = {name: [{k: str(v.dtype) for k, v in s.items()} for s in run.opt.state.values()]
              for name, run in resumed.items()}
    assert dtypes["chainrule"] == dtypes["torch"]
    assert_trajectories_close(resumed["chainrule"].steps(6), resumed["torch"].steps(6),
                              rtol=1e-10, atol=1e-12)


def convert(state_dict, to_lib):
    """A state_dict with its tensors moved to the other library."""
    return {"param_groups": copy.deepcopy(state_dict["param_groups"]),
            "state": {k: {n: to_lib.tensor(t.numpy()) for n, t in s.items()}
                      for k, s in state_dict["state"].items()}}


@pytest.mark.parametrize("source", ["chainrule", "torch"])
@pytest.mark.parametrize("config", CONFIGS + MUON_CONFIGS, ids=config_id)
def test_state_dicts_load_across_libraries(config, source, muon_in_float64):
    """A state_dict saved by one library, its tensors converted, resumes in the other."""
    problem = (two_layer, MATRICES) if config[0] == "Muon" else (least_squares, INIT64)
    target = "torch" if source == "chainrule" else "chainrule"
    first = Run(source, config, *problem)
    first.steps(5)
    saved = first.opt.state_dict()
    resumed = {}
    for name, state in ((source, copy.deepcopy(saved)),
                        (target, convert(saved, LIBS[target][0]))):
        resumed[name] = Run(name, (config[0], {}), problem[0], values(first.params))
        resumed[name].opt.load_state_dict(state)
    assert_trajectories_close(resumed["chainrule"].steps(5), resumed["torch"].steps(5),
                              rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("config", CONFIGS + MUON_CONFIGS + [("SparseAdam", {})],
                         ids=config_id)
def test_defaults_and_repr_match_torch(config):
    name, kwargs = config
    init = MATRICES if name == "Muon" else INIT
    ours = getattr(optim, name)(make_params(chainrule, init), **kwargs)
    theirs = getattr(torch.optim, name)(make_params(torch, init), **kwargs)
    assert ours.defaults == theirs.defaults
    assert repr(ours) == repr(theirs)


INVALID = [
    ("ASGD", {"lr": -1.0}), ("ASGD", {"weight_decay": -1.0}),
    ("Rprop", {"lr": -1.0}), ("Rprop", {"etas": (1.5, 2.0)}), ("Rprop", {"etas": (0.5, 0.9)}),
    ("Adafactor", {"lr": -1.0}), ("Adafactor", {"beta2_decay": 0.5}),
    ("Adafactor", {"eps": (-1.0, 1e-3)}), ("Adafactor", {"eps": (None, -1.0)}),
    ("Adafactor", {"d": 0.5}), ("Adafactor", {"weight_decay": -1.0}),
    ("Muon", {"lr": -1.0}), ("Muon", {"momentum": -1.0}), ("Muon", {"weight_decay": -1.0}),
    ("Muon", {"adjust_lr_fn": "other"}),
    ("SparseAdam", {"lr": 0.0}), ("SparseAdam", {"eps": 0.0}),
    ("SparseAdam", {"betas": (1.0, 0.9)}), ("SparseAdam", {"betas": (0.9, -0.1)}),
]


@pytest.mark.parametrize("config", INVALID, ids=config_id)
def test_invalid_arguments_raise_like_torch(config):
    name, kwargs = config
    init = MATRICES if name == "Muon" else INIT
    ours = raised(lambda: getattr(optim, name)(make_params(chainrule, init), **kwargs))
    theirs = raised(lambda: getattr(torch.optim, name)(make_params(torch, init), **kwargs))
    assert (type(ours), str(ours)) == (type(theirs), str(theirs))


def test_muon_refuses_other_than_2d_params_like_torch():
    ours = raised(lambda: optim.Muon(make_params(chainrule)))
    theirs = raised(lambda: torch.optim.Muon(make_params(torch)))
    assert (type(ours), str(ours)) == (type(theirs), str(theirs))
    ours = raised(lambda: Run("chainrule", ("Muon", {"ns_steps": 100}), two_layer,
                              MATRICES).steps(1))
    theirs = raised(lambda: Run("torch", ("Muon", {"ns_steps": 100}), two_layer,
                                MATRICES).steps(1))
    assert (type(ours), str(ours)) == (type(theirs), str(theirs))


def test_sparse_adam_refuses_dense_gradients_like_torch():
    ours = raised(lambda: Run("chainrule", ("SparseAdam", {})).steps(1))
    theirs = raised(lambda: Run("torch", ("SparseAdam", {})).steps(1))
    assert (type(ours), str(ours)) == (type(theirs), str(theirs))
    opt = optim.SparseAdam(make_params(chainrule))
    assert opt.step() is None  # no gradient yet: nothing to refuse


# ---- swap_in_optimizer_params_and_state ----------------------------------------------------


def test_swap_in_steps_other_params_and_state_then_restores(like_torch):
    results = {}
    for name, (lib, lib_optim) in LIBS.items():
        params = make_params(lib, INIT64)
        opt = lib_optim.Adam(params, lr=0.1)
        least_squares(lib, params).backward()
        opt.step()
        saved = opt.state_dict()
        live = {n: s["exp_avg"].clone() for n, s in enumerate(opt.state.values())}
        other = make_params(lib, [v + 1 for v in INIT64])
        other_state = copy.deepcopy(saved)
        other_state["param_groups"][0]["lr"] = 0.5
        least_squares(lib, other).backward()
        with lib_optim.swap_in_optimizer_params_and_state(
                opt, {str(i): p for i, p in enumerate(other)}, other_state):
            assert opt.param_groups[0]["params"][0] is other[0]
            assert opt.param_groups[0]["lr"] == 0.5
            opt.step()
        assert opt.param_groups[0]["params"][0] is params[0]
        assert opt.param_groups[0]["lr"] == 0.1
        for n, s in enumerate(opt.state.values()):
            assert (s["exp_avg"] == live[n]).all()
        results[name] = (values(other), other_state["state"])
    like_torch(results["chainrule"][1], results["torch"][1], rtol=1e-10, atol=1e-12)
    assert_trajectories_close([results["chainrule"][0]], [results["torch"][0]], 1e-10, 1e-12)


SWAP_ERRORS = [
    ("no state", lambda sd: sd, False),
    ("not a dict", lambda sd: [], True),
    ("state not a dict", lambda sd: {**sd, "state": []}, True),
    ("entry not a dict", lambda sd: {**sd, "state": {0: 1}}, True),
    ("groups not a list", lambda sd: {**sd, "param_groups": ()}, True),
    ("two groups", lambda sd: {**sd, "param_groups": sd["param_groups"] * 2}, True),
    ("group not a dict", lambda sd: {**sd, "param_groups": [1]}, True),
    ("ids not ints", lambda sd: {**sd, "param_groups": [
        {**sd["param_groups"][0], "params": ["a"] * 4}]}, True),
    ("fewer ids", lambda sd: {**sd, "param_groups": [
        {**sd["param_groups"][0], "params": [0]}]}, True),
    ("other keys", lambda sd: {**sd, "param_groups": [
        {**sd["param_groups"][0], "extra": 1}]}, True),
    ("extra state", lambda sd: {**sd, "state": {**sd["state"], 9: {}}}, True),
]


@pytest.mark.parametrize(("edit", "stepped"), [(e, s) for _, e, s in SWAP_ERRORS],
                         ids=[n for n, _, _ in SWAP_ERRORS])
def test_swap_in_errors_like_torch(edit, stepped):
    errors = []
    for lib, lib_optim in LIBS.values():
        params = make_params(lib, INIT64)
        opt = lib_optim.SGD(params, lr=0.1, momentum=0.9)
        if stepped:
            least_squares(lib, params).backward()
            opt.step()
        sd = edit(opt.state_dict())
        named = {str(i): p for i, p in enumerate(params)}
        with pytest.raises(Exception) as info:  # noqa: PT011  (the type is compared below)
            with lib_optim.swap_in_optimizer_params_and_state(opt, named, sd):
                pass
        errors.append(info.value)
    ours, theirs = errors
    assert (type(ours), str(ours)) == (type(theirs), str(theirs))
