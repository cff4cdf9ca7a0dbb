"""``torch.utils.serialization.config``: PyTorch's settings of save (``save.compute_crc32``, ...)
and load (``load.mmap``, ...), read and set as flags. chainrule's files are safetensors: the
settings are kept and read back, and change nothing in what save and load do."""

from __future__ import annotations

import sys

from ..._dynamo._config_module import install

# PyTorch 2.13's settings and their defaults (mmap_flags: mmap.MAP_PRIVATE off Windows)
_DEFAULTS = {
    "load.mmap": False,
    "load.endianness": None,
    "load.mmap_flags": None if sys.platform == "win32" else 2,
    "load.calculate_storage_offsets": False,
    "save.compute_crc32": True,
    "save.use_pinned_memory_for_d2h": False,
    "save.storage_alignment": 64,
}

install(__name__, "torch.utils.serialization.config", _DEFAULTS)
