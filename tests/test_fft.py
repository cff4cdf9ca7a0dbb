"""torch.fft: every transform, norm mode and size/dim form against torch — values, dtypes,
gradients (first and second order), forward mode, vmap and errors."""

import numpy as np
import pytest
import torch

import chainrule as cr

RNG = np.random.default_rng(3)
NORMS = [None, "backward", "forward", "ortho"]

C2C = ["fft", "ifft", "fft2", "ifft2", "fftn", "ifftn"]
R2C = ["rfft", "rfft2", "rfftn", "ihfft", "ihfft2", "ihfftn"]
C2R = ["irfft", "irfft2", "irfftn", "hfft", "hfft2", "hfftn"]
ONE_D = {"fft", "ifft", "rfft", "irfft", "hfft", "ihfft"}

SIZES_1D = [{}, {"n": 3}, {"n": 9}, {"dim": 0}, {"n": 4, "dim": 1}]
SIZES_ND = [{}, {"s": (3, 4)}, {"s": (6, 2)}, {"dim": (0,)}, {"s": (2,), "dim": (1,)},
            {"dim": (1, 0)}, {"s": (4, -1)}]


def _input(name, shape=(4, 5)):
    x = RNG.normal(size=shape)
    if name in C2C or name in C2R:
        x = x + 1j * RNG.normal(size=shape)
    return x


def _resolved(t):
    return t.detach().resolve_conj().numpy()


def _cases():
    for name in C2C + R2C + C2R:
        for kwargs in (SIZES_1D if name in ONE_D else SIZES_ND):
            if name.endswith("2") and "dim" in kwargs and len(kwargs["dim"]) != 2:
                continue
            if name.endswith("2") and "s" in kwargs and "dim" not in kwargs and \
                    len(kwargs["s"]) != 2:
                continue
            for norm in NORMS:
                yield name, kwargs, norm


CASES = list(_cases())


@pytest.mark.parametrize("name,kwargs,norm", CASES,
                         ids=[f"{n}-{k}-{m}" for n, k, m in CASES])
def test_values_and_gradients_match_torch(name, kwargs, norm):
    x = _input(name)
    xc, xt = cr.tensor(x, requires_grad=True), torch.tensor(x, requires_grad=True)
    oc = getattr(cr.fft, name)(xc, norm=norm, **kwargs)
    ot = getattr(torch.fft, name)(xt, norm=norm, **kwargs)
    assert str(oc.dtype) == str(ot.dtype) and tuple(oc.shape) == tuple(ot.shape)
    np.testing.assert_allclose(_resolved(oc), _resolved(ot), rtol=1e-10, atol=1e-10)
    w = RNG.normal(size=tuple(ot.shape))
    if ot.is_complex():
        w = w + 1j * RNG.normal(size=w.shape)
    gc, = cr.autograd.grad(oc, xc, cr.tensor(w))
    gt, = torch.autograd.grad(ot, xt, torch.tensor(w))
    np.testing.assert_allclose(gc.numpy(), _resolved(gt), rtol=1e-10, atol=1e-10)


@pytest.mark.parametrize("name", C2C + R2C + C2R)
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_dtypes_follow_torch(name, dtype):
    x = _input(name, (3, 4))
    x = x.astype(np.complex64 if dtype == "float32" else np.complex128) if np.iscomplexobj(x) \
        else x.astype(dtype)
    oc, ot = getattr(cr.fft, name)(cr.tensor(x)), getattr(torch.fft, name)(torch.tensor(x))
    assert str(oc.dtype) == str(ot.dtype)
    tol = 1e-5 if dtype == "float32" else 1e-12
    np.testing.assert_allclose(_resolved(oc), _resolved(ot), rtol=tol, atol=tol)


def test_integer_input_gives_the_default_complex_dtype():
    assert str(cr.fft.fft(cr.arange(4)).dtype) == str(torch.fft.fft(torch.arange(4)).dtype)
    assert str(cr.fft.rfft(cr.arange(4)).dtype) == str(torch.fft.rfft(torch.arange(4)).dtype)


@pytest.mark.parametrize("name,kwargs", [
    ("fft", {}), ("ifft", {"n": 6, "norm": "ortho"}), ("fftn", {"s": (2, 5)}),
    ("rfft", {}), ("rfft2", {"norm": "forward"}), ("irfft", {}), ("irfft", {"n": 7}),
    ("irfftn", {"s": (3, 6), "norm": "ortho"}), ("hfft", {"n": 5}), ("ihfft", {}),
    ("hfft2", {}), ("ihfftn", {"norm": "ortho"}),
])
def test_gradcheck_gradgradcheck_and_forward_mode(name, kwargs):
    x = cr.tensor(_input(name, (3, 4)), requires_grad=True)
    fn = lambda v: getattr(cr.fft, name)(v, **kwargs)  # noqa: E731
    assert cr.autograd.gradcheck(fn, (x,), check_forward_ad=True)
    assert cr.autograd.gradgradcheck(fn, (x,))


def test_forward_mode_matches_torch():
    import torch.autograd.forward_ad as tfwd

    import chainrule.autograd.forward_ad as cfwd
    z, t = _input("fft"), _input("fft")
    for name in ["fft", "irfft", "hfft", "fft2"]:
        with cfwd.dual_level():
            out_c = cfwd.unpack_dual(getattr(cr.fft, name)(
                cfwd.make_dual(cr.tensor(z), cr.tensor(t))))
        with tfwd.dual_level():
            out_t = tfwd.unpack_dual(getattr(torch.fft, name)(
                tfwd.make_dual(torch.tensor(z), torch.tensor(t))))
        np.testing.assert_allclose(_resolved(out_c.tangent), _resolved(out_t.tangent),
                                   rtol=1e-10, atol=1e-10)


@pytest.mark.parametrize("name", ["fft", "rfft", "irfft", "fft2", "ihfft"])
@pytest.mark.parametrize("in_dims", [0, 1])
def test_vmap_matches_torch(name, in_dims):
    x = _input(name, (3, 4, 6))
    oc = cr.func.vmap(getattr(cr.fft, name), in_dims=in_dims)(cr.tensor(x))
    ot = torch.func.vmap(getattr(torch.fft, name), in_dims=in_dims)(torch.tensor(x))
    np.testing.assert_allclose(_resolved(oc), _resolved(ot), rtol=1e-10, atol=1e-10)


@pytest.mark.parametrize("name", ["fftshift", "ifftshift"])
@pytest.mark.parametrize("dim", [None, 0, (1,), (0, 1), -1])
def test_shifts(name, dim):
    x = RNG.normal(size=(5, 6))
    xc, xt = cr.tensor(x, requires_grad=True), torch.tensor(x, requires_grad=True)
    oc, ot = getattr(cr.fft, name)(xc, dim=dim), getattr(torch.fft, name)(xt, dim=dim)
    np.testing.assert_array_equal(oc.detach().numpy(), ot.detach().numpy())
    oc.sum().backward()
    assert xc.grad.tolist() == [[1.0] * 6] * 5


@pytest.mark.parametrize("name", ["fftfreq", "rfftfreq"])
@pytest.mark.parametrize("n,d", [(8, 1.0), (7, 0.1), (1, 2.0)])
def test_frequencies(name, n, d):
    oc, ot = getattr(cr.fft, name)(n, d), getattr(torch.fft, name)(n, d)
    assert str(oc.dtype) == str(ot.dtype)
    np.testing.assert_allclose(oc.numpy(), ot.numpy(), rtol=1e-6)
    assert getattr(cr.fft, name)(n, dtype=cr.float64).dtype == cr.float64


ERRORS = [
    lambda m, x: m.fft.fft(x, norm="bad"),
    lambda m, x: m.fft.fft(x, n=0),
    lambda m, x: m.fft.fft(x, dim=3),
    lambda m, x: m.fft.fftn(x, s=(2, 3, 4)),
    lambda m, x: m.fft.fftn(x, s=(2,), dim=(0, 1)),
    lambda m, x: m.fft.rfft(x + 0j),
    lambda m, x: m.fft.fftn(x, dim=(0, 0)),
    lambda m, x: m.fft.irfft(m.ones(1, dtype=m.complex64)),
    lambda m, x: m.fft.fft(m.ones(3, dtype=m.float16)),
]


@pytest.mark.parametrize("call", ERRORS, ids=[str(i) for i in range(len(ERRORS))])
def test_errors_match_torch(call):
    x = RNG.normal(size=(4, 5)).astype(np.float32)
    with pytest.raises(Exception) as expected:
        call(torch, torch.tensor(x))
    with pytest.raises(type(expected.value)) as got:
        call(cr, cr.tensor(x))
    assert str(got.value) == str(expected.value)
