"""The buffer cache of large elementwise results (_threads.buffer): an array is handed out again
only once nothing holds it (no tensor, view, saved value, gradient or NumPy reference), values
are never shared, and gradients through cached arrays equal PyTorch's."""

import gc

import numpy as np
import pytest
import torch

import chainrule as cr
from chainrule import _threads

N = 1 << 19  # float32: 2 MiB, above BUFFER_MIN


@pytest.fixture(autouse=True, params=[1, 2], ids=["1 thread", "2 threads"])
def threads(request):
    saved = cr.get_num_threads()
    cr.set_num_threads(request.param)
    yield request.param
    cr.set_num_threads(saved)


def address(t) -> int:
    return t.numpy().__array_interface__["data"][0]


def rng_array(n=N, seed=0, dtype=np.float32):
    return np.random.default_rng(seed).standard_normal(n).astype(dtype)


def test_a_dropped_result_is_reused_a_held_one_never():
    a = cr.tensor(rng_array())
    y = cr.exp(a)
    first = address(y)
    want = np.exp(a.numpy())
    z = cr.sin(a)  # y is held: z gets other memory
    assert address(z) != first
    np.testing.assert_array_equal(y.numpy(), want)
    del y
    gc.collect()
    w = cr.cos(a)
    assert address(w) == first  # y's memory again, with w's values
    np.testing.assert_array_equal(w.numpy(), np.cos(a.numpy()))
    np.testing.assert_array_equal(z.numpy(), np.sin(a.numpy()))


@pytest.mark.parametrize("holder", ["view", "numpy", "detached", "saved", "list"])
def test_anything_holding_the_array_keeps_it(holder):
    a = cr.tensor(rng_array(), requires_grad=holder == "saved")
    y = cr.exp(a)
    want = y.detach().numpy().copy()
    if holder == "view":
        kept = y[10:]
    elif holder == "numpy":
        kept = y.detach().numpy()
    elif holder == "detached":
        kept = y.detach()
    elif holder == "saved":
        kept = y * a  # mul saves y for a's gradient
    else:
        kept = [y.detach().numpy()]
    del y
    gc.collect()
    others = [cr.sin(a.detach()) + 1.0 for _ in range(3)]
    if holder == "saved":
        kept.sum().backward()
        np.testing.assert_allclose(a.grad.numpy(), want * (1 + a.detach().numpy()), rtol=1e-5,
                                   atol=1e-6)
    elif holder == "view":
        np.testing.assert_array_equal(kept.numpy(), want[10:])
    elif holder == "list":
        np.testing.assert_array_equal(kept[0], want)
    else:
        np.testing.assert_array_equal(np.asarray(kept), want)
    assert all(np.isfinite(o.numpy()).all() for o in others)


def test_small_results_and_results_with_parameters_are_not_cached():
    small = cr.exp(cr.tensor(rng_array(1000)))
    assert id(small.numpy()) not in _threads.cached
    assert id(cr.exp(cr.tensor(rng_array())).numpy()) in _threads.cached


def test_gradients_through_cached_arrays_equal_torch():
    """W6's function, twice in a row (the second backward runs on reused buffers)."""
    x0 = rng_array()
    ours = cr.tensor(x0.copy(), requires_grad=True)
    theirs = torch.tensor(x0.copy(), requires_grad=True)
    for _ in range(3):
        for m, x in ((cr, ours), (torch, theirs)):
            x.grad = None
            (m.exp(x) * m.sin(x) + x * x + x ** 2).sum().backward()
        np.testing.assert_allclose(ours.grad.numpy(), theirs.grad.numpy(), rtol=1e-5, atol=1e-5)
    kept = ours.grad
    want = kept.numpy().copy()
    ours.grad = None
    (cr.exp(ours) * cr.sin(ours)).sum().backward()  # kept is ours alone now: not reused
    np.testing.assert_array_equal(kept.numpy(), want)


def test_accumulated_grad_is_not_a_cached_array_still_in_use():
    x = cr.tensor(rng_array(), requires_grad=True)
    (x * 2.0).sum().backward()
    (x * 3.0).sum().backward()  # added into .grad in place
    np.testing.assert_array_equal(x.grad.numpy(), np.full(N, 5.0, np.float32))
    y = cr.exp(x.detach())
    assert not np.shares_memory(y.numpy(), x.grad.numpy())


def test_empty_cache_and_the_bound(monkeypatch):
    a = cr.tensor(rng_array())
    y = cr.exp(a)
    del y
    gc.collect()
    _threads.empty_cache()
    assert not any(np.shares_memory(b, a.numpy()) for held in _threads._buffers.values()
                   for b in held)
    assert _threads._buffer_bytes[0] == sum(b.nbytes for held in _threads._buffers.values()
                                            for b in held)
    monkeypatch.setattr(_threads, "BUFFER_CACHE", _threads._buffer_bytes[0] + 3 * 4 * N)
    live = [cr.exp(a) for _ in range(6)]  # only 3 more fit: the others are not kept
    assert sum(id(t.numpy()) in _threads.cached for t in live) == 3
    assert _threads._buffer_bytes[0] <= _threads.BUFFER_CACHE
    for i, t in enumerate(live):
        np.testing.assert_array_equal(t.numpy(), np.exp(a.numpy()), err_msg=str(i))


@pytest.mark.parametrize("change", ["read-only", "shape", "dtype"])
def test_an_array_changed_in_place_by_its_owner_is_not_handed_out_again(change):
    a = cr.tensor(rng_array())
    y = cr.exp(a).numpy()
    if change == "read-only":
        y.flags.writeable = False
    elif change == "shape":
        y.shape = (2, N // 2)
    else:
        y.dtype = np.int32
    at = y.__array_interface__["data"][0]
    del y
    gc.collect()
    z = cr.sin(a)  # the changed array is free but not as it was handed out: a new one
    np.testing.assert_array_equal(z.numpy(), np.sin(a.numpy()))
    assert address(z) != at


@pytest.mark.parametrize("shapes", [((1024, 1024), (1024,)), ((1024,), (1024, 1024)),
                                    ((600, 700), (700, 800)), ((3, 400, 500), (500, 300))])
def test_large_products_are_not_elementwise(shapes):
    # matmul is a NumPy ufunc too (a generalised one): neither split nor given an elementwise out
    rng = np.random.default_rng(4)
    a, b = (rng.standard_normal(s).astype(np.float32) for s in shapes)
    want = torch.tensor(a) @ torch.tensor(b)
    x, w = cr.tensor(a, requires_grad=True), cr.tensor(b, requires_grad=True)
    y = x @ w
    np.testing.assert_allclose(y.detach().numpy(), want.numpy(), rtol=2e-4, atol=2e-3)
    y.sum().backward()
    ta, tb = torch.tensor(a, requires_grad=True), torch.tensor(b, requires_grad=True)
    (ta @ tb).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), ta.grad.numpy(), rtol=2e-4, atol=2e-3)
    np.testing.assert_allclose(w.grad.numpy(), tb.grad.numpy(), rtol=2e-4, atol=2e-3)


def test_large_dot():
    a, b = rng_array(seed=5), rng_array(seed=6)
    want = torch.dot(torch.tensor(a, dtype=torch.float64), torch.tensor(b, dtype=torch.float64))
    got = cr.dot(cr.tensor(a), cr.tensor(b))
    assert got.dtype == cr.float32
    np.testing.assert_allclose(got.item(), want.item(), rtol=1e-4)



def _compiled_w6(x):
    def step():
        (cr.exp(x) * cr.sin(x) + x * x).sum().backward()

    compiled = cr.compile(step)
    for _ in range(3):  # two captures, then a replay
        x.grad = None
        compiled()
    return compiled


def test_compiled_replay_takes_buffers_from_the_cache(threads):
    """A replay's large results come from the cache as eager's do (no fresh pages)."""
    x = cr.tensor(rng_array(), requires_grad=True)
    compiled = _compiled_w6(x)
    seen = set()
    for _ in range(3):
        x.grad = None
        compiled()
        assert id(x.grad.numpy()) in _threads.cached
        seen.add(id(x.grad.numpy()))
    assert len(seen) == 1  # the dropped gradient's buffer each time
    x0 = torch.tensor(x.detach().numpy(), requires_grad=True)
    (torch.exp(x0) * torch.sin(x0) + x0 * x0).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), x0.grad.numpy(), rtol=1e-5, atol=1e-5)


def test_compiled_program_is_the_same_at_any_thread_count():
    """Split kernels fold as the ufuncs they split: a product with backward's gradient of ones
    is its other factor at 2 threads as at 1."""
    codes = []
    for n in (1, 2):
        cr.set_num_threads(n)
        codes.append(_compiled_w6(cr.tensor(rng_array(), requires_grad=True)).code)
    assert codes[0] == codes[1]
