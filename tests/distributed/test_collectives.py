"""Two ranks on this machine run tests/distributed/_job_collectives.py through the launcher
once; each collective's result is checked against NumPy, DistributedDataParallel's gradients
against torch's single-process gradients on the whole batch, DistributedSampler's shards
against its contract (and torch's order when not shuffled)."""

from __future__ import annotations

import json

import numpy as np
import pytest
import torch

from ._launch import HERE, launch

WORLD = 2


@pytest.fixture(scope="module")
def ranks(tmp_path_factory):
    out = tmp_path_factory.mktemp("collectives")
    result = launch(HERE / "_job_collectives.py", str(out))
    assert result.returncode == 0, result.stdout + result.stderr
    return [json.loads((out / f"rank{r}.json").read_text()) for r in range(WORLD)]


def data(shape, seed, rank, dtype=np.float64):
    """The job's ``data``: the same values from the same seed."""
    return (np.random.default_rng(seed * 100 + rank).standard_normal(shape) * 4).astype(dtype)


def each(seed, shape, dtype=np.float64):
    return np.stack([data(shape, seed, r, dtype) for r in range(WORLD)])


def test_world(ranks):
    assert [(g["rank"], g["world"], g["backend"]) for g in ranks] == [(0, 2, "mpi"),
                                                                       (1, 2, "mpi")]
    for r, g in enumerate(ranks):
        assert g["initialized_after_destroy"] is False
        assert g["initialized_after_wrong_world"] is False
        assert g["wrong_world"].startswith(f"rank 0 of world size 3 was asked for, but this "
                                           f"process is MPI rank {r} of 2: start the ranks "
                                           f"with `python -m chainrule.distributed.run")


@pytest.mark.parametrize("op,reference", [("SUM", np.sum), ("AVG", np.mean),
                                          ("PRODUCT", np.prod), ("MIN", np.min),
                                          ("MAX", np.max)])
def test_all_reduce_floats(ranks, op, reference):
    want = reference(each(1, (3, 4)), axis=0)
    for g in ranks:
        np.testing.assert_allclose(g[f"all_reduce_{op}"], want, rtol=1e-15)


@pytest.mark.parametrize("op,reference", [
    ("SUM", np.add.reduce), ("PRODUCT", np.multiply.reduce), ("MIN", np.minimum.reduce),
    ("MAX", np.maximum.reduce), ("BAND", np.bitwise_and.reduce),
    ("BOR", np.bitwise_or.reduce), ("BXOR", np.bitwise_xor.reduce)])
def test_all_reduce_ints(ranks, op, reference):
    want = reference(each(2, (5,), np.int64), axis=0)
    for g in ranks:
        assert g[f"all_reduce_int_{op}"] == want.tolist()


def test_all_reduce_bool_async_and_views(ranks):
    want = np.sum(each(1, (3, 4)), axis=0)
    for g in ranks:
        assert g["all_reduce_bool_MAX"] == [True, False, True, True]
        assert (g["async_returns_work"], g["wait_returns"], g["is_completed"]) == (
            "Work", True, True)
        np.testing.assert_allclose(g["all_reduce_async"], want, rtol=1e-15)
        assert g["version_bumped"] is True
        np.testing.assert_allclose(g["all_reduce_view_base"],
                                   np.sum(each(1, (4, 3)), axis=0), rtol=1e-15)
        assert g["all_reduce_sync_returns"] is None


def test_broadcast_and_reduce(ranks):
    for g in ranks:
        assert g["broadcast_from_1"] == data((2, 3), 3, 1).tolist()
        assert g["broadcast_from_0"] == data((2, 3), 3, 0).tolist()
    np.testing.assert_array_equal(ranks[1]["reduce_max_to_1"], np.max(each(4, (2, 3)), axis=0))


def test_gathers_and_scatters(ranks):
    for r, g in enumerate(ranks):
        assert g["all_gather"] == each(5, (2, 2)).tolist()
        assert g["all_gather_into_tensor"] == each(6, (2, 3)).reshape(4, 3).tolist()
        np.testing.assert_allclose(g["reduce_scatter_tensor"],
                                   np.sum(each(7, (6,)), axis=0)[r * 3:r * 3 + 3], rtol=1e-15)
        assert g["scatter_from_1"] == [10.0 * r] * 2
    assert ranks[0]["gather_to_0"] == each(8, (3,)).tolist()
    assert ranks[1]["gather_to_0"] is None


def test_send_recv(ranks):
    assert ranks[1]["recv"] == {"sender": 0, "values": [0.0, 1.0, 2.0, 3.0], "any_source": 0,
                                "tagged": [0, 1, 2]}


def test_objects_travel_as_plain_data(ranks):
    for g in ranks:
        assert g["all_gather_object"] == repr([
            {"rank": r, "pair": (r, "x"), 3: [1.5, None, True]} for r in range(WORLD)])
        assert g["broadcast_object_list"] == repr(["from 1", {"k": (1, 2)}, b"\x00\xff"])
        assert "plain data only" in g["object_refused"] and "builtins.object" in \
            g["object_refused"]


def test_errors_in_torchs_words(ranks):
    for g in ranks:
        assert g["init_twice"] == "trying to initialize the default process group twice!"
        assert g["send_to_self"] == ("Invalid destination rank: destination rank should not be "
                                     "the same as the rank of the current process.")
        assert g["all_reduce_list"].startswith("Invalid function argument. Expected parameter "
                                               "`tensor` of type torch.Tensor")


def _torch_model(params: dict) -> torch.nn.Module:
    model = torch.nn.Sequential(torch.nn.Linear(5, 7), torch.nn.Tanh(),
                                torch.nn.Linear(7, 3)).double()
    with torch.no_grad():
        for name, p in model.named_parameters():
            p.copy_(torch.tensor(params[name], dtype=torch.float64))
    return model


def _batch():
    return (torch.tensor(np.random.default_rng(42).standard_normal((8, 5))),
            torch.tensor(np.random.default_rng(43).standard_normal((8, 3))))


def _grads(model, parts) -> dict:
    x, y = _batch()
    model.zero_grad()
    for part in parts:
        torch.nn.functional.mse_loss(model(x[part]), y[part]).backward()
    return {n: p.grad.clone() for n, p in model.named_parameters()}


def test_ddp_starts_from_rank_0_and_averages_to_the_whole_batch_gradient(ranks):
    for g in ranks:
        assert g["ddp_state_dict_keys"] == ["module.0.weight", "module.0.bias",
                                            "module.2.weight", "module.2.bias"]
        assert (g["ddp_buckets"], g["ddp_module_is_model"]) == (2, True)
        assert g["ddp_initial"] == ranks[0]["ddp_initial"]
    whole = _grads(_torch_model(ranks[0]["ddp_initial"]), [slice(0, 8)])
    for g in ranks:
        for name, grad in whole.items():
            np.testing.assert_allclose(g["ddp_grads"][name], grad.numpy(), rtol=1e-12,
                                       atol=1e-14)


def test_ddp_no_sync_accumulates_locally_then_averages(ranks):
    model = _torch_model(ranks[0]["ddp_initial"])
    local = [_grads(model, [slice(4 * r, 4 * r + 2), slice(4 * r + 2, 4 * r + 3)])
             for r in range(WORLD)]
    full = [_grads(model, [slice(4 * r, 4 * r + 2), slice(4 * r + 2, 4 * r + 3),
                           slice(4 * r + 3, 4 * r + 4)]) for r in range(WORLD)]
    for r, g in enumerate(ranks):
        for name in local[r]:
            np.testing.assert_allclose(g["no_sync_local"][name], local[r][name].numpy(),
                                       rtol=1e-12, atol=1e-14)
            np.testing.assert_allclose(g["no_sync_then_synced"][name],
                                       ((full[0][name] + full[1][name]) / 2).numpy(),
                                       rtol=1e-12, atol=1e-14)


def test_ddp_find_unused_parameters(ranks):
    x, _ = _batch()
    for g in ranks:
        grads = g["unused_grads"]
        assert grads["extra.weight"] is None and grads["extra.bias"] is None
        # used by rank 0 only: rank 0's gradient over the world size, on both ranks
        np.testing.assert_allclose(grads["only0.weight"],
                                   np.tile(x[:4].sum(0).numpy(), (3, 1)) / 2, rtol=1e-12)
        np.testing.assert_allclose(grads["only0.bias"], [2.0] * 3)
        np.testing.assert_allclose(grads["lin.weight"], np.tile(x.sum(0).numpy(), (3, 1)) / 2,
                                   rtol=1e-12)
        assert g["unfinished_reduction"].startswith(
            "Expected to have finished reduction in the prior iteration")


def test_sampler_shards_cover_the_data_once_per_epoch(ranks):
    from torch.utils.data import DistributedSampler

    for key, (shard0, len0) in ranks[0]["sampler"].items():
        shard1, len1 = ranks[1]["sampler"][key]
        n, shuffle, drop_last, epoch = key.split("-")
        n, shuffle, drop_last = int(n), shuffle == "True", drop_last == "True"
        size = (n - WORLD + 1) // WORLD if drop_last and n % WORLD else -(-n // WORLD)
        assert len0 == len1 == len(shard0) == len(shard1) == size, key
        dealt = [i for pair in zip(shard0, shard1) for i in pair]  # round-robin order
        if drop_last:
            assert len(set(dealt)) == len(dealt) == WORLD * size and set(dealt) <= set(range(n))
        else:
            assert sorted(dealt[:n]) == list(range(n)), key
            assert dealt[n:] == dealt[:WORLD * size - n], key  # padding repeats the start
        if not shuffle:
            for r, shard in enumerate([shard0, shard1]):
                assert shard == list(DistributedSampler(range(n), WORLD, r, shuffle=False,
                                                        drop_last=drop_last)), key
    assert ranks[0]["sampler"]["10-True-False-0"] != ranks[0]["sampler"]["10-True-False-1"]
