"""torch.multiprocessing on chainrule, with real child processes (fork and spawn, each joined
with a timeout): share_memory_() puts a tensor's values where a child's writes are seen, queues,
pools and spawned arguments carry tensors, failures come back as PyTorch's exceptions."""

import gc
import os
import re

import _mp_workers as workers
import pytest
import torch
import torch.multiprocessing

import chainrule as cr
import chainrule.multiprocessing as crmp

TIMEOUT = 120  # seconds for any child to finish (spawned children import chainrule)
BOTH = pytest.mark.parametrize("m", [torch, cr], ids=["torch", "chainrule"])


def run(ctx, target, *args):
    process = ctx.Process(target=target, args=args)
    process.start()
    process.join(TIMEOUT)
    if process.is_alive():
        process.kill()
        pytest.fail("a child process did not finish in time")
    return process.exitcode


def started(mp, fn, args, nprocs, method):
    context = mp.start_processes(fn, args=args, nprocs=nprocs, join=False, start_method=method)
    assert context.join(TIMEOUT) or context.join(TIMEOUT), "children did not finish in time"


@BOTH
def test_share_memory_is_honest(m):
    t = m.arange(4.0, requires_grad=True)
    facts = [t.is_shared()]
    assert t.share_memory_() is t
    facts += [t.is_shared(), t[1:].is_shared(), t.tolist(), t.requires_grad, t.is_leaf,
              m.arange(2.0).is_shared()]
    assert facts == [False, True, True, [0.0, 1.0, 2.0, 3.0], True, True, False]


@BOTH
def test_storages_say_what_their_tensor_says(m):
    t = m.ones(2, 3).share_memory_()
    plain = m.ones(2)
    shared = t.untyped_storage()
    facts = [shared.is_shared(), t.storage().is_shared(), t[1].untyped_storage().is_shared(),
             t.t().untyped_storage().is_shared(), plain.untyped_storage().is_shared(),
             plain.storage().is_shared(), shared.share_memory_() is shared,
             m.nn.Parameter(m.ones(1)).share_memory_().untyped_storage().is_shared()]
    assert facts == [True, True, True, True, False, False, True, True]


def test_a_storage_is_not_moved_to_shared_memory_without_its_tensor():
    t = cr.ones(2)
    with pytest.raises(RuntimeError, match="call share_memory_\\(\\) on the tensor"):
        t.untyped_storage().share_memory_()
    assert not t.is_shared() and t.tolist() == [1.0, 1.0]


def test_a_forked_child_writes_into_shared_memory_only():
    def scenario(m):
        ctx = m.multiprocessing.get_context("fork")
        shared, private = m.zeros(3).share_memory_(), m.zeros(3)
        codes = (run(ctx, workers.add_one, shared), run(ctx, workers.add_one, private))
        return codes, shared.tolist(), private.tolist()

    ours, theirs = scenario(cr), scenario(torch)
    assert ours == theirs == ((0, 0), [1.0, 1.0, 1.0], [0.0, 0.0, 0.0])


@pytest.mark.parametrize("strategy", sorted(crmp.get_all_sharing_strategies()))
def test_spawned_children_write_into_shared_memory(strategy):
    before = crmp.get_sharing_strategy()
    crmp.set_sharing_strategy(strategy)
    try:
        t = cr.zeros(3).share_memory_()
        started(crmp, workers.write, (t,), 2, "spawn")
        assert t.tolist() == [10.0, 11.0, 0.0]
    finally:
        crmp.set_sharing_strategy(before)
    del t
    gc.collect()
    if os.path.isdir("/dev/shm"):  # a file_system block is removed with its last tensor
        assert not [f for f in os.listdir("/dev/shm") if f.startswith(f"chainrule_{os.getpid()}_")]


@pytest.mark.parametrize("method", ["fork", "spawn"])
def test_queues_carry_tensors_and_parameters(method):
    ctx = crmp.get_context(method)
    q_in, q_out = ctx.Queue(), ctx.Queue()
    child = ctx.Process(target=workers.double_and_reply, args=("chainrule", q_in, q_out))
    child.start()
    shared = cr.arange(3.0).share_memory_()
    q_in.put(shared)
    result, param, was_shared = q_out.get(timeout=TIMEOUT)
    child.join(TIMEOUT)
    assert child.exitcode == 0
    assert shared.tolist() == [0.0, 2.0, 4.0]  # the child's write, seen here
    assert result.tolist() == [1.0, 3.0, 5.0] and not result.is_shared()
    assert type(param) is cr.nn.Parameter and param.requires_grad and was_shared


def test_pools_map_tensors():
    tensors = [cr.tensor([1.0, -2.0]), cr.arange(3.0)]
    with crmp.get_context("spawn").Pool(2) as pool:
        squares = pool.map(workers.square, tensors, chunksize=1)
    assert [s.tolist() for s in squares] == [[1.0, 4.0], [0.0, 1.0, 4.0]]
    from chainrule.multiprocessing.pool import Pool

    with Pool(1) as pool:
        assert pool.apply(workers.square, (cr.tensor([3.0]),)).tolist() == [9.0]


def test_hogwild_training_updates_the_shared_model():
    cr.manual_seed(0)
    model = cr.nn.Linear(2, 1)
    model.share_memory()
    assert all(p.is_shared() for p in model.parameters())
    x = cr.tensor([[1.0, 2.0], [3.0, -1.0], [0.5, 0.5]])
    y = cr.tensor([[1.0], [0.0], [2.0]])
    loss_before = float(((model(x) - y) ** 2).mean())
    started(crmp, workers.train, ("chainrule", model, 20), 2, "spawn")
    loss_after = float(((model(x) - y) ** 2).mean())
    assert loss_after < loss_before * 0.8


def _failure(mp, how) -> tuple:
    with pytest.raises((mp.ProcessRaisedException, mp.ProcessExitedException)) as info:
        mp.start_processes(workers.fail, args=(how,), nprocs=2, start_method="fork")
    e = info.value
    text = re.sub(r'File "[^"]*"', "File", str(e))
    text = "\n".join(line for line in text.splitlines() if not line.startswith("    "))
    return (type(e).__name__, e.error_index, text.split("Traceback")[0],
            text.strip().splitlines()[-1], getattr(e, "exit_code", None),
            getattr(e, "signal_name", None))


@pytest.mark.parametrize("how", [("raise", 1), ("exit", 0), ("kill", 0)])
def test_failures_raise_as_pytorchs(how):
    assert _failure(crmp, how) == _failure(torch.multiprocessing, how)


def test_process_exceptions_pickle_and_the_old_context_warns():
    import pickle

    e = crmp.ProcessExitedException("gone", 1, 123, exit_code=-9, signal_name="SIGKILL")
    back = pickle.loads(pickle.dumps(e))
    assert (back.msg, back.error_index, back.error_pid, back.exit_code, back.signal_name) == (
        "gone", 1, 123, -9, "SIGKILL")
    with pytest.warns(UserWarning, match="SpawnContext is renamed to ProcessContext"):
        crmp.SpawnContext([], [])


def test_sharing_strategies_and_names_as_pytorchs():
    tmp = torch.multiprocessing
    assert crmp.get_all_sharing_strategies() == tmp.get_all_sharing_strategies()
    assert crmp.get_sharing_strategy() == tmp.get_sharing_strategy()
    with pytest.raises(AssertionError) as ours:
        crmp.set_sharing_strategy("carrier pigeon")
    with pytest.raises(AssertionError) as theirs:
        tmp.set_sharing_strategy("carrier pigeon")
    assert str(ours.value) == str(theirs.value)
    assert set(crmp.__all__) == set(tmp.__all__)
    for name in ("spawn", "start_processes", "ProcessContext", "SpawnContext",
                 "ProcessRaisedException", "ProcessExitedException", "init_reductions",
                 "ENV_VAR_PARALLEL_START"):
        assert hasattr(crmp, name), name
    assert crmp.Queue is not None and crmp.Process is tmp.Process  # Python's own
