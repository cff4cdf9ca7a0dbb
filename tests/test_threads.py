"""Threads: what PyTorch keeps per thread is per thread here too, and threads that train their own
models at once get exactly what the same training gets run serially."""

import sys
import threading
import warnings

import numpy as np
import pytest
import torch

import chainrule as cr
from chainrule.utils.checkpoint import checkpoint

BOTH = pytest.mark.parametrize("m", [torch, cr], ids=["torch", "chainrule"])


@pytest.fixture
def switch_often():
    """Have the interpreter switch threads every few bytecodes, so threads interleave inside ops
    and inside backward rather than each running to the end of its time slice."""
    prev = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)
    yield
    sys.setswitchinterval(prev)


def in_thread(fn):
    """``fn()`` run in a new thread; its result, or the exception it raised."""
    out = []

    def run():
        try:
            out.append(fn())
        except BaseException as exc:  # noqa: BLE001 - handed back to the test
            out.append(exc)

    t = threading.Thread(target=run)
    t.start()
    t.join(timeout=60)
    assert not t.is_alive()
    return out[0]


def run_threads(fns: list) -> list:
    """Run each function in its own thread, all at once (started together); their results."""
    barrier = threading.Barrier(len(fns))
    out: list = [None] * len(fns)

    def run(i, fn):
        barrier.wait()
        try:
            out[i] = fn()
        except BaseException as exc:  # noqa: BLE001 - handed back to the test
            out[i] = exc

    threads = [threading.Thread(target=run, args=(i, fn)) for i, fn in enumerate(fns)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=300)
        assert not t.is_alive()
    for result in out:
        if isinstance(result, BaseException):
            raise result
    return out


# ---- what is per thread --------------------------------------------------------------------------


@BOTH
@pytest.mark.parametrize("mode", ["no_grad", "set_grad_enabled", "inference_mode"])
def test_grad_modes_do_not_reach_other_threads(m, mode):
    x = m.ones(3, requires_grad=True)

    def other():
        y = x * 2
        return m.is_grad_enabled(), m.is_inference_mode_enabled(), y.requires_grad

    enter = {"no_grad": m.no_grad, "inference_mode": m.inference_mode,
             "set_grad_enabled": lambda: m.set_grad_enabled(False)}[mode]
    with enter():
        assert not m.is_grad_enabled()
        assert in_thread(other) == (True, False, True)
        assert not (x * 2).requires_grad


@BOTH
def test_saved_tensors_hooks_do_not_reach_other_threads(m):
    packed = []

    def pack(t):
        packed.append(threading.get_ident())
        return t

    x = m.ones(3, requires_grad=True)
    with m.autograd.graph.saved_tensors_hooks(pack, lambda t: t):
        y = in_thread(lambda: x * x)
        assert packed == []
        z = x * x
    assert packed == [threading.get_ident()] * 2
    y.sum().backward()
    z.sum().backward()
    assert x.grad.tolist() == [4.0, 4.0, 4.0]


@BOTH
def test_vmap_levels_do_not_reach_other_threads(m):
    seen = []

    def f(x):
        # Another thread is outside any vmap: its random draws are allowed, its tensors plain.
        seen.append(in_thread(lambda: (tuple(m.rand(2).shape), type(m.ones(2) * 2).__name__)))
        return x * 2

    out = m.vmap(f, randomness="error")(m.ones(3, 2))
    assert out.tolist() == [[2.0, 2.0]] * 3
    assert seen == [((2,), "Tensor")]


def task_id(m) -> int:
    return (m._C if m is torch else m.autograd.graph)._current_graph_task_id()


@BOTH
def test_running_backward_is_per_thread(m):
    """While one thread is inside backward, another is not: its grad mode is on, its ops
    record, and it has no running graph task."""
    x = m.ones(3, requires_grad=True)
    seen = []

    def hook(g):
        seen.append(in_thread(lambda: (m.is_grad_enabled(), (x * 2).requires_grad, task_id(m))))
        seen.append(task_id(m) >= 0)
        return g

    y = x * 3
    y.register_hook(hook)
    y.sum().backward()
    assert seen == [(True, True, -1), True]
    assert x.grad.tolist() == [3.0, 3.0, 3.0]


def test_dual_levels_are_per_thread():
    """chainrule's forward-mode levels are per thread (PyTorch's are process-wide; see
    docs/differences.md): a level in one thread neither gives nor strips another's tangents."""
    fwad = cr.autograd.forward_ad
    with fwad.dual_level():
        dual = fwad.make_dual(cr.ones(2, dtype=cr.float64), cr.full((2,), 3.0, dtype=cr.float64))
        other = in_thread(lambda: fwad.make_dual(cr.ones(2), cr.ones(2)))
        assert isinstance(other, RuntimeError) and "no forward AD level" in str(other)
        assert in_thread(lambda: fwad.unpack_dual(dual * 2).tangent) is None
        assert fwad.unpack_dual(dual * 2).tangent.tolist() == [6.0, 6.0]


@BOTH
def test_anomaly_mode_parent_is_per_thread(m):
    """Anomaly mode is process-wide (as PyTorch's), but the node backward is running in one
    thread is no parent of the nodes another thread records meanwhile."""
    x = m.ones(3, requires_grad=True)
    recorded = []

    class Double(m.autograd.Function):
        @staticmethod
        def forward(ctx, t):
            return t * 2

        @staticmethod
        def backward(ctx, g):
            recorded.append(in_thread(lambda: x * 2))  # while this node runs
            recorded.append(x * 2)
            return g * 2

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with m.autograd.detect_anomaly():
            Double.apply(x.exp()).sum().backward(create_graph=True)
    assert ["parent_" in r.grad_fn.metadata for r in recorded] == [False, True]
    assert "traceback_" in recorded[0].grad_fn.metadata


# ---- concurrent work equals serial work ----------------------------------------------------------


def _make_job(seed: int):
    """A small MLP, its data, its optimizer and the steps at which it evaluates under which
    mode; all drawn from ``seed``, so a job is the same whichever thread runs it. Jobs 2 and 3
    checkpoint the first layers (non-reentrant, reentrant); job 1 saves through hooks."""
    rng = np.random.default_rng(seed)
    cr.manual_seed(seed)
    model = cr.nn.Sequential(cr.nn.Linear(4, 16), cr.nn.Tanh(), cr.nn.Linear(16, 3))
    model.double()
    x = cr.tensor(rng.standard_normal((32, 4)))
    y = cr.tensor(rng.integers(0, 3, 32))
    if seed % 2:
        opt = cr.optim.Adam(model.parameters(), lr=1e-2)
    else:
        opt = cr.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    evals = {int(s): ("no_grad", "inference_mode", "set_grad_enabled")[int(k)]
             for s, k in zip(rng.choice(50, 12, replace=False), rng.integers(0, 3, 12))}
    return model, x, y, opt, evals, seed


def _forward(model, x, seed: int):
    if seed in (2, 3):
        h = checkpoint(model[:2], x.detach().requires_grad_(), use_reentrant=seed == 3)
        return model[2](h)
    if seed == 1:
        with cr.autograd.graph.saved_tensors_hooks(lambda t: t * 1, lambda t: t):
            return model(x)
    return model(x)


def _train(job) -> dict:
    model, x, y, opt, evals, seed = job
    losses, grads, eval_losses = [], [], []
    loss_fn = cr.nn.CrossEntropyLoss()
    for step in range(50):
        if step in evals:
            mode = evals[step]
            ctx = cr.set_grad_enabled(False) if mode == "set_grad_enabled" else getattr(cr, mode)()
            with ctx:
                out = loss_fn(model(x), y)
                assert not out.requires_grad
                eval_losses.append(out.item())
        opt.zero_grad()
        loss = loss_fn(_forward(model, x, seed), y)
        loss.backward()
        grads.append([p.grad.numpy().copy() for p in model.parameters()])
        opt.step()
        losses.append(loss.item())
    weights = [p.detach().numpy().copy() for p in model.parameters()]
    return {"losses": losses, "eval": eval_losses, "grads": grads, "weights": weights}


def _assert_same_runs(got: list, want: list) -> None:
    for g, w in zip(got, want):
        assert g["losses"] == w["losses"]
        assert g["eval"] == w["eval"]
        for gg, wg in zip(g["grads"], w["grads"]):
            for a, b in zip(gg, wg):
                np.testing.assert_array_equal(a, b)
        for a, b in zip(g["weights"], w["weights"]):
            np.testing.assert_array_equal(a, b)


def test_four_threads_train_as_serially(switch_often):
    serial = [_train(_make_job(seed)) for seed in range(4)]
    jobs = [_make_job(seed) for seed in range(4)]
    concurrent = run_threads([lambda job=job: _train(job) for job in jobs])
    _assert_same_runs(concurrent, serial)
    assert all(r["losses"][-1] < r["losses"][0] for r in serial)  # the runs do train
    assert all(len(r["eval"]) == 12 for r in serial)


def _deep_graph(seed: int, create_graph: bool):
    """A long chain of ops on a leaf, then its gradient (and, with create_graph, the gradient of
    that gradient's sum)."""
    rng = np.random.default_rng(seed)
    w = cr.tensor(rng.standard_normal(5), requires_grad=True)
    h = w
    for i in range(300):
        h = (h * 0.9 + 0.1 * (h * (i % 7)).sin()).tanh() + w * 0.01
    out = (h * h).sum()
    if create_graph:
        (g,) = cr.autograd.grad(out, w, create_graph=True)
        g.sum().backward()
        return [g.detach().numpy().copy(), w.grad.numpy().copy()]
    out.backward()
    return [w.grad.numpy().copy()]


@pytest.mark.parametrize("create_graph", [False, True])
def test_two_backwards_at_once(switch_often, create_graph):
    serial = [_deep_graph(seed, create_graph) for seed in (1, 2)]
    concurrent = run_threads([lambda s=s: _deep_graph(s, create_graph) for s in (1, 2)])
    for got, want in zip(concurrent, serial):
        for a, b in zip(got, want):
            np.testing.assert_array_equal(a, b)


def test_func_transforms_in_threads_at_once(switch_often):
    """vmap, grad and jvp levels in one thread never mix with another thread's."""
    def work(seed: int):
        rng = np.random.default_rng(seed)
        x = cr.tensor(rng.standard_normal((6, 3)))
        v = cr.tensor(rng.standard_normal(3))
        out = []
        for _ in range(10):
            g = cr.func.vmap(cr.func.grad(lambda r: (r.sin() * r).sum()))(x)
            _, t = cr.func.jvp(lambda r: r.exp().sum(), (x[0],), (v,))
            h = cr.func.hessian(lambda r: (r ** 3).sum())(x[1])
            out.append([g.numpy().copy(), t.numpy().copy(), h.numpy().copy()])
        return out

    serial = [work(seed) for seed in range(3)]
    concurrent = run_threads([lambda s=s: work(s) for s in range(3)])
    for got, want in zip(concurrent, serial):
        for step_got, step_want in zip(got, want):
            for a, b in zip(step_got, step_want):
                np.testing.assert_array_equal(a, b)
    x = serial[0][0][0]
    r = np.random.default_rng(0).standard_normal((6, 3))
    np.testing.assert_allclose(x, np.sin(r) + r * np.cos(r), rtol=1e-12)


@pytest.mark.parametrize("size", [3, 200_000])
def test_backwards_into_a_shared_leaf_lose_no_gradient(switch_often, size):
    """Threads whose graphs share a leaf (Hogwild-style) all add into its .grad: PyTorch locks
    the accumulation, so no thread's addition is lost (NumPy's in-place add of a large array
    runs without the GIL). The gradients are integers, so any order sums exactly."""
    x = cr.zeros(size, dtype=cr.float64, requires_grad=True)

    def work(k: int):
        for _ in range(50):
            (x * float(k + 1)).sum().backward()

    run_threads([lambda k=k: work(k) for k in range(4)])
    np.testing.assert_array_equal(x.grad.numpy(), np.full(size, 50.0 * (1 + 2 + 3 + 4)))


def _shared_graph():
    """A graph whose first part two threads share, with one output per thread."""
    x = cr.tensor(np.random.default_rng(3).standard_normal(50), requires_grad=True)
    h = x
    for _ in range(100):
        h = (h * 1.01).sin()
    return x, [(h * (k + 1)).sum() for k in range(2)]


def test_backwards_through_a_shared_retained_graph_add_up(switch_often):
    x, outs = _shared_graph()
    run_threads([lambda out=out: out.backward(retain_graph=True) for out in outs])
    y, serial = _shared_graph()
    for out in serial:
        out.backward(retain_graph=True)
    np.testing.assert_allclose(x.grad.numpy(), y.grad.numpy(), rtol=1e-13, atol=0)


def test_backwards_through_a_shared_graph_fail_as_a_second_backward(switch_often):
    """Without retain_graph, a thread that reaches a node the other has freed gets PyTorch's
    error for a second backward (never another error); at least one thread completes."""
    x, outs = _shared_graph()
    errors: list = []

    def work(out):
        try:
            out.backward()
        except RuntimeError as exc:
            errors.append(str(exc))

    run_threads([lambda out=out: work(out) for out in outs])
    assert len(errors) <= 1
    assert all(e.startswith("Trying to backward through the graph a second time") for e in errors)
    assert x.grad is not None


def test_profiles_and_gradient_reports_in_threads_at_once(switch_often):
    """Tools opened in several threads at once each see their own thread's work only."""
    ops = {"sin": "SinBackward0", "exp": "ExpBackward0", "tanh": "TanhBackward0"}

    def work(op: str):
        x = cr.randn(20, requires_grad=True)
        seen = set()
        for _ in range(20):
            with cr.profiler.profile() as prof:
                getattr(x * 2, op)().sum().backward()
            seen.add(frozenset(e.name.split(": ")[-1] for e in prof.events()
                               if e.name.endswith("Backward0")))
        report = cr.autograd.graph.gradient_report(getattr(x, op)().sum())
        return seen, [step.name for step in report.steps]

    results = run_threads([lambda op=op: work(op) for op in ops])
    for (seen, steps), node in zip(results, ops.values()):
        assert seen == {frozenset({"MulBackward0", node, "SumBackward0"})}
        assert steps == ["SumBackward0", node, "AccumulateGrad"]


# Each switch and its query (private in both libraries).
SWITCHES = {
    "set_multithreading_enabled": "_is_multithreading_enabled",
    "enforce_grad_layout_policy": "_is_grad_layout_enforcement_enabled",
}


def _switch_state(m, name: str) -> bool:
    query = SWITCHES[name]
    return getattr(m._C if m is torch else m.autograd.grad_mode, query)()


@BOTH
@pytest.mark.parametrize("name", SWITCHES)
def test_backward_switches_are_per_thread_and_undo_as_torch(m, name):
    switch = getattr(m.autograd, name)
    seen = []
    with switch(False):
        seen.append(_switch_state(m, name))
        seen.append(in_thread(lambda: _switch_state(m, name)))
    seen.append(_switch_state(m, name))
    switch(False)  # as a function: set until set again
    seen.append(_switch_state(m, name))
    switch(True)

    @switch(False)
    def inside():
        return _switch_state(m, name)

    seen += [_switch_state(m, name), inside(), _switch_state(m, name)]
    switch(True)
    x = m.ones(3, requires_grad=True)
    with switch(False):
        (x * 2).sum().backward()
    seen.append(x.grad.tolist())
    want = {"set_multithreading_enabled": [False, True, True, False, False, False, False],
            "enforce_grad_layout_policy": [False, True, True, False, True, False, True]}[name]
    assert seen == want + [[2.0, 2.0, 2.0]]
