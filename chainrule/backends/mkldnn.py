"""``torch.backends.mkldnn``: chainrule does not use oneDNN (MKL-DNN): not available; its flags
are settable and change nothing, as on a build without it."""

from __future__ import annotations

import warnings
from contextlib import contextmanager

VERBOSE_OFF = 0
VERBOSE_ON = 1
VERBOSE_ON_CREATION = 2

enabled = True
deterministic = False
allow_tf32 = None
fp32_precision = "none"


class _FP32Precision:
    """``mkldnn.conv``/``matmul``/``rnn``: an operator family's ``fp32_precision`` flag."""

    def __init__(self, backend: str, op: str) -> None:
        object.__setattr__(self, "backend", backend)
        object.__setattr__(self, "op", op)
        object.__setattr__(self, "_value", "none")

    def __getattr__(self, name: str):
        if name == "fp32_precision":
            return self._value
        raise AttributeError("Unknown attribute " + name)

    def __setattr__(self, name: str, value) -> None:
        if name == "fp32_precision":
            if value not in ("none", "ieee", "tf32", "bf16"):
                raise RuntimeError(f"Invalid precision {value} for mkldnn {self.op}")
            object.__setattr__(self, "_value", value)
        elif name in ("backend", "op"):
            object.__setattr__(self, name, value)
        else:
            raise AttributeError("Unknown attribute " + name)


conv = _FP32Precision("mkldnn", "conv")
matmul = _FP32Precision("mkldnn", "matmul")
rnn = _FP32Precision("mkldnn", "rnn")


def is_available() -> bool:
    """False: chainrule is not built with MKL-DNN."""
    return False


def is_acl_available() -> bool:
    """False: chainrule is not built with MKL-DNN and the Arm Compute Library."""
    return False


class verbose:
    """``with verbose(VERBOSE_ON):`` dumps oneDNN's messages for the block; without oneDNN only
    ``VERBOSE_OFF`` can be entered."""

    def __init__(self, level) -> None:
        self.level = level

    def __enter__(self) -> verbose | None:
        if self.level == VERBOSE_OFF:
            return None
        raise AssertionError("Failed to set MKLDNN into verbose mode. Please consider to disable "
                             "this verbose scope.")

    def __exit__(self, exc_type, exc_val, exc_tb) -> bool:
        return False


def set_flags(_enabled=None, _deterministic=None, _allow_tf32=None,
              _fp32_precision="none") -> tuple:
    """Set the flags given (None leaves one as it is); the previous values."""
    global enabled, deterministic, allow_tf32, fp32_precision
    previous = (enabled, deterministic, allow_tf32, fp32_precision)
    if _enabled is not None:
        enabled = _enabled
    if _deterministic is not None:
        deterministic = _deterministic
    if _allow_tf32 is not None:
        if _allow_tf32:
            warnings.warn("TF32 acceleration on top of oneDNN is available for Intel GPUs. The "
                          "current Torch version does not have Intel GPU Support.", UserWarning,
                          stacklevel=3)
        allow_tf32 = _allow_tf32
    if _fp32_precision is not None:
        fp32_precision = _fp32_precision
    return previous


@contextmanager
def flags(enabled=False, deterministic=False, allow_tf32=True, fp32_precision="none"):
    """Set the flags inside the block and restore them after it."""
    previous = set_flags(enabled, deterministic, allow_tf32, fp32_precision)
    try:
        yield
    finally:
        set_flags(*previous)
