"""Memory formats as PyTorch's: the strides of clone, contiguous, to and the dtype conversions in
each format (preserve_format keeping a dense layout), is_contiguous(memory_format=...), and the
layout of a leaf's new .grad (the gradient layout contract)."""

import numpy as np
import pytest
import torch

import chainrule as cr

FORMATS = ["preserve_format", "contiguous_format", "channels_last", "channels_last_3d"]


def strided(m, shape, strides):
    """A tensor of ``shape`` viewing a buffer with ``strides`` (in elements), values 0, 1, ..."""
    extent = 1 + sum((n - 1) * s for n, s in zip(shape, strides)) if all(shape) else 1
    if m is torch:
        return torch.as_strided(torch.arange(float(extent)), shape, strides)
    base = np.arange(float(extent))
    return cr.from_numpy(np.lib.stride_tricks.as_strided(base, shape, [8 * s for s in strides]))


def layouts(seed: int, count: int) -> list:
    """(shape, strides) of permuted, sliced, broadcast and odd-strided tensors of 1 to 5 dims."""
    rng = np.random.default_rng(seed)
    out = []
    for _ in range(count):
        ndim = int(rng.integers(1, 6))
        shape = tuple(int(x) for x in rng.integers(0 if rng.random() < 0.1 else 1, 4, ndim))
        strides, step = [0] * ndim, 1
        for d in reversed(rng.permutation(ndim)):
            strides[d], step = step, step * max(shape[d], 1)
        for d in range(ndim):
            roll = rng.random()
            if roll < 0.15:
                strides[d] *= 2
            elif roll < 0.25:
                strides[d] = 0
            elif roll < 0.3:
                strides[d] = int(rng.integers(0, 7))
        out.append((shape, tuple(strides)))
    return out


@pytest.mark.parametrize("shape, strides", layouts(0, 120), ids=str)
def test_clone_and_is_contiguous_in_every_format_as_torch(shape, strides):
    def facts(m):
        x = strided(m, shape, strides)
        out = []
        for name in FORMATS:
            fmt = getattr(m, name)
            try:
                copy = x.clone(memory_format=fmt)
                out.append((copy.stride(), copy.tolist() == x.tolist()))
            except RuntimeError as err:
                out.append(str(err))
            if name != "preserve_format":
                out.append(x.is_contiguous(memory_format=fmt))
        return out

    assert facts(cr) == facts(torch)


CALLS = {
    "clone": lambda m, x, f: x.clone(memory_format=f),
    "contiguous": lambda m, x, f: x.contiguous(memory_format=f),
    "to": lambda m, x, f: x.to(memory_format=f),
    "to dtype": lambda m, x, f: x.to(m.float64, memory_format=f),
    "double": lambda m, x, f: x.double(memory_format=f),
    "cfloat": lambda m, x, f: x.cfloat(memory_format=f),
    "plus one": lambda m, x, f: x.contiguous(memory_format=f) + 1,
    "relu": lambda m, x, f: m.relu(x.contiguous(memory_format=f)),
}
SOURCES = {
    "contiguous": lambda m: m.arange(120.0).reshape(2, 3, 4, 5),
    "channels_last": lambda m: m.arange(120.0).reshape(2, 3, 4, 5).contiguous(
        memory_format=m.channels_last),
    "permuted": lambda m: m.arange(120.0).reshape(2, 4, 5, 3).permute(0, 3, 1, 2),
    "sliced": lambda m: m.arange(240.0).reshape(2, 3, 8, 5)[:, :, ::2],
    "5-d": lambda m: m.arange(240.0).reshape(2, 3, 2, 4, 5),
    "3-d": lambda m: m.arange(24.0).reshape(2, 3, 4),
    "channels of one": lambda m: m.arange(40.0).reshape(2, 1, 4, 5),
}


@pytest.mark.parametrize("fmt", FORMATS)
@pytest.mark.parametrize("call", list(CALLS))
@pytest.mark.parametrize("source", list(SOURCES))
def test_memory_format_arguments_as_torch(source, call, fmt):
    def facts(m):
        x = SOURCES[source](m)
        try:
            out = CALLS[call](m, x, getattr(m, fmt))
        except RuntimeError as err:
            return str(err)
        return (out.stride(), out is x, out.is_contiguous(),
                out.is_contiguous(memory_format=m.channels_last), out.tolist())

    assert facts(cr) == facts(torch)


LEAVES = {
    "transposed": lambda m: m.randn(3, 4).t(),
    "channels_last": lambda m: m.randn(2, 3, 4, 5).contiguous(memory_format=m.channels_last),
    "sliced": lambda m: m.randn(4, 6)[:, ::2],
    "contiguous": lambda m: m.randn(3, 4),
}
GRADS = {
    "through a copy": lambda m, x: (x.contiguous() * 2).sum().backward(),
    "elementwise": lambda m, x: (x * 3).sum().backward(),
    "transposed gradient": lambda m, x: x.backward(m.ones(*reversed(x.shape)).permute(
        *reversed(range(x.dim())))),
    "create_graph": lambda m, x: (x.contiguous() ** 2).sum().backward(create_graph=True),
}


@pytest.mark.parametrize("grad", list(GRADS))
@pytest.mark.parametrize("leaf", list(LEAVES))
def test_a_new_grad_is_laid_out_as_its_leaf_as_torch(leaf, grad):
    def facts(m):
        m.manual_seed(0)
        x = LEAVES[leaf](m).requires_grad_()
        GRADS[grad](m, x)
        return x.stride(), x.grad.stride(), x.grad.requires_grad, x.grad.tolist()

    ours, theirs = facts(cr), facts(torch)
    assert ours[:3] == theirs[:3]
    np.testing.assert_allclose(ours[3], theirs[3], rtol=1e-6)


def test_contiguous_refuses_preserve_format_unless_already_contiguous():
    for m in (cr, torch):
        x = m.ones(2, 3)
        assert x.contiguous(memory_format=m.preserve_format) is x
        with pytest.raises(RuntimeError, match="preserve memory format is unsupported by the "
                                               "contiguous operator"):
            x.t().contiguous(memory_format=m.preserve_format)
