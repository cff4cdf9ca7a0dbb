"""Pruning: a parameter ``name`` becomes ``name_orig`` times a buffer ``name_mask``, recomputed
by a forward pre-hook, as torch.nn.utils.prune. Random masks draw from chainrule's generator."""

from __future__ import annotations

import numbers
from abc import ABC, abstractmethod
from collections.abc import Iterable

from ..._creation import ones_like, rand, zeros
from ...autograd.grad_mode import no_grad
from ...tensor import Tensor
from ..modules.module import Module

__all__ = ["BasePruningMethod", "PruningContainer", "Identity", "RandomUnstructured",
           "L1Unstructured", "RandomStructured", "LnStructured", "CustomFromMask", "identity",
           "random_unstructured", "l1_unstructured", "random_structured", "ln_structured",
           "global_unstructured", "custom_from_mask", "remove", "is_pruned"]


class BasePruningMethod(ABC):
    """A way of computing a pruning mask; applied to a module it becomes its forward pre-hook."""

    _tensor_name: str

    def __call__(self, module: Module, inputs) -> None:
        setattr(module, self._tensor_name, self.apply_mask(module))

    @abstractmethod
    def compute_mask(self, t: Tensor, default_mask: Tensor) -> Tensor:
        """The mask for ``t``, given the mask already in place."""

    def apply_mask(self, module: Module) -> Tensor:
        """The pruned tensor: ``<name>_orig`` times ``<name>_mask``."""
        assert self._tensor_name is not None, f"Module {module} has to be pruned"
        mask = getattr(module, self._tensor_name + "_mask")
        orig = getattr(module, self._tensor_name + "_orig")
        return mask.to(dtype=orig.dtype) * orig

    @classmethod
    def apply(cls, module: Module, name: str, *args, importance_scores: Tensor | None = None,
              **kwargs) -> BasePruningMethod:
        """Prune ``module.<name>`` with this method (combined with any earlier pruning)."""
        method = _composite_method(cls, module, name, *args, **kwargs)
        orig = getattr(module, name)
        if importance_scores is not None:
            assert importance_scores.shape == orig.shape, (
                f"importance_scores should have the same shape as parameter {name} of {module}")
        else:
            importance_scores = orig
        if not isinstance(method, PruningContainer):
            module.register_parameter(name + "_orig", orig)
            del module._parameters[name]
            default_mask = _ones_like(orig)
        else:
            default_mask = getattr(module, name + "_mask").detach().clone()
        try:
            with no_grad():
                mask = method.compute_mask(importance_scores, default_mask=default_mask)
            module.register_buffer(name + "_mask", mask)
            setattr(module, name, method.apply_mask(module))
            module.register_forward_pre_hook(method)
        except Exception:
            if not isinstance(method, PruningContainer):
                orig = getattr(module, name + "_orig")
                module.register_parameter(name, orig)
                del module._parameters[name + "_orig"]
            raise
        return method

    def prune(self, t: Tensor, default_mask: Tensor | None = None,
              importance_scores: Tensor | None = None) -> Tensor:
        """``t`` with this method's mask applied (the module is not changed)."""
        if importance_scores is not None:
            assert importance_scores.shape == t.shape, (
                "importance_scores should have the same shape as tensor t")
        else:
            importance_scores = t
        default_mask = default_mask if default_mask is not None else _ones_like(t)
        with no_grad():
            mask = self.compute_mask(importance_scores, default_mask=default_mask)
        return t * mask

    def remove(self, module: Module) -> None:
        """Make the pruning permanent: ``<name>`` is a parameter holding the pruned values."""
        assert self._tensor_name is not None, (
            f"Module {module} has to be pruned before pruning can be removed")
        name = self._tensor_name
        with no_grad():
            weight = self.apply_mask(module)
        if hasattr(module, name):
            delattr(module, name)
        orig = module._parameters[name + "_orig"]
        with no_grad():
            orig.copy_(weight)
        del module._parameters[name + "_orig"]
        del module._buffers[name + "_mask"]
        setattr(module, name, orig)


def _ones_like(t: Tensor) -> Tensor:
    return ones_like(t)


def _composite_method(cls, module: Module, name: str, *args, **kwargs) -> BasePruningMethod:
    """The new method, in a PruningContainer with the one already pruning ``name`` if any."""
    old, keys = None, []
    for key, hook in module._forward_pre_hooks.items():
        if isinstance(hook, BasePruningMethod) and hook._tensor_name == name:
            old = hook
            keys.append(key)
    assert len(keys) <= 1, (f"Avoid adding multiple pruning hooks to the same tensor {name} of "
                            f"module {module}. Use a PruningContainer.")
    for key in keys:
        del module._forward_pre_hooks[key]
    method = cls(*args, **kwargs)
    method._tensor_name = name
    if isinstance(old, PruningContainer):
        old.add_pruning_method(method)
        method = old
    elif old is not None:
        container = PruningContainer(old)
        container.add_pruning_method(method)
        method = container
    return method


class PruningContainer(BasePruningMethod):
    """Pruning methods applied one after another to the same tensor."""

    def __init__(self, *args: BasePruningMethod) -> None:
        self._pruning_methods: tuple = ()
        self._tensor_name = args[0]._tensor_name if args else None
        for method in args:
            self.add_pruning_method(method)

    def add_pruning_method(self, method: BasePruningMethod) -> None:
        """Add a method acting on this container's tensor."""
        if not isinstance(method, BasePruningMethod) and method is not None:
            raise TypeError(f"{type(method)} is not a BasePruningMethod subclass")
        if method is not None and self._tensor_name != method._tensor_name:
            raise ValueError("Can only add pruning methods acting on the parameter named "
                             f"'{self._tensor_name}' to PruningContainer {self}. Found "
                             f"'{method._tensor_name}'")
        self._pruning_methods += (method,)

    def __len__(self) -> int:
        return len(self._pruning_methods)

    def __iter__(self):
        return iter(self._pruning_methods)

    def __getitem__(self, idx):
        return self._pruning_methods[idx]

    def compute_mask(self, t: Tensor, default_mask: Tensor) -> Tensor:
        """The newest method's mask, computed only on what the earlier ones left unpruned."""
        method = self._pruning_methods[-1]
        mask = default_mask.to(dtype=t.dtype).clone()
        kind = method.PRUNING_TYPE
        if kind == "unstructured":
            keep = default_mask == 1
            mask[keep] = method.compute_mask(t[keep], default_mask=default_mask[keep]).to(
                dtype=mask.dtype)
            return mask
        if kind == "structured":
            if not hasattr(method, "dim"):
                raise AttributeError("Pruning methods of PRUNING_TYPE 'structured' need to have "
                                     "the attribute `dim` defined.")
            ndim, dim = t.dim(), method.dim
            dim = dim + ndim if dim < 0 else dim
            if dim < 0:
                raise IndexError(f"Index is out of bounds for tensor with dimensions {ndim}")
            others = [d for d in range(ndim) if d != dim]
            channels = (default_mask.sum(dim=others) != 0).nonzero().reshape(-1)
            partial = method.compute_mask(t.index_select(dim, channels),
                                          default_mask=default_mask.index_select(dim, channels))
            return mask.index_copy(dim, channels, partial.to(dtype=mask.dtype))
        if kind == "global":
            return method.compute_mask(t, default_mask=default_mask).to(dtype=mask.dtype)
        raise ValueError(f"Unrecognized PRUNING_TYPE {kind}")


class Identity(BasePruningMethod):
    """Prune nothing: the mask is all ones."""

    PRUNING_TYPE = "unstructured"

    def compute_mask(self, t: Tensor, default_mask: Tensor) -> Tensor:
        return default_mask

    @classmethod
    def apply(cls, module: Module, name: str) -> Identity:
        return super().apply(module, name)


def _check_amount(amount: float) -> None:
    if not isinstance(amount, numbers.Real):
        raise TypeError(f"Invalid type for amount: {amount}. Must be int or float.")
    if (isinstance(amount, numbers.Integral) and amount < 0) or (
            not isinstance(amount, numbers.Integral) and not 0.0 <= float(amount) <= 1.0):
        raise ValueError(f"amount={amount} should either be a float in the range [0, 1] or a "
                         "non-negative integer")


def _count(amount, size: int) -> int:
    """How many of ``size`` units to prune: an int as given, a fraction rounded."""
    if isinstance(amount, numbers.Integral):
        if amount > size:
            raise ValueError(f"amount={amount} should be smaller than the number of parameters "
                             f"to prune={size}")
        return int(amount)
    return round(amount * size)


def _check_structured(t: Tensor, dim: int) -> None:
    if t.dim() <= 1:
        raise ValueError(f"Structured pruning can only be applied to multidimensional tensors. "
                         f"Found tensor of shape {t.shape} with {t.dim()} dims")
    if dim >= t.dim():
        raise IndexError(f"Invalid index {dim} for tensor of size {t.shape}")


def _zero_at(mask: Tensor, flat_indices: Tensor) -> Tensor:
    flat = mask.clone().reshape(-1)
    flat[flat_indices] = 0
    return flat.reshape(mask.shape)


class RandomUnstructured(BasePruningMethod):
    """Prune ``amount`` entries (a fraction or a count) chosen at random."""

    PRUNING_TYPE = "unstructured"

    def __init__(self, amount: float) -> None:
        _check_amount(amount)
        self.amount = amount

    def compute_mask(self, t: Tensor, default_mask: Tensor) -> Tensor:
        k = _count(self.amount, t.numel())
        if k == 0:
            return default_mask.clone()
        scores = rand(t.numel(), dtype=t.dtype if t.is_floating_point() else None)
        return _zero_at(default_mask, scores.topk(k).indices)

    @classmethod
    def apply(cls, module: Module, name: str, amount: float) -> RandomUnstructured:
        return super().apply(module, name, amount=amount)


class L1Unstructured(BasePruningMethod):
    """Prune the ``amount`` entries (a fraction or a count) of smallest magnitude."""

    PRUNING_TYPE = "unstructured"

    def __init__(self, amount: float) -> None:
        _check_amount(amount)
        self.amount = amount

    def compute_mask(self, t: Tensor, default_mask: Tensor) -> Tensor:
        k = _count(self.amount, t.numel())
        if k == 0:
            return default_mask.clone()
        return _zero_at(default_mask, t.abs().reshape(-1).topk(k, largest=False).indices)

    @classmethod
    def apply(cls, module: Module, name: str, amount: float,
              importance_scores: Tensor | None = None) -> L1Unstructured:
        return super().apply(module, name, amount=amount, importance_scores=importance_scores)


def _channels_mask(t: Tensor, dim: int, keep: Tensor) -> Tensor:
    """Ones in the slices ``keep`` (indices along ``dim``), zeros elsewhere."""
    shape = [1] * t.dim()
    shape[dim] = t.shape[dim]
    kept = zeros(t.shape[dim], dtype=t.dtype).index_fill(0, keep, 1.0)
    return kept.reshape(shape).expand(t.shape).clone()


class RandomStructured(BasePruningMethod):
    """Prune ``amount`` whole slices along ``dim``, chosen at random."""

    PRUNING_TYPE = "structured"

    def __init__(self, amount: float, dim: int = -1) -> None:
        _check_amount(amount)
        self.amount = amount
        self.dim = dim

    def compute_mask(self, t: Tensor, default_mask: Tensor) -> Tensor:
        _check_structured(t, self.dim)
        size = t.shape[self.dim]
        k = _count(self.amount, size)
        if k == 0:
            return default_mask
        keep = rand(size).argsort()[k:]
        return _channels_mask(t, self.dim % t.dim(), keep) * default_mask.to(dtype=t.dtype)

    @classmethod
    def apply(cls, module: Module, name: str, amount: float, dim: int = -1) -> RandomStructured:
        return super().apply(module, name, amount=amount, dim=dim)


class LnStructured(BasePruningMethod):
    """Prune the ``amount`` slices along ``dim`` of smallest Ln norm."""

    PRUNING_TYPE = "structured"

    def __init__(self, amount: float, n: float, dim: int = -1) -> None:
        _check_amount(amount)
        self.amount = amount
        self.n = n
        self.dim = dim

    def compute_mask(self, t: Tensor, default_mask: Tensor) -> Tensor:
        _check_structured(t, self.dim)
        dim = self.dim % t.dim()
        size = t.shape[dim]
        k = _count(self.amount, size)
        if k == 0:
            return default_mask
        norms = t.norm(p=self.n, dim=[d for d in range(t.dim()) if d != dim])
        keep = norms.topk(size - k, largest=True).indices
        return _channels_mask(t, dim, keep) * default_mask.to(dtype=t.dtype)

    @classmethod
    def apply(cls, module: Module, name: str, amount: float, n: float, dim: int,
              importance_scores: Tensor | None = None) -> LnStructured:
        return super().apply(module, name, amount=amount, n=n, dim=dim,
                             importance_scores=importance_scores)


class CustomFromMask(BasePruningMethod):
    """Prune where a given mask is zero."""

    PRUNING_TYPE = "global"

    def __init__(self, mask: Tensor) -> None:
        self.mask = mask

    def compute_mask(self, t: Tensor, default_mask: Tensor) -> Tensor:
        assert default_mask.shape == self.mask.shape
        return default_mask * self.mask.to(dtype=default_mask.dtype)

    @classmethod
    def apply(cls, module: Module, name: str, mask: Tensor) -> CustomFromMask:
        return super().apply(module, name, mask=mask)


# ---- functional forms ---------------------------------------------------------------------------


def identity(module: Module, name: str) -> Module:
    """Prune nothing, but reparametrize ``name`` as ``name_orig`` times a mask of ones."""
    Identity.apply(module, name)
    return module


def random_unstructured(module: Module, name: str, amount: float) -> Module:
    """Prune ``amount`` random entries of ``module.<name>``."""
    RandomUnstructured.apply(module, name, amount)
    return module


def l1_unstructured(module: Module, name: str, amount: float,
                    importance_scores: Tensor | None = None) -> Module:
    """Prune the ``amount`` entries of ``module.<name>`` of smallest magnitude."""
    L1Unstructured.apply(module, name, amount=amount, importance_scores=importance_scores)
    return module


def random_structured(module: Module, name: str, amount: float, dim: int) -> Module:
    """Prune ``amount`` random slices of ``module.<name>`` along ``dim``."""
    RandomStructured.apply(module, name, amount, dim)
    return module


def ln_structured(module: Module, name: str, amount: float, n: float, dim: int,
                  importance_scores: Tensor | None = None) -> Module:
    """Prune the ``amount`` slices of ``module.<name>`` along ``dim`` of smallest Ln norm."""
    LnStructured.apply(module, name, amount, n, dim, importance_scores=importance_scores)
    return module


def global_unstructured(parameters, pruning_method, importance_scores=None, **kwargs) -> None:
    """Prune across all (module, name) pairs at once, e.g. the smallest entries of them all."""
    from .convert_parameters import parameters_to_vector

    if not isinstance(parameters, Iterable):
        raise TypeError("global_unstructured(): parameters is not an Iterable")
    parameters = list(parameters)
    importance_scores = importance_scores if importance_scores is not None else {}
    if not isinstance(importance_scores, dict):
        raise TypeError("global_unstructured(): importance_scores must be of type dict")
    scores = parameters_to_vector([importance_scores.get((m, n), getattr(m, n))
                                   for m, n in parameters])
    default_mask = parameters_to_vector([getattr(m, n + "_mask", _ones_like(getattr(m, n)))
                                         for m, n in parameters])
    container = PruningContainer()
    container._tensor_name = "temp"
    method = pruning_method(**kwargs)
    method._tensor_name = "temp"
    if method.PRUNING_TYPE != "unstructured":
        raise TypeError('Only "unstructured" PRUNING_TYPE supported for the `pruning_method`. '
                        f"Found method {pruning_method} of type {method.PRUNING_TYPE}")
    container.add_pruning_method(method)
    with no_grad():
        final = container.compute_mask(scores.detach(), default_mask.detach())
    start = 0
    for module, name in parameters:
        param = getattr(module, name)
        custom_from_mask(module, name, mask=final[start:start + param.numel()].view_as(param))
        start += param.numel()


def custom_from_mask(module: Module, name: str, mask: Tensor) -> Module:
    """Prune ``module.<name>`` where ``mask`` is zero."""
    CustomFromMask.apply(module, name, mask)
    return module


def remove(module: Module, name: str) -> Module:
    """Make the pruning of ``module.<name>`` permanent and remove its hook and mask."""
    for key, hook in module._forward_pre_hooks.items():
        if isinstance(hook, BasePruningMethod) and hook._tensor_name == name:
            hook.remove(module)
            del module._forward_pre_hooks[key]
            return module
    raise ValueError(f"Parameter '{name}' of module {module} has to be pruned before pruning can "
                     "be removed")


def is_pruned(module: Module) -> bool:
    """Whether any submodule of ``module`` has a pruning hook."""
    for _, submodule in module.named_modules():
        for hook in submodule._forward_pre_hooks.values():
            if isinstance(hook, BasePruningMethod):
                return True
    return False
