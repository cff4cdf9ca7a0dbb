"""Small names the namespace walk (tests/test_namespace.py) found missing, against torch:
torch.fft.Tensor, torch.utils.set_module, torch.utils.dlpack.DLDeviceType."""

from __future__ import annotations

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
