"""nn.parallel: DataParallel and data_parallel as a CPU build of PyTorch runs them."""

from .data_parallel import DataParallel, data_parallel

__all__ = ["DataParallel", "data_parallel"]
