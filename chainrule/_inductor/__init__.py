"""torch._inductor: the code generator's flags and modes (chainrule has no Inductor:
``chainrule.compile`` replays NumPy kernels, so these are read and recorded)."""

from __future__ import annotations

from . import config

__all__ = ["config", "list_mode_options", "list_options"]

_MODES = {
    "default": {},
    "lite": {"fallback_by_default": True, "selective_decompose": True,
             "reorder_for_peak_memory": False, "reorder_for_compute_comm_overlap": False,
             "triton.reorder_for_reducing_graph_partitions": False,
             "use_pre_grad_passes": False, "use_joint_graph_passes": False,
             "use_post_grad_passes": False, "use_dce": False, "allow_buffer_reuse": False},
    "reduce-overhead": {"triton.cudagraphs": True},
    "max-autotune-no-cudagraphs": {"max_autotune": True, "coordinate_descent_tuning": True},
    "max-autotune": {"max_autotune": True, "triton.cudagraphs": True,
                     "coordinate_descent_tuning": True},
}


def list_mode_options(mode: str | None = None, dynamic: bool | None = None) -> dict:
    """The flags each ``compile`` mode sets (all modes when ``mode`` is None)."""
    if not mode:
        return _MODES
    if mode not in _MODES:
        raise RuntimeError(f"Unrecognized mode={mode}, should be one of: {', '.join(_MODES)}")
    return _MODES[mode]


def list_options() -> list[str]:
    """The names of the flags ``compile(options=...)`` accepts."""
    return list(config.get_config_copy())
