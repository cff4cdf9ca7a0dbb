"""``torch.version``: the PyTorch release chainrule follows, with chainrule's own version as its
local label, and the build facts PyTorch records (no CUDA, ROCm or XPU here)."""

from __future__ import annotations

__all__ = ["__version__", "debug", "cuda", "git_version", "hip", "rocm", "xpu", "chainrule"]

chainrule = "0.1.0"  # this package's own version (pyproject.toml's)
_TORCH = "2.13.0"  # the PyTorch release whose behaviour chainrule follows
__version__ = f"{_TORCH}+chainrule.{chainrule}"
debug = False
cuda: str | None = None
git_version = "Unknown"  # PyTorch's value for a build made outside a git checkout
hip: str | None = None
rocm: str | None = None
xpu: str | None = None
