"""torch.optim's names against torch: the module paths, ``optimizer.required``, the global and
per-optimizer step hooks, the state-dict hooks, the functional forms (``sgd``, ``adam``, ...)
with PyTorch's signatures and updates, and LBFGS without a closure."""

from __future__ import annotations

import importlib
import inspect
import warnings

import numpy as np
import pytest
import torch

import chainrule

MODULES = ["adadelta", "adagrad", "adam", "adamax", "adamw", "asgd", "lbfgs", "lr_scheduler",
           "nadam", "optimizer", "radam", "rmsprop", "rprop", "sgd", "sparse_adam",
           "swa_utils", "_adafactor", "_muon", "_functional"]


def _module(lib, name: str):
    return importlib.import_module(f"{lib.__name__}.optim.{name}")


@pytest.mark.parametrize("name", MODULES)
def test_modules_export_torchs_names(name: str) -> None:
    ours, theirs = _module(chainrule, name), _module(torch, name)
    for exported in getattr(theirs, "__all__", []):
        assert hasattr(ours, exported), exported
    if hasattr(theirs, "__all__"):
        assert sorted(ours.__all__) == sorted(theirs.__all__)


def test_classes_live_where_torch_defines_them() -> None:
    for name in torch.optim.__all__:
        value = getattr(torch.optim, name)
        if isinstance(value, type):
            ours = getattr(chainrule.optim, name)
            assert ours.__module__ == value.__module__.replace("torch", "chainrule", 1), name


def test_required_like_torch() -> None:
    def run(lib):
        optimizer = _module(lib, "optimizer")

        class Custom(lib.optim.Optimizer):
            def __init__(self, params, lr=optimizer.required, momentum=0.0):
                super().__init__(params, dict(lr=lr, momentum=momentum))

            def step(self, closure=None):
                return None

        p = lib.nn.Parameter(lib.ones(2))
        out = [repr(optimizer.required)]
        with pytest.raises(ValueError) as e:
            Custom([p])
        out.append(str(e.value))
        opt = Custom([{"params": [p], "lr": 0.5}])
        out.append(opt.param_groups[0]["lr"])
        return out

    assert run(chainrule) == run(torch)


def _optimizer(lib, name="SGD", **kwargs):
    p = lib.nn.Parameter(lib.tensor([1.0, -2.0]))
    p.grad = lib.tensor([0.5, 0.25])
    return getattr(lib.optim, name)([p], lr=0.1, **kwargs), p


def test_step_hooks_like_torch() -> None:
    def run(lib):
        optimizer = _module(lib, "optimizer")
        log = []
        opt, _ = _optimizer(lib)
        handles = [
            optimizer.register_optimizer_step_pre_hook(
                lambda o, args, kwargs: log.append(("global pre", len(args), sorted(kwargs)))),
            optimizer.register_optimizer_step_post_hook(
                lambda o, args, kwargs: log.append(("global post",))),
            opt.register_step_pre_hook(lambda o, args, kwargs: log.append(("pre",))),
            opt.register_step_post_hook(lambda o, args, kwargs: log.append(("post",))),
            opt.register_step_pre_hook(
                lambda o, args, kwargs: (args, {"closure": lambda: log.append("closure")})),
        ]
        opt.step()
        for handle in handles:
            handle.remove()
        opt.step()
        opt.register_step_pre_hook(lambda o, args, kwargs: 3)
        with pytest.raises(RuntimeError) as e:
            opt.step()
        log.append(str(e.value).split(" must return")[1])
        return log

    assert run(chainrule) == run(torch)


def test_step_hooks_run_for_subclasses_that_define_step() -> None:
    def run(lib):
        log = []

        class Plain(lib.optim.Optimizer):
            def __init__(self, params):
                super().__init__(params, {"lr": 1.0})

            def step(self, closure=None):
                log.append("step")
                return 7

        opt = Plain([lib.nn.Parameter(lib.ones(1))])
        opt.register_step_post_hook(lambda o, args, kwargs: log.append("post"))
        log.append(opt.step())
        log.append(getattr(type(opt).step, "hooked", None))
        return log

    assert run(chainrule) == run(torch)


def test_scheduler_warns_when_stepped_before_a_custom_optimizer() -> None:
    def run(lib):
        class Plain(lib.optim.Optimizer):
            def __init__(self, params):
                super().__init__(params, {"lr": 1.0})

            def step(self, closure=None):
                return None

        out = []
        for optimizer_first in (True, False):
            opt = Plain([lib.nn.Parameter(lib.ones(1))])
            scheduler = lib.optim.lr_scheduler.StepLR(opt, 1)
            with warnings.catch_warnings(record=True) as caught:
                warnings.simplefilter("always")
                if optimizer_first:
                    opt.step()
                scheduler.step()
            out.append([str(w.message)[:40] for w in caught])
        return out

    assert run(chainrule) == run(torch)


def test_state_dict_hooks_like_torch() -> None:
    def run(lib):
        log = []
        opt, _ = _optimizer(lib, "Adam")
        opt.step()
        opt.register_state_dict_pre_hook(lambda o: log.append("pre"))
        opt.register_state_dict_pre_hook(lambda o: log.append("first"), prepend=True)
        opt.register_state_dict_post_hook(lambda o, sd: {**sd, "extra": 1})
        opt.register_state_dict_post_hook(lambda o, sd: log.append(sorted(sd)))
        saved = opt.state_dict()
        log.append(sorted(saved))
        other, _ = _optimizer(lib, "Adam")
        other.register_load_state_dict_pre_hook(
            lambda o, sd: log.append(("load pre", sorted(sd))) or {k: v for k, v in sd.items()
                                                                    if k != "extra"})
        other.register_load_state_dict_post_hook(lambda o: log.append(("load post",
                                                                       len(o.state))))
        other.load_state_dict(saved)
        return log

    assert run(chainrule) == run(torch)


# ---- the functional forms ----------------------------------------------------------------------

_rng = np.random.default_rng(0)
P = [_rng.standard_normal((3, 2)).astype(np.float32), _rng.standard_normal(4).astype(np.float32)]
G = [[_rng.standard_normal(p.shape).astype(np.float32) for p in P] for _ in range(3)]


def _zeros(lib):
    return [lib.zeros(p.shape) for p in P]


# name: (module, the state lists after params and grads, keyword hyperparameters)
FUNCTIONAL = {
    "sgd": ("sgd", lambda lib: [[None, None]],
            dict(weight_decay=0.1, momentum=0.9, lr=0.1, dampening=0.0, nesterov=True,
                 maximize=False)),
    "adam": ("adam", lambda lib: [_zeros(lib), _zeros(lib), _zeros(lib), _steps(lib)],
             dict(amsgrad=True, beta1=0.9, beta2=0.99, lr=0.01, weight_decay=0.1, eps=1e-8,
                  maximize=False)),
    "adamw": ("adamw", lambda lib: [_zeros(lib), _zeros(lib), _zeros(lib), _steps(lib)],
              dict(amsgrad=False, beta1=0.9, beta2=0.99, lr=0.01, weight_decay=0.1, eps=1e-8,
                   maximize=True)),
    "adagrad": ("adagrad", lambda lib: [[lib.full(p.shape, 0.1) for p in P], _steps(lib)],
                dict(lr=0.1, weight_decay=0.01, lr_decay=0.01, eps=1e-10, maximize=False)),
    "adadelta": ("adadelta", lambda lib: [_zeros(lib), _zeros(lib), _steps(lib)],
                 dict(lr=1.0, rho=0.9, eps=1e-6, weight_decay=0.01, maximize=False)),
    "adamax": ("adamax", lambda lib: [_zeros(lib), _zeros(lib), _steps(lib)],
               dict(eps=1e-8, beta1=0.9, beta2=0.999, lr=0.01, weight_decay=0.01)),
    "asgd": ("asgd", lambda lib: [_zeros(lib), [lib.tensor(1.0) for _ in P],
                                  [lib.tensor(0.01) for _ in P], _steps(lib)],
             dict(lambd=1e-4, lr=0.01, t0=1.0, alpha=0.75, weight_decay=0.01)),
    "nadam": ("nadam", lambda lib: [_zeros(lib), _zeros(lib), [lib.tensor(1.0) for _ in P],
                                    _steps(lib)],
              dict(beta1=0.9, beta2=0.999, lr=0.01, weight_decay=0.01, momentum_decay=4e-3,
                   eps=1e-8)),
    "radam": ("radam", lambda lib: [_zeros(lib), _zeros(lib), _steps(lib)],
              dict(beta1=0.9, beta2=0.999, lr=0.01, weight_decay=0.01, eps=1e-8)),
    "rmsprop": ("rmsprop", lambda lib: [_zeros(lib), _zeros(lib), _zeros(lib), _steps(lib)],
                dict(lr=0.01, alpha=0.99, eps=1e-8, weight_decay=0.01, momentum=0.9,
                     centered=True)),
    "rprop": ("rprop", lambda lib: [_zeros(lib), [lib.full(p.shape, 0.01) for p in P],
                                    _steps(lib)],
              dict(step_size_min=1e-6, step_size_max=50.0, etaminus=0.5, etaplus=1.2)),
    "adafactor": ("_adafactor", lambda lib: [[lib.zeros(3, 1), None], [lib.zeros(1, 2), None],
                                             [None, lib.zeros(4)], _steps(lib)],
                  dict(d=1.0, lr=0.01, beta2_decay=-0.8, weight_decay=0.0, eps1=None, eps2=1e-3,
                       maximize=False)),
}


def _steps(lib):
    return [lib.tensor(0.0) for _ in P]


def _as_numpy(value):
    if value is None:
        return None
    if isinstance(value, list):
        return [_as_numpy(v) for v in value]
    return value.detach().numpy().copy()


def _run_functional(lib, name: str):
    module, make_state, hyper = FUNCTIONAL[name]
    fn = getattr(_module(lib, module), name)
    params = [lib.tensor(p.copy()) for p in P]
    state = make_state(lib)
    for grads in G:
        fn(params, [lib.tensor(g) for g in grads], *state, **hyper)
    return _as_numpy(params), _as_numpy(state)


@pytest.mark.parametrize("name", FUNCTIONAL)
def test_functional_form_signature_like_torch(name: str) -> None:
    module = FUNCTIONAL[name][0]
    ours = inspect.signature(getattr(_module(chainrule, module), name))
    theirs = inspect.signature(getattr(_module(torch, module), name))
    assert [(p.name, p.kind, p.default) for p in ours.parameters.values()] == \
        [(p.name, p.kind, p.default) for p in theirs.parameters.values()]


@pytest.mark.parametrize("name", FUNCTIONAL)
def test_functional_form_updates_like_torch(name: str) -> None:
    (our_params, our_state), (their_params, their_state) = (_run_functional(chainrule, name),
                                                            _run_functional(torch, name))
    for ours, theirs in zip(our_params, their_params):
        np.testing.assert_allclose(ours, theirs, rtol=1e-5, atol=1e-6)
    for ours, theirs in zip(our_state, their_state):
        for o, t in zip(ours, theirs):
            if t is None:
                assert o is None
            else:
                np.testing.assert_allclose(o, t, rtol=1e-5, atol=1e-6)


def test_functional_forms_in_optim_functional() -> None:
    names = [n for n in dir(torch.optim._functional) if n in FUNCTIONAL]
    assert names
    for name in names:
        assert getattr(chainrule.optim._functional, name) is \
            getattr(_module(chainrule, FUNCTIONAL[name][0]), name)


def test_the_class_step_is_the_functional_update() -> None:
    params = [chainrule.nn.Parameter(chainrule.tensor(p.copy())) for p in P]
    opt = chainrule.optim.Adam(params, lr=0.01, betas=(0.9, 0.99), weight_decay=0.1,
                               amsgrad=True)
    for grads in G:
        for p, g in zip(params, grads):
            p.grad = chainrule.tensor(g)
        opt.step()
    functional, state = _run_functional(chainrule, "adam")
    for p, want in zip(params, functional):
        np.testing.assert_array_equal(p.detach().numpy(), want)
    assert [opt.state[p]["step"].item() for p in params] == [3.0, 3.0] == \
        [s.item() for s in state[3]]


def test_functional_forms_refuse_plain_steps_like_torch() -> None:
    for lib in (chainrule, torch):
        p = lib.ones(2)
        with pytest.raises(RuntimeError, match="`state_steps` argument must contain a list of "
                                               "singleton tensors"):
            _module(lib, "adam").adam([p], [p], [lib.zeros(2)], [lib.zeros(2)], [], [1],
                                      amsgrad=False, beta1=0.9, beta2=0.99, lr=0.1,
                                      weight_decay=0.0, eps=1e-8, maximize=False)


def test_lbfgs_step_needs_a_closure_like_torch() -> None:
    def run(lib):
        opt = lib.optim.LBFGS([lib.nn.Parameter(lib.ones(2))])
        out = []
        for args in ((), (None,)):
            with pytest.raises(TypeError) as e:
                opt.step(*args)
            out.append(str(e.value))
        return out

    assert run(chainrule) == run(torch)
