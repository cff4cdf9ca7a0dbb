"""nn.parallel: DataParallel and data_parallel as a CPU build of PyTorch runs them, and
DistributedDataParallel on chainrule.distributed."""

from .data_parallel import DataParallel, data_parallel
from .distributed import DistributedDataParallel

__all__ = ["DataParallel", "DistributedDataParallel", "data_parallel"]
