"""Helpers torch.testing's public functions share: a frozen RNG state."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator

from .._creation import get_rng_state, manual_seed, set_rng_state

__all__ = ["freeze_rng_state", "wrapper_set_seed"]


@contextlib.contextmanager
def freeze_rng_state() -> Iterator[None]:
    """Restores the default generator's state on leaving the block."""
    state = get_rng_state()
    try:
        yield
    finally:
        set_rng_state(state)


def wrapper_set_seed(op, *args, **kwargs):
    """Calls ``op`` with the seed set to 42, leaving the RNG state as it was."""
    with freeze_rng_state():
        manual_seed(42)
        return op(*args, **kwargs)
