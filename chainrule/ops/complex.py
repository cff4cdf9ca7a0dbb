"""Complex numbers: real and imaginary parts, conjugation, polar form and the real views.

Gradients follow PyTorch's convention (the conjugate Wirtinger derivative, so that a real loss's
gradient is dL/dRe + i dL/dIm): holomorphic ops need nothing here, the engine conjugates around
their rules; the ops below are not holomorphic and their rules are written in the convention.
"""

from __future__ import annotations

from .._backend import as_dtype, xp
from .._dispatch import apply, apply_inplace
from ..tensor import Tensor
from ._registry import defop


def _real(input):
    return input.real if input.dtype.kind == "c" else input


def _imag(input):
    if input.dtype.kind != "c":
        raise RuntimeError("imag is not implemented for tensors with non-complex dtypes.")
    return input.imag


def _view_as_real(input):
    if input.dtype.kind != "c":
        raise RuntimeError(f"view_as_real is only supported for complex tensors, but got a "
                           f"tensor of scalar type: {as_dtype(input.dtype.name)}")
    return input[..., None].view(input.real.dtype)


def _view_as_complex(input):
    name = as_dtype(input.dtype.name)
    if input.dtype.kind != "f" or input.dtype == xp.float16:
        raise RuntimeError(f"view_as_complex is only supported for float and double tensors, "
                           f"but got a tensor of scalar type: {name}")
    if input.ndim == 0 or input.shape[-1] != 2:
        raise RuntimeError("Tensor must have a last dimension of size 2")
    if input.strides[-1] != input.itemsize:
        raise RuntimeError("Tensor must have a last dimension with stride 1")
    if any(s % (2 * input.itemsize) for s in input.strides[:-1]):
        raise RuntimeError("Tensor must have a stride divisible by 2 for all but last dimension")
    return input.view(xp.complex64 if input.dtype == xp.float32 else xp.complex128)[..., 0]


def _complex(real, imag):
    for t in (real, imag):
        if t.dtype.kind != "f":
            raise RuntimeError(f"Expected both inputs to be Half, Float or Double tensors but got "
                               f"{as_dtype(real.dtype.name)} and {as_dtype(imag.dtype.name)}")
    if real.dtype != imag.dtype:
        raise RuntimeError(f"Expected object of scalar type {as_dtype(real.dtype.name)} but got "
                           f"scalar type {as_dtype(imag.dtype.name)} for second argument")
    out = xp.empty(xp.broadcast_shapes(real.shape, imag.shape),
                   xp.complex64 if real.dtype != xp.float64 else xp.complex128)
    out.real = real
    out.imag = imag
    return out


def _sgn(input):
    if input.dtype.kind != "c":
        return xp.sign(input)
    magnitude = xp.abs(input)
    return xp.where(magnitude == 0, 0, input / xp.where(magnitude == 0, 1, magnitude))


def _pairs_batch(op, args, flags, size, params):
    # the batch moved to the front may leave the (re, im) pairs strided: copy them together
    return apply(op, args[0].contiguous(), **params)


_pairs_batch.kind = "leading dims"

# PyTorch reads the parts through view_as_real(...).select(-1, k): its grad_fn is a select's.
REAL = defop("real", _real, ("input",), (lambda g: g,), view=True, jvp="linear",
             batch="elementwise", holomorphic=False, backward_name="SelectBackward0")
IMAG = defop("imag", _imag, ("input",), (lambda g: g * 1j,), view=True, jvp="linear",
             batch="elementwise", holomorphic=False, backward_name="SelectBackward0")
CONJ = defop("conj", lambda input: xp.conj(input) if input.dtype.kind == "c" else input,
             ("input",), (lambda g: conj(g),), jvp="linear", batch="elementwise",
             holomorphic=False)
ANGLE = defop(
    "angle",
    lambda input: xp.angle(input) if input.dtype.kind == "c" else
    xp.where(input < 0, xp.pi, xp.where(xp.isnan(input), input, 0)).astype(input.dtype),
    ("input",),
    (lambda g, input: _angle_grad(g, input),),
    jvp=lambda t_input, input: real(_angle_grad(1, input).conj() * t_input),
    batch="elementwise", float_out=True, holomorphic=False,
)
SGN = defop(
    "sgn", _sgn, ("input",), (lambda g, input, out: _sgn_grad(g, input, out),),
    jvp=lambda t_input, input, out: _sgn_grad(t_input, input, out), batch="elementwise",
    holomorphic=False,
)
COMPLEX = defop(
    "complex", _complex, ("real", "imag"), (lambda g: real(g), lambda g: imag(g)),
    jvp="linear", batch="elementwise", holomorphic=False,
)
VIEW_AS_REAL = defop(
    "view_as_real", _view_as_real, ("input",), (lambda g: view_as_complex(g.contiguous()),),
    view=True, jvp="linear", holomorphic=False,
    batch="elementwise",
)
VIEW_AS_COMPLEX = defop(
    "view_as_complex", _view_as_complex, ("input",), (lambda g: view_as_real(g),), view=True,
    jvp="linear", holomorphic=False, batch=_pairs_batch,
)


def _angle_grad(g, input):
    if not input.is_complex():
        return g * 0 * input
    magnitude2 = (input * input.conj()).real
    safe = magnitude2 + (magnitude2 == 0)
    return g * (input * 1j) / safe * (magnitude2 != 0)


def _sgn_grad(g, input, out):
    if not input.is_complex():
        return g * 0 * input
    magnitude = input.abs()
    safe = magnitude + (magnitude == 0)
    return (g - (g * out.conj()).real * out) / safe * (magnitude != 0)


def _conj_transpose(input: Tensor) -> Tensor:
    if input.dim() not in (0, 2):
        raise RuntimeError(f"tensor.H is only supported on matrices (2-D tensors). Got "
                           f"{input.dim()}-D tensor.")
    return conj(input.T) if input.dim() == 2 else input


# ---- functions -------------------------------------------------------------------------------


def real(input: Tensor) -> Tensor:
    """The real part (a view; the tensor itself for real dtypes)."""
    return apply(REAL, input) if input.is_complex() else input


def imag(input: Tensor) -> Tensor:
    """The imaginary part of a complex tensor (a view)."""
    return apply(IMAG, input)


def conj(input: Tensor) -> Tensor:
    """The complex conjugate (the tensor itself for real dtypes)."""
    return apply(CONJ, input) if input.is_complex() else input


def conj_physical(input: Tensor) -> Tensor:
    """The complex conjugate, computed (chainrule has no lazy conjugate bit)."""
    return apply(CONJ, input) if input.is_complex() else input


def resolve_conj(input: Tensor) -> Tensor:
    """The tensor itself: chainrule never defers a conjugation."""
    return input


def resolve_neg(input: Tensor) -> Tensor:
    """The tensor itself: chainrule never defers a negation."""
    return input


def is_conj(input: Tensor) -> bool:
    """False: chainrule has no lazy conjugate bit."""
    return False


def is_neg(input: Tensor) -> bool:
    """False: chainrule has no lazy negative bit."""
    return False


def is_complex(input: Tensor) -> bool:
    """True if the tensor's dtype is complex."""
    return input._data.dtype.kind == "c"


def isreal(input: Tensor) -> Tensor:
    """True where the element has a zero imaginary part."""
    if not input.is_complex():
        return apply(_ISREAL, input)
    return imag(input) == 0


_ISREAL = defop("isreal", lambda input: xp.ones_like(input, bool, order="C"), ("input",), (None,),
                batch="elementwise", differentiable=False)


def angle(input: Tensor) -> Tensor:
    """The argument (phase) of each element, in radians."""
    return apply(ANGLE, input)


def sgn(input: Tensor) -> Tensor:
    """z / |z| for complex tensors (0 at 0), the sign for real ones."""
    return apply(SGN, input)


def complex(real: Tensor, imag: Tensor) -> Tensor:
    """The complex tensor real + i imag."""
    return apply(COMPLEX, real, imag)


def polar(abs: Tensor, angle: Tensor) -> Tensor:
    """The complex tensor abs * (cos(angle) + i sin(angle))."""
    return complex(abs * angle.cos(), abs * angle.sin())


def view_as_real(input: Tensor) -> Tensor:
    """A real view of a complex tensor, with a last dimension of size 2 (real, imaginary)."""
    return apply(VIEW_AS_REAL, input)


def view_as_complex(input: Tensor) -> Tensor:
    """A complex view of a real tensor whose last dimension has size 2."""
    return apply(VIEW_AS_COMPLEX, input)


FUNCTIONS = {f.__name__: f for f in (real, imag, conj, conj_physical, resolve_conj, resolve_neg,
                                      is_conj, is_neg, is_complex, isreal, angle, sgn, complex,
                                      polar, view_as_real, view_as_complex)}
METHODS = {name: FUNCTIONS[name] for name in (
    "conj", "conj_physical", "resolve_conj", "resolve_neg", "is_conj", "is_neg", "is_complex",
    "isreal", "angle", "sgn")}
METHODS["conj_physical_"] = lambda self: apply_inplace(CONJ, self) if self.is_complex() else self
METHODS["sgn_"] = lambda self: apply_inplace(SGN, self)
METHODS["mH"] = property(lambda self: conj(self.mT), doc="The conjugate transpose of the last "
                                                             "two dims.")
METHODS["H"] = property(lambda self: _conj_transpose(self), doc="The conjugate transpose of a "
                                                                 "matrix.")
METHODS["real"] = property(real, lambda self, value: real(self).copy_(value))
METHODS["imag"] = property(imag, lambda self, value: imag(self).copy_(value))
