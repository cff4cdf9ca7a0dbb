"""``torch.backends.mkl``: chainrule does not use Intel oneMKL (NumPy's BLAS does its linear
algebra), so it is not available and its verbose mode cannot be turned on."""

from __future__ import annotations

VERBOSE_OFF = 0
VERBOSE_ON = 1


def is_available() -> bool:
    """False: chainrule is not built with MKL (as ``torch.has_mkl`` says)."""
    return False


class verbose:
    """``with verbose(VERBOSE_ON):`` dumps MKL's messages for the block; without MKL only
    ``VERBOSE_OFF`` can be entered (any other level raises, as in a build without MKL)."""

    def __init__(self, enable) -> None:
        self.enable = enable

    def __enter__(self) -> verbose | None:
        if self.enable == VERBOSE_OFF:
            return None
        raise AssertionError("Failed to set MKL into verbose mode. Please consider to disable "
                             "this verbose scope.")

    def __exit__(self, exc_type, exc_val, exc_tb) -> bool:
        return False
