"""``autograd.profiler_legacy``: PyTorch's pre-Kineto profiler, here the same recording as
``autograd.profiler.profile``."""

from __future__ import annotations

from .profiler import profile as _profile

__all__ = ["profile"]


class profile(_profile):
    """Profile the block's ops and backward nodes (the legacy profiler's options; CUDA is
    accepted and ignored)."""

    def __init__(self, enabled: bool = True, *, use_cuda: bool = False,
                 record_shapes: bool = False, with_flops: bool = False,
                 profile_memory: bool = False, with_stack: bool = False,
                 with_modules: bool = False) -> None:
        super().__init__(enabled, record_shapes=record_shapes, profile_memory=profile_memory,
                         with_stack=with_stack)
