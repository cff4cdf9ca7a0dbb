"""functional_call and stack_module_state against torch.func."""

from __future__ import annotations

import numpy as np
import pytest

from .conftest import randn


def _seeded(lib, module, seed: int):
    rng = np.random.default_rng(seed)
    with lib.no_grad():
        for p in module.parameters():
            p.copy_(lib.tensor(rng.uniform(-0.5, 0.5, tuple(p.shape))))
    return module


def _net(lib, seed=0):
    nn = lib.nn
    return _seeded(lib, nn.Sequential(nn.Linear(3, 4), nn.Tanh(), nn.Linear(4, 2)).double(), seed)


def test_functional_call_replaces_the_given_parameters(same):
    def program(lib, x, w):
        net = _net(lib)
        out = lib.func.functional_call(net, {"0.weight": w}, (x,))
        return out, net(x), net[0].weight  # the module keeps its own weight

    same(program, *randn(0, (5, 3), (4, 3)))


def test_functional_call_single_argument_and_kwargs(same):
    def program(lib, x, y):
        bil = _seeded(lib, lib.nn.Bilinear(3, 3, 2).double(), 1)
        params = {k: v * 2 for k, v in bil.named_parameters()}
        return (lib.func.functional_call(bil, params, (x,), {"input2": y}),
                lib.func.functional_call(lib.nn.Tanh(), {}, x))

    same(program, *randn(1, (4, 3), (4, 3)))


def test_functional_call_tuple_of_dicts_and_buffers_updated_in_place(same):
    def program(lib, x, w, b, mean, var):
        bn = lib.nn.BatchNorm1d(3).double()
        params = {"weight": w, "bias": b}
        buffers = {"running_mean": mean.clone(), "running_var": var.abs() + 0.5,
                   "num_batches_tracked": lib.tensor(0)}
        out = lib.func.functional_call(bn, (params, buffers), (x,))
        return out, buffers, bn.running_mean  # the module's own buffers untouched

    same(program, *randn(2, (6, 3), (3,), (3,), (3,), (3,)))


def test_grad_through_functional_call(same):
    def program(lib, x, t):
        net = _net(lib)
        params = {k: v.detach() for k, v in net.named_parameters()}

        def loss(params):
            return (lib.func.functional_call(net, params, (x,)) - t).pow(2).mean()

        return lib.func.grad(loss)(params)

    same(program, *randn(3, (5, 3), (5, 2)))


def test_functional_call_tied_weights(same):
    def program(lib, x, w, w2):
        nn = lib.nn

        class Tied(nn.Module):
            def __init__(self):
                super().__init__()
                self.a = nn.Linear(3, 3, bias=False).double()
                self.b = nn.Linear(3, 3, bias=False).double()
                self.b.weight = self.a.weight

            def forward(self, x):
                return self.b(self.a(x))

        m = _seeded(lib, Tied(), 11)
        F = lib.func
        return (F.functional_call(m, {"a.weight": w}, (x,)),
                F.functional_call(m, {"a.weight": w}, (x,), tie_weights=False),
                F.functional_call(m, {"a.weight": w, "b.weight": w}, (x,)),
                F.functional_call(m, {"a.weight": w, "b.weight": w2}, (x,), tie_weights=False))

    same(program, *randn(4, (2, 3), (3, 3), (3, 3)))


def test_functional_call_tied_weights_given_two_values(same_error):
    def program(lib, x, w, w2):
        nn = lib.nn
        m = nn.Sequential(nn.Linear(3, 3, bias=False), nn.Linear(3, 3, bias=False)).double()
        m[1].weight = m[0].weight
        return lib.func.functional_call(m, {"0.weight": w, "1.weight": w2}, (x,))

    same_error(program, *randn(5, (2, 3), (3, 3), (3, 3)))


def test_functional_call_strict_missing_keys(same_error):
    def program(lib, x, w):
        return lib.func.functional_call(_net(lib), {"0.weight": w}, (x,), strict=True)

    same_error(program, *randn(6, (2, 3), (4, 3)))


def test_functional_call_restores_the_module_after_an_error(same):
    def program(lib, x, w):
        net = _net(lib)
        with pytest.raises(RuntimeError):
            lib.func.functional_call(net, {"0.weight": w[:, :2]}, (x,))
        return net(x), net[0].weight

    same(program, *randn(7, (2, 3), (4, 3)))


def test_stack_module_state(same):
    def program(lib, x):
        models = [_net(lib, seed) for seed in range(3)]
        for m in models:
            m.register_buffer("scale", lib.ones(2, dtype=lib.float64) * 2)
        params, buffers = lib.func.stack_module_state(models)
        return params, buffers, [p.is_leaf for p in params.values()]

    same(program, *randn(8, (2,)))


def test_stack_module_state_of_frozen_parameters(same):
    def program(lib, x):
        models = [_net(lib, seed).requires_grad_(False) for seed in range(2)]
        return lib.func.stack_module_state(models)[0]

    same(program, *randn(9, (2,)))


def test_vmap_over_stacked_models_and_grad_of_their_sum(same):
    def program(lib, x):
        models = [_net(lib, seed) for seed in range(3)]
        params, buffers = lib.func.stack_module_state(models)

        def fmodel(params, buffers, x):
            return lib.func.functional_call(models[0], (params, buffers), (x,))

        out = lib.func.vmap(fmodel, in_dims=(0, 0, None))(params, buffers, x)
        out.pow(2).sum().backward()
        return out, {k: v.grad for k, v in params.items()}

    same(program, *randn(10, (4, 3)))


def test_functional_call_strict_counts_tied_names_as_given(same):
    def program(lib, x, w):
        nn = lib.nn
        m = nn.Sequential(nn.Linear(3, 3, bias=False), nn.Linear(3, 3, bias=False)).double()
        m[1].weight = m[0].weight
        return lib.func.functional_call(m, {"0.weight": w}, (x,), strict=True)

    same(program, *randn(12, (2, 3), (3, 3)))


def test_functional_call_reflects_a_reassigned_buffer_in_the_dict(same):
    def program(lib, x, c):
        nn = lib.nn

        class Counter(nn.Module):
            def __init__(self):
                super().__init__()
                self.register_buffer("total", lib.zeros(3, dtype=lib.float64))

            def forward(self, x):
                self.total = self.total + x.sum(0)  # a new tensor, not an in-place update
                return x * 2

        m = Counter()
        state = {"total": c}
        out = lib.func.functional_call(m, state, (x,))
        return out, state, m.total

    same(program, *randn(13, (4, 3), (3,)))
