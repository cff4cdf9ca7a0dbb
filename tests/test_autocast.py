"""CPU autocast against torch: the lists (lower precision, float32, promote) for bfloat16 and
float16, the values and gradients of a mixed-precision step, the state functions, nesting,
enabled=False, the decorator, the deprecated and amp entry points, the weight cache, threads."""

from __future__ import annotations

import threading
import warnings

import numpy as np
import pytest
import torch

import chainrule as cr


def _inputs(m, dt):
    rng = np.random.default_rng(0)

    def mk(*shape):
        return m.tensor(rng.standard_normal(shape).astype(np.float32)).to(dt)

    return {"a": mk(4, 4), "b": mk(4, 4), "v": mk(4), "x3": mk(2, 4, 4), "img": mk(1, 2, 6, 6),
            "w2": mk(3, 2, 3, 3), "seq": mk(1, 2, 8), "w1": mk(3, 2, 3), "vol": mk(1, 2, 4, 4, 4),
            "w3": mk(3, 2, 2, 2, 2), "p": m.tensor(rng.random((4, 4)).astype(np.float32)).to(dt),
            "idx": m.tensor([0, 2, 1, 3])}


_F = "nn.functional"
# name -> call(m, F, inputs); each runs inside autocast on float32 and on the autocast dtype
CASES = {
    "mm": lambda m, F, i: m.mm(i["a"], i["b"]), "matmul": lambda m, F, i: m.matmul(i["a"], i["b"]),
    "@": lambda m, F, i: i["a"] @ i["b"], "Tensor.mm": lambda m, F, i: i["a"].mm(i["b"]),
    "bmm": lambda m, F, i: m.bmm(i["x3"], i["x3"]),
    "baddbmm": lambda m, F, i: m.baddbmm(i["x3"], i["x3"], i["x3"]),
    "addmm": lambda m, F, i: m.addmm(i["a"], i["a"], i["b"]),
    "addbmm": lambda m, F, i: m.addbmm(i["a"], i["x3"], i["x3"]),
    "linear": lambda m, F, i: F.linear(i["a"], i["b"], i["v"]),
    "conv1d": lambda m, F, i: F.conv1d(i["seq"], i["w1"]),
    "conv2d": lambda m, F, i: F.conv2d(i["img"], i["w2"]),
    "conv3d": lambda m, F, i: F.conv3d(i["vol"], i["w3"]),
    "conv_transpose2d": lambda m, F, i: F.conv_transpose2d(i["img"], i["w2"].transpose(0, 1)),
    "prelu": lambda m, F, i: F.prelu(i["a"], i["v"][:1]),
    "sdpa": lambda m, F, i: F.scaled_dot_product_attention(i["x3"], i["x3"], i["x3"]),
    "einsum": lambda m, F, i: m.einsum("ij,jk->ik", i["a"], i["b"]),
    "einsum_elementwise": lambda m, F, i: m.einsum("ij,ij->ij", i["a"], i["b"]),
    "tensordot": lambda m, F, i: m.tensordot(i["a"], i["b"], 1),
    "inner": lambda m, F, i: m.inner(i["a"], i["b"]),
    "inner_vectors": lambda m, F, i: m.inner(i["v"], i["v"]),
    "multi_dot": lambda m, F, i: m.linalg.multi_dot([i["a"], i["b"], i["a"]]),
    "vecdot": lambda m, F, i: m.linalg.vecdot(i["a"], i["b"]),
    "matrix_power": lambda m, F, i: m.linalg.matrix_power(i["a"], 3),
    "matrix_power_1": lambda m, F, i: m.linalg.matrix_power(i["a"], 1),
    "mv": lambda m, F, i: m.mv(i["a"], i["v"]), "dot": lambda m, F, i: m.dot(i["v"], i["v"]),
    "outer": lambda m, F, i: m.outer(i["v"], i["v"]),
    # float32
    "mse_loss": lambda m, F, i: F.mse_loss(i["a"], i["b"]),
    "l1_loss": lambda m, F, i: F.l1_loss(i["a"], i["b"]),
    "smooth_l1_loss": lambda m, F, i: F.smooth_l1_loss(i["a"], i["b"]),
    "nll_loss": lambda m, F, i: F.nll_loss(i["a"], i["idx"]),
    "cross_entropy": lambda m, F, i: F.cross_entropy(i["a"], i["idx"]),
    "bce": lambda m, F, i: F.binary_cross_entropy(i["p"], i["p"]),
    "bce_logits": lambda m, F, i: F.binary_cross_entropy_with_logits(i["a"], i["p"]),
    "kl_div": lambda m, F, i: F.kl_div(i["a"], i["p"], reduction="batchmean"),
    "multilabel_soft_margin": lambda m, F, i: F.multilabel_soft_margin_loss(i["a"], i["p"]),
    "avg_pool3d": lambda m, F, i: F.avg_pool3d(i["vol"], 2),
    "max_pool3d": lambda m, F, i: F.max_pool3d(i["vol"], 2),
    "adaptive_avg_pool3d": lambda m, F, i: F.adaptive_avg_pool3d(i["vol"], 2),
    "pad_reflect": lambda m, F, i: F.pad(i["seq"], (1, 1), mode="reflect"),
    "pad_replicate": lambda m, F, i: F.pad(i["img"], (1, 1, 1, 1), mode="replicate"),
    "pad_constant": lambda m, F, i: F.pad(i["img"], (1, 1)),
    "grid_sample": lambda m, F, i: F.grid_sample(i["img"], i["p"][:3, :2].reshape(1, 1, 3, 2),
                                                  align_corners=False),
    "cdist": lambda m, F, i: m.cdist(i["a"], i["b"]), "trace": lambda m, F, i: m.trace(i["a"]),
    "prod": lambda m, F, i: i["a"].prod(), "prod_dim": lambda m, F, i: m.prod(i["a"], 0),
    "quantile": lambda m, F, i: m.quantile(i["a"], 0.3),
    "fft": lambda m, F, i: m.fft.fft(i["a"]), "rfft": lambda m, F, i: m.fft.rfft(i["a"]),
    "irfft": lambda m, F, i: m.fft.irfft(i["a"]),
    "inv": lambda m, F, i: m.linalg.inv(i["a"]), "inverse": lambda m, F, i: m.inverse(i["a"]),
    "solve": lambda m, F, i: m.linalg.solve(i["a"], i["b"]),
    "eigh": lambda m, F, i: m.linalg.eigh(i["a"] + i["a"].T)[0],
    "qr": lambda m, F, i: m.linalg.qr(i["a"])[0], "svd": lambda m, F, i: m.linalg.svd(i["a"])[1],
    "cholesky": lambda m, F, i: m.linalg.cholesky(
        i["a"] @ i["a"].T + 4 * m.eye(4, dtype=i["a"].dtype)),
    # neither: the inputs' dtypes
    "softmax": lambda m, F, i: F.softmax(i["a"], -1),
    "layer_norm": lambda m, F, i: F.layer_norm(i["a"], (4,)),
    "sum": lambda m, F, i: i["a"].sum(), "exp": lambda m, F, i: i["a"].exp(),
    "add": lambda m, F, i: i["a"] + i["b"], "relu": lambda m, F, i: F.relu(i["a"]),
    "gelu": lambda m, F, i: F.gelu(i["a"]), "norm": lambda m, F, i: m.linalg.vector_norm(i["a"]),
    "cumsum": lambda m, F, i: i["a"].cumsum(0),
    "max_pool2d": lambda m, F, i: F.max_pool2d(i["img"], 2),
    "cat": lambda m, F, i: m.cat([i["a"], i["b"]]),
    "stack": lambda m, F, i: m.stack([i["a"], i["b"]]),
}


def _dtype_under_autocast(m, name, input_dtype, fast):
    F = m.nn.functional
    inputs = _inputs(m, getattr(m, input_dtype))
    with m.autocast("cpu", dtype=getattr(m, fast)):
        out = CASES[name](m, F, inputs)
    return str((out[0] if isinstance(out, tuple) else out).dtype)


@pytest.mark.parametrize("fast", ["bfloat16", "float16"])
@pytest.mark.parametrize("name", list(CASES))
def test_lists_match_torch(name, fast):
    for input_dtype in ("float32", fast):
        assert _dtype_under_autocast(cr, name, input_dtype, fast) == \
            _dtype_under_autocast(torch, name, input_dtype, fast), input_dtype


def _close(ours, theirs, fast="bfloat16", ulps=1):
    """Within a rounding of the autocast dtype: float32 sums of another BLAS may round apart, and
    a float32 result computed from lower-precision values inherits their rounding."""
    o, t = ours.detach().float().numpy(), theirs.detach().float().numpy()
    eps = {"bfloat16": 2.0**-7, "float16": 2.0**-10}[fast] * ulps
    np.testing.assert_allclose(o, t, rtol=eps, atol=eps * np.abs(t).max())


def _step(m, fast):
    """A mixed-precision forward and backward: linear, relu, matmul, a float32 loss."""
    F = m.nn.functional
    rng = np.random.default_rng(1)
    x = m.tensor(rng.standard_normal((8, 16)).astype(np.float32), requires_grad=True)
    w = m.tensor(rng.standard_normal((12, 16)).astype(np.float32), requires_grad=True)
    bias = m.tensor(rng.standard_normal(12).astype(np.float32), requires_grad=True)
    img = m.tensor(rng.standard_normal((2, 3, 9, 9)).astype(np.float32))
    k = m.tensor(rng.standard_normal((4, 3, 3, 3)).astype(np.float32), requires_grad=True)
    target = m.tensor(rng.integers(0, 12, 8))
    with m.autocast("cpu", dtype=getattr(m, fast)):
        y = F.linear(x, w, bias)
        z = F.relu(y) @ w
        c = F.conv2d(img, k, padding=1)
        loss = F.cross_entropy(y, target) + c.float().square().mean() * 1e-2
    (loss + z.float().sum() * 1e-3).backward()
    return (y, z, c, loss), (x.grad, w.grad, bias.grad, k.grad)


@pytest.mark.parametrize("fast", ["bfloat16", "float16"])
def test_values_and_gradients(fast):
    (ours, ours_grads), (theirs, theirs_grads) = _step(cr, fast), _step(torch, fast)
    for o, t in zip(ours, theirs):
        assert str(o.dtype) == str(t.dtype)
        _close(o, t, fast)
    for o, t in zip(ours_grads, theirs_grads):
        assert o.dtype is cr.float32 and t.dtype is torch.float32  # the leaves' dtype
        np.testing.assert_allclose(o.numpy(), t.numpy(), rtol=2**-6,
                                   atol=2**-6 * np.abs(t.numpy()).max())


def _modules(m):
    m.manual_seed(0)
    net = m.nn.Sequential(m.nn.Conv1d(4, 6, 3), m.nn.ReLU(), m.nn.Flatten(), m.nn.Linear(36, 5))
    mha = m.nn.MultiheadAttention(8, 2)
    x = m.randn(3, 4, 8)
    q = m.randn(5, 2, 8)
    with m.autocast("cpu"):
        return net(x), mha(q, q, q)[0], m.nn.CrossEntropyLoss()(net(x), m.tensor([0, 1, 2]))


def test_modules():
    for o, t in zip(_modules(cr), _modules(torch)):
        assert str(o.dtype) == str(t.dtype)
        _close(o, t, ulps=2)  # two roundings deep


def _states(m):
    seen = [m.is_autocast_enabled("cpu"), str(m.get_autocast_dtype("cpu")),
            m.is_autocast_cache_enabled()]
    x = m.ones(2, 2)
    with m.autocast("cpu") as region:
        seen += [region is not None, m.is_autocast_enabled("cpu"), m.is_autocast_enabled(),
                 str(m.get_autocast_dtype("cpu")), str((x @ x).dtype)]
        with m.autocast("cpu", enabled=False):
            seen += [m.is_autocast_enabled("cpu"), str((x @ x).dtype)]
        seen += [str((x @ x).dtype)]
        with m.autocast("cpu", dtype=m.float16, cache_enabled=False):
            seen += [str(m.get_autocast_dtype("cpu")), str((x @ x).dtype),
                     m.is_autocast_cache_enabled()]
        seen += [str(m.get_autocast_dtype("cpu")), m.is_autocast_cache_enabled()]
        seen += [str(m.mm(x.double(), x.double()).dtype),
                 str(m.matmul(x, x, out=m.empty(2, 2)).dtype)]
        with m.no_grad():
            seen += [(m.ones(2, 2, requires_grad=True) @ x).requires_grad]
    seen += [m.is_autocast_enabled("cpu"), str((x @ x).dtype)]
    for device in ("cuda", "xpu", "hpu", "mps"):
        seen += [str(m.get_autocast_dtype(device)), m.is_autocast_enabled(device)]

    @m.autocast("cpu")
    def decorated(a):
        return m.is_autocast_enabled("cpu"), str((a @ a).dtype)

    seen += [decorated(x), m.is_autocast_enabled("cpu")]
    with m.amp.autocast("cpu"):
        seen += [str((x @ x).dtype)]
    with m.autocast(device_type="cpu", dtype=m.bfloat16):
        seen += [str(m.nn.functional.linear(x, x).dtype)]
    return seen


def test_state_nesting_decorator():
    assert _states(cr) == _states(torch)


def test_state_functions():
    try:
        for m in (cr, torch):
            m.set_autocast_enabled("cpu", True)
            m.set_autocast_dtype("cpu", m.float16)
        assert cr.is_autocast_enabled("cpu") and str(cr.get_autocast_dtype("cpu")) == \
            str(torch.get_autocast_dtype("cpu"))
        x = cr.ones(2, 2)
        assert (x @ x).dtype is cr.float16
        assert cr.autocast_increment_nesting() == torch.autocast_increment_nesting() == 1
        assert cr.autocast_decrement_nesting() == torch.autocast_decrement_nesting() == 0
    finally:
        for m in (cr, torch):
            m.set_autocast_enabled("cpu", False)
            m.set_autocast_dtype("cpu", m.bfloat16)
    assert (cr.ones(2, 2) @ cr.ones(2, 2)).dtype is cr.float32


def test_warnings_and_errors():
    for m in (cr, torch):
        with pytest.warns(UserWarning, match="CPU Autocast only supports dtypes of "
                                             "torch.bfloat16, torch.float16 currently."):
            region = m.autocast("cpu", dtype=m.float32)
        with region:
            assert not m.is_autocast_enabled("cpu")
            assert (m.ones(2, 2) @ m.ones(2, 2)).dtype is m.float32
        with pytest.warns(FutureWarning, match=r"torch.cpu.amp.autocast\(args...\)` is "
                                               "deprecated"):
            region = m.cpu.amp.autocast()
        with region:
            assert (m.ones(2, 2) @ m.ones(2, 2)).dtype is m.bfloat16
        with pytest.raises(TypeError, match="requires a callable, but got int"):
            m.autocast("cpu")(3)
        with pytest.raises(ValueError, match="Expected `device_type` of type `str`"):
            m.autocast(0)
        with m.autocast("cpu"):
            with pytest.raises(RuntimeError, match="Unexpected floating ScalarType in "
                                                   "at::autocast::prioritize"):
                m.cat([m.ones(2, dtype=m.bfloat16), m.ones(2, dtype=m.float16)])


def _cast_nodes(y) -> set:
    """The ToCopyBackward0 nodes reachable from y's grad_fn."""
    found, stack = set(), [y.grad_fn]
    while stack:
        node = stack.pop()
        if node is None:
            continue
        if type(node).__name__ == "ToCopyBackward0":
            found.add(node)
        stack.extend(n for n, _ in node.next_functions)
    return found


def _cache(m, cache_enabled):
    F = m.nn.functional
    x, w = m.randn(2, 4), m.randn(3, 4, requires_grad=True)
    with m.autocast("cpu", cache_enabled=cache_enabled):
        first = _cast_nodes(F.linear(x, w))
        with m.autocast("cpu"):  # an inner region keeps the outer one's cache
            second = _cast_nodes(F.linear(x, w))
    with m.autocast("cpu", cache_enabled=cache_enabled):
        third = _cast_nodes(F.linear(x, w))
    return bool(first & second), bool(first & third), len(first)


@pytest.mark.parametrize("cache_enabled", [True, False])
def test_weight_cache(cache_enabled):
    """A leaf's cast is kept for the outermost region and dropped when it ends."""
    assert _cache(cr, cache_enabled) == _cache(torch, cache_enabled)


def _in_thread(m) -> list:
    seen = []

    def work():
        seen.append((m.is_autocast_enabled("cpu"), (m.ones(2, 2) @ m.ones(2, 2)).dtype))

    with m.autocast("cpu"):
        worker = threading.Thread(target=work)
        worker.start()
        worker.join()
    return seen


def test_thread_local():
    """A thread started inside a region has autocast off, as PyTorch's thread-local state."""
    assert _in_thread(cr) == [(False, cr.float32)]
    assert _in_thread(torch) == [(False, torch.float32)]


def test_listed_functions_are_the_same_objects_everywhere():
    assert cr.functional.einsum is cr.einsum
    assert cr.nn.functional.linear.__wrapped__ is not None
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with cr.autocast("cpu"):
            from chainrule.nn.functional import linear  # imported inside: the wrapper still
            assert linear(cr.ones(2, 2), cr.ones(2, 2)).dtype is cr.bfloat16
