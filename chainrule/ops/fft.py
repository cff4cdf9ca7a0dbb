"""Discrete Fourier transforms (torch.fft) on NumPy's FFTs, with their derivative rules.

Three records, as in PyTorch: complex-to-complex (``fft_c2c``), real-to-complex one-sided
(``fft_r2c``) and complex-to-real (``fft_c2r``). Every public transform is one of them after
padding or trimming its input to the requested sizes. A DFT matrix is symmetric, so each rule is
a transform of the same kind and scale (the engine conjugates around holomorphic rules).
"""

from __future__ import annotations

from .._backend import get_default_dtype, xp
from .._creation import zeros
from .._dispatch import apply
from ..tensor import Tensor
from ._registry import defop
from .complex import conj
from .elementwise import _KERNEL_NAMES
from .shape import cat, roll

_NORMS = ("backward", "forward", "ortho")
_SWAP = {"backward": "forward", "forward": "backward", "ortho": "ortho"}
_COMPLEX_OF = {"float32": xp.complex64, "float64": xp.complex128}


def _c2c(input, dim, norm, forward):
    kernel = xp.fft.fftn if forward else xp.fft.ifftn
    return kernel(input, axes=dim, norm=norm).astype(input.dtype, copy=False)


def _r2c(input, dim, norm):
    return xp.fft.rfftn(input, axes=dim, norm=norm).astype(_COMPLEX_OF[input.dtype.name],
                                                            copy=False)


def _c2r(input, dim, norm, last_dim_size):
    sizes = [input.shape[d] for d in dim[:-1]] + [last_dim_size]
    real = xp.float32 if input.dtype == xp.complex64 else xp.float64
    return xp.fft.irfftn(input, s=sizes, axes=dim, norm=norm).astype(real, copy=False)


def _r2c_grad(g, input_shape, dim, norm):
    # the one-sided spectrum's adjoint: zero-fill the other half, transform back
    last = dim[-1]
    missing = input_shape[last] - g.shape[last]
    if missing:
        shape = list(g.shape)
        shape[last] = missing
        g = cat([g, zeros(shape, dtype=g.dtype)], last)
    return apply(FFT_C2C, g, dim=dim, norm=norm, forward=True)


def _c2r_grad(g, input_shape, dim, norm):
    # PyTorch's rule: the one-sided transform of g (with the same scaling, which for NumPy's
    # direction-relative names is the other norm), the mirrored bins counted twice
    grad = apply(FFT_R2C, g, dim=dim, norm=_SWAP[norm])
    last = dim[-1]
    doubled = g.shape[last] - grad.shape[last]
    if doubled > 0:
        weight = xp.ones(grad.shape[last], grad.real._data.dtype)
        weight[1:1 + doubled] = 2
        grad = grad * Tensor._wrap(weight.reshape((-1,) + (1,) * (grad.dim() - last - 1)),
                                   None, 0)
    return grad


def _fft_batch():
    from .._batching import batch_dims
    return batch_dims("dim")


FFT_C2C = defop(
    "fft_c2c", _c2c, ("input",),
    (lambda g, dim, norm, forward: apply(FFT_C2C, g, dim=dim, norm=norm, forward=forward),),
    jvp="linear", batch=_fft_batch(), backward_name="FftC2CBackward0",
)
FFT_R2C = defop(
    "fft_r2c", _r2c, ("input",), (lambda g, input_shape, dim, norm: _r2c_grad(
        g, input_shape, dim, norm),),
    jvp="linear", batch=_fft_batch(), backward_name="FftR2CBackward0",
)
FFT_C2R = defop(
    "fft_c2r", _c2r, ("input",), (lambda g, input_shape, dim, norm, last_dim_size: _c2r_grad(
        g, input_shape, dim, norm),),
    jvp="linear", batch=_fft_batch(), backward_name="FftC2RBackward0", holomorphic=False,
)


# ---- argument handling -------------------------------------------------------------------------


def _norm(norm: str | None, name: str) -> str:
    if norm is None:
        return "backward"
    if norm not in _NORMS:
        raise RuntimeError(f'Invalid normalization mode: "{norm}"')
    return norm


def _dims_and_sizes(input: Tensor, s, dim, name: str, default_all: bool = True):
    """PyTorch's rules for ``s`` and ``dim``: both, either, or neither given."""
    ndim = input.dim()
    if dim is not None:
        dims = [dim] if isinstance(dim, int) else list(dim)
        for d in dims:
            if not -ndim <= d < max(ndim, 1):
                raise IndexError(f"Dimension out of range (expected to be in range of "
                                 f"[{-max(ndim, 1)}, {max(ndim, 1) - 1}], but got {d})")
        dims = [d % ndim for d in dims]
        if len(set(dims)) != len(dims):
            raise RuntimeError("FFT dims must be unique")
        if s is not None and len(s) != len(dims):
            raise RuntimeError("When given, dim and shape arguments must have the same length")
    elif s is not None:
        if len(s) > ndim:
            raise RuntimeError(f"Got shape with {len(s)} values but input tensor only has "
                               f"{ndim} dimensions.")
        dims = list(range(ndim - len(s), ndim))
    else:
        dims = list(range(ndim))
    sizes = [input.shape[d] if s is None or s[i] == -1 else s[i] for i, d in enumerate(dims)]
    for n in sizes:
        if n < 1:
            raise RuntimeError(f"Invalid number of data points ({n}) specified")
    return dims, sizes


def _resize(input: Tensor, dims, sizes) -> Tensor:
    """Trim or zero-pad ``input`` along ``dims`` to ``sizes``."""
    for d, n in zip(dims, sizes):
        size = input.shape[d]
        if n < size:
            input = input.narrow(d, 0, n)
        elif n > size:
            shape = list(input.shape)
            shape[d] = n - size
            input = cat([input, zeros(shape, dtype=input.dtype)], d)
    return input


def _as_complex(input: Tensor) -> Tensor:
    if input.is_complex():
        return input
    if not input.is_floating_point():
        input = input.to(get_default_dtype())
    if input.dtype.name == "float16":
        raise RuntimeError("Unsupported dtype Half")
    return input.to(_COMPLEX_OF[input.dtype.name])


def _as_real(input: Tensor, name: str) -> Tensor:
    if input.is_complex():
        raise RuntimeError(f"{name} expects a real input tensor, but got "
                           f"{_KERNEL_NAMES[input.dtype.name]}")
    if not input.is_floating_point():
        input = input.to(get_default_dtype())
    if input.dtype.name == "float16":
        raise RuntimeError("Unsupported dtype Half")
    return input


def _c2c_n(input, s, dim, norm, forward, name):
    dims, sizes = _dims_and_sizes(input, s, dim, name)
    x = _resize(_as_complex(input), dims, sizes)
    if not dims:
        return x.clone()
    return apply(FFT_C2C, x, dim=tuple(dims), norm=_norm(norm, name), forward=forward)


def _r2c_n(input, s, dim, norm, name):
    dims, sizes = _dims_and_sizes(input, s, dim, name)
    if not dims:
        raise RuntimeError(f"{name} must transform at least one axis")
    x = _resize(_as_real(input, name), dims, sizes)
    return apply(FFT_R2C, x, dim=tuple(dims), norm=_norm(norm, name))


def _c2r_n(input, s, dim, norm, name):
    dims, sizes = _dims_and_sizes(input, s, dim, name)
    if not dims:
        raise RuntimeError(f"{name} must transform at least one axis")
    last = sizes[-1] if s is not None and s[-1] != -1 else 2 * (input.shape[dims[-1]] - 1)
    if last < 1:
        raise RuntimeError(f"Invalid number of data points ({last}) specified")
    sizes = sizes[:-1] + [last // 2 + 1]
    x = _resize(_as_complex(input), dims, sizes)
    return apply(FFT_C2R, x, dim=tuple(dims), norm=_norm(norm, name), last_dim_size=last)


def _one(n, dim):
    return (None if n is None else (n,)), (dim,)


# ---- public functions ----------------------------------------------------------------------


def fft(input: Tensor, n: int | None = None, dim: int = -1, norm: str | None = None) -> Tensor:
    """The one-dimensional discrete Fourier transform."""
    return _c2c_n(input, *_one(n, dim), norm, True, "fft")


def ifft(input: Tensor, n: int | None = None, dim: int = -1, norm: str | None = None) -> Tensor:
    """The one-dimensional inverse discrete Fourier transform."""
    return _c2c_n(input, *_one(n, dim), norm, False, "ifft")


def fft2(input: Tensor, s=None, dim=(-2, -1), norm: str | None = None) -> Tensor:
    """The two-dimensional discrete Fourier transform."""
    return _c2c_n(input, s, dim, norm, True, "fft2")


def ifft2(input: Tensor, s=None, dim=(-2, -1), norm: str | None = None) -> Tensor:
    """The two-dimensional inverse discrete Fourier transform."""
    return _c2c_n(input, s, dim, norm, False, "ifft2")


def fftn(input: Tensor, s=None, dim=None, norm: str | None = None) -> Tensor:
    """The N-dimensional discrete Fourier transform."""
    return _c2c_n(input, s, dim, norm, True, "fftn")


def ifftn(input: Tensor, s=None, dim=None, norm: str | None = None) -> Tensor:
    """The N-dimensional inverse discrete Fourier transform."""
    return _c2c_n(input, s, dim, norm, False, "ifftn")


def rfft(input: Tensor, n: int | None = None, dim: int = -1, norm: str | None = None) -> Tensor:
    """The one-dimensional Fourier transform of real input (the non-negative frequencies)."""
    return _r2c_n(input, *_one(n, dim), norm, "rfft")


def irfft(input: Tensor, n: int | None = None, dim: int = -1, norm: str | None = None) -> Tensor:
    """The inverse of rfft: a real signal of length n (default 2 * (input.size(dim) - 1))."""
    return _c2r_n(input, *_one(n, dim), norm, "irfft")


def rfft2(input: Tensor, s=None, dim=(-2, -1), norm: str | None = None) -> Tensor:
    """The two-dimensional Fourier transform of real input."""
    return _r2c_n(input, s, dim, norm, "rfft2")


def irfft2(input: Tensor, s=None, dim=(-2, -1), norm: str | None = None) -> Tensor:
    """The inverse of rfft2."""
    return _c2r_n(input, s, dim, norm, "irfft2")


def rfftn(input: Tensor, s=None, dim=None, norm: str | None = None) -> Tensor:
    """The N-dimensional Fourier transform of real input."""
    return _r2c_n(input, s, dim, norm, "rfftn")


def irfftn(input: Tensor, s=None, dim=None, norm: str | None = None) -> Tensor:
    """The inverse of rfftn."""
    return _c2r_n(input, s, dim, norm, "irfftn")


def hfft(input: Tensor, n: int | None = None, dim: int = -1, norm: str | None = None) -> Tensor:
    """The Fourier transform of a Hermitian-symmetric signal given by its first half: real."""
    return _c2r_n(conj(_as_complex(input)), *_one(n, dim), _SWAP[_norm(norm, "hfft")], "hfft")


def ihfft(input: Tensor, n: int | None = None, dim: int = -1, norm: str | None = None) -> Tensor:
    """The inverse of hfft: the first half of a Hermitian-symmetric spectrum."""
    return conj(_r2c_n(input, *_one(n, dim), _SWAP[_norm(norm, "ihfft")], "ihfft"))


def hfft2(input: Tensor, s=None, dim=(-2, -1), norm: str | None = None) -> Tensor:
    """The two-dimensional hfft."""
    return _c2r_n(conj(_as_complex(input)), s, dim, _SWAP[_norm(norm, "hfft2")], "hfft2")


def ihfft2(input: Tensor, s=None, dim=(-2, -1), norm: str | None = None) -> Tensor:
    """The inverse of hfft2."""
    return conj(_r2c_n(input, s, dim, _SWAP[_norm(norm, "ihfft2")], "ihfft2"))


def hfftn(input: Tensor, s=None, dim=None, norm: str | None = None) -> Tensor:
    """The N-dimensional hfft."""
    return _c2r_n(conj(_as_complex(input)), s, dim, _SWAP[_norm(norm, "hfftn")], "hfftn")


def ihfftn(input: Tensor, s=None, dim=None, norm: str | None = None) -> Tensor:
    """The inverse of hfftn."""
    return conj(_r2c_n(input, s, dim, _SWAP[_norm(norm, "ihfftn")], "ihfftn"))


def _shift(input: Tensor, dim, sign: int) -> Tensor:
    dims = list(range(input.dim())) if dim is None else [dim] if isinstance(dim, int) \
        else list(dim)
    if not dims:
        return input
    return roll(input, [sign * (input.shape[d] // 2) for d in dims], dims)


def fftshift(input: Tensor, dim=None) -> Tensor:
    """Move the zero frequency to the centre."""
    return _shift(input, dim, 1)


def ifftshift(input: Tensor, dim=None) -> Tensor:
    """The inverse of fftshift."""
    return _shift(input, dim, -1)


def fftfreq(n: int, d: float = 1.0, *, out=None, dtype=None, layout=None, device=None,
            requires_grad: bool = False) -> Tensor:
    """The sample frequencies of an fft of length n."""
    return _frequencies(xp.fft.fftfreq(n, d), out, dtype, requires_grad)


def rfftfreq(n: int, d: float = 1.0, *, out=None, dtype=None, layout=None, device=None,
             requires_grad: bool = False) -> Tensor:
    """The sample frequencies of an rfft of length n."""
    return _frequencies(xp.fft.rfftfreq(n, d), out, dtype, requires_grad)


def _frequencies(values, out, dtype, requires_grad) -> Tensor:
    from .._backend import as_dtype
    target = get_default_dtype() if dtype is None else as_dtype(dtype)
    result = Tensor._wrap(values.astype(target.np), None, 0)
    if out is not None:
        return out.copy_(result)
    return result.requires_grad_(requires_grad)


FFT = {f.__name__: f for f in (fft, ifft, fft2, ifft2, fftn, ifftn, rfft, irfft, rfft2, irfft2,
                               rfftn, irfftn, hfft, ihfft, hfft2, ihfft2, hfftn, ihfftn,
                               fftshift, ifftshift, fftfreq, rfftfreq)}
FUNCTIONS: dict = {}
METHODS: dict = {}
