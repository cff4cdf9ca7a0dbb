"""chainrule.compile: compiled calls (captures, then replays) agree with eager calls bit for bit.

RuntimeWarnings are errors in this suite (pyproject.toml), so a test that does not expect the
"runs eagerly" warning also checks that the function really was replayed.
"""

from __future__ import annotations

import gc
import inspect
import tracemalloc
import warnings

import numpy as np
import pytest
import torch as ref

import chainrule as torch
from chainrule._compile import CompiledFunction

RNG = np.random.default_rng(0)


def _data(n: int = 6, batch: int = 5):
    rng = np.random.default_rng(1)
    return [(torch.tensor(rng.standard_normal((batch, 8)).astype(np.float32)),
             torch.tensor(rng.integers(0, 3, batch))) for _ in range(n)]


def _model(seed: int = 0, dropout: float = 0.2):
    torch.manual_seed(seed)
    return torch.nn.Sequential(torch.nn.Linear(8, 16), torch.nn.ReLU(),
                               torch.nn.Dropout(dropout), torch.nn.Linear(16, 3))


def _stepper(model, opt):
    """One training step: zero_grad, cross-entropy of the model, backward, the update."""
    def step(x, y):
        opt.zero_grad()
        loss = torch.nn.functional.cross_entropy(model(x), y)
        loss.backward()
        opt.step()
        return loss
    return step


def _replays(fn) -> int:
    return len(fn._programs)


def _same_params(a, b) -> bool:
    return all(torch.equal(p, q) for p, q in zip(a.parameters(), b.parameters()))


@pytest.mark.parametrize("opt_name,kwargs", [
    ("SGD", dict(lr=0.1)), ("SGD", dict(lr=0.1, momentum=0.9, nesterov=True)),
    ("Adam", dict(lr=0.01)), ("AdamW", dict(lr=0.01, amsgrad=True))])
def test_training_step_with_optimizer_inside(opt_name, kwargs):
    runs = []
    for compiled in (False, True):
        model = _model()
        step = _stepper(model, getattr(torch.optim, opt_name)(model.parameters(), **kwargs))
        fn = torch.compile(step) if compiled else step
        losses = []
        for i in range(24):
            x, y = _data()[i % 6]
            torch.manual_seed(100 + i)  # dropout masks: the same draws in both runs
            losses.append(fn(x, y))
        runs.append((losses, model, fn))
    (eager, m1, _), (compiled_losses, m2, fn) = runs
    assert all(torch.equal(a, b) for a, b in zip(eager, compiled_losses))
    assert _same_params(m1, m2)
    assert _replays(fn) == 1 and fn._eager_reason is None
    assert "f" in fn.code and "def replay" in fn.code  # the program is printable Python


def test_optimizer_outside_and_several_outputs():
    runs = []
    for compiled in (False, True):
        model = _model(dropout=0.0)
        opt = torch.optim.Adam(model.parameters(), lr=0.01)

        def forward_backward(x, y, model=model):
            out = model(x)
            loss = torch.nn.functional.cross_entropy(out, y)
            loss.backward()
            return loss, {"logits": out.detach(), "n": 3}, [p.grad for p in model.parameters()]

        fn = torch.compile(forward_backward) if compiled else forward_backward
        history = []
        for i in range(12):
            opt.zero_grad()
            loss, aux, grads = fn(*_data()[i % 6])
            opt.step()
            history.append((loss, aux, grads))
        runs.append((history, model, fn))
    (h1, m1, _), (h2, m2, fn) = runs
    for (l1, a1, g1), (l2, a2, g2) in zip(h1, h2):
        assert torch.equal(l1, l2) and torch.equal(a1["logits"], a2["logits"]) and a2["n"] == 3
        assert all(torch.equal(p, q) for p, q in zip(g1, g2))
    assert _same_params(m1, m2) and _replays(fn) == 1
    # A replayed loss carries the spent graph of eager's: a second backward fails as eager's.
    loss = h2[-1][0]
    assert loss.grad_fn.name() == h1[-1][0].grad_fn.name()
    with pytest.raises(RuntimeError, match="backward through the graph a second time"):
        loss.backward()


def test_gradient_accumulation_and_inplace_ops():
    def make():
        w = torch.tensor(RNG.standard_normal((4, 3)).astype(np.float64), requires_grad=True)

        def f(x):
            h = x @ w
            h.mul_(2).add_(1)  # in place on a non-leaf
            h[:, 0] = h[:, 1] * 3  # index assignment through a view
            with torch.no_grad():
                scale = h.abs().max()
            loss = (h.tanh() / scale).sum()
            loss.backward()  # accumulates into w.grad: no zero_grad
            return loss
        return w, f

    x = torch.tensor(RNG.standard_normal((5, 4)))
    w1, f1 = make()
    w2, f2 = make()
    w2.data = w1.detach().clone()
    c = torch.compile(f2)
    for _ in range(6):
        assert torch.equal(f1(x), c(x))
        assert torch.equal(w1.grad, w2.grad)
    assert _replays(c) == 1


def test_hvp_double_backward_compiles():
    """W4's shape: a Hessian-vector product (create_graph inside), which torch.compile cannot."""
    w = torch.tensor(RNG.standard_normal(6), requires_grad=True)
    v = torch.tensor(RNG.standard_normal(6))

    def hvp(x):
        loss = (torch.sin(w * x) * w).sum()
        (g,) = torch.autograd.grad(loss, w, create_graph=True)
        (h,) = torch.autograd.grad((g * v).sum(), w)
        return h

    c = torch.compile(hvp)
    for _ in range(4):
        x = torch.tensor(RNG.standard_normal(6))
        assert torch.equal(hvp(x), c(x))
    assert _replays(c) == 1
    tw = ref.tensor(w.detach().numpy(), requires_grad=True)
    tx = ref.tensor(x.numpy())
    loss = (ref.sin(tw * tx) * tw).sum()
    (g,) = ref.autograd.grad(loss, tw, create_graph=True)
    (h,) = ref.autograd.grad((g * ref.tensor(v.numpy())).sum(), tw)
    np.testing.assert_allclose(c(x).numpy(), h.numpy(), rtol=1e-12)


def test_module_compile_in_eval_and_method():
    model = _model()
    model.eval()
    opt_model = torch.compile(model)
    assert type(opt_model).__name__ == "OptimizedModule"
    assert list(opt_model.state_dict()) == ["_orig_mod." + k for k in model.state_dict()]
    x = _data()[0][0]
    with torch.no_grad():
        for _ in range(4):
            assert torch.equal(opt_model(x), model(x))
    assert _replays(opt_model._compiled_forward) == 1
    assert opt_model._orig_mod is model and getattr(opt_model, "0") is model[0]
    model2 = _model()
    model2.eval()
    model2.compile()
    with torch.no_grad():
        for _ in range(3):
            assert torch.equal(model2(x), model(x))
    assert _replays(model2._compiled_call_impl) == 1
    assert list(model2.state_dict()) == list(model.state_dict())


def _count_recaptures(fn, calls) -> int:
    for args in calls:
        fn(*args)
    return len(fn._programs)


def test_guards_recapture():
    w = torch.ones(3, requires_grad=True)

    def f(x, k):
        y = (x * w * k).sum()
        if torch.is_grad_enabled():  # Python reading the grad mode: the guard covers it
            y.backward()
        return y.detach()

    c = torch.compile(f)
    x32, x64 = torch.ones(3), torch.ones(3, dtype=torch.float64)
    calls = [(x32, 2.0)] * 3
    assert _count_recaptures(c, calls) == 1
    assert _count_recaptures(c, [(torch.ones(4, 3), 2.0)] * 3) == 2  # shape
    assert _count_recaptures(c, [(x64, 2.0)] * 3) == 3  # dtype
    assert _count_recaptures(c, [(x32, 3.0)] * 3) == 4  # a Python argument
    assert c(x32, 3.0).item() == 9.0 and c(x32, 2.0).item() == 6.0
    w.grad = None
    with torch.no_grad():  # grad mode
        assert _count_recaptures(c, [(x32, 2.0)] * 3) == 5
        assert c(x32, 2.0).item() == 6.0
    assert w.grad is None


def test_guard_requires_grad_of_argument_and_module_identity():
    def f(x):
        y = (x * x).sum()
        if x.requires_grad:
            (g,) = torch.autograd.grad(y, x)
            return g
        return y.detach()

    c = torch.compile(f)
    a = torch.arange(3.0)
    for _ in range(3):
        assert torch.equal(c(a), f(a))
    b = torch.arange(3.0).requires_grad_()
    for _ in range(3):
        assert torch.equal(c(b), f(b))
    assert _replays(c) == 2

    def g(module, x):
        return module(x)

    cg = torch.compile(g)
    m1, m2 = _model(1).eval(), _model(2).eval()
    x = _data()[0][0]
    with torch.no_grad():
        for _ in range(3):
            assert torch.equal(cg(m1, x), m1(x)) and torch.equal(cg(m2, x), m2(x))
    assert _replays(cg) == 2


def test_guard_training_flag_and_parameter_grad_state():
    model = _model()
    x = _data()[0][0]

    def f(x):
        return model(x).sum().detach()

    c = torch.compile(f)
    with torch.no_grad():
        for _ in range(3):
            torch.manual_seed(0)
            c(x)
        model.eval()  # dropout off: the training-mode program must not run
        for _ in range(3):
            assert torch.equal(c(x), f(x))
    assert _replays(c) == 2

    w = torch.ones(2, requires_grad=True)

    def h():
        (w * 3).sum().backward()

    ch = torch.compile(h)
    for _ in range(3):
        w.grad = None
        ch()
    w.grad = torch.ones(2)  # now backward adds into an existing .grad: another program
    for _ in range(3):
        ch()
    assert torch.equal(w.grad, torch.full((2,), 10.0)) and _replays(ch) == 2


def test_manual_seed_between_calls_gives_eager_draws():
    def f(x):
        return torch.nn.functional.dropout(x, 0.5) + torch.randn(4)

    c = torch.compile(f)
    x = torch.ones(4)
    for seed in range(5):
        torch.manual_seed(seed)
        want = f(x)
        torch.manual_seed(seed)
        assert torch.equal(c(x), want)
    assert _replays(c) == 1


@pytest.mark.parametrize("breaker", ["item", "bool", "numpy", "tolist", "float", "repr",
                                     "asarray"])
def test_graph_breaks_run_eagerly_with_a_warning(breaker):
    def f(x):
        s = x.sum()
        if breaker == "item":
            k = s.item()
        elif breaker == "bool":
            k = 2.0 if s > 0 else -2.0
        elif breaker == "numpy":
            k = float(x.detach().numpy().max())
        elif breaker == "tolist":
            k = x.tolist()[0]
        elif breaker == "repr":  # printing a value: eager prints it on every call, so must we
            k = float(len(f"{s}"))
        elif breaker == "asarray":
            k = float(np.asarray(x).sum())
        else:
            k = float(s)
        return x * k

    c = torch.compile(f)
    with pytest.warns(RuntimeWarning, match="runs eagerly"):
        c(torch.ones(3))
    for v in (1.0, -1.0, 3.0):  # data-dependent: every call is eager and right
        x = torch.full((3,), v)
        assert torch.equal(c(x), f(x))
    assert _replays(c) == 0


def test_generator_state_read_and_set_inside_is_replayed():
    """get_state and set_state are kernels of the program: a replay rewinds the stream as the
    eager call does (the draws after the rewind repeat those before it)."""
    def f(x):
        state = torch.get_rng_state()
        a = torch.rand(4)
        torch.set_rng_state(state)
        b = torch.rand(4)
        return x * a, b, state

    c = torch.compile(f)
    x = torch.full((4,), 2.0)
    for seed in range(5):
        torch.manual_seed(seed)
        want = f(x)
        after = torch.rand(1)
        torch.manual_seed(seed)
        got = c(x)
        assert torch.equal(got[0], want[0]) and torch.equal(got[1], want[1])
        assert torch.equal(got[0], 2 * got[1])
        assert torch.equal(got[2], want[2])
        assert torch.equal(torch.rand(1), after)  # the stream is where eager left it
    assert _replays(c) == 1


def test_checkpoint_with_dropout_is_replayed():
    """Checkpointing keeps the generator's state for the recomputation: compiled, its steps
    replay with eager's dropout masks and gradients."""
    from chainrule.utils.checkpoint import checkpoint_sequential

    model = torch.nn.Sequential(torch.nn.Linear(8, 16), torch.nn.ReLU(), torch.nn.Dropout(0.5),
                                torch.nn.Linear(16, 16), torch.nn.Dropout(0.3),
                                torch.nn.Linear(16, 4))
    x = torch.tensor(RNG.standard_normal((5, 8)).astype(np.float32), requires_grad=True)

    def step(x):
        out = checkpoint_sequential(model, 2, x, use_reentrant=False)
        out.sum().backward()
        return out

    c = torch.compile(step)
    for seed in range(5):
        results = []
        for fn in (step, c):
            model.zero_grad(set_to_none=True)
            x.grad = None
            torch.manual_seed(seed)
            out = fn(x)
            results.append([out, x.grad] + [p.grad for p in model.parameters()])
        assert all(torch.equal(a, b) for a, b in zip(*results))
    assert _replays(c) == 1


def test_state_that_changes_python_values_is_not_replayed():
    counter = {"n": 0}

    def f(x):
        counter["n"] += 1
        return x * counter["n"]  # a value the guards cannot see

    c = torch.compile(f)
    x = torch.ones(2)
    with pytest.warns(RuntimeWarning, match="captures of consecutive calls differ"):
        for _ in range(5):
            c(x)
    assert torch.equal(c(x), x * counter["n"]) and _replays(c) == 0


def test_recompile_limit_falls_back_to_eager():
    c = torch.compile(lambda x: x + 1, recompile_limit=2, dynamic=False)
    with pytest.warns(RuntimeWarning, match="recompile_limit"):
        for n in range(1, 6):
            assert torch.equal(c(torch.zeros(n)), torch.ones(n))


def test_signature_decorator_and_options():
    assert list(inspect.signature(torch.compile).parameters) == list(
        inspect.signature(ref.compile).parameters)

    @torch.compile(backend="inductor", mode="max-autotune", dynamic=False)
    def f(x):
        return x.exp()

    assert isinstance(f, CompiledFunction)
    x = torch.arange(3.0)
    for _ in range(3):
        assert torch.equal(f(x), x.exp())
    assert torch.compile(f.__wrapped__, disable=True) is f.__wrapped__
    assert not torch.compiler.is_compiling()
    seen = []
    g = torch.compile(lambda x: seen.append(torch.compiler.is_compiling()) or x * 2)
    g(x)
    assert seen == [True]
    with pytest.raises(AssertionError, match="A callable function is expected"):
        torch.compile(3)


def test_outputs_with_a_live_graph_backward_through_the_replay():
    w = torch.tensor(RNG.standard_normal(3), requires_grad=True)
    x = torch.tensor(RNG.standard_normal(3), requires_grad=True)  # an argument needing grad too

    def f(x):
        return (w * x).sin().sum(), (x * 2).exp()

    c = torch.compile(f)
    for _ in range(4):
        w.grad = x.grad = None
        a, b = f(x)
        (a + b.sum()).backward()
        want = w.grad.clone(), x.grad.clone()
        w.grad = x.grad = None
        a2, b2 = c(x)
        assert torch.equal(a, a2) and torch.equal(b, b2)
        (a2 + b2.sum()).backward()
        assert torch.equal(w.grad, want[0]) and torch.equal(x.grad, want[1])
    assert _replays(c) == 1 and a2.grad_fn.name() == "CompiledFunctionBackward"
    with pytest.raises(RuntimeError, match="backward through the graph a second time"):
        a2.backward()
    a3, _ = c(x)  # only one output used: the other's gradient is zero
    w.grad = None
    a3.backward()
    assert torch.allclose(w.grad, torch.cos((w * x).detach()) * x.detach())
    a4, _ = c(x)
    with pytest.raises(RuntimeError, match="not differentiable"):
        torch.autograd.grad(a4, w, create_graph=True)


def test_compiled_module_trains_like_eager():
    runs = []
    for compiled in (False, True):
        model = _model()
        opt = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
        net = torch.compile(model) if compiled else model
        losses = []
        for i in range(16):
            x, y = _data()[i % 6]
            opt.zero_grad()
            torch.manual_seed(i)
            loss = torch.nn.functional.cross_entropy(net(x), y)
            loss.backward()
            opt.step()
            losses.append(loss)
        runs.append((losses, model, net))
    (l1, m1, _), (l2, m2, net) = runs
    assert all(torch.equal(a, b) for a, b in zip(l1, l2)) and _same_params(m1, m2)
    assert _replays(net._compiled_forward) == 1


def test_inner_compiled_function_is_part_of_the_outer_capture():
    inner = torch.compile(lambda x: x.sin())
    outer = torch.compile(lambda x: inner(x) * 2)
    x = torch.arange(4.0)
    for _ in range(3):
        assert torch.equal(outer(x), x.sin() * 2)
    assert _replays(outer) == 1 and _replays(inner) == 0


def test_scheduler_changing_lr_recaptures():
    runs = []
    for compiled in (False, True):
        model = _model(dropout=0.0)
        opt = torch.optim.SGD(model.parameters(), lr=0.1)
        sched = torch.optim.lr_scheduler.StepLR(opt, step_size=4, gamma=0.5)
        step = _stepper(model, opt)
        fn = torch.compile(step) if compiled else step
        for _ in range(12):
            fn(*_data()[0])
            sched.step()
        runs.append((model, fn))
    assert _same_params(runs[0][0], runs[1][0])
    assert _replays(runs[1][1]) == 3  # one program per learning rate


def test_threads_each_training_their_own_compiled_step():
    import threading

    def run(step, out: list) -> None:
        out.extend(step(*_data()[i % 6]) for i in range(20))

    steps = {}
    for seed in range(4):  # models made here: the default generator is shared by threads
        for compiled in (True, False):
            model = _model(seed, dropout=0.0)
            step = _stepper(model, torch.optim.SGD(model.parameters(), lr=0.1))
            steps[seed, compiled] = torch.compile(step) if compiled else step
    results = {key: [] for key in steps}
    threads = [threading.Thread(target=run, args=(steps[seed, True], results[seed, True]))
               for seed in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for seed in range(4):
        run(steps[seed, False], results[seed, False])
        assert len(results[seed, True]) == 20
        assert all(torch.equal(a, b) for a, b in zip(results[seed, True],
                                                      results[seed, False]))


class _Sequence(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.emb = torch.nn.Embedding(20, 8)
        self.lstm = torch.nn.LSTM(8, 16, batch_first=True)
        self.att = torch.nn.MultiheadAttention(16, 2, batch_first=True)
        self.out = torch.nn.Linear(16, 3)

    def forward(self, x):
        h, _ = self.lstm(self.emb(x))
        a, _ = self.att(h, h, h)
        return self.out(torch.nn.functional.layer_norm(a + h, (16,)).mean(1))


def _conv_bn():
    return torch.nn.Sequential(torch.nn.Conv2d(1, 4, 3), torch.nn.BatchNorm2d(4),
                               torch.nn.ReLU(), torch.nn.MaxPool2d(2), torch.nn.Flatten(),
                               torch.nn.Linear(36, 3))


@pytest.mark.parametrize("make,shape,high", [(_Sequence, (4, 7), 20), (_conv_bn, (5, 1, 8, 8), 0)])
def test_compiled_models_train_like_eager(make, shape, high):
    """Embedding, LSTM, attention, layer norm; convolution, batch norm (running statistics),
    max pooling: a compiled model trains to the eager model's weights and buffers."""
    rng = np.random.default_rng(0)
    data = [(torch.tensor(rng.integers(0, high, shape)) if high else
             torch.tensor(rng.standard_normal(shape).astype(np.float32)),
             torch.tensor(rng.integers(0, 3, shape[0]))) for _ in range(4)]
    models = []
    for compiled in (False, True):
        torch.manual_seed(0)
        model = make()
        net = torch.compile(model) if compiled else model
        opt = torch.optim.AdamW(model.parameters(), lr=1e-2)
        for i in range(10):
            x, y = data[i % 4]
            opt.zero_grad()
            torch.nn.functional.cross_entropy(net(x), y).backward()
            opt.step()
        models.append((model, net))
    (eager, _), (model, net) = models
    state = model.state_dict()
    assert all(torch.equal(v, state[k]) for k, v in eager.state_dict().items())
    assert _replays(net._compiled_forward) == 1


def _vmap_grad(x):
    w = torch.tensor(np.linspace(-1, 1, 12).reshape(3, 4))
    return torch.func.vmap(torch.func.grad(lambda w, x: (torch.tanh(x @ w) ** 2).sum()),
                           in_dims=(None, 0))(w, x)


def _jvp(x):
    return torch.func.jvp(lambda v: (torch.sin(v) * v).sum(), (x,), (torch.ones_like(x),))[1]


def _hessian(x):
    return torch.func.hessian(lambda v: (torch.sin(v) * v).sum())(x[0])


def _forward_ad(x):
    fwd = torch.autograd.forward_ad
    with fwd.dual_level():
        dual = fwd.make_dual(x, torch.ones_like(x))
        return fwd.unpack_dual(torch.sin(dual) * dual).tangent


@pytest.mark.parametrize("fn", [_vmap_grad, _jvp, _hessian, _forward_ad],
                         ids=lambda f: f.__name__)
def test_function_transforms_inside_a_compiled_function(fn):
    c = torch.compile(fn)
    for _ in range(4):
        x = torch.tensor(RNG.standard_normal((5, 3)))
        assert torch.equal(c(x), fn(x))
    assert _replays(c) == 1


def test_arguments_sharing_memory_are_a_guard():
    def f(a, b):
        a.add_(1)  # through a, b changes too when they share memory
        return b * 2

    c = torch.compile(f)
    for _ in range(3):
        x = torch.zeros(3)
        assert torch.equal(c(x, x), torch.full((3,), 2.0))
    for _ in range(3):
        assert torch.equal(c(torch.zeros(3), torch.zeros(3)), torch.zeros(3))
    assert _replays(c) == 2


SCALE = 2.0


def test_closure_and_global_rebinding_is_a_guard():
    global SCALE
    w = torch.ones(3)

    def f(x):
        return x * w * SCALE

    c = torch.compile(f)
    x = torch.arange(3.0)
    for _ in range(3):
        assert torch.equal(c(x), x * 2)
    w = torch.full((3,), 10.0)  # the closure now holds another tensor  # noqa: F841
    for _ in range(3):
        assert torch.equal(c(x), x * 20)
    SCALE = 3.0
    try:
        for _ in range(3):
            assert torch.equal(c(x), x * 30)
    finally:
        SCALE = 2.0
    assert _replays(c) == 3


def test_fullgraph_raises_where_it_would_run_eagerly():
    c = torch.compile(lambda x: x * x.sum().item(), fullgraph=True)
    with pytest.raises(RuntimeError, match=r"fullgraph=True\): Tensor.item\(\)"):
        c(torch.ones(2))
    ok = torch.compile(lambda x: x * 2, fullgraph=True)
    for _ in range(3):
        assert torch.equal(ok(torch.ones(2)), torch.full((2,), 2.0))


def test_a_kernel_returning_its_input_is_never_written_over():
    """cov's kernels hand back an array they read (one array, two names): a large one must not
    become the output buffer of a later elementwise kernel, which would change the input."""
    big = torch.tensor(RNG.standard_normal((4, 1 << 13)))

    def f(x):
        return torch.cov(x).sum() + (x.exp() * 2).sum()

    c = torch.compile(f)
    for _ in range(4):
        before = big.clone()
        assert torch.equal(c(big), f(big)) and torch.equal(big, before)
    assert _replays(c) == 1


def test_a_tensor_made_in_the_call_keeps_its_value_at_first_use():
    """A tensor made outside any kernel is a constant of the program, copied only when a kernel
    writes into its memory (through itself or a view) after it was first read."""
    def f(x):
        c = torch.tensor([1.0, 2.0, 3.0, 4.0])
        v = c[1:]
        y = x[1:] * v
        w = x * c
        c.add_(1)
        v.mul_(2)
        return y + v, w + c

    c = torch.compile(f)
    for _ in range(4):
        x = torch.tensor(RNG.standard_normal(4))
        assert all(torch.equal(p, q) for p, q in zip(c(x), f(x)))
    assert _replays(c) == 1


def _traced_peak(fn, *args) -> int:
    """Bytes allocated at the peak of ``fn(*args)`` above what was allocated before."""
    gc.collect()
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        fn(*args)
        return tracemalloc.get_traced_memory()[1] - before
    finally:
        tracemalloc.stop()


def test_compiled_memory_is_not_above_eager():
    """A chain of big ops, forward and backward: neither the captures (which copy no parameter)
    nor the replay (which frees each buffer after its last reader) peak above eager."""
    weights = [torch.tensor(RNG.standard_normal((256, 256)).astype(np.float32),
                            requires_grad=True) for _ in range(8)]
    x = torch.tensor(RNG.standard_normal((512, 256)).astype(np.float32))

    def step(x):
        for w in weights:
            w.grad = None
        h = x
        for w in weights:
            h = torch.tanh(h @ w) * 1.5 + h
        loss = (h * h).mean()
        loss.backward()
        return loss

    eager = _traced_peak(step, x)
    assert eager > 8 * (512 * 256 * 4)  # the activations are what peaks
    c = torch.compile(step)
    captures = [_traced_peak(c, x) for _ in range(2)]
    assert _replays(c) == 1
    replayed = _traced_peak(c, x)
    assert c.stats["replays"] == 1
    assert replayed <= eager
    # A capture's bookkeeping (names, lines) is Python objects of a few kilobytes.
    assert max(captures) <= eager + (64 << 10)
    loss = c(x)
    grads = [w.grad.clone() for w in weights]
    assert torch.equal(loss, step(x))
    assert all(torch.equal(g, w.grad) for g, w in zip(grads, weights))


def test_captures_of_an_in_place_update_copy_no_parameter():
    """An SGD step written in place into big parameters: the captures keep no copy of them (the
    program reads them from their tensors), and the replayed training equals eager's."""
    shapes = [(512, 256), (256, 128)]
    start = [RNG.standard_normal(s).astype(np.float32) for s in shapes]
    x = torch.tensor(RNG.standard_normal((8, 512)).astype(np.float32))

    def make():
        return [torch.tensor(w.copy(), requires_grad=True) for w in start]

    def stepper(params):
        def step(x):
            loss = torch.tanh(x @ params[0]).matmul(params[1]).square().mean()
            loss.backward()
            with torch.no_grad():
                for p in params:
                    p -= 0.1 * p.grad
                    p.grad = None
            return loss
        return step

    eager_params, params = make(), make()
    eager, c = stepper(eager_params), torch.compile(stepper(params))
    eager(x)  # a first step allocates what a step allocates
    peak = _traced_peak(eager, x)
    size = sum(w.nbytes for w in start)
    captures = [_traced_peak(c, x) for _ in range(2)]
    assert _replays(c) == 1
    assert max(captures) < peak + size // 2  # a copy of the parameters would be `size` more
    for _ in range(2):
        assert torch.equal(c(x), eager(x))
    assert c.stats["replays"] == 2
    assert all(torch.equal(p, q) for p, q in zip(params, eager_params))


def test_a_tensor_made_in_the_call_from_changing_values_and_written_runs_eagerly():
    """A tensor made from a Python value that changes every call, read and then written in place:
    no two captures agree on its value at first use, so the function runs eagerly, correctly."""
    state = {"n": 0}

    def f(x):
        state["n"] += 1
        c = torch.tensor([float(state["n"])])
        y = x * c
        c.add_(1)
        return y + c

    def g(x):  # the same, for eager's values
        c = torch.tensor([float(state["n"])])
        y = x * c
        c.add_(1)
        return y + c

    compiled = torch.compile(f)
    x = torch.tensor([2.0])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for _ in range(6):
            assert torch.equal(compiled(x), g(x))
    assert _replays(compiled) == 0


def test_item_assignment_into_a_tensor_made_inside_replays():
    """A write by indexing into a tensor the function made is part of the program (the capture
    sees it): each replay reads the written value, as eager does."""
    def f(x):
        c = torch.tensor([1.0, 2.0])
        y = x * c
        c[0] = 5.0
        return y * c

    g = torch.compile(f)
    x = torch.tensor([1.0, 3.0])
    for _ in range(4):
        assert g(x).tolist() == f(x).tolist() == [5.0, 12.0]


@pytest.mark.parametrize("threads", [1, 2])
def test_captures_run_large_elementwise_kernels_on_the_buffer_cache(threads):
    """A capture runs large elementwise kernels into the buffer cache's arrays, as eager does (no
    fresh pages to fault in); a buffer handed out again is a new array of the program, which is
    made from the two captures and replays eager's results bit for bit."""
    from chainrule import _threads

    x0 = RNG.standard_normal(1 << 19).astype(np.float32)  # 2 MiB: above GRAIN and BUFFER_MIN

    def f(x):
        y = x
        for _ in range(4):  # each result dies in the next round: its buffer comes back
            y = torch.exp(y * 0.5).sin() + y
        loss = (y * y).sum()
        loss.backward()
        return loss, y.detach()

    prior = torch.get_num_threads()
    torch.set_num_threads(threads)
    try:
        x, xe = (torch.tensor(x0, requires_grad=True) for _ in range(2))
        c = torch.compile(f)
        for i in range(4):
            x.grad = xe.grad = None
            _threads.empty_cache()
            before = set(_threads.cached)  # buffers something outside holds
            got = c(x)
            if i == 0:  # the capture's kernels took buffers from the cache
                assert set(_threads.cached) - before
            want = f(xe)
            assert all(torch.equal(p, q) for p, q in zip(got, want))
            assert torch.equal(x.grad, xe.grad)
        assert _replays(c) == 1 and c.stats["replays"] == 2
    finally:
        torch.set_num_threads(prior)


def test_recordings_of_the_same_structure_are_written_once(monkeypatch):
    """A second compiled function of the same code, with other tensors of the same shapes,
    reuses the first one's source (not written again), and each replays its own values; other
    shapes or dtypes are another structure, written afresh; all equal eager bit for bit."""
    from chainrule import _compile

    written = []
    source = _compile.Capture.source
    monkeypatch.setattr(_compile.Capture, "source",
                        lambda self, raw: written.append(1) or source(self, raw))

    def make(w):
        def f(x):
            return (torch.tanh(x * w) * torch.ones(x.shape[-1]) + w).sum(-1)
        return f

    def check(f, shape, dtype):
        c = torch.compile(f)
        for _ in range(3):
            x = torch.tensor(RNG.standard_normal(shape)).to(dtype)
            assert torch.equal(c(x), f(x))
        assert _replays(c) == 1

    _compile._CODES.clear()
    w1, w2 = (torch.tensor(RNG.standard_normal(5).astype(np.float32)) for _ in range(2))
    check(make(w1), (3, 5), torch.float32)
    assert len(written) == 1
    check(make(w2), (3, 5), torch.float32)  # same structure, other values: not written again
    assert len(written) == 1
    check(make(w2), (4, 5), torch.float32)  # other shapes
    assert len(written) == 2
    check(make(w2.double()), (3, 5), torch.float64)  # other dtypes
    assert len(written) == 3


def test_recordings_differing_only_in_their_kernels_are_written_apart():
    """The same lines calling another kernel are another structure: a product with ones is
    folded away, a sum with ones is not."""
    def mul(x):
        return (x.exp() * torch.ones(4)).sin()

    def add(x):
        return (x.exp() + torch.ones(4)).sin()

    x = torch.tensor(RNG.standard_normal(4).astype(np.float32))
    for f in (mul, add):
        c = torch.compile(f)
        for _ in range(3):
            assert torch.equal(c(x), f(x))
        assert _replays(c) == 1


def _backward_inside(x):
    y = x
    for _ in range(2):
        y = torch.exp(y * 0.5).sin() + y  # the `+ y` path reaches x with nothing saved
    (y * y).sum().backward()
    return y


def test_an_output_whose_graph_a_backward_inside_freed_in_part_runs_as_eager():
    x = torch.tensor([0.3, -1.2, 2.0], dtype=torch.float64, requires_grad=True)
    want = _backward_inside(x).detach().numpy()
    want_grad = x.grad.numpy().copy()
    compiled = torch.compile(_backward_inside)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        for _ in range(3):
            x.grad = None
            got = compiled(x)
            np.testing.assert_array_equal(got.detach().numpy(), want)
            np.testing.assert_array_equal(x.grad.numpy(), want_grad)
    assert any("freed by a backward inside the call" in str(w.message) for w in caught)
    with pytest.raises(RuntimeError, match="backward through the graph a second time"):
        got.sum().backward()
