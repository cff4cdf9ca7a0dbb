"""The examples' weights: drawn from a seeded NumPy generator, so they are the same numbers under
any library."""

from __future__ import annotations


def uniform_from(torch, module, rng, bound: float):
    """Overwrite every parameter of ``module`` with draws from U(-bound, bound) by ``rng``."""
    with torch.no_grad():
        for p in module.parameters():
            p.copy_(torch.tensor(rng.uniform(-bound, bound, tuple(p.shape))))
    return module
