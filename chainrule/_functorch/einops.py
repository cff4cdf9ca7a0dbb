"""functorch.einops: ``rearrange`` (the function torch.func has)."""

from ..func import rearrange

__all__ = ["rearrange"]
