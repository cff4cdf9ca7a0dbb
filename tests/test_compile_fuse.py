"""chainrule.compile's fused back end (chainrule._fuse): fused programs agree with torch and with
the unfused replay to float tolerance (not bit for bit: numba's exp and sin are libm's), keep
dtypes, load from the on-disk cache without compiling, and are off without numba.

The suite runs with CHAINRULE_FUSE=0 (conftest.py); these tests turn the back end on with the
fused replay chosen unmeasured (``_fuse._force``), and wait for the kernels with ``_fuse.wait``.
"""

from __future__ import annotations

import os
import subprocess
import sys

import numpy as np
import pytest
import torch as ref

import chainrule as torch
from chainrule import _fuse


@pytest.fixture(scope="module")
def kernel_dir(tmp_path_factory):
    return tmp_path_factory.mktemp("fused")


@pytest.fixture
def fused(monkeypatch, kernel_dir):
    """The back end on, kernels cached in one directory for the module, fused replays chosen."""
    monkeypatch.setenv("CHAINRULE_CACHE_DIR", str(kernel_dir))
    monkeypatch.setattr(_fuse, "enabled", True)
    monkeypatch.setattr(_fuse, "_force", True)
    yield
    assert _fuse.wait(600)


def _ready(fn, *args, leaves=()) -> object:
    """Call ``fn`` until it has a program, wait for its kernels, then call it once more (the
    ``.grad`` of ``leaves`` set to None before each call)."""
    for _ in range(4):  # two captures that agree: the program is built and handed over
        for t in leaves:
            t.grad = None
        fn(*args)
        if fn.stats["programs"]:
            break
    assert fn.stats["programs"] == 1
    assert _fuse.wait(600), "the fused kernels were not ready in 10 minutes"
    for t in leaves:
        t.grad = None
    return fn(*args)


PATTERN = ("mul", "add", "sin", "mul", "add", "tanh", "exp", "mul")


def _chain(lib, a, b):
    table = {"mul": lambda y: y * a, "add": lambda y: y + b, "sin": lib.sin, "tanh": lib.tanh,
             "exp": lib.exp}
    return [table[name] for name in PATTERN * 3]


def _through(y, ops):
    for op in ops:
        y = op(y)
    return y


def _tensors(lib, dtype, shape=(4,)):
    rng = np.random.default_rng(1)
    x = rng.standard_normal(shape).astype(dtype)
    a = rng.uniform(0.5, 1.5, shape).astype(dtype)
    b = rng.uniform(-0.5, 0.5, shape).astype(dtype)
    return lib.tensor(x, requires_grad=True), lib.tensor(a), lib.tensor(b)


def _tol(dtype):
    return dict(rtol=2e-5, atol=1e-6) if dtype == np.float32 else dict(rtol=1e-12, atol=1e-14)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("shape", [(4,), (3, 5)])
def test_chain_with_backward_inside(fused, like_torch, dtype, shape):
    x, a, b = _tensors(torch, dtype, shape)
    ops = _chain(torch, a, b)

    @torch.compile
    def step():
        y = _through(x, ops)
        y.sum().backward()
        return y

    y = _ready(step, leaves=(x,))
    assert step.stats["fused"] == 1 and "fused0(" in step.code
    rx, ra, rb = _tensors(ref, dtype, shape)
    ry = rx
    for op in _chain(ref, ra, rb):
        ry = op(ry)
    ry.sum().backward()
    like_torch(y.detach(), ry.detach(), **_tol(dtype))
    like_torch(x.grad, rx.grad, **_tol(dtype))
    assert y.dtype == x.grad.dtype == torch.float32 if dtype == np.float32 else torch.float64


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_backward_outside_the_call(fused, like_torch, dtype):
    x, a, b = _tensors(torch, dtype)
    ops = _chain(torch, a, b)

    @torch.compile
    def forward(x):
        return _through(x, ops)

    y = _ready(forward, x)
    (y * y).sum().backward()
    assert forward.stats["fused"] == 1 and "def backward" in forward.code
    rx, ra, rb = _tensors(ref, dtype)
    ry = rx
    for op in _chain(ref, ra, rb):
        ry = op(ry)
    (ry * ry).sum().backward()
    like_torch(y.detach(), ry.detach(), **_tol(dtype))
    like_torch(x.grad, rx.grad, **_tol(dtype))


def test_non_fusable_op_in_the_middle(fused, like_torch):
    x, a, b = _tensors(torch, np.float32)
    ops = _chain(torch, a, b)

    def body(lib, x, ops):
        y = x
        for op in ops[:8]:
            y = op(y)
        y = lib.cumsum(y, 0)  # not elementwise: a Python line between two kernels
        for op in ops[8:]:
            y = op(y)
        loss = (y * y).mean()
        loss.backward()
        return loss, y

    step = torch.compile(lambda: body(torch, x, ops))
    loss, y = _ready(step, leaves=(x,))
    assert "fused0(" in step.code and "fused1(" in step.code
    rx, ra, rb = _tensors(ref, np.float32)
    rloss, ry = body(ref, rx, _chain(ref, ra, rb))
    like_torch(loss.detach(), rloss.detach(), rtol=2e-5, atol=1e-6)
    like_torch(y.detach(), ry.detach(), rtol=2e-5, atol=1e-6)
    like_torch(x.grad, rx.grad, rtol=2e-5, atol=1e-6)


def test_reductions_and_scalars(fused, like_torch):
    """A sum read by later elementwise lines ends a kernel (it is known only after the loop);
    Python numbers and 0-d tensors are scalars of the loop, in the arrays' dtype."""
    rng = np.random.default_rng(2)
    data = rng.standard_normal(6).astype(np.float32)
    scale = np.float32(1.5)

    def body(lib, x, s):
        e = lib.exp(x * 0.5 - 1) * s
        p = e / e.sum()  # softmax by hand
        loss = (lib.sigmoid(p * 3.0) + lib.relu(x - 0.25) * 2).sum()
        loss.backward()
        return loss, p

    x, s = torch.tensor(data, requires_grad=True), torch.tensor(scale)
    step = torch.compile(lambda: body(torch, x, s))
    loss, p = _ready(step, leaves=(x,))
    assert step.stats["fused"] == 1
    rx, rs = ref.tensor(data, requires_grad=True), ref.tensor(scale)
    rloss, rp = body(ref, rx, rs)
    like_torch(loss.detach(), rloss.detach(), rtol=2e-5, atol=1e-6)
    like_torch(p.detach(), rp.detach(), rtol=2e-5, atol=1e-6)
    like_torch(x.grad, rx.grad, rtol=2e-5, atol=1e-6)


def test_matches_the_unfused_replay(fused):
    x, a, b = _tensors(torch, np.float32)
    ops = _chain(torch, a, b)

    def body():
        return _through(x, ops).detach()

    plain, fast = torch.compile(body), torch.compile(body)
    _fuse.enabled = False  # (the fixture's monkeypatch restores it)
    want = _ready(plain)
    _fuse.enabled = True
    got = _ready(fast)
    assert "fused" not in plain.stats and fast.stats["fused"] == 1
    np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=2e-6, atol=1e-7)


def test_second_loader_uses_the_cache(fused, monkeypatch, tmp_path):
    monkeypatch.setenv("CHAINRULE_CACHE_DIR", str(tmp_path))
    x, a, b = _tensors(torch, np.float32)
    ops = _chain(torch, a, b)[:5]

    @torch.compile
    def step():
        return _through(x, ops).detach()

    compiled = _fuse.counts["compiled"]
    _ready(step)
    assert _fuse.counts["compiled"] == compiled + 1  # a subprocess compiled the kernels
    kernels = step._programs[0].kernels
    module = next(m for name, m in sys.modules.items() if name.startswith("chainrule_fused_")
                  and m.__file__.startswith(str(tmp_path)))
    monkeypatch.delitem(sys.modules, module.__name__)  # as a new process: a fresh import
    again = _fuse._load(kernels)
    assert again is not module and again.__file__ == module.__file__
    assert _fuse.counts["compiled"] == compiled + 1  # not compiled again
    assert _fuse.cache_misses(again) == 0  # numba loaded it from the cache
    np.testing.assert_array_equal(step().numpy(), step().numpy())


def test_off_without_numba(monkeypatch, tmp_path):
    monkeypatch.setenv("CHAINRULE_CACHE_DIR", str(tmp_path))
    monkeypatch.setattr(_fuse, "enabled", True)
    monkeypatch.setattr(_fuse, "_force", True)
    monkeypatch.setitem(sys.modules, "numba", None)  # import numba fails
    monkeypatch.setattr(_fuse, "_available", [None])
    x, a, b = _tensors(torch, np.float32)
    ops = _chain(torch, a, b)

    @torch.compile
    def step():
        return _through(x, ops).detach()

    want = _through(x.detach(), ops)
    for _ in range(4):
        got = step()
    assert _fuse.wait(0) and not _fuse.available()
    assert "fused" not in step.stats and "fused0" not in step.code
    assert torch.equal(got, want)  # the plain replay: bit for bit eager's
    assert not list(tmp_path.iterdir())


def test_off_by_config(monkeypatch, tmp_path):
    monkeypatch.setenv("CHAINRULE_CACHE_DIR", str(tmp_path))
    monkeypatch.setattr(_fuse, "_force", True)
    with torch.compiler.config.patch(fuse=False):
        assert _fuse.enabled is False
        x, a, b = _tensors(torch, np.float32)
        ops = _chain(torch, a, b)
        step = torch.compile(lambda: [op(x) for op in ops][-1].detach())
        for _ in range(4):
            step()
        assert _fuse.wait(0) and "fused" not in step.stats
    assert not list(tmp_path.iterdir())


def test_the_choice_keeps_the_faster(monkeypatch):
    """Fused and unfused replays alternate, ROUNDS each, and the faster by the medians stays
    (a fake clock: no timing in tests)."""
    clock = iter(range(1000))
    monkeypatch.setattr(_fuse, "perf_counter", lambda: next(clock))

    class Program:
        source = "unfused"

    for slow_fused in (False, True):
        calls = []
        program = Program()

        def unfused(A, slow=slow_fused, calls=calls):
            calls.append("u")
            if not slow:  # the fake clock ticks once more inside: unfused takes longer
                next(clock)
            return A

        def fast(A, slow=slow_fused, calls=calls):
            calls.append("f")
            if slow:
                next(clock)
            return A

        program.replay = chooser = _fuse._Chooser(program, unfused, fast, "fused source")
        for i in range(2 * _fuse.ROUNDS):
            assert program.replay(i) == i
        assert calls == ["u", "f"] * _fuse.ROUNDS
        assert program.fused is (not slow_fused)
        assert program.replay is (unfused if slow_fused else fast)
        assert program.source == ("unfused" if slow_fused else "fused source")
        assert chooser.times[0] and chooser.times[1]


def test_forward_mean_and_backward_in_one_kernel(fused, like_torch):
    """The mean's backward (its gradient broadcast, divided by the count) continues the loop that
    computed the mean: one kernel, the output's value, the mean and the gradient written out."""
    data = np.linspace(-1, 1, 6).astype(np.float32)

    def body(lib, x):
        y = lib.tanh(x * 2) + 1
        loss = (y * y).mean()
        loss.backward()
        return loss, y.detach()

    x = torch.tensor(data, requires_grad=True)
    step = torch.compile(lambda: body(torch, x))
    loss, y = _ready(step, leaves=(x,))
    assert "fused0(" in step.code and "fused1(" not in step.code
    rx = ref.tensor(data, requires_grad=True)
    rloss, ry = body(ref, rx)
    like_torch(loss.detach(), rloss.detach(), rtol=2e-6, atol=1e-7)
    like_torch(y, ry, rtol=2e-6, atol=1e-7)
    like_torch(x.grad, rx.grad, rtol=2e-6, atol=1e-7)


_CHILD = """
import numpy as np, chainrule as torch
from chainrule import _fuse
_fuse._force = True
x = torch.tensor(np.linspace(-1, 1, 5).astype(np.float32))
step = torch.compile(lambda: torch.exp(torch.sin(x * 2) + 1) * x)
for _ in range(3):
    step()
assert _fuse.wait(600) and step.stats["fused"] == 1, _fuse.errors
module = next(m for n, m in __import__("sys").modules.items() if n.startswith("chainrule_fused_"))
print(_fuse.counts["compiled"], _fuse.cache_misses(module))
"""


def test_a_second_process_only_loads(tmp_path):
    env = dict(os.environ, CHAINRULE_FUSE="1", CHAINRULE_CACHE_DIR=str(tmp_path))
    runs = [subprocess.run([sys.executable, "-c", _CHILD], env=env, capture_output=True,
                           text=True, timeout=900, check=True).stdout.split() for _ in range(2)]
    assert runs == [["1", "0"], ["0", "0"]]  # compiled (in a subprocess), then loaded
