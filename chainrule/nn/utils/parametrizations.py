"""The parametrizations of nn.utils.parametrizations: orthogonal, weight_norm, spectral_norm."""

from __future__ import annotations

from ... import linalg
from ..._backend import xp
from ..._creation import arange, eye, randn, tensor, zeros_like
from ...autograd.grad_mode import no_grad
from ...ops.elementwise import allclose, where
from ...ops.shape import cat
from ...tensor import Tensor
from .. import functional as F
from ..modules.module import Module
from . import parametrize

__all__ = ["orthogonal", "spectral_norm", "weight_norm"]


# ---- orthogonal ---------------------------------------------------------------------------------

_MAPS = ("matrix_exp", "cayley", "householder")


def _householder_product(A: Tensor, tau: Tensor) -> Tensor:
    """The first k columns of H_1 ⋯ H_k, H_i = I - tau_i v_i v_iᵀ with v_i the i-th column of A
    below the diagonal and 1 on it (LAPACK's orgqr), for A of shape (..., n, k)."""
    n, k = A.shape[-2], A.shape[-1]
    Q = eye(n, dtype=A.dtype).expand(*A.shape[:-2], n, n)
    rows = arange(n).unsqueeze(-1)
    for i in range(k):
        # column i with zeros above the diagonal and 1 on it
        v = where(rows > i, A[..., i:i + 1], (rows == i).to(A.dtype))
        Q = Q - (Q.matmul(v) * tau[..., i:i + 1].unsqueeze(-1)).matmul(v.mT)
    return Q[..., :k]


def _make_orthogonal(A: Tensor) -> Tensor:
    """The Q of A = QR with R's diagonal positive."""
    Q, R = linalg.qr(A)
    return Q * R.diagonal(dim1=-2, dim2=-1).sign().unsqueeze(-2)


def _is_orthogonal(Q: Tensor) -> bool:
    n, k = Q.shape[-2], Q.shape[-1]
    eps = 10.0 * n * float(xp.finfo(Q._data.dtype).eps)
    return allclose(Q.mT.matmul(Q), eye(k, dtype=Q.dtype), atol=eps)


class _Orthogonal(Module):
    """Maps an unconstrained matrix to an orthogonal one (times ``base`` when trivialized)."""

    def __init__(self, weight: Tensor, orthogonal_map: str, *,
                 use_trivialization: bool = True) -> None:
        super().__init__()
        self.shape = tuple(weight.shape)
        self.orthogonal_map = orthogonal_map
        if use_trivialization:
            self.register_buffer("base", None)

    def forward(self, X: Tensor) -> Tensor:
        n, k = X.shape[-2], X.shape[-1]
        transposed = n < k
        if transposed:
            X = X.mT
            n, k = k, n
        if self.orthogonal_map in ("matrix_exp", "cayley"):
            # a skew-symmetric n x n matrix from the lower triangle of the (tall) X
            X = X.tril()
            if n != k:
                X = cat([X, X.new_zeros(*X.shape[:-2], n, n - k)], dim=-1)
            A = X - X.mT
            if self.orthogonal_map == "matrix_exp":
                Q = linalg.matrix_exp(A)
            else:  # the Cayley map (I - A/2)⁻¹ (I + A/2)
                identity = eye(n, dtype=A.dtype)
                Q = linalg.solve(identity - 0.5 * A, identity + 0.5 * A)
            Q = Q[..., :k]
        else:
            A = X.tril(diagonal=-1)
            tau = 2.0 / (1.0 + (A * A).sum(dim=-2))
            Q = _householder_product(A, tau)
            # X's diagonal holds signs (±1) that are not differentiated
            Q = Q * X.detach().diagonal(dim1=-2, dim2=-1).int().unsqueeze(-2)
        if getattr(self, "base", None) is not None:
            Q = self.base.matmul(Q)
        return Q.mT if transposed else Q

    def right_inverse(self, Q: Tensor) -> Tensor:
        with no_grad():
            if tuple(Q.shape) != self.shape:
                raise ValueError(f"Expected a matrix or batch of matrices of shape "
                                 f"{parametrize._size(self.shape)}. Got a tensor of shape "
                                 f"{parametrize._size(Q.shape)}.")
            Q_init = Q
            n, k = Q.shape[-2], Q.shape[-1]
            transpose = n < k
            if transpose:
                Q = Q.mT
                n, k = k, n
            if "base" not in self._buffers:
                if self.orthogonal_map != "householder":
                    raise NotImplementedError(
                        "It is not possible to assign to the matrix exponential or the Cayley "
                        "parametrizations when use_trivialization=False.")
                return self._householder_inverse(Q, transpose)
            if n == k:
                Q = Q.clone() if _is_orthogonal(Q) else _make_orthogonal(Q)
            else:  # complete Q to an n x n orthogonal matrix with random columns
                extra = randn(*Q.shape[:-2], n, n - k, dtype=Q.dtype)
                Q = _make_orthogonal(cat([Q, extra], dim=-1))
            self.base = Q
            # -I: the parametrization of the identity for every map, so the weight is `base`
            neg_id = zeros_like(Q_init)
            neg_id.diagonal(dim1=-2, dim2=-1).fill_(-1.0)
            return neg_id

    @staticmethod
    def _householder_inverse(Q: Tensor, transpose: bool) -> Tensor:
        """Reflectors (below the diagonal) and signs (on it) whose product is Q's QR factor."""
        A, tau = _geqrf(Q)
        signs = A.diagonal(dim1=-2, dim2=-1).sign()
        # a column LAPACK did not reflect (tau = 0) is reflected by the forward's tau = 2
        A.diagonal(dim1=-2, dim2=-1).copy_(where(tau == 0.0, -signs, signs))
        return A.mT if transpose else A


def _geqrf(Q: Tensor) -> tuple[Tensor, Tensor]:
    """LAPACK's geqrf of a tall matrix (..., n, k): R on and above the diagonal, the Householder
    vectors below it (unit leading entry implied), and their scales tau."""
    a = Q._data.astype(Q._data.dtype, copy=True)
    n, k = a.shape[-2], a.shape[-1]
    tau = xp.zeros(a.shape[:-2] + (k,), dtype=a.dtype)
    for index in xp.ndindex(*a.shape[:-2]):
        m = a[index]
        for j in range(min(n, k)):
            alpha, x = m[j, j], m[j + 1:, j]
            sigma = float(x @ x)
            if sigma == 0.0:
                continue  # no reflection needed (tau = 0)
            beta = -xp.copysign(xp.sqrt(alpha * alpha + sigma), alpha)
            tau[index + (j,)] = (beta - alpha) / beta
            v = x / (alpha - beta)
            w = m[j, j + 1:] + v @ m[j + 1:, j + 1:]
            m[j, j + 1:] -= tau[index + (j,)] * w
            m[j + 1:, j + 1:] -= tau[index + (j,)] * xp.outer(v, w)
            m[j, j], m[j + 1:, j] = beta, v
    return tensor(a), tensor(tau)


def orthogonal(module: Module, name: str = "weight", orthogonal_map: str | None = None, *,
               use_trivialization: bool = True) -> Module:
    """Parametrize ``module.<name>`` as an orthogonal matrix (or batch of them)."""
    weight = getattr(module, name, None)
    if not isinstance(weight, Tensor):
        raise ValueError(f"Module '{module}' has no parameter or buffer with name '{name}'")
    if weight.dim() < 2:
        raise ValueError(f"Expected a matrix or batch of matrices. Got a tensor of "
                         f"{weight.dim()} dimensions.")
    if weight.dtype.is_complex:
        raise NotImplementedError("orthogonal: chainrule supports real weights only")
    if orthogonal_map is None:
        orthogonal_map = "matrix_exp" if weight.shape[-2] == weight.shape[-1] else "householder"
    if orthogonal_map not in _MAPS:
        raise ValueError('orthogonal_map has to be one of "matrix_exp", "cayley", '
                         f'"householder". Got: {orthogonal_map}')
    orth = _Orthogonal(weight, orthogonal_map, use_trivialization=use_trivialization)
    parametrize.register_parametrization(module, name, orth, unsafe=True)
    return module


# ---- weight norm ---------------------------------------------------------------------------------


def _norm_except_dim(v: Tensor, dim: int) -> Tensor:
    """The 2-norm over every dim but ``dim``, kept as size-1 dims (all of v for dim -1)."""
    if dim == -1:
        return v.norm()
    dims = [d for d in range(v.dim()) if d != dim]
    return v.norm(dim=dims, keepdim=True) if dims else v.abs()


def _weight_norm(v: Tensor, g: Tensor, dim: int) -> Tensor:
    return v * (g / _norm_except_dim(v, dim))


class _WeightNorm(Module):
    """weight = g v / ‖v‖, from the magnitude g (original0) and direction v (original1)."""

    def __init__(self, dim: int | None = 0) -> None:
        super().__init__()
        self.dim = -1 if dim is None else dim

    def forward(self, weight_g: Tensor, weight_v: Tensor) -> Tensor:
        return _weight_norm(weight_v, weight_g, self.dim)

    def right_inverse(self, weight: Tensor) -> tuple[Tensor, Tensor]:
        return _norm_except_dim(weight, self.dim), weight


def weight_norm(module: Module, name: str = "weight", dim: int = 0) -> Module:
    """Parametrize ``module.<name>`` by its magnitude and direction (weight normalization)."""
    parametrize.register_parametrization(module, name, _WeightNorm(dim), unsafe=True)
    return module


# ---- spectral norm ------------------------------------------------------------------------------


class _SpectralNorm(Module):
    """weight / σ, σ the largest singular value estimated by power iteration (buffers _u, _v)."""

    def __init__(self, weight: Tensor, n_power_iterations: int = 1, dim: int = 0,
                 eps: float = 1e-12) -> None:
        super().__init__()
        ndim = weight.dim()
        if dim >= ndim or dim < -ndim:
            raise IndexError(f"Dimension out of range (expected to be in range of [-{ndim}, "
                             f"{ndim - 1}] but got {dim})")
        if n_power_iterations <= 0:
            raise ValueError(f"Expected n_power_iterations to be positive, but got "
                             f"n_power_iterations={n_power_iterations}")
        self.dim = dim if dim >= 0 else dim + ndim
        self.eps = eps
        if ndim > 1:
            self.n_power_iterations = n_power_iterations
            matrix = self._reshape_weight_to_matrix(weight)
            h, w = matrix.shape
            u = randn(h, dtype=weight.dtype)
            v = randn(w, dtype=weight.dtype)
            self.register_buffer("_u", F.normalize(u, dim=0, eps=self.eps))
            self.register_buffer("_v", F.normalize(v, dim=0, eps=self.eps))
            self._power_method(matrix, 15)

    def _reshape_weight_to_matrix(self, weight: Tensor) -> Tensor:
        if self.dim != 0:
            weight = weight.permute(self.dim, *(d for d in range(weight.dim()) if d != self.dim))
        return weight.flatten(1)

    def _power_method(self, matrix: Tensor, n_power_iterations: int) -> None:
        with no_grad():
            for _ in range(n_power_iterations):
                self._u.copy_(F.normalize(matrix.mv(self._v), dim=0, eps=self.eps))
                self._v.copy_(F.normalize(matrix.mT.mv(self._u), dim=0, eps=self.eps))

    def forward(self, weight: Tensor) -> Tensor:
        if weight.dim() == 1:
            return F.normalize(weight, dim=0, eps=self.eps)
        matrix = self._reshape_weight_to_matrix(weight)
        if self.training:
            self._power_method(matrix, self.n_power_iterations)
        u, v = self._u.clone(), self._v.clone()
        sigma = u.dot(matrix.mv(v))
        return weight / sigma

    def right_inverse(self, value: Tensor) -> Tensor:
        return value


def _transposed_conv(module: Module) -> bool:
    from ..modules.conv import ConvTranspose1d, ConvTranspose2d, ConvTranspose3d

    return isinstance(module, (ConvTranspose1d, ConvTranspose2d, ConvTranspose3d))


def spectral_norm(module: Module, name: str = "weight", n_power_iterations: int = 1,
                  eps: float = 1e-12, dim: int | None = None) -> Module:
    """Parametrize ``module.<name>`` divided by its spectral norm (largest singular value)."""
    weight = getattr(module, name, None)
    if not isinstance(weight, Tensor):
        raise ValueError(f"Module '{module}' has no parameter or buffer with name '{name}'")
    if dim is None:
        dim = 1 if _transposed_conv(module) else 0
    parametrize.register_parametrization(
        module, name, _SpectralNorm(weight, n_power_iterations, dim, eps))
    return module
