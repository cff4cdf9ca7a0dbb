"""functorch (``import functorch`` under chainrule.as_torch): the deprecated transforms with their
warnings, make_functional(_with_buffers), combine_state_for_ensemble, functionalize and
functorch.experimental, against torch's functorch."""

from __future__ import annotations

import warnings

import functorch
import functorch.experimental
import numpy as np
import pytest
import torch

import chainrule
import chainrule._functorch
import chainrule._functorch.experimental

LIBS = {torch: functorch, chainrule: chainrule._functorch}


def _both(fn):
    """fn(torch, functorch) and fn(chainrule, chainrule's functorch): results (or exception type
    and message) and warnings."""
    out = []
    for lib, ft in LIBS.items():
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            try:
                result = fn(lib, ft)
            except Exception as e:  # noqa: BLE001 - the outcome is what is compared
                result = (type(e).__name__, str(e))
        # the warnings given to the caller (not those of torch's own lazy set-up)
        out.append((_plain(result), [(x.category, str(x.message)) for x in w
                                     if x.filename == __file__]))
    return out


def _plain(x):
    if isinstance(x, (torch.Tensor, chainrule.Tensor)):
        return np.round(x.detach().numpy().astype(np.float64), 5).tolist()
    if isinstance(x, (list, tuple)):
        return [_plain(v) for v in x]
    return x


def _sin_sum(x):
    return x.sin().sum()


X = [0.5, -1.0, 2.0]
TRANSFORMS = {
    "vmap": lambda L, F: F.vmap(lambda v: v * 2)(L.tensor([X, X])),
    "grad": lambda L, F: F.grad(_sin_sum)(L.tensor(X)),
    "grad_and_value": lambda L, F: F.grad_and_value(_sin_sum)(L.tensor(X)),
    "vjp": lambda L, F: F.vjp(L.sin, L.tensor(X))[1](L.ones(3)),
    "jvp": lambda L, F: F.jvp(L.sin, (L.tensor(X),), (L.ones(3),)),
    "jacrev": lambda L, F: F.jacrev(L.sin)(L.tensor(X)),
    "jacfwd": lambda L, F: F.jacfwd(L.sin)(L.tensor(X)),
    "hessian": lambda L, F: F.hessian(_sin_sum)(L.tensor(X)),
    "functionalize": lambda L, F: F.functionalize(lambda v: v.add_(1) * 2)(L.tensor(X)),
    "functionalize bad remove": lambda L, F: F.functionalize(L.sin, remove="views"),
    "make_functional with buffers": lambda L, F: F.make_functional(L.nn.BatchNorm1d(3)),
    "ensemble of none": lambda L, F: F.combine_state_for_ensemble([]),
    "ensemble of mixed modes": lambda L, F: F.combine_state_for_ensemble(
        [L.nn.Linear(1, 1), L.nn.Linear(1, 1).eval()]),
    "ensemble of mixed classes": lambda L, F: F.combine_state_for_ensemble(
        [L.nn.Linear(1, 1), L.nn.Identity()]),
    "experimental.functionalize": lambda L, F: F.experimental.functionalize(L.sin)(L.tensor(X)),
    "experimental.jvp": lambda L, F: F.experimental.jvp(L.sin, (L.tensor(X),), (L.ones(3),)),
    "experimental.jacfwd": lambda L, F: F.experimental.jacfwd(L.sin)(L.tensor(X)),
    "experimental.hessian": lambda L, F: F.experimental.hessian(_sin_sum)(L.tensor(X)),
}


@pytest.mark.parametrize("name", TRANSFORMS)
def test_like_functorch(name):
    theirs, ours = _both(TRANSFORMS[name])
    assert ours == theirs


def _mlp(lib, tied: bool = False):
    lib.manual_seed(0)
    model = lib.nn.Sequential(lib.nn.Linear(3, 4), lib.nn.Tanh(), lib.nn.Linear(4, 3))
    weights = [np.linspace(-1, 1, p.numel()).reshape(p.shape) for p in model.parameters()]
    with lib.no_grad():
        for p, w in zip(model.parameters(), weights):
            p.copy_(lib.tensor(w, dtype=lib.float32))
    if tied:
        model[2].weight = lib.nn.Parameter(model[0].weight.detach().t().clone())
        model.add_module("again", model[2])
    return model


@pytest.mark.parametrize("tied", [False, True])
def test_make_functional_like_functorch(tied):
    def run(lib, ft):
        model = _mlp(lib, tied)
        fmodel, params = ft.make_functional(model)
        x = lib.tensor([[0.1, 0.2, 0.3], [1.0, -1.0, 0.5]])
        out = fmodel(params, x)
        grads = lib.func.grad(lambda p: fmodel(p, x).square().sum())(params)
        moved = fmodel(tuple(p * 2 for p in params), x)
        return (out, grads, moved, list(fmodel.param_names), fmodel.names_map,
                [str(p.device) for p in fmodel.parameters()], params[0] is model[0].weight,
                [p.requires_grad for p in params])

    theirs, ours = _both(run)
    assert ours == theirs


def test_make_functional_disables_tracking_like_functorch():
    def run(lib, ft):
        _, params = ft.make_functional(lib.nn.Linear(2, 2), disable_autograd_tracking=True)
        return [p.requires_grad for p in params]

    theirs, ours = _both(run)
    assert ours == theirs


def test_make_functional_with_buffers_like_functorch():
    def run(lib, ft):
        lib.manual_seed(0)
        model = lib.nn.Sequential(lib.nn.Linear(3, 3), lib.nn.BatchNorm1d(3))
        with lib.no_grad():
            model[0].weight.copy_(lib.eye(3) * 0.5)
        fmodel, params, buffers = ft.make_functional_with_buffers(model)
        x = lib.tensor([[0.1, 0.2, 0.3], [1.0, -1.0, 0.5], [0.0, 2.0, 1.0]])
        out = fmodel(params, buffers, x)
        return (out, buffers, fmodel.param_names, fmodel.buffer_names,
                fmodel.all_names_map, model[1].running_mean)

    theirs, ours = _both(run)
    assert ours == theirs


def test_combine_state_for_ensemble_like_functorch():
    def run(lib, ft):
        models = []
        for i in range(3):
            m = lib.nn.Linear(2, 2)
            with lib.no_grad():
                m.weight.fill_(i + 1.0)
                m.bias.fill_(-i)
            models.append(m)
        fmodel, params, buffers = ft.combine_state_for_ensemble(models)
        x = lib.tensor([[1.0, 2.0], [0.5, -0.5]])
        out = lib.vmap(fmodel, (0, 0, None))(params, buffers, x)
        return out, params, [p.requires_grad for p in params], buffers

    theirs, ours = _both(run)
    assert ours == theirs


def test_functionalize_applies_input_mutations():
    def run(lib, ft):
        x = lib.tensor(X)
        out = ft.experimental.functionalize(lambda v: v.view(-1).add_(1) * 2,
                                            remove="mutations_and_views")(x)
        return out, x

    theirs, ours = _both(run)
    assert ours == theirs


@pytest.mark.parametrize(("chunks", "in_dims"), [(1, 0), (2, 0), (3, 1), (4, (0, None))])
def test_chunk_vmap_like_functorch(chunks, in_dims):
    def run(lib, ft):
        a = lib.arange(20.0).reshape(5, 4)
        b = lib.tensor([1.0, -1.0, 2.0, 0.5])
        if in_dims == 1:
            return ft.experimental.chunk_vmap(lambda v: v * 2, in_dims=1, chunks=chunks)(a)
        return ft.experimental.chunk_vmap(lambda v, w: v * w + 1, in_dims=in_dims,
                                          chunks=chunks)(a, b)

    theirs, ours = _both(run)
    assert ours == theirs


def test_replace_all_batch_norm_modules_like_functorch():
    def run(lib, ft):
        model = lib.nn.Sequential(lib.nn.BatchNorm1d(2), lib.nn.Sequential(lib.nn.BatchNorm2d(3)))
        assert ft.experimental.replace_all_batch_norm_modules_(model) is model
        x = lib.tensor([[1.0, 2.0], [3.0, 5.0]])
        return (model[0](x), [(m.running_mean, m.running_var, m.num_batches_tracked,
                               m.track_running_stats) for m in (model[0], model[1][0])])

    theirs, ours = _both(run)
    assert ours == theirs


def test_names_and_version():
    assert chainrule._functorch.__version__ == chainrule.__version__
    assert set(chainrule._functorch.__all__) <= {n for n in dir(functorch) if n[0] != "_"}
    assert {n for n in dir(functorch.experimental) if n[0] != "_"} == \
        set(chainrule._functorch.experimental.__all__)
    with pytest.raises(RuntimeError, match="torch.fx.symbolic_trace"):
        chainrule._functorch.make_fx(_sin_sum)


def test_torch_func_functionalize_as_torch():
    def run(lib, _):
        def f(v):
            y = v.view(-1)
            y.add_(1)
            return y, {"double": v * 2, "same": v}

        facts = []
        for remove in ("mutations", "mutations_and_views"):
            x = lib.tensor(X)
            y, rest = lib.func.functionalize(f, remove=remove)(x)
            y[0] = 100.0  # outputs own their memory: the input keeps its mutated values
            rest["same"][1] = -5.0
            facts.append((x, y, rest["double"], rest["same"]))
        try:
            lib.func.functionalize(f, remove="views")
        except RuntimeError as err:
            facts.append(str(err))
        return facts

    theirs, ours = _both(run)
    assert ours == theirs


def test_functorch_names_are_torch_funcs():
    experimental = chainrule._functorch.experimental
    assert experimental.replace_all_batch_norm_modules_ is \
        chainrule.func.replace_all_batch_norm_modules_
    assert experimental.functionalize is chainrule.func.functionalize


ALIASING = {
    "view": lambda v: v.view(-1),
    "input": lambda v: v,
    "mutated input": lambda v: v.add_(1),
    "mutated view": lambda v: v.view(-1).add_(1),
    "view of a mutated input": lambda v: (v.add_(1), v.view(-1))[1],
    "an intermediate and its view": lambda v: (lambda z: (z, z[1:]))(v * 2),
}


@pytest.mark.parametrize("remove", ["mutations", "mutations_and_views"])
@pytest.mark.parametrize("case", list(ALIASING))
def test_functionalize_outputs_alias_as_torchs(case, remove):
    def run(lib, _):
        x = lib.ones(3)
        out = lib.func.functionalize(ALIASING[case], remove=remove)(x)
        outs = out if isinstance(out, tuple) else (out,)
        memory = [o.untyped_storage().data_ptr() for o in outs]
        return (x, [m == x.untyped_storage().data_ptr() for m in memory],
                len(set(memory)) == len(memory), outs)

    theirs, ours = _both(run)
    assert ours == theirs
