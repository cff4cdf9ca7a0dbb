"""No leaks: graphs, saved values and the create_graph cycle are freed; training loops, hooks,
checkpointing, anomaly mode, forward mode and the transforms leave no objects behind.

Freeing is checked with weak references (against torch where it frees the same way) and by
counting the objects the garbage collector tracks, by type, across many steps.
"""

import collections
import gc
import warnings
import weakref

import numpy as np
import pytest
import torch

import chainrule as cr
from chainrule.autograd.function import BackwardCFunction
from chainrule.autograd.graph import OpNode
from chainrule.utils.checkpoint import checkpoint

BOTH = pytest.mark.parametrize("m", [torch, cr], ids=["torch", "chainrule"])


@pytest.fixture
def no_gc():
    """Reference counting only: what is freed here is freed without waiting for a collection."""
    gc.collect()
    gc.disable()
    yield
    gc.enable()


class _Probe:
    pass


def node_ref(node):
    """A weak reference that dies with ``node`` (torch's nodes take no weak reference: this is
    one to an object only the node's metadata holds)."""
    probe = _Probe()
    node.metadata["probe"] = probe
    return weakref.ref(probe)


def leaf(m, *shape):
    rng = np.random.default_rng(0)
    return m.tensor(rng.standard_normal(shape or (4,)), requires_grad=True)


# ---- weak references ---------------------------------------------------------------------------


@BOTH
def test_intermediates_and_nodes_die_with_the_outputs(m, no_gc):
    x = leaf(m)
    h = x * 2
    y = h.sin()
    refs = [weakref.ref(h), node_ref(y.grad_fn), node_ref(h.grad_fn)]
    del h
    assert all(r() is not None for r in refs)  # y's node saves h
    del y
    assert [r() for r in refs] == [None, None, None]


@BOTH
def test_backward_releases_saved_values(m, no_gc):
    x = leaf(m)
    h = x * 2
    y = h.sin()
    ref = weakref.ref(h)
    del h
    y.sum().backward()
    assert ref() is None  # y and its node are alive, but the node no longer holds h
    with pytest.raises(RuntimeError, match="Trying to backward through the graph a second time"):
        _ = y.grad_fn._saved_self


@BOTH
def test_retain_graph_keeps_saved_values_until_the_last_backward(m, no_gc):
    x = leaf(m)
    h = x * 2
    y = h.sin()
    ref = weakref.ref(h)
    del h
    y.sum().backward(retain_graph=True)
    assert ref() is not None
    y.sum().backward()
    assert ref() is None
    np.testing.assert_allclose(x.grad.detach().numpy(),
                               4 * np.cos(2 * x.detach().numpy()), rtol=1e-12)


@BOTH
def test_autograd_grad_releases_saved_values(m, no_gc):
    x = leaf(m)
    h = x.exp()
    y = (h * h).sum()
    ref = weakref.ref(h)
    del h
    m.autograd.grad(y, x)
    assert ref() is None


@BOTH
def test_custom_function_saved_tensors_are_released(m, no_gc):
    class Sin2(m.autograd.Function):
        @staticmethod
        def forward(ctx, a):
            h = a * 2
            ctx.save_for_backward(h)
            return h.sin()

        @staticmethod
        def backward(ctx, g):
            (h,) = ctx.saved_tensors
            return g * h.cos() * 2

    x = leaf(m)
    a = x * 1
    y = Sin2.apply(a)
    refs = [weakref.ref(a)]
    del a
    y.sum().backward()
    assert refs[0]() is None
    node = node_ref(y.grad_fn)
    del y
    assert node() is None
    np.testing.assert_allclose(x.grad.detach().numpy(),
                               2 * np.cos(2 * x.detach().numpy()), rtol=1e-12)


@BOTH
def test_create_graph_cycle_is_collected(m):
    """backward(create_graph=True) makes x.grad depend on x: a cycle (PyTorch's docs say so),
    which ``x.grad = None`` breaks."""
    x = leaf(m)
    (x ** 3).sum().backward(create_graph=True)
    node = node_ref(x.grad.grad_fn)
    x.grad = None
    gc.collect()
    assert node() is None


def test_create_graph_cycle_is_collected_without_breaking_it():
    """Left unbroken, the cycle is collected too (torch's runs through C++ and stays)."""
    m = cr
    x = leaf(m)
    (x ** 3).sum().backward(create_graph=True)
    refs = [weakref.ref(x), node_ref(x.grad.grad_fn)]
    del x
    gc.collect()
    assert [r() for r in refs] == [None, None]


def test_a_hook_holding_its_tensor_is_collected():
    """A cycle through a hook is collected (torch's runs through C++ and stays)."""
    m = cr
    x = leaf(m)
    h = x * 2
    h.register_hook(lambda g, h=h: g * h.detach())  # h -> its hooks -> this function -> h
    h.retain_grad()
    y = h.sin()
    y.sum().backward()
    refs = [weakref.ref(h), node_ref(y.grad_fn)]
    del h, y
    gc.collect()
    assert [r() for r in refs] == [None, None]


@BOTH
def test_node_hooks_do_not_keep_the_graph(m, no_gc):
    x = leaf(m)
    y = (x * 2).sin()
    y.grad_fn.register_hook(lambda grad_inputs, grad_outputs: None)
    y.grad_fn.register_prehook(lambda grad_outputs: None)
    node = node_ref(y.grad_fn)
    y.sum().backward()
    del y
    assert node() is None


@BOTH
@pytest.mark.parametrize("reentrant", [False, True])
def test_checkpoint_frees_what_it_recomputes(m, reentrant, no_gc):
    x = leaf(m)
    refs = []

    def region(a):
        h = a * 2
        refs.append(weakref.ref(h))
        return h.sin()

    checkpoint_fn = torch.utils.checkpoint.checkpoint if m is torch else checkpoint
    y = checkpoint_fn(region, x, use_reentrant=reentrant)
    y.sum().backward()
    assert len(refs) == 2  # the forward and the recomputation
    assert [r() for r in refs] == [None, None]
    node = node_ref(y.grad_fn)
    del y
    assert node() is None
    np.testing.assert_allclose(x.grad.detach().numpy(),
                               2 * np.cos(2 * x.detach().numpy()), rtol=1e-12)


@BOTH
def test_anomaly_mode_keeps_no_graph_alive(m, no_gc):
    x = leaf(m)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with m.autograd.detect_anomaly():
            h = x * 2
            y = h.sin()
            refs = [weakref.ref(h), node_ref(y.grad_fn)]
            del h
            y.sum().backward()
            assert refs[0]() is None
            del y
    assert refs[1]() is None


@BOTH
@pytest.mark.parametrize("transform", ["vmap", "grad", "jacrev", "jvp"])
def test_transforms_keep_no_intermediate_alive(m, transform, no_gc):
    x = leaf(m).detach()
    refs = []

    def f(a):
        h = a * 2
        refs.append(weakref.ref(h))
        return h.sin().sum()

    fn = {"vmap": lambda: m.func.vmap(f)(x.expand(3, 4)),
          "grad": lambda: m.func.grad(f)(x),
          "jacrev": lambda: m.func.jacrev(f)(x),
          "jvp": lambda: m.func.jvp(f, (x,), (m.ones_like(x),))}[transform]
    out = fn()
    assert refs and all(r() is None for r in refs)
    del out


@BOTH
def test_saved_tensors_hooks_release_what_they_packed(m, no_gc):
    x = leaf(m)
    refs = []

    def pack(t):
        copy = t.clone()
        refs.append(weakref.ref(copy))
        return copy

    with m.autograd.graph.saved_tensors_hooks(pack, lambda t: t):
        y = (x * 2).sin()
    assert refs and all(r() is not None for r in refs)
    y.sum().backward()
    assert all(r() is None for r in refs)


@BOTH
def test_leaving_a_dual_level_frees_the_tangents_graph(m, no_gc):
    """A JVP rule that reads the output (exp, tanh) gives the tangent a graph that saves the
    output; leaving the level must drop that tangent, from the output and from the saved
    output of its node, or the two keep each other alive."""
    fwad = m.autograd.forward_ad
    w = leaf(m)
    with fwad.dual_level():
        d = fwad.make_dual(m.ones(4, dtype=m.float64), m.ones(4, dtype=m.float64))
        y = (w * d).exp().tanh()
        refs = [weakref.ref(fwad.unpack_dual(y).tangent), node_ref(y.grad_fn)]
    del d, y
    assert [r() for r in refs] == [None, None]


@BOTH
def test_a_saved_output_brings_no_tangent_into_a_later_level(m):
    fwad = m.autograd.forward_ad
    w = leaf(m)
    with fwad.dual_level():
        d = fwad.make_dual(m.ones(4, dtype=m.float64), m.ones(4, dtype=m.float64))
        y = (w * d).exp()
    with fwad.dual_level():
        assert fwad.unpack_dual(y.grad_fn._saved_result).tangent is None
        (g,) = m.autograd.grad(y.sum(), w, create_graph=True)
        assert fwad.unpack_dual(g).tangent is None
    np.testing.assert_allclose(g.detach().numpy(), np.exp(w.detach().numpy()), rtol=1e-12)


# ---- object counts over many steps -------------------------------------------------------------

GRAPH_TYPES = ("Tensor", "Parameter", "BatchedTensor", "OpNode", "AccumulateGrad", "SavedInput",
               "SavedOutput", "SavedPacked", "SavedTensor", "BackwardCFunction")


def _kind(o) -> str:
    # Each op's nodes (and each custom Function's) are of their own class: count them together.
    kind = type(o)
    if issubclass(kind, OpNode):
        return "OpNode"
    return "BackwardCFunction" if issubclass(kind, BackwardCFunction) else kind.__name__


def _counts() -> collections.Counter:
    gc.collect()
    return collections.Counter(_kind(o) for o in gc.get_objects())


def _growth(step, steps: int = 100) -> dict:
    """Per type, how many more objects exist after ``steps`` more steps (after warming up)."""
    for _ in range(10):
        step()
    before = _counts()
    for _ in range(steps):
        step()
    after = _counts()
    return {k: after[k] - before[k] for k in after if after[k] != before[k]}


def _model():
    cr.manual_seed(0)
    model = cr.nn.Sequential(cr.nn.Linear(4, 8), cr.nn.Tanh(), cr.nn.Linear(8, 3)).double()
    rng = np.random.default_rng(0)
    x = cr.tensor(rng.standard_normal((16, 4)))
    y = cr.tensor(rng.integers(0, 3, 16))
    return model, x, y, cr.nn.CrossEntropyLoss()


def _train_step(opt_name: str):
    model, x, y, loss_fn = _model()
    opt = (cr.optim.Adam(model.parameters(), lr=1e-2) if opt_name == "adam"
           else cr.optim.SGD(model.parameters(), lr=0.1, momentum=0.9))

    def step():
        opt.zero_grad()
        loss_fn(model(x), y).backward()
        opt.step()

    return step


def _gradient_penalty_step():
    model, x, y, loss_fn = _model()
    opt = cr.optim.Adam(model.parameters(), lr=1e-3)

    def step():
        opt.zero_grad()
        xi = x.clone().requires_grad_()
        (g,) = cr.autograd.grad(model(xi).sum(), xi, create_graph=True)
        (loss_fn(model(x), y) + (g ** 2).sum()).backward()
        opt.step()

    return step


def _double_backward_step():
    w = cr.randn(5, dtype=cr.float64, requires_grad=True)

    def step():
        (w ** 3).sum().backward(create_graph=True)  # w.grad now holds a graph that reaches w
        w.grad.sum().backward()
        w.grad = None  # breaks the cycle, as PyTorch's docs advise

    return step


def _double_backward_dropped_step():
    def step():
        w = cr.randn(5, dtype=cr.float64, requires_grad=True)
        (w ** 3).sum().backward(create_graph=True)  # the w <-> w.grad cycle, left to the gc

    return step


def _hooks_step():
    model, x, y, loss_fn = _model()
    opt = cr.optim.SGD(model.parameters(), lr=0.1)
    model.register_forward_hook(lambda mod, inputs, out: None)
    model[2].register_forward_pre_hook(lambda mod, inputs: None)

    def step():
        opt.zero_grad()
        h = model[1](model[0](x))
        h.register_hook(lambda g: g * 1)
        h.retain_grad()
        out = model[2](h)
        out.grad_fn.register_hook(lambda gi, go: None)
        loss_fn(out, y).backward()
        opt.step()

    return step


def _checkpoint_step(reentrant: bool):
    model, x, y, loss_fn = _model()
    opt = cr.optim.SGD(model.parameters(), lr=0.1)

    def step():
        opt.zero_grad()
        h = checkpoint(model[:2], x.detach().requires_grad_(), use_reentrant=reentrant)
        loss_fn(model[2](h), y).backward()
        opt.step()

    return step


def _anomaly_step():
    train = _train_step("sgd")

    def step():
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            with cr.autograd.detect_anomaly():
                train()

    return step


def _transforms_step():
    model, x, _, _ = _model()
    params = dict(model.named_parameters())

    def f(r):
        return (r.sin() * r).sum()

    def step():
        cr.func.vmap(cr.func.grad(f))(x)
        cr.func.jacrev(lambda r: r.exp())(x[0])
        cr.func.jvp(f, (x[0],), (x[1],))
        cr.func.hessian(f)(x[0])
        cr.func.vjp(f, x[0])[1](cr.tensor(1.0, dtype=cr.float64))
        cr.func.functional_call(model, params, (x,)).sum().backward()

    return step


def _forward_ad_step():
    model, x, _, _ = _model()
    fwad = cr.autograd.forward_ad

    def step():
        with fwad.dual_level():
            fwad.unpack_dual(model(fwad.make_dual(x, cr.ones_like(x))).exp())

    return step


def _long_dual_level_step():
    """Steps inside one dual level that stays open (the level tracks its dual tensors)."""
    model, x, _, _ = _model()
    fwad = cr.autograd.forward_ad
    level = fwad.dual_level()
    level.__enter__()
    _long_dual_level_step.close = lambda: level.__exit__(None, None, None)

    def step():
        fwad.unpack_dual(model(fwad.make_dual(x, cr.ones_like(x))).tanh())

    return step


def _saved_hooks_step():
    train = _train_step("adam")

    def step():
        with cr.autograd.graph.saved_tensors_hooks(lambda t: t, lambda t: t):
            train()
        with cr.autograd.graph.save_on_cpu():
            train()

    return step


def _retain_graph_step():
    model, x, y, loss_fn = _model()

    def step():
        loss = loss_fn(model(x), y)
        loss.backward(retain_graph=True)
        loss.backward()
        model.zero_grad()

    return step


STEPS = {
    "sgd": lambda: _train_step("sgd"),
    "adam": lambda: _train_step("adam"),
    "gradient_penalty": _gradient_penalty_step,
    "double_backward": _double_backward_step,
    "double_backward_cycle": _double_backward_dropped_step,
    "hooks": _hooks_step,
    "checkpoint": lambda: _checkpoint_step(False),
    "checkpoint_reentrant": lambda: _checkpoint_step(True),
    "anomaly_mode": _anomaly_step,
    "transforms": _transforms_step,
    "forward_ad": _forward_ad_step,
    "long_dual_level": _long_dual_level_step,
    "saved_tensors_hooks": _saved_hooks_step,
    "retain_graph": _retain_graph_step,
}


@pytest.mark.parametrize("name", STEPS)
def test_object_counts_stay_flat(name):
    step = STEPS[name]()
    try:
        _growth(step)  # the first hundred steps may fill lazy caches
        growth = _growth(step)  # the second hundred is the one kept
    finally:
        if name == "long_dual_level":
            _long_dual_level_step.close()
    graph = {k: v for k, v in growth.items() if k in GRAPH_TYPES and v > 0}
    assert graph == {}
    # Anything that grows once per step (or more) is a leak; a few objects of a lazily filled
    # cache are not.
    assert {k: v for k, v in growth.items() if v >= 50} == {}


def test_object_counts_catch_a_leak():
    """The counting above does see a graph kept per step."""
    kept = []
    x = cr.randn(3, requires_grad=True)
    growth = _growth(lambda: kept.append((x * 2).sin()))
    assert growth["Tensor"] >= 100 and growth["OpNode"] >= 200


@BOTH
def test_a_failed_backward_keeps_nothing_alive(m, no_gc):
    x = leaf(m)

    def run():
        h = x * 2
        y = h.sin()
        refs = [weakref.ref(h), node_ref(y.grad_fn)]

        def fail(g):
            raise ValueError("hook failed")

        h.register_hook(fail)
        with pytest.raises(ValueError, match="hook failed"):
            y.sum().backward()
        return refs

    refs = run()
    assert [r() for r in refs] == [None, None]
    assert m.is_grad_enabled()


@BOTH
@pytest.mark.parametrize("transform", ["vmap", "grad", "dual_level"])
def test_a_failing_transform_keeps_nothing_alive(m, transform, no_gc):
    x = leaf(m).detach()
    refs = []

    def f(a):
        h = a * 2
        refs.append(weakref.ref(h))
        raise KeyError("inside")

    def dual():
        with m.autograd.forward_ad.dual_level():
            f(m.autograd.forward_ad.make_dual(x, m.ones_like(x)))

    fn = {"vmap": lambda: m.func.vmap(f)(x.expand(3, 4)), "grad": lambda: m.func.grad(f)(x),
          "dual_level": dual}[transform]
    with pytest.raises(KeyError, match="inside"):
        fn()
    if m is torch and transform == "dual_level":
        gc.collect()  # torch's dual_level leaves a cycle with the exception's frames
    assert len(refs) == 1 and refs[0]() is None
    y = x * 2  # and the transform's state is gone: a plain op again
    assert type(y) is type(x) and not y.requires_grad and m.is_grad_enabled()
