"""torch.amp: the module layout, GradScaler('cpu') step for step against torch's (inf/NaN steps
skipped, growth and backoff, state_dict, errors), custom_fwd/custom_bwd, torch.cpu.amp."""

from __future__ import annotations

import pickle
import warnings

import numpy as np
import pytest
import torch

import chainrule as cr
import chainrule.amp
import chainrule.cpu.amp

X = np.array([[0.5, -1.0, 2.0], [1.5, 0.25, -0.5]], dtype=np.float32)
W0 = np.array([0.1, -0.2, 0.3], dtype=np.float32)


def test_layout():
    assert chainrule.amp.autocast is cr.autocast
    assert chainrule.amp.autocast_mode.autocast is cr.autocast
    assert chainrule.amp.GradScaler is chainrule.amp.grad_scaler.GradScaler
    assert sorted(chainrule.amp.__all__) == sorted(torch.amp.__all__)
    assert sorted(chainrule.amp.autocast_mode.__all__) == sorted(torch.amp.autocast_mode.__all__)
    assert sorted(chainrule.amp.grad_scaler.__all__) == sorted(torch.amp.grad_scaler.__all__)
    assert [s.name for s in chainrule.amp.grad_scaler.OptState] == \
        [s.name for s in torch.amp.grad_scaler.OptState]


@pytest.mark.parametrize("device", ["cpu", "cuda", "xpu", "meta", "mps", "hpu", "lazy",
                                    "privateuseone", "cuda:0"])
def test_is_autocast_available(device):
    assert chainrule.amp.is_autocast_available(device) == torch.amp.is_autocast_available(device)


def _train(m, amp, inject, growth_interval=2, unscale_first=False):
    """Steps of SGD under GradScaler; per step: the weights, the scale and the state dict."""
    w = m.tensor(W0.copy(), requires_grad=True)
    x = m.tensor(X)
    opt = m.optim.SGD([w], lr=0.1)
    scaler = amp.GradScaler("cpu", init_scale=2.0**10, growth_interval=growth_interval)
    history = []
    for step in range(7):
        opt.zero_grad()
        loss = ((x * w).sum(1) ** 2).mean()
        scaler.scale(loss).backward()
        if step in inject:
            w.grad[step % 3] = inject[step]
        if unscale_first:
            scaler.unscale_(opt)
            history.append(w.grad.detach().numpy().copy())
        result = scaler.step(opt)
        scaler.update()
        history.append((w.detach().numpy().copy(), scaler.get_scale(), scaler.state_dict(),
                        result))
    return history


@pytest.mark.parametrize("unscale_first", [False, True])
def test_grad_scaler_steps_like_torch(unscale_first):
    inject = {1: float("inf"), 4: float("nan"), 5: float("-inf")}
    ours = _train(cr, chainrule.amp, inject, unscale_first=unscale_first)
    theirs = _train(torch, torch.amp, inject, unscale_first=unscale_first)
    assert len(ours) == len(theirs)
    for o, t in zip(ours, theirs):
        if isinstance(t, np.ndarray):  # the unscaled gradients
            np.testing.assert_allclose(o, t, rtol=1e-6, atol=1e-7)
            continue
        np.testing.assert_allclose(o[0], t[0], rtol=1e-5, atol=1e-6)
        assert o[1] == t[1] and o[2] == t[2] and o[3] == t[3]


def test_scale_of_nested_outputs_and_disabled_scaler():
    scaler = chainrule.amp.GradScaler("cpu", init_scale=4.0)
    out = scaler.scale([cr.ones(2), (cr.ones(1) * 2,)])
    assert out[0].tolist() == [4.0, 4.0] and out[1][0].tolist() == [8.0]
    with pytest.raises(ValueError, match="outputs must be a Tensor or an iterable of Tensors"):
        scaler.scale([1.0])
    off = chainrule.amp.GradScaler("cpu", enabled=False)
    t = cr.ones(2)
    assert off.scale(t) is t and off.get_scale() == 1.0 and off.state_dict() == {}
    assert not off.is_enabled()


def test_cuda_scaler_warns_and_disables():
    with pytest.warns(UserWarning) as theirs:
        t = torch.amp.GradScaler("cuda")
    with pytest.warns(UserWarning) as ours:
        o = chainrule.amp.GradScaler("cuda")
    assert str(ours[0].message) == str(theirs[0].message)
    assert o.is_enabled() == t.is_enabled() is False


def _errors(m, amp):
    messages = []
    w = m.ones(2, requires_grad=True)
    opt = m.optim.SGD([w], lr=0.1)
    scaler = amp.GradScaler("cpu")
    for call in (lambda: scaler.step(opt), lambda: scaler.update(),
                 lambda: scaler.unscale_(opt)):
        with pytest.raises(AssertionError) as e:
            call()
        messages.append(str(e.value))
    scaler.scale((w * 2).sum()).backward()
    scaler.unscale_(opt)
    with pytest.raises(RuntimeError) as e:
        scaler.unscale_(opt)
    messages.append(str(e.value))
    with pytest.raises(RuntimeError) as e:
        scaler.step(opt, closure=lambda: 0)
    messages.append(str(e.value))
    scaler.step(opt)
    for call in (lambda: scaler.step(opt), lambda: scaler.unscale_(opt)):
        with pytest.raises(RuntimeError) as e:
            call()
        messages.append(str(e.value))
    with pytest.raises(AssertionError) as e:
        pickle.dumps(scaler)
    messages.append(str(e.value))
    with pytest.raises(AssertionError) as e:
        amp.GradScaler("cpu", growth_factor=1.0)
    messages.append(str(e.value))
    with pytest.raises(AssertionError) as e:
        amp.GradScaler("cpu", backoff_factor=1.0)
    messages.append(str(e.value))
    half = m.ones(2, dtype=m.float16, requires_grad=True)
    half_opt = m.optim.SGD([half], lr=0.1)
    half_scaler = amp.GradScaler("cpu")
    half_scaler.scale(half.sum()).backward()
    with pytest.raises(ValueError) as e:
        half_scaler.unscale_(half_opt)
    messages.append(str(e.value))
    with pytest.raises(RuntimeError) as e:
        amp.GradScaler("cpu").load_state_dict({})
    messages.append(str(e.value))
    return messages


def test_errors_like_torch():
    assert _errors(cr, chainrule.amp) == _errors(torch, torch.amp)


def _state_round_trip(m, amp):
    scaler = amp.GradScaler("cpu", init_scale=8.0, growth_interval=3)
    w = m.ones(2, requires_grad=True)
    opt = m.optim.SGD([w], lr=0.1)
    for _ in range(2):
        scaler.scale(w.sum()).backward()
        scaler.step(opt)
        scaler.update()
    state = scaler.state_dict()
    other = amp.GradScaler("cpu")
    other.load_state_dict(state)
    copy = pickle.loads(pickle.dumps(scaler))
    scaler.update(new_scale=3.0)
    return (state, other.state_dict(), copy.state_dict(), scaler.get_scale(),
            scaler.get_growth_factor(), scaler.get_backoff_factor(),
            scaler.get_growth_interval())


def test_state_dict_and_pickle_like_torch():
    assert _state_round_trip(cr, chainrule.amp) == _state_round_trip(torch, torch.amp)


def _custom_fn_states(m, amp, cast_inputs):
    seen = {}

    class Fn(m.autograd.Function):
        @staticmethod
        @amp.custom_fwd(device_type="cpu", cast_inputs=cast_inputs)
        def forward(ctx, x):
            seen["fwd"] = (m.is_autocast_enabled("cpu"), str(x.dtype))
            return x * 2

        @staticmethod
        @amp.custom_bwd(device_type="cpu")
        def backward(ctx, g):
            seen["bwd"] = m.is_autocast_enabled("cpu")
            return g * 2

    x = m.ones(3, requires_grad=True)
    with amp.autocast("cpu", dtype=m.float16):
        y = Fn.apply(x)
    y.float().sum().backward()
    plain = Fn.apply(m.ones(2, requires_grad=True))
    seen["outside"] = str(plain.dtype)
    return seen


@pytest.mark.parametrize("cast", [None, "float16"])
def test_custom_fwd_bwd_like_torch(cast):
    ours = _custom_fn_states(cr, chainrule.amp, cast and getattr(cr, cast))
    theirs = _custom_fn_states(torch, torch.amp, cast and getattr(torch, cast))
    assert ours == theirs


def test_custom_fwd_checks_device_type():
    for lib in (torch.amp, chainrule.amp):
        with pytest.raises(ValueError, match="Expected `device_type` of type `str`"):
            lib.custom_fwd(lambda ctx: 0, device_type=1)
        with pytest.raises(TypeError):
            lib.custom_bwd(lambda ctx: 0)


def test_cpu_amp_deprecated_forms():
    with warnings.catch_warnings(record=True) as theirs:
        warnings.simplefilter("always")
        t_scaler = torch.cpu.amp.GradScaler(init_scale=4.0)
        torch.cpu.amp.autocast(dtype=torch.float16)
    with warnings.catch_warnings(record=True) as ours:
        warnings.simplefilter("always")
        o_scaler = chainrule.cpu.amp.GradScaler(init_scale=4.0)
        region = chainrule.cpu.amp.autocast(dtype=cr.float16)
    assert [(w.category, str(w.message)) for w in ours] == \
        [(w.category, str(w.message)) for w in theirs]
    assert isinstance(o_scaler, chainrule.amp.GradScaler)
    assert o_scaler.state_dict() == t_scaler.state_dict()
    assert isinstance(region, cr.autocast) and region.device == "cpu"
    with region:
        assert cr.is_autocast_enabled("cpu")
    assert not cr.is_autocast_enabled("cpu")
