"""``torch.cuda.green_contexts``: CUDA green contexts (a partition of a GPU's multiprocessors),
which a CPU build is not built with."""

from __future__ import annotations

__all__ = ["GreenContext"]

_UNSUPPORTED = "PyTorch was not built with Green Context support!"


class GreenContext:
    """A CUDA green context."""

    @staticmethod
    def create(*, num_sms: int | None = None, workqueue_scope: str | None = None,
               workqueue_concurrency_limit: int | None = None, device_id: int | None = None):
        """A new green context on a device."""
        raise RuntimeError(_UNSUPPORTED)

    @staticmethod
    def max_workqueue_concurrency(device_id: int | None = None) -> int:
        """The device's limit of concurrent workqueue workloads."""
        raise RuntimeError(_UNSUPPORTED)
