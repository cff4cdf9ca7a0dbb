"""torch.distributed's helpers that need no ranks, against torch in this process: debug levels,
backend queries and configs, the errors, reduce_op, group, node-local rank, P2POp's checks."""

from __future__ import annotations

import os
import warnings

import pytest
import torch
import torch.distributed as tdist

import chainrule
import chainrule.distributed as dist


def _outcome(call):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            result = "ok", str(call())
        except Exception as e:  # noqa: BLE001
            result = type(e).__name__, str(e)
    return result, [(w.category.__name__, str(w.message)) for w in caught]


CASES = {
    "debug level": lambda d, t: d.get_debug_level(),
    "debug level int": lambda d, t: int(d.DebugLevel.DETAIL),
    "debug levels": lambda d, t: list(d.DebugLevel.__members__),
    "set debug level": lambda d, t: (d.set_debug_level(d.DebugLevel.INFO), d.get_debug_level()),
    "set debug level str": lambda d, t: d.set_debug_level("INFO"),
    "default backends": lambda d, t: [d.get_default_backend_for_device(x)
                                      for x in ("cpu", "cuda", "xpu", t.device("cpu"))],
    "default backend of meta": lambda d, t: d.get_default_backend_for_device("meta"),
    "backends available": lambda d, t: [d.is_backend_available(b) for b in
                                        ("gloo", "nccl", "ucc", "xccl", "foo")],
    "ucc and xccl": lambda d, t: (d.is_ucc_available(), d.is_xccl_available()),
    "supports complex": lambda d, t: [d.supports_complex(getattr(d.ReduceOp, op)) for op in
                                      ("SUM", "AVG", "PRODUCT", "MIN", "MAX", "BAND", "BOR",
                                       "BXOR", "PREMUL_SUM")],
    "reduce_op": lambda d, t: d.reduce_op.MAX,
    "backend config gloo": lambda d, t: d.BackendConfig("gloo"),
    "backend config mpi": lambda d, t: d.BackendConfig("mpi"),
    "backend config pairs": lambda d, t: (d.BackendConfig("cpu:gloo,cuda:nccl"),
                                          d.BackendConfig("cpu:gloo,cuda:nccl")
                                          .get_device_backend_map()),
    "backend config undefined": lambda d, t: d.BackendConfig(d.Backend.UNDEFINED),
    "pg count": lambda d, t: d.get_pg_count(),
    "group.WORLD": lambda d, t: d.group.WORLD,
    "global rank without a group": lambda d, t: d.get_global_rank(None, 0),
    "group rank without a group": lambda d, t: d.get_group_rank(None, 1),
    "ranks without a group": lambda d, t: d.get_process_group_ranks(None),
    "group name": lambda d, t: d.GroupName("x"),
    "node local rank": lambda d, t: d.get_node_local_rank(),
    "node local rank fallback": lambda d, t: d.get_node_local_rank(3),
    "p2p op": lambda d, t: d.P2POp(d.all_reduce, t.ones(2), 1),
    "batch of no p2p ops": lambda d, t: d.batch_isend_irecv([1]),
}


@pytest.mark.parametrize("case", CASES)
def test_as_torch(case, monkeypatch):
    monkeypatch.delenv("LOCAL_RANK", raising=False)
    found = []
    for d, t in ((tdist, torch), (dist, chainrule)):
        try:
            found.append(_outcome(lambda d=d, t=t: CASES[case](d, t)))
        finally:
            d.set_debug_level(d.DebugLevel.OFF)
    assert found[1] == found[0]


@pytest.mark.parametrize("value", ["OFF", "INFO", "DETAIL", "detail", "foo", None])
def test_debug_level_from_env_as_torch(value, monkeypatch):
    found = []
    for d in (tdist, dist):
        if value is None:
            monkeypatch.delenv("TORCH_DISTRIBUTED_DEBUG", raising=False)
        else:
            monkeypatch.setenv("TORCH_DISTRIBUTED_DEBUG", value)
        try:
            found.append((_outcome(d.set_debug_level_from_env), str(d.get_debug_level())))
        finally:
            d.set_debug_level(d.DebugLevel.OFF)
    assert found[1] == found[0]


def test_node_local_rank_reads_local_rank(monkeypatch):
    monkeypatch.setenv("LOCAL_RANK", "2")
    assert dist.get_node_local_rank(5) == tdist.get_node_local_rank(5) == 2
    assert os.environ["LOCAL_RANK"] == "2"


def test_errors_are_torchs_family():
    for name, base in [("DistError", RuntimeError), ("DistBackendError", "DistError"),
                       ("DistNetworkError", "DistError"), ("DistStoreError", "DistError"),
                       ("QueueEmptyError", "DistStoreError")]:
        for d in (tdist, dist):
            parent = getattr(d, base) if isinstance(base, str) else base
            assert issubclass(getattr(d, name), parent)


def test_constants_are_torchs():
    import torch.distributed.constants as theirs

    import chainrule.distributed.constants as ours

    assert ours.default_pg_timeout == theirs.default_pg_timeout
    assert ours.default_pg_nccl_timeout is theirs.default_pg_nccl_timeout is None
