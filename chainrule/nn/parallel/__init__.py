"""nn.parallel: DataParallel and data_parallel as a CPU build of PyTorch runs them.

DistributedDataParallel belongs beside them (its own file) once chainrule has a
``distributed`` package to run it on."""

from .data_parallel import DataParallel, data_parallel

__all__ = ["DataParallel", "data_parallel"]
