"""``torch.random``: the default CPU generator's seed and state, and ``fork_rng``.

The generator is PyTorch's (chainrule._random), so a state saved by ``get_rng_state`` here can
be set into PyTorch's generator and the other way round.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterable, Iterator

from ._creation import (
    Generator,
    default_generator,  # noqa: F401  (torch.random.default_generator)
    get_rng_state,
    initial_seed,
    manual_seed,
    seed,
    set_rng_state,
)
from ._device import device

__all__ = ["set_rng_state", "get_rng_state", "manual_seed", "seed", "initial_seed", "fork_rng",
           "thread_safe_generator"]


@contextlib.contextmanager
def fork_rng(devices: Iterable | None = None, enabled: bool = True, _caller: str = "fork_rng",
             _devices_kw: str = "devices", device_type: str | None = None) -> Iterator[None]:
    """Run the block and then put the random generators back in the state they were in (the
    CPU's always; the accelerator ``devices`` too, and a CPU build has none)."""
    if device_type == "meta":
        yield
        return
    kind = device(device_type or "cuda").type  # refuses a device type PyTorch does not know
    if not enabled:
        yield
        return
    if devices is not None and list(devices):
        raise AssertionError(f"Torch not compiled with {kind.upper()} enabled")
    state = get_rng_state()
    try:
        yield
    finally:
        set_rng_state(state)


def thread_safe_generator() -> Generator | None:
    """The generator of the DataLoader worker thread this runs in: None, as chainrule loads data
    in the calling thread (samplers then use the default generator)."""
    return None
