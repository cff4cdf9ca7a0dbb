"""Composable function transforms, as torch.func: grad, vjp, jvp, Jacobians, Hessians, vmap."""

from __future__ import annotations

from ._autodiff import grad, grad_and_value, hessian, jacfwd, jacrev, jvp, linearize, vjp
from ._einops import rearrange
from ._functionalize import functionalize
from ._module import functional_call, replace_all_batch_norm_modules_, stack_module_state
from ._unwrap import debug_unwrap
from ._vmap import vmap

__all__ = ["grad", "grad_and_value", "vjp", "jvp", "linearize", "jacrev", "jacfwd", "hessian",
           "vmap", "functional_call", "stack_module_state", "replace_all_batch_norm_modules_",
           "functionalize", "rearrange", "debug_unwrap"]
