"""torch.utils.benchmark: Timer, Measurement, Compare and the Fuzzer.

Timer measures wall time as PyTorch's does (``timeit``, ``blocked_autorange``,
``adaptive_autorange``); Measurement and Compare print PyTorch's text. Not provided: C++
statements (``language='c++'``), Valgrind instruction counts (``collect_callgrind``,
``CallgrindStats``) and the sparse fuzzer, which need PyTorch's C++ build or sparse tensors.
"""

from .utils.common import *  # noqa: F403
from .utils.compare import *  # noqa: F403
from .utils.fuzzer import *  # noqa: F403
from .utils.timer import *  # noqa: F403
