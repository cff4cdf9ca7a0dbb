"""The size and step parameters the op fuzzers share."""

from __future__ import annotations

from ..utils.fuzzer import FuzzedParameter, ParameterAlias

# How often a dim is read with each step (strided memory access).
STEPS = {1: 0.8, 2: 0.06, 4: 0.06, 8: 0.04, 16: 0.04}


def dim_sizes(minval: int, maxval: int, special: str, sizes: list,
              weights: tuple[float, float], special_first: bool) -> list:
    """For dims 0-2: ``k_any_<i>`` (loguniform in [minval, maxval]), ``k_<special>_<i>``
    (uniform over ``sizes``, which matter most to the op) and ``k<i>``, one of the two: the
    any-size one with ``weights[0]``, the special one with ``weights[1]`` (their order in the
    distribution is the draw's order: the special first with ``special_first``)."""
    choices = [("any", weights[0]), (special, weights[1])]
    if special_first:
        choices.reverse()
    return [
        [FuzzedParameter(f"k_any_{i}", minval=minval, maxval=maxval, distribution="loguniform")
         for i in range(3)],
        [FuzzedParameter(f"k_{special}_{i}", distribution={s: 1.0 / len(sizes) for s in sizes})
         for i in range(3)],
        [FuzzedParameter(f"k{i}", distribution={ParameterAlias(f"k_{kind}_{i}"): weight
                                                for kind, weight in choices}, strict=True)
         for i in range(3)],
    ]
