"""``torch.distributed.fsdp``: fully sharded data parallelism (``fully_shard``)."""

from ._fully_shard import (
           CPUOffloadPolicy,
           FSDPModule,
           MixedPrecisionPolicy,
           OffloadPolicy,
           UnshardHandle,
           fully_shard,
)

__all__ = ["CPUOffloadPolicy", "FSDPModule", "MixedPrecisionPolicy", "OffloadPolicy",
           "UnshardHandle", "fully_shard"]
