"""chainrule.optim against torch.optim: trajectories, groups, zero_grad, state_dict, errors."""

from __future__ import annotations

import copy

import numpy as np
import pytest
import torch

import chainrule
from chainrule import optim

LIBS = {"chainrule": (chainrule, optim), "torch": (torch, torch.optim)}
RTOL, ATOL = 1e-5, 1e-6

_rng = np.random.default_rng(0)
X = _rng.standard_normal((8, 4)).astype(np.float32)
Y = _rng.standard_normal((8, 3)).astype(np.float32)
INIT = [
    _rng.standard_normal((4, 3)).astype(np.float32) * 0.5,  # W
    _rng.standard_normal(3).astype(np.float32) * 0.1,  # b
    np.array([1.5], dtype=np.float32),  # output scale
    _rng.standard_normal(2).astype(np.float32),  # not in the loss: its grad stays None
]


def least_squares(lib, params):
    """A small nonlinear least-squares loss of the first three parameters."""
    w, b, scale, _ = params
    dtype = w.detach().numpy().dtype
    pred = lib.tanh(lib.tensor(X.astype(dtype)) @ w + b) * scale
    return ((pred - lib.tensor(Y.astype(dtype))) ** 2).mean()


def rosenbrock(lib, params):
    """Rosenbrock's valley in the first two entries of b, plus the least-squares loss."""
    b = params[1]
    return (1 - b[0]) ** 2 + 100 * (b[1] - b[0] ** 2) ** 2 + least_squares(lib, params)


CONFIGS = [
    ("SGD", {"lr": 0.1}),
    ("SGD", {"lr": 0.1, "momentum": 0.9}),
    ("SGD", {"lr": 0.1, "momentum": 0.9, "dampening": 0.5}),
    ("SGD", {"lr": 0.1, "momentum": 0.9, "nesterov": True, "weight_decay": 0.1}),
    ("SGD", {"lr": 0.05, "weight_decay": 0.1, "maximize": True}),
    ("Adam", {}),
    ("Adam", {"lr": 0.05, "betas": (0.8, 0.99), "eps": 1e-6}),
    ("Adam", {"lr": 0.05, "amsgrad": True, "weight_decay": 0.1}),
    ("Adam", {"lr": 0.05, "weight_decay": 0.1, "decoupled_weight_decay": True}),
    ("Adam", {"lr": 0.05, "maximize": True}),
    ("AdamW", {"lr": 0.05}),
    ("AdamW", {"lr": 0.05, "amsgrad": True, "weight_decay": 0.1, "maximize": True}),
    ("RMSprop", {}),
    ("RMSprop", {"lr": 0.01, "momentum": 0.9}),
    ("RMSprop", {"lr": 0.01, "centered": True, "alpha": 0.9}),
    ("RMSprop", {"lr": 0.01, "centered": True, "momentum": 0.5, "weight_decay": 0.1,
                 "maximize": True}),
    ("Adagrad", {"lr": 0.1}),
    ("Adagrad", {"lr": 0.1, "lr_decay": 0.1, "initial_accumulator_value": 0.5}),
    ("Adagrad", {"lr": 0.1, "weight_decay": 0.1, "eps": 1e-6, "maximize": True}),
    ("Adadelta", {}),
    ("Adadelta", {"lr": 0.5, "rho": 0.8, "weight_decay": 0.1, "maximize": True}),
    ("Adamax", {"lr": 0.05}),
    ("Adamax", {"lr": 0.05, "betas": (0.8, 0.9), "weight_decay": 0.1, "maximize": True}),
    ("NAdam", {"lr": 0.05}),
    ("NAdam", {"lr": 0.05, "momentum_decay": 0.01, "weight_decay": 0.1}),
    ("NAdam", {"lr": 0.05, "weight_decay": 0.1, "decoupled_weight_decay": True,
               "maximize": True}),
    ("RAdam", {"lr": 0.05}),
    ("RAdam", {"lr": 0.05, "weight_decay": 0.1}),
    ("RAdam", {"lr": 0.05, "weight_decay": 0.1, "decoupled_weight_decay": True,
               "maximize": True}),
]
LBFGS_CONFIGS = [
    ("LBFGS", {"max_iter": 4}),
    ("LBFGS", {"lr": 0.5, "max_iter": 3, "history_size": 2}),
    ("LBFGS", {"max_iter": 5, "line_search_fn": "strong_wolfe"}),
    ("LBFGS", {"max_iter": 6, "history_size": 3, "line_search_fn": "strong_wolfe",
               "tolerance_grad": 1e-4, "tolerance_change": 1e-6}),
]
ALL_CONFIGS = CONFIGS + LBFGS_CONFIGS


def config_id(config) -> str:
    name, kwargs = config
    return name + "".join(f"-{k}={v}" for k, v in kwargs.items())


def make_params(lib, values=INIT):
    """Leaf tensors holding copies of ``values``."""
    return [lib.tensor(v.copy(), requires_grad=True) for v in values]


def values(params) -> list[np.ndarray]:
    """Copies of the parameters' current values."""
    return [p.detach().numpy().copy() for p in params]


class Run:
    """One optimizer on one problem in one library, stepped and recorded."""

    def __init__(self, lib_name: str, config, loss_fn=least_squares, init=INIT) -> None:
        self.lib, self.optim = LIBS[lib_name]
        name, kwargs = config
        self.loss_fn = loss_fn
        self.params = make_params(self.lib, init)
        self.opt = getattr(self.optim, name)(self.params, **kwargs)
        self.losses: list[float] = []

    def closure(self):
        self.opt.zero_grad()
        loss = self.loss_fn(self.lib, self.params)
        loss.backward()
        return loss

    def steps(self, n: int) -> list[list[np.ndarray]]:
        """Run n steps (with a closure, for every optimizer); values after each step."""
        trajectory = []
        for _ in range(n):
            self.losses.append(self.opt.step(self.closure).item())
            trajectory.append(values(self.params))
        return trajectory


def assert_trajectories_close(ours, theirs, rtol: float = RTOL, atol: float = ATOL) -> None:
    """Every parameter equal to torch's after every step."""
    for i, (step_ours, step_theirs) in enumerate(zip(ours, theirs, strict=True)):
        for j, (a, b) in enumerate(zip(step_ours, step_theirs, strict=True)):
            np.testing.assert_allclose(a, b, rtol=rtol, atol=atol,
                                       err_msg=f"step {i + 1}, parameter {j}")


# ---- trajectories --------------------------------------------------------------------------


@pytest.mark.parametrize("config", CONFIGS, ids=config_id)
def test_trajectory_matches_torch(config):
    ours = Run("chainrule", config)
    theirs = Run("torch", config)
    assert_trajectories_close(ours.steps(20), theirs.steps(20))
    np.testing.assert_allclose(ours.losses, theirs.losses, rtol=RTOL, atol=ATOL)
    np.testing.assert_array_equal(ours.params[3].detach().numpy(), INIT[3])  # grad None: skipped


# L-BFGS amplifies rounding: its curvature pairs and line search turn float32's last-bit
# differences (in gradients and dot products) into visible ones after a few steps. So it is
# compared for a few steps in float32, and for longer, on the harder problem too, in float64.
LBFGS_CASES = [
    pytest.param(np.float32, least_squares, 3, RTOL, ATOL, id="float32-least_squares"),
    pytest.param(np.float64, least_squares, 5, 1e-10, 1e-10, id="float64-least_squares"),
    pytest.param(np.float64, rosenbrock, 5, 1e-8, 1e-8, id="float64-rosenbrock"),
]


@pytest.mark.parametrize(("dtype", "loss_fn", "steps", "rtol", "atol"), LBFGS_CASES)
@pytest.mark.parametrize("config", LBFGS_CONFIGS, ids=config_id)
def test_lbfgs_trajectory_matches_torch(config, dtype, loss_fn, steps, rtol, atol):
    init = [v.astype(dtype) for v in INIT]
    ours = Run("chainrule", config, loss_fn, init)
    theirs = Run("torch", config, loss_fn, init)
    assert_trajectories_close(ours.steps(steps), theirs.steps(steps), rtol, atol)
    np.testing.assert_allclose(ours.losses, theirs.losses, rtol=rtol, atol=atol)
    for key in ("func_evals", "n_iter"):
        assert ours.opt.state[ours.params[0]][key] == theirs.opt.state[theirs.params[0]][key]


def test_step_without_closure_returns_none():
    run = Run("chainrule", ("Adam", {}))
    run.closure()
    assert run.opt.step() is None


def test_lbfgs_needs_a_closure_and_one_group():
    params = make_params(chainrule)
    with pytest.raises(TypeError, match="missing 1 required positional argument: 'closure'"):
        optim.LBFGS(params).step()  # as in PyTorch, where closure has no default
    with pytest.raises(ValueError, match="per-parameter options"):
        optim.LBFGS([{"params": params[:2]}, {"params": params[2:]}])
    with pytest.raises(RuntimeError, match="only 'strong_wolfe' is supported"):
        Run("chainrule", ("LBFGS", {"line_search_fn": "backtracking"})).steps(1)


# ---- parameter groups ---------------------------------------------------------------------


@pytest.mark.parametrize("name", ["SGD", "Adam", "RMSprop", "Adagrad"])
def test_param_groups_with_their_own_options(name):
    def build(lib_name):
        lib, lib_optim = LIBS[lib_name]
        params = make_params(lib)
        groups = [{"params": params[:2], "lr": 0.05}, {"params": params[2:], "weight_decay": 0.1}]
        opt = getattr(lib_optim, name)(groups, lr=0.01)
        opt.add_param_group({"params": lib.tensor([0.5, -0.5], requires_grad=True), "lr": 0.2})
        return lib, params, opt

    runs = {lib_name: build(lib_name) for lib_name in LIBS}
    trajectories = {}
    for lib_name, (lib, params, opt) in runs.items():
        extra = opt.param_groups[2]["params"][0]
        trajectories[lib_name] = []
        for _ in range(10):
            opt.zero_grad()
            (least_squares(lib, params) + (extra * extra).sum()).backward()
            opt.step()
            trajectories[lib_name].append(values(params + [extra]))
    assert_trajectories_close(trajectories["chainrule"], trajectories["torch"])
    ours, theirs = (runs[k][2].param_groups for k in ("chainrule", "torch"))
    assert [{k: v for k, v in g.items() if k != "params"} for g in ours] == [
        {k: v for k, v in g.items() if k != "params"} for g in theirs]


def test_named_parameters_are_accepted():
    def build(lib_name):
        lib, lib_optim = LIBS[lib_name]
        params = make_params(lib)
        return lib_optim.SGD([("w", params[0]), ("b", params[1])], lr=0.1)

    ours, theirs = build("chainrule"), build("torch")
    assert ours.param_groups[0]["param_names"] == ["w", "b"]
    assert ours.state_dict()["param_groups"] == theirs.state_dict()["param_groups"]


@pytest.mark.parametrize("config", ALL_CONFIGS, ids=config_id)
def test_defaults_and_repr_match_torch(config):
    name, kwargs = config
    ours = getattr(optim, name)(make_params(chainrule), **kwargs)
    theirs = getattr(torch.optim, name)(make_params(torch), **kwargs)
    assert ours.defaults == theirs.defaults
    assert repr(ours) == repr(theirs)


# ---- zero_grad -----------------------------------------------------------------------------


@pytest.mark.parametrize("set_to_none", [True, False])
def test_zero_grad(set_to_none):
    results = {}
    for lib_name, (lib, lib_optim) in LIBS.items():
        params = make_params(lib)
        opt = lib_optim.SGD(params, lr=0.1)
        least_squares(lib, params).backward()
        grad = params[0].grad
        opt.zero_grad(set_to_none=set_to_none)
        results[lib_name] = [None if p.grad is None else p.grad.numpy().tolist() for p in params]
        if not set_to_none:
            assert params[0].grad is grad  # zeroed in place
            assert not grad.requires_grad
    assert results["chainrule"] == results["torch"]
    assert opt.zero_grad() is None


def test_zero_grad_detaches_a_grad_with_history():
    w = chainrule.tensor([1.0, 2.0], requires_grad=True)
    (w * w).sum().backward(create_graph=True)
    assert w.grad.grad_fn is not None
    optim.SGD([w]).zero_grad(set_to_none=False)
    assert w.grad.grad_fn is None and w.grad.tolist() == [0.0, 0.0]


# ---- state_dict ----------------------------------------------------------------------------


@pytest.mark.parametrize("config", ALL_CONFIGS, ids=config_id)
def test_state_dict_round_trip_continues_the_trajectory(config):
    steps = 3 if config[0] == "LBFGS" else 10
    whole = Run("chainrule", config).steps(2 * steps)

    first = Run("chainrule", config)
    first.steps(steps)
    saved = copy.deepcopy(first.opt.state_dict())
    name, kwargs = config
    resumed = Run("chainrule", (name, {}), init=values(first.params))
    resumed.opt.load_state_dict(saved)
    assert_trajectories_close(resumed.steps(steps), whole[steps:])
    assert resumed.opt.param_groups[0]["lr"] == first.opt.param_groups[0]["lr"]


@pytest.mark.parametrize("config", CONFIGS, ids=config_id)
def test_state_dict_equals_torchs(config, like_torch):
    ours, theirs = Run("chainrule", config), Run("torch", config)
    ours.steps(3)
    theirs.steps(3)
    like_torch(ours.opt.state_dict(), theirs.opt.state_dict(), rtol=RTOL, atol=ATOL)


@pytest.mark.parametrize("config", LBFGS_CONFIGS, ids=config_id)
def test_lbfgs_state_dict_structure_equals_torchs(config):
    def structure(value):
        if isinstance(value, dict):
            return {k: structure(v) for k, v in value.items()}
        if isinstance(value, list):
            return [structure(v) for v in value]
        if isinstance(value, (chainrule.Tensor, torch.Tensor)):
            return ("tensor", str(value.dtype), tuple(value.shape))
        return type(value).__name__

    ours, theirs = Run("chainrule", config), Run("torch", config)
    ours.steps(2)
    theirs.steps(2)
    assert structure(ours.opt.state_dict()) == structure(theirs.opt.state_dict())


def test_load_state_dict_keeps_params_and_checks_sizes():
    params = make_params(chainrule)
    opt = optim.Adam(params, lr=0.1)
    saved = optim.Adam([{"params": params[:2]}, {"params": params[2:]}]).state_dict()
    with pytest.raises(ValueError, match="different number of parameter groups"):
        opt.load_state_dict(saved)
    saved = optim.Adam(params[:2]).state_dict()
    with pytest.raises(ValueError, match="doesn't match the size of optimizer's group"):
        opt.load_state_dict(saved)
    opt.load_state_dict(optim.Adam(make_params(chainrule), lr=0.5).state_dict())
    assert opt.param_groups[0]["params"][0] is params[0] and opt.param_groups[0]["lr"] == 0.5


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_loaded_state_is_shared_with_the_saved_dict_like_torch(dtype):
    """As PyTorch, a state tensor already in the parameter's dtype is taken, not copied."""

    def shared(lib):
        run = Run(lib.__name__, ("SGD", {"lr": 0.1, "momentum": 0.9}))
        run.steps(2)
        saved = run.opt.state_dict()
        other = lib.optim.SGD([p.to(getattr(lib, dtype)).detach().requires_grad_()
                               for p in make_params(lib)], lr=0.1, momentum=0.9)
        other.load_state_dict(saved)
        buffer = other.state[other.param_groups[0]["params"][0]]["momentum_buffer"]
        return buffer is saved["state"][0]["momentum_buffer"], str(buffer.dtype)

    assert shared(chainrule) == shared(torch)


# ---- invalid arguments ---------------------------------------------------------------------

INVALID = [
    ("SGD", {"lr": -1.0}), ("SGD", {"momentum": -0.5}), ("SGD", {"weight_decay": -1}),
    ("SGD", {"nesterov": True}), ("SGD", {"momentum": 0.9, "nesterov": True, "dampening": 0.1}),
    ("SGD", {"foreach": True, "fused": True}),
    ("Adam", {"lr": -1.0}), ("Adam", {"eps": -1.0}), ("Adam", {"betas": (1.0, 0.9)}),
    ("Adam", {"betas": (0.9, -0.1)}), ("Adam", {"weight_decay": -1.0}),
    ("Adam", {"lr": float("nan")}), ("AdamW", {"betas": (0.9, 1.0)}),
    ("AdamW", {"weight_decay": -0.1}),
    ("RMSprop", {"lr": -1.0}), ("RMSprop", {"eps": -1.0}), ("RMSprop", {"momentum": -1.0}),
    ("RMSprop", {"weight_decay": -1.0}), ("RMSprop", {"alpha": -1.0}),
    ("Adagrad", {"lr": -1.0}), ("Adagrad", {"lr_decay": -1.0}),
    ("Adagrad", {"weight_decay": -1.0}), ("Adagrad", {"initial_accumulator_value": -1.0}),
    ("Adagrad", {"eps": -1.0}),
    ("Adadelta", {"lr": -1.0}), ("Adadelta", {"rho": 1.5}), ("Adadelta", {"eps": -1.0}),
    ("Adadelta", {"weight_decay": -1.0}),
    ("Adamax", {"lr": -1.0}), ("Adamax", {"eps": -1.0}), ("Adamax", {"betas": (1.0, 0.9)}),
    ("Adamax", {"weight_decay": -1.0}),
    ("NAdam", {"lr": -1.0}), ("NAdam", {"betas": (0.9, 1.0)}),
    ("NAdam", {"momentum_decay": -1.0}),
    ("RAdam", {"lr": -1.0}), ("RAdam", {"eps": -1.0}), ("RAdam", {"weight_decay": -1.0}),
    ("LBFGS", {"lr": -1.0}),
]


def raised(fn):
    """The exception ``fn()`` raises."""
    with pytest.raises(Exception) as info:
        fn()
    return info.value


@pytest.mark.parametrize("config", INVALID, ids=config_id)
def test_invalid_arguments_raise_like_torch(config):
    name, kwargs = config
    ours = raised(lambda: getattr(optim, name)(make_params(chainrule), **kwargs))
    theirs = raised(lambda: getattr(torch.optim, name)(make_params(torch), **kwargs))
    assert type(ours) is type(theirs)
    assert str(ours) == str(theirs)


INVALID_PARAMS = [
    ("empty list", lambda lib: []),
    ("a tensor", lambda lib: lib.zeros(2, requires_grad=True)),
    ("a list", lambda lib: [[]]),
    ("a float", lambda lib: [1.0]),
    ("a non-leaf", lambda lib: [lib.zeros(2, requires_grad=True) * 2]),
    ("a set", lambda lib: [{"params": {lib.zeros(2, requires_grad=True)}}]),
    ("shared params", lambda lib: [{"params": [p := lib.zeros(2, requires_grad=True)]},
                                   {"params": [p]}]),
    ("some names", lambda lib: [("a", lib.zeros(2, requires_grad=True)),
                                lib.zeros(2, requires_grad=True)]),
    ("a group without names", lambda lib: [
        {"params": [("a", lib.zeros(2, requires_grad=True))]},
        {"params": [lib.zeros(2, requires_grad=True)]}]),
]


@pytest.mark.parametrize("make", [m for _, m in INVALID_PARAMS], ids=[n for n, _ in INVALID_PARAMS])
def test_invalid_params_raise_like_torch(make):
    ours = raised(lambda: optim.SGD(make(chainrule)))
    theirs = raised(lambda: torch.optim.SGD(make(torch)))
    assert type(ours) is type(theirs)
    assert str(ours) == str(theirs)


def test_add_param_group_needs_a_dict_and_warns_on_duplicates():
    params = make_params(chainrule)
    ours = raised(lambda: optim.SGD(params[:1]).add_param_group(params[1:]))
    theirs = raised(lambda: torch.optim.SGD(make_params(torch)[:1]).add_param_group([]))
    assert (type(ours), str(ours)) == (type(theirs), str(theirs))
    with pytest.warns(UserWarning, match="duplicate parameters"):
        optim.SGD([params[0], params[0]])


def test_differentiable_is_not_supported():
    with pytest.raises(NotImplementedError, match="differentiable"):
        optim.Adam(make_params(chainrule), differentiable=True)
