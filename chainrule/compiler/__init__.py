"""torch.compiler: the compile entry point and the questions code asks about it.

``compile`` checks its arguments as ``torch.compile`` does (backend names, ``mode``, inductor
``options``) and compiles by capture and replay (``chainrule._compile``); the rest are the
controls of ``torch._dynamo`` under their torch.compiler names.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

import numpy as np

from .. import _compile, _fuse  # noqa: F401  (_fuse: the fused back end, installed on import)
from .._creation import as_tensor
from .._dynamo import (
    OptimizedModule,
    _default_backend,
    _set_default_backend,
    allow_in_graph,
    assume_constant_result,
    disable,
    is_compiling,
    list_backends,
    lookup_backend,
    reset,
    set_stance,
)
from .._dynamo import config as _dynamo_config
from .._dynamo import substitute_in_graph as _substitute_in_graph
from .._inductor import config as _inductor_config
from .._inductor import list_mode_options
from ..nn import Module
from ..tensor import Tensor
from . import config

__all__ = [
    "compile", "config", "assume_constant_result", "reset", "allow_in_graph",
    "substitute_in_graph", "list_backends", "disable", "set_default_backend",
    "get_default_backend", "set_stance", "set_enable_guard_collectives",
    "cudagraph_mark_step_begin", "wrap_numpy", "is_compiling", "is_dynamo_compiling",
    "is_exporting", "save_cache_artifacts", "load_cache_artifacts",
    "keep_portable_guards_unsafe", "skip_guard_on_inbuilt_nn_modules_unsafe",
    "skip_guard_on_all_nn_modules_unsafe", "keep_tensor_guards_unsafe",
    "skip_guard_on_globals_unsafe", "skip_all_guards_unsafe", "nested_compile_region",
    "OptimizedModule",
]


def _check_options(options: dict) -> None:
    """Inductor options must be its flags, with values of the flag's type."""
    flags = _inductor_config.get_config_copy()
    for key, value in options.items():
        name = key.replace("-", "_")
        if name not in flags:
            raise RuntimeError(f"Unexpected optimization option {key}, known options are "
                               f"{list(flags)}")
        default = flags[name]
        if default is not None and not isinstance(value, type(default)):
            raise RuntimeError(f"Unexpected type of attr {key}, got {type(value).__name__} "
                               f"should be {type(default).__name__}")


def compile(model: Callable | None = None, *, fullgraph: bool = False,
            dynamic: bool | None = None, backend: str | Callable | None = None,
            mode: str | None = None, options: dict | None = None, name: str | None = None,
            disable: bool = False, recompile_limit: int | None = None,
            isolate_recompiles: bool = False, shapes_spec: Any = None):
    """Optimize a function or module by capturing the kernels it runs and replaying them."""
    if backend is None:
        backend = get_default_backend()
    given = dict(fullgraph=fullgraph, dynamic=dynamic, backend=backend, mode=mode,
                 options=options, name=name, disable=disable, recompile_limit=recompile_limit,
                 isolate_recompiles=isolate_recompiles, shapes_spec=shapes_spec)
    if model is None:
        def decorate(model):
            if model is None:
                raise RuntimeError("Model can't be None")
            return compile(model, **given)
        return decorate
    if mode is not None and options is not None:
        raise RuntimeError("Either mode or options can be specified, but both can't be "
                           "specified at the same time.")
    if options:
        options.pop("guard_filter_fn", None)  # chainrule's guards are not filtered
        options.pop("use_aoti", None)
    if backend == "inductor":
        if mode not in (None, "default"):
            list_mode_options(mode, dynamic)
        if options:
            _check_options(options)
    elif isinstance(backend, str):
        lookup_backend(backend)
    if not callable(model):
        raise AssertionError(f"A callable function is expected, but {type(model)} is provided.")
    if disable or _dynamo_config.disable or getattr(model, "_torchdynamo_disable", False):
        return model
    if recompile_limit is None:
        recompile_limit = _dynamo_config.recompile_limit
    if dynamic is None and not _dynamo_config.automatic_dynamic_shapes:
        dynamic = False  # every new shape counts as a recompilation
    compiled = _compile.compile(model, fullgraph=fullgraph, dynamic=dynamic, backend=backend,
                                mode=mode, options=options, name=name,
                                recompile_limit=recompile_limit,
                                isolate_recompiles=isolate_recompiles, shapes_spec=shapes_spec)
    compiled._torchdynamo_orig_callable = model
    if isinstance(model, Module):
        return OptimizedModule(model, compiled)
    return compiled


def is_dynamo_compiling() -> bool:
    """True while chainrule.compile captures a call (chainrule has no dynamo: the same)."""
    return is_compiling()


def is_exporting() -> bool:
    """True while ``torch.export`` traces (chainrule has no export: never)."""
    return False


def substitute_in_graph(original_fn: Callable, *, can_constant_fold_through: bool = False,
                        skip_signature_check: bool = False) -> Callable[[Callable], Callable]:
    """Register a traceable Python stand-in for ``original_fn``."""
    return _substitute_in_graph(original_fn, can_constant_fold_through=can_constant_fold_through,
                                skip_signature_check=skip_signature_check)


def set_default_backend(backend: str | Callable | None) -> None:
    """The backend ``compile`` uses when given none (None: 'inductor')."""
    _set_default_backend(backend)


def get_default_backend() -> str | Callable:
    """The backend ``compile`` uses when given none."""
    return _default_backend[0]


_guard_collectives = [False]


def set_enable_guard_collectives(enabled: bool) -> bool:
    """Run a collective after guard evaluation across ranks (recorded: chainrule's programs
    are per process); returns whether it was on."""
    previous, _guard_collectives[0] = _guard_collectives[0], bool(enabled)
    return previous


def cudagraph_mark_step_begin() -> None:
    """Mark the start of a new step for CUDA graph trees (no CUDA: nothing to mark)."""


def wrap_numpy(fn: Callable) -> Callable:
    """Make a function of NumPy arrays a function of tensors: tensor arguments are passed as
    arrays, array results come back as tensors."""
    def convert(x, kind, to):
        if isinstance(x, kind):
            return to(x)
        if isinstance(x, (list, tuple)):
            return type(x)(convert(v, kind, to) for v in x)
        if isinstance(x, dict):
            return {k: convert(v, kind, to) for k, v in x.items()}
        return x

    @functools.wraps(fn)
    def wrapped(*args, **kwargs):
        args, kwargs = convert((args, kwargs), Tensor, lambda t: t.numpy())
        return convert(fn(*args, **kwargs), np.ndarray, as_tensor)
    return wrapped


def save_cache_artifacts() -> tuple[bytes, Any] | None:
    """The compile caches' artifacts to save; None: chainrule's programs live in memory, with
    their compiled functions, so there are none."""
    return None


def load_cache_artifacts(serialized_artifacts: bytes) -> Any:
    """Load compile cache artifacts saved by PyTorch: not possible (chainrule captures again)."""
    raise RuntimeError("torch.compiler.load_cache_artifacts: chainrule keeps no compile cache "
                       "artifacts (its programs are captured again in each process), so it "
                       "cannot load PyTorch's")


# ---- guard filters for compile(options={"guard_filter_fn": ...}) ---------------------------
# chainrule's guards are not filtered (the option is accepted and dropped); these are the
# filters themselves, over PyTorch's guard entries.

def keep_portable_guards_unsafe(guard_entries) -> list[bool]:
    """Keep global-state, shape and non-global tensor guards."""
    return [g.guard_type in ("GLOBAL_STATE", "SHAPE_ENV")
            or (g.guard_type == "TENSOR_MATCH" and not g.is_global) for g in guard_entries]


def skip_guard_on_inbuilt_nn_modules_unsafe(guard_entries) -> list[bool]:
    """Drop guards on built-in nn modules."""
    return [not g.orig_guard.source.is_unspecialized_builtin_nn_module() for g in guard_entries]


def skip_guard_on_all_nn_modules_unsafe(guard_entries) -> list[bool]:
    """Drop guards on all nn modules."""
    return [not g.orig_guard.source.is_unspecialized_nn_module() for g in guard_entries]


def keep_tensor_guards_unsafe(guard_entries, keep_parameters: bool = False) -> list[bool]:
    """Keep only tensor guards (on parameters too if ``keep_parameters``)."""
    from ..nn import Parameter

    return [g.guard_type == "TENSOR_MATCH"
            and (keep_parameters or not isinstance(g.value, Parameter)) for g in guard_entries]


def skip_guard_on_globals_unsafe(guard_entries) -> list[bool]:
    """Drop guards on globals."""
    return [not g.is_global for g in guard_entries]


def skip_all_guards_unsafe(guard_entries) -> list[bool]:
    """Drop every guard."""
    return [False for _ in guard_entries]


def nested_compile_region(fn=None, *, options=None, max_reuse_entries: int = 8,
                          reuse_hash_fn=None):
    """Mark a region compiled once and reused (eager code, and chainrule's capture, which
    records the region's kernels where they run: the function itself)."""
    if options is not None and not _dynamo_config.enable_invoke_subgraph_regional_compile:
        raise RuntimeError("nested_compile_region config is an experimental feature for testing "
                           "only.")
    if fn is None:
        return lambda f: nested_compile_region(f, options=options,
                                               max_reuse_entries=max_reuse_entries,
                                               reuse_hash_fn=reuse_hash_fn)
    return fn

