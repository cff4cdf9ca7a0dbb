"""Activation checkpointing (``utils.checkpoint``) against torch's: warnings, errors, when the
function runs, what is saved, and gradients equal to the plain run's (dropout included)."""

import gc
import warnings
import weakref

import numpy as np
import pytest
from _tooling_helpers import leaf, outcome, rounded, run

import chainrule as cr

X = [[0.5, -1.3, 2.0], [1.5, 0.7, -0.4]]
W = [[0.3, -0.2, 0.8], [-0.5, 0.9, 0.1], [0.7, 0.4, -0.6]]
VARIANTS = pytest.mark.parametrize("reentrant", [False, True], ids=["non-reentrant", "reentrant"])


def block(m, w, log=None):
    """A small function with several saved tensors: tanh(x @ w).sin() * x."""

    def f(x):
        if log is not None:
            log.append("run")
        return (x @ w).tanh().sin() * x

    return f


# ---- the API: warnings and errors ------------------------------------------------------------


def test_use_reentrant_not_given_warns_and_means_reentrant():
    def scenario(m):
        x, w = leaf(m, X), leaf(m, W)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            out = m.utils.checkpoint.checkpoint(block(m, w), x)
            seq = m.utils.checkpoint.checkpoint_sequential([m.sin, m.cos], 2, x)
        return ([(type(c.message).__name__, str(c.message)) for c in caught],
                out.grad_fn.name(), seq.grad_fn.name())

    caught, name, _ = run(scenario)
    assert len(caught) == 2 and name == "CheckpointFunctionBackward"


def test_warning_points_at_the_caller():
    x = leaf(cr, X)
    with pytest.warns(UserWarning, match="use_reentrant parameter should be passed") as caught:
        cr.utils.checkpoint.checkpoint(cr.sin, x)
    assert caught[0].filename == __file__


@pytest.mark.parametrize("case", ["kwargs reentrant", "debug reentrant", "determinism",
                                  "sequential kwargs", "grad reentrant", "no input needs grad"])
def test_errors_like_torch(case):
    def scenario(m):
        cp = m.utils.checkpoint
        x, w = leaf(m, X), leaf(m, W)
        f = block(m, w)
        if case == "kwargs reentrant":
            return outcome(lambda: cp.checkpoint(f, x, use_reentrant=True, foo=1))
        if case == "debug reentrant":
            return outcome(lambda: cp.checkpoint(f, x, use_reentrant=True, debug=True))
        if case == "determinism":
            return outcome(lambda: cp.checkpoint(f, x, use_reentrant=False,
                                                 determinism_check="shapes"))
        if case == "sequential kwargs":
            return outcome(lambda: cp.checkpoint_sequential([f], 1, x, use_reentrant=False,
                                                            foo=1))
        if case == "grad reentrant":
            out = cp.checkpoint(f, x, use_reentrant=True)
            return outcome(lambda: m.autograd.grad(out.sum(), x))
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            out = cp.checkpoint(m.sin, m.tensor(X), use_reentrant=True)
        return [str(c.message) for c in caught], out.requires_grad

    result = run(scenario)
    assert result[0] == "ValueError" or case in ("grad reentrant", "no input needs grad")


# ---- recomputation and gradients -------------------------------------------------------------


@VARIANTS
def test_gradients_equal_the_plain_run_and_torch(reentrant):
    def scenario(m):
        x, w = leaf(m, X), leaf(m, W)
        log = []
        out = m.utils.checkpoint.checkpoint(block(m, w, log), x, use_reentrant=reentrant)
        log.append("forward done")
        (out ** 2).sum().backward()
        return log, rounded(out), rounded(x.grad), rounded(w.grad)

    log, *values = run(scenario)
    assert log == ["run", "forward done", "run"]  # recomputed during backward
    x, w = leaf(cr, X), leaf(cr, W)
    (block(cr, w)(x) ** 2).sum().backward()
    assert values[1:] == [rounded(x.grad), rounded(w.grad)]


def test_non_reentrant_works_with_autograd_grad_and_retain_graph():
    def scenario(m):
        x, w = leaf(m, X), leaf(m, W)
        log = []
        out = m.utils.checkpoint.checkpoint(block(m, w, log), x, use_reentrant=False)
        g1 = m.autograd.grad(out.sum(), (x, w), retain_graph=True)
        g2 = m.autograd.grad(out.sum(), (x, w))  # a second backward recomputes again
        return log, [rounded(g) for g in g1 + g2]

    log, grads = run(scenario)
    assert log == ["run", "run", "run"] and grads[:2] == grads[2:]


def test_double_backward_through_non_reentrant_checkpoint():
    def scenario(m):
        x, w = leaf(m, X), leaf(m, W)
        out = m.utils.checkpoint.checkpoint(block(m, w), x, use_reentrant=False)
        (gx,) = m.autograd.grad(out.sum(), x, create_graph=True)
        (gxx,) = m.autograd.grad(gx.sum(), x)
        return rounded(gx), rounded(gxx)

    run(scenario)


@VARIANTS
def test_dropout_recomputes_the_same_mask(reentrant):
    model_seed, data_seed = 0, 1
    cr.manual_seed(model_seed)
    layers = [m for _ in range(4) for m in (cr.nn.Linear(6, 6), cr.nn.Tanh(), cr.nn.Dropout(0.4))]
    model = cr.nn.Sequential(*layers)
    x = cr.randn(5, 6, requires_grad=True)

    def grads(fn):
        for p in model.parameters():
            p.grad = None
        x.grad = None
        cr.manual_seed(data_seed)
        loss = fn(x).pow(2).sum()
        loss.backward()
        return [rounded(loss)] + [rounded(p.grad) for p in model.parameters()] + [rounded(x.grad)]

    plain = grads(model)
    for segments in (2, 3):
        checkpointed = grads(lambda v, segments=segments: cr.utils.checkpoint.checkpoint_sequential(
            model, segments, v, use_reentrant=reentrant))
        assert checkpointed == plain
    cr.manual_seed(data_seed)
    model(x)  # the RNG moved on as much as in the plain run: no draws were added or lost
    after_plain = cr.rand(1).item()
    cr.manual_seed(data_seed)
    cr.utils.checkpoint.checkpoint_sequential(model, 2, x, use_reentrant=reentrant)
    assert cr.rand(1).item() == after_plain
    unpreserved = grads(lambda v: cr.utils.checkpoint.checkpoint_sequential(
        model, 2, v, use_reentrant=reentrant, preserve_rng_state=False))
    assert unpreserved != plain  # other masks in the recomputation: wrong gradients, no error


def test_checkpoint_sequential_matches_torch():
    def scenario(m):
        m.manual_seed(0)
        model = m.nn.Sequential(m.nn.Linear(3, 3), m.nn.Tanh(), m.nn.Linear(3, 3), m.nn.Sigmoid(),
                                m.nn.Linear(3, 2))
        with m.no_grad():
            for i, p in enumerate(model.parameters()):
                p.copy_(m.linspace(-1, 1, p.numel()).reshape(p.shape) * (i + 1) / 3)
        x = leaf(m, X).float()
        out = m.utils.checkpoint.checkpoint_sequential(model, 2, x, use_reentrant=False)
        out.sum().backward()
        return (np.round(out.detach().numpy(), 5).tolist(),
                [np.round(p.grad.numpy(), 5).tolist() for p in model.parameters()])

    run(scenario)


# ---- what is saved ---------------------------------------------------------------------------


def count_saved(m, fn):
    """How many tensors autograd saves while ``fn()`` runs, counted with saved_tensors_hooks."""
    count = [0]

    def pack(t):
        count[0] += 1
        return t.detach()

    with m.autograd.graph.saved_tensors_hooks(pack, lambda t: t):
        out = fn()
    return count[0], out


@VARIANTS
def test_checkpointing_saves_fewer_tensors(reentrant):
    def scenario(m):
        x, w = leaf(m, X), leaf(m, W)
        plain, _ = count_saved(m, lambda: block(m, w)(x))
        inside, _ = count_saved(m, lambda: m.utils.checkpoint.checkpoint(
            block(m, w), x, use_reentrant=reentrant))
        return plain, inside

    plain, inside = run(scenario)
    assert inside < plain

    def deep(m, checkpointed):
        m.manual_seed(0)
        model = m.nn.Sequential(*[m.nn.Linear(4, 4) if i % 2 == 0 else m.nn.Tanh()
                                  for i in range(16)])
        x = m.randn(3, 4, requires_grad=True)
        if checkpointed:
            return count_saved(m, lambda: m.utils.checkpoint.checkpoint_sequential(
                model, 4, x, use_reentrant=reentrant))[0]
        return count_saved(m, lambda: model(x))[0]

    # Only the inputs of the 3 checkpointed segments and the last segment's values are saved.
    assert deep(cr, True) < deep(cr, False) / 2


def test_activations_inside_are_freed_after_forward():
    x, w = leaf(cr, X), leaf(cr, W)
    refs = []

    def f(v):
        h = (v @ w).tanh()
        refs.append(weakref.ref(h))
        return h.sin() * v

    kept = f(x)
    out = cr.utils.checkpoint.checkpoint(f, x, use_reentrant=False)
    gc.collect()
    assert refs[0]() is not None  # the plain graph keeps tanh's output (sin saved it)
    assert refs[1]() is None  # the checkpointed one does not
    del kept
    out.sum().backward()
    assert x.grad is not None


# ---- non-reentrant details -------------------------------------------------------------------


@pytest.mark.parametrize("early_stop", [True, False])
def test_recomputation_stops_early(early_stop):
    def scenario(m):
        log = []

        def f(x):
            log.append("start")
            a = x.sin()
            log.append("sin")
            b = a.exp()
            log.append("exp")
            c = b + 1  # saves nothing: with early stop, recomputation ends before it
            log.append("end")
            return c

        x = leaf(m, X)
        with m.utils.checkpoint.set_checkpoint_early_stop(early_stop):
            out = m.utils.checkpoint.checkpoint(f, x, use_reentrant=False)
        out.sum().backward()
        return log, rounded(x.grad)

    log, _ = run(scenario)
    assert log[4:] == (["start", "sin"] if early_stop else ["start", "sin", "exp", "end"])


def test_context_fn_wraps_forward_and_recomputation():
    def scenario(m):
        import contextlib

        log = []

        @contextlib.contextmanager
        def note(name):
            log.append(f"enter {name}")
            try:
                yield
            finally:  # the recomputation ends early, by an exception, once all is back
                log.append(f"exit {name}")

        x = leaf(m, X)
        out = m.utils.checkpoint.checkpoint(
            lambda v: v.sin().exp(), x, use_reentrant=False,
            context_fn=lambda: (note("forward"), note("recompute")))
        out.sum().backward()
        return log

    assert run(scenario) == ["enter forward", "exit forward", "enter recompute", "exit recompute"]


def test_kwargs_nesting_and_no_grad():
    def scenario(m):
        cp = m.utils.checkpoint
        x, w = leaf(m, X), leaf(m, W)

        def inner(v, scale=1.0):
            return (v @ w).tanh() * scale

        def outer(v):
            return cp.checkpoint(inner, v.sin(), use_reentrant=False, scale=2.0).exp()

        out = cp.checkpoint(outer, x, use_reentrant=False)
        out.sum().backward()
        with m.no_grad():
            plain = cp.checkpoint(outer, x, use_reentrant=False)
        return rounded(out), rounded(x.grad), rounded(w.grad), plain.requires_grad

    run(scenario)


@pytest.mark.parametrize("change", ["count", "shape"])
def test_nondeterministic_recomputation_raises(change):
    def scenario(m):
        calls = []

        def f(x):
            calls.append(1)
            if len(calls) == 1:
                return x.sin().cos()
            return x.sin() if change == "count" else x[:1].sin().cos()

        out = m.utils.checkpoint.checkpoint(f, leaf(m, X), use_reentrant=False)
        kind, message = outcome(lambda: out.sum().backward())
        return kind, message.split("\nTip:")[0]

    kind, message = run(scenario)
    assert kind == "CheckpointError"


def test_debug_lists_what_each_pass_saved():
    calls = []

    def f(x):
        calls.append(1)
        return x.sin().cos() if len(calls) == 1 else x[:1].sin().cos()

    out = cr.utils.checkpoint.checkpoint(f, leaf(cr, X), use_reentrant=False, debug=True)
    with pytest.raises(cr.utils.checkpoint.CheckpointError) as info:
        out.sum().backward()
    message = str(info.value)
    assert "Tensors saved during the original forward" in message
    assert "SinBackward0 [2, 3]" in message and "SinBackward0 [1, 3]" in message
    assert f"{__file__}:" in message
