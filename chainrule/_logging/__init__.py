"""torch._logging: levels of the ``torch.*`` Python loggers by component, and artifact loggers
(``getArtifactLogger``) that only log once their artifact is switched on with ``set_logs``.

chainrule's own code does not log through these loggers (its compiler has no graphs, guards or
generated kernels to report); code that logs through them behaves as under PyTorch.
"""

from __future__ import annotations

import contextlib
import functools
import inspect
import logging
import warnings
from collections.abc import Iterator

__all__ = ["LazyString", "getArtifactLogger", "hide_warnings", "set_logs", "warning_once"]

# component -> the loggers it sets (PyTorch's registrations)
_COMPONENTS = {
    "all": ("torch",),
    "dynamo": ("torch._dynamo", "torch.fx.experimental.symbolic_shapes",
               "torch.fx.experimental.sym_node", "torch.fx.experimental.recording"),
    "aot": ("torch._functorch.aot_autograd", "torch._functorch._aot_autograd"),
    "autograd": ("torch.autograd",),
    "dynamic": ("torch.fx.experimental.symbolic_shapes", "torch.fx.experimental.sym_node",
                "torch.fx.experimental.recording"),
    "inductor": ("torch._inductor", "torch._inductor.cudagraph_trees"),
    "distributed": ("torch.distributed", "torch._dynamo.backends.distributed",
                    "torch.nn.parallel.distributed"),
    "c10d": ("torch.distributed.distributed_c10d", "torch.distributed.rendezvous"),
    "ddp": ("torch.nn.parallel.distributed", "torch._dynamo.backends.distributed"),
    "fsdp": ("torch.distributed.fsdp", "torch.distributed._composable.fsdp"),
    "dtensor": ("torch.distributed._tensor", "torch.distributed.tensor"),
    "onnx": ("torch.onnx",),
    "export": ("torch._dynamo", "torch.export", "torch.export.dynamic_shapes",
               "torch.fx.experimental.symbolic_shapes", "torch.fx.experimental.sym_node",
               "torch.fx.experimental.recording", "torch._export.converter",
               "torch._export.non_strict_utils", "torch._export.serde.serialize",
               "torch.fx.experimental.proxy_tensor"),
}
# set_logs' parameters, in PyTorch's order: components take a level, artifacts a switch
_PARAMETERS = (
    "all", "dynamo", "aot", "autograd", "dynamic", "inductor", "distributed", "c10d", "ddp",
    "fsdp", "dtensor", "onnx", "bytecode", "aot_graphs", "aot_joint_graph", "ddp_graphs",
    "graph", "graph_code", "graph_code_verbose", "graph_breaks", "side_effects", "graph_sizes",
    "guards", "recompiles", "recompiles_verbose", "trace_source", "trace_call", "trace_bytecode",
    "output_code", "kernel_code", "schedule", "perf_hints", "pre_grad_graphs",
    "post_grad_graphs", "ir_pre_fusion", "ir_post_fusion", "onnx_diagnostics", "fusion",
    "overlap", "export", "modules", "cudagraphs", "sym_node", "compiled_autograd",
    "compiled_autograd_verbose", "cudagraph_static_inputs", "benchmarking", "autotuning",
    "incremental", "graph_region_expansion", "inductor_metrics", "hierarchical_compile",
    "compute_dependencies", "caching",
)
# every artifact getArtifactLogger knows (some have no set_logs switch)
_ARTIFACTS = frozenset(p for p in _PARAMETERS if p not in _COMPONENTS and p != "modules") | {
    "annotation", "aot_graphs_effects", "auto_chunker", "custom_format_test_artifact",
    "loop_ordering", "loop_tiling", "node_runtime_estimation", "not_implemented",
    "overlap_scheduling", "trace_shape_events", "verbose_guards"}
_LEVELS = (logging.CRITICAL, logging.ERROR, logging.WARNING, logging.INFO, logging.DEBUG,
           logging.NOTSET)

_enabled: set[str] = set()
_artifact_loggers: dict[str, list[logging.Logger]] = {}
_set_levels: set[str] = set()


def _apply_artifact(name: str) -> None:
    for logger in _artifact_loggers.get(name, ()):
        logger.setLevel(logging.DEBUG if name in _enabled else logging.NOTSET)


class _Switched(logging.Filter):
    """Lets an artifact logger's records through only while its artifact is on."""

    def __init__(self, artifact: str) -> None:
        super().__init__()
        self.artifact = artifact

    def filter(self, record: logging.LogRecord) -> bool:
        return self.artifact in _enabled


def set_logs(**settings) -> None:
    """Set the log level of components (``dynamo=logging.DEBUG``), switch artifacts on
    (``graph_breaks=True``), or set levels of other modules (``modules={"name": level}``);
    called with nothing, back to the defaults."""
    for key in settings:
        if key not in _PARAMETERS:
            raise TypeError(f"set_logs() got an unexpected keyword argument '{key}'")
    levels: dict[str, int] = {}
    artifacts: set[str] = set()
    for key, value in settings.items():
        if key == "modules":
            for name, level in (value or {}).items():
                levels[name] = _level(name, logging.DEBUG if level is True else level)
        elif key in _COMPONENTS:
            if value is not None:
                level = _level(key, value)
                levels.update(dict.fromkeys(_COMPONENTS[key], level))
        elif value:
            artifacts.add(key)
    for name in _set_levels - set(levels):
        logging.getLogger(name).setLevel(logging.NOTSET)
    for name, level in levels.items():
        logging.getLogger(name).setLevel(level)
    _set_levels.clear()
    _set_levels.update(levels)
    _enabled.clear()
    _enabled.update(artifacts)
    for name in _artifact_loggers:
        _apply_artifact(name)


def _level(name: str, level) -> int:
    if level not in _LEVELS:
        raise ValueError(f"Unrecognized log level for log {name}: {level}, valid level values "
                         f"are: {','.join(str(v) for v in _LEVELS)}")
    return level


set_logs.__signature__ = inspect.Signature([
    inspect.Parameter(p, inspect.Parameter.KEYWORD_ONLY,
                      default=None if p in _COMPONENTS or p == "modules" else False)
    for p in _PARAMETERS])


def getArtifactLogger(module_qname: str, artifact_name: str) -> logging.Logger:  # noqa: N802
    """The logger of ``artifact_name`` in ``module_qname``: it logs only while the artifact is
    switched on (``set_logs(<artifact>=True)``)."""
    if artifact_name not in _ARTIFACTS:
        raise ValueError(f"Artifact name: {artifact_name!r} not registered,please call "
                         f"register_artifact({artifact_name!r}) in "
                         "torch._logging.registrations.")
    logger = logging.getLogger(f"{module_qname}.__{artifact_name}")
    if not any(isinstance(f, _Switched) for f in logger.filters):
        logger.addFilter(_Switched(artifact_name))
        _artifact_loggers.setdefault(artifact_name, []).append(logger)
    _apply_artifact(artifact_name)
    return logger


@functools.lru_cache(None)
def warning_once(logger_obj: logging.Logger, *args, **kwargs) -> None:
    """``logger_obj.warning(*args, **kwargs)``, the first time only for the same arguments."""
    logger_obj.warning(*args, **kwargs)


class LazyString:
    """A string computed from ``func(*args, **kwargs)`` only when it is formatted."""

    def __init__(self, func, *args, **kwargs) -> None:
        self.func, self.args, self.kwargs = func, args, kwargs

    def __str__(self) -> str:
        return self.func(*self.args, **self.kwargs)


@contextlib.contextmanager
def hide_warnings(filter_fn=lambda *args, **kwargs: True) -> Iterator[None]:
    """Within the block, show only the warnings ``filter_fn`` returns True for (it takes
    ``warnings.showwarning``'s arguments); the warnings module's filters are left as they are."""
    prior = warnings.showwarning

    def show(*args, **kwargs):
        if filter_fn(*args, **kwargs):
            prior(*args, **kwargs)

    warnings.showwarning = show
    try:
        yield
    finally:
        warnings.showwarning = prior
