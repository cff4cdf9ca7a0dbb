"""chainrule.distributed in one process, no ranks started: the names, signatures and errors of
torch.distributed before a process group exists, ReduceOp, and DistributedSampler with explicit
replicas against torch's (not shuffled: torch's exact shards)."""

from __future__ import annotations

import importlib.util
import inspect

import pytest
import torch
import torch.distributed as tdist
from torch.utils.data import DistributedSampler as TorchSampler

import chainrule
import chainrule.distributed as dist
from chainrule.distributed.distributed_c10d import _decode, _encode
from chainrule.nn.parallel import DistributedDataParallel
from chainrule.utils.data import DistributedSampler
from chainrule.utils.data.distributed import DistributedSampler as SamplerInModule

FUNCTIONS = ["init_process_group", "is_available", "is_initialized", "get_rank",
             "get_world_size", "destroy_process_group", "barrier", "all_reduce", "broadcast",
             "reduce", "all_gather", "all_gather_into_tensor", "reduce_scatter_tensor", "gather",
             "scatter", "send", "recv", "isend", "irecv", "all_gather_object",
             "broadcast_object_list", "get_backend"]


def _names(fn) -> list:
    return list(inspect.signature(fn).parameters)


@pytest.mark.parametrize("name", FUNCTIONS)
def test_signatures_are_torchs(name):
    theirs = [p for p in _names(getattr(tdist, name)) if p != "_ranks"]
    assert _names(getattr(dist, name)) == theirs


def test_ddp_and_sampler_signatures_and_homes():
    theirs = _names(torch.nn.parallel.DistributedDataParallel.__init__)
    ours = _names(DistributedDataParallel.__init__)
    assert ours[:12] == theirs[:12] and ours[-1] == "kwargs"
    assert _names(DistributedSampler.__init__) == _names(TorchSampler.__init__)
    assert chainrule.utils.data.DistributedSampler is SamplerInModule
    assert chainrule.nn.parallel.DistributedDataParallel is DistributedDataParallel
    assert chainrule.distributed is dist


def test_reduce_op_is_torchs():
    for name, member in tdist.ReduceOp.RedOpType.__members__.items():
        ours = getattr(dist.ReduceOp, name)
        assert (int(ours), repr(ours), str(ours)) == (int(member), repr(member), str(member))


@pytest.mark.parametrize("call", [
    lambda d, t: d.get_rank(), lambda d, t: d.get_world_size(), lambda d, t: d.barrier(),
    lambda d, t: d.all_reduce(t.ones(2)), lambda d, t: d.broadcast(t.ones(2), 0),
    lambda d, t: d.get_backend(), lambda d, t: d.all_gather_object([None], 1)])
def test_before_init_errors_are_torchs(call):
    with pytest.raises(ValueError) as theirs:
        call(tdist, torch)
    with pytest.raises(ValueError) as ours:
        call(dist, chainrule)
    assert str(ours.value) == str(theirs.value)
    assert dist.is_initialized() is False
    assert dist.is_available() is (importlib.util.find_spec("mpi4py") is not None)


def test_backends_and_bad_arguments():
    assert dist.Backend("GLOO") == "gloo" and dist.Backend.MPI == "mpi"
    assert dist.is_gloo_available() and dist.is_mpi_available() and not dist.is_nccl_available()
    with pytest.raises(RuntimeError, match="doesn't have NCCL built in"):
        dist.init_process_group("nccl")
    with pytest.raises(TypeError, match="datetime.timedelta"):
        dist.init_process_group("gloo", timeout=5)
    with pytest.raises(ValueError, match="Unknown backend type"):
        dist.init_process_group("carrier-pigeon")
    assert dist.is_initialized() is False


def test_objects_encode_plain_data_only():
    value = [None, True, 3, -2.5, "s", b"\x01", (1, [2]), {"a": {4: (5,)}}]
    assert _decode(_encode(value)) == value
    assert type(_decode(_encode((1,)))) is tuple
    for bad in [object(), {1, 2}, chainrule.ones(1), 1j]:
        with pytest.raises(TypeError, match="plain data only"):
            _encode([bad])


@pytest.mark.parametrize("n", [0, 1, 5, 10, 17])
@pytest.mark.parametrize("replicas", [1, 3, 4])
@pytest.mark.parametrize("drop_last", [False, True])
def test_sampler_not_shuffled_is_torchs(n, replicas, drop_last):
    if n == 0 and not drop_last:
        return  # torch divides by zero padding an empty data set: nothing to compare
    for rank in range(replicas):
        ours = DistributedSampler(range(n), replicas, rank, shuffle=False, drop_last=drop_last)
        theirs = TorchSampler(range(n), replicas, rank, shuffle=False, drop_last=drop_last)
        assert (list(ours), len(ours), ours.total_size) == (list(theirs), len(theirs),
                                                            theirs.total_size)


def test_sampler_shuffle_is_chainrules_permutation_of_seed_plus_epoch():
    sampler = DistributedSampler(range(10), 2, 1, seed=7)
    sampler.set_epoch(3)
    perm = chainrule.randperm(10, generator=chainrule.Generator().manual_seed(10)).tolist()
    assert list(sampler) == perm[1::2]
    assert list(DistributedSampler(range(10), 2, 1, seed=7)) != list(sampler)


def test_sampler_errors_are_torchs():
    for make in [lambda S: S(range(4), 2, 2), lambda S: S(range(4), 2, -1), lambda S: S(range(4))]:
        with pytest.raises(ValueError) as theirs:
            make(TorchSampler)
        with pytest.raises(ValueError) as ours:
            make(DistributedSampler)
        assert str(ours.value) == str(theirs.value)


def test_ddp_needs_a_process_group():
    with pytest.raises(ValueError, match="Default process group has not been initialized"):
        DistributedDataParallel(chainrule.nn.Linear(2, 2))


def test_launcher_help_names_torchruns_options(capsys):
    from chainrule.distributed.run import main

    with pytest.raises(SystemExit):
        main(["--help"])
    text = capsys.readouterr().out
    assert "--nproc-per-node" in text and "--master-port" in text
