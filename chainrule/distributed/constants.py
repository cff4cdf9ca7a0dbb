"""``torch.distributed.constants``: the default timeouts of process groups."""

from __future__ import annotations

import datetime

from .distributed_c10d import default_pg_timeout

__all__ = ["default_pg_timeout", "default_pg_nccl_timeout"]

# NCCL's default is known only to builds with NCCL (PyTorch's CPU build has None)
default_pg_nccl_timeout: datetime.timedelta | None = None
