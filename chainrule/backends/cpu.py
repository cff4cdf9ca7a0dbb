"""``torch.backends.cpu``: the SIMD level NumPy's kernels dispatch to, in PyTorch's names."""

from __future__ import annotations

from .._backend import xp


def get_cpu_capability() -> str:
    """'AVX512', 'AVX2', 'VSX' or 'ZVECTOR' as NumPy detects the CPU, else 'DEFAULT'."""
    features = {}
    for core in ("_core", "core"):  # NumPy 2's name, then NumPy 1's
        umath = getattr(getattr(xp, core, None), "_multiarray_umath", None)
        features = getattr(umath, "__cpu_features__", None) or {}
        if features:
            break
    for name, feature in (("AVX512", "AVX512_SKX"), ("AVX2", "AVX2"), ("VSX", "VSX"),
                          ("ZVECTOR", "VXE")):
        if features.get(feature):
            return name
    return "DEFAULT"
