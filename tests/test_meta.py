"""The meta device as PyTorch's: tensors with a shape, a dtype and strides and no data.

Every op's results on meta are checked row by row in tests/ops/test_meta_ops.py; this file checks
the device itself: factories, printing, refusals to read values, moves, views and strides, random
draws (none), and building and running a large model without memory.
"""

from __future__ import annotations

import tracemalloc

import numpy as np
import pytest
import torch

import chainrule


def _meta(t) -> tuple:
    return (tuple(t.shape), str(t.dtype), str(t.device), t.requires_grad)


FACTORIES = {
    "zeros": lambda m: m.zeros(2, 3, device="meta"),
    "ones int": lambda m: m.ones(4, dtype=m.int64, device="meta"),
    "empty": lambda m: m.empty((0, 5), device="meta"),
    "full": lambda m: m.full((2,), 7, device="meta"),
    "arange": lambda m: m.arange(0, 10, 3, device="meta"),
    "arange float": lambda m: m.arange(0.0, 1.0, 0.25, device="meta"),
    "linspace": lambda m: m.linspace(0, 1, 5, device="meta"),
    "eye": lambda m: m.eye(3, 4, device="meta"),
    "rand": lambda m: m.rand(2, 3, device="meta", requires_grad=True),
    "randn": lambda m: m.randn(3, device="meta", dtype=m.float64),
    "randint": lambda m: m.randint(0, 5, (3, 2), device="meta"),
    "randperm": lambda m: m.randperm(6, device="meta"),
    "tensor": lambda m: m.tensor([[1.0, 2.0]], device="meta"),
    "as_tensor": lambda m: m.as_tensor([1, 2, 3], device="meta"),
    "zeros_like": lambda m: m.zeros_like(m.ones(2, 3, device="meta")),
    "rand_like": lambda m: m.rand_like(m.ones(2, device="meta")),
    "full_like": lambda m: m.full_like(m.ones(2, device="meta"), 3.0),
    "new_zeros": lambda m: m.ones(2, device="meta").new_zeros(4, 1),
    "to meta": lambda m: m.ones(2, 3, requires_grad=True).to("meta"),
}


@pytest.mark.parametrize("name", FACTORIES)
def test_factories_make_meta_tensors_as_torch(name):
    assert _meta(FACTORIES[name](chainrule)) == _meta(FACTORIES[name](torch))


def test_the_default_device_and_the_with_block():
    with chainrule.device("meta"):
        inside = chainrule.zeros(2)
    assert str(inside.device) == "meta" and str(chainrule.zeros(2).device) == "cpu"
    try:
        chainrule.set_default_device("meta")
        assert chainrule.get_default_device() == chainrule.device("meta")
        assert str(chainrule.randn(3).device) == "meta"
    finally:
        chainrule.set_default_device(None)
    assert str(chainrule.get_default_device()) == "cpu"


PRINTED = {
    "float32": lambda m: m.ones(2, 3, device="meta"),
    "float64 leaf": lambda m: m.ones(2, 3, device="meta", dtype=m.float64, requires_grad=True),
    "grad_fn": lambda m: m.ones(2, 3, device="meta", dtype=m.float64, requires_grad=True) * 2,
    "int32": lambda m: m.ones(2, device="meta", dtype=m.int32),
    "int64 scalar": lambda m: m.ones((), device="meta", dtype=m.int64),
    "complex64": lambda m: m.ones(2, device="meta", dtype=m.complex64),
    "empty": lambda m: m.ones(0, device="meta"),
    "parameter": lambda m: m.nn.Parameter(m.ones(2, device="meta")),
}


@pytest.mark.parametrize("name", PRINTED)
def test_printing_as_torch(name):
    assert repr(PRINTED[name](chainrule)) == repr(PRINTED[name](torch))
    assert str(PRINTED[name](chainrule)) == str(PRINTED[name](torch))


READS = {
    "numpy": lambda m, t: t.numpy(),
    "np.asarray": lambda m, t: np.asarray(t),
    "item": lambda m, t: t.sum().item(),
    "bool": lambda m, t: bool(t.sum()),
    "float": lambda m, t: float(t.sum()),
    "tolist": lambda m, t: t.tolist(),
    "to cpu": lambda m, t: t.to("cpu"),
    "cpu": lambda m, t: t.cpu(),
}


@pytest.mark.parametrize("name", READS)
def test_reading_values_refuses_as_torch(name):
    with pytest.raises(Exception) as theirs:
        READS[name](torch, torch.ones(3, device="meta"))
    with pytest.raises(type(theirs.value)) as ours:
        READS[name](chainrule, chainrule.ones(3, device="meta"))
    assert str(ours.value) == str(theirs.value)


@pytest.mark.parametrize("name", ["nonzero", "masked_select", "unique", "bool index",
                                  "repeat_interleave"])
def test_results_sized_by_values_refuse(name):
    calls = {
        "nonzero": lambda m, t: t.nonzero(),
        "masked_select": lambda m, t: t.masked_select(t > 0),
        "unique": lambda m, t: m.unique(t),
        "bool index": lambda m, t: t[t > 0],
        "repeat_interleave": lambda m, t: t.repeat_interleave(m.ones(3, dtype=m.int64,
                                                                     device="meta")),
    }
    with pytest.raises((NotImplementedError, RuntimeError)):
        calls[name](torch, torch.ones(3, device="meta"))
    with pytest.raises((NotImplementedError, RuntimeError)):
        calls[name](chainrule, chainrule.ones(3, device="meta"))


def test_a_gradient_cannot_leave_the_meta_device():
    """x.to('meta') is differentiable, but its gradient would copy out of meta: refused."""
    for lib in (torch, chainrule):
        x = lib.ones(2, 3, requires_grad=True)
        y = (x.to("meta") * 2).sum()
        assert y.grad_fn is not None and type(y.grad_fn).__name__ == "SumBackward0"
        with pytest.raises(NotImplementedError, match="Cannot copy out of meta tensor"):
            y.backward()


def test_gradients_on_meta():
    results = []
    for lib in (torch, chainrule):
        w = lib.ones(4, 3, device="meta", requires_grad=True)
        x = lib.ones(5, 3, device="meta")
        loss = lib.nn.functional.linear(x, w).relu().pow(2).mean()
        loss.backward()
        results.append((_meta(loss), _meta(w.grad), str(loss.grad_fn.name())))
    assert results[0] == results[1]


VIEWS = {
    "transpose": lambda t: t.t(),
    "slice": lambda t: t[1:, ::2],
    "expand": lambda t: t[:1].expand(3, 4),
    "unsqueeze": lambda t: t.unsqueeze(1),
    "permute contiguous": lambda t: t.t().contiguous(),
    "reshape view": lambda t: t.reshape(2, 6),
    "reshape copy": lambda t: t.t().reshape(12),
    "diagonal": lambda t: t.diagonal(),
    "select": lambda t: t[2],
    "narrow": lambda t: t.narrow(1, 1, 2),
}


@pytest.mark.parametrize("name", VIEWS)
def test_views_have_torch_strides_and_offsets(name):
    def describe(lib):
        v = VIEWS[name](lib.ones(3, 4, device="meta"))
        return (tuple(v.shape), v.stride(), v.storage_offset(), v.is_contiguous())

    assert describe(chainrule) == describe(torch)


def test_a_write_through_a_view_of_a_meta_tensor_records_copyslices():
    for lib in (torch, chainrule):
        base = lib.ones(3, 4, device="meta", requires_grad=True).clone()
        base[1:].mul_(2)
        assert type(base.grad_fn).__name__ == "CopySlices"
        assert base._version == 1


def test_meta_draws_advance_no_generator():
    # PyTorch's meta exponential_, cauchy_ and log_normal_ refuse a generator: chainrule's alone
    samplers = {torch: ("uniform_", "normal_", "random_"),
                chainrule: ("uniform_", "normal_", "random_", "exponential_", "cauchy_",
                            "log_normal_")}
    for lib in (torch, chainrule):
        g = lib.Generator().manual_seed(0)
        before = g.get_state()
        x = lib.empty(3, device="meta")
        for sample in samplers[lib]:
            getattr(x, sample)(generator=g)
        x.bernoulli_(0.5, generator=g)
        lib.randn(4, device="meta", generator=g)
        assert lib.equal(before, g.get_state()), lib.__name__
        lib.manual_seed(0)
        state = lib.get_rng_state()
        with lib.device("meta"):
            lib.nn.Linear(3, 4)
            lib.nn.functional.dropout(lib.ones(5), 0.5)
        assert lib.equal(state, lib.get_rng_state()), lib.__name__


def test_a_large_transformer_builds_and_runs_on_meta_without_memory():
    """The acceptance test of issue 20: nn.Transformer(d_model=4096) (1.4 billion parameters,
    5.6 GB of float32 if they had memory) built, run forward and backward on meta with no data:
    traced allocations stay under a few MB."""
    tracemalloc.start()
    try:
        with chainrule.device("meta"):
            model = chainrule.nn.Transformer(d_model=4096)
        src = chainrule.empty(16, 2, 4096, device="meta")
        tgt = chainrule.empty(8, 2, 4096, device="meta")
        out = model(src, tgt)
        out.sum().backward()
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 16 * 2**20, f"peak {peak / 2**20:.1f} MiB"
    with torch.device("meta"):
        reference = torch.nn.Transformer(d_model=4096)
    assert sum(p.numel() for p in model.parameters()) == sum(
        p.numel() for p in reference.parameters())
    assert _meta(out)[:3] == ((8, 2, 4096), "torch.float32", "meta")
    assert all(p.grad is not None and p.grad.shape == p.shape and p.grad.device.type == "meta"
               for p in model.parameters())


def test_a_meta_model_materialises_with_to_empty_and_loads_a_state_dict():
    torch.manual_seed(0)
    reference = torch.nn.Sequential(torch.nn.Linear(4, 8), torch.nn.ReLU(), torch.nn.Linear(8, 2))
    with chainrule.device("meta"):
        model = chainrule.nn.Sequential(chainrule.nn.Linear(4, 8), chainrule.nn.ReLU(),
                                        chainrule.nn.Linear(8, 2))
    model.to_empty(device="cpu")
    model.load_state_dict({k: chainrule.tensor(v.numpy()) for k, v in
                           reference.state_dict().items()})
    x = np.random.default_rng(0).standard_normal((3, 4)).astype(np.float32)
    np.testing.assert_allclose(model(chainrule.tensor(x)).detach().numpy(),
                               reference(torch.tensor(x)).detach().numpy(), rtol=1e-6, atol=1e-6)
