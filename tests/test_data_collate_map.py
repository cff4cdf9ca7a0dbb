"""torch.utils.data._utils.collate: the collate engine with per-type function maps (PyTorch's
default map, and a user's), against torch's on the same samples."""

from __future__ import annotations

import collections

import numpy as np
import pytest
import torch
import torch.utils.data._utils.collate as theirs
from conftest import assert_like_torch

import chainrule as cr
import chainrule.utils.data._utils.collate as ours

Pair = collections.namedtuple("Pair", "left right")


def batches(m):
    return [
        [m.tensor([1.0, 2.0]), m.tensor([3.0, 4.0])],
        [1, 2, 3],
        [0.5, 1.5],
        ["a", "b"],
        [b"x", b"y"],
        [np.array([1, 2]), np.array([3, 4])],
        [np.float32(1.5), np.float32(2.5)],
        [np.int64(1), np.int64(2)],
        [{"x": m.tensor([1.0]), "y": (1, "s")}, {"x": m.tensor([2.0]), "y": (2, "t")}],
        [Pair(1, [2.0, 3.0]), Pair(4, [5.0, 6.0])],
        [[1, 2], [3, 4]],
        [collections.OrderedDict(a=1), collections.OrderedDict(a=2)],
    ]


@pytest.mark.parametrize("i", range(12))
def test_default_map_like_torch(i):
    mine = ours.collate(batches(cr)[i], collate_fn_map=ours.default_collate_fn_map)
    ref = theirs.collate(batches(torch)[i], collate_fn_map=theirs.default_collate_fn_map)
    assert type(mine).__name__ == type(ref).__name__
    assert_like_torch(mine if not isinstance(mine, Pair) else tuple(mine),
                      ref if not isinstance(ref, Pair) else tuple(ref))


@pytest.mark.parametrize("i", range(12))
def test_default_collate_agrees_with_the_default_map(i):
    assert_like_torch(ours.collate(batches(cr)[i], collate_fn_map=ours.default_collate_fn_map),
                      theirs.default_collate(batches(torch)[i]))


class Point:
    def __init__(self, x):
        self.x = x


def test_user_map_and_errors_like_torch():
    def collate_points(batch, *, collate_fn_map=None):
        return sum(p.x for p in batch)

    results = []
    for lib in (ours, theirs):
        fn_map = {**lib.default_collate_fn_map, Point: collate_points}
        results.append(lib.collate([{"p": Point(1)}, {"p": Point(2)}], collate_fn_map=fn_map))
        messages = []
        for bad in ([Point(1)], [[1, 2], [3]], [np.array(["a"]), np.array(["b"])]):
            with pytest.raises((TypeError, RuntimeError)) as e:
                lib.collate(bad, collate_fn_map=lib.default_collate_fn_map)
            messages.append((type(e.value), str(e.value)))
        results.append(messages)
    assert results[0] == results[2] and results[1] == results[3]
    assert ours.default_collate is cr.utils.data.default_collate
