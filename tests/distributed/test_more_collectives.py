"""Two ranks run tests/distributed/_job_more.py through the launcher once; the collectives and
helpers the namespace walk added are checked against NumPy and torch's contracts."""

from __future__ import annotations

import json

import numpy as np
import pytest

from ._launch import HERE, launch

WORLD = 2


@pytest.fixture(scope="module")
def ranks(tmp_path_factory):
    out = tmp_path_factory.mktemp("more")
    result = launch(HERE / "_job_more.py", str(out))
    assert result.returncode == 0, result.stdout + result.stderr
    return [json.loads((out / f"rank{r}.json").read_text()) for r in range(WORLD)]


def data(shape, seed, rank):
    return np.random.default_rng(seed * 100 + rank).standard_normal(shape) * 4


def test_rank_queries(ranks):
    for g in ranks:
        assert g["pg_count"] == 1 and g["ranks"] == [0, 1]
        assert g["global_rank"] == g["group_rank"] == 1
        assert g["backend_config"] == "cpu:gloo,cuda:gloo" and g["world_is_group_world"]


def test_all_to_all(ranks):
    for r, g in enumerate(ranks):
        assert g["all_to_all"] == [[float(i * 10 + r)] * (r + 1) for i in range(WORLD)]


def test_all_to_all_single(ranks):
    assert ranks[0]["all_to_all_single"] == [[0.0], [1.0], [100.0], [101.0]]
    assert ranks[1]["all_to_all_single"] == [[2.0], [3.0], [102.0], [103.0]]
    assert ranks[0]["all_to_all_single_uneven"] == [0.0, 100.0, 101.0, 102.0]
    assert ranks[1]["all_to_all_single_uneven"] == [1.0, 2.0, 103.0]


def test_reduce_scatter(ranks):
    for r, g in enumerate(ranks):
        parts = [data((3,), 1 + r, i) for i in range(WORLD)]
        np.testing.assert_allclose(g["reduce_scatter"], np.sum(parts, axis=0), rtol=1e-15)
        np.testing.assert_allclose(g["reduce_scatter_max"], np.max(parts, axis=0))


def test_single_tensor_aliases(ranks):
    gathered = np.concatenate([data((2,), 5, i) for i in range(WORLD)])
    summed = np.sum([data((WORLD * 2,), 6, i) for i in range(WORLD)], axis=0)
    for r, g in enumerate(ranks):
        np.testing.assert_allclose(g["all_gather_single"], gathered)
        np.testing.assert_allclose(g["reduce_scatter_single"], summed[2 * r:2 * r + 2],
                                   rtol=1e-15)


def test_coalesced_forms_warn_as_torch(ranks):
    for g in ranks:
        np.testing.assert_allclose(g["all_reduce_coalesced"][0],
                                   np.sum([data((2,), 7, i) for i in range(WORLD)], axis=0))
        np.testing.assert_allclose(g["all_reduce_coalesced"][1],
                                   np.sum([data((3,), 8, i) for i in range(WORLD)], axis=0))
        for i in range(WORLD):
            np.testing.assert_allclose(g["all_gather_coalesced"][i][0], data((2,), 9, i))
            np.testing.assert_allclose(g["all_gather_coalesced"][i][1], data((1,), 10, i))
        assert g["coalesced_warnings"] == ["FutureWarning", "FutureWarning"]


def test_batch_isend_irecv(ranks):
    for r, g in enumerate(ranks):
        np.testing.assert_allclose(g["batch_isend_irecv"], data((3,), 11, 1 - r))


def test_objects(ranks):
    assert ranks[1]["gather_object"] == [{"rank": 0, "tag": "r0"}, {"rank": 1, "tag": "r1"}]
    assert ranks[0]["gather_object"] is None
    assert [g["scatter_object_list"] for g in ranks] == [[[0, ""]], [[1, "x"]]]
    assert ranks[1]["recv_object_list"] == [[1, "two", [3.0, None]], 0]


def test_monitored_barrier_names_the_late_rank(ranks):
    assert [g["monitored_barrier"] for g in ranks] == ["passed", "passed"]
    kind, message = ranks[0]["monitored_barrier_late"]
    assert kind == "DistBackendError"
    assert message == "Rank 1 failed to pass monitoredBarrier in 500 ms"
    assert ranks[1]["monitored_barrier_late"][0] == "DistBackendError"
