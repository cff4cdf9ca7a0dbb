"""``torch.cuda.jiterator``: CUDA kernels compiled at run time from C++ source. Its functions
are private (``_create_jit_fn``) and need NVRTC and a CUDA device, so a CPU-only library offers
the module and none of them."""

from __future__ import annotations

__all__: list[str] = []
