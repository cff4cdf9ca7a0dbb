"""The hook-based spectral normalization: ``weight_orig`` with buffers ``weight_u`` and
``weight_v``, ``weight`` recomputed (and one power iteration run in training) before every
forward."""

from __future__ import annotations

from ..._creation import randn
from ...autograd.grad_mode import no_grad
from .. import functional as F
from ..modules.module import Module
from ..parameter import Parameter, is_lazy

__all__ = ["SpectralNorm", "SpectralNormLoadStateDictPreHook", "SpectralNormStateDictHook",
           "spectral_norm", "remove_spectral_norm"]


class SpectralNorm:
    """The forward pre-hook that sets ``module.<name>`` to weight_orig / σ."""

    _version = 1

    def __init__(self, name: str = "weight", n_power_iterations: int = 1, dim: int = 0,
                 eps: float = 1e-12) -> None:
        self.name = name
        self.dim = dim
        if n_power_iterations <= 0:
            raise ValueError(f"Expected n_power_iterations to be positive, but got "
                             f"n_power_iterations={n_power_iterations}")
        self.n_power_iterations = n_power_iterations
        self.eps = eps

    def reshape_weight_to_matrix(self, weight):
        if self.dim != 0:
            weight = weight.permute(self.dim, *(d for d in range(weight.dim()) if d != self.dim))
        return weight.reshape(weight.shape[0], -1)

    def compute_weight(self, module: Module, do_power_iteration: bool):
        weight = getattr(module, self.name + "_orig")
        u = getattr(module, self.name + "_u")
        v = getattr(module, self.name + "_v")
        matrix = self.reshape_weight_to_matrix(weight)
        if do_power_iteration:
            with no_grad():
                for _ in range(self.n_power_iterations):
                    v.copy_(F.normalize(matrix.mT.mv(u), dim=0, eps=self.eps))
                    u.copy_(F.normalize(matrix.mv(v), dim=0, eps=self.eps))
            u, v = u.clone(), v.clone()
        sigma = u.dot(matrix.mv(v))
        return weight / sigma

    def _solve_v_and_rescale(self, weight_mat, u, target_sigma):
        """A ``v`` with ``u = normalize(W v)`` and ``u W v = target_sigma`` (least squares
        through the pseudo-inverse of WᵀW, which may be singular; ``pinverse``'s rcond, as
        PyTorch)."""
        v = (weight_mat.mT @ weight_mat).pinverse() @ weight_mat.mT @ u
        return v * (target_sigma / u.dot(weight_mat.mv(v)))

    def remove(self, module: Module) -> None:
        with no_grad():
            weight = self.compute_weight(module, do_power_iteration=False)
        delattr(module, self.name)
        delattr(module, self.name + "_u")
        delattr(module, self.name + "_v")
        delattr(module, self.name + "_orig")
        module.register_parameter(self.name, Parameter(weight.detach()))

    def __call__(self, module: Module, inputs) -> None:
        setattr(module, self.name, self.compute_weight(module, module.training))

    @staticmethod
    def apply(module: Module, name: str, n_power_iterations: int, dim: int,
              eps: float) -> SpectralNorm:
        for hook in module._forward_pre_hooks.values():
            if isinstance(hook, SpectralNorm) and hook.name == name:
                raise RuntimeError(f"Cannot register two spectral_norm hooks on the same "
                                   f"parameter {name}")
        fn = SpectralNorm(name, n_power_iterations, dim, eps)
        weight = module._parameters[name]
        if weight is None:
            raise ValueError(f"`SpectralNorm` cannot be applied as parameter `{name}` is None")
        if is_lazy(weight):
            raise ValueError("The module passed to `SpectralNorm` can't have uninitialized "
                             "parameters. Make sure to run the dummy forward before applying "
                             "spectral normalization")
        with no_grad():
            h, w = fn.reshape_weight_to_matrix(weight).shape
            u = F.normalize(randn(h, dtype=weight.dtype), dim=0, eps=fn.eps)
            v = F.normalize(randn(w, dtype=weight.dtype), dim=0, eps=fn.eps)
        delattr(module, fn.name)
        module.register_parameter(fn.name + "_orig", weight)
        setattr(module, fn.name, weight.detach())
        module.register_buffer(fn.name + "_u", u)
        module.register_buffer(fn.name + "_v", v)
        module.register_forward_pre_hook(fn)
        module._register_state_dict_hook(SpectralNormStateDictHook(fn))
        module._register_load_state_dict_pre_hook(SpectralNormLoadStateDictPreHook(fn))
        return fn


class SpectralNormLoadStateDictPreHook:
    """Loads state dicts saved before spectral norm kept ``<name>_v`` (version None or 0): the
    saved ``<name>`` is replaced by the ``<name>_v`` that reproduces it."""

    def __init__(self, fn: SpectralNorm) -> None:
        self.fn = fn

    def __call__(self, state_dict, prefix, local_metadata, strict, missing_keys,
                 unexpected_keys, error_msgs) -> None:
        fn = self.fn
        version = local_metadata.get("spectral_norm", {}).get(fn.name + ".version", None)
        if version is not None and version >= 1:
            return
        key = prefix + fn.name
        if version is None and key not in state_dict and all(
                key + suffix in state_dict for suffix in ("_orig", "_u", "_v")):
            return  # a current state dict without its metadata
        missing = [key + suffix for suffix in ("_orig", "", "_u")
                   if key + suffix not in state_dict]
        if missing:
            if strict:
                missing_keys.extend(missing)
            return
        with no_grad():
            weight_orig = state_dict[key + "_orig"]
            weight = state_dict.pop(key)
            sigma = (weight_orig / weight).mean()
            weight_mat = fn.reshape_weight_to_matrix(weight_orig)
            state_dict[key + "_v"] = fn._solve_v_and_rescale(weight_mat, state_dict[key + "_u"],
                                                            sigma)


class SpectralNormStateDictHook:
    """Records the spectral norm's version in the state dict's metadata."""

    def __init__(self, fn: SpectralNorm) -> None:
        self.fn = fn

    def __call__(self, module: Module, state_dict, prefix, local_metadata) -> None:
        versions = local_metadata.setdefault("spectral_norm", {})
        key = self.fn.name + ".version"
        if key in versions:
            raise RuntimeError(f"Unexpected key in metadata['spectral_norm']: {key}")
        versions[key] = self.fn._version


def spectral_norm(module: Module, name: str = "weight", n_power_iterations: int = 1,
                  eps: float = 1e-12, dim: int | None = None) -> Module:
    """Divide ``module.<name>`` by its spectral norm before every forward (a hook)."""
    if dim is None:
        from .parametrizations import _transposed_conv

        dim = 1 if _transposed_conv(module) else 0
    SpectralNorm.apply(module, name, n_power_iterations, dim, eps)
    return module


def remove_spectral_norm(module: Module, name: str = "weight") -> Module:
    """Undo spectral_norm: ``module.<name>`` becomes a parameter holding the normalized weight."""
    for key, hook in module._forward_pre_hooks.items():
        if isinstance(hook, SpectralNorm) and hook.name == name:
            hook.remove(module)
            del module._forward_pre_hooks[key]
            break
    else:
        raise ValueError(f"spectral_norm of '{name}' not found in {module}")
    for key, hook in module._state_dict_hooks.items():
        if isinstance(hook, SpectralNormStateDictHook) and hook.fn.name == name:
            del module._state_dict_hooks[key]
            break
    # (PyTorch looks for the load hook unwrapped, so it stays registered, as here)
    for key, hook in module._load_state_dict_pre_hooks.items():
        if isinstance(hook, SpectralNormLoadStateDictPreHook) and hook.fn.name == name:
            del module._load_state_dict_pre_hooks[key]
            break
    return module
