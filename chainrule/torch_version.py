"""``torch.torch_version``: ``TorchVersion``, the version string that compares as a version.

PyTorch compares with a vendored copy of ``packaging``; chainrule keeps NumPy its only
dependency, so ``Version`` here is a small reading of PEP 440 (epoch, release, pre-, post- and
dev-releases, local labels) with PEP 440's ordering.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any

__all__ = ["TorchVersion"]

_PATTERN = re.compile(
    r"""
    v?
    (?:(?P<epoch>[0-9]+)!)?
    (?P<release>[0-9]+(?:\.[0-9]+)*)
    (?:[-_.]?(?P<pre_l>alpha|a|beta|b|preview|pre|c|rc)[-_.]?(?P<pre_n>[0-9]+)?)?
    (?:-(?P<post_n1>[0-9]+)|[-_.]?(?P<post_l>post|rev|r)[-_.]?(?P<post_n2>[0-9]+)?)?
    (?:[-_.]?(?P<dev_l>dev)[-_.]?(?P<dev_n>[0-9]+)?)?
    (?:\+(?P<local>[a-z0-9]+(?:[-_.][a-z0-9]+)*))?
    """,
    re.VERBOSE | re.IGNORECASE,
)
_PRE = {"alpha": "a", "a": "a", "beta": "b", "b": "b", "c": "rc", "pre": "rc", "preview": "rc",
        "rc": "rc"}
_INF = float("inf")


class InvalidVersion(ValueError):
    """A string that is not a PEP 440 version."""


class Version:
    """A PEP 440 version, ordered as PEP 440 orders them."""

    __slots__ = ("_text", "_key")

    def __init__(self, version: str) -> None:
        match = _PATTERN.fullmatch(version.strip())
        if match is None:
            raise InvalidVersion(f"Invalid version: {version!r}")
        self._text = version
        self._key = _sort_key(match)

    def __repr__(self) -> str:
        return f"<Version({self._text!r})>"

    def __str__(self) -> str:
        return self._text

    def __hash__(self) -> int:
        return hash(self._key)

    def __eq__(self, other) -> bool:
        return self._key == other._key if isinstance(other, Version) else NotImplemented

    def __lt__(self, other) -> bool:
        return self._key < other._key if isinstance(other, Version) else NotImplemented

    def __le__(self, other) -> bool:
        return self._key <= other._key if isinstance(other, Version) else NotImplemented

    def __gt__(self, other) -> bool:
        return self._key > other._key if isinstance(other, Version) else NotImplemented

    def __ge__(self, other) -> bool:
        return self._key >= other._key if isinstance(other, Version) else NotImplemented


def _sort_key(match: re.Match) -> tuple:
    release = [int(part) for part in match["release"].split(".")]
    while len(release) > 1 and release[-1] == 0:  # 1.0.0 == 1
        release.pop()
    pre = (_PRE[match["pre_l"].lower()], int(match["pre_n"] or 0)) if match["pre_l"] else None
    post_n = match["post_n1"] or match["post_n2"]
    post = int(post_n or 0) if (match["post_l"] or match["post_n1"]) else None
    dev = int(match["dev_n"] or 0) if match["dev_l"] else None
    # A dev release of a final release comes before its pre-releases; without a pre-release,
    # a release comes after them.
    if pre is None:
        pre_key = (-_INF, "") if post is None and dev is not None else (_INF, "")
    else:
        pre_key = (0, *pre)
    local = () if match["local"] is None else tuple(
        (int(part), "") if part.isdigit() else (-_INF, part.lower())
        for part in re.split(r"[-_.]", match["local"]))
    return (int(match["epoch"] or 0), tuple(release), pre_key,
            -_INF if post is None else post, _INF if dev is None else dev,
            local if local else ((-_INF, ""),))


class TorchVersion(str):
    """A version string that also compares as a version: with strings (``"2.13"``), tuples
    (``(2, 13)``) and Version objects; what does not read as a version compares as a string."""

    __slots__ = ()

    def _as_version(self, other: Any) -> Version:
        if isinstance(other, Version):
            return other
        if isinstance(other, str):
            return Version(other)
        if hasattr(other, "release") and hasattr(other, "local"):  # packaging's Version
            return Version(str(other))
        if isinstance(other, Iterable):
            return Version(".".join(str(item) for item in other))
        raise InvalidVersion(other)

    def _compare(self, other: Any, method: str):
        try:
            return getattr(Version(self), method)(self._as_version(other))
        except InvalidVersion:
            return getattr(str, method)(self, other)

    def __gt__(self, other) -> bool:
        return self._compare(other, "__gt__")

    def __lt__(self, other) -> bool:
        return self._compare(other, "__lt__")

    def __eq__(self, other) -> bool:
        return self._compare(other, "__eq__")

    def __ge__(self, other) -> bool:
        return self._compare(other, "__ge__")

    def __le__(self, other) -> bool:
        return self._compare(other, "__le__")

    __hash__ = str.__hash__


def _current() -> TorchVersion:
    from .version import __version__

    return TorchVersion(__version__)


__version__ = _current()
