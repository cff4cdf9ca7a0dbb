"""``torch.cuda.random``: the CUDA generators' seeds and states, of which a CPU build has none.

Seeding and setting states are accepted and do nothing (PyTorch queues them for a CUDA
initialization that never comes); reading a state or a seed needs CUDA.
"""

from __future__ import annotations

from collections.abc import Iterable

from ._utils import not_compiled

__all__ = ["get_rng_state", "get_rng_state_all", "set_rng_state", "set_rng_state_all",
           "manual_seed", "manual_seed_all", "seed", "seed_all", "initial_seed"]


def get_rng_state(device="cuda"):
    """The RNG state of a CUDA device: a CPU build has none."""
    raise not_compiled()


def get_rng_state_all() -> list:
    """The RNG states of all CUDA devices: none."""
    return []


def set_rng_state(new_state, device="cuda") -> None:
    """Set a CUDA device's RNG state: there is no device, so nothing is set."""


def set_rng_state_all(new_states: Iterable) -> None:
    """Set every CUDA device's RNG state: there is none."""


def manual_seed(seed: int) -> None:
    """Seed the current CUDA device's generator: there is none (seed the CPU with
    torch.manual_seed)."""
    int(seed)


def manual_seed_all(seed: int) -> None:
    """Seed every CUDA device's generator: there is none."""
    int(seed)


def seed() -> None:
    """Seed the current CUDA device's generator randomly: there is none."""


def seed_all() -> None:
    """Seed every CUDA device's generator randomly: there is none."""


def initial_seed() -> int:
    """The current CUDA device's seed: a CPU build has none."""
    raise not_compiled()
