"""``torch.profiler.python_tracer``: the path prefixes stripped from file names in Python stack
traces of profiles (site-packages, sys.path, and the directory holding chainrule)."""

from __future__ import annotations

import os
import site
import sys


def _prefix_regex() -> list[str]:
    package = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    raw = (site.getsitepackages() + sys.path + [site.getuserbase()]
           + [site.getusersitepackages()] + [os.path.dirname(package)])
    return [p + os.sep for p in sorted({os.path.abspath(p) for p in raw}, reverse=True)]
