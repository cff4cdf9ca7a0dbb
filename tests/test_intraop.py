"""The intra-op thread pool: set_num_threads/get_num_threads as PyTorch's; large elementwise ops
give the values of one thread bit for bit, large reductions PyTorch's within rounding and the same
values every time for a given number of threads (eager and compiled alike)."""

import os
import subprocess
import sys
import threading

import numpy as np
import pytest
import torch

import chainrule as cr
from chainrule import _threads

BOTH = pytest.mark.parametrize("m", [torch, cr], ids=["torch", "chainrule"])


@pytest.fixture(autouse=True)
def restore_threads(monkeypatch):
    saved = cr.get_num_threads(), torch.get_num_threads()
    # Cheap ufuncs (add, multiply...) split only above CHEAP_GRAIN; here at GRAIN, as the others,
    # so the tests' arrays exercise every split (test_cheap_ufuncs_split_later checks the rule).
    monkeypatch.setattr(_threads, "CHEAP_GRAIN", _threads.GRAIN)
    yield
    cr.set_num_threads(saved[0])
    torch.set_num_threads(saved[1])


def at_threads(n: int, fn):
    cr.set_num_threads(n)
    return fn()


def rng_array(shape, dtype=np.float32, seed=0):
    rng = np.random.default_rng(seed)
    if np.dtype(dtype).kind in "iu":
        return rng.integers(-1000, 1000, shape).astype(dtype)
    return rng.standard_normal(shape).astype(dtype)


# ---- set_num_threads / get_num_threads ---------------------------------------------------------


@BOTH
@pytest.mark.parametrize("n", [1, 2, 3, 8])
def test_get_num_threads_answers_what_was_set(m, n):
    m.set_num_threads(n)
    assert m.get_num_threads() == n


@pytest.mark.parametrize("bad", [0, -1, 2.0, True, "2", None])
def test_set_num_threads_refuses_as_torch(bad):
    with pytest.raises(Exception) as theirs:
        torch.set_num_threads(bad)
    with pytest.raises(type(theirs.value)) as ours:
        cr.set_num_threads(bad)
    assert str(ours.value) == str(theirs.value)


@pytest.mark.parametrize("env", [{}, {"OMP_NUM_THREADS": "1"}, {"OMP_NUM_THREADS": "64"},
                                 {"MKL_NUM_THREADS": "1"},
                                 {"OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "3"}],
                         ids=["default", "omp1", "omp64", "mkl1", "omp1-mkl3"])
def test_default_thread_count_is_torchs(env):
    variables = {k: v for k, v in os.environ.items()
                 if k not in ("OMP_NUM_THREADS", "MKL_NUM_THREADS")}
    code = ("import torch, chainrule; "
            "print(torch.get_num_threads(), chainrule.get_num_threads())")
    out = subprocess.run([sys.executable, "-c", code], env={**variables, **env},
                         capture_output=True, text=True, timeout=120, check=True)
    theirs, ours = out.stdout.split()
    assert ours == theirs


# ---- elementwise: the values of one thread, bit for bit -----------------------------------------

SHAPES = [
    ((300_001,), (300_001,)),  # pieces of unequal length
    ((517, 263), (517, 263)),
    ((1000, 300), (300,)),  # a broadcast operand
    ((1, 200_000), (1, 200_000)),  # cut along the second dim
    ((60_000, 3), (60_000, 1)),
]
BINARY = [lambda m, a, b: a + b, lambda m, a, b: a * b, lambda m, a, b: a - b,
          lambda m, a, b: a / b, lambda m, a, b: m.maximum(a, b), lambda m, a, b: a > b,
          lambda m, a, b: m.atan2(a, b), lambda m, a, b: a.abs() ** b]
UNARY = [lambda m, a: m.exp(a), lambda m, a: m.sin(a), lambda m, a: m.tanh(a),
         lambda m, a: m.log(a.abs()), lambda m, a: m.sqrt(a.abs()), lambda m, a: -a,
         lambda m, a: m.sigmoid(a), lambda m, a: m.relu(a)]


def _same(a: cr.Tensor, b: cr.Tensor) -> None:
    assert a.dtype == b.dtype and a.shape == b.shape and a.stride() == b.stride()
    np.testing.assert_array_equal(a.numpy(), b.numpy())


@pytest.mark.parametrize("shapes", SHAPES, ids=lambda s: f"{s[0]}-{s[1]}")
@pytest.mark.parametrize("i", range(len(BINARY)))
@pytest.mark.parametrize("threads", [2, 3])
def test_binary_ops_equal_one_thread(shapes, i, threads):
    f = BINARY[i]
    a, b = cr.tensor(rng_array(shapes[0], seed=1)), cr.tensor(rng_array(shapes[1], seed=2))
    one = at_threads(1, lambda: f(cr, a, b))
    many = at_threads(threads, lambda: f(cr, a, b))
    _same(many, one)
    theirs = f(torch, torch.tensor(a.numpy()), torch.tensor(b.numpy()))
    np.testing.assert_allclose(many.numpy(), theirs.numpy(), rtol=2e-6, atol=1e-6)


@pytest.mark.parametrize("i", range(len(UNARY)))
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_unary_ops_equal_one_thread(i, dtype):
    f = UNARY[i]
    a = cr.tensor(rng_array((300_001,), dtype))
    one = at_threads(1, lambda: f(cr, a))
    many = at_threads(3, lambda: f(cr, a))
    _same(many, one)
    theirs = f(torch, torch.tensor(a.numpy()))
    np.testing.assert_allclose(many.numpy(), theirs.numpy(), rtol=2e-6, atol=1e-6)


PY_FORWARD = [  # elementwise ops whose forward is several NumPy calls: split by pieces
    lambda m, a, b: m.nn.functional.gelu(a), lambda m, a, b: m.nn.functional.silu(a),
    lambda m, a, b: m.where(a > 0, a, b), lambda m, a, b: m.addcmul(a, a, b, value=0.5),
    lambda m, a, b: m.clamp(a, min=b, max=b + 1), lambda m, a, b: a.masked_fill(b > 0, 2.0),
    lambda m, a, b: m.nn.functional.leaky_relu(a, 0.1), lambda m, a, b: m.erf(a),
    lambda m, a, b: m.nn.functional.softplus(a), lambda m, a, b: m.lerp(a, b, 0.3),
    lambda m, a, b: m.nn.functional.hardtanh(a), lambda m, a, b: 2.0 - a,
]


@pytest.mark.parametrize("shapes", SHAPES[:3], ids=lambda s: f"{s[0]}-{s[1]}")
@pytest.mark.parametrize("i", range(len(PY_FORWARD)))
def test_python_forwards_split_and_equal_one_thread(shapes, i, monkeypatch):
    runs = []
    real = _threads._run
    monkeypatch.setattr(_threads, "_run", lambda tasks: (runs.append(len(tasks)), real(tasks)))
    f = PY_FORWARD[i]
    a, b = cr.tensor(rng_array(shapes[0], seed=1)), cr.tensor(rng_array(shapes[1], seed=2))
    one = at_threads(1, lambda: f(cr, a, b))
    assert runs == []
    many = at_threads(2, lambda: f(cr, a, b))
    assert 2 in runs
    _same(many, one)
    theirs = f(torch, torch.tensor(a.numpy()), torch.tensor(b.numpy()))
    np.testing.assert_allclose(many.numpy(), theirs.numpy(), rtol=2e-6, atol=2e-6)


@pytest.mark.parametrize("dim", [0, 1, -1])
@pytest.mark.parametrize("name", ["softmax", "log_softmax"])
def test_softmax_splits_along_a_kept_dim_and_equals_one_thread(name, dim, monkeypatch):
    runs = []
    real = _threads._run
    monkeypatch.setattr(_threads, "_run", lambda tasks: (runs.append(len(tasks)), real(tasks)))
    a = cr.tensor(rng_array((700, 600)) * 4)
    f = getattr(cr, name)
    one = at_threads(1, lambda: f(a, dim))
    many = at_threads(2, lambda: f(a, dim))
    assert 2 in runs
    _same(many, one)
    np.testing.assert_allclose(many.numpy(), getattr(torch, name)(torch.tensor(a.numpy()), dim),
                               rtol=1e-5, atol=1e-6)
    b = cr.tensor(rng_array((300_001,)))  # one dim, the one reduced: not split
    _same(at_threads(2, lambda: f(b, 0)), at_threads(1, lambda: f(b, 0)))


def test_python_forward_gradients_equal_one_thread():
    a = cr.tensor(rng_array((400, 700)), requires_grad=True)

    def grads():
        a.grad = None
        (cr.nn.functional.gelu(a) * cr.sigmoid(a) + cr.relu(a)).sum().backward()
        return a.grad

    _same(at_threads(2, grads), at_threads(1, grads))


@pytest.mark.parametrize("dtype", [np.float32, np.int64])
def test_every_split_python_forward_equals_the_forward(dtype):
    """Each op record given a pieces split, run on large operands of its number of inputs at 3
    threads: what its forward gives (or the same error)."""
    from chainrule.ops._registry import REGISTRY

    ops = [op for op in REGISTRY.values() if type(op.split) is _threads.pieces]
    assert len(ops) > 100
    cr.set_num_threads(3)
    arrays = [rng_array((300_001,), dtype, seed=s) for s in range(4)]
    if dtype == np.float32:
        arrays[0] = np.abs(arrays[0]) / 4  # some ops need [0, 1)
    for op in ops:
        args = arrays[:len(op.inputs)]
        try:
            want = op.forward(*args)
        except Exception as e:  # noqa: BLE001 - the split must raise the same
            with pytest.raises(type(e)):
                op.split(*args)
            continue
        got = op.split(*args)
        assert got.dtype == want.dtype and got.shape == want.shape, op.name
        np.testing.assert_array_equal(got, want, err_msg=op.name)


@pytest.mark.parametrize("dtype", [np.int64, np.int32, np.float64])
def test_integer_and_mixed_dtypes_equal_one_thread(dtype):
    a = cr.tensor(rng_array((250_000,), dtype))
    b = cr.tensor(rng_array((250_000,), np.float32, seed=3))
    for f in (lambda: a + a, lambda: a * 3, lambda: a + b, lambda: a * 2.5, lambda: a == a):
        _same(at_threads(2, f), at_threads(1, f))


def test_non_contiguous_operands_equal_one_thread():
    a = cr.tensor(rng_array((600, 500)))
    for f in (lambda: a.t() + 1, lambda: a[:, ::2] * a[:, 1::2], lambda: a.t().exp()):
        _same(at_threads(2, f), at_threads(1, f))


def test_inplace_ops_equal_one_thread():
    base = rng_array((400_000,))

    def run():
        x = cr.tensor(base.copy())
        x.add_(cr.tensor(base))
        x.mul_(0.5)
        x.sub_(cr.tensor(base[::-1].copy()) * 0.25)
        x[1:].add_(x[:-1])  # overlapping operands: NumPy's buffered copy, unsplit
        return x

    _same(at_threads(2, run), at_threads(1, run))


def test_inplace_cast_error_as_on_one_thread():
    ours = cr.zeros(200_000, dtype=cr.int64)
    messages = []
    for threads in (1, 2):
        cr.set_num_threads(threads)
        with pytest.raises(RuntimeError) as got:
            ours.add_(cr.ones(200_000))
        messages.append(str(got.value))
    assert messages[0] == messages[1]
    assert (ours == 0).all()


def _large_step(x0):
    x = cr.tensor(x0.copy(), requires_grad=True)
    y = cr.exp(x) * cr.sin(x) + x * x
    y.backward(cr.ones_like(y))
    return y.detach(), x.grad


def test_backward_equals_one_thread():
    x0 = rng_array((1 << 20,))
    one, many = at_threads(1, lambda: _large_step(x0)), at_threads(2, lambda: _large_step(x0))
    for a, b in zip(many, one):
        _same(a, b)


# ---- reductions: within rounding of PyTorch's, and the same every time ------------------------

REDUCTIONS = [
    ("sum", {}), ("sum", {"dim": 0}), ("sum", {"dim": 1}), ("sum", {"dim": (0, 1)}),
    ("sum", {"dim": 0, "keepdim": True}), ("sum", {"dim": -1, "keepdim": True}),
    ("mean", {}), ("mean", {"dim": 0}), ("mean", {"dim": 1, "keepdim": True}),
]


@pytest.mark.parametrize("name,kwargs", REDUCTIONS, ids=lambda v: str(v))
@pytest.mark.parametrize("shape", [(1000, 300), (7, 60_001), (200_001, 2)], ids=str)
@pytest.mark.parametrize("threads", [2, 3])
def test_reductions_match_torch_and_repeat(name, kwargs, shape, threads):
    a0 = rng_array(shape, np.float32)
    a = cr.tensor(a0)
    cr.set_num_threads(threads)
    first = getattr(cr, name)(a, **kwargs)
    for _ in range(3):
        np.testing.assert_array_equal(getattr(cr, name)(a, **kwargs).numpy(), first.numpy())
    theirs = getattr(torch, name)(torch.tensor(a0), **kwargs)
    assert first.shape == theirs.shape and str(first.dtype) == str(theirs.dtype)
    # Rounding bounded by the sum of magnitudes: float32 sums in any order, one thread's too.
    exact = getattr(torch, name)(torch.tensor(a0).double(), **kwargs).numpy()
    bound = 1e-6 * getattr(torch, name)(torch.tensor(a0).double().abs(), **kwargs).numpy()
    one = at_threads(1, lambda: getattr(cr, name)(a, **kwargs))
    for values in (first, theirs, one):
        assert (np.abs(values.numpy() - exact) <= bound).all()


def test_reduction_along_a_kept_dim_equals_one_thread():
    a = cr.tensor(rng_array((2000, 300)))
    for f in (lambda: a.sum(1), lambda: a.mean(1), lambda: a.sum(-1, keepdim=True)):
        _same(at_threads(2, f), at_threads(1, f))


@pytest.mark.parametrize("dtype", [np.int64, np.int32, np.float64])
def test_integer_and_double_sums(dtype):
    a = cr.tensor(rng_array((300_000,), dtype))
    theirs = torch.tensor(a.numpy()).sum()
    cr.set_num_threads(3)
    ours = a.sum()
    assert str(ours.dtype) == str(theirs.dtype)
    if dtype == np.float64:
        np.testing.assert_allclose(ours.numpy(), theirs.numpy(), rtol=1e-12)
    else:
        assert ours.item() == theirs.item()


def test_compiled_replay_equals_eager():
    x0 = rng_array((1 << 19,))

    def step(x):
        loss = (cr.exp(x) * cr.sin(x) + x * x).mean() + x.sum(0) * 1e-3
        loss.backward()
        return loss

    compiled = cr.compile(step)
    for threads in (2, 3):
        cr.set_num_threads(threads)
        x = cr.tensor(x0.copy(), requires_grad=True)
        eager_loss = step(x)
        eager_grad = x.grad.numpy().copy()
        for _ in range(4):
            x.grad = None
            loss = compiled(x)
            assert loss.item() == eager_loss.item()
            np.testing.assert_array_equal(x.grad.numpy(), eager_grad)


def test_user_threads_sharing_the_pool_get_the_same_values():
    arrays = [rng_array((500_000,), seed=s) for s in range(4)]
    cr.set_num_threads(2)

    def work(a):
        t = cr.tensor(a)
        return [(cr.exp(t) * t).sum().item() for _ in range(5)]

    serial = [work(a) for a in arrays]
    results: list = [None] * len(arrays)
    threads = [threading.Thread(target=lambda i=i: results.__setitem__(i, work(arrays[i])))
               for i in range(len(arrays))]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=120)
    assert results == serial


@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs fork")
def test_a_forked_child_splits_with_its_own_pool():
    a = cr.tensor(rng_array((500_000,)))
    cr.set_num_threads(2)
    want = (cr.exp(a) + 1).sum().item()  # the parent's workers exist now
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: its first split starts new workers
        try:
            os.write(write, repr((cr.exp(a) + 1).sum().item()).encode())
        finally:
            os._exit(0)
    os.close(write)
    got = os.read(read, 100)
    os.close(read)
    os.waitpid(pid, 0)
    assert float(got) == want


def test_only_large_ops_are_split(monkeypatch):
    runs = []
    real = _threads._run
    monkeypatch.setattr(_threads, "_run", lambda tasks: (runs.append(len(tasks)), real(tasks)))
    big, small = cr.tensor(rng_array((300_000,))), cr.tensor(rng_array((1000,)))
    cr.set_num_threads(1)
    cr.exp(big), big.sum()
    assert runs == []
    cr.set_num_threads(2)
    cr.exp(small) + small, small.sum()
    assert runs == []
    cr.exp(big), big + big, big.sum()
    assert runs == [2, 2, 2]


def test_cheap_ufuncs_split_later(monkeypatch):
    monkeypatch.setattr(_threads, "CHEAP_GRAIN", 1 << 20)
    runs = []
    real = _threads._run
    monkeypatch.setattr(_threads, "_run", lambda tasks: (runs.append(len(tasks)), real(tasks)))
    cr.set_num_threads(2)
    mid, big = cr.tensor(rng_array((300_000,))), cr.tensor(rng_array((1_100_000,), seed=1))
    want = at_threads(1, lambda: (mid + mid, mid * 2, big * big, cr.exp(mid)))
    got = at_threads(2, lambda: (mid + mid, mid * 2, big * big, cr.exp(mid)))
    assert runs == [2, 2]  # big * big and exp(mid); not the cheap ops on mid
    for a, b in zip(got, want, strict=True):
        _same(a, b)


def test_an_interrupted_split_leaves_a_working_pool(monkeypatch):
    a = cr.tensor(rng_array((400_000,)))
    cr.set_num_threads(2)
    want = cr.exp(a)
    pool = _threads._pool[0]
    real = _threads._Worker.wait
    once = [True]

    def interrupted(self):
        error = real(self)
        if once and once.pop():
            raise KeyboardInterrupt
        return error

    monkeypatch.setattr(_threads._Worker, "wait", interrupted)
    with pytest.raises(KeyboardInterrupt):
        cr.exp(a)
    assert _threads._pool[0] is None
    _same(cr.exp(a), want)
    assert _threads._pool[0] is not pool
