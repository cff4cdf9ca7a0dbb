"""``torch.cuda.tunable``: TunableOp, which times GEMM kernels on a GPU to pick the fastest; a CPU
build has none of its bindings."""

from __future__ import annotations

from ._utils import no_binding

__all__ = ["enable", "is_enabled", "tuning_enable", "tuning_is_enabled", "record_untuned_enable",
           "record_untuned_is_enabled", "set_max_tuning_duration", "get_max_tuning_duration",
           "set_max_tuning_iterations", "get_max_tuning_iterations", "set_filename",
           "get_filename", "get_results", "get_validators", "read_file", "tune_gemm_in_file",
           "mgpu_tune_gemm_in_file", "set_rotating_buffer_size", "get_rotating_buffer_size",
           "set_numerical_check_tolerances"]


def enable(val: bool = True) -> None:
    """Turn TunableOp on or off."""
    raise no_binding("_cuda_tunableop_enable")


def is_enabled() -> bool:
    """Whether TunableOp is on."""
    raise no_binding("_cuda_tunableop_is_enabled")


def tuning_enable(val: bool = True) -> None:
    """Turn TunableOp's tuning of new kernels on or off."""
    raise no_binding("_cuda_tunableop_tuning_enable")


def tuning_is_enabled() -> bool:
    """Whether TunableOp tunes new kernels."""
    raise no_binding("_cuda_tunableop_tuning_is_enabled")


def record_untuned_enable(val: bool = True) -> None:
    """Turn the recording of untuned operations (for offline tuning) on or off."""
    raise no_binding("_cuda_record_untuned_enable")


def record_untuned_is_enabled() -> bool:
    """Whether untuned operations are recorded."""
    raise no_binding("_cuda_record_untuned_is_enabled")


def set_max_tuning_duration(duration: int) -> None:
    """Limit the time spent tuning one operation (milliseconds)."""
    raise no_binding("_cuda_tunableop_set_max_tuning_duration")


def get_max_tuning_duration() -> int:
    """The time limit for tuning one operation."""
    raise no_binding("_cuda_tunableop_get_max_tuning_duration")


def set_max_tuning_iterations(iterations: int) -> None:
    """Limit the iterations spent tuning one operation."""
    raise no_binding("_cuda_tunableop_set_max_tuning_iterations")


def get_max_tuning_iterations() -> int:
    """The iteration limit for tuning one operation."""
    raise no_binding("_cuda_tunableop_get_max_tuning_iterations")


def set_filename(filename: str, insert_device_ordinal: bool = False) -> None:
    """Where tuning results are written."""
    raise no_binding("_cuda_tunableop_set_filename")


def get_filename() -> str:
    """Where tuning results are written."""
    raise no_binding("_cuda_tunableop_get_filename")


def get_results() -> tuple:
    """The tuning results so far."""
    raise no_binding("_cuda_tunableop_get_results")


def get_validators() -> tuple:
    """The validators of the tuning results."""
    raise no_binding("_cuda_tunableop_get_validators")


def read_file(filename: str | None = None) -> bool:
    """Read tuning results from a file."""
    raise no_binding("_cuda_tunableop_read_file")


def set_rotating_buffer_size(buffer_size: int) -> None:
    """The size of the rotating buffer used while tuning (MB)."""
    raise no_binding("_cuda_tunableop_set_rotating_buffer_size")


def get_rotating_buffer_size() -> int:
    """The size of the rotating buffer used while tuning."""
    raise no_binding("_cuda_tunableop_get_rotating_buffer_size")


def set_numerical_check_tolerances(enable: bool, atol: float = 1e-5, rtol: float = 1e-5) -> None:
    """The tolerances of the numerical check of tuned kernels."""
    raise no_binding("_cuda_tunableop_set_numerical_check_tolerances")


def tune_gemm_in_file(filename: str) -> None:
    """Tune the GEMMs recorded in a file."""
    is_enabled()


def mgpu_tune_gemm_in_file(filename_pattern: str, num_gpus: int) -> None:
    """Tune the GEMMs recorded in files, spread over GPUs (there are none here)."""
    raise AssertionError(f"num_gpus must be between 1 and 0, got {num_gpus}")
