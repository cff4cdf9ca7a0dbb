"""``torch.cuda.gds``: GPUDirect Storage (files read into and written from CUDA memory), which
a CPU build does not support."""

from __future__ import annotations

import os
import sys

__all__ = ["gds_register_buffer", "gds_deregister_buffer", "GdsFile"]


def _unsupported(name: str) -> RuntimeError:
    return RuntimeError(f"torch._C.{name} is not supported on this platform")


def gds_register_buffer(s) -> None:
    """Register a CUDA storage as a cuFile buffer."""
    raise _unsupported("_gds_register_buffer")


def gds_deregister_buffer(s) -> None:
    """Deregister a cuFile buffer."""
    raise _unsupported("_gds_deregister_buffer")


class GdsFile:
    """A file opened for GPUDirect Storage reads and writes of CUDA storages."""

    def __init__(self, filename: str, flags: int) -> None:
        if sys.platform == "win32":
            raise RuntimeError("GdsFile is not supported on this platform.")
        self.filename = filename
        self.flags = flags
        self.handle = None
        self.fd = os.open(filename, flags | getattr(os, "O_DIRECT", 0))
        try:
            self.register_handle()
        except RuntimeError:
            os.close(self.fd)
            raise

    def register_handle(self) -> None:
        """Register the file with the cuFile driver."""
        raise _unsupported("_gds_register_handle")

    def deregister_handle(self) -> None:
        """Deregister the file from the cuFile driver."""
        raise _unsupported("_gds_deregister_handle")

    def load_storage(self, storage, offset: int = 0) -> None:
        """Read the file at ``offset`` into ``storage``."""
        raise _unsupported("_gds_load_storage")

    def save_storage(self, storage, offset: int = 0) -> None:
        """Write ``storage`` into the file at ``offset``."""
        raise _unsupported("_gds_save_storage")
