"""nn.parallel: DataParallel and data_parallel as a CPU build of PyTorch runs them, and
DistributedDataParallel on chainrule.distributed; the device helpers (replicate, scatter,
gather, parallel_apply, comm) answer as a CPU build does."""

import warnings

from . import comm
from .data_parallel import DataParallel, data_parallel
from .distributed import DistributedDataParallel
from .parallel_apply import parallel_apply
from .replicate import replicate
from .scatter_gather import gather, scatter

__all__ = ["replicate", "scatter", "parallel_apply", "gather", "data_parallel", "DataParallel",
           "DistributedDataParallel"]


class DistributedDataParallelCPU(DistributedDataParallel):
    """Deprecated name of DistributedDataParallel."""

    def __init__(self, *args, **kwargs) -> None:
        warnings.warn("`torch.nn.parallel.DistributedDataParallelCPU` is deprecated, please use "
                      "`torch.nn.parallel.DistributedDataParallel` instead.", FutureWarning,
                      stacklevel=2)
        super().__init__(*args, **kwargs)
