"""Building models without memory and materialising them, against torch: modules built on the
meta device (``with device('meta')`` or ``device='meta'``), ``to_empty``,
``load_state_dict(assign=True)``, ``nn.utils.skip_init``, and ``Module.to``'s device moves.

These need the meta device's ops (construction runs each layer's initialisation in place on meta
tensors); they are the acceptance tests of meta support in modules."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import chainrule
from chainrule import nn


def _shapes(model) -> list:
    return [(name, tuple(p.shape), str(p.dtype), p.device.type, p.requires_grad)
            for name, p in model.named_parameters()] + \
        [(name, tuple(b.shape), str(b.dtype), b.device.type) for name, b in model.named_buffers()]


def test_a_large_transformer_builds_on_meta_without_memory() -> None:
    # 0.2 billion parameters: 0.8 GB if they had memory
    with chainrule.device("meta"):
        ours = nn.Transformer(d_model=4096, num_encoder_layers=1, num_decoder_layers=1)
    with torch.device("meta"):
        theirs = torch.nn.Transformer(d_model=4096, num_encoder_layers=1, num_decoder_layers=1)
    assert _shapes(ours) == _shapes(theirs)
    assert sum(p.numel() for p in ours.parameters()) == sum(p.numel()
                                                           for p in theirs.parameters())


@pytest.mark.parametrize("make", [
    lambda lib, **kw: lib.nn.Linear(3, 4, **kw),
    lambda lib, **kw: lib.nn.Conv2d(2, 3, 3, **kw),
    lambda lib, **kw: lib.nn.BatchNorm1d(3, **kw),
    lambda lib, **kw: lib.nn.LayerNorm(5, **kw),
    lambda lib, **kw: lib.nn.Embedding(10, 4, **kw),
    lambda lib, **kw: lib.nn.LSTM(3, 4, **kw),
    lambda lib, **kw: lib.nn.MultiheadAttention(8, 2, **kw),
], ids=["Linear", "Conv2d", "BatchNorm1d", "LayerNorm", "Embedding", "LSTM",
        "MultiheadAttention"])
def test_device_meta_argument_like_torch(make) -> None:
    assert _shapes(make(chainrule, device="meta")) == _shapes(make(torch, device="meta"))


def _small(lib):
    return lib.nn.Transformer(d_model=16, nhead=4, num_encoder_layers=2, num_decoder_layers=1,
                              dim_feedforward=32, dropout=0.0)


def _check_same_outputs(ours, theirs) -> None:
    src, tgt = torch.randn(5, 2, 16), torch.randn(3, 2, 16)
    got = ours(chainrule.tensor(src.numpy()), chainrule.tensor(tgt.numpy()))
    want = theirs(src, tgt)
    np.testing.assert_allclose(got.detach().numpy(), want.detach().numpy(), rtol=1e-4,
                               atol=1e-5)


def test_meta_model_materialised_by_to_empty_and_assign() -> None:
    torch.manual_seed(0)
    theirs = _small(torch)
    with chainrule.device("meta"):
        ours = _small(chainrule)
    assert all(p.device.type == "meta" for p in ours.parameters())
    ours.to_empty(device="cpu")
    assert all(p.device.type == "cpu" for p in ours.parameters())
    sd = {k: chainrule.tensor(v.numpy()) for k, v in theirs.state_dict().items()}
    assert repr(ours.load_state_dict(sd, assign=True)) == "<All keys matched successfully>"
    assert all(isinstance(p, nn.Parameter) and p.requires_grad for p in ours.parameters())
    _check_same_outputs(ours, theirs)


def test_meta_model_materialised_by_assign_alone() -> None:
    torch.manual_seed(1)
    theirs = _small(torch)
    with chainrule.device("meta"):
        ours = _small(chainrule)
    sd = {k: chainrule.tensor(v.numpy()) for k, v in theirs.state_dict().items()}
    ours.load_state_dict(sd, assign=True)
    assert all(p.device.type == "cpu" for p in ours.parameters())
    _check_same_outputs(ours, theirs)


def test_loading_into_meta_without_assign_warns_like_torch() -> None:
    ours, theirs = nn.Linear(2, 2, device="meta"), torch.nn.Linear(2, 2, device="meta")
    with pytest.warns(UserWarning) as got:
        ours.load_state_dict({"weight": chainrule.ones(2, 2), "bias": chainrule.ones(2)})
    with pytest.warns(UserWarning) as want:
        theirs.load_state_dict({"weight": torch.ones(2, 2), "bias": torch.ones(2)})
    assert [str(w.message) for w in got] == [str(w.message) for w in want]
    assert ours.weight.device.type == "meta"


def test_skip_init_like_torch() -> None:
    ours, theirs = nn.utils.skip_init(nn.Linear, 3, 4), torch.nn.utils.skip_init(
        torch.nn.Linear, 3, 4)
    assert _shapes(ours) == _shapes(theirs)
    meta = nn.utils.skip_init(nn.Linear, 3, 4, device="meta")
    assert meta.weight.device.type == "meta"
    with pytest.raises(RuntimeError) as our_error:
        nn.utils.skip_init(nn.ReLU)
    with pytest.raises(RuntimeError) as their_error:
        torch.nn.utils.skip_init(torch.nn.ReLU)
    assert str(our_error.value) == str(their_error.value)


def test_to_empty_on_the_cpu_keeps_the_parameters() -> None:
    for lib in (chainrule, torch):
        lin = lib.nn.Linear(2, 3)
        weight = lin.weight
        assert lin.to_empty(device="cpu") is lin
        assert lin.weight is weight and tuple(lin.weight.shape) == (3, 2)


def test_moving_to_meta_and_back_like_torch() -> None:
    def run(lib):
        lin = lib.nn.Linear(2, 3)
        weight = lin.weight
        lin.to("meta")
        out = [lin.weight is weight, lin.weight.device.type, type(lin.weight).__name__]
        with pytest.raises(NotImplementedError) as e:
            lin.to("cpu")
        out.append(str(e.value))
        lin.to_empty(device="cpu")
        out.append(lin.weight.device.type)
        return out

    assert run(chainrule) == run(torch)


def test_accelerator_moves_answer_as_a_cpu_build() -> None:
    def run(lib):
        out = []
        for method in ("cuda", "xpu", "mtia"):
            with pytest.raises(AssertionError) as e:
                getattr(lib.nn.Linear(1, 1), method)()
            out.append(str(e.value).split(".")[0])
            relu = lib.nn.ReLU()
            out.append(getattr(relu, method)() is relu)  # nothing to move
        lin = lib.nn.Linear(1, 1)
        out.append(str(lin.bfloat16().weight.dtype))
        out.append(lin.cpu() is lin)
        return out

    assert run(chainrule) == run(torch)
