"""``torch.ops``: operator namespaces (``torch.ops.aten``, ``torch.ops.mylib``), each name an
``OpOverloadPacket`` whose overloads (``.default``, ``.Tensor``) are ``OpOverload`` objects.

A packet and its overloads are made once per name, so ``func is torch.ops.aten.mm.default``
holds in a dispatch mode. Calling an overload runs its implementation: a custom op's, or for
``aten`` the chainrule function of the same name.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ..ops import FUNCTIONS
from ..ops._registry import NAMESPACES

__all__ = ["OpOverload", "OpOverloadPacket", "namespace"]

# Set while a dispatch mode is active (utils._python_dispatch): a handler's ``func(*args)``
# goes on to the modes below it.
redispatch: Callable | None = None


class OpOverload:
    """One overload of an operator (``aten.add.Tensor``), callable."""

    def __init__(self, packet: OpOverloadPacket, overload: str, impl: Callable | None,
                 schema: str | None = None) -> None:
        self._overloadpacket = packet
        self._overloadname = overload
        self._impl = impl
        self._schema = schema if schema is not None else f"{packet._qualified_op_name}"
        self.__name__ = f"{packet._name}.{overload}"
        self.__qualname__ = self.__name__

    @property
    def overloadpacket(self) -> OpOverloadPacket:
        return self._overloadpacket

    @property
    def namespace(self) -> str:
        return self._overloadpacket._ns

    def name(self) -> str:
        """The qualified name, ``aten::mm``."""
        return self._overloadpacket._qualified_op_name

    def __call__(self, *args, **kwargs):
        if redispatch is not None:
            result = redispatch(self, args, kwargs)
            if result is not NotImplemented:
                return result
        if self._impl is None:
            raise NotImplementedError(f"{self} has no chainrule implementation")
        return self._impl(*args, **kwargs)

    def decompose(self, *args, **kwargs):
        """PyTorch's CompositeImplicitAutograd decomposition: chainrule's kernels do not have
        one, so ``NotImplemented``."""
        return NotImplemented

    def __repr__(self) -> str:
        return f"<OpOverload(op='{self._overloadpacket._ns}.{self._overloadpacket._name}', " \
               f"overload='{self._overloadname}')>"

    def __str__(self) -> str:
        return f"{self._overloadpacket._ns}.{self.__name__}"

    def __hash__(self) -> int:
        return id(self)


class OpOverloadPacket:
    """All overloads of one operator name (``aten.add``); calling it calls the default one."""

    def __init__(self, ns: str, name: str, impl: Callable | None = None) -> None:
        self._ns = ns
        self._name = name
        self._qualified_op_name = f"{ns}::{name}"
        self.__name__ = name
        self._impl = impl
        self._overloads: dict[str, OpOverload] = {}

    def overload(self, name: str, schema: str | None = None) -> OpOverload:
        """The overload ``name``, made on first use."""
        found = self._overloads.get(name)
        if found is None:
            found = self._overloads[name] = OpOverload(self, name, self._impl, schema)
        return found

    def overloads(self) -> list[str]:
        return list(self._overloads)

    def __getattr__(self, name: str) -> OpOverload:
        if name.startswith("__"):
            raise AttributeError(name)
        overloads = self.__dict__["_overloads"]
        if name in overloads:
            return overloads[name]
        if self.__dict__["_ns"] == "aten" and name in _ATEN_OVERLOADS.get(self._name, ("default",)):
            return self.overload(name)
        raise AttributeError(f"The underlying op of '{self}' has no overload name '{name}'")

    def __call__(self, *args, **kwargs):
        if "default" in self._overloads:
            return self._overloads["default"](*args, **kwargs)
        if self._impl is None:
            raise NotImplementedError(f"{self} has no chainrule implementation")
        return self._impl(*args, **kwargs)

    def __repr__(self) -> str:
        return f"<OpOverloadPacket(op='{self._ns}.{self._name}')>"

    def __str__(self) -> str:
        return f"{self._ns}.{self._name}"

    def __hash__(self) -> int:
        return id(self)


class _OpNamespace:
    """``torch.ops.<name>``: its operators as attributes."""

    def __init__(self, name: str) -> None:
        self.name = name
        self._packets: dict[str, OpOverloadPacket] = {}

    def packet(self, name: str, impl: Callable | None = None) -> OpOverloadPacket:
        found = self._packets.get(name)
        if found is None:
            found = self._packets[name] = OpOverloadPacket(self.name, name, impl)
        elif impl is not None:  # defined again: the new implementation (as PyTorch)
            found._impl = impl
            for overload in found._overloads.values():
                overload._impl = impl
        return found

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__"):
            raise AttributeError(name)
        packets = self.__dict__["_packets"]
        if name in packets:
            return packets[name]
        if self.name == "aten" and name in ATEN_NAMES:
            return self.packet(name, FUNCTIONS.get(name))
        raise AttributeError(f"'_OpNamespace' '{self.name}' object has no attribute '{name}'")

    def __iter__(self):
        return iter(self._packets)

    def __repr__(self) -> str:
        return f"<module 'torch.ops.{self.name}'>"


def namespace(name: str) -> _OpNamespace:
    """The namespace ``torch.ops.<name>``, made on first use."""
    found = NAMESPACES.get(name)
    if found is None:
        found = NAMESPACES[name] = _OpNamespace(name)
    return found


# The aten operators chainrule names in dispatch modes and FLOP counts (checked against torch's
# by tests/test_dispatch_mode.py), with their overloads other than "default".
_ATEN_OVERLOADS: dict[str, tuple[str, ...]] = {
    "add": ("Tensor", "Scalar"), "sub": ("Tensor", "Scalar"), "mul": ("Tensor", "Scalar"),
    "div": ("Tensor", "Scalar", "Tensor_mode"), "pow": ("Tensor_Scalar", "Tensor_Tensor",
                                                          "Scalar"),
    "sum": ("default", "dim_IntList"), "mean": ("default", "dim"), "transpose": ("int",),
    "select": ("int",), "slice": ("Tensor",), "clamp": ("default", "Tensor"),
    "clamp_min": ("default", "Tensor"), "clamp_max": ("default", "Tensor"),
    "where": ("self",), "eq": ("Tensor", "Scalar"), "ne": ("Tensor", "Scalar"),
    "lt": ("Tensor", "Scalar"), "le": ("Tensor", "Scalar"), "gt": ("Tensor", "Scalar"),
    "ge": ("Tensor", "Scalar"), "max": ("default", "dim"), "min": ("default", "dim"),
    "masked_fill": ("Scalar", "Tensor"), "std": ("correction",), "var": ("correction",),
    "split": ("Tensor",), "unbind": ("int",), "squeeze": ("default", "dim", "dims"),
    "unsqueeze": ("default",), "remainder": ("Tensor", "Scalar", "Scalar_Tensor"),
    "fmod": ("Tensor", "Scalar"),
    "gather": ("default",), "scatter": ("src", "value"), "scatter_add": ("default",),
    "index_select": ("default",), "index": ("Tensor",), "index_put": ("default",),
    "sort": ("default", "stable"), "cumsum": ("default",), "bitwise_and": ("Tensor",),
    "bitwise_or": ("Tensor",), "bitwise_xor": ("Tensor",), "rsub": ("Tensor", "Scalar"),
    "logical_and": ("default",), "prod": ("default", "dim_int"), "lerp": ("Scalar", "Tensor"),
    "var_mean": ("correction",), "std_mean": ("correction",), "round": ("default", "decimals"),
    "repeat": ("default",), "roll": ("default",), "flip": ("default",),
    "convolution_backward": ("default",), "xlogy": ("Tensor",), "fill": ("Scalar", "Tensor"),
    "scatter_reduce": ("two",), "index_fill": ("int_Scalar", "int_Tensor"),
    "bitwise_left_shift": ("Tensor",), "bitwise_right_shift": ("Tensor",),
    "median": ("default", "dim"), "isin": ("Tensor_Tensor",), "frexp": ("Tensor",),
    "histogram": ("bins_tensor", "bin_ct"),
    # factories, random fills and out= forms (chainrule._creation, ops._out: seen as one call)
    "ones": ("default", "out"), "zeros": ("default", "out"), "empty": ("memory_format", "out"),
    "full": ("default", "out"), "rand": ("default", "generator", "out"),
    "randn": ("default", "generator", "out"), "arange": ("default", "start", "start_step",
                                                         "out", "start_out"),
    "eye": ("default", "m", "out", "m_out"), "linspace": ("default", "out"),
    "randint": ("default", "low", "generator", "low_generator", "out", "low_out"),
    "randperm": ("default", "generator", "out"), "randint_like": ("default", "low_dtype"),
    "uniform_": ("default",), "normal_": ("default",), "bernoulli_": ("float", "Tensor"),
    "random_": ("default", "from", "to"), "zero_": ("default",),
}
ATEN_NAMES = frozenset(_ATEN_OVERLOADS) | frozenset((
    "zeros_like", "ones_like", "empty_like", "full_like", "rand_like", "randn_like",
    "lift_fresh", "scalar_tensor", "logspace", "exponential_", "geometric_", "log_normal_",
    "cauchy_", "zero", "detach",
    "mm", "bmm", "addmm", "baddbmm", "mv", "dot", "vdot", "convolution", "linear", "matmul",
    "abs", "neg", "exp", "exp2", "expm1", "log", "log2", "log10", "log1p", "sqrt", "rsqrt",
    "sin", "cos", "tan", "asin", "acos", "atan", "sinh", "cosh", "tanh", "asinh", "acosh", "atanh",
    "sigmoid", "relu", "gelu", "silu", "mish", "erf", "erfc", "erfinv", "floor", "ceil",
    "trunc", "frac", "sign", "sgn", "reciprocal", "atan2", "hypot", "maximum", "minimum",
    "fmax", "fmin", "view", "expand", "permute", "t", "clone", "alias", "diagonal", "tril",
    "triu", "cat", "stack", "einsum", "_softmax", "_log_softmax", "amax", "amin", "argmax",
    "argmin", "any", "all", "logsumexp", "embedding", "native_layer_norm",
    "native_batch_norm", "native_group_norm", "constant_pad_nd", "_to_copy", "copy", "fill",
    "topk", "kthvalue", "nonzero", "masked_select", "cumprod", "trace", "diag_embed",
    "hardtanh", "leaky_relu", "elu", "celu", "softplus", "hardsigmoid", "hardswish",
    "log_sigmoid_forward", "mse_loss", "nll_loss_forward", "binary_cross_entropy",
    "avg_pool2d", "avg_pool3d", "max_pool2d_with_indices", "max_pool3d_with_indices",
    "im2col", "col2im", "isnan", "isinf", "isfinite", "logical_not", "logical_or",
    "logical_xor", "bitwise_not", "lgamma", "digamma", "polygamma", "i0", "xlogy", "logit",
    "nan_to_num", "heaviside", "copysign", "nextafter", "signbit", "angle", "real", "imag",
    "conj", "view_as_real", "view_as_complex", "complex", "linalg_vector_norm", "cross",
    "_fft_c2c", "_fft_r2c", "_fft_c2r", "addcmul", "addcdiv", "take", "put", "histc",
    "bincount", "mode", "median", "nanmedian", "cummax", "cummin", "unfold", "index_add",
    "index_copy", "index_fill", "masked_scatter", "scatter_reduce", "sum_to_size", "floor_divide",
    "gcd", "lcm", "igamma", "igammac", "mvlgamma", "sinc", "logcumsumexp", "frexp", "lu_unpack",
    "linalg_inv", "linalg_det", "linalg_slogdet", "linalg_solve", "linalg_cholesky",
    "linalg_eigh", "linalg_eig", "linalg_svd", "linalg_qr", "linalg_pinv", "linalg_matrix_exp",
    "linalg_solve_triangular", "linalg_cross", "geqrf", "rot90", "isreal", "tanh_backward",
    "sigmoid_backward", "threshold_backward", "gelu_backward", "mse_loss_backward",
    "embedding_dense_backward",
    "clamp_min", "clamp_max", "isposinf", "isneginf", "argsort", "diagonal_copy", "isin",
    "linalg_lu_factor_ex", "linalg_ldl_factor_ex", "linalg_ldl_solve", "_unique2", "histogram",
    "max_pool2d_with_indices_backward", "avg_pool2d_backward", "nll_loss2d_forward",
    "bitwise_left_shift", "bitwise_right_shift", "special_entr", "special_erfcx",
    "special_log_ndtr", "special_ndtri", "special_i0e", "special_i1", "special_i1e",
    "special_xlog1py", "special_zeta", "special_bessel_j0", "special_bessel_j1",
    "special_bessel_y0", "special_bessel_y1", "special_modified_bessel_i0",
    "special_modified_bessel_i1", "special_modified_bessel_k0", "special_modified_bessel_k1",
    "special_scaled_modified_bessel_k0", "special_scaled_modified_bessel_k1", "special_airy_ai",
    "special_spherical_bessel_j0", "special_chebyshev_polynomial_t",
    "special_chebyshev_polynomial_u", "special_chebyshev_polynomial_v",
    "special_chebyshev_polynomial_w", "special_shifted_chebyshev_polynomial_t",
    "special_shifted_chebyshev_polynomial_u", "special_shifted_chebyshev_polynomial_v",
    "special_shifted_chebyshev_polynomial_w", "special_hermite_polynomial_h",
    "special_hermite_polynomial_he", "special_laguerre_polynomial_l",
    "special_legendre_polynomial_p",
))
