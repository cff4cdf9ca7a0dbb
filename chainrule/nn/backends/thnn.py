"""torch.nn.backends.thnn: a name that pickles of very old PyTorch versions refer to."""

from __future__ import annotations


def _get_thnn_function_backend() -> None:
    """The legacy THNN backend: nothing (kept so that old pickles load)."""
    return None
