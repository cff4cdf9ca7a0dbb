"""``torch.overrides``: ``__torch_function__`` dispatch (``_torch_function`` does it), the tables
of which functions take part in it, and helpers over them, for chainrule's namespaces (names
resolve to ``torch.<name>``, as code written for PyTorch compares them).

``install()`` (run once when the package loads) wraps the public functions of the namespaces
so that they dispatch; Tensor's methods are wrapped when first needed (``_torch_function``).
"""

from __future__ import annotations
import __future__

import contextlib
import functools
import inspect
import types
from collections import defaultdict
from collections.abc import Callable
from typing import Any

from ._torch_function import (  # noqa: F401  (PyTorch's private names, which libraries use)
    BaseTorchFunctionMode,
    DisableTorchFunction,
    DisableTorchFunctionSubclass,
    TorchFunctionMode,
    _disabled_torch_function_impl,
    _get_current_function_mode,
    _get_current_function_mode_stack,
    _is_torch_function_enabled,
    _is_torch_function_mode_enabled,
    _len_torch_function_stack,
    _overloaded,
    _pop_mode,
    _push_mode,
    handle_torch_function,
    has_torch_function,
    has_torch_function_unary,
    has_torch_function_variadic,
    on_methods_wrapped,
    patch_warnings,
    redispatch_function,
    wrap_public,
)

__all__ = ["get_ignored_functions", "get_overridable_functions", "get_testing_overrides",
           "handle_torch_function", "has_torch_function", "resolve_name", "is_tensor_like",
           "is_tensor_method_or_property", "wrap_torch_function", "enable_reentrant_dispatch",
           "redispatch_function", "get_default_nowrap_functions"]

# PyTorch's functions outside __torch_function__ (factories, settings, dtype utilities, ...),
# by namespace; those chainrule has are in get_ignored_functions().
_IGNORED = {
    "torch": (
        "arange are_deterministic_algorithms_enabled as_strided as_tensor asarray "
        "autocast_decrement_nesting autocast_increment_nesting bartlett_window blackman_window "
        "can_cast clear_autocast_cache compile cond cudnn_affine_grid_generator "
        "cudnn_batch_norm cudnn_convolution cudnn_convolution_add_relu cudnn_convolution_relu "
        "cudnn_convolution_transpose cudnn_grid_sampler cudnn_is_acceptable device dtype empty "
        "empty_permuted empty_quantized empty_strided enable_grad eye fill finfo fork from_file "
        "from_numpy frombuffer full get_autocast_cpu_dtype get_autocast_dtype "
        "get_autocast_gpu_dtype get_autocast_ipu_dtype get_autocast_xla_dtype "
        "get_default_device get_default_dtype get_deterministic_debug_mode get_device_module "
        "get_float32_matmul_precision get_num_interop_threads get_num_threads get_rng_state "
        "hamming_window hann_window iinfo import_ir_module import_ir_module_from_buffer "
        "inference_mode init_num_threads initial_seed is_anomaly_check_nan_enabled "
        "is_anomaly_enabled is_autocast_cache_enabled is_autocast_cpu_enabled "
        "is_autocast_enabled is_autocast_ipu_enabled is_autocast_xla_enabled "
        "is_deterministic_algorithms_warn_only_enabled is_grad_enabled "
        "is_inference_mode_enabled is_storage is_tensor is_vulkan_available "
        "is_warn_always_enabled kaiser_window layout linspace load logspace manual_seed "
        "memory_format merge_type_from_type_comment miopen_ctc_loss mkldnn_adaptive_avg_pool2d "
        "mkldnn_convolution mkldnn_linear_backward_weights mkldnn_max_pool2d mkldnn_max_pool3d "
        "mkldnn_rnn_layer no_grad normal ones parse_ir parse_schema parse_type_comment "
        "promote_types qscheme rand rand_like randint randint_like randn randn_like randperm "
        "range result_type save scalar_tensor seed set_anomaly_enabled "
        "set_autocast_cache_enabled set_autocast_cpu_dtype set_autocast_cpu_enabled "
        "set_autocast_dtype set_autocast_enabled set_autocast_gpu_dtype set_autocast_ipu_dtype "
        "set_autocast_ipu_enabled set_autocast_xla_dtype set_autocast_xla_enabled "
        "set_default_device set_default_tensor_type set_deterministic_debug_mode "
        "set_float32_matmul_precision set_flush_denormal set_num_interop_threads "
        "set_num_threads set_printoptions set_rng_state set_warn_always sparse_bsc_tensor "
        "sparse_bsr_tensor sparse_compressed_tensor sparse_coo_tensor sparse_csc_tensor "
        "sparse_csr_tensor sym_constrain_range sym_constrain_range_for_size sym_fresh_size "
        "tensor thread_safe_generator tril_indices triu_indices typename unify_type_list "
        "use_deterministic_algorithms vander vmap wait zeros set_grad_enabled "
    ),
    "torch.Tensor": (
        "__class__ __delitem__ __dir__ __hash__ __init_subclass__ __iter__ __new__ "
        "__subclasshook__ __torch_dispatch__ __torch_function__ _addmm_activation _conj "
        "_conj_physical _dtensor__new__ _fix_weakref _has_symbolic_sizes_strides.__get__ "
        "_is_all_true _is_any_true _is_zerotensor _lazy_clone _make_subclass "
        "_make_wrapper_subclass _neg_view _philox_normal_ _philox_uniform_ "
        "_python_dispatch.__get__ _reduce_ex_internal _rev_view_func_unsafe _to_sparse "
        "_to_sparse_bsc _to_sparse_bsr _to_sparse_csc _to_sparse_csr _typed_storage _use_count "
        "_view_func _view_func_unsafe as_subclass eig lstsq new new_empty new_empty_strided "
        "new_full new_ones new_tensor new_zeros reinforce solve stride symeig to_padded_tensor "
        "to_sparse_bsc to_sparse_bsr to_sparse_coo to_sparse_csc to_sparse_csr unflatten "
    ),
    "torch.fft": (
        "fftfreq rfftfreq "
    ),
    "torch.functional": (
        "broadcast_shapes "
    ),
    "torch.nn.functional": (
        "_canonical_mask _none_or_dtype assert_int_or_pair boolean_dispatch grouped_mm "
        "handle_torch_function hardsigmoid hardswish has_torch_function "
        "has_torch_function_unary has_torch_function_variadic scaled_grouped_mm scaled_mm "
        "sigmoid tanh upsample upsample_bilinear upsample_nearest "
    ),
    "torch.nn.init": (
        "calculate_gain constant dirac eye kaiming_normal kaiming_uniform normal orthogonal "
        "sparse uniform xavier_normal xavier_uniform "
    ),
}


def _namespaces() -> list[tuple[str, Any, list[str]]]:
    import chainrule

    from . import fft, functional, linalg, special
    from .nn import functional as nn_functional
    from .nn import init as nn_init

    def public(module) -> list[str]:
        return list(getattr(module, "__all__", None) or dir(module))

    return [("torch", chainrule, [n for n in dir(chainrule) if not n.startswith("__")]),
            ("torch.functional", functional, public(functional)),
            ("torch.nn.functional", nn_functional, public(nn_functional)),
            ("torch.nn.init", nn_init, public(nn_init)),
            ("torch.Tensor", chainrule.Tensor, dir(chainrule.Tensor)),
            ("torch.linalg", linalg, public(linalg)),
            ("torch.fft", fft, public(fft)),
            ("torch.special", special, public(special))]


def _lookup(qualified: str):
    """chainrule's object for a ``torch.``-qualified name, or None."""
    import chainrule

    obj = chainrule
    for part in qualified.split(".")[1:]:
        obj = getattr(obj, part, None)
        if obj is None:
            return None
    return obj


@functools.cache
def _ignored() -> frozenset:
    found = (_lookup(f"{ns}.{name}") for ns, names in _IGNORED.items() for name in names.split())
    return frozenset(f for f in found if f is not None)


def get_ignored_functions() -> set[Callable]:
    """The public functions that cannot be overridden by ``__torch_function__``: factories,
    settings, dtype and device utilities, and the like."""
    return set(_ignored.__wrapped__())  # as the namespaces are now


@functools.cache
def _tables() -> tuple[dict, dict]:
    """The overridable functions by namespace, and every function's qualified name."""
    overridable: dict = defaultdict(list)
    index: dict = {}
    seen: set = set()  # an alias is listed once
    ignored = _ignored()
    for ns_name, namespace, names in _namespaces():
        is_tensor = isinstance(namespace, type)
        for name in names:
            if not is_tensor:
                if name.startswith("__") or name == "unique_dim":
                    continue
                skip = name.startswith("_") or name.endswith("_") or not name[0].islower()
            else:  # a single underscore is chainrule's own internals: named, not listed
                skip = name.startswith("_") and not name.startswith("__")
            func = getattr(namespace, name, None)
            if is_tensor and (name == "__weakref__" or getattr(object, name, None) == func):
                continue
            if isinstance(func, (types.ModuleType, __future__._Feature)) or func is None:
                continue
            if not callable(func) and hasattr(func, "__get__"):  # a property of Tensor
                index[func.__get__] = f"{ns_name}.{name}.__get__"
                if hasattr(func, "__set__"):
                    index[func.__set__] = f"{ns_name}.{name}.__set__"
                if not skip and func.__get__ not in ignored and (func, func) not in seen:
                    seen.add((func, func))  # one property may stand under several names
                    overridable[func].append(func.__get__)
                continue
            if not callable(func):
                continue
            # One object under several names: the last namespace names it (as in PyTorch,
            # where torch.einsum resolves to torch.functional.einsum); within a namespace, the
            # name it was defined under
            current = index.get(func, "")
            if current.rpartition(".")[0] != ns_name or name == getattr(func, "__name__", None):
                index[func] = f"{ns_name}.{name}"
            if not skip and func not in ignored and (namespace, func) not in seen:
                seen.add((namespace, func))
                overridable[namespace].append(func)
    return dict(overridable), index


def get_overridable_functions() -> dict[Any, list[Callable]]:
    """The functions that take part in ``__torch_function__``, by namespace (module or class;
    a Tensor property's getter under the property)."""
    return {k: list(v) for k, v in _tables()[0].items()}


def resolve_name(f) -> str | None:
    """The qualified name of function ``f`` (``'torch.add'``, ``'torch.Tensor.add'``), or
    None."""
    return _tables()[1].get(f)


@functools.cache
def _tensor_methods() -> frozenset:
    from .tensor import Tensor

    return frozenset(_tables()[0].get(Tensor, ()))


def is_tensor_method_or_property(func: Callable) -> bool:
    """Whether ``func`` is a method or a property getter of Tensor."""
    return func in _tensor_methods() or getattr(func, "__name__", None) == "__get__"


def is_tensor_like(inp) -> bool:
    """Whether ``inp`` is a Tensor (or Tensor subclass, instance or class) or has a
    ``__torch_function__``."""
    from .tensor import Tensor

    return (isinstance(inp, Tensor) or (isinstance(inp, type) and issubclass(inp, Tensor))
            or hasattr(inp, "__torch_function__"))


def get_default_nowrap_functions() -> set[Callable]:
    """The Tensor property getters whose results ``__torch_function__`` does not wrap in the
    subclass (``_base``, ``grad``, ``_grad``)."""
    from .tensor import Tensor

    props = (getattr(Tensor, name, None) for name in ("_base", "grad", "_grad"))
    return {p.__get__ for p in props if p is not None and hasattr(p, "__get__")
            and not callable(p)}


def _dummy(func: Callable) -> Callable:
    """A function with ``func``'s signature that returns -1."""
    try:
        signature = inspect.signature(func)
    except (TypeError, ValueError):
        signature = None

    def dummy(*args, **kwargs):
        if signature is not None:
            signature.bind(*args, **kwargs)  # PyTorch's lambdas refuse what func would
        return -1

    dummy.__signature__ = signature
    dummy.__name__ = getattr(func, "__name__", "dummy")
    return dummy


def get_testing_overrides() -> dict[Callable, Callable]:
    """For each overridable function, a function with its signature returning -1 (to test that
    a ``__torch_function__`` implementation covers them)."""
    return {func: _dummy(func) for funcs in _tables()[0].values() for func in funcs}


@contextlib.contextmanager
def enable_reentrant_dispatch():
    """Let code inside re-enter the dispatch modes active outside it. chainrule has no
    dispatch modes to disable, so ops inside run as they would outside."""
    yield


def _get_overloaded_args(relevant_args, get_type_fn: Callable | None = None) -> list:
    """The arguments whose ``__torch_function__`` is called, in the order it is called."""
    if get_type_fn is None:
        return _overloaded(relevant_args)
    found: list = []
    for arg in relevant_args:
        t = get_type_fn(arg)
        tf = getattr(t, "__torch_function__", None)
        if tf is None or tf is _disabled_torch_function_impl or any(
                get_type_fn(f) is t for f in found):
            continue
        index = next((i for i, old in enumerate(found) if issubclass(t, get_type_fn(old))),
                     len(found))
        found.insert(index, arg)
    return found


@contextlib.contextmanager
def _pop_mode_temporarily():
    old = _pop_mode()
    try:
        yield old
    finally:
        _push_mode(old)


def wrap_torch_function(dispatcher: Callable) -> Callable:
    """Decorator: the function dispatches to ``__torch_function__`` of the tensor-likes that
    ``dispatcher`` (same signature) returns."""

    def inner(func: Callable) -> Callable:
        @functools.wraps(func)
        def wrapped(*args, **kwargs):
            relevant_args = dispatcher(*args, **kwargs)
            if has_torch_function(relevant_args):
                return handle_torch_function(wrapped, relevant_args, *args, **kwargs)
            return func(*args, **kwargs)

        return wrapped

    return inner


# Functions PyTorch ignores that a function mode still sees (its C++ factories).
_MODE_SEES = frozenset(
    "arange as_strided as_tensor asarray bartlett_window blackman_window empty empty_permuted "
    "empty_strided eye from_numpy full hamming_window hann_window kaiser_window linspace "
    "logspace normal ones rand rand_like randint randint_like randn randn_like randperm range "
    "scalar_tensor tensor tril_indices triu_indices zeros".split())


# nn.functional's names that are PyTorch's C++ bindings (types without exact tensors; errors
# name them as torch.nn.<name> or torch.<name>)
_NN_CPP = frozenset(
    "avg_pool2d avg_pool3d elu_ gelu hardtanh_ leaky_relu_ linear logsigmoid one_hot "
    "scaled_dot_product_attention softplus softshrink".split())
_TORCH_CPP = frozenset(
    "adaptive_avg_pool1d avg_pool1d bilinear celu_ channel_shuffle conv1d conv2d conv3d conv_tbc "
    "conv_transpose1d conv_transpose2d conv_transpose3d cosine_similarity hardshrink "
    "native_channel_shuffle pairwise_distance pdist pixel_shuffle pixel_unshuffle prelu relu_ "
    "rrelu_ selu_ threshold_".split())


def install() -> None:
    """Wrap the public functions of chainrule's namespaces so that they dispatch to
    ``__torch_function__`` (once, when the package loads)."""
    import chainrule

    from . import functional
    from .nn import functional as nn_functional

    python_level = {id(v) for v in vars(functional).values() if callable(v)}
    ignored = _ignored()
    wrappers: dict = {}
    for ns_name, namespace, names in _namespaces():
        if isinstance(namespace, type):
            continue  # Tensor's methods: when first needed (_torch_function.enable_methods)
        for name in names:
            if name.startswith("_") or not name[0].islower():
                continue
            func = getattr(namespace, name, None)
            if not isinstance(func, (types.FunctionType, types.BuiltinFunctionType,
                                     functools.partial)) \
                    or hasattr(func, "_torch_function_wrapped"):
                continue
            if func in ignored and name not in _MODE_SEES:
                continue
            # PyTorch's Python-level functions (torch.functional's, nn.functional's) count exact
            # tensors in ``types``; its C++ ones (torch.relu) do not, and linalg's, fft's and
            # special's are named with their namespace (linalg_norm)
            nn_cpp = namespace is nn_functional and (name in _NN_CPP or name in _TORCH_CPP)
            python = (id(func) in python_level or namespace is nn_functional) and not nn_cpp
            prefix = ns_name[6:] if ns_name in ("torch.linalg", "torch.fft", "torch.special") \
                else ""
            key = (id(func), python, prefix, nn_cpp)
            public = wrappers.get(key)
            if public is None:
                public = wrappers[key] = wrap_public(func, python)
                if prefix:
                    public.__name__ = f"{prefix}_{name}"
                if name == "logsigmoid" and nn_cpp:
                    public.__name__ = "log_sigmoid"
                if python:
                    public._torch_function_module = ns_name
                elif nn_cpp:
                    owner = "torch.nn" if name in _NN_CPP else "torch"
                    public._torch_function_cpp = f"{owner}.{public.__name__}"
                else:
                    public._torch_function_cpp = f"{ns_name}.{public.__name__}"
            setattr(namespace, name, public)
    for name in ("has_torch_function", "has_torch_function_unary", "has_torch_function_variadic",
                 "handle_torch_function"):
        setattr(nn_functional, name, globals()[name])
    patch_warnings()
    chainrule.DisableTorchFunction = DisableTorchFunction
    chainrule.DisableTorchFunctionSubclass = DisableTorchFunctionSubclass
    _clear_tables()


def _clear_tables() -> None:
    _ignored.cache_clear()
    _tables.cache_clear()
    _tensor_methods.cache_clear()


on_methods_wrapped.append(_clear_tables)
