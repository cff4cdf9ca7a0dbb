"""Small names the namespace walk (tests/test_namespace.py) found missing, against torch:
torch.fft.Tensor, torch.utils.set_module, torch.utils.dlpack.DLDeviceType."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import chainrule


def test_fft_exports_tensor_as_torch():
    assert "Tensor" in chainrule.fft.__all__ and "Tensor" in torch.fft.__all__
    assert chainrule.fft.Tensor is chainrule.Tensor


def test_dldevicetype_is_dlpacks_codes():
    ours, theirs = chainrule.utils.dlpack.DLDeviceType, torch.utils.dlpack.DLDeviceType
    assert [(m.name, int(m)) for m in ours] == [(m.name, int(m)) for m in theirs]
    device, _ = chainrule.ones(2).__dlpack_device__()
    assert ours(device) is ours.kDLCPU and device == theirs.kDLCPU


def test_set_module_as_torch():
    for lib in (chainrule, torch):
        def f():
            pass
        lib.utils.set_module(f, "torch.nn")
        assert f.__module__ == "torch.nn"
        with pytest.raises(TypeError, match="The mod argument should be a string"):
            lib.utils.set_module(f, 1)


def _shown_under_hide_warnings(lib) -> list[str]:
    import warnings

    shown = []

    def keep(message, *args, **kwargs) -> bool:
        return "keep" in str(message)

    with warnings.catch_warnings():
        warnings.simplefilter("always")
        warnings.showwarning = lambda message, *args, **kwargs: shown.append(str(message))
        with lib._logging.hide_warnings(keep):
            warnings.warn("keep me", stacklevel=1)
            warnings.warn("drop me", stacklevel=1)
        warnings.warn("after", stacklevel=1)
    return shown


def test_hide_warnings_shows_what_the_filter_keeps_as_torch():
    ours, theirs = _shown_under_hide_warnings(chainrule), _shown_under_hide_warnings(torch)
    assert ours == theirs == ["keep me", "after"]


def _batch_norm_net(lib):
    nn = lib.nn
    return nn.Sequential(nn.BatchNorm1d(3), nn.Linear(3, 3), nn.BatchNorm2d(2),
                         nn.InstanceNorm1d(3, track_running_stats=True), nn.SyncBatchNorm(3))


def test_replace_all_batch_norm_modules_as_torch():
    found = []
    for lib in (torch, chainrule):
        net = _batch_norm_net(lib)
        assert lib.func.replace_all_batch_norm_modules_(net) is net
        found.append((sorted(dict(net.named_buffers())),
                      [getattr(m, "track_running_stats", None) for m in net]))
    assert found[1] == found[0]
    x = np.random.default_rng(0).standard_normal((4, 5, 3))
    net = _batch_norm_net(chainrule)[0]
    chainrule.func.replace_all_batch_norm_modules_(net)
    out = chainrule.func.vmap(net)(chainrule.tensor(x))  # batch statistics per example
    theirs = torch.func.vmap(torch.func.replace_all_batch_norm_modules_(
        torch.nn.BatchNorm1d(3)))(torch.tensor(x))
    np.testing.assert_allclose(out.detach().numpy(), theirs.detach().numpy(), rtol=1e-6,
                               atol=1e-6)
