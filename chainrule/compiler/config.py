"""torch.compiler.config: the compiler's user-facing flags (several are the dynamo flags of the
same name)."""

from __future__ import annotations

from .._dynamo._config_module import install

# PyTorch 2.13's flags and their defaults
_DEFAULTS = {
    "job_id": None,
    "pgo_extra_read_key": None,
    "pgo_extra_write_key": None,
    "cache_key_tag": "",
    "force_disable_caches": False,
    "dynamic_sources": "",
    "dynamic_values": "",
    "unbacked_sources": "",
    "force_cudagraph_gc": False,
}

install(
    __name__,
    "torch.compiler.config",
    _DEFAULTS,
    aliases={
        "dynamic_shapes": "torch._dynamo.config.dynamic_shapes",
        "assume_static_by_default": "torch._dynamo.config.assume_static_by_default",
        "automatic_dynamic_shapes": "torch._dynamo.config.automatic_dynamic_shapes",
        "recompile_limit": "torch._dynamo.config.recompile_limit",
        "accumulated_recompile_limit": "torch._dynamo.config.accumulated_recompile_limit",
        "verbose": "torch._dynamo.config.verbose",
        "capture_scalar_outputs": "torch._dynamo.config.capture_scalar_outputs",
        "capture_dynamic_output_shape_ops": "torch._dynamo.config.capture_dynamic_output_shape_ops",
        "log_file_name": "torch._dynamo.config.log_file_name",
        "fail_on_recompile_limit_hit": "torch._dynamo.config.fail_on_recompile_limit_hit",
        "allow_unspec_int_on_nn_module": "torch._dynamo.config.allow_unspec_int_on_nn_module",
        "skip_tensor_guards_with_matching_dict_tags": "torch._dynamo.config.skip_tensor_guards_with_matching_dict_tags",  # noqa: E501
        "enable_cpp_symbolic_shape_guards": "torch._dynamo.config.enable_cpp_symbolic_shape_guards",
        "wrap_top_frame": "torch._dynamo.config.wrap_top_frame",
        "reorderable_logging_functions": "torch._dynamo.config.reorderable_logging_functions",
        # chainrule's own: the fused back end of compiled programs (chainrule._fuse; needs numba)
        "fuse": "chainrule._fuse.enabled",
    },
    deprecated={},
)
