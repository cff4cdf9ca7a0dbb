"""LinearCrossEntropyOptions: the chunking options of linear_cross_entropy."""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["LinearCrossEntropyOptions"]

_ACC_POLICIES = ("accurate", "balanced", "compact", "auto")


@dataclass
class LinearCrossEntropyOptions:
    """PyTorch's chunking options of linear_cross_entropy. chainrule accepts and checks them;
    its logits are always computed whole."""

    allow_retain_graph: bool = False
    batch_chunk_size: int | None = None
    chunking_method: str | None = "auto"
    acc_policy: str = "auto"
    acc_dtype: object = None

    def __post_init__(self) -> None:
        method = self.chunking_method
        ratio = method.partition("aspect_ratio:")[2] if isinstance(method, str) else ""
        if method not in (None, "auto") and not (
                method.startswith("aspect_ratio:") and ratio.isdigit() and int(ratio) > 0):
            raise ValueError(f"invalid chunking_method: {method!r}")
        if self.acc_policy not in _ACC_POLICIES:
            raise ValueError(f"invalid acc_policy: {self.acc_policy!r}")
        size = self.batch_chunk_size
        if size is not None and (not isinstance(size, int) or size <= 0):
            raise ValueError(f"batch_chunk_size must be positive int or None, got {size}")
