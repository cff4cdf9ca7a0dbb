"""``torch.cuda.sparse``: the legacy sparse CUDA tensor types, which a CPU build names but cannot
make."""

from __future__ import annotations

from .._legacy import typed_classes

__all__: list[str] = []

globals().update(typed_classes("torch.cuda.sparse", "cuda", sparse=True))
