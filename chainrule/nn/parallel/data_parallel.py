"""DataParallel on a machine without accelerators: the wrapped module runs as it is."""

from __future__ import annotations

from collections.abc import Sequence

from ..modules.module import Module

__all__ = ["DataParallel", "data_parallel"]


class DataParallel(Module):
    """Wraps ``module``; with no accelerator (always, here) forward just calls it, as PyTorch's
    CPU build does, and ``device_ids`` is empty."""

    def __init__(self, module: Module, device_ids: Sequence | None = None,
                 output_device=None, dim: int = 0) -> None:
        super().__init__()
        self.module = module
        self.device_ids = []

    def forward(self, *inputs, **kwargs):
        return self.module(*inputs, **kwargs)


def data_parallel(module: Module, inputs, device_ids: Sequence | None = None,
                  output_device=None, dim: int = 0, module_kwargs=None):
    """Run ``module`` on ``inputs`` split across devices; without an accelerator PyTorch
    raises, and so does this."""
    raise RuntimeError("device type could not be determined")
